/* ce: the two-tower losses (sampled_softmax, snm, cesoftmax, cenm, cemargin): hand-derived values
 * on tiny D = 2 and D = 4 batches, the masking of same-class pairs, the top-k and top-fraction
 * selections and their tie rule, the values against a brute-force reference (full sort, plain
 * exp sums) on random P x K batches, central finite-difference gradient checks in mu, qmu and the
 * scale parameter (batches chosen so that no selection boundary lies within reach of the step),
 * misuse, and the time of one n = 256, D = 16 batch. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "loss.h"
#include "loss_util.h"
#include "rng.h"
#include "util.h"

#define FD_H 1e-4 /* finite-difference step, as in test_loss.c */

enum { SAMPLED, SNM, CESOFTMAX, CENM, CEMARGIN, NFORMS };
static const char *const names[NFORMS] = {"sampled_softmax", "snm", "cesoftmax", "cenm", "cemargin"};

/* the five losses' settings are laid out alike (lib/training/loss_ce.c): set by key through snm's table */
#define SET(lc, key, v) loss_set(&(lc), loss_find("snm"), key, v)

static loss_config config(int topk, double frac, double m)
{
    loss_config lc = loss_config_new(loss_find("snm"));
    SET(lc, "ce_topk", topk);
    SET(lc, "ce_frac", frac);
    lc.margin = m;
    return lc;
}

/* the loss of form f; dqmu goes through in->dqmu */
static double eval(int f, const loss_config *cfg, const loss_input *in, float log_scale, float *dparams, float *dmu,
                   loss_stats *st)
{
    rng r;
    rng_init(&r, 714, 0);
    float p[1] = {log_scale};
    return loss_find(names[f])->forward_backward(cfg, in, p, dparams, dmu, NULL, &r, st);
}

static loss_input input(int n, int D, const float *qmu, const float *mu, const int32_t *cls)
{
    return (loss_input){.n = n, .C = 1, .D = D, .mu = mu, .cls = cls, .qmu = qmu};
}

static void test_registry(void)
{
    for (int f = 0; f < NFORMS; f++) {
        const loss_kind *L = loss_find(names[f]);
        CHECK(L != NULL);
        if (!L)
            continue;
        CHECK(L->needs_query == 1 && L->needs_var == 0 && L->batches == LOSS_GROUPS && L->max_C == 1);
        CHECK(L->nparams == 1 && !strcmp(L->param_names[0], "ce.log_scale") && L->param_names[1] == NULL);
        CHECK(L->help && L->init_params && L->forward_backward);
        float p = 0;
        loss_config lc = loss_config_new(L);
        SET(lc, "ce_scale0", 7.5);
        L->init_params(&lc, &p);
        CHECK_CLOSE(exp(p), 7.5, 1e-6);
    }
    for (int f = 0; f < NFORMS; f++) {
        const loss_kind *L = loss_find(names[f]);
        loss_config lc = loss_config_new(L);
        CHECK_CLOSE(loss_value(&lc, L, "ce_scale0"), 10, 0);
        CHECK(loss_value(&lc, L, "ce_topk") == 32);
        CHECK_CLOSE(loss_value(&lc, L, "ce_frac"), 0.5, 0);
        /* the three keys in every two-tower loss's table, in the same slots; --ce-topk snm's
         * option only, --ce-frac cenm's */
        CHECK(loss_setting_index(L, "ce_scale0") == LOSS_OWN(0) && loss_setting_index(L, "ce_topk") == LOSS_OWN(1));
        CHECK(loss_setting_index(L, "ce_frac") == LOSS_OWN(2));
        CHECK((loss_setting_index(L, "ce-topk") >= 0) == (f == SNM));
        CHECK((loss_setting_index(L, "ce-frac") >= 0) == (f == CENM));
    }
}

/* Batch A: D = 2, three classes, images d = (1,0), (0,1), (-1,0) and queries the same directions
 * with other lengths (the normalisation must remove them): cosines
 *   c = [ 1  0 -1 ]
 *       [ 0  1  0 ]
 *       [-1  0  1 ]
 * scale s = exp(log 2) (the float nearest log 2): every positive score is s.
 *   sampled: l_0 = l_2 = log(1 + e^{-s} + e^{-2s}), l_1 = log(1 + 2 e^{-s})
 *   snm, k = 1: the top negative of every query scores 0: l = log(1 + e^{-s}) for all three
 *     (query 1's two negatives tie at 0: image 0 is taken, test_ties)
 *   snm, k = 2 = all negatives: the sampled value
 *   cesoftmax: the 6 off-diagonal pairs score 0, -s, 0, 0, -s, 0: S = 4 + 2 e^{-s},
 *     l = log(1 + S e^{-s}) for every query
 *   cenm, frac 0.5: t = 3 of M = 6: three of the four zeros: l = log(1 + 3 e^{-s});
 *     frac 0.6: t = ceil(3.6) = 4: log(1 + 4 e^{-s}); frac 0.7: t = 5: log(1 + (4 + e^{-s}) e^{-s})
 *   cemargin: every positive is at theta = 0, psi(0) = 1 for every m: the sampled value
 * acc: query 0's best image is 0 (right), query 1's is 1, query 2's is 2: 1. */
