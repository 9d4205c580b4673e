/* cluster: MI, entropies, NMI, EMI and AMI on small contingency tables against values derived by
 * hand (comments) or from the definitions with exact hypergeometric probabilities (python3,
 * math.comb and fractions, no lgamma: the snippet below); sklearn's edge conventions; k-means on
 * hand-placed points (Lloyd by hand), well-separated blobs recovered exactly (NMI = AMI = 1),
 * the training subset, empty clusters, greedy k-means++'s picks on a tiny set against their
 * probabilities derived by hand, the best of several starts (the lowest inertia, the earlier on
 * a tie) on a set with a known local optimum, and the same bytes for a seed whatever the thread
 * count.
 *
 * Reference for the tables marked "ref" (MI, NMI, EMI, AMI per table t):
 *   a, b = row sums, column sums; N = sum(a)
 *   mi  = sum n/N log(N n / (a_i b_j)) over non-zero cells
 *   emi = sum_ij sum_{n = max(1, a_i + b_j - N)}^{min(a_i, b_j)}
 *           Fraction(comb(a_i, n) comb(N - a_i, b_j - n), comb(N, b_j)) n/N log(N n / (a_i b_j))
 *   nmi = mi / avg, ami = (mi - emi) / (avg - emi), avg = (H(a) + H(b)) / 2
 * (for N = 3000 the probability as exp of math.log(comb(.)) of the exact integers, summed by fsum)
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "blas.h"
#include "check.h"
#include "cluster.h"
#include "rng.h"
#include "util.h"

#define TOL 1e-12

static void table_case(const int64_t *t, int R, int C, double mi, double nmi, double emi, double ami)
{
    CHECK_CLOSE(cluster_mi(t, R, C), mi, TOL);
    CHECK_CLOSE(cluster_nmi(t, R, C), nmi, TOL);
    CHECK_CLOSE(cluster_emi(t, R, C), emi, TOL);
    CHECK_CLOSE(cluster_ami(t, R, C), ami, TOL);
    /* both measures are symmetric: the transposed table gives the same */
    int64_t *tt = emalloc((size_t)R * C * sizeof *tt);
    for (int i = 0; i < R; i++)
        for (int j = 0; j < C; j++)
            tt[(int64_t)j * R + i] = t[(int64_t)i * C + j];
    CHECK_CLOSE(cluster_nmi(tt, C, R), nmi, TOL);
    CHECK_CLOSE(cluster_ami(tt, C, R), ami, TOL);
    free(tt);
}

