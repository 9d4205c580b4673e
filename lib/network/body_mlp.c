/* body_mlp: fully connected layers with ReLU (lib/network/body.h), on feature vectors:
 *
 *   input x float (n, F0)                 F0 = cfg->features, or the C x H x W pixels of an
 *                                         images model, scaled to [0, 1]
 *   fc l: a_l = ReLU(a_{l-1} W_l^T + b_l)  (n, F_l), l = 1 .. L, F_l = cfg->widths[l - 1]
 *   h = a_L                               (n, F_L)
 *   dropout (cfg.dropout p > 0, model_dropout on): each a_l's unit kept with probability 1 - p
 *   and scaled by 1 / (1 - p), else 0 (the mask: model_drop_keep, a hash of the unit's place)
 *
 * Parameters: fcL.w (F_l, F_{l-1}), fcL.b (F_l) for l = 1 .. L: sum of F_l (F_{l-1} + 1)
 * (`mlp:512,256` on 784 features: 401,920 + 131,328 = 533,248).
 *
 * mlp-bn (the same file): each layer batch-normalised before its ReLU, as PFE's authors' module's
 * fc1 (slim.fully_connected with slim.batch_norm: no bias, a learned scale and shift per unit),
 *   z_l = a_{l-1} W_l^T,  a_l = ReLU(g_l xh_l + b_l),  xh_l = z_l normalised (nn_bn_forward: the
 *   batch's statistics in training, m->bn_train, else the running ones)
 * with fcL.w, bnL.g (1 at first), bnL.b (0), bnL.rm, bnL.rv (the running mean and variance: no
 * gradient reaches them) for l = 1 .. L. Layer by layer: the row units of one layer's product,
 * then its normalisation on the calling thread, in row order.
 *
 * Threads and determinism as the conv body's fc1 (lib/network/body_conv.c): the forward runs in row
 * units of BODY_ROWS rows (every sgemm the same shape; rows past the batch are junk, never
 * read), each unit through all the layers; the backward, layer by layer from the top, takes the
 * ReLU gradient and the bias gradient on the calling thread in row order, then one fan-out of
 * the column blocks of the weight gradient (body_col_units, all rows, in order) beside the row
 * units of the gradient of the layer below. OpenBLAS single-threaded inside each unit; a fan-out
 * too small to pay for the handoff runs in the caller (par_run_sized), the same units.
 */
#include <errno.h>
#include "simd.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blas.h"
#include "body.h"
#include "nn.h"
#include "par.h"
#include "util.h"

typedef struct {
    model *m;
    int L, n;
    int w[MODEL_MAX_LAYERS + 1];     /* w[0] = F0, w[l] = F_l */
    float *a[MODEL_MAX_LAYERS + 1];  /* a[0] the input, a[L] = m->body_h: (rows, w[l]) */
    float *da[MODEL_MAX_LAYERS + 1]; /* dL/da[l], l >= 1; da[L] = m->body_dh */
    int layer;                       /* the layer of the backward's fan-out */
    int col_units;                   /* its column blocks (body_col_units) */
    float keep_scale;                /* dropout: 1 / (1 - p) for the last forward's kept units, else 1 */
    int bn;                          /* mlp-bn */
    int vs;                          /* views per layer: 2 (w, b), mlp-bn 5 (w, g, b, rm, rv) */
    float *xh[MODEL_MAX_LAYERS + 1]; /* mlp-bn: the normalised z_l (rows, w[l]) */
    float *istd[MODEL_MAX_LAYERS + 1]; /* mlp-bn: 1 / sd of each unit (w[l]) */
} mlp_state;

extern const body_kind body_mlpbn;
static int is_bn(const model_config *c) { return body_of(c) == &body_mlpbn; }

static const char *mlp_parse(model_config *cfg, const char *args)
{
    if (!args || !*args)
        return "the mlp body needs its widths, e.g. mlp:512,256";
    return body_parse_widths(cfg, args);
}

