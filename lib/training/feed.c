/* feed: batch records to loss inputs (lib/training/feed.h) */
#include "feed.h"

#include <stdlib.h>
#include <string.h>

#include "body.h"
#include "head.h"
#include "model.h"
#include "util.h"

/* what a field holds for each item: one number, an image, or a feature vector */
enum { PER_IMAGE, IMAGE, FEATURES };

/* The index of field name, checked for its whole type, since feed_next copies B items of the
 * size this type implies from each record: a label, match or query flag is a scalar (item shape
 * [], as batcher writes it); an image is uint8 [H, W] or [C, H, W] (its size: image_geometry);
 * a feature vector float32 [F]. The stream reader has checked every record against these
 * types. */
static int need_field(const stream_header *h, const char *name, int dtype, int what)
{
    if (what == PER_IMAGE)
        return stream_field_need(NULL, h, name, dtype, 0, NULL);
    int fi = stream_field_need(NULL, h, name, dtype, FIELD_ANY, NULL);
    const stream_field *sf = &h->fields[fi];
    if (what == FEATURES && sf->ndim != 1) {
        char got[160];
        die("input: field '%s' is %s, expected float32 [F] (one feature vector per item)", name,
            stream_field_describe(sf, got, sizeof got));
    }
    if (what == IMAGE && sf->ndim != 2 && sf->ndim != 3) {
        char got[160];
        die("input: field '%s' is %s, expected uint8 images, [H, W] or [C, H, W]", name,
            stream_field_describe(sf, got, sizeof got));
    }
    return fi;
}

/* the item field of a batch stream: NAME (images) or the features counterpart FNAME, whichever
 * the header has; f->features says which */
static int need_items(feed *f, const stream_header *h, const char *name, const char *fname)
{
    if (header_field_find(h, fname) >= 0) {
        f->features = 1;
        return need_field(h, fname, DT_F32, FEATURES);
    }
    if (header_field_find(h, name) < 0)
        die("input stream (kind %s) has neither '%s' (images) nor '%s' (features)", h->kind, name, fname);
    return need_field(h, name, DT_U8, IMAGE);
}

/* the geometry of image field fi (need_field checked it is uint8 [H, W] or [C, H, W]): one
 * the network takes */
static void image_geometry(feed *f, const stream_header *h, int fi)
{
    if (f->features) {
        int64_t F = h->fields[fi].shape[0];
        if (F < 1 || F > MODEL_MAX_FEATURES)
            die("input features are vectors of %lld, expected 1 to %d", (long long)F, MODEL_MAX_FEATURES);
        f->nfeatures = (int)F;
        int64_t md = header_int(h, "mean_dims", 0);
        if (md < 0 || md >= F)
            die("input meta mean_dims %lld: expected 0 to %lld (a frozen mean shorter than the vectors of %lld)",
                (long long)md, (long long)F - 1, (long long)F);
        f->mean_dims = (int)md;
        return;
    }
    const stream_field *sf = &h->fields[fi];
    int64_t C = sf->ndim == 3 ? sf->shape[0] : 1, H = sf->shape[sf->ndim - 2], W = sf->shape[sf->ndim - 1];
    /* (sizes beyond any bound before they are cut to int) */
    const char *bad = C > 1 << 20 || H > 1 << 20 || W > 1 << 20 ? "far too large for the network"
                                                              : model_check_input((int)C, (int)H, (int)W);
    if (bad)
        die("input images are %lldx%lldx%lld: %s", (long long)C, (long long)H, (long long)W, bad);
    f->channels = (int)C;
    f->height = (int)H;
    f->width = (int)W;
}

static int64_t need_meta(const stream_header *h, const char *key, int64_t lo, int64_t hi)
{
    int64_t v = header_int(h, key, -1);
    if (v < lo || v > hi)
        die("input header: %s stream without a plausible '%s' (%lld)", h->kind, key, (long long)v);
    return v;
}

