/* metrics: AP with ties, PR curve and areas, bins, Kendall's tau-b, kNN search and vote, against
 * values derived by hand (derivations in the comments) and a brute-force kNN in double. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "blas.h"
#include "check.h"
#include "metrics.h"
#include "rng.h"
#include "util.h"

static void test_ap(void)
{
    /* scores [0.9, 0.8, 0.8, 0.1], labels [1, 0, 1, 1]; P = 3. Blocks by score, descending:
     *   {0.9: +}          ends at rank 1 with tp 1: precision 1/1
     *   {0.8: -, +}       ends at rank 3 with tp 2: precision 2/3 (for its one positive)
     *   {0.1: +}          ends at rank 4 with tp 3: precision 3/4
     * AP = (1 + 2/3 + 3/4) / 3 = (12 + 8 + 9) / 36 = 29/36 = 0.80555...
     * (Ranking the tied positive first would give (1 + 1 + 3/4)/3 = 11/12; the block rule takes
     * the end of the block, whatever the input order.) */
    double s1[] = {0.9, 0.8, 0.8, 0.1};
    uint8_t l1[] = {1, 0, 1, 1}, l1b[] = {1, 1, 0, 1};
    CHECK_CLOSE(metrics_ap(s1, l1, 4), 29.0 / 36, 1e-15);
    CHECK_CLOSE(metrics_ap(s1, l1b, 4), 29.0 / 36, 1e-15); /* tied pair swapped: same AP */
    /* PR curve: one point per distinct score, highest first:
     *   t 0.9: tp 1 fp 0, recall 1/3, precision 1
     *   t 0.8: tp 2 fp 1, recall 2/3, precision 2/3
     *   t 0.1: tp 3 fp 1, recall 1,   precision 3/4
     * step area = 1/3 * 1 + 1/3 * 2/3 + 1/3 * 3/4 = 29/36 (= AP)
     * trapezoids from (0, 1): 1/3 * (1 + 1)/2 + 1/3 * (1 + 2/3)/2 + 1/3 * (2/3 + 3/4)/2
     *                        = 1/3 + 5/18 + 17/72 = (24 + 20 + 17)/72 = 61/72 */
    metrics_pr_point pts[4];
    int64_t np = metrics_pr_curve(s1, l1, 4, pts);
    CHECK(np == 3);
    CHECK_CLOSE(pts[0].threshold, 0.9, 0);
    CHECK_CLOSE(pts[0].recall, 1.0 / 3, 1e-15);
    CHECK_CLOSE(pts[0].precision, 1, 0);
    CHECK_CLOSE(pts[1].threshold, 0.8, 0);
    CHECK_CLOSE(pts[1].recall, 2.0 / 3, 1e-15);
    CHECK_CLOSE(pts[1].precision, 2.0 / 3, 1e-15);
    CHECK(pts[1].tp == 2 && pts[1].fp == 1);
    CHECK_CLOSE(pts[2].recall, 1, 0);
    CHECK_CLOSE(pts[2].precision, 0.75, 0);
    CHECK_CLOSE(metrics_pr_step_area(pts, np), 29.0 / 36, 1e-15);
    CHECK_CLOSE(metrics_pr_trapezoid_area(pts, np), 61.0 / 72, 1e-15);

    /* perfect ranking: every positive at precision 1, AP = 1 exactly */
    double s2[] = {4, 3, 2, 1};
    uint8_t good[] = {1, 1, 0, 0}, bad[] = {0, 0, 1, 1};
    CHECK_CLOSE(metrics_ap(s2, good, 4), 1, 0);
    /* reversed: the positives at ranks 3 and 4: (1/3 + 2/4) / 2 = 5/12 */
    CHECK_CLOSE(metrics_ap(s2, bad, 4), 5.0 / 12, 1e-15);
    /* all scores tied: one block of 4 with 2 positives, each positive gets 2/4: AP = 1/2 */
    double s3[] = {0.5, 0.5, 0.5, 0.5};
    uint8_t l3[] = {1, 0, 1, 0};
    CHECK_CLOSE(metrics_ap(s3, l3, 4), 0.5, 0);
    /* no positive: undefined */
    uint8_t none[] = {0, 0, 0, 0};
    CHECK(isnan(metrics_ap(s2, none, 4)));
    /* AP = step area of the curve on a random example with many ties (scores on a coarse grid) */
    rng r;
    rng_init(&r, 714, 1);
    enum { N = 5000 };
    double *s = malloc(N * sizeof *s);
    uint8_t *l = malloc(N);
    metrics_pr_point *p = malloc(N * sizeof *p);
    for (int i = 0; i < N; i++) {
        l[i] = rng_uniform(&r) < 0.3;
        s[i] = floor(10 * (rng_uniform(&r) + 0.5 * l[i])) / 10;
    }
    np = metrics_pr_curve(s, l, N, p);
    CHECK(np <= 16);
    CHECK_CLOSE(metrics_ap(s, l, N), metrics_pr_step_area(p, np), 1e-12);
    free(s);
    free(l);
    free(p);
}

