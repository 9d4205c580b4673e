/* ce: the two-tower losses of Cross-Example Softmax (cross-example-softmax-veit-2020 section 3,
 * Eqs. 2, 3, 5, 6; the equations the extraction lost are in ../shared/papers/NOTES.md) and the
 * paper's angular-margin baseline, on P x K batches (groupbatch, batcher -m pk).
 *
 * Query j is the query tower's embedding of image j's class, qmu_j (n, D); image k has the
 * point embedding mu_k (n, 1, D). Both are L2-normalised with the guard of loss_util.h,
 *   q_j = qmu_j / sqrt(||qmu_j||^2 + LOSS_DIST_EPS),  d_k = mu_k / sqrt(||mu_k||^2 + LOSS_DIST_EPS),
 * c_jk = q_j . d_k (the cosine), s_jk = scale c_jk. The positive of query j is image j (the
 * diagonal). Every other image k of query j's class (cls[k] == cls[j], k != j) is a match too:
 * it is masked, i.e. never a negative and not a positive term either. The non-matching pairs are
 * the (j, k) with cls[k] != cls[j]. Every loss is the MEAN over the n queries (NOTES.md writes
 * the sum), and each query's term is
 *   l_j = -log( e^{P_j} / (e^{P_j} + sum_{(i,k) in N} e^{s_ik}) ) = softplus(LSE_N(s) - P_j)
 * with the positive logit P_j = s_jj (cemargin: scale psi(c_jj)) and the negative set N:
 *   sampled_softmax (Eq. 2): N = N_j, every non-matching image k of query j (pairs (j, k));
 *   snm (Eq. 3): N = the cfg->own[CE_TOPK] (--ce-topk) highest-scoring pairs of N_j (all of N_j when it has no
 *     more); the paper mines "the 50% largest scores" of each negative set;
 *   cesoftmax (Eq. 5): N = ALL non-matching pairs (i, k) of the batch, every query i: one
 *     shared denominator for every query;
 *   cenm (Eq. 6): N = the t = ceil(cfg->own[CE_FRAC] M) (--ce-frac) highest-scoring of the batch's M non-matching
 *     pairs (at least 1; computed as ceil(frac M - 1e-9), so that 0.3 x 10 is 3), shared as in
 *     cesoftmax;
 *   cemargin: the paper's margin-based rows, L-Softmax (Liu et al. 2016) and A-Softmax
 *     (SphereFace, Liu et al. 2017), are sampled softmax with a multiplicative angular margin on
 *     the positive: P_j = scale psi(c_jj), N = N_j, psi(theta) = (-1)^k cos(m theta) - 2k for
 *     theta = acos(c) in [k pi/m, (k+1) pi/m], m = cfg->margin, an integer from 1 to 8. With
 *     both towers normalised the two coincide (L-Softmax's ||W|| ||x|| becomes the scale). psi is
 *     continuous, decreasing in theta, C^1 (its derivative vanishes at every k pi/m), computed
 *     without acos: cos(m theta) = T_m(c), d cos(m theta)/dc = m U_{m-1}(c) (Chebyshev
 *     polynomials), k = #{i in 1..m-1 : c < cos(i pi/m)}. m = 1 is sampled_softmax exactly, so cemargin
 *     takes m = 2 when --margin is not given (L-Softmax uses 2 to 4, SphereFace 4 with an
 *     annealing from plain softmax that we do not do). The
 *     scores are never margined for the stats or retrieval: the margin is a training device.
 * The LSE is computed stably (the max first), so a scale of 1e3 gives finite values.
 *
 * The scale: learned, one loss parameter "ce.log_scale" = log(scale) (log-parametrised: scale =
 * exp(log_scale) > 0, and Adam's steps move it by a factor, as for CLIP's temperature),
 * initialised to log(cfg->own[CE_SCALE0]) (--ce-scale0); dL/dlog_scale = scale dL/dscale ADDS into dparams[0].
 *
 * Selection (snm, cenm): pairs are ranked by score, higher first; equal scores go to the pair
 * of lower linear index j n + k, i.e. the lower query, then the lower image. The selection is
 * then held fixed for the gradient (piecewise smooth, as the triplet mining).
 *
 * Gradients: with G_jk = dL/ds_jk (for a negative: (1/n) sigmoid(LSE - P_j) e^{s_jk - LSE},
 * summed over the queries sharing that pair; for the positive: -(1/n) sigmoid(LSE - P_j)),
 * dL/dc = scale G (the positive of cemargin: times psi'), dL/dscale = sum G s / scale (psi for the
 * cemargin positive), dL/dq_j = sum_k dL/dc_jk d_k, dL/dd_k = sum_j dL/dc_jk q_j, and through the
 * guarded normalisation x -> x / sqrt(||x||^2 + eps): dL/dx = (g - q (q . g)) / ||x||_eps.
 *
 * Stats: nll = the loss; acc = the fraction of queries whose highest-scoring image in the batch
 * (by the cosine; lowest index on ties) is a match (same class); a = the current scale (so train
 * logs it); b, se2 = NaN; kl = mean_var = 0. dmu, in->dqmu and dparams may be NULL.
 * Bad input dies: C != 1, a variance, no qmu, no classes, a batch of one class (no negatives),
 * no parameters, ce_topk < 1 (snm), ce_frac outside (0, 1] (cenm), m not an integer in 1..8.
 * Cost: O(n^2 D) (three n x n x D products) plus O(n^2) for the selections (quickselect of the
 * t-th largest score, then the ties at it by index).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "loss.h"
#include "loss_util.h"
#include "util.h"

enum { CE_SAMPLED, CE_SNM, CE_SOFTMAX, CE_NM, CE_MARGIN };

/* The settings (cfg->own[CE_*]). The scale of the cosine scores starts at ce_scale0 = 10 and is
 * learned. The paper's value was lost in the extraction ("scaled with a factor of ."); 10 sits
 * between NormFace's bound for a softmax over normalised vectors to reach probability p = 0.9
 * against n - 1 negatives, (n-1)/n log((n-1) p / (1-p)) = 7.0 for n = 128 (one query's row), and
 * the same for a shared set of n^2 pairs, 11.9 (cesoftmax): large enough that the softmax is not
 * stuck near uniform, small enough that the first steps do not saturate. ce_topk = 32 for snm:
 * the paper keeps "the 50% largest scores" of each negative set; half of the 63 negatives of a
 * 64-class batch (2-digit MNIST has 70 training classes). ce_frac = 0.5 for cenm, the paper's.
 * Every two-tower checkpoint carries the three keys (so they keep the bytes of the versions
 * before the tables); a loss that does not use one keeps it as no option. */
