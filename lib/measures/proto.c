/* proto: prototypes and class posteriors of PN and SPE (definitions in proto.h) */
#include "proto.h"

#include "simd.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

#define LOG_2PI 1.8378770664093454836

void proto_init(proto_set *P, int n, int D)
{
    if (n < 1 || D < 1)
        die("proto: %d classes of %d dimensions", n, D);
    memset(P, 0, sizeof *P);
    P->n = n;
    P->D = D;
    size_t nd = (size_t)n * D;
    P->m = emalloc(nd * sizeof *P->m);
    P->S2 = emalloc(nd * sizeof *P->S2);
    P->V = emalloc(nd * sizeof *P->V);
    P->iV = emalloc(nd * sizeof *P->iV);
    P->logc = emalloc((size_t)n * sizeof *P->logc);
    /* naive: sd, lo, hi, e (D each); ub, kc, ld (n each); delta, ka (n, D each); keep (n); the
     * kept classes packed for 4 lanes: kc, acc, lv (n4 each), delta, ka (D, n4 each) */
    size_t n4 = ((size_t)n + 3) / 4 * 4;
    P->work = emalloc((4 * (size_t)D + 3 * (size_t)n + 2 * nd) * sizeof *P->work);
    P->pack = ealloc_aligned((3 * n4 + 2 * (size_t)D * n4) * sizeof *P->pack);
    P->iwork = emalloc((size_t)n * sizeof *P->iwork);
}

void proto_free(proto_set *P)
{
    free(P->m);
    free(P->S2);
    free(P->V);
    free(P->iV);
    free(P->logc);
    free(P->work);
    free(P->pack);
    free(P->iwork);
    memset(P, 0, sizeof *P);
}

void proto_gaussian(const float *mu, const float *var, int C, int D, double *mean, double *v)
{
    for (int d = 0; d < D; d++) {
        double s = 0;
        for (int c = 0; c < C; c++)
            s += mu[(size_t)c * D + d];
        double mn = s / C, within = 0, between = 0;
        for (int c = 0; c < C; c++) {
            double u = mu[(size_t)c * D + d] - mn;
            between += u * u;
            if (var)
                within += var[(size_t)c * D + d];
        }
        mean[d] = mn;
        if (v)
            v[d] = within / C + between / C;
    }
}

/* counts (n) of the support items per class; dies on a label out of range or an empty class */
static void count_labels(const proto_set *P, const int *label, int m, int *count)
{
    memset(count, 0, (size_t)P->n * sizeof *count);
    for (int i = 0; i < m; i++) {
        if (label[i] < 0 || label[i] >= P->n)
            die("proto: support item %d has label %d, outside [0, %d)", i, label[i], P->n);
        count[label[i]]++;
    }
    for (int y = 0; y < P->n; y++)
        if (!count[y])
            die("proto: class %d has no support item", y);
}

void proto_fit_pn(proto_set *P, const double *mu, const int *label, int m)
{
    int n = P->n, D = P->D;
    count_labels(P, label, m, P->iwork);
    memset(P->m, 0, (size_t)n * D * sizeof *P->m);
    for (int i = 0; i < m; i++)
        for (int d = 0; d < D; d++)
            P->m[(size_t)label[i] * D + d] += mu[(size_t)i * D + d];
    for (int y = 0; y < n; y++)
        for (int d = 0; d < D; d++)
            P->m[(size_t)y * D + d] /= P->iwork[y];
    P->spe = 0;
    P->se2 = 0;
}

