/* ms: the Multi-Similarity loss (Wang, Han, Huang, Dong & Scott, "Multi-Similarity Loss with General
 * Pair Weighting for Deep Metric Learning", CVPR 2019, Eqs. 10 and 11 and its pair mining,
 * section 4.2), on P x K batches (groupbatch, batcher -m pk) of point embeddings.
 *
 * The similarity of images i and k is the cosine of their embeddings, S_ik = u_i . u_k with
 * u = mu / sqrt(||mu||^2 + LOSS_DIST_EPS) (loss_util.h). The positives of anchor i are the other
 * images of its class, the negatives the images of the other classes. Mining (Eq. 10, with the
 * margin epsilon, --ms-epsilon): a negative pair (i, k) is kept when S_ik + epsilon > min over
 * the positives of S_ij, a positive pair when S_ik - epsilon < max over the negatives of S_ij;
 * an anchor without positives or negatives keeps nothing. The loss (Eq. 11) is the mean over the
 * m images of the batch (an anchor that kept nothing adds 0) of
 *   L_i = 1/alpha log(1 + sum_{k in P_i} e^{-alpha (S_ik - lambda)})
 *       + 1/beta  log(1 + sum_{k in N_i} e^{ beta (S_ik - lambda)})
 * over the kept pairs P_i and N_i. The selection is held fixed for the gradient (piecewise smooth,
 * as the triplet mining): dL_i/dS_ik = -w_ik for a kept positive, w_ik = e^{-alpha (S_ik - lambda)}
 * / (1 + sum_P e^{...}), and +e^{beta (S_ik - lambda)} / (1 + sum_N e^{...}) for a kept negative,
 * each divided by m; S_ik depends on u_i and u_k (dS/du_i = u_k), then through the normalisation.
 *
 * The settings: the paper's alpha = 2, beta = 50, lambda = 1 and epsilon = 0.1 (its section 5.1);
 * the authors' code (MalongTech/research-ms-loss) and pytorch-metric-learning's default use
 * lambda = 0.5 (--ms-lambda 0.5). An epsilon of 2 keeps every pair (cosines lie in [-1, 1]).
 * Computed in double; the exponents are at most alpha (1 + lambda) and beta (1 - lambda), 200 for
 * the table's ranges, so no sum overflows.
 *
 * Stats: nll = the loss; acc = the fraction of images whose most similar other image of the batch
 * (lowest index on ties) is of their class; a, b, se2 NaN; kl = mean_var = 0. Bad input dies: C
 * != 1, a variance, no classes. Cost: O(n^2 D).
 */
#include <math.h>
#include <stdlib.h>

#include "loss.h"
#include "loss_util.h"
#include "util.h"

enum { MS_ALPHA, MS_BETA, MS_LAMBDA, MS_EPSILON, MS_NSET };
static const setting ms_settings[MS_NSET] = {
    [MS_ALPHA] = {"ms-alpha", "X", "ms_alpha", SETTING_REAL, 0.01, 100, 2, NULL, "alpha, the scale of the positive pairs"},
    [MS_BETA] = {"ms-beta", "X", "ms_beta", SETTING_REAL, 0.01, 100, 50, NULL, "beta, the scale of the negative pairs"},
    [MS_LAMBDA] = {"ms-lambda", "X", "ms_lambda", SETTING_REAL, -1, 1, 1, NULL,
                   "lambda, the similarity the pairs are weighed against (the authors' code: 0.5)"},
    [MS_EPSILON] = {"ms-epsilon", "X", "ms_epsilon", SETTING_REAL, 0, 2, 0.1, NULL,
                    "epsilon, the margin of the pair mining (2: every pair)"},
};


