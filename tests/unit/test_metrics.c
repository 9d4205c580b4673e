/* metrics: AP with ties, PR curve and areas, bins, Kendall's tau-b, kNN search and vote, against
 * values derived by hand (derivations in the comments) and a brute-force kNN in double; the
 * uncertainty-quality measures (AUROC of wrong items, AURC and its curve with ties, ECE) against
 * hand values and brute force (every pair, every order of the items). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ap.h"
#include "argsort.h"
#include "auc.h"
#include "aurc.h"
#include "blas.h"
#include "check.h"
#include "ece.h"
#include "knn_search.h"
#include "knn_vote.h"
#include "rng.h"
#include "tau.h"
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

/* the tie key (issue 19, defect 2): values from an independent splitmix64 in Python,
 * h = mix(seed ^ RNG_STREAM('t','i','e','s')), h = mix(h ^ v) per identity value */
static void test_tie_key(void)
{
    double id0 = 0, pair[2] = {3, 1002}, neg = -5, half = 0.5, negzero = -0.0;
    CHECK(metrics_tie_key(714, &id0, 1) == 0xc8a5b0c21770a0caULL);
    CHECK(metrics_tie_key(714, pair, 2) == 0x094ccc37c633d4dfULL);
    CHECK(metrics_tie_key(714, &neg, 1) == 0x8c43e078922df9a1ULL); /* -5 as the int64 */
    CHECK(metrics_tie_key(714, &half, 1) == 0xb4e3209b428dc483ULL); /* 0.5 by its bit pattern */
    CHECK(metrics_tie_key(714, &negzero, 1) == metrics_tie_key(714, &id0, 1));
    CHECK(metrics_tie_key(715, &id0, 1) != metrics_tie_key(714, &id0, 1));
}

/* sorted by key, then tie, then the further columns, then position; and any permutation of the
 * items gives the same sequence of (key, tie, more) */
