/* model: parameter views, Xavier init statistics and reproducibility, forward and backward
 * against the same network built from the reference NCHW layers of nn.h, gradients against
 * central finite differences (point and MoG C=2 heads, every tensor, the softplus variance
 * path), and identical bytes for every thread count; on N-digit images (1 x 28 x 28N) and on
 * multi-channel ones (3 x 8 x 12, and the L-shapes' 3 x 64 x 64); the input bounds. */
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "blas.h"
#include "check.h"
#include "body.h"
#include "model.h"
#include "nn.h"
#include "rng.h"
#include "util.h"

static rng R;

/* n images of the model's input size */
static uint8_t *rand_images(const model *m, int n)
{
    size_t k = (size_t)n * m->Cin * m->H * m->W;
    uint8_t *img = malloc(k);
    for (size_t i = 0; i < k; i++)
        img[i] = (uint8_t)rng_below(&R, 256);
    return img;
}
static float *randv(size_t n)
{
    float *v = malloc(n * sizeof(float));
    for (size_t i = 0; i < n; i++)
        v[i] = (float)(2 * rng_uniform(&R) - 1);
    return v;
}

static void test_views_and_init(void)
{
    model_config cfg = {.digits = 2, .head = HEAD_MOG, .C = 2, .D = 3};
    const char *names[] = {"match.a_raw", "match.b"};
    model *m = model_create(&cfg, 2, names, 4);
    const char *want[] = {"conv1.w", "conv1.b", "conv2.w", "conv2.b", "fc1.w", "fc1.b", "head.w", "head.b",
                          "match.a_raw", "match.b"};
    size_t sizes[] = {150, 6, 2400, 16, 120 * 16 * 7 * 14, 120, 12 * 120, 12, 1, 1};
    CHECK(m->nviews == 10);
    CHECK(model_outputs(&cfg) == 12);
    size_t off = 0;
    for (int i = 0; i < 10; i++) {
        const model_view *v = model_view_find(m, want[i]);
        CHECK(v == &m->views[i]);
        CHECK(v && v->offset == off && v->size == sizes[i]);
        off += sizes[i];
    }
    CHECK(m->nparams == off && m->nnet == off - 2 && m->nextra == 2);
    CHECK(model_view_find(m, "nope") == NULL);
    const model_view *c1 = model_view_find(m, "conv1.w");
    CHECK(c1->ndim == 4 && c1->shape[0] == 6 && c1->shape[1] == 1 && c1->shape[2] == 5 && c1->shape[3] == 5);
    CHECK(((uintptr_t)m->params & 63) == 0 && ((uintptr_t)m->grads & 63) == 0);

    model_init(m, 714);
    /* Xavier uniform: |w| <= limit, variance limit^2/3 (5 standard errors), biases 0 */
    double fans[4][2] = {{25, 150}, {150, 400}, {1568, 120}, {120, 12}};
    for (int t = 0; t < 4; t++) {
        const model_view *w = &m->views[2 * t], *b = &m->views[2 * t + 1];
        double limit = sqrt(6.0 / (fans[t][0] + fans[t][1])), s = 0, s2 = 0;
        int inside = 1;
        for (size_t i = 0; i < w->size; i++) {
            double x = m->params[w->offset + i];
            inside &= fabs(x) <= limit;
            s += x;
            s2 += x * x;
        }
        double n = (double)w->size, var = s2 / n, want_var = limit * limit / 3;
        double se = limit * limit * sqrt(4.0 / 45 / n);
        CHECK(inside);
        CHECK_CLOSE(s / n, 0, 5 * limit / sqrt(3 * n));
        CHECK_CLOSE(var, want_var, 5 * se);
        int zero = 1;
        for (size_t i = 0; i < b->size; i++)
            zero &= m->params[b->offset + i] == 0;
        CHECK(zero);
    }
    CHECK(m->params[m->nnet] == 0 && m->params[m->nnet + 1] == 0);
    /* same seed, same bytes; another seed, other values */
    model *m2 = model_create(&cfg, 2, names, 4);
    model_init(m2, 714);
    CHECK(!memcmp(m->params, m2->params, m->nparams * sizeof(float)));
    model_init(m2, 715);
    CHECK(memcmp(m->params, m2->params, m->nnet * sizeof(float)) != 0);
    model_free(m);
    model_free(m2);

    /* the L-shapes: 3 x 64 x 64, conv1 takes 3 channels, fc1 16 x 16 x 16 inputs */
    model_config rgb = {.head = HEAD_POINT, .C = 1, .D = 2, .channels = 3, .height = 64, .width = 64};
    m = model_create(&rgb, 0, NULL, 2);
    CHECK(m->Cin == 3 && m->H == 64 && m->W == 64 && m->cfg.digits == 0 && m->cfg.channels == 3);
    c1 = model_view_find(m, "conv1.w");
    CHECK(c1->shape[0] == 6 && c1->shape[1] == 3 && c1->size == 450);
    CHECK(model_view_find(m, "fc1.w")->shape[1] == 16 * 16 * 16);
    CHECK(m->nparams == 450 + 6 + 2400 + 16 + 120 * 4096 + 120 + 2 * 120 + 2);
    model_init(m, 714);
    double limit = sqrt(6.0 / (75 + 150)), worst = 0;
    for (size_t i = 0; i < c1->size; i++)
        worst = fmax(worst, fabs(m->params[c1->offset + i]));
    CHECK(worst <= limit && worst > 0.9 * limit); /* fan-in 3 x 25 */
    model_free(m);
    /* digits fill in the geometry: 1 x 28 x 28N */
    m = model_create(&(model_config){.digits = 3, .head = HEAD_POINT, .C = 1, .D = 2}, 0, NULL, 1);
    CHECK(m->Cin == 1 && m->H == 28 && m->W == 84 && m->cfg.channels == 1 && m->cfg.width == 84);
    model_free(m);
}

