/* knnpass: the k nearest neighbours of each query taken from the rows of distances that the
 * retrieval ranking computes anyway (lib/measures/retrieval.h: retrieval_job.row_fn), so that kNN and
 * retrieval share one tiled pass over the gallery (lib/engine/hedge.c). The result is metrics_knn's
 * exactly (lib/metrics.h): the k nearest by (d2 in double on the original coordinates, gallery
 * index), never an approximation:
 *   screen   each row's float values f = (qn + gn) + (-2 q.g) (retrieval's, on coordinates
 *            centred on the gallery's mean, clamped at 0) keep the best kk = k + 4 by (f, index),
 *            the excluded item left out (AVX2: eight at a time against the kk-th best so far);
 *   proof    |f - d2| <= E = (D + 24) 2^-24 (qn + the largest gn) + (D + 24) 2^-140, the bound of
 *            metrics_knn's screen with margin (lib/metrics.c KNN_SCREEN_ERR: the same centring,
 *            the same float norms of the centred coordinates): when the kk-th f exceeds the k-th
 *            by more than 2E no dropped item can be among the k nearest; otherwise (near-ties,
 *            duplicates) the query's whole gallery is searched in double;
 *   rerank   the candidates' d2 in double (dist2's order: a multiply then an add, per coordinate,
 *            as metrics.c), the best k by (d2, index).
 * Cost: one compare per gallery item (the f of eight at once), and kk distances in double per
 * query; memory the caller's (nq, k) outputs. Thread-safe: each query writes its own rows.
 *
 *   knnpass P = {.Q = qm, .G = gm, .D = D, .k = 5, .exclude = ex, .nbr = nbr, .d2 = d2};
 *   retrieval_job J = {..., .row_fn = knnpass_row, .row_ctx = &P};
 *   retrieval_run(&J, per, &sum);      // nbr (nq, k), d2 (nq, k) filled as metrics_knn would
 */
#ifndef HEDGE_KNNPASS_H
#define HEDGE_KNNPASS_H
#include <stdint.h>

#define KNNPASS_SLACK 4

typedef struct {
    const float *Q, *G;        /* (nq, D), (ng, D): the original coordinates (retrieval_job's) */
    int D, k;
    const int64_t *exclude;    /* (nq) or NULL */
    int64_t *nbr;              /* (nq, k) out */
    double *d2;                /* (nq, k) out */
    int64_t exact;             /* out: queries searched in full in double (near-ties) */
} knnpass;

/* retrieval_job.row_fn: query q's row of -2 q.g at the gallery's sorted positions j (gidx[j] its
 * index), qn and gn[j] the float squared norms, gnmax the largest gn */
void knnpass_row(void *ctx, int64_t q, const float *row, float qn, const float *gn, float gnmax,
                 const uint32_t *gidx, int64_t ng);
#endif
