/* cluster: k-means and NMI / AMI. Definitions and conventions: cluster.h. */
#include "cluster.h"
#include "guard.h"

#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "blas.h"
#include "par.h"
#include "util.h"

/* squared norms beyond this could overflow the float sum ||x||^2 + ||c||^2 - 2 x.c */
#define CLUSTER_FLOAT_LIMIT (FLT_MAX / 16)
/* floats of -2 X C^T per block: the block's rows depend on k only, never on the threads */
#define CLUSTER_BLOCK_FLOATS (1 << 18)

cluster_opts cluster_defaults(int k)
{
    return (cluster_opts){.k = k,
                          .niter = 20,
                          .redo = CLUSTER_REDO,
                          .max_per_cluster = 256,
                          .seed = 714,
                          .plusplus = 1,
                          .trials = 0,
                          .threads = 1};
}

int cluster_trials(int k) { return 2 + (int)log(k > 1 ? (double)k : 1.0); }

/* ---- the workers: one pool for a whole run, scratch per worker, OpenBLAS on one thread inside */

typedef struct {
    par_pool *p;
    int saved;                   /* OpenBLAS's threads outside */
    int width;                   /* columns of a scratch block (0: no scratch) */
    int64_t rows;                /* rows per block: from width only, never from the threads */
    float *dot[PAR_MAXTHREADS];  /* per worker: (rows, width) */
} workers;

static void workers_open(workers *w, int threads, int width)
{
    w->width = width;
    w->rows = width ? CLUSTER_BLOCK_FLOATS / width : 256;
    if (w->rows > 256)
        w->rows = 256;
    if (w->rows < 1)
        w->rows = 1;
    if (threads > PAR_MAXTHREADS)
        threads = PAR_MAXTHREADS;
    w->saved = blas_threads();
    blas_set_threads(1);
    w->p = par_new(threads);
    for (int i = 0; i < par_workers(w->p); i++)
        w->dot[i] = width ? ealloc_aligned((size_t)w->rows * width * sizeof **w->dot) : NULL;
}

static void workers_close(workers *w)
{
    for (int i = 0; i < par_workers(w->p); i++)
        free(w->dot[i]);
    par_free(w->p);
    blas_set_threads(w->saved);
}

/* the blocks of rows of n points */
static int blocks(const workers *w, int64_t n)
{
    int64_t nb = (n + w->rows - 1) / w->rows;
    if (nb > INT_MAX)
        die("k-means: %lld blocks of points, more than a parallel-for takes", (long long)nb);
    return (int)nb;
}

/* ---- assignment: nearest centroid of every point, in fixed blocks of rows */

typedef struct {
    const workers *w;
    const float *X, *xn;      /* (n, D) points, (n) their squared norms */
    int64_t n;
    const float *c, *cn;      /* (k, D) centroids, (k) their squared norms */
    int k, D;
    int32_t *a;               /* (n) out */
} assign_job;

/* block b: rows [b * rows, (b + 1) * rows) of X */
static void assign_block(void *ctx, int b, int worker)
{
    const assign_job *J = ctx;
    float *dot = J->w->dot[worker];
    int64_t rows = J->w->rows, i0 = (int64_t)b * rows;
    int64_t m = J->n - i0 < rows ? J->n - i0 : rows;
    /* dot (m, k) = -2 X[i0 : i0+m] C^T */
    blas_sgemm(0, 1, (int)m, J->k, J->D, -2.0f, J->X + i0 * J->D, J->D, J->c, J->D, 0.0f, dot, J->k);
    for (int64_t r = 0; r < m; r++) {
        const float *row = dot + r * J->k;
        float xn = J->xn[i0 + r], best = (xn + J->cn[0]) + row[0];
        int32_t bj = 0;
        for (int j = 1; j < J->k; j++) {
            float d = (xn + J->cn[j]) + row[j];
            if (d < best) /* strict: the lower index wins a tie */
                best = d, bj = j;
        }
        J->a[i0 + r] = bj;
    }
}

static void norms(const float *X, int64_t n, int D, float *out)
{
    for (int64_t i = 0; i < n; i++) {
        double s = 0;
        for (int d = 0; d < D; d++)
            s += (double)X[i * D + d] * X[i * D + d];
        if (!(s <= CLUSTER_FLOAT_LIMIT))
            die("k-means: point or centroid %lld has a squared norm %g beyond float range", (long long)i, s);
        out[i] = (float)s;
    }
}