static void test_bins_and_sort(void)
{
    /* n = 47, B = 20: 47 = 20 * 2 + 7, so bins 0..6 hold 3 items and bins 7..19 hold 2:
     * starts 0 3 6 ... 21 (bin 7), then 23, 25, ..., 47 */
    int64_t st[21];
    metrics_bins(47, 20, st);
    int sizes_ok = 1;
    for (int b = 0; b < 20; b++)
        sizes_ok &= st[b + 1] - st[b] == (b < 7 ? 3 : 2);
    CHECK(sizes_ok);
    CHECK(st[0] == 0 && st[7] == 21 && st[20] == 47);
    metrics_bins(40, 20, st);
    CHECK(st[1] == 2 && st[20] == 40);
    metrics_bins(20, 20, st);
    CHECK(st[1] == 1 && st[19] == 19);
    /* ascending, equal keys in input order: keys [2, 1, 2, 1, 0] -> 4, 1, 3, 0, 2 */
    double key[] = {2, 1, 2, 1, 0};
    int64_t idx[5];
    metrics_argsort(key, 5, idx);
    CHECK(idx[0] == 4 && idx[1] == 1 && idx[2] == 3 && idx[3] == 0 && idx[4] == 2);
}

/* equal keys in a seeded random order: sorted by key, a permutation, the same for the same seed,
 * and each tie order about equally likely whatever the input order */
static void test_argsort_random(void)
{
    enum { N = 40 };
    double key[N];
    for (int i = 0; i < N; i++)
        key[i] = i % 3; /* three values, 13 or 14 items each */
    int64_t a[N], b[N], c[N];
    metrics_argsort_random(key, N, 714, a);
    metrics_argsort_random(key, N, 714, b);
    metrics_argsort_random(key, N, 715, c);
    int sorted_ok = 1, perm_ok = 1, same = 1, differ = 0, stable = 1;
    int seen[N] = {0};
    for (int t = 0; t < N; t++) {
        if (t)
            sorted_ok &= key[a[t - 1]] <= key[a[t]];
        perm_ok &= a[t] >= 0 && a[t] < N && !seen[a[t]]++;
        same &= a[t] == b[t];
        differ |= a[t] != c[t];
        if (t && key[a[t - 1]] == key[a[t]])
            stable &= a[t - 1] < a[t];
    }
    CHECK(sorted_ok);
    CHECK(perm_ok);
    CHECK(same);
    CHECK(differ);
    CHECK(!stable); /* ties are not left in input order */
    /* two equal keys: over 4000 seeds item 0 comes first in about half (binomial sd 32) */
    double two[2] = {5, 5};
    int first0 = 0;
    for (uint64_t seed = 1; seed <= 4000; seed++) {
        int64_t o[2];
        metrics_argsort_random(two, 2, seed, o);
        first0 += o[0] == 0;
    }
    CHECK(first0 > 1800 && first0 < 2200);
}