static void test_values_a(void)
{
    float qmu[6] = {3, 0, 0, 0.5f, -2, 0}, mu[6] = {1, 0, 0, 4, -1, 0};
    int32_t cls[3] = {7, 3, 5};
    loss_input in = input(3, 2, qmu, mu, cls);
    float ls = (float)log(2.0);
    double s = exp((double)ls), e1 = exp(-s), e2 = exp(-2 * s);
    double sampled = (2 * log(1 + e1 + e2) + log(1 + 2 * e1)) / 3;
    loss_stats st;
    loss_config lc = config(1, 0.5, 2);
    double v = eval(SAMPLED, &lc, &in, ls, NULL, NULL, &st);
    CHECK_CLOSE(v, sampled, 1e-9);
    CHECK_CLOSE(st.nll, sampled, 1e-9);
    CHECK_CLOSE(st.a, s, 1e-12);
    CHECK_CLOSE(st.acc, 1, 0);
    CHECK(isnan(st.b) && isnan(st.se2) && st.kl == 0 && st.mean_var == 0);
    printf("batch A: sampled_softmax %.9f (hand %.9f)\n", v, sampled);
    v = eval(SNM, &lc, &in, ls, NULL, NULL, NULL);
    CHECK_CLOSE(v, log(1 + e1), 1e-9);
    printf("batch A: snm k=1         %.9f (hand %.9f)\n", v, log(1 + e1));
    SET(lc, "ce_topk", 2);
    CHECK_CLOSE(eval(SNM, &lc, &in, ls, NULL, NULL, NULL), sampled, 1e-9);
    SET(lc, "ce_topk", 100);
    CHECK_CLOSE(eval(SNM, &lc, &in, ls, NULL, NULL, NULL), sampled, 1e-9);
    double ce = log(1 + (4 + 2 * e1) * e1);
    v = eval(CESOFTMAX, &lc, &in, ls, NULL, NULL, &st);
    CHECK_CLOSE(v, ce, 1e-9);
    CHECK_CLOSE(st.acc, 1, 0);
    printf("batch A: cesoftmax       %.9f (hand %.9f)\n", v, ce);
    double fr[3] = {0.5, 0.6, 0.7}, want[3] = {log(1 + 3 * e1), log(1 + 4 * e1), log(1 + (4 + e1) * e1)};
    for (int i = 0; i < 3; i++) {
        SET(lc, "ce_frac", fr[i]);
        v = eval(CENM, &lc, &in, ls, NULL, NULL, NULL);
        CHECK_CLOSE(v, want[i], 1e-9);
        printf("batch A: cenm frac %.1f   %.9f (hand %.9f)\n", fr[i], v, want[i]);
    }
    SET(lc, "ce_frac", 1);
    CHECK_CLOSE(eval(CENM, &lc, &in, ls, NULL, NULL, NULL), ce, 1e-9);
    for (int m = 1; m <= 4; m++) {
        lc.margin = m;
        CHECK_CLOSE(eval(CEMARGIN, &lc, &in, ls, NULL, NULL, NULL), sampled, 1e-9);
    }
    /* scale 1 (log_scale 0): sampled = (2 log(1 + e^-1 + e^-2) + log(1 + 2/e)) / 3 */
    CHECK_CLOSE(eval(SAMPLED, &lc, &in, 0, NULL, NULL, NULL),
                (2 * log(1 + exp(-1) + exp(-2)) + log(1 + 2 * exp(-1))) / 3, 1e-9);
    /* a large scale: the log-sum-exp keeps it finite: s = e^7 = 1097: every term ~ e^{-s} ~ 0;
     * with the images reversed (d_k -> -d_k) every positive scores -s: query 0's negatives score
     * 0 and s: l_0 = log(1 + (1 + e^s) e^s) ~ 2s = l_2; query 1's two negatives 0: l_1 = log(1 +
     * 2 e^s) ~ s + log 2: the mean (5s + log 2) / 3 */
    float big = 7, dg[6];
    double sb = exp((double)big);
    CHECK_CLOSE(eval(SAMPLED, &lc, &in, big, NULL, NULL, NULL), 0, 1e-12);
    float rev[6] = {-1, 0, 0, -4, 1, 0};
    loss_input ir = input(3, 2, qmu, rev, cls);
    float dp = 0;
    v = eval(SAMPLED, &lc, &ir, big, &dp, dg, NULL);
    CHECK_CLOSE(v, (5 * sb + log(2.0)) / 3, 1e-9 * sb);
    CHECK(isfinite(dp));
    for (int i = 0; i < 6; i++)
        CHECK(isfinite(dg[i]));
}

/* Batch B (cemargin): D = 2, images d = (1,0), (0,1), (0,-1); queries (3,4), (-4,3), (3,4)
 * (norm 5): cosines
 *   c = [ 0.6  0.8 -0.8 ]
 *       [-0.8  0.6 -0.6 ]
 *       [ 0.6  0.8 -0.8 ]
 * m = 2: psi(c) = cos 2theta = 2c^2 - 1 for theta <= 90 deg (c >= 0), -(2c^2 - 1) - 2 beyond:
 *   P / s = psi(0.6) = -0.28, psi(0.6) = -0.28, psi(-0.8) = -(0.28) - 2 = -2.28
 *   l_0 = log(1 + (e^{0.8s} + e^{-0.8s}) e^{0.28s}), l_1 = log(1 + (e^{-0.8s} + e^{-0.6s}) e^{0.28s}),
 *   l_2 = log(1 + (e^{0.6s} + e^{0.8s}) e^{2.28s})
 * m = 3: psi(0.6) = cos 3theta = 4c^3 - 3c = -0.936 (theta = 53 deg < 60); psi(-0.8): theta =
 *   143 deg in [120, 180]: k = 2, cos 3theta - 4 = 4(-0.512) + 2.4 - 4 = -3.648
 * m = 1: psi(c) = c, the sampled value l_0 = log(1 + (e^{0.8s} + e^{-0.8s}) e^{-0.6s}), ... */
