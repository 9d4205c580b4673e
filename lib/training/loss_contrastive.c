/* The two point-embedding pair losses of the HIB paper (section 2.1):
 *
 * softcon (Eq. 2, 3): p = sigmoid(-a d + b), d = ||z1 - z2|| (guarded, loss_util.h),
 *   a = softplus(a_raw); per pair NLL = -log p (match) or -log(1 - p) (non-match), both as
 *   softplus(-/+ s) so they never overflow; loss = mean over pairs. Learns a_raw and b.
 * contrastive (Eq. 1, exactly as printed: no factor 1/2): per pair ||z1 - z2||^2 (match) or
 *   max(M - d, 0)^2 (non-match), mean over pairs; M = cfg->margin. No parameters.
 *
 * Both use component 0 of the embeddings and need C = 1 (a point head). If var is given it is
 * ignored and dvar is zeroed. With npairs = 0 the loss is 0 and all gradients are zero.
 * dmu, dvar and dparams may be NULL (loss value only).
 */
#include <math.h>
#include <string.h>

#include "loss.h"
#include "loss_util.h"
#include "util.h"

/* zero the gradients and check the shapes; returns 1/npairs (0 with no pairs) */
static double pair_setup(const char *name, const loss_input *in, float *dmu, float *dvar)
{
    if (in->C != 1)
        die("%s loss: needs point embeddings (C = 1), got C = %d", name, in->C);
    if (in->D < 1)
        die("%s loss: embedding dimension %d", name, in->D);
    if (dmu)
        memset(dmu, 0, sizeof(float) * (size_t)in->n * in->C * in->D);
    if (dvar && in->var)
        memset(dvar, 0, sizeof(float) * (size_t)in->n * in->C * in->D);
    loss_check_pairs(name, in);
    return in->npairs > 0 ? 1.0 / in->npairs : 0;
}

static void zero_stats(loss_stats *st)
{
    if (st)
        memset(st, 0, sizeof *st);
}

static double softcon_forward_backward(const loss_config *cfg, const loss_input *in,
                                       const float *params, float *dparams, float *dmu, float *dvar,
                                       rng *r, loss_stats *st)
{
    double inv = pair_setup("softcon", in, dmu, dvar);
    int D = in->D;
    double a, b;
    loss_match_ab(params, &a, &b);
    double z1[D], z2[D];  /* D is small (2 to 4 in the paper) */
    double sum = 0, da = 0, db = 0;
    for (int k = 0; k < in->npairs; k++) {
        int i = in->pair_a[k], j = in->pair_b[k];
        for (int c = 0; c < D; c++) {
            z1[c] = in->mu[(size_t)i * D + c];
            z2[c] = in->mu[(size_t)j * D + c];
        }
        double d = loss_dist(z1, z2, D), s = -a * d + b, g;
        sum += loss_match_nll(1, &s, in->match[k], &g);
        g *= inv;  /* dL/ds for this pair */
        db += g;
        da -= g * d;
        if (dmu) {
            double gd = -a * g / d;  /* dL/dd * dd/dz1 = gd (z1 - z2) */
            for (int c = 0; c < D; c++) {
                dmu[(size_t)i * D + c] += (float)(gd * (z1[c] - z2[c]));
                dmu[(size_t)j * D + c] -= (float)(gd * (z1[c] - z2[c]));
            }
        }
    }
    if (dparams) {
        dparams[0] += (float)(da * loss_sigmoid(params[0]));  /* da/da_raw = sigmoid(a_raw) */
        dparams[1] += (float)db;
    }
    double loss = sum * inv;
    zero_stats(st);
    if (st) {
        st->nll = loss;
        st->a = a;
        st->b = b;
    }
    return loss;
}

static double contrastive_forward_backward(const loss_config *cfg, const loss_input *in,
                                           const float *params, float *dparams, float *dmu,
                                           float *dvar, rng *r, loss_stats *st)
{
    double inv = pair_setup("contrastive", in, dmu, dvar);
    int D = in->D;
    double M = cfg->margin, sum = 0;
    double diff[D];
    for (int k = 0; k < in->npairs; k++) {
        int i = in->pair_a[k], j = in->pair_b[k];
        double d2 = 0;
        for (int c = 0; c < D; c++) {
            diff[c] = (double)in->mu[(size_t)i * D + c] - in->mu[(size_t)j * D + c];
            d2 += diff[c] * diff[c];
        }
        double g;  /* dL/dz1 = g * (z1 - z2) */
        if (in->match[k]) {
            sum += d2;  /* the squared distance itself: smooth, no guard needed */
            g = 2;
        } else {
            double d = sqrt(d2 + LOSS_DIST_EPS), h = M - d;
            if (h <= 0)
                continue;
            sum += h * h;
            g = -2 * h / d;
        }
        if (dmu)
            for (int c = 0; c < D; c++) {
                dmu[(size_t)i * D + c] += (float)(inv * g * diff[c]);
                dmu[(size_t)j * D + c] -= (float)(inv * g * diff[c]);
            }
    }
    double loss = sum * inv;
    zero_stats(st);
    if (st)
        st->nll = loss;
    return loss;
}

static void no_params(const loss_config *cfg, float *params) {}

const loss_kind loss_softcon = {
    .name = "softcon",
    .help = "soft contrastive (HIB Eq. 3): point embeddings, p = sigmoid(-a d + b), a and b learned",
    .needs_var = 0,
    .batches = LOSS_PAIRS,
    .nparams = 2,
    .param_names = loss_match_param_names,
    .init_params = loss_match_init_params,
    .forward_backward = softcon_forward_backward,
};

const loss_kind loss_contrastive = {
    .name = "contrastive",
    .help = "hard-margin contrastive (HIB Eq. 1): d^2 for matches, max(M - d, 0)^2 otherwise",
    .needs_var = 0,
    .batches = LOSS_PAIRS,
    .nparams = 0,
    .param_names = NULL,
    .init_params = no_params,
    .forward_backward = contrastive_forward_backward,
};
