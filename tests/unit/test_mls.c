/* mls, all pairs (knn and retrieve --distance mls): the kernel against mls_score (hand values, then
 * random Gaussians with variances from 1e-30 to 1e30 and dimensions around the lane and
 * renormalisation boundaries, within its stated error), its bound mls_floor, a distance beyond
 * float32; mls_knn against a brute force in double, by hand where the MLS ranking is not the
 * Euclidean one and where an item is not its own nearest, 1 and 3 threads; retrieval_run and
 * retrieval_run_at_r ranking by -MLS against a full sort in double; match_mls_check's refusals. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "match.h"
#include "mls.h"
#include "retrieval.h"
#include "rng.h"
#include "util.h"

#define LOG2PI 1.8378770664093453 /* log(2 pi) */

/* -MLS of rows i of (m1, v1) and j of (m2, v2) */
static double dist(const float *m1, const float *v1, int64_t i, const float *m2, const float *v2, int64_t j, int D)
{
    return -mls_score(m1 + i * D, v1 + i * D, m2 + j * D, v2 + j * D, D);
}

/* ---------------------------------------------------------------- by hand */

static void test_by_hand(void)
{
    /* D = 1. The query q: mean 0, variance 1. A: mean 0.5, variance 100 (near, very uncertain);
     * B: mean 1, variance 1 (twice as far, certain). Euclidean: A (0.5) before B (1). -MLS =
     * 1/2 (d^2 / v + log v) + 1/2 log(2 pi), v = v_q + v_g:
     *   A: v = 101: 1/2 (0.25 / 101 + log 101) = 1/2 (0.0024752 + 4.6151205) = 2.3087979
     *   B: v = 2:   1/2 (1 / 2 + log 2)        = 1/2 (0.5 + 0.6931472)       = 0.5965736
     * plus 0.9189385 each: A 3.2277364, B 1.5155121, so MLS ranks B first. */
    float qm[1] = {0}, qv[1] = {1}, gm[2] = {0.5f, 1}, gv[2] = {100, 1};
    double a = 0.5 * (0.25 / 101 + log(101.0)) + 0.5 * LOG2PI, b = 0.5 * (0.5 + log(2.0)) + 0.5 * LOG2PI;
    CHECK_CLOSE(a, 3.2277364, 1e-7);
    CHECK_CLOSE(b, 1.5155121, 1e-7);
    mls_set *G = mls_set_new(gm, gv, 2, 1, NULL);
    float row[2];
    mls_row(G, qm, qv, 0, row);
    CHECK_CLOSE(row[0], a, 1e-6);
    CHECK_CLOSE(row[1], b, 1e-6);
    /* add shifts every distance */
    float row2[2];
    mls_row(G, qm, qv, -1.5, row2);
    CHECK_CLOSE(row2[0], a - 1.5, 1e-6);
    mls_set_free(G);
    int64_t nbr[2];
    double d[2];
    mls_knn(qm, qv, 1, gm, gv, 2, 1, 2, NULL, 1, nbr, d);
    CHECK(nbr[0] == 1 && nbr[1] == 0);
    CHECK_CLOSE(d[0], b, 1e-12);
    CHECK_CLOSE(d[1], a, 1e-12);

    /* Not a metric: item 0 (mean 0, variance 1) is farther from itself than from item 1 (mean
     * 0.05, variance 0.01): -MLS(0, 0) = 1/2 log 2 + 0.9189385 = 1.2655121; -MLS(0, 1) =
     * 1/2 (0.0025 / 1.01 + log 1.01) + 0.9189385 = 1/2 (0.0024752 + 0.0099503) + 0.9189385 =
     * 0.9251513. Without exclusion item 0's nearest is item 1, then itself; leave-one-out leaves
     * it out by index and keeps item 2 (mean 3, variance 1: 1/2 (9 / 2 + log 2) + 0.9189385 =
     * 2.5965736 + 0.9189385 = 3.5155121) second. */
    float m[3] = {0, 0.05f, 3}, v[3] = {1, 0.01f, 1};
    int64_t nb[6], ex[3] = {0, 1, 2};
    double dd[6];
    mls_knn(m, v, 3, m, v, 3, 1, 2, NULL, 1, nb, dd);
    CHECK(nb[0] == 1 && nb[1] == 0);
    CHECK_CLOSE(dd[0], 0.9251513, 1e-7);
    CHECK_CLOSE(dd[1], 1.2655121, 1e-7);
    mls_knn(m, v, 3, m, v, 3, 1, 2, ex, 1, nb, dd);
    CHECK(nb[0] == 1 && nb[1] == 2);
    CHECK_CLOSE(dd[1], 3.5155121, 1e-7);

    /* a distance beyond float32: means 1e30 apart, variances FLT_MIN: (1e30)^2 / 2^-125 / 2 is
     * about 2e97, finite in double; the kernel's float is FLT_MAX, mls_knn's double the exact */
    float fm[2] = {0, 1e30f}, fv[2] = {FLT_MIN, FLT_MIN};
    G = mls_set_new(fm + 1, fv + 1, 1, 1, NULL);
    mls_row(G, fm, fv, 0, row);
    CHECK(row[0] == FLT_MAX);
    mls_set_free(G);
    mls_knn(fm, fv, 1, fm + 1, fv + 1, 1, 1, 1, NULL, 1, nb, dd);
    CHECK(nb[0] == 0 && isfinite(dd[0]) && dd[0] > 1e97);
}

