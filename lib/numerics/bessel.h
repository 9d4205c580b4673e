/* bessel: the modified Bessel function of the first kind I_v(x) of real order v >= 0 at x > 0, in
 * log space, and the ratio A_v(x) = I_{v+1}(x) / I_v(x), for the von Mises-Fisher family: the
 * density of vMF(mu, kappa) on the unit sphere of R^D is C_D(kappa) exp(kappa mu . z) with
 * log C_D(kappa) = (D/2 - 1) log kappa - (D/2) log(2 pi) - log I_{D/2-1}(kappa), and its mean
 * resultant length, d/dkappa of -log C_D, is A_{D/2-1}(kappa) (lib/training/loss_scf.c). Pure
 * functions; nothing allocates.
 *
 * Numerics: at an order mu >= BESSEL_UAE_ORDER (30) the uniform asymptotic expansion (Debye; DLMF
 * 10.41.3) with z = x / mu, s = sqrt(1 + z^2), eta = s + log(z / (1 + s)),
 *   log I_mu(mu z) = mu eta - log(2 pi mu) / 2 - log(s) / 2 + log(1 + sum_{k=1..4} u_k(1/s) / mu^k)
 * (the polynomials u_k of DLMF 10.41.10), within about 1e-10 of the log for every x > 0 (its error
 * term is of order mu^-5). Below, the order is raised to mu = v + m >= 30 and brought down by the
 * ratios R_k = I_k / I_{k-1}: R_mu = exp(log I_mu - log I_{mu-1}) from the expansion, then the
 * three-term recurrence downward, R_k = x / (2k + x R_{k+1}), which is stable in that direction
 * (the ratio of the minimal solution), and log I_v = log I_mu - sum_{j=v+1..mu} log R_j. So no
 * I is ever formed: I_255.5(1e-3) (about 1e-1349) and I_0(1e5) are finite logs. Checked against
 * mpmath over orders 0 to 255.5 and x from 1e-6 to 1e6: the log within 6.6e-11 (relative to
 * max(1, |log I|)), the ratio within 1.4e-10 (tests/unit/test_bessel.c).
 * x <= 0, v < 0 or NaN give NaN.
 *
 *   double lc = (D / 2.0 - 1) * log(k) - D / 2.0 * log(2 * M_PI) - bessel_log_i(D / 2.0 - 1, k);
 *   double a = bessel_ratio(D / 2.0 - 1, k);   // E[mu . z] under vMF(mu, k)
 */
#ifndef HEDGE_BESSEL_H
#define HEDGE_BESSEL_H

#define BESSEL_UAE_ORDER 30

/* log I_v(x) */
double bessel_log_i(double v, double x);
/* I_{v+1}(x) / I_v(x), in (0, 1) */
double bessel_ratio(double v, double x);

#endif
