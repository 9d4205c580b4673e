/* model: a body and a head on one parameter block (see model.h): the body (lib/network/body.h) turns
 * the input into h, the head (lib/network/head.h) turns h into (mu, var) through its linear layer.
 *
 * The head's linear layer is matrix products, as the fully connected layers of the bodies:
 *   forward   ho (BODY_ROWS, HO) = h (BODY_ROWS, F) W^T (F, HO) + b, a row unit at a time
 *   backward  dho from the head (item by item), the bias gradient (in item order), then one
 *             fan-out of the column blocks of dW (HO, F) += dho^T (HO, n) h (n, F) beside the row
 *             units of dh (BODY_ROWS, F) = dho (BODY_ROWS, HO) W (HO, F) (none when the body has
 *             no parameters: nothing reads dh then)
 *
 * Threads and determinism: the body's work is cut as lib/network/body.h says; the head's units depend
 * only on the batch and the sizes, each with its own outputs and a fixed summation order, and a
 * fan-out too small to pay for the handoff runs in the caller (par_run_sized). So the results
 * are the same bytes for any thread count. OpenBLAS runs single-threaded inside the model.
 */
#include "model.h"
#include "model_query.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "blas.h"
#include "body.h"
#include "head.h"
#include "nn.h"
#include "par.h"
#include "rng.h"
#include "util.h"

enum { MAXTHREADS = 16 };

typedef struct {
    model *m;
    const body_kind *body;
    const head_kind *head;
    int HO;         /* raw head outputs per item */
    int n;          /* batch of the last forward */
    float *ho, *dho; /* (maxbatch rounded up to BODY_ROWS, HO) */
    int col_units;  /* column blocks of the head's weight gradient (body_col_units) */
    const float *x; /* a features body's input during a forward (the pfe heads' mean) */
    float *mu, *var; /* the caller's outputs during a forward */
    int v_hw, v_hb; /* the head's views */
    int v_rm, v_rv, v_ss; /* a bn head's (head_kind.bn): running mean, variance, the shared scale, shift */
    float *hn, *istd; /* a bn head's normalised outputs (maxbatch rows, HO) and 1 / sd (HO) */
    par_pool *pool; /* lib/base/par.h */
} model_impl;

/* ---------------------------------------------------------------- create, init */

int model_outputs(const model_config *cfg)
{
    const head_kind *hk = head_of(cfg->head);
    return hk ? hk->outputs(cfg->C, cfg->D) : 0;
}

const char *model_head_name(int head)
{
    const head_kind *hk = head_of(head);
    return hk ? hk->name : "?";
}
int model_head_parse(const char *name)
{
    for (int i = 0; head_kinds[i]; i++)
        if (!strcmp(name, head_kinds[i]->name))
            return i;
    return -1;
}

const char *model_names(void)
{
    static char buf[512];
    size_t n = (size_t)snprintf(buf, sizeof buf, "  bodies (--body):");
    for (int i = 0; body_kinds[i] && n < sizeof buf; i++)
        n += (size_t)snprintf(buf + n, sizeof buf - n, "%s %s%s", i ? "," : "", body_kinds[i]->name,
                              body_kinds[i]->parse(&(model_config){0}, NULL) ? ":W1,W2,..." : "");
    if (n < sizeof buf)
        n += (size_t)snprintf(buf + n, sizeof buf - n, "\n  heads (--head):");
    for (int i = 0; head_kinds[i] && n < sizeof buf; i++)
        n += (size_t)snprintf(buf + n, sizeof buf - n, "%s %s", i ? "," : "", head_kinds[i]->name);
    if (n < sizeof buf)
        snprintf(buf + n, sizeof buf - n, "\n");
    return buf;
}

int model_takes_features(const model_config *cfg) { return cfg->features > 0; }

void model_add_view(model *m, const char *name, int ndim, const int64_t *shape)
{
    if (m->nviews >= (int)(sizeof m->views / sizeof m->views[0]))
        die("model: too many parameter tensors");
    model_view *v = &m->views[m->nviews++];
    snprintf(v->name, sizeof v->name, "%s", name);
    v->ndim = ndim;
    v->size = 1;
    for (int i = 0; i < ndim; i++) {
        v->shape[i] = shape[i];
        v->size *= shape[i];
    }
    v->offset = m->nparams;
    m->nparams += v->size;
}

static float *falloc(size_t n) { return ealloc_aligned((n ? n : 1) * sizeof(float)); }

