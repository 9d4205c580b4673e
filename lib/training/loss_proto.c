/* proto, spe: the episode losses of Prototypical Networks (PN) and Stochastic Prototype
 * Embeddings (SPE, spe-scott-2019 section 3; the equations the extraction lost are in
 * ../shared/papers/NOTES.md). Both take episode batches: support images (query[i] = 0) and query
 * images (query[i] = 1) of a set of classes; every query's class must have support images.
 * Classes are told apart by their values in cls; their order does not matter.
 *
 * proto (point embeddings, C = 1):
 *   m_y = mean of the support embeddings of class y
 *   s_y(q) = -||mu_q - m_y||^2,  loss = mean over queries of -log softmax_y(s_y(q))[target]
 *
 * spe (Gaussian embeddings: a mixture head with C = 1; mu, var = s_x^2 per dimension):
 *   s_e^2 = softplus(gamma), gamma the loss's one parameter ("spe.gamma")
 *   support i of class y: a_i = var_i + s_e^2; 1/S_y^2 = sum_i 1/a_i; m_y = S_y^2 sum_i mu_i/a_i;
 *   V_y = S_y^2 + s_e^2 (all per dimension)
 *   log N(z; m, V) = sum_d -1/2 log(2 pi V_d) - 1/2 (z_d - m_d)^2 / V_d
 *   intersection sampler (the default; the paper trains with one sample per query, K = 1): for a
 *     query x of target class t, u = var_x + V_t, T = var_x V_t / u, c = (V_t mu_x + var_x m_t) / u,
 *     z_k = c + sqrt(T) eps_k, and
 *       log p(t|x,S) ~= log N(mu_x; m_t, u) + log 1/K sum_k exp(-LSE_y log N(z_k; m_y, V_y))
 *   naive sampler (--sampler naive): z_k = mu_x + sqrt(var_x) eps_k,
 *       log p(t|x,S) ~= log 1/K sum_k softmax_y(log N(z_k; m_y, V_y))[t]
 *   loss = mean over queries of -log p(t|x,S). No KL term (the paper has none).
 *   eps: K x D standard normals per query, drawn with rng_normal in (query, sample, dimension)
 *   order over the queries in batch order, before anything else: the same rng state, the same
 *   loss.
 *
 * Gradients by the chain rule through every step above, in double (the derivation is in the
 * comments of spe_forward_backward); the tests check them against finite differences.
 * Stats: nll = the loss; acc = fraction of queries whose best class (PN: largest s_y; SPE: the
 * closed-form score log N(mu_x; m_y, var_x + V_y), lib/measures/proto.h) is the target; se2 (SPE).
 * dmu, dvar and dparams may be NULL (loss value only).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "loss.h"
#include "loss_util.h"
#include "util.h"

/* spe's settings (cfg->own[SPE_*], its table spe_settings below) */
enum { SPE_SE2_0, SPE_GAMMA0, SPE_SAMPLER, SPE_NSET };
enum { SPE_INTERSECTION, SPE_NAIVE };

#define LOG2PI 1.8378770664093453

/* the episode's classes: the distinct class values of the support images, sorted; label[i] is
 * the index of image i's class (every query's class must have support) */
typedef struct {
    int nc, nq, ns;
    int32_t *val;  /* (nc) class values, increasing */
    int *label;    /* (n) class index of every image */
    int *count;    /* (nc) support images per class */
} episode;

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

static void episode_index(const char *loss, const loss_input *in, episode *e)
{
    int n = in->n;
    if (!in->query || !in->cls)
        die("%s loss: needs episodes (support and query images; batcher -m episodes)", loss);
    e->val = emalloc(sizeof(int32_t) * (n + 1));
    e->label = emalloc(sizeof(int) * (n + 1));
    e->nc = e->nq = e->ns = 0;
    for (int i = 0; i < n; i++)
        if (!in->query[i])
            e->val[e->ns++] = in->cls[i];
    if (e->ns == 0)
        die("%s loss: an episode without support images", loss);
    qsort(e->val, e->ns, sizeof(int32_t), cmp_i32);
    for (int i = 0; i < e->ns; i++)
        if (e->nc == 0 || e->val[e->nc - 1] != e->val[i])
            e->val[e->nc++] = e->val[i];
    e->count = emalloc(sizeof(int) * e->nc);
    memset(e->count, 0, sizeof(int) * e->nc);
    for (int i = 0; i < n; i++) {
        int32_t *f = bsearch(&in->cls[i], e->val, e->nc, sizeof(int32_t), cmp_i32);
        if (!f)
            die("%s loss: query image %d is of class %d, which has no support image in its episode", loss, i,
                in->cls[i]);
        e->label[i] = (int)(f - e->val);
        if (in->query[i])
            e->nq++;
        else
            e->count[e->label[i]]++;
    }
    if (e->nq == 0)
        die("%s loss: an episode without query images", loss);
    if (e->nc < 2)
        die("%s loss: an episode of one class (nothing to tell apart)", loss);
}

