/* retrieval: positives' ranks by binary search over blocks of sgemm distances; the histogram of
 * every pair's key for global precision-recall; cleaning masks. Definitions, tie rules and
 * determinism: retrieval.h. */
#include "retrieval.h"

#include <float.h>
#include "simd.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ap.h"
#include "argsort.h"
#include "blas.h"
#include "knn_search.h"
#include "mls.h"
#include "par.h"
#include "util.h"

void retrieval_from_ranks(const int64_t *rank, int64_t R, const int *ks, int nk, retrieval_query *out)
{
    memset(out, 0, sizeof *out);
    out->npos = (int32_t)R;
    if (!R) {
        out->ap = out->rprec = out->map_r = NAN;
        return;
    }
    double ap = 0, map_r = 0;
    int64_t within = 0; /* positives in the top R */
    for (int64_t i = 0; i < R; i++) {
        double precision = (double)(i + 1) / (double)rank[i]; /* at the rank of the (i+1)-th positive */
        ap += precision;
        if (rank[i] <= R) {
            within++;
            map_r += precision;
        }
    }
    out->ap = (float)(ap / (double)R);
    out->rprec = (float)((double)within / (double)R);
    out->map_r = (float)(map_r / (double)R);
    out->p1 = rank[0] == 1;
    out->r1 = (int32_t)rank[0];
    for (int j = 0; j < nk; j++)
        out->recall[j] = rank[0] <= ks[j];
}

void retrieval_summary_add(retrieval_summary *s, const retrieval_query *q, int nk)
{
    if (!q->npos) {
        s->no_positive++;
        return;
    }
    s->queries++;
    s->map += q->ap;
    s->map_r += q->map_r;
    s->rprec += q->rprec;
    s->p1 += q->p1;
    s->mrr += q->r1 > 0 ? 1.0 / q->r1 : NAN; /* r_1 beyond the depth of an --at-r run: unknown */
    for (int j = 0; j < nk; j++)
        s->recall[j] += q->recall[j];
}

void retrieval_from_nearest(const int32_t *ncls, int64_t K, int32_t cls, int64_t R, const int *ks, int nk,
                            retrieval_query *out)
{
    memset(out, 0, sizeof *out);
    out->npos = (int32_t)R;
    out->ap = NAN;
    if (!R) {
        out->rprec = out->map_r = NAN;
        return;
    }
    if (R > K || ks[nk - 1] > K)
        die("internal error: retrieval_from_nearest: R %lld or k %d beyond the depth %lld", (long long)R, ks[nk - 1],
            (long long)K);
    double map_r = 0;
    int64_t i = 0, within = 0, r1 = 0;
    for (int64_t r = 1; r <= K; r++) {
        if (ncls[r - 1] != cls)
            continue;
        i++;
        if (!r1)
            r1 = r;
        if (r <= R) { /* the same terms in the same order as retrieval_from_ranks' */
            within++;
            map_r += (double)i / (double)r;
        }
    }
    out->rprec = (float)((double)within / (double)R);
    out->map_r = (float)(map_r / (double)R);
    out->p1 = r1 == 1;
    out->r1 = (int32_t)r1;
    for (int j = 0; j < nk; j++)
        out->recall[j] = r1 && r1 <= ks[j];
}

/* the gallery's classes sorted (for class_count) */
static int32_t *sorted_classes(const int32_t *gcls, int64_t ng)
{
    int32_t *s = emalloc((size_t)(ng ? ng : 1) * sizeof *s);
    memcpy(s, gcls, (size_t)ng * sizeof *s);
    qsort(s, (size_t)ng, sizeof *s, util_cmp_i32);
    return s;
}

/* the items of class c in the sorted classes s[0 .. n) */
static int64_t class_count(const int32_t *s, int64_t n, int32_t c)
{
    int64_t a = util_lower_bound_i32(s, n, c);
    return c == INT32_MAX ? n - a : util_lower_bound_i32(s + a, n - a, c + 1);
}

int64_t retrieval_at_r_depth(const int32_t *qcls, int64_t nq, const int32_t *gcls, int64_t ng, int self,
                             int64_t kmin, int64_t cap)
{
    int32_t *s = sorted_classes(gcls, ng);
    int64_t K = kmin;
    for (int64_t q = 0; q < nq; q++) {
        int64_t c = class_count(s, ng, qcls[q]) - (self != 0);
        if (c > K)
            K = c;
    }
    free(s);
    return K < cap ? K : cap;
}

void retrieval_run_at_r(const retrieval_job *J, int64_t K, retrieval_query *per, retrieval_summary *sum)
{
    int64_t ng = J->ng, nq = J->nq;
    if (J->mask || J->nmask != 1 || J->global || J->nk < 1 || J->nk > RETRIEVAL_MAXK || K < J->ks[J->nk - 1])
        die("internal error: retrieval_run_at_r: masks, a global histogram or k beyond the depth %lld", (long long)K);
    if ((double)nq * (double)K * 8 > RETRIEVAL_AT_R_MEMORY)
        die("--at-r: the %lld nearest of %lld queries take %.1f GB (the largest class sets the depth): rank in full "
            "(without --at-r; faster for classes this large) or give fewer queries at once (--queries)",
            (long long)K, (long long)nq, (double)nq * (double)K * 8 / 1e9);
    int32_t *s = sorted_classes(J->gcls, ng);
    int64_t *R = emalloc((size_t)(nq ? nq : 1) * sizeof *R);
    for (int64_t q = 0; q < nq; q++) {
        int64_t x = J->exclude ? J->exclude[q] : -1;
        R[q] = class_count(s, ng, J->qcls[q]) - (x >= 0 && x < ng && J->gcls[x] == J->qcls[q]);
        if (R[q] > K)
            die("--at-r: query %lld has %lld positives but at most %lld gallery items can be ranked for it: rank in "
                "full (without --at-r)", (long long)q, (long long)R[q], (long long)K);
    }
    free(s);
    int64_t *nbr = emalloc((size_t)(nq ? nq : 1) * (size_t)K * sizeof *nbr);
    metrics_knn_info info = {METRICS_SCREEN_PLAIN, 0};
    if (J->gvar)
        mls_knn_kind(J->kind, J->Q, J->qvar, nq, J->G, J->gvar, ng, J->D, (int)K, J->exclude, J->threads, nbr, NULL);
    else
        metrics_knn_ex(J->Q, NULL, nq, J->G, NULL, ng, J->D, (int)K, J->exclude, J->threads, nbr, NULL, &info);
    int32_t *ncls = emalloc((size_t)K * sizeof *ncls);
    *sum = (retrieval_summary){.knn_screen = info.screen};
    for (int64_t q = 0; q < nq; q++) {
        for (int64_t r = 0; r < K; r++)
            ncls[r] = J->gcls[nbr[q * K + r]];
        retrieval_from_nearest(ncls, K, J->qcls[q], R[q], J->ks, J->nk, &per[q]);
        retrieval_summary_add(sum, &per[q], J->nk);
    }
    retrieval_summary_finish(sum, J->nk);
    free(ncls);
    free(nbr);
    free(R);
}

