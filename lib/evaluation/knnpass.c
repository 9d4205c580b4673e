/* knnpass: kNN from the retrieval pass's rows (lib/evaluation/knnpass.h) */
#include "knnpass.h"

#include <math.h>
#include <stdlib.h>

#include "knn_eval.h"
#include "knn_search.h"
#include "util.h"

#include "simd.h"

#define KK_MAX (KNN_MAXK + KNNPASS_SLACK)

static void push_f(float *cf, int64_t *ci, int *cnt, int cap, float f, int64_t g)
{
    int c = *cnt;
    if (c == cap && !(f < cf[c - 1] || (f == cf[c - 1] && g < ci[c - 1])))
        return;
    int pos = c < cap ? c++ : cap - 1;
    while (pos > 0 && (cf[pos - 1] > f || (cf[pos - 1] == f && ci[pos - 1] > g))) {
        cf[pos] = cf[pos - 1];
        ci[pos] = ci[pos - 1];
        pos--;
    }
    cf[pos] = f;
    ci[pos] = g;
    *cnt = c;
}

static inline float fval(float qn, float gn, float dot)
{
    float d = qn + gn + dot;
    return d > 0 ? d : 0.0f;
}

void knnpass_row(void *ctx, int64_t q, const float *row, float qn, const float *gn, float gnmax,
                 const uint32_t *gidx, int64_t ng)
{
    knnpass *P = ctx;
    int k = P->k, kk = k + KNNPASS_SLACK, D = P->D, c = 0;
    int64_t ex = P->exclude ? P->exclude[q] : -1;
    float cf[KK_MAX];
    int64_t ci[KK_MAX];
    int64_t j = 0;
#if HEDGE_SIMD_AVX2
    __m256 vq = _mm256_set1_ps(qn), zero = _mm256_setzero_ps();
    for (; j + 8 <= ng; j += 8) {
        __m256 f = _mm256_max_ps(_mm256_add_ps(_mm256_add_ps(vq, _mm256_loadu_ps(gn + j)), _mm256_loadu_ps(row + j)), zero);
        float thr = c == kk ? cf[kk - 1] : INFINITY;
        unsigned m = (unsigned)_mm256_movemask_ps(_mm256_cmp_ps(f, _mm256_set1_ps(thr), _CMP_LE_OQ));
        for (; m; m &= m - 1) {
            int64_t jj = j + __builtin_ctz(m);
            if ((int64_t)gidx[jj] != ex)
                push_f(cf, ci, &c, kk, fval(qn, gn[jj], row[jj]), gidx[jj]);
        }
    }
#endif
    for (; j < ng; j++)
        if ((int64_t)gidx[j] != ex)
            push_f(cf, ci, &c, kk, fval(qn, gn[j], row[j]), gidx[j]);
    /* the proof (knnpass.h); fewer than kk candidates: every item is one */
    int exact = 0;
    if (c == kk) {
        double E = ((double)D + 24) * 0x1p-24 * ((double)qn + gnmax) + ((double)D + 24) * 0x1p-140;
        exact = !((double)cf[kk - 1] > (double)cf[k - 1] + 2 * E);
    }
    double dd[KK_MAX];
    int64_t di[KK_MAX];
    int n = 0;
    const float *qv = P->Q + q * D;
    if (exact) {
        for (int64_t g = 0; g < ng; g++)
            if (g != ex)
                metrics_best_push(dd, di, &n, k, metrics_dist2(qv, P->G + g * D, D, 0.0), g);
        __atomic_fetch_add(&P->exact, 1, __ATOMIC_RELAXED);
    } else
        for (int r = 0; r < c; r++)
            metrics_best_push(dd, di, &n, k, metrics_dist2(qv, P->G + ci[r] * D, D, 0.0), ci[r]);
    if (n < k)
        die("internal error: knnpass found %d of %d neighbours for query %lld", n, k, (long long)q);
    for (int r = 0; r < k; r++) {
        P->nbr[q * k + r] = di[r];
        P->d2[q * k + r] = dd[r];
    }
}