static void test_argsort_ties(void)
{
    /* item:  0    1    2    3    4    5
     * key:   2    1    2    2    1    2
     * tie:   9    5    9    3    5    9
     * more:  .5   0    .25  7    0    .25   -> 4 1 | 3 | 2 5 0 (2 and 5 equal in all: position) */
    double key[6] = {2, 1, 2, 2, 1, 2}, m0[6] = {0.5, 0, 0.25, 7, 0, 0.25};
    uint64_t tie[6] = {9, 5, 9, 3, 5, 9};
    const double *more[1] = {m0};
    int64_t idx[6];
    metrics_argsort_ties(key, tie, 1, more, 6, idx);
    CHECK(idx[0] == 1 && idx[1] == 4 && idx[2] == 3 && idx[3] == 2 && idx[4] == 5 && idx[5] == 0);
    /* reversed input: the same (key, tie, more) sequence */
    double rk[6], rm[6];
    uint64_t rt[6];
    for (int i = 0; i < 6; i++)
        rk[i] = key[5 - i], rt[i] = tie[5 - i], rm[i] = m0[5 - i];
    const double *rmore[1] = {rm};
    int64_t r[6];
    metrics_argsort_ties(rk, rt, 1, rmore, 6, r);
    int same = 1;
    for (int t = 0; t < 6; t++)
        same &= rk[r[t]] == key[idx[t]] && rt[r[t]] == tie[idx[t]] && rm[r[t]] == m0[idx[t]];
    CHECK(same);
    /* no further columns: equal (key, tie) by position */
    metrics_argsort_ties(key, tie, 0, NULL, 6, idx);
    CHECK(idx[0] == 1 && idx[1] == 4 && idx[2] == 3 && idx[3] == 0 && idx[4] == 2 && idx[5] == 5);
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
    /* against the definition walked by rank (each class at its best-ranked neighbour, replaced
     * only by more votes or, as many, a smaller sum): random lists with many ties in count and
     * sum (few classes, distances in quarters), negative and extreme classes, k up to 600 (past
     * the 256 kept on the stack) */
    rng r;
    rng_init(&r, 714, 2);
    int32_t cls[600];
    double dist[600];
    int bad = 0;
    for (int t = 0; t < 3000; t++) {
        int k = 1 + (int)rng_below(&r, t < 2900 ? 60 : 600), nc = 1 + (int)rng_below(&r, 8);
        for (int i = 0; i < k; i++) {
            int c = (int)rng_below(&r, (uint64_t)nc);
            cls[i] = c == 0 ? INT32_MIN : c == 1 ? INT32_MAX : c - 4;
            dist[i] = 0.25 * (double)rng_below(&r, 12);
        }
        int best = -1, best_n = 0;
        double best_sum = 0;
        for (int i = 0; i < k; i++) {
            int seen = 0;
            for (int s = 0; s < i && !seen; s++)
                seen = cls[s] == cls[i];
            if (seen)
                continue;
            int n = 0;
            double sum = 0;
            for (int s = i; s < k; s++)
                if (cls[s] == cls[i])
                    n++, sum += dist[s];
            if (best < 0 || n > best_n || (n == best_n && sum < best_sum))
                best = i, best_n = n, best_sum = sum;
        }
        bad += metrics_vote(cls, dist, k) != cls[best];
    }
    CHECK(bad == 0);
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

/* random sets crossing block boundaries, against brute force in double; threads 1, 2 and 3 agree
 * (lib/par hands the blocks out as workers free up: the bytes must not care) */
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
        metrics_knn(Q, NULL, NQ, G, withx ? gx : NULL, NG, D, K, NULL, 3, nb2, d2);
        int same3 = !memcmp(nb1, nb2, NQ * K * sizeof *nb1) && !memcmp(d1, d2, NQ * K * sizeof *d1);
        CHECK(same3);
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
    double *all = calloc(ng, sizeof *all);
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

/* metrics_knn leave-one-out on S (N x D, added terms x or NULL) with 1 thread: the screen it took
 * is screen; the same bytes with 2 and 3 threads, as the plain screen (the gallery given as a
 * separate copy) and as brute force in double. Returns how many queries the threshold screen
 * handed on. */
static int64_t knn_self_check(const float *S, const double *x, int N, int D, int K, int screen)
{
    float *C = malloc((size_t)N * D * sizeof *C);
    int64_t *ex = malloc(N * sizeof *ex), *nb[3], *bn = malloc(K * sizeof *bn);
    double *dd[3], *bd = malloc(K * sizeof *bd);
    memcpy(C, S, (size_t)N * D * sizeof *S);
    for (int i = 0; i < N; i++)
        ex[i] = i;
    for (int t = 0; t < 3; t++) {
        nb[t] = malloc((size_t)N * K * sizeof *nb[t]);
        dd[t] = malloc((size_t)N * K * sizeof *dd[t]);
    }
    metrics_knn_info info;
    metrics_knn_ex(S, x, N, S, x, N, D, K, ex, 1, nb[0], dd[0], &info);
    CHECK(info.screen == screen);
    int64_t fell = info.fell;
    int same = 1, brute = 1;
    for (int t = 2; t <= 3; t++) {
        metrics_knn(S, x, N, S, x, N, D, K, ex, t, nb[1], dd[1]);
        same &= !memcmp(nb[0], nb[1], (size_t)N * K * sizeof *nb[0]) &&
                !memcmp(dd[0], dd[1], (size_t)N * K * sizeof *dd[0]);
    }
    metrics_knn_ex(S, x, N, C, x, N, D, K, ex, 2, nb[2], dd[2], &info);
    CHECK(info.screen == METRICS_SCREEN_PLAIN);
    int plain = !memcmp(nb[0], nb[2], (size_t)N * K * sizeof *nb[0]) &&
                !memcmp(dd[0], dd[2], (size_t)N * K * sizeof *dd[0]);
    for (int q = 0; q < N; q++) {
        knn_brute(S + q * D, x ? x[q] : 0, S, x, N, D, K, q, bn, bd);
        for (int rk = 0; rk < K; rk++)
            brute &= nb[0][q * K + rk] == bn[rk] && dd[0][q * K + rk] == bd[rk];
    }
    CHECK(same);
    CHECK(plain);
    CHECK(brute);
    /* no exclusion (each item its own nearest), and each item excluding another (twins): the
     * same screen, the same lists as the plain one */
    for (int v = 0; v < 2; v++) {
        for (int i = 0; i < N; i++)
            ex[i] = (i + 7) % N;
        metrics_knn_ex(S, x, N, S, x, N, D, K, v ? ex : NULL, 2, nb[1], dd[1], &info);
        CHECK(info.screen == screen);
        metrics_knn(S, x, N, C, x, N, D, K, v ? ex : NULL, 1, nb[2], dd[2]);
        CHECK(!memcmp(nb[1], nb[2], (size_t)N * K * sizeof *nb[1]) &&
              !memcmp(dd[1], dd[2], (size_t)N * K * sizeof *dd[1]));
    }
    for (int t = 0; t < 3; t++) {
        free(nb[t]);
        free(dd[t]);
    }
    free(C);
    free(ex);
    free(bn);
    free(bd);
    return fell;
}

/* leave-one-out takes the symmetric screen (half the distance tiles, lib/measures/knn_search.c), and with
 * k + slack >= 32 the threshold screen: random sets over several tiles of 256 with a partial one,
 * duplicates (exact ties, broken by index), 2% huge items and added terms */
static void test_knn_self(void)
{
    enum { N = 1300, D = 5 };
    rng r;
    rng_init(&r, 714, 4);
    float *S = malloc(N * D * sizeof *S);
    double *sx = malloc(N * sizeof *sx);
    for (int i = 0; i < N; i++) {
        int huge = rng_uniform(&r) < 0.02, dup = i > 10 && rng_uniform(&r) < 0.05;
        for (int d = 0; d < D; d++)
            S[i * D + d] = dup ? S[(i / 2) * D + d]
                               : (float)(huge ? pow(10, 20 + 10 * rng_uniform(&r)) : 3 * rng_normal(&r));
        sx[i] = rng_uniform(&r) < 0.02 ? 1e38 : rng_uniform(&r);
    }
    for (int withx = 0; withx < 2; withx++) {
        knn_self_check(S, withx ? sx : NULL, N, D, 1, METRICS_SCREEN_SELF);
        knn_self_check(S, withx ? sx : NULL, N, D, 40, METRICS_SCREEN_THETA);
    }
    free(S);
    free(sx);
}

/* The threshold screen where its thresholds fail: four groups of 250 identical items (a query of a
 * group has 249 items at distance 0, more than its buffer holds, so it goes to the plain screen)
 * among 500 scattered ones */
static void test_knn_theta(void)
{
    enum { N = 1500, D = 3 };
    rng r;
    rng_init(&r, 715, 4);
    float *S = malloc(N * D * sizeof *S);
    for (int i = 0; i < N; i++)
        for (int d = 0; d < D; d++)
            S[i * D + d] = i < 1000 ? (float)(i / 250 * 7 + d) : (float)(4 * rng_normal(&r));
    int64_t fell = knn_self_check(S, NULL, N, D, 40, METRICS_SCREEN_THETA);
    CHECK(fell >= 1000 && fell < N);
    free(S);
}

/* ------------------------------------------------------------------ uncertainty quality */

/* AUROC of u for the wrong items by counting every (wrong, right) pair: a win 1, a tie 1/2 */
static double auroc_pairs(const double *u, const uint8_t *correct, int n)
{
    double won = 0, pairs = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            if (!correct[i] && correct[j]) {
                won += u[i] > u[j] ? 1 : u[i] == u[j] ? 0.5 : 0;
                pairs++;
            }
    return pairs ? won / pairs : NAN;
}

static void test_error_auroc(void)
{
    /* by hand: u 1 2 2 3, correct 1 0 1 0. Wrong items u 2 and 3, right ones u 1 and 2:
     * (2 vs 1) 1, (2 vs 2) 1/2, (3 vs 1) 1, (3 vs 2) 1: 3.5 / 4 */
    double u1[] = {1, 2, 2, 3};
    uint8_t c1[] = {1, 0, 1, 0};
    CHECK_CLOSE(metrics_error_auroc(u1, c1, 4), 3.5 / 4, 0);
    /* a perfect uncertainty (every wrong item above every right one) 1, reversed 0, constant 1/2 */
    uint8_t up[] = {1, 1, 0, 0}, down[] = {0, 0, 1, 1};
    double u2[] = {1, 2, 3, 4}, flat[] = {5, 5, 5, 5};
    CHECK_CLOSE(metrics_error_auroc(u2, up, 4), 1, 0);
    CHECK_CLOSE(metrics_error_auroc(u2, down, 4), 0, 0);
    CHECK_CLOSE(metrics_error_auroc(flat, up, 4), 0.5, 0);
    /* all right, all wrong: undefined */
    uint8_t all1[] = {1, 1, 1, 1}, all0[] = {0, 0, 0, 0};
    CHECK(isnan(metrics_error_auroc(u2, all1, 4)));
    CHECK(isnan(metrics_error_auroc(u2, all0, 4)));
    /* many ties (u on a grid of 6 values), against every pair */
    rng r;
    rng_init(&r, 714, 11);
    enum { N = 300 };
    double u[N];
    uint8_t c[N];
    double maxd = 0;
    for (int rep = 0; rep < 20; rep++) {
        for (int i = 0; i < N; i++) {
            c[i] = rng_uniform(&r) < 0.7;
            u[i] = floor(6 * rng_uniform(&r) * (c[i] ? 0.8 : 1));
        }
        double d = fabs(metrics_error_auroc(u, c, N) - auroc_pairs(u, c, N));
        maxd = d > maxd ? d : maxd;
    }
    CHECK_CLOSE(maxd, 0, 1e-14);
}

/* AURC of one order of the items: (1/n) sum_k (sum of the k first losses) / k */
static double aurc_of_order(const double *loss, const int *ord, int n)
{
    double cum = 0, a = 0;
    for (int k = 1; k <= n; k++) {
        cum += loss[ord[k - 1]];
        a += cum / k;
    }
    return a / n;
}

/* next permutation in lexicographic order; 0 after the last */
static int next_perm(int *a, int n)
{
    int i = n - 2;
    while (i >= 0 && a[i] >= a[i + 1])
        i--;
    if (i < 0)
        return 0;
    int j = n - 1;
    while (a[j] <= a[i])
        j--;
    int t = a[i];
    a[i] = a[j];
    a[j] = t;
    for (int l = i + 1, m = n - 1; l < m; l++, m--)
        t = a[l], a[l] = a[m], a[m] = t;
    return 1;
}

#define RC_NPTS 100
/* brute force over all n! orders: the AURC and the curve averaged over the orders that sort u
 * ascending (every order of each block of ties once: the uniform average), and the oracle as the
 * minimum over ALL orders (for the AURC and for each point of the curve separately) */
static void aurc_brute(const double *u, const double *loss, int n, double *aurc, double *oracle, double *risk,
                       double *oracle_risk)
{
    int ord[10];
    for (int i = 0; i < n; i++)
        ord[i] = i;
    double sum = 0, best = INFINITY;
    int count = 0;
    for (int r = 0; r < RC_NPTS; r++)
        risk[r] = 0, oracle_risk[r] = INFINITY;
    do {
        double a = aurc_of_order(loss, ord, n);
        best = a < best ? a : best;
        int sorted_u = 1;
        for (int i = 1; i < n; i++)
            sorted_u &= u[ord[i - 1]] <= u[ord[i]];
        for (int r = 0; r < RC_NPTS; r++) {
            int kept = n - r * n / RC_NPTS;
            double s = 0;
            for (int t = 0; t < kept; t++)
                s += loss[ord[t]];
            if (sorted_u)
                risk[r] += s / kept;
            if (s / kept < oracle_risk[r])
                oracle_risk[r] = s / kept;
        }
        if (sorted_u) {
            sum += a;
            count++;
        }
    } while (next_perm(ord, n));
    *aurc = sum / count;
    *oracle = best;
    for (int r = 0; r < RC_NPTS; r++)
        risk[r] /= count;
}

static void test_aurc(void)
{
    /* by hand: u 1 2 3, loss 1 0 0: risk 1, 1/2, 1/3, AURC = (1 + 1/2 + 1/3) / 3 = 11/18; the
     * oracle orders the losses 0 0 1: risk 0, 0, 1/3, AURC 1/9; E-AURC = 11/18 - 2/18 = 1/2 */
    double u1[] = {1, 2, 3}, l1[] = {1, 0, 0};
    metrics_aurc_result a;
    metrics_aurc(u1, l1, 3, &a, 0, NULL);
    CHECK_CLOSE(a.aurc, 11.0 / 18, 1e-15);
    CHECK_CLOSE(a.oracle, 1.0 / 9, 1e-15);
    CHECK_CLOSE(a.eaurc, 0.5, 1e-15);
    /* a perfect ranking (losses ascending with u) is the oracle, E-AURC 0 */
    double u2[] = {0.1, 0.2, 0.3, 0.4, 0.5, 0.6}, l2[] = {0, 0, 0.25, 0.5, 1, 1};
    metrics_aurc(u2, l2, 6, &a, 0, NULL);
    CHECK_CLOSE(a.aurc, a.oracle, 0);
    CHECK_CLOSE(a.eaurc, 0, 0);
    /* a constant uncertainty: every prefix has the expected mean loss, AURC = the error rate (2/7) */
    double u3[] = {4, 4, 4, 4, 4, 4, 4}, l3[] = {0, 1, 0, 0, 1, 0, 0};
    metrics_aurc(u3, l3, 7, &a, 0, NULL);
    CHECK_CLOSE(a.aurc, 2.0 / 7, 1e-15);
    /* its oracle: five zeros then 1, 2 errors: (1/7) (1/6 + 2/7) */
    CHECK_CLOSE(a.oracle, (1.0 / 6 + 2.0 / 7) / 7, 1e-15);
    /* a tie of two items, one wrong, after a right one: u 1 2 2, loss 0 1 0. Orders 0 1 2 and
     * 0 2 1: risks (0, 1/2, 1/3) and (0, 0, 1/3): AURC (5/6 / 3 + 1/3 / 3) / 2 = 7/36 */
    double u4[] = {1, 2, 2}, l4[] = {0, 1, 0};
    metrics_aurc(u4, l4, 3, &a, 0, NULL);
    CHECK_CLOSE(a.aurc, 7.0 / 36, 1e-15);

    /* against every order: n = 7 with blocks of ties, binary and continuous losses, and the
     * record order reversed (no effect) */
    struct {
        double u[7], loss[7];
    } cases[] = {
        {{0.3, 0.1, 0.3, 0.3, 0.7, 0.1, 0.7}, {0, 1, 0.25, 1, 0, 0.5, 1}},
        {{2, 1, 2, 2, 3, 1, 3}, {1, 0, 0, 1, 1, 1, 0}},
        {{5, 5, 5, 1, 1, 5, 5}, {0, 1, 1, 0, 1, 0, 0}},
        {{1, 2, 3, 4, 5, 6, 7}, {1, 0, 1, 0, 0, 0.5, 0}},
        {{9, 9, 9, 9, 9, 9, 9}, {0.5, 1, 0, 0, 1, 0.75, 0}},
    };
    double maxd = 0;
    int curve_ok = 1;
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        for (int rev = 0; rev < 2; rev++) {
            double u[7], loss[7];
            for (int i = 0; i < 7; i++) {
                u[i] = cases[c].u[rev ? 6 - i : i];
                loss[i] = cases[c].loss[rev ? 6 - i : i];
            }
            double ba, bo, brisk[RC_NPTS], bor[RC_NPTS];
            aurc_brute(u, loss, 7, &ba, &bo, brisk, bor);
            metrics_rc_point curve[RC_NPTS];
            metrics_aurc(u, loss, 7, &a, RC_NPTS, curve);
            double d = fmax(fabs(a.aurc - ba), fmax(fabs(a.oracle - bo), fabs(a.eaurc - (ba - bo))));
            for (int r = 0; r < RC_NPTS; r++) {
                d = fmax(d, fmax(fabs(curve[r].risk - brisk[r]), fabs(curve[r].oracle_risk - bor[r])));
                curve_ok &= curve[r].kept == 7 - r * 7 / RC_NPTS && curve[r].rejected == r / 100.0;
            }
            maxd = fmax(maxd, d);
        }
    }
    CHECK_CLOSE(maxd, 0, 1e-12); /* the brute force sums up to 7! orders */
    CHECK(curve_ok);

    /* the curve by hand, n = 10, u = i, loss 1 for items 7 and 9: at r % kept 10 - floor(r / 10):
     * r 0..9 keep 10 (risk 2/10), r 10..19 keep 9 (1/9), r 20..29 keep 8 (1/8), ... r 90..99
     * keep 1 (0); the oracle keeps the zeros first: 2/10, 1/9, then 0 */
    double u5[10], l5[10];
    for (int i = 0; i < 10; i++)
        u5[i] = i, l5[i] = i == 7 || i == 9;
    metrics_rc_point c5[RC_NPTS];
    metrics_aurc(u5, l5, 10, &a, RC_NPTS, c5);
    CHECK(c5[0].kept == 10 && c5[9].kept == 10 && c5[10].kept == 9 && c5[99].kept == 1);
    CHECK_CLOSE(c5[0].risk, 0.2, 1e-15);
    CHECK_CLOSE(c5[9].risk, 0.2, 1e-15);
    CHECK_CLOSE(c5[10].risk, 1.0 / 9, 1e-15);
    CHECK_CLOSE(c5[20].risk, 1.0 / 8, 1e-15);
    CHECK_CLOSE(c5[30].risk, 0, 0);
    CHECK_CLOSE(c5[99].risk, 0, 0);
    CHECK_CLOSE(c5[10].oracle_risk, 1.0 / 9, 1e-15);
    CHECK_CLOSE(c5[20].oracle_risk, 0, 0);
    CHECK_CLOSE(c5[37].rejected, 0.37, 0);
    /* no items: undefined */
    metrics_aurc(u5, l5, 0, &a, 0, NULL);
    CHECK(isnan(a.aurc) && isnan(a.oracle) && isnan(a.eaurc));
}

