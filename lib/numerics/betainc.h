/* betainc: the log of the regularised incomplete beta function, I_x(a, b) = B(x; a, b) / B(a, b),
 * and its derivative, for the F-statistic loss (lib/training/loss_fstat.c): the CDF of F(1, m) at s is
 * I_x(1/2, m/2) with x = s / (s + m). Pure functions of their arguments; nothing allocates.
 *
 * Numerics (Numerical Recipes' betai/betacf, kept in log space throughout):
 *   x < (a + 1) / (a + b + 2):  log I = a log x + b log1p(-x) - log B(a,b) - log a + log cf(a, b, x)
 *   otherwise:                  log I = log1p(-J), J = I_{1-x}(b, a) by the same formula
 * cf is the continued fraction of NR 6.4, evaluated by the modified Lentz method to a relative
 * 1e-15; it converges quickly on each side of the split and is O(1) there, so for x -> 0 the log
 * is the sum of finite logs (x = 1e-300 gives a log I near -345, never log 0 of an underflowed
 * I), and for x -> 1 log1p(-J) keeps the tiny J (x = 1 - 1e-16). log B comes from lgamma.
 *   d/dx log I = x^(a-1) (1-x)^(b-1) / (B(a,b) I): a / (x (1-x) cf) on the lower side (the powers
 *   cancel), exp((a-1) log x + (b-1) log1p(-x) - log B - log I) on the upper
 * (the derivative may underflow to 0 as x -> 1 for b > 1). x = 0 gives -inf (derivative +inf);
 * x = 1 gives 0. a, b > 0 and x in [0, 1]; anything else (or NaN) gives NaN.
 *
 *   double g, li = betainc_log(0.5, 0.5 * (n - 2), B / (B + W), &g);   // log Pr(S < s), F(1, n-2)
 */
#ifndef HEDGE_BETAINC_H
#define HEDGE_BETAINC_H

/* log I_x(a, b); *dlog_dx (may be NULL) receives d/dx log I_x(a, b) */
double betainc_log(double a, double b, double x, double *dlog_dx);

#endif
