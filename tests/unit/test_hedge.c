/* hedge: the battery in one call (lib/engine/hedge.h) on a set whose numbers are derived by hand, the
 * small-set rules (a metric that cannot be had is NaN with its reason), shards that add up to the
 * whole (the two halves of lib/engine/evalpart.h over ranges, in memory and through the stream: the
 * same doubles as one call), and bad input refused with one line naming the array (no exit). The numbers against the
 * programs' on random sets: tests/shell/evaluate-engine.sh. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/resource.h>
#include <unistd.h>

#include "check.h"
#include "evalpart.h"
#include "hedge.h"
#include "knnpass.h"
#include "knn_search.h"
#include "retrieval.h"
#include "rng.h"

/* classes 0, 1, 2 at x = 0, 10, 20, ten items each at y = 0, 0.1, ..., 0.9; item 9 (class 0)
 * at (11, 0), one unit beyond class 1 (tests/shell/evaluate.sh derives each number) */
static float mu[60];
static int32_t cls[30];

static void make(void)
{
    for (int i = 0; i < 30; i++) {
        cls[i] = i / 10;
        mu[2 * i] = 10.0f * (float)cls[i];
        mu[2 * i + 1] = 0.1f * (float)(i % 10);
    }
    mu[18] = 11, mu[19] = 0;
}

