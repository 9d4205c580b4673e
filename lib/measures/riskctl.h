/* riskctl: selective retrieval with a guarantee. Answer only the queries whose uncertainty is at
 * most a threshold chosen so that the answered queries' error rate (R@1's: the nearest item is of
 * another class) is at most alpha with probability at least 1 - delta (Angelopoulos et al. 2021,
 * Learn then Test, with the Clopper-Pearson binomial p-value; Bates et al. 2021's RCPS in the
 * same spirit), and report what that gives on queries it did not see.
 *
 *   split     the queries with a defined loss, in a seeded random order (rng_init(seed,
 *             RISKCTL_SPLIT), rng_shuffle), the first floor(m / 2) for calibration, the rest
 *             for test
 *   thresholds the test half's distinct u, ascending (fixed before any calibration loss is seen,
 *             as the fixed sequence needs); threshold t keeps every query with u <= t (ties all
 *             kept or none)
 *   test      for t from the smallest (the surest end) up: H_t "the error rate of the kept is
 *             above alpha" is rejected when P(Bin(m_t, alpha) <= e_t) <= delta, m_t kept and e_t
 *             wrong among the calibration queries (the exact binomial p-value, Clopper-Pearson's);
 *             a t that keeps fewer than m_min = ceil(log delta / log(1 - alpha)) cannot be
 *             rejected whatever its errors and is passed over without stopping (it depends on
 *             alpha and delta alone); the scan stops at the first t not rejected. The threshold
 *             is the last rejected t (fixed-sequence testing: the family-wise error is at most
 *             delta).
 *   guarantee for queries exchangeable with the calibration ones, against the same gallery: with
 *             probability >= 1 - delta over the calibration draw, the expected error rate of the
 *             queries kept is at most alpha. Not guaranteed: a realised rate on a finite set (the
 *             test half's is reported, and may exceed alpha), a shift of the queries' distribution,
 *             another gallery.
 * And the empirical selective risk at coverage 50, 80 and 95 % over all the queries (the mean loss
 * of the ceil(c m) surest, equal u in the expectation of the tie rule of lib/measures/selective.h).
 *
 *   riskctl_result r;
 *   riskctl_run(u, loss, n, 714, 0.05, 0.1, &r);   // r.threshold, r.coverage, r.risk
 */
#ifndef HEDGE_RISKCTL_H
#define HEDGE_RISKCTL_H
#include <stdint.h>

#define RISKCTL_SPLIT 0x7269736b00000000ull /* RNG_STREAM('r','i','s','k') */

typedef struct {
    double alpha, delta;
    int64_t ncal, ntest;      /* the halves */
    int found;                /* a threshold was certified */
    double threshold;         /* keep u <= it (NaN: none) */
    int64_t cal_kept, cal_wrong;
    double coverage, risk;    /* on the test half: the share kept and the error rate of those */
    double risk_at[3];        /* at coverage 0.5, 0.8, 0.95 over every query */
    char why[160];            /* why there is no threshold (found 0) */
} riskctl_result;

extern const double riskctl_coverages[3];

/* u (n) finite; loss (n) 0, 1 or NaN (no loss: left out) */
void riskctl_run(const double *u, const double *loss, int64_t n, uint64_t seed, double alpha, double delta,
                 riskctl_result *r);
#endif
