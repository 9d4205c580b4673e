/* proxy: the proxy losses, a learned proxy per class (the loss's class weights, loss_kind.class_weights)
 * that the items are drawn to or pushed from: ProxyNCA (Movshovitz-Attias et al., "No Fuss Distance
 * Metric Learning using Proxies", ICCV 2017, Eq. 8 with the unit-norm embeddings and proxies of its
 * section 4) and Proxy-Anchor (Kim, Kim, Cho & Kwak, "Proxy Anchor Loss for Deep Metric Learning",
 * CVPR 2020, Eq. 4), on any batch whose items carry their class, point embeddings.
 *
 * Item i (class row y_i, in->row) and proxy p_j (row j of the weights, (classes, D)) are
 * normalised as loss_util.h does (x_i, w_j), c_ij = x_i . w_j their cosine.
 *   proxynca:    L = 1/n sum_i [ s d_iy - log sum_{j != y_i} e^{-s d_ij} ],  d_ij = ||x_i - w_j||^2
 *                = 2 - 2 c_ij (unit vectors), the scale s = --proxy-scale (1: the paper's plain
 *                distance); the denominator runs over the other classes' proxies, as the paper's
 *   proxy-anchor: L = 1/|P+| sum_{j in P+} log(1 + sum_{i: y_i = j} e^{-alpha (c_ij - delta)})
 *                  + 1/|P| sum_{j in P} log(1 + sum_{i: y_i != j} e^{alpha (c_ij + delta)})
 *                P every proxy, P+ those with an item of their class in the batch; alpha = 32 and
 *                delta = 0.1, the paper's (--pa-alpha, --pa-delta)
 * Gradients by hand from these sums (dL/dc, then loss_cosines_back through the normalisations;
 * the proxies' ADDS into dparams). Computed in double: alpha (1 + delta) is at most 110 for the
 * table's ranges, far from overflow.
 *
 * Stats: nll = the loss; acc = the fraction of items whose nearest proxy (the largest cosine, the
 * lowest row on ties) is their class's; a, b, se2 NaN. Bad input dies: C != 1, a variance, no
 * class rows, no proxies. Cost O(n classes D).
 */
#include <math.h>
#include <stdlib.h>

#include "loss.h"
#include "loss_util.h"
#include "util.h"

enum { NCA_SCALE, NCA_NSET };
static const setting nca_settings[NCA_NSET] = {
    [NCA_SCALE] = {"proxy-scale", "S", "proxy_scale", SETTING_REAL, 0.01, 100, 1, NULL,
                   "s, the scale of the squared distances to the proxies"},
};
enum { PA_ALPHA, PA_DELTA, PA_NSET };
static const setting pa_settings[PA_NSET] = {
    [PA_ALPHA] = {"pa-alpha", "X", "pa_alpha", SETTING_REAL, 0.01, 100, 32, NULL, "alpha, the scale of the cosines"},
    [PA_DELTA] = {"pa-delta", "X", "pa_delta", SETTING_REAL, 0, 1, 0.1, NULL, "delta, the margin"},
};

enum { FORM_NCA, FORM_ANCHOR };

