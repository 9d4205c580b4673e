/* knn_search: the exact k nearest neighbours behind a float screen. Contract: knn_search.h. */
#include "knn_search.h"

#include <float.h>
#include "simd.h"
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "blas.h"
#include "par.h"
#include "rng.h"
#include "util.h"

#define SCAN_CHUNK 32
/* an item whose squared norm or added term exceeds this stays out of the float screen: with every
 * term below it, ||q||^2 + x + ||g||^2 + x' - 2 q.g stays below 6/16 of FLT_MAX, so no float sum
 * can overflow (coordinates up to about 4.6e18) */
#define KNN_FLOAT_LIMIT ((double)FLT_MAX / 16)

typedef struct {
    const float *Q, *G;
    const float *qt, *gt;  /* per-query / per-gallery-item float terms (norm + extra); gt is
                            * INFINITY for a huge gallery item, which the screen never keeps */
    const uint8_t *qbig;   /* (nq) 1: a huge query, searched in double only */
    int64_t nq, ng;
    int D, kk;
    const int64_t *exclude;
    float *cd;             /* (nq, kk) candidate distances, sorted */
    int64_t *ci;           /* (nq, kk) candidate indices */
    int *cnt;              /* (nq) candidates held */
    float **dot;           /* (workers) each worker's block of distances, made at its first task */
} knn_job;

/* (d, g) into the sorted list cd, ci of *cnt entries (room kk) by (d, index); d not below
 * INFINITY (a big item) is never kept. Returns the list's bound: its last d when full, else
 * INFINITY */
static inline float cand_push(float *cd, int64_t *ci, int *cnt, int kk, float d, int64_t g)
{
    int c = *cnt;
    if (!(d < INFINITY))
        return c == kk ? cd[kk - 1] : INFINITY;
    if (c == kk && (d > cd[kk - 1] || (d == cd[kk - 1] && g > ci[kk - 1])))
        return cd[kk - 1];
    int pos = c < kk ? c++ : kk - 1;
    while (pos > 0 && (cd[pos - 1] > d || (cd[pos - 1] == d && ci[pos - 1] > g))) {
        cd[pos] = cd[pos - 1];
        ci[pos] = ci[pos - 1];
        pos--;
    }
    cd[pos] = d;
    ci[pos] = g;
    *cnt = c;
    return c == kk ? cd[kk - 1] : INFINITY;
}

/* candidate lists (value, index) kept unsorted: selection of the best and sorting, by that order */
static inline int cand_less(const float *cd, const int64_t *ci, int a, int b)
{
    return cd[a] < cd[b] || (cd[a] == cd[b] && ci[a] < ci[b]);
}

static inline void cand_swap(float *cd, int64_t *ci, int a, int b)
{
    float d = cd[a];
    int64_t g = ci[a];
    cd[a] = cd[b], ci[a] = ci[b];
    cd[b] = d, ci[b] = g;
}

/* Lomuto's partition of [lo, hi] (hi > lo) about the median of lo, the middle and hi; returns the
 * pivot's final position */
static int cand_partition(float *cd, int64_t *ci, int lo, int hi)
{
    int mid = lo + (hi - lo) / 2;
    if (cand_less(cd, ci, mid, lo))
        cand_swap(cd, ci, mid, lo);
    if (cand_less(cd, ci, hi, lo))
        cand_swap(cd, ci, hi, lo);
    if (cand_less(cd, ci, mid, hi))
        cand_swap(cd, ci, mid, hi); /* hi: the median of the three */
    int s = lo;
    for (int i = lo; i < hi; i++)
        if (cand_less(cd, ci, i, hi))
            cand_swap(cd, ci, i, s++);
    cand_swap(cd, ci, s, hi);
    return s;
}

/* [0, n) rearranged so that position m holds the (m + 1)-th smallest, the smaller before it */
static void cand_select(float *cd, int64_t *ci, int n, int m)
{
    int lo = 0, hi = n - 1;
    while (hi > lo) {
        int s = cand_partition(cd, ci, lo, hi);
        if (s == m)
            return;
        if (s < m)
            lo = s + 1;
        else
            hi = s - 1;
    }
}

/* [lo, hi] sorted by (value, index) */
static void cand_sort(float *cd, int64_t *ci, int lo, int hi)
{
    while (hi - lo >= 16) {
        int s = cand_partition(cd, ci, lo, hi);
        if (s - lo < hi - s) { /* the smaller side by recursion: depth log n */
            cand_sort(cd, ci, lo, s - 1);
            lo = s + 1;
        } else {
            cand_sort(cd, ci, s + 1, hi);
            hi = s - 1;
        }
    }
    for (int i = lo + 1; i <= hi; i++)
        for (int j = i; j > lo && cand_less(cd, ci, j, j - 1); j--)
            cand_swap(cd, ci, j, j - 1);
}

/* a query's bound shared between workers (knn_screen_self): relaxed atomics, a stale value only
 * prunes less */
static inline float bound_get(float *shared)
{
    float b;
    __atomic_load(shared, &b, __ATOMIC_RELAXED);
    return b;
}

/* a worker's list bound w, published if lower than the shared one; returns the lower */
static inline float bound_put(float *shared, float w)
{
    float b = bound_get(shared);
    if (w < b)
        __atomic_store(shared, &w, __ATOMIC_RELAXED);
    return w < b ? w : b;
}

/* a query's sorted candidates cd, ci (*cnt held, room kk) against the items j0 .. j0 + n - 1,
 * whose float values are base + gt[u] + row[u], item ex left out: each item at or below the
 * bound goes to cand_push (by value, then index). The bound: the list's last value once full;
 * with shared (knn_screen_self), the query's bound shared between workers, read at the start and
 * lowered as the list fills */
static void scan_items(float *cd, int64_t *ci, int *cnt, int kk, float *shared, float base, const float *gt,
                       const float *row, int64_t j0, int64_t n, int64_t ex)
{
    float worst = shared ? bound_get(shared) : *cnt == kk ? cd[kk - 1] : INFINITY;
    for (int64_t u0 = 0; u0 < n; u0 += SCAN_CHUNK) {
        int64_t m = n - u0 < SCAN_CHUNK ? n - u0 : SCAN_CHUNK;
        float dv[SCAN_CHUNK];
        int any = 0;
        if (m == SCAN_CHUNK) /* the common case, in a form the compiler vectorises */
            for (int u = 0; u < SCAN_CHUNK; u++) {
                dv[u] = base + gt[u0 + u] + row[u0 + u];
                any |= dv[u] <= worst;
            }
        else
            for (int u = 0; u < m; u++) {
                dv[u] = base + gt[u0 + u] + row[u0 + u];
                any |= dv[u] <= worst;
            }
        if (!any)
            continue;
        for (int u = 0; u < m; u++)
            if (dv[u] <= worst && j0 + u0 + u != ex) {
                worst = cand_push(cd, ci, cnt, kk, dv[u], j0 + u0 + u);
                if (shared)
                    worst = bound_put(shared, worst);
            }
    }
}