static void test_ece(void)
{
    /* B = 4 bins [0, .25] (.25, .5] (.5, .75] (.75, 1] (Guo et al.'s ((m-1)/M, m/M], 0 in the
     * first as sklearn's calibration_curve); p (y):
     *   0 (0), 0.125 (1)           bin 0: sum y 1, sum p 0.125: |1 - 0.125| = 0.875
     *   0.5 (1), 0.5 (0)           bin 1: |1 - 1| = 0
     *   (none)                     bin 2: empty, counts nothing
     *   0.875 (1), 1 (1), 1 (0)    bin 3: |2 - 2.875| = 0.875
     * ECE = (0.875 + 0.875) / 7 = 0.25; per bin: (2/7) |0.5 - 0.0625| + (3/7) |2/3 - 2.875/3| */
    double p[] = {0, 0.125, 0.5, 0.5, 0.875, 1, 1};
    uint8_t y[] = {0, 1, 1, 0, 1, 1, 0};
    metrics_ece_bin bins[4];
    int64_t bad = 7;
    CHECK_CLOSE(metrics_ece(p, y, 7, 4, bins, &bad), 0.25, 1e-15);
    CHECK(bad == -1);
    CHECK(bins[0].n == 2 && bins[1].n == 2 && bins[2].n == 0 && bins[3].n == 3);
    CHECK(isnan(bins[2].mean_p) && isnan(bins[2].mean_y));
    CHECK_CLOSE(bins[0].mean_p, 0.0625, 0);
    CHECK_CLOSE(bins[1].mean_p, 0.5, 0);
    CHECK_CLOSE(bins[3].mean_p, 2.875 / 3, 1e-15);
    CHECK_CLOSE(bins[3].mean_y, 2.0 / 3, 1e-15);
    CHECK_CLOSE(2.0 / 7 * fabs(bins[0].mean_y - bins[0].mean_p) + 3.0 / 7 * fabs(bins[3].mean_y - bins[3].mean_p),
                0.25, 1e-15);
    /* exact bin edges (issue 19, defect 12: they used to belong to the bin above) belong to the bin
     * below; 0 to the first; one ulp above an edge to the bin above */
    double pe[] = {0, 0.25, 0.5, 0.75, 1, nextafter(0.25, 1), nextafter(0.75, 0), nextafter(0, 1)};
    uint8_t ye[8] = {0};
    metrics_ece(pe, ye, 8, 4, bins, NULL);
    /* bin 0: 0, 0.25, 0+; bin 1: 0.25+, 0.5; bin 2: 0.75, 0.75-; bin 3: 1 */
    CHECK(bins[0].n == 3 && bins[1].n == 2 && bins[2].n == 2 && bins[3].n == 1);
    metrics_ece(pe + 1, ye, 1, 4, bins, NULL); /* 0.25 alone */
    CHECK(bins[0].n == 1 && bins[1].n == 0);
    metrics_ece(pe + 5, ye, 1, 4, bins, NULL); /* 0.25 + 1 ulp alone */
    CHECK(bins[0].n == 0 && bins[1].n == 1);
    /* decided exactly, not by the rounded product: fl(1/3) < 1/3 is in bin 0 of 3 although
     * fl(1/3) x 3 rounds to 1 (floor(p B) put it in bin 1); the next double up, > 1/3, in bin 1 */
    metrics_ece_bin b3[3];
    double third[] = {1.0 / 3, nextafter(1.0 / 3, 1), 2.0 / 3, nextafter(2.0 / 3, 1)};
    CHECK(third[0] * 3 == 1.0 && 1.0 / 3 < nextafter(1.0 / 3, 1));
    metrics_ece(third, ye, 1, 3, b3, NULL);
    CHECK(b3[0].n == 1);
    metrics_ece(third + 1, ye, 1, 3, b3, NULL);
    CHECK(b3[1].n == 1);
    metrics_ece(third + 2, ye, 1, 3, b3, NULL); /* fl(2/3) = 0.66666666666666663 < 2/3: bin 1 */
    CHECK(b3[1].n == 1);
    metrics_ece(third + 3, ye, 1, 3, b3, NULL); /* the next double, > 2/3: the last bin */
    CHECK(b3[2].n == 1);
    /* a float32 score at an exact edge: 0.5f of 2 bins in bin 0, 0.5f + 1 float ulp in bin 1 */
    metrics_ece_bin b2[2];
    double half[] = {0.5f, nextafterf(0.5f, 1)};
    metrics_ece(half, ye, 2, 2, b2, NULL);
    CHECK(b2[0].n == 1 && b2[1].n == 1);
    /* Guo's 15 bins: p = k/15 in bin k - 1, for every k whose double k/15 lies on or below the
     * exact k/15 (the rounding of the division decides: checked against fma) */
    int ok15 = 1;
    for (int k = 1; k <= 15; k++) {
        double q = (double)k / 15;
        metrics_ece_bin bb[METRICS_ECE_BINS];
        metrics_ece(&q, ye, 1, METRICS_ECE_BINS, bb, NULL);
        int want = fma(q, 15, -(double)k) <= 0 ? k - 1 : k; /* q <= k/15 exactly: bin k - 1 */
        ok15 &= bb[want].n == 1;
    }
    CHECK(ok15);
    /* one bin: |mean y - mean p| = |2/7 - 4/7| */
    CHECK_CLOSE(metrics_ece(p, y, 7, 1, NULL, NULL), fabs(4.0 / 7 - 4.0 / 7), 1e-15);
    uint8_t y2[] = {0, 0, 0, 0, 1, 1, 0};
    CHECK_CLOSE(metrics_ece(p, y2, 7, 1, NULL, NULL), 2.0 / 7, 1e-15);
    /* the default 15 bins: p = 0 with y = 1 and p = 1 with y = 0 are wrong by 1 each; p = 1 with
     * y = 1 and p = 0 with y = 0 are right */
    double pd[] = {0, 1, 1, 0};
    uint8_t yd[] = {1, 0, 1, 0};
    CHECK_CLOSE(metrics_ece(pd, yd, 4, METRICS_ECE_BINS, NULL, NULL), 0.5, 0);
    /* 15 bins by hand: 0.1 (bin 1, (1/15, 2/15]), 0.3 (bin 4), 0.32 (bin 4), y 1 0 1:
     * |1 - 0.1| + |1 - 0.62| = 0.9 + 0.38, / 3 */
    double p15[] = {0.1, 0.3, 0.32};
    uint8_t y15[] = {1, 0, 1};
    metrics_ece_bin b15[METRICS_ECE_BINS];
    CHECK_CLOSE(metrics_ece(p15, y15, 3, METRICS_ECE_BINS, b15, NULL), (0.9 + 0.38) / 3, 1e-15);
    CHECK(b15[1].n == 1 && b15[4].n == 2);
    /* not a probability: NaN and the first such item */
    double pb[] = {0.5, 1.5, -0.1}, pn[] = {0.5, 0.2, NAN};
    CHECK(isnan(metrics_ece(pb, ye, 3, 4, NULL, &bad)) && bad == 1);
    CHECK(isnan(metrics_ece(pn, ye, 3, 4, NULL, &bad)) && bad == 2);
    double pm[] = {-0.1};
    CHECK(isnan(metrics_ece(pm, ye, 1, 4, NULL, &bad)) && bad == 0);
}