static void test_values_b(void)
{
    float qmu[6] = {3, 4, -4, 3, 3, 4}, mu[6] = {1, 0, 0, 1, 0, -1};
    int32_t cls[3] = {0, 1, 2};
    loss_input in = input(3, 2, qmu, mu, cls);
    float ls = 0.5f;
    double s = exp(0.5);
    double p2[3] = {-0.28, -0.28, -2.28}, p3[3] = {-0.936, -0.936, -3.648}, p1[3] = {0.6, 0.6, -0.8};
    double neg[3][2] = {{0.8, -0.8}, {-0.8, -0.6}, {0.6, 0.8}};
    double *ps[3] = {p1, p2, p3};
    for (int m = 1; m <= 3; m++) {
        double want = 0;
        for (int j = 0; j < 3; j++)
            want += log(1 + (exp(neg[j][0] * s) + exp(neg[j][1] * s)) * exp(-ps[m - 1][j] * s)) / 3;
        loss_config lc = config(1, 0.5, m);
        loss_stats st;
        double v = eval(CEMARGIN, &lc, &in, ls, NULL, NULL, &st);
        /* float inputs: cosines within ~1e-7 */
        CHECK_CLOSE(v, want, 1e-6);
        printf("batch B: cemargin m=%d    %.9f (hand %.9f)\n", m, v, want);
        /* acc uses the plain cosines: query 0's best is image 1 (wrong), query 1's image 1
         * (right), query 2's image 1 (wrong) */
        CHECK_CLOSE(st.acc, 1.0 / 3, 1e-15);
    }
    loss_config lc = config(1, 0.5, 1);
    CHECK_CLOSE(eval(CEMARGIN, &lc, &in, ls, NULL, NULL, NULL), eval(SAMPLED, &lc, &in, ls, NULL, NULL, NULL), 1e-12);
}

/* Masking: D = 2, images and queries at 0, 90, 180, 270 degrees (q_j = d_j): c_jj = 1, c = 0 between
 * neighbours, -1 between opposites. Classes (5, 5, 9, 9): the pairs (0,1), (1,0), (2,3), (3,2)
 * (cosine 0) are matches, masked; counting them as negatives (classes all distinct) changes the
 * value. Scale s = 2 (log_scale = log 2 in float).
 *   sampled: masked, each query keeps one 0 and one -1: log(1 + e^{-s} + e^{-2s});
 *     unmasked: 0, 0, -1: log(1 + 2 e^{-s} + e^{-2s})
 *   snm k = 2: masked = all its negatives: the sampled value; unmasked: two zeros: log(1 + 2e^{-s})
 *   cesoftmax: masked, the 8 non-matching pairs: 4 zeros and 4 at -1: log(1 + (4 + 4e^{-s}) e^{-s});
 *     unmasked, 12 pairs: 8 zeros: log(1 + (8 + 4e^{-s}) e^{-s})
 *   cenm frac 0.5: masked t = 4 of 8: the 4 zeros: log(1 + 4 e^{-s}); unmasked t = 6 of 12: six of
 *     the 8 zeros: log(1 + 6 e^{-s})
 *   cemargin: psi(1) = 1: the sampled values */
static void test_masking(void)
{
    float q[8] = {2, 0, 0, 2, -2, 0, 0, -2}, d[8] = {1, 0, 0, 1, -1, 0, 0, -1};
    int32_t masked[4] = {5, 5, 9, 9}, distinct[4] = {5, 6, 9, 10};
    float ls = (float)log(2.0);
    double s = exp((double)ls), e1 = exp(-s), e2 = exp(-2 * s);
    double want_m[NFORMS] = {log(1 + e1 + e2), log(1 + e1 + e2), log(1 + (4 + 4 * e1) * e1), log(1 + 4 * e1),
                             log(1 + e1 + e2)};
    double want_u[NFORMS] = {log(1 + 2 * e1 + e2), log(1 + 2 * e1), log(1 + (8 + 4 * e1) * e1), log(1 + 6 * e1),
                             log(1 + 2 * e1 + e2)};
    loss_config lc = config(2, 0.5, 2);
    for (int f = 0; f < NFORMS; f++) {
        loss_input im = input(4, 2, q, d, masked), iu = input(4, 2, q, d, distinct);
        double vm = eval(f, &lc, &im, ls, NULL, NULL, NULL), vu = eval(f, &lc, &iu, ls, NULL, NULL, NULL);
        CHECK_CLOSE(vm, want_m[f], 1e-9);
        CHECK_CLOSE(vu, want_u[f], 1e-9);
        CHECK(fabs(vm - vu) > 0.02);
        printf("masking: %-15s masked %.9f (hand %.9f), counted %.9f (hand %.9f)\n", names[f], vm, want_m[f], vu,
               want_u[f]);
    }
}

/* A masked pair plays no part: D = 5, images e_0 .. e_3 (the fifth dimension is no image's), so
 * c_jk = qmu_jk / |qmu_j|. Query 0 = (0.5, x, 0.1, -0.3, r) with r = sqrt(1 - 0.35 - x^2): its norm
 * stays 1 and x = c_01 is the only score that changes with x. With classes (5, 5, 9, 9) the pair
 * (0, 1) is masked: every loss is the same for x = 0.7 (above query 0's positive 0.5, so it would
 * top every selection) and x = -0.2; with classes all distinct it is a negative and the loss
 * changes. */