static void test_tables(void)
{
    double l2 = log(2), l3 = log(3);
    /* [[2,0],[0,2]], N = 4: MI = H = log 2, NMI 1. EMI: every cell has a = b = 2,
     * P(n = 1) = C(2,1) C(2,1) / C(4,2) = 4/6 with term (1/4) log(4/4) = 0, P(n = 2) = 1/6 with term
     * (2/4) log(8/4) = log(2)/2: log(2)/12 a cell, log(2)/3 in all; AMI = 1 */
    int64_t t1[] = {2, 0, 0, 2};
    table_case(t1, 2, 2, l2, 1, l2 / 3, 1);
    /* [[1,1],[1,1]]: the same margins, MI = 0 (every term log(4/4)) -> NMI 0;
     * AMI = (0 - log2/3) / (log2 - log2/3) = -1/2 */
    int64_t t2[] = {1, 1, 1, 1};
    table_case(t2, 2, 2, 0, 0, l2 / 3, -0.5);
    /* sklearn's docstring example, labels [0,1,1,0,1,0] against [0,1,0,0,1,1] -> [[2,1],[1,2]], N = 6:
     * MI = 2 (2/6) log(12/9) + 2 (1/6) log(6/9) = (5/3) log 2 - log 3 (0.0566..., as documented).
     * EMI, every cell a = b = 3, P(n) = C(3,n) C(3,3-n) / 20 = 9/20, 9/20, 1/20 for n = 1, 2, 3, terms
     * (1/6) log(2/3), (1/3) log(4/3), (1/2) log 2: EMI = (8/5) log 2 - (9/10) log 3.
     * AMI = ((1/15) log 2 - (1/10) log 3) / ((9/10) log 3 - (3/5) log 2) = -1/9 */
    int64_t t3[] = {2, 1, 1, 2};
    double mi3 = 5.0 / 3 * l2 - l3;
    table_case(t3, 2, 2, mi3, mi3 / l2, 1.6 * l2 - 0.9 * l3, -1.0 / 9);
    /* ref: [[3,1,0],[0,2,2],[1,0,4]] */
    int64_t t4[] = {3, 1, 0, 0, 2, 2, 1, 0, 4};
    table_case(t4, 3, 3, 0.47914070021090782, 0.44555975727410907, 0.21116674338944241, 0.31008281710604024);
    /* ref: [[30,5],[10,55],[2,8]] (3 x 2, N = 110) */
    int64_t t5[] = {30, 5, 10, 55, 2, 8};
    table_case(t5, 3, 2, 0.23527364105748011, 0.30198690364453784, 0.0094904826604034608, 0.29337915492466793);
    /* ref: [[5,0,0,1],[0,7,3,0]] (2 x 4) */
    int64_t t6[] = {5, 0, 0, 1, 0, 7, 3, 0};
    table_case(t6, 2, 4, 0.66156323815798201, 0.70609031046174453, 0.12229184955109534, 0.66196963936794295);
    /* N = 3000 (lgamma of large numbers): reference with log(comb(.)) of exact integers,
     * [[400,120,30,250],[50,600,200,100],[300,10,500,440]] */
    int64_t t7[] = {400, 120, 30, 250, 50, 600, 200, 100, 300, 10, 500, 440};
    table_case(t7, 3, 4, 0.30313862750080917, 0.24574000267124488, 0.0010011582186679987, 0.24512735472285438);

    /* entropies: counts (1, 1, 2): -(1/4 log 1/4) 2 - 1/2 log 1/2 = 1.5 log 2; zeros ignored */
    int64_t c1[] = {1, 0, 1, 2};
    CHECK_CLOSE(cluster_entropy(c1, 4), 1.5 * l2, TOL);
    int64_t c2[] = {0, 7, 0};
    CHECK(cluster_entropy(c2, 3) == 0);
    CHECK(cluster_entropy(c2, 0) == 0);

    /* a row or column of zeros changes nothing (contingency tables from labels have none) */
    int64_t t3z[] = {2, 0, 1, 0, 0, 0, 1, 0, 2};
    CHECK_CLOSE(cluster_ami(t3z, 3, 3), -1.0 / 9, TOL);
    CHECK_CLOSE(cluster_nmi(t3z, 3, 3), mi3 / l2, TOL);
}

/* sklearn's edge conventions */
static void test_edges(void)
{
    /* both labelings one cluster: NMI = AMI = 1 (sklearn: "a perfect match") */
    int64_t one[] = {5};
    CHECK(cluster_nmi(one, 1, 1) == 1 && cluster_ami(one, 1, 1) == 1);
    CHECK(cluster_mi(one, 1, 1) == 0 && cluster_emi(one, 1, 1) == 0);
    /* no items at all: 1 as well */
    CHECK(cluster_nmi(one, 0, 0) == 1 && cluster_ami(one, 0, 0) == 1);
    /* one side a single cluster, the other split: MI = EMI = 0, NMI = 0 and AMI = 0 / (H/2) = 0
     * (sklearn: adjusted_mutual_info_score([0,0,0,0], [0,1,2,3]) = 0) */
    int64_t split[] = {1, 1, 1, 1};
    CHECK(cluster_nmi(split, 1, 4) == 0 && cluster_ami(split, 1, 4) == 0);
    CHECK(cluster_nmi(split, 4, 1) == 0 && cluster_ami(split, 4, 1) == 0);
    /* identical labelings (any permutation of the names): 1 */
    int32_t u[] = {7, 7, 3, 3, 3, 9, 9, 9, 9, -2};
    int32_t v[] = {0, 0, 5, 5, 5, 1, 1, 1, 1, 4};
    int R, C;
    int64_t *t = cluster_contingency(u, v, 10, &R, &C);
    CHECK(R == 4 && C == 4);
    /* rows are -2 3 7 9, columns 0 1 4 5: u = -2 is v = 4, i.e. cell (0, 2) */
    CHECK(t[0 * 4 + 2] == 1 && t[1 * 4 + 3] == 3 && t[2 * 4 + 0] == 2 && t[3 * 4 + 1] == 4);
    CHECK_CLOSE(cluster_nmi(t, R, C), 1, 1e-15);
    CHECK_CLOSE(cluster_ami(t, R, C), 1, 1e-15);
    free(t);
    /* every item its own cluster on both sides: NMI 1; EMI = MI = H (every table with these
     * margins is a permutation), so AMI is 0/eps... sklearn keeps the denominator at eps: 0 */
    int32_t w[] = {0, 1, 2, 3};
    t = cluster_contingency(w, w, 4, &R, &C);
    CHECK_CLOSE(cluster_nmi(t, R, C), 1, 1e-15);
    CHECK_CLOSE(cluster_emi(t, R, C), log(4), 1e-15);
    CHECK(fabs(cluster_ami(t, R, C)) <= 1);
    free(t);
}