static void test_tau(void)
{
    /* x = 1 2 3 4 5, y = 1 3 2 2 5. The 10 pairs (i < j):
     *   (1,2) C  (1,3) C  (1,4) C  (1,5) C  (2,3) D  (2,4) D  (2,5) C  (3,4) tie in y
     *   (3,5) C  (4,5) C
     * nc = 7, nd = 2, n0 = 10, n1 = 0 (x has no ties), n2 = 1:
     * tau-b = (7 - 2) / sqrt(10 * 9) = 5 / sqrt(90) = 0.5270462766947299 */
    double x1[] = {1, 2, 3, 4, 5}, y1[] = {1, 3, 2, 2, 5};
    metrics_tau_counts c;
    CHECK_CLOSE(metrics_tau_b(x1, y1, 5, &c), 5 / sqrt(90), 1e-15);
    CHECK(c.concordant == 7 && c.discordant == 2 && c.tied_x == 0 && c.tied_y == 1 && c.pairs == 10);
    /* ties in both: x = 1 1 2 3, y = 1 1 2 2. Pairs: (1,2) tied in x and y; (1,3) (1,4) (2,3)
     * (2,4) C; (3,4) tied in y. nc = 4, nd = 0, n0 = 6, n1 = 1, n2 = 2:
     * tau-b = 4 / sqrt(5 * 4) = 0.894427190999916 */
    double x2[] = {1, 1, 2, 3}, y2[] = {1, 1, 2, 2};
    CHECK_CLOSE(metrics_tau_b(x2, y2, 4, &c), 4 / sqrt(20), 1e-15);
    CHECK(c.tied_both == 1 && c.tied_x == 1 && c.tied_y == 2);
    /* the ktau use: bin index 0 1 2 3 against performance .9 .9 .8 .95. Pairs: (0,1) tied in y,
     * (0,2) D, (0,3) C, (1,2) D, (1,3) C, (2,3) C: nc 3, nd 2, n2 1: tau-b = 1/sqrt(6 * 5);
     * ktau reports the negative, -0.18257418583505536 */
    double bx[] = {0, 1, 2, 3}, by[] = {0.9, 0.9, 0.8, 0.95};
    CHECK_CLOSE(-metrics_tau_b(bx, by, 4, NULL), -1 / sqrt(30), 1e-15);
    /* perfectly falling performance: tau-b = -1, reported +1; constant y: undefined */
    double fall[] = {4, 3, 2, 1}, flat[] = {1, 1, 1, 1};
    CHECK_CLOSE(-metrics_tau_b(bx, fall, 4, NULL), 1, 0);
    CHECK(isnan(metrics_tau_b(bx, flat, 4, NULL)));
}

static void test_vote(void)
{
    /* plain majority: three 3s beat two 5s even though the 5s are nearer */
    int32_t c1[] = {5, 5, 3, 3, 3};
    double d1[] = {1, 1, 2, 2, 2};
    CHECK(metrics_vote(c1, d1, 5) == 3);
    /* counts tied 2-2, sums 1 + 3 = 4 (class 1) and 1.5 + 2 = 3.5 (class 2): class 2, although
     * the nearest neighbour is class 1 */
    int32_t c2[] = {1, 2, 2, 1};
    double d2[] = {1, 1.5, 2, 3};
    CHECK(metrics_vote(c2, d2, 4) == 2);
    /* counts and sums tied: the class of the best-ranked neighbour */
    int32_t c3[] = {7, 3, 3, 7};
    double d3[] = {1, 1, 1, 1};
    CHECK(metrics_vote(c3, d3, 4) == 7);
    int32_t c4[] = {1, 2, 3};
    double d4[] = {1, 2, 3};
    CHECK(metrics_vote(c4, d4, 3) == 1);
}