static void test_item_uncertainty(void)
{
    /* 2 items, C x D = 3: the eta when there is one, else the mean of the variances */
    float eta[] = {0.25f, 0.5f}, var[] = {1, 2, 6, 0.5f, 0.5f, 2};
    double u[2] = {-1, -1};
    CHECK(!strcmp(metrics_item_uncertainty(eta, var, 2, 3, u), "eta"));
    CHECK(u[0] == 0.25 && u[1] == 0.5);
    CHECK(!strcmp(metrics_item_uncertainty(NULL, var, 2, 3, u), "var"));
    CHECK_CLOSE(u[0], 3, 0);
    CHECK_CLOSE(u[1], 1, 0);
    u[0] = -1;
    CHECK(metrics_item_uncertainty(NULL, NULL, 2, 3, u) == NULL && u[0] == -1);
    /* huge variances: summed in double, no float overflow */
    float big[] = {3e38f, 3e38f};
    CHECK(!strcmp(metrics_item_uncertainty(NULL, big, 1, 2, u), "var"));
    CHECK_CLOSE(u[0] / (double)3e38f, 1, 1e-15);
}

/* NaN keys (a shard's eta, an array another thread wrote into): every walk over tie blocks ends,
 * the NaNs one block after every number, no write outside the arrays (ASan) and no hang (alarm) */