static void test_mask_pair(void)
{
    float q[20] = {0.5f, 0.7f, 0.1f, -0.3f, 0.4f, /* x = 0.7, r = sqrt(0.16) */
                   0.2f, 0.6f, -0.4f, 0.1f, 0.3f, 0.4f, -0.1f, 0.5f, 0.2f, 0.1f, -0.3f, 0.2f, 0.3f, 0.6f, 0.2f};
    float d[20] = {1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1, 0};
    float q2[20];
    memcpy(q2, q, sizeof q);
    q2[1] = -0.2f;
    q2[4] = (float)sqrt(1 - 0.35 - 0.04);
    int32_t masked[4] = {5, 5, 9, 9}, distinct[4] = {5, 6, 9, 10};
    loss_config lc = config(2, 0.5, 2);
    float ls = (float)log(3.0);
    for (int f = 0; f < NFORMS; f++) {
        loss_input a = input(4, 5, q, d, masked), b = input(4, 5, q2, d, masked);
        double va = eval(f, &lc, &a, ls, NULL, NULL, NULL), vb = eval(f, &lc, &b, ls, NULL, NULL, NULL);
        CHECK_CLOSE(va, vb, 1e-6);
        a.cls = b.cls = distinct;
        double ua = eval(f, &lc, &a, ls, NULL, NULL, NULL), ub = eval(f, &lc, &b, ls, NULL, NULL, NULL);
        CHECK(fabs(ua - ub) > 0.05);
        printf("masking: %-15s c_01 = 0.7 -> -0.2: masked %.9f -> %.9f, counted %.6f -> %.6f\n", names[f], va, vb,
               ua, ub);
    }
}

/* Batch C (selections): D = 4, images the unit vectors e_k, classes distinct, queries of norm 1,
 * so c_jk = qmu_jk:
 *   q_0 = ( 0.5,  0.1,  0.7, -0.5)   positive 0.5, negatives 0.1, 0.7, -0.5
 *   q_1 = (-0.5,  0.7,  0.1,  0.5)   positive 0.7, negatives -0.5, 0.1, 0.5
 *   q_2 = ( 0.2,  0.4,  0.8, -0.4)   positive 0.8, negatives 0.2, 0.4, -0.4
 *   q_3 = ( 0.7,  0.1, -0.1,  0.7)   positive 0.7, negatives 0.7, 0.1, -0.1
 * snm k = 1: l = log(1 + e^{s(a - p)}): a - p = 0.2, -0.2, -0.4, 0
 * snm k = 2: l = log(1 + e^{s(a - p)} + e^{s(b - p)}): (0.2, -0.4), (-0.2, -0.6), (-0.4, -0.6), (0, -0.6)
 * cenm: the 12 negatives sorted: 0.7 (0,2), 0.7 (3,0), 0.5 (1,3), 0.4 (2,1), 0.2 (2,0), 0.1 (0,1),
 *   0.1 (1,2), 0.1 (3,1), -0.1, -0.4, -0.5, -0.5; frac 0.25: t = 3: S = 2e^{0.7s} + e^{0.5s};
 *   frac 0.5: t = 6: S + e^{0.4s} + e^{0.2s} + e^{0.1s} (one of the three at 0.1: float rounding
 *   of the normalisation, not the tie rule, orders them; the value is the same); l_j =
 *   log(1 + S e^{-s p_j}) */
static const float sel_q[16] = {0.5f, 0.1f, 0.7f, -0.5f, -0.5f, 0.7f, 0.1f, 0.5f,
                                0.2f, 0.4f, 0.8f, -0.4f, 0.7f, 0.1f, -0.1f, 0.7f};
static const float sel_d[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};

static void test_selection(void)
{
    int32_t cls[4] = {0, 1, 2, 3};
    loss_input in = input(4, 4, sel_q, sel_d, cls);
    float ls = (float)log(3.0);
    double s = exp((double)ls);
    double k1[4] = {0.2, -0.2, -0.4, 0}, k2[4][2] = {{0.2, -0.4}, {-0.2, -0.6}, {-0.4, -0.6}, {0, -0.6}};
    double w1 = 0, w2 = 0;
    for (int j = 0; j < 4; j++) {
        w1 += log(1 + exp(s * k1[j])) / 4;
        w2 += log(1 + exp(s * k2[j][0]) + exp(s * k2[j][1])) / 4;
    }
    loss_config lc = config(1, 0.25, 1);
    double v1 = eval(SNM, &lc, &in, ls, NULL, NULL, NULL);
    SET(lc, "ce_topk", 2);
    double v2 = eval(SNM, &lc, &in, ls, NULL, NULL, NULL);
    CHECK_CLOSE(v1, w1, 1e-6);
    CHECK_CLOSE(v2, w2, 1e-6);
    SET(lc, "ce_topk", 3);
    CHECK_CLOSE(eval(SNM, &lc, &in, ls, NULL, NULL, NULL), eval(SAMPLED, &lc, &in, ls, NULL, NULL, NULL), 1e-12);
    printf("batch C: snm k=1 %.9f (hand %.9f), k=2 %.9f (hand %.9f)\n", v1, w1, v2, w2);
    double p[4] = {0.5, 0.7, 0.8, 0.7};
    double S3 = 2 * exp(0.7 * s) + exp(0.5 * s), S6 = S3 + exp(0.4 * s) + exp(0.2 * s) + exp(0.1 * s);
    double c3 = 0, c6 = 0;
    for (int j = 0; j < 4; j++) {
        c3 += log(1 + S3 * exp(-s * p[j])) / 4;
        c6 += log(1 + S6 * exp(-s * p[j])) / 4;
    }
    double v3 = eval(CENM, &lc, &in, ls, NULL, NULL, NULL);
    SET(lc, "ce_frac", 0.5);
    double v6 = eval(CENM, &lc, &in, ls, NULL, NULL, NULL);
    CHECK_CLOSE(v3, c3, 1e-6);
    CHECK_CLOSE(v6, c6, 1e-6);
    printf("batch C: cenm frac 0.25 %.9f (hand %.9f), 0.5 %.9f (hand %.9f)\n", v3, c3, v6, c6);
}