static void test_knn_ties(void)
{
    /* query (0,0); gallery with small integer coordinates, so every float is exact:
     *   g0 (1,0)  g1 (0,1)  g2 (-1,0)  g3 (0,-1)   all at distance 1
     *   g4 (2,0)  g5 (0,3)
     * k = 3: four items tie at distance 1, the lower indices win: g0, g1, g2; then g3 */
    float G[] = {1, 0, 0, 1, -1, 0, 0, -1, 2, 0, 0, 3};
    float Q[] = {0, 0};
    int64_t nbr[5];
    double d2[5];
    metrics_knn(Q, NULL, 1, G, NULL, 6, 2, 5, NULL, 1, nbr, d2);
    CHECK(nbr[0] == 0 && nbr[1] == 1 && nbr[2] == 2 && nbr[3] == 3 && nbr[4] == 4);
    CHECK_CLOSE(d2[0], 1, 0);
    CHECK_CLOSE(d2[3], 1, 0);
    CHECK_CLOSE(d2[4], 4, 0);
    /* exclusion: g1 excluded -> g0, g2, g3, g4, g5 */
    int64_t ex = 1;
    metrics_knn(Q, NULL, 1, G, NULL, 6, 2, 5, &ex, 1, nbr, d2);
    CHECK(nbr[0] == 0 && nbr[1] == 2 && nbr[2] == 3 && nbr[3] == 4 && nbr[4] == 5);
    CHECK_CLOSE(d2[4], 9, 0);
    /* added terms: gx[0] = 10 pushes g0 to 11, behind g5 (9) */
    double gx[] = {10, 0, 0, 0, 0, 0};
    metrics_knn(Q, NULL, 1, G, gx, 6, 2, 5, NULL, 1, nbr, d2);
    CHECK(nbr[0] == 1 && nbr[1] == 2 && nbr[2] == 3 && nbr[3] == 4 && nbr[4] == 5);
    /* k = 4 and votes with classes 7 3 3 7 for g0..g3: 2-2, equal sums, g0's class 7 wins */
    metrics_knn(Q, NULL, 1, G, NULL, 6, 2, 4, NULL, 1, nbr, d2);
    int32_t cls[] = {7, 3, 3, 7, 5, 5}, nc[4];
    double nd[4];
    for (int r = 0; r < 4; r++) {
        nc[r] = cls[nbr[r]];
        nd[r] = sqrt(d2[r]);
    }
    CHECK(metrics_vote(nc, nd, 4) == 7);
    /* leave-one-out with a duplicate: item 0 and item 2 are the same point; 0's nearest is 2 */
    float S[] = {5, 5, 9, 9, 5, 5, 0, 0};
    int64_t exs[4] = {0, 1, 2, 3}, nb2[4];
    double dd2[4];
    metrics_knn(S, NULL, 4, S, NULL, 4, 2, 1, exs, 1, nb2, dd2);
    CHECK(nb2[0] == 2 && nb2[2] == 0 && nb2[1] == 0 && nb2[3] == 0);
    CHECK_CLOSE(dd2[0], 0, 0);
}

/* random sets crossing block boundaries, against brute force in double; threads 1 and 2 agree */
static void test_knn_random(void)
{
    enum { NQ = 300, NG = 4500, D = 3, K = 5 }; /* 2 query blocks, 3 gallery blocks */
    rng r;
    rng_init(&r, 714, 2);
    float *Q = malloc(NQ * D * sizeof *Q), *G = malloc(NG * D * sizeof *G);
    double *gx = malloc(NG * sizeof *gx);
    for (int i = 0; i < NQ * D; i++)
        Q[i] = (float)(3 * rng_normal(&r));
    for (int i = 0; i < NG * D; i++)
        G[i] = (float)(3 * rng_normal(&r));
    for (int i = 0; i < NG; i++)
        gx[i] = rng_uniform(&r);
    int64_t *nb1 = malloc(NQ * K * sizeof *nb1), *nb2 = malloc(NQ * K * sizeof *nb2);
    double *d1 = malloc(NQ * K * sizeof *d1), *d2 = malloc(NQ * K * sizeof *d2);
    double *all = malloc(NG * sizeof *all);
    int64_t *ord = malloc(NG * sizeof *ord);
    for (int withx = 0; withx < 2; withx++) {
        metrics_knn(Q, NULL, NQ, G, withx ? gx : NULL, NG, D, K, NULL, 1, nb1, d1);
        metrics_knn(Q, NULL, NQ, G, withx ? gx : NULL, NG, D, K, NULL, 2, nb2, d2);
        int same = 1, brute = 1;
        double maxd = 0;
        for (int q = 0; q < NQ; q++) {
            for (int g = 0; g < NG; g++) {
                double s = withx ? gx[g] : 0;
                for (int d = 0; d < D; d++)
                    s += ((double)Q[q * D + d] - G[g * D + d]) * ((double)Q[q * D + d] - G[g * D + d]);
                all[g] = s;
            }
            metrics_argsort(all, NG, ord);
            for (int rk = 0; rk < K; rk++) {
                same &= nb1[q * K + rk] == nb2[q * K + rk] && d1[q * K + rk] == d2[q * K + rk];
                brute &= nb1[q * K + rk] == ord[rk];
                double e = fabs(d1[q * K + rk] - all[ord[rk]]);
                maxd = e > maxd ? e : maxd;
            }
        }
        CHECK(same);
        CHECK(brute);
        CHECK_CLOSE(maxd, 0, 1e-9);
    }
    free(Q);
    free(G);
    free(gx);
    free(nb1);
    free(nb2);
    free(d1);
    free(d2);
    free(all);
    free(ord);
}

