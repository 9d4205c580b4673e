/* hedge: the evaluation battery in one call (lib/engine/hedge.h), over the library parts that knn,
 * retrieve, cluster, pairscore | apcurve and ktau run: knn_eval_run, retrieval_run and
 * retrieval_class_average, cluster_kmeans, pairs_random with match_prob or match_pair_score and
 * metrics_ap / metrics_ece, uncertainty_analyse. The input is checked first, whole, so that what
 * those parts would die on comes back as one line in err instead. hedge_evaluate is the two halves
 * of lib/engine/evalpart.h in a row: hedge_queries (the n x gallery pass over a range of queries) and
 * hedge_finish (the rest, from the queries' answers and the whole sets). */
#include "hedge.h"
#include "evalpart.h"

#include <errno.h>
#include <float.h>
#include <setjmp.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blas.h"
#include "cluster.h"
#include "gallery.h"
#include "guard.h"
#include "knn_eval.h"
#include "knnpass.h"
#include "match.h"
#include "ap.h"
#include "argsort.h"
#include "aurc.h"
#include "ece.h"
#include "pairs.h"
#include "retrieval.h"
#include "riskctl.h"
#include "selective.h"
#include "stream.h"
#include "uncertainty.h"
#include "util.h"
#include "verify.h"
#include "auc.h"

#define HEDGE_BINS 20    /* ktau -b 20 */
#define HEDGE_ECE_BINS HEDGE_ECEBINS /* apcurve --ece 15 */
#define HEDGE_SAMPLES 8   /* pairscore -K 8 (or the next multiple of C: each component as many) */

static const char *const names[HEDGE_NMETRICS] = {
    "ap", "ece", "knn", "knn_k", "p1", "rprec", "map_r", "map", "mrr", "p1_avg_of_avgs", "rprec_avg_of_avgs",
    "map_r_avg_of_avgs", "map_avg_of_avgs", "mrr_avg_of_avgs", "nmi", "ami", "tau", "auroc", "aurc", "eaurc",
    "no_positive", "recall_0", "recall_1", "recall_2", "recall_3", "recall_4", "recall_5", "recall_6", "recall_7",
    "recall_8", "recall_9", "recall_10", "recall_11", "recall_12", "recall_13", "recall_14", "recall_15"};

static const char *const tnames[HEDGE_NTARGETS] = {"r1", "knn", "ap", "map_r"};
static const char *const snames[HEDGE_SRC_USER] = {"top1_dist", "ratio", "vote_entropy", "norm", "var", "eta"};

void hedge_options_init(hedge_options *o)
{
    *o = (hedge_options){.abi = HEDGE_ABI, .distance = HEDGE_EUCLIDEAN, .knn_k = 5, .ks = {1, 2, 4, 8}, .nk = 4,
                         .pairs = 10000, .seed = 714, .avg_of_avgs = 1, .threads = 1, .bootstrap = 1000, .risk = 0.05, .risk_delta = 0.1};
}

int hedge_nmetrics(void) { return HEDGE_NMETRICS; }

const char *hedge_blas_kernel(void) { return blas_choose(); }

const char *hedge_version(void) { return util_version; }

/* HEDGE_* are MATCH_DISTANCE_*, which the evaluators take (lib/evaluation/match.h) */
_Static_assert((int)HEDGE_MLS == (int)MATCH_DISTANCE_MLS && (int)HEDGE_W2 == (int)MATCH_DISTANCE_W2 &&
                   (int)HEDGE_CSD == (int)MATCH_DISTANCE_CSD && (int)HEDGE_BHATT == (int)MATCH_DISTANCE_BHATT,
               "hedge's distances are the evaluators'");
const char *hedge_distance_name(int d) { return match_distance_name(d); }
int hedge_distance_parse(const char *name) { return match_distance_find(name); }

/* a distance of two Gaussians that MLS's kernel ranks (mls, csd, kl, bhattacharyya) */
static int kernel_distance(int d) { return match_distance_kernel(d) >= 0; }

const char *hedge_metric_name(int id) { return id >= 0 && id < HEDGE_NMETRICS ? names[id] : NULL; }

__attribute__((format(printf, 3, 4))) static int fail(char *err, size_t len, const char *fmt, ...)
{
    if (err && len) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, len, fmt, ap);
        va_end(ap);
    }
    return -1;
}

__attribute__((format(printf, 3, 4))) static void why(hedge_result *r, int id, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->why[id], sizeof r->why[id], fmt, ap);
    va_end(ap);
}

/* every array of one set as the parts need it: NULL when good, else err filled */
static int check_set(const hedge_set *S, const char *set, int distance, char *err, size_t len)
{
    if (!S->mu || !S->labels)
        return fail(err, len, "%s: %s is NULL, expected an array", set, !S->mu ? "mu" : "labels");
    if (S->n < 1)
        return fail(err, len, "%s: no items (n = %lld): nothing to evaluate", set, (long long)S->n);
    if (S->C < 1 || S->D < 1 || (int64_t)S->C * S->D >= ((int64_t)1 << 31))
        return fail(err, len, "%s: mu is [%lld, %d, %d], expected [n, C, D] with C >= 1 and D >= 1", set,
                    (long long)S->n, S->C, S->D);
    int64_t cd = (int64_t)S->C * S->D;
    for (int64_t i = 0; i < S->n * cd; i++)
        if (!isfinite(S->mu[i]))
            return fail(err, len, "%s: mu: %g at item %lld, expected finite numbers", set, S->mu[i],
                        (long long)(i / cd));
    for (int64_t i = 0; i < S->n * S->C; i++) { /* what the float32 distances can hold (retrieval.h) */
        double s = 0;
        for (int d = 0; d < S->D; d++)
            s += (double)S->mu[i * S->D + d] * S->mu[i * S->D + d];
        if (!(s <= (double)FLT_MAX / 16))
            return fail(err, len, "%s: mu: item %lld has a squared norm of %g, expected at most %g (float32 distances)",
                        set, (long long)(i / S->C), s, (double)FLT_MAX / 16);
    }
    if (S->var)
        for (int64_t i = 0; i < S->n * cd; i++)
            if (!(S->var[i] >= 0) || !isfinite(S->var[i]))
                return fail(err, len, "%s: var: %g at item %lld, expected finite numbers >= 0", set, S->var[i],
                            (long long)(i / cd));
    if (S->eta)
        for (int64_t i = 0; i < S->n; i++)
            if (!isfinite(S->eta[i]))
                return fail(err, len, "%s: eta: %g at item %lld, expected finite numbers", set, S->eta[i],
                            (long long)i);
    if (S->nuser < 0 || S->nuser > HEDGE_MAXUSER)
        return fail(err, len, "%s: %d user uncertainties, expected 0 to %d", set, S->nuser, HEDGE_MAXUSER);
    for (int u = 0; u < S->nuser; u++) {
        const char *nm = S->user_name[u];
        if (!S->user[u] || !nm || !*nm || strlen(nm) >= 32)
            return fail(err, len, "%s: user uncertainty %d: %s, expected an array and a name of 1 to 31 bytes", set, u,
                        !S->user[u] ? "no array" : "no name or a longer one");
        for (int v = 0; v < HEDGE_SRC_USER; v++)
            if (!strcmp(nm, snames[v]))
                return fail(err, len, "%s: user uncertainty '%s': the name of a source hedge computes", set, nm);
        if (u && !strcmp(nm, S->user_name[0]))
            return fail(err, len, "%s: two user uncertainties named '%s'", set, nm);
        for (int64_t i = 0; i < S->n; i++)
            if (!isfinite(S->user[u][i]))
                return fail(err, len, "%s: %s: %g at item %lld, expected finite numbers", set, nm, S->user[u][i],
                            (long long)i);
    }
    if ((distance == HEDGE_W2 || kernel_distance(distance)) && (!S->var || S->C != 1))
        return fail(err, len, "%s: distance %s needs var and one component (C = 1), got %s and C = %d", set,
                    hedge_distance_name(distance), S->var ? "var" : "no var", S->C);
    if (kernel_distance(distance) && distance != HEDGE_CSD) {
        for (int64_t i = 0; i < S->n * cd; i++)
            if (!(S->var[i] >= FLT_MIN))
                return fail(err, len, "%s: var: %g at item %lld, expected at least %g for distance %s (%s)", set,
                            S->var[i], (long long)(i / cd), FLT_MIN, hedge_distance_name(distance),
                            distance == HEDGE_KL ? "it divides by them" : "their log");
    }
    return 0;
}

/* distance mls (and bhattacharyya, whose terms are at most MLS's): every pair's MLS within float32
 * (the kNN's and the ranking's floats): a bound over all pairs of Q and G, sum over d of (the
 * coordinates' range)^2 / (2 the least var) plus the largest |log(va + vb)|, at most FLT_MAX / 4;
 * else err (tiny variances beside distant means), naming the distance */
static int mls_check(const hedge_set *Q, const hedge_set *G, int distance, char *err, size_t len)
{
    double bound = 0, lmax = 0;
    for (int d = 0; d < Q->D; d++) {
        double lo = INFINITY, hi = -INFINITY, vlo = INFINITY, vhi = 0;
        for (int s = 0; s < 2; s++) {
            const hedge_set *S = s ? G : Q;
            for (int64_t i = 0; i < S->n; i++) {
                double m = S->mu[i * S->D + d], v = S->var[i * S->D + d];
                lo = m < lo ? m : lo, hi = m > hi ? m : hi, vlo = v < vlo ? v : vlo, vhi = v > vhi ? v : vhi;
            }
        }
        bound += (hi - lo) * (hi - lo) / (2 * vlo);
        double l = fmax(fabs(log(2 * vlo)), fabs(log(2 * vhi)));
        lmax = l > lmax ? l : lmax;
    }
    bound += Q->D * lmax;
    if (!(bound <= (double)FLT_MAX / 4))
        return fail(err, len, "distance %s: the variances (as small as they are) beside the means' spread give MLS "
                              "up to %g, beyond float32 (at most %g): scale the means down or floor the variances",
                    hedge_distance_name(distance), bound, (double)FLT_MAX / 4);
    return 0;
}