/* gradients (mu, qmu) of form f, and the largest |difference| between two of them */
static double grad_diff(int f, const loss_config *lc, const float *q1, const float *d1, const float *q2,
                        const float *d2, const int32_t *cls, int n, int D, float ls)
{
    float gm1[64], gq1[64], gm2[64], gq2[64];
    loss_input a = input(n, D, q1, d1, cls), b = input(n, D, q2, d2, cls);
    a.dqmu = gq1;
    b.dqmu = gq2;
    eval(f, lc, &a, ls, NULL, gm1, NULL);
    eval(f, lc, &b, ls, NULL, gm2, NULL);
    double dmax = 0;
    for (int i = 0; i < n * D; i++)
        dmax = fmax(dmax, fmax(fabs(gm1[i] - gm2[i]), fabs(gq1[i] - gq2[i])));
    return dmax;
}

/* Ties go to the lower index. snm k = 1 on batch A: query 1's negatives, images 0 and 2, both
 * score exactly 0; image 0 is taken. The gradient must then be (within O(delta)) the one with
 * image 0 nudged towards query 1 (d_0 = (1, delta): image 0 alone on top) and differ from the
 * one with image 2 nudged (d_2 = (-1, delta)).
 * cenm on batch T: D = 4, images e_k, queries of entries +-0.5 (norm exactly 1, so every cosine
 * is exactly +-0.5 in double):
 *   q_0 = ( .5,  .5, -.5, -.5)  q_1 = (-.5,  .5,  .5, -.5)  q_2 = (-.5, -.5,  .5,  .5)
 *   q_3 = ( .5, -.5, -.5,  .5)
 * every positive is 0.5; the non-matching pairs at 0.5 are (0,1), (1,2), (2,3), (3,0), the other
 * 8 at -0.5. frac 0.25 keeps t = 3 of 12: (0,1), (1,2), (2,3) by the rule; (3,0) is left out.
 * Nudging q_2 towards image 3 keeps that set, nudging q_3 towards image 0 swaps (2,3) for (3,0). */
static void test_ties(void)
{
    const double delta = 1e-5;
    float qmu[6] = {3, 0, 0, 0.5f, -2, 0}, mu[6] = {1, 0, 0, 4, -1, 0};
    float mu0[6] = {1, (float)delta, 0, 4, -1, 0}, mu2[6] = {1, 0, 0, 4, -1, (float)delta};
    int32_t cls[3] = {7, 3, 5};
    loss_config lc = config(1, 0.25, 1);
    float ls = (float)log(2.0);
    double same = grad_diff(SNM, &lc, qmu, mu, qmu, mu0, cls, 3, 2, ls);
    double other = grad_diff(SNM, &lc, qmu, mu, qmu, mu2, cls, 3, 2, ls);
    CHECK(same < 1e-4);
    CHECK(other > 0.05);
    printf("ties: snm k=1, gradient change nudging the chosen image %.2g, the other %.2g\n", same, other);

    float tq[16] = {.5f, .5f, -.5f, -.5f, -.5f, .5f, .5f, -.5f, -.5f, -.5f, .5f, .5f, .5f, -.5f, -.5f, .5f};
    int32_t c4[4] = {0, 1, 2, 3};
    float q2[16], q3[16];
    memcpy(q2, tq, sizeof q2);
    memcpy(q3, tq, sizeof q3);
    q2[2 * 4 + 3] += (float)delta; /* c_23 up */
    q3[3 * 4 + 0] += (float)delta; /* c_30 up */
    /* the value: S = 3 e^{0.5 s}, every positive 0.5 s: l = log(1 + 3) for every query */
    loss_input it = input(4, 4, tq, sel_d, c4);
    CHECK_CLOSE(eval(CENM, &lc, &it, ls, NULL, NULL, NULL), log(4.0), 1e-9);
    same = grad_diff(CENM, &lc, tq, sel_d, q2, sel_d, c4, 4, 4, ls);
    other = grad_diff(CENM, &lc, tq, sel_d, q3, sel_d, c4, 4, 4, ls);
    CHECK(same < 1e-4);
    CHECK(other > 0.05);
    printf("ties: cenm frac 0.25, gradient change nudging a chosen pair %.2g, the left-out one %.2g\n", same, other);
}

/* ---- random P x K batches */
typedef struct {
    int n, D;
    float *q, *d;
    int32_t *cls;
} batch;

/* P classes x K images, class-major (classes 40, 33, 26, ...); the query of every image of a
 * class is the same vector (one query embedding per class, as the query tower gives), images
 * near their class's query with noise so that scores are mixed */
static batch make_pk(int P, int K, int D, uint64_t seed)
{
    batch b = {.n = P * K, .D = D};
    rng r;
    rng_init(&r, seed, 3);
    b.q = emalloc(sizeof(float) * b.n * D);
    b.d = emalloc(sizeof(float) * b.n * D);
    b.cls = emalloc(sizeof(int32_t) * b.n);
    for (int c = 0; c < P; c++) {
        float qc[64];
        for (int t = 0; t < D; t++)
            qc[t] = (float)(2 * rng_uniform(&r) - 1);
        for (int k = 0; k < K; k++) {
            int i = c * K + k;
            b.cls[i] = 40 - 7 * c;
            for (int t = 0; t < D; t++) {
                b.q[i * D + t] = qc[t];
                b.d[i * D + t] = (float)(0.7 * qc[t] + 1.2 * (rng_uniform(&r) - 0.5));
            }
        }
    }
    return b;
}

static void free_pk(batch *b)
{
    free(b->q);
    free(b->d);
    free(b->cls);
}

