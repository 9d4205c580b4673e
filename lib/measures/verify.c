/* verify: rates at a false-accept rate (lib/measures/verify.h) */
#include "verify.h"

#include <math.h>
#include <stdlib.h>

#include "util.h"

int verify_enough(int64_t nneg, double far) { return (double)nneg * far >= VERIFY_MIN_FALSE * (1 - 1e-9); }

static int descending(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x < y) - (x > y);
}

void verify_at_fars(const double *pos, int64_t npos, const double *neg, int64_t nneg, const double *far, int nf,
                    verify_point *v)
{
    double *s = emalloc((size_t)nneg * sizeof *s);
    for (int64_t i = 0; i < nneg; i++)
        s[i] = neg[i];
    qsort(s, (size_t)nneg, sizeof *s, descending); /* once for every FAR */
    for (int f = 0; f < nf; f++) {
        double k = nearbyint((double)nneg * far[f]); /* the default rounding mode: half to even */
        v[f].k = k < 0 ? 0 : k > nneg ? nneg : (int64_t)k;
        v[f].threshold = v[f].k ? s[v[f].k - 1] : nextafter(s[0], INFINITY);
        int64_t fa = 0, ta = 0;
        for (int64_t i = 0; i < nneg; i++)
            fa += s[i] >= v[f].threshold;
        for (int64_t i = 0; i < npos; i++)
            ta += pos[i] >= v[f].threshold;
        v[f].far_reached = (double)fa / (double)nneg;
        v[f].rate = npos ? (double)ta / (double)npos : NAN;
    }
    free(s);
}

void verify_at_far(const double *pos, int64_t npos, const double *neg, int64_t nneg, double far, verify_point *v)
{
    verify_at_fars(pos, npos, neg, nneg, &far, 1, v);
}
