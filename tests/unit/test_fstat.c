/* fstat: log I_x(a, b) (lib/numerics/betainc.h) against closed forms derived by hand, the F(1, m) CDF at
 * tabulated quantiles, extreme x; the F-statistic loss (lib/training/loss_fstat.c) on a hand-made batch,
 * its clip and guards, its tie rule, central finite-difference gradient checks on random P x K
 * batches for d = 1 and d = D, and misuse (one class; fewer than 3 images in a pair) dying.
 *
 * Closed forms (a = 1/2 throughout, b = m/2 for F(1, m)); from the integral, then the recurrence
 * I_x(a, b+1) = I_x(a, b) + x^a (1-x)^b / (b B(a, b)):
 *   I_x(1/2, 1/2) = (2/pi) asin(sqrt x)                          (F(1,1): the Cauchy |t|)
 *   I_x(1/2, 1)   = sqrt x                                       (B(1/2, 1) = 2)
 *   I_x(1/2, 3/2) = (2/pi) (asin(sqrt x) + sqrt(x (1-x)))         (B(1/2, 1/2) = pi; also the
 *                   Student t_3 CDF: 2 F_t3(t) - 1 with t^2 = 3x/(1-x))
 *   I_x(1/2, 2)   = sqrt(x) (3 - x) / 2                          (B(1/2, 1) = 2)
 *   I_x(1/2, 3)   = sqrt(x) (3 - x) / 2 + (3/8) sqrt(x) (1-x)^2   (B(1/2, 2) = 4/3)
 *   I_x(a, 1) = x^a;  I_x(1, b) = 1 - (1-x)^b
 * and near x = 1, the complements 1 - I without cancellation:
 *   (1/2, 1/2): (2/pi) asin(sqrt(1-x));  (1/2, 1): (1-x) / (1 + sqrt x);
 *   (1/2, 2):   ((1-x) / (1 + sqrt x))^2 (2 + sqrt x) / 2
 * (the brief's "I_x(1/2, 3/2) = sqrt(x)(3 - x)/2" is I_x(1/2, 2): B(1/2, 2) = 4/3, and
 *  int_0^x t^(-1/2) (1 - t) dt = 2 sqrt x - (2/3) x^(3/2).) */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "betainc.h"
#include "check.h"
#include "loss.h"
#include "loss_util.h"
#include "rng.h"
#include "util.h"

/* finite-difference steps: powers of two, so that x +- h is exact in float for |x| < 2^10 and the
 * two central differences combine exactly (Richardson: (4 D(h/2) - D(h)) / 3 cancels the h^2
 * term; a poorly separated dimension's log I ~ log |m_a - m_b| has third derivatives of 1e4
 * that leave a plain central difference at h = 1e-4 wrong by 3e-6 relative) */
/* d, the setting --fstat-dims (0: all D, which the option does not take) */
#define DIMS(lc, d) loss_set(&(lc), loss_find("fstat"), "fstat-dims", d)
/* the settings with d = 0: every dimension of every pair (not train's default, 2) */
static loss_config all_dims(void)
{
    loss_config lc = loss_config_new(loss_find("fstat"));
    DIMS(lc, 0);
    return lc;
}
#define FD_H (1.0 / 4096)

static double worst_rel;  /* the largest relative error of log I seen against a closed form */

/* log I against a reference, relative to |ref| (floor 1e-300 keeps a 0 reference exact) */
static void check_log(double a, double b, double x, double ref, double tol)
{
    double li = betainc_log(a, b, x, NULL), e = fabs(li - ref) / fmax(fabs(ref), 1e-300);
    if (e > worst_rel && isfinite(e))
        worst_rel = e;
    if (!(e <= tol))
        fprintf(stderr, "  log I_%.17g(%g, %g) = %.17g, expected %.17g\n", x, a, b, li, ref);
    CHECK(e <= tol);
}