/* ---------------------------------------------------------------- the kernel against mls_score */

static void test_kernel(void)
{
    rng r;
    rng_init(&r, 714, RNG_STREAM('t', 'm', 'l', 's'));
    int dims[] = {1, 15, 16, 31, 32, 33, 64, 70};
    double worst = 0;
    int64_t nbig = 0;
    for (int t = 0; t < 8; t++) {
        int D = dims[t];
        int64_t n = 37; /* two whole blocks of 16 and a part */
        float *mu = malloc((size_t)n * D * sizeof *mu), *var = malloc((size_t)n * D * sizeof *var);
        for (int64_t e = 0; e < n * D; e++) {
            /* odd trials: variances from 1e-30 to 1e30, means up to 1e6 */
            double s = t % 2 ? 69 * (2 * rng_uniform(&r) - 1) : rng_normal(&r);
            var[e] = (float)exp(s);
            mu[e] = (float)(rng_normal(&r) * (t % 2 ? 1e6 : 1));
        }
        int64_t *order = malloc((size_t)n * sizeof *order);
        for (int64_t i = 0; i < n; i++)
            order[i] = (i * 7) % n;
        mls_set *G = mls_set_new(mu, var, n, D, NULL), *P = mls_set_new(mu, var, n, D, order);
        float *row = malloc((size_t)n * sizeof *row), *prow = malloc((size_t)n * sizeof *prow);
        for (int64_t q = 0; q < n; q++) {
            mls_row(G, mu + q * D, var + q * D, 0, row);
            mls_row(P, mu + q * D, var + q * D, 0, prow);
            for (int64_t g = 0; g < n; g++) {
                /* the same pair in another lane or block: the same bits */
                CHECK(prow[g] == row[order[g]]);
                /* mls.h's error: about D x 6e-8 of the magnitudes of S and (sum log h) / 2 */
                double S = 0, Lh = 0;
                for (int l = 0; l < D; l++) {
                    double d = (double)mu[q * D + l] - mu[g * D + l];
                    double h = 0.5 * ((double)var[q * D + l] + var[g * D + l]);
                    S += 0.25 * d * d / h; /* (d / 2)^2 / h, the kernel's terms */
                    Lh += fabs(log(h));
                }
                double want = dist(mu, var, q, mu, var, g, D), mag = S + 0.5 * Lh + D;
                if (!(want < FLT_MAX)) { /* beyond float32: FLT_MAX */
                    CHECK(row[g] == FLT_MAX);
                    nbig++;
                    continue;
                }
                double rel = fabs(row[g] - want) / mag;
                worst = rel > worst ? rel : worst;
                CHECK(rel <= (D + 8) * 6e-8);
            }
        }
        mls_set_free(G);
        mls_set_free(P);
        free(row), free(prow), free(order), free(mu), free(var);
    }
    printf("kernel against mls_score: largest error %.3g of the magnitudes; %lld pairs beyond float32\n", worst,
           (long long)nbig);
    CHECK(nbig > 0);
}