static void episode_free(episode *e)
{
    free(e->val);
    free(e->label);
    free(e->count);
}

static void stats_fill(loss_stats *st, double nll, double acc, double se2, const loss_input *in)
{
    if (!st)
        return;
    memset(st, 0, sizeof *st);
    st->nll = nll;
    st->acc = acc;
    st->se2 = se2;
    st->a = NAN;
    st->b = NAN;
    double sv = 0;
    size_t nm = (size_t)in->n * in->C * in->D;
    if (in->var)
        for (size_t i = 0; i < nm; i++)
            sv += in->var[i];
    st->mean_var = in->var && nm ? sv / nm : 0;
}

/* softmax of x (n) into p, returns LSE */
static double softmax(const double *x, int n, double *p)
{
    double mx = x[0];
    for (int i = 1; i < n; i++)
        mx = x[i] > mx ? x[i] : mx;
    double s = 0;
    for (int i = 0; i < n; i++)
        s += p[i] = exp(x[i] - mx);
    for (int i = 0; i < n; i++)
        p[i] /= s;
    return mx + log(s);
}

static double proto_forward_backward(const loss_config *cfg, const loss_input *in, const float *params,
                                     float *dparams, float *dmu, float *dvar, rng *r, loss_stats *st)
{
    (void)cfg, (void)params, (void)dparams, (void)r, (void)dvar;
    int n = in->n, D = in->D;
    if (in->C != 1)
        die("proto loss: needs one embedding per image (C = 1), got C = %d", in->C);
    episode e;
    episode_index("proto", in, &e);
    int nc = e.nc;
    double *m = emalloc(sizeof(double) * ((size_t)2 * nc * D + 2 * nc)), *dm = m + (size_t)nc * D;
    double *s = dm + (size_t)nc * D, *p = s + nc;
    memset(m, 0, sizeof(double) * 2 * nc * D);
    for (int i = 0; i < n; i++)
        if (!in->query[i])
            for (int d = 0; d < D; d++)
                m[(size_t)e.label[i] * D + d] += (double)in->mu[(size_t)i * D + d] / e.count[e.label[i]];
    double g = 1.0 / e.nq, sum = 0;
    int right = 0;
    if (dmu)
        memset(dmu, 0, sizeof(float) * n * D);
    for (int i = 0; i < n; i++) {
        if (!in->query[i])
            continue;
        const float *q = in->mu + (size_t)i * D;
        int t = e.label[i], best = 0;
        for (int y = 0; y < nc; y++) {
            double d2 = 0;
            for (int d = 0; d < D; d++) {
                double diff = q[d] - m[(size_t)y * D + d];
                d2 += diff * diff;
            }
            s[y] = -d2;
            if (s[y] > s[best])
                best = y;
        }
        right += best == t;
        sum += softmax(s, nc, p) - s[t];
        if (!dmu)
            continue;
        /* dL/ds_y = g (p_y - [y = t]); ds_y/dq = -2 (q - m_y) = -ds_y/dm_y */
        for (int y = 0; y < nc; y++) {
            double gy = g * (p[y] - (y == t));
            for (int d = 0; d < D; d++) {
                double v = -2 * gy * (q[d] - m[(size_t)y * D + d]);
                dmu[(size_t)i * D + d] += (float)v;
                dm[(size_t)y * D + d] -= v;
            }
        }
    }
    if (dmu) /* m_y is the mean of its support */
        for (int i = 0; i < n; i++)
            if (!in->query[i])
                for (int d = 0; d < D; d++)
                    dmu[(size_t)i * D + d] = (float)(dm[(size_t)e.label[i] * D + d] / e.count[e.label[i]]);
    double loss = sum * g;
    stats_fill(st, loss, (double)right / e.nq, NAN, in);
    free(m);
    episode_free(&e);
    return loss;
}

static const char *const proto_param_names[] = {NULL};
static void proto_init_params(const loss_config *cfg, float *params) { (void)cfg, (void)params; }

const loss_kind loss_proto = {
    .name = "proto",
    .help = "Prototypical Networks: softmax over -||q - mean of support||^2 (point embeddings, episodes)",
    .needs_var = 0,
    .batches = LOSS_EPISODES,
    .max_C = 1,
    .nparams = 0,
    .param_names = proto_param_names,
    .init_params = proto_init_params,
    .forward_backward = proto_forward_backward,
};

