/* loss: the registry, hand-derived values of softcon / contrastive / vib, central finite-difference
 * gradient checks (the losses compute in double; the rng is re-initialised identically before
 * every evaluation so the VIB samples are the same), the limits var -> 0 and d = 1e4, stratified
 * sampling, and the time of one HIB-sized batch. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "loss.h"
#include "loss_util.h"
#include "par.h"
#include "proto.h"
#include "rng.h"
#include "util.h"

#define SEED 714
#define STREAM 0x1055
#ifndef FD_H
#define FD_H 1e-4 /* finite-difference step: truncation error ~h^2 meets float rounding of the gradients (~1e-8) */
#endif

typedef struct {
    loss_input in;
    float *mu, *var;
    int32_t *pa, *pb, *cls;
    uint8_t *match, *query;
} batch;

/* n images with random (mu, var) of shape (n, C, D); P = n/2 disjoint pairs (2k, 2k+1), with
 * alternating labels */
static batch make_batch(int n, int C, int D, int with_var, uint64_t seed)
{
    batch bt = {0};
    rng r;
    rng_init(&r, seed, 1);
    size_t m = (size_t)n * C * D;
    bt.mu = emalloc(sizeof(float) * m);
    bt.var = with_var ? emalloc(sizeof(float) * m) : NULL;
    for (size_t i = 0; i < m; i++) {
        bt.mu[i] = (float)(2 * rng_uniform(&r) - 1);
        if (bt.var)
            bt.var[i] = (float)(0.2 + 1.3 * rng_uniform(&r));
    }
    int P = n / 2;
    bt.pa = emalloc(sizeof(int32_t) * (P + 1));
    bt.pb = emalloc(sizeof(int32_t) * (P + 1));
    bt.match = emalloc(P + 1);
    for (int k = 0; k < P; k++) {
        bt.pa[k] = 2 * k;
        bt.pb[k] = 2 * k + 1;
        bt.match[k] = k % 2 == 0;
    }
    bt.in = (loss_input){.n = n, .C = C, .D = D, .mu = bt.mu, .var = bt.var, .cls = NULL,
                         .npairs = P, .pair_a = bt.pa, .pair_b = bt.pb, .match = bt.match};
    return bt;
}

static void free_batch(batch *bt)
{
    free(bt->mu);
    free(bt->var);
    free(bt->pa);
    free(bt->pb);
    free(bt->match);
    free(bt->cls);
    free(bt->query);
}

/* an episode of nc classes (values 40, 33, 26, ...: not 0 .. nc-1, and decreasing), S support and
 * Q query images each, in a scrambled order (image i is a query when i % (S + Q) >= S, of class
 * (i * 7) % nc); random (mu, var) of shape (n, 1, D), the means near their class's centre so that
 * the classes are neither trivially separated nor hopeless */
static batch make_episode(int nc, int S, int Q, int D, int with_var, uint64_t seed)
{
    batch bt = {0};
    int n = nc * (S + Q);
    rng r;
    rng_init(&r, seed, 2);
    bt.mu = emalloc(sizeof(float) * n * D);
    bt.var = with_var ? emalloc(sizeof(float) * n * D) : NULL;
    bt.cls = emalloc(sizeof(int32_t) * n);
    bt.query = emalloc(n);
    for (int i = 0; i < n; i++) {
        int c = (i * 7) % nc;
        bt.cls[i] = 40 - 7 * c;
        bt.query[i] = i % (S + Q) >= S;
        for (int d = 0; d < D; d++) {
            bt.mu[i * D + d] = (float)(0.6 * ((c >> d) & 1) + 0.3 * c / nc + 0.5 * (rng_uniform(&r) - 0.5));
            if (bt.var)
                bt.var[i * D + d] = (float)(0.05 + 0.3 * rng_uniform(&r));
        }
    }
    bt.in = (loss_input){.n = n, .C = 1, .D = D, .mu = bt.mu, .var = bt.var, .cls = bt.cls, .query = bt.query};
    return bt;
}

/* the loss with a freshly initialised rng (same samples every time) */
static double eval(const loss_kind *L, const loss_config *cfg, const loss_input *in,
                   const float *params, float *dparams, float *dmu, float *dvar, loss_stats *st)
{
    rng r;
    rng_init(&r, SEED, STREAM);
    return L->forward_backward(cfg, in, params, dparams, dmu, dvar, &r, st);
}

/* central difference of the loss in one float; the step actually taken is measured after
 * rounding to float, so the quotient is exact up to the loss's own rounding */
static double fd(const loss_kind *L, const loss_config *cfg, const loss_input *in, const float *params,
                 float *x, double h)
{
    float x0 = *x;
    float xp = (float)(x0 + h), xm = (float)(x0 - h);
    *x = xp;
    double lp = eval(L, cfg, in, params, NULL, NULL, NULL, NULL);
    *x = xm;
    double lm = eval(L, cfg, in, params, NULL, NULL, NULL, NULL);
    *x = x0;
    return (lp - lm) / ((double)xp - (double)xm);
}

/* analytic versus finite-difference gradients for every mu, var and loss parameter; returns the
 * largest difference (relative to max(1, |gradient|)) */
