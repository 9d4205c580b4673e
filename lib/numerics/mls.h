/* mls: the mutual likelihood score of PFE (Shi & Jain, ICCV 2019, Eq. 3; PFE-NOTES.md) between
 * two diagonal Gaussians N(mu1, diag(v1)) and N(mu2, diag(v2)) in D dimensions:
 *
 *   MLS = -1/2 sum_l [ (mu1_l - mu2_l)^2 / (v1_l + v2_l) + log(v1_l + v2_l) ] - D/2 log(2 pi)
 *
 * log p(z1 = z2): higher means more likely the same. The loss `mls` (lib/training/loss_mls.c) and the
 * evaluators' MLS scores and rankings (pairscore --score mls, knn/retrieve --distance mls) all
 * compute it here. mls_score sums in double.
 *
 *   double s = mls_score(mu1, v1, mu2, v2, D);
 *   mls_grad(mu1, v1, mu2, v2, D, g, dmu1, dv1, dmu2, dv2);   // ADDS g * dMLS/d.
 *
 * All pairs (knn and retrieve --distance mls): the "distance" is -MLS, ascending (MLS
 * descending). It is no metric: -MLS(x, x) = 1/2 sum_l log(2 v_l) + D/2 log(2 pi) is not the
 * smallest distance of x in general (a neighbour with smaller variances can score higher), so
 * a search leaves an item out by its index, never by its distance. log(v1 + v2) does not factor
 * into per-item terms, so the sgemm of the Euclidean screens does not apply; the kernel instead
 * runs MLS_LANES gallery items a vector (two AVX2 registers; without AVX2 the same operations
 * lane by lane, the same bits), a loop over the dimensions outside, in float:
 *   h_l = v1_l / 2 + v2_l / 2, e_l = mu1_l / 2 - mu2_l / 2   (halves: no overflow for any
 *        finite means and variances)
 *   S   = sum_l e_l^2 / h_l = sum_l (mu1_l - mu2_l)^2 / (2 (v1_l + v2_l)),  in dimension order
 *   log: sum_l log h_l = ln 2 x (the sum of the exponents of the h_l, an integer: exact) + log of
 *        the product of their mantissas in [1, 2) (brought back to [1, 2) every 32 dimensions):
 *        one log per pair instead of one per dimension, by a series in double (lib/numerics/mls.c,
 *        log_mantissa: within 2e-11)
 *   -MLS = S + (sum_l log h_l) / 2 + D/2 log(4 pi), the last step in double, then float.
 * Each pair's terms are summed in the same fixed order whatever the pair's place, the block or
 * the thread, so the distances are the same bits for any thread count and any shard. A distance
 * beyond float32 (means far apart against tiny variances) becomes FLT_MAX: such pairs tie, by
 * index. Relative error of the float sums: about D x 6e-8 of the magnitudes of S and of
 * (sum log h) / 2. Variances must be at least FLT_MIN (mls_check_var): a zero variance has no
 * log, and h must stay a normal float for its exponent to be read.
 *
 * Ownership: the caller owns every array passed in and the set mls_set_new returns (mls_set_free);
 * mls_knn allocates only scratch it frees.
 *
 *   mls_set *G = mls_set_new(gmu, gvar, ng, D, NULL);  // (ng, D) each; order NULL: as given
 *   mls_row(G, qmu, qvar, 0, row);                     // row[g] = -MLS(q, g), float (ng)
 *   mls_knn(qmu, qvar, nq, gmu, gvar, ng, D, k, exclude, threads, nbr, dist);
 *   mls_set_free(G);
 */
#ifndef HEDGE_MLS_H
#define HEDGE_MLS_H
#include <stdint.h>

double mls_score(const float *mu1, const float *v1, const float *mu2, const float *v2, int D);
/* ADDS g times the gradient of MLS: with d = mu1 - mu2, v = v1 + v2 per dimension,
 * dMLS/dmu1 = -d / v = -dMLS/dmu2, dMLS/dv1 = dMLS/dv2 = (d^2 / v^2 - 1 / v) / 2 (PFE's
 * appendix). Any of the outputs may be NULL. */
void mls_grad(const float *mu1, const float *v1, const float *mu2, const float *v2, int D, double g, float *dmu1,
              float *dv1, float *dmu2, float *dv2);

/* ---- all pairs */
#define MLS_LANES 16     /* gallery items a kernel step: two AVX2 vectors */
#define MLS_KNN_SLACK 4  /* mls_knn: candidates beyond k from the float kernel, re-ranked in double */

/* the first variance of var (n, D) below FLT_MIN (a NaN too), as an index into var, else -1 */
int64_t mls_check_var(const float *var, int64_t n, int D);