/* a borrowed match_set view of S (ids: S's or the index, allocated into *own) */
static match_set view(const hedge_set *S, int64_t **own)
{
    match_set M = {.n = S->n, .C = S->C, .D = S->D, .mu = (float *)S->mu, .var = (float *)S->var,
                   .cls = (int32_t *)S->labels, .eta = (float *)S->eta, .has_id = S->ids != NULL};
    *own = NULL;
    if (S->ids)
        M.id = (int64_t *)S->ids;
    else {
        *own = emalloc((size_t)S->n * sizeof **own);
        for (int64_t i = 0; i < S->n; i++)
            (*own)[i] = i;
        M.id = *own;
    }
    return M;
}

/* the means a ranking uses: the items' centres, unit with cosine; NULL and err on a zero mean */
static float *ranked_means(const match_set *S, int distance, const char *set, char *err, size_t len)
{
    float *m = match_set_means(S, NULL);
    if (distance == HEDGE_COSINE) {
        int64_t z = match_normalise(m, S->n, S->D);
        if (z >= 0) {
            free(m);
            fail(err, len, "%s: item %lld: its mean is the zero vector, which has no direction for distance cosine",
                 set, (long long)z);
            return NULL;
        }
    }
    return m;
}

static int wanted(const hedge_options *o, int id) { return !o->include || (o->include >> id & 1); }

/* what the whole sets allow (evaluate.sh's limits): classes and pairs of the queries, the
 * neighbours every query has, the queries with a positive (exclude: every query's, or NULL) */
typedef struct {
    int64_t classes, nbrs, pos;
    int paired, own;
} limits;

static limits count_limits(const match_set *Q, const match_set *G, const int64_t *exclude)
{
    limits L = {0};
    int32_t *qs = emalloc((size_t)Q->n * sizeof *qs);
    memcpy(qs, Q->cls, (size_t)Q->n * sizeof *qs);
    qsort(qs, (size_t)Q->n, sizeof *qs, util_cmp_i32);
    for (int64_t i = 0; i < Q->n; i++) {
        L.classes += !i || qs[i] != qs[i - 1];
        L.paired |= i && qs[i] == qs[i - 1];
    }
    int32_t *gs = qs;
    if (G != Q) {
        gs = emalloc((size_t)G->n * sizeof *gs);
        memcpy(gs, G->cls, (size_t)G->n * sizeof *gs);
        qsort(gs, (size_t)G->n, sizeof *gs, util_cmp_i32);
    }
    for (int64_t q = 0; q < Q->n; q++) {
        int32_t c = Q->cls[q];
        int64_t p = (c == INT32_MAX ? G->n : util_lower_bound_i32(gs, G->n, c + 1)) - util_lower_bound_i32(gs, G->n, c);
        if (exclude && exclude[q] >= 0) {
            L.own |= G != Q;
            p -= G->cls[exclude[q]] == c;
        }
        L.pos += p > 0;
    }
    L.nbrs = G == Q ? Q->n - 1 : G->n - L.own;
    if (gs != qs)
        free(gs);
    free(qs);
    return L;
}

/* the verification section's pair numbers (hedge.h's struct hedge_verify) from the pairs' scores
 * s and their classes y (1: genuine) */
static void verify_pairs(const double *s, const uint8_t *y, long n, hedge_result *r)
{
    struct hedge_verify *v = &r->verify;
    double *gen = emalloc((size_t)n * sizeof *gen), *imp = emalloc((size_t)n * sizeof *imp);
    int64_t ng = 0, ni = 0;
    for (long p = 0; p < n; p++)
        if (y[p])
            gen[ng++] = s[p];
        else
            imp[ni++] = s[p];
    v->genuine = ng, v->impostor = ni;
    if (ng && ni)
        v->roc_auc = metrics_auc(s, y, n);
    else
        snprintf(v->roc_why, sizeof v->roc_why, "%s (%ld pair%s)", ng ? "no impostor pair" : "no genuine pair", n,
                 n == 1 ? "" : "s");
    /* the FARs a rate can be had at (TAR: 10 / FAR impostors; the ROC's points: one impostor above
     * T at least), all from one sort of the impostors */
    double far[HEDGE_NFAR + HEDGE_ROC];
    int nf = 0, which[HEDGE_NFAR + HEDGE_ROC]; /* f: far[f]'s TAR; HEDGE_NFAR + f: the ROC's point f */
    for (int f = 0; f < HEDGE_NFAR; f++) {
        if (!ng || !verify_enough(ni, v->far[f])) {
            if (!ng)
                snprintf(v->tar_why[f], sizeof v->tar_why[f], "%s", v->roc_why);
            else
                snprintf(v->tar_why[f], sizeof v->tar_why[f], "%lld impostor pairs, fewer than the %.0f (10 / FAR) "
                         "this FAR needs (draw more pairs)", (long long)ni, ceil(VERIFY_MIN_FALSE / v->far[f] - 1e-6));
            continue;
        }
        far[nf] = v->far[f], which[nf++] = f;
    }
    for (int f = 0; f < HEDGE_ROC && ng; f++)
        if ((double)ni * v->roc_far[f] >= 1 - 1e-9)
            far[nf] = v->roc_far[f], which[nf++] = HEDGE_NFAR + f;
    if (nf) {
        verify_point pt[HEDGE_NFAR + HEDGE_ROC];
        verify_at_fars(gen, ng, imp, ni, far, nf, pt);
        for (int i = 0; i < nf; i++) {
            int f = which[i];
            if (f >= HEDGE_NFAR)
                v->roc_tar[f - HEDGE_NFAR] = pt[i].rate;
            else
                v->tar[f] = pt[i].rate, v->fnmr[f] = 1 - pt[i].rate, v->far_reached[f] = pt[i].far_reached;
        }
    }
    free(gen);
    free(imp);
}

/* open-set identification at rank 1 over the queries of p against the gallery (hedge.h's struct
 * hedge_verify): mated probes have their class in the gallery (npos > 0), non-mated ones not */
static void verify_open_set(const evalpart *p, int gallery, hedge_result *r)
{
    struct hedge_verify *v = &r->verify;
    const char *w = !gallery ? "no gallery: open-set identification needs one that misses some queries' classes"
                    : !p->top1 ? "no kNN answers (no neighbour): no probe has a nearest distance"
                               : NULL;
    char buf[160];
    double *mated = NULL, *non = NULL;
    if (!w) {
        mated = emalloc((size_t)p->nq * sizeof *mated), non = emalloc((size_t)p->nq * sizeof *non);
        for (int64_t q = 0; q < p->nq; q++) {
            double score = -(double)p->top1[q]; /* the nearer, the surer */
            if (p->per && p->per[q].npos > 0)
                mated[v->mated++] = p->per[q].p1 ? score : -INFINITY; /* never accepted: misidentified */
            else
                non[v->nonmated++] = score;
        }
        if (!v->nonmated)
            w = "every query's class is in the gallery: no probe of an absent class to reject";
        else if (!v->mated)
            w = "no query's class is in the gallery: no probe to identify";
    }
    double far[HEDGE_NFAR];
    int nf = 0, which[HEDGE_NFAR];
    for (int f = 0; f < HEDGE_NFAR; f++) {
        if (w || !verify_enough(v->nonmated, v->far[f])) {
            if (!w)
                snprintf(buf, sizeof buf, "%lld probes of absent classes, fewer than the %.0f (10 / FAR) this FAR "
                         "needs", (long long)v->nonmated, ceil(VERIFY_MIN_FALSE / v->far[f] - 1e-6));
            snprintf(v->dir_why[f], sizeof v->dir_why[f], "%s", w ? w : buf);
            continue;
        }
        far[nf] = v->far[f], which[nf++] = f;
    }
    if (nf) { /* the non-mated probes sorted once for every FAR */
        verify_point pt[HEDGE_NFAR];
        verify_at_fars(mated, v->mated, non, v->nonmated, far, nf, pt);
        for (int i = 0; i < nf; i++)
            v->dir[which[i]] = pt[i].rate;
    }
    free(mated);
    free(non);
}

/* verification AP (and ECE with match a, b) over sampled pairs of Q, as pairscore | apcurve; the
 * verification section's pair numbers from the same pairs */
static void pair_metrics(const match_set *Q, const hedge_options *o, const limits *L, hedge_result *r)
{
    if (!L->paired || L->classes < 2) {
        const char *w = !L->paired ? "no class has two items: no matching pair to draw"
                                   : "one class only: no non-matching pair to draw";
        why(r, HEDGE_AP, "%s", w), why(r, HEDGE_ECE, "%s", w);
        snprintf(r->verify.roc_why, sizeof r->verify.roc_why, "%s", w);
        for (int f = 0; f < HEDGE_NFAR; f++)
            snprintf(r->verify.tar_why[f], sizeof r->verify.tar_why[f], "%s", w);
        return;
    }
    long n = (long)o->pairs;
    pairs_ij *P = pairs_random(Q, n, o->seed);
    double *s = emalloc((size_t)n * sizeof *s);
    uint8_t *y = emalloc((size_t)n);
    int mls = kernel_distance(o->distance), zero = 0;
    match_pair_scorer ps;
    match_scorer sc;
    if (mls) /* minus the distance for csd, kl, bhattacharyya: higher, more alike */
        match_pair_scorer_init(&ps, o->distance == HEDGE_MLS   ? MATCH_SCORE_MLS
                                    : o->distance == HEDGE_CSD ? MATCH_SCORE_CSD
                                    : o->distance == HEDGE_KL  ? MATCH_SCORE_KL
                                                               : MATCH_SCORE_BHATT,
                               Q, Q);
    else /* no match probability: a = 1, b = 0 on the means ranks the pairs by their distance */
        match_scorer_init(&sc, o->has_match ? o->match_a : 1, o->has_match ? o->match_b : 0,
                          (HEDGE_SAMPLES + Q->C - 1) / Q->C * Q->C, o->seed,
                          o->has_match && Q->var);
    for (long p = 0; p < n; p++) {
        if (!(p & 4095))
            guard_poll(); /* up to 10^9 pairs: the stop flag between blocks of them */
        y[p] = Q->cls[P[p].i] == Q->cls[P[p].j];
        if (mls) {
            s[p] = (float)match_pair_score(&ps, P[p].i, P[p].j);
            continue;
        }
        match_emb a = match_set_emb(Q, P[p].i), b = match_set_emb(Q, P[p].j);
        s[p] = (float)match_prob(&sc, &a, &b);
        zero |= s[p] == 0;
    }
    r->value[HEDGE_AP] = metrics_ap(s, y, n);
    verify_pairs(s, y, n, r);
    if (o->has_match && !mls) {
        int64_t bad;
        metrics_ece_bin eb[HEDGE_ECE_BINS];
        r->value[HEDGE_ECE] = metrics_ece(s, y, n, HEDGE_ECE_BINS, eb, &bad);
        for (int b = 0; b < HEDGE_ECE_BINS && bad < 0; b++)
            r->ece_n[b] = eb[b].n, r->ece_p[b] = eb[b].mean_p, r->ece_y[b] = eb[b].mean_y;
    } else
        why(r, HEDGE_ECE, mls ? (o->distance == HEDGE_MLS ? "MLS is no probability" : "a distance of the Gaussians is no probability")
                              : "no match probability (give match_a, match_b)");
    if (zero && !o->has_match)
        why(r, HEDGE_AP, "some pairs are so far apart (beyond a distance of about 87) that their score sigmoid(-d) "
                         "is 0 in float32: they tie, one block for AP (scale the embeddings down, or give --match-a)");
    if (mls)
        match_pair_scorer_free(&ps);
    else
        match_scorer_free(&sc);
    free(y);
    free(s);
    free(P);
}