/* w->width >= k */
static void assign_all(const workers *w, const float *X, const float *xn, int64_t n, const float *c, const float *cn,
                       int k, int D, int32_t *a)
{
    assign_job J = {w, X, xn, n, c, cn, k, D, a};
    par_run(w->p, blocks(w, n), assign_block, &J);
}

void cluster_nearest(const float *X, int64_t n, int D, const float *c, int k, int threads, int32_t *assign)
{
    float *xn = emalloc((size_t)(n ? n : 1) * sizeof *xn), *cn = emalloc((size_t)k * sizeof *cn);
    for (int64_t i = 0; i < (int64_t)n * D; i++)
        if (!isfinite(X[i]))
            die("k-means: point %lld has a coordinate %g that is not finite", (long long)(i / D), X[i]);
    norms(X, n, D, xn);
    norms(c, k, D, cn);
    workers w;
    workers_open(&w, threads, k);
    assign_all(&w, X, xn, n, c, cn, k, D, assign);
    workers_close(&w);
    free(cn);
    free(xn);
}

/* centroids = the means of their points (sums in double, in point order); an empty cluster gets
 * the point farthest from its centroid (cluster.h). Returns how many were empty. */
static int64_t update(const float *X, int64_t n, int D, int k, const int32_t *a, double *sum, int64_t *cnt,
                      float *c)
{
    memset(sum, 0, (size_t)k * D * sizeof *sum);
    memset(cnt, 0, (size_t)k * sizeof *cnt);
    for (int64_t i = 0; i < n; i++) {
        double *s = sum + (int64_t)a[i] * D;
        for (int d = 0; d < D; d++)
            s[d] += X[i * D + d];
        cnt[a[i]]++;
    }
    int64_t empty = 0;
    for (int j = 0; j < k; j++)
        if (cnt[j])
            for (int d = 0; d < D; d++)
                c[(int64_t)j * D + d] = (float)(sum[(int64_t)j * D + d] / (double)cnt[j]);
        else
            empty++;
    if (!empty)
        return 0;
    /* each point's squared distance to its new centroid, in double; a point moved is spent */
    double *dist = emalloc((size_t)n * sizeof *dist);
    for (int64_t i = 0; i < n; i++) {
        const float *x = X + i * D, *cc = c + (int64_t)a[i] * D;
        double s = 0;
        for (int d = 0; d < D; d++) {
            double u = (double)x[d] - cc[d];
            s += u * u;
        }
        dist[i] = s;
    }
    for (int j = 0; j < k; j++) {
        if (cnt[j])
            continue;
        int64_t far = -1;
        for (int64_t i = 0; i < n; i++)
            if (dist[i] >= 0 && cnt[a[i]] > 1 && (far < 0 || dist[i] > dist[far]))
                far = i;
        if (far < 0) /* every point is alone in its cluster or spent: n = k with duplicates */
            break;
        memcpy(c + (int64_t)j * D, X + far * D, (size_t)D * sizeof *c);
        cnt[a[far]]--, cnt[j] = 1;
        dist[far] = -1;
    }
    free(dist);
    return empty;
}

/* ---- k-means++ (greedy): the squared distances of every point to a few candidates */

typedef struct {
    const workers *w;
    const float *T;           /* (m, D) points */
    int64_t m;
    int D;
    const float *cand;        /* (t, D) candidates */
    int t;
    const float *best;        /* (m) squared distance to the nearest seed so far */
    float *dist;              /* (m, t) out: to each candidate */
    double *pot;              /* (blocks, t) out: per block, sum of min(best, dist) per candidate */
} cand_job;

/* the squared distance of x to y (D floats) in 8 float lanes summed in a fixed order: vector
 * code without reassociation, the same bytes on every thread */
static float sqdist(const float *x, const float *y, int D)
{
    float lane[8] = {0};
    int d = 0;
    for (; d + 8 <= D; d += 8)
        for (int l = 0; l < 8; l++) {
            float u = x[d + l] - y[d + l];
            lane[l] += u * u;
        }
    for (; d < D; d++) {
        float u = x[d] - y[d];
        lane[d % 8] += u * u;
    }
    return ((lane[0] + lane[4]) + (lane[1] + lane[5])) + ((lane[2] + lane[6]) + (lane[3] + lane[7]));
}