static double proxy_common(int form, const loss_config *cfg, const loss_input *in, const float *params,
                           float *dparams, float *dmu, loss_stats *st)
{
    const char *name = form == FORM_NCA ? "proxynca" : "proxy-anchor";
    int n = in->n, D = in->D, K = in->classes;
    loss_check_class_input(name, in, params);
    if (form == FORM_NCA && K < 2)
        die("%s loss: needs two classes or more (the other classes' proxies are its denominator)", name);
    loss_cosines C;
    loss_cosines_make(&C, in->mu, params, n, K, D);
    double *g = ecalloc((size_t)n * K, sizeof *g), loss = 0;
    int right = 0;
    for (int i = 0; i < n; i++) {
        int best = 0;
        for (int j = 1; j < K; j++)
            best = C.c[(size_t)i * K + j] > C.c[(size_t)i * K + best] ? j : best;
        right += best == in->row[i];
    }
    if (form == FORM_NCA) {
        double s = cfg->own[NCA_SCALE];
        for (int i = 0; i < n; i++) {
            const double *ci = C.c + (size_t)i * K;
            int y = in->row[i];
            /* z_j = -s d_ij = -s (2 - 2 c_ij); L_i = -z_y + LSE_{j != y} z_j */
            double zmax = -INFINITY, sum = 0;
            for (int j = 0; j < K; j++)
                if (j != y)
                    zmax = fmax(zmax, -s * (2 - 2 * ci[j]));
            for (int j = 0; j < K; j++)
                if (j != y)
                    sum += exp(-s * (2 - 2 * ci[j]) - zmax);
            double lse = zmax + log(sum);
            loss += s * (2 - 2 * ci[y]) + lse;
            for (int j = 0; j < K; j++) /* dz_j/dc = 2 s */
                g[(size_t)i * K + j] =
                    (j == y ? -1 : exp(-s * (2 - 2 * ci[j]) - lse)) * 2 * s / n;
        }
        loss /= n;
    } else {
        double alpha = cfg->own[PA_ALPHA], delta = cfg->own[PA_DELTA];
        int npos = 0;
        double *sp = ecalloc((size_t)K, sizeof *sp), *sn = ecalloc((size_t)K, sizeof *sn);
        int *has = ecalloc((size_t)K, sizeof *has);
        for (int i = 0; i < n; i++)
            for (int j = 0; j < K; j++) {
                double c = C.c[(size_t)i * K + j];
                if (in->row[i] == j)
                    sp[j] += exp(-alpha * (c - delta)), has[j] = 1;
                else
                    sn[j] += exp(alpha * (c + delta));
            }
        for (int j = 0; j < K; j++)
            npos += has[j];
        for (int j = 0; j < K; j++)
            loss += (has[j] ? log1p(sp[j]) / npos : 0) + log1p(sn[j]) / K;
        for (int i = 0; i < n; i++)
            for (int j = 0; j < K; j++) {
                double c = C.c[(size_t)i * K + j];
                g[(size_t)i * K + j] = in->row[i] == j ? -alpha * exp(-alpha * (c - delta)) / (1 + sp[j]) / npos
                                                       : alpha * exp(alpha * (c + delta)) / (1 + sn[j]) / K;
            }
        free(sp), free(sn), free(has);
    }
    loss_cosines_back(&C, g, dmu, dparams);
    if (st)
        *st = (loss_stats){.nll = loss, .a = NAN, .b = NAN, .acc = (double)right / n, .se2 = NAN};
    loss_cosines_free(&C);
    free(g);
    return loss;
}

static double nca_fb(const loss_config *cfg, const loss_input *in, const float *params, float *dparams, float *dmu,
                     float *dvar, rng *r, loss_stats *st)
{
    (void)dvar, (void)r;
    return proxy_common(FORM_NCA, cfg, in, params, dparams, dmu, st);
}
static double anchor_fb(const loss_config *cfg, const loss_input *in, const float *params, float *dparams,
                        float *dmu, float *dvar, rng *r, loss_stats *st)
{
    (void)dvar, (void)r;
    return proxy_common(FORM_ANCHOR, cfg, in, params, dparams, dmu, st);
}

LOSS_CLASS_WEIGHTS_KIND(loss_proxynca, "proxynca",
                        "ProxyNCA (Movshovitz-Attias et al. 2017): NCA over a learned proxy per class (point)", nca_fb,
                        NULL, "proxynca.w", 0, NULL, nca_settings, NCA_NSET);
LOSS_CLASS_WEIGHTS_KIND(loss_proxy_anchor, "proxy-anchor",
                        "Proxy-Anchor (Kim et al. 2020): each class's proxy as an anchor against the batch (point)",
                        anchor_fb, NULL, "proxy-anchor.w", 0, NULL, pa_settings, PA_NSET);