static const char *mlp_check(const model_config *c)
{
    static _Thread_local char why[128];
    if (body_input_width(c) < 1)
        snprintf(why, sizeof why, "%d input features (images of %dx%dx%d), the mlp body takes 1 to %d", c->features,
                 c->channels, c->height, c->width, MODEL_MAX_FEATURES);
    else if (c->nwidths < 1 || c->nwidths > MODEL_MAX_LAYERS)
        snprintf(why, sizeof why, "%d layers, the mlp body takes 1 to %d", c->nwidths, MODEL_MAX_LAYERS);
    else {
        for (int l = 0; l < c->nwidths; l++)
            if (c->widths[l] < 1 || c->widths[l] > MODEL_MAX_WIDTH) {
                snprintf(why, sizeof why, "layer %d has width %d, expected 1 to %d", l + 1, c->widths[l],
                         MODEL_MAX_WIDTH);
                return why;
            }
        return NULL;
    }
    return why;
}

static int mlp_layout(model *m)
{
    int in = body_input_width(&m->cfg), bn = is_bn(&m->cfg);
    for (int l = 0; l < m->cfg.nwidths; l++) {
        char name[16];
        int out = m->cfg.widths[l];
        snprintf(name, sizeof name, "fc%d.w", l + 1);
        model_add_view(m, name, 2, (int64_t[]){out, in});
        for (int k = 0; k < (bn ? 4 : 1); k++) {
            snprintf(name, sizeof name, bn ? "bn%d.%s" : "fc%d.%s", l + 1, (const char *[]){"b", "g", "b", "rm", "rv"}[k + bn]);
            model_add_view(m, name, 1, (int64_t[]){out});
        }
        in = out;
    }
    return in;
}

static void mlp_create(model *m)
{
    mlp_state *s = ecalloc(1, sizeof *s);
    m->body_state = s;
    s->m = m;
    s->L = m->cfg.nwidths;
    s->w[0] = body_input_width(&m->cfg);
    s->bn = is_bn(&m->cfg);
    s->vs = s->bn ? 5 : 2;
    for (int l = 1; l <= s->L; l++)
        s->w[l] = m->cfg.widths[l - 1];
    for (int l = 0; l <= s->L; l++) {
        s->a[l] = body_rows_alloc(m->maxbatch, s->w[l]);
        if (l)
            s->da[l] = body_rows_alloc(m->maxbatch, s->w[l]);
        if (l && s->bn) {
            s->xh[l] = body_rows_alloc(m->maxbatch, s->w[l]);
            s->istd[l] = body_rows_alloc(1, s->w[l]);
        }
    }
    m->body_h = s->a[s->L];
    m->body_dh = s->da[s->L];
}

static void mlp_destroy(model *m)
{
    mlp_state *s = m->body_state;
    if (!s)
        return;
    for (int l = 0; l <= s->L; l++) {
        free(s->a[l]);
        free(s->da[l]);
        free(s->xh[l]);
        free(s->istd[l]);
    }
    free(s);
    m->body_state = NULL;
    m->body_h = m->body_dh = NULL;
}

static void mlp_threads(model *m, int threads) {}

/* layer l's tensor k: 0 its weight, 1 its bias (mlp) or g, then (mlp-bn) b, rm, rv */
static float *ten(const model *m, int l, int k)
{
    return m->params + m->views[((mlp_state *)m->body_state)->vs * (l - 1) + k].offset;
}
static float *dten(const model *m, int l, int k)
{
    return m->grads + m->views[((mlp_state *)m->body_state)->vs * (l - 1) + k].offset;
}
static const float *weight(const model *m, int l) { return ten(m, l, 0); }
static const float *bias(const model *m, int l) { return ten(m, l, 1); }
static float *dweight(const model *m, int l) { return dten(m, l, 0); }
static float *dbias(const model *m, int l) { return dten(m, l, 1); }

/* a (n, out) = ReLU(a + b), 8 columns at a time (max(v, 0) is v > 0 ? v : 0 for every v, NaN
 * and -0 included: the same bytes as the scalar tail) */
static void bias_relu(int n, int out, float *restrict a, const float *restrict b)
{
    for (int i = 0; i < n; i++) {
        float *restrict ai = a + (size_t)i * out;
        int k = 0;
        for (; k + 8 <= out; k += 8)
            _mm256_storeu_ps(ai + k, _mm256_max_ps(_mm256_add_ps(_mm256_loadu_ps(ai + k), _mm256_loadu_ps(b + k)),
                                                   _mm256_setzero_ps()));
        for (; k < out; k++) {
            float v = ai[k] + b[k];
            ai[k] = v > 0 ? v : 0.0f;
        }
    }
}