static void test_check_input(void)
{
    CHECK(model_check_input(1, 28, 56) == NULL);
    CHECK(model_check_input(3, 64, 64) == NULL);
    CHECK(model_check_input(MODEL_MAX_CHANNELS, 128, 128) == NULL);
    CHECK(model_check_input(4, 4, 4) == NULL);
    const char *why = model_check_input(MODEL_MAX_CHANNELS + 1, 64, 64);
    CHECK(why && strstr(why, "channels"));
    CHECK(model_check_input(0, 64, 64) != NULL);
    why = model_check_input(3, 30, 64);
    CHECK(why && strstr(why, "height 30"));
    CHECK(model_check_input(3, 64, 66) != NULL);
    CHECK(model_check_input(3, 0, 64) != NULL && model_check_input(3, 64, -4) != NULL);
    why = model_check_input(1, 132, 128);
    CHECK(why && strstr(why, "pixels"));
    CHECK(model_check_input(1, 4, MODEL_MAX_PIXELS / 4) == NULL && model_check_input(1, 8, MODEL_MAX_PIXELS / 4) != NULL);
}

/* ---- the same network from the reference layers (NCHW; fc1 columns permuted) ---- */
typedef struct {
    int n, H, W, H2, W2, H4, W4, fc_in, HO;
    float *x, *c1, *a1, *q1, *c2, *a2, *q2, *z1, *h1, *ho, *wperm;
} refnet;

static float softplus_ref(float x) { return x > 0 ? x + log1pf(expf(-x)) : log1pf(expf(x)); }