/* ---------------------------------------------------------------- mls_floor */

static void test_floor(void)
{
    rng r;
    rng_init(&r, 714, RNG_STREAM('t', 'f', 'l', 'r'));
    int D = 5;
    int64_t n = 60;
    float *mu = malloc((size_t)n * D * sizeof *mu), *var = malloc((size_t)n * D * sizeof *var);
    for (int64_t e = 0; e < n * D; e++) {
        mu[e] = (float)(0.01 * rng_normal(&r));
        var[e] = (float)exp(4 * rng_normal(&r));
    }
    /* queries 0 .. 9 with variances far below the gallery's (items 10 ..): the bound is the
     * gallery's only, so it must hold for them too */
    for (int64_t e = 0; e < 10 * D; e++)
        var[e] = 1e-20f;
    double f = mls_floor(var + 10 * D, n - 10, D), lo = INFINITY;
    for (int64_t q = 0; q < n; q++)
        for (int64_t g = 10; g < n; g++) {
            double d = dist(mu, var, q, mu, var, g, D);
            lo = d < lo ? d : lo;
        }
    CHECK(f <= lo);
    /* by hand: one gallery item, D = 1, variance e: floor = 1/2 + 1/2 log(2 pi) */
    float e1[1] = {(float)M_E};
    CHECK_CLOSE(mls_floor(e1, 1, 1), 0.5 * log((double)(float)M_E) + 0.5 * LOG2PI, 1e-12);
    free(mu), free(var);
}

/* ---------------------------------------------------------------- mls_knn against a brute force */

typedef struct {
    double d;
    int64_t g;
} pair_d;

static int pair_cmp(const void *pa, const void *pb)
{
    const pair_d *a = pa, *b = pb;
    if (a->d != b->d)
        return a->d < b->d ? -1 : 1;
    return (a->g > b->g) - (a->g < b->g);
}

/* the gallery ranked for query q by (-MLS in double, index), ex left out: into o (n kept) */
static int64_t brute_rank(const float *qm, const float *qv, int64_t q, const float *gm, const float *gv, int64_t ng,
                          int D, int64_t ex, pair_d *o)
{
    int64_t n = 0;
    for (int64_t g = 0; g < ng; g++)
        if (g != ex)
            o[n++] = (pair_d){dist(qm, qv, q, gm, gv, g, D), g};
    qsort(o, (size_t)n, sizeof *o, pair_cmp);
    return n;
}

static void test_knn_brute(void)
{
    rng r;
    rng_init(&r, 714, RNG_STREAM('t', 'k', 'n', 'm'));
    for (int trial = 0; trial < 6; trial++) {
        int D = 1 + (int)rng_below(&r, 40), k = 1 + (int)rng_below(&r, 12), loo = trial % 2 == 0;
        int64_t nq = 1 + (int64_t)rng_below(&r, 150), ng = loo ? nq + k : 20 + (int64_t)rng_below(&r, 200);
        if (loo)
            nq = ng;
        float *qm = malloc((size_t)nq * D * sizeof *qm), *qv = malloc((size_t)nq * D * sizeof *qv);
        float *gm = loo ? qm : malloc((size_t)ng * D * sizeof *gm);
        float *gv = loo ? qv : malloc((size_t)ng * D * sizeof *gv);
        for (int64_t e = 0; e < nq * D; e++)
            qm[e] = (float)rng_normal(&r), qv[e] = (float)exp(rng_normal(&r));
        if (!loo)
            for (int64_t e = 0; e < ng * D; e++)
                gm[e] = (float)rng_normal(&r), gv[e] = (float)exp(rng_normal(&r));
        int64_t *ex = loo ? malloc((size_t)nq * sizeof *ex) : NULL;
        for (int64_t q = 0; loo && q < nq; q++)
            ex[q] = q;
        int64_t *nbr = malloc((size_t)nq * k * sizeof *nbr), *nbr3 = malloc((size_t)nq * k * sizeof *nbr3);
        double *d = malloc((size_t)nq * k * sizeof *d), *d3 = malloc((size_t)nq * k * sizeof *d3);
        mls_knn(qm, qv, nq, gm, gv, ng, D, k, ex, 1, nbr, d);
        mls_knn(qm, qv, nq, gm, gv, ng, D, k, ex, 3, nbr3, d3);
        CHECK(!memcmp(nbr, nbr3, (size_t)nq * k * sizeof *nbr));
        CHECK(!memcmp(d, d3, (size_t)nq * k * sizeof *d));
        pair_d *o = malloc((size_t)ng * sizeof *o);
        int bad = 0;
        for (int64_t q = 0; q < nq; q++) {
            brute_rank(qm, qv, q, gm, gv, ng, D, ex ? ex[q] : -1, o);
            for (int j = 0; j < k; j++)
                bad += nbr[q * k + j] != o[j].g || d[q * k + j] != o[j].d;
        }
        CHECK(bad == 0);
        free(o), free(nbr), free(nbr3), free(d), free(d3), free(ex);
        if (!loo)
            free(gm), free(gv);
        free(qm), free(qv);
    }
}

