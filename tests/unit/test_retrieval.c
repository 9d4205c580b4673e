/* retrieval: the metrics from ranks and from points by hand (derivations in the comments), the
 * blocked search against a brute force (a full sort by (d2, gallery index), then the textbook
 * formulas) on random cases full of ties, several galleries and exclusions, thread independence,
 * the cleaning masks; global precision-recall: the key's truncation by hand, and the histogram
 * against metrics_ap / metrics_pr_curve on every pair's key materialised and sorted. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ap.h"
#include "blas.h"
#include "check.h"
#include "knn_search.h"
#include "retrieval.h"
#include "rng.h"
#include "util.h"

static void test_from_ranks(void)
{
    int ks[3] = {1, 2, 4};
    retrieval_query q;
    /* positives at ranks 1, 3, 6 (R = 3):
     *   precision at each: 1/1, 2/3, 3/6  -> AP = (1 + 2/3 + 1/2) / 3 = 13/18
     *   in the top R = 3: ranks 1 and 3    -> R-precision 2/3, MAP@R = (1 + 2/3) / 3 = 5/9
     *   first positive at rank 1           -> P@1 1, Recall@1,2,4 = 1 1 1 */
    int64_t r1[] = {1, 3, 6};
    retrieval_from_ranks(r1, 3, ks, 3, &q);
    CHECK_CLOSE(q.ap, 13.0 / 18, 1e-7);
    CHECK_CLOSE(q.rprec, 2.0 / 3, 1e-7);
    CHECK_CLOSE(q.map_r, 5.0 / 9, 1e-7);
    CHECK(q.p1 == 1 && q.npos == 3);
    CHECK(q.recall[0] == 1 && q.recall[1] == 1 && q.recall[2] == 1);
    /* positives at ranks 2, 5 (R = 2): AP = (1/2 + 2/5) / 2 = 0.45; top 2 holds rank 2 only:
     * R-precision 1/2, MAP@R = (1/2) / 2 = 1/4; P@1 0; Recall@1,2,4 = 0 1 1 */
    int64_t r2[] = {2, 5};
    retrieval_from_ranks(r2, 2, ks, 3, &q);
    CHECK_CLOSE(q.ap, 0.45, 1e-7);
    CHECK_CLOSE(q.rprec, 0.5, 0);
    CHECK_CLOSE(q.map_r, 0.25, 0);
    CHECK(q.p1 == 0 && q.recall[0] == 0 && q.recall[1] == 1 && q.recall[2] == 1);
    /* positives at ranks 5, 6 (R = 2): nothing in the top 2 or 4: AP = (1/5 + 2/6) / 2 = 4/15 */
    int64_t r3[] = {5, 6};
    retrieval_from_ranks(r3, 2, ks, 3, &q);
    CHECK_CLOSE(q.ap, 4.0 / 15, 1e-7);
    CHECK_CLOSE(q.rprec, 0, 0);
    CHECK_CLOSE(q.map_r, 0, 0);
    CHECK(q.recall[0] == 0 && q.recall[1] == 0 && q.recall[2] == 0);
    /* no positive: NaN, npos 0; the summary counts it and leaves it out */
    retrieval_query none;
    retrieval_from_ranks(NULL, 0, ks, 3, &none);
    CHECK(none.npos == 0 && isnan(none.ap) && isnan(none.rprec) && isnan(none.map_r));
    retrieval_summary s = {0};
    retrieval_summary_add(&s, &q, 3);
    retrieval_summary_add(&s, &none, 3);
    retrieval_from_ranks(r1, 3, ks, 3, &q);
    retrieval_summary_add(&s, &q, 3);
    retrieval_summary_finish(&s, 3);
    CHECK(s.queries == 2 && s.no_positive == 1);
    CHECK_CLOSE(s.map, (4.0 / 15 + 13.0 / 18) / 2, 1e-7);
    CHECK_CLOSE(s.recall[0], 0.5, 0);
    CHECK_CLOSE(s.p1, 0.5, 0);
}

/* Six points on a line (index: x, class), leave-one-out, squared distances:
 *   0: 0 c0   1: 1 c1   2: -1 c0   3: 2 c1   4: -2 c0   5: 3 c2
 * query 0: 1 (d2 1, neg), 2 (1, pos), 3 (4, neg), 4 (4, pos), 5 (9): ties by index, positives at
 *          ranks 2, 4: AP (1/2 + 2/4) / 2 = 1/2, R-prec 1/2, MAP@R (1/2) / 2 = 1/4, P@1 0,
 *          Recall@1 0, Recall@2 1
 * query 1: 0 (1), 3 (1, pos), 2 (4), 5 (4), 4 (9): rank 2, R = 1: AP 1/2, R-prec 0, MAP@R 0, R@2 1
 * query 2: 0 (1, pos), 4 (1, pos), 1, 3, 5: ranks 1, 2: everything 1
 * query 3: 1 (1, pos), 5 (1), 0 (4), 2, 4: rank 1: everything 1
 * query 4: 2 (1, pos), 0 (4, pos), ...: ranks 1, 2: everything 1
 * query 5: class 2 has no other item: no positive
 * means over the 5 queries with a positive: mAP (1/2 + 1/2 + 3) / 5 = 0.8, R-prec (1/2 + 0 + 3) / 5
 * = 0.7, MAP@R (1/4 + 0 + 3) / 5 = 0.65, P@1 3/5, Recall@1 3/5, Recall@2 1; no_positive 1.
 * Gallery 1 drops item 2: query 0 then sees 1 (1), 3 (4), 4 (4, pos), 5: rank 3, AP 1/3, and no
 * other query changes (for query 1 item 2 was a negative behind its positive; for query 2 it is
 * itself): mAP (1/3 + 1/2 + 3) / 5 = 23/30, Recall@2 4/5. */
