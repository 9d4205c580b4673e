/* model: the HIB embedding network on one parameter block (see model.h), built from the fused
 * layers of nn.h, on a pool of threads (lib/par.h).
 *
 * Layouts (per image; NHWC = channels innermost):
 *   img   (Cin, H, W) bytes, kept from the forward for the backward
 *   p1    (H/2+4, W/2+4, 6) floats, conv1 -> ReLU -> pool, zero border of 2 (conv2's padding)
 *   p2    (H/4, W/4, 16) floats = the fc1 input; fc1.w columns follow this (y, x, c) order
 *   h1    (120) after ReLU;  ho (HO) raw head outputs
 * fc1.w is (120, 16*H/4*W/4) with input features in (y, x, channel) order, not PyTorch's
 * (channel, y, x): the conv2 kernel writes channels innermost.
 *
 * Threads and determinism: work is cut into units whose boundaries depend only on the batch
 * size (FWD_CHUNK or CHUNK images for the convolutions, FC_ROWS rows or FC_COL_UNITS column
 * blocks for fc1),
 * never on the thread count; threads take units in any order (par_run's shared counter), every unit
 * writes its own outputs with a fixed summation order, and the per-chunk conv weight gradients
 * are summed in chunk order at the end. OpenBLAS runs single-threaded inside the model, one call
 * per unit. So the results are the same bytes for any thread count (and with or without
 * AVX-512). The row units always have FC_ROWS rows (buffers are rounded up; rows past the batch
 * are junk), so that an image's outputs do not depend on the batch size either, only on its
 * position modulo FC_ROWS. The weight gradients, sums over the batch, do.
 *
 * Per step the calling thread alone does: the image copy, the conv2 weight repacking, the head's
 * backward (tiny) and the sum of the per-chunk gradients; everything else is split.
 */
#include "model.h"

#include <immintrin.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "blas.h"
#include "nn.h"
#include "par.h"
#include "rng.h"
#include "util.h"

enum { C1 = 6, C2 = NN_CONVPOOL_COUT, FC = 120 };
/* Work units: small ones balance the threads at the end of a phase. The backward's conv chunks
 * each have a gradient buffer, summed at the end (so not too small); the forward's have none. */
enum { FWD_CHUNK = 2, CHUNK = 4, FC_ROWS = 64, FC_COL_UNITS = 8, MAXTHREADS = 16 };
/* per conv chunk: dw1 (C1*Cin*25), db1 (C1), dwr2 (NN_DWR_SIZE), db2 (C2), padded to 16 floats */
static size_t cgrad_size(int Cin) { return (C1 * Cin * 25 + C1 + NN_DWR_SIZE + C2 + 15) / 16 * 16; }

typedef struct model_impl model_impl;

/* ---------------------------------------------------------------- the model's private state */

typedef struct {
    float *planes;   /* conv1 input planes (zero borders) */
    float *dp1;      /* gradient of one image's p1, plus NN_DIN_SLACK */
    void *scratch;   /* nn_convpool_backward */
} workspace;

struct model_impl {
    model *m;
    int Cin, H, W, H2, W2, H4, W4, HO, fc_in;
    size_t img_size; /* bytes per image */
    size_t p1_size; /* floats per image */
    size_t cgrad_size; /* floats per conv chunk */
    int n;          /* batch of the last forward */
    /* activations, maxbatch images */
    uint8_t *img, *a1, *a2;
    float *p1, *p2, *h1, *ho;
    float *mu, *var; /* the caller's outputs during a forward */
    /* backward */
    const float *dmu, *dvar;
    float *dho, *dh1, *dp2, *cgrad;
    /* conv2 weights repacked for the kernels */
    float *wk2, *wr2;
    workspace ws[MAXTHREADS];
    par_pool *pool; /* lib/par.h: worker w computes in ws[w] */
};

static size_t p1_size(int H2, int W2) { return (size_t)(H2 + 4) * (W2 + 4) * C1; }

/* ---------------------------------------------------------------- create, init */