static void ref_forward(refnet *r, const model *m, const uint8_t *img, int n, float *mu, float *var)
{
    int Cin = m->Cin, H = m->H, W = m->W, H2 = H / 2, W2 = W / 2, H4 = H / 4, W4 = W / 4, fc_in = 16 * H4 * W4;
    int HO = model_outputs(&m->cfg), C = m->cfg.C, D = m->cfg.D;
    memset(r, 0, sizeof *r);
    r->n = n, r->H = H, r->W = W, r->H2 = H2, r->W2 = W2, r->H4 = H4, r->W4 = W4, r->fc_in = fc_in, r->HO = HO;
    r->x = malloc((size_t)n * Cin * H * W * 4);
    for (size_t i = 0; i < (size_t)n * Cin * H * W; i++)
        r->x[i] = img[i] / 255.0f;
    const float *P = m->params;
#define V(name) (P + model_view_find(m, name)->offset)
    size_t s1 = (size_t)n * 6 * H * W, s2 = (size_t)n * 16 * H2 * W2;
    r->c1 = malloc(s1 * 4), r->a1 = malloc(s1 * 4), r->q1 = malloc(s1);
    r->c2 = malloc(s2 * 4), r->a2 = malloc(s2 * 4), r->q2 = malloc(s2);
    nn_conv_forward(r->c1, r->x, V("conv1.w"), V("conv1.b"), n, Cin, H, W, 6);
    nn_relu_forward(r->a1, r->c1, s1);
    nn_maxpool_forward(r->q1, r->a1, n, 6, H, W);
    nn_conv_forward(r->c2, r->q1, V("conv2.w"), V("conv2.b"), n, 6, H2, W2, 16);
    nn_relu_forward(r->a2, r->c2, s2);
    nn_maxpool_forward(r->q2, r->a2, n, 16, H2, W2);
    /* model fc1 column (y*W4 + x)*16 + c  <->  reference column c*H4*W4 + y*W4 + x */
    r->wperm = malloc((size_t)120 * fc_in * 4);
    const float *f1 = V("fc1.w");
    for (int o = 0; o < 120; o++)
        for (int c = 0; c < 16; c++)
            for (int p = 0; p < H4 * W4; p++)
                r->wperm[(size_t)o * fc_in + c * H4 * W4 + p] = f1[(size_t)o * fc_in + p * 16 + c];
    r->z1 = malloc((size_t)n * 120 * 4), r->h1 = malloc((size_t)n * 120 * 4), r->ho = malloc((size_t)n * HO * 4);
    nn_fc_forward(r->z1, r->q2, r->wperm, V("fc1.b"), n, fc_in, 120);
    nn_relu_forward(r->h1, r->z1, (size_t)n * 120);
    nn_fc_forward(r->ho, r->h1, V("head.w"), V("head.b"), n, 120, HO);
    for (int i = 0; i < n; i++)
        for (int c = 0; c < C; c++)
            for (int d = 0; d < D; d++) {
                const float *o = r->ho + (size_t)i * HO;
                if (m->cfg.head == HEAD_POINT) {
                    mu[(size_t)i * C * D + c * D + d] = o[c * D + d];
                } else if (m->cfg.head == HEAD_ISO) { /* D means, one log-variance per component */
                    mu[(size_t)i * C * D + c * D + d] = o[c * (D + 1) + d];
                    var[(size_t)i * C * D + c * D + d] = expf(o[c * (D + 1) + D]);
                } else {
                    mu[(size_t)i * C * D + c * D + d] = o[c * 2 * D + d];
                    var[(size_t)i * C * D + c * D + d] = softplus_ref(o[c * 2 * D + D + d]) + MODEL_VAR_FLOOR;
                }
            }
}