/* rows of unit u through every layer */
static void forward_task(void *ctx, int u, int tid)
{
    mlp_state *s = ctx;
    const model *m = s->m;
    size_t r0 = (size_t)u * BODY_ROWS;
    int nr = s->n - (int)r0 < BODY_ROWS ? s->n - (int)r0 : BODY_ROWS;
    for (int l = 1; l <= s->L; l++) {
        int in = s->w[l - 1], out = s->w[l];
        float *a = s->a[l] + r0 * out;
        // a_l (BODY_ROWS, out) = a_{l-1} (BODY_ROWS, in) W_l^T (in, out); + b, ReLU
        blas_sgemm(0, 1, BODY_ROWS, out, in, 1.0f, s->a[l - 1] + r0 * in, in, weight(m, l), in, 0.0f, a, out);
        bias_relu(nr, out, a, bias(m, l));
        if (m->drop_on) /* inverted dropout: a kept unit scaled by 1 / (1 - p), a dropped one 0 */
            for (int i = 0; i < nr; i++)
                for (int k = 0; k < out; k++)
                    a[(size_t)i * out + k] =
                        model_drop_keep(m, l, (int64_t)r0 + i, k) ? a[(size_t)i * out + k] * s->keep_scale : 0.0f;
    }
}

/* mlp-bn: rows of unit u of layer s->layer's product, z_l into xh_l */
static void fc_task(void *ctx, int u, int tid)
{
    mlp_state *s = ctx;
    int l = s->layer, in = s->w[l - 1], out = s->w[l];
    size_t r0 = (size_t)u * BODY_ROWS;
    blas_sgemm(0, 1, BODY_ROWS, out, in, 1.0f, s->a[l - 1] + r0 * in, in, weight(s->m, l), in, 0.0f,
               s->xh[l] + r0 * out, out);
}

static void mlpbn_forward(model *m, mlp_state *s, int n)
{
    int units = (n + BODY_ROWS - 1) / BODY_ROWS;
    for (int l = 1; l <= s->L; l++) {
        int out = s->w[l];
        s->layer = l;
        par_run_sized(model_pool(m), 2.0 * units * BODY_ROWS * s->w[l - 1] * out, units, fc_task, s);
        nn_bn_forward(n, out, s->xh[l], ten(m, l, 3), ten(m, l, 4), s->istd[l], m->bn_train);
        const float *g = ten(m, l, 1), *b = ten(m, l, 2);
        for (int i = 0; i < n; i++)
            for (int k = 0; k < out; k++) {
                float v = g[k] * s->xh[l][(size_t)i * out + k] + b[k];
                s->a[l][(size_t)i * out + k] = v > 0 ? v : 0.0f;
            }
    }
}

static void mlp_forward(model *m, const void *input, int n)
{
    mlp_state *s = m->body_state;
    s->n = n;
    s->keep_scale = m->drop_on ? (float)(1.0 / (1.0 - m->cfg.dropout)) : 1.0f;
    body_input_floats(m, input, n, s->a[0]);
    if (s->bn) {
        mlpbn_forward(m, s, n);
        return;
    }
    int units = (n + BODY_ROWS - 1) / BODY_ROWS;
    double flops = 0;
    for (int l = 1; l <= s->L; l++)
        flops += 2.0 * units * BODY_ROWS * s->w[l - 1] * s->w[l];
    par_run_sized(model_pool(m), flops, units, forward_task, s);
}

/* layer l's fan-out: col_units column blocks of dW_l, then (l > 1) the row units of
 * da_{l-1} = dz_l W_l (before the ReLU of layer l - 1, which the next layer's turn applies) */
static void backward_task(void *ctx, int u, int tid)
{
    mlp_state *s = ctx;
    const model *m = s->m;
    int l = s->layer, in = s->w[l - 1], out = s->w[l], n = s->n;
    if (u < s->col_units) {
        int c0 = (int)par_lo(in, s->col_units, u), c1 = (int)par_lo(in, s->col_units, u + 1);
        if (c1 > c0) // W_l[:, c0:c1] (out, nc) += dz^T (out, n) a_{l-1}[:, c0:c1] (n, nc)
            blas_sgemm(1, 0, out, c1 - c0, n, 1.0f, s->da[l], out, s->a[l - 1] + c0, in, 1.0f, dweight(m, l) + c0,
                       in);
        return;
    }
    size_t r0 = (size_t)(u - s->col_units) * BODY_ROWS;
    // da_{l-1} (BODY_ROWS, in) = dz (BODY_ROWS, out) W_l (out, in) (rows past n: junk, unused)
    blas_sgemm(0, 0, BODY_ROWS, in, out, 1.0f, s->da[l] + r0 * out, out, weight(m, l), in, 0.0f,
               s->da[l - 1] + r0 * in, in);
}

