/* body_conv: the HIB paper's network (NOTES.md) as a body (lib/network/body.h), on images:
 *
 *   input u8 image (n, Cin, H, W), channel-major, scaled to [0, 1] (H and W multiples of 4)
 *   conv 5x5, 6 filters, pad 2  -> ReLU -> maxpool 2   (n, 6, H/2, W/2)
 *   conv 5x5, 16 filters, pad 2 -> ReLU -> maxpool 2   (n, 16, H/4, W/4)
 *   fc 120 -> ReLU                                      h (n, 120)
 *
 * Parameters: conv1.w (6, Cin, 5, 5), conv1.b (6), conv2.w (16, 6, 5, 5), conv2.b (16),
 * fc1.w (120, 16 H/4 W/4), fc1.b (120): 150 Cin + 2,438 + 1,920 H W / 16 + 120 (N-digit MNIST,
 * N = 2: 96,638 with one channel).
 *
 * Layouts (per image; NHWC = channels innermost):
 *   img   (Cin, H, W) bytes, kept from the forward for the backward
 *   p1    (H/2+4, W/2+4, 6) floats, conv1 -> ReLU -> pool, zero border of 2 (conv2's padding)
 *   p2    (H/4, W/4, 16) floats = the fc1 input; fc1.w columns follow this (y, x, c) order
 *   h     (120) after ReLU (m->body_h)
 * fc1.w is (120, 16*H/4*W/4) with input features in (y, x, channel) order, not PyTorch's
 * (channel, y, x): the conv2 kernel writes channels innermost.
 *
 * Threads and determinism: work is cut into units whose boundaries depend only on the batch
 * size (FWD_CHUNK or CHUNK images for the convolutions, BODY_ROWS rows or FC_COL_UNITS column
 * blocks for fc1), never on the thread count; threads take units in any order (par_run's shared
 * counter), every unit writes its own outputs with a fixed summation order, and the per-chunk
 * conv weight gradients are summed in chunk order at the end. OpenBLAS runs single-threaded
 * inside the model, one call per unit. So the results are the same bytes for any thread count
 * (and with or without AVX-512). The row units always have BODY_ROWS rows (buffers are rounded
 * up; rows past the batch are junk), so that an image's outputs do not depend on the batch size
 * either, only on its position modulo BODY_ROWS. The weight gradients, sums over the batch, do.
 *
 * Per step the calling thread alone does: the image copy, the conv2 weight repacking, fc1's
 * ReLU gradient and bias gradient, and the sum of the per-chunk gradients; everything else is
 * split.
 */
#include <stdlib.h>
#include <string.h>

#include "blas.h"
#include "body.h"
#include "nn.h"
#include "par.h"
#include "util.h"

enum { C1 = 6, C2 = NN_CONVPOOL_COUT, FC = 120 };
/* Work units: small ones balance the threads at the end of a phase. The backward's conv chunks
 * each have a gradient buffer, summed at the end (so not too small); the forward's have none. */
enum { FWD_CHUNK = 2, CHUNK = 4, FC_COL_UNITS = 8, MAXTHREADS = 16 };
/* the model's views, in layout order */
enum { V_C1W, V_C1B, V_C2W, V_C2B, V_F1W, V_F1B };
/* per conv chunk: dw1 (C1*Cin*25), db1 (C1), dwr2 (NN_DWR_SIZE), db2 (C2), padded to 16 floats */
static size_t cgrad_size(int Cin) { return (C1 * Cin * 25 + C1 + NN_DWR_SIZE + C2 + 15) / 16 * 16; }

typedef struct {
    float *planes;   /* conv1 input planes (zero borders) */
    float *dp1;      /* gradient of one image's p1, plus NN_DIN_SLACK */
    void *scratch;   /* nn_convpool_backward */
} workspace;

typedef struct {
    model *m;
    int Cin, H, W, H2, W2, H4, W4, fc_in;
    size_t img_size;   /* bytes per image */
    size_t p1_size;    /* floats per image */
    size_t cgrad_size; /* floats per conv chunk */
    int n;             /* batch of the last forward */
    /* activations, maxbatch images */
    uint8_t *img, *a1, *a2;
    float *p1, *p2;
    /* backward */
    float *dp2, *cgrad;
    /* conv2 weights repacked for the kernels */
    float *wk2, *wr2;
    int nws;
    workspace ws[MAXTHREADS];
} conv_state;