/* one row of a distance block into query q's sorted candidates */
static void scan_row(const knn_job *J, int64_t q, const float *row, int64_t g0, int64_t gb)
{
    scan_items(J->cd + q * J->kk, J->ci + q * J->kk, &J->cnt[q], J->kk, NULL, J->qt[q], J->gt + g0, row, g0, gb,
               J->exclude ? J->exclude[q] : -1);
}

/* task: the query block q0 = task x METRICS_QBLOCK against the whole gallery */
static void knn_block(void *arg, int task, int worker)
{
    const knn_job *J = arg;
    int D = J->D;
    if (!J->dot[worker])
        J->dot[worker] = ealloc_aligned((size_t)METRICS_QBLOCK * METRICS_GBLOCK * sizeof *J->dot[worker]);
    float *dot = J->dot[worker];
    int64_t q0 = (int64_t)task * METRICS_QBLOCK;
    int64_t qb = J->nq - q0 < METRICS_QBLOCK ? J->nq - q0 : METRICS_QBLOCK;
    for (int64_t g0 = 0; g0 < J->ng; g0 += METRICS_GBLOCK) {
        int64_t gb = J->ng - g0 < METRICS_GBLOCK ? J->ng - g0 : METRICS_GBLOCK;
        /* dot (qb, gb) = -2 Q[q0 : q0+qb] G[g0 : g0+gb]^T */
        blas_sgemm(0, 1, (int)qb, (int)gb, D, -2.0f, J->Q + q0 * D, D, J->G + g0 * D, D, 0.0f, dot, (int)gb);
        for (int64_t r = 0; r < qb; r++)
            if (!J->qbig[q0 + r])
                scan_row(J, q0 + r, dot + r * gb, g0, gb);
    }
}

/* ||q - g||^2 + extra, directly in double: no overflow for float coordinates (knn_search.h) */
double metrics_dist2(const float *q, const float *g, int D, double extra)
{
    double s = extra;
    for (int d = 0; d < D; d++) {
        double u = (double)q[d] - (double)g[d];
        s += u * u;
    }
    return s;
}

/* dist2 of q against the n rows g[0 .. n) (extra[i] added to each), into out: the same bits as
 * dist2 row by row (each lane sums its terms in dist2's order, a multiply then an add), four rows at
 * once with AVX2: the re-ranking's sums were a chain of dependent additions */
static void dist2_rows(const float *q, const float *const *g, int64_t n, int D, const double *extra, double *out)
{
    int64_t i = 0;
#if HEDGE_SIMD_AVX2
    for (; i + 4 <= n; i += 4) {
        __m256d s = _mm256_set_pd(extra[i + 3], extra[i + 2], extra[i + 1], extra[i]);
        const float *g0 = g[i], *g1 = g[i + 1], *g2 = g[i + 2], *g3 = g[i + 3];
        int d = 0;
        for (; d + 4 <= D; d += 4) {
            __m128 r0 = _mm_loadu_ps(g0 + d), r1 = _mm_loadu_ps(g1 + d), r2 = _mm_loadu_ps(g2 + d),
                   r3 = _mm_loadu_ps(g3 + d);
            _MM_TRANSPOSE4_PS(r0, r1, r2, r3); /* r0: coordinate d of the four rows, ... */
            __m128 c[4] = {r0, r1, r2, r3};
            for (int e = 0; e < 4; e++) {
                __m256d u = _mm256_sub_pd(_mm256_set1_pd((double)q[d + e]), _mm256_cvtps_pd(c[e]));
                s = _mm256_add_pd(s, _mm256_mul_pd(u, u));
            }
        }
        for (; d < D; d++) {
            __m256d u = _mm256_sub_pd(_mm256_set1_pd((double)q[d]),
                                      _mm256_cvtps_pd(_mm_set_ps(g3[d], g2[d], g1[d], g0[d])));
            s = _mm256_add_pd(s, _mm256_mul_pd(u, u));
        }
        _mm256_storeu_pd(out + i, s);
    }
#endif
    for (; i < n; i++)
        out[i] = metrics_dist2(q, g[i], D, extra[i]);
}

/* (s, g) into the best cap of dd/di, sorted by (distance, index); *cnt held so far (knn_search.h) */
void metrics_best_push(double *dd, int64_t *di, int *cnt, int cap, double s, int64_t g)
{
    int c = *cnt;
    if (c == cap && !(s < dd[c - 1] || (s == dd[c - 1] && g < di[c - 1])))
        return;
    int pos = c < cap ? c++ : cap - 1;
    while (pos > 0 && (dd[pos - 1] > s || (dd[pos - 1] == s && di[pos - 1] > g))) {
        dd[pos] = dd[pos - 1];
        di[pos] = di[pos - 1];
        pos--;
    }
    dd[pos] = s;
    di[pos] = g;
    *cnt = c;
}

/* the exponent of the lowest set bit of a float x != 0: x = odd integer * 2^that */
static int float_lowbit(float x)
{
    uint32_t b;
    memcpy(&b, &x, sizeof b);
    int ex = (int)(b >> 23 & 255);
    uint32_t man = b & 0x7fffff;
    if (ex)
        man |= 0x800000;
    else
        ex = 1; /* subnormal */
    return ex - 150 + __builtin_ctz(man);
}

void metrics_centre(const float *Q, int64_t nq, const float *G, int64_t ng, int D, double limit, double *mean)
{
    int64_t n = 0;
    for (int d = 0; d < D; d++)
        mean[d] = 0;
    for (int64_t g = 0; g < ng; g++) {
        double norm = 0;
        for (int d = 0; d < D; d++)
            norm += (double)G[g * D + d] * G[g * D + d];
        if (!(norm <= limit))
            continue;
        n++;
        for (int d = 0; d < D; d++)
            mean[d] += G[g * D + d];
    }
    /* the coarsest power of two 2^a[d] that divides every coordinate d of G and Q: one pass over
     * the rows (not a strided pass per coordinate) */
    int *a = emalloc((size_t)(D ? D : 1) * sizeof *a);
    for (int d = 0; d < D; d++)
        a[d] = INT_MAX;
    for (int pass = 0; pass < (Q == G && nq == ng ? 1 : 2); pass++) {
        const float *X = pass ? Q : G;
        for (int64_t i = 0, m = pass ? nq : ng; i < m; i++)
            for (int d = 0; d < D; d++)
                if (X[i * D + d] != 0) {
                    int b = float_lowbit(X[i * D + d]);
                    a[d] = b < a[d] ? b : a[d];
                }
    }
    for (int d = 0; d < D; d++)
        mean[d] = !n || mean[d] == 0 ? 0 : ldexp(nearbyint(ldexp(mean[d] / (double)n, -a[d])), a[d]);
    free(a);
}