static void test_by_hand(void)
{
    float X[12] = {0, 0, 1, 0, -1, 0, 2, 0, -2, 0, 3, 0};
    int32_t cls[6] = {0, 1, 0, 1, 0, 2};
    int64_t ex[6] = {0, 1, 2, 3, 4, 5};
    uint32_t mask[6] = {3, 3, 1, 3, 3, 3};
    int ks[2] = {1, 2};
    retrieval_job J = {X, cls, 6, X, cls, 6, 2, ex, mask, 2, ks, 2, 1, NULL, NULL, 0, NULL, NULL, 0};
    retrieval_query per[6];
    retrieval_summary sum[2];
    retrieval_run(&J, per, sum);
    CHECK_CLOSE(per[0].ap, 0.5, 0);
    CHECK_CLOSE(per[0].rprec, 0.5, 0);
    CHECK_CLOSE(per[0].map_r, 0.25, 0);
    CHECK(per[0].p1 == 0 && per[0].recall[0] == 0 && per[0].recall[1] == 1 && per[0].npos == 2);
    CHECK_CLOSE(per[1].ap, 0.5, 0);
    CHECK_CLOSE(per[1].rprec, 0, 0);
    CHECK_CLOSE(per[1].map_r, 0, 0);
    CHECK(per[1].p1 == 0 && per[1].recall[1] == 1 && per[1].npos == 1);
    for (int q = 2; q <= 4; q++) {
        CHECK_CLOSE(per[q].ap, 1, 0);
        CHECK_CLOSE(per[q].rprec, 1, 0);
        CHECK_CLOSE(per[q].map_r, 1, 0);
        CHECK(per[q].p1 == 1 && per[q].recall[0] == 1);
    }
    CHECK(per[5].npos == 0 && isnan(per[5].ap));
    CHECK(sum[0].queries == 5 && sum[0].no_positive == 1);
    CHECK_CLOSE(sum[0].map, 0.8, 1e-15);
    CHECK_CLOSE(sum[0].rprec, 0.7, 1e-15);
    CHECK_CLOSE(sum[0].map_r, 0.65, 1e-15);
    CHECK_CLOSE(sum[0].p1, 0.6, 1e-15);
    CHECK_CLOSE(sum[0].recall[0], 0.6, 1e-15);
    CHECK_CLOSE(sum[0].recall[1], 1, 0);
    CHECK(sum[1].queries == 5);
    CHECK_CLOSE(sum[1].map, 23.0 / 30, 1e-7);
    CHECK_CLOSE(sum[1].recall[1], 0.8, 1e-15);
    /* the same points as a gallery without exclusion: every query finds itself first, so
     * P@1 = 1 for all six, and query 5 has itself as its one positive */
    J.exclude = NULL;
    J.mask = NULL;
    J.nmask = 1;
    retrieval_run(&J, per, sum);
    CHECK(sum[0].queries == 6 && sum[0].no_positive == 0);
    CHECK_CLOSE(sum[0].p1, 1, 0);
    CHECK_CLOSE(per[5].ap, 1, 0);
    /* query 0 with itself: 0 (0, pos), 1 (1), 2 (1, pos), 3 (4), 4 (4, pos): ranks 1, 3, 5:
     * AP (1 + 2/3 + 3/5) / 3 = 34/45 */
    CHECK_CLOSE(per[0].ap, 34.0 / 45, 1e-7);
}

/* ---- brute force: every gallery item's exact d2 (integer coordinates), a full sort by
 * (d2, index), then the textbook definitions */
typedef struct {
    double d;
    int64_t g;
} item;

static int item_cmp(const void *pa, const void *pb)
{
    const item *a = pa, *b = pb;
    if (a->d != b->d)
        return a->d < b->d ? -1 : 1;
    return (a->g > b->g) - (a->g < b->g);
}

/* the metrics of query q in gallery m: out[0..3] = ap, rprec, map_r, p1, out[4..] recall; returns R */
static int64_t brute_query(const float *Q, const int32_t *qcls, int64_t q, const float *G, const int32_t *gcls,
                           int64_t ng, int D, int64_t ex, const uint32_t *mask, int m, const int *ks, int nk,
                           double *out)
{
    item *it = malloc((size_t)ng * sizeof *it);
    int64_t n = 0, R = 0;
    for (int64_t g = 0; g < ng; g++) {
        if (g == ex || (mask && !(mask[g] >> m & 1)))
            continue;
        double d = 0;
        for (int k = 0; k < D; k++)
            d += ((double)Q[q * D + k] - G[g * D + k]) * ((double)Q[q * D + k] - G[g * D + k]);
        it[n++] = (item){d, g};
        R += gcls[g] == qcls[q];
    }
    qsort(it, (size_t)n, sizeof *it, item_cmp);
    if (R) {
        /* precision@i for every cutoff i; AP = mean of precision@i at the positives' positions */
        double ap = 0, map_r = 0, hits_R = 0;
        int64_t hits = 0, first = -1;
        for (int64_t i = 0; i < n; i++) {
            int pos = gcls[it[i].g] == qcls[q];
            hits += pos;
            if (pos && first < 0)
                first = i + 1;
            if (pos) {
                ap += (double)hits / (double)(i + 1);
                if (i < R)
                    map_r += (double)hits / (double)(i + 1);
            }
            if (i + 1 == R)
                hits_R = (double)hits;
        }
        out[0] = ap / R;
        out[1] = hits_R / R;
        out[2] = map_r / R;
        out[3] = first == 1;
        for (int j = 0; j < nk; j++)
            out[4 + j] = first <= ks[j];
    }
    free(it);
    return R;
}

