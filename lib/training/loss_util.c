#include "loss_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

const char *const loss_match_param_names[] = {"match.a_raw", "match.b"};

void loss_match_init_params(const loss_config *cfg, float *params)
{
    if (!(cfg->a0 > 0) || !isfinite(cfg->a0) || !isfinite(cfg->b0))
        die("loss: the initial a of the match probability must be > 0 (got a0 = %g, b0 = %g)", cfg->a0,
            cfg->b0);
    params[0] = (float)loss_softplus_inv(cfg->a0);
    params[1] = (float)cfg->b0;
}

void loss_check_pairs(const char *loss, const loss_input *in)
{
    for (int k = 0; k < in->npairs; k++)
        if (in->pair_a[k] < 0 || in->pair_a[k] >= in->n || in->pair_b[k] < 0 || in->pair_b[k] >= in->n)
            die("%s loss: pair %d is (%d, %d), outside the batch of %d images", loss, k,
                (int)in->pair_a[k], (int)in->pair_b[k], in->n);
}

double loss_match_nll(int n, const double *s, int match, double *dnll_ds)
{
    /* t_k = s_k (match) or -s_k (non-match); NLL = log n - log sum_k sigmoid(t_k).
     * The sum is taken scaled by e^-c, c = min(max_k t_k, 0), so that it stays >= 1/2 however far
     * apart the points are (this is the log-sum-exp of the log-sigmoids, with one exp per term):
     *   t_k >= 0 (then c = 0): r_k = e^-t_k,      sigmoid(t_k) e^-c = 1 / (1 + r_k)
     *   t_k < 0:               r_k = e^(t_k - c), sigmoid(t_k) e^-c = r_k / (1 + r_k e^c) */
    double sign = match ? 1 : -1, mx = -INFINITY;
    for (int k = 0; k < n; k++)
        if (sign * s[k] > mx)
            mx = sign * s[k];
    double c = mx < 0 ? mx : 0, ec = exp(c), sum = 0;
    for (int k = 0; k < n; k++) {
        double t = sign * s[k], r, v;
        if (t >= 0) {
            r = exp(-t);
            v = 1 / (1 + r);
        } else {
            r = exp(t - c);
            v = r / (1 + r * ec);
        }
        sum += v;
        if (dnll_ds)
            dnll_ds[k] = r;
    }
    if (dnll_ds)
        /* dNLL/dt_k = -w_k sigmoid(-t_k), w_k = sigmoid(t_k) / sum_j sigmoid(t_j) */
        for (int k = 0; k < n; k++) {
            double t = sign * s[k], r = dnll_ds[k], w, q;
            if (t >= 0) {
                w = 1 / (1 + r) / sum;
                q = r / (1 + r);
            } else {
                double e = r * ec;
                w = r / (1 + e) / sum;
                q = 1 / (1 + e);
            }
            dnll_ds[k] = -sign * w * q;
        }
    return log((double)n) - c - log(sum);
}

double loss_match_logp(const double *z1, int K1, const double *z2, int K2, int D, double a, double b,
                       int match)
{
    double sign = match ? 1 : -1, mx = -INFINITY, sum = 0;
    for (int k = 0; k < K1; k++)
        for (int l = 0; l < K2; l++) {
            double s = -a * loss_dist(z1 + (size_t)k * D, z2 + (size_t)l * D, D) + b;
            double ls = loss_log_sigmoid(sign * s);
            if (ls > mx) {
                sum = sum * exp(mx - ls) + 1;
                mx = ls;
            } else {
                sum += exp(ls - mx);
            }
        }
    return mx + log(sum) - log((double)K1 * K2);
}

void loss_sample(const float *mu, const float *var, int n, int C, int D, int K, rng *r, double *eps,
                 double *z)
{
    if (C < 1 || K < C || K % C)
        die("loss: %d samples per input cannot be split evenly over %d mixture components", K, C);
    int per = K / C;
    // every normal at once into z (or eps), in (image, sample, dim) order, then z from it
    double *e = eps ? eps : z;
    rng_normals(r, e, (size_t)n * K * D);
    for (int i = 0; i < n; i++)
        for (int c = 0; c < C; c++) {
            const float *m = mu + ((size_t)i * C + c) * D, *v = var + ((size_t)i * C + c) * D;
            for (int j = 0; j < D; j++) {
                double sd = sqrt((double)v[j]); /* once for the component's K / C samples */
                for (int k = c * per; k < (c + 1) * per; k++) {
                    size_t o = ((size_t)i * K + k) * D + j;
                    z[o] = m[j] + sd * e[o];
                }
            }
        }
}

double loss_kl_gauss(const float *mu, const float *var, int D)
{
    double kl = 0;
    for (int j = 0; j < D; j++)
        kl += (double)var[j] + (double)mu[j] * mu[j] - 1 - log((double)var[j]);
    return 0.5 * kl;
}