/* every coordinate finite and every added term a finite number >= 0, else dies naming the item */
static void knn_check(const char *what, const float *X, const double *x, int64_t n, int D)
{
    for (int64_t i = 0; i < n; i++) {
        for (int d = 0; d < D; d++)
            if (!isfinite(X[i * D + d]))
                die("kNN: %s %lld has a coordinate %g that is not finite", what, (long long)i, (double)X[i * D + d]);
        double e = x ? x[i] : 0.0;
        if (!(e >= 0) || !isfinite(e))
            die("kNN: %s %lld: the added term %g is not a finite number >= 0", what, (long long)i, e);
    }
}

/* Xc (n, D) = X - mean rounded to float, t (n) the float term of each centred item (squared norm +
 * extra), big (n) whether it is too large to screen (its Xc row is then 0, unused) */
static void knn_centre(const float *X, const double *x, int64_t n, int D, const double *mean, float *Xc, float *t,
                       uint8_t *big)
{
    for (int64_t i = 0; i < n; i++) {
        double norm = 0, e = x ? x[i] : 0.0;
        for (int d = 0; d < D; d++) {
            double v = (double)X[i * D + d] - mean[d];
            norm += v * v;
        }
        big[i] = !(norm <= KNN_FLOAT_LIMIT && e <= KNN_FLOAT_LIMIT);
        norm = 0;
        for (int d = 0; d < D; d++) {
            float c = big[i] ? 0.0f : (float)((double)X[i * D + d] - mean[d]);
            Xc[i * D + d] = c;
            norm += (double)c * c;
        }
        t[i] = big[i] ? INFINITY : (float)(norm + e);
    }
}

typedef struct {
    const float *X;
    const double *x, *mean;
    int64_t n;
    int D, tasks;
    float *Xc, *t;
    uint8_t *big;
} centre_job;

static void centre_task(void *arg, int task, int worker)
{
    const centre_job *J = arg;
    int64_t lo = par_lo(J->n, J->tasks, task), hi = par_lo(J->n, J->tasks, task + 1);
    knn_centre(J->X + lo * J->D, J->x ? J->x + lo : NULL, hi - lo, J->D, J->mean, J->Xc + lo * J->D, J->t + lo,
               J->big + lo);
}

/* knn_centre on the workers, each item on its own: the same bytes for any thread count */
static void knn_centre_par(const float *X, const double *x, int64_t n, int D, const double *mean, float *Xc, float *t,
                           uint8_t *big, int threads)
{
    centre_job J = {X, x, mean, n, D, n < 4096 ? 1 : 4 * threads, Xc, t, big};
    par_for(threads, J.tasks, centre_task, &J);
}

/* The float screen's error. For a query q and gallery item g that are not big, with q', g' their
 * centred float coordinates and S = t[q] + t[g] (their float terms, in double), the screen's value
 *     f = (t[q] + t[g]) + (-2 q'.g')    (float additions; q'.g' from sgemm, any order or FMA)
 * differs from the double re-ranking's d2 (knn's dist2 on the original coordinates) by at most
 *     E = KNN_SCREEN_ERR(D) * S + KNN_SCREEN_ABS(D),   u = 2^-24 (float's unit roundoff):
 *   t[q], t[g] rounded to float                        u S
 *   the dot product of D terms (gamma_D = D u / (1 - D u); 2 |q'.g'| <= S)  gamma_D S
 *   the two float additions, on sums below (2 + 3u + gamma_D) S           (2u + 2u) S
 *   centring: q' = (q - m)(1 + theta), |theta| <= u per coordinate, moves
 *     ||q' - g'||^2 by at most 2 u (|q - m| + |g - m|)^2 <= 4 u S (1 + u)^2        4u S
 *   d2 in double (D + 2 roundings of 2^-53 on at most 2 S)               < u S
 * in all (D + 10) u S plus terms of order u^2 S; KNN_SCREEN_ERR takes (D + 16) u. Subnormal
 * underflow adds at most 2^-149 per rounding: KNN_SCREEN_ABS. */
#define KNN_SCREEN_ERR(D) (((double)(D) + 16) * 0x1p-24)
#define KNN_SCREEN_ABS(D) (((double)(D) + 16) * 0x1p-140)

/* the float screen of every query (blocks of METRICS_QBLOCK) against the whole gallery: each
 * query's kk best float values, cd (nq, kk) sorted, ci their indices, cnt how many */
static void knn_screen(const float *Q, const float *qt, const uint8_t *qbig, int64_t nq, const float *G,
                       const float *gt, int64_t ng, int D, int kk, const int64_t *exclude, int threads, float *cd,
                       int64_t *ci, int *cnt)
{
    int64_t nblocks = (nq + METRICS_QBLOCK - 1) / METRICS_QBLOCK;
    if (threads > nblocks)
        threads = (int)(nblocks ? nblocks : 1);
    /* each worker runs single-threaded sgemms on its own query blocks: BLAS's own threads would
     * only fight ours, and every block's numbers stay the same whatever the thread count */
    int blas_saved = blas_threads();
    blas_set_threads(1);
    float *dot[PAR_MAXTHREADS] = {0};
    knn_job job = {Q, G, qt, gt, qbig, nq, ng, D, kk, exclude, cd, ci, cnt, dot};
    par_for(threads, (int)nblocks, knn_block, &job);
    for (int t = 0; t < PAR_MAXTHREADS; t++)
        free(dot[t]);
    blas_set_threads(blas_saved);
}

/* ---- the leave-one-out screen by symmetry
 * With the gallery as its own query set, the float value of a pair is the same both ways:
 * (t[q] + t[g]) + (-2 q'.g') with q'.g' = g'.q' and t[q] + t[g] = t[g] + t[q] (float addition
 * commutes). So the distance matrix is computed in square tiles of KNN_SYM_BLOCK items on and
 * above the diagonal only, half the sgemm work of knn_screen: tile (I, J), I < J, is scanned by
 * rows (the queries of block I against the items of J) and by columns (the queries of J against
 * the items of I); a diagonal tile by rows. Task I takes the tile (I, I) in a first pass and the
 * tiles (I, J > I) in a second. The queries of J
 * are thus updated by whichever worker holds a tile (I, J), so each worker keeps its own
 * candidate lists for every query and the lists are merged at the end: every pair is scanned
 * exactly once, each list holds the best of its pairs by (float value, gallery index), so the
 * merge is the best kk of all the query's pairs by that order, whichever worker saw which: the
 * same candidates whatever the thread count, and the same proof for the re-ranking.
 * Pruning: a worker's full list proves that an item above its last entry is not among the
 * query's best kk, so each query has one shared bound, the lowest such last entry any worker has
 * published (relaxed atomic loads and stores: a stale bound only prunes less), and every scan
 * passes an item only at or below it. The diagonal tiles run first, so that every query starts
 * the off-diagonal tiles with a bound from its own block (the columns' lists, one per worker, each
 * start empty). Even so the columns hand more to the scalar insertion than the rows (20,000 x 128
 * random, -k 5: 600,000 32-item chunks with a candidate against 367,000) and take about twice
 * their time. Which items a worker prunes depends on timing; the merged lists do not.
 * Memory: (nq, kk) candidates per worker (knn_screen_self is used while they fit KNN_SYM_MEMORY). */
