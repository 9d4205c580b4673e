/* nn: reference layers against a naive convolution and central finite differences; the fused
 * conv+ReLU+pool kernels against the reference layers; the max-pool tie rule.
 *
 * Finite differences: the layers compute in float, so each check perturbs one float by h = 1e-2
 * (relu/pool: 1e-3, away from kinks by construction) and evaluates L = sum(out * R) in double.
 * The conv and fc layers are linear in the perturbed value, so the central difference is exact
 * up to float rounding; the tolerance is 2e-3 * (1 + |gradient|). */
#include <stdlib.h>
#include <string.h>

#include "blas.h"
#include "check.h"
#include "nn.h"
#include "rng.h"
#include "util.h"

static rng R;
static float *randv(size_t n, float scale)
{
    float *v = ealloc_aligned(n * sizeof(float) + 256);
    for (size_t i = 0; i < n; i++)
        v[i] = (float)((2 * rng_uniform(&R) - 1) * scale);
    return v;
}
static double dot(const float *a, const float *b, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += (double)a[i] * b[i];
    return s;
}

/* ---- conv: reference forward against a naive double loop; backward against differences ---- */
static void test_conv(void)
{
    const int B = 2, Cin = 3, H = 6, W = 8, Cout = 4, HW = H * W;
    size_t nin = (size_t)B * Cin * HW, nout = (size_t)B * Cout * HW, nw = (size_t)Cout * Cin * 25;
    float *in = randv(nin, 1), *w = randv(nw, 0.5f), *b = randv(Cout, 0.5f), *out = randv(nout, 1);
    nn_conv_forward(out, in, w, b, B, Cin, H, W, Cout);
    for (int i = 0; i < B; i++)
        for (int co = 0; co < Cout; co++)
            for (int y = 0; y < H; y++)
                for (int x = 0; x < W; x++) {
                    double s = b[co];
                    for (int ci = 0; ci < Cin; ci++)
                        for (int ky = 0; ky < 5; ky++)
                            for (int kx = 0; kx < 5; kx++) {
                                int sy = y + ky - 2, sx = x + kx - 2;
                                if (sy >= 0 && sy < H && sx >= 0 && sx < W)
                                    s += (double)w[((co * Cin + ci) * 5 + ky) * 5 + kx] *
                                         in[((size_t)(i * Cin + ci) * H + sy) * W + sx];
                            }
                    CHECK_CLOSE(out[((size_t)(i * Cout + co) * H + y) * W + x], s, 1e-5);
                }
    // backward vs central differences of L = sum(out * R)
    float *R = randv(nout, 1), *din = calloc(nin, 4), *dw = calloc(nw, 4), *db = calloc(Cout, 4);
    nn_conv_backward(din, dw, db, R, in, w, B, Cin, H, W, Cout);
    const float h = 1e-2f;
    struct {
        float *p, *g;
        size_t n;
    } t[3] = {{in, din, nin}, {w, dw, nw}, {b, db, Cout}};
    for (int k = 0; k < 3; k++)
        for (size_t j = 0; j < t[k].n; j += 1 + t[k].n / 40) {
            float keep = t[k].p[j];
            t[k].p[j] = keep + h;
            nn_conv_forward(out, in, w, b, B, Cin, H, W, Cout);
            double lp = dot(out, R, nout);
            t[k].p[j] = keep - h;
            nn_conv_forward(out, in, w, b, B, Cin, H, W, Cout);
            double lm = dot(out, R, nout);
            t[k].p[j] = keep;
            double fd = (lp - lm) / (2.0 * h);
            CHECK_CLOSE(t[k].g[j], fd, 2e-3 * (1 + fabs(fd)));
        }
    // din may be NULL; gradients accumulate
    float *dw2 = calloc(nw, 4), *db2 = calloc(Cout, 4);
    nn_conv_backward(NULL, dw2, db2, R, in, w, B, Cin, H, W, Cout);
    nn_conv_backward(NULL, dw2, db2, R, in, w, B, Cin, H, W, Cout);
    for (size_t j = 0; j < nw; j++)
        CHECK_CLOSE(dw2[j], 2 * dw[j], 1e-4 * (1 + fabs(dw[j])));
    free(in), free(w), free(b), free(out), free(R), free(din), free(dw), free(db), free(dw2), free(db2);
}