/* NMI and AMI of k-means (k = the queries' classes) on the queries' means, as cluster */
static void cluster_metrics(const match_set *Q, const hedge_options *o, hedge_result *r)
{
    float *X = match_set_means(Q, NULL);
    cluster_opts km = cluster_defaults(0);
    km.k = cluster_count_distinct(Q->cls, Q->n);
    km.seed = o->seed;
    km.threads = o->threads;
    int32_t *assign = emalloc((size_t)Q->n * sizeof *assign);
    cluster_result cr;
    cluster_kmeans(X, Q->n, Q->D, &km, assign, NULL, &cr);
    int R, C;
    int64_t *t = cluster_contingency(Q->cls, assign, Q->n, &R, &C);
    r->value[HEDGE_NMI] = cluster_nmi(t, R, C);
    r->value[HEDGE_AMI] = cluster_ami(t, R, C);
    if (km.k == 1)
        for (int i = HEDGE_NMI; i <= HEDGE_AMI; i++)
            why(r, i, "one class, one cluster: 1 by convention (sklearn), nothing measured");
    free(t);
    free(assign);
    free(X);
}

/* tau, AUROC, AURC, E-AURC of the queries' uncertainty eta (nq) on their kNN answers pred (nq), as
 * ktau -b 20 */
static void uncertainty_metrics(const match_set *Q, int64_t q0, int64_t nq, const int32_t *pred, const float *eta,
                                const hedge_options *o, hedge_result *r)
{
    const int ids[] = {HEDGE_TAU, HEDGE_AUROC, HEDGE_AURC, HEDGE_EAURC};
    if (!eta || nq < HEDGE_BINS) {
        for (int i = 0; i < 4; i++)
            if (!eta)
                why(r, ids[i], "the embeddings have no uncertainty (no eta, no var)");
            else
                why(r, ids[i], "%lld queries cannot fill %d bins", (long long)nq, HEDGE_BINS);
        return;
    }
    double *u = emalloc((size_t)nq * sizeof *u), *perf = emalloc((size_t)nq * sizeof *perf);
    uint64_t *tie = emalloc((size_t)nq * sizeof *tie);
    for (int64_t q = 0; q < nq; q++) {
        double id = (double)Q->id[q0 + q];
        u[q] = eta[q];
        perf[q] = pred[q] == Q->cls[q0 + q];
        tie[q] = metrics_tie_key(o->seed, &id, 1);
    }
    r->nq = nq; /* the answers, for a caller's error-versus-reject curve (bin/evaluate -o) */
    r->knn_eta = emalloc((size_t)nq * sizeof *r->knn_eta);
    r->knn_correct = emalloc((size_t)nq * sizeof *r->knn_correct);
    for (int64_t q = 0; q < nq; q++)
        r->knn_eta[q] = eta[q], r->knn_correct[q] = (float)perf[q];
    uncertainty_report U = {.ufield = "eta", .pname = "accuracy", .f1 = "correct", .nbins = HEDGE_BINS,
                            .seed = o->seed, .n = nq, .quiet = 1};
    uncertainty_analyse(&U, u, perf, NULL, tie, NULL);
    r->value[HEDGE_TAU] = U.tau, r->value[HEDGE_AUROC] = U.auroc;
    r->value[HEDGE_AURC] = U.aurc.aurc, r->value[HEDGE_EAURC] = U.aurc.eaurc;
    if (isnan(U.tau))
        why(r, HEDGE_TAU, "undefined: the uncertainty, or the accuracy of the 20 bins, is the same everywhere");
    /* ktau's JSON note, as evaluate.sh quoted it */
    char nt[600] = "";
    const char *aw = U.aurc_why, *rw = U.auroc_why;
    if (U.constant)
        snprintf(nt, 256, "the uncertainty is constant (eta = %.9g for every item): bins and tau are undefined", U.u0);
    else if (*aw) {
        snprintf(nt, sizeof nt, "aurc, aurc_oracle, eaurc%s are undefined: %s", strcmp(aw, rw) ? "" : " and auroc", aw);
        if (strcmp(aw, rw))
            snprintf(nt + strlen(nt), sizeof nt - strlen(nt), "; auroc is undefined: %s", rw);
    } else if (*rw)
        snprintf(nt, sizeof nt, "auroc is undefined: %s", rw);
    for (int i = 1; i < 4; i++)
        if (isnan(r->value[ids[i]]))
            why(r, ids[i], "undefined (%.140s)", nt);
    uncertainty_free(&U);
    free(tie);
    free(perf);
    free(u);
}


const char *hedge_target_name(int t) { return t >= 0 && t < HEDGE_NTARGETS ? tnames[t] : NULL; }
const char *hedge_measure_name(int m) { return selective_measure_name(m); }

/* a float array as the doubles selective takes, NULL for NULL */
static double *doubles(const float *x, int64_t n)
{
    if (!x)
        return NULL;
    double *d = emalloc((size_t)(n ? n : 1) * sizeof *d);
    for (int64_t i = 0; i < n; i++)
        d[i] = x[i];
    return d;
}

/* the uncertainty section (lib/hedge.h) over p's queries, and the bootstrap intervals of the
 * means over queries, into r */