/* ---------------------------------------------------------------- retrieval by -MLS */

static void test_retrieval(void)
{
    rng r;
    rng_init(&r, 714, RNG_STREAM('t', 'r', 'm', 'l'));
    int ks[3] = {1, 2, 4};
    for (int trial = 0; trial < 4; trial++) {
        int D = 2 + (int)rng_below(&r, 20), loo = trial % 2 == 0;
        int64_t nq = 30 + (int64_t)rng_below(&r, 120), ng = loo ? nq : 40 + (int64_t)rng_below(&r, 150);
        float *qm = malloc((size_t)nq * D * sizeof *qm), *qv = malloc((size_t)nq * D * sizeof *qv);
        float *gm = loo ? qm : malloc((size_t)ng * D * sizeof *gm);
        float *gv = loo ? qv : malloc((size_t)ng * D * sizeof *gv);
        int32_t *qc = malloc((size_t)nq * sizeof *qc), *gc = loo ? qc : malloc((size_t)ng * sizeof *gc);
        /* classes on a direction, the variances on another scale: the two rankings differ */
        for (int64_t i = 0; i < nq; i++) {
            qc[i] = (int32_t)rng_below(&r, 5);
            for (int l = 0; l < D; l++)
                qm[i * D + l] = (float)(qc[i] * (l % 2) + rng_normal(&r)), qv[i * D + l] = (float)exp(rng_normal(&r));
        }
        for (int64_t i = 0; !loo && i < ng; i++) {
            gc[i] = (int32_t)rng_below(&r, 5);
            for (int l = 0; l < D; l++)
                gm[i * D + l] = (float)(gc[i] * (l % 2) + rng_normal(&r)), gv[i * D + l] = (float)exp(rng_normal(&r));
        }
        int64_t *ex = loo ? malloc((size_t)nq * sizeof *ex) : NULL;
        for (int64_t q = 0; loo && q < nq; q++)
            ex[q] = q;
        retrieval_job J = {qm, qc, nq, gm, gc, ng, D, ex, NULL, 1, ks, 3, 1, NULL, NULL, 0, qv, gv, MLS_NEG};
        retrieval_query *per = malloc((size_t)nq * sizeof *per), *per3 = malloc((size_t)nq * sizeof *per3);
        retrieval_query *atr = malloc((size_t)nq * sizeof *atr);
        retrieval_summary sum, sum3, suma;
        retrieval_run(&J, per, &sum);
        J.threads = 3;
        retrieval_run(&J, per3, &sum3);
        CHECK(!memcmp(per, per3, (size_t)nq * sizeof *per));
        int64_t K = retrieval_at_r_depth(qc, nq, gc, ng, loo, 4, ng - loo);
        retrieval_run_at_r(&J, K, atr, &suma);
        /* the ranks of a full sort in double: no near-ties in random Gaussians */
        pair_d *o = malloc((size_t)ng * sizeof *o);
        int64_t *rank = malloc((size_t)ng * sizeof *rank);
        for (int64_t q = 0; q < nq; q++) {
            int64_t n = brute_rank(qm, qv, q, gm, gv, ng, D, ex ? ex[q] : -1, o), R = 0;
            for (int64_t t = 0; t < n; t++)
                if (gc[o[t].g] == qc[q])
                    rank[R++] = t + 1;
            retrieval_query want;
            retrieval_from_ranks(rank, R, ks, 3, &want);
            CHECK(per[q].npos == want.npos && per[q].r1 == want.r1);
            if (R) {
                CHECK_CLOSE(per[q].ap, want.ap, 1e-6);
                CHECK_CLOSE(per[q].map_r, want.map_r, 1e-6);
                CHECK_CLOSE(atr[q].map_r, want.map_r, 1e-6);
                CHECK(atr[q].r1 == want.r1);
            }
        }
        free(o), free(rank), free(per), free(per3), free(atr), free(ex);
        if (!loo)
            free(gm), free(gv), free(gc);
        free(qm), free(qv), free(qc);
    }
}

