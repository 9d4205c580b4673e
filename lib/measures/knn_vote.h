/* knn_vote: the class a query gets from its k nearest neighbours (knn's KNN accuracy).
 * The names keep the metrics_ prefix of lib/metrics.c, which this module was split from.
 *
 * Every function works on caller-owned arrays and allocates only scratch it frees before
 * returning. Definitions and tie rules (each is also the documented behaviour of the programs):
 *
 *   vote     the class with the most of the k neighbours; tied counts: the smallest sum of
 *            (Euclidean, not squared) distances among the tied classes; still tied: the class of
 *            the best-ranked neighbour among them.
 */
#ifndef HEDGE_KNN_VOTE_H
#define HEDGE_KNN_VOTE_H
#include <stdint.h>

/* the voted class of one query from its k neighbours' classes and distances (rank order) */
int32_t metrics_vote(const int32_t *cls, const double *dist, int k);

#endif