/* 1-D points 0, 1, 10, 11, k = 2, random init (any two distinct points): Lloyd ends at centroids
 * 0.5 and 10.5 whatever the start, e.g. from (0, 1): 1, 10, 11 -> 22/3, then 0, 1 | 10, 11.
 * Inertia 4 x 0.25 = 1. */
static void test_by_hand(void)
{
    float X[] = {0, 1, 10, 11};
    for (uint64_t seed = 1; seed <= 20; seed++) {
        cluster_opts o = cluster_defaults(2);
        o.seed = seed;
        int32_t a[4];
        float c[2];
        cluster_result r;
        cluster_kmeans(X, 4, 1, &o, a, c, &r);
        CHECK(a[0] == a[1] && a[2] == a[3] && a[0] != a[2]);
        CHECK_CLOSE(c[a[0]], 0.5, 1e-6);
        CHECK_CLOSE(c[a[2]], 10.5, 1e-6);
        CHECK_CLOSE(r.inertia, 1, 1e-9);
        CHECK(r.converged && r.iterations <= 4 && r.trained == 4);
    }
    /* ties: 5 is as far from 0 as from 10, the lower centroid index takes it either way round */
    float p5[] = {5, 5}, c01[] = {0, 10}, c10[] = {10, 0};
    int32_t t[2];
    cluster_nearest(p5, 2, 1, c01, 2, 1, t);
    CHECK(t[0] == 0 && t[1] == 0);
    cluster_nearest(p5, 2, 1, c10, 2, 1, t);
    CHECK(t[0] == 0 && t[1] == 0);
    float p2[] = {1, 9, 4, 6}; /* and the nearest one otherwise */
    int32_t t4[4];
    cluster_nearest(p2, 4, 1, c10, 2, 2, t4);
    CHECK(t4[0] == 1 && t4[1] == 0 && t4[2] == 1 && t4[3] == 0);
    /* duplicates: points 0 0 0 5, k = 2. A start on two zeros leaves cluster 1 empty (5 is as far
     * from both: the lower index takes it); it gets the farthest point, 5: centroids 0 and 5, inertia 0 */
    float Y[] = {0, 0, 0, 5};
    int empties = 0;
    for (uint64_t seed = 1; seed <= 20; seed++) {
        cluster_opts o = cluster_defaults(2);
        o.seed = seed, o.plusplus = 0, o.redo = 1; /* k-means++ never starts on two zeros */
        int32_t a[4];
        cluster_result r;
        cluster_kmeans(Y, 4, 1, &o, a, NULL, &r);
        CHECK(a[0] == a[1] && a[1] == a[2] && a[3] != a[0]);
        CHECK_CLOSE(r.inertia, 0, 1e-12);
        empties += r.empty > 0;
    }
    CHECK(empties > 0); /* some seed did start on two zeros (3 of the 6 pairs are two zeros) */
    /* k = n: every point its own cluster */
    cluster_opts o = cluster_defaults(4);
    int32_t a[4];
    cluster_result r;
    cluster_kmeans(X, 4, 1, &o, a, NULL, &r);
    CHECK(a[0] != a[1] && a[0] != a[2] && a[0] != a[3] && a[1] != a[2] && a[1] != a[3] && a[2] != a[3]);
    CHECK_CLOSE(r.inertia, 0, 1e-12);
}

/* K blobs of n/K points in D dimensions: centre of blob c is 20 e_(c mod D) + 20 (c / D) e_0,
 * spread 0.1; class of point i is i mod K */
