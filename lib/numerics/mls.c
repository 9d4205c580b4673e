/* mls: the mutual likelihood score (lib/numerics/mls.h) */
#include "mls.h"

#include <float.h>
#include "simd.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "par.h"
#include "util.h"

double mls_score(const float *mu1, const float *v1, const float *mu2, const float *v2, int D)
{
    double s = 0;
    for (int l = 0; l < D; l++) {
        double d = (double)mu1[l] - mu2[l], v = (double)v1[l] + v2[l];
        s += d * d / v + log(v);
    }
    return -0.5 * s - 0.5 * D * log(2 * M_PI);
}

void mls_grad(const float *mu1, const float *v1, const float *mu2, const float *v2, int D, double g, float *dmu1,
              float *dv1, float *dmu2, float *dv2)
{
    for (int l = 0; l < D; l++) {
        double d = (double)mu1[l] - mu2[l], v = (double)v1[l] + v2[l];
        double gm = -g * d / v, gv = g * 0.5 * (d * d / (v * v) - 1 / v);
        if (dmu1)
            dmu1[l] += (float)gm;
        if (dmu2)
            dmu2[l] -= (float)gm;
        if (dv1)
            dv1[l] += (float)gv;
        if (dv2)
            dv2[l] += (float)gv;
    }
}

/* ------------------------------------------------------------------ all pairs */

int64_t mls_check_var(const float *var, int64_t n, int D)
{
    for (int64_t e = 0; e < n * D; e++)
        if (!(var[e] >= FLT_MIN))
            return e;
    return -1;
}

mls_set *mls_set_new(const float *mu, const float *var, int64_t n, int D, const int64_t *order)
{
    return mls_set_new_kind(MLS_NEG, mu, var, n, D, order);
}

/* the item's own term of a distance (mls.h): csd its sum of variances, bhatt -1/4 its sum of log
 * variances, in double; 0 for mls and kl */
static double item_term(int kind, const float *var, int D)
{
    double t = 0;
    for (int l = 0; l < D && (kind == MLS_CSD || kind == MLS_BHATT); l++)
        t += kind == MLS_CSD ? (double)var[l] : -0.25 * log((double)var[l]);
    return t;
}

mls_set *mls_set_new_kind(int kind, const float *mu, const float *var, int64_t n, int D, const int64_t *order)
{
    mls_set *S = emalloc(sizeof *S);
    S->kind = kind;
    S->n = n;
    S->D = D;
    S->nb = (n + MLS_LANES - 1) / MLS_LANES;
    size_t all = (size_t)(S->nb ? S->nb : 1) * D * MLS_LANES;
    S->mu = ealloc_aligned(all * sizeof *S->mu);
    S->h = ealloc_aligned(all * sizeof *S->h);
    S->t = emalloc((size_t)(S->nb ? S->nb : 1) * MLS_LANES * sizeof *S->t);
    for (int64_t b = 0; b < S->nb; b++)
        for (int j = 0; j < MLS_LANES; j++) {
            int64_t i = b * MLS_LANES + j, row = i < n ? (order ? order[i] : i) : -1;
            S->t[i] = row >= 0 ? item_term(kind, var + row * D, D) : 0;
            for (int l = 0; l < D; l++) {
                size_t at = ((size_t)b * D + l) * MLS_LANES + j;
                S->mu[at] = row >= 0 ? 0.5f * mu[row * D + l] : 0.0f;
                S->h[at] = row >= 0 ? 0.5f * var[row * D + l] : 1.0f;
            }
        }
    return S;
}

void mls_set_free(mls_set *S)
{
    if (!S)
        return;
    free(S->mu);
    free(S->h);
    free(S->t);
    free(S);
}

static inline uint32_t float_bits(float x)
{
    uint32_t b;
    memcpy(&b, &x, sizeof b);
    return b;
}

static inline float bits_float(uint32_t b)
{
    float x;
    memcpy(&x, &b, sizeof x);
    return x;
}