static void uncertainty_section(const match_set *Q, const hedge_set *QS, const evalpart *p, const int *kidx, int nk,
                                const hedge_options *o, hedge_result *r)
{
    int64_t q0 = p->q0, nq = p->nq, cd = (int64_t)Q->C * Q->D;
    selective_source S[HEDGE_NSOURCES];
    double *own[HEDGE_NSOURCES] = {0};
    int ns = HEDGE_SRC_USER + QS->nuser;
    const char *noknn = "no kNN answers (knn not asked for, or no neighbour)";
    own[HEDGE_SRC_TOP1] = doubles(p->top1, nq), own[HEDGE_SRC_VOTE] = doubles(p->vote, nq);
    own[HEDGE_SRC_RATIO] = p->ratio && !isnan(p->ratio[0]) ? doubles(p->ratio, nq) : NULL;
    S[HEDGE_SRC_TOP1] = (selective_source){snames[0], own[0], 0, noknn};
    S[HEDGE_SRC_RATIO] = (selective_source){snames[1], own[1], 0,
                                            !p->ratio ? noknn
                                            : o->distance == HEDGE_MLS
                                                ? "under mls the scores can be negative: their ratio means nothing"
                                                : "one neighbour (knn_k 1): no second nearest"};
    S[HEDGE_SRC_VOTE] = (selective_source){snames[2], own[2], 0, noknn};
    /* norm: minus the L2 norm of the mean; nothing when every norm is the same to 1e-6 */
    double *norm = emalloc((size_t)nq * sizeof *norm), lo = INFINITY, hi = 0;
    float *m = match_set_means(Q, NULL);
    for (int64_t q = 0; q < nq; q++) {
        double t = 0;
        for (int d = 0; d < Q->D; d++)
            t += (double)m[(q0 + q) * Q->D + d] * m[(q0 + q) * Q->D + d];
        norm[q] = -sqrt(t);
        lo = sqrt(t) < lo ? sqrt(t) : lo, hi = sqrt(t) > hi ? sqrt(t) : hi;
    }
    free(m);
    char normwhy[120];
    snprintf(normwhy, sizeof normwhy, "every mean has the norm %.6g (to 1e-6): normalised embeddings", hi);
    if (hi - lo <= 1e-6 * hi)
        free(norm), norm = NULL;
    own[HEDGE_SRC_NORM] = norm;
    S[HEDGE_SRC_NORM] = (selective_source){snames[3], norm, 0, normwhy};
    double *var = NULL;
    if (Q->var) {
        var = emalloc((size_t)nq * sizeof *var);
        metrics_item_uncertainty(NULL, Q->var + q0 * cd, nq, cd, var);
    }
    own[HEDGE_SRC_VAR] = var, own[HEDGE_SRC_ETA] = doubles(Q->eta ? Q->eta + q0 : NULL, nq);
    S[HEDGE_SRC_VAR] = (selective_source){snames[4], var, 1, "the embeddings have no var"};
    S[HEDGE_SRC_ETA] = (selective_source){snames[5], own[HEDGE_SRC_ETA], 1, "the embeddings have no eta"};
    for (int i = 0; i < QS->nuser; i++) {
        own[HEDGE_SRC_USER + i] = doubles(QS->user[i] + q0, nq);
        S[HEDGE_SRC_USER + i] = (selective_source){QS->user_name[i], own[HEDGE_SRC_USER + i], 1, NULL};
    }
    /* the targets, and the per-query values of the means */
    double *loss[HEDGE_NTARGETS] = {0}, *mv[HEDGE_NMETRICS] = {0};
    int ids[HEDGE_NMETRICS], nm = 0;
    selective_target T[HEDGE_NTARGETS];
    const char *noret = "no retrieval answers (no query has a positive, or not asked for)";
    if (p->per) {
        for (int t = 0; t < HEDGE_NTARGETS; t++)
            if (t != HEDGE_TGT_KNN)
                loss[t] = emalloc((size_t)nq * sizeof *loss[t]);
        int rid[] = {HEDGE_P1, HEDGE_RPREC, HEDGE_MAP_R, HEDGE_MAP, HEDGE_MRR};
        for (int i = 0; i < 5; i++)
            ids[nm] = rid[i], mv[nm++] = emalloc((size_t)nq * sizeof(double));
        for (int i = 0; i < nk; i++)
            ids[nm] = HEDGE_RECALL + kidx[i], mv[nm++] = emalloc((size_t)nq * sizeof(double));
        for (int64_t q = 0; q < nq; q++) {
            const retrieval_query *x = &p->per[q];
            double ap = p->apk ? p->apk[q] : x->ap, rr = p->rrk ? p->rrk[q] : 1.0 / x->r1;
            int has = x->npos > 0;
            loss[HEDGE_TGT_R1][q] = has ? 1 - x->p1 : NAN;
            loss[HEDGE_TGT_AP][q] = has ? 1 - ap : NAN;
            loss[HEDGE_TGT_MAP_R][q] = has ? 1 - x->map_r : NAN;
            double v[] = {x->p1, x->rprec, x->map_r, ap, rr};
            for (int i = 0; i < 5; i++)
                mv[i][q] = has ? v[i] : NAN;
            for (int i = 0; i < nk; i++)
                mv[5 + i][q] = has ? x->recall[i] : NAN;
        }
    }
    if (p->pred) {
        loss[HEDGE_TGT_KNN] = emalloc((size_t)nq * sizeof *loss[HEDGE_TGT_KNN]);
        ids[nm] = HEDGE_KNN, mv[nm] = emalloc((size_t)nq * sizeof(double));
        for (int64_t q = 0; q < nq; q++)
            loss[HEDGE_TGT_KNN][q] = p->pred[q] != Q->cls[q0 + q], mv[nm][q] = p->pred[q] == Q->cls[q0 + q];
        nm++;
    }
    for (int t = 0; t < HEDGE_NTARGETS; t++)
        T[t] = (selective_target){tnames[t], loss[t], t == HEDGE_TGT_R1 || t == HEDGE_TGT_KNN,
                                  t == HEDGE_TGT_KNN ? noknn : noret};
    /* the class averages: the retrieval means again, by class */
    selective_mean M[SELECTIVE_MAXMEANS];
    int nmeans = nm, avg[] = {HEDGE_P1_AVG, HEDGE_RPREC_AVG, HEDGE_MAP_R_AVG, HEDGE_MAP_AVG, HEDGE_MRR_AVG};
    for (int j = 0; j < nm; j++)
        M[j] = (selective_mean){mv[j], NULL};
    if (p->per && o->avg_of_avgs)
        for (int i = 0; i < 5; i++)
            ids[nmeans] = avg[i], M[nmeans++] = (selective_mean){mv[i], Q->cls + q0};
    uint64_t *tie = emalloc((size_t)nq * sizeof *tie);
    for (int64_t q = 0; q < nq; q++) {
        double id = (double)Q->id[q0 + q];
        tie[q] = metrics_tie_key(o->seed, &id, 1);
    }
    selective_result *R = emalloc(sizeof *R);
    selective_run(S, ns, T, HEDGE_NTARGETS, M, nmeans, nq, tie, o->bootstrap, o->seed, o->threads, R);
    r->nsources = ns, r->replicates = o->bootstrap;
    snprintf(r->ci_why, sizeof r->ci_why, "%s", R->ci_why);
    for (int s = 0; s < ns; s++) {
        snprintf(r->source[s], sizeof r->source[s], "%s", S[s].name);
        r->learned[s] = S[s].learned;
    }
    memcpy(r->unc, R->value, sizeof r->unc);
    memcpy(r->unc_ci, R->ci, sizeof r->unc_ci);
    memcpy(r->unc_why, R->why, sizeof r->unc_why);
    memcpy(r->best, R->best, sizeof r->best);
    memcpy(r->diff, R->diff, sizeof r->diff);
    memcpy(r->diff_ci, R->diff_ci, sizeof r->diff_ci);
    _Static_assert(HEDGE_CURVE == SELECTIVE_CURVE && HEDGE_TAUBINS == SELECTIVE_BINS, "the pictures' sizes");
    for (int s = 0; s < ns; s++)
        for (int t = 0; t < HEDGE_NTARGETS; t++) {
            memcpy(r->curve[s][t], R->curve[s][t], sizeof r->curve[s][t]);
            memcpy(r->tau_bins[s][t], R->bins[s][t], sizeof r->tau_bins[s][t]);
        }
    for (int t = 0; t < HEDGE_NTARGETS; t++)
        memcpy(r->oracle_curve[t], R->oracle[t], sizeof r->oracle_curve[t]);
    for (int j = 0; j < nmeans; j++)
        r->ci[ids[j]][0] = R->mean_ci[j][0], r->ci[ids[j]][1] = R->mean_ci[j][1];
    /* selective retrieval with a guarantee, each source on R@1's error */
    for (int s = 0; s < ns; s++) {
        struct hedge_risk *k = &r->riskctl[s];
        if (!S[s].u || !loss[HEDGE_TGT_R1]) {
            memset(k, 0, sizeof *k);
            k->threshold = k->coverage = k->risk = NAN;
            for (int i = 0; i < 3; i++)
                k->risk_at[i] = NAN;
            snprintf(k->why, sizeof k->why, "%s", !S[s].u ? S[s].why : noret);
            continue;
        }
        riskctl_result rc;
        riskctl_run(S[s].u, loss[HEDGE_TGT_R1], nq, o->seed, o->risk, o->risk_delta, &rc);
        *k = (struct hedge_risk){rc.found, rc.ncal, rc.ntest, rc.threshold, rc.coverage, rc.risk,
                                 {rc.risk_at[0], rc.risk_at[1], rc.risk_at[2]}, ""};
        snprintf(k->why, sizeof k->why, "%s", rc.why);
    }
    /* the battery's own tau .. eaurc are the uncertainty's (eta, else var) on kNN's answers */
    int src = Q->eta ? HEDGE_SRC_ETA : HEDGE_SRC_VAR;
    const int top[][2] = {{HEDGE_TAU, SELECTIVE_TAU}, {HEDGE_AUROC, SELECTIVE_AUROC}, {HEDGE_AURC, SELECTIVE_AURC},
                          {HEDGE_EAURC, SELECTIVE_EAURC}};
    for (int i = 0; i < 4; i++)
        if (!isnan(r->value[top[i][0]]))
            memcpy(r->ci[top[i][0]], r->unc_ci[src][HEDGE_TGT_KNN][top[i][1]], sizeof r->ci[0]);
    free(R), free(tie);
    for (int j = 0; j < nm; j++)
        free(mv[j]);
    for (int t = 0; t < HEDGE_NTARGETS; t++)
        free(loss[t]);
    for (int s = 0; s < HEDGE_NSOURCES; s++)
        free(own[s]);
}

/* the per-class table: kNN accuracy and the retrieval metrics averaged within each query class */
static void per_class(const match_set *Q, const evalpart *p, const int *kidx, int nk, hedge_result *r)
{
    int64_t q0 = p->q0, nq = p->nq;
    const retrieval_query *per = p->per;
    int32_t *c = emalloc((size_t)(nq ? nq : 1) * sizeof *c);
    memcpy(c, Q->cls + q0, (size_t)nq * sizeof *c);
    qsort(c, (size_t)nq, sizeof *c, util_cmp_i32);
    int64_t m = 0;
    for (int64_t i = 0; i < nq; i++)
        if (!i || c[i] != c[i - 1])
            c[m++] = c[i];
    r->nclasses = m, r->classes = c;
    int M = HEDGE_NMETRICS;
    r->per_class = emalloc((size_t)(m ? m : 1) * M * sizeof *r->per_class);
    double *cnt = ecalloc((size_t)(m ? m : 1) * 2, sizeof *cnt);
    for (int64_t i = 0; i < m * M; i++)
        r->per_class[i] = 0;
    for (int64_t q = 0; q < nq; q++) {
        int64_t k = util_lower_bound_i32(c, m, Q->cls[q0 + q]);
        double *v = r->per_class + k * M;
        if (p->pred) {
            v[HEDGE_KNN] += p->pred[q] == Q->cls[q0 + q];
            cnt[2 * k]++;
        }
        if (per && per[q].npos) {
            v[HEDGE_P1] += per[q].p1, v[HEDGE_RPREC] += per[q].rprec, v[HEDGE_MAP_R] += per[q].map_r;
            v[HEDGE_MAP] += p->apk ? p->apk[q] : per[q].ap, v[HEDGE_MRR] += p->rrk ? p->rrk[q] : 1.0 / per[q].r1;
            for (int i = 0; i < nk; i++)
                v[HEDGE_RECALL + kidx[i]] += per[q].recall[i];
            cnt[2 * k + 1]++;
        }
    }
    for (int64_t k = 0; k < m; k++)
        for (int i = 0; i < M; i++) {
            int ret = i == HEDGE_P1 || i == HEDGE_RPREC || i == HEDGE_MAP_R || i == HEDGE_MAP || i == HEDGE_MRR;
            for (int j = 0; j < nk; j++)
                ret |= i == HEDGE_RECALL + kidx[j];
            double d = i == HEDGE_KNN ? cnt[2 * k] : ret ? cnt[2 * k + 1] : 0;
            r->per_class[k * M + i] = d > 0 ? r->per_class[k * M + i] / d : NAN;
        }
    free(cnt);
}