/* dz = da through the ReLU (a is after it), in place; gb += the rows of dz, in row order (8
 * columns at a time: each element's operations and order are the scalar loop's) */
static void relu_backward(int n, int out, float *restrict da, const float *restrict a, float *restrict gb)
{
    for (int i = 0; i < n; i++) {
        float *restrict dz = da + (size_t)i * out;
        const float *restrict ai = a + (size_t)i * out;
        int k = 0;
        for (; k + 8 <= out; k += 8) {
            __m256 on = _mm256_cmp_ps(_mm256_loadu_ps(ai + k), _mm256_setzero_ps(), _CMP_GT_OQ);
            __m256 d = _mm256_and_ps(_mm256_loadu_ps(dz + k), on);
            _mm256_storeu_ps(dz + k, d);
            _mm256_storeu_ps(gb + k, _mm256_add_ps(_mm256_loadu_ps(gb + k), d));
        }
        for (; k < out; k++) {
            dz[k] = ai[k] > 0 ? dz[k] : 0.0f;
            gb[k] += dz[k];
        }
    }
}

static void bn_relu_backward(model *m, mlp_state *s, int l)
{
    int n = s->n, out = s->w[l];
    const float *g = ten(m, l, 1);
    float *dg = dten(m, l, 1), *db = dten(m, l, 2), *da = s->da[l];
    for (int k = 0; k < out; k++) {
        double sg = 0, sb = 0;
        for (int i = 0; i < n; i++) {
            size_t e = (size_t)i * out + k;
            float dy = s->a[l][e] > 0 ? da[e] : 0.0f;
            sg += (double)dy * s->xh[l][e], sb += dy;
            da[e] = dy * g[k];
        }
        dg[k] += (float)sg, db[k] += (float)sb;
    }
    nn_bn_backward(n, out, da, s->xh[l], s->istd[l], m->bn_train);
}

static void mlp_backward(model *m)
{
    mlp_state *s = m->body_state;
    int n = s->n, rows = (n + BODY_ROWS - 1) / BODY_ROWS;
    for (int l = s->L; l >= 1; l--) {
        int in = s->w[l - 1], out = s->w[l];
        if (m->drop_on) /* through the dropout: a dropped unit's a is 0, which the ReLU's test zeroes */
            for (size_t i = 0; i < (size_t)n * out; i++)
                s->da[l][i] *= s->keep_scale;
        if (s->bn) /* through the ReLU, g and b, then the normalisation */
            bn_relu_backward(m, s, l);
        else
            relu_backward(n, out, s->da[l], s->a[l], dbias(m, l));
        s->layer = l;
        s->col_units = body_col_units(in);
        int below = l > 1 ? rows : 0;
        par_run_sized(model_pool(m), 2.0 * in * out * (n + (double)below * BODY_ROWS), s->col_units + below,
                      backward_task, s);
    }
}

const body_kind body_mlp = {
    .name = "mlp",
    .help = "fully connected layers with ReLU on feature vectors or pixels, widths by option (mlp:512,256)",
    .input = BODY_FEATURES | BODY_IMAGES,
    .parse = mlp_parse,
    .check = mlp_check,
    .layout = mlp_layout,
    .create = mlp_create,
    .destroy = mlp_destroy,
    .threads = mlp_threads,
    .forward = mlp_forward,
    .backward = mlp_backward,
};

const body_kind body_mlpbn = {
    .name = "mlp-bn",
    .help = "mlp with batch normalisation before each ReLU (PFE's authors' module: mlp-bn:D), widths by option",
    .input = BODY_FEATURES | BODY_IMAGES,
    .parse = mlp_parse,
    .check = mlp_check,
    .layout = mlp_layout,
    .create = mlp_create,
    .destroy = mlp_destroy,
    .threads = mlp_threads,
    .forward = mlp_forward,
    .backward = mlp_backward,
};
