/* cluster: k-means of points, and the information measures that compare a clustering with the
 * true classes (NMI, AMI), as pytorch-metric-learning's AccuracyCalculator reports them: faiss
 * k-means with as many clusters as classes, then scikit-learn's normalized_mutual_info_score and
 * adjusted_mutual_info_score (arithmetic mean of the entropies, sklearn's default).
 *
 * k-means (faiss's Clustering, reproduced from its definition, not its code, with a better start:
 * greedy k-means++ and the best of 3 starts, so that it is at least as good as faiss's; faiss's
 * own scheme is plusplus = 0, redo = 1):
 *   training set  all n points, or when n > k * max_per_cluster (faiss: 256; 0 = no cap) a
 *                 uniform random subset of k * max_per_cluster distinct points (rng stream
 *                 CLUSTER_SUBSAMPLE), as faiss subsamples; every point is assigned at the end.
 *   init          plusplus = 1 (default): greedy k-means++ (Arthur and Vassilvitskii 2007, greedy
 *                 as scikit-learn seeds): the first seed a uniform training point; each next one
 *                 the best of `trials` candidates (default cluster_trials(k) = 2 + floor(ln k),
 *                 sklearn's), each drawn with probability proportional to its squared distance
 *                 to the nearest seed so far (the first point whose cumulative weight, summed in
 *                 point order, exceeds a uniform draw times the total), the best being the one
 *                 that leaves the lowest sum of those squared distances (the earlier draw on a
 *                 tie). trials = 1 is plain k-means++. Distances in float (8 lanes added in a
 *                 fixed order), sums in double. If every point sits on a seed (duplicates), the
 *                 next seed is the first point not chosen yet.
 *                 plusplus = 0: k distinct training points drawn uniformly at random (partial
 *                 Fisher-Yates): faiss's default (ClusteringInitMethod RANDOM), the one PML runs.
 *                 Either from stream CLUSTER_INIT ^ start.
 *   rounds        at most niter (PML: 20) rounds of: assign every training point to its nearest
 *                 centroid (squared Euclidean; equal distances: the lower centroid index), then
 *                 move each centroid to the mean of its points. A round whose assignment equals
 *                 the previous one stops early: the centroids are then a fixed point, so every
 *                 later round would repeat it exactly (faiss stops when the objective repeats).
 *   empty cluster gets the training point farthest from its (new) centroid among the clusters
 *                 of two points or more (lowest index among equal distances; one point per empty
 *                 cluster), as scikit-learn relocates empty clusters. faiss instead copies a large
 *                 cluster's centroid scaled by 1 +- 1/1024, which cannot separate a centroid at
 *                 the origin, and the points here are centred. Deterministic, so the fixed-point
 *                 argument above holds.
 *   starts        `redo` starts (faiss nredo, sklearn n_init; default CLUSTER_REDO = 3), each from
 *                 its own init on the same training set; the one with the lowest inertia (sum
 *                 over all n points of the squared distance to their centroid, in double) is
 *                 kept, the earlier one on a tie. One start, from either init, varies much from
 *                 seed to seed (and k-means++ alone is no better than random starts where the
 *                 classes overlap heavily: it favours outlying points); the best of 3 puts the
 *                 mean objective below faiss's on every set of tests/bench/kmeans.sh and the
 *                 mean NMI level with faiss's (within the seeds' noise) or above, at about 3
 *                 times the time of one start.
 * The points are centred on their mean (in double) first: k-means does not change under a
 * translation, and the float distances ||x||^2 + ||c||^2 - 2 x.c (blocks through blas_sgemm, as
 * faiss's IndexFlatL2 computes them) lose less to cancellation near the origin. Centroid sums
 * are in double, over the points in index order.
 * Determinism: the same seed gives the same assignment and centroids whatever the thread count
 * (each thread runs single-threaded sgemms and the k-means++ distances on fixed blocks of points;
 * sums in point order, or per block and then in block order).
 *
 * Information measures, on a contingency table n_ij (R classes x C clusters, row sums a_i,
 * column sums b_j, N = sum n_ij; rows and columns of zeros are ignored), natural logarithms:
 *   H(a)   = -sum_i (a_i/N) log(a_i/N)
 *   MI     = sum_ij (n_ij/N) log(N n_ij / (a_i b_j)); 0 when either side has one label; terms
 *            below DBL_EPSILON in magnitude count 0 and the sum is clipped at 0 (sklearn)
 *   NMI    = MI / ((H(a) + H(b)) / 2); 1 when both sides have one label (or N = 0), 0 when MI = 0
 *   EMI    = sum_ij sum_{n = max(1, a_i + b_j - N)}^{min(a_i, b_j)} (n/N) log(N n / (a_i b_j))
 *            * a_i! b_j! (N - a_i)! (N - b_j)! / (N! n! (a_i - n)! (b_j - n)! (N - a_i - b_j + n)!)
 *            the expectation of MI over random tables with the same margins (hypergeometric,
 *            Vinh, Epps and Bailey 2010); log-factorials from lgamma
 *   AMI    = (MI - EMI) / ((H(a) + H(b)) / 2 - EMI), the denominator kept at least DBL_EPSILON
 *            in magnitude with its sign; 1 when both sides have one label (or N = 0)
 * Cost of EMI: sum over (i, j) of min(a_i, b_j) terms, at most R x N (60,000 items in 10
 * classes: 6e5 terms).
 *
 * Ownership: the caller owns every array; cluster_contingency returns a table the caller frees.
 *
 *   cluster_opts o = cluster_defaults(k);      // niter 20, k-means++, redo 3, max_per_cluster 256
 *   o.seed = 714, o.threads = 2;
 *   int32_t *a = emalloc(n * sizeof *a);
 *   cluster_result r;
 *   cluster_kmeans(X, n, D, &o, a, NULL, &r);  // X (n, D); centroids out optional (k, D)
 *   int R, C;
 *   int64_t *t = cluster_contingency(cls, a, n, &R, &C);
 *   double nmi = cluster_nmi(t, R, C), ami = cluster_ami(t, R, C);
 *   free(t);
 */