static double spe_forward_backward(const loss_config *cfg, const loss_input *in, const float *params,
                                   float *dparams, float *dmu, float *dvar, rng *r, loss_stats *st)
{
    int n = in->n, D = in->D, K = cfg->K, naive = cfg->own[SPE_SAMPLER] == SPE_NAIVE;
    if (!in->var)
        die("spe loss: needs Gaussian embeddings (--head mog -C 1)");
    if (in->C != 1)
        die("spe loss: needs one Gaussian per image (C = 1), got C = %d", in->C);
    if (K < 1)
        die("spe loss: K = %d samples per query", K);
    episode e;
    episode_index("spe", in, &e);
    int nc = e.nc, nq = e.nq;
    double gamma = params[0], se2 = loss_softplus(gamma);
    size_t cd = (size_t)nc * D;
    /* per class and dimension: P (precision), M (sum mu/a), m, S2, V and their gradients; per
     * query: eps (K, D); per sample and class: ell, pi, dl; logc (nc) = -1/2 sum_d log(2 pi V_yd) */
    double *blk = emalloc(sizeof(double) * (10 * cd + (size_t)nq * K * D + 3 * (size_t)K * nc + 2 * K + 2 * nc + 6 * D));
    double *P = blk, *M = P + cd, *m = M + cd, *S2 = m + cd, *V = S2 + cd;
    double *gm = V + cd, *gV = gm + cd, *gS2 = gV + cd, *gM = gS2 + cd, *gP = gM + cd;
    double *eps = gP + cd, *ell = eps + (size_t)nq * K * D, *pi = ell + (size_t)K * nc, *dl = pi + (size_t)K * nc;
    double *Lk = dl + (size_t)K * nc, *om = Lk + K, *score = om + K, *z = score + nc, *dz = z + D;
    double *dmx = dz + D, *dvx = dmx + D, *gmt = dvx + D, *gVt = gmt + D, *logc = gVt + D;
    memset(blk, 0, sizeof(double) * 10 * cd);
    for (size_t k = 0; k < (size_t)nq * K * D; k++)
        eps[k] = rng_normal(r);

    /* prototypes */
    for (int i = 0; i < n; i++) {
        if (in->query[i])
            continue;
        int y = e.label[i];
        for (int d = 0; d < D; d++) {
            double w = 1 / ((double)in->var[(size_t)i * D + d] + se2);
            P[(size_t)y * D + d] += w;
            M[(size_t)y * D + d] += w * in->mu[(size_t)i * D + d];
        }
    }
    for (size_t k = 0; k < cd; k++) {
        S2[k] = 1 / P[k];
        m[k] = S2[k] * M[k];
        V[k] = S2[k] + se2;
    }
    for (int y = 0; y < nc; y++) {
        logc[y] = 0;
        for (int d = 0; d < D; d++)
            logc[y] -= 0.5 * (LOG2PI + log(V[(size_t)y * D + d]));
    }

    double g = 1.0 / nq, sum = 0, dse2 = 0;
    int right = 0, qi = 0;
    int grad = dmu || dvar || dparams;
    if (dmu)
        memset(dmu, 0, sizeof(float) * n * D);
    if (dvar)
        memset(dvar, 0, sizeof(float) * n * D);
    for (int i = 0; i < n; i++) {
        if (!in->query[i])
            continue;
        const float *mx = in->mu + (size_t)i * D, *vx = in->var + (size_t)i * D;
        const double *ep = eps + (size_t)qi++ * K * D;
        int t = e.label[i];
        const double *mt = m + (size_t)t * D, *Vt = V + (size_t)t * D;
        /* accuracy by the closed-form score log N(mu_x; m_y, var_x + V_y) */
        int best = 0;
        for (int y = 0; y < nc; y++) {
            double sc = 0;
            for (int d = 0; d < D; d++) {
                double u = vx[d] + V[(size_t)y * D + d], del = mx[d] - m[(size_t)y * D + d];
                sc -= 0.5 * (LOG2PI + log(u) + del * del / u);
            }
            score[y] = sc;
            if (sc > score[best])
                best = y;
        }
        right += best == t;

        /* samples z_k and their class log densities ell (K, nc) */
        for (int k = 0; k < K; k++) {
            for (int d = 0; d < D; d++) {
                double v = vx[d], u = v + Vt[d];
                if (naive)
                    z[d] = mx[d] + sqrt(v) * ep[(size_t)k * D + d];
                else
                    z[d] = (Vt[d] * mx[d] + v * mt[d]) / u + sqrt(v * Vt[d] / u) * ep[(size_t)k * D + d];
            }
            for (int y = 0; y < nc; y++) {
                double l = logc[y];
                for (int d = 0; d < D; d++) {
                    double rr = z[d] - m[(size_t)y * D + d];
                    l -= 0.5 * rr * rr / V[(size_t)y * D + d];
                }
                ell[(size_t)k * nc + y] = l;
            }
            Lk[k] = softmax(ell + (size_t)k * nc, nc, pi + (size_t)k * nc);
        }
        /* the loss of this query, and dloss/dell into dl (K, nc) */
        double lq;
        if (naive) {
            /* -log 1/K sum_k pi_kt = -LSE_k(ell_kt - L_k) + log K; rho = softmax_k of it;
             * dloss/dell_ky = -g rho_k ([y = t] - pi_ky) */
            for (int k = 0; k < K; k++)
                om[k] = ell[(size_t)k * nc + t] - Lk[k];
            lq = -softmax(om, K, om) + log(K);
            for (int k = 0; k < K; k++)
                for (int y = 0; y < nc; y++)
                    dl[(size_t)k * nc + y] = -g * om[k] * ((y == t) - pi[(size_t)k * nc + y]);
        } else {
            /* -score_t - LSE_k(-L_k) + log K; omega = softmax_k(-L_k); dloss/dL_k = g omega_k,
             * dL_k/dell_ky = pi_ky */
            for (int k = 0; k < K; k++)
                om[k] = -Lk[k];
            double sc = 0;
            for (int d = 0; d < D; d++) {
                double u = vx[d] + Vt[d], del = mx[d] - mt[d];
                sc -= 0.5 * (LOG2PI + log(u) + del * del / u);
            }
            lq = -sc - softmax(om, K, om) + log(K);
            for (int k = 0; k < K; k++)
                for (int y = 0; y < nc; y++)
                    dl[(size_t)k * nc + y] = g * om[k] * pi[(size_t)k * nc + y];
        }
        sum += lq;
        if (!grad)
            continue;

        /* back through ell_ky = logc_y - 1/2 sum_d (z_kd - m_yd)^2 / V_yd:
         * dz_kd += -dl r / V, dm_yd += dl r / V, dV_yd += dl (-1/2 / V + 1/2 r^2 / V^2) */
        for (int d = 0; d < D; d++)
            dmx[d] = dvx[d] = 0;
        for (int d = 0; d < D; d++) /* gradients of the target's m_t, V_t through c and T */
            gmt[d] = gVt[d] = 0;
        for (int k = 0; k < K; k++) {
            for (int d = 0; d < D; d++) {
                double v = vx[d], u = v + Vt[d];
                z[d] = naive ? mx[d] + sqrt(v) * ep[(size_t)k * D + d]
                             : (Vt[d] * mx[d] + v * mt[d]) / u + sqrt(v * Vt[d] / u) * ep[(size_t)k * D + d];
                dz[d] = 0;
            }
            for (int y = 0; y < nc; y++) {
                double a = dl[(size_t)k * nc + y];
                for (int d = 0; d < D; d++) {
                    size_t o = (size_t)y * D + d;
                    double rr = z[d] - m[o], iv = 1 / V[o];
                    dz[d] -= a * rr * iv;
                    gm[o] += a * rr * iv;
                    gV[o] += a * 0.5 * (rr * rr * iv * iv - iv);
                }
            }
            for (int d = 0; d < D; d++) {
                double v = vx[d], e_ = ep[(size_t)k * D + d];
                if (naive) {
                    /* z = mu + sqrt(v) eps */
                    dmx[d] += dz[d];
                    dvx[d] += dz[d] * e_ / (2 * sqrt(v));
                } else {
                    /* z = c + sqrt(T) eps, c = (V mu + v m) / u, T = v V / u, u = v + V:
                     * dc/dmu = V/u, dc/dm = v/u, dc/dv = V (m - mu) / u^2, dc/dV = v (mu - m) / u^2,
                     * dT/dv = V^2 / u^2, dT/dV = v^2 / u^2 */
                    double Vv = Vt[d], u = v + Vv, T = v * Vv / u, del = mx[d] - mt[d];
                    double dT = dz[d] * e_ / (2 * sqrt(T));
                    dmx[d] += dz[d] * Vv / u;
                    gmt[d] += dz[d] * v / u;
                    dvx[d] += dz[d] * Vv * (-del) / (u * u) + dT * Vv * Vv / (u * u);
                    gVt[d] += dz[d] * v * del / (u * u) + dT * v * v / (u * u);
                }
            }
        }
        if (!naive)
            /* the score term -log N(mu_x; m_t, u), u = var_x + V_t: d/dmu = del/u, d/dm_t = -del/u,
             * d/du = 1/2 / u - 1/2 del^2 / u^2 (times g) */
            for (int d = 0; d < D; d++) {
                double u = vx[d] + Vt[d], del = mx[d] - mt[d];
                double du = g * (0.5 / u - 0.5 * del * del / (u * u));
                dmx[d] += g * del / u;
                gmt[d] -= g * del / u;
                dvx[d] += du;
                gVt[d] += du;
            }
        for (int d = 0; d < D; d++) {
            gm[(size_t)t * D + d] += gmt[d];
            gV[(size_t)t * D + d] += gVt[d];
            if (dmu)
                dmu[(size_t)i * D + d] = (float)dmx[d];
            if (dvar)
                dvar[(size_t)i * D + d] = (float)dvx[d];
        }
    }

    if (grad) {
        /* back through the prototypes: V = S2 + se2; m = S2 M; S2 = 1/P; M = sum w mu; P = sum w;
         * w = 1/a; a = var + se2 */
        for (size_t k = 0; k < cd; k++) {
            dse2 += gV[k];
            gS2[k] = gV[k] + gm[k] * M[k];
            gM[k] = gm[k] * S2[k];
            gP[k] = -gS2[k] * S2[k] * S2[k];
        }
        for (int i = 0; i < n; i++) {
            if (in->query[i])
                continue;
            int y = e.label[i];
            for (int d = 0; d < D; d++) {
                size_t o = (size_t)y * D + d;
                double w = 1 / ((double)in->var[(size_t)i * D + d] + se2);
                double dw = gM[o] * in->mu[(size_t)i * D + d] + gP[o], da = -dw * w * w;
                if (dmu)
                    dmu[(size_t)i * D + d] = (float)(gM[o] * w);
                if (dvar)
                    dvar[(size_t)i * D + d] = (float)da;
                dse2 += da;
            }
        }
        if (dparams)
            dparams[0] += (float)(dse2 * loss_sigmoid(gamma));
    }
    double loss = sum * g;
    stats_fill(st, loss, (double)right / nq, se2, in);
    free(blk);
    episode_free(&e);
    return loss;
}