static void cand_block(void *ctx, int b, int worker)
{
    const cand_job *J = ctx;
    int64_t rows = J->w->rows, i0 = (int64_t)b * rows;
    int64_t m = J->m - i0 < rows ? J->m - i0 : rows;
    int t = J->t;
    /* up to 8 candidates per pass over the block: a point's row read once for them, their sums
     * in registers */
    for (int j0 = 0; j0 < t; j0 += 8) {
        int j1 = j0 + 8 < t ? j0 + 8 : t;
        double pot[8] = {0};
        for (int64_t r = 0; r < m; r++) {
            const float *x = J->T + (i0 + r) * J->D;
            float *out = J->dist + (i0 + r) * t, bi = J->best[i0 + r];
            for (int j = j0; j < j1; j++) {
                float d = sqdist(x, J->cand + (int64_t)j * J->D, J->D);
                out[j] = d;
                pot[j - j0] += d < bi ? d : bi;
            }
        }
        for (int j = j0; j < j1; j++)
            J->pot[(int64_t)b * t + j] = pot[j - j0];
    }
}

/* a point drawn with probability proportional to its weight w (m) >= 0, from the cumulative
 * sums cum (m, in point order): the first point whose cumulative sum exceeds u * total (so one
 * with a positive weight); rounding past the end: the last point with a positive weight */
static int64_t draw_weighted(rng *r, const float *w, const double *cum, int64_t m)
{
    double u = rng_uniform(r) * cum[m - 1];
    int64_t lo = 0, hi = m; /* the first i with cum[i] > u */
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (cum[mid] > u)
            hi = mid;
        else
            lo = mid + 1;
    }
    if (lo < m)
        return lo;
    for (int64_t i = m - 1; i >= 0; i--)
        if (w[i] > 0)
            return i;
    return m - 1;
}

void cluster_plusplus(const float *T, int64_t m, int D, int k, int trials, int threads, rng *r, int64_t *idx)
{
    if (k < 1 || k > m || trials < 1 || D < 1)
        die("k-means++: bad parameters (k = %d, points = %lld, trials = %d)", k, (long long)m, trials);
    workers w;
    workers_open(&w, threads, 0);
    int nb = blocks(&w, m);
    float *best = emalloc((size_t)m * sizeof *best), *dist = emalloc((size_t)m * trials * sizeof *dist);
    float *cand = emalloc((size_t)trials * D * sizeof *cand);
    double *pot = emalloc((size_t)nb * trials * sizeof *pot), *cum = emalloc((size_t)m * sizeof *cum);
    int64_t *ci = emalloc((size_t)trials * sizeof *ci);
    cand_job J = {&w, T, m, D, cand, 1, best, dist, pot};

    /* the first seed uniform; best = the squared distance to it */
    idx[0] = (int64_t)rng_below(r, (uint64_t)m);
    for (int64_t i = 0; i < m; i++)
        best[i] = INFINITY;
    memcpy(cand, T + idx[0] * D, (size_t)D * sizeof *cand);
    par_run(w.p, nb, cand_block, &J);
    for (int64_t i = 0; i < m; i++)
        best[i] = dist[i];
    best[idx[0]] = 0;
    for (int j = 1; j < k; j++) {
        double total = 0;
        for (int64_t i = 0; i < m; i++)
            cum[i] = total += best[i];
        if (!(total > 0)) { /* every point sits on a seed: the first point not chosen yet */
            int64_t pick = -1;
            for (int64_t i = 0; i < m && pick < 0; i++) {
                int used = 0;
                for (int q = 0; q < j; q++)
                    used |= idx[q] == i;
                if (!used)
                    pick = i;
            }
            idx[j] = pick;
            continue;
        }
        for (int q = 0; q < trials; q++) {
            ci[q] = draw_weighted(r, best, cum, m);
            memcpy(cand + (int64_t)q * D, T + ci[q] * D, (size_t)D * sizeof *cand);
        }
        J.t = trials;
        par_run(w.p, nb, cand_block, &J);
        /* the candidate that leaves the lowest potential (block sums in block order; the
         * earlier draw on a tie) */
        int bq = 0;
        double bp = INFINITY;
        for (int q = 0; q < trials; q++) {
            double s = 0;
            for (int b = 0; b < nb; b++)
                s += pot[(int64_t)b * trials + q];
            if (s < bp)
                bp = s, bq = q;
        }
        idx[j] = ci[bq];
        for (int64_t i = 0; i < m; i++)
            if (dist[i * trials + bq] < best[i])
                best[i] = dist[i * trials + bq];
        best[ci[bq]] = 0;
    }
    free(ci);
    free(cum);
    free(pot);
    free(cand);
    free(dist);
    free(best);
    workers_close(&w);
}