static float *blobs(int64_t n, int D, int K, uint64_t seed, int32_t *cls)
{
    float *X = emalloc((size_t)n * D * sizeof *X);
    rng r;
    rng_init(&r, seed, 77);
    for (int64_t i = 0; i < n; i++) {
        int c = (int)(i % K);
        cls[i] = c;
        for (int d = 0; d < D; d++)
            X[i * D + d] = (float)((d == c % D ? 20.0 : 0.0) + (d == 0 ? 20.0 * (c / D) : 0.0) + 0.1 * rng_normal(&r));
    }
    return X;
}

static void test_blobs(void)
{
    int64_t n = 600;
    int D = 4, K = 6;
    int32_t *cls = emalloc((size_t)n * sizeof *cls), *a = emalloc((size_t)n * sizeof *a);
    float *X = blobs(n, D, K, 5, cls);
    /* k-means++ separates well-separated blobs: the clusters are the classes */
    for (uint64_t seed = 1; seed <= 5; seed++) {
        cluster_opts o = cluster_defaults(K);
        o.plusplus = 1, o.seed = seed;
        cluster_result r;
        cluster_kmeans(X, n, D, &o, a, NULL, &r);
        int R, C;
        int64_t *t = cluster_contingency(cls, a, n, &R, &C);
        CHECK(R == K && C == K);
        CHECK_CLOSE(cluster_nmi(t, R, C), 1, 1e-12);
        CHECK_CLOSE(cluster_ami(t, R, C), 1, 1e-12);
        CHECK(r.converged);
        free(t);
    }
    /* the defaults (greedy k-means++, 3 starts) recover the six blobs from every seed; one random
     * start (faiss's scheme) is often left with two centroids in one blob */
    int stuck = 0;
    for (uint64_t seed = 1; seed <= 20; seed++) {
        cluster_opts o = cluster_defaults(K);
        o.seed = seed;
        cluster_result r;
        cluster_kmeans(X, n, D, &o, a, NULL, &r);
        int R, C;
        int64_t *t = cluster_contingency(cls, a, n, &R, &C);
        CHECK_CLOSE(cluster_nmi(t, R, C), 1, 1e-12);
        free(t);
        o.plusplus = 0, o.redo = 1;
        cluster_kmeans(X, n, D, &o, a, NULL, &r);
        t = cluster_contingency(cls, a, n, &R, &C);
        stuck += cluster_nmi(t, R, C) < 1 - 1e-12;
        free(t);
    }
    CHECK(stuck > 0);
    /* two blobs: random init recovers them from any start (two starts in one blob still split it,
     * and the far blob pulls one centroid over) */
    for (uint64_t seed = 1; seed <= 10; seed++) {
        int32_t *c2 = emalloc((size_t)n * sizeof *c2);
        float *Y = blobs(n, D, 2, seed, c2);
        cluster_opts o = cluster_defaults(2);
        o.seed = seed;
        cluster_result r;
        cluster_kmeans(Y, n, D, &o, a, NULL, &r);
        int R, C;
        int64_t *t = cluster_contingency(c2, a, n, &R, &C);
        CHECK_CLOSE(cluster_nmi(t, R, C), 1, 1e-12);
        CHECK_CLOSE(cluster_ami(t, R, C), 1, 1e-12);
        free(t);
        /* a training subset of 2 x 10 points gives the same clusters, every point assigned */
        o.max_per_cluster = 10;
        int32_t *b = emalloc((size_t)n * sizeof *b);
        cluster_kmeans(Y, n, D, &o, b, NULL, &r);
        CHECK(r.trained == 20);
        t = cluster_contingency(c2, b, n, &R, &C);
        CHECK_CLOSE(cluster_ami(t, R, C), 1, 1e-12);
        free(t);
        free(b);
        free(Y);
        free(c2);
    }
    /* restarts keep the lowest inertia: never above the first run's */
    cluster_opts o = cluster_defaults(K);
    cluster_result r1, r5;
    cluster_kmeans(X, n, D, &o, a, NULL, &r1);
    o.redo = 5;
    cluster_kmeans(X, n, D, &o, a, NULL, &r5);
    CHECK(r5.inertia <= r1.inertia);
    free(X);
    free(a);
    free(cls);
}

/* a frequency of count in N against probability p, within 4.5 standard deviations and 3 counts
 * (not a CHECK_CLOSE: its largest difference is for the exact values) */