static void test_hand(void)
{
    hedge_set Q = {30, 1, 2, mu, NULL, NULL, cls, NULL, 0, {0}, {0}};
    hedge_options o;
    hedge_options_init(&o);
    hedge_result r;
    char err[256] = "";
    CHECK(hedge_evaluate(&Q, NULL, &o, &r, err, sizeof err) == 0);
    double s9 = 0;
    for (int i = 1; i <= 9; i++)
        s9 += i / (20.0 + i) / 9;
    CHECK_CLOSE(r.value[HEDGE_KNN], 29.0 / 30, 1e-12);
    CHECK_CLOSE(r.value[HEDGE_KNN_K], 5, 0);
    CHECK_CLOSE(r.value[HEDGE_P1], 29.0 / 30, 1e-12);
    CHECK_CLOSE(r.value[HEDGE_RECALL + 3], 29.0 / 30, 1e-12);
    CHECK_CLOSE(r.value[HEDGE_RPREC], (9 * 8.0 / 9 + 20) / 30, 1e-7);
    CHECK_CLOSE(r.value[HEDGE_MAP_R], (9 * 8.0 / 9 + 20) / 30, 1e-7);
    CHECK_CLOSE(r.value[HEDGE_MAP], ((8 + 9.0 / 19) + 20 + s9) / 30, 1e-7);
    CHECK_CLOSE(r.value[HEDGE_MRR], (29 + 1.0 / 21) / 30, 1e-12);
    CHECK_CLOSE(r.value[HEDGE_MRR_AVG], (29 + 1.0 / 21) / 30, 1e-12);
    CHECK_CLOSE(r.value[HEDGE_NO_POSITIVE], 0, 0);
    CHECK(r.value[HEDGE_AP] > 0.9 && r.value[HEDGE_AP] < 1);
    CHECK(r.value[HEDGE_NMI] > 0.85 && r.value[HEDGE_NMI] < 1);
    /* no var, no eta: no uncertainty metrics, and no ECE without a match probability */
    CHECK(isnan(r.value[HEDGE_TAU]) && strstr(r.why[HEDGE_TAU], "no uncertainty"));
    CHECK(isnan(r.value[HEDGE_ECE]) && strstr(r.why[HEDGE_ECE], "no match probability"));
    CHECK(!strcmp(hedge_metric_name(HEDGE_MAP_R), "map_r") && hedge_metric_name(HEDGE_NMETRICS) == NULL);
    hedge_result_free(&r);

    /* two shards of queries give the whole's kNN accuracy, weighted by their queries */
    hedge_result a, b;
    o.include = (uint64_t)1 << HEDGE_KNN;
    o.q0 = 0, o.q1 = 12;
    CHECK(hedge_evaluate(&Q, NULL, &o, &a, err, sizeof err) == 0);
    o.q0 = 12, o.q1 = 30;
    CHECK(hedge_evaluate(&Q, NULL, &o, &b, err, sizeof err) == 0);
    CHECK_CLOSE(a.value[HEDGE_KNN] * 12 + b.value[HEDGE_KNN] * 18, 29, 1e-9);
    CHECK(isnan(a.value[HEDGE_NMI])); /* not included */
    hedge_result_free(&a);
    hedge_result_free(&b);

    /* pytorch-metric-learning's mAP and MRR truncated at K: the precisions at the positives
     * within K, summed and divided by R = 9 (its count_per_query), RR 0 past K. K = 10: the
     * intruder's positives (ranks 21..29) are beyond it: AP 0, RR 0; class 0's other queries
     * find 8 of their 9 (ranks 1..8; the ninth at 19): 8 / 9; classes 1 and 2: 1. K = 25: the
     * intruder finds 5 (ranks 21..25): AP = sum i / (20 + i) / 9, RR 1/21; class 0's others
     * find all 9 (ranks 1..8 and 19) */
    hedge_options_init(&o);
    o.at_k = 10;
    o.per_class = 1;
    CHECK(hedge_evaluate(&Q, NULL, &o, &r, err, sizeof err) == 0);
    CHECK_CLOSE(r.value[HEDGE_MAP], (9 * 8.0 / 9 + 20) / 30, 1e-12);
    CHECK_CLOSE(r.value[HEDGE_MRR], 29.0 / 30, 1e-12);
    CHECK_CLOSE(r.value[HEDGE_MRR_AVG], (1 + 1 + 0.9) / 3, 1e-12);
    CHECK_CLOSE(r.value[HEDGE_MAP_R], (9 * 8.0 / 9 + 20) / 30, 1e-7); /* untouched */
    /* per class, the same truncation: class 0's mAP (9 x 8/9 + 0) / 10, its MRR 9 / 10 */
    CHECK_CLOSE(r.per_class[0 * HEDGE_NMETRICS + HEDGE_MAP], 0.8, 1e-12);
    CHECK_CLOSE(r.per_class[0 * HEDGE_NMETRICS + HEDGE_MRR], 0.9, 1e-12);
    CHECK_CLOSE(r.per_class[1 * HEDGE_NMETRICS + HEDGE_MAP], 1, 1e-12);
    hedge_result_free(&r);
    o.at_k = 25;
    o.per_class = 0;
    CHECK(hedge_evaluate(&Q, NULL, &o, &r, err, sizeof err) == 0);
    double s5 = 0;
    for (int i = 1; i <= 5; i++)
        s5 += i / (20.0 + i);
    CHECK_CLOSE(r.value[HEDGE_MAP], ((8 + 9.0 / 19) + 20 + s5 / 9) / 30, 1e-12);
    CHECK_CLOSE(r.value[HEDGE_MRR], (29 + 1.0 / 21) / 30, 1e-12);
    hedge_result_free(&r);

    /* per class: class 0 has the intruder: kNN 9/10; P@1 9/10 */
    hedge_options_init(&o);
    o.per_class = 1;
    CHECK(hedge_evaluate(&Q, NULL, &o, &r, err, sizeof err) == 0);
    CHECK(r.nclasses == 3 && r.classes[0] == 0 && r.classes[2] == 2);
    CHECK_CLOSE(r.per_class[0 * HEDGE_NMETRICS + HEDGE_KNN], 0.9, 1e-12);
    CHECK_CLOSE(r.per_class[0 * HEDGE_NMETRICS + HEDGE_P1], 0.9, 1e-12);
    CHECK_CLOSE(r.per_class[1 * HEDGE_NMETRICS + HEDGE_P1], 1, 1e-12);
    hedge_result_free(&r);
}