/* the first m of a uniform random permutation of 0 .. n-1 (partial Fisher-Yates) into idx (n) */
static void draw_distinct(rng *r, int64_t n, int64_t m, int64_t *idx)
{
    for (int64_t i = 0; i < n; i++)
        idx[i] = i;
    for (int64_t i = 0; i < m; i++) {
        int64_t j = i + (int64_t)rng_below(r, (uint64_t)(n - i));
        int64_t t = idx[i];
        idx[i] = idx[j];
        idx[j] = t;
    }
}

void cluster_kmeans(const float *X, int64_t n, int D, const cluster_opts *o, int32_t *assign, float *centroids,
                    cluster_result *res)
{
    int k = o->k;
    if (k < 1 || D < 1 || o->redo < 1 || o->niter < 0 || o->max_per_cluster < 0 || o->trials < 0)
        die("k-means: bad parameters (k = %d, D = %d, redo = %d, niter = %d, trials = %d)", k, D, o->redo, o->niter,
            o->trials);
    if (n < k)
        die("k-means: %d clusters need at least %d points, there are %lld", k, k, (long long)n);
    /* centre on the mean (double) */
    double *mean = ecalloc((size_t)D, sizeof *mean);
    for (int64_t i = 0; i < n; i++)
        for (int d = 0; d < D; d++) {
            double v = X[i * D + d];
            if (!isfinite(v))
                die("k-means: point %lld has a coordinate %g that is not finite", (long long)i, v);
            mean[d] += v;
        }
    for (int d = 0; d < D; d++)
        mean[d] /= (double)n;
    float *Xc = emalloc((size_t)n * D * sizeof *Xc), *xn = emalloc((size_t)n * sizeof *xn);
    for (int64_t i = 0; i < n; i++)
        for (int d = 0; d < D; d++)
            Xc[i * D + d] = (float)((double)X[i * D + d] - mean[d]);
    norms(Xc, n, D, xn);

    /* the training set */
    int64_t *idx = emalloc((size_t)n * sizeof *idx);
    const float *T = Xc, *tn = xn;
    float *Tbuf = NULL, *tnbuf = NULL;
    int64_t m = n;
    if (o->max_per_cluster > 0 && n > (int64_t)k * o->max_per_cluster) {
        m = (int64_t)k * o->max_per_cluster;
        rng r;
        rng_init(&r, o->seed, CLUSTER_SUBSAMPLE);
        draw_distinct(&r, n, m, idx);
        qsort(idx, (size_t)m, sizeof *idx, util_cmp_i64);
        Tbuf = emalloc((size_t)m * D * sizeof *Tbuf);
        tnbuf = emalloc((size_t)m * sizeof *tnbuf);
        for (int64_t i = 0; i < m; i++) {
            memcpy(Tbuf + i * D, Xc + idx[i] * D, (size_t)D * sizeof *Tbuf);
            tnbuf[i] = xn[idx[i]];
        }
        T = Tbuf, tn = tnbuf;
    }

    int trials = o->trials ? o->trials : cluster_trials(k);
    float *c = emalloc((size_t)k * D * sizeof *c), *cn = emalloc((size_t)k * sizeof *cn);
    float *best_c = emalloc((size_t)k * D * sizeof *best_c);
    double *sum = emalloc((size_t)k * D * sizeof *sum);
    int64_t *cnt = emalloc((size_t)k * sizeof *cnt);
    int32_t *a = emalloc((size_t)m * sizeof *a), *prev = emalloc((size_t)m * sizeof *prev);
    int32_t *all = emalloc((size_t)n * sizeof *all);
    cluster_result best = {.inertia = INFINITY};
    for (int redo = 0; redo < o->redo; redo++) {
        rng r;
        rng_init(&r, o->seed, CLUSTER_INIT ^ (uint64_t)redo);
        if (o->plusplus)
            cluster_plusplus(T, m, D, k, trials, o->threads, &r, idx);
        else
            draw_distinct(&r, m, k, idx);
        for (int j = 0; j < k; j++)
            memcpy(c + (int64_t)j * D, T + idx[j] * D, (size_t)D * sizeof *c);
        cluster_result cur = {.trained = m, .start = redo};
        workers w;
        workers_open(&w, o->threads, k);
        for (int it = 0; it < o->niter; it++) {
            guard_poll(); /* a library call's stop flag (lib/base/guard.h); par's tasks look at it too */
            norms(c, k, D, cn);
            assign_all(&w, T, tn, m, c, cn, k, D, a);
            cur.iterations = it + 1;
            if (it > 0 && !memcmp(a, prev, (size_t)m * sizeof *a)) {
                cur.converged = 1; /* c already holds the means of this assignment */
                break;
            }
            cur.empty += update(T, m, D, k, a, sum, cnt, c);
            memcpy(prev, a, (size_t)m * sizeof *a);
        }
        /* every point to the final centroids; the inertia in double */
        norms(c, k, D, cn);
        assign_all(&w, Xc, xn, n, c, cn, k, D, all);
        workers_close(&w);
        double inertia = 0;
        for (int64_t i = 0; i < n; i++) {
            const float *x = Xc + i * D, *cc = c + (int64_t)all[i] * D;
            for (int d = 0; d < D; d++) {
                double u = (double)x[d] - cc[d];
                inertia += u * u;
            }
        }
        cur.inertia = inertia;
        if (inertia < best.inertia || redo == 0) {
            best = cur;
            memcpy(assign, all, (size_t)n * sizeof *assign);
            memcpy(best_c, c, (size_t)k * D * sizeof *c);
        }
    }
    if (centroids)
        for (int64_t i = 0; i < (int64_t)k * D; i++)
            centroids[i] = (float)((double)best_c[i] + mean[i % D]);
    *res = best;
    free(all);
    free(prev);
    free(a);
    free(cnt);
    free(sum);
    free(best_c);
    free(cn);
    free(c);
    free(tnbuf);
    free(Tbuf);
    free(idx);
    free(xn);
    free(Xc);
    free(mean);
}

