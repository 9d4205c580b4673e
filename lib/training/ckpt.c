#include "ckpt.h"

#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "blas.h"
#include "body.h"
#include "loss_util.h"
#include "nn.h"
#include "util.h"


int ckpt_match_ab(const model *m, double *a, double *b)
{
    /* the loss's parameters {a_raw, b} sit together at the end of the block (lib/training/loss.h) */
    const model_view *va = model_view_find(m, "match.a_raw");
    if (!va) { /* no placeholder: a = 1, b = 0 was read as a match probability (issue 44) */
        *a = *b = NAN;
        return 0;
    }
    loss_match_ab(m->params + va->offset, a, b);
    return 1;
}

double ckpt_spe_se2(const model *m)
{
    const model_view *v = model_view_find(m, "spe.gamma");
    return v ? loss_softplus(m->params[v->offset]) : NAN;
}

/* the settings of loss L that have a key, in its table's order (lib/training/loss.h): the five
 * every loss takes, then its own */
static void save_settings(stream_header *h, const loss_kind *L, const loss_config *lc)
{
    for (int i = 0; L && i < loss_nsettings(L); i++) {
        const setting *s = loss_setting(L, i);
        double v = loss_get(lc, i);
        if (!s->key || s->type == SETTING_NONE)
            continue;
        if (s->type == SETTING_INT)
            header_set_int(h, s->key, (int64_t)v);
        else if (s->type == SETTING_REAL)
            header_set_float(h, s->key, v);
        else
            header_set_str(h, s->key, s->choices[(int)v]);
    }
}

const char *ckpt_ensemble_check(const loss_kind *L, const model_config *mc)
{
    static _Thread_local char why[200];
    if (!mc->ensemble)
        return NULL;
    if (L->needs_var || L->nparams || L->class_weights || mc->head != HEAD_POINT) {
        snprintf(why, sizeof why, "--ensemble %d: M point heads (--head point) for a loss that learns no parameters "
                 "of its own (its members would share them), not %s", mc->ensemble, L->name);
        return why;
    }
    return NULL;
}