/* ---- relu, max pool, fc: backward against differences ---- */
static void test_relu_pool_fc(void)
{
    // ReLU: values kept at least 0.01 away from 0 so that h = 1e-3 never crosses the kink
    size_t n = 64;
    float *x = randv(n, 1), *y = calloc(n, 4), *R = randv(n, 1), *dx = calloc(n, 4);
    for (size_t i = 0; i < n; i++)
        if (fabsf(x[i]) < 0.01f)
            x[i] = 0.5f;
    nn_relu_forward(y, x, n);
    nn_relu_backward(dx, R, x, n);
    for (size_t i = 0; i < n; i++) {
        CHECK(y[i] == (x[i] > 0 ? x[i] : 0));
        float keep = x[i], h = 1e-3f, yp, ym;
        x[i] = keep + h;
        nn_relu_forward(&yp, x + i, 1);
        x[i] = keep - h;
        nn_relu_forward(&ym, x + i, 1);
        x[i] = keep;
        CHECK_CLOSE(dx[i], R[i] * (yp - ym) / (2.0 * h), 1e-3);
    }
    free(x), free(y), free(R), free(dx);

    // max pool: distinct values, gaps > 2h, so the argmax never changes under the perturbation
    const int B = 2, C = 3, H = 4, W = 6;
    size_t nin = (size_t)B * C * H * W, nout = nin / 4;
    float *in = ealloc_aligned(nin * 4), *out = calloc(nout, 4), *Rp = randv(nout, 1), *din = calloc(nin, 4);
    for (size_t i = 0; i < nin; i++)
        in[i] = (float)((i * 37) % nin) * 0.01f - 0.3f;
    nn_maxpool_forward(out, in, B, C, H, W);
    nn_maxpool_backward(din, Rp, in, B, C, H, W);
    for (size_t i = 0; i < nin; i++) {
        float keep = in[i], h = 1e-3f;
        in[i] = keep + h;
        nn_maxpool_forward(out, in, B, C, H, W);
        double lp = dot(out, Rp, nout);
        in[i] = keep - h;
        nn_maxpool_forward(out, in, B, C, H, W);
        double lm = dot(out, Rp, nout);
        in[i] = keep;
        CHECK_CLOSE(din[i], (lp - lm) / (2.0 * h), 2e-3);
    }
    // ties: the first maximum in (0,0), (0,1), (1,0), (1,1) order gets the gradient
    float tie[16] = {1, 1, 0, 2, 1, 1, 2, 2, /* row 2: */ 0, 3, 5, 5, 3, 3, 5, 5};
    float tout[4], tg[4] = {1, 1, 1, 1}, tdin[16] = {0};
    nn_maxpool_forward(tout, tie, 1, 1, 4, 4);
    nn_maxpool_backward(tdin, tg, tie, 1, 1, 4, 4);
    CHECK(tout[0] == 1 && tout[1] == 2 && tout[2] == 3 && tout[3] == 5);
    CHECK(tdin[0] == 1 && tdin[1] == 0 && tdin[4] == 0 && tdin[5] == 0); // all equal: (0,0)
    CHECK(tdin[3] == 1 && tdin[6] == 0 && tdin[7] == 0);                // (0,1) first of the 2s
    CHECK(tdin[9] == 1 && tdin[12] == 0 && tdin[13] == 0);              // (0,1) first of the 3s
    CHECK(tdin[10] == 1 && tdin[11] == 0 && tdin[14] == 0 && tdin[15] == 0);
    free(in), free(out), free(Rp), free(din);

    // fc
    const int Bf = 3, IN = 7, OUT = 5;
    float *fi = randv(Bf * IN, 1), *fw = randv(OUT * IN, 1), *fb = randv(OUT, 1), *fo = calloc(Bf * OUT, 4);
    float *fR = randv(Bf * OUT, 1), *fdi = calloc(Bf * IN, 4), *fdw = calloc(OUT * IN, 4), *fdb = calloc(OUT, 4);
    nn_fc_forward(fo, fi, fw, fb, Bf, IN, OUT);
    for (int i = 0; i < Bf; i++)
        for (int o = 0; o < OUT; o++)
            CHECK_CLOSE(fo[i * OUT + o], dot(fi + i * IN, fw + o * IN, IN) + fb[o], 1e-5);
    nn_fc_backward(fdi, fdw, fdb, fR, fi, fw, Bf, IN, OUT);
    struct {
        float *p, *g;
        int n;
    } t[3] = {{fi, fdi, Bf * IN}, {fw, fdw, OUT * IN}, {fb, fdb, OUT}};
    for (int k = 0; k < 3; k++)
        for (int j = 0; j < t[k].n; j++) {
            float keep = t[k].p[j], h = 1e-2f;
            t[k].p[j] = keep + h;
            nn_fc_forward(fo, fi, fw, fb, Bf, IN, OUT);
            double lp = dot(fo, fR, Bf * OUT);
            t[k].p[j] = keep - h;
            nn_fc_forward(fo, fi, fw, fb, Bf, IN, OUT);
            double lm = dot(fo, fR, Bf * OUT);
            t[k].p[j] = keep;
            double fd = (lp - lm) / (2.0 * h);
            CHECK_CLOSE(t[k].g[j], fd, 2e-3 * (1 + fabs(fd)));
        }
    free(fi), free(fw), free(fb), free(fo), free(fR), free(fdi), free(fdw), free(fdb);
}

