/* disentangle's numbers: midranks, the Mann-Whitney AUC with ties counting 1/2, and every
 * group's AUC from one set of ranks (lib/measures/auc.h), against values derived by hand (derivations
 * in the comments) and against a brute-force count over all (positive, negative) pairs; and the
 * measure itself (lib/evaluation/disentangle.h) on a 4-item case by hand. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "auc.h"
#include "check.h"
#include "disentangle.h"
#include "rng.h"
#include "util.h"

/* the definition itself, O(n^2): pairs won by the positive plus half the ties, over all pairs */
static double auc_brute(const double *x, const int32_t *group, int g, int64_t n, double *won_out)
{
    double won = 0, pairs = 0;
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < n; j++)
            if (group[i] == g && group[j] != g) {
                won += x[i] > x[j] ? 1 : x[i] == x[j] ? 0.5 : 0;
                pairs++;
            }
    *won_out = won;
    return pairs ? won / pairs : NAN;
}

static void test_hand(void)
{
    /* x = [0.3, 0.1, 0.3, 0.7, 0.5, 0.1]. Sorted: 0.1 0.1 | 0.3 0.3 | 0.5 | 0.7 at positions 1-2,
     * 3-4, 5, 6, so the midranks are [3.5, 1.5, 3.5, 6, 5, 1.5]. */
    const double x[6] = {0.3, 0.1, 0.3, 0.7, 0.5, 0.1};
    const double want_rank[6] = {3.5, 1.5, 3.5, 6, 5, 1.5};
    double rank[6];
    metrics_auc_midranks(x, 6, rank);
    for (int i = 0; i < 6; i++)
        CHECK_CLOSE(rank[i], want_rank[i], 0);

    /* labels [1, 0, 0, 1, 0, 1]: positives 0.3, 0.7, 0.1 against negatives 0.1, 0.3, 0.5.
     * 0.3 beats 0.1, ties 0.3, loses to 0.5: 1.5; 0.7 beats all three: 3; 0.1 ties 0.1, loses
     * twice: 0.5. U = 5 of 9 pairs, AUC = 5/9. By ranks: R = 3.5 + 6 + 1.5 = 11, U = 11 - 3*4/2 = 5. */
    const uint8_t label[6] = {1, 0, 0, 1, 0, 1};
    CHECK_CLOSE(metrics_auc(x, label, 6), 5.0 / 9, 1e-15);

    /* three groups [0, 1, 1, 2, 1, 0]:
     *   g0 = {0.3, 0.1} vs {0.1, 0.3, 0.7, 0.5}: 0.3 -> 1 + 1/2, 0.1 -> 1/2: U = 2 of 8, AUC 1/4
     *        (ranks: 3.5 + 1.5 - 2*3/2 = 2)
     *   g1 = {0.1, 0.3, 0.5} vs {0.3, 0.7, 0.1}: 0.1 -> 1/2, 0.3 -> 1 + 1/2, 0.5 -> 2: U = 4 of 9
     *        (ranks: 1.5 + 3.5 + 5 - 3*4/2 = 4)
     *   g2 = {0.7} vs the other five: U = 5 of 5, AUC 1 (ranks: 6 - 1 = 5) */
    const int32_t group[6] = {0, 1, 1, 2, 1, 0};
    int64_t npos[4];
    double u[4], auc[4];
    metrics_auc_groups(rank, group, 6, 4, npos, u, auc);
    CHECK(npos[0] == 2 && npos[1] == 3 && npos[2] == 1 && npos[3] == 0);
    CHECK_CLOSE(u[0], 2, 0);
    CHECK_CLOSE(u[1], 4, 0);
    CHECK_CLOSE(u[2], 5, 0);
    CHECK_CLOSE(auc[0], 0.25, 1e-15);
    CHECK_CLOSE(auc[1], 4.0 / 9, 1e-15);
    CHECK_CLOSE(auc[2], 1, 1e-15);
    CHECK(isnan(auc[3])); /* an empty group has no AUC */
    /* NULL outputs are allowed */
    metrics_auc_groups(rank, group, 6, 3, NULL, NULL, auc);
    CHECK_CLOSE(auc[1], 4.0 / 9, 1e-15);

    /* no positive, no negative: undefined; every score equal: every pair a tie, 1/2 */
    const uint8_t none[6] = {0}, all[6] = {1, 1, 1, 1, 1, 1};
    CHECK(isnan(metrics_auc(x, none, 6)));
    CHECK(isnan(metrics_auc(x, all, 6)));
    const double flat[6] = {2, 2, 2, 2, 2, 2};
    CHECK_CLOSE(metrics_auc(flat, label, 6), 0.5, 0);
    /* the two groups of a two-valued attribute: U_0 + U_1 = n_0 n_1 exactly, so their
     * separations max(U, n_0 n_1 - U) are equal (disentangle counts such an attribute once) */
    const int32_t two[6] = {1, 0, 0, 1, 0, 1};
    metrics_auc_groups(rank, two, 6, 2, npos, u, auc);
    CHECK(u[0] + u[1] == 9);
    CHECK_CLOSE(auc[1], 5.0 / 9, 1e-15);
    CHECK_CLOSE(auc[0], 4.0 / 9, 1e-15);
}

