/* lossgrad.h: the central-difference check of a class-weight loss's gradients (test_margin,
 * test_proxy): with respect to every embedding value and every class weight of one batch, each
 * against (L(v + h) - L(v - h)) / 2h, h = 1e-3; the largest relative error (|fd - g| /
 * (1e-3 + |fd|)) is returned and each is CHECKed below tol. */
#ifndef HEDGE_LOSSGRAD_H
#define HEDGE_LOSSGRAD_H
#include <math.h>
#include <string.h>

#include "check.h"
#include "loss.h"

static double lossgrad_check(const loss_kind *L, const loss_config *lc, const loss_input *in, float *w, int K,
                             double tol)
{
    int nx = in->n * in->D, nw = K * in->D;
    float *x = (float *)in->mu, gx[4096], gw[4096];
    if (nx > 4096 || nw > 4096)
        return INFINITY;
    memset(gw, 0, sizeof gw);
    L->forward_backward(lc, in, w, gw, gx, NULL, NULL, NULL);
    double worst = 0;
    for (int v = 0; v < 2; v++)
        for (int j = 0; j < (v ? nw : nx); j++) {
            float *p = v ? &w[j] : &x[j], keep = *p;
            double h = 1e-3;
            *p = (float)(keep + h);
            double hi = L->forward_backward(lc, in, w, NULL, NULL, NULL, NULL, NULL);
            *p = (float)(keep - h);
            double lo = L->forward_backward(lc, in, w, NULL, NULL, NULL, NULL, NULL);
            *p = keep;
            double fd = (hi - lo) / (2 * h), g = v ? gw[j] : gx[j], e = fabs(fd - g) / (1e-3 + fabs(fd));
            worst = fmax(worst, e);
            CHECK(e < tol);
        }
    return worst;
}

/* the same for a stochastic loss without randomness (losspred, scf, dul-rgs): the gradients to
 * the means (which & LOSSGRAD_MU; h = 1e-3) and to the variances (which & LOSSGRAD_VAR; h = 1e-3
 * times the variance) of in (its mu and var, changed in place and restored) */
enum { LOSSGRAD_MU = 1, LOSSGRAD_VAR = 2 };
static inline double lossgrad_check_stoch(const loss_kind *L, const loss_config *lc, const loss_input *in, const float *w,
                                          int which, double tol)
{
    int nx = in->n * in->D;
    float gm[4096], gv[4096];
    if (nx > 4096)
        return INFINITY;
    L->forward_backward(lc, in, w, NULL, gm, gv, NULL, NULL);
    double worst = 0;
    for (int v = 0; v < 2; v++) {
        if (!(which & (v ? LOSSGRAD_VAR : LOSSGRAD_MU)))
            continue;
        for (int j = 0; j < nx; j++) {
            float *p = v ? (float *)&in->var[j] : (float *)&in->mu[j], keep = *p;
            double h = v ? 1e-3 * keep : 1e-3, f[2];
            for (int sgn = 0; sgn < 2; sgn++) {
                *p = (float)(keep + (sgn ? -h : h));
                f[sgn] = L->forward_backward(lc, in, w, NULL, NULL, NULL, NULL, NULL);
            }
            *p = keep;
            double fd = (f[0] - f[1]) / (2 * h), g = v ? gv[j] : gm[j], e = fabs(fd - g) / (1e-3 + fabs(fd));
            worst = fmax(worst, e);
            CHECK(e < tol);
        }
    }
    return worst;
}
#endif
