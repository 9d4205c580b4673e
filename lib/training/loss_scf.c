/* scf: Sphere Confidence Face (Li, Wang, Tao, Chen & Kang, "Spherical Confidence Learning for Face
 * Recognition", CVPR 2021): each item's embedding on the unit sphere is a von Mises-Fisher
 * distribution q(z | x) = vMF(mu_i / |mu_i|, kappa_i) whose concentration kappa_i is its confidence,
 * learned by the KL to a spike at its class centre w_y (the class weight of an ArcFace head):
 *   L_i = -log C_D(kappa_i) - kappa_i c_i,   c_i = cos(mu_i, w_{y_i}),
 *   -log C_D(kappa) = -(D/2 - 1) log kappa + (D/2) log(2 pi) + log I_{D/2-1}(kappa)
 * (the paper's Eq. 8, up to the spike's constant; lib/numerics/bessel.h). Its derivative is
 * dL_i/dkappa = A_D(kappa_i) - c_i, A_D = I_{D/2} / I_{D/2-1}, so the optimum makes the vMF's mean
 * resultant length equal the item's cosine to its centre: the nearer an item lies to its class
 * centre, the more confident. As in the paper, the KL trains the confidence alone (c_i detached:
 * the paper learns kappa on a trained ArcFace model); the means learn ArcFace itself
 * (loss_margin.c: margin 0.5, scale 64) with the class weights, jointly, so one run gives both:
 *   L = ArcFace + lambda mean_i L_i                               (lambda = --scf-lambda, 1)
 * kappa is the head's: on the iso head kappa_i = 1 / var_i = exp(-s_i) (s the head's log-variance;
 * another stochastic head: s_i the mean of its D log-variances), so the battery reads var = 1 /
 * kappa, the uncertainty. dL/ds_i = -kappa_i (A_D(kappa_i) - c_i) lambda / n, handed to the head as
 * dL/dvar_d = dL/ds / (D var_d). D >= 2 (the sphere of R^1 is two points).
 * The floor: the KL takes kappa at least SCF_KAPPA_FLOOR (1), and below it the gradient is the
 * floor's (straight through, as the iso head's clamp). The paper learns kappa on a trained ArcFace
 * model; trained jointly from the start, the cosines are near 0 at first, the KL drives kappa
 * towards 0, and the gradient in s, proportional to kappa, vanishes there: without the floor 7 of 9
 * runs on real features ended with every kappa at the head's bound (var e^20). With it an item
 * whose cosine stays below A_D(1) (about 1 / D: no better than chance) keeps rising in variance,
 * and any other returns above the floor as ArcFace learns.
 * Stats: nll = the ArcFace term, kl = mean_i L_i, mean_var = the mean variance, acc ArcFace's.
 */
#include <math.h>
#include <stdlib.h>

#include "bessel.h"
#include "loss.h"
#include "loss_util.h"
#include "util.h"

enum { SCF_SCALE, SCF_LAMBDA, SCF_NSET };
#define SCF_KAPPA_FLOOR 1.0
static const setting scf_settings[SCF_NSET] = {
    [SCF_SCALE] = LOSS_SETTING_SCALE,
    [SCF_LAMBDA] = {"scf-lambda", "X", "scf_lambda", SETTING_REAL, 0, 100, 1, NULL,
                    "lambda, the weight of the KL of each item's vMF to its class centre"},
};

static double scf_fb(const loss_config *cfg, const loss_input *in, const float *params, float *dparams, float *dmu,
                     float *dvar, rng *r, loss_stats *st)
{
    (void)r;
    int n = in->n, D = in->D, K = in->classes;
    if (in->C != 1 || !in->var || D < 2)
        die("scf loss: needs one mean of D >= 2 and a variance per item (--head iso, C = 1), got C = %d, D = %d%s",
            in->C, D, in->var ? "" : ", no variance");
    loss_input mi = *in;
    mi.var = NULL; /* (the class rows and weights checked by ArcFace; the variance is ours) */
    loss_cosines C; /* c_i: the cosine of each item to its class weight (no margin), ArcFace's */
    double arc = loss_arcface_items("scf", cfg, &mi, params, dparams, dmu, NULL, &C, st);
    double *s = emalloc((size_t)(n ? n : 1) * sizeof *s), mean_var;
    loss_mean_logvar("scf", in, s, &mean_var);
    double lambda = cfg->own[SCF_LAMBDA], v = D / 2.0 - 1, kl = 0;
    for (int i = 0; i < n; i++) {
        double kappa = fmax(exp(-s[i]), SCF_KAPPA_FLOOR), c = C.c[(size_t)i * K + in->row[i]];
        kl += -v * log(kappa) + (v + 1) * log(2 * M_PI) + bessel_log_i(v, kappa) - kappa * c;
        if (dvar)
            loss_mean_logvar_back(in, i, -kappa * (bessel_ratio(v, kappa) - c) * lambda / n, dvar);
    }
    kl /= n;
    loss_cosines_free(&C);
    free(s);
    if (st)
        st->kl = kl, st->mean_var = mean_var;
    return arc + lambda * kl;
}

LOSS_CLASS_WEIGHTS_KIND(loss_scf, "scf",
                        "SCF (Li et al. 2021): ArcFace on the means; each item's vMF confidence kappa = 1 / var (iso "
                        "head) learns the KL to a spike at its class centre (--scf-lambda 1)",
                        scf_fb, loss_arcface_settle, "scf.w", 1, "iso", scf_settings, SCF_NSET);
