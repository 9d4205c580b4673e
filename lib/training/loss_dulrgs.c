/* dul-rgs: DUL_rgs (Chang, Lan, Yao, Chen & Wei, "Data Uncertainty Learning in Face Recognition",
 * CVPR 2020, Eq. 10), the regression variant its authors never released: each item's Gaussian
 * N(mu_i, diag sigma_i^2) regresses its class centre w_y (unit length),
 *   L_i = 1/D sum_d [ (w_yd - mu_id)^2 / (2 sigma_id^2) + log(sigma_id^2) / 2 + log(2 pi) / 2 ],
 * so that sigma^2 grows where an item cannot come near its centre. The paper regresses the class
 * centres of a trained classifier; here the centres are the class weights of an ArcFace head on the
 * same means (loss_margin.c: margin 0.5, scale 64), trained jointly, and the regression takes them
 * as fixed targets (detached: their gradient is ArcFace's alone):
 *   L = ArcFace + lambda mean_i L_i                               (lambda = --rgs-lambda, 1)
 * on a stochastic head with a variance per dimension (--head mog -C 1). Gradients: dL_i/dmu_id =
 * (mu_id - w_yd) / (D sigma_id^2) and dL_i/dsigma_id^2 = (1 / sigma_id^2 - (w_yd - mu_id)^2 /
 * sigma_id^4) / (2 D), times lambda / n, beside ArcFace's to the means. The battery reads the
 * learned variance. Stats: nll = the ArcFace term, kl = mean_i L_i, mean_var, acc ArcFace's.
 */
#include <math.h>
#include <stdlib.h>

#include "loss.h"
#include "loss_util.h"
#include "util.h"

enum { RGS_SCALE, RGS_LAMBDA, RGS_NSET };
static const setting rgs_settings[RGS_NSET] = {
    [RGS_SCALE] = LOSS_SETTING_SCALE,
    [RGS_LAMBDA] = {"rgs-lambda", "X", "rgs_lambda", SETTING_REAL, 0, 100, 1, NULL,
                    "lambda, the weight of the regression of each item's class centre"},
};

static double rgs_fb(const loss_config *cfg, const loss_input *in, const float *params, float *dparams, float *dmu,
                     float *dvar, rng *r, loss_stats *st)
{
    (void)r;
    int n = in->n, D = in->D;
    if (in->C != 1 || !in->var)
        die("dul-rgs loss: needs one Gaussian per item, a mean and a variance per dimension (--head mog -C 1)");
    loss_input mi = *in;
    mi.var = NULL; /* (the class rows and weights checked by ArcFace) */
    loss_cosines C; /* C.w: the class weights made unit length, the centres (ArcFace's) */
    double arc = loss_arcface_items("dul-rgs", cfg, &mi, params, dparams, dmu, NULL, &C, st);
    double lambda = cfg->own[RGS_LAMBDA], rgs = 0, sum_var = 0;
    for (int i = 0; i < n; i++) {
        const double *w = C.w + (size_t)in->row[i] * D;
        for (int d = 0; d < D; d++) {
            size_t k = (size_t)i * D + d;
            double v = in->var[k], e = w[d] - in->mu[k];
            if (!(v > 0))
                die("dul-rgs loss: item %d has variance %g; it must be positive", i, v);
            rgs += (e * e / (2 * v) + 0.5 * log(v) + 0.5 * log(2 * M_PI)) / D;
            sum_var += v;
            if (dmu)
                dmu[k] += (float)(lambda / n * -e / (D * v));
            if (dvar)
                dvar[k] = (float)(lambda / n * (1 / v - e * e / (v * v)) / (2 * D));
        }
    }
    rgs /= n;
    loss_cosines_free(&C);
    if (st)
        st->kl = rgs, st->mean_var = sum_var / ((double)n * D);
    return arc + lambda * rgs;
}

LOSS_CLASS_WEIGHTS_KIND(loss_dul_rgs, "dul-rgs",
                        "DUL_rgs (Chang et al. 2020): ArcFace on the means, each item's Gaussian regressing its class "
                        "centre (--rgs-lambda 1; mog -C 1)",
                        rgs_fb, loss_arcface_settle, "dul-rgs.w", 1, NULL, rgs_settings, RGS_NSET);