static double gradcheck(const char *what, const loss_kind *L, const loss_config *cfg, batch *bt,
                        float *params)
{
    const loss_input *in = &bt->in;
    size_t m = (size_t)in->n * in->C * in->D;
    float *dmu = emalloc(sizeof(float) * m), *dvar = emalloc(sizeof(float) * m);
    float dparams[4] = {0};
    eval(L, cfg, in, params, dparams, dmu, dvar, NULL);
    double worst = 0, h = FD_H;
    int count = 0;
    for (size_t i = 0; i < m; i++) {
        double g = fd(L, cfg, in, params, &bt->mu[i], h), e = fabs(dmu[i] - g) / fmax(1, fabs(g));
        CHECK_CLOSE(dmu[i], g, 1e-6 * fmax(1, fabs(g)));
        worst = fmax(worst, e);
        count++;
        if (bt->var) {
            g = fd(L, cfg, in, params, &bt->var[i], h);
            e = fabs(dvar[i] - g) / fmax(1, fabs(g));
            CHECK_CLOSE(dvar[i], g, 1e-6 * fmax(1, fabs(g)));
            worst = fmax(worst, e);
            count++;
        }
    }
    for (int p = 0; p < L->nparams; p++) {
        double g = fd(L, cfg, in, params, &params[p], h), e = fabs(dparams[p] - g) / fmax(1, fabs(g));
        CHECK_CLOSE(dparams[p], g, 1e-6 * fmax(1, fabs(g)));
        worst = fmax(worst, e);
        count++;
    }
    /* beta enters linearly: dL/dbeta = mean over pairs of KL1 + KL2 = 2 * stats.kl */
    loss_stats st;
    eval(L, cfg, in, params, NULL, NULL, NULL, &st);
    loss_config c2 = *cfg;
    double hb = 1e-3;
    c2.beta = cfg->beta + hb;
    double lp = eval(L, &c2, in, params, NULL, NULL, NULL, NULL);
    c2.beta = cfg->beta - hb;
    double lm = eval(L, &c2, in, params, NULL, NULL, NULL, NULL);
    CHECK_CLOSE((lp - lm) / (2 * hb), 2 * st.kl, 1e-8 * fmax(1, st.kl));
    printf("gradcheck %-28s %3d entries, largest |analytic - fd| / max(1, |fd|) = %.2g\n", what, count,
           worst);
    free(dmu);
    free(dvar);
    return worst;
}

/* the settings of the HIB paper's losses (softcon, contrastive, vib) at their defaults: the five
 * every loss has */
static loss_config hib;

static void test_registry(void)
{
    const char *names[] = {"softcon", "contrastive", "vib"};
    int nparams[] = {2, 0, 2}, needs_var[] = {0, 0, 1};
    int k = 0;
    while (loss_kinds[k])
        k++;
    CHECK(k >= 3);
    for (int i = 0; i < 3; i++) {
        const loss_kind *L = loss_find(names[i]);
        CHECK(L != NULL);
        if (!L)
            continue;
        CHECK(!strcmp(L->name, names[i]));
        CHECK(L->nparams == nparams[i]);
        CHECK(L->needs_var == needs_var[i]);
        CHECK(L->batches == LOSS_PAIRS);
        CHECK(L->help && L->init_params && L->forward_backward);
    }
    CHECK(loss_find("nope") == NULL);
    CHECK(loss_find("") == NULL);
    CHECK(loss_find("VIB") == NULL);
    CHECK(loss_find(NULL) == NULL);
    const loss_kind *V = loss_find("vib");
    CHECK(!strcmp(V->param_names[0], "match.a_raw") && !strcmp(V->param_names[1], "match.b"));
    CHECK(hib.K == 8);
    CHECK_CLOSE(hib.beta, 1e-4, 0);
    CHECK_CLOSE(hib.margin, 1, 0);
    /* init: a = softplus(a_raw) comes back as a0 */
    loss_config lc = hib;
    lc.a0 = 3.5;
    lc.b0 = -2;
    float p[2];
    V->init_params(&lc, p);
    CHECK_CLOSE(loss_softplus(p[0]), 3.5, 1e-6);
    CHECK_CLOSE(p[1], -2, 0);
    V->init_params(&hib, p);
    CHECK_CLOSE(loss_softplus(p[0]), 1, 1e-6);
    CHECK_CLOSE(p[1], 0, 0);
    loss_find("contrastive")->init_params(&hib, NULL);  /* no parameters: no writes */
}

static void test_scalars(void)
{
    CHECK_CLOSE(loss_softplus(0), log(2), 1e-15);
    CHECK_CLOSE(loss_softplus(1000), 1000, 1e-12);
    CHECK_CLOSE(loss_softplus(-1000), 0, 1e-300);
    CHECK_CLOSE(loss_log_sigmoid(-1e4), -1e4, 1e-9);
    CHECK_CLOSE(loss_log_sigmoid(1e4), 0, 1e-300);
    CHECK_CLOSE(loss_log_sigmoid(2), log(1 / (1 + exp(-2.0))), 1e-15);
    CHECK_CLOSE(loss_sigmoid(-800), 0, 1e-300);
    CHECK_CLOSE(loss_sigmoid(3), 1 / (1 + exp(-3.0)), 1e-15);
    CHECK_CLOSE(loss_softplus(loss_softplus_inv(0.01)), 0.01, 1e-15);
    CHECK_CLOSE(loss_softplus(loss_softplus_inv(50)), 50, 1e-12);
    /* the mean of n equal probabilities is that probability */
    double s[4] = {0.3, 0.3, 0.3, 0.3}, g[4];
    CHECK_CLOSE(loss_match_nll(4, s, 1, g), -log(loss_sigmoid(0.3)), 1e-15);
    CHECK_CLOSE(loss_match_nll(4, s, 0, NULL), -log(loss_sigmoid(-0.3)), 1e-15);
    /* -log((sigmoid(1) + sigmoid(-2)) / 2) and its derivative */
    double s2[2] = {1, -2};
    double p = (loss_sigmoid(1) + loss_sigmoid(-2)) / 2;
    CHECK_CLOSE(loss_match_nll(2, s2, 1, g), -log(p), 1e-15);
    CHECK_CLOSE(g[0], -0.5 * loss_sigmoid(1) * loss_sigmoid(-1) / p, 1e-15);
    CHECK_CLOSE(g[1], -0.5 * loss_sigmoid(-2) * loss_sigmoid(2) / p, 1e-15);
    CHECK_CLOSE(loss_match_nll(2, s2, 0, NULL), -log(1 - p), 1e-15);
    /* loss_match_logp (for eval) agrees with the training NLL, and log(1 - p) stays accurate
     * when 1 - p is tiny (eta of a confident embedding) */
    rng r;
    rng_init(&r, SEED, 5);
    double z1[5 * 3], z2[4 * 3], sv[20], a = 1.4, b = 0.3;
    for (int i = 0; i < 15; i++)
        z1[i] = rng_normal(&r);
    for (int i = 0; i < 12; i++)
        z2[i] = rng_normal(&r);
    for (int k = 0; k < 5; k++)
        for (int l = 0; l < 4; l++)
            sv[k * 4 + l] = -a * loss_dist(z1 + 3 * k, z2 + 3 * l, 3) + b;
    for (int m = 0; m <= 1; m++)
        CHECK_CLOSE(loss_match_logp(z1, 5, z2, 4, 3, a, b, m), -loss_match_nll(20, sv, m, NULL), 1e-14);
    double s40 = 40 - sqrt(LOSS_DIST_EPS);  /* the guarded distance of a point to itself */
    CHECK_CLOSE(loss_match_logp(z1, 1, z1, 1, 3, 1, 40, 0), -s40 - log1p(exp(-s40)), 1e-12);
    CHECK_CLOSE(loss_match_nll(1, (double[]){40}, 0, NULL), 40 + log1p(exp(-40.0)), 1e-12);
    /* KL: N(0, I) is 0; N(m, v) = 0.5 sum(v + m^2 - 1 - log v) */
    float m0[3] = {0, 0, 0}, v1[3] = {1, 1, 1}, m[2] = {1, -2}, v[2] = {0.5f, 2};
    CHECK_CLOSE(loss_kl_gauss(m0, v1, 3), 0, 0);
    CHECK_CLOSE(loss_kl_gauss(m, v, 2), 2.75, 1e-15);
}

