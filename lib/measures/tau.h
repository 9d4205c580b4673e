/* tau: does performance fall as uncertainty rises? Items sorted by uncertainty into equal-size
 * bins, and Kendall's tau-b between two columns (the HIB paper's section 4.4; ktau).
 * The names keep the metrics_ prefix of lib/metrics.c, which this module was split from.
 *
 * Every function works on caller-owned arrays and allocates only scratch it frees before
 * returning. Definitions and tie rules (each is also the documented behaviour of the programs):
 *
 *   bins     n items in B equal-size bins: the first n mod B bins hold one item more
 *            (ceil(n/B)), the others floor(n/B) (numpy.array_split's rule).
 *   tau-b    (nc - nd) / sqrt((n0 - n1)(n0 - n2)), n0 = n(n-1)/2, n1 / n2 = pairs tied in x / in
 *            y (a pair tied in both counts in both); tied pairs are neither concordant nor
 *            discordant. NaN when x or y is constant (the denominator is 0).
 *
 *   int64_t start[21]; metrics_bins(n, 20, start);            // bin b is [start[b], start[b+1])
 *   double tau = metrics_tau_b(x, y, 20, NULL);
 */
#ifndef HEDGE_TAU_H
#define HEDGE_TAU_H
#include <stdint.h>

/* start[B + 1]: bin b holds sorted items start[b] .. start[b+1]-1. Requires n >= B >= 1. */
void metrics_bins(int64_t n, int B, int64_t *start);

typedef struct {
    int64_t concordant, discordant, tied_x, tied_y, tied_both, pairs;
} metrics_tau_counts;
/* Kendall's tau-b of (x[i], y[i]), O(n^2) (meant for bins); counts may be NULL */
double metrics_tau_b(const double *x, const double *y, int64_t n, metrics_tau_counts *counts);

#endif
