/* triplet: hand-derived values of every form x mining on tiny 1-D batches, the tie rule (lowest
 * index), the batch retrieval accuracy, central finite-difference gradient checks of every
 * form x mining on random P x K batches (points chosen so that no tie and no kink of the hinge or
 * of the semihard window lies within reach of the finite-difference step), and misuse. */
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

/* the values of the settings "triplet" and "mining" (the indices of their names in
 * lib/training/loss_triplet.c's table: test_registry checks them) */
static const char *const form_names[] = {"soft", "hinge"};
static const char *const mining_names[] = {"all", "hard", "semihard"};
enum { T_SOFT, T_HINGE };
enum { T_ALL, T_HARD, T_SEMIHARD };

static double eval(const loss_config *cfg, const loss_input *in, float *dmu, loss_stats *st)
{
    rng r;
    rng_init(&r, 714, 0);
    return loss_find("triplet")->forward_backward(cfg, in, NULL, NULL, dmu, NULL, &r, st);
}

static loss_config config(int form, int mining, double margin)
{
    const loss_kind *L = loss_find("triplet");
    loss_config lc = loss_config_new(L);
    loss_set(&lc, L, "triplet", form);
    loss_set(&lc, L, "mining", mining);
    lc.margin = margin;
    return lc;
}

static loss_input input_1d(int n, const float *x, const int32_t *cls)
{
    return (loss_input){.n = n, .C = 1, .D = 1, .mu = x, .cls = cls};
}

static void test_registry(void)
{
    const loss_kind *L = loss_find("triplet");
    CHECK(L != NULL);
    CHECK(L->batches == LOSS_GROUPS && !L->needs_var && L->max_C == 1 && L->nparams == 0);
    loss_config lc = loss_config_new(L);
    CHECK(loss_value(&lc, L, "triplet") == T_SOFT && loss_value(&lc, L, "mining") == T_SEMIHARD);
    const setting *fs = loss_setting(L, loss_setting_index(L, "triplet"));
    const setting *ms = loss_setting(L, loss_setting_index(L, "mining"));
    for (int f = 0; f < 2; f++)
        CHECK(setting_choice(fs, form_names[f]) == f);
    for (int m = 0; m < 3; m++)
        CHECK(setting_choice(ms, mining_names[m]) == m);
    CHECK(setting_choice(fs, "Soft") < 0 && setting_choice(ms, "semi") < 0);
    /* hetriplet has the same table */
    CHECK(loss_find("hetriplet")->settings == L->settings);
}

/* x = 0, 1 (class 5) and 1.5, 4 (class 2): D01 = 1, D02 = 1.5, D03 = 4, D12 = 0.5, D13 = 3, D23 = 2.5.
 * The guard adds at most 1e-12 / (2 * 0.5) to a distance: tolerance 1e-9.
 *   all: (a, p, n) -> D(a,p) - D(a,n): (0,1,2) -0.5, (0,1,3) -3, (1,0,2) 0.5, (1,0,3) -2,
 *        (2,3,0) 1, (2,3,1) 2, (3,2,0) -1.5, (3,2,1) -0.5
 *   hard: nearest negatives 2, 2, 1, 1: x = -0.5, 0.5, 2, -0.5
 *   semihard, soft: a=0: negatives beyond 1: 2 (1.5), 3 -> 2, x = -0.5; a=1: beyond 1: 3 (3),
 *        x = -2; a=2: none beyond 2.5 -> the nearest, 1, x = 2; a=3: beyond 2.5: 1 (3), 0 (4) ->
 *        1, x = -0.5
 *   semihard, hinge (margin 1): windows (1, 2), (1, 2), (2.5, 3.5), (2.5, 3.5): a=0: 2, x = -0.5;
 *        a=1: none (0.5, 3) -> 2, x = 0.5; a=2: none -> 1, x = 2; a=3: 1 (3), x = -0.5 */