/* the pass's consumers besides the ranking (retrieval_run_rows): the kNN search, and mAP and MRR
 * truncated at K (pytorch-metric-learning's convention with a k: the precisions at the positives
 * within the K nearest, summed and divided by R, the positives in the gallery, as its
 * mean_average_precision divides by count_per_query; RR 1 / r_1 when r_1 <= K, else 0) */
typedef struct {
    knnpass P;
    int searched, at_k;
    double *apk, *rrk;   /* (nq) NaN for a query without a positive */
} pass_ctx;

static void row_hook(void *ctx, int64_t q, const float *row, float qn, const float *gn, float gnmax,
                     const uint32_t *gidx, int64_t ng)
{
    pass_ctx *c = ctx;
    if (c->searched)
        knnpass_row(&c->P, q, row, qn, gn, gnmax, gidx, ng);
}

static void rank_hook(void *ctx, int64_t q, const int64_t *rank, int64_t R)
{
    pass_ctx *c = ctx;
    if (!c->at_k)
        return;
    double s = 0;
    int64_t m = 0;
    while (m < R && rank[m] <= c->at_k)
        s += (double)(m + 1) / (double)rank[m], m++;
    c->apk[q] = R ? s / (double)R : NAN;
    c->rrk[q] = R ? (m ? 1.0 / (double)rank[0] : 0.0) : NAN;
}

/* the mean of v over the queries where it is defined, and the mean over the classes (ascending)
 * of the means within each class */
static void means(const double *v, const int32_t *cls, int64_t nq, double *mean, double *cavg)
{
    double s = 0;
    int64_t n = 0;
    int64_t *idx = emalloc((size_t)(nq ? nq : 1) * sizeof *idx);
    for (int64_t q = 0; q < nq; q++)
        if (!isnan(v[q]))
            s += v[q], idx[n++] = q;
    *mean = n ? s / (double)n : NAN;
    /* the defined queries by class, stable: insertion into class order by a counting pass */
    double *key = emalloc((size_t)(n ? n : 1) * sizeof *key);
    int64_t *ord = emalloc((size_t)(n ? n : 1) * sizeof *ord);
    for (int64_t i = 0; i < n; i++)
        key[i] = cls[idx[i]];
    metrics_argsort(key, n, ord);
    double cs = 0, ws = 0;
    int64_t nc = 0, cn = 0;
    for (int64_t i = 0; i < n; i++) {
        ws += v[idx[ord[i]]], cn++;
        if (i + 1 == n || key[ord[i + 1]] != key[ord[i]])
            cs += ws / (double)cn, nc++, ws = 0, cn = 0;
    }
    *cavg = nc ? cs / (double)nc : NAN;
    free(key), free(ord), free(idx);
}

static int check_options(const hedge_options *o, const hedge_set *Q, const hedge_set *G, char *err, size_t len)
{
    if (o->abi != HEDGE_ABI)
        return fail(err, len, "options: abi %d, expected %d (hedge_options_init)", o->abi, HEDGE_ABI);
    if (o->distance < HEDGE_EUCLIDEAN || o->distance > HEDGE_BHATT)
        return fail(err, len, "options: distance %d, expected 0 (euclidean), 1 (cosine), 2 (mls), 3 (w2), 4 (csd), "
                    "5 (kl) or 6 (bhattacharyya)", o->distance);
    if (o->knn_k < 1 || o->knn_k > KNN_MAXK)
        return fail(err, len, "options: knn_k %d, expected 1 to %d", o->knn_k, KNN_MAXK);
    if (o->nk < 1 || o->nk > 16)
        return fail(err, len, "options: nk %d, expected 1 to 16 values of k", o->nk);
    for (int i = 0; i < o->nk; i++)
        if (o->ks[i] < 1 || (i && o->ks[i] <= o->ks[i - 1]))
            return fail(err, len, "options: ks[%d] = %d: the k must be 1 or more and increase, as in 1,2,4,8", i,
                        o->ks[i]);
    if (o->pairs < 1 || o->pairs > 1000000000)
        return fail(err, len, "options: pairs %lld, expected 1 to 1e9", (long long)o->pairs);
    if (o->has_match && (!(o->match_a > 0) || !isfinite(o->match_a) || !isfinite(o->match_b)))
        return fail(err, len, "options: match_a = %g, match_b = %g: need a finite a > 0 and a finite b", o->match_a,
                    o->match_b);
    if (!(o->risk > 0 && o->risk < 1) || !(o->risk_delta > 0 && o->risk_delta < 1))
        return fail(err, len, "options: risk %g, risk_delta %g, expected each in (0, 1)", o->risk, o->risk_delta);
    if (o->bootstrap < 0 || o->bootstrap > 1000000)
        return fail(err, len, "options: bootstrap %d, expected 0 (no intervals) to 1e6 replicates", o->bootstrap);
    if (o->threads < 1 || o->threads > 64)
        return fail(err, len, "options: threads %d, expected 1 to 64", o->threads);
    if (o->at_k < 0)
        return fail(err, len, "options: at_k %d, expected 0 (the whole ranking) or K > 0", o->at_k);
    if (o->exclude_id && !G)
        return fail(err, len, "options: exclude_id needs a gallery (leave-one-out already excludes the item itself)");
    int64_t q1 = o->q1 ? o->q1 : Q->n;
    if (o->q0 < 0 || q1 <= o->q0 || q1 > Q->n)
        return fail(err, len, "options: queries %lld to %lld, expected a range within 0 to %lld", (long long)o->q0,
                    (long long)q1, (long long)Q->n);
    if (G && G->D != Q->D)
        return fail(err, len, "gallery: %d dimensions, expected %d (the queries')", G->D, Q->D);
    return 0;
}


/* what both halves work from: the sets as the parts take them, the item each query never sees,
 * what the whole sets allow (never a range's: every shard of a run decides the same) */
typedef struct {
    match_set Q, Gs, *G;
    const hedge_set *QS;   /* the queries as given (their user sources) */
    int64_t *qown, *gown;
    int64_t *exclude;      /* (Q.n) every query's excluded gallery item (-1: none), or NULL */
    limits L;
    int k;                 /* kNN's k: knn_k, or the neighbours every query has when fewer */
    int sks[16], kidx[16], nsk; /* the Recall@k that fit: sks[i] = ks[kidx[i]] */
    int want_knn, want_ret;
    float *aug[4];         /* distance w2: the queries' and the gallery's (mu, sqrt var) and (var, var) */
} prep;

static void prep_free(prep *P)
{
    free(P->exclude), free(P->qown), free(P->gown);
    for (int i = 0; i < 4; i++)
        free(P->aug[i]);
}

/* distance w2: S as the vectors (mu, sqrt var) of 2D dimensions, whose Euclidean distance is the
 * 2-Wasserstein distance of the Gaussians, and the variances (var, var), whose mean is var's;
 * the arrays into mu2, var2 (owned by the caller) */
static void w2_vectors(match_set *S, float **mu2, float **var2)
{
    int D = S->D;
    *mu2 = emalloc((size_t)S->n * 2 * D * sizeof **mu2);
    *var2 = emalloc((size_t)S->n * 2 * D * sizeof **var2);
    match_w2_vectors(S->mu, S->var, S->n, D, *mu2, *var2);
    S->mu = *mu2, S->var = *var2, S->D = 2 * D;
}

static int prepare(const hedge_set *queries, const hedge_set *gallery, const hedge_options *o, prep *P, char *err,
                   size_t len)
{
    memset(P, 0, sizeof *P);
    blas_choose(); /* the programs' kernel, so that the bytes are theirs (lib/numerics/blas.h) */
    if (!queries || !o)
        return fail(err, len, "%s is NULL", !queries ? "queries" : "options");
    if (check_set(queries, "queries", o->distance, err, len) ||
        (gallery && check_set(gallery, "gallery", o->distance, err, len)) ||
        check_options(o, queries, gallery, err, len))
        return -1;
    if ((o->distance == HEDGE_MLS || o->distance == HEDGE_BHATT) &&
        mls_check(queries, gallery ? gallery : queries, o->distance, err, len))
        return -1;
    P->Q = view(queries, &P->qown), P->G = &P->Q, P->QS = queries;
    if (gallery)
        P->Gs = view(gallery, &P->gown), P->G = &P->Gs;
    if (o->distance == HEDGE_W2) {
        w2_vectors(&P->Q, &P->aug[0], &P->aug[1]);
        if (gallery)
            w2_vectors(&P->Gs, &P->aug[2], &P->aug[3]);
    }
    if (!gallery || o->exclude_id) {
        int dup = 0;
        int64_t dup_id = 0;
        if (gallery)
            free(match_ids_index(P->G->id, P->G->n, &dup, &dup_id));
        if (dup) {
            prep_free(P);
            return fail(err, len, "gallery: ids: %lld appears twice, expected unique ids for exclude_id",
                        (long long)dup_id);
        }
        P->exclude = gallery_exclude(!gallery, o->exclude_id, P->G->id, P->G->n, P->Q.id, 0, P->Q.n, "gallery");
    }
    P->L = count_limits(&P->Q, P->G, P->exclude);
    P->k = (int)(P->L.nbrs < o->knn_k ? P->L.nbrs : o->knn_k);
    P->want_knn = wanted(o, HEDGE_KNN) || wanted(o, HEDGE_TAU) || wanted(o, HEDGE_AUROC) ||
                  wanted(o, HEDGE_AURC) || wanted(o, HEDGE_EAURC);
    for (int i = 0; i < o->nk; i++)
        if (o->ks[i] <= P->L.nbrs)
            P->kidx[P->nsk] = i, P->sks[P->nsk++] = o->ks[i];
    for (int i = HEDGE_P1; i <= HEDGE_MRR_AVG; i++)
        P->want_ret |= wanted(o, i);
    for (int i = 0; i < o->nk; i++)
        P->want_ret |= wanted(o, HEDGE_RECALL + i);
    return 0;
}

