/* margin: the additive margin losses over a weight vector per class, CosFace (Wang et al., "CosFace:
 * Large Margin Cosine Loss for Deep Face Recognition", CVPR 2018, Eq. 4) and ArcFace (Deng et al.,
 * "ArcFace: Additive Angular Margin Loss for Deep Face Recognition", CVPR 2019, Eq. 3), on any
 * batch whose items carry their class (P x K, pairs, episodes) and any body (images or a frozen
 * backbone's features).
 *
 * Item i has the point embedding mu_i (n, 1, D) and the class row y_i (in->row: its place in the
 * training stream's class list); the class weights W (classes, D) are the loss's parameter matrix
 * (loss_kind.class_weights). Both are L2-normalised with the guard of loss_util.h,
 * x_i = mu_i / |mu_i|_eps, w_j = W_j / |W_j|_eps, c_ij = x_i . w_j = cos theta_ij, and the loss is
 * the mean over the items of the softmax cross-entropy of the logits
 *   z_ij = s c_ij (j != y_i),   z_iy = s psi(c_iy)
 *   cosface: psi(c) = c - m                                 (m = --margin, 0.35 by default)
 *   arcface: psi(c) = cos(theta + m) = c cos m - sqrt(1 - c^2) sin m when c > cos(pi - m) (theta
 *            + m < pi), else c - m sin(pi - m), the authors' continuation beyond pi (insightface:
 *            "th" and "mm"); m = 0.5 by default
 * with the scale s (--scale, 64: both papers'). Gradients: dL/dz_ij = (softmax_ij - [j = y_i]) / n,
 * dL/dc = s dL/dz (times psi'(c) for the target: 1 for cosface, cos m + c sin m / sqrt(1 - c^2)
 * for arcface, its sine kept above 1e-6), dL/dx_i = sum_j dL/dc_ij w_j and dL/dw_j = sum_i dL/dc_ij
 * x_i, then through the normalisations; the class weights' gradient ADDS into dparams.
 *
 * dul (Chang, Lan, Yao, Chen & Wei, "Data Uncertainty Learning in Face Recognition", CVPR 2020,
 * DUL_cls, Eqs. 4 to 7): a stochastic head (mog -C 1: mu and a variance per dimension) gives each
 * item z = mu + sigma eps, eps ~ N(0, I) one draw a step (the step's rng), ArcFace on z, plus
 * lambda times the mean KL(N(mu, diag sigma^2) || N(0, I)) = 1/2 sum (sigma^2 + mu^2 - 1 - log
 * sigma^2) (--dul-lambda, 0.01: the paper's); the gradient reaches mu through z and the KL, and
 * sigma^2 through z (dz/dsigma^2 = eps / (2 sigma)) and the KL (1/2 - 1 / (2 sigma^2)). The
 * learned variance is the uncertainty the battery reads (the variance source).
 *
 * Stats: nll = the loss (dul: the ArcFace term; kl its KL, mean_var the mean variance); acc = the
 * fraction of items whose largest cosine (no margin; lowest row on ties) is their class's; a, b, se2 NaN; kl = mean_var = 0. Bad input dies: C != 1, a variance, no
 * class rows (train gives them from the stream's class list), no weights. Cost O(n classes D).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "loss.h"
#include "loss_util.h"
#include "util.h"

enum { MARGIN_SCALE, MARGIN_NSET };
static const setting margin_settings[MARGIN_NSET] = {[MARGIN_SCALE] = LOSS_SETTING_SCALE};
enum { DUL_LAMBDA = MARGIN_NSET, DUL_NSET };
static const setting dul_settings[DUL_NSET] = {
    [MARGIN_SCALE] = LOSS_SETTING_SCALE,
    [DUL_LAMBDA] = {"dul-lambda", "X", "dul_lambda", SETTING_REAL, 0, 100, 0.01, NULL,
                    "lambda, the weight of the KL to N(0, I)"},
};

enum { FORM_COS, FORM_ARC };

/* (name: the loss the messages name; items, keep: each item's loss, and the cosines, for the
 * losses built on it: loss_arcface_items) */
static double margin_common(int form, const char *name, const loss_config *cfg, const loss_input *in,
                            const float *params, float *dparams, float *dmu, double *items, loss_cosines *keep,
                            loss_stats *st)
{
    int n = in->n, D = in->D, K = in->classes;
    loss_check_class_input(name, in, params);
    double s = cfg->own[MARGIN_SCALE], m = cfg->margin, cm = cos(m), sm = sin(m);
    double th = cos(M_PI - m), mm = sin(M_PI - m) * m;
    loss_cosines C;
    loss_cosines_make(&C, in->mu, params, n, K, D);
    double *z = emalloc((size_t)K * sizeof *z), *gc = emalloc((size_t)n * K * sizeof *gc);
    double loss = 0;
    int right = 0;
    for (int i = 0; i < n; i++) {
        int y = in->row[i];
        const double *ci = C.c + (size_t)i * K;
        int best = 0;
        double zmax = -INFINITY, dpsi = 1;
        for (int j = 0; j < K; j++) {
            double c = ci[j];
            best = c > ci[best] ? j : best;
            z[j] = s * c;
            if (j == y) {
                double psi = c - m;
                if (form == FORM_ARC) {
                    double sine = sqrt(fmax(1 - c * c, 0));
                    if (c > th) {
                        psi = c * cm - sine * sm;
                        dpsi = cm + c * sm / fmax(sine, 1e-6);
                    } else
                        psi = c - mm;
                }
                z[j] = s * psi;
            }
            zmax = fmax(zmax, z[j]);
        }
        right += best == y;
        double sum = 0;
        for (int j = 0; j < K; j++)
            sum += exp(z[j] - zmax);
        double lse = zmax + log(sum);
        loss += lse - z[y];
        if (items)
            items[i] = lse - z[y];
        for (int j = 0; j < K; j++) /* dL/dc_ij */
            gc[(size_t)i * K + j] = s * (exp(z[j] - lse) - (j == y)) / n * (j == y ? dpsi : 1);
    }
    loss /= n;
    loss_cosines_back(&C, gc, dmu, dparams);
    if (st)
        *st = (loss_stats){.nll = loss, .a = NAN, .b = NAN, .acc = (double)right / n, .se2 = NAN};
    if (keep)
        *keep = C;
    else
        loss_cosines_free(&C);
    free(z), free(gc);
    return loss;
}

