/* fewshot: few-shot classification by class prototypes over random test episodes (spe-scott-2019
 * section 4 and appendix A: the mean accuracy over 1000 episodes), for PN and SPE; writes kind
 * `fewshot`. The math: lib/proto.h.
 *
 * Each image enters as one diagonal Gaussian (proto_gaussian: a mixture by its moments; PN uses
 * its mean). Per episode e, from a generator seeded by (seed, e): the classes (all common ones,
 * or -n of them by a partial Fisher-Yates shuffle, then ascending), for each class in ascending
 * order S support images (a partial Fisher-Yates shuffle of its support images in record order),
 * then for each class Q query images among its query images whose id is no support image's id
 * in this episode (same shuffle). The naive sampler's K standard normal draws of a query image
 * come from (seed, the image's record index): the same image gets the same draws in every
 * episode. So an episode depends only on the seed and its number, whatever the thread count.
 */
#include <getopt.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "match.h"
#include "metrics.h"
#include "proto.h"
#include "rng.h"
#include "stream.h"
#include "util.h"

static const char *usage =
    "usage: fewshot -s SUPPORT [-R EPISODES] [-n WAYS] [-k SHOTS] [-q QUERIES] [--score SCORER]\n"
    "               [--se2 X] [-K SAMPLES] [-S SEED] [-t THREADS] [--json FILE] [QUERY]\n"
    "       fewshot --summary [INPUT]\n"
    "  Few-shot classification by prototypes (pn, SPE) over random episodes.\n";

enum { SC_PN, SC_NAIVE, SC_CLOSED, NSC };
static const char *const sc_name[NSC] = {"pn", "spe-naive", "spe-closed"};
static const char *const sc_json[NSC] = {"pn", "spe_naive", "spe_closed"};
#define EPISODE_STREAM RNG_STREAM('f', 's', 'e', 'p')
#define SAMPLE_STREAM RNG_STREAM('f', 's', 'z', 'k')
/* the naive sampler's draws are kept for every query image when they fit in this many bytes,
 * else drawn again at each use (the same numbers either way) */
#define EPS_CACHE_BYTES ((size_t)1 << 30)

typedef struct {
    const char *support, *input, *json;
    int summary;
    int64_t episodes;
    int ways, shots, queries, samples, threads;
    int score; /* -1: the default */
    int se2_given;
    double se2;
    uint64_t seed;
} options;

/* one stream's images as Gaussians */
typedef struct {
    const char *name;
    int64_t n;
    int D, has_var;
    double *mu, *var; /* (n, D); var NULL without `var` */
    int32_t *cls;
    int64_t *id;
    uint8_t *occ; /* (n, nocc) or NULL */
    int nocc;
} items;

/* the classes present in both streams and, per class, its images in record order */
typedef struct {
    int nc;
    int32_t *label;             /* (nc) ascending */
    int64_t *ns, *nq;           /* (nc) counts */
    int64_t **sup, **qry;       /* (nc) lists of record indices */
} classes;

typedef struct {
    const options *o;
    const items *S, *Q;
    const classes *C;
    int n, spe;                 /* ways; SPE scorers run */
    double se2;
    const double *eps;          /* (Q->n, K, D) cached draws, or NULL */
    /* results: record r = (e * n + j) * Q + q; correct counts (episodes, NSC) */
    int64_t *rec_item;
    int32_t *rec_pred;
    uint8_t *rec_ok;
    float *rec_eta;
    int64_t *ep_correct;
} context;

typedef struct {
    const context *c;
    int index;
    /* scratch */
    int *perm, *chosen, *label;
    int64_t *pool, *sup_ids, *qry;
    double *smu, *svar, *score, *p, *eps;
    proto_set pn, spe;
} worker;

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}
static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}
static int cmp_i64_desc(const void *a, const void *b) { return cmp_i64(b, a); }
static int cmp_int(const void *a, const void *b) { return (*(const int *)a > *(const int *)b) - (*(const int *)a < *(const int *)b); }