#define KNN_SYM_BLOCK 256
#define KNN_SYM_MEMORY ((int64_t)1 << 30)

typedef struct {
    const float *X, *t;    /* (n, D) centred, (n) float terms: INFINITY for a big item */
    const uint8_t *big;
    int64_t n;
    int D, kk, nb;
    const int64_t *exclude;
    float *bound;          /* (n) each query's shared bound (above); -INFINITY for a big query */
    int diag;              /* the pass: 1 the diagonal tiles, 0 the others */
    float *cd[PAR_MAXTHREADS]; /* each worker's lists (n, kk), made at its first task */
    int64_t *ci[PAR_MAXTHREADS];
    int *cnt[PAR_MAXTHREADS];
    float *tile[PAR_MAXTHREADS];
} knn_sym_job;


/* the rows of a tile: query i0 + r against items j0 .. j0 + jb - 1 (row r: their -2 q'.g') */
static void sym_rows(const knn_sym_job *J, int worker, const float *tile, int64_t i0, int64_t ib, int64_t j0,
                     int64_t jb)
{
    int kk = J->kk;
    for (int64_t r = 0; r < ib; r++) {
        int64_t q = i0 + r;
        if (!J->big[q])
            scan_items(J->cd[worker] + q * kk, J->ci[worker] + q * kk, J->cnt[worker] + q, kk, &J->bound[q], J->t[q],
                       J->t + j0, tile + r * jb, j0, jb, J->exclude ? J->exclude[q] : -1);
    }
}

/* the columns of a tile: query j0 + u against items i0 .. i0 + ib - 1, read row by row (each
 * row's items against all the tile's queries at once, a bound per query) */
static void sym_cols(const knn_sym_job *J, int worker, const float *tile, int64_t i0, int64_t ib, int64_t j0,
                     int64_t jb)
{
    int kk = J->kk;
    float worst[KNN_SYM_BLOCK];
    float *cdw = J->cd[worker];
    int64_t *ciw = J->ci[worker];
    int *cntw = J->cnt[worker];
    const float *qt = J->t + j0;
    for (int64_t u = 0; u < jb; u++)
        worst[u] = bound_get(&J->bound[j0 + u]);
    for (int64_t r = 0; r < ib; r++) {
        int64_t g = i0 + r;
        if (J->big[g])
            continue; /* its float value is INFINITY: never a candidate */
        const float *row = tile + r * jb;
        float tg = J->t[g];
        for (int64_t u0 = 0; u0 < jb; u0 += SCAN_CHUNK) {
            int64_t m = jb - u0 < SCAN_CHUNK ? jb - u0 : SCAN_CHUNK;
            float dv[SCAN_CHUNK];
            int any = 0;
            /* (t[query] + t[item]) + dot, as by rows */
            if (m == SCAN_CHUNK)
                for (int u = 0; u < SCAN_CHUNK; u++) {
                    dv[u] = qt[u0 + u] + tg + row[u0 + u];
                    any |= dv[u] <= worst[u0 + u];
                }
            else
                for (int u = 0; u < m; u++) {
                    dv[u] = qt[u0 + u] + tg + row[u0 + u];
                    any |= dv[u] <= worst[u0 + u];
                }
            if (!any)
                continue;
            for (int u = 0; u < m; u++) {
                int64_t j = j0 + u0 + u;
                if (dv[u] <= worst[u0 + u] && !(J->exclude && J->exclude[j] == g))
                    worst[u0 + u] =
                        bound_put(&J->bound[j], cand_push(cdw + j * kk, ciw + j * kk, cntw + j, kk, dv[u], g));
            }
        }
    }
}

/* task I: the tile (I, I) in the first pass (J->diag), the tiles (I, J > I) in the second */
static void sym_task(void *arg, int task, int worker)
{
    knn_sym_job *J = arg;
    int64_t n = J->n, B = KNN_SYM_BLOCK;
    if (!J->tile[worker]) {
        J->tile[worker] = ealloc_aligned((size_t)B * B * sizeof *J->tile[worker]);
        J->cd[worker] = emalloc((size_t)n * J->kk * sizeof *J->cd[worker]);
        J->ci[worker] = emalloc((size_t)n * J->kk * sizeof *J->ci[worker]);
        J->cnt[worker] = ecalloc((size_t)n, sizeof *J->cnt[worker]);
    }
    float *tile = J->tile[worker];
    int64_t i0 = (int64_t)task * B, ib = n - i0 < B ? n - i0 : B;
    for (int64_t j0 = J->diag ? i0 : i0 + B; j0 < (J->diag ? i0 + 1 : n); j0 += B) {
        int64_t jb = n - j0 < B ? n - j0 : B;
        /* tile (ib, jb) = -2 X[i0 : i0+ib] X[j0 : j0+jb]^T */
        blas_sgemm(0, 1, (int)ib, (int)jb, J->D, -2.0f, J->X + i0 * J->D, J->D, J->X + j0 * J->D, J->D, 0.0f, tile,
                   (int)jb);
        sym_rows(J, worker, tile, i0, ib, j0, jb);
        if (j0 != i0)
            sym_cols(J, worker, tile, i0, ib, j0, jb);
    }
}

/* knn_screen for the gallery against itself; returns 0 (and does nothing) when the workers'
 * candidate lists would not fit KNN_SYM_MEMORY */