enum { CE_SCALE0, CE_TOPK, CE_FRAC, CE_NSET };
/* OPT(option, arg): the option, or NULL NULL for a setting its loss keeps as no option */
#define CE_SET_SCALE0 {"ce-scale0", "X", "ce_scale0", SETTING_REAL, 1e-3, 1e4, 10, NULL, "the initial scale of the cosine scores (learned)"}
#define CE_SET_TOPK(opt, arg) {opt, arg, "ce_topk", SETTING_INT, 1, 1000000, 32, NULL, "the hardest negatives kept per query"}
#define CE_SET_FRAC(opt, arg)                                                                                     \
    {opt, arg, "ce_frac", SETTING_REAL, 1e-9, 1, 0.5, NULL, "the fraction of the batch's non-matching pairs kept"}
static const setting ce_settings[CE_NSET] = {CE_SET_SCALE0, CE_SET_TOPK(NULL, NULL), CE_SET_FRAC(NULL, NULL)};
static const setting snm_settings[CE_NSET] = {CE_SET_SCALE0, CE_SET_TOPK("ce-topk", "K"), CE_SET_FRAC(NULL, NULL)};
static const setting cenm_settings[CE_NSET] = {CE_SET_SCALE0, CE_SET_TOPK(NULL, NULL), CE_SET_FRAC("ce-frac", "F")};
static const char *const ce_names[] = {"sampled_softmax", "snm", "cesoftmax", "cenm", "cemargin"};
#define CE_MAX_M 8

/* the t-th largest of v[0..m) (1 <= t <= m), using v and tmp (m) as scratch: quickselect around
 * a median of three, each pass a branchless three-way split (the larger values to the front of
 * the other buffer, the smaller ones to its back, the equal ones dropped: a branch per element
 * would be mispredicted half the time) */