/* one call of the interface: its arguments, and what it returns */
typedef struct {
    const hedge_set *Q, *G;
    const hedge_options *o;
    int64_t q0, q1;
    int knn_k;
    evalpart *part;        /* hedge_queries' output */
    const evalpart *given; /* hedge_finish's input */
    hedge_result *r;
    void **bytes;                   /* hedge_shard's output */
    size_t *nbytes;
    const void *const *shards;      /* hedge_merge's input */
    const size_t *sizes;
    int nshards;
    int64_t *range;                 /* hedge_shard_range's output */
    char *err;
    size_t len;
    int rc;
} call;

/* body(c) as a library call (lib/base/guard.h): what would end the process (die, a failed allocation)
 * or the options' stop flag returns here with its message in err, every block the call made
 * freed and OpenBLAS's threads as they were: HEDGE_ENOMEM, HEDGE_ESTOPPED, or HEDGE_EINVAL for a
 * die (an internal check); else body's c->rc */
static int guarded(void (*body)(call *), call *c)
{
    blas_choose(); /* once a process, before any guard (pthread_once must not be left by longjmp) */
    int threads = blas_threads();
    guard g;
    guard_push(&g, c->o ? c->o->stop : NULL);
    if (setjmp(g.jb)) {
        if (blas_threads() != threads)
            blas_set_threads(threads);
        fail(c->err, c->len, "%s", g.msg);
        return g.kind == GUARD_NOMEM ? HEDGE_ENOMEM : g.kind == GUARD_STOP ? HEDGE_ESTOPPED : HEDGE_EINVAL;
    }
    body(c);
    guard_pop(&g);
    return c->rc;
}

static void neighbours_body(call *c)
{
    prep P;
    if (prepare(c->Q, c->G, c->o, &P, c->err, c->len)) {
        c->rc = -1;
        return;
    }
    prep_free(&P);
    c->rc = P.k;
}

int hedge_neighbours(const hedge_set *Q, const hedge_set *G, const hedge_options *o, char *err, size_t len)
{
    call c = {.Q = Q, .G = G, .o = o, .err = err, .len = len};
    return guarded(neighbours_body, &c);
}

/* the free baselines of each query from its k nearest (E, nearest first): the nearest distance
 * (euclidean: sqrt d2; cosine: 1 - cos = d2 / 2 of the unit means; mls: -MLS), the ratio of the
 * two nearest distances (1 when both are 0; NaN under mls, whose scores can be negative, and with
 * one neighbour), the entropy of the neighbours' classes (natural log) */
static void baselines(const knn_eval *E, const match_set *G, int distance, evalpart *p)
{
    int64_t nq = E->nq;
    int k = E->k;
    p->top1 = emalloc((size_t)nq * sizeof *p->top1);
    p->ratio = emalloc((size_t)nq * sizeof *p->ratio);
    p->vote = emalloc((size_t)nq * sizeof *p->vote);
    int32_t cls[KNN_MAXK];
    for (int64_t q = 0; q < nq; q++) {
        const double *d = E->d2 + q * k;
        const int64_t *nb = E->nbr + q * k;
        double d0 = d[0] > 0 ? d[0] : 0, d1 = k > 1 && d[1] > 0 ? d[1] : 0;
        int ker = kernel_distance(distance); /* d: the distance itself, not its square */
        p->top1[q] = (float)(ker ? d[0] : distance == HEDGE_COSINE ? d0 / 2 : sqrt(d0));
        p->ratio[q] = distance == HEDGE_MLS || k < 2 ? NAN
                      : d1 > 0                       ? (float)(ker ? d0 / d1 : sqrt(d0 / d1))
                                                     : 1.0f;
        for (int j = 0; j < k; j++)
            cls[j] = G->cls[nb[j]];
        qsort(cls, (size_t)k, sizeof *cls, util_cmp_i32);
        double h = 0;
        for (int a = 0, b; a < k; a = b) {
            for (b = a + 1; b < k && cls[b] == cls[a]; b++)
                ;
            double f = (double)(b - a) / k;
            h -= f * log(f);
        }
        p->vote[q] = (float)(h > 0 ? h : 0);
    }
}

/* the queries half over P (prepare's), gallery: a gallery was given */
static int queries_half(prep *P, const hedge_options *o, int gallery, int64_t q0, int64_t q1, int knn_k, evalpart *p,
                        char *err, size_t errlen)
{
    memset(p, 0, sizeof *p);
    if (knn_k < 0 || knn_k > P->k)
        return fail(err, errlen, "knn_k %d, expected 0 to %d (the neighbours every query has)", knn_k, P->k);
    if (q0 < 0 || q1 < q0 || q1 > P->Q.n)
        return fail(err, errlen, "queries %lld to %lld, expected a range within 0 to %lld", (long long)q0,
                    (long long)q1, (long long)P->Q.n);
    match_set *Q = &P->Q, *G = P->G;
    int64_t nq = q1 - q0, ng = G->n;
    const int64_t *exclude = P->exclude ? P->exclude + q0 : NULL;
    int k = knn_k, want_knn = P->want_knn && k >= 1, ret = P->L.pos && P->want_ret;
    p->q0 = q0, p->nq = nq, p->knn_k = knn_k;
    p->has = (want_knn ? EVALPART_PRED | EVALPART_BASE : 0) | (want_knn && (Q->eta || Q->var) ? EVALPART_ETA : 0) |
             (ret ? EVALPART_PER : 0) | (ret && o->at_k ? EVALPART_ATK : 0);
    if (!nq)
        return 0;
    float *qm = NULL, *gm = NULL;
    int rc = 0, blas_saved = blas_threads(); /* the caller's BLAS threads, restored at the end */
    if (o->distance == HEDGE_COSINE &&
        (!(qm = ranked_means(Q, o->distance, "queries", err, errlen)) ||
         (gallery && !(gm = ranked_means(G, o->distance, "gallery", err, errlen))))) {
        rc = -1;
        goto done;
    }
    if (blas_threads() != o->threads)
        blas_set_threads(o->threads);
    knn_eval E = {.k = k, .distance = o->distance, .gallery = gallery ? "gallery" : NULL, .q0 = q0, .nq = nq};
    if (ret) {
        /* one pass: the kNN search from retrieval's rows (lib/evaluation/knnpass.h), but for MLS */
        if (want_knn && !kernel_distance(o->distance)) {
            E.nbr = emalloc((size_t)nq * k * sizeof *E.nbr);
            E.d2 = emalloc((size_t)nq * k * sizeof *E.d2);
            E.searched = 1;
        }
        if (!qm)
            qm = match_set_means(Q, NULL);
        if (gallery && !gm)
            gm = match_set_means(G, NULL);
        int mls = kernel_distance(o->distance), nsk = P->nsk ? P->nsk : 1;
        int sk1 = 1; /* no k fits: retrieve needs one, its Recall@1 then not reported */
        retrieval_job J = {qm + q0 * Q->D, Q->cls + q0, nq, gallery ? gm : qm, G->cls, ng, Q->D, exclude, NULL, 1,
                           P->nsk ? P->sks : &sk1, nsk, o->threads, NULL, qm, Q->n, mls ? Q->var + q0 * Q->D : NULL,
                           mls ? G->var : NULL, mls ? match_distance_kernel(o->distance) : 0};
        pass_ctx pc = {{qm + q0 * Q->D, gallery ? gm : qm, Q->D, k, exclude, E.nbr, E.d2, 0}, E.searched, o->at_k,
                       NULL, NULL};
        if (o->at_k) {
            pc.apk = p->apk = emalloc((size_t)nq * sizeof *pc.apk);
            pc.rrk = p->rrk = emalloc((size_t)nq * sizeof *pc.rrk);
        }
        retrieval_hooks H = {row_hook, rank_hook, &pc};
        p->per = emalloc((size_t)nq * sizeof *p->per);
        retrieval_summary sum;
        retrieval_run_rows(&J, p->per, &sum, &H);
    }
    if (want_knn) {
        knn_eval_run(&E, Q, "queries", G, gallery ? "gallery" : NULL, exclude, o->threads);
        baselines(&E, G, o->distance, p);
        p->pred = E.pred, p->eta = E.qeta; /* the part's now */
        E.pred = NULL, E.qeta = NULL;
        knn_eval_free(&E);
    }
done:
    if (blas_threads() != blas_saved)
        blas_set_threads(blas_saved);
    free(qm);
    free(gm);
    if (rc)
        evalpart_free(p);
    return rc;
}

static void queries_body(call *c)
{
    prep P;
    c->rc = -1;
    if (prepare(c->Q, c->G, c->o, &P, c->err, c->len))
        return;
    c->rc = queries_half(&P, c->o, c->G != NULL, c->q0, c->q1, c->knn_k, c->part, c->err, c->len);
    prep_free(&P);
}

int hedge_queries(const hedge_set *queries, const hedge_set *gallery, const hedge_options *o, int64_t q0, int64_t q1,
                  int knn_k, evalpart *p, char *err, size_t errlen)
{
    memset(p, 0, sizeof *p);
    call c = {.Q = queries, .G = gallery, .o = o, .q0 = q0, .q1 = q1, .knn_k = knn_k, .part = p, .err = err,
              .len = errlen};
    int rc = guarded(queries_body, &c);
    if (rc < 0)
        memset(p, 0, sizeof *p); /* what it held went with the call (or was freed) */
    return rc;
}