/* ---- information measures */

/* the distinct values of v (n) in increasing order into *out (allocated); returns how many */
static int distinct(const int32_t *v, int64_t n, int32_t **out)
{
    int32_t *s = emalloc((size_t)(n ? n : 1) * sizeof *s);
    memcpy(s, v, (size_t)n * sizeof *s);
    qsort(s, (size_t)n, sizeof *s, util_cmp_i32);
    int64_t m = 0;
    for (int64_t i = 0; i < n; i++)
        if (!m || s[i] != s[m - 1])
            s[m++] = s[i];
    *out = s;
    return (int)m;
}

int cluster_count_distinct(const int32_t *v, int64_t n)
{
    int32_t *s;
    int m = distinct(v, n, &s);
    free(s);
    return m;
}

int64_t *cluster_contingency(const int32_t *u, const int32_t *v, int64_t n, int *R, int *C)
{
    int32_t *su, *sv;
    *R = distinct(u, n, &su);
    *C = distinct(v, n, &sv);
    int64_t *t = ecalloc((size_t)(*R ? *R : 1) * (*C ? *C : 1), sizeof *t);
    for (int64_t i = 0; i < n; i++)
        t[(int64_t)util_lower_bound_i32(su, *R, u[i]) * *C + util_lower_bound_i32(sv, *C, v[i])]++;
    free(su);
    free(sv);
    return t;
}

double cluster_entropy(const int64_t *count, int m)
{
    int64_t N = 0;
    int nz = 0;
    for (int i = 0; i < m; i++)
        N += count[i], nz += count[i] > 0;
    if (nz <= 1)
        return 0.0;
    double h = 0, logN = log((double)N);
    for (int i = 0; i < m; i++)
        if (count[i] > 0)
            h -= ((double)count[i] / (double)N) * (log((double)count[i]) - logN);
    return h;
}

/* the margins of a table (a: R row sums, b: C column sums, allocated), N, and how many of each
 * are non-zero */
typedef struct {
    int64_t *a, *b, N;
    int ra, cb;
} margins;

