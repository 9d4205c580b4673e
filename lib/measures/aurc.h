/* aurc: does an uncertainty know when the answer is wrong? The AUROC of the uncertainty for the
 * wrong items and the area under the risk-coverage curve (AURC, E-AURC) of per-item losses (ktau,
 * knn, retrieve); and an item's scalar uncertainty from an embedding stream, which they take.
 * The names keep the metrics_ prefix of lib/metrics.c, which this module was split from.
 *
 * Every function works on caller-owned arrays and allocates only scratch it frees before
 * returning. Definitions and tie rules (each is also the documented behaviour of the programs):
 *
 *   AUROC    of the uncertainty u at telling wrong items (the positives) from right ones:
 *            P(u_wrong > u_right) + 1/2 P(u_wrong = u_right), metrics_auc with label = wrong.
 *            NaN when every item is right or every item is wrong.
 *   risk-coverage (Geifman and El-Yaniv, "Selective classification for deep neural networks",
 *            2017; "Bias-reduced uncertainty estimation", 2019). loss[i] is an item's loss,
 *            1 - its performance (the 0/1 error of a binary `correct`; 1 - AP of a query).
 *            Items are kept most confident first: ascending u. risk(k) = mean loss of the k
 *            first, and
 *                AURC = (1/n) sum_{k=1..n} risk(k).
 *            Ties: items of equal u are in no order, so risk(k) is its EXACT expectation over
 *            uniformly random orders inside each block of equal u: for k inside a block that
 *            starts after b items whose losses sum to L_b, E[sum of the k first] =
 *            L_b + (k - b) x (the block's mean loss). The record order never matters, there is
 *            no seed, and a constant u gives risk(k) = the mean loss for every k, so AURC = the
 *            overall error rate.
 *   oracle   the same with the items ordered by loss, ascending (the best possible ordering;
 *            ties in loss change nothing). E-AURC = AURC - oracle AURC (>= 0 up to rounding).
 *   curve    at rejected fractions r / npts, r = 0 .. npts-1 (ktau: npts = 100, 0 .. 99 %):
 *            kept k = n - floor(r n / npts) >= 1 items, risk(k) and the oracle's risk(k).
 * Cost: one sort each (O(n log n)), sums in double.
 *
 *   double auroc = metrics_error_auroc(u, correct, n);
 *   metrics_aurc_result a; metrics_rc_point curve[100];
 *   metrics_aurc(u, loss, n, &a, 100, curve);               // a.aurc, a.oracle, a.eaurc
 */
#ifndef HEDGE_AURC_H
#define HEDGE_AURC_H
#include <stdint.h>

/* u must hold no NaN; correct[i] nonzero = right */
double metrics_error_auroc(const double *u, const uint8_t *correct, int64_t n);

typedef struct {
    double aurc, oracle, eaurc;
} metrics_aurc_result;
typedef struct {
    double rejected;         /* r / npts */
    int64_t kept;            /* n - floor(r n / npts) */
    double risk, oracle_risk; /* the expected mean loss of the kept items, and the oracle's */
} metrics_rc_point;
/* AURC, oracle AURC and E-AURC of u (finite) against loss (finite), into *res (all NaN when n is
 * 0); curve (or NULL): npts points, rejected 0, 1/npts, ..., (npts-1)/npts */
void metrics_aurc(const double *u, const double *loss, int64_t n, metrics_aurc_result *res, int npts,
                  metrics_rc_point *curve);

/* an item's scalar uncertainty from an embedding stream (knn's `eta`, like retrieve's):
 * u[i] = eta[i] when eta is given; else, when var is, the mean of the item's cd = C x D
 * variances var[i cd .. (i+1) cd), summed in double. Returns "eta", "var", or NULL (neither: a
 * point embedding, u untouched). */
const char *metrics_item_uncertainty(const float *eta, const float *var, int64_t n, int64_t cd, double *u);

#endif