/* a = 1, b = 0, two points at distance 2: p = sigmoid(-2) */
static void test_softcon_values(void)
{
    const loss_kind *L = loss_find("softcon");
    float params[2], mu[4] = {0, 0, 2, 0}, dmu[4], dp[2] = {0, 0};
    L->init_params(&hib, params);
    int32_t pa = 0, pb = 1;
    uint8_t match = 1;
    loss_input in = {.n = 2, .C = 1, .D = 2, .mu = mu, .npairs = 1, .pair_a = &pa, .pair_b = &pb,
                     .match = &match};
    loss_stats st;
    double l = eval(L, &hib, &in, params, dp, dmu, NULL, &st);
    CHECK_CLOSE(l, -log(loss_sigmoid(-2)), 1e-7);  /* 2.1269280110 */
    CHECK_CLOSE(l, 2.1269280110429727, 1e-7);
    CHECK_CLOSE(st.nll, l, 0);
    CHECK_CLOSE(st.a, 1, 1e-7);
    CHECK_CLOSE(st.b, 0, 0);
    CHECK_CLOSE(st.kl, 0, 0);
    CHECK_CLOSE(st.mean_var, 0, 0);
    /* L = softplus(d): dL/dd = sigmoid(2), dd/dz0 = (z0 - z1)/d = (-1, 0) */
    CHECK_CLOSE(dmu[0], -loss_sigmoid(2), 1e-6);
    CHECK_CLOSE(dmu[1], 0, 1e-7);
    CHECK_CLOSE(dmu[2], loss_sigmoid(2), 1e-6);
    /* dL/db = -sigmoid(2); dL/da = 2 sigmoid(2), da/da_raw = 1 - e^-a */
    CHECK_CLOSE(dp[1], -loss_sigmoid(2), 1e-6);
    CHECK_CLOSE(dp[0], 2 * loss_sigmoid(2) * (1 - exp(-1.0)), 1e-6);
    match = 0;
    l = eval(L, &hib, &in, params, NULL, dmu, NULL, NULL);
    CHECK_CLOSE(l, -log(1 - loss_sigmoid(-2)), 1e-7);  /* 0.1269280110 */
    CHECK_CLOSE(dmu[0], loss_sigmoid(-2), 1e-6);
    /* coincident points: finite, zero gradient (the norm guard) */
    float same[4] = {0.5f, 0.5f, 0.5f, 0.5f};
    in.mu = same;
    match = 1;
    l = eval(L, &hib, &in, params, NULL, dmu, NULL, NULL);
    CHECK_CLOSE(l, log(2), 1e-6);
    CHECK(dmu[0] == 0 && dmu[1] == 0 && dmu[2] == 0 && dmu[3] == 0);
    /* no pairs: 0, zero gradients */
    in.npairs = 0;
    dmu[0] = 7;
    CHECK_CLOSE(eval(L, &hib, &in, params, NULL, dmu, NULL, NULL), 0, 0);
    CHECK(dmu[0] == 0);
}

/* Eq. 1 with M = 1: match at d = 2 gives 4; non-match at d = 0.5 gives 0.25; at d = 2, 0 */
static void test_contrastive_values(void)
{
    const loss_kind *L = loss_find("contrastive");
    float mu[12] = {0, 0, 2, 0, 1, 1, 1, 1.5f, 3, 3, 3, 5}, dmu[12];
    int32_t pa[3] = {0, 2, 4}, pb[3] = {1, 3, 5};
    uint8_t match[3] = {1, 0, 0};
    loss_input in = {.n = 6, .C = 1, .D = 2, .mu = mu, .npairs = 3, .pair_a = pa, .pair_b = pb,
                     .match = match};
    loss_stats st;
    double l = eval(L, &hib, &in, NULL, NULL, dmu, NULL, &st);
    CHECK_CLOSE(l, (4 + 0.25 + 0) / 3, 1e-7);
    CHECK_CLOSE(st.nll, l, 0);
    CHECK(st.a == 0 && st.b == 0 && st.kl == 0);
    /* match: d(d^2)/dz0 = 2 (z0 - z1) = (-4, 0), over 3 pairs */
    CHECK_CLOSE(dmu[0], -4.0 / 3, 1e-6);
    /* non-match: -2 (M - d) (z2 - z3)/d = -2 * 0.5 * (0, -1), over 3 pairs */
    CHECK_CLOSE(dmu[5], 1.0 / 3, 1e-6);
    CHECK_CLOSE(dmu[8], 0, 0);
    CHECK_CLOSE(dmu[11], 0, 0);
    loss_config lc = hib;
    lc.margin = 3;  /* now the third pair (d = 2) is inside the margin: (3 - 2)^2 = 1 */
    l = eval(L, &lc, &in, NULL, NULL, dmu, NULL, NULL);
    CHECK_CLOSE(l, (4 + 2.5 * 2.5 + 1) / 3, 1e-6);
}