void retrieval_summary_merge(retrieval_summary *s, const retrieval_summary *p, int nk)
{
    s->queries += p->queries;
    s->no_positive += p->no_positive;
    s->map += p->map;
    s->map_r += p->map_r;
    s->rprec += p->rprec;
    s->p1 += p->p1;
    s->mrr += p->mrr;
    for (int j = 0; j < nk; j++)
        s->recall[j] += p->recall[j];
}

void retrieval_class_average(const int32_t *cls, const retrieval_query *per, int64_t n, int nk,
                             retrieval_summary *out)
{
    double *key = emalloc((size_t)(n ? n : 1) * sizeof *key);
    int64_t *order = emalloc((size_t)(n ? n : 1) * sizeof *order);
    for (int64_t q = 0; q < n; q++)
        key[q] = cls[q];
    metrics_argsort(key, n, order); /* stable: a class's queries in query order */
    retrieval_summary all = {0};
    for (int64_t a = 0, b; a < n; a = b) {
        retrieval_summary c = {0};
        for (b = a; b < n && cls[order[b]] == cls[order[a]]; b++)
            retrieval_summary_add(&c, &per[order[b]], nk);
        all.no_positive += c.no_positive;
        if (!c.queries)
            continue;
        retrieval_summary_finish(&c, nk);
        c.queries = 1;
        c.no_positive = 0;
        retrieval_summary_merge(&all, &c, nk);
    }
    retrieval_summary_finish(&all, nk);
    *out = all;
    free(key);
    free(order);
}

void retrieval_summary_finish(retrieval_summary *s, int nk)
{
    double n = s->queries ? (double)s->queries : NAN;
    s->map /= n;
    s->map_r /= n;
    s->rprec /= n;
    s->p1 /= n;
    s->mrr /= n;
    for (int j = 0; j < nk; j++)
        s->recall[j] /= n;
}

/* ------------------------------------------------------------------ one query */

/* the bits of a pair's d2 = (||q||^2 + ||g||^2) + (-2 q.g) in float32: monotone for d2 >= 0 */
static inline uint32_t d2_bits(float qn, float gn, float dot)
{
    float d = qn + gn + dot;
    d = d > 0 ? d : 0.0f; /* rounding below 0, and -0, to +0 */
    uint32_t b;
    memcpy(&b, &d, sizeof b);
    return b;
}

/* the sort key of a gallery item: its d2's float bits above its gallery index, so that comparing
 * keys is comparing (d2, index) */
static inline uint64_t item_key(float qn, float gn, float dot, uint32_t g)
{
    return (uint64_t)d2_bits(qn, gn, dot) << 32 | g;
}

/* ------------------------------------------------------------------ global histogram */

/* page e holds the bins of float exponent e: count[2 * bin + positive], bin = the kept mantissa */
#define HIST_SHIFT (23 - RETRIEVAL_GLOBAL_MANTISSA)
#define HIST_PAGE_BINS (1 << RETRIEVAL_GLOBAL_MANTISSA)
#define HIST_PAGES 256
struct retrieval_hist {
    int64_t *page[HIST_PAGES];
};

retrieval_hist *retrieval_hist_new(void) { return ecalloc(1, sizeof(retrieval_hist)); }

void retrieval_hist_free(retrieval_hist *h)
{
    if (!h)
        return;
    for (int e = 0; e < HIST_PAGES; e++)
        free(h->page[e]);
    free(h);
}

uint32_t retrieval_global_key(float d2)
{
    d2 = d2 > 0 ? d2 : 0.0f;
    uint32_t b;
    memcpy(&b, &d2, sizeof b);
    return b >> HIST_SHIFT;
}

float retrieval_global_key_max(uint32_t key)
{
    uint32_t b = key << HIST_SHIFT | ((1u << HIST_SHIFT) - 1);
    float f;
    memcpy(&f, &b, sizeof f);
    return f;
}

static int64_t *hist_slot(retrieval_hist *h, uint32_t key, int positive)
{
    uint32_t e = key >> RETRIEVAL_GLOBAL_MANTISSA;
    if (e >= HIST_PAGES)
        die("internal error: global key %u beyond the histogram", key);
    if (!h->page[e])
        h->page[e] = ecalloc(2 * HIST_PAGE_BINS, sizeof *h->page[e]);
    return &h->page[e][2 * (key & (HIST_PAGE_BINS - 1)) + (positive != 0)];
}

void retrieval_hist_add(retrieval_hist *h, uint32_t key, int positive, int64_t count)
{
    *hist_slot(h, key, positive) += count;
}

void retrieval_hist_merge(retrieval_hist *h, const retrieval_hist *a)
{
    for (int e = 0; e < HIST_PAGES; e++) {
        if (!a->page[e])
            continue;
        if (!h->page[e])
            h->page[e] = ecalloc(2 * HIST_PAGE_BINS, sizeof *h->page[e]);
        for (int i = 0; i < 2 * HIST_PAGE_BINS; i++)
            h->page[e][i] += a->page[e][i];
    }
}

/* walks the non-empty bins in ascending key: the running point of metrics_pr_curve */
typedef struct {
    const retrieval_hist *h;
    int64_t P, tp, fp;
    int e, i;             /* the next bin: page e, bin i */
    uint32_t key;         /* the current point's bin */
    double recall, precision;
} hist_walk;

static void walk_start(hist_walk *w, const retrieval_hist *h, int64_t P)
{
    *w = (hist_walk){.h = h, .P = P};
}