static void test_values(void)
{
    float x[4] = {0, 1, 1.5f, 4};
    int32_t cls[4] = {5, 5, 2, 2};
    loss_input in = input_1d(4, x, cls);
    double all[8] = {-0.5, -3, 0.5, -2, 1, 2, -1.5, -0.5}, hard[4] = {-0.5, 0.5, 2, -0.5};
    double semi_soft[4] = {-0.5, -2, 2, -0.5};
    double want_soft[3] = {0}, want_hinge[3] = {0.9375 /* (0.5 + 1.5 + 2 + 3 + 0.5) / 8 */,
                                                 1.375 /* (0.5 + 1.5 + 3 + 0.5) / 4 */, 1.375};
    for (int k = 0; k < 8; k++)
        want_soft[0] += loss_softplus(all[k]) / 8;
    for (int k = 0; k < 4; k++) {
        want_soft[1] += loss_softplus(hard[k]) / 4;
        want_soft[2] += loss_softplus(semi_soft[k]) / 4;
    }
    for (int m = 0; m < 3; m++) {
        loss_stats st;
        loss_config lc = config(T_SOFT, m, 1);
        CHECK_CLOSE(eval(&lc, &in, NULL, &st), want_soft[m], 1e-9);
        CHECK_CLOSE(st.nll, want_soft[m], 1e-9);
        /* nearest other image: 0 -> 1 (right), 1 -> 2, 2 -> 1 (wrong), 3 -> 2 (right) */
        CHECK_CLOSE(st.acc, 0.5, 0);
        CHECK(isnan(st.a) && isnan(st.b) && isnan(st.se2));
        lc = config(T_HINGE, m, 1);
        CHECK_CLOSE(eval(&lc, &in, NULL, NULL), want_hinge[m], 1e-9);
        lc = config(T_SOFT, m, 1);
        printf("1-D batch: soft  %-8s loss %.9f (hand %.9f)\n", mining_names[m], eval(&lc, &in, NULL, NULL),
               want_soft[m]);
        lc = config(T_HINGE, m, 1);
        printf("1-D batch: hinge %-8s loss %.9f (hand %.9f)\n", mining_names[m], eval(&lc, &in, NULL, NULL),
               want_hinge[m]);
    }
    /* the hinge, hard: L = 1/4 [2 D01 - D02 - 2 D12 + 2 D23 - D13] (every term active), dD(i,j)/dx_i =
     * sign(x_i - x_j): dL/dx = (-1, 5, -5, 1) / 4 */
    float g[4];
    loss_config lc = config(T_HINGE, T_HARD, 1);
    eval(&lc, &in, g, NULL);
    double want_g[4] = {-0.25, 1.25, -1.25, 0.25};
    for (int i = 0; i < 4; i++)
        CHECK_CLOSE(g[i], want_g[i], 1e-6);
    /* soft, hard: dL/dx0 = 1/4 [s(-0.5) (-1 - (-1)) ...]: check one entry by hand:
     * x0 enters D01 (anchors 0 and 1: +s(-0.5) + s(0.5), d/dx0 = -1) and D02 (anchor 0: -s(-0.5),
     * d/dx0 = -1) */
    lc = config(T_SOFT, T_HARD, 1);
    eval(&lc, &in, g, NULL);
    CHECK_CLOSE(g[0], (-(loss_sigmoid(-0.5) + loss_sigmoid(0.5)) + loss_sigmoid(-0.5)) / 4, 1e-7);

    /* the hinge's semihard differs from hard when a negative nearer than the positive exists
     * beside one in the window: x = 0, 1 (class 0), 1.5, -0.6 (class 1): D01 = 1, D02 = 1.5,
     * D03 = 0.6, D12 = 0.5, D13 = 1.6, D23 = 2.1; margin 1.
     *   semihard: a=0: window (1, 2): 2, x = -0.5 -> 0.5; a=1: 3 (1.6), x = -0.6 -> 0.4;
     *     a=2: window (2.1, 3.1) empty -> 1, x = 1.6 -> 2.6; a=3: empty -> 0, x = 1.5 -> 2.5: 6 / 4
     *   hard: 3, 2, 1, 0: x = 0.4, 0.5, 1.6, 1.5 -> 1.4 + 1.5 + 2.6 + 2.5 = 8 / 4 */
    float y[4] = {0, 1, 1.5f, -0.6f};
    int32_t cy[4] = {0, 0, 1, 1};
    loss_input iy = input_1d(4, y, cy);
    lc = config(T_HINGE, T_SEMIHARD, 1);
    CHECK_CLOSE(eval(&lc, &iy, NULL, NULL), 1.5, 1e-6);
    loss_set(&lc, loss_find("triplet"), "mining", T_HARD);
    CHECK_CLOSE(eval(&lc, &iy, NULL, NULL), 2.0, 1e-6);

    /* a class with one image (x = 10, class 7) is only a negative: `all` adds 4 triplets, all
     * beyond the margin (x = -9, -8, -6, -3.5): (0.9375 * 8) / 12; acc counts the 4 anchors only */
    float z[5] = {0, 1, 1.5f, 4, 10};
    int32_t cz[5] = {5, 5, 2, 2, 7};
    loss_input iz = input_1d(5, z, cz);
    loss_stats st;
    lc = config(T_HINGE, T_ALL, 1);
    CHECK_CLOSE(eval(&lc, &iz, NULL, &st), 7.5 / 12, 1e-9);
    CHECK_CLOSE(st.acc, 0.5, 0);
    loss_set(&lc, loss_find("triplet"), "mining", T_HARD);
    CHECK_CLOSE(eval(&lc, &iz, NULL, NULL), 1.375, 1e-9);
}

