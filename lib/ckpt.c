#include "ckpt.h"

#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "loss_util.h"
#include "util.h"

static const char *head_name(int head) { return head == HEAD_POINT ? "point" : "mog"; }

void ckpt_match_ab(const model *m, double *a, double *b)
{
    /* the loss's parameters {a_raw, b} sit together at the end of the block (lib/loss.h) */
    const model_view *va = model_view_find(m, "match.a_raw");
    if (!va) {
        *a = 1.0;
        *b = 0.0;
        return;
    }
    loss_match_ab(m->params + va->offset, a, b);
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
    header_set_str(h, "arch", "hib-cnn-1");
    header_set_int(h, "digits", ci->mc.digits);
    header_set_int(h, "height", m->H);
    header_set_int(h, "width", m->W);
    header_set_str(h, "head", head_name(ci->mc.head));
    header_set_int(h, "C", ci->mc.C);
    header_set_int(h, "D", ci->mc.D);
    header_set_str(h, "loss", ci->loss);
    header_set_int(h, "K", ci->lc.K);
    header_set_float(h, "beta", ci->lc.beta);
    header_set_float(h, "margin", ci->lc.margin);
    header_set_float(h, "a0", ci->lc.a0);
    header_set_float(h, "b0", ci->lc.b0);
    header_set_str(h, "optim", o && o->kind == OPTIM_SGD ? "sgd" : "adam");
    header_set_float(h, "lr", o ? o->lr : ci->lr);
    header_set_float(h, "beta1", o ? o->beta1 : 0.9);
    header_set_float(h, "beta2", o ? o->beta2 : 0.999);
    header_set_float(h, "eps", o ? o->eps : 1e-8);
    header_set_float(h, "momentum", o ? o->momentum : 0.9);
    header_set_int(h, "optim_t", o ? o->t : 0);
    header_set_int(h, "step", ci->step);
    header_set_int(h, "steps", ci->steps);
    header_set_int(h, "batch_images", ci->batch_images);
    double a, b;
    ckpt_match_ab(m, &a, &b);
    header_set_float(h, "match_a", a);
    header_set_float(h, "match_b", b);

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
    stream_writer *w = stream_create(f, h);
    stream_write_record(w, &rec);
    stream_finish(w);
    atomic_commit(f);
    free(zeros);
    header_free(h);
}

static int64_t need_int(const char *path, const stream_header *h, const char *key)
{
    if (!header_meta(h, key))
        die("%s: checkpoint header has no '%s'", path, key);
    return header_int(h, key, 0);
}

model *ckpt_load(const char *path, ckpt_info *ci, optim **o, int maxbatch, stream_header **header)
{
    stream_reader *r = stream_open_path(path);
    const stream_header *h = r->header;
    if (strcmp(h->kind, "checkpoint"))
        die("%s: not a checkpoint (a stream of kind '%s')", path, h->kind);
    int64_t v = need_int(path, h, "checkpoint_version");
    if (v != CKPT_VERSION)
        die("%s: checkpoint version %lld is not supported (this build reads version %d)", path, (long long)v,
            CKPT_VERSION);
    if (strcmp(header_str(h, "arch", ""), "hib-cnn-1"))
        die("%s: unknown architecture '%s'", path, header_str(h, "arch", ""));
    memset(ci, 0, sizeof *ci);
    ci->mc.digits = (int)need_int(path, h, "digits");
    const char *head = header_str(h, "head", "");
    if (!strcmp(head, "point"))
        ci->mc.head = HEAD_POINT;
    else if (!strcmp(head, "mog"))
        ci->mc.head = HEAD_MOG;
    else
        die("%s: unknown head '%s'", path, head);
    ci->mc.C = (int)need_int(path, h, "C");
    ci->mc.D = (int)need_int(path, h, "D");
    if (ci->mc.digits < 1 || ci->mc.digits > 8 || ci->mc.C < 1 || ci->mc.C > 64 || ci->mc.D < 1 ||
        ci->mc.D > 4096)
        die("%s: implausible model configuration", path);
    snprintf(ci->loss, sizeof ci->loss, "%s", header_str(h, "loss", ""));
    const loss_kind *L = loss_find(ci->loss);
    if (!L)
        die("%s: unknown loss '%s'", path, ci->loss);
    ci->lc = loss_defaults;
    ci->lc.K = (int)header_int(h, "K", loss_defaults.K);
    ci->lc.beta = header_float(h, "beta", loss_defaults.beta);
    ci->lc.margin = header_float(h, "margin", loss_defaults.margin);
    ci->lc.a0 = header_float(h, "a0", loss_defaults.a0);
    ci->lc.b0 = header_float(h, "b0", loss_defaults.b0);
    ci->optim_kind = strcmp(header_str(h, "optim", "adam"), "sgd") ? OPTIM_ADAM : OPTIM_SGD;
    ci->lr = header_float(h, "lr", 1e-3);
    ci->step = need_int(path, h, "step");
    ci->steps = header_int(h, "steps", 0);
    ci->seed = h->has_seed ? h->seed : (uint64_t)header_int(h, "seed", 0);
    ci->batch_images = (int)header_int(h, "batch_images", 0);

    model *m = model_create(&ci->mc, L->nparams, L->param_names, maxbatch);
    stream_record rec = {0};
    if (!stream_read(r, &rec))
        die("%s: checkpoint has no record", path);
    for (int i = 0; i < m->nviews; i++) {
        const model_view *mv = &m->views[i];
        char name[STREAM_NAMELEN];
        snprintf(name, sizeof name, "param.%s", mv->name);
        int fi = header_field_find(h, name);
        if (fi < 0)
            die("%s: checkpoint has no tensor '%s'", path, name);
        const tensor *t = &rec.t[fi];
        if (t->dtype != DT_F32 || (size_t)tensor_numel(t) != mv->size)
            die("%s: tensor '%s' does not have the shape the architecture needs", path, name);
        memcpy(m->params + mv->offset, t->data, mv->size * sizeof(float));
    }
    if (o) {
        *o = optim_create(ci->optim_kind, m->nparams, ci->lr);
        (*o)->beta1 = header_float(h, "beta1", 0.9);
        (*o)->beta2 = header_float(h, "beta2", 0.999);
        (*o)->eps = header_float(h, "eps", 1e-8);
        (*o)->momentum = header_float(h, "momentum", 0.9);
        (*o)->t = header_int(h, "optim_t", 0);
        const char *on[2] = {"optim.m", "optim.v"};
        for (int k = 0; k < 2; k++) {
            int fi = header_field_find(h, on[k]);
            if (fi < 0)
                die("%s: checkpoint has no optimizer state '%s'", path, on[k]);
            if ((size_t)tensor_numel(&rec.t[fi]) != m->nparams)
                die("%s: optimizer state '%s' has the wrong size", path, on[k]);
            memcpy(k ? (*o)->v : (*o)->m, rec.t[fi].data, m->nparams * sizeof(float));
        }
    }
    if (stream_read(r, &rec))
        die("%s: checkpoint has more than one record", path);
    if (header)
        *header = header_copy(h);
    record_free(&rec);
    stream_close(r);
    return m;
}
