/* fstat: the F-statistic loss (fstat-ridgeway-2018 section 1; the equations the extraction lost
 * are in ../shared/papers/NOTES.md). Point embeddings (C = 1) of P x K group batches (batcher
 * -m pk); classes are told apart by their values in cls, in any order and of any sizes.
 *
 * For every pair of distinct classes {alpha, beta} of the batch, n = n_alpha + n_beta >= 3
 * images, and every embedding dimension k:
 *   B_k = sum_c n_c (m_ck - m_k)^2 = n_alpha n_beta / n (m_alpha,k - m_beta,k)^2     (between)
 *   W_k = sum_i (z_ik - m_c(i),k)^2 over the images of both classes                (within)
 *   x_k = B_k / (B_k + W_k)  (= s / (s + n - 2), s = (n - 2) B / W the F statistic)
 *   Pr(S < s | mu_alpha,k = mu_beta,k) = I_x(1/2, (n - 2)/2)  (the F(1, n-2) CDF; lib/numerics/betainc.h)
 * x_k is clipped into [FSTAT_XMIN, FSTAT_XMAX] = [1e-37, 1 - 1e-5] as the paper's
 * implementation does (NOTES.md); a clipped x has zero gradient. That clip is also the guard of
 * the degenerate cases: W = 0 (each class on one point, B > 0) gives x = 1 -> 1 - 1e-5, and
 * B + W = 0 (both classes on one point: no information) is taken as x = 0 -> 1e-37, a finite
 * loss of -log I_{1e-37}(1/2, (n-2)/2) (about 42.6 + log(B(1/2, (n-2)/2) / 2)) and no gradient.
 * D_alpha,beta = the d dimensions with the largest Pr (the best separated already; ties: the
 * lowest index), d = cfg->own[0] (--fstat-dims; 0: all D). The loss is the paper's L_F,
 *   L = -sum_{alpha,beta} sum_{k in D_alpha,beta} log I_{x_k}(1/2, (n - 2)/2),
 * a SUM over the P (P - 1) / 2 class pairs, not a mean (NOTES.md: "Loss = - sum over class pairs
 * of sum over the d best-separated dimensions of log I_x"): 28 pairs for P = 8.
 *
 * Gradients: dL/dx_k = -d/dx log I (0 when clipped or not selected); dx/dB = W / (B + W)^2,
 * dx/dW = -B / (B + W)^2; dB/dz_ik = 2 (m_c(i),k - m_k) (the terms through the means cancel), and
 * m_alpha - m = n_beta (m_alpha - m_beta) / n; dW/dz_ik = 2 (z_ik - m_c(i),k). They are gathered
 * per class and dimension (GB, GW) and spread over the images in one pass at the end.
 * Stats: nll = the loss; acc, a, b, se2 = NaN. dmu may be NULL (loss value only).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "betainc.h"
#include "loss.h"
#include "loss_util.h"
#include "util.h"

#define FSTAT_XMIN 1e-37
#define FSTAT_XMAX (1 - 1e-5)

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* a dimension's log Pr and index, ordered best first (largest log Pr, then lowest index) */
typedef struct {
    double li;
    int k;
} ranked;

static int cmp_ranked(const void *a, const void *b)
{
    const ranked *x = a, *y = b;
    if (x->li != y->li)
        return x->li > y->li ? -1 : 1;
    return (x->k > y->k) - (x->k < y->k);
}