/* ---------------------------------------------------------------- refusals */

static int dies_check(const match_set *S)
{
    if (check_child()) {
        match_mls_check("x.hs", S, "--distance mls");
        _exit(0);
    }
    return check_died();
}

static void test_refusals(void)
{
    float mu[4] = {0, 1, 2, 3}, var[4] = {1, 1, 1, 1};
    match_set S = {.n = 2, .C = 1, .D = 2, .mu = mu, .var = var};
    if (check_child()) { /* the good set passes */
        match_mls_check("x.hs", &S, "--distance mls");
        _exit(0);
    }
    CHECK(!check_died());
    S.var = NULL; /* point embeddings */
    CHECK(dies_check(&S));
    S.var = var, S.C = 2, S.D = 1; /* a mixture */
    CHECK(dies_check(&S));
    S.C = 1, S.D = 2;
    float bad[4] = {0, 1e-39f, NAN, -1};
    for (int b = 0; b < 4; b++) {
        var[3] = bad[b];
        CHECK(dies_check(&S));
    }
    var[3] = FLT_MIN; /* the smallest accepted */
    if (check_child()) {
        match_mls_check("x.hs", &S, "--distance mls");
        _exit(0);
    }
    CHECK(!check_died());
    CHECK(mls_check_var(var, 2, 2) == -1);
    var[1] = 0;
    CHECK(mls_check_var(var, 2, 2) == 1);
}

/* ---------------------------------------------------------------- the other kinds */

/* csd, kl, bhatt of items q, g by their definitions (mls.h), in double, and the magnitude of their
 * terms (the float kernel's error is about D x 6e-8 of it) */
static double kind_ref(int kind, const float *mu, const float *var, int64_t q, int64_t g, int D, double *mag)
{
    double s = 0, m = 0;
    for (int l = 0; l < D; l++) {
        double d = (double)mu[q * D + l] - mu[g * D + l], a = var[q * D + l], b = var[g * D + l];
        if (kind == MLS_CSD)
            s += d * d + a + b, m += d * d + a + b;
        else if (kind == MLS_KL) { /* (KL(q||g) + KL(g||q)) / 2 */
            double k1 = 0.5 * (a / b + d * d / b - 1 + log(b / a)), k2 = 0.5 * (b / a + d * d / a - 1 + log(a / b));
            s += (k1 + k2) / 2, m += (a / b + b / a + d * d / a + d * d / b) / 4;
        } else {
            double v = (a + b) / 2;
            s += d * d / (8 * v) + 0.5 * log(v / sqrt(a * b));
            m += d * d / (8 * v) + 0.5 * fabs(log(v)) + 0.25 * (fabs(log(a)) + fabs(log(b)));
        }
    }
    *mag = m;
    return s;
}