static double ce_kth_largest(double *v, double *tmp, long m, long t)
{
    long want = t - 1;
    while (m > 1) {
        double a = v[0], b = v[m / 2], c = v[m - 1];
        double p = a > b ? (b > c ? b : a > c ? c : a) : (a > c ? a : b > c ? c : b);
        long nh = 0, nl = 0;
        for (long i = 0; i < m; i++) {
            double x = v[i];
            tmp[nh] = x;
            tmp[m - 1 - nl] = x;
            nh += x > p;
            nl += x < p;
        }
        /* tmp[0..nh) > p, tmp[m-nl..m) < p, the rest (at least the pivot itself) == p */
        double *sw = v;
        v = tmp, tmp = sw;
        if (want < nh)
            m = nh;
        else if (want < m - nl)
            return p;
        else {
            want -= m - nl;
            v += m - nl;
            tmp += m - nl;
            m = nl;
        }
    }
    return v[0];
}

/* keeps, of the candidate pairs idx[0..m) (linear indices, increasing), the t that rank first:
 * higher score first, equal scores by lower index; they stay in idx[0..t), in increasing order.
 * Returns their number. v (2 m) is scratch. */
static long ce_top(long *idx, long m, long t, const double *s, double *v)
{
    if (t >= m)
        return m;
    for (long i = 0; i < m; i++)
        v[i] = s[idx[i]];
    double thr = ce_kth_largest(v, v + m, m, t);
    long above = 0, out = 0;
    for (long i = 0; i < m; i++)
        above += s[idx[i]] > thr;
    long ties = t - above; /* of the scores equal to thr, the first `ties` by index */
    for (long i = 0; i < m; i++) { /* branchless: half of these tests go either way */
        double x = s[idx[i]];
        long eq = x == thr, keep = (x > thr) | (eq & (ties > 0));
        idx[out] = idx[i];
        out += keep;
        ties -= eq & keep;
    }
    return out;
}

/* four doubles (GCC/Clang vector extension: AVX2 with -march=x86-64-v3); at -O2 GCC 12 does not
 * vectorise plain loops of unknown length, and these carry the n x n x D products */
typedef double ce_v4 __attribute__((vector_size(32)));
static inline ce_v4 ce_load(const double *p)
{
    ce_v4 v;
    memcpy(&v, p, sizeof v);
    return v;
}
static inline void ce_store(double *p, ce_v4 v) { memcpy(p, &v, sizeof v); }

/* y += a x over m doubles */
static inline void ce_axpy(double *restrict y, const double *restrict x, double a, int m)
{
    int i = 0;
    for (; i + 4 <= m; i += 4)
        ce_store(y + i, ce_load(y + i) + a * ce_load(x + i));
    for (; i < m; i++)
        y[i] += a * x[i];
}

/* x . y over m doubles */
static inline double ce_dot(const double *restrict x, const double *restrict y, int m)
{
    ce_v4 acc = {0, 0, 0, 0};
    int i = 0;
    for (; i + 4 <= m; i += 4)
        acc += ce_load(x + i) * ce_load(y + i);
    double s = (acc[0] + acc[1]) + (acc[2] + acc[3]);
    for (; i < m; i++)
        s += x[i] * y[i];
    return s;
}

/* LSE over s[idx[0..m)] (m >= 1); w[i] = e^{s[idx[i]] - LSE}, the softmax weights */
static double ce_lse(const double *s, const long *idx, long m, double *w)
{
    double mx = -INFINITY, sum = 0;
    for (long i = 0; i < m; i++)
        mx = s[idx[i]] > mx ? s[idx[i]] : mx;
    for (long i = 0; i < m; i++)
        sum += w[i] = exp(s[idx[i]] - mx);
    for (long i = 0; i < m; i++)
        w[i] /= sum;
    return mx + log(sum);
}

/* the A-Softmax psi(theta) as a function of c = cos(theta), and dpsi/dc */
static double ce_psi(int m, double c, double *dpsi)
{
    double t0 = 1, t1 = c, u0 = 1, u1 = 2 * c; /* T_0, T_1; U_0, U_1 */
    for (int i = 1; i < m; i++) {
        double t2 = 2 * c * t1 - t0;
        t0 = t1, t1 = t2;
    }
    for (int i = 1; i < m - 1; i++) {
        double u2 = 2 * c * u1 - u0;
        u0 = u1, u1 = u2;
    }
    double um1 = m == 1 ? 1 : u1; /* U_{m-1}(c) */
    int k = 0;
    for (int i = 1; i < m; i++)
        k += c < cos(i * M_PI / m);
    double sign = k & 1 ? -1 : 1;
    *dpsi = sign * m * um1;
    return sign * t1 - 2 * k;
}