static int cmp_desc(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x < y) - (x > y);
}

/* the cosine of q_j and d_k, and the A-Softmax psi by acos (another way than the loss's) */
static double cosine(const batch *b, int j, int k)
{
    double nq = 1e-12, nd = 1e-12, dot = 0;
    for (int t = 0; t < b->D; t++) {
        nq += (double)b->q[j * b->D + t] * b->q[j * b->D + t];
        nd += (double)b->d[k * b->D + t] * b->d[k * b->D + t];
        dot += (double)b->q[j * b->D + t] * b->d[k * b->D + t];
    }
    return dot / sqrt(nq * nd);
}

static double psi_ref(int m, double c)
{
    double th = acos(fmax(-1, fmin(1, c)));
    int k = (int)floor(m * th / M_PI);
    if (k >= m)
        k = m - 1;
    return (k % 2 ? -1 : 1) * cos(m * th) - 2 * k;
}

/* brute force: every score sorted (descending: only the values matter), plain sums of exp */
static double reference(int f, const loss_config *lc, const batch *b, double s)
{
    int n = b->n;
    double *neg = emalloc(sizeof(double) * n * n), total = 0;
    int M = 0;
    if (f == CESOFTMAX || f == CENM) {
        for (int j = 0; j < n; j++)
            for (int k = 0; k < n; k++)
                if (b->cls[k] != b->cls[j])
                    neg[M++] = s * cosine(b, j, k);
        qsort(neg, M, sizeof(double), cmp_desc);
        int t = f == CENM ? (int)ceil(loss_value(lc, loss_find("snm"), "ce_frac") * M - 1e-9) : M;
        double S = 0;
        for (int i = 0; i < t; i++)
            S += exp(neg[i]);
        for (int j = 0; j < n; j++) {
            double p = s * cosine(b, j, j);
            total += -log(exp(p) / (exp(p) + S));
        }
    } else
        for (int j = 0; j < n; j++) {
            M = 0;
            for (int k = 0; k < n; k++)
                if (b->cls[k] != b->cls[j])
                    neg[M++] = s * cosine(b, j, k);
            qsort(neg, M, sizeof(double), cmp_desc);
            int topk = (int)loss_value(lc, loss_find("snm"), "ce_topk");
            int t = f == SNM && topk < M ? topk : M;
            double S = 0, c = cosine(b, j, j);
            for (int i = 0; i < t; i++)
                S += exp(neg[i]);
            double p = f == CEMARGIN ? s * psi_ref((int)lc->margin, c) : s * c;
            total += -log(exp(p) / (exp(p) + S));
        }
    free(neg);
    return total / n;
}

/* the smallest score gap at a selection boundary (snm: between each query's k-th and (k+1)-th
 * negative; cenm: between the batch's t-th and (t+1)-th) and between a positive and a kink of
 * psi (cemargin), in cosine units */
static double selection_gap(const loss_config *lc, const batch *b)
{
    int n = b->n, M = 0;
    double *neg = emalloc(sizeof(double) * n * n), gap = INFINITY;
    int topk = (int)loss_value(lc, loss_find("snm"), "ce_topk");
    for (int j = 0; j < n; j++) {
        int Mj = 0;
        for (int k = 0; k < n; k++)
            if (b->cls[k] != b->cls[j])
                neg[Mj++] = cosine(b, j, k);
        qsort(neg, Mj, sizeof(double), cmp_desc);
        if (topk < Mj)
            gap = fmin(gap, neg[topk - 1] - neg[topk]);
    }
    for (int j = 0; j < n; j++)
        for (int k = 0; k < n; k++)
            if (b->cls[k] != b->cls[j])
                neg[M++] = cosine(b, j, k);
    qsort(neg, M, sizeof(double), cmp_desc);
    int t = (int)ceil(loss_value(lc, loss_find("snm"), "ce_frac") * M - 1e-9);
    if (t < M)
        gap = fmin(gap, neg[t - 1] - neg[t]);
    /* cemargin: psi is C^1 but its second derivative jumps where theta = i pi / m */
    for (int j = 0; j < n; j++)
        for (int i = 1; i < (int)lc->margin; i++)
            gap = fmin(gap, fabs(cosine(b, j, j) - cos(i * M_PI / lc->margin)));
    free(neg);
    return gap;
}

/* the smallest norm of a query or image row */
static double min_norm(const batch *b)
{
    double mn = INFINITY;
    for (int i = 0; i < b->n; i++) {
        double a = 0, c = 0;
        for (int t = 0; t < b->D; t++) {
            a += (double)b->q[i * b->D + t] * b->q[i * b->D + t];
            c += (double)b->d[i * b->D + t] * b->d[i * b->D + t];
        }
        mn = fmin(mn, sqrt(fmin(a, c)));
    }
    return mn;
}

static void test_reference(void)
{
    int shapes[3][3] = {{3, 2, 3}, {5, 1, 4}, {4, 3, 2}};
    double worst = 0;
    for (int sh = 0; sh < 3; sh++) {
        batch b = make_pk(shapes[sh][0], shapes[sh][1], shapes[sh][2], 11 + sh);
        loss_input in = input(b.n, b.D, b.q, b.d, b.cls);
        float ls = 1.3f;
        double s = exp((double)ls);
        for (int m = 1; m <= 4; m++) {
            loss_config lc = config(1 + m, 0.2 * m, m);
            for (int f = 0; f < NFORMS; f++) {
                double v = eval(f, &lc, &in, ls, NULL, NULL, NULL), w = reference(f, &lc, &b, s);
                CHECK_CLOSE(v, w, 1e-9);
                worst = fmax(worst, fabs(v - w));
            }
        }
        free_pk(&b);
    }
    printf("reference (brute force) on 3 P x K batches, every loss, 4 settings: largest |difference| %.2g\n", worst);
}