static void check_freq(int count, int N, double p, const char *what)
{
    double f = (double)count / N, tol = 4.5 * sqrt(p * (1 - p) / N) + 3.0 / N; /* 3 counts: tiny p */
    CHECK(fabs(f - p) <= tol);
    if (!(fabs(f - p) <= tol))
        fprintf(stderr, "  %s: frequency %.4f of %d, expected %.4f (tolerance %.4f)\n", what, f, N, p, tol);
}

/* greedy k-means++ on the 1-D points 0, 10, 11, 12 (indices 0 .. 3), k = 2, t candidates per
 * seed. The first seed is uniform (1/4 each); the second the candidate, of t drawn with
 * probability proportional to the squared distance to the first, that leaves the lowest sum of
 * squared distances to the nearer seed (the earlier draw on a tie). By hand, per first seed:
 *   0:  weights 100, 121, 144 (of 365) for 10, 11, 12; sums left: 10 -> 0+0+1+4 = 5, 11 -> 2,
 *       12 -> 5. 11 wins if drawn: 1 - (244/365)^t; otherwise the first of 10 and 12 drawn
 *       (a tie), 10 with probability 100/244.
 *   10: weights 100, 1, 4 (of 105) for 0, 11, 12; sums: 0 -> 5, 11 -> 101, 12 -> 101. 0 wins if
 *       drawn: 1 - (5/105)^t; otherwise 11 or 12 (a tie) as first drawn, 1/5 and 4/5.
 *   11: weights 121, 1, 1 (of 123) for 0, 10, 12; sums: 0 -> 2, 10 -> 101, 12 -> 122: 0 if drawn
 *       (1 - (2/123)^t), else 10 if drawn ((2/123)^t - (1/123)^t), else 12 ((1/123)^t).
 *   12: weights 144, 4, 1 (of 149) for 0, 10, 11; sums: 0 -> 5, 10 -> 101, 11 -> 122: 0 if drawn
 *       (1 - (5/149)^t), else 10 ((5/149)^t - (1/149)^t), else 11 ((1/149)^t).
 * So P({0, 11}) = (1 - (244/365)^t + 1 - (2/123)^t) / 4: 0.3288 for t = 1 (plain k-means++),
 * 0.3882 for t = 2 (the default for k = 2), 0.4666 for t = 5. Each unordered pair's frequency
 * over 4,000 seeds is checked against its probability within 4.5 standard deviations. */
static void test_plusplus_picks(void)
{
    float X[] = {0, 10, 11, 12};
    CHECK(cluster_trials(2) == 2 && cluster_trials(1) == 2 && cluster_trials(100) == 6 && cluster_trials(7) == 3);
    int trials[] = {1, 2, 5};
    for (int ti = 0; ti < 3; ti++) {
        double t = trials[ti];
        double q0 = pow(244.0 / 365, t), q10 = pow(5.0 / 105, t), q11 = pow(2.0 / 123, t), q11b = pow(1.0 / 123, t),
               q12 = pow(5.0 / 149, t), q12b = pow(1.0 / 149, t);
        /* P of each unordered pair, in the order {0,10} {0,11} {0,12} {10,11} {10,12} {11,12}:
         * the sum of (first, second) and (second, first) above */
        double p[6] = {
            (q0 * 100 / 244 + (1 - q10)) / 4, ((1 - q0) + (1 - q11)) / 4, (q0 * 144 / 244 + (1 - q12)) / 4,
            (q10 / 5 + (q11 - q11b)) / 4,     (q10 * 4 / 5 + (q12 - q12b)) / 4, (q11b + q12b) / 4,
        };
        double sum = 0;
        for (int i = 0; i < 6; i++)
            sum += p[i];
        CHECK_CLOSE(sum, 1, 1e-12);
        int count[6] = {0};
        int N = 4000;
        for (int seed = 1; seed <= N; seed++) {
            rng r;
            rng_init(&r, (uint64_t)seed, CLUSTER_INIT);
            int64_t idx[2];
            cluster_plusplus(X, 4, 1, 2, (int)t, 1, &r, idx);
            int a = (int)(idx[0] < idx[1] ? idx[0] : idx[1]), b = (int)(idx[0] < idx[1] ? idx[1] : idx[0]);
            CHECK(a != b && a >= 0 && b <= 3);
            int pair = a == 0 ? b - 1 : a == 1 ? b + 1 : 5;
            count[pair]++;
        }
        for (int i = 0; i < 6; i++)
            check_freq(count[i], N, p[i], "k-means++ pair");
    }
    CHECK_CLOSE(((1 - pow(244.0 / 365, 2)) + (1 - pow(2.0 / 123, 2))) / 4, 0.3882, 5e-5);

    /* duplicates: 0 0 0 5, k = 2. After a zero only 5 has weight; after 5 only zeros: every
     * draw gives one zero and the 5. Three equal points, k = 3: no weight left after the first,
     * so the first points not chosen: three distinct indices. */
    float Y[] = {0, 0, 0, 5}, Z[] = {7, 7, 7};
    for (uint64_t seed = 1; seed <= 50; seed++) {
        rng r;
        rng_init(&r, seed, CLUSTER_INIT);
        int64_t idx[3];
        cluster_plusplus(Y, 4, 1, 2, 2, 1, &r, idx);
        CHECK((idx[0] == 3) != (idx[1] == 3) && idx[0] != idx[1]);
        cluster_plusplus(Z, 3, 1, 3, 2, 1, &r, idx);
        CHECK(idx[0] != idx[1] && idx[0] != idx[2] && idx[1] != idx[2]);
    }
}