static void test_gradients(void)
{
    loss_config lc = hib;
    float params[2];
    /* the learnable a, b away from their init, so that their gradients are generic */
    lc.a0 = 1.7;
    lc.b0 = 0.4;
    const loss_kind *S = loss_find("softcon"), *H = loss_find("contrastive"), *V = loss_find("vib");

    batch bt = make_batch(8, 1, 3, 0, 11);
    S->init_params(&lc, params);
    gradcheck("softcon D=3", S, &lc, &bt, params);
    lc.margin = 1.5;  /* d ranges over about (0.3, 2.5): both sides of the margin */
    gradcheck("contrastive D=3 M=1.5", H, &lc, &bt, params);
    free_batch(&bt);

    lc.beta = 0.3;  /* large enough that the KL gradients matter */
    lc.K = 4;
    bt = make_batch(6, 1, 2, 1, 12);
    V->init_params(&lc, params);
    gradcheck("vib K=4 C=1 D=2", V, &lc, &bt, params);
    free_batch(&bt);
    lc.K = 4;
    bt = make_batch(6, 2, 3, 1, 13);
    gradcheck("vib K=4 C=2 D=3", V, &lc, &bt, params);
    free_batch(&bt);
    lc.K = 6;
    lc.beta = 1e-4;
    bt = make_batch(4, 3, 2, 1, 14);
    gradcheck("vib K=6 C=3 D=2 beta=1e-4", V, &lc, &bt, params);
    free_batch(&bt);
    /* an image in two pairs (its KL counts twice) and a pair of an image with itself */
    lc.K = 8;
    lc.beta = 0.2;
    bt = make_batch(6, 2, 2, 1, 15);
    bt.pa[1] = 0;
    bt.pb[2] = 4;
    bt.pa[2] = 4;
    gradcheck("vib K=8 C=2 shared images", V, &lc, &bt, params);
    free_batch(&bt);
}

/* var -> 0: the samples collapse on the means and VIB's NLL becomes softcon's */
static void test_vib_limits(void)
{
    const loss_kind *S = loss_find("softcon"), *V = loss_find("vib");
    loss_config lc = hib;
    lc.a0 = 1.3;
    lc.b0 = 0.2;
    float params[2];
    V->init_params(&lc, params);
    batch bt = make_batch(8, 1, 2, 1, 21);
    for (int i = 0; i < 16; i++)
        bt.var[i] = 1e-14f;
    loss_stats st;
    double lv = eval(V, &lc, &bt.in, params, NULL, NULL, NULL, &st);
    loss_input pin = bt.in;
    pin.var = NULL;
    double ls = eval(S, &lc, &pin, params, NULL, NULL, NULL, NULL);
    CHECK_CLOSE(st.nll, ls, 1e-6);
    CHECK(lv > st.nll);  /* the KL of a tiny variance is large: -log var */
    CHECK_CLOSE(st.mean_var, 1e-14, 1e-20);
    /* the same with C = 2 identical components */
    batch b2 = make_batch(8, 2, 2, 1, 22);
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 2; j++) {
            b2.mu[(i * 2 + 0) * 2 + j] = b2.mu[(i * 2 + 1) * 2 + j] = bt.mu[i * 2 + j];
            b2.var[(i * 2 + 0) * 2 + j] = b2.var[(i * 2 + 1) * 2 + j] = 1e-14f;
        }
    eval(V, &lc, &b2.in, params, NULL, NULL, NULL, &st);
    CHECK_CLOSE(st.nll, ls, 1e-6);
    free_batch(&b2);

    /* K = 1, C = 1: the loss is the closed form on the sampled points, with eps drawn in
     * (image, dim) order for all images */
    lc.K = 1;
    lc.beta = 0.01;
    for (int i = 0; i < 16; i++)
        bt.var[i] = 0.3f + 0.05f * i;
    rng r;
    rng_init(&r, SEED, STREAM);
    double z[16], want = 0, kl = 0;
    for (int i = 0; i < 16; i++)
        z[i] = bt.mu[i] + sqrt((double)bt.var[i]) * rng_normal(&r);
    double a = loss_softplus(params[0]), b = params[1];
    for (int k = 0; k < 4; k++) {
        double d = loss_dist(z + 4 * k, z + 4 * k + 2, 2), s = -a * d + b;
        want += bt.match[k] ? -log(loss_sigmoid(s)) : -log(loss_sigmoid(-s));
        kl += loss_kl_gauss(bt.mu + 4 * k, bt.var + 4 * k, 2) + loss_kl_gauss(bt.mu + 4 * k + 2, bt.var + 4 * k + 2, 2);
    }
    double got = eval(V, &lc, &bt.in, params, NULL, NULL, NULL, &st);
    CHECK_CLOSE(st.nll, want / 4, 1e-9);
    CHECK_CLOSE(st.kl, kl / 8, 1e-9);
    CHECK_CLOSE(got, (want + 0.01 * kl) / 4, 1e-9);
    /* same rng state, same samples: identical results; another stream differs */
    CHECK(eval(V, &lc, &bt.in, params, NULL, NULL, NULL, NULL) == got);
    rng_init(&r, SEED, STREAM + 1);
    CHECK(V->forward_backward(&lc, &bt.in, params, NULL, NULL, NULL, &r, NULL) != got);
    free_batch(&bt);

    /* the KL of a mixture is the mean of the components' KLs (the documented bound) */
    float mu[8] = {0, 0, 1, -2, 0, 0, 0, 0}, var[8] = {1, 1, 0.5f, 2, 1, 1, 1, 1};
    int32_t pa = 0, pb = 1;
    uint8_t match = 1;
    loss_input in = {.n = 2, .C = 2, .D = 2, .mu = mu, .var = var, .npairs = 1, .pair_a = &pa,
                     .pair_b = &pb, .match = &match};
    lc = hib;
    eval(V, &lc, &in, params, NULL, NULL, NULL, &st);
    CHECK_CLOSE(st.kl, (2.75 / 2 + 0) / 2, 1e-12);
    CHECK_CLOSE(st.mean_var, 8.5 / 8, 1e-7);
}

