/* fewshot: test episodes and the accuracy report of few-shot classification (lib/evaluation/fewshot.h) */
#include "fewshot.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "match.h"
#include "proto.h"
#include "util.h"

const char *const fewshot_score_name[FEWSHOT_NSC] = {"pn", "spe-naive", "spe-closed"};
const char *const fewshot_score_json[FEWSHOT_NSC] = {"pn", "spe_naive", "spe_closed"};

int fewshot_score_index(const char *name)
{
    for (int k = 0; k < FEWSHOT_NSC; k++)
        if (!strcmp(name, fewshot_score_name[k]))
            return k;
    return -1;
}

static int cmp_i64_desc(const void *a, const void *b) { return util_cmp_i64(b, a); }
static int cmp_int(const void *a, const void *b) { return (*(const int *)a > *(const int *)b) - (*(const int *)a < *(const int *)b); }


void fewshot_items_read(const char *path, fewshot_items *it, stream_reader **rd)
{
    stream_reader *r = stream_open_path(path);
    match_set *M = match_set_read(r); /* dies on another kind, no records, NaN or Inf */
    if (!M->cls)
        die("%s: no 'class' field: nothing to classify", r->name);
    if (!M->has_id)
        die("%s: no 'id' field: fewshot needs the images' ids to keep a query's twin out of its support", r->name);
    it->name = r->name;
    it->n = M->n;
    it->C = M->C;
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
    it->names = M->names;
    M->names = (classnames){0};
    M->cls = NULL;
    M->id = NULL;
    M->occ = NULL;
    match_set_free(M);
    *rd = r;
}

void fewshot_check_alike(fewshot_items *S, fewshot_items *Q)
{
    if (S->D != Q->D)
        die("the support embeddings have %d dimensions, the queries %d", S->D, Q->D);
    /* each image enters as its moments whatever its C, but mixtures of different C come from
     * different models, whose prototypes and queries do not share a space */
    if (S->C != Q->C)
        die("the support embeddings have %d component%s (%s: mu [%d, %d]), the queries %d (%s: mu [%d, %d]): "
            "expected one model's embeddings, the same C",
            S->C, S->C == 1 ? "" : "s", S->name, S->C, S->D, Q->C, Q->name, Q->C, Q->D);
    classnames U;
    classnames_unify(&U, (classnames_part[]){{&S->names, S->cls, S->n, S->name}, {&Q->names, Q->cls, Q->n, Q->name}},
                     2);
    if (U.present) {
        classnames_free(&S->names), classnames_free(&Q->names);
        classnames_copy(&S->names, &U);
        Q->names = U;
    }
}

void fewshot_items_free(fewshot_items *it)
{
    free(it->mu);
    free(it->var);
    free(it->cls);
    free(it->id);
    free(it->occ);
    classnames_free(&it->names);
}

/* the sorted distinct classes of a stream */
static int32_t *distinct_classes(const fewshot_items *it, int *n)
{
    int32_t *c = emalloc((size_t)it->n * sizeof *c);
    memcpy(c, it->cls, (size_t)it->n * sizeof *c);
    qsort(c, (size_t)it->n, sizeof *c, util_cmp_i32);
    int k = 0;
    for (int64_t i = 0; i < it->n; i++)
        if (!k || c[i] != c[k - 1])
            c[k++] = c[i];
    *n = k;
    return c;
}

/* index of class label in C (ascending), -1 if absent */
static int class_index(const fewshot_classes *C, int32_t label)
{
    int32_t *f = bsearch(&label, C->label, (size_t)C->nc, sizeof label, util_cmp_i32);
    return f ? (int)(f - C->label) : -1;
}

void fewshot_classes_make(const fewshot_items *S, const fewshot_items *Q, fewshot_classes *C)
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
        const fewshot_items *it = pass ? Q : S;
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

void fewshot_classes_free(fewshot_classes *C)
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
void fewshot_check_sizes(const fewshot_classes *C, const fewshot_items *S, const fewshot_items *Q, int shots,
                         int queries)
{
    for (int k = 0; k < C->nc; k++) {
        if (C->ns[k] < shots)
            die("class %d has %lld support image%s in %s, fewer than the %d shots (-k) of an episode", C->label[k],
                (long long)C->ns[k], C->ns[k] == 1 ? "" : "s", S->name, shots);
        int64_t nq = C->nq[k], ns = C->ns[k];
        int64_t *qid = emalloc((size_t)nq * sizeof *qid), *sid = emalloc((size_t)ns * sizeof *sid);
        for (int64_t i = 0; i < nq; i++)
            qid[i] = Q->id[C->qry[k][i]];
        for (int64_t i = 0; i < ns; i++)
            sid[i] = S->id[C->sup[k][i]];
        qsort(qid, (size_t)nq, sizeof *qid, util_cmp_i64);
        qsort(sid, (size_t)ns, sizeof *sid, util_cmp_i64);
        int64_t nd = 0;
        for (int64_t i = 0; i < ns; i++) {
            if (i && sid[i] == sid[i - 1])
                continue;
            int64_t a = util_lower_bound_i64(qid, nq, sid[i]), b = a;
            while (b < nq && qid[b] == sid[i])
                b++;
            if (b > a)
                sid[nd++] = b - a; /* reuse: counts of twins per distinct id */
        }
        qsort(sid, (size_t)nd, sizeof *sid, cmp_i64_desc);
        int64_t worst = 0;
        for (int64_t i = 0; i < nd && i < shots; i++)
            worst += sid[i];
        free(qid);
        free(sid);
        if (nq - worst < queries) {
            if (worst)
                die("class %d has %lld query images in %s, %lld of them twins (same id) of its support images: "
                    "%lld left when the support's twins are taken out, fewer than the %d queries (-q) of an episode",
                    C->label[k], (long long)nq, Q->name, (long long)worst, (long long)(nq - worst), queries);
            die("class %d has %lld query image%s in %s, fewer than the %d queries (-q) of an episode", C->label[k],
                (long long)nq, nq == 1 ? "" : "s", Q->name, queries);
        }
    }
}