static float *falloc(size_t n) { return ealloc_aligned((n ? n : 1) * sizeof(float)); }
static const float *param(const model *m, int view) { return m->params + m->views[view].offset; }
static float *grad(const model *m, int view) { return m->grads + m->views[view].offset; }

static const char *conv_parse(model_config *cfg, const char *args)
{
    return args ? "the conv body takes no settings (it is the HIB paper's network)" : NULL;
}

static const char *conv_check(const model_config *c)
{
    static _Thread_local char why[160];
    const char *bad = model_check_input(c->channels, c->height, c->width);
    if (bad)
        return bad;
    if (c->digits < 0 || (c->digits && (c->channels != 1 || c->height != 28 || c->width != 28 * c->digits))) {
        snprintf(why, sizeof why, "%d digits do not go with images of %dx%dx%d", c->digits, c->channels, c->height,
                 c->width);
        return why;
    }
    return NULL;
}

static int conv_layout(model *m)
{
    int Cin = m->cfg.channels, H4 = m->cfg.height / 4, W4 = m->cfg.width / 4;
    model_add_view(m, "conv1.w", 4, (int64_t[]){C1, Cin, 5, 5});
    model_add_view(m, "conv1.b", 1, (int64_t[]){C1});
    model_add_view(m, "conv2.w", 4, (int64_t[]){C2, C1, 5, 5});
    model_add_view(m, "conv2.b", 1, (int64_t[]){C2});
    model_add_view(m, "fc1.w", 2, (int64_t[]){FC, (int64_t)C2 * H4 * W4});
    model_add_view(m, "fc1.b", 1, (int64_t[]){FC});
    return FC;
}

static void conv_create(model *m)
{
    conv_state *s = ecalloc(1, sizeof *s);
    m->body_state = s;
    s->m = m;
    s->Cin = m->Cin;
    s->H = m->H;
    s->W = m->W;
    s->img_size = (size_t)s->Cin * s->H * s->W;
    s->cgrad_size = cgrad_size(s->Cin);
    s->H2 = s->H / 2;
    s->W2 = s->W / 2;
    s->H4 = s->H / 4;
    s->W4 = s->W / 4;
    s->fc_in = C2 * s->H4 * s->W4;
    /* the fc1 matrices get whole BODY_ROWS units, so that every sgemm has the same shape and an
     * image's outputs do not depend on the batch size */
    size_t nb = m->maxbatch;
    s->p1_size = (size_t)(s->H2 + 4) * (s->W2 + 4) * C1;
    s->img = ealloc_aligned(nb * s->img_size);
    s->p1 = falloc(nb * s->p1_size + NN_DIN_SLACK);
    s->a1 = ealloc_aligned(nb * s->H2 * s->W2 * C1);
    s->p2 = body_rows_alloc(nb, s->fc_in);
    s->a2 = ealloc_aligned(nb * s->fc_in);
    s->dp2 = body_rows_alloc(nb, s->fc_in);
    s->cgrad = falloc((nb + CHUNK - 1) / CHUNK * s->cgrad_size);
    s->wk2 = falloc(NN_WK_SIZE(C1));
    s->wr2 = falloc(NN_WR_SIZE);
    m->body_h = body_rows_alloc(nb, FC);
    m->body_dh = body_rows_alloc(nb, FC);
}

static void conv_threads(model *m, int threads)
{
    conv_state *s = m->body_state;
    for (int t = s->nws; t < threads && t < MAXTHREADS; t++) {
        workspace *w = &s->ws[t];
        w->planes = falloc(nn_planes_size(s->Cin, s->H, s->W));
        w->dp1 = falloc(s->p1_size + NN_DIN_SLACK);
        w->scratch = ealloc_aligned(nn_convpool_scratch(s->H2, s->W2));
        s->nws = t + 1;
    }
}