static int walk_next(hist_walk *w)
{
    for (; w->e < HIST_PAGES; w->e++, w->i = 0) {
        const int64_t *p = w->h->page[w->e];
        if (!p)
            continue;
        for (; w->i < HIST_PAGE_BINS; w->i++) {
            int64_t neg = p[2 * w->i], pos = p[2 * w->i + 1];
            if (!neg && !pos)
                continue;
            w->tp += pos;
            w->fp += neg;
            w->key = (uint32_t)w->e << RETRIEVAL_GLOBAL_MANTISSA | (uint32_t)w->i;
            /* the same operations as metrics_pr_curve: the same doubles */
            w->precision = (double)w->tp / (double)(w->tp + w->fp);
            w->recall = w->P ? (double)w->tp / (double)w->P : NAN;
            w->i++;
            return 1;
        }
    }
    return 0;
}

void retrieval_hist_summary(const retrieval_hist *h, retrieval_global *g)
{
    memset(g, 0, sizeof *g);
    for (int e = 0; e < HIST_PAGES; e++)
        if (h->page[e])
            for (int i = 0; i < HIST_PAGE_BINS; i++) {
                g->pairs += h->page[e][2 * i] + h->page[e][2 * i + 1];
                g->positives += h->page[e][2 * i + 1];
            }
    /* metrics_ap: sum over blocks of (new positives) x (precision at the block's end), over P;
     * metrics_pr_trapezoid_area: trapezoids from (0, the first precision) */
    hist_walk w;
    walk_start(&w, h, g->positives);
    double sum = 0, area = 0, r0 = 0, p0 = 0;
    int64_t prev = 0;
    while (walk_next(&w)) {
        if (!g->points++)
            p0 = w.precision;
        sum += (double)(w.tp - prev) * w.precision;
        prev = w.tp;
        area += (w.recall - r0) * 0.5 * (w.precision + p0);
        r0 = w.recall;
        p0 = w.precision;
    }
    g->ap = g->positives ? sum / (double)g->positives : NAN;
    g->pr_auc = g->points ? area : NAN;
}

int64_t retrieval_hist_curve(const retrieval_hist *h, int64_t max, metrics_pr_point *pts)
{
    if (max < 2)
        die("internal error: retrieval_hist_curve: room for %lld points", (long long)max);
    retrieval_global g;
    retrieval_hist_summary(h, &g);
    if (!g.points)
        return 0;
    /* pass 1: the path length; pass 2: keep a point every length / (max - 2) of it */
    hist_walk w;
    double len = 0, r0 = 0, p0 = 0;
    walk_start(&w, h, g.positives);
    for (int64_t t = 0; walk_next(&w); t++) {
        if (t)
            len += fabs(w.recall - r0) + fabs(w.precision - p0);
        r0 = w.recall;
        p0 = w.precision;
    }
    double step = len / (double)(max - 2), acc = 0;
    int64_t n = 0;
    walk_start(&w, h, g.positives);
    for (int64_t t = 0; walk_next(&w); t++) {
        if (t)
            acc += fabs(w.recall - r0) + fabs(w.precision - p0);
        r0 = w.recall;
        p0 = w.precision;
        int last = t == g.points - 1;
        if (g.points <= max || t == 0 || last || (acc >= step && n < max - 1)) {
            pts[n++] = (metrics_pr_point){retrieval_global_key_max(w.key), w.recall, w.precision, w.tp, w.fp};
            acc = 0;
        }
    }
    return n;
}

/* a[0..n) distinct keys in increasing gallery index (the low word) sorted by (d2, index): a
 * stable sort on the high word, by radix (4 passes of 8 bits; a pass whose byte is the same for
 * every key is skipped), or by insertion for a few keys */
static void sort_keys(uint64_t *a, uint64_t *tmp, int64_t n)
{
    if (n < 48) {
        for (int64_t i = 1; i < n; i++) {
            uint64_t v = a[i];
            int64_t j = i;
            for (; j > 0 && a[j - 1] > v; j--)
                a[j] = a[j - 1];
            a[j] = v;
        }
        return;
    }
    uint32_t count[4][256] = {{0}};
    for (int64_t i = 0; i < n; i++) {
        uint32_t h = (uint32_t)(a[i] >> 32);
        for (int p = 0; p < 4; p++)
            count[p][h >> (8 * p) & 255]++;
    }
    uint64_t *src = a, *dst = tmp;
    for (int p = 0; p < 4; p++) {
        int shift = 32 + 8 * p;
        if (count[p][src[0] >> shift & 255] == (uint32_t)n)
            continue;
        uint32_t off = 0;
        for (int b = 0; b < 256; b++) {
            uint32_t c = count[p][b];
            count[p][b] = off;
            off += c;
        }
        for (int64_t i = 0; i < n; i++)
            dst[count[p][src[i] >> shift & 255]++] = src[i];
        uint64_t *t = src;
        src = dst;
        dst = t;
    }
    if (src != a)
        memcpy(a, src, (size_t)n * sizeof *a);
}

/* Where a negative falls among a query's sorted positive keys pk[0..P), by table instead of a
 * binary search per negative (its log2 P dependent loads were most of retrieve's time: with
 * little class structure nearly every negative lies before the last positive). The positives' d2
 * bits span [lo, hi]; bucket b holds the bit patterns lo + [b, b + 1) 2^shift, and first[b]
 * counts the positives below its first pattern, so the positives inside it are
 * first[b] .. first[b + 1]: a negative in a bucket without one is placed with no comparison, in
 * one with some by a short scan of whole keys (d2 bits, then gallery index: the tie rule). About
 * 32 buckets per positive: on random data (D = 128) a tenth of the negatives fell into a bucket
 * with a positive at 16 per positive, half as many at 32, and 64 was no faster (a larger table to
 * fill per query). The table holds at most RANK_MAXBUCKETS (the bucket is a uint16 in rank_count,
 * nb + 1 included): it was 4,096, which left large classes few buckets per positive (4 at 1,000
 * positives, 1.4 at 3,000), so that most negatives needed the scan and the ranking grew faster
 * than the pairs with the classes (issue 36): retrieve -t 1 on 60,000 x 128 in 20 classes (3,000
 * positives a query) took 59.2 s of CPU with 4,096 buckets, 27.3 s with 65,534; on 20,000 in 20
 * classes (1,000 positives) 4.1 s and 3.1 s; the same JSON. */