void fewshot_episode_init(fewshot_episode *ep, const fewshot_classes *C, int n, int shots, int queries)
{
    int64_t maxpool = 1;
    for (int k = 0; k < C->nc; k++) {
        maxpool = C->ns[k] > maxpool ? C->ns[k] : maxpool;
        maxpool = C->nq[k] > maxpool ? C->nq[k] : maxpool;
    }
    ep->n = n;
    ep->shots = shots;
    ep->queries = queries;
    ep->chosen = emalloc((size_t)n * sizeof *ep->chosen);
    ep->sup = emalloc((size_t)n * shots * sizeof *ep->sup);
    ep->qry = emalloc((size_t)n * queries * sizeof *ep->qry);
    ep->perm = emalloc((size_t)C->nc * sizeof *ep->perm);
    ep->pool = emalloc((size_t)maxpool * sizeof *ep->pool);
    ep->sup_ids = emalloc((size_t)n * shots * sizeof *ep->sup_ids);
}

void fewshot_episode_free(fewshot_episode *ep)
{
    free(ep->chosen);
    free(ep->sup);
    free(ep->qry);
    free(ep->perm);
    free(ep->pool);
    free(ep->sup_ids);
}

void fewshot_episode_draw(fewshot_episode *ep, const fewshot_classes *C, const fewshot_items *Si,
                          const fewshot_items *Qi, uint64_t seed, int64_t e)
{
    int n = ep->n, S = ep->shots, Q = ep->queries;
    rng r;
    rng_init(&r, seed, FEWSHOT_EPISODE ^ (uint64_t)e);
    /* the classes */
    for (int k = 0; k < C->nc; k++)
        ep->perm[k] = k;
    if (n < C->nc)
        rng_shuffle_partial(&r, ep->perm, sizeof *ep->perm, C->nc, n);
    memcpy(ep->chosen, ep->perm, (size_t)n * sizeof *ep->chosen);
    qsort(ep->chosen, (size_t)n, sizeof *ep->chosen, cmp_int);
    /* the support */
    for (int j = 0; j < n; j++) {
        int k = ep->chosen[j];
        memcpy(ep->pool, C->sup[k], (size_t)C->ns[k] * sizeof *ep->pool);
        rng_shuffle_partial(&r, ep->pool, sizeof *ep->pool, C->ns[k], S);
        memcpy(ep->sup + (size_t)j * S, ep->pool, (size_t)S * sizeof *ep->sup);
        for (int s = 0; s < S; s++)
            ep->sup_ids[j * S + s] = Si->id[ep->pool[s]];
    }
    qsort(ep->sup_ids, (size_t)n * S, sizeof *ep->sup_ids, util_cmp_i64);
    /* the queries: the class's images whose id is no support image's id */
    for (int j = 0; j < n; j++) {
        int k = ep->chosen[j];
        int64_t len = 0;
        for (int64_t t = 0; t < C->nq[k]; t++) {
            int64_t i = C->qry[k][t], id = Qi->id[i], at = util_lower_bound_i64(ep->sup_ids, (int64_t)n * S, id);
            if (at == (int64_t)n * S || ep->sup_ids[at] != id)
                ep->pool[len++] = i;
        }
        if (len < Q)
            die("episode %lld, class %d: %lld query images left when the twins (same id) of the episode's support "
                "images are taken out, fewer than the %d queries (-q)",
                (long long)e, C->label[k], (long long)len, Q);
        rng_shuffle_partial(&r, ep->pool, sizeof *ep->pool, len, Q);
        memcpy(ep->qry + (size_t)j * Q, ep->pool, (size_t)Q * sizeof *ep->qry);
    }
}

void fewshot_accuracy(const int64_t *correct, int stride, int64_t R, int64_t per, double *mean, double *ci)
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

