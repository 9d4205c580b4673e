/* knn_search: the k nearest gallery items of every query, exact in double, found by a float
 * screen in blocks (distances by blas_sgemm) and rechecked; and the centre the float distance
 * screens (this one, retrieval's) subtract first.
 * The names keep the metrics_ prefix of lib/metrics.c, which this module was split from.
 *
 * Every function works on caller-owned arrays and allocates only scratch it frees before
 * returning. Definitions and tie rules (each is also the documented behaviour of the programs):
 *
 *   kNN      squared Euclidean distances ||q||^2 + ||g||^2 - 2 q.g (float, blas_sgemm) in blocks of
 *            METRICS_QBLOCK queries x METRICS_GBLOCK gallery items, a sorted top-k per query
 *            kept while the blocks stream by (leave-one-out, the gallery as its own queries:
 *            only the square tiles on and above the diagonal, each read by rows and by columns,
 *            half the sgemm), the winners' distances then recomputed in double;
 *            equal distances: the lower gallery index first. Items whose squared norm (or added
 *            term) exceeds FLT_MAX / 16 (coordinates beyond about 4.6e18) could overflow the float
 *            sums: they are kept out of the float screen and compared exactly in double (a huge
 *            query against the whole gallery, every query against the huge gallery items), so
 *            no finite input overflows the screen or leaves a query without its k neighbours.
 */
#ifndef HEDGE_KNN_SEARCH_H
#define HEDGE_KNN_SEARCH_H
#include <stdint.h>

#ifndef METRICS_QBLOCK
#define METRICS_QBLOCK 256
#endif
#ifndef METRICS_GBLOCK
#define METRICS_GBLOCK 2048
#endif

/* For each query q (nq x D, row-major) the k nearest gallery items (ng x D) by
 *     d2(q, g) = ||q - g||^2 + qx[q] + gx[g]
 * qx, gx (or NULL for 0): per-item terms added to the squared distance (total variances turn d2
 * into the expected squared distance between two random embeddings), finite and >= 0, in double
 * so that huge variances do not overflow. Coordinates must be finite (dies otherwise, naming the
 * query or gallery index). exclude[q] (or NULL): a
 * gallery index never returned for query q (the query itself, for leave-one-out), -1 for none.
 * Needs at least k gallery items left for every query (dies otherwise).
 * Selection scans float distances from blas_sgemm on coordinates centred on the gallery's mean
 * (metrics_centre), keeping the best k + METRICS_KNN_SLACK per query; those candidates' d2 are
 * then recomputed directly in double and the best k kept, by (d2, gallery index). The screen's
 * rounding is bounded (lib/measures/knn_search.c, KNN_SCREEN_ERR): a query whose candidates cannot be proven
 * to hold its true k nearest by that bound (near-ties, duplicates) is searched in full in
 * double, so the result is always the exact one in double, however far from the origin.
 * Results: nbr[q*k + r] the gallery index of rank r, d2[q*k + r] >= 0 (d2 may be NULL: not kept).
 * threads: workers (lib/base/par.h) that take the blocks of queries as they free up, with single-threaded
 * sgemms (BLAS threads are set to 1 meanwhile and restored after); the results do not depend on it.
 * Leave-one-out (Q and G the same array, qx and gx too) computes only the distance tiles on and
 * above the diagonal; with k + slack >= 32 each query first gets a threshold from a sample of the
 * gallery and the tiles keep what lies below it (lib/measures/knn_search.c: knn_screen_theta, knn_screen_self).
 * Memory: the inputs, their centred float copies, (nq, k + slack) candidates and one block of
 * floats per thread (2 MB); leave-one-out also (nq, 4 (k + slack)) thresholded candidates, a
 * permuted copy of the centred gallery and 256 x (its sample, about 8 ng / (k + 4)) floats per
 * thread, or with k + slack < 32 (nq, k + slack) candidates per thread, while they fit 1 GB (else
 * the plain screen). */
#define METRICS_KNN_SLACK 4
void metrics_knn(const float *Q, const double *qx, int64_t nq, const float *G, const double *gx, int64_t ng,
                 int D, int k, const int64_t *exclude, int threads, int64_t *nbr, double *d2);
/* what a metrics_knn call did: its screen, and how many queries the threshold screen handed to the
 * plain one (its threshold fell below the k + slack nearest, or too many items lay below it) */
enum { METRICS_SCREEN_PLAIN, METRICS_SCREEN_SELF, METRICS_SCREEN_THETA };
typedef struct {
    int screen;
    int64_t fell;
} metrics_knn_info;
/* metrics_knn, saying into info what it did */
void metrics_knn_ex(const float *Q, const double *qx, int64_t nq, const float *G, const double *gx, int64_t ng,
                    int D, int k, const int64_t *exclude, int threads, int64_t *nbr, double *d2, metrics_knn_info *info);

/* The centre mean (D) that the float distance screens (metrics_knn, retrieval_run) subtract from
 * queries Q (nq, D) and gallery G (ng, D) before ||q||^2 + ||g||^2 - 2 q.g, which far from the
 * origin cancels catastrophically: the mean of the gallery items whose squared norm is at most
 * limit (0 when none), in double, each coordinate d rounded to the nearest multiple of the
 * coarsest power of two dividing every nonzero coordinate d of G and Q. So q - mean is exact in
 * double, and in float wherever it is small enough: integer coordinates stay integers and their
 * squared distances stay exact in float32 (below 2^24), as without centring. */
void metrics_centre(const float *Q, int64_t nq, const float *G, int64_t ng, int D, double limit, double *mean);

/* ||q - g||^2 + extra in double, the terms summed in order d = 0 .. D-1 (the re-ranking's and
 * knnpass's exact distances: one loop, so the same bits) */
double metrics_dist2(const float *q, const float *g, int D, double extra);

/* (s, g) into the best list (dd, di) of at most cap, ascending by (s, g) with ties to the lower
 * index; *cnt the entries held so far */
void metrics_best_push(double *dd, int64_t *di, int *cnt, int cap, double s, int64_t g);

#endif
