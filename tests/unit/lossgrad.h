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
#endif