void ckpt_save(const char *path, const ckpt_info *ci, const model *m, const optim *o, int argc,
               char **argv, const stream_header *input)
{
    stream_header *h = header_new("checkpoint", 0);
    header_provenance(h, argc, argv);
    header_set_seed(h, ci->seed);
    if (input)
        header_add_input(h, input);
    header_set_int(h, "checkpoint_version", CKPT_VERSION);
    /* the conv body as before bodies existed (its checkpoints keep their bytes); any other
     * body by its spec */
    int conv = body_of(&m->cfg) == body_kinds[0];
    header_set_str(h, "arch", conv ? CKPT_ARCH_CONV : CKPT_ARCH_BODY);
    if (!conv) {
        char spec[96];
        header_set_str(h, "body", body_spec(&m->cfg, spec, sizeof spec));
    }
    if (m->F) {
        header_set_int(h, "features", m->F);
        if (m->cfg.mean_dims) /* (written when there is one: other checkpoints keep their bytes) */
            header_set_int(h, "mean_dims", m->cfg.mean_dims);
    } else {
        /* digits only for N-digit models and channels only above 1 (absent = 1): the checkpoints
         * of one-channel models keep the bytes of the versions before channels */
        if (m->cfg.digits)
            header_set_int(h, "digits", m->cfg.digits);
        if (m->Cin != 1)
            header_set_int(h, "channels", m->Cin);
        header_set_int(h, "height", m->H);
        header_set_int(h, "width", m->W);
    }
    header_set_str(h, "head", model_head_name(ci->mc.head));
    header_set_int(h, "C", ci->mc.C);
    header_set_int(h, "D", ci->mc.D);
    if (ci->mc.query)
        header_set_int(h, "query", 1);
    if (m->cfg.dropout > 0) /* (written when used: the checkpoints of other runs keep their bytes) */
        header_set_float(h, "dropout", m->cfg.dropout);
    if (m->cfg.ensemble)
        header_set_int(h, "ensemble", m->cfg.ensemble);
    header_set_str(h, "loss", ci->loss);
    save_settings(h, loss_find(ci->loss), &ci->lc);
    if (ci->nclasses) /* the rows of the loss's class weights (the input's meta classes lists them) */
        header_set_int(h, "loss_classes", ci->nclasses);
    header_set_str(h, "optim", o && o->kind == OPTIM_SGD ? "sgd" : "adam");
    header_set_float(h, "lr", ci->lr);
    header_set_int(h, "warmup", ci->warmup);
    header_set_str(h, "decay", decay_name(ci->decay));
    header_set_float(h, "lr_end", ci->lr_end);
    /* (written when used, so that the checkpoints of runs without them keep their bytes) */
    if (ci->decay == DECAY_STEPS) {
        char buf[256];
        header_set_str(h, "lr_steps", lr_steps_format(ci->lr_steps, ci->nlr_steps, buf, sizeof buf));
    }
    if (ci->wd > 0)
        header_set_float(h, "wd", ci->wd);
    header_set_float(h, "beta1", o ? o->beta1 : 0.9);
    header_set_float(h, "beta2", o ? o->beta2 : 0.999);
    header_set_float(h, "eps", o ? o->eps : 1e-8);
    header_set_float(h, "momentum", o ? o->momentum : 0.9);
    header_set_int(h, "optim_t", o ? o->t : 0);
    header_set_int(h, "step", ci->step);
    header_set_int(h, "steps", ci->steps);
    header_set_int(h, "batch_images", ci->batch_images);
    /* (written when they differ from train's defaults, so that the checkpoints of runs with
     * the defaults keep the bytes of the versions before them) */
    if (ci->save_every != CKPT_SAVE_EVERY)
        header_set_int(h, "save_every", ci->save_every);
    if (ci->snapshot_every)
        header_set_int(h, "snapshot_every", ci->snapshot_every);
    if (ci->resumed[0])
        header_set_str(h, "resumed", ci->resumed);
    double a, b;
    if (ckpt_match_ab(m, &a, &b)) { /* only a learned one (formats/checkpoint.md) */
        header_set_float(h, "match_a", a);
        header_set_float(h, "match_b", b);
    }
    if (ci->blas_core[0])
        header_set_str(h, "blas_core", ci->blas_core);
    if (ci->code_path[0])
        header_set_str(h, "code_path", ci->code_path);

    stream_record rec = {0};
    for (int i = 0; i < m->nviews; i++) {
        const model_view *v = &m->views[i];
        char name[STREAM_NAMELEN];
        snprintf(name, sizeof name, "param.%s", v->name);
        header_add_field(h, name, DT_F32, v->ndim, v->shape);
        tensor *t = &rec.t[rec.n++];
        t->dtype = DT_F32;
        t->ndim = v->ndim;
        memcpy(t->shape, v->shape, sizeof v->shape[0] * v->ndim);
        t->data = m->params + v->offset;
    }
    float *zeros = NULL;
    int64_t np = (int64_t)m->nparams;
    const char *on[2] = {"optim.m", "optim.v"};
    for (int k = 0; k < 2; k++) {
        header_add_field(h, on[k], DT_F32, 1, &np);
        tensor *t = &rec.t[rec.n++];
        t->dtype = DT_F32;
        t->ndim = 1;
        t->shape[0] = np;
        const float *src = o ? (k ? o->v : o->m) : NULL;
        if (!src || (o->kind == OPTIM_SGD && k == 1)) {
            if (!zeros)
                zeros = ecalloc(m->nparams, sizeof *zeros);
            src = zeros;
        }
        t->data = (void *)src;
    }
    FILE *f = atomic_open(path);
    stream_writer *w = stream_create_named(f, h, path);
    stream_write_record(w, &rec);
    stream_finish(w);
    atomic_commit(f);
    free(zeros);
    header_free(h);
}