/* ties go to the lowest index: x = 0, 0.4 (class 0), 1, -1 (class 1): anchor 0's negatives 2 and 3
 * are both at 1, and hard (and semihard, window (0.4, 1.2) with margin 0.8) picks 2. The hinge's
 * gradient is piecewise constant in 1-D, so it must equal the one with image 3 moved away a
 * little (2 the only nearest) and differ from the one with image 3 moved closer (3 nearest).
 * Every hinge term is active throughout, and no other distance sits on a boundary (the margin
 * is chosen so: with 1, D(1,3) = 1.5 would lie exactly on anchor 1's window edge 0.5 + 1, where
 * the distance guard, not the rule, decides). */
static void test_ties(void)
{
    int32_t cls[4] = {0, 0, 1, 1};
    float x[4] = {0, 0.4f, 1, -1}, far_[4] = {0, 0.4f, 1, -1.01f}, near_[4] = {0, 0.4f, 1, -0.99f};
    float g[4], gf[4], gn[4];
    for (int m = T_HARD; m <= T_SEMIHARD; m++) {
        loss_config lc = config(T_HINGE, m, 0.8);
        loss_input in = input_1d(4, x, cls), inf = input_1d(4, far_, cls), inn = input_1d(4, near_, cls);
        eval(&lc, &in, g, NULL);
        eval(&lc, &inf, gf, NULL);
        eval(&lc, &inn, gn, NULL);
        double dmax = 0;
        for (int i = 0; i < 4; i++) {
            CHECK_CLOSE(g[i], gf[i], 1e-6);
            dmax = fmax(dmax, fabs(g[i] - gn[i]));
        }
        CHECK(dmax > 0.1);
    }
    /* equal positives: x = 0, 1, -1 (class 0), 3 (class 1): anchor 0's farthest positive is 1 */
    float p[4] = {0, 1, -1, 3}, pf[4] = {0, 1, -0.99f, 3};
    int32_t cp[4] = {0, 0, 0, 1};
    loss_config lc = config(T_HINGE, T_HARD, 5);
    loss_input in = input_1d(4, p, cp), inf = input_1d(4, pf, cp);
    eval(&lc, &in, g, NULL);
    eval(&lc, &inf, gf, NULL);
    for (int i = 0; i < 4; i++)
        CHECK_CLOSE(g[i], gf[i], 1e-6);
}

typedef struct {
    loss_input in;
    float *mu;
    int32_t *cls;
} batch;

/* P classes x K images, class-major as batcher -m pk makes them, class values 40, 33, 26, ...;
 * each mean near its class's corner of the cube, spread so that hinge terms are on both sides of
 * the margin */
