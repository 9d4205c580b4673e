/* auc: the AUC (Mann-Whitney U) of scores against 0/1 labels, and of every group against the rest
 * from one sort (disentangle's per-attribute AUCs; AURC's error AUROC), ties counting 1/2.
 * The names keep the metrics_ prefix of lib/metrics.c, which this module was split from.
 *
 * Every function works on caller-owned arrays and allocates only scratch it frees before
 * returning. Definitions and tie rules (each is also the documented behaviour of the programs):
 *
 *   AUC      of score for positives against negatives: the fraction of (positive, negative) pairs
 *            in which the positive scores higher, a tied pair counting 1/2. From midranks (1-based
 *            ranks, ascending; a block of equal scores all get the mean of the positions it
 *            spans): U = R_pos - n_pos (n_pos + 1) / 2 (R_pos the positives' rank sum) and
 *            AUC = U / (n_pos n_neg). Midranks are multiples of 1/2, so U is exact in double
 *            while n^2 < 2^52 (n below about 6.7e7). NaN when there is no positive or no negative.
 *   groups   one sort gives the AUC of every group against the rest (group g's rank sum): for
 *            G values of an attribute, O(n log n + n) instead of G sorts.
 *
 *   metrics_auc_midranks(x, n, rank);                        // once per score column
 *   metrics_auc_groups(rank, group, n, G, npos, u, auc);     // every group's U and AUC
 */
#ifndef HEDGE_AUC_H
#define HEDGE_AUC_H
#include <stdint.h>

/* rank[i] = the midrank of x[i] among x[0..n); x must hold no NaN */
void metrics_auc_midranks(const double *x, int64_t n, double *rank);
/* group[i] in 0..G-1 (dies otherwise). npos[g] = items of group g, u[g] = its Mann-Whitney U against
 * the other items (pairs won plus half the ties), auc[g] = u[g] / (npos[g] (n - npos[g])), NaN
 * when npos[g] is 0 or n; npos, u or auc may be NULL */
void metrics_auc_groups(const double *rank, const int32_t *group, int64_t n, int G, int64_t *npos, double *u,
                        double *auc);
/* AUC of score against label (nonzero = positive); scores must not be NaN */
double metrics_auc(const double *score, const uint8_t *label, int64_t n);

#endif
