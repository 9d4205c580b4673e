/* retrieval: the retrieval metrics of metric learning for queries against a gallery (or
 * leave-one-out), in blocks through blas_sgemm so that memory never grows as queries x gallery;
 * and the gallery masks of uncertainty-driven cleaning (hetero-triplet-taha-2019 section 5).
 *
 * Ranking. Query q ranks the gallery items, its excluded item left out, by the squared
 * Euclidean distance d2 = (||q||^2 + ||g||^2) + (-2 q.g), in float32 (the dot products from
 * blas_sgemm; a negative rounding is clamped to 0), ascending, with q and g centred on the
 * gallery's mean first (metrics_centre: far from the origin the uncentred sum cancels, e.g.
 * offset 1000 and spread 1 flipped P@1 for a quarter of the queries; integer coordinates stay
 * integers, so their d2 stays exact below 2^24). Tie rule: equal d2 (equal float32
 * values), the lower gallery index ranks first, as in knn. Positives: the gallery items of q's
 * class. With the 1-based ranks r_1 < r_2 < ... < r_R of its R positives:
 *   Recall@k  1 if r_1 <= k (some positive in the top k: the metric-learning convention)
 *   P@1       1 if r_1 = 1
 *   R-prec    #{i : r_i <= R} / R                   (R-precision)
 *   MAP@R     (1/R) sum over i with r_i <= R of i / r_i   (Musgrave et al. 2020)
 *   AP        (1/R) sum over all i of i / r_i       (average precision over the whole gallery)
 *   RR        1 / r_1                               (its mean over the queries: MRR)
 * No positive (R = 0): the query has no metrics (NaN, npos 0); every mean leaves it out and
 * counts it in no_positive (pytorch-metric-learning leaves such queries out too).
 * Per-class averages (pytorch-metric-learning's avg_of_avgs, retrieval_class_average): each metric
 * averaged over the queries of each class (those with a positive), then over those classes, each
 * class counting once whatever its number of queries.
 * Cost per query: its R positives' keys (d2 bits, gallery index) sorted by a radix sort, then
 * every negative placed among them through a table of d2 buckets (about 32 per positive; a short
 * scan of whole keys in the few buckets that hold a positive), eight at a time with AVX2: O(G + R),
 * never a sort of the gallery. The sgemm takes up to 8 x RETRIEVAL_QBLOCK queries a call (as
 * many as RETRIEVAL_ROWBYTES of distances per thread hold), since OpenBLAS packs the gallery anew
 * in every call.
 * Precision: d2 is float32, so items whose true distances differ by less than about 1e-7 of the
 * centred squared norms may swap (knn recomputes its winners in double; here every item counts).
 *
 * MLS (qvar and gvar given: retrieve --distance mls; Q, G the means of single Gaussians). The
 * distance is -MLS (lib/numerics/mls.h), so that the ranking is by MLS, descending; d2 above stands for
 * -MLS - mls_floor(gvar): the kernel's float, shifted by the gallery's bound so that it is >= 0
 * as the keys need (a rounding below 0 is clamped to 0, as d2's), the same for every query and
 * every shard. Everything else is as for d2, the global histogram's keys included (their
 * thresholds: the key's bound plus the floor). Cost: ng x nq kernel pairs instead of the sgemm.
 *
 * Galleries. mask[g] bit m (m < nmask) says that gallery item g is in gallery m; every item is in
 * gallery 0, the full one. One pass over the distances evaluates every gallery: each negative is
 * placed among the full gallery's positives once and counted for each gallery that holds it.
 *
 * Determinism: the results do not depend on the thread count. Per-query values are rounded to
 * float32 (as the stream stores them) before they are summed in double: gallery 0's means over
 * the queries in order (so a reader of the records gets the same numbers), the others' over
 * fixed blocks of RETRIEVAL_QBLOCK queries, then the blocks in order.
 *
 * Global precision-recall (the calibration measure of cross-example-softmax-veit-2020: one
 * threshold for all queries). With J->global set, every (query, gallery item) pair of the run also
 * goes into a histogram: leave-one-out every query against every other item, with a gallery every
 * query against every item but its excluded one; gallery 0 only (cleaning masks do not apply);
 * queries without a positive count too (their pairs are all negatives). Positive: same class.
 * The pairs are ranked by a key, ascending (descending similarity):
 *   key(d2)   the float32 bit pattern of the pair's d2 (the float of the per-query ranking, >= +0)
 *             shifted right by 23 - RETRIEVAL_GLOBAL_MANTISSA: the 8 exponent bits and the top 14
 *             of the 23 mantissa bits, 2^22 bins. For d2 in [2^e, 2^(e+1)) bin i is
 *             [2^e (1 + i 2^-14), 2^e (1 + (i+1) 2^-14)): 2^-14 (6.1e-5) of d2 wide; below 2^-126
 *             (subnormal) 2^-140 wide. Every integer d2 below 2^15 has a bin of its own.
 *   ties      pairs with equal keys form one block, metrics_ap's tie rule (ap.h): every
 *             positive of a block gets the precision at the block's end; the PR curve has one
 *             point per non-empty bin; global AP = metrics_ap, global PR-AUC =
 *             metrics_pr_trapezoid_area of that curve. For this rule the numbers are EXACT: the
 *             same doubles as those functions on every pair's key materialised (test_retrieval).
 * Cost: one more pass over each row of distances, about 1.5 ns a pair. Counts are integers,
 * a histogram per worker (lib/base/par.h), summed after the run: the result does not depend on the
 * thread count. Memory: a page of 2^14 bins (256 KB) per float exponent touched, per thread and
 * once merged: a few MB on real distances, 64 MB at most per copy (every exponent from 2^-149 to
 * 2^127 touched); never grows with the pairs.
 *
 * Ownership: the caller owns every array and J->global; retrieval_run allocates only scratch it
 * frees (and the pages it adds to J->global).
 *
 *   uint32_t *mask = emalloc(ng * sizeof *mask);
 *   int64_t dropped = retrieval_clean_masks(u, ng, 20, 5, 714, mask);  // galleries 0 .. 6
 *   retrieval_job J = {Q, qcls, nq, G, gcls, ng, D, exclude, mask, 2 + 5, ks, nk, threads};
 *   retrieval_query *per = emalloc(nq * sizeof *per);
 *   retrieval_summary sum[7];
 *   retrieval_run(&J, per, sum);       // per: gallery 0; sum[m]: the means in gallery m
 *
 *   J.global = retrieval_hist_new();   // also global precision-recall over every pair
 *   retrieval_run(&J, per, sum);
 *   retrieval_global g;
 *   retrieval_hist_summary(J.global, &g);  // g.ap, g.pr_auc, g.pairs, g.positives
 *   retrieval_hist_free(J.global);
 */