/* gradients in the model's layout into g (zeroed here) */
static void ref_backward(refnet *r, const model *m, const float *dmu, const float *dvar, float *g)
{
    int n = r->n, H = r->H, W = r->W, H2 = r->H2, W2 = r->W2, fc_in = r->fc_in, HO = r->HO;
    int C = m->cfg.C, D = m->cfg.D;
    const float *P = m->params;
    memset(g, 0, m->nparams * 4);
#define G(name) (g + model_view_find(m, name)->offset)
    float *dho = calloc((size_t)n * HO, 4);
    for (int i = 0; i < n; i++)
        for (int c = 0; c < C; c++)
            for (int d = 0; d < D; d++) {
                size_t k = (size_t)i * C * D + c * D + d;
                if (m->cfg.head == HEAD_POINT) {
                    dho[(size_t)i * HO + c * D + d] = dmu[k];
                } else if (m->cfg.head == HEAD_ISO) {
                    float raw = r->ho[(size_t)i * HO + c * (D + 1) + D];
                    dho[(size_t)i * HO + c * (D + 1) + d] = dmu[k];
                    dho[(size_t)i * HO + c * (D + 1) + D] += dvar[k] * expf(raw);
                } else {
                    float raw = r->ho[(size_t)i * HO + c * 2 * D + D + d];
                    dho[(size_t)i * HO + c * 2 * D + d] = dmu[k];
                    dho[(size_t)i * HO + c * 2 * D + D + d] = dvar[k] / (1 + expf(-raw));
                }
            }
    float *dh1 = calloc((size_t)n * 120, 4), *dz1 = calloc((size_t)n * 120, 4);
    nn_fc_backward(dh1, G("head.w"), G("head.b"), dho, r->h1, V("head.w"), n, 120, HO);
    nn_relu_backward(dz1, dh1, r->z1, (size_t)n * 120);
    float *dq2 = calloc((size_t)n * fc_in, 4), *dwperm = calloc((size_t)120 * fc_in, 4);
    nn_fc_backward(dq2, dwperm, G("fc1.b"), dz1, r->q2, r->wperm, n, fc_in, 120);
    float *gf1 = G("fc1.w");
    for (int o = 0; o < 120; o++)
        for (int c = 0; c < 16; c++)
            for (int p = 0; p < fc_in / 16; p++)
                gf1[(size_t)o * fc_in + p * 16 + c] = dwperm[(size_t)o * fc_in + c * (fc_in / 16) + p];
    size_t s1 = (size_t)n * 6 * H * W, s2 = (size_t)n * 16 * H2 * W2;
    float *da2 = calloc(s2, 4), *dc2 = calloc(s2, 4), *dq1 = calloc(s1 / 4, 4), *da1 = calloc(s1, 4),
          *dc1 = calloc(s1, 4);
    nn_maxpool_backward(da2, dq2, r->a2, n, 16, H2, W2);
    nn_relu_backward(dc2, da2, r->c2, s2);
    nn_conv_backward(dq1, G("conv2.w"), G("conv2.b"), dc2, r->q1, V("conv2.w"), n, 6, H2, W2, 16);
    nn_maxpool_backward(da1, dq1, r->a1, n, 6, H, W);
    nn_relu_backward(dc1, da1, r->c1, s1);
    nn_conv_backward(NULL, G("conv1.w"), G("conv1.b"), dc1, r->x, V("conv1.w"), n, m->Cin, H, W, 6);
    free(dho), free(dh1), free(dz1), free(dq2), free(dwperm), free(da2), free(dc2), free(dq1), free(da1), free(dc1);
}

static void ref_free(refnet *r)
{
    void *p[] = {r->x, r->c1, r->a1, r->q1, r->c2, r->a2, r->q2, r->z1, r->h1, r->ho, r->wperm};
    for (size_t i = 0; i < sizeof p / sizeof p[0]; i++)
        free(p[i]);
}

static double loss(const float *mu, const float *var, const float *Rmu, const float *Rvar, size_t k)
{
    double s = 0;
    for (size_t i = 0; i < k; i++)
        s += (double)mu[i] * Rmu[i] + (var ? (double)var[i] * Rvar[i] : 0);
    return s;
}