/* the first position in sorted a[0..n) whose value is >= x */
static int64_t lower_bound(const int64_t *a, int64_t n, int64_t x)
{
    int64_t lo = 0, hi = n;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (a[mid] < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static void read_items(const char *path, items *it, stream_reader **rd)
{
    stream_reader *r = stream_open_path(path);
    match_set *M = match_set_read(r); /* dies on another kind, no records, NaN or Inf */
    if (!M->cls)
        die("%s: no 'class' field: nothing to classify", r->name);
    if (!M->has_id)
        die("%s: no 'id' field: fewshot needs the images' ids to keep a query's twin out of its support", r->name);
    it->name = r->name;
    it->n = M->n;
    it->D = M->D;
    it->has_var = M->var != NULL;
    it->mu = emalloc((size_t)M->n * M->D * sizeof *it->mu);
    it->var = M->var ? emalloc((size_t)M->n * M->D * sizeof *it->var) : NULL;
    for (int64_t i = 0; i < M->n; i++) {
        match_emb x = match_set_emb(M, i);
        proto_gaussian(x.mu, x.var, M->C, M->D, it->mu + i * M->D, it->var ? it->var + i * M->D : NULL);
    }
    it->cls = M->cls;
    it->id = M->id;
    it->occ = M->occ;
    it->nocc = M->nocc;
    M->cls = NULL;
    M->id = NULL;
    M->occ = NULL;
    match_set_free(M);
    *rd = r;
}

static void items_free(items *it)
{
    free(it->mu);
    free(it->var);
    free(it->cls);
    free(it->id);
    free(it->occ);
}

/* the sorted distinct classes of a stream */
static int32_t *distinct_classes(const items *it, int *n)
{
    int32_t *c = emalloc((size_t)it->n * sizeof *c);
    memcpy(c, it->cls, (size_t)it->n * sizeof *c);
    qsort(c, (size_t)it->n, sizeof *c, cmp_i32);
    int k = 0;
    for (int64_t i = 0; i < it->n; i++)
        if (!k || c[i] != c[k - 1])
            c[k++] = c[i];
    *n = k;
    return c;
}

/* index of class label in C (ascending), -1 if absent */
static int class_index(const classes *C, int32_t label)
{
    int32_t *f = bsearch(&label, C->label, (size_t)C->nc, sizeof label, cmp_i32);
    return f ? (int)(f - C->label) : -1;
}

static void make_classes(const items *S, const items *Q, classes *C)
{
    int ns, nq;
    int32_t *cs = distinct_classes(S, &ns), *cq = distinct_classes(Q, &nq);
    C->label = emalloc((size_t)(ns < nq ? ns : nq) * sizeof *C->label + 1);
    C->nc = 0;
    for (int i = 0, j = 0; i < ns && j < nq;) {
        if (cs[i] < cq[j])
            i++;
        else if (cs[i] > cq[j])
            j++;
        else {
            C->label[C->nc++] = cs[i];
            i++, j++;
        }
    }
    if (!C->nc)
        die("no class is present in both the support stream %s (%d classes, e.g. %d) and the query stream %s "
            "(%d classes, e.g. %d)",
            S->name, ns, cs[0], Q->name, nq, cq[0]);
    free(cs);
    free(cq);
    C->ns = ecalloc((size_t)C->nc, sizeof *C->ns);
    C->nq = ecalloc((size_t)C->nc, sizeof *C->nq);
    C->sup = ecalloc((size_t)C->nc, sizeof *C->sup);
    C->qry = ecalloc((size_t)C->nc, sizeof *C->qry);
    for (int pass = 0; pass < 2; pass++) {
        const items *it = pass ? Q : S;
        int64_t *cnt = pass ? C->nq : C->ns, **list = pass ? C->qry : C->sup;
        for (int64_t i = 0; i < it->n; i++) {
            int k = class_index(C, it->cls[i]);
            if (k >= 0)
                cnt[k]++;
        }
        for (int k = 0; k < C->nc; k++) {
            list[k] = emalloc((size_t)cnt[k] * sizeof **list);
            cnt[k] = 0;
        }
        for (int64_t i = 0; i < it->n; i++) {
            int k = class_index(C, it->cls[i]);
            if (k >= 0)
                list[k][cnt[k]++] = i;
        }
    }
}

static void classes_free(classes *C)
{
    for (int k = 0; k < C->nc; k++) {
        free(C->sup[k]);
        free(C->qry[k]);
    }
    free(C->sup);
    free(C->qry);
    free(C->ns);
    free(C->nq);
    free(C->label);
}

/* Every episode must be possible: for each common class, S support images, and Q query images
 * left when the S support images' twins are taken out. The most twins S support images of the
 * class can take out: the sum of the S largest counts, over its distinct support ids, of the
 * class's query images with that id. (A twin of another class's support image, which real
 * twins never are, is caught when the episode is drawn.) */
static void check_sizes(const options *o, const items *S, const items *Q, const classes *C)
{
    for (int k = 0; k < C->nc; k++) {
        if (C->ns[k] < o->shots)
            die("class %d has %lld support image%s in %s, fewer than the %d shots (-k) of an episode", C->label[k],
                (long long)C->ns[k], C->ns[k] == 1 ? "" : "s", S->name, o->shots);
        int64_t nq = C->nq[k], ns = C->ns[k];
        int64_t *qid = emalloc((size_t)nq * sizeof *qid), *sid = emalloc((size_t)ns * sizeof *sid);
        for (int64_t i = 0; i < nq; i++)
            qid[i] = Q->id[C->qry[k][i]];
        for (int64_t i = 0; i < ns; i++)
            sid[i] = S->id[C->sup[k][i]];
        qsort(qid, (size_t)nq, sizeof *qid, cmp_i64);
        qsort(sid, (size_t)ns, sizeof *sid, cmp_i64);
        int64_t nd = 0;
        for (int64_t i = 0; i < ns; i++) {
            if (i && sid[i] == sid[i - 1])
                continue;
            int64_t a = lower_bound(qid, nq, sid[i]), b = a;
            while (b < nq && qid[b] == sid[i])
                b++;
            if (b > a)
                sid[nd++] = b - a; /* reuse: counts of twins per distinct id */
        }
        qsort(sid, (size_t)nd, sizeof *sid, cmp_i64_desc);
        int64_t worst = 0;
        for (int64_t i = 0; i < nd && i < o->shots; i++)
            worst += sid[i];
        free(qid);
        free(sid);
        if (nq - worst < o->queries) {
            if (worst)
                die("class %d has %lld query images in %s, %lld of them twins (same id) of its support images: "
                    "%lld left when the support's twins are taken out, fewer than the %d queries (-q) of an episode",
                    C->label[k], (long long)nq, Q->name, (long long)worst, (long long)(nq - worst), o->queries);
            die("class %d has %lld query image%s in %s, fewer than the %d queries (-q) of an episode", C->label[k],
                (long long)nq, nq == 1 ? "" : "s", Q->name, o->queries);
        }
    }
}

/* K x D standard normals of query image i */
static void draw_eps(uint64_t seed, int64_t i, int K, int D, double *eps)
{
    rng r;
    rng_init(&r, seed, SAMPLE_STREAM ^ (uint64_t)i);
    for (int e = 0; e < K * D; e++)
        eps[e] = rng_normal(&r);
}

static void worker_init(worker *w, const context *c, int index)
{
    const classes *C = c->C;
    int n = c->n, S = c->o->shots, Q = c->o->queries, D = c->S->D, K = c->o->samples;
    int64_t maxpool = 1;
    for (int k = 0; k < C->nc; k++) {
        maxpool = C->ns[k] > maxpool ? C->ns[k] : maxpool;
        maxpool = C->nq[k] > maxpool ? C->nq[k] : maxpool;
    }
    memset(w, 0, sizeof *w);
    w->c = c;
    w->index = index;
    w->perm = emalloc((size_t)C->nc * sizeof *w->perm);
    w->chosen = emalloc((size_t)n * sizeof *w->chosen);
    w->label = emalloc((size_t)n * S * sizeof *w->label);
    w->pool = emalloc((size_t)maxpool * sizeof *w->pool);
    w->sup_ids = emalloc((size_t)n * S * sizeof *w->sup_ids);
    w->qry = emalloc((size_t)n * Q * sizeof *w->qry);
    w->smu = emalloc((size_t)n * S * D * sizeof *w->smu);
    w->svar = emalloc((size_t)n * S * D * sizeof *w->svar);
    w->score = emalloc((size_t)n * sizeof *w->score);
    w->p = emalloc((size_t)n * sizeof *w->p);
    if (c->spe && !c->eps)
        w->eps = emalloc((size_t)K * D * sizeof *w->eps);
    proto_init(&w->pn, n, D);
    if (c->spe)
        proto_init(&w->spe, n, D);
}

static void worker_free(worker *w)
{
    free(w->perm);
    free(w->chosen);
    free(w->label);
    free(w->pool);
    free(w->sup_ids);
    free(w->qry);
    free(w->smu);
    free(w->svar);
    free(w->score);
    free(w->p);
    free(w->eps);
    proto_free(&w->pn);
    if (w->c->spe)
        proto_free(&w->spe);
}

/* the first m of a[0..len) become a uniform random m-subset in draw order */
static void partial_shuffle(rng *r, int64_t *a, int64_t len, int m)
{
    for (int i = 0; i < m; i++) {
        int64_t j = i + (int64_t)rng_below(r, (uint64_t)(len - i));
        int64_t t = a[i];
        a[i] = a[j];
        a[j] = t;
    }
}

static void run_episode(worker *w, int64_t e)
{
    const context *c = w->c;
    const options *o = c->o;
    const classes *C = c->C;
    const items *Si = c->S, *Qi = c->Q;
    int n = c->n, S = o->shots, Q = o->queries, D = Si->D, K = o->samples;
    rng r;
    rng_init(&r, o->seed, EPISODE_STREAM ^ (uint64_t)e);
    /* the classes */
    for (int k = 0; k < C->nc; k++)
        w->perm[k] = k;
    if (n < C->nc)
        for (int i = 0; i < n; i++) {
            int j = i + (int)rng_below(&r, (uint64_t)(C->nc - i)), t = w->perm[i];
            w->perm[i] = w->perm[j];
            w->perm[j] = t;
        }
    memcpy(w->chosen, w->perm, (size_t)n * sizeof *w->chosen);
    qsort(w->chosen, (size_t)n, sizeof *w->chosen, cmp_int);
    /* the support */
    for (int j = 0; j < n; j++) {
        int k = w->chosen[j];
        memcpy(w->pool, C->sup[k], (size_t)C->ns[k] * sizeof *w->pool);
        partial_shuffle(&r, w->pool, C->ns[k], S);
        for (int s = 0; s < S; s++) {
            int64_t i = w->pool[s];
            w->sup_ids[j * S + s] = Si->id[i];
            w->label[j * S + s] = j;
            memcpy(w->smu + (size_t)(j * S + s) * D, Si->mu + i * D, (size_t)D * sizeof *w->smu);
            if (c->spe)
                memcpy(w->svar + (size_t)(j * S + s) * D, Si->var + i * D, (size_t)D * sizeof *w->svar);
        }
    }
    qsort(w->sup_ids, (size_t)n * S, sizeof *w->sup_ids, cmp_i64);
    /* the queries: the class's images whose id is no support image's id */
    for (int j = 0; j < n; j++) {
        int k = w->chosen[j];
        int64_t len = 0;
        for (int64_t t = 0; t < C->nq[k]; t++) {
            int64_t i = C->qry[k][t], id = Qi->id[i], at = lower_bound(w->sup_ids, (int64_t)n * S, id);
            if (at == (int64_t)n * S || w->sup_ids[at] != id)
                w->pool[len++] = i;
        }
        if (len < Q)
            die("episode %lld, class %d: %lld query images left when the twins (same id) of the episode's support "
                "images are taken out, fewer than the %d queries (-q)",
                (long long)e, C->label[k], (long long)len, Q);
        partial_shuffle(&r, w->pool, len, Q);
        memcpy(w->qry + (size_t)j * Q, w->pool, (size_t)Q * sizeof *w->qry);
    }
    /* prototypes, then every query by every scorer */
    proto_fit_pn(&w->pn, w->smu, w->label, n * S);
    if (c->spe)
        proto_fit_spe(&w->spe, w->smu, w->svar, w->label, n * S, c->se2);
    int64_t *ok = c->ep_correct + e * NSC;
    for (int s = 0; s < NSC; s++)
        ok[s] = 0;
    for (int j = 0; j < n; j++)
        for (int q = 0; q < Q; q++) {
            int64_t i = w->qry[(size_t)j * Q + q], rec = (e * n + j) * Q + q;
            const double *mu = Qi->mu + i * D;
            for (int s = 0; s < NSC; s++) {
                if (s != SC_PN && !c->spe)
                    continue;
                if (s == SC_PN)
                    proto_pn_scores(&w->pn, mu, w->score);
                else if (s == SC_CLOSED)
                    proto_spe_closed(&w->spe, mu, Qi->var + i * D, w->score);
                else {
                    const double *eps = c->eps ? c->eps + (size_t)i * K * D : w->eps;
                    if (!c->eps)
                        draw_eps(o->seed, i, K, D, w->eps);
                    proto_spe_naive(&w->spe, mu, Qi->var + i * D, eps, K, w->p);
                }
                /* pn and closed: the argmax of the scores is that of their softmax */
                const double *v = s == SC_NAIVE ? w->p : w->score;
                int y = proto_argmax(v, n);
                ok[s] += y == j;
                if (s == o->score) {
                    c->rec_item[rec] = i;
                    c->rec_pred[rec] = C->label[w->chosen[y]];
                    c->rec_ok[rec] = y == j;
                    c->rec_eta[rec] = (float)(s == SC_NAIVE ? proto_uncertainty(v, n) : proto_uncertainty_scores(v, n));
                }
            }
        }
}

static void *worker_run(void *arg)
{
    worker *w = arg;
    const context *c = w->c;
    for (int64_t e = w->index; e < c->o->episodes; e += c->o->threads)
        run_episode(w, e);
    return NULL;
}

/* mean over episodes of correct / per, and the 95% half-width 1.96 sd / sqrt(R) (sd over
 * episodes, R - 1 in the denominator; NaN for R = 1) */
static void accuracy_stats(const int64_t *correct, int stride, int64_t R, int64_t per, double *mean, double *ci)
{
    double s = 0, ss = 0;
    for (int64_t e = 0; e < R; e++)
        s += (double)correct[e * stride] / (double)per;
    double m = s / (double)R;
    for (int64_t e = 0; e < R; e++) {
        double d = (double)correct[e * stride] / (double)per - m;
        ss += d * d;
    }
    *mean = m;
    *ci = R > 1 ? 1.96 * sqrt(ss / (double)(R - 1)) / sqrt((double)R) : NAN;
}

typedef struct {
    int64_t episodes;
    int ways, shots, queries, samples, spe;
    const char *score, *se2_from;
    double se2, acc[NSC], ci[NSC];
    uint64_t seed;
} summary;

static void print_summary(FILE *f, const summary *s)
{
    fprintf(f, "{\"program\": \"fewshot\", \"episodes\": %lld, \"ways\": %d, \"shots\": %d, \"queries\": %d, \"score\": ",
            (long long)s->episodes, s->ways, s->shots, s->queries);
    json_string(f, s->score, strlen(s->score));
    fprintf(f, ", \"samples\": %d", s->samples);
    for (int k = 0; k < NSC; k++) {
        fprintf(f, ", \"%s\": ", sc_json[k]);
        if (k != SC_PN && !s->spe) {
            fputs("null", f);
            continue;
        }
        fputs("{\"accuracy\": ", f);
        metrics_json_num(f, s->acc[k]);
        fputs(", \"ci95\": ", f);
        metrics_json_num(f, s->ci[k]);
        fputs("}", f);
    }
    fputs(", \"se2\": ", f);
    metrics_json_num(f, s->spe ? s->se2 : NAN);
    fputs(", \"se2_from\": ", f);
    json_string(f, s->se2_from, strlen(s->se2_from));
    fprintf(f, ", \"seed\": %llu}\n", (unsigned long long)s->seed);
}

static int score_index(const char *name)
{
    for (int k = 0; k < NSC; k++)
        if (!strcmp(name, sc_name[k]))
            return k;
    return -1;
}

/* --summary: the line of --json from a `fewshot` stream: the chosen scorer's numbers from the
 * records, the others' from the header */
static void summarize(const char *path)
{
    stream_reader *in = stream_open_path(path);
    stream_expect_kind(in, "fewshot");
    const stream_header *h = in->header;
    summary s = {0};
    s.episodes = header_need_int(h, "episodes");
    s.ways = (int)header_need_int(h, "ways");
    s.shots = (int)header_need_int(h, "shots");
    s.queries = (int)header_need_int(h, "queries");
    s.samples = (int)header_need_int(h, "samples");
    s.score = header_str(h, "score", NULL);
    s.se2_from = header_str(h, "se2_from", NULL);
    int chosen = s.score ? score_index(s.score) : -1;
    if (chosen < 0 || !s.se2_from || s.episodes < 1 || s.ways < 1 || s.queries < 1)
        die("%s: the header's meta is not that of fewshot (score, se2_from, episodes, ways, queries)", in->name);
    s.spe = header_meta(h, "spe_closed_accuracy") != NULL;
    s.se2 = header_float(h, "se2", NAN);
    s.seed = h->seed;
    char key[64];
    for (int k = 0; k < NSC; k++) {
        snprintf(key, sizeof key, "%s_accuracy", sc_json[k]);
        s.acc[k] = header_float(h, key, NAN);
        snprintf(key, sizeof key, "%s_ci95", sc_json[k]);
        s.ci[k] = header_float(h, key, NAN);
    }
    int ei = stream_field_typed(h, "episode", DT_I32), ci = stream_field_typed(h, "correct", DT_U8);
    int64_t *correct = ecalloc((size_t)s.episodes, sizeof *correct), *count = ecalloc((size_t)s.episodes, sizeof *count);
    stream_record rec = {0};
    while (stream_read(in, &rec)) {
        int32_t e = *(const int32_t *)rec.t[ei].data;
        if (e < 0 || e >= s.episodes)
            die("%s: record %lld: episode %d outside the %lld of the header", in->name, in->count - 1, e,
                (long long)s.episodes);
        count[e]++;
        correct[e] += *(const uint8_t *)rec.t[ci].data != 0;
    }
    int64_t per = (int64_t)s.ways * s.queries;
    for (int64_t e = 0; e < s.episodes; e++)
        if (count[e] != per)
            die("%s: episode %lld has %lld records, the header says %d ways x %d queries", in->name, (long long)e,
                (long long)count[e], s.ways, s.queries);
    accuracy_stats(correct, 1, s.episodes, per, &s.acc[chosen], &s.ci[chosen]);
    print_summary(stdout, &s);
    free(correct);
    free(count);
    record_free(&rec);
    stream_close(in);
}

/* s_e^2: the option, else the support's header, else the query's, else 0 */
static double resolve_se2(const options *o, const stream_header *sh, const stream_header *qh, const char **from)
{
    if (o->se2_given) {
        *from = "option --se2";
        return o->se2;
    }
    const stream_header *hs[2] = {sh, qh};
    for (int k = 0; k < 2; k++)
        if (header_meta(hs[k], "spe_se2")) {
            double v = header_float(hs[k], "spe_se2", NAN);
            if (!(v >= 0) || !isfinite(v))
                die("the %s stream's header meta spe_se2 = %g is not a finite number >= 0 (override it with --se2)",
                    k ? "query" : "support", v);
            *from = k ? "query stream header spe_se2" : "support stream header spe_se2";
            return v;
        }
    *from = "default 0 (no spe_se2 in either header)";
    return 0;
}

int main(int argc, char **argv)
{
    util_start(argc, argv, usage);
    char **args = emalloc((size_t)(argc + 1) * sizeof *args); /* before getopt permutes argv */
    memcpy(args, argv, (size_t)(argc + 1) * sizeof *args);
    options o = {.episodes = 1000, .shots = 5, .queries = 15, .samples = 200, .threads = 1, .score = -1, .seed = 714};
    int other_given = 0;
    enum { OPT_JSON = 256, OPT_SUMMARY, OPT_SCORE, OPT_SE2 };
    static const struct option lopts[] = {{"json", required_argument, 0, OPT_JSON},
                                          {"summary", no_argument, 0, OPT_SUMMARY},
                                          {"score", required_argument, 0, OPT_SCORE},
                                          {"se2", required_argument, 0, OPT_SE2},
                                          {"help", no_argument, 0, 'h'},
                                          {0, 0, 0, 0}};
    int c;
    while ((c = getopt_long(argc, argv, "s:R:n:k:q:K:S:t:h", lopts, NULL)) != -1) {
        if (c != OPT_SUMMARY && c != 'h')
            other_given = 1;
        switch (c) {
        case 's': o.support = optarg; break;
        case 'R': o.episodes = parse_long("-R", optarg, 1, 1000000); break;
        case 'n': o.ways = (int)parse_long("-n", optarg, 2, 1000000); break;
        case 'k': o.shots = (int)parse_long("-k", optarg, 1, 100000); break;
        case 'q': o.queries = (int)parse_long("-q", optarg, 1, 100000); break;
        case 'K': o.samples = (int)parse_long("-K", optarg, 1, 100000); break;
        case 'S': o.seed = parse_u64("-S", optarg); break;
        case 't': o.threads = (int)parse_long("-t", optarg, 1, 64); break;
        case OPT_JSON: o.json = optarg; break;
        case OPT_SUMMARY: o.summary = 1; break;
        case OPT_SCORE:
            if ((o.score = score_index(optarg)) < 0)
                usage_die("--score: '%s' is none of pn, spe-naive, spe-closed", optarg);
            break;
        case OPT_SE2:
            o.se2 = parse_double("--se2", optarg, 0, 1e300);
            o.se2_given = 1;
            break;
        case 'h': usage_help();
        default: usage_bad_option(argv);
        }
    }
    if (argc - optind > 1)
        usage_die("at most one input");
    o.input = optind < argc ? argv[optind] : "-";
    if (o.summary) {
        if (other_given)
            usage_die("--summary reads a fewshot stream: no other option");
        summarize(o.input);
        free(args);
        close_stdout();
        return 0;
    }
    if (!o.support)
        usage_die("no support stream: give -s SUPPORT");
    stdout_not_terminal();

    /* the summary file exists (as a temp file) before any work: an unwritable path fails now */
    FILE *jf = o.json ? json_open(o.json, 1) : NULL;
    items S = {0}, Q = {0};
    stream_reader *qin, *sin;
    read_items(o.input, &Q, &qin);
    read_items(o.support, &S, &sin);
    if (S.D != Q.D)
        die("the support embeddings have %d dimensions, the queries %d", S.D, Q.D);
    int D = Q.D, spe = S.has_var && Q.has_var;
    if (o.score < 0)
        o.score = spe ? SC_CLOSED : SC_PN;
    if (o.score != SC_PN && !spe)
        die("--score %s needs variances: the %s stream %s has no field 'var' (a point model): use --score pn",
            sc_name[o.score], !S.has_var ? "support" : "query", !S.has_var ? S.name : Q.name);
    /* (after the error above, so that a failing run says one thing) */
    if (S.has_var != Q.has_var)
        warn("only the %s stream carries variances ('var'): SPE needs both; PN only",
             S.has_var ? "support" : "query");
    const char *se2_from = "none (no variances: PN only)";
    double se2 = spe ? resolve_se2(&o, sin->header, qin->header, &se2_from) : 0;

    classes C = {0};
    make_classes(&S, &Q, &C);
    if (o.ways > C.nc)
        die("-n %d classes per episode, but only %d class%s present in both streams", o.ways, C.nc,
            C.nc == 1 ? " is" : "es are");
    if (!o.ways && C.nc < 2)
        die("only one class (%d) is present in both streams: an episode needs at least 2", C.label[0]);
    int n = o.ways ? o.ways : C.nc;
    check_sizes(&o, &S, &Q, &C);
    /* SPE's prototypes need var + se2 > 0: checked for every support image that can be drawn */
    if (spe)
        for (int k = 0; k < C.nc; k++)
            for (int64_t t = 0; t < C.ns[k]; t++) {
                int64_t i = C.sup[k][t];
                for (int d = 0; d < D; d++)
                    if (!(S.var[i * D + d] + se2 > 0))
                        die("%s: record %lld (id %lld, class %d): variance %g in dimension %d and s_e^2 = %g: "
                            "an SPE prototype needs variance + s_e^2 > 0 (give --se2 > 0)",
                            S.name, (long long)i, (long long)S.id[i], S.cls[i], S.var[i * D + d], d, se2);
            }

    int64_t per = (int64_t)n * o.queries, N = o.episodes * per;
    context ctx = {.o = &o, .S = &S, .Q = &Q, .C = &C, .n = n, .spe = spe, .se2 = se2};
    ctx.rec_item = emalloc((size_t)N * sizeof *ctx.rec_item);
    ctx.rec_pred = emalloc((size_t)N * sizeof *ctx.rec_pred);
    ctx.rec_ok = emalloc((size_t)N);
    ctx.rec_eta = emalloc((size_t)N * sizeof *ctx.rec_eta);
    ctx.ep_correct = emalloc((size_t)o.episodes * NSC * sizeof *ctx.ep_correct);
    double *eps_cache = NULL;
    if (spe && (double)Q.n * o.samples * D * sizeof(double) <= (double)EPS_CACHE_BYTES) {
        eps_cache = emalloc((size_t)Q.n * o.samples * D * sizeof *eps_cache);
        for (int k = 0; k < C.nc; k++)
            for (int64_t t = 0; t < C.nq[k]; t++) {
                int64_t i = C.qry[k][t];
                draw_eps(o.seed, i, o.samples, D, eps_cache + (size_t)i * o.samples * D);
            }
        ctx.eps = eps_cache;
    }

    int T = o.threads < o.episodes ? o.threads : (int)o.episodes;
    o.threads = T;
    worker *w = emalloc((size_t)T * sizeof *w);
    pthread_t *tid = emalloc((size_t)T * sizeof *tid);
    for (int t = 0; t < T; t++)
        worker_init(&w[t], &ctx, t);
    for (int t = 1; t < T; t++)
        if (pthread_create(&tid[t], NULL, worker_run, &w[t]))
            die("cannot start a thread");
    worker_run(&w[0]);
    for (int t = 1; t < T; t++)
        pthread_join(tid[t], NULL);

    summary sm = {.episodes = o.episodes, .ways = n, .shots = o.shots, .queries = o.queries, .samples = o.samples,
                  .spe = spe, .score = sc_name[o.score], .se2_from = se2_from, .se2 = se2, .seed = o.seed};
    for (int k = 0; k < NSC; k++) {
        sm.acc[k] = sm.ci[k] = NAN;
        if (k == SC_PN || spe)
            accuracy_stats(ctx.ep_correct + k, NSC, o.episodes, per, &sm.acc[k], &sm.ci[k]);
    }

    stream_header *h = header_new("fewshot", 0);
    header_provenance(h, argc, args);
    header_set_seed(h, o.seed);
    header_add_input(h, qin->header);
    header_add_input(h, sin->header);
    header_copy_meta(h, qin->header);
    header_set_int(h, "episodes", o.episodes);
    header_set_int(h, "ways", n);
    header_set_int(h, "shots", o.shots);
    header_set_int(h, "queries", o.queries);
    header_set_int(h, "samples", o.samples);
    header_set_str(h, "score", sc_name[o.score]);
    header_set_str(h, "support", o.support);
    if (spe)
        header_set_float(h, "se2", se2);
    header_set_str(h, "se2_from", se2_from);
    header_set_float(h, "accuracy", sm.acc[o.score]);
    header_set_float(h, "ci95", sm.ci[o.score]);
    char key[64];
    for (int k = 0; k < NSC; k++)
        if (k == SC_PN || spe) {
            snprintf(key, sizeof key, "%s_accuracy", sc_json[k]);
            header_set_float(h, key, sm.acc[k]);
            snprintf(key, sizeof key, "%s_ci95", sc_json[k]);
            header_set_float(h, key, sm.ci[k]);
        }
    header_add_field(h, "episode", DT_I32, 0, NULL);
    header_add_field(h, "id", DT_I64, 0, NULL);
    header_add_field(h, "class", DT_I32, 0, NULL);
    header_add_field(h, "predicted", DT_I32, 0, NULL);
    header_add_field(h, "correct", DT_U8, 0, NULL);
    header_add_field(h, "eta", DT_F32, 0, NULL);
    int64_t nocc[1] = {Q.nocc};
    if (Q.occ)
        header_add_field(h, "occluded", DT_U8, 1, nocc);
    stream_writer *out = stream_create(stdout, h);
    for (int64_t r = 0; r < N; r++) {
        int32_t ep = (int32_t)(r / per);
        int64_t i = ctx.rec_item[r];
        void *data[7] = {&ep, &Q.id[i], &Q.cls[i], &ctx.rec_pred[r], &ctx.rec_ok[r], &ctx.rec_eta[r],
                         Q.occ ? Q.occ + i * Q.nocc : NULL};
        stream_write_data(out, data, 0);
    }
    /* the summary's data is safe first, then the stream whole, then the summary in place */
    if (jf) {
        print_summary(jf, &sm);
        atomic_sync(jf);
    }
    stream_finish(out);
    close_stdout();
    if (jf)
        atomic_commit(jf);

    for (int t = 0; t < T; t++)
        worker_free(&w[t]);
    free(w);
    free(tid);
    free(eps_cache);
    free(ctx.rec_item);
    free(ctx.rec_pred);
    free(ctx.rec_ok);
    free(ctx.rec_eta);
    free(ctx.ep_correct);
    header_free(h);
    classes_free(&C);
    items_free(&S);
    items_free(&Q);
    stream_close(sin);
    stream_close(qin);
    free(args);
    return 0;
}