/* reference conv -> ReLU -> pool on NCHW, with its backward: the fused kernels' specification */
static void ref_convpool(float *pool, float *conv, float *act, const float *in, const float *w,
                         const float *b, int Cin, int H, int W, int Cout)
{
    nn_conv_forward(conv, in, w, b, 1, Cin, H, W, Cout);
    nn_relu_forward(act, conv, (size_t)Cout * H * W);
    nn_maxpool_forward(pool, act, 1, Cout, H, W);
}
static void ref_convpool_backward(float *din, float *dw, float *db, const float *dpool, const float *conv,
                                  const float *act, const float *in, const float *w, int Cin, int H, int W,
                                  int Cout)
{
    size_t n = (size_t)Cout * H * W;
    float *dact = calloc(n, 4), *dconv = calloc(n, 4);
    nn_maxpool_backward(dact, dpool, act, 1, Cout, H, W);
    nn_relu_backward(dconv, dact, conv, n);
    nn_conv_backward(din, dw, db, dconv, in, w, 1, Cin, H, W, Cout);
    free(dact), free(dconv);
}

/* ---- the first-layer kernel (Cin input channels as planes in, NHWC padded out) ---- */
/* sparse: zero except a few random strokes (rectangles), like digits, and with more than one
 * channel channel 1 all zero, as the L-shapes often have one: exercises the kernel's skipping of
 * all-zero blocks and channels */
static void test_convpool1(int Cin, int H, int W, int Cout, int sparse)
{
    int H2 = H / 2, W2 = W / 2, Wp = W2 + 4;
    size_t npix = (size_t)Cin * H * W;
    uint8_t *img = calloc(npix, 1);
    float *x = ealloc_aligned(npix * 4);
    for (size_t i = 0; i < npix; i++)
        img[i] = sparse ? 0 : (uint8_t)rng_below(&R, 256);
    for (int ci = 0; sparse && ci < Cin; ci++)
        for (int k = 0; k < 3 && !(Cin > 1 && ci == 1); k++) {
            int y0 = (int)rng_below(&R, H - 3), x0 = (int)rng_below(&R, W / 2);
            for (int y = y0; y < y0 + 3; y++)
                for (int xx = x0; xx < x0 + 5 && xx < W; xx++)
                    img[((size_t)ci * H + y) * W + xx] = (uint8_t)(1 + rng_below(&R, 255));
        }
    for (size_t i = 0; i < npix; i++)
        x[i] = img[i] / 255.0f;
    float *w = randv(Cout * Cin * 25, 0.5f), *b = randv(Cout, 0.3f);
    float *planes = ealloc_aligned(nn_planes_size(Cin, H, W) * 4);
    nn_planes_fill(planes, img, Cin, H, W, 1 / 255.0f, 5);
    size_t np = (size_t)(H2 + 4) * Wp * Cout;
    float *out = ealloc_aligned(np * 4);
    uint8_t *am = ealloc_aligned((size_t)H2 * W2 * Cout);
    nn_convpool1_forward(out, am, planes, w, b, Cin, H, W, Cout);

    size_t n = (size_t)Cout * H * W;
    float *conv = calloc(n, 4), *act = calloc(n, 4), *pool = calloc(n / 4, 4);
    ref_convpool(pool, conv, act, x, w, b, Cin, H, W, Cout);
    int border_zero = 1;
    for (int y = 0; y < H2 + 4; y++)
        for (int px = 0; px < Wp; px++)
            for (int c = 0; c < Cout; c++) {
                float v = out[((size_t)y * Wp + px) * Cout + c];
                if (y < 2 || y >= H2 + 2 || px < 2 || px >= W2 + 2) {
                    border_zero &= v == 0;
                    continue;
                }
                int py = y - 2, qx = px - 2;
                CHECK_CLOSE(v, pool[((size_t)c * H2 + py) * W2 + qx], 2e-5 * Cin);
                // the argmax is the first maximum of the window
                const float *a = conv + ((size_t)c * H + 2 * py) * W + 2 * qx;
                int k = am[((size_t)py * W2 + qx) * Cout + c];
                float best = fmaxf(fmaxf(a[0], a[1]), fmaxf(a[W], a[W + 1]));
                CHECK_CLOSE(a[(k >> 1) * W + (k & 1)], best, 2e-5 * Cin);
            }
    CHECK(border_zero);

    // backward: dw, db against the reference backward
    float *dout = ealloc_aligned(np * 4), *dpool = calloc(n / 4, 4);
    for (int py = 0; py < H2; py++)
        for (int qx = 0; qx < W2; qx++)
            for (int c = 0; c < Cout; c++) {
                float g = (float)(2 * rng_uniform(&R) - 1);
                dout[((size_t)(py + 2) * Wp + qx + 2) * Cout + c] = g;
                dpool[((size_t)c * H2 + py) * W2 + qx] = g;
            }
    int nw = Cout * Cin * 25;
    float *dw = calloc(nw, 4), *db = calloc(Cout, 4), *rdw = calloc(nw, 4), *rdb = calloc(Cout, 4);
    nn_convpool1_backward(dw, db, dout, out, am, planes, Cin, H, W, Cout);
    ref_convpool_backward(NULL, rdw, rdb, dpool, conv, act, x, w, Cin, H, W, Cout);
    double worst = 0;
    for (int i = 0; i < nw; i++) {
        CHECK_CLOSE(dw[i], rdw[i], 1e-4 * (1 + fabs(rdw[i])));
        worst = fmax(worst, fabs(dw[i] - rdw[i]));
    }
    for (int i = 0; i < Cout; i++)
        CHECK_CLOSE(db[i], rdb[i], 1e-4 * (1 + fabs(rdb[i])));
    printf("convpool1 %dx%dx%d -> %d%s: largest |dw - reference| %.2g\n", Cin, H, W, Cout, sparse ? " (sparse)" : "",
           worst);
    free(img), free(x), free(w), free(b), free(planes), free(out), free(am), free(conv), free(act), free(pool);
    free(dout), free(dpool), free(dw), free(db), free(rdw), free(rdb);
}