static void conv_destroy(model *m)
{
    conv_state *s = m->body_state;
    if (!s)
        return;
    for (int t = 0; t < s->nws; t++) {
        free(s->ws[t].planes);
        free(s->ws[t].dp1);
        free(s->ws[t].scratch);
    }
    void *bufs[] = {s->img, s->p1, s->a1, s->p2, s->a2, s->dp2, s->cgrad, s->wk2, s->wr2, m->body_h, m->body_dh};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        free(bufs[i]);
    free(s);
    m->body_state = NULL;
    m->body_h = m->body_dh = NULL;
}

/* ---------------------------------------------------------------- forward */

/* images of chunk c -> p1, a1, p2, a2 */
static void conv_forward_task(void *ctx, int c, int tid)
{
    conv_state *s = ctx;
    const model *m = s->m;
    workspace *ws = &s->ws[tid];
    int i1 = (c + 1) * FWD_CHUNK < s->n ? (c + 1) * FWD_CHUNK : s->n;
    for (int i = c * FWD_CHUNK; i < i1; i++) {
        nn_planes_fill(ws->planes, s->img + i * s->img_size, s->Cin, s->H, s->W, 1.0f / 255, 5);
        float *p1 = s->p1 + i * s->p1_size;
        nn_convpool1_forward(p1, s->a1 + (size_t)i * s->H2 * s->W2 * C1, ws->planes, param(m, V_C1W),
                             param(m, V_C1B), s->Cin, s->H, s->W, C1);
        nn_convpool_forward(s->p2 + (size_t)i * s->fc_in, s->a2 + (size_t)i * s->fc_in, p1, s->wk2,
                            param(m, V_C2B), s->H2, s->W2, C1);
    }
}

/* rows of unit u: fc1 + ReLU */
static void fc_forward_task(void *ctx, int u, int tid)
{
    conv_state *s = ctx;
    const model *m = s->m;
    int r0 = u * BODY_ROWS, nr = s->n - r0 < BODY_ROWS ? s->n - r0 : BODY_ROWS;
    float *h1 = m->body_h + (size_t)r0 * FC;
    // h1 (BODY_ROWS, 120) = p2 (BODY_ROWS, fc_in) fc1.w^T (rows past n: junk, unused); + b, ReLU
    blas_sgemm(0, 1, BODY_ROWS, FC, s->fc_in, 1.0f, s->p2 + (size_t)r0 * s->fc_in, s->fc_in, param(m, V_F1W),
               s->fc_in, 0.0f, h1, FC);
    const float *b1 = param(m, V_F1B);
    for (int i = 0; i < nr; i++) {
        float *h = h1 + (size_t)i * FC;
        for (int k = 0; k < FC; k++) {
            float v = h[k] + b1[k];
            h[k] = v > 0 ? v : 0.0f;
        }
    }
}

static void conv_forward(model *m, const void *input, int n)
{
    conv_state *s = m->body_state;
    s->n = n;
    memcpy(s->img, input, n * s->img_size);
    nn_convpool_pack(s->wk2, s->wr2, param(m, V_C2W), C1);
    par_run(model_pool(m), (n + FWD_CHUNK - 1) / FWD_CHUNK, conv_forward_task, s);
    par_run(model_pool(m), (n + BODY_ROWS - 1) / BODY_ROWS, fc_forward_task, s);
}

/* ---------------------------------------------------------------- backward */

/* The row units first (dp2 for BODY_ROWS rows: the bigger ones, so that the smaller ones fill
 * in at the end), then FC_COL_UNITS units of the fc1.w gradient, for a block of input columns
 * (all rows, in order). */
static void fc_backward_task(void *ctx, int u, int tid)
{
    conv_state *s = ctx;
    const model *m = s->m;
    int n = s->n, fc_in = s->fc_in, nrow = (n + BODY_ROWS - 1) / BODY_ROWS;
    if (u >= nrow) {
        u -= nrow;
        int c0 = (int)((long)fc_in * u / FC_COL_UNITS), c1 = (int)((long)fc_in * (u + 1) / FC_COL_UNITS);
        if (c1 > c0) // fc1.w[:, c0:c1] (120, nc) += dh1^T (120, n) p2[:, c0:c1] (n, nc)
            blas_sgemm(1, 0, FC, c1 - c0, n, 1.0f, m->body_dh, FC, s->p2 + c0, fc_in, 1.0f, grad(m, V_F1W) + c0,
                       fc_in);
        return;
    }
    int r0 = u * BODY_ROWS;
    // dp2 (BODY_ROWS, fc_in) = dh1 (BODY_ROWS, 120) fc1.w (120, fc_in) (rows past n: junk, unused)
    blas_sgemm(0, 0, BODY_ROWS, fc_in, FC, 1.0f, m->body_dh + (size_t)r0 * FC, FC, param(m, V_F1W), fc_in, 0.0f,
               s->dp2 + (size_t)r0 * fc_in, fc_in);
}