#ifndef HEDGE_RETRIEVAL_H
#define HEDGE_RETRIEVAL_H
#include <stdint.h>

#include "ap.h"
#include "rng.h"

#define RETRIEVAL_MAXK 16   /* Recall@k for at most this many k */
#define RETRIEVAL_MAXMASK 32
#ifndef RETRIEVAL_QBLOCK
#define RETRIEVAL_QBLOCK 32 /* queries per block of sums; memory at least RETRIEVAL_QBLOCK x ng floats per thread */
#endif
#ifndef RETRIEVAL_ROWBYTES
#define RETRIEVAL_ROWBYTES (320 << 20) /* distances per thread: more queries per sgemm when they fit */
#endif

typedef struct {
    const float *Q;           /* (nq, D) query points */
    const int32_t *qcls;      /* (nq) */
    int64_t nq;
    const float *G;           /* (ng, D) gallery points (may be Q) */
    const int32_t *gcls;      /* (ng) */
    int64_t ng;
    int D;
    const int64_t *exclude;   /* (nq) or NULL: a gallery index query q never sees (itself), -1 none */
    const uint32_t *mask;     /* (ng) or NULL (one gallery, every item): bit m = in gallery m */
    int nmask;                /* 1 .. RETRIEVAL_MAXMASK */
    const int *ks;            /* (nk) the k of Recall@k, each >= 1 */
    int nk;                   /* 1 .. RETRIEVAL_MAXK */
    int threads;
    struct retrieval_hist *global; /* or NULL: add every pair of the run to it (above) */
    const float *Qall;        /* or NULL: (nqall, D) the whole query set when Q is a part of it (a */
    int64_t nqall;            /* shard): the centre is rounded as for all of them (metrics_centre) */
    const float *qvar, *gvar; /* or NULL: (nq, D), (ng, D) variances: rank by -MLS (below) */
    int kind;                 /* with them: MLS_NEG (0, -MLS) or another of mls.h's distances, each >= 0 */
} retrieval_job;