/* the class list, ascending and each once (meta classes: the classes of the stream's items) */
static void read_classes(feed *f, const tensor *ct)
{
    if (ct->dtype != DT_I32 || ct->ndim != 1 || tensor_numel(ct) < 1 || tensor_numel(ct) >= (1 << 24))
        return;
    int64_t m = tensor_numel(ct), u = 0;
    f->classes = emalloc((size_t)m * sizeof *f->classes);
    memcpy(f->classes, ct->data, (size_t)m * sizeof *f->classes);
    qsort(f->classes, (size_t)m, sizeof *f->classes, util_cmp_i32);
    for (int64_t i = 0; i < m; i++)
        if (!u || f->classes[i] != f->classes[u - 1])
            f->classes[u++] = f->classes[i];
    f->nclasses = (int)u;
}

void feed_open(feed *f, const stream_header *h)
{
    memset(f, 0, sizeof *f);
    f->f_img2 = f->f_cls2 = f->f_match = f->f_query = -1;
    if (!strcmp(h->kind, "pairbatch")) {
        f->kind = LOSS_PAIRS;
        f->f_img = need_items(f, h, "image1", "features1");
        f->f_img2 = need_items(f, h, "image2", "features2");
        f->f_cls = need_field(h, "class1", DT_I32, PER_IMAGE);
        f->f_cls2 = need_field(h, "class2", DT_I32, PER_IMAGE);
        f->f_match = need_field(h, "match", DT_U8, PER_IMAGE);
        if (f->features && header_field_find(h, "image1") >= 0)
            die("input has both images and features (image1 and features1)");
        image_geometry(f, h, f->f_img2);
        int c2 = f->channels, h2 = f->height, w2 = f->width, F2 = f->nfeatures;
        image_geometry(f, h, f->f_img);
        if (c2 != f->channels || h2 != f->height || w2 != f->width || F2 != f->nfeatures)
            die("input %s1 and %s2 differ in size", f->features ? "features" : "image", f->features ? "features" : "image");
        int64_t B = header_int(h, "batch", 128);
        if (B < 1 || B > 65536)
            die("input header has an implausible batch size %lld", (long long)B);
        f->maxbatch = (int)(2 * B);
    } else if (!strcmp(h->kind, "groupbatch")) {
        f->kind = LOSS_GROUPS;
        f->f_img = need_items(f, h, "image", "features");
        f->f_cls = need_field(h, "class", DT_I32, PER_IMAGE);
        int64_t P = need_meta(h, "P", 1, 65536), K = need_meta(h, "K", 1, 65536);
        if (P * K > 131072)
            die("input header: P x K = %lld images per batch, more than 131072", (long long)(P * K));
        f->maxbatch = (int)(P * K);
    } else if (!strcmp(h->kind, "episodes")) {
        f->kind = LOSS_EPISODES;
        f->f_img = need_items(f, h, "image", "features");
        f->f_cls = need_field(h, "class", DT_I32, PER_IMAGE);
        f->f_query = need_field(h, "query", DT_U8, PER_IMAGE);
        f->ways = (int)need_meta(h, "ways", 2, 65536);
        f->shots = (int)need_meta(h, "shots", 1, 65536);
        f->queries = (int)need_meta(h, "queries", 1, 65536);
        int64_t n = (int64_t)f->ways * (f->shots + f->queries);
        if (n > 131072)
            die("input header: episodes of %lld images, more than 131072", (long long)n);
        f->maxbatch = (int)n;
    } else {
        die("expected a batch stream (kind pairbatch, groupbatch or episodes, from `batcher`), got '%s' (from %s)",
            h->kind, h->program);
    }
    image_geometry(f, h, f->f_img);
    f->digits = !f->features && f->channels == 1 && f->height == 28 && f->width % 28 == 0 ? f->width / 28 : 0;
    f->item_bytes = f->features ? (size_t)f->nfeatures * sizeof(float) : (size_t)f->channels * f->height * f->width;
    size_t nb = (size_t)f->maxbatch;
    f->inputs = ealloc_aligned(nb * f->item_bytes);
    f->cls = ealloc_aligned(nb * sizeof(int32_t));
    f->pa = ealloc_aligned(nb * sizeof(int32_t));
    f->pb = ealloc_aligned(nb * sizeof(int32_t));
    f->match = ealloc_aligned(nb);
    f->query = ealloc_aligned(nb);
    const tensor *ct = header_tensor(h, "classes");
    if (ct)
        read_classes(f, ct);
}