/* every value NaN, nothing allocated */
static void result_init(hedge_result *r)
{
    memset(r, 0, sizeof *r);
    r->nmetrics = HEDGE_NMETRICS;
    for (int i = 0; i < 64; i++)
        r->value[i] = r->ci[i][0] = r->ci[i][1] = NAN;
    double *u = &r->unc[0][0][0], *uc = &r->unc_ci[0][0][0][0], *d = &r->diff[0][0][0], *dc = &r->diff_ci[0][0][0][0];
    for (int i = 0; i < HEDGE_NSOURCES * HEDGE_NTARGETS * HEDGE_NMEASURES; i++)
        u[i] = d[i] = uc[2 * i] = uc[2 * i + 1] = dc[2 * i] = dc[2 * i + 1] = NAN;
    for (int t = 0; t < HEDGE_NTARGETS; t++)
        for (int m = 0; m < HEDGE_NMEASURES; m++)
            r->best[t][m] = -1;
    static const double fars[HEDGE_NFAR] = {1e-1, 1e-2, 1e-3, 1e-4};
    struct hedge_verify *v = &r->verify;
    v->roc_auc = NAN;
    for (int f = 0; f < HEDGE_NFAR; f++) {
        v->far[f] = fars[f];
        v->tar[f] = v->far_reached[f] = v->fnmr[f] = v->dir[f] = NAN;
    }
    for (int f = 0; f < HEDGE_ROC; f++)
        v->roc_far[f] = pow(10, -4 + f / 8.0), v->roc_tar[f] = NAN;
    double *c = &r->curve[0][0][0], *tb = &r->tau_bins[0][0][0];
    for (int i = 0; i < HEDGE_NSOURCES * HEDGE_NTARGETS * HEDGE_CURVE; i++)
        c[i] = NAN;
    for (int i = 0; i < HEDGE_NSOURCES * HEDGE_NTARGETS * HEDGE_TAUBINS; i++)
        tb[i] = NAN;
    for (int t = 0; t < HEDGE_NTARGETS; t++)
        for (int i = 0; i < HEDGE_CURVE; i++)
            r->oracle_curve[t][i] = NAN;
    for (int b = 0; b < HEDGE_ECEBINS; b++)
        r->ece_p[b] = r->ece_y[b] = NAN;
}

/* the queries' answers p against what these sets allow, value by value (a shard read from a file
 * or from Python's pickle may be damaged or of other data; nothing below may loop on or index by
 * a value it did not check): kNN's vote a class of the gallery; a query's R (npos) its class's
 * count in the gallery less the excluded item; with R = 0 every metric NaN and every flag 0,
 * else r_1 a rank within the neighbours, P@1 and Recall@k the flags r_1 gives, AP, R-precision
 * and MAP@R in [0, 1]; at K, AP in [0, 1] and RR exactly 1 / r_1 or 0; the uncertainty the very
 * float the set gives (eta, else the mean of var). 0, or -1 and err naming the query and value. */
static int check_answers(const prep *P, const hedge_options *o, const evalpart *p, char *err, size_t len)
{
    const match_set *Q = &P->Q, *G = P->G;
    int64_t q0 = p->q0, nq = p->nq, ng = G->n;
    int nsk = P->nsk ? P->nsk : 1, sk1 = 1;
    const int *sks = P->nsk ? P->sks : &sk1;
    int32_t *gs = emalloc((size_t)ng * sizeof *gs);
    memcpy(gs, G->cls, (size_t)ng * sizeof *gs);
    qsort(gs, (size_t)ng, sizeof *gs, util_cmp_i32);
    double *u = p->eta ? emalloc((size_t)nq * sizeof *u) : NULL;
    if (u && !metrics_item_uncertainty(Q->eta ? Q->eta + q0 : NULL, Q->var ? Q->var + q0 * Q->C * Q->D : NULL, nq,
                                       (int64_t)Q->C * Q->D, u))
        free(u), u = NULL; /* answers with an uncertainty the set does not have: below */
    char bad[200] = "";
    int64_t q = 0;
    for (; q < nq && !*bad; q++) {
        int64_t i = q0 + q;
        int32_t c = Q->cls[i];
        if (p->pred) {
            int64_t at = util_lower_bound_i32(gs, ng, p->pred[q]);
            if (at == ng || gs[at] != p->pred[q])
                snprintf(bad, sizeof bad, "kNN's vote %d, a class the gallery does not hold", (int)p->pred[q]);
        }
        if (p->eta && !*bad && (!u || memcmp(&p->eta[q], &(float){(float)u[q]}, sizeof(float))))
            snprintf(bad, sizeof bad, "uncertainty %.9g, where the set gives %.9g", (double)p->eta[q],
                     u ? (double)(float)u[q] : NAN);
        if (p->top1 && !*bad) {
            int mls = o->distance == HEDGE_MLS;
            double t = p->top1[q], ra = p->ratio[q], v = p->vote[q];
            if (!isfinite(t) || (!mls && t < 0) || (mls || p->knn_k < 2 ? !isnan(ra) : !(ra >= 0 && ra <= 1)) ||
                !(v >= 0 && v <= log((double)p->knn_k) + 1e-6))
                snprintf(bad, sizeof bad, "baselines top1_dist %g, ratio %g, vote_entropy %g, expected a distance, a "
                         "ratio in [0, 1] (NaN under mls or with one neighbour) and an entropy in [0, log k]", t, ra, v);
        }
        if (!p->per || *bad)
            continue;
        const retrieval_query *x = &p->per[q];
        int64_t R = (c == INT32_MAX ? ng : util_lower_bound_i32(gs, ng, c + 1)) - util_lower_bound_i32(gs, ng, c);
        int64_t seen = ng; /* the items it is ranked against */
        if (P->exclude && P->exclude[i] >= 0)
            R -= G->cls[P->exclude[i]] == c, seen--;
        int flags = x->p1 > 1;
        for (int k = 0; k < RETRIEVAL_MAXK; k++)
            flags |= x->recall[k] != (R && k < nsk && x->r1 <= sks[k]);
        if (x->npos != R)
            snprintf(bad, sizeof bad, "npos %d, but the gallery holds %lld positives for it", (int)x->npos, (long long)R);
        else if (!R && (!isnan(x->ap) || !isnan(x->rprec) || !isnan(x->map_r) || x->p1 || x->r1))
            snprintf(bad, sizeof bad, "ap %g, rprec %g, map_r %g, p1 %d, r1 %d without a positive, expected NaN and 0",
                     (double)x->ap, (double)x->rprec, (double)x->map_r, x->p1, (int)x->r1);
        else if (R && !(x->ap >= 0 && x->ap <= 1 && x->rprec >= 0 && x->rprec <= 1 && x->map_r >= 0 && x->map_r <= 1))
            snprintf(bad, sizeof bad, "ap %g, rprec %g, map_r %g, expected values in [0, 1]", (double)x->ap,
                     (double)x->rprec, (double)x->map_r);
        else if (R && (x->r1 < 1 || x->r1 > seen))
            snprintf(bad, sizeof bad, "r1 %d, expected a rank from 1 to %lld", (int)x->r1, (long long)seen);
        else if (flags || x->p1 != (R && x->r1 == 1))
            snprintf(bad, sizeof bad, "p1 %d and Recall@k flags that its first positive's rank (%d) does not give",
                     x->p1, (int)x->r1);
        else if (p->apk && (R ? !(p->apk[q] >= 0 && p->apk[q] <= 1) ||
                                    p->rrk[q] != (x->r1 <= o->at_k ? 1.0 / (double)x->r1 : 0.0)
                              : !isnan(p->apk[q]) || !isnan(p->rrk[q])))
            snprintf(bad, sizeof bad, "AP %g and RR %g at K = %d, expected %s", p->apk[q], p->rrk[q], o->at_k,
                     R ? "AP in [0, 1] and RR 1 / r_1 or 0" : "NaN without a positive");
    }
    free(u);
    free(gs);
    if (*bad)
        return fail(err, len, "the queries' answers: query %lld: %s (damaged, or the answers of other data)",
                    (long long)(q0 + q - 1), bad);
    return 0;
}