const char *model_check_input(int channels, int height, int width)
{
    static _Thread_local char why[96];
    if (channels < 1 || channels > MODEL_MAX_CHANNELS)
        snprintf(why, sizeof why, "%d channels, the network takes 1 to %d", channels, MODEL_MAX_CHANNELS);
    else if (height < 4 || height % 4)
        snprintf(why, sizeof why, "height %d is not a positive multiple of 4", height);
    else if (width < 4 || width % 4)
        snprintf(why, sizeof why, "width %d is not a positive multiple of 4", width);
    else if ((long long)height * width > MODEL_MAX_PIXELS)
        snprintf(why, sizeof why, "%d x %d = %lld pixels, more than %d", height, width, (long long)height * width,
                 MODEL_MAX_PIXELS);
    else
        return NULL;
    return why;
}

/* digits N alone: the input is 1 x 28 x 28N */
static model_config with_geometry(const model_config *cfg)
{
    model_config c = *cfg;
    if (!c.channels && !c.height && !c.width && c.digits >= 1 && c.digits <= MODEL_MAX_PIXELS / (28 * 28) &&
        c.features <= 0) {
        c.channels = 1;
        c.height = 28;
        c.width = 28 * c.digits;
    }
    return c;
}

const char *model_check(const model_config *cfg)
{
    static _Thread_local char why[192];
    model_config c = with_geometry(cfg);
    const body_kind *B = body_of(&c);
    const head_kind *hk = head_of(c.head);
    const char *bad;
    if (!B)
        snprintf(why, sizeof why, "body %d is not one of hedge's", c.body);
    else if (!(B->input & (c.features > 0 ? BODY_FEATURES : BODY_IMAGES)))
        snprintf(why, sizeof why, "the %s body takes %s, not %s", B->name,
                 B->input & BODY_FEATURES ? "feature vectors" : "images", c.features > 0 ? "feature vectors" : "images");
    else if ((bad = B->check(&c)))
        snprintf(why, sizeof why, "%s", bad);
    else if (!hk)
        snprintf(why, sizeof why, "head %d is not one of hedge's", c.head);
    else if (c.C < 1 || c.D < 1)
        snprintf(why, sizeof why, "C = %d, D = %d: both must be at least 1", c.C, c.D);
    else if ((long long)c.C * c.D > MODEL_MAX_OUTPUTS)
        snprintf(why, sizeof why, "C x D = %lld embedding outputs, more than %d", (long long)c.C * c.D,
                 MODEL_MAX_OUTPUTS);
    else if (c.ensemble && (c.ensemble < 2 || c.ensemble > MODEL_MAX_ENSEMBLE || c.head != HEAD_POINT ||
                            c.C != c.ensemble || c.query))
        snprintf(why, sizeof why, "an ensemble of %d: expected 2 to %d point heads (C = M) without a query tower, "
                 "not %s with C = %d", c.ensemble, MODEL_MAX_ENSEMBLE, hk->name, c.C);
    else if (!hk->stochastic && c.C != 1 && !c.ensemble)
        snprintf(why, sizeof why, "a %s head has one component, not C = %d", hk->name, c.C);
    else if (c.mean_dims && (c.features < 1 || c.mean_dims < 1 || c.mean_dims >= c.features || !hk->mean_is_input))
        snprintf(why, sizeof why,
                 "a frozen mean of %d beside the head's input (mean_dims): it needs feature vectors longer than it "
                 "(%d) and a head whose mean is that input (pfe, pfe-iso, pfe-bn), not %s",
                 c.mean_dims, c.features, hk->name);
    else if (hk->mean_is_input && (c.features < 1 || c.C != 1 || c.D != (c.mean_dims ? c.mean_dims : c.features)))
        snprintf(why, sizeof why,
                 "the %s head's mean is the input feature vector: it needs feature vectors, C = 1 and D = the "
                 "%s (%d), not C = %d, D = %d",
                 hk->name, c.mean_dims ? "frozen mean's dimensions" : "features",
                 c.mean_dims ? c.mean_dims : c.features, c.C, c.D);
    else if (!(c.dropout >= 0 && c.dropout <= MODEL_MAX_DROPOUT))
        snprintf(why, sizeof why, "dropout %g: expected 0 to %g", c.dropout, MODEL_MAX_DROPOUT);
    else if (c.dropout > 0 && strcmp(B->name, "mlp"))
        snprintf(why, sizeof why, "dropout %g: only the mlp body has dropout (--body mlp:W1,...), not %s", c.dropout,
                 B->name);
    else if (c.query && (c.digits < 1 || c.head != HEAD_POINT || c.features > 0))
        snprintf(why, sizeof why, "a query tower needs N-digit images and a point head");
    else
        return NULL;
    return why;
}