static void test_brute(void)
{
    rng r;
    rng_init(&r, 714, RNG_STREAM('t', 'r', 'e', 't'));
    int ks[4] = {1, 3, 5, 20};
    double worst = 0;
    for (int trial = 0; trial < 24; trial++) {
        int D = 1 + (int)rng_below(&r, 3), classes = 1 + (int)rng_below(&r, trial % 3 ? 8 : 2);
        int span = 2 + (int)rng_below(&r, 4); /* coordinates 0 .. span-1: many equal distances */
        /* every other pair of trials far from the origin (issue 19): ||q||^2 about 3e7 > 2^24, so
         * uncentred float distances lose the ties; centred on the gallery's mean (an integer here)
         * they are exact again */
        float off = trial / 2 % 2 ? 3000.0f : 0.0f;
        int loo = trial % 2 == 0;
        int64_t nq = 1 + (int64_t)rng_below(&r, 200), ng = loo ? nq : 1 + (int64_t)rng_below(&r, 300);
        float *Q = malloc((size_t)nq * D * sizeof *Q), *G = loo ? Q : malloc((size_t)ng * D * sizeof *G);
        int32_t *qc = malloc((size_t)nq * sizeof *qc), *gc = loo ? qc : malloc((size_t)ng * sizeof *gc);
        for (int64_t i = 0; i < nq * D; i++)
            Q[i] = (float)((int)rng_below(&r, (uint64_t)span) - span / 2) + off;
        for (int64_t i = 0; i < nq; i++)
            qc[i] = (int32_t)rng_below(&r, (uint64_t)classes + (trial % 4 == 1)); /* some classes not in the gallery */
        if (!loo) {
            for (int64_t i = 0; i < ng * D; i++)
                G[i] = (float)((int)rng_below(&r, (uint64_t)span) - span / 2) + off;
            for (int64_t i = 0; i < ng; i++)
                gc[i] = (int32_t)rng_below(&r, (uint64_t)classes);
        }
        int64_t *ex = NULL;
        if (loo || trial % 4 == 3) {
            ex = malloc((size_t)nq * sizeof *ex);
            for (int64_t q = 0; q < nq; q++)
                ex[q] = loo ? q : (int64_t)rng_below(&r, (uint64_t)ng + 1) - 1; /* -1: none */
        }
        int nmask = 1 + (int)rng_below(&r, 5);
        uint32_t *mask = malloc((size_t)ng * sizeof *mask);
        for (int64_t g = 0; g < ng; g++)
            mask[g] = 1u | ((uint32_t)rng_u64(&r) & ((1u << nmask) - 2));
        retrieval_job J = {Q, qc, nq, G, gc, ng, D, ex, mask, nmask, ks, 4, 1, NULL, NULL, 0, NULL, NULL, 0};
        retrieval_query *per = malloc((size_t)nq * sizeof *per), *per3 = malloc((size_t)nq * sizeof *per3);
        retrieval_summary sum[8], sum3[8];
        retrieval_run(&J, per, sum);
        J.threads = 3;
        retrieval_run(&J, per3, sum3);
        CHECK(!memcmp(per, per3, (size_t)nq * sizeof *per));
        CHECK(!memcmp(sum, sum3, (size_t)nmask * sizeof *sum));
        for (int m = 0; m < nmask; m++) {
            double acc[8] = {0};
            int64_t nqp = 0, nnp = 0;
            for (int64_t q = 0; q < nq; q++) {
                double out[8];
                int64_t R = brute_query(Q, qc, q, G, gc, ng, D, ex ? ex[q] : -1, mask, m, ks, 4, out);
                if (!R) {
                    nnp++;
                    if (m == 0)
                        CHECK(per[q].npos == 0 && isnan(per[q].ap));
                    continue;
                }
                nqp++;
                for (int v = 0; v < 8; v++)
                    acc[v] += v < 3 ? (double)(float)out[v] : out[v];
                if (m == 0) {
                    const retrieval_query *p = &per[q];
                    double got[8] = {p->ap, p->rprec, p->map_r, p->p1, p->recall[0], p->recall[1], p->recall[2],
                                     p->recall[3]};
                    CHECK(p->npos == R);
                    for (int v = 0; v < 8; v++) {
                        double d = fabs(got[v] - out[v]);
                        worst = d > worst ? d : worst;
                        if (!(d <= 1e-6)) {
                            CHECK_CLOSE(got[v], out[v], 1e-6);
                            fprintf(stderr, "  trial %d query %lld value %d\n", trial, (long long)q, v);
                        }
                    }
                }
            }
            CHECK(sum[m].queries == nqp && sum[m].no_positive == nnp);
            if (nqp) {
                double want[8], got[8] = {sum[m].map, sum[m].rprec, sum[m].map_r, sum[m].p1, sum[m].recall[0],
                                          sum[m].recall[1], sum[m].recall[2], sum[m].recall[3]};
                for (int v = 0; v < 8; v++) {
                    want[v] = acc[v] / nqp;
                    CHECK_CLOSE(got[v], want[v], 1e-9);
                }
            }
        }
        free(per);
        free(per3);
        free(mask);
        free(ex);
        if (!loo) {
            free(G);
            free(gc);
        }
        free(Q);
        free(qc);
    }
    printf("brute force: largest per-query difference %.3g\n", worst);
}

/* one job against the brute force: every query of gallery 0 and every gallery's means, and the
 * same bytes with 1, 2 and 3 threads; returns the largest per-query difference */
static double brute_job(const retrieval_job *J0, const char *what)
{
    retrieval_job J = *J0;
    int ks[4] = {1, 3, 5, 20};
    J.ks = ks, J.nk = 4, J.threads = 1;
    retrieval_query *per = malloc((size_t)J.nq * sizeof *per), *per2 = malloc((size_t)J.nq * sizeof *per2);
    retrieval_summary sum[4], sum2[4];
    retrieval_run(&J, per, sum);
    for (int t = 2; t <= 3; t++) {
        J.threads = t;
        retrieval_run(&J, per2, sum2);
        CHECK(!memcmp(per, per2, (size_t)J.nq * sizeof *per));
        CHECK(!memcmp(sum, sum2, (size_t)J.nmask * sizeof *sum));
    }
    double worst = 0;
    int bad = 0;
    for (int m = 0; m < J.nmask; m++) {
        double acc[8] = {0};
        int64_t nqp = 0;
        for (int64_t q = 0; q < J.nq; q++) {
            double out[8];
            int64_t R = brute_query(J.Q, J.qcls, q, J.G, J.gcls, J.ng, J.D, J.exclude ? J.exclude[q] : -1, J.mask,
                                    m, ks, 4, out);
            if (!R)
                continue;
            nqp++;
            for (int v = 0; v < 8; v++)
                acc[v] += v < 3 ? (double)(float)out[v] : out[v];
            if (m)
                continue;
            const retrieval_query *p = &per[q];
            double got[8] = {p->ap, p->rprec, p->map_r, p->p1, p->recall[0], p->recall[1], p->recall[2], p->recall[3]};
            CHECK(p->npos == R);
            for (int v = 0; v < 8; v++) {
                double d = fabs(got[v] - out[v]);
                worst = d > worst ? d : worst;
                if (!(d <= 1e-6) && bad++ < 5) {
                    CHECK_CLOSE(got[v], out[v], 1e-6);
                    fprintf(stderr, "  %s: query %lld value %d\n", what, (long long)q, v);
                }
            }
        }
        CHECK(sum[m].queries == nqp);
        double got[8] = {sum[m].map, sum[m].rprec, sum[m].map_r, sum[m].p1, sum[m].recall[0], sum[m].recall[1],
                         sum[m].recall[2], sum[m].recall[3]};
        for (int v = 0; v < 8 && nqp; v++)
            CHECK_CLOSE(got[v], acc[v] / nqp, 1e-9);
    }
    CHECK(!bad);
    free(per);
    free(per2);
    return worst;
}

/* Every distance equal (PML's many-tied-distances case): all of a query's positives in one bucket,
 * more than RANK_SCAN of them, placed by binary search among whole keys (d2 bits, index), against
 * the brute force; leave-one-out and a gallery, classes of 60 and of 7 */