/* ---- the NHWC layer (16 output channels) ---- */
static void test_convpool(int H, int W, int Cin)
{
    const int Cout = NN_CONVPOOL_COUT;
    int H2 = H / 2, W2 = W / 2, Wp = W + 4;
    size_t nin = (size_t)(H + 4) * Wp * Cin;
    float *in = ealloc_aligned((nin + NN_DIN_SLACK) * 4), *x = calloc((size_t)Cin * H * W, 4);
    for (int y = 0; y < H; y++)
        for (int xx = 0; xx < W; xx++)
            for (int c = 0; c < Cin; c++) {
                float v = (float)rng_uniform(&R);
                in[((size_t)(y + 2) * Wp + xx + 2) * Cin + c] = v;
                x[((size_t)c * H + y) * W + xx] = v;
            }
    float *w = randv(Cout * Cin * 25, 0.3f), *b = randv(Cout, 0.3f);
    float *wk = ealloc_aligned(NN_WK_SIZE(Cin) * 4), *wr = ealloc_aligned(NN_WR_SIZE * 4);
    nn_convpool_pack(wk, wr, w, Cin);
    size_t np = (size_t)H2 * W2 * Cout;
    float *out = ealloc_aligned(np * 4);
    uint8_t *am = ealloc_aligned(np);
    nn_convpool_forward(out, am, in, wk, b, H, W, Cin);
    size_t n = (size_t)Cout * H * W;
    float *conv = calloc(n, 4), *act = calloc(n, 4), *pool = calloc(n / 4, 4);
    ref_convpool(pool, conv, act, x, w, b, Cin, H, W, Cout);
    for (int py = 0; py < H2; py++)
        for (int qx = 0; qx < W2; qx++)
            for (int c = 0; c < Cout; c++) {
                size_t k = ((size_t)py * W2 + qx) * Cout + c;
                CHECK_CLOSE(out[k], pool[((size_t)c * H2 + py) * W2 + qx], 2e-5);
                const float *a = conv + ((size_t)c * H + 2 * py) * W + 2 * qx;
                float best = fmaxf(fmaxf(a[0], a[1]), fmaxf(a[W], a[W + 1]));
                CHECK_CLOSE(a[(am[k] >> 1) * W + (am[k] & 1)], best, 2e-5);
            }
    float *dout = randv(np, 1), *dpool = calloc(n / 4, 4);
    for (int py = 0; py < H2; py++)
        for (int qx = 0; qx < W2; qx++)
            for (int c = 0; c < Cout; c++)
                dpool[((size_t)c * H2 + py) * W2 + qx] = dout[((size_t)py * W2 + qx) * Cout + c];
    float *din = ealloc_aligned((nin + NN_DIN_SLACK) * 4), *dwr = ealloc_aligned(NN_DWR_SIZE * 4);
    float *dw = calloc(Cout * Cin * 25, 4), *db = calloc(Cout, 4);
    void *scratch = ealloc_aligned(nn_convpool_scratch(H, W));
    nn_convpool_backward(din, dwr, db, dout, out, am, in, wr, H, W, Cin, scratch);
    nn_convpool_unpack_add(dw, dwr, Cin);
    float *rdin = calloc((size_t)Cin * H * W, 4), *rdw = calloc(Cout * Cin * 25, 4), *rdb = calloc(Cout, 4);
    ref_convpool_backward(rdin, rdw, rdb, dpool, conv, act, x, w, Cin, H, W, Cout);
    for (int i = 0; i < Cout * Cin * 25; i++)
        CHECK_CLOSE(dw[i], rdw[i], 1e-4 * (1 + fabs(rdw[i])));
    for (int i = 0; i < Cout; i++)
        CHECK_CLOSE(db[i], rdb[i], 1e-4 * (1 + fabs(rdb[i])));
    for (int y = 0; y < H; y++)
        for (int xx = 0; xx < W; xx++)
            for (int c = 0; c < Cin; c++)
                CHECK_CLOSE(din[((size_t)(y + 2) * Wp + xx + 2) * Cin + c], rdin[((size_t)c * H + y) * W + xx], 1e-4);
    // din may be NULL: the weight gradients are the same
    float *dwr2 = ealloc_aligned(NN_DWR_SIZE * 4), db2[NN_CONVPOOL_COUT] = {0};
    nn_convpool_backward(NULL, dwr2, db2, dout, out, am, in, wr, H, W, Cin, scratch);
    CHECK(!memcmp(dwr2, dwr, NN_DWR_SIZE * 4) && !memcmp(db2, db, sizeof db2));
    free(in), free(x), free(w), free(b), free(wk), free(wr), free(out), free(am), free(conv), free(act);
    free(pool), free(dout), free(dpool), free(din), free(dwr), free(dw), free(db), free(scratch), free(rdin);
    free(rdw), free(rdb), free(dwr2);
}