/* one item: only NMI, AMI (1 by convention); everything else NaN with its reason */
static void test_small(void)
{
    float m[2] = {1, 2};
    int32_t c[1] = {4};
    hedge_set Q = {1, 1, 2, m, NULL, NULL, c, NULL, 0, {0}, {0}};
    hedge_options o;
    hedge_options_init(&o);
    hedge_result r;
    char err[256];
    CHECK(hedge_evaluate(&Q, NULL, &o, &r, err, sizeof err) == 0);
    CHECK(isnan(r.value[HEDGE_KNN]) && strstr(r.why[HEDGE_KNN], "no neighbour"));
    CHECK(isnan(r.value[HEDGE_MAP_R]) && strstr(r.why[HEDGE_MAP_R], "no query has a positive"));
    CHECK(isnan(r.value[HEDGE_AP]) && strstr(r.why[HEDGE_AP], "no class has two items"));
    CHECK_CLOSE(r.value[HEDGE_NMI], 1, 0);
    hedge_result_free(&r);
}

/* bad input: -1 and one line naming the array */
static int refused(const hedge_set *Q, const hedge_set *G, const hedge_options *o, const char *want)
{
    hedge_result r;
    char err[256] = "";
    int rc = hedge_evaluate(Q, G, o, &r, err, sizeof err);
    if (rc == 0 || !strstr(err, want) || strchr(err, '\n'))
        fprintf(stderr, "got '%s', expected '%s'\n", err, want);
    return rc == -1 && strstr(err, want) && !strchr(err, '\n');
}

static void test_bad(void)
{
    hedge_set Q = {30, 1, 2, mu, NULL, NULL, cls, NULL, 0, {0}, {0}};
    hedge_options o;
    hedge_options_init(&o);
    float m[60];
    memcpy(m, mu, sizeof m);
    m[15] = NAN;
    hedge_set N = Q;
    N.mu = m;
    CHECK(refused(&N, NULL, &o, "queries: mu: nan at item 7, expected finite numbers"));
    m[15] = 3e19f; /* a squared norm of 9e38: beyond what float32 distances can sum */
    CHECK(refused(&N, NULL, &o, "queries: mu: item 7 has a squared norm of"));
    hedge_set E = Q;
    E.n = 0;
    CHECK(refused(&E, NULL, &o, "queries: no items (n = 0)"));
    CHECK(refused(&Q, &E, &o, "gallery: no items (n = 0)"));
    hedge_set L = Q;
    L.labels = NULL;
    CHECK(refused(&L, NULL, &o, "queries: labels is NULL"));
    float v[60];
    for (int i = 0; i < 60; i++)
        v[i] = i == 31 ? -1.0f : 1.0f;
    hedge_set V = Q;
    V.var = v;
    CHECK(refused(&V, NULL, &o, "queries: var: -1 at item 15, expected finite numbers >= 0"));
    hedge_set G3 = {20, 1, 3, mu, NULL, NULL, cls, NULL, 0, {0}, {0}}; /* 60 floats as 20 x 3 */
    CHECK(refused(&Q, &G3, &o, "gallery: 3 dimensions, expected 2 (the queries')"));
    int64_t ids[30];
    for (int i = 0; i < 30; i++)
        ids[i] = i % 29;
    hedge_set D = Q;
    D.ids = ids;
    hedge_options ox = o;
    ox.exclude_id = 1;
    CHECK(refused(&Q, &D, &ox, "gallery: ids: 0 appears twice"));
    CHECK(refused(&Q, NULL, &ox, "exclude_id needs a gallery"));
    hedge_options om = o;
    om.distance = HEDGE_MLS;
    CHECK(refused(&Q, NULL, &om, "distance mls needs var"));
    hedge_options ok = o;
    ok.ks[1] = 1;
    CHECK(refused(&Q, NULL, &ok, "ks[1] = 1"));
    hedge_options oa = o;
    oa.abi = 0;
    char abi[64];
    snprintf(abi, sizeof abi, "abi 0, expected %d", HEDGE_ABI);
    CHECK(refused(&Q, NULL, &oa, abi));
    hedge_options oq = o;
    oq.q0 = 20, oq.q1 = 10;
    CHECK(refused(&Q, NULL, &oq, "queries 20 to 10"));
    float z[60] = {0};
    hedge_set Z = Q;
    Z.mu = z;
    hedge_options oc = o;
    oc.distance = HEDGE_COSINE;
    CHECK(refused(&Z, NULL, &oc, "item 0: its mean is the zero vector"));
    /* MLS beyond float32 (variances of 1e-36 beside means 21 apart: 21^2 / 2e-36 = 2.2e38 in one
     * dimension): refused in err, where knn would have ended the process */
    float tiny[60];
    for (int i = 0; i < 60; i++)
        tiny[i] = 1e-36f;
    hedge_set T = Q;
    T.var = tiny;
    CHECK(refused(&T, NULL, &om, "distance mls: the variances"));
    /* three components with a match probability: pairscore -K 8 would end the process (8 samples
     * do not split over 3), the call draws 9 and gives AP and ECE */
    static float m3[30 * 3 * 2], v3[30 * 3 * 2];
    for (int i = 0; i < 30 * 6; i++)
        m3[i] = mu[(i / 6) * 2 + i % 2] + 0.01f * (float)(i % 3), v3[i] = 0.5f;
    hedge_set M3 = {30, 3, 2, m3, v3, NULL, cls, NULL, 0, {0}, {0}};
    hedge_options o3 = o;
    o3.has_match = 1, o3.match_a = 1, o3.match_b = 0;
    hedge_result r;
    char err[256] = "";
    CHECK(hedge_evaluate(&M3, NULL, &o3, &r, err, sizeof err) == 0);
    CHECK(r.value[HEDGE_AP] > 0.5 && r.value[HEDGE_ECE] >= 0 && r.value[HEDGE_ECE] < 1);
    hedge_result_free(&r);
}