static void test_gradients(void)
{
    /* 4 x 2 (masked pairs) and 6 x 1 (distinct classes); snm keeps 3 of 6 or 5 negatives, cenm
     * 40% of the pairs, cemargin m = 2 and 3 */
    int shapes[2][3] = {{4, 2, 3}, {6, 1, 4}};
    double overall = 0;
    for (int sh = 0; sh < 2; sh++)
        for (int m = 2; m <= 3; m++) {
            loss_config lc = config(3, 0.4, m);
            uint64_t seed = 100 * sh + m;
            batch b = make_pk(shapes[sh][0], shapes[sh][1], shapes[sh][2], seed);
            /* a step h in one coordinate of x moves its unit vector, so a cosine, by at most
             * h / |x|: the first seed whose selection boundaries are 10 such steps away on both
             * sides (2 h / |x| each) */
            while (selection_gap(&lc, &b) < 20 * FD_H / min_norm(&b)) {
                free_pk(&b);
                b = make_pk(shapes[sh][0], shapes[sh][1], shapes[sh][2], ++seed);
            }
            int n = b.n, D = b.D;
            printf("gradcheck batch %d x %d, D = %d: seed %llu, smallest selection gap %.3g (cosine), "
                   "smallest norm %.3g\n",
                   shapes[sh][0], shapes[sh][1], D, (unsigned long long)seed, selection_gap(&lc, &b), min_norm(&b));
            float ls = (float)log(3.0);
            float *gm = emalloc(sizeof(float) * n * D), *gq = emalloc(sizeof(float) * n * D);
            for (int f = 0; f < NFORMS; f++) {
                if (f != CEMARGIN && m != 2)
                    continue; /* m matters to cemargin only */
                loss_input in = input(n, D, b.q, b.d, b.cls);
                in.dqmu = gq;
                float dp = 0.25f; /* dparams is added to */
                double loss = eval(f, &lc, &in, ls, &dp, gm, NULL);
                in.dqmu = NULL;
                double worst = 0, gmax = 0, qmax = 0;
                for (int which = 0; which < 2; which++)
                    for (int i = 0; i < n * D; i++) {
                        /* the K images of a class share one query vector here, but the loss
                         * takes n query rows: one entry of one row at a time */
                        float *x = which ? b.q : b.d, *an = which ? gq : gm;
                        float x0 = x[i], xp = (float)(x0 + FD_H), xm = (float)(x0 - FD_H);
                        x[i] = xp;
                        double lp = eval(f, &lc, &in, ls, NULL, NULL, NULL);
                        x[i] = xm;
                        double lm = eval(f, &lc, &in, ls, NULL, NULL, NULL);
                        x[i] = x0;
                        double g = (lp - lm) / ((double)xp - (double)xm);
                        CHECK_CLOSE(an[i], g, 1e-6 * fmax(1, fabs(g)));
                        worst = fmax(worst, fabs(an[i] - g) / fmax(1, fabs(g)));
                        if (which)
                            qmax = fmax(qmax, fabs(g));
                        else
                            gmax = fmax(gmax, fabs(g));
                    }
                float lsp = (float)(ls + FD_H), lsm = (float)(ls - FD_H);
                double g = (eval(f, &lc, &in, lsp, NULL, NULL, NULL) - eval(f, &lc, &in, lsm, NULL, NULL, NULL)) /
                           ((double)lsp - (double)lsm);
                CHECK_CLOSE(dp - 0.25f, g, 1e-6 * fmax(1, fabs(g)));
                double serr = fabs(dp - 0.25 - g) / fmax(1, fabs(g));
                worst = fmax(worst, serr);
                CHECK(gmax > 1e-3 && qmax > 1e-3 && fabs(g) > 1e-3); /* not vacuous */
                overall = fmax(overall, worst);
                printf("gradcheck %-15s %d x %d D=%d%s: loss %.5f, largest |dL/dmu| %.3g, |dL/dqmu| %.3g, "
                       "dL/dlog_scale %.4f; largest |analytic - fd| / max(1, |fd|) = %.2g\n",
                       names[f], shapes[sh][0], shapes[sh][1], D, f == CEMARGIN ? (m == 2 ? " m=2" : " m=3") : "",
                       loss, gmax, qmax, g, worst);
            }
            free(gm);
            free(gq);
            free_pk(&b);
        }
    printf("gradcheck: worst over every loss %.2g\n", overall);
}

/* cemargin with m = 1 is sampled_softmax, gradients too; dmu, dqmu and dparams may be NULL */
static void test_identities(void)
{
    batch b = make_pk(4, 2, 3, 77);
    int n = b.n, D = b.D;
    float g1[24], g2[24], q1[24], q2[24], p1 = 0, p2 = 0;
    loss_input in = input(n, D, b.q, b.d, b.cls);
    loss_config lc = config(3, 1, 1);
    in.dqmu = q1;
    double v1 = eval(SAMPLED, &lc, &in, 1.1f, &p1, g1, NULL);
    in.dqmu = q2;
    double v2 = eval(CEMARGIN, &lc, &in, 1.1f, &p2, g2, NULL);
    CHECK_CLOSE(v1, v2, 1e-12);
    CHECK_CLOSE(p1, p2, 1e-7);
    double dmax = 0;
    for (int i = 0; i < n * D; i++)
        dmax = fmax(dmax, fmax(fabs(g1[i] - g2[i]), fabs(q1[i] - q2[i])));
    CHECK(dmax < 1e-7);
    /* cenm with frac 1 is cesoftmax */
    in.dqmu = q1;
    v1 = eval(CESOFTMAX, &lc, &in, 1.1f, NULL, g1, NULL);
    in.dqmu = q2;
    v2 = eval(CENM, &lc, &in, 1.1f, NULL, g2, NULL);
    CHECK_CLOSE(v1, v2, 1e-12);
    dmax = 0;
    for (int i = 0; i < n * D; i++)
        dmax = fmax(dmax, fmax(fabs(g1[i] - g2[i]), fabs(q1[i] - q2[i])));
    CHECK(dmax < 1e-7);
    in.dqmu = NULL;
    for (int f = 0; f < NFORMS; f++)
        CHECK_CLOSE(eval(f, &lc, &in, 1.1f, NULL, NULL, NULL), eval(f, &lc, &in, 1.1f, NULL, g1, NULL), 0);
    free_pk(&b);
}