/* stratified: K/C consecutive samples from each component */
static void test_stratified(void)
{
    int n = 500, C = 2, D = 2, K = 8;
    float *mu = emalloc(sizeof(float) * n * C * D), *var = emalloc(sizeof(float) * n * C * D);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < D; j++) {
            mu[(i * C + 0) * D + j] = j ? 0 : -100;
            mu[(i * C + 1) * D + j] = j ? 0 : 100;
            var[(i * C + 0) * D + j] = var[(i * C + 1) * D + j] = 1;
        }
    double *z = emalloc(sizeof(double) * n * K * D), *eps = emalloc(sizeof(double) * n * K * D);
    rng r;
    rng_init(&r, SEED, STREAM);
    loss_sample(mu, var, n, C, D, K, &r, eps, z);
    int placed = 1, near0 = 0;
    double se = 0, se2 = 0;
    for (int i = 0; i < n; i++)
        for (int k = 0; k < K; k++) {
            double x = z[(i * K + k) * D], c = k < K / 2 ? -100 : 100;
            placed &= fabs(x - c) < 10;
            near0 += x < 0;
            for (int j = 0; j < D; j++) {
                double e = eps[(i * K + k) * D + j];
                se += e;
                se2 += e * e;
            }
        }
    CHECK(placed);
    CHECK(near0 == n * K / 2);
    int N = n * K * D;
    /* statistical (5 sigma), so CHECK rather than CHECK_CLOSE: the largest difference printed
     * at the end stays the one of the exact checks */
    CHECK(fabs(se / N) < 5 / sqrt(N));
    CHECK(fabs(se2 / N - 1) < 5 * sqrt(2.0 / N));
    /* loss_sample draws exactly n K D normals in (image, sample, dim) order */
    rng_init(&r, SEED, STREAM);
    int same = 1;
    for (int t = 0; t < N; t++) {
        double e;
        rng_normals(&r, &e, 1);
        same &= e == eps[t];
    }
    CHECK(same);
    free(z);
    free(eps);
    free(mu);
    free(var);

    /* a match pair, x1 with components at 0 and at 1e4, x2 with both at 0 (tiny variances):
     * with a = 1, b = 0, p = (1/2) sigmoid(0) + (1/2) sigmoid(-1e4) = 1/4 */
    const loss_kind *V = loss_find("vib");
    float m2[8] = {0, 0, 1e4f, 0, 0, 0, 0, 0}, v2[8], dmu[8], dvar[8], dp[2] = {0, 0}, params[2];
    for (int i = 0; i < 8; i++)
        v2[i] = 1e-14f;
    int32_t pa = 0, pb = 1;
    uint8_t match = 1;
    loss_input in = {.n = 2, .C = 2, .D = 2, .mu = m2, .var = v2, .npairs = 1, .pair_a = &pa,
                     .pair_b = &pb, .match = &match};
    loss_stats st;
    V->init_params(&hib, params);
    eval(V, &hib, &in, params, dp, dmu, dvar, &st);
    CHECK_CLOSE(st.nll, log(4), 1e-6);
}

/* d = 1e4: finite loss and gradients, the loss is a d - b */
static void test_huge_distances(void)
{
    const loss_kind *S = loss_find("softcon"), *V = loss_find("vib");
    float params[2];
    S->init_params(&hib, params);
    for (int C = 1; C <= 2; C++) {
        float mu[16], var[16], dmu[16], dvar[16], dp[2] = {0, 0};
        for (int i = 0; i < 4; i++)
            for (int c = 0; c < C; c++) {
                float *m = mu + (i * C + c) * 2;
                m[0] = i % 2 ? 5000 : -5000;
                m[1] = (float)c;
                var[(i * C + c) * 2] = var[(i * C + c) * 2 + 1] = 0.5f;
            }
        int32_t pa[2] = {0, 2}, pb[2] = {1, 3};
        uint8_t match[2] = {1, 0};
        loss_input in = {.n = 4, .C = C, .D = 2, .mu = mu, .var = var, .npairs = 2, .pair_a = pa,
                         .pair_b = pb, .match = match};
        loss_stats st;
        const loss_kind *L = C == 1 ? S : V;
        for (int pass = 0; pass < 2; pass++, L = V) {
            double l = eval(L, &hib, &in, params, dp, dmu, dvar, &st);
            int finite = isfinite(l) && isfinite(dp[0]) && isfinite(dp[1]);
            for (int i = 0; i < 4 * C * 2; i++)
                finite &= isfinite(dmu[i]) && (L == S || isfinite(dvar[i]));
            CHECK(finite);
            /* match: -log sigmoid(-1e4) = 1e4 (+- the sample spread); non-match: ~0 */
            CHECK(fabs(st.nll - 1e4 / 2) < 10);  /* loose: not a precision check */
            CHECK(st.nll > 0);
            /* the match pair pulls image 0 (at x = -5000) towards +x with a unit force (a = 1),
             * over 2 pairs, shared by the C components; vib adds the KL pull beta mu / P */
            double want = -0.5 + (L == V ? hib.beta * -5000 / 2.0 : 0), got = 0;
            for (int c = 0; c < C; c++)
                got += dmu[c * 2];  /* the log-sum-exp weights favour the closest samples */
            CHECK(fabs(got - want) < 0.01);
        }
    }
}