/* model vs reference network; then central differences on a sample of every tensor */
static void test_gradients(model_config cfg, int n, double *maxrel)
{
    model *m = model_create(&cfg, 1, (const char *[]){"extra"}, n);
    model_init(m, 42);
    /* biases of magnitude 0.05 to 0.15, so that they matter and no ReLU input sits right at a
     * kink by construction (a window of zero inputs gives exactly the bias); the head's raw
     * variances come out near 0, where the softplus is curved */
    for (int t = 1; t < 8; t += 2)
        for (size_t i = 0; i < m->views[t].size; i++)
            m->params[m->views[t].offset + i] =
                (float)((rng_below(&R, 2) ? 1 : -1) * (0.05 + 0.1 * rng_uniform(&R)));
    int k = n * cfg.C * cfg.D, mog = cfg.head != HEAD_POINT;
    uint8_t *img = rand_images(m, n);
    float *mu = malloc(k * 4), *var = mog ? malloc(k * 4) : NULL, *rmu = malloc(k * 4), *rvar = malloc(k * 4);
    float *Rmu = randv(k), *Rvar = randv(k), *rg = malloc(m->nparams * 4);
    model_forward(m, img, n, mu, var);
    memset(m->grads, 0, m->nparams * 4);
    model_backward(m, Rmu, Rvar);

    refnet r;
    ref_forward(&r, m, img, n, rmu, rvar);
    ref_backward(&r, m, Rmu, Rvar, rg);
    for (int i = 0; i < k; i++) {
        CHECK_CLOSE(mu[i], rmu[i], 1e-4 * (1 + fabs(rmu[i])));
        if (mog)
            CHECK_CLOSE(var[i], rvar[i], 1e-4 * (1 + fabs(rvar[i])));
    }
    for (int t = 0; t < 8; t++) {
        const model_view *v = &m->views[t];
        double scale = 0;
        for (size_t i = 0; i < v->size; i++)
            scale = fmax(scale, fabs(rg[v->offset + i]));
        for (size_t i = 0; i < v->size; i++)
            CHECK_CLOSE(m->grads[v->offset + i], rg[v->offset + i], 1e-4 * scale + 1e-6);
    }
    CHECK(m->grads[m->nnet] == 0); /* the extra parameter belongs to the loss */

    /* Central differences, on the first image alone. A conv1 weight moves every conv1 output
     * of its channel, and with them many ReLU and max-pool kinks: a difference over a step h
     * averages the slope over [-h, h], which for conv1 drifts by 10-30% between h = 1e-4 and
     * 1e-2 (while the float forward limits h from below: noise ~1e-6 / h). So h = 2e-4, and
     * where the one-sided differences on either side disagree the step crossed a kink and the
     * point is skipped (counted; must stay rare).
     * Tolerance: 2% of the gradient plus 1% of the tensor's largest gradient. */
    int kd = cfg.C * cfg.D, checked = 0, skipped = 0;
    model_forward(m, img, 1, mu, var);
    memset(m->grads, 0, m->nparams * 4);
    model_backward(m, Rmu, Rvar);
    double L0 = loss(mu, var, Rmu, Rvar, kd);
    for (int t = 0; t < 8; t++) {
        const model_view *v = &m->views[t];
        double scale = 0, worst = 0;
        for (size_t i = 0; i < v->size; i++)
            scale = fmax(scale, fabs(m->grads[v->offset + i]));
        int samples = v->size < 24 ? (int)v->size : 24;
        for (int s = 0; s < samples; s++) {
            size_t j = v->offset + (samples == (int)v->size ? (size_t)s : rng_below(&R, v->size));
            float keep = m->params[j], h = 2e-4f;
            m->params[j] = keep + h;
            model_forward(m, img, 1, mu, var);
            double lp = loss(mu, var, Rmu, Rvar, kd);
            m->params[j] = keep - h;
            model_forward(m, img, 1, mu, var);
            double lm = loss(mu, var, Rmu, Rvar, kd);
            m->params[j] = keep;
            double fd = (lp - lm) / (2.0 * h), tol = 0.02 * fabs(fd) + 0.01 * scale + 1e-5;
            if (fabs((lp - L0) / h - (L0 - lm) / h) > tol) {
                skipped++;
                continue;
            }
            checked++;
            CHECK_CLOSE(m->grads[j], fd, tol);
            worst = fmax(worst, fabs(m->grads[j] - fd) / tol);
            if (fabs(fd) > 0.1 * scale)
                *maxrel = fmax(*maxrel, fabs(m->grads[j] - fd) / fabs(fd));
        }
        printf("  %-8s largest |gradient - difference| / tolerance %.2f\n", v->name, worst);
    }
    printf("%s head, C=%d, input %dx%dx%d: %d parameters checked against central differences, %d skipped "
           "(kinks)\n", cfg.head == HEAD_ISO ? "iso" : mog ? "MoG" : "point", cfg.C, m->Cin, m->H, m->W, checked, skipped);
    /* rare: at most a sixth. The MoG head on 3x8x12 inputs skips the most (16 of 150 in the
     * native build, 17 in the portable one, whose sums round differently: simd.h) */
    CHECK(skipped <= checked / 6);
    ref_free(&r);
    free(img), free(mu), free(var), free(rmu), free(rvar), free(Rmu), free(Rvar), free(rg);
    model_free(m);
}