static void test_all_tied(void)
{
    double worst = 0;
    for (int trial = 0; trial < 2; trial++) {
        int D = 2, classes = trial ? 43 : 5, loo = !trial;
        int64_t nq = 300, ng = loo ? nq : 250;
        float *Q = calloc((size_t)nq * D, sizeof *Q), *G = loo ? Q : calloc((size_t)ng * D, sizeof *G);
        int32_t *qc = malloc((size_t)nq * sizeof *qc), *gc = loo ? qc : malloc((size_t)ng * sizeof *gc);
        for (int64_t i = 0; i < nq; i++)
            qc[i] = (int32_t)(i * 7 % classes);
        for (int64_t i = 0; i < ng && !loo; i++)
            gc[i] = (int32_t)(i * 3 % classes);
        int64_t *ex = malloc((size_t)nq * sizeof *ex);
        for (int64_t q = 0; q < nq; q++)
            ex[q] = loo ? q : -1;
        retrieval_job J = {Q, qc, nq, G, gc, ng, D, ex, NULL, 1, NULL, 0, 1, NULL, NULL, 0, NULL, NULL, 0};
        double w = brute_job(&J, loo ? "all tied, leave-one-out" : "all tied, a gallery");
        worst = w > worst ? w : worst;
        free(ex);
        if (!loo)
            free(G), free(gc);
        free(Q), free(qc);
    }
    printf("all tied: largest per-query difference %.3g\n", worst);
}

/* Larger cases for the rank table (the buckets of d2 bits that place the negatives among the
 * positives, at most 4096 of them, about 32 per positive) and for several sgemm blocks of queries
 * in one call: classes of about 370 positives (the table's cap) and of 36, integer coordinates
 * with ties everywhere (many fall on a bucket with positives: the scan by whole key), a few items
 * far out (d2 bits over many exponents: wide buckets), the excluded item a negative, three
 * galleries; 1,100 queries: five calls of up to 256 queries, the last one short. */
static void test_rank_table(void)
{
    rng r;
    rng_init(&r, 714, RNG_STREAM('t', 'r', 'b', 'k'));
    double worst = 0;
    for (int trial = 0; trial < 4; trial++) {
        int D = 2 + trial % 2, classes = trial < 2 ? 3 : 25, loo = trial % 2 == 0;
        int64_t nq = 1100, ng = loo ? nq : 900;
        float *Q = malloc((size_t)nq * D * sizeof *Q), *G = loo ? Q : malloc((size_t)ng * D * sizeof *G);
        int32_t *qc = malloc((size_t)nq * sizeof *qc), *gc = loo ? qc : malloc((size_t)ng * sizeof *gc);
        for (int64_t i = 0; i < nq * D; i++)
            Q[i] = (float)((int)rng_below(&r, 31) - 15);
        for (int64_t i = 0; i < nq; i++)
            qc[i] = (int32_t)(i % classes);
        if (!loo) {
            for (int64_t i = 0; i < ng * D; i++)
                G[i] = (float)((int)rng_below(&r, 31) - 15);
            for (int64_t i = 0; i < ng; i++)
                gc[i] = (int32_t)rng_below(&r, (uint64_t)classes);
        }
        for (int f = 0; f < 6; f++) /* far out: squared distances up to about 10^7 */
            G[(int64_t)rng_below(&r, (uint64_t)ng) * D] = (float)(f % 2 ? 1 : -1) * (float)(100 << f);
        int64_t *ex = malloc((size_t)nq * sizeof *ex);
        for (int64_t q = 0; q < nq; q++) {
            ex[q] = loo ? q : -1;
            if (!loo && q % 3) /* a gallery item of another class, or none */
                for (int64_t g = (int64_t)rng_below(&r, (uint64_t)ng), k = 0; k < ng; k++, g = (g + 1) % ng)
                    if (gc[g] != qc[q]) {
                        ex[q] = g;
                        break;
                    }
        }
        uint32_t *mask = malloc((size_t)ng * sizeof *mask);
        for (int64_t g = 0; g < ng; g++)
            mask[g] = 1u | ((uint32_t)rng_u64(&r) & 6u);
        retrieval_job J = {Q, qc, nq, G, gc, ng, D, ex, NULL, 1, NULL, 0, 1, NULL, NULL, 0, NULL, NULL, 0};
        double w = brute_job(&J, "one gallery");
        worst = w > worst ? w : worst;
        J.mask = mask, J.nmask = 3;
        w = brute_job(&J, "three galleries");
        worst = w > worst ? w : worst;
        free(mask);
        free(ex);
        if (!loo) {
            free(G);
            free(gc);
        }
        free(Q);
        free(qc);
    }
    printf("rank table: largest per-query difference %.3g\n", worst);
}

/* a class of 100 items (the radix sort's path, beyond the insertion sort's 48) with distances
 * spread over many float exponents, against the brute force */
static void test_large_class(void)
{
    enum { N = 300 };
    float X[N];
    int32_t c[N];
    int64_t ex[N];
    rng r;
    rng_init(&r, 714, RNG_STREAM('t', 'r', 'e', 'l'));
    for (int i = 0; i < N; i++) {
        X[i] = (float)((int)rng_below(&r, 4001) - 2000); /* d2 up to 1.6e7: all four bytes vary */
        c[i] = i % 3;
        ex[i] = i;
    }
    int ks[1] = {1};
    retrieval_job J = {X, c, N, X, c, N, 1, ex, NULL, 1, ks, 1, 1, NULL, NULL, 0, NULL, NULL, 0};
    retrieval_query per[N];
    retrieval_summary sum[1];
    retrieval_run(&J, per, sum);
    for (int q = 0; q < N; q++) {
        double out[5];
        brute_query(X, c, q, X, c, N, 1, q, NULL, 0, ks, 1, out);
        CHECK_CLOSE(per[q].ap, out[0], 1e-6);
        CHECK_CLOSE(per[q].map_r, out[2], 1e-6);
        CHECK(per[q].recall[0] == out[4]);
    }
}

/* a query in its own gallery ranks itself first: its d2 = (|q|^2 + |q|^2) - 2 q.q may round
 * below 0 (the norm in double, the dot product in float sgemm), which must count as 0, never as
 * the largest key */
static void test_self_first(void)
{
    enum { N = 500, D = 16 };
    float *X = malloc(N * D * sizeof *X);
    int32_t c[N];
    rng r;
    rng_init(&r, 714, RNG_STREAM('t', 'r', 'e', 's'));
    for (int i = 0; i < N * D; i++)
        X[i] = (float)(3 * rng_normal(&r));
    for (int i = 0; i < N; i++)
        c[i] = i % 7;
    int ks[1] = {1};
    retrieval_job J = {X, c, N, X, c, N, D, NULL, NULL, 1, ks, 1, 1, NULL, NULL, 0, NULL, NULL, 0};
    retrieval_query per[N];
    retrieval_summary sum[1];
    retrieval_run(&J, per, sum);
    CHECK_CLOSE(sum[0].p1, 1, 0);
    CHECK_CLOSE(sum[0].recall[0], 1, 0);
    free(X);
}