#ifndef HEDGE_CLUSTER_H
#define HEDGE_CLUSTER_H
#include <stdint.h>

#include "rng.h"

#define CLUSTER_SUBSAMPLE RNG_STREAM('k', 'm', 's', 'u')
#define CLUSTER_INIT RNG_STREAM('k', 'm', 'i', 'n')
/* starts by default (above) */
#define CLUSTER_REDO 3

typedef struct {
    int k;                    /* clusters, 1 <= k <= n */
    int niter;                /* at most this many rounds (PML passes faiss niter = 20) */
    int redo;                 /* starts, >= 1: the lowest inertia kept */
    int64_t max_per_cluster;  /* training subset cap k * this; 0: train on every point */
    uint64_t seed;
    int plusplus;             /* 1: greedy k-means++ seeds (default); 0: faiss's uniform random points */
    int trials;               /* k-means++ candidates per seed; 0: cluster_trials(k) */
    int threads;
} cluster_opts;

typedef struct {
    int iterations;           /* rounds run in the start kept (<= niter; a round that finds the
                               * assignment unchanged counts) */
    int converged;            /* 1 if its assignment stopped changing before niter ran out */
    int64_t trained;          /* training points */
    int64_t empty;            /* empty clusters refilled in the start kept */
    int start;                /* which start was kept, 0 .. redo-1 */
    double inertia;           /* sum of squared distances of all n points to their centroid */
} cluster_result;

cluster_opts cluster_defaults(int k);

/* k-means of X (n, D), finite coordinates (dies otherwise). assign (n) gets each point's
 * cluster in [0, k); centroids (k, D), if not NULL, the final centroids (in X's coordinates). */
void cluster_kmeans(const float *X, int64_t n, int D, const cluster_opts *o, int32_t *assign, float *centroids,
                    cluster_result *r);

/* the k-means++ candidates per seed by default: 2 + floor(ln k), as scikit-learn */
int cluster_trials(int k);

/* greedy k-means++ seeds of T (m, D; squared norms below FLT_MAX / 16, as cluster_kmeans
 * checks; 1 <= k <= m, trials >= 1): the k chosen rows into idx (k), in the order chosen; draws
 * from r (above); the same seeds whatever the thread count */
void cluster_plusplus(const float *T, int64_t m, int D, int k, int trials, int threads, rng *r, int64_t *idx);

/* the nearest of k centroids c (k, D) for each point of X (n, D) into assign (n): the float
 * distances of the rounds (no centring), equal distances to the lower index */
void cluster_nearest(const float *X, int64_t n, int D, const float *c, int k, int threads, int32_t *assign);

/* how many distinct values v (n) holds */
int cluster_count_distinct(const int32_t *v, int64_t n);

/* the contingency table (R, C) row-major of labels u (rows) and v (columns), n items each; the
 * distinct values of u in increasing order are the rows, those of v the columns */
int64_t *cluster_contingency(const int32_t *u, const int32_t *v, int64_t n, int *R, int *C);

/* the entropy of m counts (natural log; zeros ignored; 0 for one non-zero count or none) */
double cluster_entropy(const int64_t *count, int m);
double cluster_mi(const int64_t *table, int R, int C);
double cluster_emi(const int64_t *table, int R, int C);
double cluster_nmi(const int64_t *table, int R, int C);
double cluster_ami(const int64_t *table, int R, int C);

#endif