/* same bytes whatever the thread count, and from one run to the next */
static void test_threads(model_config cfg)
{
    int n = 45; /* not a multiple of any unit size */
    model *m = model_create(&cfg, 0, NULL, 64);
    model_init(m, 7);
    int cd = cfg.C * cfg.D, k = n * cd;
    uint8_t *img = rand_images(m, n);
    float *Rmu = randv(k), *Rvar = randv(k);
    float *mu[4], *var[4], *g[4];
    int threads[4] = {1, 2, 3, 2};
    for (int r = 0; r < 4; r++) {
        mu[r] = malloc(k * 4), var[r] = malloc(k * 4), g[r] = malloc(m->nparams * 4);
        model_set_threads(m, threads[r]);
        CHECK(model_threads(m) == threads[r]);
        model_forward(m, img, n, mu[r], var[r]);
        memset(m->grads, 0, m->nparams * 4);
        model_backward(m, Rmu, Rvar);
        memcpy(g[r], m->grads, m->nparams * 4);
    }
    for (int r = 1; r < 4; r++) {
        CHECK(!memcmp(mu[r], mu[0], k * 4));
        CHECK(!memcmp(var[r], var[0], k * 4));
        CHECK(!memcmp(g[r], g[0], m->nparams * 4));
    }
    /* gradients accumulate */
    model_backward(m, Rmu, Rvar);
    int twice = 1;
    for (size_t i = 0; i < m->nparams; i++)
        twice &= fabsf(m->grads[i] - 2 * g[0][i]) <= 1e-5f * (1 + fabsf(g[0][i]));
    CHECK(twice);
    /* a forward of fewer images reuses the buffers; point head: var may be NULL */
    model_forward(m, img, 3, mu[1], var[1]);
    CHECK(!memcmp(mu[1], mu[0], 3 * cd * 4) && !memcmp(var[1], var[0], 3 * cd * 4));
    for (int r = 0; r < 4; r++)
        free(mu[r]), free(var[r]), free(g[r]);
    free(img), free(Rmu), free(Rvar);
    model_free(m);
}