/* ties in the fused kernels: a constant conv output makes every window a 4-way tie */
static void test_fused_ties(void)
{
    int H = 4, W = 8, H2 = 2, W2 = 4;
    uint8_t img[32];
    for (int i = 0; i < 32; i++)
        img[i] = (uint8_t)(i * 7);
    float w[25] = {0}, b[1] = {0.5f};
    float *planes = ealloc_aligned(nn_planes_size(1, H, W) * 4), *out = ealloc_aligned((H2 + 4) * (W2 + 4) * 4);
    uint8_t am[8];
    nn_planes_fill(planes, img, 1, H, W, 1 / 255.0f, 5);
    nn_convpool1_forward(out, am, planes, w, b, 1, H, W, 1);
    int zero = 1;
    for (int i = 0; i < 8; i++)
        zero &= am[i] == 0;
    CHECK(zero);
    CHECK(out[2 * (W2 + 4) + 2] == 0.5f);
    free(planes), free(out);
}

int main(void)
{
    blas_init(NULL, 1);
    rng_init(&R, 714, RNG_STREAM('t', 'n', 'n', 0));
    test_conv();
    test_relu_pool_fc();
    test_convpool1(1, 28, 56, 6, 0); /* the model's first layer, 2 digits */
    test_convpool1(1, 28, 56, 6, 1); /* mostly zero, like digits */
    test_convpool1(1, 28, 28, 6, 0); /* 1 digit: partial vectors at the right edge */
    test_convpool1(1, 6, 20, 3, 0);  /* odd pooled row count, channel block remainder */
    test_convpool1(1, 6, 20, 3, 1);
    test_convpool1(3, 64, 64, 6, 0); /* the L-shapes: RGB */
    test_convpool1(3, 64, 64, 6, 1); /* mostly zero, channel 1 empty */
    test_convpool1(3, 8, 12, 6, 0);  /* small, partial vectors */
    test_convpool1(2, 6, 20, 3, 1);
    test_convpool1(4, 12, 16, 7, 0);
    test_convpool(14, 28, 6);   /* the model's second layer, 2 digits */
    test_convpool(14, 14, 6);
    test_convpool(6, 10, 2);
    test_fused_ties();
    return check_done("test_nn");
}