int model_outputs(const model_config *cfg)
{
    return cfg->head == HEAD_MOG ? 2 * cfg->C * cfg->D : cfg->head == HEAD_ISO ? cfg->C * (cfg->D + 1) : cfg->C * cfg->D;
}

const char *model_head_name(int head)
{
    return head == HEAD_POINT ? "point" : head == HEAD_MOG ? "mog" : head == HEAD_ISO ? "iso" : "?";
}
int model_head_parse(const char *name)
{
    return !strcmp(name, "point") ? HEAD_POINT : !strcmp(name, "mog") ? HEAD_MOG : !strcmp(name, "iso") ? HEAD_ISO : -1;
}

static void add_view(model *m, const char *name, int ndim, const int64_t *shape)
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

model *model_create(const model_config *cfg, int nextra, const char *const *extra_names, int maxbatch)
{
    model_config c = *cfg;
    if (!c.channels && !c.height && !c.width && c.digits >= 1 && c.digits <= MODEL_MAX_PIXELS / (28 * 28)) {
        c.channels = 1;
        c.height = 28;
        c.width = 28 * c.digits;
    }
    const char *bad = model_check_input(c.channels, c.height, c.width);
    if (bad || c.digits < 0 || (c.digits && (c.channels != 1 || c.height != 28 || c.width != 28 * c.digits)) ||
        c.C < 1 || c.D < 1 || maxbatch < 1 || nextra < 0 || (c.head != HEAD_POINT && c.head != HEAD_MOG && c.head != HEAD_ISO) ||
        (c.head == HEAD_POINT && c.C != 1) || (c.query && (c.digits < 1 || c.head != HEAD_POINT)))
        die("model: bad configuration (digits %d, input %dx%dx%d%s%s, head %d, C %d, D %d, maxbatch %d)", c.digits,
            c.channels, c.height, c.width, bad ? ": " : "", bad ? bad : "", c.head, c.C, c.D, maxbatch);
    model *m = ecalloc(1, sizeof *m);
    model_impl *im = ecalloc(1, sizeof *im);
    m->impl = im;
    im->m = m;
    m->cfg = c;
    m->Cin = im->Cin = c.channels;
    m->H = im->H = c.height;
    m->W = im->W = c.width;
    im->img_size = (size_t)im->Cin * im->H * im->W;
    im->cgrad_size = cgrad_size(im->Cin);
    im->H2 = im->H / 2;
    im->W2 = im->W / 2;
    im->H4 = im->H / 4;
    im->W4 = im->W / 4;
    im->HO = model_outputs(cfg);
    im->fc_in = C2 * im->H4 * im->W4;
    m->maxbatch = maxbatch;

    add_view(m, "conv1.w", 4, (int64_t[]){C1, im->Cin, 5, 5});
    add_view(m, "conv1.b", 1, (int64_t[]){C1});
    add_view(m, "conv2.w", 4, (int64_t[]){C2, C1, 5, 5});
    add_view(m, "conv2.b", 1, (int64_t[]){C2});
    add_view(m, "fc1.w", 2, (int64_t[]){FC, im->fc_in});
    add_view(m, "fc1.b", 1, (int64_t[]){FC});
    add_view(m, "head.w", 2, (int64_t[]){im->HO, FC});
    add_view(m, "head.b", 1, (int64_t[]){im->HO});
    if (c.query) {
        add_view(m, "query.emb", 3, (int64_t[]){c.digits, 10, MODEL_QUERY_E});
        add_view(m, "query.w1", 2, (int64_t[]){MODEL_QUERY_H, (int64_t)c.digits * MODEL_QUERY_E});
        add_view(m, "query.b1", 1, (int64_t[]){MODEL_QUERY_H});
        add_view(m, "query.w2", 2, (int64_t[]){c.D, MODEL_QUERY_H});
        add_view(m, "query.b2", 1, (int64_t[]){c.D});
    }
    m->nnet = m->nparams;
    m->nextra = nextra;
    for (int i = 0; i < nextra; i++)
        add_view(m, extra_names[i], 1, (int64_t[]){1});
    m->params = falloc(m->nparams);
    m->grads = falloc(m->nparams);

    /* the fc1 matrices get whole FC_ROWS units, so that every sgemm has the same shape and an
     * image's outputs do not depend on the batch size */
    size_t nb = maxbatch, nbr = (nb + FC_ROWS - 1) / FC_ROWS * FC_ROWS;
    im->p1_size = p1_size(im->H2, im->W2);
    im->img = ealloc_aligned(nb * im->img_size);
    im->p1 = falloc(nb * im->p1_size + NN_DIN_SLACK);
    im->a1 = ealloc_aligned(nb * im->H2 * im->W2 * C1);
    im->p2 = falloc(nbr * im->fc_in);
    im->a2 = ealloc_aligned(nb * im->fc_in);
    im->h1 = falloc(nbr * FC);
    im->ho = falloc(nb * im->HO);
    im->dho = falloc(nb * im->HO);
    im->dh1 = falloc(nbr * FC);
    im->dp2 = falloc(nbr * im->fc_in);
    im->cgrad = falloc((nb + CHUNK - 1) / CHUNK * im->cgrad_size);
    im->wk2 = falloc(NN_WK_SIZE(C1));
    im->wr2 = falloc(NN_WR_SIZE);

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
    for (int t = 0; t < MAXTHREADS; t++) {
        workspace *w = &im->ws[t];
        if (t < threads && !w->planes) {
            w->planes = falloc(nn_planes_size(im->Cin, im->H, im->W));
            w->dp1 = falloc(im->p1_size + NN_DIN_SLACK);
            w->scratch = ealloc_aligned(nn_convpool_scratch(im->H2, im->W2));
        }
    }
    im->pool = par_new(threads);
}