/* the kNN of the shared pass is metrics_knn's, to the bit: random points far from the origin
 * (offset 1000), with groups of 13 equal points (their ties need the proof's fallback to the full search
 * in double), leave-one-out and against a gallery with exclusions, k = 1 and 7 */
static void test_knnpass(void)
{
    enum { N = 700, D = 5 };
    static float X[N * D];
    static int32_t c[N];
    rng r;
    rng_init(&r, 36, 0);
    for (int i = 0; i < N; i++) {
        c[i] = i % 9;
        for (int d = 0; d < D; d++)
            X[i * D + d] = i % 50 && i % 50 < 13 ? X[(i - i % 50) * D + d] : 1000.0f + (float)rng_normal(&r);
    }
    for (int k = 1; k <= 7; k += 6)
        for (int gal = 0; gal < 2; gal++) {
            int64_t nq = gal ? 300 : N, ng = gal ? N - 300 : N;
            const float *Q = X, *G = gal ? X + 300 * D : X;
            int64_t *ex = malloc(nq * sizeof *ex), *n1 = malloc(nq * k * sizeof *n1), *n2 = malloc(nq * k * sizeof *n2);
            double *d1 = malloc(nq * k * sizeof *d1), *d2 = malloc(nq * k * sizeof *d2);
            for (int64_t q = 0; q < nq; q++)
                ex[q] = gal ? (q % 3 ? q : -1) : q;
            metrics_knn(Q, NULL, nq, G, NULL, ng, D, k, ex, 2, n1, d1);
            knnpass P = {Q, G, D, k, ex, n2, d2, 0};
            retrieval_job J = {Q, c, nq, G, gal ? c + 300 : c, ng, D, ex, NULL, 1, (int[]){1}, 1, 2, NULL, NULL, 0,
                               NULL, NULL, 0};
            retrieval_query *per = malloc(nq * sizeof *per);
            retrieval_summary sum;
            retrieval_hooks H = {knnpass_row, NULL, &P};
            retrieval_run_rows(&J, per, &sum, &H);
            CHECK(!memcmp(n1, n2, nq * k * sizeof *n1) && !memcmp(d1, d2, nq * k * sizeof *d1));
            CHECK(P.exact > 0); /* the duplicates went through the fallback */
            free(ex), free(n1), free(n2), free(d1), free(d2), free(per);
        }
}