static const double grid[] = {1e-300, 1e-200, 1e-100, 1e-37, 1e-20, 1e-10, 1e-5, 1e-3, 0.01, 0.05, 0.1,
                              0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99, 0.999, 1 - 1e-5, 1 - 1e-8,
                              1 - 1e-12, 1 - 1e-16};
#define NGRID ((int)(sizeof grid / sizeof grid[0]))

static void test_closed_forms(void)
{
    const double pi = M_PI;
    for (int i = 0; i < NGRID; i++) {
        double x = grid[i], y = 1 - x, s = sqrt(x); /* y is exact: x's nearest double, Sterbenz above 1/2 */
        /* the direct forms where they are accurate (no cancellation in I), the complements above
         * 1/2 for the forms that have one */
        if (x <= 0.5) {
            check_log(0.5, 0.5, x, log(2 / pi * asin(s)), 4e-15);
            check_log(0.5, 1, x, 0.5 * log(x), 4e-15);
            check_log(0.5, 1.5, x, log(2 / pi * (asin(s) + sqrt(x * y))), 4e-15);
            check_log(0.5, 2, x, log(s * (3 - x) / 2), 4e-15);
            check_log(0.5, 3, x, log(s * (3 - x) / 2 + 0.375 * s * y * y), 4e-15);
        } else {
            double c = y / (1 + s);
            check_log(0.5, 0.5, x, log1p(-2 / pi * asin(sqrt(y))), 1e-13);
            check_log(0.5, 1, x, log1p(-c), 1e-13);
            check_log(0.5, 2, x, log1p(-c * c * (2 + s) / 2), 1e-13);
            /* b = 3/2: 1 - I = (2/pi) (asin t - t sqrt(1 - t^2)), t = sqrt(1-x), which cancels;
             * its derivative is 2 t^2 / sqrt(1 - t^2), so it is (4/pi) sum_k C(2k,k)/4^k
             * t^(2k+3) / (2k+3), a series with positive terms */
            double t = sqrt(y), sum = 0, cc = 1, tp = t * t * t;
            for (int k = 0; k < 400; k++) {
                sum += cc * tp / (2 * k + 3);
                cc *= (2.0 * k + 1) / (2.0 * k + 2);
                tp *= y;
            }
            check_log(0.5, 1.5, x, log1p(-4 / pi * sum), 1e-13);
            /* b = 3: its complement cancels too; the plain form, absolutely, where it holds */
            if (x <= 0.999)
                CHECK_CLOSE(betainc_log(0.5, 3, x, NULL), log(s * (3 - x) / 2 + 0.375 * s * y * y), 1e-15);
        }
        check_log(2.5, 1, x, 2.5 * log(x), 4e-15); /* I_x(a, 1) = x^a */
        /* I_x(1, b) = 1 - (1-x)^b */
        check_log(1, 3.5, x, x < 0.5 ? log(-expm1(3.5 * log1p(-x))) : log1p(-exp(3.5 * log(y))),
                  x < 0.5 ? 4e-15 : 1e-13); /* near 1: exp of 3.5 log y, rounded relative to |log y| */
        if (x >= 0.01) /* the symmetry I_x(a, b) = 1 - I_{1-x}(b, a), where 1 - I does not cancel */
            check_log(0.5, 7, x, log1p(-exp(betainc_log(7, 0.5, y, NULL))), 1e-13);
    }
    /* the tails by their leading terms, for b = m/2 of F(1, m), m = 1 .. 40:
     *   x -> 0: log I = a log x - log(a B(a,b)) + O(x)
     *   x -> 1: 1 - I = I_{1-x}(b, a) = (1-x)^b / (b B(a,b)) (1 + O(1-x)) */
    for (int m = 1; m <= 40; m++) {
        double a = 0.5, b = 0.5 * m, lB = lgamma(a) + lgamma(b) - lgamma(a + b);
        check_log(a, b, 1e-300, a * log(1e-300) - log(a) - lB, 1e-15);
        check_log(a, b, 1e-37, a * log(1e-37) - log(a) - lB, 1e-15);
        double y = 1 - (1 - 1e-12), J = exp(b * log(y) - log(b) - lB), li = betainc_log(a, b, 1 - y, NULL);
        CHECK(isfinite(li) && li <= 0);
        CHECK_CLOSE(-expm1(li) / J, 1, 1e-12);
    }
    printf("log I_x against the closed forms: largest relative error %.2g\n", worst_rel);
}