void proto_fit_spe(proto_set *P, const double *mu, const double *var, const int *label, int m, double se2)
{
    int n = P->n, D = P->D;
    if (!(se2 >= 0) || !isfinite(se2))
        die("proto: s_e^2 = %g is not a finite number >= 0", se2);
    count_labels(P, label, m, P->iwork);
    size_t nd = (size_t)n * D;
    /* S2 accumulates sum_i w_i, m accumulates sum_i w_i mu_i, then 1/. and S_y^2 . */
    memset(P->S2, 0, nd * sizeof *P->S2);
    memset(P->m, 0, nd * sizeof *P->m);
    for (int i = 0; i < m; i++)
        for (int d = 0; d < D; d++) {
            double t = var[(size_t)i * D + d] + se2;
            if (!(t > 0) || !isfinite(t))
                die("proto: support item %d, dimension %d: variance + s_e^2 = %g, SPE needs a finite value > 0",
                    i, d, t);
            double w = 1 / t;
            P->S2[(size_t)label[i] * D + d] += w;
            P->m[(size_t)label[i] * D + d] += w * mu[(size_t)i * D + d];
        }
    for (int y = 0; y < n; y++) {
        double lc = 0;
        for (int d = 0; d < D; d++) {
            size_t e = (size_t)y * D + d;
            double S2 = 1 / P->S2[e];
            P->S2[e] = S2;
            P->m[e] *= S2;
            P->V[e] = S2 + se2;
            P->iV[e] = 1 / P->V[e];
            lc += log(P->V[e]);
        }
        P->logc[y] = -0.5 * (D * LOG_2PI + lc);
    }
    P->spe = 1;
    P->se2 = se2;
}

void proto_pn_scores(const proto_set *P, const double *z, double *score)
{
    int D = P->D;
    for (int y = 0; y < P->n; y++) {
        const double *m = P->m + (size_t)y * D;
        double s = 0;
        for (int d = 0; d < D; d++)
            s += (z[d] - m[d]) * (z[d] - m[d]);
        score[y] = -s;
    }
}

static void need_spe(const proto_set *P, const char *what)
{
    if (!P->spe)
        die("proto: %s needs SPE prototypes (proto_fit_spe)", what);
}

void proto_spe_logdens(const proto_set *P, const double *z, double *out)
{
    need_spe(P, "proto_spe_logdens");
    int D = P->D;
    for (int y = 0; y < P->n; y++) {
        const double *m = P->m + (size_t)y * D, *iV = P->iV + (size_t)y * D;
        double q = 0;
        for (int d = 0; d < D; d++)
            q += (z[d] - m[d]) * (z[d] - m[d]) * iV[d];
        out[y] = P->logc[y] - 0.5 * q;
    }
}

static void check_query_var(const double *var, int D)
{
    for (int d = 0; d < D; d++)
        if (!(var[d] >= 0) || !isfinite(var[d]))
            die("proto: query variance %g (dimension %d) is not a finite number >= 0", var[d], d);
}

void proto_spe_closed(const proto_set *P, const double *mu, const double *var, double *score)
{
    need_spe(P, "proto_spe_closed");
    int D = P->D;
    check_query_var(var, D);
    for (int y = 0; y < P->n; y++) {
        const double *m = P->m + (size_t)y * D, *V = P->V + (size_t)y * D;
        /* sum_d log v_d as the log of a product (one log instead of D), the product taken out
         * into the sum before it could overflow or underflow */
        double q = 0, lv = 0, prod = 1;
        for (int d = 0; d < D; d++) {
            double v = var[d] + V[d], u = mu[d] - m[d];
            q += u * u / v;
            if (v > 1e100 || v < 1e-100)
                lv += log(v);
            else if ((prod *= v) > 1e100 || prod < 1e-100) {
                lv += log(prod);
                prod = 1;
            }
        }
        score[y] = -0.5 * (D * LOG_2PI + lv + log(prod) + q);
    }
}

/* the log densities of the classes over a box of z - m: for class j with mean offset
 * delta_j = mu_x - m_j (D) and noise box [lo, hi], ub[j] >= log N(z; m_j, V_j) >= lb[j] for
 * every z in the box; returns max_j lb[j] */
static double box_bounds(int nk, int D, const double *delta, const double *ka, const double *kc, const double *lo,
                         const double *hi, double *ub)
{
    double L = -INFINITY;
    for (int j = 0; j < nk; j++) {
        double qn = 0, qf = 0;
        for (int d = 0; d < D; d++) {
            double u = delta[(size_t)j * D + d], a = u + lo[d], b = u + hi[d]; /* z - m over the box: [a, b] */
            double near = a > 0 ? a : b < 0 ? -b : 0, far = fabs(a) > fabs(b) ? fabs(a) : fabs(b);
            qn += near * near * ka[(size_t)j * D + d];
            qf += far * far * ka[(size_t)j * D + d];
        }
        ub[j] = kc[j] - qn;
        double lb = kc[j] - qf;
        L = lb > L ? lb : L;
    }
    return L;
}