/* log x for x in [1, 2) (the mantissas' product): x halved above sqrt(2) (k = 1: log 2 added),
 * then log x = 2 atanh(s) = 2 s (1 + z/3 + z^2/5 + ... + z^5/11), s = (x - 1) / (x + 1) in
 * [-0.1716, 0.1716], z = s^2; the first term left out is below 2e-11. Written out so that the
 * vector lanes below compute it in the same operations: libm's log, one per pair, took a third of
 * the kernel's time (24 ns a pair at D = 64, 16 without it; 13 with this, vectorised). */
#define MLS_SQRT2 1.4142135623730951
static inline double log_mantissa(double x)
{
    double k = x > MLS_SQRT2 ? 1.0 : 0.0;
    x = x > MLS_SQRT2 ? 0.5 * x : x;
    double s = (x - 1.0) / (x + 1.0), z = s * s;
    double t = ((((1.0 / 11 * z + 1.0 / 9) * z + 1.0 / 7) * z + 1.0 / 5) * z + 1.0 / 3) * z + 1.0;
    return k * M_LN2 + 2.0 * s * t;
}

/* the lanes' sums into alpha S + (sum log h) / 2 + c + ga[j] (ga NULL: none): -MLS + c with alpha 1
 * (mls.h), Bhattacharyya's with alpha 1/2; S the quadratic sums, P the mantissas' products in
 * [1, 2), Ed the exponents' sums; in double, then float */
static void kernel_finish(const float *S, const float *P, const double *Ed, double alpha, double c, const double *ga,
                          float *out)
{
    int j = 0;
#if HEDGE_SIMD_AVX2
    __m256d one = _mm256_set1_pd(1.0), half = _mm256_set1_pd(0.5), r2 = _mm256_set1_pd(MLS_SQRT2);
    __m256d ln2 = _mm256_set1_pd(M_LN2), two = _mm256_set1_pd(2.0), vc = _mm256_set1_pd(c);
    __m256d k3 = _mm256_set1_pd(1.0 / 3), k5 = _mm256_set1_pd(1.0 / 5), k7 = _mm256_set1_pd(1.0 / 7);
    __m256d k9 = _mm256_set1_pd(1.0 / 9), k11 = _mm256_set1_pd(1.0 / 11);
    __m256d fmax = _mm256_set1_pd(FLT_MAX), va = _mm256_set1_pd(alpha);
    for (; j < MLS_LANES; j += 4) {
        __m256d x = _mm256_cvtps_pd(_mm_loadu_ps(P + j)), big = _mm256_cmp_pd(x, r2, _CMP_GT_OQ);
        __m256d k = _mm256_and_pd(big, one);
        x = _mm256_blendv_pd(x, _mm256_mul_pd(half, x), big);
        __m256d s = _mm256_div_pd(_mm256_sub_pd(x, one), _mm256_add_pd(x, one)), z = _mm256_mul_pd(s, s);
        __m256d t = _mm256_add_pd(_mm256_mul_pd(k11, z), k9);
        t = _mm256_add_pd(_mm256_mul_pd(t, z), k7);
        t = _mm256_add_pd(_mm256_mul_pd(t, z), k5);
        t = _mm256_add_pd(_mm256_mul_pd(t, z), k3);
        t = _mm256_add_pd(_mm256_mul_pd(t, z), one);
        __m256d lg = _mm256_add_pd(_mm256_mul_pd(k, ln2), _mm256_mul_pd(_mm256_mul_pd(two, s), t));
        /* S + 0.5 (ln2 Ed + log P) + c */
        __m256d e = _mm256_add_pd(_mm256_mul_pd(ln2, _mm256_loadu_pd(Ed + j)), lg);
        __m256d sq = _mm256_mul_pd(va, _mm256_cvtps_pd(_mm_loadu_ps(S + j)));
        __m256d r = _mm256_add_pd(_mm256_add_pd(sq, _mm256_mul_pd(half, e)), vc);
        if (ga)
            r = _mm256_add_pd(r, _mm256_loadu_pd(ga + j));
        /* beyond float32 (or +inf): FLT_MAX */
        _mm_storeu_ps(out + j, _mm256_cvtpd_ps(_mm256_min_pd(r, fmax)));
    }
#endif
    for (; j < MLS_LANES; j++) {
        double r = (alpha * S[j] + 0.5 * (M_LN2 * Ed[j] + log_mantissa(P[j]))) + c;
        r = ga ? r + ga[j] : r;
        out[j] = r < FLT_MAX ? (float)r : FLT_MAX;
    }
}