/* the finish half over P (prepare's) into r (result_init's) */
static int finish_half(prep *P, const hedge_options *o, int gallery, const evalpart *p, hedge_result *r, char *err,
                       size_t errlen)
{
    match_set *Q = &P->Q;
    int64_t q0 = p->q0, nq = p->nq;
    int ret = P->L.pos && P->want_ret, knn = P->want_knn && P->k >= 1;
    const char *bad = q0 < 0 || nq < 1 || q0 + nq > Q->n ? "a range of queries beyond the set's"
                      : p->knn_k < 0 || p->knn_k > P->k  ? "another kNN k than the set allows"
                      : !p->per != !ret                  ? (ret ? "no retrieval answers" : "retrieval answers")
                      : !p->apk != !(ret && o->at_k)     ? "answers of another at_k"
                      : !p->pred != !(knn && p->knn_k)   ? (p->pred ? "kNN answers" : "no kNN answers")
                      : !p->eta != !(p->pred && (Q->eta || Q->var)) ? (p->eta ? "an uncertainty" : "no uncertainty")
                      : !p->top1 != !p->pred || !p->ratio != !p->top1 || !p->vote != !p->top1
                                                         ? (p->top1 ? "baselines without kNN" : "kNN without baselines")
                                                         : NULL;
    if (bad)
        return fail(err, errlen, "the queries' answers (%lld to %lld, k %d) have %s, expected those of these sets and "
                                 "options", (long long)q0, (long long)(q0 + nq), p->knn_k, bad);
    if (check_answers(P, o, p, err, errlen))
        return -1;
    if (p->knn_k >= 1)
        r->value[HEDGE_KNN_K] = p->knn_k;
    /* where the neighbours are (the notes' words): why[HEDGE_KNN_K] */
    int64_t wn = P->G->n;
    if (!gallery)
        why(r, HEDGE_KNN_K, "%lld item%s, leave-one-out", (long long)wn, wn == 1 ? "" : "s");
    else
        why(r, HEDGE_KNN_K, "a gallery of %lld item%s%s", (long long)wn, wn == 1 ? "" : "s",
            P->L.own ? ", less the query's own id" : "");
    if (P->k < 1) {
        why(r, HEDGE_KNN, "no neighbour: %s", r->why[HEDGE_KNN_K]);
        for (int i = HEDGE_TAU; i <= HEDGE_EAURC; i++)
            why(r, i, "they rank knn's errors, and knn has no neighbour");
    }
    for (int i = 0; i < o->nk; i++)
        if (o->ks[i] > P->L.nbrs)
            why(r, HEDGE_RECALL + i, "more than the %lld neighbour%s a query has (%s)", (long long)P->L.nbrs,
                P->L.nbrs == 1 ? "" : "s", r->why[HEDGE_KNN_K]);
    const int rid[] = {HEDGE_P1, HEDGE_RPREC, HEDGE_MAP_R, HEDGE_MAP, HEDGE_MRR, HEDGE_P1_AVG,
                       HEDGE_RPREC_AVG, HEDGE_MAP_R_AVG, HEDGE_MAP_AVG, HEDGE_MRR_AVG, HEDGE_NO_POSITIVE};
    if (!P->L.pos) {
        for (int i = 0; i < 11; i++)
            why(r, rid[i], "no query has a positive (%s)",
                gallery ? "an item of its class in the gallery" : "another item of its class");
        for (int i = 0; i < o->nk; i++)
            why(r, HEDGE_RECALL + i, "%s", r->why[HEDGE_P1]);
    } else if (p->per) { /* the means in query order, as retrieval_run's own (the same doubles) */
        int nsk = P->nsk ? P->nsk : 1;
        retrieval_summary sum = {0}, cavg;
        for (int64_t q = 0; q < nq; q++)
            retrieval_summary_add(&sum, &p->per[q], nsk);
        retrieval_summary_finish(&sum, nsk);
        double v[] = {sum.p1, sum.rprec, sum.map_r, sum.map, sum.mrr};
        for (int i = 0; i < 5; i++)
            r->value[rid[i]] = v[i];
        for (int i = 0; i < P->nsk; i++)
            r->value[HEDGE_RECALL + P->kidx[i]] = sum.recall[i];
        r->value[HEDGE_NO_POSITIVE] = (double)sum.no_positive;
        if (o->avg_of_avgs) {
            retrieval_class_average(Q->cls + q0, p->per, nq, nsk, &cavg);
            double c[] = {cavg.p1, cavg.rprec, cavg.map_r, cavg.map, cavg.mrr};
            for (int i = 0; i < 5; i++)
                r->value[rid[5 + i]] = c[i];
        }
        if (p->apk) { /* mAP and MRR truncated at K (pass_ctx) */
            double ca, cr;
            means(p->apk, Q->cls + q0, nq, &r->value[HEDGE_MAP], &ca);
            means(p->rrk, Q->cls + q0, nq, &r->value[HEDGE_MRR], &cr);
            if (o->avg_of_avgs)
                r->value[HEDGE_MAP_AVG] = ca, r->value[HEDGE_MRR_AVG] = cr;
        }
    }
    if (p->pred) {
        double correct = 0;
        for (int64_t q = 0; q < nq; q++)
            correct += p->pred[q] == Q->cls[q0 + q];
        r->value[HEDGE_KNN] = correct / (double)nq;
        uncertainty_metrics(Q, q0, nq, p->pred, p->eta, o, r);
    }
    if (o->per_class)
        per_class(Q, p, P->kidx, P->nsk, r);
    if (o->include) /* only the metrics asked for: no section, no intervals */
        snprintf(r->ci_why, sizeof r->ci_why, "only some metrics asked for (include): no uncertainty section");
    else if (p->pred || p->per)
        uncertainty_section(Q, P->QS, p, P->kidx, P->nsk, o, r);
    else
        snprintf(r->ci_why, sizeof r->ci_why, "no kNN or retrieval answers (no neighbour): no per-query values");
    if (wanted(o, HEDGE_NMI) || wanted(o, HEDGE_AMI))
        cluster_metrics(Q, o, r);
    if (wanted(o, HEDGE_AP) || wanted(o, HEDGE_ECE))
        pair_metrics(Q, o, &P->L, r);
    if (!o->include)
        verify_open_set(p, gallery, r);
    return 0;
}

static void finish_body(call *c)
{
    prep P;
    c->rc = -1;
    if (!c->given) {
        fail(c->err, c->len, "the queries' answers are NULL");
        return;
    }
    if (prepare(c->Q, c->G, c->o, &P, c->err, c->len))
        return;
    c->rc = finish_half(&P, c->o, c->G != NULL, c->given, c->r, c->err, c->len);
    prep_free(&P);
}

static void evaluate_body(call *c)
{
    prep P;
    c->rc = -1;
    if (prepare(c->Q, c->G, c->o, &P, c->err, c->len))
        return;
    evalpart p;
    c->rc = queries_half(&P, c->o, c->G != NULL, c->o->q0, c->o->q1 ? c->o->q1 : P.Q.n, P.k, &p, c->err, c->len);
    if (!c->rc) {
        c->rc = finish_half(&P, c->o, c->G != NULL, &p, c->r, c->err, c->len);
        evalpart_free(&p);
    }
    prep_free(&P);
}

/* what a shard of one set says of its run (evalpart_read checks it), as bin/evaluate --queries
 * writes it for one set */
static void part_info(const call *c, int k, evalpart_info *I)
{
    *I = (evalpart_info){.nsets = 1, .names = {"the queries"}, .n = c->Q->n, .ng = c->G ? c->G->n : 0, .o = c->o,
                         .knn_k = k};
    I->hash[0] = evalpart_hash(c->Q);
    I->ghash = c->G ? evalpart_hash(c->G) : 0;
}

static void shard_body(call *c)
{
    prep P;
    c->rc = -1;
    if (prepare(c->Q, c->G, c->o, &P, c->err, c->len))
        return;
    evalpart p;
    if (c->q0 < 0 || c->q1 < c->q0 || c->q1 > P.Q.n)
        fail(c->err, c->len, "queries %lld:%lld: expected FROM:TO with 0 <= FROM <= TO <= %lld (the queries)",
             (long long)c->q0, (long long)c->q1, (long long)P.Q.n);
    else if (!(c->rc = queries_half(&P, c->o, c->G != NULL, c->q0, c->q1, P.k, &p, c->err, c->len))) {
        evalpart_info I;
        part_info(c, P.k, &I);
        char *buf = NULL, *argv[] = {"hedge_shard", NULL};
        size_t n = 0;
        FILE *f = open_memstream(&buf, &n);
        if (!f)
            die("cannot make the shard in memory: %s", strerror(errno));
        evalpart_write(f, &p, &I, 1, argv);
        if (fclose(f) != 0)
            die("cannot make the shard in memory: %s", strerror(errno));
        *c->bytes = buf, *c->nbytes = n;
        evalpart_free(&p);
    }
    prep_free(&P);
}

int hedge_shard(const hedge_set *queries, const hedge_set *gallery, const hedge_options *o, int64_t q0, int64_t q1,
                void **bytes, size_t *nbytes, char *err, size_t errlen)
{
    *bytes = NULL, *nbytes = 0;
    call c = {.Q = queries, .G = gallery, .o = o, .q0 = q0, .q1 = q1, .bytes = bytes, .nbytes = nbytes, .err = err,
              .len = errlen};
    int rc = guarded(shard_body, &c);
    if (rc < 0)
        *bytes = NULL, *nbytes = 0;
    return rc;
}

static void merge_body(call *c)
{
    prep P;
    c->rc = -1;
    if (prepare(c->Q, c->G, c->o, &P, c->err, c->len))
        return;
    evalpart_info I;
    part_info(c, P.k, &I);
    evalpart whole;
    evalpart_read_bytes(c->shards, c->sizes, c->nshards, &I, &whole);
    c->rc = finish_half(&P, c->o, c->G != NULL, &whole, c->r, c->err, c->len);
    evalpart_free(&whole);
    prep_free(&P);
}

static void info_body(call *c)
{
    stream_reader *r = stream_open_bytes(c->shards[0], c->sizes[0], "the shard");
    stream_expect_kind(r, "evaluate");
    const char *keys[3] = {"queries_from", "queries_to", "queries_total"};
    for (int i = 0; i < 3; i++)
        if ((c->range[i] = header_int(r->header, keys[i], -1)) < 0)
            die("the shard: no %s (an evaluate stream of --queries FROM:TO has it): not a shard", keys[i]);
    stream_close(r);
    c->rc = 0;
}

int hedge_shard_range(const void *bytes, size_t nbytes, int64_t range[3], char *err, size_t errlen)
{
    call c = {.shards = &bytes, .sizes = &nbytes, .range = range, .err = err, .len = errlen};
    return guarded(info_body, &c);
}

void hedge_free(void *p) { free(p); }

/* hedge_finish and hedge_evaluate: a result, every value NaN but what the call fills in, and on
 * failure nothing allocated in it */
static int result_call(void (*body)(call *), call *c)
{
    result_init(c->r);
    int rc = guarded(body, c);
    if (rc < 0)
        result_init(c->r); /* finish_half fails before it allocates; the way out freed the rest */
    return rc;
}

int hedge_finish(const hedge_set *queries, const hedge_set *gallery, const hedge_options *o, const evalpart *p,
                 hedge_result *r, char *err, size_t errlen)
{
    call c = {.Q = queries, .G = gallery, .o = o, .given = p, .r = r, .err = err, .len = errlen};
    return result_call(finish_body, &c);
}

int hedge_merge(const hedge_set *queries, const hedge_set *gallery, const hedge_options *o, const void *const *shards,
                const size_t *sizes, int nshards, hedge_result *r, char *err, size_t errlen)
{
    call c = {.Q = queries, .G = gallery, .o = o, .shards = shards, .sizes = sizes, .nshards = nshards, .r = r,
              .err = err, .len = errlen};
    return result_call(merge_body, &c);
}

int hedge_evaluate(const hedge_set *queries, const hedge_set *gallery, const hedge_options *o, hedge_result *r,
                   char *err, size_t errlen)
{
    call c = {.Q = queries, .G = gallery, .o = o, .r = r, .err = err, .len = errlen};
    return result_call(evaluate_body, &c);
}

void evalpart_free(evalpart *p)
{
    free(p->pred), free(p->eta), free(p->per), free(p->apk), free(p->rrk);
    free(p->top1), free(p->ratio), free(p->vote);
    memset(p, 0, sizeof *p);
}

void hedge_result_free(hedge_result *r)
{
    free(r->classes);
    free(r->per_class);
    free(r->knn_eta);
    free(r->knn_correct);
    r->classes = NULL, r->per_class = NULL, r->nclasses = 0, r->knn_eta = r->knn_correct = NULL, r->nq = 0;
}
