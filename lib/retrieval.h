/* retrieval: the retrieval metrics of metric learning for queries against a gallery (or
 * leave-one-out), in blocks through blas_sgemm so that memory never grows as queries x gallery;
 * and the gallery masks of uncertainty-driven cleaning (hetero-triplet-taha-2019 section 5).
 *
 * Ranking. Query q ranks the gallery items, its excluded item left out, by the squared
 * Euclidean distance d2 = (||q||^2 + ||g||^2) + (-2 q.g), in float32 (the dot products from
 * blas_sgemm; a negative rounding is clamped to 0), ascending. Tie rule: equal d2 (equal float32
 * values), the lower gallery index ranks first, as in knn. Positives: the gallery items of q's
 * class. With the 1-based ranks r_1 < r_2 < ... < r_R of its R positives:
 *   Recall@k  1 if r_1 <= k (some positive in the top k: the metric-learning convention)
 *   P@1       1 if r_1 = 1
 *   R-prec    #{i : r_i <= R} / R                   (R-precision)
 *   MAP@R     (1/R) sum over i with r_i <= R of i / r_i   (Musgrave et al. 2020)
 *   AP        (1/R) sum over all i of i / r_i       (average precision over the whole gallery)
 * No positive (R = 0): the query has no metrics (NaN, npos 0); every mean leaves it out and
 * counts it in no_positive (pytorch-metric-learning leaves such queries out too).
 * Cost per query: its R positives' keys (d2 bits, gallery index) sorted by a radix sort, then
 * every negative placed among them by binary search: O(G log R), never a sort of the gallery.
 * Precision: d2 is float32, so items whose true distances differ by less than about 1e-7 of the
 * squared norms may swap (knn recomputes its winners in double; here every item counts).
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
 * Ownership: the caller owns every array; retrieval_run allocates only scratch it frees.
 *
 *   uint32_t *mask = emalloc(ng * sizeof *mask);
 *   int64_t dropped = retrieval_clean_masks(u, ng, 20, 5, 714, mask);  // galleries 0 .. 6
 *   retrieval_job J = {Q, qcls, nq, G, gcls, ng, D, exclude, mask, 2 + 5, ks, nk, threads};
 *   retrieval_query *per = emalloc(nq * sizeof *per);
 *   retrieval_summary sum[7];
 *   retrieval_run(&J, per, sum);       // per: gallery 0; sum[m]: the means in gallery m
 */
#ifndef HEDGE_RETRIEVAL_H
#define HEDGE_RETRIEVAL_H
#include <stdint.h>

#include "rng.h"

#define RETRIEVAL_MAXK 16   /* Recall@k for at most this many k */
#define RETRIEVAL_MAXMASK 32
#ifndef RETRIEVAL_QBLOCK
#define RETRIEVAL_QBLOCK 32 /* queries per sgemm: memory is RETRIEVAL_QBLOCK x ng floats per thread */
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
} retrieval_job;

typedef struct {
    float ap, rprec, map_r;   /* NaN when npos = 0 */
    uint8_t p1;
    int32_t npos;             /* R: the positives in the gallery, the excluded item left out */
    uint8_t recall[RETRIEVAL_MAXK];
} retrieval_query;

typedef struct {
    int64_t queries;          /* queries with at least one positive: the means are over them */
    int64_t no_positive;      /* queries without */
    double map, map_r, rprec, p1, recall[RETRIEVAL_MAXK];
} retrieval_summary;

/* per (nq): every query's metrics in gallery 0; sum (nmask): the means in each
 * gallery (NaN when no query has a positive there). Dies on a squared norm beyond FLT_MAX / 16
 * (coordinates beyond about 4.6e18: the float sums could overflow) or a non-finite coordinate. */
void retrieval_run(const retrieval_job *J, retrieval_query *per, retrieval_summary *sum);

/* the Pearson correlation of x and y (n pairs), in double; NaN when n < 2 or either is constant */
double retrieval_pearson(const double *x, const double *y, int64_t n);

/* one query's metrics from its positives' ranks rank[0 .. R) (1-based, increasing) */
void retrieval_from_ranks(const int64_t *rank, int64_t R, const int *ks, int nk, retrieval_query *out);

/* sums: start from {0}, add queries (those with npos = 0 are only counted), then finish (means) */
void retrieval_summary_add(retrieval_summary *s, const retrieval_query *q, int nk);
void retrieval_summary_finish(retrieval_summary *s, int nk);

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