/* -MLS of query (qmu, qvar) against the MLS_LANES items of one block (gm, gh: (D, MLS_LANES)),
 * plus c, into out (mls.h: the kernel). Each lane sums its dimensions in order; every 32
 * dimensions (and at the end) the product P, below 2^32, gives its exponent to E, and E goes into
 * Ed. With AVX2 the lanes are two vectors held in registers (the compiler's vectors of the plain
 * loop kept its sums in memory: a store and a load per dimension, half the time); without it, the
 * same operations lane by lane, the same bits. */
static void kernel(const float *qmu, const float *qvar, const float *gm, const float *gh, int D, double alpha,
                   double c, const double *ga, float *out)
{
    float S[MLS_LANES], P[MLS_LANES];
    int32_t E[MLS_LANES];
    double Ed[MLS_LANES] = {0};
#if HEDGE_SIMD_AVX2
    __m256 s0 = _mm256_setzero_ps(), s1 = s0, one = _mm256_set1_ps(1.0f), p0 = one, p1 = one;
    __m256i e0 = _mm256_setzero_si256(), e1 = e0, bias = _mm256_set1_epi32(127);
    __m256i frac = _mm256_set1_epi32(0x7FFFFF), expo = _mm256_set1_epi32(0x3F800000);
    for (int l = 0; l < D; l++) {
        __m256 m = _mm256_set1_ps(0.5f * qmu[l]), qh = _mm256_set1_ps(0.5f * qvar[l]);
        const float *a = gm + (size_t)l * MLS_LANES, *b = gh + (size_t)l * MLS_LANES;
        __m256 h0 = _mm256_add_ps(qh, _mm256_loadu_ps(b)), h1 = _mm256_add_ps(qh, _mm256_loadu_ps(b + 8));
        __m256 d0 = _mm256_sub_ps(m, _mm256_loadu_ps(a)), d1 = _mm256_sub_ps(m, _mm256_loadu_ps(a + 8));
        s0 = _mm256_add_ps(s0, _mm256_div_ps(_mm256_mul_ps(d0, d0), h0));
        s1 = _mm256_add_ps(s1, _mm256_div_ps(_mm256_mul_ps(d1, d1), h1));
        __m256i x0 = _mm256_castps_si256(h0), x1 = _mm256_castps_si256(h1);
        e0 = _mm256_add_epi32(e0, _mm256_sub_epi32(_mm256_srli_epi32(x0, 23), bias));
        e1 = _mm256_add_epi32(e1, _mm256_sub_epi32(_mm256_srli_epi32(x1, 23), bias));
        p0 = _mm256_mul_ps(p0, _mm256_castsi256_ps(_mm256_or_si256(_mm256_and_si256(x0, frac), expo)));
        p1 = _mm256_mul_ps(p1, _mm256_castsi256_ps(_mm256_or_si256(_mm256_and_si256(x1, frac), expo)));
        if ((l & 31) == 31 || l == D - 1) {
            x0 = _mm256_castps_si256(p0), x1 = _mm256_castps_si256(p1);
            e0 = _mm256_add_epi32(e0, _mm256_sub_epi32(_mm256_srli_epi32(x0, 23), bias));
            e1 = _mm256_add_epi32(e1, _mm256_sub_epi32(_mm256_srli_epi32(x1, 23), bias));
            p0 = _mm256_castsi256_ps(_mm256_or_si256(_mm256_and_si256(x0, frac), expo));
            p1 = _mm256_castsi256_ps(_mm256_or_si256(_mm256_and_si256(x1, frac), expo));
            _mm256_storeu_si256((__m256i *)E, e0);
            _mm256_storeu_si256((__m256i *)(E + 8), e1);
            for (int j = 0; j < MLS_LANES; j++)
                Ed[j] += E[j];
            e0 = e1 = _mm256_setzero_si256();
        }
    }
    _mm256_storeu_ps(S, s0);
    _mm256_storeu_ps(S + 8, s1);
    _mm256_storeu_ps(P, p0);
    _mm256_storeu_ps(P + 8, p1);
#else
    for (int j = 0; j < MLS_LANES; j++)
        S[j] = 0.0f, P[j] = 1.0f, E[j] = 0;
    for (int l = 0; l < D; l++) {
        float m = 0.5f * qmu[l], qh = 0.5f * qvar[l];
        const float *a = gm + (size_t)l * MLS_LANES, *b = gh + (size_t)l * MLS_LANES;
        for (int j = 0; j < MLS_LANES; j++) {
            float h = qh + b[j], d = m - a[j];
            S[j] += d * d / h;
            uint32_t x = float_bits(h); /* h >= FLT_MIN, finite: exponent 1 .. 254 */
            E[j] += (int32_t)(x >> 23) - 127;
            P[j] *= bits_float((x & 0x7FFFFFu) | 0x3F800000u);
        }
        if ((l & 31) == 31 || l == D - 1)
            for (int j = 0; j < MLS_LANES; j++) {
                uint32_t x = float_bits(P[j]);
                E[j] += (int32_t)(x >> 23) - 127;
                P[j] = bits_float((x & 0x7FFFFFu) | 0x3F800000u);
                Ed[j] += E[j];
                E[j] = 0;
            }
    }
#endif
    kernel_finish(S, P, Ed, alpha, c, ga, out);
}