#define RANK_PER_POSITIVE 32
#ifndef RANK_MAXBUCKETS
#define RANK_MAXBUCKETS 65534
#endif
typedef struct {
    uint32_t lo, hi, shift; /* the positives' d2 bits span [lo, hi] */
    int64_t nb;             /* buckets */
    const int32_t *tab;     /* (nb + 2) rank_table_build's */
} rank_table;

/* T's table into tab (nb + 2 entries, at most RANK_MAXBUCKETS + 2): tab[b] for bucket b < nb is
 * first[b], the positives below its first pattern, with the sign bit set when the bucket holds a
 * positive (those are first[b] .. first[b + 1]); tab[nb] = P (first[nb]: every d2 is at most hi;
 * also the slot of a d2 beyond hi) and tab[nb + 1] = 0 (the slot of a d2 below lo). One pass over
 * the positives, each filling the buckets up to its own: the table was built by a scan of the
 * buckets comparing each with the next positive, then copied with the flags: two passes of 32
 * buckets a positive, a branch each, three quarters of the per-query work outside the counting
 * (perf, evaluate -t 1: that work 8.2 % of the CPU at 100,000 items, 7.8 % at 30,000; now 4.0 %). */
static void rank_table_build(rank_table *T, const uint64_t *pk, int64_t P, int32_t *tab)
{
    uint32_t lo = (uint32_t)(pk[0] >> 32), hi = (uint32_t)(pk[P - 1] >> 32), shift = 0;
    uint64_t want = P < RANK_MAXBUCKETS / RANK_PER_POSITIVE ? (uint64_t)P * RANK_PER_POSITIVE : RANK_MAXBUCKETS;
    while ((uint64_t)(hi - lo) >> shift >= want)
        shift++;
    int64_t nb = (int64_t)((uint64_t)(hi - lo) >> shift) + 1, b = 0;
    for (int64_t t = 0; t < P; t++) {
        int64_t bt = (int64_t)(((uint32_t)(pk[t] >> 32) - lo) >> shift);
        if (bt < b) /* in the previous positive's bucket */
            continue;
        for (; b < bt; b++)
            tab[b] = (int32_t)t;
        tab[b++] = (int32_t)t | INT32_MIN;
    }
    tab[nb] = (int32_t)P; /* b = nb: the last positive is in bucket nb - 1 */
    tab[nb + 1] = 0;
    T->lo = lo;
    T->hi = hi;
    T->shift = shift;
    T->tab = tab;
    T->nb = nb;
}

/* how many of the sorted keys pk[u .. end) are below key: counted without a branch for a short
 * run (their order against the key is a coin toss), by binary search for a long one (a bucket of
 * many positives: ties, all of them in one bucket when every distance is equal, made the scan
 * O(P) per negative and the ranking of n tied items grow as n^3: 10,000 in 10 classes took
 * 28.5 s against 0.44 s at random) */
#define RANK_SCAN 32
static inline int64_t rank_below_in(const uint64_t *pk, int64_t u, int64_t end, uint64_t key)
{
    if (end - u <= RANK_SCAN) {
        int64_t below = 0;
        for (; u < end; u++)
            below += pk[u] < key;
        return below;
    }
    int64_t lo = u, hi = end; /* the first position whose key is >= key (util_lower_bound's, inlined:
                               * called out of line it cost a fourth more CPU on the tied set) */
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (pk[mid] < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo - u;
}

/* how many of the sorted keys pk are below key, whose d2 bits are at most the last one's: the
 * bucket's first[b], plus, in a bucket with positives, those of them below key (counted without
 * a branch: their order against the key is a coin toss) */
static inline int64_t rank_table_below(const rank_table *T, const uint64_t *pk, uint64_t key)
{
    uint32_t x = (uint32_t)(key >> 32);
    if (x < T->lo)
        return 0;
    int32_t e = T->tab[(x - T->lo) >> T->shift];
    if (e >= 0)
        return e;
    int64_t t = e & INT32_MAX, end = T->tab[((x - T->lo) >> T->shift) + 1] & INT32_MAX;
    return t + rank_below_in(pk, t, end, key);
}

/* the slot of a negative with key key in the counts cnt[0..P]: the positives below it, or P
 * (ranks after every positive: changes no rank) when it is beyond the last */
static inline int64_t rank_slot(const rank_table *T, const uint64_t *pk, int64_t P, uint64_t key)
{
    return key > pk[P - 1] ? P : rank_table_below(T, pk, key);
}

/* the entry of d2 bits x in T's table: nb + 1 below the first positive, nb beyond the last */
static inline uint32_t rank_bucket(const rank_table *T, uint32_t x)
{
    return x < T->lo ? (uint32_t)T->nb + 1 : x > T->hi ? (uint32_t)T->nb : (x - T->lo) >> T->shift;
}

/* cnt[slot]++ for every gallery position j in [a, b) (row: -2 q.g at sorted positions), one
 * gallery only, in three passes: every item's entry of T's table into bk (sixteen at a time with
 * AVX2; the d2 and its bits are those of d2_bits, to the bit); then through the table each item's
 * slot counted, with no branch, those in a bucket with a positive listed instead; then the listed
 * ones placed among their bucket's positives. Passes over arrays rather than a table look-up
 * right after the vector arithmetic: the gather, and the scalar loads of a vector just stored,
 * stalled the loop. bk and list: (b - a) each. */
static void rank_count(const rank_table *T, const uint64_t *pk, float qn, const float *gn, const float *row,
                       const uint32_t *gidx, int64_t a, int64_t b, uint16_t *bk, uint32_t *list, int32_t *cnt)
{
    const int32_t *tab = T->tab;
    int64_t n = b - a, i = 0;
    gn += a, row += a, gidx += a;
#if HEDGE_SIMD_AVX2
    __m256 vq = _mm256_set1_ps(qn), zero = _mm256_setzero_ps();
    __m256i vlo = _mm256_set1_epi32((int32_t)T->lo), vhi = _mm256_set1_epi32((int32_t)T->hi);
    __m256i vbelow = _mm256_set1_epi32((int32_t)T->nb + 1), vabove = _mm256_set1_epi32((int32_t)T->nb);
    __m128i vshift = _mm_cvtsi32_si128((int)T->shift);
    for (; i + 16 <= n; i += 16) {
        __m256i v[2];
        for (int h = 0; h < 2; h++) {
            /* (qn + gn) + dot, then max(d, +0): +0 for negative d and -0, as d2_bits */
            __m256 d = _mm256_add_ps(_mm256_add_ps(vq, _mm256_loadu_ps(gn + i + 8 * h)),
                                     _mm256_loadu_ps(row + i + 8 * h));
            __m256i bits = _mm256_castps_si256(_mm256_max_ps(d, zero));
            /* bits of floats >= +0 compare as signed integers as they do as unsigned */
            __m256i below = _mm256_cmpgt_epi32(vlo, bits), above = _mm256_cmpgt_epi32(bits, vhi);
            __m256i bucket = _mm256_srl_epi32(_mm256_sub_epi32(bits, vlo), vshift);
            v[h] = _mm256_blendv_epi8(_mm256_blendv_epi8(bucket, vbelow, below), vabove, above);
        }
        /* 16 entries (< 2^16) as uint16, in order: packus interleaves the 128-bit halves */
        __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(v[0], v[1]), 0xD8);
        _mm256_storeu_si256((__m256i *)(bk + i), packed);
    }
#endif
    for (; i < n; i++) {
        float d = qn + gn[i] + row[i];
        d = d > 0 ? d : 0.0f;
        uint32_t x;
        memcpy(&x, &d, sizeof x);
        bk[i] = (uint16_t)rank_bucket(T, x);
    }
    int64_t nl = 0;
    for (i = 0; i < n; i++) {
        int32_t e = tab[bk[i]];
        list[nl] = (uint32_t)i;
        nl += e < 0;
        cnt[e & INT32_MAX] += e >= 0;
    }
    /* a listed item's bucket b < nb holds the positives first[b] .. first[b + 1]: its slot is
     * first[b] plus those below its key (P when it is beyond the last, in the last's bucket) */
    for (int64_t k = 0; k < nl; k++) {
        int64_t t = list[k];
        uint64_t key = item_key(qn, gn[t], row[t], gidx[t]);
        int64_t u = tab[bk[t]] & INT32_MAX, end = tab[bk[t] + 1] & INT32_MAX;
        cnt[u + rank_below_in(pk, u, end, key)]++;
    }
}