/* the classes j whose ub[j] can come within CUTOFF of L (the margin absorbs rounding when the
 * log densities are huge) */
static int box_keep(int nk, const double *ub, double L, int *keep)
{
    int m = 0;
    for (int j = 0; j < nk; j++)
        if (ub[j] >= L - PROTO_CUTOFF - 1e-9 * (fabs(L) + fabs(ub[j])))
            keep[m++] = j;
    return m;
}

/* the box [lo, hi] (D) of the noise sd eps_k over the K samples of eps (K, D): as sd >= 0, sd
 * times the smallest and the largest eps (rounding is monotone too) */
static void noise_box(const double *eps, int K, int D, const double *sd, double *lo, double *hi)
{
    for (int d = 0; d < D; d++) {
        double l = INFINITY, h = -INFINITY;
        for (int k = 0; k < K; k++) {
            double v = eps[(size_t)k * D + d];
            l = v < l ? v : l;
            h = v > h ? v : h;
        }
        lo[d] = sd[d] * l;
        hi[d] = sd[d] * h;
    }
}

/* e^x for x in [-PROTO_CUTOFF, 0], 4 lanes: x = n ln2 + f with n = round(x / ln2) (the 1.5 x
 * 2^52 trick) and |f| <= ln2 / 2 (Cody and Waite's two-part ln2), e^f by its Taylor polynomial
 * to degree 12 (truncation error below 2e-16 relative), scaled by 2^n in the exponent bits.
 * e^0 = 1 exactly. No denormals in this range. */
static inline __m256d proto_exp4(__m256d x)
{
    const __m256d magic = _mm256_set1_pd(6755399441055744.0);
    __m256d t = _mm256_fmadd_pd(x, _mm256_set1_pd(1.4426950408889634074), magic);
    __m256d n = _mm256_sub_pd(t, magic);
    __m256d f = _mm256_fnmadd_pd(n, _mm256_set1_pd(6.93147180369123816490e-01), x);
    f = _mm256_fnmadd_pd(n, _mm256_set1_pd(1.90821492927058770002e-10), f);
    static const double c[13] = {1.0 / 479001600, 1.0 / 39916800, 1.0 / 3628800, 1.0 / 362880, 1.0 / 40320,
                                 1.0 / 5040, 1.0 / 720, 1.0 / 120, 1.0 / 24, 1.0 / 6, 0.5, 1, 1};
    __m256d p = _mm256_set1_pd(c[0]);
    for (int i = 1; i < 13; i++)
        p = _mm256_fmadd_pd(p, f, _mm256_set1_pd(c[i]));
    __m256i sc = _mm256_slli_epi64(_mm256_sub_epi64(_mm256_castpd_si256(t), _mm256_castpd_si256(magic)), 52);
    return _mm256_castsi256_pd(_mm256_add_epi64(_mm256_castpd_si256(p), sc));
}