/* ---- the kernel's other distances of two diagonal Gaussians (issue 47; docs/metric.md), each
 * ranked ascending like -MLS, each >= 0:
 *   MLS_CSD   PCME++'s closed-form sampled distance, E|z1 - z2|^2 = sum_l d_l^2 + v1_l + v2_l
 *   MLS_KL    the symmetric KL, (KL(1||2) + KL(2||1)) / 2 = sum_l [(v1 - v2)^2 + d^2 (v1 + v2)] / (4 v1 v2)
 *   MLS_BHATT Bhattacharyya's, sum_l d^2 / (8 v) + 1/2 log v - 1/4 (log v1 + log v2), v = (v1 + v2) / 2
 * (d = mu1 - mu2). Bhattacharyya's runs the MLS kernel itself (its S / 2 and its sum of log h, the
 * items' sums of log var beside); csd and kl a plain loop over the lanes in float (csd's variances
 * as the items' sums, in double). The expected likelihood kernel, log E N(z1; z2) = MLS, is
 * MLS_NEG. The same contract as -MLS: the same bits whatever the threads; FLT_MAX beyond float32
 * (kl: a term's product can overflow first, so beyond FLT_MAX / 4 it may be FLT_MAX already);
 * variances at least FLT_MIN (kl divides by them, bhatt takes their log; csd needs them >= 0). */
enum { MLS_NEG = 0, MLS_CSD = 1, MLS_KL = 2, MLS_BHATT = 3 };
/* the distance of kind between N(m1, diag v1) and N(m2, diag v2), in double (MLS_NEG: -mls_score) */
double mls_distance(int kind, const float *m1, const float *v1, const float *m2, const float *v2, int D);

/* a gallery laid out for the kernel: blocks of MLS_LANES items, each (D, MLS_LANES), half the
 * means and half the variances; padding lanes 0 and 1 */
typedef struct {
    int64_t n, nb;  /* items, blocks */
    int D, kind;    /* kind: MLS_NEG (mls_set_new) or another distance (mls_set_new_kind) */
    float *mu, *h;  /* (nb, D, MLS_LANES) */
    double *t;      /* (nb x MLS_LANES) each item's own term: csd its sum of var, bhatt -1/4 sum log var */
} mls_set;
/* item i of the set is row order[i] of mu, var (n, D) (order NULL: row i); var checked by the
 * caller (mls_check_var) */
mls_set *mls_set_new(const float *mu, const float *var, int64_t n, int D, const int64_t *order);
mls_set *mls_set_new_kind(int kind, const float *mu, const float *var, int64_t n, int D, const int64_t *order);
void mls_set_free(mls_set *S);

/* row[g] = (float)(-MLS(q, item g) + add) for every item g of G (the kernel above; FLT_MAX for a
 * value beyond), q the D-vectors qmu, qvar; the set's kind's distance + add for another kind */
void mls_row(const mls_set *G, const float *qmu, const float *qvar, double add, float *row);

/* A lower bound of -MLS(q, g) over every query q and every gallery item g of the gallery's
 * variances gvar (ng, D): 1/2 sum_l log(min_g gvar_l) + D/2 log(2 pi) (v_q + v_g > v_g), in
 * double. retrieve ranks -MLS minus it, which is >= 0 as its float keys need; it depends on the
 * gallery only, so the shards of a run agree. */
double mls_floor(const float *gvar, int64_t ng, int D);

/* The k nearest by -MLS of each query q (qmu, qvar: nq x D) among the gallery (gmu, gvar: ng x D),
 * as metrics_knn's: exclude[q] (or NULL) a gallery index never returned for q (-1: none);
 * nbr[q*k + r] the gallery index of rank r, dist[q*k + r] its -MLS in double (mls_score; dist may
 * be NULL). The kernel's float distances pick each query's k + MLS_KNN_SLACK best by (distance,
 * index); those are recomputed in double and the best k kept by (-MLS, index): the exact ranking
 * unless an item the float rounding put beyond k + MLS_KNN_SLACK belongs in the k (near-ties of
 * about 1e-6 relative). Dies when a query has fewer than k gallery items. threads: workers
 * (lib/base/par.h) taking blocks of queries; the results do not depend on them. Cost: ng x nq pairs of
 * the kernel (about 15 ns a pair at D = 64 on one core); memory: the gallery again, and a row of
 * ng floats per block of queries. */
void mls_knn(const float *qmu, const float *qvar, int64_t nq, const float *gmu, const float *gvar, int64_t ng, int D,
             int k, const int64_t *exclude, int threads, int64_t *nbr, double *dist);
/* the same by the distance of kind (mls_distance: dist its value in double) */
void mls_knn_kind(int kind, const float *qmu, const float *qvar, int64_t nq, const float *gmu, const float *gvar,
                  int64_t ng, int D, int k, const int64_t *exclude, int threads, int64_t *nbr, double *dist);

#endif