/* the answers of ranges put end to end (what evalpart_read does with the shards' records) */
static void concat(const evalpart *p, int n, int64_t total, evalpart *w)
{
    memset(w, 0, sizeof *w);
    w->nq = total, w->knn_k = p[0].knn_k, w->has = p[0].has;
#define CAT(f, T)                                                                                                      \
    if (p[0].f) {                                                                                                      \
        w->f = malloc((size_t)total * sizeof(T));                                                                      \
        for (int i = 0; i < n; i++)                                                                                    \
            if (p[i].nq)                                                                                               \
                memcpy(w->f + p[i].q0, p[i].f, (size_t)p[i].nq * sizeof(T));                                           \
    }
    CAT(pred, int32_t) CAT(eta, float) CAT(per, retrieval_query) CAT(apk, double) CAT(rrk, double)
    CAT(top1, float) CAT(ratio, float) CAT(vote, float)
#undef CAT
}

static int same_result(const hedge_result *a, const hedge_result *b)
{
    int ok = !memcmp(a->value, b->value, sizeof a->value) && a->nclasses == b->nclasses;
    for (int i = 0; i < 64; i++)
        ok &= !strcmp(a->why[i], b->why[i]);
    if (a->per_class && b->per_class)
        ok &= !memcmp(a->per_class, b->per_class, (size_t)a->nclasses * HEDGE_NMETRICS * sizeof *a->per_class);
    /* the uncertainty section and the intervals, to the bit */
    ok &= !memcmp(a->ci, b->ci, sizeof a->ci) && !memcmp(a->unc, b->unc, sizeof a->unc) &&
          !memcmp(a->unc_ci, b->unc_ci, sizeof a->unc_ci) && !memcmp(a->diff_ci, b->diff_ci, sizeof a->diff_ci) &&
          !memcmp(a->best, b->best, sizeof a->best) && a->nsources == b->nsources &&
          !memcmp(a->unc_why, b->unc_why, sizeof a->unc_why);
    return ok;
}

/* shards: four ranges of queries (one empty) through the halves give one call's doubles, in memory and as
 * `evaluate` streams read back; leave-one-out and against a gallery with excluded ids; at_k and
 * per-class values; a part of another k, range or at_k refused */