/* the corners (0,0) (0,1) (4,0) (4,1), k = 2: the best clusters split x (centroids (0, 1/2) and
 * (4, 1/2), inertia 4 x 1/4 = 1), a local optimum splits y (centroids (2, 0) and (2, 1): each
 * corner 4 from its own and 5 from the other, inertia 16). A random start on two corners of
 * equal x (2 of the 6 pairs) ends in the y split, any other in the x split: each start is bad
 * with probability 1/3, and the best of r starts is bad only if all r are: 1/3, 1/9, 1/27.
 * Start j is the same for every r (stream CLUSTER_INIT ^ j), so from the inertias with 1, 2
 * and 3 starts the start kept is known: the first good one, or 0 if none is (the earlier start
 * on a tie). Greedy k-means++ starts in the y split only if both candidates are the first
 * seed's neighbour of equal x (weight 1 of 1 + 16 + 17): (1/34)^2 a start, so the defaults
 * (3 starts) never do over these seeds; faiss's scheme (random, 1 start) does a third of the time. */
static void test_best_of_starts(void)
{
    float X[] = {0, 0, 0, 1, 4, 0, 4, 1};
    int N = 3000, bad[4] = {0}, bad_defaults = 0;
    for (uint64_t seed = 1; seed <= (uint64_t)N; seed++) {
        double in[4];
        int start[4];
        for (int redo = 1; redo <= 3; redo++) {
            cluster_opts o = cluster_defaults(2);
            o.seed = seed, o.plusplus = 0, o.redo = redo;
            int32_t a[4];
            cluster_result r;
            cluster_kmeans(X, 4, 2, &o, a, NULL, &r);
            CHECK(r.inertia == 1 || r.inertia == 16);
            CHECK(r.start >= 0 && r.start < redo);
            in[redo] = r.inertia, start[redo] = r.start;
            bad[redo] += r.inertia == 16;
        }
        CHECK(in[3] <= in[2] && in[2] <= in[1]);
        int want = in[1] == 1 ? 0 : in[2] == 1 ? 1 : in[3] == 1 ? 2 : 0;
        CHECK(start[3] == want);
        CHECK(start[1] == 0 && start[2] == (in[1] == 1 ? 0 : in[2] == 1 ? 1 : 0));
        cluster_opts o = cluster_defaults(2);
        o.seed = seed;
        int32_t a[4];
        cluster_result r;
        cluster_kmeans(X, 4, 2, &o, a, NULL, &r);
        bad_defaults += r.inertia != 1;
    }
    for (int redo = 1; redo <= 3; redo++) {
        double p = pow(1.0 / 3, redo);
        check_freq(bad[redo], N, p, "random starts all in the y split");
    }
    CHECK(bad_defaults == 0);
}

/* overlapping clusters (many rounds, empty clusters possible): the same seed gives the same
 * bytes with 1, 2 and 3 threads; another seed another start */