static int knn_screen_self(const float *X, const float *t, const uint8_t *big, int64_t n, int D, int kk,
                           const int64_t *exclude, int threads, float *cd, int64_t *ci, int *cnt)
{
    int nb = (int)((n + KNN_SYM_BLOCK - 1) / KNN_SYM_BLOCK);
    if (threads > nb)
        threads = nb ? nb : 1;
    if ((double)threads * (double)n * kk * (sizeof *cd + sizeof *ci) > (double)KNN_SYM_MEMORY)
        return 0;
    int blas_saved = blas_threads();
    blas_set_threads(1);
    knn_sym_job J = {.X = X, .t = t, .big = big, .n = n, .D = D, .kk = kk, .nb = nb, .exclude = exclude};
    J.bound = emalloc((size_t)n * sizeof *J.bound);
    for (int64_t q = 0; q < n; q++)
        J.bound[q] = big[q] ? -INFINITY : INFINITY; /* a big query: searched in double only */
    par_pool *pool = par_new(threads);
    for (J.diag = 1; J.diag >= 0; J.diag--)
        par_run(pool, nb, sym_task, &J);
    par_free(pool);
    free(J.bound);
    blas_set_threads(blas_saved);
    /* the workers' lists merged, in worker order (any order gives the same lists) */
    for (int64_t q = 0; q < n; q++) {
        cnt[q] = 0;
        for (int w = 0; w < PAR_MAXTHREADS; w++)
            if (J.cnt[w])
                for (int r = 0; r < J.cnt[w][q]; r++)
                    cand_push(cd + q * kk, ci + q * kk, &cnt[q], kk, J.cd[w][q * kk + r], J.ci[w][q * kk + r]);
    }
    for (int w = 0; w < PAR_MAXTHREADS; w++) {
        free(J.tile[w]);
        free(J.cd[w]);
        free(J.ci[w]);
        free(J.cnt[w]);
    }
    return 1;
}
/* ---- the leave-one-out screen by thresholds, for long lists (kk >= KNN_THETA_MIN)
 * With many candidates per query the symmetric screen's sorted insertions dominate: a query's
 * list takes about kk (1 + ln(n / kk)) of them, each shifting half of it (at k = 50 they and the
 * scans feeding them were half of knn's time). Here each query first gets a fixed threshold
 * theta: the T-th smallest float value against a sample of about m = T n / (2 kk) items (a fixed
 * pseudo-random subset, one sgemm per block of queries), so that about 2 kk items of the whole
 * gallery lie at or below it. The tiles on and above the diagonal are then scanned by rows and by
 * columns, as knn_screen_self's, and every pair at or below its query's threshold is appended to
 * that query's buffer (room KNN_THETA_ROOM kk; an atomic count, any worker): no order kept, no
 * bound to update. A query's candidates are the best kk of its buffer by (float value, index):
 * when at least kk were appended every item above theta has kk below it, so these are the best
 * kk of all its pairs, knn_screen's candidates. A query with fewer than kk appended (theta fell
 * too low) or more than the room goes to knn_screen instead (tens in 20,000 on random data; every
 * query among many exact duplicates). The re-ranking makes the result exact either way, so it is
 * the same whatever the thread count and whichever queries fell. The sample's sgemm (T / (2 kk)
 * of the full one's: T = 16, kk = 53, 15 %) is not spent twice: the sample is moved to the front
 * of a permuted copy of the gallery, each block of queries keeps its distances to the whole
 * sample (KNN_SYM_BLOCK x m floats a worker, computed in blocks of KNN_THETA_SCHUNK sample items)
 * and appends those pairs once its threshold is known (the sample's own thresholds first, so that
 * the other queries can append to sample items by columns), and the tiles cover the positions
 * outside the sample only: n^2 / 2 + m^2 / 2 products in all instead of n^2 / 2 + n m. The
 * candidates are mapped back to item indices in the merge. */
#define KNN_THETA_MIN 32
#define KNN_THETA_T 16
#define KNN_THETA_ROOM 4
#define KNN_THETA_SCHUNK 1024 /* sample items per sgemm of theta_task: a 1 MB block */

typedef struct {
    const float *X, *t;    /* (n, D) centred, (n) float terms: INFINITY for a big item; by position */
    const uint8_t *big;
    int64_t n;
    int D, kk, room, T;
    const int64_t *exclude; /* (n) by position, or NULL */
    const int64_t *perm;   /* (n) the item at each position: the sample's m first */
    int64_t m;             /* the sample: positions 0 .. m - 1 */
    int64_t base, end;     /* theta_task's query positions */
    float *theta;          /* (n) each query's threshold; -INFINITY: appends nothing */
    float *bd;             /* (n, room) every query's appended values */
    uint32_t *bi;          /* (n, room) their positions */
    int *bn;               /* (n) appended (atomic); above room: overflowed */
    float *tile[PAR_MAXTHREADS], *srow[PAR_MAXTHREADS];
    float *cd;             /* the result (n, kk) as knn_screen's, by item; fell (n) by position */
    int64_t *ci;
    int *cnt;
    uint8_t *fell;
    int tasks;
} knn_theta_job;

/* (v, g) appended to query q's buffer (any worker: an atomic count; the order of the entries
 * depends on timing, the best kk of them do not) */
static inline void theta_add(const knn_theta_job *J, int64_t q, float v, int64_t g)
{
    int c = __atomic_fetch_add(&J->bn[q], 1, __ATOMIC_RELAXED);
    if (c < J->room) {
        J->bd[q * J->room + c] = v;
        J->bi[q * J->room + c] = (uint32_t)g;
    }
}

/* task: the queries at positions base + task B .. against the whole sample (positions 0 .. m - 1),
 * every distance of the block kept: each query's threshold, the T-th smallest (its excluded item
 * left out); then the block's pairs appended as the tiles append theirs: to the query, below its
 * threshold (rows), and for a query outside the sample to the sample item, below the item's
 * (columns: the sample's own thresholds are set first, in a run with base 0, end m). A pair of
 * two sample items is appended by rows only, once from each end. */
static void theta_task(void *arg, int task, int worker)
{
    knn_theta_job *J = arg;
    int64_t B = KNN_SYM_BLOCK, i0 = J->base + (int64_t)task * B, ib = J->end - i0 < B ? J->end - i0 : B, m = J->m;
    int T = J->T;
    if (!J->srow[worker])
        J->srow[worker] = emalloc((size_t)B * m * sizeof *J->srow[worker]);
    float *row = J->srow[worker], best[KNN_SYM_BLOCK][2 * KNN_THETA_T];
    int64_t bidx[KNN_SYM_BLOCK][2 * KNN_THETA_T];
    int cnt[KNN_SYM_BLOCK] = {0};
    const float *t = J->t, *theta = J->theta;
    for (int64_t s0 = 0; s0 < m; s0 += KNN_THETA_SCHUNK) {
        int64_t sc = m - s0 < KNN_THETA_SCHUNK ? m - s0 : KNN_THETA_SCHUNK;
        blas_sgemm(0, 1, (int)ib, (int)sc, J->D, -2.0f, J->X + i0 * J->D, J->D, J->X + s0 * J->D, J->D, 0.0f,
                   row + s0, (int)m);
        for (int64_t r = 0; r < ib; r++) {
            int64_t q = i0 + r, ex = J->exclude ? J->exclude[q] : -1;
            if (!J->big[q])
                scan_items(best[r], bidx[r], &cnt[r], T, NULL, t[q], t + s0, row + r * m + s0, s0, sc,
                           ex >= 0 && ex < m ? ex : -1);
        }
    }
    for (int64_t r = 0; r < ib; r++) {
        int64_t q = i0 + r, ex = J->exclude ? J->exclude[q] : -1;
        float th = J->big[q] || cnt[r] < T ? INFINITY : best[r][T - 1];
        J->theta[q] = th < INFINITY ? th : -INFINITY;
        J->fell[q] = !J->big[q] && !(th < INFINITY);
        if (J->big[q])
            continue;
        th = J->theta[q];
        int cols = q >= m;
        const float *d = row + r * m;
        float tq = t[q];
        for (int64_t u0 = 0; u0 < m; u0 += SCAN_CHUNK) {
            int64_t mlen = m - u0 < SCAN_CHUNK ? m - u0 : SCAN_CHUNK;
            int anyr = 0, anyc = 0;
            if (mlen == SCAN_CHUNK && cols) /* in forms the compiler vectorises */
                for (int u = 0; u < SCAN_CHUNK; u++) {
                    float v = tq + t[u0 + u] + d[u0 + u];
                    anyr |= v <= th;
                    anyc |= v <= theta[u0 + u];
                }
            else if (mlen == SCAN_CHUNK) /* a sample query: the sample's thresholds are being set */
                for (int u = 0; u < SCAN_CHUNK; u++)
                    anyr |= tq + t[u0 + u] + d[u0 + u] <= th;
            else
                anyr = anyc = 1;
            if (anyr)
                for (int64_t s = u0; s < u0 + mlen; s++) {
                    float v = tq + t[s] + d[s];
                    if (v <= th && s != ex && v < INFINITY)
                        theta_add(J, q, v, s);
                }
            if (anyc && cols)
                for (int64_t s = u0; s < u0 + mlen; s++) {
                    float v = tq + t[s] + d[s];
                    if (v <= theta[s] && !(J->exclude && J->exclude[s] == q) && v < INFINITY)
                        theta_add(J, s, v, q);
                }
        }
    }
}

