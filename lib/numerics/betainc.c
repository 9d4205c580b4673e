/* betainc: log I_x(a, b) and its derivative (lib/numerics/betainc.h) */
#include "betainc.h"

#include <math.h>

#define CF_EPS 1e-15
#define CF_TINY 1e-300
#define CF_MAXIT 10000

/* one step of the modified Lentz method with partial numerator aa: updates c and d, returns
 * the factor that multiplies the fraction's value */
static double lentz_step(double aa, double *c, double *d)
{
    *d = 1 + aa * *d;
    if (fabs(*d) < CF_TINY)
        *d = CF_TINY;
    *c = 1 + aa / *c;
    if (fabs(*c) < CF_TINY)
        *c = CF_TINY;
    *d = 1 / *d;
    return *d * *c;
}

/* the continued fraction of I_x(a, b) (NR 6.4.5, betacf), modified Lentz; converges for
 * x < (a + 1) / (a + b + 2) in O(sqrt(max(a, b))) terms */
static double betacf(double a, double b, double x)
{
    double qab = a + b, qap = a + 1, qam = a - 1;
    double c = 1, d = 1 - qab * x / qap;
    if (fabs(d) < CF_TINY)
        d = CF_TINY;
    d = 1 / d;
    double h = d;
    for (int m = 1; m <= CF_MAXIT; m++) {
        int m2 = 2 * m;
        h *= lentz_step(m * (b - m) * x / ((qam + m2) * (a + m2)), &c, &d); /* even step */
        double del = lentz_step(-(a + m) * (qab + m) * x / ((a + m2) * (qap + m2)), &c, &d); /* odd */
        h *= del;
        if (fabs(del - 1) < CF_EPS)
            break;
    }
    return h;
}

/* log B(a, b) */
static double log_beta(double a, double b) { return lgamma(a) + lgamma(b) - lgamma(a + b); }

/* log I_x(a, b) by the continued fraction's side of the split: x < (a + 1) / (a + b + 2),
 * 0 < x < 1; *cf receives the continued fraction */
static double log_lower(double a, double b, double x, double lbeta, double *cf)
{
    *cf = betacf(a, b, x);
    return a * log(x) + b * log1p(-x) - lbeta - log(a) + log(*cf);
}

double betainc_log(double a, double b, double x, double *dlog_dx)
{
    double li, cf;
    if (!(a > 0 && b > 0 && x >= 0 && x <= 1)) {
        if (dlog_dx)
            *dlog_dx = NAN;
        return NAN;
    }
    double lbeta = log_beta(a, b);
    if (x == 0) {
        if (dlog_dx)
            *dlog_dx = INFINITY;
        return -INFINITY;
    }
    if (x == 1) {
        if (dlog_dx)  /* the density over 1: 0, or +inf when b < 1, or 1/B(a,1) = a when b = 1 */
            *dlog_dx = b > 1 ? 0 : b < 1 ? INFINITY : exp(-lbeta);
        return 0;
    }
    if (x < (a + 1) / (a + b + 2)) {
        li = log_lower(a, b, x, lbeta, &cf);
        /* the density over I = x^a (1-x)^b cf / (a B): the powers cancel, so no large logs
         * meet (at x = 1e-300 the exp form below would lose 1e-13 to them) */
        if (dlog_dx)
            *dlog_dx = a / (x * (1 - x) * cf);
        return li;
    }
    /* 1 - I_{1-x}(b, a); 1 - x is exact for x >= 1/2, within an ulp below */
    li = log1p(-exp(log_lower(b, a, 1 - x, lbeta, &cf)));
    if (dlog_dx)
        *dlog_dx = exp((a - 1) * log(x) + (b - 1) * log1p(-x) - lbeta - li);
    return li;
}