/* misuse dies with exit 1 and a message */
static int dies_f(int f, const loss_config *lc, const loss_input *in, const float *params)
{
    if (check_child()) {
        float g[64], dp[1] = {0};
        rng r;
        rng_init(&r, 1, 0);
        loss_find(names[f])->forward_backward(lc, in, params, dp, g, NULL, &r, NULL);
        _exit(0);
    }
    return check_died();
}

static int init_dies(double scale0)
{
    if (check_child()) {
        loss_config lc = loss_config_new(loss_find("snm"));
        SET(lc, "ce_scale0", scale0);
        float p;
        loss_find("cesoftmax")->init_params(&lc, &p);
        _exit(0);
    }
    return check_died();
}

static void test_misuse(void)
{
    util_init("test_ce");
    float q[8] = {1, 0, 0, 1, -1, 0, 0, -1}, d[8] = {1, 0.1f, 0, 1, -1, 0, 0.2f, -1}, var[8] = {1, 1, 1, 1, 1, 1, 1, 1};
    int32_t two[4] = {1, 1, 2, 2}, one[4] = {3, 3, 3, 3};
    float p[1] = {1}, huge[1] = {1e4f};
    for (int f = 0; f < NFORMS; f++) {
        loss_config lc = config(2, 0.5, 2);
        loss_input in = input(4, 2, q, d, two);
        CHECK(!dies_f(f, &lc, &in, p));
        in.cls = one; /* one class: no negatives */
        CHECK(dies_f(f, &lc, &in, p));
        in.cls = NULL;
        CHECK(dies_f(f, &lc, &in, p));
        in = input(4, 2, NULL, d, two); /* no query tower */
        CHECK(dies_f(f, &lc, &in, p));
        in = input(4, 2, q, d, two);
        in.var = var; /* a stochastic head */
        CHECK(dies_f(f, &lc, &in, p));
        in = (loss_input){.n = 2, .C = 2, .D = 2, .mu = d, .cls = two, .qmu = q}; /* a mixture */
        CHECK(dies_f(f, &lc, &in, p));
        in = input(4, 2, q, d, two);
        CHECK(dies_f(f, &lc, &in, NULL)); /* no parameter */
        CHECK(dies_f(f, &lc, &in, huge)); /* scale e^10000 */
        in.n = 1;                         /* one image */
        CHECK(dies_f(f, &lc, &in, p));
    }
    loss_input in = input(4, 2, q, d, two);
    loss_config lc = config(0, 0.5, 2);
    CHECK(dies_f(SNM, &lc, &in, p));
    CHECK(!dies_f(SAMPLED, &lc, &in, p)); /* topk is snm's only */
    double bad_frac[3] = {0, 1.5, NAN};
    for (int i = 0; i < 3; i++) {
        lc = config(2, bad_frac[i], 2);
        CHECK(dies_f(CENM, &lc, &in, p));
        CHECK(!dies_f(CESOFTMAX, &lc, &in, p));
    }
    double bad_m[5] = {0, 1.5, 9, -2, NAN};
    for (int i = 0; i < 5; i++) {
        lc = config(2, 0.5, bad_m[i]);
        CHECK(dies_f(CEMARGIN, &lc, &in, p));
        CHECK(!dies_f(SAMPLED, &lc, &in, p));
    }
    lc = config(2, 0.5, 8);
    CHECK(!dies_f(CEMARGIN, &lc, &in, p));
    CHECK(init_dies(0) && init_dies(-1) && init_dies(NAN) && !init_dies(10));
}

/* one forward_backward at n = 256, D = 16 (P = 64 classes x K = 4) */
static void test_time(void)
{
    batch b = make_pk(64, 4, 16, 9);
    int n = b.n, D = b.D;
    float *gm = emalloc(sizeof(float) * n * D), *gq = emalloc(sizeof(float) * n * D);
    loss_input in = input(n, D, b.q, b.d, b.cls);
    in.dqmu = gq;
    loss_config lc = config(32, 0.5, 2);
    for (int f = 0; f < NFORMS; f++) {
        int iters = 20;
        float dp = 0;
        double t0 = now_seconds(), sum = 0;
        for (int it = 0; it < iters; it++)
            sum += eval(f, &lc, &in, (float)log(10.0), &dp, gm, NULL);
        double ms = (now_seconds() - t0) / iters * 1e3;
        CHECK(isfinite(sum));
        printf("time: %-15s n = %d, D = %d: %.3f ms per forward_backward\n", names[f], n, D, ms);
    }
    free(gm);
    free(gq);
    free_pk(&b);
}

int main(void)
{
    test_registry();
    test_values_a();
    test_values_b();
    test_masking();
    test_mask_pair();
    test_selection();
    test_ties();
    test_reference();
    test_gradients();
    test_identities();
    test_misuse();
    test_time();
    return check_done("test_ce");
}