static void test_nan_keys(void)
{
    alarm(20);
    double all[4] = {NAN, NAN, NAN, NAN}, some[5] = {0.3, NAN, 0.1, NAN, 0.2}, loss[5] = {1, 0, 0, 1, 1};
    metrics_aurc_result a;
    metrics_aurc(all, loss, 4, &a, 0, NULL);
    CHECK_CLOSE(a.aurc, 0.5, 1e-15); /* one block: every risk(k) is the mean loss */
    metrics_aurc(some, loss, 5, &a, 0, NULL);
    /* 0.1 (0), 0.2 (1), 0.3 (1), then the NaN block {0, 1}: risks 0, 1/2, 2/3, 2.5/4, 3/5 */
    CHECK_CLOSE(a.aurc, (0 + 0.5 + 2.0 / 3 + 2.5 / 4 + 3.0 / 5) / 5, 1e-15);
    uint8_t right[5] = {0, 1, 1, 0, 0};
    double auc = metrics_error_auroc(some, right, 5);
    CHECK(auc == auc || isnan(auc)); /* it returns */
    double rank[5];
    metrics_auc_midranks(some, 5, rank);
    CHECK(rank[2] == 1 && rank[4] == 2 && rank[0] == 3 && rank[1] == 4.5 && rank[3] == 4.5);
    metrics_pr_point pts[5];
    uint8_t lab[5] = {1, 0, 1, 0, 1};
    CHECK(metrics_pr_curve(some, lab, 5, pts) == 4); /* 0.3, 0.2, 0.1 and the NaNs */
    CHECK(metrics_pr_curve(all, lab, 4, pts) == 1 && pts[0].tp == 2 && pts[0].fp == 2);
    alarm(0);
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
    test_knn_self();
    test_knn_theta();
    test_argsort_random();
    test_tie_key();
    test_argsort_ties();
    test_error_auroc();
    test_aurc();
    test_ece();
    test_item_uncertainty();
    test_nan_keys();
    return check_done("test_metrics");
}