int model_threads(const model *m) { return par_workers(((model_impl *)m->impl)->pool); }

void model_free(model *m)
{
    if (!m)
        return;
    model_impl *im = m->impl;
    par_free(im->pool);
    for (int t = 0; t < MAXTHREADS; t++) {
        free(im->ws[t].planes);
        free(im->ws[t].dp1);
        free(im->ws[t].scratch);
    }
    void *bufs[] = {im->img, im->p1, im->a1, im->p2, im->a2, im->h1, im->ho, im->dho,
                    im->dh1, im->dp2, im->cgrad, im->wk2, im->wr2};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        free(bufs[i]);
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

void model_init(model *m, uint64_t seed)
{
    /* the network tensors come in (weight, bias) pairs */
    for (int t = 0; t < 8; t++) {
        const model_view *v = &m->views[t];
        float *p = m->params + v->offset;
        if (t % 2) {
            memset(p, 0, v->size * sizeof(float));
            continue;
        }
        double fan_in, fan_out;
        if (v->ndim == 4) { /* conv (Cout, Cin, 5, 5) */
            fan_in = (double)v->shape[1] * 25;
            fan_out = (double)v->shape[0] * 25;
        } else { /* fc (OUT, IN) */
            fan_in = (double)v->shape[1];
            fan_out = (double)v->shape[0];
        }
        double limit = sqrt(6.0 / (fan_in + fan_out));
        rng r;
        rng_init(&r, seed, RNG_STREAM('i', 'n', 'i', 't') | (uint64_t)t);
        for (size_t i = 0; i < v->size; i++)
            p[i] = (float)((2.0 * rng_uniform(&r) - 1.0) * limit);
    }
}

/* ---------------------------------------------------------------- forward */

static float softplus(float x) { return x > 0 ? x + log1pf(expf(-x)) : log1pf(expf(x)); }
static float sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }
static float clamp_logvar(float s) { return s < -MODEL_LOGVAR_MAX ? -MODEL_LOGVAR_MAX : s > MODEL_LOGVAR_MAX ? MODEL_LOGVAR_MAX : s; }

static const float *param(const model *m, int view) { return m->params + m->views[view].offset; }
static float *grad(const model *m, int view) { return m->grads + m->views[view].offset; }
enum { V_C1W, V_C1B, V_C2W, V_C2B, V_F1W, V_F1B, V_HW, V_HB };