/* csd and kl of query (qmu, qvar) against one block, in float per lane, dimensions in order
 * (mls.h): with e = qmu/2 - gm, qh = qvar/2 and the block's halves,
 *   csd: 4 sum e^2, then + (sum qvar + the item's sum var) in double (c + ga[j])
 *   kl:  sum [(qh - gh)/(4 qh) (qh - gh)/gh + e^2/2 (1/qh + 1/gh)], no cancellation, >= 0, the
 *        quarter inside (a sum beyond float32 is a distance beyond it: FLT_MAX); 1/qh as 2/qvar, at
 *        most 2^127 for a variance of FLT_MIN */
static void kernel_plain(int kind, const float *qmu, const float *qvar, const float *gm, const float *gh, int D,
                         double c, const double *ga, float *out)
{
    float S[MLS_LANES] = {0};
    for (int l = 0; l < D; l++) {
        float m = 0.5f * qmu[l], qh = 0.5f * qvar[l], iq = 2.0f / qvar[l], iq4 = 0.5f / qvar[l]; /* 1/qh, 1/(4qh) */
        const float *a = gm + (size_t)l * MLS_LANES, *b = gh + (size_t)l * MLS_LANES;
        if (kind == MLS_CSD)
            for (int j = 0; j < MLS_LANES; j++) {
                float e = m - a[j];
                S[j] += e * e;
            }
        else
            for (int j = 0; j < MLS_LANES; j++) {
                float e = m - a[j], w = qh - b[j], e2 = 0.5f * (e * e);
                S[j] += (w * iq4) * (w / b[j]) + (e2 * iq + e2 / b[j]); /* no inf x 0: each factor finite */
            }
    }
    for (int j = 0; j < MLS_LANES; j++) {
        double r = kind == MLS_CSD ? 4.0 * S[j] + c + ga[j] : S[j] + c;
        out[j] = r < FLT_MAX ? (float)r : FLT_MAX;
    }
}