static batch make_pk(int P, int K, int D, uint64_t seed)
{
    batch bt;
    int n = P * K;
    rng r;
    rng_init(&r, seed, 3);
    bt.mu = emalloc(sizeof(float) * n * D);
    bt.cls = emalloc(sizeof(int32_t) * n);
    for (int i = 0; i < n; i++) {
        int c = i / K;
        bt.cls[i] = 40 - 7 * c;
        for (int d = 0; d < D; d++)
            bt.mu[i * D + d] = (float)(0.8 * ((c >> d) & 1) + 1.2 * (rng_uniform(&r) - 0.5));
    }
    bt.in = (loss_input){.n = n, .C = 1, .D = D, .mu = bt.mu, .cls = bt.cls};
    return bt;
}

/* the smallest distance, over anchors, between any two of its distances and between the hinge
 * argument margin + D(a,p) - D(a,n) and 0: a step h in one coordinate moves each by at most 2h */
static double kink_gap(const batch *bt, double margin)
{
    int n = bt->in.n, D = bt->in.D;
    double gap = INFINITY, xa[64], xb[64];
    double *dist = emalloc(sizeof(double) * n * n);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            for (int d = 0; d < D; d++) {
                xa[d] = bt->mu[i * D + d];
                xb[d] = bt->mu[j * D + d];
            }
            dist[i * n + j] = loss_dist(xa, xb, D);
        }
    for (int a = 0; a < n; a++)
        for (int j = 0; j < n; j++)
            for (int k = 0; k < n; k++) {
                if (j == a || k == a || j == k)
                    continue;
                double dj = dist[a * n + j], dk = dist[a * n + k];
                gap = fmin(gap, fabs(dj - dk));
                if (bt->cls[j] == bt->cls[a] && bt->cls[k] != bt->cls[a])
                    gap = fmin(gap, fabs(margin + dj - dk));
            }
    free(dist);
    return gap;
}

static void test_gradients(void)
{
    const int P = 3, K = 4, D = 3;
    double margin = 0.5, overall = 0;
    /* the first seed whose batch keeps ties and kinks 5 steps away (2h per step) */
    uint64_t seed = 1;
    batch bt = make_pk(P, K, D, seed);
    while (kink_gap(&bt, margin) < 10 * FD_H) {
        free(bt.mu);
        free(bt.cls);
        bt = make_pk(P, K, D, ++seed);
    }
    printf("gradcheck batch: %d x %d, D = %d, seed %llu, smallest tie/kink gap %.3g\n", P, K, D,
           (unsigned long long)seed, kink_gap(&bt, margin));
    int n = P * K;
    float *dmu = emalloc(sizeof(float) * n * D);
    for (int f = 0; f < 2; f++)
        for (int m = 0; m < 3; m++) {
            loss_config lc = config(f, m, margin);
            double loss = eval(&lc, &bt.in, dmu, NULL), worst = 0, gmax = 0;
            for (int i = 0; i < n * D; i++) {
                float x0 = bt.mu[i], xp = (float)(x0 + FD_H), xm = (float)(x0 - FD_H);
                bt.mu[i] = xp;
                double lp = eval(&lc, &bt.in, NULL, NULL);
                bt.mu[i] = xm;
                double lm = eval(&lc, &bt.in, NULL, NULL);
                bt.mu[i] = x0;
                double g = (lp - lm) / ((double)xp - (double)xm);
                CHECK_CLOSE(dmu[i], g, 1e-6 * fmax(1, fabs(g)));
                worst = fmax(worst, fabs(dmu[i] - g) / fmax(1, fabs(g)));
                gmax = fmax(gmax, fabs(g));
            }
            CHECK(gmax > 1e-3); /* not a vacuous check on a zero gradient */
            overall = fmax(overall, worst);
            printf("gradcheck triplet %-5s %-8s loss %.5f, %d entries, largest |dL/dmu|  %.3g, largest "
                   "|analytic - fd| / max(1, |fd|) = %.2g\n",
                   form_names[f], mining_names[m], loss, n * D, gmax, worst);
        }
    printf("gradcheck triplet: worst over all forms and minings %.2g\n", overall);
    free(dmu);
    free(bt.mu);
    free(bt.cls);
}

