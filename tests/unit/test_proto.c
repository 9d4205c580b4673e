/* proto: PN and SPE prototypes and class posteriors on hand-worked 1-D and 2-D episodes; the
 * closed form against a numerical integral and a many-sample Monte Carlo estimate; the naive and
 * intersection samplers against a numerical integral of p(y|x,S); the naive sampler's class
 * pruning against the plain average; SPE ranking classes as PN does in its limit. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "proto.h"
#include "rng.h"
#include "util.h"

#define LOG2PI log(2 * M_PI)

static double normal_pdf(double z, double m, double v) { return exp(-(z - m) * (z - m) / (2 * v)) / sqrt(2 * M_PI * v); }

/* 1-D: int N(z; mu, var) f(z) dz by Simpson's rule over mu +- 12 sd, 40000 intervals (smooth
 * integrands: the error is far below the tolerances used) */
typedef double (*fz)(const proto_set *P, double z, int y);
static double integrate(const proto_set *P, double mu, double var, fz f, int y)
{
    double sd = sqrt(var), lo = mu - 12 * sd, hi = mu + 12 * sd, h = (hi - lo) / 40000, s = 0;
    for (int i = 0; i <= 40000; i++) {
        double z = lo + i * h, w = (i == 0 || i == 40000) ? 1 : (i % 2 ? 4 : 2);
        s += w * normal_pdf(z, mu, var) * f(P, z, y);
    }
    return s * h / 3;
}
/* p(y|z,S) and N(z; m_y, V_y) of a 1-D set */
static double post_at(const proto_set *P, double z, int y)
{
    double ld[8], p[8];
    proto_spe_logdens(P, &z, ld);
    proto_softmax(ld, P->n, p);
    return p[y];
}
static double dens_at(const proto_set *P, double z, int y) { return normal_pdf(z, P->m[y], P->V[y]); }

/* the naive estimate without any pruning: the mean of softmax(log N(z_k; m_y, V_y)), with
 * z_k - m_y formed as proto.c does, (mu - m_y) + sqrt(var) eps_k */
static void naive_plain(const proto_set *P, const double *mu, const double *var, const double *eps, int K, double *p)
{
    int n = P->n, D = P->D;
    double ld[64], q[64];
    for (int y = 0; y < n; y++)
        p[y] = 0;
    for (int k = 0; k < K; k++) {
        for (int y = 0; y < n; y++) {
            ld[y] = P->logc[y];
            for (int d = 0; d < D; d++) {
                double u = (mu[d] - P->m[y * D + d]) + sqrt(var[d]) * eps[k * D + d];
                ld[y] -= 0.5 / P->V[y * D + d] * u * u;
            }
        }
        proto_softmax(ld, n, q);
        for (int y = 0; y < n; y++)
            p[y] += q[y] / K;
    }
}

static void normals(rng *r, double *x, int n)
{
    for (int i = 0; i < n; i++)
        x[i] = rng_normal(r);
}

/* the classes ranked by score, best first (ties: lower index first) */
static void ranking(const double *score, int n, int *order)
{
    for (int i = 0; i < n; i++)
        order[i] = i;
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && score[order[j]] > score[order[j - 1]]; j--) {
            int t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
}