/* the CDF of F(1, m) at its tabulated quantiles (F(1, m) = t_m^2: the two-sided t quantiles) */
static void test_quantiles(void)
{
    struct {
        int m;
        double q, p;
    } t[] = {
        {10, 4.9646, 0.95},                        /* the usual table's four decimals */
        {10, 2.228138852 * 2.228138852, 0.95},     /* t_{10, 0.975} */
        {10, 3.169272673 * 3.169272673, 0.99},     /* t_{10, 0.995} */
        {30, 2.042272456 * 2.042272456, 0.95},     /* t_{30, 0.975} */
        {5, 4.032142984 * 4.032142984, 0.99},      /* t_{5, 0.995} */
        {1, 12.70620474 * 12.70620474, 0.95},      /* t_{1, 0.975} = tan(0.475 pi) */
        {2, 4.302652730 * 4.302652730, 0.95},      /* t_{2, 0.975} */
        {120, 1.979930405 * 1.979930405, 0.95},    /* t_{120, 0.975} */
    };
    for (int i = 0; i < (int)(sizeof t / sizeof t[0]); i++) {
        double x = t[i].q / (t[i].q + t[i].m), p = exp(betainc_log(0.5, 0.5 * t[i].m, x, NULL));
        CHECK_CLOSE(p, t[i].p, i == 0 ? 1e-5 : 1e-8);
        printf("F(1, %d) CDF at %.6g = %.10f (table %.2f)\n", t[i].m, t[i].q, p, t[i].p);
    }
    /* F(1, 1) at tan(0.475 pi)^2 exactly, and F(1, 2): sqrt(s / (s + 2)) */
    double s = tan(0.475 * M_PI) * tan(0.475 * M_PI);
    CHECK_CLOSE(exp(betainc_log(0.5, 0.5, s / (s + 1), NULL)), 0.95, 1e-14);
    CHECK_CLOSE(exp(betainc_log(0.5, 1, 8.0 / 10, NULL)), sqrt(0.8), 1e-15);
}