void loss_normalise(const float *x, int n, int D, double *u, double *norm)
{
    for (int i = 0; i < n; i++) {
        double s = LOSS_DIST_EPS;
        for (int d = 0; d < D; d++)
            s += (double)x[(size_t)i * D + d] * x[(size_t)i * D + d];
        norm[i] = sqrt(s);
        for (int d = 0; d < D; d++)
            u[(size_t)i * D + d] = x[(size_t)i * D + d] / norm[i];
    }
}

void loss_unnormalise(const double *u, const double *norm, const double *g, int n, int D, float *dx)
{
    for (int i = 0; i < n; i++) {
        const double *ui = u + (size_t)i * D, *gi = g + (size_t)i * D;
        double ug = 0;
        for (int d = 0; d < D; d++)
            ug += ui[d] * gi[d];
        for (int d = 0; d < D; d++)
            dx[(size_t)i * D + d] = (float)((gi[d] - ui[d] * ug) / norm[i]);
    }
}

void loss_cosines_make(loss_cosines *lc, const float *mu, const float *W, int n, int K, int D)
{
    lc->n = n, lc->K = K, lc->D = D;
    lc->x = emalloc((size_t)n * D * sizeof *lc->x), lc->xn = emalloc((size_t)n * sizeof *lc->xn);
    lc->w = emalloc((size_t)K * D * sizeof *lc->w), lc->wn = emalloc((size_t)K * sizeof *lc->wn);
    lc->c = emalloc((size_t)n * K * sizeof *lc->c);
    loss_normalise(mu, n, D, lc->x, lc->xn);
    loss_normalise(W, K, D, lc->w, lc->wn);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < K; j++) {
            double c = 0;
            for (int d = 0; d < D; d++)
                c += lc->x[(size_t)i * D + d] * lc->w[(size_t)j * D + d];
            lc->c[(size_t)i * K + j] = c;
        }
}

void loss_cosines_back(const loss_cosines *lc, const double *g, float *dmu, float *dW)
{
    int n = lc->n, K = lc->K, D = lc->D;
    double *gx = ecalloc((size_t)n * D, sizeof *gx), *gw = ecalloc((size_t)K * D, sizeof *gw);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < K; j++) {
            double gij = g[(size_t)i * K + j];
            if (gij == 0)
                continue;
            for (int d = 0; d < D; d++) {
                gx[(size_t)i * D + d] += gij * lc->w[(size_t)j * D + d];
                gw[(size_t)j * D + d] += gij * lc->x[(size_t)i * D + d];
            }
        }
    if (dmu)
        loss_unnormalise(lc->x, lc->xn, gx, n, D, dmu);
    if (dW) { /* ADDS, through the weights' normalisation */
        float *t = emalloc((size_t)K * D * sizeof *t);
        loss_unnormalise(lc->w, lc->wn, gw, K, D, t);
        for (size_t k = 0; k < (size_t)K * D; k++)
            dW[k] += t[k];
        free(t);
    }
    free(gx), free(gw);
}

void loss_cosines_free(loss_cosines *lc)
{
    free(lc->x), free(lc->xn), free(lc->w), free(lc->wn), free(lc->c);
    memset(lc, 0, sizeof *lc);
}

const char *const loss_no_param_names[] = {NULL};
void loss_no_init(const loss_config *cfg, float *params) { (void)cfg, (void)params; }

void loss_check_class_input(const char *name, const loss_input *in, const float *params)
{
    if (in->C != 1)
        die("%s loss: needs one embedding per item (C = 1), got C = %d", name, in->C);
    if (in->var)
        die("%s loss: works on point embeddings (--head point)", name);
    if (!in->row || in->classes < 1)
        die("%s loss: needs each item's class row (train gives it from the stream's class list)", name);
    if (!params)
        die("%s loss: needs its weights per class", name);
    for (int i = 0; i < in->n; i++)
        if (in->row[i] < 0 || in->row[i] >= in->classes)
            die("%s loss: item %d has class row %d, outside 0 to %d", name, i, in->row[i], in->classes - 1);
}

void loss_mean_logvar(const char *name, const loss_input *in, double *s, double *mean_var)
{
    int n = in->n, D = in->D;
    double sum_var = 0;
    for (int i = 0; i < n; i++) {
        s[i] = 0;
        for (int d = 0; d < D; d++) {
            double v = in->var[(size_t)i * D + d];
            if (!(v > 0))
                die("%s loss: item %d has variance %g; it must be positive", name, i, v);
            s[i] += log(v) / D, sum_var += v / D;
        }
    }
    *mean_var = n ? sum_var / n : 0;
}

void loss_mean_logvar_back(const loss_input *in, int i, double g, float *dvar)
{
    for (int d = 0; d < in->D; d++)
        dvar[(size_t)i * in->D + d] = (float)(g / (in->D * in->var[(size_t)i * in->D + d]));
}