/* images of chunk c -> p1, a1, p2, a2 */
static void conv_forward_task(void *ctx, int c, int tid)
{
    model_impl *im = ctx;
    const model *m = im->m;
    workspace *ws = &im->ws[tid];
    int i1 = (c + 1) * FWD_CHUNK < im->n ? (c + 1) * FWD_CHUNK : im->n;
    for (int i = c * FWD_CHUNK; i < i1; i++) {
        nn_planes_fill(ws->planes, im->img + i * im->img_size, im->Cin, im->H, im->W, 1.0f / 255, 5);
        float *p1 = im->p1 + i * im->p1_size;
        nn_convpool1_forward(p1, im->a1 + (size_t)i * im->H2 * im->W2 * C1, ws->planes, param(m, V_C1W),
                             param(m, V_C1B), im->Cin, im->H, im->W, C1);
        nn_convpool_forward(im->p2 + (size_t)i * im->fc_in, im->a2 + (size_t)i * im->fc_in, p1, im->wk2,
                            param(m, V_C2B), im->H2, im->W2, C1);
    }
}

/* sum of a[k] b[k], k < FC (a multiple of 8): 8 partial sums, then a fixed reduction order */
static float dot_fc(const float *a, const float *b)
{
    __m256 s = _mm256_setzero_ps();
    for (int k = 0; k < FC; k += 8)
        s = _mm256_fmadd_ps(_mm256_loadu_ps(a + k), _mm256_loadu_ps(b + k), s);
    __m128 h = _mm_add_ps(_mm256_castps256_ps128(s), _mm256_extractf128_ps(s, 1));
    h = _mm_add_ps(h, _mm_movehl_ps(h, h));
    h = _mm_add_ss(h, _mm_movehdup_ps(h));
    return _mm_cvtss_f32(h);
}

/* gw[k] += g h[k]; dh[k] += g w[k], k < FC */
static void head_grad_row(float *restrict gw, float *restrict dh, const float *restrict h,
                          const float *restrict w, float g)
{
    for (int k = 0; k < FC; k++) {
        gw[k] += g * h[k];
        dh[k] += g * w[k];
    }
}