/* the derivative against closed forms and a central difference; edges and misuse */
static void test_derivative(void)
{
    double worst = 0;
    for (int i = 0; i < NGRID; i++) {
        double x = grid[i], g;
        betainc_log(0.5, 1, x, &g);
        CHECK_CLOSE(g * 2 * x, 1, 1e-13); /* d/dx log sqrt x = 1 / (2x) */
        betainc_log(2.5, 1, x, &g);
        CHECK_CLOSE(g * x, 2.5, 1e-13);
        betainc_log(0.5, 0.5, x, &g);
        /* d/dx log((2/pi) asin sqrt x) = 1 / (2 sqrt(x (1-x)) asin sqrt x) (x below 1/2 only:
         * above, asin's argument rounds) */
        if (x <= 0.5)
            CHECK_CLOSE(g * 2 * sqrt(x * (1 - x)) * asin(sqrt(x)), 1, 1e-13);
        CHECK(isfinite(g) && g > 0);
        if (x > 1e-3 && x < 0.999)
            for (int m = 1; m <= 30; m += 7) {
                double b = 0.5 * m, h = 1e-6 * fmin(x, 1 - x);
                betainc_log(0.5, b, x, &g);
                double fd = (betainc_log(0.5, b, x + h, NULL) - betainc_log(0.5, b, x - h, NULL)) / (2 * h);
                double e = fabs(g - fd) / fmax(1, fabs(fd));
                worst = fmax(worst, e);
                CHECK(e < 1e-7);
            }
    }
    printf("d/dx log I against central differences (m = 1 .. 29): largest relative error %.2g\n", worst);
    double g;
    CHECK(betainc_log(0.5, 3, 0, &g) == -INFINITY && g == INFINITY);
    CHECK(betainc_log(0.5, 3, 1, &g) == 0 && g == 0);
    CHECK(isnan(betainc_log(0.5, 3, -0.1, NULL)) && isnan(betainc_log(0.5, 3, 1.1, NULL)));
    CHECK(isnan(betainc_log(0, 3, 0.5, NULL)) && isnan(betainc_log(0.5, -1, 0.5, NULL)));
    CHECK(isnan(betainc_log(0.5, 3, NAN, &g)) && isnan(g));
    /* finite at the extremes, with finite derivatives (at the smallest subnormal, 4.9e-324, the
     * derivative a / x is above DBL_MAX: +inf, the log itself finite) */
    CHECK(isfinite(betainc_log(0.5, 3, 4.9e-324, NULL)));
    double xs[] = {1e-300, 1 - 1e-16, 1e-307};
    for (int i = 0; i < 3; i++)
        for (int m = 1; m <= 64; m++) {
            double li = betainc_log(0.5, 0.5 * m, xs[i], &g);
            CHECK(isfinite(li) && li <= 0 && isfinite(g) && g >= 0); /* g underflows near 1 */
        }
}

/* ---- the loss ---- */

typedef struct {
    loss_input in;
    float *mu;
    int32_t *cls;
} batch;

/* P classes x K images, class-major as batcher -m pk lays them out, class values 50, 43, 36...;
 * each class has a centre (a few dimensions apart from the others) and noise, so that the pairs
 * are neither hopeless nor clipped */
static batch make_pk(int P, int K, int D, uint64_t seed)
{
    batch bt;
    int n = P * K;
    rng r;
    rng_init(&r, seed, 3);
    bt.mu = emalloc(sizeof(float) * n * D);
    bt.cls = emalloc(sizeof(int32_t) * n);
    double *centre = emalloc(sizeof(double) * P * D);
    for (int i = 0; i < P * D; i++)
        centre[i] = 2 * rng_uniform(&r) - 1;
    for (int i = 0; i < n; i++) {
        int c = i / K;
        bt.cls[i] = 50 - 7 * c;
        for (int k = 0; k < D; k++)
            bt.mu[i * D + k] = (float)(centre[c * D + k] + 0.6 * (rng_uniform(&r) - 0.5));
    }
    free(centre);
    bt.in = (loss_input){.n = n, .C = 1, .D = D, .mu = bt.mu, .cls = bt.cls};
    return bt;
}

static double eval(const loss_config *cfg, const loss_input *in, float *dmu, loss_stats *st)
{
    const loss_kind *L = loss_find("fstat");
    rng r;
    rng_init(&r, 714, 1);
    return L->forward_backward(cfg, in, NULL, NULL, dmu, NULL, &r, st);
}

static void test_registry(void)
{
    const loss_kind *L = loss_find("fstat");
    CHECK(L != NULL);
    if (!L)
        exit(check_done("test_fstat"));
    CHECK(L->batches == LOSS_GROUPS && L->needs_var == 0 && L->nparams == 0 && L->max_C == 1);
    CHECK(L->help && L->init_params && L->forward_backward && L->param_names && !L->param_names[0]);
    loss_config lc = loss_config_new(L);
    CHECK(loss_value(&lc, L, "fstat-dims") == 2 && loss_value(&lc, L, "fstat_dims") == 2);
}