/* appends item to the comma-separated list (if it is not in it yet); 1 if it was added */
static int list_add(char *list, size_t cap, const char *item)
{
    size_t n = strlen(item);
    for (const char *p = list; *p;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == n && !memcmp(p, item, n))
            return 0;
        p += len + (e != NULL);
    }
    size_t have = strlen(list);
    snprintf(list + have, cap - have, "%s%s", have ? "," : "", item);
    return 1;
}

/* src into dst[cap], whole if it fits, else its last lines that fit after a marker */
static void keep_tail(char *dst, size_t cap, const char *src)
{
    static const char mark[] = "(earlier resumes left out)\n";
    size_t n = strlen(src);
    if (n < cap) {
        memcpy(dst, src, n + 1);
        return;
    }
    const char *p = src + n - (cap - sizeof mark); /* the tail that fits after the marker */
    const char *nl = strchr(p, '\n');
    p = nl ? nl + 1 : src + n;
    snprintf(dst, cap, "%s%s", mark, p);
}

void ckpt_note_resume(ckpt_info *ci, int argc, char **argv)
{
    size_t cap = 64;
    for (int i = 1; i < argc; i++)
        cap += 3 + 4 * strlen(argv[i]);
    char *line = emalloc(strlen(ci->resumed) + cap), *e = line;
    e += sprintf(e, "%s%sstep %lld:", ci->resumed, ci->resumed[0] ? "\n" : "", (long long)ci->step);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        *e++ = ' ';
        if (*a && strspn(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-+=./,:@%") ==
                      strlen(a)) {
            e += sprintf(e, "%s", a);
            continue;
        }
        *e++ = '\''; /* shell quoting: 'it'\''s' */
        for (; *a; a++)
            e += *a == '\'' ? sprintf(e, "'\\''") : sprintf(e, "%c", *a);
        *e++ = '\'';
        *e = 0;
    }
    keep_tail(ci->resumed, sizeof ci->resumed, line);
    free(line);
}

int ckpt_note_compute(ckpt_info *ci)
{
    const char *core = blas_corename();
    int had = ci->blas_core[0] || ci->code_path[0];
    int changed = list_add(ci->blas_core, sizeof ci->blas_core, core ? core : "unknown");
    changed |= list_add(ci->code_path, sizeof ci->code_path, nn_code_path());
    return had && changed;
}

int64_t ckpt_step_at(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size == 0)
        return -1;
    stream_reader *r = stream_open_path(path);
    const stream_meta *m = header_meta(r->header, "step");
    int64_t step = !strcmp(r->header->kind, "checkpoint") && m && m->type == META_INT ? m->i : -1;
    stream_close(r);
    return step;
}

static const stream_meta *need_meta(const char *path, const stream_header *h, const char *key)
{
    const stream_meta *m = header_meta(h, key);
    if (!m)
        die("%s: checkpoint header has no '%s'", path, key);
    return m;
}

/* an integer setting in [lo, hi] */
static int64_t need_int(const char *path, const stream_header *h, const char *key, int64_t lo, int64_t hi)
{
    const stream_meta *m = need_meta(path, h, key);
    if (m->type != META_INT)
        die("%s: checkpoint header '%s' is not an integer", path, key);
    if (m->i < lo || m->i > hi)
        die("%s: checkpoint header '%s' is %lld, outside [%lld, %lld]", path, key, (long long)m->i,
            (long long)lo, (long long)hi);
    return m->i;
}

static int64_t opt_int(const char *path, const stream_header *h, const char *key, int64_t dflt, int64_t lo,
                       int64_t hi)
{
    return header_meta(h, key) ? need_int(path, h, key, lo, hi) : dflt;
}

/* a finite number in [lo, hi] (dflt when absent) */
static double opt_float(const char *path, const stream_header *h, const char *key, double dflt, double lo,
                        double hi)
{
    const stream_meta *m = header_meta(h, key);
    if (!m)
        return dflt;
    if (m->type != META_FLOAT && m->type != META_INT)
        die("%s: checkpoint header '%s' is not a number", path, key);
    double v = m->type == META_FLOAT ? m->f : (double)m->i;
    if (!(v >= lo && v <= hi))
        die("%s: checkpoint header '%s' is %g, outside [%g, %g]", path, key, v, lo, hi);
    return v;
}