/* random small cases with many ties: the rank-based AUC of every group equals the pair count */
static void test_random(void)
{
    rng r;
    rng_init(&r, 714, RNG_STREAM('a', 'u', 'c', 0));
    enum { MAXN = 60 };
    double x[MAXN], neg[MAXN], rank[MAXN], u[6], auc[6];
    int32_t group[MAXN];
    uint8_t label[MAXN];
    int64_t npos[6];
    int exact = 1, cases = 0, undefined = 0;
    for (int rep = 0; rep < 2000; rep++) {
        int64_t n = 1 + (int64_t)rng_below(&r, MAXN);
        int levels = 1 + (int)rng_below(&r, 8); /* few levels: ties everywhere */
        int G = 1 + (int)rng_below(&r, 6);
        for (int64_t i = 0; i < n; i++) {
            x[i] = rep % 3 ? (double)rng_below(&r, (uint64_t)levels) : rng_normal(&r);
            neg[i] = -x[i];
            group[i] = (int32_t)rng_below(&r, (uint64_t)G);
        }
        metrics_auc_midranks(x, n, rank);
        metrics_auc_groups(rank, group, n, G, npos, u, auc);
        for (int g = 0; g < G; g++) {
            double won, want = auc_brute(x, group, g, n, &won);
            int64_t cnt = 0;
            for (int64_t i = 0; i < n; i++)
                cnt += group[i] == g;
            CHECK(npos[g] == cnt);
            if (isnan(want)) {
                CHECK(isnan(auc[g]));
                undefined++;
                continue;
            }
            cases++;
            CHECK_CLOSE(auc[g], want, 1e-12);
            /* U is exact: the pair count itself, an integer or a half */
            exact &= u[g] == won;
            for (int64_t i = 0; i < n; i++)
                label[i] = group[i] == g;
            CHECK_CLOSE(metrics_auc(x, label, n), want, 1e-12);
            /* reversing the scores turns AUC into 1 - AUC */
            CHECK_CLOSE(metrics_auc(neg, label, n), 1 - want, 1e-12);
        }
    }
    CHECK(exact);
    CHECK(cases > 3000 && undefined > 100); /* both kinds were exercised */
    printf("random: %d defined and %d undefined group AUCs against the pair count\n", cases, undefined);
}

/* a large case with a known answer: n = 200,000, x = i mod 1000 (200 ties per level), positives
 * where i mod 1000 >= 500 but for every 4th, which sits at level 0. Exact U by counting: a
 * positive at level L >= 500 beats every negative below L and ties the negatives at L. */
static void test_large(void)
{
    int64_t n = 200000;
    double *x = emalloc((size_t)n * sizeof *x);
    uint8_t *label = emalloc((size_t)n);
    int64_t negat[1000] = {0}, posat[1000] = {0};
    for (int64_t i = 0; i < n; i++) {
        int64_t L = i % 1000;
        label[i] = L >= 500;
        if (label[i] && (i / 1000) % 4 == 0)
            L = 0;
        x[i] = (double)L;
        (label[i] ? posat : negat)[L]++;
    }
    double won = 0, below = 0, np = 0, nn = 0;
    for (int L = 0; L < 1000; L++) {
        won += (double)posat[L] * (below + 0.5 * (double)negat[L]);
        below += (double)negat[L];
        np += (double)posat[L];
        nn += (double)negat[L];
    }
    double t0 = now_seconds();
    double got = metrics_auc(x, label, n);
    printf("large: n = %lld, AUC %.12f in %.3f s\n", (long long)n, got, now_seconds() - t0);
    CHECK_CLOSE(got, won / (np * nn), 1e-14);
    free(x);
    free(label);
}