/* misuse dies with exit 1: K not a multiple of C, a pair outside the batch, point loss on C = 2 */
static int dies(const loss_kind *L, const loss_config *lc, const loss_input *in, float *params)
{
    if (check_child()) {
        float g[64], gv[64], dp[2];
        eval(L, lc, in, params, dp, g, gv, NULL);
        _exit(0);
    }
    return check_died();
}

/* vib with a pool of 2 and 3 workers: the same bytes as alone (pairs and images handed out in
 * tasks fixed by the batch: 128 pairs at D = 96, 6 x 128 x 64 x 96 = 4.7 Mflop of pair work, over
 * PAR_MIN_WORK); and with an image in two pairs (the pair tasks then run in the caller) */
static void test_vib_pool(void)
{
    const loss_kind *V = loss_find("vib");
    int n = 256, C = 2, D = 96, k = n * C * D;
    batch bt = make_batch(n, C, D, 1, 11);
    float params[2], *dmu[3], *dvar[3], dp[3][2];
    double lv[3];
    V->init_params(&hib, params);
    for (int twice = 0; twice < 2; twice++) {
        if (twice)
            bt.pb[5] = bt.pa[9]; /* image 18 in pairs 5 and 9 */
        for (int w = 0; w < 3; w++) {
            par_pool *pool = w ? par_new(w + 1) : NULL;
            loss_input in = bt.in;
            in.pool = pool;
            dmu[w] = emalloc(sizeof(float) * k), dvar[w] = emalloc(sizeof(float) * k);
            dp[w][0] = dp[w][1] = 0;
            loss_stats st;
            lv[w] = eval(V, &hib, &in, params, dp[w], dmu[w], dvar[w], &st);
            par_free(pool);
        }
        for (int w = 1; w < 3; w++)
            CHECK(lv[w] == lv[0] && !memcmp(dp[w], dp[0], sizeof dp[0]) && !memcmp(dmu[w], dmu[0], sizeof(float) * k) &&
                  !memcmp(dvar[w], dvar[0], sizeof(float) * k));
        CHECK(isfinite(lv[0]) && dp[0][0] != 0);
        for (int w = 0; w < 3; w++)
            free(dmu[w]), free(dvar[w]);
    }
    free_batch(&bt);
    printf("vib on 1, 2 and 3 workers: the same bytes\n");
}

static void test_misuse(void)
{
    util_init("test_loss");
    const loss_kind *V = loss_find("vib"), *S = loss_find("softcon");
    float params[2];
    V->init_params(&hib, params);
    batch bt = make_batch(4, 3, 2, 1, 31);
    loss_config lc = hib;  /* K = 8, C = 3 */
    CHECK(dies(V, &lc, &bt.in, params));
    lc.K = 6;
    CHECK(!dies(V, &lc, &bt.in, params));
    bt.pb[1] = 4;
    CHECK(dies(V, &lc, &bt.in, params));
    bt.pb[1] = 3;
    CHECK(dies(S, &lc, &bt.in, params));
    bt.in.var = NULL;
    CHECK(dies(V, &lc, &bt.in, params));
    free_batch(&bt);
}

/* one HIB batch: 128 pairs, K = 8, D = 2, C = 1 and 4 */
static void bench(void)
{
    const loss_kind *V = loss_find("vib");
    float params[2], dp[2] = {0, 0};
    V->init_params(&hib, params);
    for (int C = 1; C <= 4; C *= 4) {
        batch bt = make_batch(256, C, 2, 1, 41);
        size_t m = (size_t)256 * C * 2;
        float *dmu = emalloc(sizeof(float) * m), *dvar = emalloc(sizeof(float) * m);
        rng r;
        rng_init(&r, SEED, STREAM);
        int iters = 200;
        double t0 = now_seconds(), sum = 0;
        for (int it = 0; it < iters; it++)
            sum += V->forward_backward(&hib, &bt.in, params, dp, dmu, dvar, &r, NULL);
        double us = (now_seconds() - t0) / iters * 1e6;
        printf("vib forward+backward, 128 pairs, K = 8, D = 2, C = %d: %.0f us per batch (loss %.3f)\n", C,
               us, sum / iters);
        CHECK(isfinite(sum));
        free(dmu);
        free(dvar);
        free_batch(&bt);
    }
}

/* the episode losses: hand-derived values, agreement with lib/proto (an independent
 * implementation of the SPE posterior), gradients against finite differences */