static void test_shards(void)
{
    enum { N = 700, D = 6, NG = 500 };
    static float m[N * D], v[N * D], gm[NG * D];
    static int32_t c[N], gc[NG];
    static int64_t id[N], gid[NG];
    rng g;
    rng_init(&g, 714, 3);
    for (int i = 0; i < N; i++) {
        c[i] = (int32_t)rng_below(&g, 9), id[i] = 1000 + i;
        for (int d = 0; d < D; d++)
            m[i * D + d] = (float)(rng_normal(&g) + (d == c[i] % D ? 1.5 : 0)), v[i * D + d] = 0.1f + rng_uniformf(&g);
    }
    for (int i = 0; i < NG; i++) {
        gc[i] = (int32_t)rng_below(&g, 10), gid[i] = 1000 + 2 * i; /* half the queries' ids are here */
        for (int d = 0; d < D; d++)
            gm[i * D + d] = (float)(rng_normal(&g) + (d == gc[i] % D ? 1.5 : 0));
    }
    hedge_set Q = {N, 1, D, m, v, NULL, c, id, 0, {0}, {0}}, G = {NG, 1, D, gm, NULL, NULL, gc, gid, 0, {0}, {0}};
    const int64_t cut[] = {0, 250, 250, 251, N}; /* an empty one among them */
    char err[256] = "";
    for (int run = 0; run < 4; run++) {
        hedge_options o;
        hedge_options_init(&o);
        o.per_class = 1, o.at_k = run & 1 ? 7 : 0, o.threads = 1 + (run >> 1);
        const hedge_set *gal = run >= 2 ? &G : NULL;
        o.exclude_id = gal != NULL;
        hedge_result one, merged, streamed;
        CHECK(hedge_evaluate(&Q, gal, &o, &one, err, sizeof err) == 0);
        int k = hedge_neighbours(&Q, gal, &o, err, sizeof err);
        CHECK(k == 5);
        evalpart p[4], w, rd;
        const char *paths[4];
        char name[4][64];
        evalpart_info I = {.nsets = 1, .names = {"shard"}, .hash = {evalpart_hash(&Q)}, .n = N, .ng = gal ? NG : 0,
                           .ghash = gal ? evalpart_hash(gal) : 0, .o = &o, .knn_k = k};
        for (int i = 0; i < 4; i++) {
            CHECK(hedge_queries(&Q, gal, &o, cut[i], cut[i + 1], k, &p[i], err, sizeof err) == 0);
            snprintf(name[i], sizeof name[i], "/tmp/test_hedge.%d.%d.hs", (int)getpid(), i);
            FILE *f = fopen(name[i], "wb");
            evalpart_write(f, &p[i], &I, 0, NULL);
            fclose(f);
        }
        paths[0] = name[3], paths[1] = name[2], paths[2] = name[0], paths[3] = name[1]; /* any order */
        concat(p, 4, N, &w);
        CHECK(hedge_finish(&Q, gal, &o, &w, &merged, err, sizeof err) == 0);
        CHECK(same_result(&one, &merged));
        evalpart_read(paths, 4, &I, &rd);
        CHECK(hedge_finish(&Q, gal, &o, &rd, &streamed, err, sizeof err) == 0);
        CHECK(same_result(&one, &streamed));
        CHECK(!isnan(one.value[HEDGE_TAU]) && !isnan(one.value[HEDGE_MAP]) && one.nclasses == 9);
        /* the whole's answers are not a shard's: the k, the range, at_k */
        hedge_result bad;
        w.knn_k = k + 1;
        CHECK(hedge_finish(&Q, gal, &o, &w, &bad, err, sizeof err) == -1 && strstr(err, "kNN k"));
        w.knn_k = k, w.nq = N + 1;
        CHECK(hedge_finish(&Q, gal, &o, &w, &bad, err, sizeof err) == -1 && strstr(err, "range"));
        w.nq = N, o.at_k = !o.at_k;
        CHECK(hedge_finish(&Q, gal, &o, &w, &bad, err, sizeof err) == -1 && strstr(err, "at_k"));
        for (int i = 0; i < 4; i++)
            evalpart_free(&p[i]), remove(name[i]);
        evalpart_free(&w), evalpart_free(&rd);
        hedge_result_free(&one), hedge_result_free(&merged), hedge_result_free(&streamed);
    }
}

/* Out of memory and the stop flag (issue 44, defects 5 and 1): the call returns HEDGE_ENOMEM or
 * HEDGE_ESTOPPED with its message, the process goes on, nothing it made is left behind (under
 * ASan, LeakSanitizer checks the ledger at exit), OpenBLAS's threads are given back, and the next
 * call gives the same numbers as before. Before, emalloc's die() ended the process ("hedge: out of
 * memory (1600000000 bytes)", exit 1) and nothing could stop a call. The allocation that fails:
 * 10^9 verification pairs (16 GB of pair indices), refused by the address-space limit set here
 * (ASan reserves its shadow in the address space, so there its allocator's own limit below). */
#ifdef __SANITIZE_ADDRESS__
const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "allocator_may_return_null=1:max_allocation_size_mb=4096"; }
#endif