/* the settings of loss L with a key, each checked against its table (absent: its default), then
 * what the loss checks of them (its settle, which derives nothing from settings read) */
static void load_settings(const char *path, const stream_header *h, const loss_kind *L, loss_config *lc, int D)
{
    *lc = loss_config_new(L);
    for (int i = 0; i < loss_nsettings(L); i++) {
        const setting *s = loss_setting(L, i);
        if (!s->key || s->type == SETTING_NONE)
            continue;
        double v = loss_get(lc, i);
        if (s->type == SETTING_INT)
            v = (double)opt_int(path, h, s->key, (int64_t)v, (int64_t)s->lo, (int64_t)s->hi);
        else if (s->type == SETTING_REAL)
            v = opt_float(path, h, s->key, v, s->lo, s->hi);
        else if (header_meta(h, s->key)) {
            char range[256];
            const char *name = header_str(h, s->key, "");
            if ((v = setting_choice(s, name)) < 0)
                die("%s: unknown %s '%s' (%s)", path, s->key, name, setting_range(s, range, sizeof range));
        }
        loss_put(lc, i, v);
        lc->given |= 1u << i;
    }
    const char *bad = L->settle ? L->settle(lc, D, 0) : NULL;
    if (bad)
        die("%s: %s", path, bad);
}

/* the record's tensor for field name, which must be float32 of exactly this shape, all finite */
static const tensor *need_tensor(const char *path, const stream_header *h, const stream_record *rec,
                                 const char *name, int ndim, const int64_t *shape)
{
    int fi = header_field_find(h, name);
    if (fi < 0)
        die("%s: checkpoint has no tensor '%s'", path, name);
    const tensor *t = &rec->t[fi];
    int ok = t->dtype == DT_F32 && t->ndim == ndim;
    for (int d = 0; ok && d < ndim; d++)
        ok = t->shape[d] == shape[d];
    if (!ok) {
        char got[96], want[96];
        tensor want_t = {.dtype = DT_F32, .ndim = ndim};
        memcpy(want_t.shape, shape, ndim * sizeof *shape);
        die("%s: tensor '%s' is %s, the model needs %s", path, name, tensor_describe(t, got, sizeof got),
            tensor_describe(&want_t, want, sizeof want));
    }
    /* a NaN or an infinity would pass through every later step (the same vector for every
     * input, a NaN s_e^2, a training that goes on): refused here, where it is read */
    const float *x = t->data;
    int64_t n = tensor_numel(t);
    for (int64_t i = 0; i < n; i++)
        if (!isfinite(x[i]))
            die("%s: tensor '%s' holds %g at index %lld: a checkpoint's numbers must be finite", path, name,
                (double)x[i], (long long)i);
    return t;
}