/* rows of unit u: fc1 + ReLU, head, outputs */
static void fc_forward_task(void *ctx, int u, int tid)
{
    model_impl *im = ctx;
    const model *m = im->m;
    int r0 = u * FC_ROWS, nr = im->n - r0 < FC_ROWS ? im->n - r0 : FC_ROWS, HO = im->HO;
    float *h1 = im->h1 + (size_t)r0 * FC;
    // h1 (FC_ROWS, 120) = p2 (FC_ROWS, fc_in) fc1.w^T (rows past n: junk, unused); + b, ReLU
    blas_sgemm(0, 1, FC_ROWS, FC, im->fc_in, 1.0f, im->p2 + (size_t)r0 * im->fc_in, im->fc_in, param(m, V_F1W),
               im->fc_in, 0.0f, h1, FC);
    const float *b1 = param(m, V_F1B), *hw = param(m, V_HW), *hb = param(m, V_HB);
    int C = m->cfg.C, D = m->cfg.D;
    for (int i = 0; i < nr; i++) {
        float *h = h1 + (size_t)i * FC, *ho = im->ho + (size_t)(r0 + i) * HO;
        for (int k = 0; k < FC; k++) {
            float v = h[k] + b1[k];
            h[k] = v > 0 ? v : 0.0f;
        }
        for (int o = 0; o < HO; o++)
            ho[o] = dot_fc(hw + (size_t)o * FC, h) + hb[o];
        float *mu = im->mu + (size_t)(r0 + i) * C * D;
        if (m->cfg.head == HEAD_POINT) {
            memcpy(mu, ho, (size_t)C * D * sizeof(float));
            continue;
        }
        float *var = im->var ? im->var + (size_t)(r0 + i) * C * D : NULL;
        if (m->cfg.head == HEAD_ISO) {
            for (int c = 0; c < C; c++) {
                const float *hc = ho + c * (D + 1);
                float v = expf(clamp_logvar(hc[D]));
                for (int d = 0; d < D; d++) {
                    mu[c * D + d] = hc[d];
                    if (var)
                        var[c * D + d] = v;
                }
            }
            continue;
        }
        for (int c = 0; c < C; c++)
            for (int d = 0; d < D; d++) {
                mu[c * D + d] = ho[c * 2 * D + d];
                if (var)
                    var[c * D + d] = softplus(ho[c * 2 * D + D + d]) + MODEL_VAR_FLOOR;
            }
    }
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

void model_forward(model *m, const uint8_t *images, int n, float *mu, float *var)
{
    model_impl *im = m->impl;
    if (n < 0 || n > m->maxbatch)
        die("model_forward: batch of %d images, more than the %d allocated", n, m->maxbatch);
    im->n = n;
    if (n == 0)
        return;
    int bt = blas_enter();
    memcpy(im->img, images, n * im->img_size);
    nn_convpool_pack(im->wk2, im->wr2, param(m, V_C2W), C1);
    im->mu = mu;
    im->var = var;
    par_run(im->pool, (n + FWD_CHUNK - 1) / FWD_CHUNK, conv_forward_task, im);
    par_run(im->pool, (n + FC_ROWS - 1) / FC_ROWS, fc_forward_task, im);
    im->mu = im->var = NULL;
    blas_leave(bt);
}

/* ---------------------------------------------------------------- backward */

/* The row units first (dp2 for FC_ROWS rows: the bigger ones, so that the smaller ones fill
 * in at the end), then FC_COL_UNITS units of the fc1.w gradient, for a block of input columns
 * (all rows, in order). */
static void fc_backward_task(void *ctx, int u, int tid)
{
    model_impl *im = ctx;
    const model *m = im->m;
    int n = im->n, fc_in = im->fc_in, nrow = (n + FC_ROWS - 1) / FC_ROWS;
    if (u >= nrow) {
        u -= nrow;
        int c0 = (int)((long)fc_in * u / FC_COL_UNITS), c1 = (int)((long)fc_in * (u + 1) / FC_COL_UNITS);
        if (c1 > c0) // fc1.w[:, c0:c1] (120, nc) += dh1^T (120, n) p2[:, c0:c1] (n, nc)
            blas_sgemm(1, 0, FC, c1 - c0, n, 1.0f, im->dh1, FC, im->p2 + c0, fc_in, 1.0f,
                       grad(m, V_F1W) + c0, fc_in);
        return;
    }
    int r0 = u * FC_ROWS;
    // dp2 (FC_ROWS, fc_in) = dh1 (FC_ROWS, 120) fc1.w (120, fc_in) (rows past n: junk, unused)
    blas_sgemm(0, 0, FC_ROWS, fc_in, FC, 1.0f, im->dh1 + (size_t)r0 * FC, FC, param(m, V_F1W), fc_in, 0.0f,
               im->dp2 + (size_t)r0 * fc_in, fc_in);
}

/* images of chunk c: conv2 and conv1 backward; weight gradients into the chunk's buffer */
static void conv_backward_task(void *ctx, int c, int tid)
{
    model_impl *im = ctx;
    workspace *ws = &im->ws[tid];
    float *g = im->cgrad + c * im->cgrad_size;
    memset(g, 0, im->cgrad_size * sizeof(float));
    float *dw1 = g, *db1 = dw1 + C1 * im->Cin * 25, *dwr2 = db1 + C1, *db2 = dwr2 + NN_DWR_SIZE;
    int i1 = (c + 1) * CHUNK < im->n ? (c + 1) * CHUNK : im->n;
    for (int i = c * CHUNK; i < i1; i++) {
        const float *p1 = im->p1 + i * im->p1_size;
        memset(ws->dp1, 0, (im->p1_size + NN_DIN_SLACK) * sizeof(float));
        nn_convpool_backward(ws->dp1, dwr2, db2, im->dp2 + (size_t)i * im->fc_in, im->p2 + (size_t)i * im->fc_in,
                             im->a2 + (size_t)i * im->fc_in, p1, im->wr2, im->H2, im->W2, C1, ws->scratch);
        nn_planes_fill(ws->planes, im->img + i * im->img_size, im->Cin, im->H, im->W, 1.0f / 255, 1);
        nn_convpool1_backward(dw1, db1, ws->dp1, p1, im->a1 + (size_t)i * im->H2 * im->W2 * C1, ws->planes,
                              im->Cin, im->H, im->W, C1);
    }
}

void model_backward(model *m, const float *dmu, const float *dvar)
{
    model_impl *im = m->impl;
    int n = im->n, HO = im->HO, C = m->cfg.C, D = m->cfg.D;
    if (n == 0)
        return;
    int bt = blas_enter();
    // head: dho (n, HO) from dmu, dvar (through the softplus); head grads; dh1 through ReLU
    float *ghw = grad(m, V_HW), *ghb = grad(m, V_HB), *gb1 = grad(m, V_F1B);
    const float *hw = param(m, V_HW);
    for (int i = 0; i < n; i++) {
        float *dho = im->dho + (size_t)i * HO;
        const float *ho = im->ho + (size_t)i * HO, *h = im->h1 + (size_t)i * FC;
        const float *dm = dmu + (size_t)i * C * D;
        if (m->cfg.head == HEAD_POINT)
            memcpy(dho, dm, (size_t)HO * sizeof(float));
        else if (m->cfg.head == HEAD_ISO)
            for (int c = 0; c < C; c++) {
                // var = exp(s) in every dimension: ds = exp(s) sum_d dvar[d]; where s is clamped,
                // the gradient at the bound (straight through), so that a step that threw s past
                // it can come back (with a zero gradient there, an image, or the whole head, stays
                // stuck at the bound: seen on 3-digit MNIST at lr 3e-3)
                float *dc = dho + c * (D + 1), s = ho[c * (D + 1) + D], g = 0;
                for (int d = 0; d < D; d++) {
                    dc[d] = dm[c * D + d];
                    g += dvar ? dvar[(size_t)i * C * D + c * D + d] : 0.0f;
                }
                dc[D] = g * expf(clamp_logvar(s));
            }
        else
            for (int c = 0; c < C; c++)
                for (int d = 0; d < D; d++) {
                    dho[c * 2 * D + d] = dm[c * D + d];
                    float dv = dvar ? dvar[(size_t)i * C * D + c * D + d] : 0.0f;
                    dho[c * 2 * D + D + d] = dv * sigmoid(ho[c * 2 * D + D + d]);
                }
        float *dh = im->dh1 + (size_t)i * FC;
        for (int k = 0; k < FC; k++)
            dh[k] = 0;
        for (int o = 0; o < HO; o++) {
            ghb[o] += dho[o];
            head_grad_row(ghw + (size_t)o * FC, dh, h, hw + (size_t)o * FC, dho[o]);
        }
        for (int k = 0; k < FC; k++) {
            dh[k] = h[k] > 0 ? dh[k] : 0.0f;
            gb1[k] += dh[k];
        }
    }
    par_run(im->pool, FC_COL_UNITS + (n + FC_ROWS - 1) / FC_ROWS, fc_backward_task, im);
    int nchunks = (n + CHUNK - 1) / CHUNK;
    par_run(im->pool, nchunks, conv_backward_task, im);
    // the chunks' conv gradients, summed in chunk order
    float *sum = im->cgrad; /* chunk 0 accumulates the others */
    for (int c = 1; c < nchunks; c++) {
        const float *g = im->cgrad + c * im->cgrad_size;
        for (size_t k = 0; k < im->cgrad_size; k++)
            sum[k] += g[k];
    }
    float *dw1 = sum, *db1 = dw1 + C1 * im->Cin * 25, *dwr2 = db1 + C1, *db2 = dwr2 + NN_DWR_SIZE;
    float *g1w = grad(m, V_C1W), *g1b = grad(m, V_C1B), *g2b = grad(m, V_C2B);
    for (int k = 0; k < C1 * im->Cin * 25; k++)
        g1w[k] += dw1[k];
    for (int k = 0; k < C1; k++)
        g1b[k] += db1[k];
    nn_convpool_unpack_add(grad(m, V_C2W), dwr2, C1);
    for (int k = 0; k < C2; k++)
        g2b[k] += db2[k];
    blas_leave(bt);
}