static void test_episodes(void)
{
    const loss_kind *P = loss_find("proto"), *E = loss_find("spe");
    CHECK(P && E);
    if (!P || !E)
        return;
    CHECK(P->batches == LOSS_EPISODES && E->batches == LOSS_EPISODES);
    CHECK(P->nparams == 0 && E->nparams == 1 && !P->needs_var && E->needs_var && E->default_K == 1);
    loss_config lc = loss_config_new(E);
    loss_stats st;

    /* proto by hand, D = 1: class 5 has support 0 and 2 (m = 1), class 9 support 5 (m = 5);
     * a query of class 5 at 1.5: s = (-0.25, -12.25), loss = log(1 + e^-12); a query of class 9
     * at 2.9: s = (-3.61, -4.41), loss = log(1 + e^0.8); mean of the two */
    float mu[5] = {0, 1.5f, 5, 2, 2.9f};
    int32_t cls[5] = {5, 5, 9, 5, 9};
    uint8_t q[5] = {0, 1, 0, 0, 1};
    loss_input in = {.n = 5, .C = 1, .D = 1, .mu = mu, .cls = cls, .query = q};
    float dmu[5];
    double l = eval(P, &lc, &in, NULL, NULL, dmu, NULL, &st);
    double want = (log1p(exp(-12.0)) + log1p(exp(0.8))) / 2;
    CHECK_CLOSE(l, want, 1e-6);
    CHECK_CLOSE(st.acc, 0.5, 0);  /* the class-9 query at 2.9 is nearer m = 1 */
    /* dL/dq for the second query (target 9): (1/2) sum_y (p_y - [y = t]) (-2) (q - m_y)
     * = (1/2) (p_5 (-2)(1.9) + (p_9 - 1)(-2)(-2.1)) = (1/2) (-3.8 p_5 - 4.2 p_5) = -4 p_5 */
    double p5 = 1 / (1 + exp(-0.8)), want_dq = -4 * p5;
    CHECK_CLOSE(dmu[4], want_dq, 1e-6);

    /* spe: every var = 0 but one, the naive sampler and K = 1: z = mu, so the loss is
     * -log softmax_y log N(mu; m_y, V_y) exactly, with lib/proto's prototypes */
    float var[5] = {0, 0, 0.5f, 0.2f, 0};
    in.var = var;
    float gamma = 0.3f;
    lc.K = 1;
    loss_set_text(&lc, E, "sampler", "naive");
    l = eval(E, &lc, &in, &gamma, NULL, NULL, NULL, &st);
    proto_set ps;
    proto_init(&ps, 2, 1);
    double smu[3] = {0, 5, 2}, svar[3] = {0, 0.5, 0.2}, z, dens[2], pp[2];
    int lab[3] = {0, 1, 0};
    double se2 = loss_softplus(gamma);
    proto_fit_spe(&ps, smu, svar, lab, 3, se2);
    want = 0;
    for (int k = 0; k < 2; k++) {
        z = k ? 2.9 : 1.5;
        proto_spe_logdens(&ps, &z, dens);
        proto_softmax(dens, 2, pp);
        want -= log(pp[k]) / 2;
    }
    CHECK_CLOSE(l, want, 1e-6);
    CHECK_CLOSE(st.se2, se2, 1e-7);

    /* the two samplers estimate the same p(t|x,S) (lib/proto's naive sampler, many samples) */
    float qv[5] = {0.1f, 0.8f, 0.3f, 0.2f, 0.6f};
    in.var = qv;
    double svar2[3] = {0.1, 0.3, 0.2};
    proto_fit_spe(&ps, smu, svar2, lab, 3, se2);
    int K = 20000;
    double *eps = emalloc(sizeof(double) * K);
    rng r;
    rng_init(&r, 5, 5);
    for (int k = 0; k < K; k++)
        eps[k] = rng_normal(&r);
    double qmu[2] = {1.5, 2.9}, qvar[2] = {0.8, 0.6}, pt[2];
    for (int k = 0; k < 2; k++) {
        proto_spe_naive(&ps, &qmu[k], &qvar[k], eps, K, pp);
        pt[k] = pp[k];
    }
    free(eps);
    lc.K = K;
    for (int smp = 0; smp < 2; smp++) {
        loss_set(&lc, E, "sampler", smp); /* intersection, naive */
        /* one query at a time (the support, then that query): the loss is -log of the
         * estimate of p(t|x,S) */
        for (int k = 0; k < 2; k++) {
            int j = k ? 4 : 1;
            float m1[4] = {mu[0], mu[2], mu[3], mu[j]}, v1[4] = {qv[0], qv[2], qv[3], qv[j]};
            int32_t c1[4] = {cls[0], cls[2], cls[3], cls[j]};
            uint8_t q1[4] = {0, 0, 0, 1};
            loss_input i1 = {.n = 4, .C = 1, .D = 1, .mu = m1, .var = v1, .cls = c1, .query = q1};
            l = eval(E, &lc, &i1, &gamma, NULL, NULL, NULL, NULL);
            CHECK_CLOSE(exp(-l), pt[k], 0.01 * pt[k] + 0.002);
        }
    }
    proto_free(&ps);

    /* gradients against finite differences */
    batch bt = make_episode(4, 3, 2, 2, 0, 41);
    lc = loss_config_new(E);
    gradcheck("proto 4 ways D=2", P, &lc, &bt, NULL);
    free_batch(&bt);
    bt = make_episode(3, 2, 2, 3, 0, 42);
    gradcheck("proto 3 ways D=3", P, &lc, &bt, NULL);
    free_batch(&bt);
    float gp[1] = {0.4f};
    bt = make_episode(4, 3, 2, 2, 1, 43);
    lc.K = 1;
    gradcheck("spe intersection K=1 D=2", E, &lc, &bt, gp);
    lc.K = 3;
    gradcheck("spe intersection K=3 D=2", E, &lc, &bt, gp);
    loss_set_text(&lc, E, "sampler", "naive");
    lc.K = 4;
    gradcheck("spe naive K=4 D=2", E, &lc, &bt, gp);
    free_batch(&bt);
    bt = make_episode(3, 2, 3, 3, 1, 44);
    gp[0] = -1.2f;
    loss_set_text(&lc, E, "sampler", "intersection");
    lc.K = 2;
    gradcheck("spe intersection K=2 D=3", E, &lc, &bt, gp);
    /* misuse: a query class without support, no queries, a point batch for spe */
    uint8_t keep[15];
    memcpy(keep, bt.query, 15);
    for (int i = 0; i < 15; i++)
        if (bt.cls[i] == 40)
            bt.query[i] = 1;  /* class 40 loses its support images */
    CHECK(dies(E, &lc, &bt.in, gp));
    CHECK(dies(P, &lc, &bt.in, gp));
    memcpy(bt.query, keep, 15);
    CHECK(!dies(E, &lc, &bt.in, gp));
    bt.in.var = NULL;
    CHECK(dies(E, &lc, &bt.in, gp));
    bt.in.query = NULL;
    CHECK(dies(P, &lc, &bt.in, gp));
    free_batch(&bt);
}

/* the settings each loss has (issue 22: train.c and ckpt.c name no loss; issue 45: each declared
 * once, in its loss's table): the owners of each option, the defaults a loss derives (settle) and
 * its checks; by hand from the papers' choices in lib/training/loss_*.c */
