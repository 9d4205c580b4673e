/* losspred: loss prediction (Yoo & Kweon, "Learning Loss for Active Learning", CVPR 2019, Eq. 2;
 * the URL benchmark's "loss prediction" uncertainty) on an embedding: the model predicts, for each
 * item, how large its own loss is, and that prediction is its uncertainty.
 *
 * On the iso head (D means mu_i and one s_i = log sigma_i^2 per item, var = exp(s_i) in every
 * dimension; on another stochastic head s_i is the mean of the D log-variances): the means learn ArcFace over a weight vector per class (loss_margin.c: margin 0.5,
 * scale 64, --margin, --scale), whose per-item loss l_i is the target, and s_i learns to rank the
 * items by l_i with the paper's pairwise loss: the batch is split in halves, item i paired with
 * item i + h (h = floor(n / 2); an odd last item has no pair), and
 *   L_pred = 1/h sum_i max(0, -sign(l_i - l_{i+h}) (s_i - s_{i+h}) + xi)     (xi = --lp-margin, 1)
 * with l detached (the paper's target loss is no function of the prediction), so that only s
 * learns from it (and, through the head, the body they share). The loss is
 *   L = ArcFace + lambda L_pred                                          (lambda = --lp-lambda, 1)
 * Gradients: ArcFace's into the means and the class weights; dL/ds_i = -lambda sign(l_i - l_j) / h
 * and dL/ds_j = +lambda sign(l_i - l_j) / h for an active pair (the hinge above 0), 0 otherwise;
 * handed to the head as dL/dvar_d = dL/ds / (D var_d) in each of the D dimensions (ds_i/dvar_d:
 * the iso head sums them times exp(s), giving dL/ds back). The battery reads var = exp(s), a monotone function of the predicted loss.
 * Stats: nll = the ArcFace term, kl = L_pred, mean_var = the mean variance, acc as ArcFace's.
 */
#include <math.h>
#include <stdlib.h>

#include "loss.h"
#include "loss_util.h"
#include "util.h"

enum { LP_SCALE, LP_LAMBDA, LP_MARGIN, LP_NSET };
static const setting lp_settings[LP_NSET] = {
    [LP_SCALE] = LOSS_SETTING_SCALE,
    [LP_LAMBDA] = {"lp-lambda", "X", "lp_lambda", SETTING_REAL, 0, 100, 1, NULL,
                   "lambda, the weight of the loss-prediction loss"},
    [LP_MARGIN] = {"lp-margin", "X", "lp_margin", SETTING_REAL, 0, 100, 1, NULL,
                   "xi, the margin of the pairwise ranking of the predicted losses"},
};

static double losspred_fb(const loss_config *cfg, const loss_input *in, const float *params, float *dparams,
                          float *dmu, float *dvar, rng *r, loss_stats *st)
{
    (void)r;
    int n = in->n, D = in->D, h = n / 2;
    if (in->C != 1 || !in->var)
        die("losspred loss: needs a variance beside each item's mean, one component (--head iso, C = 1)");
    double *l = emalloc((size_t)(n ? n : 1) * sizeof *l), *s = emalloc((size_t)(n ? n : 1) * sizeof *s), mean_var;
    loss_mean_logvar("losspred", in, s, &mean_var);
    loss_input mi = *in;
    mi.var = NULL;
    double arc = loss_arcface_items("losspred", cfg, &mi, params, dparams, dmu, l, NULL, st);
    double lambda = cfg->own[LP_LAMBDA], xi = cfg->own[LP_MARGIN], pred = 0;
    if (dvar)
        for (size_t k = 0; k < (size_t)n * D; k++)
            dvar[k] = 0;
    for (int i = 0; i < h; i++) {
        int j = i + h;
        double sg = (l[i] > l[j]) - (l[i] < l[j]), t = -sg * (s[i] - s[j]) + xi;
        if (t <= 0)
            continue;
        pred += t;
        if (dvar && sg != 0) {
            loss_mean_logvar_back(in, i, -lambda * sg / h, dvar);
            loss_mean_logvar_back(in, j, lambda * sg / h, dvar);
        }
    }
    pred = h ? pred / h : 0;
    if (st)
        st->kl = pred, st->mean_var = mean_var;
    free(l), free(s);
    return arc + lambda * pred;
}

LOSS_CLASS_WEIGHTS_KIND(loss_losspred, "losspred",
                        "loss prediction (Yoo & Kweon 2019): ArcFace on the means, the iso head's variance ranks each "
                        "item's own loss (--lp-lambda 1, --lp-margin 1)",
                        losspred_fb, loss_arcface_settle, "losspred.w", 1, "iso", lp_settings, LP_NSET);