/* task I: the tiles (I, J >= I) of the positions m .. n - 1 (outside the sample), by rows and
 * (off the diagonal) by columns */
static void theta_tiles(void *arg, int task, int worker)
{
    knn_theta_job *J = arg;
    int64_t n = J->n, B = KNN_SYM_BLOCK;
    if (!J->tile[worker])
        J->tile[worker] = ealloc_aligned((size_t)B * B * sizeof *J->tile[worker]);
    float *tile = J->tile[worker];
    const float *t = J->t, *theta = J->theta;
    int64_t i0 = J->m + (int64_t)task * B, ib = n - i0 < B ? n - i0 : B;
    for (int64_t j0 = i0; j0 < n; j0 += B) {
        int64_t jb = n - j0 < B ? n - j0 : B;
        blas_sgemm(0, 1, (int)ib, (int)jb, J->D, -2.0f, J->X + i0 * J->D, J->D, J->X + j0 * J->D, J->D, 0.0f, tile,
                   (int)jb);
        for (int64_t r = 0; r < ib; r++) {
            int64_t q = i0 + r, ex = J->exclude ? J->exclude[q] : -1;
            const float *row = tile + r * jb;
            float tq = t[q], th = theta[q];
            /* rows: query q against items j0 + u */
            for (int64_t u0 = 0; u0 < jb; u0 += SCAN_CHUNK) {
                int64_t mlen = jb - u0 < SCAN_CHUNK ? jb - u0 : SCAN_CHUNK;
                int any = 0;
                if (mlen == SCAN_CHUNK) /* in a form the compiler vectorises */
                    for (int u = 0; u < SCAN_CHUNK; u++)
                        any |= tq + t[j0 + u0 + u] + row[u0 + u] <= th;
                else
                    any = 1;
                if (!any)
                    continue;
                for (int64_t u = u0; u < u0 + mlen; u++) {
                    float v = tq + t[j0 + u] + row[u];
                    if (v <= th && j0 + u != ex && v < INFINITY)
                        theta_add(J, q, v, j0 + u);
                }
            }
            if (j0 == i0 || J->big[q])
                continue;
            /* columns: queries j0 + u against item q (now the item g) */
            for (int64_t u0 = 0; u0 < jb; u0 += SCAN_CHUNK) {
                int64_t mlen = jb - u0 < SCAN_CHUNK ? jb - u0 : SCAN_CHUNK;
                int any = 0;
                if (mlen == SCAN_CHUNK)
                    for (int u = 0; u < SCAN_CHUNK; u++)
                        any |= t[j0 + u0 + u] + tq + row[u0 + u] <= theta[j0 + u0 + u];
                else
                    any = 1;
                if (!any)
                    continue;
                for (int64_t u = u0; u < u0 + mlen; u++) {
                    int64_t j = j0 + u;
                    float v = t[j] + tq + row[u];
                    if (v <= theta[j] && !(J->exclude && J->exclude[j] == q) && v < INFINITY)
                        theta_add(J, j, v, q);
                }
            }
        }
    }
}

/* task: the queries of a range, each query's buffer into its best kk (or fell) */
static void theta_merge(void *arg, int task, int worker)
{
    knn_theta_job *J = arg;
    int kk = J->kk, room = J->room;
    int64_t lo = par_lo(J->n, J->tasks, task), hi = par_lo(J->n, J->tasks, task + 1);
    float *d = emalloc((size_t)room * sizeof *d);
    int64_t *g = emalloc((size_t)room * sizeof *g);
    (void)worker;
    for (int64_t q = lo; q < hi; q++) {
        int64_t o = J->perm[q]; /* the item at position q: its candidates by item index */
        J->cnt[o] = 0;
        int c = J->bn[q];
        if (J->big[q] || J->fell[q] || c > room || c < kk) {
            J->fell[q] = !J->big[q];
            continue;
        }
        for (int r = 0; r < c; r++) {
            d[r] = J->bd[q * room + r];
            g[r] = J->perm[J->bi[q * room + r]];
        }
        cand_select(d, g, c, kk - 1);
        cand_sort(d, g, 0, kk - 1);
        memcpy(J->cd + o * kk, d, (size_t)kk * sizeof *d);
        memcpy(J->ci + o * kk, g, (size_t)kk * sizeof *g);
        J->cnt[o] = kk;
    }
    free(d);
    free(g);
}

/* knn_screen for the gallery against itself by thresholds; returns 0 (and does nothing) when kk
 * is short or the buffers would not fit KNN_SYM_MEMORY */