static const char *const spe_samplers[] = {"intersection", "naive", NULL};
/* --se2-0 gives s_e^2 and the checkpoint keeps gamma = softplus^-1(s_e^2), or the default of
 * spe_settle below */
static const setting spe_settings[SPE_NSET] = {
    [SPE_SE2_0] = {"se2-0", "X", NULL, SETTING_REAL, 1e-6, 1e6, NAN, NULL,
                   "the initial s_e^2 > 0; without it gamma = shots x D x 0.01 (SPE appendix B)"},
    [SPE_GAMMA0] = {NULL, NULL, "gamma0", SETTING_REAL, -1e6, 1e6, 0, NULL, "the initial gamma, s_e^2 = softplus(gamma)"},
    [SPE_SAMPLER] = {"sampler", "NAME", "sampler", SETTING_CHOICE, 0, 0, SPE_INTERSECTION, spe_samplers,
                     "the training sampler: intersection (as the paper trains) or naive"},
};
static const char *const spe_param_names[] = {"spe.gamma", NULL};
static void spe_init_params(const loss_config *cfg, float *params) { params[0] = (float)cfg->own[SPE_GAMMA0]; }
/* SPE appendix B: gamma = |S| d theta with theta = 0.01 (our reading of an equation the
 * extraction garbled), |S| the support per class of the training episodes, d = D */
static const char *spe_settle(loss_config *cfg, int D, int shots)
{
    if (LOSS_GIVEN(cfg, LOSS_OWN(SPE_GAMMA0)))
        return NULL; /* (read from a checkpoint) */
    cfg->own[SPE_GAMMA0] = LOSS_GIVEN(cfg, LOSS_OWN(SPE_SE2_0)) ? loss_softplus_inv(cfg->own[SPE_SE2_0])
                                                                          : (shots > 0 ? shots : 1) * D * 0.01;
    return NULL;
}

const loss_kind loss_spe = {
    .name = "spe",
    .help = "Stochastic Prototype Embeddings: Gaussian prototypes, intersection sampler (episodes, mog -C 1)",
    .needs_var = 1,
    .batches = LOSS_EPISODES,
    .default_K = 1,
    .max_C = 1,
    .nparams = 1,
    .param_names = spe_param_names,
    .init_params = spe_init_params,
    .forward_backward = spe_forward_backward,
    .settings = spe_settings,
    .nsettings = SPE_NSET,
    .settle = spe_settle,
};