/* One fixed forward + backward: mu, var and the gradients into out (returns the floats written) */
static size_t fixed_run(model_config cfg, float *out)
{
    int n = 19, k = n * 4;
    model *m = model_create(&cfg, 0, NULL, n);
    model_init(m, 3);
    rng r;
    rng_init(&r, 3, 3);
    size_t npix = (size_t)n * m->Cin * m->H * m->W;
    uint8_t *img = malloc(npix);
    for (size_t i = 0; i < npix; i++)
        img[i] = (uint8_t)rng_below(&r, 256);
    float *d = malloc(2 * k * 4);
    for (int i = 0; i < 2 * k; i++)
        d[i] = (float)(rng_uniform(&r) - 0.5);
    model_forward(m, img, n, out, out + k);
    memset(m->grads, 0, m->nparams * 4);
    model_backward(m, d, d + k);
    memcpy(out + 2 * k, m->grads, m->nparams * 4);
    size_t total = 2 * k + m->nparams;
    free(img), free(d);
    model_free(m);
    return total;
}

/* The AVX-512 kernels give the same bytes as the AVX2 ones: a child process computes with
 * HEDGE_NO_AVX512=1 (read once, at the first kernel call, so this runs first). */
static const model_config same_cfg[2] = {{.digits = 2, .head = HEAD_MOG, .C = 2, .D = 2},
                                         {.head = HEAD_MOG, .C = 2, .D = 2, .channels = 3, .height = 64, .width = 64}};
static size_t fixed_runs(float *out)
{
    size_t n = fixed_run(same_cfg[0], out);
    return n + fixed_run(same_cfg[1], out + n);
}
static void test_avx2_avx512_same(void)
{
    enum { MAXF = 1200000 };
    if (check_nofork()) { /* HEDGE_TEST_NO_FORK (check.h): the other run is a child */
        check_skipped++;
        return;
    }
    float *a = malloc(MAXF * 4), *b = malloc(MAXF * 4);
    int fd[2];
    CHECK(pipe(fd) == 0);
    pid_t pid = fork();
    if (pid == 0) {
        setenv("HEDGE_NO_AVX512", "1", 1);
        size_t n = fixed_runs(a);
        FILE *f = fdopen(fd[1], "w");
        fwrite(&n, sizeof n, 1, f);
        fwrite(a, 4, n, f);
        fclose(f);
        _exit(0);
    }
    close(fd[1]);
    size_t n = fixed_runs(a), nb = 0;
    FILE *f = fdopen(fd[0], "r");
    CHECK(fread(&nb, sizeof nb, 1, f) == 1 && nb == n && n <= MAXF);
    CHECK(fread(b, 4, n, f) == n);
    fclose(f);
    int st;
    waitpid(pid, &st, 0);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    CHECK(!memcmp(a, b, n * 4));
    printf("%s kernels and those under HEDGE_NO_AVX512=1: %s bytes\n", nn_code_path(), !memcmp(a, b, n * 4) ? "the same" : "DIFFERENT");
    free(a), free(b);
}

/* the iso head's log-variance beyond its bound: var is exp(bound), and the gradient is the
 * bound's (straight through), never 0, so that an image thrown past the bound comes back */
static void test_iso_bound(void)
{
    model *m = model_create(&(model_config){.digits = 1, .head = HEAD_ISO, .C = 1, .D = 2}, 0, NULL, 2);
    model_init(m, 3);
    const model_view *hb = model_view_find(m, "head.b"), *hw = model_view_find(m, "head.w");
    memset(m->params + hw->offset + 2 * hw->shape[1], 0, hw->shape[1] * sizeof(float)); /* s = its bias */
    uint8_t *img = rand_images(m, 1);
    float mu[2], var[2], dmu[2] = {0, 0}, dvar[2] = {1e-9f, 1e-9f};
    for (int side = -1; side <= 1; side += 2) {
        m->params[hb->offset + 2] = 50.0f * side;
        model_forward(m, img, 1, mu, var);
        CHECK_CLOSE(var[0], exp(MODEL_LOGVAR_MAX * side), 1e-6 * exp(MODEL_LOGVAR_MAX * side));
        CHECK(var[0] == var[1]);
        memset(m->grads, 0, m->nparams * sizeof(float));
        model_backward(m, dmu, dvar);
        /* ds = exp(bound) (dvar[0] + dvar[1]) */
        CHECK_CLOSE(m->grads[hb->offset + 2], 2e-9 * exp(MODEL_LOGVAR_MAX * side), 1e-6 * 2e-9 * exp(MODEL_LOGVAR_MAX * side));
    }
    free(img);
    model_free(m);
}