void mls_row(const mls_set *G, const float *qmu, const float *qvar, double add, float *row)
{
    int D = G->D, kind = G->kind;
    double c = (kind == MLS_NEG ? 0.5 * D * log(4 * M_PI) : item_term(kind, qvar, D)) + add;
    float out[MLS_LANES];
    for (int64_t b = 0; b < G->nb; b++) {
        size_t at = (size_t)b * D * MLS_LANES;
        int64_t g0 = b * MLS_LANES, m = G->n - g0 < MLS_LANES ? G->n - g0 : MLS_LANES;
        float *o = m == MLS_LANES ? row + g0 : out;
        const double *ga = G->t + g0;
        if (kind == MLS_NEG)
            kernel(qmu, qvar, G->mu + at, G->h + at, D, 1.0, c, NULL, o);
        else if (kind == MLS_BHATT) {
            kernel(qmu, qvar, G->mu + at, G->h + at, D, 0.5, c, ga, o);
            for (int j = 0; j < MLS_LANES; j++) /* >= 0, which the float sums can miss by their rounding */
                o[j] = o[j] > 0 ? o[j] : 0.0f;
        } else
            kernel_plain(kind, qmu, qvar, G->mu + at, G->h + at, D, c, ga, o);
        if (o == out)
            memcpy(row + g0, out, (size_t)m * sizeof *out);
    }
}

double mls_distance(int kind, const float *m1, const float *v1, const float *m2, const float *v2, int D)
{
    if (kind == MLS_NEG)
        return -mls_score(m1, v1, m2, v2, D);
    double s = 0, t = 0;
    for (int l = 0; l < D; l++) {
        double d = (double)m1[l] - m2[l], a = v1[l], b = v2[l];
        if (kind == MLS_CSD)
            s += d * d + a + b;
        else if (kind == MLS_KL)
            s += ((a - b) * (a - b) + d * d * (a + b)) / (4 * a * b);
        else {
            double v = (a + b) / 2;
            s += d * d / (8 * v);
            t += 0.5 * (log(v) - 0.5 * (log(a) + log(b)));
        }
    }
    return kind == MLS_BHATT && s + t < 0 ? 0 : s + t; /* >= 0, which the rounding of t can miss */
}

double mls_floor(const float *gvar, int64_t ng, int D)
{
    double s = 0.5 * D * log(2 * M_PI);
    for (int l = 0; l < D; l++) {
        float lo = gvar[l];
        for (int64_t g = 1; g < ng; g++)
            lo = gvar[g * D + l] < lo ? gvar[g * D + l] : lo;
        s += 0.5 * log((double)lo);
    }
    return s;
}

/* ---- mls_knn */

#define MLS_KNN_TASK 16 /* queries a task */

typedef struct {
    float d;
    int64_t g;
} cand;

typedef struct {
    double d;
    int64_t g;
} ranked;

/* (d, g) pairs compared as the ranking does: distance, then index */
static inline int cand_after(cand a, cand b) { return a.d > b.d || (a.d == b.d && a.g > b.g); }

/* the max-heap h[0 .. n) by cand_after: the root is the worst kept */
static void heap_down(cand *h, int n, int i)
{
    for (;;) {
        int l = 2 * i + 1, r = l + 1, w = i;
        if (l < n && cand_after(h[l], h[w]))
            w = l;
        if (r < n && cand_after(h[r], h[w]))
            w = r;
        if (w == i)
            return;
        cand t = h[i];
        h[i] = h[w];
        h[w] = t;
        i = w;
    }
}

static int ranked_cmp(const void *pa, const void *pb)
{
    const ranked *a = pa, *b = pb;
    if (a->d != b->d)
        return a->d < b->d ? -1 : 1;
    return (a->g > b->g) - (a->g < b->g);
}