static void test_determinism(void)
{
    int64_t n = 3000;
    int D = 16, k = 12;
    float *X = emalloc((size_t)n * D * sizeof *X);
    rng r;
    rng_init(&r, 9, 1);
    for (int64_t i = 0; i < (int64_t)n * D; i++)
        X[i] = (float)(rng_normal(&r) + 3.0 * (i / D % 5 == i % D % 5));
    int32_t *a1 = emalloc((size_t)n * sizeof *a1), *a3 = emalloc((size_t)n * sizeof *a3);
    float *c1 = emalloc((size_t)k * D * sizeof *c1), *c3 = emalloc((size_t)k * D * sizeof *c3);
    for (int pp = 0; pp < 2; pp++) {
        cluster_opts o = cluster_defaults(k);
        o.plusplus = pp, o.max_per_cluster = 100, o.redo = 2;
        cluster_result r1, r3;
        cluster_kmeans(X, n, D, &o, a1, c1, &r1);
        o.threads = 3;
        cluster_kmeans(X, n, D, &o, a3, c3, &r3);
        CHECK(!memcmp(a1, a3, (size_t)n * sizeof *a1));
        CHECK(!memcmp(c1, c3, (size_t)k * D * sizeof *c1));
        CHECK(r1.inertia == r3.inertia && r1.iterations == r3.iterations && r1.trained == 1200);
        o.seed = 715;
        cluster_kmeans(X, n, D, &o, a3, c3, &r3);
        CHECK(memcmp(c1, c3, (size_t)k * D * sizeof *c1));
    }
    /* the defaults, and k-means++ alone on 3000 points (12 blocks of rows), 1, 2 and 3 threads */
    cluster_opts o = cluster_defaults(k);
    cluster_result r1, r2;
    cluster_kmeans(X, n, D, &o, a1, c1, &r1);
    o.threads = 2;
    cluster_kmeans(X, n, D, &o, a3, c3, &r2);
    CHECK(!memcmp(a1, a3, (size_t)n * sizeof *a1) && !memcmp(c1, c3, (size_t)k * D * sizeof *c1));
    CHECK(r1.inertia == r2.inertia && r1.start == r2.start);
    int64_t seeds[3][40];
    for (int th = 1; th <= 3; th++) {
        rng g;
        rng_init(&g, 5, CLUSTER_INIT);
        cluster_plusplus(X, n, D, 40, 4, th, &g, seeds[th - 1]);
    }
    CHECK(!memcmp(seeds[0], seeds[1], sizeof seeds[0]) && !memcmp(seeds[0], seeds[2], sizeof seeds[0]));
    free(c3);
    free(c1);
    free(a3);
    free(a1);
    free(X);
}

/* the final centroids are the means of the points assigned to them (no subset, converged) */
static void test_fixed_point(void)
{
    int64_t n = 400;
    int D = 3, k = 5;
    int32_t *cls = emalloc((size_t)n * sizeof *cls), *a = emalloc((size_t)n * sizeof *a);
    float *X = blobs(n, D, 4, 3, cls), c[15];
    cluster_opts o = cluster_defaults(k);
    o.niter = 100;
    cluster_result r;
    cluster_kmeans(X, n, D, &o, a, c, &r);
    CHECK(r.converged);
    double worst = 0;
    for (int j = 0; j < k; j++) {
        double s[3] = {0, 0, 0};
        int64_t m = 0;
        for (int64_t i = 0; i < n; i++)
            if (a[i] == j) {
                for (int d = 0; d < D; d++)
                    s[d] += X[i * D + d];
                m++;
            }
        CHECK(m > 0);
        for (int d = 0; d < D && m; d++)
            worst = fmax(worst, fabs(s[d] / m - c[j * D + d]));
    }
    CHECK_CLOSE(worst, 0, 1e-4);
    free(X);
    free(a);
    free(cls);
}

static void test_misuse(void)
{
    float X[] = {0, 1};
    int32_t a[2];
    cluster_result r;
    if (check_child()) {
        cluster_opts o = cluster_defaults(3);
        cluster_kmeans(X, 2, 1, &o, a, NULL, &r); /* 3 clusters, 2 points */
        _exit(0);
    }
    CHECK(check_died());
    float bad[] = {0, NAN};
    if (check_child()) {
        cluster_opts o = cluster_defaults(1);
        cluster_kmeans(bad, 2, 1, &o, a, NULL, &r);
        _exit(0);
    }
    CHECK(check_died());
}

int main(void)
{
    util_init("test_cluster");
    blas_init(NULL, 1);
    test_tables();
    test_edges();
    test_by_hand();
    test_blobs();
    test_plusplus_picks();
    test_best_of_starts();
    test_determinism();
    test_fixed_point();
    test_misuse();
    return check_done("test_cluster");
}