/* model_ensemble_moments by hand: two items of M = 3 members in D = 2; the mean and the unbiased
 * variance over the members, the floor where they agree; and model_check's ensembles */
static void test_ensemble(void)
{
    float mem[] = {1, 2, 3, 2, 5, 2, /* item 0: members (1, 2), (3, 2), (5, 2) */
                   0, -1, 0, 1, 3, 0};
    float mu[4], var[4];
    model_ensemble_moments(mem, 2, 3, 2, mu, var);
    CHECK(mu[0] == 3 && mu[1] == 2 && var[0] == 4 && var[1] == MODEL_VAR_FLOOR);
    CHECK(mu[2] == 1 && mu[3] == 0 && var[2] == 3 && var[3] == 1); /* (1 + 1 + 4) / 2, (1 + 1 + 0) / 2 */
    model_config c = {.head = HEAD_POINT, .C = 4, .D = 3, .features = 5, .ensemble = 4};
    body_parse(&c, "linear");
    CHECK(model_check(&c) == NULL);
    c.C = 3;
    CHECK(model_check(&c) != NULL); /* C is the ensemble's */
    c.C = 4, c.head = HEAD_ISO;
    CHECK(model_check(&c) != NULL); /* point heads only */
    c.head = HEAD_POINT, c.ensemble = 1, c.C = 1;
    CHECK(model_check(&c) != NULL);
}

int main(void)
{
    blas_init(NULL, 1);
    rng_init(&R, 714, RNG_STREAM('t', 'm', 'o', 'd'));
    test_avx2_avx512_same();
    test_views_and_init();
    test_ensemble();
    test_check_input();
    test_iso_bound();
    double maxrel = 0;
    test_gradients((model_config){.digits = 2, .head = HEAD_POINT, .C = 1, .D = 2}, 3, &maxrel);
    test_gradients((model_config){.digits = 2, .head = HEAD_MOG, .C = 2, .D = 2}, 3, &maxrel);
    test_gradients((model_config){.digits = 1, .head = HEAD_MOG, .C = 1, .D = 3}, 2, &maxrel);
    test_gradients((model_config){.head = HEAD_POINT, .C = 1, .D = 2, .channels = 3, .height = 8, .width = 12}, 3,
                   &maxrel);
    test_gradients((model_config){.head = HEAD_MOG, .C = 2, .D = 2, .channels = 3, .height = 8, .width = 12}, 3,
                   &maxrel);
    test_gradients((model_config){.head = HEAD_MOG, .C = 1, .D = 2, .channels = 2, .height = 12, .width = 8}, 2,
                   &maxrel);
    test_gradients((model_config){.digits = 2, .head = HEAD_ISO, .C = 1, .D = 3}, 3, &maxrel);
    test_gradients((model_config){.head = HEAD_ISO, .C = 2, .D = 2, .channels = 3, .height = 8, .width = 12}, 2,
                   &maxrel);
    printf("largest relative difference, model gradient vs central differences (gradients above 10%% "
           "of their tensor's largest): %.3g\n", maxrel);
    test_threads((model_config){.digits = 2, .head = HEAD_MOG, .C = 2, .D = 2});
    test_threads((model_config){.head = HEAD_MOG, .C = 2, .D = 2, .channels = 3, .height = 8, .width = 12});
    test_threads((model_config){.head = HEAD_MOG, .C = 2, .D = 2, .channels = 3, .height = 64, .width = 64});
    test_threads((model_config){.digits = 2, .head = HEAD_ISO, .C = 1, .D = 3});
    return check_done("test_model");
}