/* three classes (values 9, 3, 5, scrambled), D = 2:
 *   9: (0,0) (2,1)   3: (4,0) (6,1)   5: (1,5) (1,7) (1,6)
 * pair {9,3}, n = 4, b = 1: dim 0: means 1, 5: B = 2*2/4 * 16 = 16, W = 2 + 2 = 4, x = 0.8;
 *   dim 1: equal means, B = 0: x = 0 -> 1e-37 (clipped)
 * pair {9,5}, n = 5, b = 3/2: dim 0: equal means -> 1e-37; dim 1: means 0.5, 6: B = 2*3/5 * 5.5^2
 *   = 36.3, W = 0.5 + 2 = 2.5, x = 36.3 / 38.8
 * pair {3,5}, n = 5: dim 0: means 5, 1: B = 1.2 * 16 = 19.2, W = 2, x = 19.2 / 21.2; dim 1 as above
 * d = 1 takes x = 0.8, 36.3/38.8 and 36.3/38.8 (the larger of 19.2/21.2 and 36.3/38.8) */
static void test_hand_batch(void)
{
    float mu[] = {4, 0, 1, 5, 0, 0, 1, 7, 6, 1, 2, 1, 1, 6};
    int32_t cls[] = {3, 5, 9, 5, 3, 9, 5};
    loss_input in = {.n = 7, .C = 1, .D = 2, .mu = mu, .cls = cls};
    loss_config lc = all_dims();
    const double pi = M_PI;
#define I15(x) (2 / pi * (asin(sqrt(x)) + sqrt((x) * (1 - (x)))))
    double xa = 36.3 / 38.8, xb = 19.2 / 21.2, tiny = 1e-37;
    double want1 = -(0.5 * log(0.8) + 2 * log(I15(xa)));
    double want2 = want1 - 0.5 * log(tiny) - log(4 / pi * sqrt(tiny)) - log(I15(xb));
    loss_stats st;
    DIMS(lc, 1);
    double l1 = eval(&lc, &in, NULL, &st);
    CHECK_CLOSE(l1, want1, 1e-12);
    CHECK_CLOSE(st.nll, l1, 0);
    CHECK(isnan(st.acc) && isnan(st.se2) && st.kl == 0 && st.mean_var == 0);
    DIMS(lc, 2);
    CHECK_CLOSE(eval(&lc, &in, NULL, NULL), want2, 1e-12);
    DIMS(lc, 0); /* all D */
    CHECK_CLOSE(eval(&lc, &in, NULL, NULL), want2, 1e-12);
    printf("hand batch: d = 1 loss %.12f (want %.12f), d = 2 loss %.12f (want %.12f)\n", l1, want1,
           eval(&lc, &in, NULL, NULL), want2);

    /* the gradient of the d = 1 loss, by hand for image 0 (class 3, (4, 0)):
     * pair {9,3} dim 0: g = d/dx log sqrt x = 1/(2x) at 0.8; dL/dB = -g W/S^2, dL/dW = g B/S^2
     * (S = 20); dB/dz = 2 (m_3 - m) = 2 * 2 (5 - 1)/4 = 4; dW/dz = 2 (4 - 5) = -2.
     * pair {3,5} dim 1 is selected (x = 36.3/38.8): image 0 has z_1 = 0, class 3 mean 0.5 */
    float dmu[14];
    DIMS(lc, 1);
    eval(&lc, &in, dmu, NULL);
    double g = 1 / (2 * 0.8), S = 20, want0 = (-g * 4 / (S * S)) * 4 + (g * 16 / (S * S)) * -2;
    CHECK_CLOSE(dmu[0], want0, 1e-6);
    /* class 5's images have no share in dimension 0 under d = 1 (both its pairs chose dim 1) */
    CHECK(dmu[1 * 2 + 0] == 0 && dmu[3 * 2 + 0] == 0 && dmu[6 * 2 + 0] == 0);
#undef I15
}

/* the clip and the guards: each class on one point (W = 0), everything on one point (B + W = 0),
 * and ties between dimensions (the lowest index wins) */