static void test_masks(void)
{
    /* 20 % of 10: floor(2) = 2 dropped, the two most uncertain (0.9 and 0.8) */
    double u[10] = {0.1, 0.9, 0.5, 0.3, 0.2, 0.3, 0.8, 0.05, 0.6, 0.4};
    uint32_t mask[10], again[10], other[10];
    int64_t nd = retrieval_clean_masks(u, 10, 20, 4, 714, mask);
    CHECK(nd == 2);
    for (int g = 0; g < 10; g++) {
        CHECK(mask[g] & 1);                                /* the full gallery */
        CHECK(!(mask[g] & 2) == (g == 1 || g == 6));       /* uncertain: items 1 and 6 out */
    }
    for (int r = 0; r < 4; r++) { /* each random draw drops exactly 2 */
        int kept = 0;
        for (int g = 0; g < 10; g++)
            kept += mask[g] >> (2 + r) & 1;
        CHECK(kept == 8);
    }
    for (int g = 0; g < 10; g++)
        CHECK(!(mask[g] >> 6)); /* no bits beyond the 2 + 4 galleries */
    retrieval_clean_masks(u, 10, 20, 4, 714, again);
    CHECK(!memcmp(mask, again, sizeof mask));               /* same seed, same masks */
    /* floor: 25 % of 10 is 2.5 -> 2; 30 % -> 3 (0.9, 0.8, 0.6) */
    CHECK(retrieval_clean_masks(u, 10, 25, 1, 714, other) == 2);
    CHECK(retrieval_clean_masks(u, 10, 30, 1, 714, other) == 3);
    for (int g = 0; g < 10; g++)
        CHECK(!(other[g] & 2) == (g == 1 || g == 6 || g == 8));
    /* ties at the cut: four items at 0.7, one dropped; which one comes from the seed, and over
     * seeds each of them is chosen */
    double tie[6] = {0.7, 0.1, 0.7, 0.7, 0.2, 0.7};
    int chosen[6] = {0};
    for (uint64_t seed = 0; seed < 64; seed++) {
        retrieval_clean_masks(tie, 6, 20, 1, seed, other); /* floor(1.2) = 1 */
        int out = 0;
        for (int g = 0; g < 6; g++)
            if (!(other[g] & 2)) {
                out++;
                chosen[g]++;
            }
        CHECK(out == 1);
    }
    CHECK(chosen[1] == 0 && chosen[4] == 0);
    CHECK(chosen[0] && chosen[2] && chosen[3] && chosen[5]);
    /* random draws: another seed gives other masks, and the draws differ from each other; each of
     * 100 items is dropped in about 20 % of 28 draws of 20 */
    double flat[100];
    uint32_t big[100], big2[100];
    for (int g = 0; g < 100; g++)
        flat[g] = g;
    retrieval_clean_masks(flat, 100, 20, 28, 714, big);
    retrieval_clean_masks(flat, 100, 20, 28, 715, big2);
    CHECK(memcmp(big, big2, sizeof big));
    int never = 0, differ = 0;
    for (int g = 0; g < 100; g++) {
        int dropped = 0;
        for (int r = 0; r < 28; r++)
            dropped += !(big[g] >> (2 + r) & 1);
        never += dropped == 0;
        differ += (big[g] >> 2 & 1) != (big[g] >> 3 & 1);
        CHECK(!(big[g] & 2) == (g >= 80)); /* the 20 most uncertain: u = 80 .. 99 */
    }
    /* P(an item is never dropped in 28 draws) = 0.8^28 = 0.2 %: expect 0.2 of 100 */
    CHECK(never <= 3);
    CHECK(differ > 0);
}

/* ---- global precision-recall */

/* the key keeps 8 exponent bits and 14 mantissa bits: in [2^e, 2^(e+1)) bins of width 2^(e-14) */
static void test_global_keys(void)
{
    CHECK(RETRIEVAL_GLOBAL_BINS == 1 << 22);
    CHECK(retrieval_global_key(0.0f) == 0 && retrieval_global_key(-0.0f) == 0 && retrieval_global_key(-1.0f) == 0);
    /* [2^14, 2^15): bins of width 1, every integer its own; [2^15, 2^16): width 2; [2^16, 2^17): 4 */
    CHECK(retrieval_global_key(16384) + 1 == retrieval_global_key(16385));
    CHECK(retrieval_global_key(32767) + 1 == retrieval_global_key(32768));
    CHECK(retrieval_global_key(32768) == retrieval_global_key(32769));
    CHECK(retrieval_global_key(65535) + 1 == retrieval_global_key(65536));
    CHECK(retrieval_global_key(65536) == retrieval_global_key(65539));
    CHECK(retrieval_global_key(65536) + 1 == retrieval_global_key(65540));
    /* 1 and 1 + 2^-14 in neighbouring bins; 1 + 2^-15 with 1; the bin of 1 ends at 1 + 511 * 2^-23 */
    CHECK(retrieval_global_key(1.0f) + 1 == retrieval_global_key(1.0f + 0x1p-14f));
    CHECK(retrieval_global_key(1.0f) == retrieval_global_key(1.0f + 0x1p-15f));
    CHECK(retrieval_global_key_max(retrieval_global_key(1.0f)) == 1.0f + 511 * 0x1p-23f);
    CHECK(retrieval_global_key(1.0f + 512 * 0x1p-23f) == retrieval_global_key(1.0f) + 1);
    /* subnormals: bins of 2^-140; the largest finite float in the last page but one (exponent 254) */
    CHECK(retrieval_global_key(0x1p-149f) == 0 && retrieval_global_key(0x1p-140f) == 1);
    CHECK(retrieval_global_key(3.40282347e38f) == RETRIEVAL_GLOBAL_BINS - (1 << RETRIEVAL_GLOBAL_MANTISSA) - 1);
}

/* One query at the origin (class 0), four gallery items in D = 4, exact integer d2:
 *   E (255, 22, 5, 1)  d2 65535  class 1    bin [65534, 65536)
 *   A (256, 0, 0, 0)   d2 65536  class 0    bin [65536, 65540): A and B tie
 *   B (256, 1, 1, 0)   d2 65538  class 1
 *   C (256, 2, 0, 0)   d2 65540  class 0    the next bin
 * Blocks E | A B | C: A gets the precision at the end of its block, 1/3, C 2/4: AP (1/3 + 1/2) / 2
 * = 5/12 (without the truncation A would rank alone at 2: AP (1/2 + 2/4) / 2 = 1/2, the per-query
 * AP). Curve (recall, precision): (0, 0), (1/2, 1/3), (1, 1/2); trapezoids from (0, 0):
 * 0 + 1/2 (0 + 1/3) / 2 + 1/2 (1/3 + 1/2) / 2 = 1/12 + 5/24 = 7/24. Thresholds: each bin's largest
 * float (spacing 2^-8 below 2^16, 2^-7 above), 65536 - 2^-8, 65540 - 2^-7, 65544 - 2^-7. */