void proto_spe_naive(proto_set *P, const double *mu, const double *var, const double *eps, int K, double *p)
{
    need_spe(P, "proto_spe_naive");
    int n = P->n, D = P->D;
    check_query_var(var, D);
    if (K < 1)
        die("proto: the naive sampler needs K >= 1 samples, got %d", K);
    /* scratch: sd, lo, hi, e (D); ub, kc, ld (n); delta, ka (n, D); keep (n) */
    double *sd = P->work, *lo = sd + D, *hi = lo + D, *e = hi + D;
    double *ub = e + D, *kc = ub + n, *ld = kc + n;
    double *delta = ld + n, *ka = delta + (size_t)n * D;
    int *keep = P->iwork;

    /* Every class, over the box of all the samples' noise sqrt(var) eps: ub and lb bound its log
     * density (nearest and farthest corner); every sample's best class is at least L = max lb.
     * A class with ub < L - CUTOFF is below e^-CUTOFF of the best at every sample: p = 0, and it
     * is left out of the samples' softmax. (Bounding again over blocks of samples did not pay:
     * the classes left are near most samples.) */
    for (int d = 0; d < D; d++)
        sd[d] = sqrt(var[d]);
    noise_box(eps, K, D, sd, lo, hi);
    for (int y = 0; y < n; y++) {
        p[y] = 0;
        kc[y] = P->logc[y];
        for (int d = 0; d < D; d++) {
            delta[(size_t)y * D + d] = mu[d] - P->m[(size_t)y * D + d];
            ka[(size_t)y * D + d] = 0.5 * P->iV[(size_t)y * D + d];
        }
    }
    int nk = box_keep(n, ub, box_bounds(n, D, delta, ka, kc, lo, hi, ub), keep);
    if (nk == 1) { /* one class takes everything */
        p[keep[0]] = 1;
        return;
    }
    /* the kept classes' parameters, packed dimension-major for 4 lanes and padded to n4 with
     * classes whose log density is -1e300 (they fall below the cutoff at every sample) */
    int n4 = (nk + 3) / 4 * 4;
    double *pk = P->pack, *acc = pk + n4, *lv = acc + n4, *pd = lv + n4, *pa = pd + (size_t)D * n4;
    for (int j = 0; j < n4; j++) {
        int y = j < nk ? keep[j] : keep[0];
        pk[j] = j < nk ? kc[y] : -1e300;
        acc[j] = 0;
        for (int d = 0; d < D; d++) {
            pd[(size_t)d * n4 + j] = delta[(size_t)y * D + d];
            pa[(size_t)d * n4 + j] = ka[(size_t)y * D + d];
        }
    }
    /* per sample, the kept classes' log densities, then their softmax, where a class more than
     * CUTOFF below the sample's best gets 0; 4 classes per AVX2 vector */
    const __m256d cut = _mm256_set1_pd(-PROTO_CUTOFF);
    for (int k = 0; k < K; k++) {
        for (int d = 0; d < D; d++)
            e[d] = sd[d] * eps[(size_t)k * D + d];
        __m256d vmx = _mm256_set1_pd(-INFINITY);
        for (int j = 0; j < n4; j += 4) {
            __m256d l = _mm256_load_pd(pk + j);
            for (int d = 0; d < D; d++) {
                __m256d u = _mm256_add_pd(_mm256_load_pd(pd + (size_t)d * n4 + j), _mm256_set1_pd(e[d]));
                l = _mm256_fnmadd_pd(_mm256_mul_pd(_mm256_load_pd(pa + (size_t)d * n4 + j), u), u, l);
            }
            _mm256_store_pd(lv + j, l);
            vmx = _mm256_max_pd(vmx, l);
        }
        double m4[4];
        _mm256_storeu_pd(m4, vmx);
        double mx = fmax(fmax(m4[0], m4[1]), fmax(m4[2], m4[3]));
        __m256d vm = _mm256_set1_pd(mx), vs = _mm256_setzero_pd();
        for (int j = 0; j < n4; j += 4) {
            __m256d x = _mm256_sub_pd(_mm256_load_pd(lv + j), vm);
            __m256d keepm = _mm256_cmp_pd(x, cut, _CMP_GE_OQ);
            __m256d w = _mm256_and_pd(proto_exp4(_mm256_max_pd(x, cut)), keepm);
            _mm256_store_pd(lv + j, w);
            vs = _mm256_add_pd(vs, w);
        }
        double s4[4];
        _mm256_storeu_pd(s4, vs);
        __m256d inv = _mm256_set1_pd(1 / ((s4[0] + s4[1]) + (s4[2] + s4[3])));
        for (int j = 0; j < n4; j += 4)
            _mm256_store_pd(acc + j, _mm256_fmadd_pd(_mm256_load_pd(lv + j), inv, _mm256_load_pd(acc + j)));
    }
    for (int j = 0; j < nk; j++)
        p[keep[j]] = acc[j];
    for (int y = 0; y < n; y++)
        p[y] /= K;
}