/* images of chunk c: conv2 and conv1 backward; weight gradients into the chunk's buffer */
static void conv_backward_task(void *ctx, int c, int tid)
{
    conv_state *s = ctx;
    workspace *ws = &s->ws[tid];
    float *g = s->cgrad + c * s->cgrad_size;
    memset(g, 0, s->cgrad_size * sizeof(float));
    float *dw1 = g, *db1 = dw1 + C1 * s->Cin * 25, *dwr2 = db1 + C1, *db2 = dwr2 + NN_DWR_SIZE;
    int i1 = (c + 1) * CHUNK < s->n ? (c + 1) * CHUNK : s->n;
    for (int i = c * CHUNK; i < i1; i++) {
        const float *p1 = s->p1 + i * s->p1_size;
        memset(ws->dp1, 0, (s->p1_size + NN_DIN_SLACK) * sizeof(float));
        nn_convpool_backward(ws->dp1, dwr2, db2, s->dp2 + (size_t)i * s->fc_in, s->p2 + (size_t)i * s->fc_in,
                             s->a2 + (size_t)i * s->fc_in, p1, s->wr2, s->H2, s->W2, C1, ws->scratch);
        nn_planes_fill(ws->planes, s->img + i * s->img_size, s->Cin, s->H, s->W, 1.0f / 255, 1);
        nn_convpool1_backward(dw1, db1, ws->dp1, p1, s->a1 + (size_t)i * s->H2 * s->W2 * C1, ws->planes, s->Cin,
                              s->H, s->W, C1);
    }
}

static void conv_backward(model *m)
{
    conv_state *s = m->body_state;
    int n = s->n;
    // dh through fc1's ReLU (h is after it), fc1's bias gradient, in row order
    float *gb1 = grad(m, V_F1B);
    for (int i = 0; i < n; i++) {
        float *dh = m->body_dh + (size_t)i * FC;
        const float *h = m->body_h + (size_t)i * FC;
        for (int k = 0; k < FC; k++) {
            dh[k] = h[k] > 0 ? dh[k] : 0.0f;
            gb1[k] += dh[k];
        }
    }
    par_run(model_pool(m), FC_COL_UNITS + (n + BODY_ROWS - 1) / BODY_ROWS, fc_backward_task, s);
    int nchunks = (n + CHUNK - 1) / CHUNK;
    par_run(model_pool(m), nchunks, conv_backward_task, s);
    // the chunks' conv gradients, summed in chunk order
    float *sum = s->cgrad; /* chunk 0 accumulates the others */
    for (int c = 1; c < nchunks; c++) {
        const float *g = s->cgrad + c * s->cgrad_size;
        for (size_t k = 0; k < s->cgrad_size; k++)
            sum[k] += g[k];
    }
    float *dw1 = sum, *db1 = dw1 + C1 * s->Cin * 25, *dwr2 = db1 + C1, *db2 = dwr2 + NN_DWR_SIZE;
    float *g1w = grad(m, V_C1W), *g1b = grad(m, V_C1B), *g2b = grad(m, V_C2B);
    for (int k = 0; k < C1 * s->Cin * 25; k++)
        g1w[k] += dw1[k];
    for (int k = 0; k < C1; k++)
        g1b[k] += db1[k];
    nn_convpool_unpack_add(grad(m, V_C2W), dwr2, C1);
    for (int k = 0; k < C2; k++)
        g2b[k] += db2[k];
}

const body_kind body_conv = {
    .name = "conv",
    .help = "the HIB paper's network on images (2 conv, fc 120)",
    .input = BODY_IMAGES,
    .parse = conv_parse,
    .check = conv_check,
    .layout = conv_layout,
    .create = conv_create,
    .destroy = conv_destroy,
    .threads = conv_threads,
    .forward = conv_forward,
    .backward = conv_backward,
};