static void test_global_by_hand(void)
{
    float Q[4] = {0, 0, 0, 0};
    float G[16] = {255, 22, 5, 1, 256, 0, 0, 0, 256, 1, 1, 0, 256, 2, 0, 0};
    int32_t qc[1] = {0}, gc[4] = {1, 0, 1, 0};
    int ks[1] = {1};
    retrieval_hist *h = retrieval_hist_new();
    retrieval_job J = {Q, qc, 1, G, gc, 4, 4, NULL, NULL, 1, ks, 1, 1, h, NULL, 0, NULL, NULL, 0};
    retrieval_query per[1];
    retrieval_summary sum[1];
    retrieval_run(&J, per, sum);
    CHECK_CLOSE(per[0].ap, 0.5, 0);
    retrieval_global g;
    retrieval_hist_summary(h, &g);
    CHECK(g.pairs == 4 && g.positives == 2 && g.points == 3);
    CHECK_CLOSE(g.ap, 5.0 / 12, 1e-15);
    CHECK_CLOSE(g.pr_auc, 7.0 / 24, 1e-15);
    metrics_pr_point pts[3];
    CHECK(retrieval_hist_curve(h, 3, pts) == 3);
    CHECK(pts[0].threshold == 65536 - 0x1p-8f && pts[1].threshold == 65540 - 0x1p-7f &&
          pts[2].threshold == 65544 - 0x1p-7f);
    CHECK(pts[0].tp == 0 && pts[0].fp == 1 && pts[1].tp == 1 && pts[1].fp == 2 && pts[2].tp == 2 && pts[2].fp == 2);
    /* merge and add: the same pairs twice give the same AP and curve, twice the counts */
    retrieval_hist *h2 = retrieval_hist_new();
    retrieval_hist_merge(h2, h);
    retrieval_hist_add(h2, retrieval_global_key(65535), 0, 1);
    retrieval_hist_add(h2, retrieval_global_key(65536), 1, 1);
    retrieval_hist_add(h2, retrieval_global_key(65538), 0, 1);
    retrieval_hist_add(h2, retrieval_global_key(65540), 1, 1);
    retrieval_global g2;
    retrieval_hist_summary(h2, &g2);
    CHECK(g2.pairs == 8 && g2.positives == 4 && g2.points == 3 && g2.ap == g.ap && g2.pr_auc == g.pr_auc);
    retrieval_hist_free(h2);
    retrieval_hist_free(h);
}

/* every pair's key materialised (d2 exact: integer coordinates), then metrics_ap and
 * metrics_pr_curve (score = -key: descending score is ascending key, equal keys tie); *exact_pts:
 * the curve's points on the exact d2 instead (more than on the keys when the truncation merged) */
static void brute_global(const float *Q, const int32_t *qc, int64_t nq, const float *G, const int32_t *gc,
                         int64_t ng, int D, const int64_t *ex, double *ap, double *auc, int64_t *npairs,
                         metrics_pr_point **curve, int64_t *npts, int64_t *exact_pts)
{
    double *score = malloc((size_t)(nq * ng + 1) * sizeof *score), *exact = malloc((size_t)(nq * ng + 1) * sizeof *exact);
    uint8_t *label = malloc((size_t)(nq * ng + 1));
    int64_t n = 0;
    for (int64_t q = 0; q < nq; q++)
        for (int64_t g = 0; g < ng; g++) {
            if (ex && ex[q] == g)
                continue;
            double d = 0;
            for (int k = 0; k < D; k++)
                d += ((double)Q[q * D + k] - G[g * D + k]) * ((double)Q[q * D + k] - G[g * D + k]);
            score[n] = -(double)retrieval_global_key((float)d);
            exact[n] = -d;
            label[n++] = qc[q] == gc[g];
        }
    *ap = metrics_ap(score, label, n);
    *curve = malloc((size_t)(n + 1) * sizeof **curve);
    *exact_pts = metrics_pr_curve(exact, label, n, *curve);
    *npts = metrics_pr_curve(score, label, n, *curve);
    *auc = metrics_pr_trapezoid_area(*curve, *npts);
    *npairs = n;
    free(score);
    free(exact);
    free(label);
}