static double ms_forward_backward(const loss_config *cfg, const loss_input *in, const float *params, float *dparams,
                                  float *dmu, float *dvar, rng *r, loss_stats *st)
{
    (void)params, (void)dparams, (void)dvar, (void)r;
    int n = in->n, D = in->D;
    const int32_t *cls = in->cls;
    if (in->C != 1)
        die("ms loss: needs one embedding per image (C = 1), got C = %d", in->C);
    if (in->var)
        die("ms loss: works on point embeddings (--head point)");
    if (!cls)
        die("ms loss: needs the class of every image (P x K batches; batcher -m pk)");
    double alpha = cfg->own[MS_ALPHA], beta = cfg->own[MS_BETA], lambda = cfg->own[MS_LAMBDA];
    double eps = cfg->own[MS_EPSILON];
    double *u = emalloc((size_t)n * D * sizeof *u), *norm = emalloc((size_t)n * sizeof *norm);
    double *S = emalloc((size_t)n * n * sizeof *S), *G = ecalloc((size_t)n * n, sizeof *G);
    loss_normalise(in->mu, n, D, u, norm);
    for (int i = 0; i < n; i++)
        for (int k = i; k < n; k++) {
            double s = 0;
            for (int d = 0; d < D; d++)
                s += u[(size_t)i * D + d] * u[(size_t)k * D + d];
            S[(size_t)i * n + k] = S[(size_t)k * n + i] = s;
        }
    double loss = 0;
    int right = 0;
    for (int i = 0; i < n; i++) {
        const double *Si = S + (size_t)i * n;
        double minpos = INFINITY, maxneg = -INFINITY;
        int near = -1;
        for (int k = 0; k < n; k++) {
            if (k == i)
                continue;
            if (near < 0 || Si[k] > Si[near])
                near = k;
            if (cls[k] == cls[i])
                minpos = fmin(minpos, Si[k]);
            else
                maxneg = fmax(maxneg, Si[k]);
        }
        right += near >= 0 && cls[near] == cls[i];
        if (isinf(minpos) || isinf(maxneg)) /* no positive or no negative: no pair kept */
            continue;
        double sp = 0, sn = 0;
        for (int k = 0; k < n; k++) {
            if (k == i)
                continue;
            if (cls[k] == cls[i] && Si[k] - eps < maxneg)
                sp += exp(-alpha * (Si[k] - lambda));
            else if (cls[k] != cls[i] && Si[k] + eps > minpos)
                sn += exp(beta * (Si[k] - lambda));
        }
        loss += log1p(sp) / alpha + log1p(sn) / beta;
        for (int k = 0; k < n; k++) { /* dL/dS_ik, the kept pairs' weights, over the m images */
            if (k == i)
                continue;
            int pos = cls[k] == cls[i];
            if (pos && Si[k] - eps < maxneg)
                G[(size_t)i * n + k] = -exp(-alpha * (Si[k] - lambda)) / (1 + sp) / n;
            else if (!pos && Si[k] + eps > minpos)
                G[(size_t)i * n + k] = exp(beta * (Si[k] - lambda)) / (1 + sn) / n;
        }
    }
    loss /= n;
    if (dmu) { /* dL/du_i = sum_k (G_ik + G_ki) u_k, then through the normalisation */
        double *g = ecalloc((size_t)n * D, sizeof *g);
        for (int i = 0; i < n; i++)
            for (int k = 0; k < n; k++) {
                double w = G[(size_t)i * n + k] + G[(size_t)k * n + i];
                if (w != 0)
                    for (int d = 0; d < D; d++)
                        g[(size_t)i * D + d] += w * u[(size_t)k * D + d];
            }
        loss_unnormalise(u, norm, g, n, D, dmu);
        free(g);
    }
    if (st)
        *st = (loss_stats){.nll = loss, .a = NAN, .b = NAN, .acc = (double)right / n, .se2 = NAN};
    free(u), free(norm), free(S), free(G);
    return loss;
}

const loss_kind loss_ms = {
    .name = "ms",
    .help = "Multi-Similarity loss (Wang et al. 2019): cosine pairs mined and weighed by their neighbours (P x K, point)",
    .needs_var = 0,
    .batches = LOSS_GROUPS,
    .max_C = 1,
    .nparams = 0,
    .param_names = loss_no_param_names,
    .init_params = loss_no_init,
    .forward_backward = ms_forward_backward,
    .settings = ms_settings,
    .nsettings = MS_NSET,
};