static void test_owned_settings(void)
{
    char who[256];
    CHECK(!strcmp(loss_owners("se2-0", who, sizeof who), "spe"));
    CHECK(!strcmp(loss_owners("sampler", who, sizeof who), "spe"));
    CHECK(!strcmp(loss_owners("mining", who, sizeof who), "triplet and hetriplet"));
    CHECK(!strcmp(loss_owners("ce-scale0", who, sizeof who), "sampled_softmax, snm, cesoftmax, cenm and cemargin"));
    CHECK(!strcmp(loss_owners("ce-topk", who, sizeof who), "snm"));
    CHECK(!strcmp(loss_owners("ce-frac", who, sizeof who), "cenm"));
    CHECK(!strcmp(loss_owners("fstat-dims", who, sizeof who), "fstat"));
    CHECK(!strcmp(loss_owners("triplet", who, 8), "triplet")); /* truncated, terminated */
    CHECK(!strcmp(loss_owners("nonsense", who, sizeof who), ""));
    CHECK(!strcmp(loss_default_name(0), "softcon") && !strcmp(loss_default_name(1), "vib"));
    /* every loss has the five common settings first; every two-tower loss has the CE keys (each
     * checkpoint carries the three), and only they */
    for (int i = 0; loss_kinds[i]; i++) {
        const loss_kind *L = loss_kinds[i];
        CHECK(loss_setting_index(L, "K") == LOSS_K && loss_setting_index(L, "b0") == LOSS_B0);
        CHECK((loss_setting_index(L, "ce_topk") >= 0) == L->needs_query);
        CHECK(loss_nsettings(L) - LOSS_NCOMMON <= LOSS_MAX_OWN);
        /* each default of the table is a value of its setting (or derived), options unique */
        for (int j = 0; j < loss_nsettings(L); j++) {
            const setting *s = loss_setting(L, j);
            if (s->type == SETTING_NONE)
                continue;
            CHECK(isnan(s->def) || setting_valid(s, s->def));
            CHECK(s->option || s->key);
            CHECK(!s->option || loss_setting_index(L, s->option) == j);
        }
    }
    /* defaults: K 8 (spe 1), fstat 2, the CE scale 10, top-k 32, fraction 0.5, triplet soft semihard */
    const loss_kind *spe = loss_find("spe"), *fs = loss_find("fstat"), *cm = loss_find("cemargin");
    const loss_kind *snm = loss_find("snm"), *tr = loss_find("triplet");
    loss_config c = loss_config_new(spe);
    CHECK(c.K == 1 && loss_config_new(loss_find("vib")).K == 8 && c.given == 0);
    CHECK(loss_value(&c, spe, "sampler") == 0 && isnan(loss_value(&c, spe, "se2-0")));
    c = loss_config_new(snm);
    CHECK(loss_value(&c, snm, "ce-scale0") == 10 && loss_value(&c, snm, "ce_topk") == 32);
    CHECK(loss_value(&c, snm, "ce_frac") == 0.5);
    c = loss_config_new(tr);
    CHECK(loss_value(&c, tr, "triplet") == 0 && loss_value(&c, tr, "mining") == 2); /* soft, semihard */
    loss_set_text(&c, tr, "mining", "hard");
    CHECK(loss_value(&c, tr, "mining") == 1 && LOSS_GIVEN(&c, loss_setting_index(tr, "mining")));
    /* spe: gamma = shots x D x 0.01 unless given (shots 0 counts as 1); --se2-0 gives
     * softplus^-1(s_e^2); a gamma read from a checkpoint stays */
    c = loss_config_new(spe);
    CHECK(spe->settle(&c, 2, 5) == NULL);
    CHECK_CLOSE(loss_value(&c, spe, "gamma0"), 0.1, 1e-15);
    c = loss_config_new(spe);
    spe->settle(&c, 3, 0);
    CHECK_CLOSE(loss_value(&c, spe, "gamma0"), 0.03, 1e-15);
    c = loss_config_new(spe);
    loss_set(&c, spe, "se2-0", log(2.0)); /* softplus(0) = log 2 */
    spe->settle(&c, 3, 5);
    CHECK_CLOSE(loss_value(&c, spe, "gamma0"), 0, 1e-15);
    c = loss_config_new(spe);
    loss_set(&c, spe, "gamma0", 0.7);
    spe->settle(&c, 3, 5);
    CHECK(loss_value(&c, spe, "gamma0") == 0.7);
    /* fstat: d = 2, or D when D < 2; a d above D refused when given */
    c = loss_config_new(fs);
    CHECK(fs->settle(&c, 8, 0) == NULL && loss_value(&c, fs, "fstat-dims") == 2);
    c = loss_config_new(fs);
    CHECK(fs->settle(&c, 1, 0) == NULL && loss_value(&c, fs, "fstat-dims") == 1);
    loss_set(&c, fs, "fstat-dims", 5);
    const char *m = fs->settle(&c, 4, 0);
    CHECK(m && strstr(m, "--fstat-dims 5") && strstr(m, "4 dimensions"));
    /* cemargin: m = 2 unless given; an integer 1..8 */
    c = loss_config_new(cm);
    CHECK(cm->settle(&c, 4, 0) == NULL && c.margin == 2);
    loss_set(&c, cm, "margin", 8);
    CHECK(cm->settle(&c, 4, 0) == NULL && c.margin == 8);
    loss_set(&c, cm, "margin", 1.5);
    CHECK(cm->settle(&c, 4, 0) != NULL);
    loss_set(&c, cm, "margin", 9);
    CHECK(cm->settle(&c, 4, 0) != NULL);
    loss_set(&c, cm, "margin", 1);
    CHECK(cm->settle(&c, 4, 0) == NULL && c.margin == 1);
    /* the other losses derive nothing */
    CHECK(loss_find("vib")->settle == NULL && tr->settle == NULL);
}

int main(void)
{
    hib = loss_config_new(loss_find("vib"));
    test_registry();
    test_owned_settings();
    test_scalars();
    test_softcon_values();
    test_contrastive_values();
    test_gradients();
    test_vib_limits();
    test_stratified();
    test_huge_distances();
    test_misuse();
    test_vib_pool();
    test_episodes();
    bench();
    return check_done("test_loss");
}