int main(void)
{
    util_init("test_proto");
    proto_set P;

    /* ---- the Gaussian of a mixture: 1-D components N(1, 0.5) and N(3, 1.5): mean 2,
     * variance (0.5 + 1.5)/2 + ((1-2)^2 + (3-2)^2)/2 = 1 + 1 = 2; a single component is itself;
     * point components: the variance of the means alone */
    {
        float mu[] = {1, 3}, var[] = {0.5f, 1.5f};
        double m, v;
        proto_gaussian(mu, var, 2, 1, &m, &v);
        CHECK_CLOSE(m, 2, 0);
        CHECK_CLOSE(v, 2, 1e-15);
        proto_gaussian(mu, NULL, 2, 1, &m, &v);
        CHECK_CLOSE(v, 1, 1e-15);
        float mu2[] = {1.5f, -2}, var2[] = {0.25f, 4};
        double m2[2], v2[2];
        proto_gaussian(mu2, var2, 1, 2, m2, v2);
        CHECK(m2[0] == 1.5 && m2[1] == -2 && v2[0] == 0.25 && v2[1] == 4);
    }

    /* ---- PN, 1-D: class 0 = {0, 2} -> prototype 1, class 1 = {4, 6} -> 5. Query 2: scores
     * -(2-1)^2 = -1 and -(2-5)^2 = -9; p0 = 1 / (1 + e^-8) = 0.99966464986953, eta = 1 - p0 */
    {
        double mu[] = {0, 2, 4, 6}, z = 2, s[2], p[2];
        int lab[] = {0, 0, 1, 1};
        proto_init(&P, 2, 1);
        proto_fit_pn(&P, mu, lab, 4);
        CHECK_CLOSE(P.m[0], 1, 0);
        CHECK_CLOSE(P.m[1], 5, 0);
        proto_pn_scores(&P, &z, s);
        CHECK_CLOSE(s[0], -1, 0);
        CHECK_CLOSE(s[1], -9, 0);
        proto_softmax(s, 2, p);
        CHECK_CLOSE(p[0], 0.99966464986953, 1e-14);
        CHECK_CLOSE(proto_uncertainty(p, 2), 3.3535013046648e-4, 1e-15);
        CHECK(proto_argmax(s, 2) == 0);
        proto_free(&P);
    }

    /* ---- PN, 2-D: class 0 = {(0,0), (2,0), (1,3)} -> (1,1); class 1 = {(4,4), (6,4)} -> (5,4);
     * class 2 = {(0,4)}. Labels interleaved. Query (1,2): squared distances 1, 16 + 4 = 20,
     * 1 + 4 = 5; p = (1, e^-19, e^-4) / (1 + e^-19 + e^-4) */
    {
        double mu[] = {0, 0, 4, 4, 2, 0, 0, 4, 6, 4, 1, 3}, z[] = {1, 2}, s[3], p[3];
        int lab[] = {0, 1, 0, 2, 1, 0};
        proto_init(&P, 3, 2);
        proto_fit_pn(&P, mu, lab, 6);
        double want[] = {1, 1, 5, 4, 0, 4};
        for (int e = 0; e < 6; e++)
            CHECK_CLOSE(P.m[e], want[e], 1e-15);
        proto_pn_scores(&P, z, s);
        CHECK_CLOSE(s[0], -1, 1e-15);
        CHECK_CLOSE(s[1], -20, 1e-15);
        CHECK_CLOSE(s[2], -5, 1e-15);
        proto_softmax(s, 3, p);
        double Z = 1 + exp(-19.0) + exp(-4.0);
        CHECK_CLOSE(p[0], 1 / Z, 1e-15);
        CHECK_CLOSE(p[1], exp(-19.0) / Z, 1e-20);
        CHECK_CLOSE(p[2], exp(-4.0) / Z, 1e-16);
        proto_free(&P);
    }

    /* ---- SPE, 1-D, se2 = 1. Class 0: mu {0, 3}, var {1, 0}: var + se2 = {2, 1},
     * 1/S^2 = 1/2 + 1 = 3/2, S^2 = 2/3, m = (2/3)(0/2 + 3/1) = 2, V = 2/3 + 1 = 5/3.
     * Class 1: mu {6}, var {3}: S^2 = 4, m = 6, V = 5.
     * At z = 3: log N(3; 2, 5/3) = -1/2 log(2 pi 5/3) - 1/(2 5/3) = ... - 0.3;
     *           log N(3; 6, 5)   = -1/2 log(2 pi 5)   - 9/10;
     *   difference 1/2 log 3 + 0.6, so p(0|z=3) = 1 / (1 + exp(-(1/2 log 3 + 0.6))).
     * Query x = N(3, 1/3), closed form: var + V = 2 and 16/3:
     *   score0 = -1/2 (log(2 pi 2) + 1/2), score1 = -1/2 (log(2 pi 16/3) + 9/(16/3)) = ... - 27/32.
     * Intersection factors for class 0: T = (1/3)(5/3)/2 = 5/18, c = (5/3 3 + 1/3 2)/2 = 17/6. */
    {
        double mu[] = {0, 6, 3}, var[] = {1, 3, 0};
        int lab[] = {0, 1, 0};
        proto_init(&P, 2, 1);
        proto_fit_spe(&P, mu, var, lab, 3, 1.0);
        CHECK_CLOSE(P.S2[0], 2.0 / 3, 1e-15);
        CHECK_CLOSE(P.m[0], 2, 1e-15);
        CHECK_CLOSE(P.V[0], 5.0 / 3, 1e-15);
        CHECK_CLOSE(P.S2[1], 4, 0);
        CHECK_CLOSE(P.m[1], 6, 0);
        CHECK_CLOSE(P.V[1], 5, 0);
        double z = 3, ld[2], p[2];
        proto_spe_logdens(&P, &z, ld);
        CHECK_CLOSE(ld[0], -0.5 * log(2 * M_PI * 5 / 3) - 0.3, 1e-15);
        CHECK_CLOSE(ld[1], -0.5 * log(2 * M_PI * 5) - 0.9, 1e-15);
        proto_softmax(ld, 2, p);
        CHECK_CLOSE(p[0], 1 / (1 + exp(-(0.5 * log(3.0) + 0.6))), 1e-15);
        double qmu = 3, qvar = 1.0 / 3, sc[2];
        proto_spe_closed(&P, &qmu, &qvar, sc);
        CHECK_CLOSE(sc[0], -0.5 * (log(2 * M_PI * 2) + 0.5), 1e-15);
        CHECK_CLOSE(sc[1], -0.5 * log(2 * M_PI * 16 / 3) - 27.0 / 32, 1e-15);
        /* the closed form is log of int N(z; 3, 1/3) N(z; m_y, V_y) dz: a numerical integral */
        for (int y = 0; y < 2; y++)
            CHECK_CLOSE(exp(sc[y]), integrate(&P, qmu, qvar, dens_at, y), 1e-12);
        /* a query without variance: the naive sampler (any eps) and the intersection sampler
         * (T = 0, c = mu) are exact, p(y|x,S) = p(y|mu,S), and so is the closed form */
        double zero = 0, eps[3] = {0.7, -1.9, 0.2}, pn[2], pc[2];
        proto_spe_naive(&P, &qmu, &zero, eps, 3, pn);
        proto_spe_closed(&P, &qmu, &zero, sc);
        proto_softmax(sc, 2, pc);
        for (int y = 0; y < 2; y++) {
            CHECK_CLOSE(pn[y], p[y], 1e-15);
            CHECK_CLOSE(pc[y], p[y], 1e-15);
            CHECK_CLOSE(exp(proto_spe_intersection(&P, &qmu, &zero, y, eps, 3)), p[y], 1e-15);
        }
        /* the intersection sampler with one sample at eps = 0 draws z = c_0 = 17/6 exactly:
         * estimate = N(3; 2, 2) / (N(17/6; 2, 5/3) + N(17/6; 6, 5)) */
        double e0 = 0, est = exp(proto_spe_intersection(&P, &qmu, &qvar, 0, &e0, 1));
        CHECK_CLOSE(est, normal_pdf(3, 2, 2) / (normal_pdf(17.0 / 6, 2, 5.0 / 3) + normal_pdf(17.0 / 6, 6, 5)), 1e-15);
        /* eps = 1: z = 17/6 + sqrt(5/18) */
        double e1 = 1, z1 = 17.0 / 6 + sqrt(5.0 / 18);
        est = exp(proto_spe_intersection(&P, &qmu, &qvar, 0, &e1, 1));
        CHECK_CLOSE(est, normal_pdf(3, 2, 2) / (normal_pdf(z1, 2, 5.0 / 3) + normal_pdf(z1, 6, 5)), 1e-15);

        /* p(y|x,S) of x = N(3, 1/3) by a numerical integral, against the samplers. The naive
         * estimate averages K values in [0, 1]: sd <= 1/2, so it lies within 4 / (2 sqrt K) =
         * 0.0063 of the integral (K = 100000) except with probability 6e-5. The intersection
         * estimate: 20 independent runs of 5000 samples, within 4 standard errors of their mean. */
        rng r;
        rng_init(&r, 714, 1);
        int K = 100000;
        double *E = emalloc((size_t)K * sizeof *E);
        normals(&r, E, K);
        proto_spe_naive(&P, &qmu, &qvar, E, K, pn);
        proto_spe_closed(&P, &qmu, &qvar, sc);
        proto_softmax(sc, 2, pc);
        for (int y = 0; y < 2; y++) {
            double want = integrate(&P, qmu, qvar, post_at, y);
            CHECK_CLOSE(pn[y], want, 2 / sqrt(K));
            double runs[20], mean = 0, ss = 0;
            for (int b = 0; b < 20; b++) {
                runs[b] = exp(proto_spe_intersection(&P, &qmu, &qvar, y, E + b * 5000, 5000));
                mean += runs[b] / 20;
            }
            for (int b = 0; b < 20; b++)
                ss += (runs[b] - mean) * (runs[b] - mean);
            double se = sqrt(ss / 19 / 20);
            CHECK(se > 0 && se < 0.01);
            CHECK_CLOSE(mean, want, 4 * se);
            /* the closed form's softmax is a different (ratio of expectations) estimate: here
             * p0 = 0.7473 by it against 0.7285 by the integral; both prefer class 0 */
            CHECK(fabs(pc[y] - want) < 0.05);
        }
        /* score0 - score1 = 1/2 log((16/3) / 2) - 1/4 + 27/32 = 1/2 log(8/3) + 19/32 */
        CHECK_CLOSE(pc[0], 1 / (1 + exp(-(0.5 * log(8.0 / 3) + 19.0 / 32))), 1e-15);
        CHECK(fabs(pc[0] - integrate(&P, qmu, qvar, post_at, 0)) > 0.01);
        free(E);
        proto_free(&P);
    }

    /* ---- SPE, 2-D, se2 = 1/2. Class 0: a = mu (0,0) var (1/2, 3/2), b = mu (2,2) var (3/2, 1/2):
     * var + se2 = (1, 2) and (2, 1). Dimension 0: 1/S^2 = 1 + 1/2, S^2 = 2/3,
     * m = (2/3)(0 + 2/2) = 2/3; dimension 1: S^2 = 2/3, m = (2/3)(0/2 + 2/1) = 4/3; V = 2/3 + 1/2
     * = 7/6 in both. Class 1: mu (4,0) var (3/2, 1/2): S^2 = (2, 1), m = (4, 0), V = (5/2, 3/2).
     * Query mu (2,1), var (1/4, 3/4), closed form:
     *   class 0: var + V = (17/12, 23/12), mu - m = (4/3, -1/3),
     *            q = (16/9)(12/17) + (1/9)(12/23) = 64/51 + 4/69
     *   class 1: var + V = (11/4, 9/4), mu - m = (-2, 1), q = 16/11 + 4/9
     *   score = -1/2 (2 log 2 pi + log det + q) */
    {
        double mu[] = {0, 0, 4, 0, 2, 2}, var[] = {0.5, 1.5, 1.5, 0.5, 1.5, 0.5};
        int lab[] = {0, 1, 0};
        proto_init(&P, 2, 2);
        proto_fit_spe(&P, mu, var, lab, 3, 0.5);
        double wm[] = {2.0 / 3, 4.0 / 3, 4, 0}, wS[] = {2.0 / 3, 2.0 / 3, 2, 1}, wV[] = {7.0 / 6, 7.0 / 6, 2.5, 1.5};
        for (int e = 0; e < 4; e++) {
            CHECK_CLOSE(P.m[e], wm[e], 1e-15);
            CHECK_CLOSE(P.S2[e], wS[e], 1e-15);
            CHECK_CLOSE(P.V[e], wV[e], 1e-15);
        }
        CHECK_CLOSE(P.logc[0], -0.5 * (2 * LOG2PI + 2 * log(7.0 / 6)), 1e-15);
        double qmu[] = {2, 1}, qvar[] = {0.25, 0.75}, sc[2];
        proto_spe_closed(&P, qmu, qvar, sc);
        CHECK_CLOSE(sc[0], -0.5 * (2 * LOG2PI + log(17.0 / 12 * 23.0 / 12) + 64.0 / 51 + 4.0 / 69), 1e-14);
        CHECK_CLOSE(sc[1], -0.5 * (2 * LOG2PI + log(11.0 / 4 * 9.0 / 4) + 16.0 / 11 + 4.0 / 9), 1e-14);

        /* exp(score_y) = E_{z ~ N(mu, var)} N(z; m_y, V_y): the plain Monte Carlo average of the
         * class density over 10^6 samples agrees within 4 of its standard errors (computed from
         * the samples: about 0.04 % of the value here) */
        rng r;
        rng_init(&r, 714, 2);
        int K = 1000000;
        double sum[2] = {0, 0}, sum2[2] = {0, 0}, z[2], ld[2];
        for (int k = 0; k < K; k++) {
            for (int d = 0; d < 2; d++)
                z[d] = qmu[d] + sqrt(qvar[d]) * rng_normal(&r);
            proto_spe_logdens(&P, z, ld);
            for (int y = 0; y < 2; y++) {
                double f = exp(ld[y]);
                sum[y] += f;
                sum2[y] += f * f;
            }
        }
        for (int y = 0; y < 2; y++) {
            double mean = sum[y] / K, se = sqrt((sum2[y] / K - mean * mean) / (K - 1));
            CHECK(se < 1e-3 * mean);
            CHECK_CLOSE(mean, exp(sc[y]), 4 * se);
        }
        proto_free(&P);
    }

    /* ---- the naive sampler's pruning changes nothing: random episodes of 12 classes in 3-D,
     * near and far classes, small and large query variances, against the plain average of
     * softmax(log N(z_k; m_y, V_y)): equal but for the rounding of a sum of 200 terms <= 1
 * (200 2^-53 = 2.2e-14); and pruning did leave classes out */
    {
        rng r;
        rng_init(&r, 714, 3);
        int n = 12, D = 3, S = 4, K = 200;
        double mu[12 * 4 * 3], var[12 * 4 * 3], eps[200 * 3], p1[12], p2[12];
        int lab[12 * 4];
        double worst = 0;
        int pruned = 0; /* classes left out with a p > 0 in the plain average */
        proto_init(&P, n, D);
        for (int t = 0; t < 50; t++) {
            double spread = t % 2 ? 10 : 1, vs = t % 3 == 0 ? 0.01 : t % 3 == 1 ? 0.3 : 3;
            for (int i = 0; i < n * S; i++) {
                lab[i] = i % n;
                for (int d = 0; d < D; d++) {
                    mu[i * D + d] = spread * (lab[i] % 4 + d * (lab[i] / 4)) + rng_normal(&r);
                    var[i * D + d] = vs * (0.2 + rng_uniform(&r));
                }
            }
            proto_fit_spe(&P, mu, var, lab, n * S, 0.05 * (t % 5));
            double qmu[3], qvar[3];
            for (int d = 0; d < D; d++) {
                qmu[d] = spread * 3 * rng_uniform(&r);
                qvar[d] = vs * (t % 7 == 0 ? 0 : rng_uniform(&r));
            }
            normals(&r, eps, K * D);
            proto_spe_naive(&P, qmu, qvar, eps, K, p1);
            naive_plain(&P, qmu, qvar, eps, K, p2);
            double s = 0;
            for (int y = 0; y < n; y++) {
                double e = fabs(p1[y] - p2[y]);
                pruned += p1[y] == 0 && p2[y] > 0;
                worst = e > worst ? e : worst;
                s += p1[y];
            }
            CHECK_CLOSE(s, 1, 1e-14);
        }
        CHECK_CLOSE(worst, 0, 200 * 0x1p-53);
        CHECK(pruned > 50);
        printf("pruning: %d classes left out, largest change %.3g\n", pruned, worst);
        proto_free(&P);
    }

    /* ---- SPE ranks classes as PN does in PN's limit (spe-scott-2019 section 3.2: as the
     * variances vanish with s_e^2 equal for every class). Random episodes: 8 classes in 3-D, 5
     * support each, 200 queries.
     * (a) equal support variances v, an isotropic query variance: every V_y is the same, the
     *     prototypes are the plain means, so the closed form is a decreasing function of
     *     ||mu - m_y||^2: the same ranking as PN, exactly, for any v;
     * (b) the limit: support and query variances t^2 u (u ~ U(0.5, 2), different everywhere),
     *     se2 = t, t = 1e-6: the weights 1 / (t^2 u + t) are equal to O(t), so both the closed
     *     form's ranking and the naive sampler's choice are PN's. */
    {
        rng r;
        rng_init(&r, 714, 4);
        int n = 8, D = 3, S = 5, Q = 200, K = 50;
        double mu[8 * 5 * 3], var[8 * 5 * 3], eps[50 * 3];
        int lab[8 * 5], o1[8], o2[8], same_a = 1, same_b = 1, same_naive = 1;
        proto_set Ppn;
        proto_init(&P, n, D);
        proto_init(&Ppn, n, D);
        for (int i = 0; i < n * S; i++) {
            lab[i] = i / S;
            for (int d = 0; d < D; d++)
                mu[i * D + d] = 2 * rng_normal(&r);
        }
        proto_fit_pn(&Ppn, mu, lab, n * S);
        normals(&r, eps, K * D);
        for (int pass = 0; pass < 2; pass++) {
            double t = 1e-6;
            for (int e = 0; e < n * S * D; e++)
                var[e] = pass == 0 ? 0.7 : t * t * (0.5 + 1.5 * rng_uniform(&r));
            proto_fit_spe(&P, mu, var, lab, n * S, pass == 0 ? 0.2 : t);
            for (int q = 0; q < Q; q++) {
                double qmu[3], qvar[3], s1[8], s2[8], pn[8];
                double iso = 0.5 * rng_uniform(&r);
                for (int d = 0; d < D; d++) {
                    qmu[d] = 2 * rng_normal(&r);
                    qvar[d] = pass == 0 ? iso : t * t * (0.5 + 1.5 * rng_uniform(&r));
                }
                proto_pn_scores(&Ppn, qmu, s1);
                proto_spe_closed(&P, qmu, qvar, s2);
                ranking(s1, n, o1);
                ranking(s2, n, o2);
                if (memcmp(o1, o2, sizeof o1))
                    *(pass == 0 ? &same_a : &same_b) = 0;
                if (pass == 1) {
                    proto_spe_naive(&P, qmu, qvar, eps, K, pn);
                    same_naive &= proto_argmax(pn, n) == o1[0];
                }
            }
        }
        CHECK(same_a);
        CHECK(same_b);
        CHECK(same_naive);
        proto_free(&Ppn);
        proto_free(&P);
    }

    /* ---- helpers: ties go to the lowest index; softmax and logsumexp of huge scores */
    {
        double x[] = {1, 3, 3, 2}, big[] = {1e300, -1e300, 1e300 - 1e285}, p[3];
        CHECK(proto_argmax(x, 4) == 1);
        proto_softmax(big, 3, p);
        CHECK_CLOSE(p[0] + p[2], 1, 1e-15);
        CHECK_CLOSE(p[1], 0, 0);
        CHECK_CLOSE(proto_logsumexp(x, 4), 3 + log(2 + exp(-1.0) + exp(-2.0)), 1e-15);
        double u[] = {0.25, 0.25, 0.5};
        CHECK_CLOSE(proto_uncertainty(u, 3), 0.5, 0);
    }
    return check_done("test_proto");
}