const char *feed_same_classes(feed *f, const stream_header *ckpt, int nclasses)
{
    static _Thread_local char why[160];
    const char *no = feed_rows(f);
    if (no)
        return no;
    feed was = {0}; /* the class list of the stream the run started on, as this one's is read */
    if (ckpt && ckpt->ninputs > 0) {
        const tensor *ct = header_tensor(ckpt->inputs[0], "classes");
        if (ct)
            read_classes(&was, ct);
    }
    int same = was.nclasses == f->nclasses && was.classes &&
               !memcmp(was.classes, f->classes, (size_t)f->nclasses * sizeof *f->classes);
    free(was.classes);
    if (f->nclasses != nclasses || (was.classes && !same)) {
        snprintf(why, sizeof why, "its class weights are of %d classes, the batch stream has %d%s", nclasses,
                 f->nclasses, f->nclasses == nclasses ? " others (meta classes)" : " (meta classes)");
        return why;
    }
    return NULL;
}

const char *feed_rows(feed *f)
{
    if (!f->classes)
        return "the batch stream has no class list (meta classes; fromnpz, mkdigits and mkshapes write one)";
    f->want_rows = 1;
    f->rows = ealloc_aligned((size_t)f->maxbatch * sizeof *f->rows);
    return NULL;
}

int feed_next(feed *f, const stream_record *rec, const char *name, long long index, loss_input *li)
{
    size_t img = f->item_bytes;
    int64_t B = record_batch(rec);
    int64_t n = f->kind == LOSS_PAIRS ? 2 * B : B;
    if (n < 1 || n > f->maxbatch)
        die("a batch of %lld images; the header announced at most %d", (long long)n, f->maxbatch);
    memset(li, 0, sizeof *li);
    li->n = (int)n;
    li->cls = f->cls;
    memcpy(f->inputs, rec->t[f->f_img].data, B * img);
    memcpy(f->cls, rec->t[f->f_cls].data, B * sizeof(int32_t));
    if (f->kind == LOSS_PAIRS)
        memcpy(f->inputs + B * img, rec->t[f->f_img2].data, B * img);
    if (f->features) { /* a NaN feature would poison every weight it meets */
        int64_t bad = floats_first_nonfinite((const float *)f->inputs, n * f->nfeatures);
        if (bad >= 0) { /* as batcher says it: the record, the item (a pair's first or second), the feature */
            int64_t item = bad / f->nfeatures, pair2 = f->kind == LOSS_PAIRS && item >= B;
            die("%s: record %lld: %s %lld, feature %lld is %g; feature vectors must be finite", name, index,
                f->kind != LOSS_PAIRS ? "item" : pair2 ? "features2 of pair" : "features1 of pair",
                (long long)(pair2 ? item - B : item), (long long)(bad % f->nfeatures), ((const float *)f->inputs)[bad]);
        }
    }
    if (f->kind == LOSS_PAIRS) {
        memcpy(f->cls + B, rec->t[f->f_cls2].data, B * sizeof(int32_t));
        memcpy(f->match, rec->t[f->f_match].data, B);
        for (int64_t k = 0; k < B; k++) {
            f->pa[k] = (int32_t)k;
            f->pb[k] = (int32_t)(B + k);
        }
        li->npairs = (int)B;
        li->pair_a = f->pa;
        li->pair_b = f->pb;
        li->match = f->match;
    } else if (f->kind == LOSS_EPISODES) {
        memcpy(f->query, rec->t[f->f_query].data, B);
        li->query = f->query;
    }
    if (f->want_rows) {
        for (int64_t i = 0; i < n; i++) {
            int64_t r = util_lower_bound_i32(f->classes, f->nclasses, f->cls[i]);
            if (r == f->nclasses || f->classes[r] != f->cls[i])
                die("%s: record %lld: item %lld is of class %d, which is not in the stream's class list (meta classes)",
                    name, index, (long long)i, f->cls[i]);
            f->rows[i] = (int32_t)r;
        }
        li->row = f->rows;
        li->classes = f->nclasses;
    }
    return (int)n;
}

void feed_free(feed *f)
{
    free(f->inputs);
    free(f->cls);
    free(f->pa);
    free(f->pb);
    free(f->match);
    free(f->query);
    free(f->classes);
    free(f->rows);
    memset(f, 0, sizeof *f);
}