static double cosface_fb(const loss_config *cfg, const loss_input *in, const float *params, float *dparams,
                         float *dmu, float *dvar, rng *r, loss_stats *st)
{
    (void)dvar, (void)r;
    return margin_common(FORM_COS, "cosface", cfg, in, params, dparams, dmu, NULL, NULL, st);
}
static double arcface_fb(const loss_config *cfg, const loss_input *in, const float *params, float *dparams,
                         float *dmu, float *dvar, rng *r, loss_stats *st)
{
    (void)dvar, (void)r;
    return margin_common(FORM_ARC, "arcface", cfg, in, params, dparams, dmu, NULL, NULL, st);
}

static double dul_fb(const loss_config *cfg, const loss_input *in, const float *params, float *dparams, float *dmu,
                     float *dvar, rng *r, loss_stats *st)
{
    int n = in->n, D = in->D;
    size_t m = (size_t)n * D;
    if (in->C != 1 || !in->var)
        die("dul-cls loss: needs one Gaussian per item, a mean and a variance per dimension (--head mog -C 1)");
    double *eps = emalloc(m * sizeof *eps);
    float *z = emalloc(m * sizeof *z), *dz = dmu ? emalloc(m * sizeof *dz) : NULL;
    rng_normals(r, eps, m);
    double kl = 0, sum_var = 0, lambda = cfg->own[DUL_LAMBDA];
    for (size_t k = 0; k < m; k++) {
        double v = in->var[k], mu = in->mu[k];
        if (!(v > 0))
            die("dul-cls loss: item %zu has variance %g; it must be positive", k / D, v);
        z[k] = (float)(mu + sqrt(v) * eps[k]);
        kl += 0.5 * (v + mu * mu - 1 - log(v));
        sum_var += v;
    }
    loss_input zi = *in;
    zi.mu = z, zi.var = NULL;
    double loss = margin_common(FORM_ARC, "dul-cls", cfg, &zi, params, dparams, dz, NULL, NULL, st);
    if (dmu)
        for (size_t k = 0; k < m; k++) { /* through z, and the KL's mean over the items */
            double v = in->var[k];
            dmu[k] = (float)(dz[k] + lambda * in->mu[k] / n);
            if (dvar)
                dvar[k] = (float)(dz[k] * eps[k] / (2 * sqrt(v)) + lambda * 0.5 * (1 - 1 / v) / n);
        }
    kl /= n;
    if (st)
        st->kl = kl, st->mean_var = sum_var / m;
    free(eps), free(z), free(dz);
    return loss + lambda * kl;
}

double loss_arcface_items(const char *name, const loss_config *cfg, const loss_input *in, const float *params,
                          float *dparams, float *dmu, double *items, loss_cosines *keep, loss_stats *st)
{
    return margin_common(FORM_ARC, name, cfg, in, params, dparams, dmu, items, keep, st);
}

/* the margin m (--margin): the paper's when not given; 0 to 1.5 */
static const char *margin_check(loss_config *cfg, double dflt, const char *name)
{
    static char msg[96];
    if (!LOSS_GIVEN(cfg, LOSS_MARGIN))
        cfg->margin = dflt;
    if (!(cfg->margin >= 0 && cfg->margin <= 1.5)) {
        snprintf(msg, sizeof msg, "--margin %g: the %s loss takes a margin from 0 to 1.5", cfg->margin, name);
        return msg;
    }
    return NULL;
}
static const char *cosface_settle(loss_config *cfg, int D, int shots)
{
    (void)D, (void)shots;
    return margin_check(cfg, 0.35, "cosface");
}
const char *loss_arcface_settle(loss_config *cfg, int D, int shots)
{
    (void)D, (void)shots;
    return margin_check(cfg, 0.5, "arcface");
}

LOSS_CLASS_WEIGHTS_KIND(loss_cosface, "cosface", "CosFace (Wang et al. 2018): softmax over class weights, cosine margin m (point)",
            cosface_fb, cosface_settle, "cosface.w", 0, NULL, margin_settings, MARGIN_NSET);
LOSS_CLASS_WEIGHTS_KIND(loss_arcface, "arcface", "ArcFace (Deng et al. 2019): softmax over class weights, angular margin m (point)",
            arcface_fb, loss_arcface_settle, "arcface.w", 0, NULL, margin_settings, MARGIN_NSET);
LOSS_CLASS_WEIGHTS_KIND(loss_dul_cls, "dul-cls", "DUL_cls (Chang et al. 2020): ArcFace on z = mu + sigma eps, plus lambda KL to N(0, I) (mog -C 1)",
            dul_fb, loss_arcface_settle, "dul-cls.w", 1, NULL, dul_settings, DUL_NSET);