static void test_guards(void)
{
    loss_config lc = all_dims();
    float dmu[8 * 3];
    /* W = 0, B > 0: x = 1 -> 1 - 1e-5, zero gradient; 2 classes x 4 images, D = 1, b = 3 */
    float sep[] = {0, 0, 0, 0, 1, 1, 1, 1};
    int32_t cls[] = {0, 0, 0, 0, 1, 1, 1, 1};
    loss_input in = {.n = 8, .C = 1, .D = 1, .mu = sep, .cls = cls};
    double l = eval(&lc, &in, dmu, NULL);
    CHECK_CLOSE(l, -betainc_log(0.5, 3, 1 - 1e-5, NULL), 1e-300);
    CHECK(l >= 0 && l < 1e-12);
    for (int i = 0; i < 8; i++)
        CHECK(dmu[i] == 0);
    /* B + W = 0: x = 0 -> 1e-37, a finite loss, zero gradient */
    float same[8] = {0.25f, 0.25f, 0.25f, 0.25f, 0.25f, 0.25f, 0.25f, 0.25f};
    in.mu = same;
    l = eval(&lc, &in, dmu, NULL);
    CHECK(isfinite(l));
    CHECK_CLOSE(l, -betainc_log(0.5, 3, 1e-37, NULL), 1e-12);
    CHECK_CLOSE(l, -(0.5 * log(1e-37) - log(0.5) - (lgamma(0.5) + lgamma(3) - lgamma(3.5))), 1e-12);
    for (int i = 0; i < 8; i++)
        CHECK(dmu[i] == 0);
    printf("guards: W = 0 gives %.3g, B + W = 0 gives %.6f, zero gradients\n",
           -betainc_log(0.5, 3, 1 - 1e-5, NULL), l);
    /* ties: dimension 0 and 2 carry the same values, dimension 1 less separated; d = 1 takes
     * dimension 0 (the lowest index) and leaves 2 without gradient */
    batch bt = make_pk(2, 4, 3, 77);
    for (int i = 0; i < 8; i++) {
        bt.mu[i * 3 + 2] = bt.mu[i * 3 + 0];
        bt.mu[i * 3 + 1] = 0.01f * bt.mu[i * 3 + 0] + (i % 2 ? 0.3f : -0.3f);
    }
    DIMS(lc, 1);
    double lt = eval(&lc, &bt.in, dmu, NULL);
    int nonzero0 = 0;
    for (int i = 0; i < 8; i++) {
        CHECK(dmu[i * 3 + 1] == 0 && dmu[i * 3 + 2] == 0);
        nonzero0 += dmu[i * 3 + 0] != 0;
    }
    CHECK(nonzero0 == 8);
    DIMS(lc, 2);
    CHECK_CLOSE(eval(&lc, &bt.in, NULL, NULL), 2 * lt, 1e-12 * lt);
    free(bt.mu);
    free(bt.cls);
}

/* the central difference of the loss in mu[i] with step h */
static double central(const loss_config *lc, batch *bt, size_t i, double h)
{
    float x0 = bt->mu[i];
    bt->mu[i] = (float)(x0 + h);
    double lp = eval(lc, &bt->in, NULL, NULL);
    bt->mu[i] = (float)(x0 - h);
    double lm = eval(lc, &bt->in, NULL, NULL);
    bt->mu[i] = x0;
    return (lp - lm) / (2 * h);
}

/* analytic against central differences (Richardson-extrapolated, FD_H), every entry; tolerance
 * 1e-6 relative to max(1, |fd|) */