void model_dropout(model *m, int on, uint64_t seed, int64_t row0)
{
    m->drop_on = on && m->cfg.dropout > 0;
    m->drop_seed = seed, m->drop_row0 = row0;
}

int model_drop_keep(const model *m, int l, int64_t r, int k)
{
    /* splitmix64 of the key: layer in the top bits, the row (< 2^40) and the unit (< 2^14) */
    uint64_t z = m->drop_seed ^ ((uint64_t)l << 58 | (uint64_t)(m->drop_row0 + r) << 14 | (uint64_t)k);
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return (double)(z >> 11) * 0x1.0p-53 >= m->cfg.dropout;
}

void model_ensemble_moments(const float *members, int n, int M, int D, float *mu, float *var)
{
    for (int i = 0; i < n; i++)
        for (int d = 0; d < D; d++) {
            const float *x = members + (size_t)i * M * D + d;
            double a = 0, v = 0;
            for (int k = 0; k < M; k++)
                a += x[(size_t)k * D];
            a /= M;
            for (int k = 0; k < M; k++)
                v += (x[(size_t)k * D] - a) * (x[(size_t)k * D] - a);
            v /= M - 1;
            mu[(size_t)i * D + d] = (float)a;
            var[(size_t)i * D + d] = (float)(v > MODEL_VAR_FLOOR ? v : MODEL_VAR_FLOOR);
        }
}

void model_forward_mc(model *m, const void *input, int n, int T, uint64_t seed, int64_t row0, int unit, float *mu,
                      float *var)
{
    size_t per = (size_t)m->cfg.C * m->cfg.D, np = (size_t)n * per;
    int stoch = m->cfg.head != HEAD_POINT;
    double *acc = ecalloc(3 * (np ? np : 1), sizeof *acc); /* sums of mu, mu^2 and var */
    float *pv = stoch ? ealloc_aligned(np * sizeof *pv) : NULL;
    for (int t = 0; t < T; t++) {
        model_dropout(m, 1, seed ^ (uint64_t)(t + 1) * 0x9e3779b97f4a7c15ULL, row0);
        model_forward(m, input, n, mu, pv);
        for (int i = 0; unit && i < n; i++)
            model_unit_length(mu + i * per, (int)per);
        for (size_t k = 0; k < np; k++) {
            acc[k] += mu[k], acc[np + k] += (double)mu[k] * mu[k];
            if (pv)
                acc[2 * np + k] += pv[k];
        }
    }
    model_dropout(m, 0, 0, 0);
    for (size_t k = 0; k < np; k++) {
        double a = acc[k] / T, v = (acc[np + k] - T * a * a) / (T - 1) + acc[2 * np + k] / T;
        mu[k] = (float)a;
        var[k] = (float)(v > MODEL_VAR_FLOOR ? v : MODEL_VAR_FLOOR);
    }
    free(acc);
    free(pv);
}

model *model_create(const model_config *cfg, int nextra, const char *const *extra_names, int maxbatch)
{
    return model_create_shaped(cfg, nextra, extra_names, NULL, maxbatch);
}