/* ---- hetriplet: the same triplets weighted by s = log sigma^2 (Taha et al. Eq. 11) */
static double eval_h(const loss_config *cfg, const loss_input *in, float *dmu, float *dvar, loss_stats *st)
{
    rng r;
    rng_init(&r, 714, 0);
    return loss_find("hetriplet")->forward_backward(cfg, in, NULL, NULL, dmu, dvar, &r, st);
}

/* The 1-D batch of test_values under batch-hard mining, soft form: triplets (a, p, n) and x =
 * (0,1,2) -0.5, (1,0,2) 0.5, (2,3,1) 2, (3,2,1) -0.5. With s = (0.2, -0.4, 0.7, 0) the loss is
 * the mean over the four of (e^-s_a + e^-s_p + e^-s_n) softplus(x) / 2 + (s_a + s_p + s_n) / 2,
 * written out term by term below. With every s = 0 each term is 3/2 softplus(x): 1.5 x triplet,
 * for every form and mining. */
static void test_hetero_values(void)
{
    const loss_kind *L = loss_find("hetriplet");
    CHECK(L != NULL);
    CHECK(L->batches == LOSS_GROUPS && L->needs_var && L->max_C == 1 && L->nparams == 0);
    CHECK(L->default_head && !strcmp(L->default_head, "iso"));
    float x[4] = {0, 1, 1.5f, 4}, var[4];
    int32_t cls[4] = {5, 5, 2, 2};
    double s[4] = {0.2, -0.4, 0.7, 0};
    for (int i = 0; i < 4; i++)
        var[i] = (float)exp(s[i]);
    loss_input in = input_1d(4, x, cls);
    in.var = var;
    loss_config lc = config(T_SOFT, T_HARD, 1);
    int tri[4][3] = {{0, 1, 2}, {1, 0, 2}, {2, 3, 1}, {3, 2, 1}};
    double xs[4] = {-0.5, 0.5, 2, -0.5}, want = 0;
    for (int t = 0; t < 4; t++) {
        int a = tri[t][0], p = tri[t][1], k = tri[t][2];
        want += ((exp(-s[a]) + exp(-s[p]) + exp(-s[k])) * loss_softplus(xs[t]) / 2 + (s[a] + s[p] + s[k]) / 2) / 4;
    }
    loss_stats st;
    double got = eval_h(&lc, &in, NULL, NULL, &st);
    /* var is float: s carries a relative error of about 6e-8 */
    CHECK_CLOSE(got, want, 1e-6);
    CHECK_CLOSE(st.mean_var, (var[0] + var[1] + var[2] + var[3]) / 4.0, 1e-6);
    printf("hetriplet soft hard on the 1-D batch: %.9f (by hand %.9f)\n", got, want);
    for (int i = 0; i < 4; i++)
        var[i] = 1;
    for (int f = 0; f < 2; f++)
        for (int m = 0; m < 3; m++) {
            lc = config(f, m, 1);
            double h = eval_h(&lc, &in, NULL, NULL, NULL), t = eval(&lc, &in, NULL, NULL);
            CHECK_CLOSE(h, 1.5 * t, 1e-12);
        }
}

/* gradients in mu and in every var entry, on an iso batch (one variance per image) and on a
 * diagonal one (a variance per dimension: s is then the mean of the log variances) */
