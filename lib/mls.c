/* mls: the mutual likelihood score (lib/mls.h) */
#include "mls.h"

#include <math.h>

double mls_score(const float *mu1, const float *v1, const float *mu2, const float *v2, int D)
{
    double s = 0;
    for (int l = 0; l < D; l++) {
        double d = (double)mu1[l] - mu2[l], v = (double)v1[l] + v2[l];
        s += d * d / v + log(v);
    }
    return -0.5 * s - 0.5 * D * log(2 * M_PI);
}

void mls_grad(const float *mu1, const float *v1, const float *mu2, const float *v2, int D, double g, float *dmu1,
              float *dv1, float *dmu2, float *dv2)
{
    for (int l = 0; l < D; l++) {
        double d = (double)mu1[l] - mu2[l], v = (double)v1[l] + v2[l];
        double gm = -g * d / v, gv = g * 0.5 * (d * d / (v * v) - 1 / v);
        if (dmu1)
            dmu1[l] += (float)gm;
        if (dmu2)
            dmu2[l] -= (float)gm;
        if (dv1)
            dv1[l] += (float)gv;
        if (dv2)
            dv2[l] += (float)gv;
    }
}