static volatile int stop_flag;

static void *stop_later(void *arg)
{
    usleep(20000);
    stop_flag = 1;
    return arg;
}

static void test_failures(void)
{
    int n = 6000, D = 32;
    float *x = malloc((size_t)n * D * sizeof *x);
    int32_t *y = malloc((size_t)n * sizeof *y);
    rng r;
    rng_init(&r, 44, 0);
    for (int i = 0; i < n; i++) {
        y[i] = i % 20;
        for (int d = 0; d < D; d++)
            x[i * D + d] = (float)rng_normal(&r) + (d == y[i] ? 2.0f : 0.0f);
    }
    hedge_set Q = {n, 1, D, x, NULL, NULL, y, NULL, 0, {0}, {0}};
    hedge_options o;
    hedge_options_init(&o);
    o.threads = 2;
    hedge_result before, r2;
    char err[256];
    CHECK(hedge_evaluate(&Q, NULL, &o, &before, err, sizeof err) == HEDGE_OK);
#ifndef __SANITIZE_ADDRESS__
    struct rlimit was, lim;
    getrlimit(RLIMIT_AS, &was);
    lim = was;
    lim.rlim_cur = (rlim_t)8 << 30;
    CHECK(setrlimit(RLIMIT_AS, &lim) == 0);
#endif
    hedge_options big = o;
    big.pairs = 1000000000;
    err[0] = 0;
    int rc = hedge_evaluate(&Q, NULL, &big, &r2, err, sizeof err);
#ifndef __SANITIZE_ADDRESS__
    setrlimit(RLIMIT_AS, &was);
#endif
    CHECK(rc == HEDGE_ENOMEM);
    CHECK(strstr(err, "out of memory (16000000000 bytes)") != NULL);
    if (rc != HEDGE_ENOMEM)
        fprintf(stderr, "got %d: '%s'\n", rc, err);
    CHECK(r2.classes == NULL && r2.knn_eta == NULL && isnan(r2.value[HEDGE_MAP_R]));
    /* stopped from another thread mid-call (a set whose call takes seconds: 40,000 x 64 items'
     * full ranking), and stopped before it starts */
    int nl = 40000, Dl = 64;
    float *xl = malloc((size_t)nl * Dl * sizeof *xl);
    int32_t *yl = malloc((size_t)nl * sizeof *yl);
    for (int i = 0; i < nl; i++) {
        yl[i] = i % 100;
        for (int d = 0; d < Dl; d++)
            xl[i * Dl + d] = (float)rng_normal(&r);
    }
    hedge_set L = {nl, 1, Dl, xl, NULL, NULL, yl, NULL, 0, {0}, {0}};
    stop_flag = 0;
    hedge_options so = o;
    so.stop = &stop_flag;
    pthread_t th;
    pthread_create(&th, NULL, stop_later, NULL);
    rc = hedge_evaluate(&L, NULL, &so, &r2, err, sizeof err);
    pthread_join(th, NULL);
    CHECK(rc == HEDGE_ESTOPPED && !strcmp(err, "interrupted"));
    if (rc != HEDGE_ESTOPPED)
        fprintf(stderr, "stop: got %d: '%s' (the call ended before the flag: make the set larger)\n", rc, err);
    rc = hedge_evaluate(&Q, NULL, &so, &r2, err, sizeof err);
    CHECK(rc == HEDGE_ESTOPPED);
    free(xl);
    free(yl);
    /* the process and the engine as they were */
    hedge_result after;
    CHECK(hedge_evaluate(&Q, NULL, &o, &after, err, sizeof err) == HEDGE_OK);
    CHECK(same_result(&before, &after));
    hedge_result_free(&before);
    hedge_result_free(&after);
    free(x);
    free(y);
}

int main(void)
{
    test_knnpass();
    make();
    test_hand();
    test_small();
    test_shards();
    test_bad();
    test_failures();
    return check_done("hedge");
}