static void test_global_brute(void)
{
    rng r;
    rng_init(&r, 714, RNG_STREAM('t', 'g', 'l', 'o'));
    int ks[1] = {1};
    double worst = 0;
    int64_t total = 0, merged = 0;
    for (int trial = 0; trial < 40; trial++) {
        int D = 1 + (int)rng_below(&r, 3), classes = 1 + (int)rng_below(&r, 6);
        /* coordinates scale * a + b (a < span, b < 2): small scales tie on exact d2; large ones
         * (d2 up to 1.2e7, bins up to 2^9 wide) put nearby d2 into one bin */
        static const int scales[5] = {1, 3, 40, 300, 1000};
        int span = 2 + (int)rng_below(&r, 3), scale = scales[trial % 5];
        int loo = trial % 2 == 0;
        int64_t nq = 1 + (int64_t)rng_below(&r, 60), ng = loo ? nq : 1 + (int64_t)rng_below(&r, 80);
        float *Q = malloc((size_t)nq * D * sizeof *Q), *G = loo ? Q : malloc((size_t)ng * D * sizeof *G);
        int32_t *qc = malloc((size_t)nq * sizeof *qc), *gc = loo ? qc : malloc((size_t)ng * sizeof *gc);
        for (int64_t i = 0; i < nq * D; i++)
            Q[i] = (float)(scale * ((int)rng_below(&r, (uint64_t)span) - span / 2) + (int)rng_below(&r, 2));
        for (int64_t i = 0; i < nq; i++)
            qc[i] = (int32_t)rng_below(&r, (uint64_t)classes + 1); /* some classes not in the gallery */
        if (!loo) {
            for (int64_t i = 0; i < ng * D; i++)
                G[i] = (float)(scale * ((int)rng_below(&r, (uint64_t)span) - span / 2) + (int)rng_below(&r, 2));
            for (int64_t i = 0; i < ng; i++)
                gc[i] = (int32_t)rng_below(&r, (uint64_t)classes);
        }
        int64_t *ex = NULL;
        if (loo || trial % 4 == 3) {
            ex = malloc((size_t)nq * sizeof *ex);
            for (int64_t q = 0; q < nq; q++)
                ex[q] = loo ? q : (int64_t)rng_below(&r, (uint64_t)ng + 1) - 1; /* -1: none */
        }
        /* cleaning masks do not touch the global numbers (gallery 0 only) */
        uint32_t *mask = malloc((size_t)ng * sizeof *mask);
        for (int64_t g = 0; g < ng; g++)
            mask[g] = 1u | ((uint32_t)rng_u64(&r) & 2u);
        retrieval_hist *h1 = retrieval_hist_new(), *h3 = retrieval_hist_new();
        retrieval_job J = {Q, qc, nq, G, gc, ng, D, ex, trial % 3 ? mask : NULL, trial % 3 ? 2 : 1, ks, 1, 1, h1,
                           NULL, 0, NULL, NULL, 0};
        retrieval_query *per = malloc((size_t)nq * sizeof *per);
        retrieval_summary sum[2];
        retrieval_run(&J, per, sum);
        J.threads = 3;
        J.global = h3;
        retrieval_run(&J, per, sum);
        retrieval_global g1, g3;
        retrieval_hist_summary(h1, &g1);
        retrieval_hist_summary(h3, &g3);
        CHECK(!memcmp(&g1, &g3, sizeof g1)); /* the thread count changes nothing */

        double ap, auc;
        int64_t n, npts, exact_pts;
        metrics_pr_point *curve;
        brute_global(Q, qc, nq, G, gc, ng, D, ex, &ap, &auc, &n, &curve, &npts, &exact_pts);
        int64_t P = npts ? curve[npts - 1].tp : 0;
        CHECK(g1.pairs == n && g1.positives == P && g1.points == npts);
        if (P) {
            double d = fmax(fabs(g1.ap - ap), fabs(g1.pr_auc - auc));
            worst = d > worst ? d : worst;
            CHECK_CLOSE(g1.ap, ap, 1e-12);
            CHECK_CLOSE(g1.pr_auc, auc, 1e-12);
        } else
            CHECK(isnan(g1.ap) && isnan(g1.pr_auc));
        total += npts;
        merged += exact_pts - npts;
        /* the curve: with room for every point, metrics_pr_curve's points (threshold: the bin's
         * largest d2); thinned to 8, a subsequence of them from the first to the last */
        metrics_pr_point *all = malloc((size_t)(npts + 2) * sizeof *all), few[8];
        CHECK(retrieval_hist_curve(h1, npts + 2, all) == npts);
        for (int64_t t = 0; t < npts; t++) {
            CHECK(all[t].tp == curve[t].tp && all[t].fp == curve[t].fp && all[t].precision == curve[t].precision);
            CHECK(all[t].threshold == retrieval_global_key_max((uint32_t)-curve[t].threshold));
        }
        int64_t nf = retrieval_hist_curve(h1, 8, few);
        CHECK(nf <= 8 && nf <= npts && nf >= (npts < 2 ? npts : 2));
        for (int64_t t = 0, u = 0; t < nf; t++, u++) {
            while (u < npts && curve[u].tp + curve[u].fp < few[t].tp + few[t].fp)
                u++;
            CHECK(u < npts && curve[u].tp == few[t].tp && curve[u].fp == few[t].fp);
        }
        if (nf) {
            CHECK(few[0].tp == curve[0].tp && few[0].fp == curve[0].fp);
            CHECK(few[nf - 1].tp == curve[npts - 1].tp && few[nf - 1].fp == curve[npts - 1].fp);
        }
        free(all);
        free(curve);
        free(per);
        free(mask);
        free(ex);
        retrieval_hist_free(h1);
        retrieval_hist_free(h3);
        if (!loo) {
            free(G);
            free(gc);
        }
        free(Q);
        free(qc);
    }
    CHECK(merged > 0); /* the truncation was exercised: some bins hold several distinct d2 */
    printf("global: %lld curve points in 40 cases (%lld more on the exact d2), largest difference from the "
           "direct computation %.3g\n", (long long)total, (long long)merged, worst);
}

/* MRR and the per-class averages (pytorch-metric-learning's avg_of_avgs) on unbalanced classes,
 * by hand. Queries (class: ranks of the positives):
 *   q0 (5: 1, 2)  p1 1  rprec 1    map_r 1              rr 1
 *   q1 (5: 2, 3)  p1 0  rprec 1/2  map_r (1/2)/2 = 1/4  rr 1/2
 *   q2 (2: 3)     p1 0  rprec 0    map_r 0              rr 1/3
 *   q3 (5: 1, 4)  p1 1  rprec 1/2  map_r (1/1)/2 = 1/2  rr 1
 *   q4 (7: none)  left out (no_positive)
 * Plain means over the 4: p1 1/2, rprec 1/2, map_r 7/16, mrr (1 + 1/2 + 1/3 + 1)/4 = 17/24.
 * Class 5's means: p1 2/3, rprec 2/3, map_r (7/4)/3 = 7/12, mrr (5/2)/3 = 5/6; class 2's:
 * 0, 0, 0, 1/3; over the two classes: p1 1/3, rprec 1/3, map_r 7/24, mrr (5/6 + 1/3)/2 = 7/12. */
static void test_class_average(void)
{
    int ks[1] = {2};
    int64_t r[4][2] = {{1, 2}, {2, 3}, {3, 0}, {1, 4}}, R[4] = {2, 2, 1, 2};
    int32_t cls[5] = {5, 5, 2, 5, 7};
    retrieval_query per[5];
    for (int q = 0; q < 4; q++)
        retrieval_from_ranks(r[q], R[q], ks, 1, &per[q]);
    retrieval_from_ranks(NULL, 0, ks, 1, &per[4]);
    CHECK(per[0].r1 == 1 && per[1].r1 == 2 && per[2].r1 == 3 && per[3].r1 == 1 && per[4].r1 == 0);
    retrieval_summary s = {0};
    for (int q = 0; q < 5; q++)
        retrieval_summary_add(&s, &per[q], 1);
    retrieval_summary_finish(&s, 1);
    CHECK(s.queries == 4 && s.no_positive == 1);
    CHECK_CLOSE(s.p1, 0.5, 0);
    CHECK_CLOSE(s.rprec, 0.5, 0);
    CHECK_CLOSE(s.map_r, 7.0 / 16, 0);
    CHECK_CLOSE(s.mrr, 17.0 / 24, 1e-15);
    retrieval_summary c;
    retrieval_class_average(cls, per, 5, 1, &c);
    CHECK(c.queries == 2 && c.no_positive == 1);
    CHECK_CLOSE(c.p1, 1.0 / 3, 1e-15);
    CHECK_CLOSE(c.rprec, 1.0 / 3, 1e-15);
    CHECK_CLOSE(c.map_r, 7.0 / 24, 1e-15);
    CHECK_CLOSE(c.mrr, 7.0 / 12, 1e-15);
    /* recall@2: q0, q1, q3 hit, q2 not: class 5 1, class 2 0 -> 1/2 (plain 3/4) */
    CHECK_CLOSE(c.recall[0], 0.5, 0);
    CHECK_CLOSE(s.recall[0], 0.75, 0);
    /* one class: the plain means */
    int32_t one[4] = {3, 3, 3, 3};
    retrieval_class_average(one, per, 4, 1, &c);
    CHECK(c.queries == 1);
    CHECK_CLOSE(c.mrr, s.mrr, 1e-15);
    CHECK_CLOSE(c.map_r, s.map_r, 1e-15);
}