static void test_kinds(void)
{
    /* by hand, D = 1: q (0, var 1), g (1, var 3): csd 1 + 1 + 3 = 5; kl ((1 - 3)^2 + 1 x 4) / 12 = 2/3;
     * bhatt, v = 2: 1/16 + log(2) / 2 - log(3) / 4 = 0.134420519 */
    float hm[] = {0, 1}, hv[] = {1, 3}, row[2];
    double want[] = {5, 2.0 / 3, 0.0625 + 0.5 * log(2) - 0.25 * log(3)};
    for (int kind = MLS_CSD; kind <= MLS_BHATT; kind++) {
        mls_set *G = mls_set_new_kind(kind, hm, hv, 2, 1, NULL);
        mls_row(G, hm, hv, 0, row);
        CHECK_CLOSE(row[1], want[kind - 1], 2e-7);
        CHECK_CLOSE(mls_distance(kind, hm, hv, hm + 1, hv + 1, 1), want[kind - 1], 1e-15);
        /* an item against itself: csd its variances twice, kl and bhatt 0 (never below) */
        CHECK(row[0] == (kind == MLS_CSD ? 2.0f : 0.0f));
        mls_row(G, hm, hv, 1.5, row); /* add */
        CHECK_CLOSE(row[1], want[kind - 1] + 1.5, 4e-7);
        mls_set_free(G);
    }
    /* random sets: the kernel's floats against the definitions, the same pair in another lane the
     * same bits, mls_distance the definitions to 1e-12; beyond float32: FLT_MAX (kl: beyond FLT_MAX / 4 may be) */
    rng r;
    rng_init(&r, 714, RNG_STREAM('t', 'm', 'k', 'd'));
    int dims[] = {1, 16, 33, 64};
    double worst[4] = {0};
    int64_t nbig = 0;
    for (int t = 0; t < 8; t++) {
        int D = dims[t / 2];
        int64_t n = 37;
        float *mu = malloc((size_t)n * D * sizeof *mu), *var = malloc((size_t)n * D * sizeof *var);
        for (int64_t e = 0; e < n * D; e++) { /* odd trials: variances from 1e-30 to 1e30 */
            var[e] = (float)exp(t % 2 ? 69 * (2 * rng_uniform(&r) - 1) : rng_normal(&r));
            mu[e] = (float)(rng_normal(&r) * (t % 2 ? 1e3 : 1));
        }
        int64_t *order = malloc((size_t)n * sizeof *order);
        for (int64_t i = 0; i < n; i++)
            order[i] = (i * 7) % n;
        float *row = malloc((size_t)n * sizeof *row), *prow = malloc((size_t)n * sizeof *prow);
        for (int kind = MLS_CSD; kind <= MLS_BHATT; kind++) {
            mls_set *G = mls_set_new_kind(kind, mu, var, n, D, NULL), *P = mls_set_new_kind(kind, mu, var, n, D, order);
            for (int64_t q = 0; q < n; q++) {
                mls_row(G, mu + q * D, var + q * D, 0, row);
                mls_row(P, mu + q * D, var + q * D, 0, prow);
                for (int64_t g = 0; g < n; g++) {
                    CHECK(prow[g] == row[order[g]]);
                    CHECK(row[g] >= 0);
                    double mag, ref = kind_ref(kind, mu, var, q, g, D, &mag);
                    double ex = mls_distance(kind, mu + q * D, var + q * D, mu + g * D, var + g * D, D);
                    CHECK(fabs(ex - ref) <= 1e-12 * (mag + 1));
                    if (!(ref < FLT_MAX)) {
                        CHECK(row[g] == FLT_MAX);
                        nbig++;
                        continue;
                    }
                    double rel = fabs(row[g] - ref) / (mag + 1e-30);
                    if (ref > FLT_MAX / 4 && row[g] == FLT_MAX) /* kl's terms may overflow first (mls.h) */
                        continue;
                    worst[kind] = rel > worst[kind] ? rel : worst[kind];
                    CHECK(rel <= (D + 8) * 6e-8);
                }
            }
            mls_set_free(G);
            mls_set_free(P);
        }
        free(row), free(prow), free(order), free(mu), free(var);
    }
    printf("kernel's csd, kl, bhatt against their definitions: largest errors %.3g, %.3g, %.3g of the magnitudes; "
           "%lld pairs beyond float32\n", worst[1], worst[2], worst[3], (long long)nbig);
    CHECK(nbig > 0);
}

int main(void)
{
    test_by_hand();
    test_kernel();
    test_kinds();
    test_floor();
    test_knn_brute();
    test_retrieval();
    test_refusals();
    return check_done("test_mls");
}