model *model_create_shaped(const model_config *cfg, int nextra, const char *const *extra_names,
                           const int64_t *extra_shapes, int maxbatch)
{
    model_config c = with_geometry(cfg);
    const char *bad = model_check(&c);
    if (bad || maxbatch < 1 || nextra < 0)
        die("model: bad configuration (digits %d, input %dx%dx%d, features %d, head %d, C %d, D %d, maxbatch %d%s%s)",
            c.digits, c.channels, c.height, c.width, c.features, c.head, c.C, c.D, maxbatch, bad ? ": " : "",
            bad ? bad : "");
    model *m = ecalloc(1, sizeof *m);
    model_impl *im = ecalloc(1, sizeof *im);
    m->impl = im;
    im->m = m;
    m->cfg = c;
    im->body = body_of(&c);
    im->head = head_of(c.head);
    if (c.features > 0) {
        m->F = c.features;
    } else {
        m->Cin = c.channels;
        m->H = c.height;
        m->W = c.width;
    }
    im->HO = model_outputs(&c);
    m->maxbatch = maxbatch;

    m->hw = im->body->layout(m);
    im->v_hw = m->nviews;
    model_add_view(m, "head.w", 2, (int64_t[]){im->HO, m->hw});
    im->v_hb = m->nviews;
    model_add_view(m, "head.b", 1, (int64_t[]){im->HO});
    if (im->head->bn) {
        im->v_rm = m->nviews;
        model_add_view(m, "head.rm", 1, (int64_t[]){im->HO});
        im->v_rv = m->nviews;
        model_add_view(m, "head.rv", 1, (int64_t[]){im->HO});
        im->v_ss = m->nviews;
        model_add_view(m, "head.ss", 1, (int64_t[]){2});
    }
    if (c.query) {
        model_add_view(m, "query.emb", 3, (int64_t[]){c.digits, 10, MODEL_QUERY_E});
        model_add_view(m, "query.w1", 2, (int64_t[]){MODEL_QUERY_H, (int64_t)c.digits * MODEL_QUERY_E});
        model_add_view(m, "query.b1", 1, (int64_t[]){MODEL_QUERY_H});
        model_add_view(m, "query.w2", 2, (int64_t[]){c.D, MODEL_QUERY_H});
        model_add_view(m, "query.b2", 1, (int64_t[]){c.D});
    }
    m->nnet = m->nparams;
    m->nextra = nextra;
    for (int i = 0; i < nextra; i++) {
        const int64_t *sh = extra_shapes ? extra_shapes + 2 * i : (const int64_t[]){1, 0};
        model_add_view(m, extra_names[i], sh[1] ? 2 : 1, sh);
    }
    m->params = falloc(m->nparams);
    m->grads = falloc(m->nparams);

    im->ho = body_rows_alloc(maxbatch, im->HO);
    im->dho = body_rows_alloc(maxbatch, im->HO);
    if (im->head->bn) {
        im->hn = body_rows_alloc(maxbatch, im->HO);
        im->istd = body_rows_alloc(1, im->HO);
    }
    im->col_units = body_col_units(m->hw);
    im->body->create(m);
    model_set_threads(m, blas_threads());
    return m;
}

void model_set_threads(model *m, int threads)
{
    model_impl *im = m->impl;
    if (threads < 1)
        threads = 1;
    if (threads > MAXTHREADS)
        threads = MAXTHREADS;
    if (im->pool && threads == par_workers(im->pool))
        return;
    par_free(im->pool);
    im->body->threads(m, threads);
    im->pool = par_new(threads);
}

int model_threads(const model *m) { return par_workers(((model_impl *)m->impl)->pool); }

par_pool *model_pool(const model *m) { return ((model_impl *)m->impl)->pool; }

size_t model_input_bytes(const model *m)
{
    return m->F ? (size_t)m->F * sizeof(float) : (size_t)m->Cin * m->H * m->W;
}

void model_free(model *m)
{
    if (!m)
        return;
    model_impl *im = m->impl;
    par_free(im->pool);
    im->body->destroy(m);
    free(im->ho);
    free(im->dho);
    free(im->hn);
    free(im->istd);
    free(im);
    if (m->qfree)
        m->qfree(m);
    free(m->params);
    free(m->grads);
    free(m);
}

const model_view *model_view_find(const model *m, const char *name)
{
    for (int i = 0; i < m->nviews; i++)
        if (!strcmp(m->views[i].name, name))
            return &m->views[i];
    return NULL;
}

static int ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), k = strlen(tail);
    return n >= k && !strcmp(s + n - k, tail);
}

/* Xavier uniform into p, the weight of view v, from the random stream (seed, stream):
 * (OUT, IN, k, k...): fan_in = IN k..., fan_out = OUT k... */
static void xavier(const model_view *v, float *p, uint64_t seed, uint64_t stream)
{
    double field = 1;
    for (int d = 2; d < v->ndim; d++)
        field *= (double)v->shape[d];
    double fan_in = (double)v->shape[1] * field, fan_out = (double)v->shape[0] * field;
    double limit = sqrt(6.0 / (fan_in + fan_out));
    rng r;
    rng_init(&r, seed, stream);
    for (size_t i = 0; i < v->size; i++)
        p[i] = (float)((2.0 * rng_uniform(&r) - 1.0) * limit);
}