static margins table_margins(const int64_t *t, int R, int C)
{
    margins g = {ecalloc((size_t)(R ? R : 1), sizeof(int64_t)), ecalloc((size_t)(C ? C : 1), sizeof(int64_t)), 0, 0, 0};
    for (int i = 0; i < R; i++)
        for (int j = 0; j < C; j++) {
            int64_t x = t[(int64_t)i * C + j];
            if (x < 0)
                die("contingency table: a negative count %lld at (%d, %d)", (long long)x, i, j);
            g.a[i] += x, g.b[j] += x, g.N += x;
        }
    for (int i = 0; i < R; i++)
        g.ra += g.a[i] > 0;
    for (int j = 0; j < C; j++)
        g.cb += g.b[j] > 0;
    return g;
}

static void margins_free(margins *g)
{
    free(g->a);
    free(g->b);
}

double cluster_mi(const int64_t *t, int R, int C)
{
    margins g = table_margins(t, R, C);
    double mi = 0;
    if (g.ra > 1 && g.cb > 1) {
        double N = (double)g.N, logN = log(N);
        for (int i = 0; i < R; i++)
            for (int j = 0; j < C; j++) {
                int64_t x = t[(int64_t)i * C + j];
                if (!x)
                    continue;
                double term = ((double)x / N) * (log((double)x) + logN - log((double)g.a[i]) - log((double)g.b[j]));
                if (fabs(term) >= DBL_EPSILON)
                    mi += term;
            }
    }
    margins_free(&g);
    return mi > 0 ? mi : 0.0;
}

double cluster_emi(const int64_t *t, int R, int C)
{
    margins g = table_margins(t, R, C);
    double emi = 0;
    if (g.ra > 1 && g.cb > 1) {
        int64_t N = g.N;
        /* log m! for m <= N from a table of lgamma (one pass), beyond that lgamma itself */
        int64_t tab = N < ((int64_t)1 << 22) ? N + 1 : ((int64_t)1 << 22);
        double *lf = emalloc((size_t)tab * sizeof *lf);
        for (int64_t x = 0; x < tab; x++)
            lf[x] = lgamma((double)x + 1);
#define LF(x) ((x) < tab ? lf[x] : lgamma((double)(x) + 1))
        double logN = log((double)N), lfN = LF(N);
        for (int i = 0; i < R; i++) {
            int64_t a = g.a[i];
            if (!a)
                continue;
            for (int j = 0; j < C; j++) {
                int64_t b = g.b[j];
                if (!b)
                    continue;
                double base = LF(a) + LF(b) + LF(N - a) + LF(N - b) - lfN, lab = log((double)a) + log((double)b);
                int64_t lo = a + b - N > 1 ? a + b - N : 1, hi = a < b ? a : b;
                for (int64_t x = lo; x <= hi; x++) {
                    double gln = base - LF(x) - LF(a - x) - LF(b - x) - LF(N - a - b + x);
                    emi += ((double)x / (double)N) * (logN + log((double)x) - lab) * exp(gln);
                }
            }
        }
#undef LF
        free(lf);
    }
    margins_free(&g);
    return emi;
}

/* H(rows) and H(columns) of a table */
static void table_entropies(const int64_t *t, int R, int C, double *hu, double *hv)
{
    margins g = table_margins(t, R, C);
    *hu = cluster_entropy(g.a, R);
    *hv = cluster_entropy(g.b, C);
    margins_free(&g);
}

static int both_single(const int64_t *t, int R, int C)
{
    margins g = table_margins(t, R, C);
    int r = (g.ra <= 1 && g.cb <= 1 && g.ra == g.cb);
    margins_free(&g);
    return r;
}

double cluster_nmi(const int64_t *t, int R, int C)
{
    if (both_single(t, R, C))
        return 1.0;
    double mi = cluster_mi(t, R, C);
    if (mi == 0)
        return 0.0;
    double hu, hv;
    table_entropies(t, R, C, &hu, &hv);
    return mi / ((hu + hv) / 2);
}

double cluster_ami(const int64_t *t, int R, int C)
{
    if (both_single(t, R, C))
        return 1.0;
    double mi = cluster_mi(t, R, C), emi = cluster_emi(t, R, C), hu, hv;
    table_entropies(t, R, C, &hu, &hv);
    double den = (hu + hv) / 2 - emi;
    if (den < 0)
        den = den < -DBL_EPSILON ? den : -DBL_EPSILON;
    else
        den = den > DBL_EPSILON ? den : DBL_EPSILON;
    return (mi - emi) / den;
}