static int knn_screen_theta(const float *X, const float *t, const uint8_t *big, int64_t n, int D, int kk,
                            const int64_t *exclude, int threads, float *cd, int64_t *ci, int *cnt, int64_t *nfell)
{
    double want = (double)KNN_THETA_T * (double)n / (2.0 * kk);
    int nb = (int)((n + KNN_SYM_BLOCK - 1) / KNN_SYM_BLOCK);
    if (threads > nb)
        threads = nb ? nb : 1;
    int room = KNN_THETA_ROOM * kk;
    if (kk < KNN_THETA_MIN || want > (double)n / 4 || n > UINT32_MAX ||
        (double)n * room * (sizeof(float) + sizeof(uint32_t)) > (double)KNN_SYM_MEMORY)
        return 0;
    /* the sample: items whose mixed index falls below want / n of the range, moved to the front of
     * a permuted copy, so that their distances to every query are computed once (theta_task) and
     * the tiles cover the other positions only: the sgemm n^2 / 2 + m^2 / 2 in all */
    uint64_t cut = (uint64_t)(want / (double)n * 18446744073709551615.0);
    int64_t m = 0;
    uint8_t *in = emalloc((size_t)n);
    for (int64_t i = 0; i < n; i++) {
        in[i] = rng_mix((uint64_t)i ^ 0x9e3779b97f4a7c15u) < cut;
        m += in[i];
    }
    int T = (int)lround(2.0 * kk * (double)m / (double)n);
    if (m < 1 || T < 1 || T > m || T > 2 * KNN_THETA_T ||
        (double)KNN_SYM_BLOCK * m * sizeof(float) * threads > (double)KNN_SYM_MEMORY / 4) {
        free(in);
        return 0;
    }
    int64_t *perm = emalloc((size_t)n * sizeof *perm), *inv = emalloc((size_t)n * sizeof *inv);
    for (int64_t i = 0, a = 0, b = m; i < n; i++)
        perm[in[i] ? a++ : b++] = i;
    free(in);
    for (int64_t p = 0; p < n; p++)
        inv[perm[p]] = p;
    float *Xp = emalloc((size_t)n * D * sizeof *Xp), *tp = emalloc((size_t)n * sizeof *tp);
    uint8_t *bigp = emalloc((size_t)n);
    int64_t *xpos = exclude ? emalloc((size_t)n * sizeof *xpos) : NULL;
    for (int64_t p = 0; p < n; p++) {
        int64_t i = perm[p];
        memcpy(Xp + p * D, X + i * D, (size_t)D * sizeof *Xp);
        tp[p] = t[i];
        bigp[p] = big[i];
        if (xpos)
            xpos[p] = exclude[i] >= 0 && exclude[i] < n ? inv[exclude[i]] : -1;
    }
    free(inv);
    int blas_saved = blas_threads();
    blas_set_threads(1);
    knn_theta_job J = {.X = Xp, .t = tp, .big = bigp, .n = n, .D = D, .kk = kk, .room = room, .T = T,
                       .exclude = xpos, .perm = perm, .m = m, .cd = cd, .ci = ci, .cnt = cnt};
    J.theta = emalloc((size_t)n * sizeof *J.theta);
    J.fell = emalloc((size_t)n);
    J.bd = emalloc((size_t)n * room * sizeof *J.bd);
    J.bi = emalloc((size_t)n * room * sizeof *J.bi);
    J.bn = ecalloc((size_t)n, sizeof *J.bn);
    par_pool *pool = par_new(threads);
    J.base = 0, J.end = m; /* the sample's thresholds first: the others' column appends read them */
    par_run(pool, (int)((m + KNN_SYM_BLOCK - 1) / KNN_SYM_BLOCK), theta_task, &J);
    J.base = m, J.end = n;
    par_run(pool, (int)((n - m + KNN_SYM_BLOCK - 1) / KNN_SYM_BLOCK), theta_task, &J);
    par_run(pool, (int)((n - m + KNN_SYM_BLOCK - 1) / KNN_SYM_BLOCK), theta_tiles, &J);
    J.tasks = n < 4096 ? 1 : 4 * threads;
    par_run(pool, J.tasks, theta_merge, &J);
    par_free(pool);
    for (int w = 0; w < PAR_MAXTHREADS; w++) {
        free(J.tile[w]);
        free(J.srow[w]);
    }
    free(J.bd), free(J.bi), free(J.bn), free(Xp), free(tp), free(bigp), free(xpos);
    /* fell, by position, to items */
    uint8_t *fell = ecalloc((size_t)n, 1);
    for (int64_t p = 0; p < n; p++)
        fell[perm[p]] = J.fell[p];
    free(J.fell);
    J.fell = fell;
    /* the queries that fell back, through knn_screen */
    int64_t nf = 0;
    for (int64_t q = 0; q < n; q++)
        nf += J.fell[q];
    if (nf) {
        int64_t *F = emalloc((size_t)nf * sizeof *F), *fx = exclude ? emalloc((size_t)nf * sizeof *fx) : NULL;
        float *Qf = emalloc((size_t)nf * D * sizeof *Qf), *tf = emalloc((size_t)nf * sizeof *tf);
        uint8_t *bf = ecalloc((size_t)nf, 1);
        float *cf = emalloc((size_t)nf * kk * sizeof *cf);
        int64_t *gf = emalloc((size_t)nf * kk * sizeof *gf);
        int *nfc = ecalloc((size_t)nf, sizeof *nfc);
        for (int64_t q = 0, i = 0; q < n; q++)
            if (J.fell[q]) {
                F[i] = q;
                memcpy(Qf + i * D, X + q * D, (size_t)D * sizeof *Qf);
                tf[i] = t[q];
                if (fx)
                    fx[i] = exclude[q];
                i++;
            }
        knn_screen(Qf, tf, bf, nf, X, t, n, D, kk, fx, threads, cf, gf, nfc);
        for (int64_t i = 0; i < nf; i++) {
            memcpy(cd + F[i] * kk, cf + i * kk, (size_t)kk * sizeof *cd);
            memcpy(ci + F[i] * kk, gf + i * kk, (size_t)kk * sizeof *ci);
            cnt[F[i]] = nfc[i];
        }
        free(F), free(fx), free(Qf), free(tf), free(bf), free(cf), free(gf), free(nfc);
    }
    *nfell = nf;
    blas_set_threads(blas_saved);
    free(J.theta), free(J.fell), free(perm);
    return 1;
}

typedef struct {
    const float *Q, *G;          /* the original coordinates */
    const double *qx, *gx;
    int64_t nq, ng;
    int D, k, kk;
    const int64_t *exclude;
    const uint8_t *qbig;
    const float *qt;             /* the queries' float terms */
    double gtmax;                /* the largest float term of a gallery item that is not big */
    const int64_t *bigs;         /* the big gallery items */
    int64_t nbig;
    const float *cd;             /* the screen's candidates */
    const int64_t *ci;
    const int *cnt;
    int64_t *nbr;
    double *d2;
} knn_rerank_job;

#define KNN_RERANK_TASK 16 /* queries per task of the rerank */

/* the candidates' distances again, directly and in double, best k by (d2, index): the float
 * screen's candidates and every big gallery item. When the screen cannot prove that its candidates
 * hold the true k nearest (below), and for a big query, the whole gallery in double. */