static void test_hetero_gradients(void)
{
    const int P = 3, K = 4, D = 3;
    double margin = 0.5, overall = 0;
    uint64_t seed = 1;
    batch bt = make_pk(P, K, D, seed);
    while (kink_gap(&bt, margin) < 10 * FD_H) {
        free(bt.mu);
        free(bt.cls);
        bt = make_pk(P, K, D, ++seed);
    }
    int n = P * K;
    float *var = emalloc(sizeof(float) * n * D), *dmu = emalloc(sizeof(float) * n * D),
          *dvar = emalloc(sizeof(float) * n * D);
    rng r;
    rng_init(&r, 99, 0);
    for (int iso = 1; iso >= 0; iso--) {
        for (int i = 0; i < n; i++) {
            double si = 1.5 * (rng_uniform(&r) - 0.5);
            for (int d = 0; d < D; d++)
                var[i * D + d] = (float)exp(iso ? si : si + 0.8 * (rng_uniform(&r) - 0.5));
        }
        bt.in.var = var;
        for (int f = 0; f < 2; f++)
            for (int m = 0; m < 3; m++) {
                loss_config lc = config(f, m, margin);
                double loss = eval_h(&lc, &bt.in, dmu, dvar, NULL), worst = 0, gmax = 0, vmax = 0;
                for (int which = 0; which < 2; which++)
                    for (int i = 0; i < n * D; i++) {
                        float *x = which ? var : bt.mu, *an = which ? dvar : dmu;
                        float x0 = x[i], xp = (float)(x0 + FD_H * (which ? x0 : 1)),
                              xm = (float)(x0 - FD_H * (which ? x0 : 1));
                        x[i] = xp;
                        double lp = eval_h(&lc, &bt.in, NULL, NULL, NULL);
                        x[i] = xm;
                        double lm = eval_h(&lc, &bt.in, NULL, NULL, NULL);
                        x[i] = x0;
                        double g = (lp - lm) / ((double)xp - (double)xm);
                        CHECK_CLOSE(an[i], g, 1e-6 * fmax(1, fabs(g)));
                        worst = fmax(worst, fabs(an[i] - g) / fmax(1, fabs(g)));
                        if (which)
                            vmax = fmax(vmax, fabs(g));
                        else
                            gmax = fmax(gmax, fabs(g));
                    }
                CHECK(gmax > 1e-3 && vmax > 1e-3);
                overall = fmax(overall, worst);
                printf("gradcheck hetriplet %s %-5s %-8s loss %.5f, largest |dL/dmu| %.3g, |dL/dvar| %.3g, "
                       "largest |analytic - fd| / max(1, |fd|) = %.2g\n",
                       iso ? "iso " : "diag", form_names[f], mining_names[m], loss, gmax, vmax, worst);
            }
    }
    printf("gradcheck hetriplet: worst %.2g\n", overall);
    free(var);
    free(dmu);
    free(dvar);
    free(bt.mu);
    free(bt.cls);
}

/* misuse dies with exit 1 and a message */
static int dies(const loss_config *lc, const loss_input *in)
{
    if (check_child()) {
        float g[64];
        eval(lc, in, g, NULL);
        _exit(0);
    }
    return check_died();
}

static int dies_h(const loss_config *lc, const loss_input *in)
{
    if (check_child()) {
        float g[64], gv[64];
        eval_h(lc, in, g, gv, NULL);
        _exit(0);
    }
    return check_died();
}

static void test_misuse(void)
{
    util_init("test_triplet");
    float x[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    int32_t two[4] = {1, 1, 2, 2}, one[4] = {3, 3, 3, 3}, single[4] = {1, 2, 3, 4};
    for (int m = 0; m < 3; m++) {
        loss_config lc = config(T_SOFT, m, 1);
        loss_input in = input_1d(4, x, two);
        CHECK(!dies(&lc, &in));
        in.cls = NULL; /* no classes: not a groupbatch */
        CHECK(dies(&lc, &in));
        in.cls = one; /* one class: no negatives */
        CHECK(dies(&lc, &in));
        in.cls = single; /* no two images of a class: no positives */
        CHECK(dies(&lc, &in));
        in = (loss_input){.n = 4, .C = 2, .D = 1, .mu = x, .cls = two}; /* a mixture head */
        CHECK(dies(&lc, &in));
    }
    loss_config lc = config(7, T_ALL, 1);
    loss_input in = input_1d(4, x, two);
    CHECK(dies(&lc, &in));
    lc = config(T_SOFT, 9, 1);
    CHECK(dies(&lc, &in));
    /* hetriplet: no variance, a variance that is not positive */
    lc = config(T_SOFT, T_HARD, 1);
    CHECK(dies_h(&lc, &in));
    float var[4] = {1, 1, 0, 1};
    in.var = var;
    CHECK(dies_h(&lc, &in));
    var[2] = 2;
    CHECK(!dies_h(&lc, &in));
}

int main(void)
{
    test_registry();
    test_values();
    test_ties();
    test_gradients();
    test_hetero_values();
    test_hetero_gradients();
    test_misuse();
    return check_done("test_triplet");
}