static double gradcheck(const char *what, const loss_config *lc, batch *bt)
{
    size_t m = (size_t)bt->in.n * bt->in.D;
    float *dmu = emalloc(sizeof(float) * m);
    eval(lc, &bt->in, dmu, NULL);
    double worst = 0;
    int zero = 0;
    for (size_t i = 0; i < m; i++) {
        double g = (4 * central(lc, bt, i, FD_H / 2) - central(lc, bt, i, FD_H)) / 3;
        double e = fabs(dmu[i] - g) / fmax(1, fabs(g));
        CHECK_CLOSE(dmu[i], g, 1e-6 * fmax(1, fabs(g)));
        worst = fmax(worst, e);
        zero += dmu[i] == 0;
    }
    printf("gradcheck %-30s %4zu entries (%d zero), largest |analytic - fd| / max(1, |fd|) = %.2g\n", what, m,
           zero, worst);
    free(dmu);
    return worst;
}

static void test_gradients(void)
{
    struct {
        int P, K, D, d;
        uint64_t seed;
    } c[] = {
        {4, 3, 5, 1, 11}, {4, 3, 5, 5, 11}, {8, 8, 4, 1, 12}, {8, 8, 4, 4, 12},
        {3, 2, 6, 2, 13}, {6, 5, 16, 1, 14}, {6, 5, 16, 16, 14},
    };
    for (int i = 0; i < (int)(sizeof c / sizeof c[0]); i++) {
        batch bt = make_pk(c[i].P, c[i].K, c[i].D, c[i].seed);
        loss_config lc = all_dims();
        DIMS(lc, c[i].d);
        char what[64];
        snprintf(what, sizeof what, "P %d x K %d, D %d, d %d", c[i].P, c[i].K, c[i].D, c[i].d);
        gradcheck(what, &lc, &bt);
        free(bt.mu);
        free(bt.cls);
    }
    /* unequal class sizes (cls not class-major) */
    batch bt = make_pk(3, 4, 3, 15);
    int32_t scramble[12] = {50, 43, 43, 36, 50, 50, 36, 36, 36, 43, 36, 50};
    memcpy(bt.cls, scramble, sizeof scramble);
    loss_config lc = all_dims();
    gradcheck("unequal classes, D 3, d 3", &lc, &bt);
    DIMS(lc, 1);
    gradcheck("unequal classes, D 3, d 1", &lc, &bt);
    free(bt.mu);
    free(bt.cls);
}

/* 1 if the loss dies (exit 1) on this input */
static int dies(const loss_config *lc, const loss_input *in)
{
    if (check_child()) {
        float g[256];
        eval(lc, in, g, NULL);
        _exit(0);
    }
    return check_died();
}

static void test_misuse(void)
{
    util_init("test_fstat");
    loss_config lc = all_dims();
    batch bt = make_pk(3, 4, 2, 21);
    CHECK(!dies(&lc, &bt.in));
    for (int i = 0; i < 12; i++) /* one class */
        bt.cls[i] = 7;
    CHECK(dies(&lc, &bt.in));
    for (int i = 0; i < 12; i++)
        bt.cls[i] = i / 4;
    bt.in.cls = NULL; /* no classes: a pair batch */
    CHECK(dies(&lc, &bt.in));
    bt.in.cls = bt.cls;
    bt.in.C = 2, bt.in.D = 1; /* a mixture */
    CHECK(dies(&lc, &bt.in));
    bt.in.C = 1, bt.in.D = 2;
    DIMS(lc, 3); /* d > D */
    CHECK(dies(&lc, &bt.in));
    DIMS(lc, 0);
    /* two classes of one image each: n = 2, no F(1, 0) */
    int32_t two[2] = {1, 2};
    loss_input in2 = {.n = 2, .C = 1, .D = 2, .mu = bt.mu, .cls = two};
    CHECK(dies(&lc, &in2));
    /* one image and two: n = 3, F(1, 1) is fine */
    int32_t three[3] = {1, 2, 2};
    in2.n = 3, in2.cls = three;
    CHECK(!dies(&lc, &in2));
    free(bt.mu);
    free(bt.cls);
}

int main(void)
{
    test_closed_forms();
    test_quantiles();
    test_derivative();
    test_registry();
    test_hand_batch();
    test_guards();
    test_gradients();
    test_misuse();
    return check_done("test_fstat");
}