void model_init(model *m, uint64_t seed)
{
    /* the body's and the head's tensors: weights NAME.w, biases NAME.b (the query tower has
     * its own init); the random stream of a weight is its place in the block, so that the
     * conv body's weights keep the numbers of the versions before bodies */
    for (int t = 0; t < m->nviews && m->views[t].offset < m->nnet; t++) {
        const model_view *v = &m->views[t];
        if (!strncmp(v->name, "query.", 6))
            continue;
        float *p = m->params + v->offset;
        if (ends_with(v->name, ".b") || ends_with(v->name, ".rm")) {
            memset(p, 0, v->size * sizeof(float));
            continue;
        }
        if (ends_with(v->name, ".g") || ends_with(v->name, ".rv") || !strcmp(v->name, "head.ss")) {
            for (size_t i = 0; i < v->size; i++)
                p[i] = 1.0f;
            if (!strcmp(v->name, "head.ss"))
                p[0] = HEAD_BN_SCALE0, p[1] = HEAD_BN_SHIFT0;
            continue;
        }
        xavier(v, p, seed, RNG_STREAM('i', 'n', 'i', 't') | (uint64_t)t);
    }
}

void model_init_extra(model *m, uint64_t seed)
{
    for (int t = 0; t < m->nviews; t++) {
        const model_view *v = &m->views[t];
        if (v->offset < m->nnet || v->ndim != 2 || !ends_with(v->name, ".w"))
            continue;
        xavier(v, m->params + v->offset, seed, RNG_STREAM('x', 't', 'r', 'a') | (uint64_t)t);
    }
}

void model_weight_decay(model *m, double wd)
{
    for (int t = 0; t < m->nviews; t++) {
        const model_view *v = &m->views[t];
        if (!ends_with(v->name, ".w"))
            continue;
        const float *p = m->params + v->offset;
        float *g = m->grads + v->offset, w = (float)wd;
        for (size_t i = 0; i < v->size; i++)
            g[i] += w * p[i];
    }
}

/* ---------------------------------------------------------------- forward */

static const float *param(const model *m, int view) { return m->params + m->views[view].offset; }
static float *grad(const model *m, int view) { return m->grads + m->views[view].offset; }

/* items of row unit u: the head's outputs, then the embeddings */
static void head_forward_task(void *ctx, int u, int tid)
{
    model_impl *im = ctx;
    const model *m = im->m;
    int r0 = u * BODY_ROWS, nr = im->n - r0 < BODY_ROWS ? im->n - r0 : BODY_ROWS, HO = im->HO, F = m->hw;
    const float *hb = param(m, im->v_hb);
    int C = m->cfg.C, D = m->cfg.D;
    // ho (BODY_ROWS, HO) = h (BODY_ROWS, F) W^T (F, HO) (rows past n: junk, never read)
    blas_sgemm(0, 1, BODY_ROWS, HO, F, 1.0f, m->body_h + (size_t)r0 * F, F, param(m, im->v_hw), F, 0.0f,
               im->ho + (size_t)r0 * HO, HO);
    for (int i = r0; i < r0 + nr; i++) {
        float *ho = im->ho + (size_t)i * HO;
        for (int o = 0; o < HO; o++)
            ho[o] += hb[o];
        if (im->head->bn)
            continue; /* the batch's statistics first (model_forward) */
        im->head->forward(C, D, ho, im->x ? im->x + (size_t)i * m->F : NULL, im->mu + (size_t)i * C * D,
                          im->var ? im->var + (size_t)i * C * D : NULL);
    }
}

/* a bn head (head_kind.bn): ho normalised over the batch into hn, s = scale hn + shift back into
 * ho, then the head's embeddings, item by item */
static void bn_head_forward(model *m, model_impl *im)
{
    int n = im->n, HO = im->HO, C = m->cfg.C, D = m->cfg.D;
    size_t all = (size_t)n * HO;
    memcpy(im->hn, im->ho, all * sizeof(float));
    nn_bn_forward(n, HO, im->hn, m->params + m->views[im->v_rm].offset, m->params + m->views[im->v_rv].offset,
                  im->istd, m->bn_train);
    const float *ss = param(m, im->v_ss);
    for (size_t e = 0; e < all; e++)
        im->ho[e] = ss[0] * im->hn[e] + ss[1];
    for (int i = 0; i < n; i++)
        im->head->forward(C, D, im->ho + (size_t)i * HO, im->x ? im->x + (size_t)i * m->F : NULL,
                          im->mu + (size_t)i * C * D, im->var ? im->var + (size_t)i * C * D : NULL);
}