typedef struct {
    const float *qmu, *qvar, *gmu, *gvar;
    int64_t nq, ng;
    int D, k, kk;
    const int64_t *exclude;
    const mls_set *G;
    int64_t *nbr;
    double *dist;
} knn_job;

static void knn_task(void *arg, int task, int worker)
{
    (void)worker;
    const knn_job *J = arg;
    int D = J->D, k = J->k;
    float *row = emalloc((size_t)J->ng * sizeof *row);
    cand *heap = emalloc((size_t)J->kk * sizeof *heap);
    ranked *best = emalloc((size_t)J->kk * sizeof *best);
    int64_t q1 = (int64_t)(task + 1) * MLS_KNN_TASK < J->nq ? (int64_t)(task + 1) * MLS_KNN_TASK : J->nq;
    for (int64_t q = (int64_t)task * MLS_KNN_TASK; q < q1; q++) {
        const float *qm = J->qmu + q * D, *qv = J->qvar + q * D;
        int64_t ex = J->exclude ? J->exclude[q] : -1;
        mls_row(J->G, qm, qv, 0, row);
        int n = 0, kk = J->kk;
        for (int64_t g = 0; g < J->ng; g++) {
            if (g == ex)
                continue;
            cand c = {row[g], g};
            if (n < kk) { /* filling: sift up */
                int i = n++;
                heap[i] = c;
                while (i && cand_after(heap[i], heap[(i - 1) / 2])) {
                    cand t = heap[i];
                    heap[i] = heap[(i - 1) / 2];
                    heap[(i - 1) / 2] = t;
                    i = (i - 1) / 2;
                }
            } else if (cand_after(heap[0], c)) {
                heap[0] = c;
                heap_down(heap, n, 0);
            }
        }
        if (n < k) /* cannot happen: mls_knn checked every query's gallery */
            die("internal error: MLS kNN found %d of %d neighbours for query %lld", n, k, (long long)q);
        for (int r = 0; r < n; r++) {
            int64_t g = heap[r].g;
            best[r] = (ranked){mls_distance(J->G->kind, qm, qv, J->gmu + g * D, J->gvar + g * D, D), g};
        }
        qsort(best, (size_t)n, sizeof *best, ranked_cmp);
        for (int r = 0; r < k; r++) {
            J->nbr[q * k + r] = best[r].g;
            if (J->dist)
                J->dist[q * k + r] = best[r].d;
        }
    }
    free(row);
    free(heap);
    free(best);
}

void mls_knn(const float *qmu, const float *qvar, int64_t nq, const float *gmu, const float *gvar, int64_t ng, int D,
             int k, const int64_t *exclude, int threads, int64_t *nbr, double *dist)
{
    mls_knn_kind(MLS_NEG, qmu, qvar, nq, gmu, gvar, ng, D, k, exclude, threads, nbr, dist);
}

void mls_knn_kind(int kind, const float *qmu, const float *qvar, int64_t nq, const float *gmu, const float *gvar,
                  int64_t ng, int D, int k, const int64_t *exclude, int threads, int64_t *nbr, double *dist)
{
    for (int64_t q = 0; q < nq; q++) {
        int64_t avail = ng - (exclude && exclude[q] >= 0 && exclude[q] < ng);
        if (avail < k)
            die("k = %d needs at least %d gallery items per query, query %lld has %lld", k, k, (long long)q,
                (long long)avail);
    }
    int64_t kk = (int64_t)k + MLS_KNN_SLACK;
    if (kk > ng)
        kk = ng;
    mls_set *G = mls_set_new_kind(kind, gmu, gvar, ng, D, NULL);
    knn_job J = {qmu, qvar, gmu, gvar, nq, ng, D, k, (int)kk, exclude, G, nbr, dist};
    int64_t ntasks = (nq + MLS_KNN_TASK - 1) / MLS_KNN_TASK;
    if (threads < 1)
        threads = 1;
    par_for(threads < ntasks ? threads : (int)ntasks, (int)ntasks, knn_task, &J);
    mls_set_free(G);
}