void fewshot_summary_json(FILE *f, const fewshot_summary *s)
{
    json_writer w;
    json_report(&w, f, "fewshot");
    json_key_int(&w, "episodes", s->episodes);
    json_key_int(&w, "ways", s->ways);
    json_key_int(&w, "shots", s->shots);
    json_key_int(&w, "queries", s->queries);
    json_key_str(&w, "score", s->score);
    json_key_int(&w, "samples", s->samples);
    for (int k = 0; k < FEWSHOT_NSC; k++) {
        json_key(&w, fewshot_score_json[k]);
        if (k != FEWSHOT_PN && !s->spe) {
            json_null(&w);
            continue;
        }
        json_obj(&w);
        json_key_num(&w, "accuracy", s->acc[k]);
        json_key_num(&w, "ci95", s->ci[k]);
        json_end(&w);
    }
    json_key_num(&w, "se2", s->spe ? s->se2 : NAN);
    json_key_str(&w, "se2_from", s->se2_from);
    json_key_uint(&w, "seed", s->seed);
    json_end(&w);
}

/* the count KEY of a fewshot header, from 1 to max (what fewshot writes; the episodes' counts are
 * held in memory), else dies naming it */
static int64_t summary_count(const stream_reader *in, const char *key, int64_t max)
{
    int64_t v = header_need_int(in->header, key);
    if (v < 1 || v > max)
        die("%s: the header's %s is %lld, expected 1 to %lld (what fewshot writes)", in->name, key, (long long)v,
            (long long)max);
    return v;
}

void fewshot_summary_read(const char *path, fewshot_summary *s, stream_reader **rd)
{
    stream_reader *in = stream_open_path(path);
    stream_expect_kind(in, "fewshot");
    const stream_header *h = in->header;
    memset(s, 0, sizeof *s);
    s->episodes = summary_count(in, "episodes", FEWSHOT_MAX_EPISODES);
    s->ways = (int)summary_count(in, "ways", INT_MAX);
    s->shots = (int)summary_count(in, "shots", INT_MAX);
    s->queries = (int)summary_count(in, "queries", INT_MAX);
    s->samples = (int)summary_count(in, "samples", INT_MAX);
    s->score = header_str(h, "score", NULL);
    s->se2_from = header_str(h, "se2_from", NULL);
    int chosen = s->score ? fewshot_score_index(s->score) : -1;
    if (chosen < 0 || !s->se2_from)
        die("%s: the header's meta is not that of fewshot (score, se2_from)", in->name);
    s->spe = header_meta(h, "spe_closed_accuracy") != NULL;
    s->se2 = header_float(h, "se2", NAN);
    s->seed = h->seed;
    char key[64];
    for (int k = 0; k < FEWSHOT_NSC; k++) {
        snprintf(key, sizeof key, "%s_accuracy", fewshot_score_json[k]);
        s->acc[k] = header_float(h, key, NAN);
        snprintf(key, sizeof key, "%s_ci95", fewshot_score_json[k]);
        s->ci[k] = header_float(h, key, NAN);
    }
    int ei = stream_field_need(in->name, h, "episode", DT_I32, 0, NULL),
        ci = stream_field_need(in->name, h, "correct", DT_U8, 0, NULL);
    int64_t *correct = ecalloc((size_t)s->episodes, sizeof *correct), *count = ecalloc((size_t)s->episodes, sizeof *count);
    stream_record rec = {0};
    while (stream_read(in, &rec)) {
        int32_t e = *(const int32_t *)rec.t[ei].data;
        if (e < 0 || e >= s->episodes)
            die("%s: record %lld: episode %d outside the %lld of the header", in->name, in->count - 1, e,
                (long long)s->episodes);
        count[e]++;
        correct[e] += *(const uint8_t *)rec.t[ci].data != 0;
    }
    int64_t per = (int64_t)s->ways * s->queries;
    for (int64_t e = 0; e < s->episodes; e++)
        if (count[e] != per)
            die("%s: episode %lld has %lld records, the header says %d ways x %d queries", in->name, (long long)e,
                (long long)count[e], s->ways, s->queries);
    fewshot_accuracy(correct, 1, s->episodes, per, &s->acc[chosen], &s->ci[chosen]);
    free(correct);
    free(count);
    record_free(&rec);
    *rd = in;
}

/* s_e^2: the option, else the support's header, else the query's, else 0 */
double fewshot_se2(int given, double value, const stream_header *sh, const stream_header *qh, const char **from)
{
    if (given) {
        *from = "option --se2";
        return value;
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

/* SPE's prototypes need var + se2 > 0: checked for every support image that can be drawn */
void fewshot_check_spe(const fewshot_items *S, const fewshot_classes *C, double se2)
{
    int D = S->D;
    for (int k = 0; k < C->nc; k++)
        for (int64_t t = 0; t < C->ns[k]; t++) {
            int64_t i = C->sup[k][t];
            for (int d = 0; d < D; d++)
                if (!(S->var[i * D + d] + se2 > 0))
                    die("%s: record %lld (id %lld, class %d): variance %g in dimension %d and s_e^2 = %g: "
                        "an SPE prototype needs variance + s_e^2 > 0 (give --se2 > 0)",
                        S->name, (long long)i, (long long)S->id[i], S->cls[i], S->var[i * D + d], d, se2);
        }
}