/* brute force in double: the k nearest by (d2, index), exclusion ex */
static void knn_brute(const float *q, double xq, const float *G, const double *gx, int64_t ng, int D, int k,
                      int64_t ex, int64_t *nbr, double *d2)
{
    double *all = malloc(ng * sizeof *all);
    int64_t *ord = malloc(ng * sizeof *ord);
    for (int64_t g = 0; g < ng; g++) {
        double s = xq + (gx ? gx[g] : 0);
        for (int d = 0; d < D; d++)
            s += ((double)q[d] - G[g * D + d]) * ((double)q[d] - G[g * D + d]);
        all[g] = g == ex ? INFINITY : s;
    }
    metrics_argsort(all, ng, ord); /* stable: equal distances by index */
    for (int r = 0; r < k; r++) {
        nbr[r] = ord[r];
        d2[r] = all[ord[r]];
    }
    free(all);
    free(ord);
}

/* values whose squares overflow float (the old float screen found no candidate for them and the
 * result was stale or a crash): huge means and huge added terms are compared exactly in double */
static void test_knn_huge(void)
{
    /* leave-one-out, k = 3. Items 0..3 near the origin; 4 (1e20, 0), 5 (1e20, 1e15),
     * 6 (1e20, 3e15); item 7 (1, 1) with an added term 6e38 (a huge variance).
     * Query 4: 5 at d2 1e30, 6 at 9e30, then the near-origin items, all at (1e20)^2 in double
     * (the small offsets are below its precision): the lowest index, 0. */
    float S[] = {0, 0, 1, 0, 0, 2, 3, 3, 1e20f, 0, 1e20f, 1e15f, 1e20f, 3e15f, 1, 1};
    double sx[8] = {0, 0, 0, 0, 0, 0, 0, 6e38};
    int64_t ex[8] = {0, 1, 2, 3, 4, 5, 6, 7}, nbr[8 * 3];
    double d2[8 * 3];
    for (int withx = 0; withx < 2; withx++) {
        metrics_knn(S, withx ? sx : NULL, 8, S, withx ? sx : NULL, 8, 2, 3, ex, 1, nbr, d2);
        CHECK(nbr[4 * 3 + 0] == 5 && nbr[4 * 3 + 1] == 6 && nbr[4 * 3 + 2] == 0);
        CHECK_CLOSE(d2[4 * 3 + 0] / 1e30, 1, 1e-6); /* (float)1e15 is not exactly 1e15 */
        CHECK(nbr[5 * 3 + 0] == 4 && nbr[5 * 3 + 1] == 6);
        CHECK(nbr[6 * 3 + 0] == 5 && nbr[6 * 3 + 1] == 4);
        /* the near-origin items find each other, never a huge one */
        /* (item 7 at (1, 1) is second without its added term, gone with it) */
        CHECK(nbr[0] == 1 && nbr[1] == (withx ? 2 : 7) && nbr[2] == (withx ? 3 : 2));
        /* item 7: with its added term every distance is 6e38 + a little: ties by index */
        if (withx) {
            CHECK(nbr[7 * 3 + 0] == 0 && nbr[7 * 3 + 1] == 1 && nbr[7 * 3 + 2] == 2);
            CHECK_CLOSE(d2[7 * 3] / 6e38, 1, 1e-12);
        }
        int finite = 1;
        for (int i = 0; i < 8 * 3; i++)
            finite &= isfinite(d2[i]) && d2[i] >= 0;
        CHECK(finite);
    }
    /* random sets with 2% huge items (coordinates of magnitude 1e20 to 1e30) and 2% huge added
     * terms (1e38 to 3e38), against brute force in double; threads 1 and 2 agree */
    enum { NQ = 300, NG = 2500, D = 3, K = 5 };
    rng r;
    rng_init(&r, 714, 3);
    float *Q = malloc(NQ * D * sizeof *Q), *G = malloc(NG * D * sizeof *G);
    double *qx = malloc(NQ * sizeof *qx), *gx = malloc(NG * sizeof *gx);
    for (int i = 0; i < NQ; i++) {
        int huge = rng_uniform(&r) < 0.02;
        for (int d = 0; d < D; d++)
            Q[i * D + d] = (float)(huge ? (rng_uniform(&r) < 0.5 ? -1 : 1) * pow(10, 20 + 10 * rng_uniform(&r))
                                         : 3 * rng_normal(&r));
        qx[i] = rng_uniform(&r) < 0.02 ? 1e38 + 2e38 * rng_uniform(&r) : rng_uniform(&r);
    }
    for (int i = 0; i < NG; i++) {
        int huge = rng_uniform(&r) < 0.02;
        for (int d = 0; d < D; d++)
            G[i * D + d] = (float)(huge ? (rng_uniform(&r) < 0.5 ? -1 : 1) * pow(10, 20 + 10 * rng_uniform(&r))
                                         : 3 * rng_normal(&r));
        gx[i] = rng_uniform(&r) < 0.02 ? 1e38 + 2e38 * rng_uniform(&r) : rng_uniform(&r);
    }
    int64_t *nb1 = malloc(NQ * K * sizeof *nb1), *nb2 = malloc(NQ * K * sizeof *nb2), bn[K];
    double *d1 = malloc(NQ * K * sizeof *d1), *dd = malloc(NQ * K * sizeof *dd), bd[K];
    for (int withx = 0; withx < 2; withx++) {
        metrics_knn(Q, withx ? qx : NULL, NQ, G, withx ? gx : NULL, NG, D, K, NULL, 1, nb1, d1);
        metrics_knn(Q, withx ? qx : NULL, NQ, G, withx ? gx : NULL, NG, D, K, NULL, 2, nb2, dd);
        int same = 1, brute = 1;
        for (int q = 0; q < NQ; q++) {
            knn_brute(Q + q * D, withx ? qx[q] : 0, G, withx ? gx : NULL, NG, D, K, -1, bn, bd);
            for (int rk = 0; rk < K; rk++) {
                same &= nb1[q * K + rk] == nb2[q * K + rk] && d1[q * K + rk] == dd[q * K + rk];
                brute &= nb1[q * K + rk] == bn[rk] && d1[q * K + rk] == bd[rk];
            }
        }
        CHECK(same);
        CHECK(brute);
    }
    free(Q);
    free(G);
    free(qx);
    free(gx);
    free(nb1);
    free(nb2);
    free(d1);
    free(dd);
}

int main(int argc, char **argv)
{
    util_init("test_metrics");
    blas_init(argv, 1);
    test_ap();
    test_bins_and_sort();
    test_tau();
    test_vote();
    test_knn_ties();
    test_knn_random();
    test_knn_huge();
    test_argsort_random();
    return check_done("test_metrics");
}