static double ce_common(int form, const loss_config *cfg, const loss_input *in, const float *params, float *dparams,
                        float *dmu, loss_stats *st)
{
    const char *name = ce_names[form];
    int n = in->n, D = in->D;
    const int32_t *cls = in->cls;
    if (in->C != 1)
        die("%s loss: needs one point embedding per image (C = 1), got C = %d", name, in->C);
    if (in->var)
        die("%s loss: takes point embeddings (--head point), not a variance", name);
    if (!in->qmu)
        die("%s loss: needs the query tower's embedding of every image's class (qmu)", name);
    if (!cls)
        die("%s loss: needs the class of every image (P x K batches; batcher -m pk)", name);
    if (!params)
        die("%s loss: needs its parameter (ce.log_scale)", name);
    if (n < 2 || D < 1)
        die("%s loss: a batch of %d images of %d dimensions has no negatives", name, n, D);
    int has_neg = 0;
    for (int i = 1; i < n && !has_neg; i++)
        has_neg = cls[i] != cls[0];
    if (!has_neg)
        die("%s loss: a batch of one class has no negatives (batcher -m pk -P 2 or more)", name);
    int topk = (int)cfg->own[CE_TOPK];
    double frac = cfg->own[CE_FRAC];
    if (form == CE_SNM && topk < 1)
        die("%s loss: keeps the top %d negatives per query: needs 1 or more", name, topk);
    if (form == CE_NM && !(frac > 0 && frac <= 1))
        die("%s loss: keeps a fraction %g of the non-matching pairs: needs one in (0, 1]", name, frac);
    int m = cfg->margin >= 1 && cfg->margin <= CE_MAX_M ? (int)cfg->margin : 0;
    if (form == CE_MARGIN && !(m >= 1 && cfg->margin == m))
        die("%s loss: the angular margin m (--margin) must be an integer from 1 to %d, got %g", name, CE_MAX_M,
            cfg->margin);
    double scale = exp((double)params[0]);
    if (!(scale > 0) || !isfinite(scale))
        die("%s loss: the scale exp(%g) is not positive and finite", name, (double)params[0]);

    /* q, d (n, D) normalised, dT = d^T (D, n); gq, gd (n, D) and gdT (D, n): dL/dq, dL/dd and its
     * transpose; c, s, G (n, n): cosines, scores, dL/ds; idx: the
     * candidate pairs (linear indices j n + k), w (2 n^2): their softmax weights, first the
     * selections' scratch */
    size_t nn = (size_t)n * n, nd = (size_t)n * D;
    double *q = emalloc(sizeof(double) * (6 * nd + 5 * nn + 6 * (size_t)n));
    double *d = q + nd, *dT = d + nd, *gq = dT + nd, *gd = gq + nd, *gdT = gd + nd, *c = gdT + nd, *s = c + nn;
    double *G = s + nn;
    double *w = G + nn, *nq = w + 2 * nn, *ndn = nq + n, *P = ndn + n, *dpsi = P + n, *gP = dpsi + n;
    long *idx = emalloc(sizeof(long) * nn);
    loss_normalise(in->qmu, n, D, q, nq);
    loss_normalise(in->mu, n, D, d, ndn);
    for (int k = 0; k < n; k++)
        for (int t = 0; t < D; t++)
            dT[(size_t)t * n + k] = d[(size_t)k * D + t];
    /* c = q d^T, row by row, eight images at a time summed over t in registers */
    for (int j = 0; j < n; j++) {
        double *cj = c + (size_t)j * n, *sj = s + (size_t)j * n;
        const double *qj = q + (size_t)j * D;
        int k = 0;
        for (; k + 8 <= n; k += 8) {
            ce_v4 a0 = {0, 0, 0, 0}, a1 = a0;
            for (int t = 0; t < D; t++) {
                const double *dt = dT + (size_t)t * n + k;
                a0 += qj[t] * ce_load(dt);
                a1 += qj[t] * ce_load(dt + 4);
            }
            ce_store(cj + k, a0);
            ce_store(cj + k + 4, a1);
        }
        for (; k < n; k++)
            cj[k] = ce_dot(qj, d + (size_t)k * D, D);
        for (k = 0; k < n; k++)
            sj[k] = scale * cj[k];
    }
    /* the stats' accuracy: the best image of each query by the cosine, lowest index on ties */
    int right = 0;
    for (int j = 0; j < n; j++) {
        const double *cj = c + (size_t)j * n;
        /* the row's maximum in four lanes (no chain through the index), then its first index */
        double m4[4] = {cj[0], cj[0], cj[0], cj[0]};
        int k = 0;
        for (; k + 4 <= n; k += 4)
            for (int l = 0; l < 4; l++)
                m4[l] = cj[k + l] > m4[l] ? cj[k + l] : m4[l];
        for (; k < n; k++)
            m4[0] = cj[k] > m4[0] ? cj[k] : m4[0];
        double mx = m4[0] > m4[1] ? m4[0] : m4[1], my = m4[2] > m4[3] ? m4[2] : m4[3];
        mx = mx > my ? mx : my;
        int best = 0;
        while (best < n - 1 && cj[best] != mx) /* (NaN scores: stop at the end) */
            best++;
        right += cls[best] == cls[j];
    }
    memset(G, 0, sizeof(double) * nn);
    /* the positive logits */
    for (int j = 0; j < n; j++) {
        double cjj = c[(size_t)j * n + j];
        if (form == CE_MARGIN)
            P[j] = scale * ce_psi(m, cjj, &dpsi[j]);
        else
            P[j] = scale * cjj, dpsi[j] = 1;
    }

    double sum = 0;
    if (form == CE_SOFTMAX || form == CE_NM) {
        /* one shared negative set: all non-matching pairs, or the top fraction of them */
        long M = 0;
        for (int j = 0; j < n; j++)
            for (int k = 0; k < n; k++)
                if (cls[k] != cls[j])
                    idx[M++] = (long)j * n + k;
        long t = M;
        if (form == CE_NM) {
            t = (long)ceil(frac * (double)M - 1e-9); /* 0.3 x 10 is 3, whatever the rounding */
            t = ce_top(idx, M, t < 1 ? 1 : t, s, w);
        }
        double lse = ce_lse(s, idx, t, w), sig = 0;
        for (int j = 0; j < n; j++) {
            sum += loss_softplus(lse - P[j]);
            gP[j] = -loss_sigmoid(lse - P[j]) / n;
            sig -= gP[j];
        }
        for (long i = 0; i < t; i++)
            G[idx[i]] = sig * w[i];
    } else {
        /* per query: its own non-matching images, or the top ce_topk of them */
        for (int j = 0; j < n; j++) {
            long M = 0;
            for (int k = 0; k < n; k++)
                if (cls[k] != cls[j])
                    idx[M++] = (long)j * n + k;
            long t = M;
            if (form == CE_SNM)
                t = ce_top(idx, M, topk, s, w);
            double lse = ce_lse(s, idx, t, w);
            sum += loss_softplus(lse - P[j]);
            double sig = loss_sigmoid(lse - P[j]) / n;
            gP[j] = -sig;
            for (long i = 0; i < t; i++)
                G[idx[i]] = sig * w[i];
        }
    }
    double loss = sum / n;

    int want_q = in->dqmu != NULL;
    if (dmu || want_q || dparams) {
        /* dL/dscale: the negatives s = scale c, the positives P = scale psi(c) (psi(c) = c) */
        double dscale = 0;
        for (int j = 0; j < n; j++)
            dscale += ce_dot(G + (size_t)j * n, c + (size_t)j * n, n);
        for (int j = 0; j < n; j++)
            dscale += gP[j] * P[j] / scale;
        if (dparams)
            dparams[0] += (float)(dscale * scale); /* d scale / d log_scale = scale */
        /* dL/dc into G: scale G off the diagonal; the diagonal is never a negative */
        for (size_t i = 0; i < nn; i++)
            G[i] *= scale;
        for (int j = 0; j < n; j++)
            G[(size_t)j * n + j] = scale * gP[j] * dpsi[j];
        /* dL/dq_j = sum_k G_jk d_k; dL/dd^T = sum_j q_j G_j (rows of G: long vectors), then gd */
        memset(gdT, 0, sizeof(double) * nd);
        for (int j = 0; j < n; j++) {
            const double *Gj = G + (size_t)j * n;
            for (int t = 0; t < D; t++) {
                gq[(size_t)j * D + t] = ce_dot(Gj, dT + (size_t)t * n, n);
                ce_axpy(gdT + (size_t)t * n, Gj, q[(size_t)j * D + t], n);
            }
        }
        for (int k = 0; k < n; k++)
            for (int t = 0; t < D; t++)
                gd[(size_t)k * D + t] = gdT[(size_t)t * n + k];
        if (want_q)
            loss_unnormalise(q, nq, gq, n, D, in->dqmu);
        if (dmu)
            loss_unnormalise(d, ndn, gd, n, D, dmu);
    }
    if (st) {
        memset(st, 0, sizeof *st);
        st->nll = loss;
        st->acc = (double)right / n;
        st->a = scale;
        st->b = st->se2 = NAN;
    }
    free(idx);
    free(q);
    return loss;
}