typedef struct {
    const retrieval_job *J;
    const float *qs;         /* (nq, D) the queries, centred on the gallery's mean */
    const float *gs;         /* (ng, D) the gallery sorted by (class, index), centred */
    const float *gn, *qn;    /* (ng) squared norms at sorted positions, (nq) the queries' */
    const uint32_t *gidx;    /* (ng) sorted position -> gallery index */
    const int32_t *scls;     /* (ng) class at each sorted position */
    const int64_t *spos;     /* (ng) gallery index -> sorted position */
    const uint32_t *smask;   /* (ng) masks at sorted positions */
    const uint32_t *mask;    /* (ng) masks by gallery index */
    int64_t maxp;            /* the largest class */
    retrieval_query *per;    /* (nq) gallery 0 */
    retrieval_summary *part; /* (nblocks, nmask) sums per block of queries */
    int64_t sblock;          /* queries per sgemm: a multiple of RETRIEVAL_QBLOCK */
    const mls_set *mls;      /* or NULL: the gallery sorted, for -MLS instead of the sgemm */
    double add;              /* -mls_floor */
    struct rscratch *S[PAR_MAXTHREADS]; /* each worker's scratch, made at its first task */
    float gnmax;             /* the largest gn (row_fn's) */
    const retrieval_hooks *H; /* or NULL: retrieval_run_rows */
} rwork;

typedef struct rscratch {
    retrieval_hist *global;  /* this worker's pairs, or NULL */
    float *row;              /* (sblock, ng) -2 q.g */
    uint64_t *pk, *tmp;      /* (maxp) the positives' keys, sorted */
    int32_t *cnt;            /* (nmask, maxp + 1): negatives with t positives before them */
    int64_t *rank;           /* (maxp) */
    int32_t *tab;            /* (RANK_MAXBUCKETS + 2) the rank table */
    uint16_t *bk;            /* (ng) rank_count's buckets */
    uint32_t *list;          /* (ng) rank_count's items in a bucket with a positive */
} rscratch;

