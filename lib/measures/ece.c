/* ece: the expected calibration error. Definition and binning: ece.h. */
#include "ece.h"

#include <math.h>
#include <stdlib.h>

#include "util.h"

/* the bin of a probability p among B: b with b/B < p <= (b+1)/B, 0 in bin 0. p B in double may
 * round onto an integer k or off it (fl(1/3) x 3 = 1), so the candidate ceil(p B) - 1 is settled
 * exactly: fma(p, B, -k) is p B - k rounded once, and its sign is that of p - k / B */
static int ece_bin(double p, int B)
{
    double c = ceil(p * B) - 1;
    int b = c < 0 ? 0 : c > B - 1 ? B - 1 : (int)c;
    while (b > 0 && fma(p, B, -(double)b) <= 0) /* p <= b / B: lower */
        b--;
    while (b < B - 1 && fma(p, B, -(double)(b + 1)) > 0) /* p > (b + 1) / B: higher */
        b++;
    return b;
}

double metrics_ece(const double *p, const uint8_t *y, int64_t n, int B, metrics_ece_bin *bins, int64_t *bad)
{
    if (B < 1)
        die("metrics_ece: %d bins", B);
    if (bad)
        *bad = -1;
    for (int64_t i = 0; i < n; i++)
        if (!(p[i] >= 0 && p[i] <= 1)) { /* NaN too */
            if (bad)
                *bad = i;
            return NAN;
        }
    int64_t *cnt = ecalloc((size_t)B, sizeof *cnt);
    double *sp = ecalloc((size_t)B, sizeof *sp), *sy = ecalloc((size_t)B, sizeof *sy);
    for (int64_t i = 0; i < n; i++) {
        int b = ece_bin(p[i], B);
        cnt[b]++;
        sp[b] += p[i];
        sy[b] += y[i] != 0;
    }
    double ece = 0;
    for (int b = 0; b < B; b++) {
        ece += fabs(sy[b] - sp[b]);
        if (bins) {
            bins[b].n = cnt[b];
            bins[b].mean_p = cnt[b] ? sp[b] / (double)cnt[b] : NAN;
            bins[b].mean_y = cnt[b] ? sy[b] / (double)cnt[b] : NAN;
        }
    }
    free(cnt);
    free(sp);
    free(sy);
    return n ? ece / (double)n : NAN;
}
