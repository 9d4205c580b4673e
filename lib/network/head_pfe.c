/* head_pfe: the heads of PFE (Shi & Jain, "Probabilistic Face Embeddings", ICCV 2019;
 * ../shared/papers/PFE-NOTES.md). The mean is the input feature vector x itself, L2-normalised
 * and never trained (the frozen backbone's embedding: D = its length, C = 1; a zero vector stays
 * zero); the body (an mlp on x, the paper's uncertainty module) feeds a linear layer whose
 * outputs are log-variances s, var = exp(s), clamped to [-MODEL_LOGVAR_MAX, MODEL_LOGVAR_MAX]
 * with the bound's gradient beyond it, as iso's (lib/network/head.c):
 *   pfe      D outputs, one variance per dimension
 *   pfe-iso  1 output, the same variance in every dimension
 *   pfe-bn   the authors' module (seasonSH/Probabilistic-Face-Embeddings, models/
 *            uncertainty_module.py): D outputs batch-normalised without a scale or shift of their
 *            own, then one scale and shift shared by all (model.c, head_kind.bn, from 1e-4 and
 *            -7: the variances start near e^-7), s = that; var = 1e-6 + exp(s) (their log(1e-6 +
 *            exp(s)) as log sigma^2), s clamped as above. With --body mlp-bn:D it is their fc, BN,
 *            ReLU, fc, BN.
 * dL/dmu is dropped: the mean does not learn.
 */
#include <math.h>

#include "head.h"

static void unit_mean(int D, const float *x, float *mu)
{
    double s = 0;
    for (int d = 0; d < D; d++)
        s += (double)x[d] * x[d];
    float k = s > 0 ? (float)(1.0 / sqrt(s)) : 0.0f;
    for (int d = 0; d < D; d++)
        mu[d] = x[d] * k;
}

static int pfe_outputs(int C, int D) { return D; }
static void pfe_forward(int C, int D, const float *ho, const float *x, float *mu, float *var)
{
    unit_mean(D, x, mu);
    if (var)
        for (int d = 0; d < D; d++)
            var[d] = expf(head_clamp_logvar(ho[d]));
}
static void pfe_backward(int C, int D, const float *ho, const float *dmu, const float *dvar, float *dho)
{
    for (int d = 0; d < D; d++)
        dho[d] = dvar ? dvar[d] * expf(head_clamp_logvar(ho[d])) : 0.0f;
}
const head_kind head_pfe = {"pfe", "PFE: the input as the mean (normalised, fixed), D learned variances", 1, 1,
                            pfe_outputs, pfe_forward, pfe_backward, 0};

static int pfe_iso_outputs(int C, int D) { return 1; }
static void pfe_iso_forward(int C, int D, const float *ho, const float *x, float *mu, float *var)
{
    unit_mean(D, x, mu);
    if (var) {
        float v = expf(head_clamp_logvar(ho[0]));
        for (int d = 0; d < D; d++)
            var[d] = v;
    }
}
static void pfe_iso_backward(int C, int D, const float *ho, const float *dmu, const float *dvar, float *dho)
{
    float g = 0;
    for (int d = 0; d < D; d++)
        g += dvar ? dvar[d] : 0.0f;
    dho[0] = g * expf(head_clamp_logvar(ho[0]));
}
const head_kind head_pfe_iso = {"pfe-iso", "PFE with one learned variance per item", 1, 1, pfe_iso_outputs,
                                pfe_iso_forward, pfe_iso_backward, 0};

static void pfe_bn_forward(int C, int D, const float *ho, const float *x, float *mu, float *var)
{
    unit_mean(D, x, mu);
    if (var)
        for (int d = 0; d < D; d++)
            var[d] = 1e-6f + expf(head_clamp_logvar(ho[d]));
}
const head_kind head_pfe_bn = {"pfe-bn",
                               "PFE as its authors built it: D variances 1e-6 + exp(s), s batch-normalised, one "
                               "scale and shift",
                               1, 1, pfe_outputs, pfe_bn_forward, pfe_backward, 1};
