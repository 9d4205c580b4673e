/* proxy: ProxyNCA and Proxy-Anchor (lib/training/loss_proxy.c) against their papers' equations by
 * hand on two items of exact cosines with two and with three proxies (a proxy without items: only
 * Proxy-Anchor's negative term), invariance to the scale of embeddings and proxies, the defaults,
 * the nearest-proxy accuracy, central finite differences of the gradients (embeddings and
 * proxies), and misuse. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "loss.h"
#include "lossgrad.h"
#include "rng.h"

static double eval(const loss_kind *L, const loss_config *lc, const loss_input *in, const float *W, loss_stats *st)
{
    return L->forward_backward(lc, in, W, NULL, NULL, NULL, NULL, st);
}

int main(void)
{
    const loss_kind *nca = loss_find("proxynca"), *pa = loss_find("proxy-anchor");
    CHECK(nca && pa);
    if (!nca || !pa)
        return check_done("test_proxy");
    CHECK(!strcmp(nca->class_weights, "proxynca.w") && !strcmp(pa->class_weights, "proxy-anchor.w"));
    loss_config d = loss_config_new(pa);
    CHECK(loss_value(&d, pa, "pa-alpha") == 32 && loss_value(&d, pa, "pa-delta") == 0.1); /* the paper's */
    d = loss_config_new(nca);
    CHECK(loss_value(&d, nca, "proxy-scale") == 1);

    /* proxies w0 = (1, 0) x 2, w1 = (0, 1) x 0.5, w2 = (-1, 0); item 0 = (0.8, 0.6) x 3 of row 0,
     * item 1 = (0.6, 0.8) of row 1: cosines 0.8, 0.6, -0.8 and 0.6, 0.8, -0.6 */
    float W[6] = {2, 0, 0, 0.5f, -1, 0};
    float mu[4] = {0.8f * 3, 0.6f * 3, 0.6f, 0.8f};
    int32_t row[2] = {0, 1}, cls[2] = {4, 9};
    loss_input in = {.n = 2, .C = 1, .D = 2, .mu = mu, .cls = cls, .row = row, .classes = 2};
    loss_stats st;
    /* ProxyNCA, s = 1, two proxies: d = 2 - 2c; L_i = d_iy + log e^{-d_io} = 0.4 - 0.8 each */
    CHECK_CLOSE(eval(nca, &d, &in, W, &st), -0.4, 1e-6);
    CHECK_CLOSE(st.acc, 1, 0);
    /* three proxies, s = 2: L_0 = 2 (0.4) + log(e^{-2 (0.8)} + e^{-2 (3.6)}), L_1 = 0.8 + log(e^{-1.6}
     * + e^{-2 (3.2)}) */
    in.classes = 3;
    loss_set(&d, nca, "proxy-scale", 2);
    double want = (0.8 + log(exp(-1.6) + exp(-7.2)) + 0.8 + log(exp(-1.6) + exp(-6.4))) / 2;
    CHECK_CLOSE(eval(nca, &d, &in, W, NULL), want, 1e-6);
    /* Proxy-Anchor, alpha = 2, delta = 0.1, two proxies (both with an item): each proxy's positive
     * e^{-2 (0.8 - 0.1)}, its negative e^{2 (0.6 + 0.1)} */
    in.classes = 2;
    d = loss_config_new(pa);
    loss_set(&d, pa, "pa-alpha", 2);
    CHECK_CLOSE(eval(pa, &d, &in, W, &st), log1p(exp(-1.4)) + log1p(exp(1.4)), 1e-6);
    /* three proxies: w2 has no item (P+ = 2 proxies, P = 3); its negatives e^{2 (-0.8 + 0.1)} and
     * e^{2 (-0.6 + 0.1)} */
    in.classes = 3;
    want = 2 * log1p(exp(-1.4)) / 2 + (2 * log1p(exp(1.4)) + log1p(exp(-1.4) + exp(-1.0))) / 3;
    CHECK_CLOSE(eval(pa, &d, &in, W, NULL), want, 1e-6);
    /* the paper's alpha = 32 stays finite: log1p(e^{22.4}) = 22.4 + log1p(e^{-22.4}) */
    in.classes = 2;
    d = loss_config_new(pa);
    CHECK_CLOSE(eval(pa, &d, &in, W, NULL), log1p(exp(-22.4)) + 22.4 + log1p(exp(-22.4)), 1e-5);

    /* gradients against central differences: 6 items of 4 classes (rows 0..2: proxy 3 has none),
     * D = 3, both losses at two settings */
    rng r;
    double worst = 0;
    for (int t = 0; t < 4; t++) {
        enum { N = 6, K = 4, DD = 3 };
        float x[N * DD], w[K * DD];
        int32_t y[N];
        rng_init(&r, 11, t);
        for (int i = 0; i < N * DD; i++)
            x[i] = (float)rng_normal(&r);
        for (int i = 0; i < K * DD; i++)
            w[i] = (float)rng_normal(&r);
        for (int i = 0; i < N; i++)
            y[i] = i % 3;
        const loss_kind *L = t % 2 ? pa : nca;
        loss_config lc = loss_config_new(L);
        if (t == 2)
            loss_set(&lc, nca, "proxy-scale", 3);
        if (t == 3)
            loss_set(&lc, pa, "pa-alpha", 8);
        loss_input b = {.n = N, .C = 1, .D = DD, .mu = x, .cls = y, .row = y, .classes = K};
        worst = fmax(worst, lossgrad_check(L, &lc, &b, w, K, 2e-3));
    }
    printf("gradcheck proxynca, proxy-anchor: 4 batches (embeddings and proxies), worst relative error %.2g\n", worst);

    /* misuse: no rows, one class for ProxyNCA, a variance */
    loss_config lc = loss_config_new(nca);
    loss_input bad = in;
    bad.row = NULL;
    if (check_child()) {
        eval(nca, &lc, &bad, W, NULL);
        _exit(0);
    }
    CHECK(check_died());
    int32_t zero[2] = {0, 0};
    bad = in, bad.row = zero, bad.classes = 1;
    if (check_child()) {
        eval(nca, &lc, &bad, W, NULL);
        _exit(0);
    }
    CHECK(check_died());
    float var[4] = {1, 1, 1, 1};
    bad = in, bad.var = var;
    if (check_child()) {
        eval(pa, &lc, &bad, W, NULL);
        _exit(0);
    }
    CHECK(check_died());
    return check_done("test_proxy");
}