typedef struct {
    float ap, rprec, map_r;   /* NaN when npos = 0 */
    uint8_t p1;
    int32_t npos;             /* R: the positives in the gallery, the excluded item left out */
    int32_t r1;               /* r_1, the rank of the first positive (0 when npos = 0): RR = 1 / r_1 */
    uint8_t recall[RETRIEVAL_MAXK];
} retrieval_query;

typedef struct {
    int64_t queries;          /* queries with at least one positive: the means are over them */
    int64_t no_positive;      /* queries without */
    double map, map_r, rprec, p1, mrr, recall[RETRIEVAL_MAXK];
    int knn_screen;           /* retrieval_run_at_r: the screen its kNN took (METRICS_SCREEN_*, knn_search.h) */
} retrieval_summary;

/* per (nq): every query's metrics in gallery 0; sum (nmask): the means in each
 * gallery (NaN when no query has a positive there). Dies on a squared norm beyond FLT_MAX / 16
 * (coordinates beyond about 4.6e18: the float sums could overflow) or a non-finite coordinate. */
void retrieval_run(const retrieval_job *J, retrieval_query *per, retrieval_summary *sum);
/* retrieval_run with hooks, so that other consumers share the pass, called from the worker that
 * ranked the query (any order; each query once):
 *   row_fn   (not with MLS) query q's row of -2 q.g at the gallery's sorted positions: qn and
 *            gn[j] the squared norms of the centred coordinates, gnmax the largest gn, gidx[j]
 *            the gallery index at sorted position j, ng (the kNN of lib/evaluation/knnpass.h)
 *   rank_fn  query q's positives' ranks rank[0 .. R) in the full gallery (1-based, increasing;
 *            R = 0: no positive), as retrieval_from_ranks gets them */
typedef void retrieval_row_fn(void *ctx, int64_t q, const float *row, float qn, const float *gn, float gnmax,
                              const uint32_t *gidx, int64_t ng);
typedef void retrieval_rank_fn(void *ctx, int64_t q, const int64_t *rank, int64_t R);
typedef struct {
    retrieval_row_fn *row_fn;   /* or NULL */
    retrieval_rank_fn *rank_fn; /* or NULL */
    void *ctx;
} retrieval_hooks;
void retrieval_run_rows(const retrieval_job *J, retrieval_query *per, retrieval_summary *sum,
                        const retrieval_hooks *H);

/* the Pearson correlation of x and y (n pairs), in double; NaN when n < 2 or either is constant */
double retrieval_pearson(const double *x, const double *y, int64_t n);

/* one query's metrics from its positives' ranks rank[0 .. R) (1-based, increasing) */
void retrieval_from_ranks(const int64_t *rank, int64_t R, const int *ks, int nk, retrieval_query *out);

/* ---- MAP@R from the R nearest (retrieve --at-r; pytorch-metric-learning's way)
 * MAP@R, R-precision, P@1 and Recall@k need only each query's first max(R, k) ranks. With depth
 * K at least every query's R and the largest k, each query's K nearest gallery items by
 * metrics_knn (exact squared distances in double, equal ones by gallery index; leave-one-out
 * through its symmetric or threshold screen) give those metrics; the positives beyond rank K are
 * not seen, so AP over the whole gallery is unknown (NaN: mAP NaN) and so is r_1 when no positive
 * lies within the K (first_rank 0, RR unknown: MRR NaN). The ranks are those of the exact
 * distances where the full ranking (retrieval_run) orders float32 ones: the two differ only
 * where distances tie in float32 and not in double (near-ties). With qvar and gvar, mls_knn's
 * search instead (its k + MLS_KNN_SLACK best in float, re-ranked in double). Cost: the knn search with k = K,
 * then O(K) per query; memory nq K 8 bytes besides knn's (at most RETRIEVAL_AT_R_MEMORY).
 * Large classes (thousands of items a class) make K large and the full ranking faster. */
#define RETRIEVAL_AT_R_MEMORY 8e9
/* K: the largest number of gallery items (gcls, ng) of a class that a query (qcls, nq: every
 * query of the input, so that shards agree) has, less 1 when self (leave-one-out: the query is
 * its own class's item), at least kmin, at most cap (the items a query may rank: ng, or ng - 1
 * with an excluded item) */