/* OpenBLAS runs single-threaded inside the model: one call per unit, whatever the threads */
static int blas_enter(void)
{
    int bt = blas_threads();
    if (bt != 1)
        blas_set_threads(1);
    return bt;
}
static void blas_leave(int bt)
{
    if (bt != 1)
        blas_set_threads(bt);
}

void model_forward(model *m, const void *input, int n, float *mu, float *var)
{
    model_impl *im = m->impl;
    if (n < 0 || n > m->maxbatch)
        die("model_forward: batch of %d items, more than the %d allocated", n, m->maxbatch);
    im->n = n;
    if (n == 0)
        return;
    int bt = blas_enter();
    im->body->forward(m, input, n);
    im->mu = mu;
    im->var = var;
    /* the mean's floats: the input itself, or its last mean_dims (row stride F either way) */
    im->x = im->head->mean_is_input ? (const float *)input + (m->cfg.mean_dims ? m->F - m->cfg.mean_dims : 0) : NULL;
    int units = (n + BODY_ROWS - 1) / BODY_ROWS;
    par_run_sized(im->pool, 2.0 * units * BODY_ROWS * im->HO * m->hw, units, head_forward_task, im);
    if (im->head->bn)
        bn_head_forward(m, im);
    im->mu = im->var = NULL;
    im->x = NULL;
    blas_leave(bt);
}

/* ---------------------------------------------------------------- backward */

/* the head's backward fan-out: col_units column blocks of dW, then the row units of dh */
static void head_backward_task(void *ctx, int u, int tid)
{
    model_impl *im = ctx;
    const model *m = im->m;
    int n = im->n, HO = im->HO, F = m->hw;
    if (u < im->col_units) {
        int c0 = (int)par_lo(F, im->col_units, u), c1 = (int)par_lo(F, im->col_units, u + 1);
        // dW[:, c0:c1] (HO, nc) += dho^T (HO, n) h[:, c0:c1] (n, nc)
        blas_sgemm(1, 0, HO, c1 - c0, n, 1.0f, im->dho, HO, m->body_h + c0, F, 1.0f, grad(m, im->v_hw) + c0, F);
        return;
    }
    size_t r0 = (size_t)(u - im->col_units) * BODY_ROWS;
    // dh (BODY_ROWS, F) = dho (BODY_ROWS, HO) W (HO, F) (rows past n: junk, never read)
    blas_sgemm(0, 0, BODY_ROWS, F, HO, 1.0f, im->dho + r0 * HO, HO, param(m, im->v_hw), F, 0.0f,
               m->body_dh + r0 * F, F);
}

void model_backward(model *m, const float *dmu, const float *dvar)
{
    model_impl *im = m->impl;
    int n = im->n, HO = im->HO, C = m->cfg.C, D = m->cfg.D;
    if (n == 0)
        return;
    int bt = blas_enter();
    // dho from dmu, dvar, item by item; the bias gradient in item order
    float *ghb = grad(m, im->v_hb);
    for (int i = 0; i < n; i++) {
        float *dho = im->dho + (size_t)i * HO;
        im->head->backward(C, D, im->ho + (size_t)i * HO, dmu + (size_t)i * C * D,
                           dvar ? dvar + (size_t)i * C * D : NULL, dho);
        for (int o = 0; o < HO; o++)
            ghb[o] += im->head->bn ? 0.0f : dho[o]; /* a bn head's bias cancels in its normalisation */
    }
    if (im->head->bn) { /* ds -> the scale's and shift's gradients, then back through the normalisation */
        float *gss = grad(m, im->v_ss), scale = param(m, im->v_ss)[0];
        double g0 = 0, g1 = 0;
        for (size_t e = 0; e < (size_t)n * HO; e++) {
            g0 += (double)im->dho[e] * im->hn[e], g1 += im->dho[e];
            im->dho[e] *= scale;
        }
        gss[0] += (float)g0, gss[1] += (float)g1;
        nn_bn_backward(n, HO, im->dho, im->hn, im->istd, m->bn_train);
    }
    // the weight gradient and dh for the body (a body without parameters reads no dh)
    int rows = im->v_hw > 0 ? (n + BODY_ROWS - 1) / BODY_ROWS : 0;
    double flops = 2.0 * HO * m->hw * (n + (double)rows * BODY_ROWS);
    par_run_sized(im->pool, flops, im->col_units + rows, head_backward_task, im);
    im->body->backward(m);
    blas_leave(bt);
}