/* first sorted position whose class is >= c (upper: > c) */
static int64_t class_bound(const int32_t *scls, int64_t n, int32_t c, int upper)
{
    int64_t lo = 0, hi = n;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (scls[mid] < c || (upper && scls[mid] == c))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* the pairs of gallery positions [a, b) (row: their -2 q.g) into the histogram h */
static void global_range(retrieval_hist *h, float qn, const float *gn, const float *row, int64_t a, int64_t b,
                         int positive)
{
    for (int64_t j = a; j < b; j++) {
        uint32_t bits = d2_bits(qn, gn[j], row[j]), e = bits >> 23;
        int64_t *p = h->page[e];
        if (!p)
            p = h->page[e] = ecalloc(2 * HIST_PAGE_BINS, sizeof *p);
        p[(bits >> (HIST_SHIFT - 1) & (2 * HIST_PAGE_BINS - 2)) | (uint32_t)positive]++;
    }
}

/* every pair of query q but the excluded one: positives [s, e), negatives the rest */
static void global_query(retrieval_hist *h, float qn, const float *gn, const float *row, int64_t ng, int64_t s,
                         int64_t e, int64_t exs)
{
    global_range(h, qn, gn, row, 0, s, 0);
    global_range(h, qn, gn, row, s, e, 1);
    global_range(h, qn, gn, row, e, ng, 0);
    if (exs >= 0)
        (*hist_slot(h, d2_bits(qn, gn[exs], row[exs]) >> HIST_SHIFT, exs >= s && exs < e))--;
}

/* query q (its row of -2 q.g at sorted positions) into res[nmask] */
static void one_query(const rwork *W, rscratch *S, int64_t q, const float *row, retrieval_query *res)
{
    const retrieval_job *J = W->J;
    int64_t ng = J->ng, s = class_bound(W->scls, ng, J->qcls[q], 0), e = class_bound(W->scls, ng, J->qcls[q], 1);
    int64_t ex = J->exclude ? J->exclude[q] : -1, exs = ex >= 0 && ex < ng ? W->spos[ex] : -1;
    float qn = W->qn[q];
    const float *gn = W->gn;
    const uint32_t *gidx = W->gidx;
    int nm = J->nmask;
    uint64_t *pk = S->pk;
    int64_t P = 0;
    if (S->global)
        global_query(S->global, qn, gn, row, ng, s, e, exs);
    for (int64_t j = s; j < e; j++)
        if (j != exs)
            pk[P++] = item_key(qn, gn[j], row[j], gidx[j]);
    if (!P) {
        for (int m = 0; m < nm; m++)
            retrieval_from_ranks(NULL, 0, J->ks, J->nk, &res[m]);
        if (W->H && W->H->rank_fn)
            W->H->rank_fn(W->H->ctx, q, NULL, 0);
        return;
    }
    sort_keys(pk, S->tmp, P);
    uint64_t last = pk[P - 1];
    rank_table T;
    rank_table_build(&T, pk, P, S->tab);
    int32_t *cnt = S->cnt;
    memset(cnt, 0, (size_t)nm * (P + 1) * sizeof *cnt);
    /* the negatives: those after every positive change no rank */
    if (nm == 1) {
        /* one gallery: every negative into cnt[0 .. P] (slot P: after every positive), then the
         * excluded item out again */
        rank_count(&T, pk, qn, gn, row, gidx, 0, s, S->bk, S->list, cnt);
        rank_count(&T, pk, qn, gn, row, gidx, e, ng, S->bk, S->list, cnt);
        if (exs >= 0 && (exs < s || exs >= e))
            cnt[rank_slot(&T, pk, P, item_key(qn, gn[exs], row[exs], gidx[exs]))]--;
    } else
        for (int part = 0; part < 2; part++) {
            int64_t a = part ? e : 0, b = part ? ng : s;
            for (int64_t j = a; j < b; j++) {
                uint64_t key = item_key(qn, gn[j], row[j], gidx[j]);
                if (key > last || j == exs)
                    continue;
                int64_t t = rank_table_below(&T, pk, key);
                for (uint32_t bits = W->smask[j]; bits; bits &= bits - 1)
                    cnt[__builtin_ctz(bits) * (P + 1) + t]++;
            }
        }
    /* positive t (sorted) ranks after the kept positives before it and the kept negatives with at
     * most t positives before them */
    for (int m = 0; m < nm; m++) {
        const int32_t *cm = cnt + m * (P + 1);
        int64_t neg = 0, R = 0;
        for (int64_t t = 0; t < P; t++) {
            neg += cm[t];
            if (W->mask[(uint32_t)pk[t]] >> m & 1) {
                S->rank[R] = R + 1 + neg;
                R++;
            }
        }
        retrieval_from_ranks(S->rank, R, J->ks, J->nk, &res[m]);
        if (!m && W->H && W->H->rank_fn)
            W->H->rank_fn(W->H->ctx, q, S->rank, R);
    }
}

static rscratch *scratch_new(const rwork *W)
{
    int64_t ng = W->J->ng;
    rscratch *S = emalloc(sizeof *S);
    S->global = W->J->global ? retrieval_hist_new() : NULL;
    S->row = ealloc_aligned((size_t)W->sblock * ng * sizeof *S->row);
    S->pk = emalloc((size_t)(W->maxp + 1) * sizeof *S->pk);
    S->tmp = emalloc((size_t)(W->maxp + 1) * sizeof *S->tmp);
    S->cnt = emalloc((size_t)W->J->nmask * (W->maxp + 1) * sizeof *S->cnt);
    S->rank = emalloc((size_t)(W->maxp + 1) * sizeof *S->rank);
    S->tab = emalloc((RANK_MAXBUCKETS + 2) * sizeof *S->tab);
    S->bk = emalloc((size_t)ng * sizeof *S->bk);
    S->list = emalloc((size_t)ng * sizeof *S->list);
    return S;
}

/* the scratch freed; its pairs added to the run's histogram (integer counts: any order gives the
 * same sums; a page the total lacks moves there instead of being copied) */
static void scratch_free(rscratch *S, retrieval_hist *global)
{
    if (S->global) {
        for (int e = 0; e < HIST_PAGES; e++)
            if (S->global->page[e] && !global->page[e]) {
                global->page[e] = S->global->page[e];
                S->global->page[e] = NULL;
            }
        retrieval_hist_merge(global, S->global);
        retrieval_hist_free(S->global);
    }
    free(S->row);
    free(S->pk);
    free(S->tmp);
    free(S->cnt);
    free(S->rank);
    free(S->tab);
    free(S->bk);
    free(S->list);
    free(S);
}

/* task: the queries q0 = task x sblock .. q0 + sblock - 1, one sgemm */
static void rblock(void *arg, int task, int worker)
{
    rwork *W = arg;
    const retrieval_job *J = W->J;
    int64_t ng = J->ng, sb = W->sblock;
    int nm = J->nmask;
    if (!W->S[worker])
        W->S[worker] = scratch_new(W);
    rscratch *S = W->S[worker];
    retrieval_query res[RETRIEVAL_MAXMASK];
    int64_t q0 = (int64_t)task * sb;
    int64_t qb = J->nq - q0 < sb ? J->nq - q0 : sb;
    if (W->mls) /* row (qb, ng) = -MLS - floor: the norms are 0 */
        for (int64_t r = 0; r < qb; r++)
            mls_row(W->mls, J->Q + (q0 + r) * J->D, J->qvar + (q0 + r) * J->D, W->add, S->row + r * ng);
    else /* row (qb, ng) = -2 Q[q0 : q0+qb] Gsorted^T */
        blas_sgemm(0, 1, (int)qb, (int)ng, J->D, -2.0f, W->qs + q0 * J->D, J->D, W->gs, J->D, 0.0f, S->row, (int)ng);
    for (int64_t r = 0; r < qb; r++) {
        retrieval_summary *part = W->part + ((q0 + r) / RETRIEVAL_QBLOCK) * nm;
        one_query(W, S, q0 + r, S->row + r * ng, res);
        if (W->H && W->H->row_fn && !W->mls)
            W->H->row_fn(W->H->ctx, q0 + r, S->row + r * ng, W->qn[q0 + r], W->gn, W->gnmax, W->gidx, ng);
        W->per[q0 + r] = res[0];
        for (int m = 0; m < nm; m++)
            retrieval_summary_add(&part[m], &res[m], J->nk);
    }
}

/* squared norms in float; dies on a coordinate or norm the float sums cannot hold */
static float *sq_norms(const char *what, const float *X, int64_t n, int D)
{
    float *t = emalloc((size_t)(n ? n : 1) * sizeof *t);
    for (int64_t i = 0; i < n; i++) {
        double s = 0;
        for (int d = 0; d < D; d++) {
            double v = X[i * D + d];
            if (!isfinite(v))
                die("%s %lld has a coordinate %g that is not finite", what, (long long)i, v);
            s += v * v;
        }
        if (!(s <= (double)FLT_MAX / 16))
            die("%s %lld: squared norm %g is too large for float32 distances (at most %g)", what, (long long)i, s,
                (double)FLT_MAX / 16);
        t[i] = (float)s;
    }
    return t;
}

/* X (n, D) - mean rounded to float; the largest squared norm of a row into *maxnorm */
static float *centred(const float *X, int64_t n, int D, const double *mean, double *maxnorm)
{
    float *c = emalloc((size_t)(n ? n : 1) * D * sizeof *c);
    for (int64_t i = 0; i < n; i++) {
        double s = 0;
        for (int d = 0; d < D; d++) {
            c[i * D + d] = (float)((double)X[i * D + d] - mean[d]);
            s += (double)c[i * D + d] * c[i * D + d];
        }
        if (s > *maxnorm)
            *maxnorm = s;
    }
    return c;
}

void retrieval_run(const retrieval_job *J, retrieval_query *per, retrieval_summary *sum)
{
    retrieval_run_rows(J, per, sum, NULL);
}

void retrieval_run_rows(const retrieval_job *J, retrieval_query *per, retrieval_summary *sum,
                        const retrieval_hooks *H)
{
    int64_t ng = J->ng, nq = J->nq;
    int D = J->D, nm = J->nmask;
    if (nm < 1 || nm > RETRIEVAL_MAXMASK || J->nk < 1 || J->nk > RETRIEVAL_MAXK || ng < 1 || ng > UINT32_MAX ||
        ng > 2147483647)
        die("internal error: retrieval_run: %d galleries, %d k, %lld gallery items", nm, J->nk, (long long)ng);
    int mls = J->gvar != NULL;
    float *qs = NULL, *gcen = NULL;
    if (!mls) {
        /* every coordinate finite and every norm within the float sums' reach (dies otherwise) */
        free(sq_norms("query", J->Q, nq, D));
        free(sq_norms("gallery item", J->G, ng, D));
        /* The distances are computed on coordinates centred on the gallery's mean (metrics_centre):
         * far from the origin ||q||^2 + ||g||^2 - 2 q.g cancels catastrophically (offset 1000,
         * spread 1: norms of 1e6 whose float rounding, 0.06, is a good part of the distances, and
         * P@1 flips). A centred norm beyond the limit (coordinates near it of both signs):
         * uncentred. */
        double *mean = emalloc((size_t)(D ? D : 1) * sizeof *mean), maxnorm = 0;
        metrics_centre(J->Qall ? J->Qall : J->Q, J->Qall ? J->nqall : nq, J->G, ng, D, (double)FLT_MAX / 16, mean);
        qs = centred(J->Q, nq, D, mean, &maxnorm), gcen = centred(J->G, ng, D, mean, &maxnorm);
        if (!(maxnorm <= (double)FLT_MAX / 16)) {
            memset(mean, 0, (size_t)D * sizeof *mean);
            free(qs);
            free(gcen);
            qs = centred(J->Q, nq, D, mean, &maxnorm);
            gcen = centred(J->G, ng, D, mean, &maxnorm);
        }
        free(mean);
    }
    /* the gallery sorted by (class, index): a query's positives are one run of positions */
    double *ckey = emalloc((size_t)ng * sizeof *ckey);
    int64_t *order = emalloc((size_t)ng * sizeof *order);
    for (int64_t g = 0; g < ng; g++)
        ckey[g] = J->gcls[g];
    metrics_argsort(ckey, ng, order); /* stable: equal classes keep the index order */
    float *gs = mls ? NULL : emalloc((size_t)ng * D * sizeof *gs);
    uint32_t *gidx = emalloc((size_t)ng * sizeof *gidx), *smask = emalloc((size_t)ng * sizeof *smask);
    uint32_t *allmask = NULL;
    int32_t *scls = emalloc((size_t)ng * sizeof *scls);
    int64_t *spos = emalloc((size_t)ng * sizeof *spos), maxp = 0;
    if (!J->mask) {
        allmask = emalloc((size_t)ng * sizeof *allmask);
        for (int64_t g = 0; g < ng; g++)
            allmask[g] = 1;
    }
    const uint32_t *mask = J->mask ? J->mask : allmask;
    for (int64_t j = 0, run = 0; j < ng; j++) {
        int64_t g = order[j];
        if (!mls)
            memcpy(gs + j * D, gcen + g * D, (size_t)D * sizeof *gs);
        gidx[j] = (uint32_t)g;
        scls[j] = J->gcls[g];
        spos[g] = j;
        smask[j] = mask[g];
        run = j && scls[j] == scls[j - 1] ? run + 1 : 1;
        if (run > maxp)
            maxp = run;
    }
    free(ckey);
    /* the norms of d2's sum; for MLS 0 (its rows hold the distances), the gallery in the kernel's
     * layout, sorted as gs is */
    float *qn, *gn;
    mls_set *ms = NULL;
    if (mls) {
        qn = ecalloc((size_t)(nq ? nq : 1), sizeof *qn);
        gn = ecalloc((size_t)ng, sizeof *gn);
        ms = mls_set_new_kind(J->kind, J->G, J->gvar, ng, D, order);
    } else {
        qn = sq_norms("query", qs, nq, D);
        float *gn_orig = sq_norms("gallery item", gcen, ng, D);
        gn = emalloc((size_t)ng * sizeof *gn);
        for (int64_t j = 0; j < ng; j++)
            gn[j] = gn_orig[gidx[j]];
        free(gn_orig);
    }
    free(order);
    free(gcen);

    int64_t nblocks = (nq + RETRIEVAL_QBLOCK - 1) / RETRIEVAL_QBLOCK;
    retrieval_summary *part = ecalloc((size_t)(nblocks ? nblocks : 1) * nm, sizeof *part);
    /* Queries per sgemm: OpenBLAS packs the whole gallery for every call, which cost as much as
     * the multiplication itself at 32 queries a call (2 x 128 flops a pair, 20,000 x 128 centred
     * gallery); so as many blocks of RETRIEVAL_QBLOCK per call as RETRIEVAL_ROWBYTES of distances
     * per thread hold, at most 8. The call's size depends on ng alone, never on the threads.
     * RETRIEVAL_ROWBYTES was 64 MB: at 300,000 items that left one block a call, and packing the
     * 150 MB gallery for every 32 queries was a quarter of the time (perf: sgemm_incopy 27 %) and
     * the cost per pair grew with the gallery; at 256 MB, 6 blocks: 3,072 queries of 300,000 x
     * 128 took 8.6 s of CPU, now 6.4 s, the same JSON (issue 36 item 3). At 320 MB the 8 blocks
     * (256 queries a call) reach up to 327,680 gallery items, so that the packing's share per pair
     * stays that of 100,000 items up to 300,000 (it was 192 queries a call there: sgemm_incopy
     * 39 % more per pair, perf on retrieve -t 1); 3,840 queries of 300,000 x 128: 6.44-6.56 s of
     * CPU, now 6.23-6.24 s, 72 MiB more per thread, the same JSON.
     * Under the SkylakeX kernel a pair's distance is the same float whatever the call's size
     * (20,000 x 128 random: every output equal to 32-query calls'); under Haswell's a few
     * distances round differently (6 of 6,000 queries' AP moved by 9e-8 on 6,000 x 64 random:
     * near-ties, within the precision retrieval.h states). */
    int64_t sblock = RETRIEVAL_QBLOCK * (RETRIEVAL_ROWBYTES / ((int64_t)RETRIEVAL_QBLOCK * ng * (int64_t)sizeof(float)));
    sblock = sblock < RETRIEVAL_QBLOCK ? RETRIEVAL_QBLOCK : sblock > 8 * RETRIEVAL_QBLOCK ? 8 * RETRIEVAL_QBLOCK : sblock;
    int64_t nsblocks = (nq + sblock - 1) / sblock;
    int threads = J->threads < 1 ? 1 : J->threads > 64 ? 64 : J->threads;
    if (threads > nsblocks)
        threads = (int)(nsblocks ? nsblocks : 1);
    /* single-threaded sgemms in each worker: the numbers of a block never depend on the threads */
    int blas_saved = blas_threads();
    blas_set_threads(1);
    rwork W = {J, qs, gs, gn, qn, gidx, scls, spos, smask, mask, maxp, per, part, sblock, ms,
               mls && J->kind == MLS_NEG ? -mls_floor(J->gvar, ng, D) : 0, {0}, 0, H};
    for (int64_t j = 0; j < ng; j++)
        W.gnmax = gn[j] > W.gnmax ? gn[j] : W.gnmax;
    par_for(threads, (int)nsblocks, rblock, &W);
    blas_set_threads(blas_saved);
    for (int t = 0; t < PAR_MAXTHREADS; t++) /* worker order */
        if (W.S[t])
            scratch_free(W.S[t], J->global);

    /* gallery 0 over the queries in order; the others block by block */
    memset(sum, 0, (size_t)nm * sizeof *sum);
    for (int64_t q = 0; q < nq; q++)
        retrieval_summary_add(&sum[0], &per[q], J->nk);
    for (int m = 1; m < nm; m++)
        for (int64_t b = 0; b < nblocks; b++)
            retrieval_summary_merge(&sum[m], &part[b * nm + m], J->nk);
    for (int m = 0; m < nm; m++)
        retrieval_summary_finish(&sum[m], J->nk);
    free(part);
    mls_set_free(ms);
    free(gn);
    free(qn);
    free(qs);
    free(allmask);
    free(spos);
    free(scls);
    free(smask);
    free(gidx);
    free(gs);
}

/* ------------------------------------------------------------------ cleaning */

int64_t retrieval_clean_masks(const double *u, int64_t ng, double percent, int draws, uint64_t seed,
                              uint32_t *mask)
{
    if (draws < 0 || draws > RETRIEVAL_MAXMASK - 2)
        die("internal error: %d cleaning draws", draws);
    int64_t ndrop = (int64_t)floor((double)ng * percent / 100.0);
    if (ndrop < 0)
        ndrop = 0;
    if (ndrop > ng)
        ndrop = ng;
    uint32_t all = 3u | (uint32_t)((1ull << draws) - 1) << 2;
    double *neg = emalloc((size_t)(ng ? ng : 1) * sizeof *neg);
    for (int64_t g = 0; g < ng; g++) {
        if (!isfinite(u[g]))
            die("gallery item %lld: uncertainty %g is not finite", (long long)g, u[g]);
        mask[g] = all;
        neg[g] = -u[g];
    }
    /* ascending -u: the most uncertain first, ties in the seed's random order */
    int64_t *order = emalloc((size_t)(ng ? ng : 1) * sizeof *order);
    metrics_argsort_random(neg, ng, seed, order);
    for (int64_t t = 0; t < ndrop; t++)
        mask[order[t]] &= ~2u;
    /* each draw: the first ndrop of a partial Fisher-Yates shuffle */
    for (int r = 0; r < draws; r++) {
        rng g;
        rng_init(&g, seed, RETRIEVAL_DRAW ^ (uint64_t)r);
        for (int64_t i = 0; i < ng; i++)
            order[i] = i;
        rng_shuffle_partial(&g, order, sizeof *order, ng, ndrop);
        for (int64_t t = 0; t < ndrop; t++)
            mask[order[t]] &= ~(4u << r);
    }
    free(order);
    free(neg);
    return ndrop;
}

double retrieval_pearson(const double *x, const double *y, int64_t n)
{
    if (n < 2)
        return NAN;
    double mx = 0, my = 0;
    for (int64_t i = 0; i < n; i++)
        mx += x[i], my += y[i];
    mx /= (double)n, my /= (double)n;
    double sxy = 0, sxx = 0, syy = 0;
    for (int64_t i = 0; i < n; i++) {
        double dx = x[i] - mx, dy = y[i] - my;
        sxy += dx * dy, sxx += dx * dx, syy += dy * dy;
    }
    return sxx > 0 && syy > 0 ? sxy / sqrt(sxx * syy) : NAN;
}