double proto_spe_intersection(proto_set *P, const double *mu, const double *var, int y, const double *eps, int K)
{
    need_spe(P, "proto_spe_intersection");
    int n = P->n, D = P->D;
    check_query_var(var, D);
    if (y < 0 || y >= n)
        die("proto: class %d outside [0, %d)", y, n);
    if (K < 1)
        die("proto: the intersection sampler needs K >= 1 samples, got %d", K);
    double *sdT = P->work, *cmu = sdT + D, *ld = cmu + D;
    const double *my = P->m + (size_t)y * D, *Vy = P->V + (size_t)y * D;
    proto_spe_closed(P, mu, var, ld);
    double score = ld[y];
    /* T_y and c_y - mu_x = var_x (m_y - mu_x) / (var_x + V_y): z_k - m_y' is formed as
     * (mu_x - m_y') + (c_y - mu_x) + sqrt(T_y) eps_k, relative to mu_x for precision */
    for (int d = 0; d < D; d++) {
        double t = var[d] + Vy[d];
        sdT[d] = sqrt(var[d] * Vy[d] / t);
        cmu[d] = var[d] * (my[d] - mu[d]) / t;
    }
    /* log 1/K sum_k 1 / sum_y' N(z_k; m_y', V_y'): a running logsumexp of -logsumexp_y' */
    double lse = -INFINITY;
    for (int k = 0; k < K; k++) {
        for (int yy = 0; yy < n; yy++) {
            const double *m = P->m + (size_t)yy * D, *iV = P->iV + (size_t)yy * D;
            double q = 0;
            for (int d = 0; d < D; d++) {
                double u = (mu[d] - m[d]) + cmu[d] + sdT[d] * eps[(size_t)k * D + d];
                q += u * u * iV[d];
            }
            ld[yy] = P->logc[yy] - 0.5 * q;
        }
        double t = -proto_logsumexp(ld, n), mx = t > lse ? t : lse;
        lse = mx + log(exp(t - mx) + exp(lse - mx));
    }
    return score + lse - log((double)K);
}

void proto_softmax(const double *score, int n, double *p)
{
    double mx = score[0];
    for (int i = 1; i < n; i++)
        mx = score[i] > mx ? score[i] : mx;
    double s = 0;
    for (int i = 0; i < n; i++) {
        double x = score[i] - mx;
        p[i] = x < -746 ? 0 : exp(x); /* exp underflows to 0 there anyway, slowly */
        s += p[i];
    }
    for (int i = 0; i < n; i++)
        p[i] /= s;
}

double proto_logsumexp(const double *x, int n)
{
    double mx = x[0];
    for (int i = 1; i < n; i++)
        mx = x[i] > mx ? x[i] : mx;
    if (!isfinite(mx))
        return mx;
    double s = 0;
    for (int i = 0; i < n; i++)
        s += x[i] - mx < -746 ? 0 : exp(x[i] - mx);
    return mx + log(s);
}

int proto_argmax(const double *x, int n)
{
    int b = 0;
    double m = x[0];
    for (int i = 1; i < n; i++)
        if (x[i] > m) {
            m = x[i];
            b = i;
        }
    return b;
}

double proto_uncertainty(const double *p, int n)
{
    /* the sum of the others rather than 1 - max: exact down to the smallest shares */
    int b = proto_argmax(p, n);
    double rest = 0;
    for (int i = 0; i < n; i++)
        if (i != b)
            rest += p[i];
    return rest;
}

double proto_uncertainty_scores(const double *score, int n)
{
    int b = proto_argmax(score, n);
    double second = -INFINITY;
    for (int i = 0; i < n; i++)
        if (i != b && score[i] > second)
            second = score[i];
    /* rest = sum_{i != b} exp(score_i - score_b); terms below e^-CUTOFF of its largest term
     * change it by less than n e^-CUTOFF relative */
    double top = second - score[b], rest = 0;
    if (!(top >= -746))
        return 0;
    for (int i = 0; i < n; i++) {
        double x = score[i] - score[b];
        if (i != b && x >= top - PROTO_CUTOFF)
            rest += exp(x);
    }
    return rest / (1 + rest);
}