#define CE_ENTRY(fn, form)                                                                                        \
    static double fn(const loss_config *cfg, const loss_input *in, const float *params, float *dparams, float *dmu, \
                     float *dvar, rng *r, loss_stats *st)                                                         \
    {                                                                                                             \
        (void)dvar, (void)r;                                                                                      \
        return ce_common(form, cfg, in, params, dparams, dmu, st);                                                \
    }
CE_ENTRY(sampled_forward_backward, CE_SAMPLED)
CE_ENTRY(snm_forward_backward, CE_SNM)
CE_ENTRY(cesoftmax_forward_backward, CE_SOFTMAX)
CE_ENTRY(cenm_forward_backward, CE_NM)
CE_ENTRY(cemargin_forward_backward, CE_MARGIN)

static const char *const ce_param_names[] = {"ce.log_scale", NULL};
static void ce_init_params(const loss_config *cfg, float *params)
{
    double scale0 = cfg->own[CE_SCALE0];
    if (!(scale0 > 0) || !isfinite(scale0))
        die("two-tower loss: the initial scale %g must be positive and finite", scale0);
    params[0] = (float)log(scale0);
}

/* cemargin: the angular margin m of L-Softmax, an integer 1..8, 2 when not given (m = 1 is
 * sampled softmax itself) */