const char *feed_items(const feed *f)
{
    static _Thread_local char what[48];
    if (f->features)
        snprintf(what, sizeof what, "feature vectors of %d", f->nfeatures);
    else
        snprintf(what, sizeof what, "%dx%dx%d images", f->channels, f->height, f->width);
    return what;
}

const char *feed_fits(const feed *f, const model_config *mc)
{
    static _Thread_local char why[256];
    char spec[96];
    const body_kind *B = body_of(mc);
    /* a model is built for one input (a checkpoint's), a body may take both (a new run's) */
    int built = mc->features > 0 ? BODY_FEATURES : mc->channels > 0 ? BODY_IMAGES : 0;
    int want = f->features ? BODY_FEATURES : BODY_IMAGES;
    body_spec(mc, spec, sizeof spec);
    if (built == BODY_FEATURES && want == BODY_IMAGES)
        snprintf(why, sizeof why, "the model takes feature vectors of %d, the batches hold %dx%dx%d images",
                 mc->features, f->channels, f->height, f->width);
    else if (built == BODY_IMAGES && want == BODY_FEATURES)
        snprintf(why, sizeof why, "the model takes %dx%dx%d images, the batches hold feature vectors of %d",
                 mc->channels, mc->height, mc->width, f->nfeatures);
    else if (!built && B && !(B->input & want))
        snprintf(why, sizeof why, "the %s body takes %s, the batches hold %s%s", spec,
                 want == BODY_FEATURES ? "images" : "feature vectors", want == BODY_FEATURES ? "feature vectors" : "images",
                 want == BODY_FEATURES ? " (--body mlp:W1,W2,... or linear)" : "");
    else if (built == BODY_FEATURES && mc->features != f->nfeatures)
        snprintf(why, sizeof why, "the model takes feature vectors of %d, the batches hold vectors of %d", mc->features,
                 f->nfeatures);
    else if (built == BODY_FEATURES && mc->mean_dims != f->mean_dims)
        snprintf(why, sizeof why, "the model takes a frozen mean of %d in its vectors, the batches %d (meta mean_dims)",
                 mc->mean_dims, f->mean_dims);
    else if (built == BODY_IMAGES && (mc->channels != f->channels || mc->height != f->height || mc->width != f->width))
        snprintf(why, sizeof why, "the model was trained on %dx%dx%d images, the batches hold %dx%dx%d images",
                 mc->channels, mc->height, mc->width, f->channels, f->height, f->width);
    else
        return NULL;
    return why;
}

const char *feed_model_input(const feed *f, model_config *mc, int D_given)
{
    static _Thread_local char why[256];
    if (mc->body < 0) /* conv for images, linear for features */
        body_parse(mc, f->features ? "linear" : "conv");
    const char *misfit = feed_fits(f, mc);
    if (misfit)
        return misfit;
    mc->digits = f->digits;
    mc->channels = f->channels;
    mc->height = f->height;
    mc->width = f->width;
    mc->features = f->features ? f->nfeatures : 0;
    mc->mean_dims = f->features ? f->mean_dims : 0;
    const head_kind *hk = head_of(mc->head);
    if (hk && hk->mean_is_input && !f->features) {
        snprintf(why, sizeof why, "the %s head's mean is the input's feature vector: it takes feature batches "
                 "(fromnpz -k features), not %s", hk->name, feed_items(f));
        return why;
    }
    if (hk && hk->mean_is_input && f->features) { /* pfe: D is the features' (or the frozen mean's) */
        int md = f->mean_dims ? f->mean_dims : f->nfeatures;
        if (D_given && mc->D != md) {
            snprintf(why, sizeof why, "the %s head's mean is the input%s, so D is its %d%s (-D %d given)", hk->name,
                     f->mean_dims ? "'s frozen mean" : "", md, f->mean_dims ? "" : " features", mc->D);
            return why;
        }
        mc->D = md;
    }
    return model_check(mc);
}

const char *feed_batcher_mode(int kinds)
{
    if (kinds & LOSS_PAIRS)
        return "batcher -m pairs";
    if (kinds & LOSS_EPISODES)
        return "batcher -m episodes";
    return "batcher -m pk";
}