/* the measure (lib/evaluation/disentangle.h) on 4 items, D = 2, by hand. mean = [0 1; 1 0; 2 3; 3 2].
 * Attribute 0 = [0 0 1 1]: value 1 (items 2, 3) beats items 0, 1 on both dimensions, U = 4 of
 * 4 pairs: separation 1 on dims 0 and 1, best the lowest, dim 0; value 0 the mirror image.
 * Mean 1, main dim 0 (2 values), distinct 1; two values count once in the pool.
 * Attribute 1 = [5 7 7 9]: value 5 (item 0): dim 0, 0 below 1, 2, 3: U = 0, separation 3/3 = 1;
 * dim 1, 1 beats 0 only: U = 1, separation 2/3; best dim 0, score 1. Value 7 (items 1, 2) against
 * items 0, 3: dim 0, 1 > 0, 1 < 3, 2 > 0, 2 < 3: U = 2 of 4, separation 1/2; dim 1, 0 < 1, 0 < 2,
 * 3 > 1, 3 > 2: U = 2, 1/2 too; tie: dim 0, score 1/2. Value 9 (item 3): dim 0, 3 beats all: 1;
 * dim 1, 2 beats 1 and 0: 2/3; dim 0, score 1. Mean (1 + 1/2 + 1)/3 = 5/6, main dim 0 (3 values),
 * distinct 1. Pool: 1 (attribute 0 once) + 1 + 1/2 + 1 over 4 values = 0.875. Both attributes
 * have main dim 0: shared. */
static void test_measure(void)
{
    const double mean[8] = {0, 1, 1, 0, 2, 3, 3, 2};
    const double raw[8] = {0, 5, 0, 7, 1, 7, 1, 9}; /* (n, A) */
    const char *const names[2] = {"a", "b"};
    disentangle_result R;
    disentangle_measure(mean, 4, 2, raw, 2, names, &R);
    CHECK(R.n == 4 && R.D == 2 && R.A == 2);
    CHECK(R.attr[0].G == 2 && R.attr[1].G == 3);
    CHECK_CLOSE(R.attr[0].mean, 1, 1e-15);
    CHECK_CLOSE(R.attr[1].mean, 5.0 / 6, 1e-15);
    const double want_score[3] = {1, 0.5, 1}, want_value[3] = {5, 7, 9};
    const int64_t want_npos[3] = {1, 2, 1};
    for (int g = 0; g < 3; g++) {
        CHECK_CLOSE(R.attr[1].score[g], want_score[g], 1e-15);
        CHECK(R.attr[1].value[g] == want_value[g] && R.attr[1].npos[g] == want_npos[g]);
        CHECK(R.attr[1].best[g] == 0);
    }
    CHECK_CLOSE(disentangle_dim_auc(&R, 1, 0, 1), 1.0 / 3, 1e-15); /* U = 1 of 3 pairs */
    CHECK_CLOSE(disentangle_dim_auc(&R, 1, 1, 0), 0.5, 1e-15);
    CHECK_CLOSE(disentangle_dim_auc(&R, 0, 1, 1), 1, 1e-15);
    for (int a = 0; a < 2; a++)
        CHECK(R.attr[a].main_dim == 0 && R.attr[a].distinct == 1 && R.attr[a].main_count == R.attr[a].G);
    CHECK(R.nvalues == 4);
    CHECK_CLOSE(R.mean, 0.875, 1e-15);
    CHECK(disentangle_shared(&R, 0, 1));
    disentangle_free(&R);

    /* one value: no AUC, not pooled, shares nothing */
    const double one[4] = {3, 3, 3, 3};
    disentangle_measure(mean, 4, 2, one, 1, names, &R);
    CHECK(R.attr[0].G == 1 && isnan(R.attr[0].mean) && R.attr[0].best[0] == -1 && R.attr[0].main_dim == -1);
    CHECK(R.nvalues == 0 && isnan(R.mean));
    disentangle_free(&R);
}

int main(void)
{
    util_init("test_disentangle");
    test_hand();
    test_random();
    test_large();
    test_measure();
    return check_done("test_disentangle");
}