model *ckpt_load(const char *path, ckpt_info *ci, optim **o, int maxbatch, stream_header **header)
{
    stream_reader *r = stream_open_path(path);
    const stream_header *h = r->header;
    if (strcmp(h->kind, "checkpoint"))
        die("%s: not a checkpoint (a stream of kind '%s')", path, h->kind);
    const stream_meta *vm = need_meta(path, h, "checkpoint_version");
    if (vm->type != META_INT || vm->i != CKPT_VERSION)
        die("%s: checkpoint version %lld is not supported (this build reads version %d)", path,
            vm->type == META_INT ? (long long)vm->i : -1LL, CKPT_VERSION);
    const char *arch = header_str(h, "arch", "");
    memset(ci, 0, sizeof *ci);
    if (!strcmp(arch, CKPT_ARCH_BODY)) { /* a body of the registry, by its spec */
        const char *spec = header_str(h, "body", "");
        const char *bad = body_parse(&ci->mc, spec);
        if (bad)
            die("%s: body '%s': %s", path, spec, bad);
    } else if (strcmp(arch, CKPT_ARCH_CONV)) {
        die("%s: unknown architecture '%s' (this build reads %s and %s)", path, arch, CKPT_ARCH_CONV, CKPT_ARCH_BODY);
    }
    if (header_meta(h, "features")) { /* feature vectors of F */
        ci->mc.features = (int)need_int(path, h, "features", 1, MODEL_MAX_FEATURES);
        ci->mc.mean_dims = (int)opt_int(path, h, "mean_dims", 0, 0, ci->mc.features - 1);
    } else {
        /* images: digits N means 1 x 28 x 28N (height and width may say so too); otherwise
         * channels (absent: 1), height and width, bounded before the model is allocated from them.
         * A model of other images has no digits: a digits of 0 is no checkpoint train writes. */
        ci->mc.digits = (int)opt_int(path, h, "digits", 0, 1, MODEL_MAX_PIXELS / (28 * 28));
        int dg = ci->mc.digits;
        ci->mc.channels = (int)opt_int(path, h, "channels", 1, 1, MODEL_MAX_CHANNELS);
        ci->mc.height = (int)(dg ? opt_int(path, h, "height", 28, 1, MODEL_MAX_PIXELS)
                                 : need_int(path, h, "height", 1, MODEL_MAX_PIXELS));
        ci->mc.width = (int)(dg ? opt_int(path, h, "width", 28 * dg, 1, MODEL_MAX_PIXELS)
                                : need_int(path, h, "width", 1, MODEL_MAX_PIXELS));
        if (dg && (ci->mc.channels != 1 || ci->mc.height != 28 || ci->mc.width != 28 * dg))
            die("%s: image size %dx%dx%d does not match %d digits (1x28x%d)", path, ci->mc.channels, ci->mc.height,
                ci->mc.width, dg, 28 * dg);
        const char *bad = model_check_input(ci->mc.channels, ci->mc.height, ci->mc.width);
        if (bad)
            die("%s: images of %dx%dx%d: %s", path, ci->mc.channels, ci->mc.height, ci->mc.width, bad);
    }
    const char *head = header_str(h, "head", "");
    ci->mc.head = model_head_parse(head);
    if (ci->mc.head < 0)
        die("%s: unknown head '%s'", path, head);
    ci->mc.C = (int)need_int(path, h, "C", 1, 64);
    ci->mc.D = (int)need_int(path, h, "D", 1, 4096);
    ci->mc.query = (int)opt_int(path, h, "query", 0, 0, 1);
    /* the model is allocated before its tensors can be checked: bound what a header can make
     * it cost (the fuzzer made embed touch 1.6 GB with C = 64, D = 4096) */
    if (ci->mc.C * ci->mc.D > 4096)
        die("%s: C x D = %d embedding outputs, more than 4096", path, ci->mc.C * ci->mc.D);
    ci->mc.ensemble = (int)opt_int(path, h, "ensemble", 0, 2, MODEL_MAX_ENSEMBLE);
    if (ci->mc.head == HEAD_POINT && ci->mc.C != (ci->mc.ensemble ? ci->mc.ensemble : 1))
        die("%s: a point model with C = %d components%s", path, ci->mc.C,
            ci->mc.ensemble ? ", not the ensemble's" : "");
    snprintf(ci->loss, sizeof ci->loss, "%s", header_str(h, "loss", ""));
    const loss_kind *L = loss_find(ci->loss);
    if (!L)
        die("%s: unknown loss '%s'", path, ci->loss);
    if (L->needs_var != (ci->mc.head != HEAD_POINT))
        die("%s: loss %s does not go with a %s head", path, ci->loss, head);
    if (L->needs_query != ci->mc.query)
        die("%s: loss %s %s a query tower, the header says %s", path, ci->loss, L->needs_query ? "needs" : "has no",
            ci->mc.query ? "query 1" : "none");
    if (ci->mc.query && ci->mc.digits < 1)
        die("%s: a query tower needs N-digit images (the header has no digits)", path);
    const char *why = model_check(&ci->mc);
    if (why)
        die("%s: %s", path, why);
    load_settings(path, h, L, &ci->lc, ci->mc.D);
    if (L->needs_var && ci->lc.K % ci->mc.C)
        die("%s: K = %d is not a multiple of C = %d", path, ci->lc.K, ci->mc.C);
    if (L->max_C && ci->mc.C > L->max_C && !ci->mc.ensemble)
        die("%s: loss %s with C = %d components", path, ci->loss, ci->mc.C);
    const char *eb = ckpt_ensemble_check(L, &ci->mc);
    if (eb)
        die("%s: %s", path, eb);
    const char *optn = header_str(h, "optim", "adam");
    if (strcmp(optn, "adam") && strcmp(optn, "sgd"))
        die("%s: unknown optimizer '%s'", path, optn);
    ci->optim_kind = strcmp(optn, "sgd") ? OPTIM_ADAM : OPTIM_SGD;
    ci->mc.dropout = (float)opt_float(path, h, "dropout", 0, 0, MODEL_MAX_DROPOUT);
    ci->lr = opt_float(path, h, "lr", 1e-3, 1e-12, 1e9);
    ci->warmup = opt_int(path, h, "warmup", 0, 0, INT64_MAX / 2);
    ci->decay = decay_parse(header_str(h, "decay", "none"));
    if (ci->decay < 0)
        die("%s: unknown learning-rate decay '%s'", path, header_str(h, "decay", ""));
    ci->lr_end = opt_float(path, h, "lr_end", 0, 0, 1);
    ci->nlr_steps = 0;
    if (ci->decay == DECAY_STEPS && (ci->nlr_steps = lr_steps_parse(header_str(h, "lr_steps", ""), ci->lr_steps)) < 0)
        die("%s: decay steps needs lr_steps, ascending steps (got '%s')", path, header_str(h, "lr_steps", ""));
    ci->wd = opt_float(path, h, "wd", 0, 0, 1);
    ci->steps = opt_int(path, h, "steps", 0, 0, INT64_MAX / 2);
    ci->step = need_int(path, h, "step", 0, INT64_MAX / 2);
    ci->seed = h->has_seed ? h->seed : (uint64_t)opt_int(path, h, "seed", 0, 0, INT64_MAX);
    ci->batch_images = (int)opt_int(path, h, "batch_images", 0, 0, 1 << 20);
    ci->save_every = opt_int(path, h, "save_every", CKPT_SAVE_EVERY, 1, 1000000000);
    ci->snapshot_every = opt_int(path, h, "snapshot_every", 0, 0, 1000000000);
    keep_tail(ci->resumed, sizeof ci->resumed, header_str(h, "resumed", ""));
    snprintf(ci->blas_core, sizeof ci->blas_core, "%s", header_str(h, "blas_core", ""));
    snprintf(ci->code_path, sizeof ci->code_path, "%s", header_str(h, "code_path", ""));

    ci->nclasses = L->class_weights ? (int)need_int(path, h, "loss_classes", 1, 1 << 24) : 0;
    /* (allocated before the record is read: bounded as C x D is, 256 MB of weights) */
    if ((int64_t)ci->nclasses * ci->mc.D > (1 << 26))
        die("%s: %d classes x D = %d, more than 2^26 class weights", path, ci->nclasses, ci->mc.D);
    const char *pn[LOSS_MAX_PARAMS];
    int64_t ps[2 * LOSS_MAX_PARAMS];
    model *m = model_create_shaped(&ci->mc, loss_params(L, ci->mc.D, ci->nclasses, pn, ps), pn, ps, maxbatch);
    stream_record rec = {0};
    if (!stream_read(r, &rec))
        die("%s: checkpoint has no record", path);
    /* exactly the model's tensors and the two optimizer moments: nothing missing, nothing else */
    if (h->nfields != m->nviews + 2)
        die("%s: checkpoint has %d tensors, the model it describes has %d (and 2 optimizer moments)", path,
            h->nfields, m->nviews);
    for (int i = 0; i < m->nviews; i++) {
        const model_view *mv = &m->views[i];
        char name[STREAM_NAMELEN];
        snprintf(name, sizeof name, "param.%s", mv->name);
        const tensor *t = need_tensor(path, h, &rec, name, mv->ndim, mv->shape);
        memcpy(m->params + mv->offset, t->data, mv->size * sizeof(float));
    }
    const char *on[2] = {"optim.m", "optim.v"};
    const int64_t np = (int64_t)m->nparams;
    const tensor *mom[2];
    for (int k = 0; k < 2; k++)
        mom[k] = need_tensor(path, h, &rec, on[k], 1, &np);
    if (o) {
        *o = optim_create(ci->optim_kind, m->nparams, ci->lr);
        (*o)->beta1 = opt_float(path, h, "beta1", 0.9, 0, 1 - 1e-12);
        (*o)->beta2 = opt_float(path, h, "beta2", 0.999, 0, 1 - 1e-12);
        (*o)->eps = opt_float(path, h, "eps", 1e-8, 1e-30, 1);
        (*o)->momentum = opt_float(path, h, "momentum", 0.9, 0, 1);
        (*o)->t = opt_int(path, h, "optim_t", 0, 0, INT64_MAX / 2);
        for (int k = 0; k < 2; k++)
            memcpy(k ? (*o)->v : (*o)->m, mom[k]->data, m->nparams * sizeof(float));
    }
    if (stream_read(r, &rec))
        die("%s: checkpoint has more than one record", path);
    if (header)
        *header = header_copy(h);
    record_free(&rec);
    stream_close(r);
    return m;
}