static double fstat_forward_backward(const loss_config *cfg, const loss_input *in, const float *params,
                                     float *dparams, float *dmu, float *dvar, rng *r, loss_stats *st)
{
    (void)params, (void)dparams, (void)dvar, (void)r;
    int n = in->n, D = in->D;
    if (in->C != 1)
        die("fstat loss: needs one embedding per image (C = 1), got C = %d", in->C);
    if (!in->cls)
        die("fstat loss: needs classes (P x K groups; batcher -m pk)");
    int d = cfg->own[0] > 0 ? (int)cfg->own[0] : D;
    if (d > D)
        die("fstat loss: separates d = %d dimensions of a %d-dimensional embedding", d, D);

    /* the classes: distinct values of cls, sorted; label[i], count[c] */
    int32_t *val = emalloc(sizeof(int32_t) * (n + 1));
    int *label = emalloc(sizeof(int) * (n + 1));
    memcpy(val, in->cls, sizeof(int32_t) * n);
    qsort(val, n, sizeof(int32_t), cmp_i32);
    int nc = 0;
    for (int i = 0; i < n; i++)
        if (nc == 0 || val[nc - 1] != val[i])
            val[nc++] = val[i];
    if (nc < 2)
        die("fstat loss: a batch of %s class (nothing to tell apart; batcher -m pk -P 2 or more)",
            nc ? "one" : "no");
    size_t cd = (size_t)nc * D;
    int *count = emalloc(sizeof(int) * nc);
    /* per class and dimension: mean m, within sum of squares SS, and the gradient factors GB
     * (added to every image of the class) and GW (times z - m) */
    double *m = emalloc(sizeof(double) * 4 * cd), *SS = m + cd, *GB = SS + cd, *GW = GB + cd;
    ranked *rk = emalloc(sizeof(ranked) * D);
    double *gx = emalloc(sizeof(double) * 3 * D), *Bk = gx + D, *Wk = Bk + D;
    memset(count, 0, sizeof(int) * nc);
    memset(m, 0, sizeof(double) * 4 * cd);
    for (int i = 0; i < n; i++) {
        label[i] = (int)((int32_t *)bsearch(&in->cls[i], val, nc, sizeof(int32_t), cmp_i32) - val);
        count[label[i]]++;
    }
    for (int i = 0; i < n; i++)
        for (int k = 0; k < D; k++)
            m[(size_t)label[i] * D + k] += in->mu[(size_t)i * D + k];
    for (int c = 0; c < nc; c++)
        for (int k = 0; k < D; k++)
            m[(size_t)c * D + k] /= count[c];
    for (int i = 0; i < n; i++)
        for (int k = 0; k < D; k++) {
            double e = in->mu[(size_t)i * D + k] - m[(size_t)label[i] * D + k];
            SS[(size_t)label[i] * D + k] += e * e;
        }

    double loss = 0;
    for (int al = 0; al < nc; al++)
        for (int be = al + 1; be < nc; be++) {
            int na = count[al], nb = count[be], np = na + nb;
            if (np < 3)
                die("fstat loss: classes %d and %d have %d images together; the F statistic needs 3 or more "
                    "(batcher -m pk -K 2 or more)", val[al], val[be], np);
            double a = 0.5, b = 0.5 * (np - 2);
            const double *ma = m + (size_t)al * D, *mb = m + (size_t)be * D;
            for (int k = 0; k < D; k++) {
                double diff = ma[k] - mb[k];
                double B = (double)na * nb / np * diff * diff, W = SS[(size_t)al * D + k] + SS[(size_t)be * D + k];
                double x = B + W > 0 ? B / (B + W) : 0, g = 0;
                int clipped = 0;
                if (x < FSTAT_XMIN)
                    x = FSTAT_XMIN, clipped = 1;
                else if (x > FSTAT_XMAX)
                    x = FSTAT_XMAX, clipped = 1;
                rk[k].li = betainc_log(a, b, x, &g);
                rk[k].k = k;
                gx[k] = clipped ? 0 : g;
                Bk[k] = B;
                Wk[k] = W;
            }
            qsort(rk, D, sizeof(ranked), cmp_ranked);
            for (int j = 0; j < d; j++) {
                int k = rk[j].k;
                loss -= rk[j].li;
                if (!dmu || gx[k] == 0)
                    continue;
                /* dL/dB = -g W / S^2, dL/dW = g B / S^2, S = B + W */
                double S = Bk[k] + Wk[k], dB = -gx[k] * Wk[k] / (S * S), dW = gx[k] * Bk[k] / (S * S);
                double diff = ma[k] - mb[k];
                GB[(size_t)al * D + k] += dB * 2 * nb * diff / np;
                GB[(size_t)be * D + k] -= dB * 2 * na * diff / np;
                GW[(size_t)al * D + k] += 2 * dW;
                GW[(size_t)be * D + k] += 2 * dW;
            }
        }
    if (dmu)
        for (int i = 0; i < n; i++)
            for (int k = 0; k < D; k++) {
                size_t o = (size_t)label[i] * D + k;
                dmu[(size_t)i * D + k] = (float)(GB[o] + GW[o] * (in->mu[(size_t)i * D + k] - m[o]));
            }
    if (st) {
        memset(st, 0, sizeof *st);
        st->nll = loss;
        st->a = st->b = st->acc = st->se2 = NAN;
    }
    free(val);
    free(label);
    free(count);
    free(m);
    free(rk);
    free(gx);
    return loss;
}

static const setting fstat_settings[] = {
    {"fstat-dims", "N", "fstat_dims", SETTING_INT, 1, 4096, 2, NULL,
     "d, the best-separated dimensions per class pair (the paper's Figure 3; at most -D)"},
};
static const char *const fstat_param_names[] = {NULL};
static void fstat_init_params(const loss_config *cfg, float *params) { (void)cfg, (void)params; }
/* d: the paper's Figure 3 (d = 2); on 2-digit MNIST d = 1 or 2 gives 5-NN 0.31-0.43 where all D
 * gives 0.09-0.17 */
static const char *fstat_settle(loss_config *cfg, int D, int shots)
{
    static char msg[96];
    (void)shots;
    if (!LOSS_GIVEN(cfg, LOSS_OWN(0)) && cfg->own[0] > D)
        cfg->own[0] = D; /* (-D 1: the default is 1) */
    if (cfg->own[0] > D) {
        snprintf(msg, sizeof msg, "--fstat-dims %g: the embedding has %d dimensions (-D)", cfg->own[0], D);
        return msg;
    }
    return NULL;
}

const loss_kind loss_fstat = {
    .name = "fstat",
    .help = "F-statistic: -log F(1, n-2) CDF of each class pair's d best-separated dimensions (point, P x K)",
    .needs_var = 0,
    .batches = LOSS_GROUPS,
    .max_C = 1,
    .nparams = 0,
    .param_names = fstat_param_names,
    .init_params = fstat_init_params,
    .forward_backward = fstat_forward_backward,
    .settings = fstat_settings,
    .nsettings = 1,
    .settle = fstat_settle,
};