static const char *cemargin_settle(loss_config *cfg, int D, int shots)
{
    static char msg[96];
    (void)D, (void)shots;
    if (!LOSS_GIVEN(cfg, LOSS_MARGIN))
        cfg->margin = 2;
    if (cfg->margin != (int)cfg->margin || cfg->margin < 1 || cfg->margin > CE_MAX_M) {
        snprintf(msg, sizeof msg, "--margin %g: the cemargin loss takes an integer angular margin 1..%d", cfg->margin,
                 CE_MAX_M);
        return msg;
    }
    return NULL;
}

#define CE_KIND(var, nm, hlp, fn, set, settle_fn)                                                                \
    const loss_kind var = {                                                                                       \
        .name = nm,                                                                                               \
        .help = hlp,                                                                                              \
        .needs_var = 0,                                                                                           \
        .batches = LOSS_GROUPS,                                                                                   \
        .needs_query = 1,                                                                                         \
        .max_C = 1,                                                                                               \
        .nparams = 1,                                                                                             \
        .param_names = ce_param_names,                                                                            \
        .init_params = ce_init_params,                                                                            \
        .forward_backward = fn,                                                                                   \
        .settings = set,                                                                                          \
        .nsettings = CE_NSET,                                                                                     \
        .settle = settle_fn,                                                                                      \
    }
CE_KIND(loss_sampled_softmax, "sampled_softmax",
        "sampled softmax over in-batch negatives, query tower x image (P x K batches, learned scale)",
        sampled_forward_backward, ce_settings, NULL);
CE_KIND(loss_snm, "snm", "stochastic negative mining: sampled softmax over the top-k negatives per query (--ce-topk)",
        snm_forward_backward, snm_settings, NULL);
CE_KIND(loss_cesoftmax, "cesoftmax",
        "Cross-Example Softmax: every query against all non-matching pairs of the batch (Veit et al. 2020)",
        cesoftmax_forward_backward, ce_settings, NULL);
CE_KIND(loss_cenm, "cenm",
        "Cross-Example Negative Mining: against the top fraction of the batch's non-matching pairs (--ce-frac)",
        cenm_forward_backward, cenm_settings, NULL);
CE_KIND(loss_cemargin, "cemargin",
        "A-/L-Softmax baseline: sampled softmax with angular margin psi(m theta) on the positive (--margin m, integer)",
        cemargin_forward_backward, ce_settings, cemargin_settle);
