/* tau: equal-size bins and Kendall's tau-b. Definitions: tau.h. */
#include "tau.h"

#include <math.h>

void metrics_bins(int64_t n, int B, int64_t *start)
{
    int64_t q = n / B, r = n % B;
    start[0] = 0;
    for (int b = 0; b < B; b++)
        start[b + 1] = start[b] + q + (b < r);
}

static int sgn(double v) { return (v > 0) - (v < 0); }

double metrics_tau_b(const double *x, const double *y, int64_t n, metrics_tau_counts *counts)
{
    metrics_tau_counts c = {0};
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = i + 1; j < n; j++) {
            int sx = sgn(x[j] - x[i]), sy = sgn(y[j] - y[i]);
            c.pairs++;
            if (!sx)
                c.tied_x++;
            if (!sy)
                c.tied_y++;
            if (!sx && !sy)
                c.tied_both++;
            if (sx && sy) {
                if (sx == sy)
                    c.concordant++;
                else
                    c.discordant++;
            }
        }
    if (counts)
        *counts = c;
    double den = sqrt((double)(c.pairs - c.tied_x) * (double)(c.pairs - c.tied_y));
    return den > 0 ? (double)(c.concordant - c.discordant) / den : NAN;
}