/* --at-r: MAP@R, R-precision, P@1, Recall@k from the K nearest. By hand: classes of the 5
 * nearest 1 0 1 1 0, the query of class 1 with R = 3 positives (ranks 1, 3, 4): in the top 3,
 * ranks 1 and 3: R-precision 2/3, MAP@R (1/1 + 2/3) / 3 = 5/9, P@1 1, r_1 1; AP not known. No
 * positive among the K: r_1 0 (unknown), everything 0. Then against the full ranking on random
 * points (no ties): leave-one-out through knn's threshold screen (K + 4 >= 32), a gallery with
 * excluded items, 1 and 3 threads: every metric the same, r_1 the same where it is within K */
static void test_at_r(void)
{
    int ks[3] = {1, 2, 4};
    retrieval_query q;
    int32_t n1[] = {1, 0, 1, 1, 0};
    retrieval_from_nearest(n1, 5, 1, 3, ks, 3, &q);
    CHECK(isnan(q.ap) && q.npos == 3 && q.r1 == 1 && q.p1 == 1);
    CHECK_CLOSE(q.rprec, 2.0 / 3, 1e-7);
    CHECK_CLOSE(q.map_r, 5.0 / 9, 1e-7);
    CHECK(q.recall[0] == 1 && q.recall[1] == 1 && q.recall[2] == 1);
    int32_t n2[] = {0, 0, 0, 0};
    retrieval_from_nearest(n2, 4, 1, 1, ks, 3, &q);
    CHECK(q.r1 == 0 && q.p1 == 0 && q.rprec == 0 && q.map_r == 0 && q.recall[2] == 0);
    retrieval_summary s = {0};
    retrieval_summary_add(&s, &q, 3);
    retrieval_summary_finish(&s, 3);
    CHECK(isnan(s.mrr) && isnan(s.map) && s.map_r == 0);
    /* the depth: classes 0 0 0 1 1 in the gallery, queries of classes 1 and 2: 2 (k up to 2),
     * raised to k = 4, capped at 4; leave-one-out of the gallery itself: 3 - 1 */
    int32_t gc5[] = {0, 0, 0, 1, 1}, qc2[] = {1, 2};
    CHECK(retrieval_at_r_depth(qc2, 2, gc5, 5, 0, 1, 5) == 2);
    CHECK(retrieval_at_r_depth(qc2, 2, gc5, 5, 0, 4, 5) == 4);
    CHECK(retrieval_at_r_depth(qc2, 2, gc5, 5, 0, 6, 4) == 4);
    CHECK(retrieval_at_r_depth(gc5, 5, gc5, 5, 1, 1, 4) == 2);

    rng r;
    rng_init(&r, 714, RNG_STREAM('t', 'a', 't', 'r'));
    enum { N = 900, NG = 500, D = 6 };
    float *X = malloc(N * D * sizeof *X), *G = malloc(NG * D * sizeof *G);
    int32_t c[N], gc[NG];
    int64_t ex[N], exg[N];
    for (int i = 0; i < N * D; i++)
        X[i] = (float)rng_normal(&r);
    for (int i = 0; i < NG * D; i++)
        G[i] = (float)rng_normal(&r);
    for (int i = 0; i < N; i++) {
        c[i] = (int32_t)(i < 600 ? i % 20 : 20 + i % 5 + (i % 7 == 0)); /* classes of 30, and 5 larger */
        ex[i] = i;
        exg[i] = (int64_t)rng_below(&r, NG + 1) - 1;
        X[i * D] += 0.8f * (float)(c[i] % 4); /* some structure, so that positives come early */
    }
    for (int i = 0; i < NG; i++) {
        gc[i] = (int32_t)(i % 26);
        G[i * D] += 0.8f * (float)(gc[i] % 4);
    }
    int kk[2] = {1, 5};
    for (int gal = 0; gal < 2; gal++) {
        retrieval_job J = {X, c, N, gal ? G : X, gal ? gc : c, gal ? NG : N, D, gal ? exg : ex, NULL, 1, kk, 2, 1,
                           NULL, NULL, 0, NULL, NULL, 0};
        retrieval_query *full = malloc(N * sizeof *full), *a1 = malloc(N * sizeof *a1), *a3 = malloc(N * sizeof *a3);
        retrieval_summary sf, s1, s3;
        retrieval_run(&J, full, &sf);
        int64_t K = retrieval_at_r_depth(c, N, J.gcls, J.ng, !gal, 5, J.ng - 1), most = 0;
        for (int k = 0; k < 26; k++) { /* the largest class in the gallery (all of c's classes are in it) */
            int64_t m = 0;
            for (int64_t i = 0; i < J.ng; i++)
                m += J.gcls[i] == k;
            most = m > most ? m : most;
        }
        CHECK(K == most - !gal);
        retrieval_run_at_r(&J, K, a1, &s1);
        if (!gal)
            CHECK(s1.knn_screen == METRICS_SCREEN_THETA);
        J.threads = 3;
        retrieval_run_at_r(&J, K, a3, &s3);
        CHECK(!memcmp(a1, a3, N * sizeof *a1));
        int bad = 0, beyond = 0;
        for (int i = 0; i < N; i++) {
            const retrieval_query *f = &full[i], *a = &a1[i];
            bad += a->npos != f->npos || !isnan(a->ap) ||
                   (f->npos && (a->rprec != f->rprec || a->map_r != f->map_r || a->p1 != f->p1 ||
                                memcmp(a->recall, f->recall, 2) || (a->r1 ? a->r1 != f->r1 : f->r1 <= K)));
            beyond += f->npos && !a->r1;
        }
        CHECK(bad == 0);
        CHECK(beyond > 0 && beyond < N / 2); /* both cases seen */
        CHECK(s1.queries == sf.queries && s1.map_r == sf.map_r && s1.rprec == sf.rprec && s1.p1 == sf.p1);
        CHECK(isnan(s1.map) && isnan(s1.mrr));
        free(full);
        free(a1);
        free(a3);
    }
    free(X);
    free(G);
}

int main(void)
{
    util_init("test_retrieval");
    blas_init(NULL, 1);
    test_from_ranks();
    test_at_r();
    test_class_average();
    test_by_hand();
    test_brute();
    test_all_tied();
    test_large_class();
    test_rank_table();
    test_self_first();
    test_masks();
    test_global_keys();
    test_global_by_hand();
    test_global_brute();
    return check_done("test_retrieval");
}