int64_t retrieval_at_r_depth(const int32_t *qcls, int64_t nq, const int32_t *gcls, int64_t ng, int self,
                             int64_t kmin, int64_t cap);
/* one query of class cls with R positives from the classes ncls[0 .. K) of its K nearest (rank
 * order; R <= K and every k <= K, else dies): ap NaN, first_rank 0 when none of the K is a positive */
void retrieval_from_nearest(const int32_t *ncls, int64_t K, int32_t cls, int64_t R, const int *ks, int nk,
                            retrieval_query *out);
/* J's queries by their K nearest (J: one gallery, no mask, no global histogram): per (nq) and the
 * means sum as retrieval_run's gallery 0. Dies when a query has more than K positives. */
void retrieval_run_at_r(const retrieval_job *J, int64_t K, retrieval_query *per, retrieval_summary *sum);

/* sums: start from {0}, add queries (those with npos = 0 are only counted), then finish (means) */
void retrieval_summary_add(retrieval_summary *s, const retrieval_query *q, int nk);
void retrieval_summary_finish(retrieval_summary *s, int nk);
/* s += p (the sums of two parts, before finish) */
void retrieval_summary_merge(retrieval_summary *s, const retrieval_summary *p, int nk);
/* avg_of_avgs of per[0 .. n) (queries of classes cls[0 .. n); npos = 0 left out): every mean of
 * retrieval_summary over the queries of each class, in query order, then over the classes in
 * ascending order; out->queries is the number of classes, out->no_positive the queries left out.
 * The same numbers from the records of a retrieval stream, whatever the shards it came in. */
void retrieval_class_average(const int32_t *cls, const retrieval_query *per, int64_t n, int nk,
                             retrieval_summary *out);

/* ---- global precision-recall: the histogram of pair keys and its curve */
#define RETRIEVAL_GLOBAL_MANTISSA 14 /* mantissa bits kept in a key */
#define RETRIEVAL_GLOBAL_BINS ((int64_t)1 << (8 + RETRIEVAL_GLOBAL_MANTISSA))
typedef struct retrieval_hist retrieval_hist;

typedef struct {
    int64_t pairs, positives;
    int64_t points;          /* non-empty bins: the curve's points */
    double ap, pr_auc;       /* NaN without a positive */
} retrieval_global;

retrieval_hist *retrieval_hist_new(void);
void retrieval_hist_free(retrieval_hist *h);
/* the key (bin) of a squared distance d2 (finite; negative and -0 count as +0) */
uint32_t retrieval_global_key(float d2);
/* the largest float32 d2 whose key is key: the curve point of bin key is "d2 <= it" */
float retrieval_global_key_max(uint32_t key);
/* count pairs with key key (positive or not) */
void retrieval_hist_add(retrieval_hist *h, uint32_t key, int positive, int64_t count);
/* h += a */
void retrieval_hist_merge(retrieval_hist *h, const retrieval_hist *a);
/* pairs, positives, points, AP and PR-AUC of the histogram (the definitions above) */
void retrieval_hist_summary(const retrieval_hist *h, retrieval_global *g);
/* the curve for plotting into pts (room for max >= 2 points), ascending key: every point when
 * there are at most max; else thinned: the first and the last point and, between them, a point
 * whenever the path (|d recall| + |d precision|) since the last one kept reaches 1/(max - 2) of
 * the whole curve's; returns how many (<= max).
 * threshold = retrieval_global_key_max of the bin (predict "same class" when d2 <= it). */
int64_t retrieval_hist_curve(const retrieval_hist *h, int64_t max, metrics_pr_point *pts);

/* Cleaning masks for ng gallery items with uncertainty u (ng, finite), dropping
 * ndrop = floor(ng * percent / 100) items (returned):
 *   bit 0                 every item (the full gallery)
 *   bit 1                 all but the ndrop most uncertain (highest u; equal u in a random order
 *                         drawn from seed, as ktau orders ties)
 *   bit 2 + r, r < draws  all but ndrop items drawn uniformly at random, draw r from its own
 *                         generator (seed, RETRIEVAL_DRAW ^ r)
 * draws <= RETRIEVAL_MAXMASK - 2. The same seed gives the same masks. */
#define RETRIEVAL_DRAW RNG_STREAM('c', 'l', 'e', 'n')
int64_t retrieval_clean_masks(const double *u, int64_t ng, double percent, int draws, uint64_t seed,
                              uint32_t *mask);

#endif
