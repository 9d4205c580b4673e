/* ece: the expected calibration error of probabilities against 0/1 labels (apcurve --ece).
 * The names keep the metrics_ prefix of lib/metrics.c, which this module was split from.
 *
 * Every function works on caller-owned arrays and allocates only scratch it frees before
 * returning. Definitions and tie rules (each is also the documented behaviour of the programs):
 *
 *   ECE      expected calibration error of a probability p against a binary label y (Guo et al.,
 *            "On calibration of modern neural networks", 2017, with B = 15 bins,
 *            METRICS_ECE_BINS): B equal-width bins on [0, 1], bin b (0-based) holding
 *            (b/B, (b+1)/B] (Guo et al.'s I_m = ((m-1)/M, m/M]), and p = 0 in the first bin, as
 *            sklearn's calibration_curve puts it (np.searchsorted(bins[1:-1], p): the number of
 *            inner edges strictly below p). Decided exactly (p against k/B by the sign of
 *            fma(p, B, -k)), not by a rounded product. sklearn's inner edges are numpy.linspace's
 *            k x fl(1/B), which can differ from k/B in the last bit: a double p within an ulp of
 *            such an edge can land one bin apart; a float32 p never does (a 24-bit fraction is
 *            never that close to k/B unless it equals it, and then both agree), and with B = 15
 *            no float32 p other than 0 and 1 lies on an edge, so [lo, hi) gave the same numbers.
 *                ECE = sum over the non-empty bins b of (n_b / n) |mean(y)_b - mean(p)_b|
 *                    = (1/n) sum_b |sum(y)_b - sum(p)_b|.
 *            A p outside [0, 1] or NaN is not a probability: the caller reports it.
 * Cost: one sort each (O(n log n)), sums in double.
 *
 *   int64_t bad; double ece = metrics_ece(p, y, n, METRICS_ECE_BINS, NULL, &bad);
 */
#ifndef HEDGE_ECE_H
#define HEDGE_ECE_H
#include <stdint.h>

#define METRICS_ECE_BINS 15
typedef struct {
    int64_t n;
    double mean_p, mean_y; /* NaN for an empty bin */
} metrics_ece_bin;
/* ECE of p against y (nonzero = 1) in B >= 1 bins (dies otherwise); bins (or NULL): B entries.
 * A p[i] that is not a probability: returns NaN with *bad = i (the first such item); else *bad =
 * -1 (bad may be NULL). NaN when n is 0. */
double metrics_ece(const double *p, const uint8_t *y, int64_t n, int B, metrics_ece_bin *bins, int64_t *bad);

#endif