int ckpt_input_field(const model *m, const stream_header *ih, const char *ckpt)
{
    int fi;
    if (m->F) { /* a features body: float32 [F] per item */
        if (strcmp(ih->kind, "features"))
            die("the model %s takes feature vectors of %d (a %s stream), the input is a stream of kind '%s'", ckpt,
                m->F, "features", ih->kind);
        fi = stream_field_need("stdin", ih, "features", DT_F32, 1, (int64_t[]){FIELD_ANY});
        const stream_field *ff = &ih->fields[fi];
        if (ff->shape[0] != m->F)
            die("feature vectors of %lld but the model %s was trained on %d", (long long)ff->shape[0], ckpt, m->F);
        if (header_int(ih, "mean_dims", 0) != m->cfg.mean_dims)
            die("the model %s takes a frozen mean of %d in its feature vectors, the input %lld (meta mean_dims)", ckpt,
                m->cfg.mean_dims, (long long)header_int(ih, "mean_dims", 0));
    } else {
        if (!strcmp(ih->kind, "features"))
            die("the model %s takes %dx%dx%d images, the input is a features stream", ckpt, m->Cin, m->H, m->W);
        if (strcmp(ih->kind, "images"))
            die("stdin: expected a stream of kind 'images', got '%s' (from %s)", ih->kind, ih->program);
        fi = stream_field_need("stdin", ih, "image", DT_U8, FIELD_ANY, NULL); /* its geometry: below */
        /* [H, W] is one channel; [C, H, W] is channel-major, as the model takes it */
        const stream_field *imf = &ih->fields[fi];
        int nd = imf->ndim;
        if (nd < 2 || nd > 3)
            die("the image field has %d dimensions; images are [H, W] or [C, H, W]", nd);
        long long img_c = nd == 3 ? (long long)imf->shape[0] : 1, img_h = imf->shape[nd - 2],
                  img_w = imf->shape[nd - 1];
        if (img_c != m->Cin || img_h != m->H || img_w != m->W)
            die("images are %lldx%lldx%lld but the model %s was trained on %dx%dx%d", img_c, img_h, img_w, ckpt,
                m->Cin, m->H, m->W);
    }
    return fi;
}
