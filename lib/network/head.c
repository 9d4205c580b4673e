/* head: the point, mog and iso heads and the registry (lib/network/head.h) */
#include "head.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

#include "model.h"

const head_kind *const head_kinds[] = {
    [HEAD_POINT] = &head_point, [HEAD_MOG] = &head_mog, [HEAD_ISO] = &head_iso,
    [HEAD_PFE] = &head_pfe,     [HEAD_PFE_ISO] = &head_pfe_iso, [HEAD_PFE_BN] = &head_pfe_bn, NULL,
};

const head_kind *head_of(int head)
{
    return head >= 0 && head < (int)(sizeof head_kinds / sizeof head_kinds[0]) - 1 ? head_kinds[head] : NULL;
}

float head_clamp_logvar(float s)
{
    return s < -MODEL_LOGVAR_MAX ? -MODEL_LOGVAR_MAX : s > MODEL_LOGVAR_MAX ? MODEL_LOGVAR_MAX : s;
}
static float softplus(float x) { return x > 0 ? x + log1pf(expf(-x)) : log1pf(expf(x)); }
static float sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }

/* ---------------------------------------------------------------- point: mu = ho */

static int point_outputs(int C, int D) { return C * D; }
static void point_forward(int C, int D, const float *ho, const float *x, float *mu, float *var)
{
    memcpy(mu, ho, (size_t)C * D * sizeof(float));
}
static void point_backward(int C, int D, const float *ho, const float *dmu, const float *dvar, float *dho)
{
    memcpy(dho, dmu, (size_t)C * D * sizeof(float));
}
const head_kind head_point = {"point", "point embeddings: D means", 0, 0, point_outputs, point_forward,
                              point_backward, 0};

/* ---------------------------------------------------------------- mog: per component D means,
 * then D raw variances, var = softplus(raw) + MODEL_VAR_FLOOR */

static int mog_outputs(int C, int D) { return 2 * C * D; }
static void mog_forward(int C, int D, const float *ho, const float *x, float *mu, float *var)
{
    for (int c = 0; c < C; c++)
        for (int d = 0; d < D; d++) {
            mu[c * D + d] = ho[c * 2 * D + d];
            if (var)
                var[c * D + d] = softplus(ho[c * 2 * D + D + d]) + MODEL_VAR_FLOOR;
        }
}
static void mog_backward(int C, int D, const float *ho, const float *dmu, const float *dvar, float *dho)
{
    for (int c = 0; c < C; c++)
        for (int d = 0; d < D; d++) {
            dho[c * 2 * D + d] = dmu[c * D + d];
            float dv = dvar ? dvar[c * D + d] : 0.0f;
            dho[c * 2 * D + D + d] = dv * sigmoid(ho[c * 2 * D + D + d]);
        }
}
const head_kind head_mog = {"mog", "a mixture of C Gaussians, D variances each", 1, 0, mog_outputs, mog_forward,
                            mog_backward, 0};

/* ---------------------------------------------------------------- iso: per component D means
 * and one s = log sigma^2, var = exp(s) in every dimension */

static int iso_outputs(int C, int D) { return C * (D + 1); }
static void iso_forward(int C, int D, const float *ho, const float *x, float *mu, float *var)
{
    for (int c = 0; c < C; c++) {
        const float *hc = ho + c * (D + 1);
        float v = expf(head_clamp_logvar(hc[D]));
        for (int d = 0; d < D; d++) {
            mu[c * D + d] = hc[d];
            if (var)
                var[c * D + d] = v;
        }
    }
}
static void iso_backward(int C, int D, const float *ho, const float *dmu, const float *dvar, float *dho)
{
    for (int c = 0; c < C; c++) {
        // var = exp(s) in every dimension: ds = exp(s) sum_d dvar[d]; where s is clamped, the
        // gradient at the bound (straight through), so that a step that threw s past it can
        // come back (with a zero gradient there, an image, or the whole head, stays stuck at
        // the bound: seen on 3-digit MNIST at lr 3e-3)
        float *dc = dho + c * (D + 1), s = ho[c * (D + 1) + D], g = 0;
        for (int d = 0; d < D; d++) {
            dc[d] = dmu[c * D + d];
            g += dvar ? dvar[c * D + d] : 0.0f;
        }
        dc[D] = g * expf(head_clamp_logvar(s));
    }
}
const head_kind head_iso = {"iso", "C Gaussians, one variance each (the heteroscedastic triplet's)", 1, 0,
                            iso_outputs, iso_forward, iso_backward, 0};
