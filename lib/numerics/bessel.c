/* bessel: log I_v(x) and I_{v+1}(x) / I_v(x) (lib/numerics/bessel.h) */
#include "bessel.h"

#include <math.h>

/* log I_mu(x) by the uniform asymptotic expansion, mu >= BESSEL_UAE_ORDER - 1 */
static double uae(double mu, double x)
{
    double z = x / mu, s = sqrt(1 + z * z), p = 1 / s, p2 = p * p;
    double eta = s + log(z / (1 + s));
    double u1 = p * (3 - 5 * p2) / 24;
    double u2 = p2 * (81 + p2 * (-462 + p2 * 385)) / 1152;
    double u3 = p * p2 * (30375 + p2 * (-369603 + p2 * (765765 - p2 * 425425))) / 414720;
    double u4 = p2 * p2 * (4465125 + p2 * (-94121676 + p2 * (349922430 + p2 * (-446185740 + p2 * 185910725)))) /
                39813120;
    double series = 1 + (u1 + (u2 + (u3 + u4 / mu) / mu) / mu) / mu;
    return mu * eta - 0.5 * log(2 * M_PI * mu) - 0.5 * log(s) + log(series);
}

/* the order mu >= BESSEL_UAE_ORDER that v is raised to: v + m, m a whole number */
static double raised(double v) { return v >= BESSEL_UAE_ORDER ? v : v + ceil(BESSEL_UAE_ORDER - v); }

/* R_k = I_k(x) / I_{k-1}(x) for k from mu down to lo + 1 (lo + 1 <= mu, mu - lo whole): their logs
 * summed into *logsum; returns R_{lo+1} */
static double ratios_down(double mu, double lo, double x, double *logsum)
{
    double r = exp(uae(mu, x) - uae(mu - 1, x));
    *logsum = log(r);
    for (double k = mu - 1; k > lo + 0.5; k -= 1) {
        r = x / (2 * k + x * r);
        *logsum += log(r);
    }
    return r;
}

double bessel_log_i(double v, double x)
{
    if (!(x > 0) || !(v >= 0) || isinf(x) || isinf(v))
        return NAN;
    double mu = raised(v), logsum;
    if (mu == v)
        return uae(v, x);
    ratios_down(mu, v, x, &logsum);
    return uae(mu, x) - logsum;
}

double bessel_ratio(double v, double x)
{
    if (!(x > 0) || !(v >= 0) || isinf(x) || isinf(v))
        return NAN;
    double mu = raised(v + 1), logsum;
    if (mu == v + 1)
        return exp(uae(v + 1, x) - uae(v, x));
    return ratios_down(mu, v, x, &logsum);
}