static void knn_rerank(void *arg, int task, int worker)
{
    const knn_rerank_job *J = arg;
    int D = J->D, k = J->k, kk = J->kk;
    double *dd = emalloc((size_t)k * sizeof *dd);
    int64_t *di = emalloc((size_t)k * sizeof *di);
    const float **rows = emalloc((size_t)kk * sizeof *rows);
    double *ex2 = emalloc((size_t)kk * sizeof *ex2), *cv = emalloc((size_t)kk * sizeof *cv);
    int64_t qend = (int64_t)(task + 1) * KNN_RERANK_TASK < J->nq ? (int64_t)(task + 1) * KNN_RERANK_TASK : J->nq;
    for (int64_t q = (int64_t)task * KNN_RERANK_TASK; q < qend; q++) {
        const float *qv = J->Q + q * D;
        double xq = J->qx ? J->qx[q] : 0.0;
        int64_t ex = J->exclude ? J->exclude[q] : -1;
        const float *cd = J->cd + q * kk;
        /* Proof. The k candidates with the smallest float values f have d2 <= f + E <= cd[k-1] + E,
         * so the k-th smallest d2 of all is at most cd[k-1] + E. An item the screen dropped has
         * f >= cd[kk-1] (with kk held; fewer: none was dropped), so d2 >= cd[kk-1] - E: when
         * cd[kk-1] > cd[k-1] + 2E it is strictly farther than the k-th and cannot be among the k
         * nearest, even by the index tie rule. E: KNN_SCREEN_ERR with S = t[q] + the largest t[g]. */
        int exact = J->qbig[q];
        if (!exact && J->cnt[q] == kk) {
            double E = KNN_SCREEN_ERR(D) * ((double)J->qt[q] + J->gtmax) + KNN_SCREEN_ABS(D);
            exact = !((double)cd[kk - 1] > (double)cd[k - 1] + 2 * E);
        }
        int c = 0;
        if (exact) {
            for (int64_t g = 0; g < J->ng; g++)
                if (g != ex)
                    metrics_best_push(dd, di, &c, k, metrics_dist2(qv, J->G + g * D, D, xq + (J->gx ? J->gx[g] : 0.0)), g);
        } else {
            int nc = J->cnt[q];
            const int64_t *ci = J->ci + q * kk;
            for (int r = 0; r < nc; r++) {
                rows[r] = J->G + ci[r] * D;
                ex2[r] = xq + (J->gx ? J->gx[ci[r]] : 0.0);
            }
            dist2_rows(qv, rows, nc, D, ex2, cv);
            for (int r = 0; r < nc; r++)
                metrics_best_push(dd, di, &c, k, cv[r], ci[r]);
            for (int64_t b = 0; b < J->nbig; b++) {
                int64_t g = J->bigs[b];
                if (g != ex)
                    metrics_best_push(dd, di, &c, k, metrics_dist2(qv, J->G + g * D, D, xq + (J->gx ? J->gx[g] : 0.0)), g);
            }
        }
        if (c < k) /* cannot happen: avail >= k and every finite distance is a candidate */
            die("internal error: kNN found %d of %d neighbours for query %lld", c, k, (long long)q);
        for (int r = 0; r < k; r++) {
            J->nbr[q * k + r] = di[r];
            if (J->d2)
                J->d2[q * k + r] = dd[r];
        }
    }
    free(dd);
    free(di);
    free(rows);
    free(ex2);
    free(cv);
}

void metrics_knn(const float *Q, const double *qx, int64_t nq, const float *G, const double *gx, int64_t ng,
                 int D, int k, const int64_t *exclude, int threads, int64_t *nbr, double *d2)
{
    metrics_knn_info info;
    metrics_knn_ex(Q, qx, nq, G, gx, ng, D, k, exclude, threads, nbr, d2, &info);
}

void metrics_knn_ex(const float *Q, const double *qx, int64_t nq, const float *G, const double *gx, int64_t ng,
                    int D, int k, const int64_t *exclude, int threads, int64_t *nbr, double *d2, metrics_knn_info *info)
{
    for (int64_t q = 0; q < nq; q++) {
        int64_t avail = ng - (exclude && exclude[q] >= 0 && exclude[q] < ng);
        if (avail < k)
            die("k = %d needs at least %d gallery items per query, query %lld has %lld", k, k,
                (long long)q, (long long)avail);
    }
    if (threads < 1)
        threads = 1;
    if (threads > 64)
        threads = 64;
    int kk = k + METRICS_KNN_SLACK;
    knn_check("query", Q, qx, nq, D);
    knn_check("gallery item", G, gx, ng, D);
    /* the screen works on coordinates centred on the gallery's mean (metrics_centre, over the
     * items that are not big): far from the origin ||q||^2 + ||g||^2 - 2 q.g cancels
     * catastrophically, and a screen that rounds less has fewer queries to search in full */
    double *mean = emalloc((size_t)(D ? D : 1) * sizeof *mean);
    metrics_centre(Q, nq, G, ng, D, KNN_FLOAT_LIMIT, mean);
    int self = Q == G && qx == gx && nq == ng; /* leave-one-out: one centred copy */
    float *gc = emalloc((size_t)(ng ? ng : 1) * D * sizeof *gc), *gt = emalloc((size_t)(ng ? ng : 1) * sizeof *gt);
    uint8_t *gbig = emalloc((size_t)(ng ? ng : 1));
    knn_centre_par(G, gx, ng, D, mean, gc, gt, gbig, threads);
    float *qc = gc, *qt = gt;
    uint8_t *qbig = gbig;
    if (!self) {
        qc = emalloc((size_t)(nq ? nq : 1) * D * sizeof *qc);
        qt = emalloc((size_t)(nq ? nq : 1) * sizeof *qt);
        qbig = emalloc((size_t)(nq ? nq : 1));
        knn_centre_par(Q, qx, nq, D, mean, qc, qt, qbig, threads);
    }
    int64_t *bigs = emalloc((size_t)(ng ? ng : 1) * sizeof *bigs), nbig = 0; /* the big gallery items */
    double gtmax = 0;
    for (int64_t g = 0; g < ng; g++)
        if (gbig[g])
            bigs[nbig++] = g;
        else if (gt[g] > gtmax)
            gtmax = gt[g];
    float *cd = emalloc((size_t)nq * kk * sizeof *cd);
    int64_t *ci = emalloc((size_t)nq * kk * sizeof *ci);
    int *cnt = ecalloc((size_t)nq, sizeof *cnt);
    *info = (metrics_knn_info){METRICS_SCREEN_PLAIN, 0}; /* knn_screen_theta sets fell */
    if (self && knn_screen_theta(gc, gt, gbig, ng, D, kk, exclude, threads, cd, ci, cnt, &info->fell))
        info->screen = METRICS_SCREEN_THETA;
    else if (self && knn_screen_self(gc, gt, gbig, ng, D, kk, exclude, threads, cd, ci, cnt))
        info->screen = METRICS_SCREEN_SELF;
    else
        knn_screen(qc, qt, qbig, nq, gc, gt, ng, D, kk, exclude, threads, cd, ci, cnt);

    int64_t ntasks = (nq + KNN_RERANK_TASK - 1) / KNN_RERANK_TASK;
    knn_rerank_job rj = {Q, G, qx, gx, nq, ng, D, k, kk, exclude, qbig, qt, gtmax, bigs, nbig, cd, ci, cnt, nbr, d2};
    par_for(threads < ntasks ? threads : (int)ntasks, (int)ntasks, knn_rerank, &rj);
    free(bigs);
    free(cnt);
    free(ci);
    free(cd);
    if (!self) {
        free(qc);
        free(qt);
        free(qbig);
    }
    free(gc);
    free(gt);
    free(gbig);
    free(mean);
}
