/* retrieval_eval: retrieve's run, stream and reports (lib/evaluation/retrieval_eval.h) */
#include "retrieval_eval.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ap.h"
#include "json.h"
#include "mls.h"
#include "util.h"

/* random cleaning only: no uncertain gallery reported */
static int clean_has_uncertain(const retrieval_cleaning *c) { return strcmp(c->uncertainty, "none") != 0; }

/* galleries 1 .. 1 + draws of a run with cleaning into c */
static void clean_report(retrieval_cleaning *c, const retrieval_summary *sum, int nk)
{
    c->uncertain_map = sum[1].map;
    memcpy(c->uncertain_recall, sum[1].recall, sizeof c->uncertain_recall);
    double m = 0, m2 = 0;
    for (int r = 0; r < c->draws; r++) {
        m += sum[2 + r].map;
        for (int j = 0; j < nk; j++)
            c->random_recall[j] += sum[2 + r].recall[j] / c->draws;
    }
    m /= c->draws;
    for (int r = 0; r < c->draws; r++)
        m2 += (sum[2 + r].map - m) * (sum[2 + r].map - m);
    c->random_map = m;
    c->random_map_sd = c->draws > 1 ? sqrt(m2 / (c->draws - 1)) : NAN;
}

void retrieval_eval_run(retrieval_eval *E, const match_set *Q, float *qm, const gallery *G, const int64_t *exclude,
                        int threads)
{
    int64_t ng = G->n, nq = E->nq, q0 = E->q0;
    int nk = E->nk;
    E->Q = Q;
    E->G = G;
    /* cleaning: galleries 1 (uncertain dropped) and 2 .. 1 + draws (random) */
    uint32_t *mask = NULL;
    int nmask = 1;
    if (E->clean) {
        double *u = E->clean_random_only ? ecalloc((size_t)(ng ? ng : 1), sizeof *u) : G->u;
        if (!u)
            die("--clean needs an uncertainty: the gallery has neither eta nor var (--clean-random: the random "
                "draws alone)");
        mask = emalloc((size_t)ng * sizeof *mask);
        E->cl = (retrieval_cleaning){.percent = E->clean, .draws = E->draws,
                                     .uncertainty = E->clean_random_only ? "none" : G->ukind};
        E->cl.dropped = retrieval_clean_masks(u, ng, E->clean, E->draws, E->seed, mask);
        if (!E->cl.dropped)
            die("--clean %g drops no item of a gallery of %lld", E->clean, (long long)ng);
        nmask = 2 + E->draws;
        if (E->clean_random_only)
            free(u);
    }
    E->hist = E->global ? retrieval_hist_new() : NULL;
    /* a shard centres on what the whole run centres on: the rounding of the centre respects every
     * query's coordinates (retrieval.h), so the distances are the unsharded run's to the bit */
    const int32_t *qcls = Q->cls + q0;
    int mls = match_distance_kernel(E->distance) >= 0; /* -MLS or another kernel distance (C = 1: qm is Q->mu) */
    retrieval_job J = {qm + q0 * Q->D, qcls, nq, G->mean, G->cls, ng, Q->D, exclude, mask, nmask, E->ks, nk,
                       threads, E->hist, qm, Q->n, mls ? Q->var + q0 * Q->D : NULL, mls ? G->var : NULL,
                       mls ? match_distance_kernel(E->distance) : 0};
    E->per = emalloc((size_t)nq * sizeof *E->per);
    retrieval_summary sum[RETRIEVAL_MAXMASK];
    if (E->at_r) {
        /* the depth from every query of the input, so that the shards of a run agree */
        E->depth = retrieval_at_r_depth(Q->cls, Q->n, G->cls, ng, !E->ngal, E->ks[nk - 1], ng - (exclude != NULL));
        if (E->depth > 1000)
            warn("--at-r: the largest class makes every query's %lld nearest needed: the full ranking (without "
                 "--at-r) is faster for classes this large", (long long)E->depth);
        retrieval_run_at_r(&J, E->depth, E->per, sum);
    } else
        retrieval_run(&J, E->per, sum);
    free(mask);
    if (!sum[0].queries && !E->sharded) /* a shard may have none: the others have */
        die("no query has a positive (an item of its class) in the gallery: nothing to evaluate");
    if (sum[0].no_positive)
        warn("%lld of %lld queries have no positive in the gallery: left out", (long long)sum[0].no_positive,
             (long long)nq);
    if (E->clean)
        clean_report(&E->cl, sum, nk);
    E->sum = sum[0];
    retrieval_class_average(qcls, E->per, nq, nk, &E->cavg); /* pytorch-metric-learning's avg_of_avgs */
    if (E->hist)
        retrieval_hist_summary(E->hist, &E->glob);
    E->qeta = gallery_uncertainty(Q);
    E->pearson = NAN;
    if (E->qeta) { /* over the records: the queries with a positive */
        double *e = emalloc((size_t)(nq ? nq : 1) * sizeof *e), *a = emalloc((size_t)(nq ? nq : 1) * sizeof *a);
        int64_t m = 0;
        for (int64_t q = 0; q < nq; q++)
            if (E->per[q].npos) {
                e[m] = (float)E->qeta[q0 + q];
                a[m++] = E->per[q].ap;
            }
        E->pearson = retrieval_pearson(e, a, m);
        free(e);
        free(a);
    }
}

/* the distance (MATCH_DISTANCE_*) by name, in the meta and in the JSON line */
static const char *const distance_names[] = {"mean", "cosine", "mls", "w2", "csd", "kl", "bhattacharyya"};
static const char *const json_distance[] = {"euclidean", "cosine", "mls", "w2", "csd", "kl", "bhattacharyya"};

/* v (nk values of dtype) as the meta tensor key */
static void set_vector(stream_header *h, const char *key, int dtype, void *v, int nk)
{
    int64_t shape[1] = {nk};
    tensor *t = tensor_view(dtype, 1, shape, v);
    header_set_tensor(h, key, t);
    tensor_free(t);
}

/* the means of a run into its header (the keys in the order the run sets them) */
static void set_means(stream_header *h, const retrieval_summary *s, const retrieval_summary *cavg, int nk)
{
    header_set_int(h, "queries", s->queries);
    header_set_int(h, "no_positive", s->no_positive);
    set_vector(h, "recall", DT_F64, (void *)s->recall, nk);
    header_set_float(h, "p1", s->p1);
    header_set_float(h, "rprec", s->rprec);
    header_set_float(h, "map_r", s->map_r);
    header_set_float(h, "map", s->map);
    header_set_float(h, "mrr", s->mrr);
    header_set_int(h, "query_classes", cavg->queries);
    header_set_float(h, "p1_avg_of_avgs", cavg->p1);
    header_set_float(h, "rprec_avg_of_avgs", cavg->rprec);
    header_set_float(h, "map_r_avg_of_avgs", cavg->map_r);
    header_set_float(h, "mrr_avg_of_avgs", cavg->mrr);
}

stream_header *retrieval_eval_header(const retrieval_eval *E, int argc, char **argv, const stream_header *qh,
                                     stream_reader *const *gin, const shard_range *queries)
{
    int nk = E->nk;
    const retrieval_cleaning *cl = &E->cl;
    stream_header *h = header_new("retrieval", 0);
    header_provenance(h, argc, argv);
    if (E->clean)
        header_set_seed(h, E->seed);
    header_add_input(h, qh);
    for (int i = 0; i < E->ngal; i++)
        header_add_input(h, gin[i]->header);
    header_copy_meta(h, qh);
    header_set_str(h, "retrieval_distance", distance_names[E->distance]);
    header_set_str(h, "retrieval_gallery", E->ngal ? E->G->names : "leave-one-out");
    header_set_int(h, "gallery_n", E->G->n);
    if (E->ngal > 1)
        set_vector(h, "gallery_part_n", DT_I64, E->G->part_n, E->ngal);
    header_set_str(h, "retrieval_ranking", E->at_r ? "at_r" : "full");
    if (E->at_r)
        header_set_int(h, "retrieval_depth", E->depth);
    header_set_int(h, "queries", E->sum.queries);
    header_set_int(h, "no_positive", E->sum.no_positive);
    int64_t kv[RETRIEVAL_MAXK];
    for (int j = 0; j < nk; j++)
        kv[j] = E->ks[j];
    set_vector(h, "recall_at", DT_I64, kv, nk);
    set_means(h, &E->sum, &E->cavg, nk);
    if (E->qeta)
        header_set_float(h, "eta_ap_pearson", E->pearson);
    if (E->hist) {
        header_set_int(h, "global_pairs", E->glob.pairs);
        header_set_int(h, "global_positives", E->glob.positives);
        header_set_float(h, "global_ap", E->glob.ap);
        header_set_float(h, "global_pr_auc", E->glob.pr_auc);
        header_set_int(h, "global_points", E->glob.points);
        header_set_int(h, "global_mantissa_bits", RETRIEVAL_GLOBAL_MANTISSA);
    }
    if (E->clean) {
        header_set_float(h, "clean_percent", cl->percent);
        header_set_int(h, "clean_dropped", cl->dropped);
        header_set_int(h, "clean_draws", cl->draws);
        header_set_str(h, "clean_uncertainty", cl->uncertainty);
        if (clean_has_uncertain(cl)) {
            header_set_float(h, "clean_uncertain_map", cl->uncertain_map);
            set_vector(h, "clean_uncertain_recall", DT_F64, (void *)cl->uncertain_recall, nk);
        }
        header_set_float(h, "clean_random_map", cl->random_map);
        header_set_float(h, "clean_random_map_sd", cl->random_map_sd);
        set_vector(h, "clean_random_recall", DT_F64, (void *)cl->random_recall, nk);
    }
    if (queries) /* after every other key: --merge deletes them, the rest keeps its order */
        shard_set_meta(h, queries, E->Q->n);
    static const gallery_field fields[] = {{"ap", DT_F32, 0},    {"rprec", DT_F32, 0}, {"map_r", DT_F32, 0},
                                           {"p1", DT_U8, 0},     {"recall", DT_U8, 1}, {"npos", DT_I32, 0},
                                           {"first_rank", DT_I32, 0}};
    gallery_record_fields(h, fields, 7, nk, E->qeta != NULL, E->Q);
    return h;
}

void retrieval_eval_write(const retrieval_eval *E, stream_writer *w)
{
    const match_set *Q = E->Q;
    int64_t q0 = E->q0;
    const int32_t *qcls = Q->cls + q0;
    const int64_t *qid = Q->id + q0;
    for (int64_t q = 0; q < E->nq; q++) {
        const retrieval_query *r = &E->per[q];
        if (!r->npos)
            continue;
        float eta = E->qeta ? (float)E->qeta[q0 + q] : 0;
        void *data[12] = {(void *)&qid[q], (void *)&qcls[q], (void *)&r->ap, (void *)&r->rprec, (void *)&r->map_r,
                          (void *)&r->p1, (void *)r->recall, (void *)&r->npos, (void *)&r->r1};
        int f = 9;
        if (E->qeta)
            data[f++] = &eta;
        if (Q->occ)
            data[f++] = Q->occ + (q0 + q) * Q->nocc;
        if (Q->corrupt)
            data[f++] = Q->corrupt + q0 + q;
        stream_write_data(w, data, 0);
    }
}

/* the --json line, of a run or of its streams read back (c, g: NULL without cleaning, global) */
static void report(FILE *f, const retrieval_summary *s, const retrieval_summary *cavg, int64_t ng, const char *mode,
                   const char *distance, int64_t depth, const int *ks, int nk, const retrieval_cleaning *c,
                   int has_eta, double pearson, const retrieval_global *g)
{
    json_writer w;
    json_report(&w, f, "retrieve");
    json_key_int(&w, "queries", s->queries);
    json_key_int(&w, "no_positive", s->no_positive);
    json_key_int(&w, "gallery", ng);
    json_key_str(&w, "mode", mode);
    json_key_str(&w, "distance", distance);
    json_key_str(&w, "ranking", depth ? "at_r" : "full");
    if (depth)
        json_key_int(&w, "depth", depth);
    json_key(&w, "recall_at");
    json_ints(&w, ks, nk);
    json_key_nums(&w, "recall", s->recall, nk);
    json_key_num(&w, "p1", s->p1);
    json_key_num(&w, "rprec", s->rprec);
    json_key_num(&w, "map_r", s->map_r);
    json_key_num(&w, "map", s->map);
    json_key_num(&w, "mrr", s->mrr);
    json_key_int(&w, "query_classes", cavg->queries);
    json_key_num(&w, "p1_avg_of_avgs", cavg->p1);
    json_key_num(&w, "rprec_avg_of_avgs", cavg->rprec);
    json_key_num(&w, "map_r_avg_of_avgs", cavg->map_r);
    json_key_num(&w, "mrr_avg_of_avgs", cavg->mrr);
    if (has_eta)
        json_key_num(&w, "eta_ap_pearson", pearson);
    if (g) {
        json_key_num(&w, "global_pr_auc", g->pr_auc);
        json_key_num(&w, "global_ap", g->ap);
        json_key_int(&w, "global_pairs", g->pairs);
        json_key_int(&w, "global_positives", g->positives);
    }
    if (c) {
        json_key_num(&w, "clean_percent", c->percent);
        json_key_int(&w, "clean_dropped", c->dropped);
        json_key_int(&w, "clean_draws", c->draws);
        json_key_str(&w, "clean_uncertainty", c->uncertainty);
        if (clean_has_uncertain(c)) {
            json_key_num(&w, "clean_uncertain_map", c->uncertain_map);
            json_key_nums(&w, "clean_uncertain_recall", c->uncertain_recall, nk);
        }
        json_key_num(&w, "clean_random_map", c->random_map);
        json_key_num(&w, "clean_random_map_sd", c->random_map_sd);
        json_key_nums(&w, "clean_random_recall", c->random_recall, nk);
    }
    json_end(&w);
}

void retrieval_eval_json(FILE *f, const retrieval_eval *E)
{
    report(f, &E->sum, &E->cavg, E->G->n, E->ngal ? "gallery" : "leave-one-out", json_distance[E->distance],
           E->depth, E->ks, E->nk, E->clean ? &E->cl : NULL, E->qeta != NULL, E->pearson, E->hist ? &E->glob : NULL);
}

#define GLOBAL_TSV_POINTS 1000 /* the plotted curve's points, at most */
void retrieval_eval_tsv(FILE *f, const retrieval_eval *E)
{
    metrics_pr_point *pts = emalloc(GLOBAL_TSV_POINTS * sizeof *pts);
    int64_t n = retrieval_hist_curve(E->hist, GLOBAL_TSV_POINTS, pts);
    /* unit vectors: d2 = 2 (1 - cos); mls: the keys are -MLS above the gallery's floor */
    double floor = E->distance == MATCH_DISTANCE_MLS ? mls_floor(E->G->var, E->G->n, E->Q->D) : 0; /* csd kl bhatt: 0 */
    fprintf(f, "recall\tprecision\tthreshold\n");
    for (int64_t t = 0; t < n; t++)
        fprintf(f, "%.9g\t%.9g\t%.9g\n", pts[t].recall, pts[t].precision,
                E->distance == MATCH_DISTANCE_COSINE ? pts[t].threshold / 2 : pts[t].threshold + floor);
    free(pts);
}

void retrieval_eval_free(retrieval_eval *E)
{
    retrieval_hist_free(E->hist);
    free(E->qeta);
    free(E->per);
}

/* ---- retrieve --summary and --merge */

/* a float64 [nk] meta tensor into v */
static void meta_vector(const stream_reader *in, const char *key, double *v, int nk)
{
    const tensor *t = header_tensor(in->header, key);
    if (!t || tensor_numel(t) != nk)
        die("%s: no %d values '%s' in the header", in->name, nk, key);
    for (int j = 0; j < nk; j++)
        v[j] = tensor_get(t, j);
}

/* the meta that the shards of one retrieve run share */
static const char *const retrieve_same[] = {"retrieval_distance", "retrieval_gallery", "gallery_n", "gallery_part_n",
                                            "recall_at", "retrieval_ranking", "retrieval_depth", NULL};

/* the records of retrieval streams (one, or the shards of one run in query order), checked, and
 * their numbers */
typedef struct {
    int64_t n;               /* records */
    retrieval_query *per;    /* (n) */
    int32_t *cls;            /* (n) */
    double *eta, *ap;        /* (n) for eta_ap_pearson, with an eta field */
    int nk, ks[RETRIEVAL_MAXK];
    int has_eta, has_r1;     /* a stream written before MRR has no first_rank: no MRR then */
    int64_t depth;           /* an --at-r run's K (retrieval_depth), 0: the full ranking */
    int64_t no_positive, gallery_n;
    retrieval_summary s, cavg;
    double pearson;
} records;

static void *read_records(shard_set *S)
{
    records *R = ecalloc(1, sizeof *R);
    const stream_header *h = S->in[0]->header;
    const char *src = S->in[0]->name; /* (the shards have its fields: shard_open) */
    int ai = stream_field_need(src, h, "ap", DT_F32, 0, NULL), ri = stream_field_need(src, h, "rprec", DT_F32, 0, NULL),
        mi = stream_field_need(src, h, "map_r", DT_F32, 0, NULL), pi = stream_field_need(src, h, "p1", DT_U8, 0, NULL),
        ni = stream_field_need(src, h, "npos", DT_I32, 0, NULL), ci = stream_field_need(src, h, "class", DT_I32, 0, NULL),
        ki = stream_field_need(src, h, "recall", DT_U8, 1, (int64_t[]){FIELD_ANY});
    int64_t nk64 = h->fields[ki].shape[0];
    if (nk64 > RETRIEVAL_MAXK)
        die("%s: field 'recall' holds %lld values, expected 1 to %d", src, (long long)nk64, RETRIEVAL_MAXK);
    int nk = R->nk = (int)nk64;
    double kd[RETRIEVAL_MAXK];
    meta_vector(S->in[0], "recall_at", kd, nk);
    for (int j = 0; j < nk; j++)
        R->ks[j] = (int)kd[j];
    int fi = header_field_find(h, "first_rank");
    if (fi >= 0)
        fi = stream_field_need(src, h, "first_rank", DT_I32, 0, NULL);
    R->has_r1 = fi >= 0;
    int ei = header_field_find(h, "eta");
    if (ei >= 0)
        ei = stream_field_need(src, h, "eta", DT_F32, 0, NULL);
    R->has_eta = ei >= 0;
    R->gallery_n = header_int(h, "gallery_n", -1);
    /* --at-r: ap NaN (not known), first_rank 0 when no positive lies within the depth */
    if (!strcmp(header_str(h, "retrieval_ranking", "full"), "at_r")) {
        R->depth = header_int(h, "retrieval_depth", -1);
        if (R->depth < 1)
            die("%s: an --at-r stream without a retrieval_depth >= 1", S->in[0]->name);
    }
    stream_record rec = {0};
    size_t cap = 0;
    for (int i = 0; i < S->n; i++) {
        stream_reader *in = S->in[i];
        int64_t before = R->n, np = header_int(in->header, "no_positive", 0);
        R->no_positive += np;
        while (stream_read(in, &rec)) {
            retrieval_query q = {.ap = *(const float *)rec.t[ai].data, .rprec = *(const float *)rec.t[ri].data,
                                 .map_r = *(const float *)rec.t[mi].data, .p1 = *(const uint8_t *)rec.t[pi].data,
                                 .npos = *(const int32_t *)rec.t[ni].data,
                                 .r1 = fi >= 0 ? *(const int32_t *)rec.t[fi].data : 1};
            memcpy(q.recall, rec.t[ki].data, (size_t)nk);
            /* the means are of fractions and 0/1 hits: anything else is not a retrieval record */
            long long at = (long long)in->count - 1;
            const char *fname[3] = {"ap", "rprec", "map_r"};
            float fval[3] = {q.ap, q.rprec, q.map_r};
            for (int f = R->depth ? 1 : 0; f < 3; f++)
                if (!(fval[f] >= 0 && fval[f] <= 1))
                    die("%s: record %lld: %s %g is not a number in [0, 1]", in->name, at, fname[f], fval[f]);
            if (R->depth && !isnan(q.ap))
                die("%s: record %lld: ap %g in an --at-r stream (where it is not known: NaN)", in->name, at, q.ap);
            if (q.p1 > 1)
                die("%s: record %lld: p1 %d is neither 0 nor 1", in->name, at, q.p1);
            for (int j = 0; j < nk; j++)
                if (q.recall[j] > 1)
                    die("%s: record %lld: recall %d is neither 0 nor 1 (recall@%d)", in->name, at, q.recall[j],
                        R->ks[j]);
            int64_t top = R->depth ? R->depth : R->gallery_n;
            if (fi >= 0 && (q.r1 < (R->depth ? 0 : 1) || (top >= 0 && q.r1 > top) || q.p1 != (q.r1 == 1)))
                die("%s: record %lld: first_rank %d is not a rank from 1 to %s %lld (%swith p1 %d)", in->name, at,
                    q.r1, R->depth ? "retrieval_depth" : "gallery_n", (long long)top,
                    R->depth ? "or 0 beyond it, " : "", q.p1);
            if (ei >= 0 && !isfinite(*(const float *)rec.t[ei].data))
                die("%s: record %lld: eta %g is not finite", in->name, at, *(const float *)rec.t[ei].data);
            if (q.npos < 1)
                die("%s: record %lld has npos %d: a retrieval record has a positive", in->name, at, q.npos);
            if ((size_t)R->n == cap) {
                cap = cap ? 2 * cap : 1024;
                R->per = erealloc(R->per, cap * sizeof *R->per);
                R->cls = erealloc(R->cls, cap * sizeof *R->cls);
                R->eta = erealloc(R->eta, cap * sizeof *R->eta);
                R->ap = erealloc(R->ap, cap * sizeof *R->ap);
            }
            R->per[R->n] = q;
            R->cls[R->n] = *(const int32_t *)rec.t[ci].data;
            R->eta[R->n] = ei >= 0 ? *(const float *)rec.t[ei].data : 0;
            R->ap[R->n++] = q.ap;
        }
        int64_t want = header_int(in->header, "queries_to", 0) - header_int(in->header, "queries_from", 0);
        if (S->sharded && R->n - before + np != want)
            die("%s: %lld records and %lld queries without a positive, but the shard's queries are %lld", in->name,
                (long long)(R->n - before), (long long)np, (long long)want);
    }
    record_free(&rec);
    if (!R->n)
        die("%s: the stream has no records", S->in[0]->name);
    for (int64_t q = 0; q < R->n; q++)
        retrieval_summary_add(&R->s, &R->per[q], nk);
    retrieval_summary_finish(&R->s, nk);
    retrieval_class_average(R->cls, R->per, R->n, nk, &R->cavg);
    if (!R->has_r1)
        R->s.mrr = R->cavg.mrr = NAN;
    R->s.no_positive = R->no_positive;
    R->pearson = R->has_eta ? retrieval_pearson(R->eta, R->ap, R->n) : NAN;
    return R;
}

static void records_free(void *records_)
{
    records *R = records_;
    free(R->per);
    free(R->cls);
    free(R->eta);
    free(R->ap);
    free(R);
}

/* --summary: the numbers of a finished `retrieval` stream, or of the shards of one run, the means
 * from the records */
static void summary(FILE *f, const shard_set *S, const void *records_)
{
    const records *R = records_;
    const stream_header *h = S->in[0]->header;
    int nk = R->nk;
    retrieval_cleaning c = {0}, *cp = NULL;
    if (header_meta(h, "clean_percent")) {
        cp = &c;
        c.percent = header_float(h, "clean_percent", NAN);
        c.dropped = header_int(h, "clean_dropped", -1);
        c.draws = (int)header_int(h, "clean_draws", -1);
        c.uncertainty = header_str(h, "clean_uncertainty", "?");
        c.uncertain_map = header_float(h, "clean_uncertain_map", NAN);
        c.random_map = header_float(h, "clean_random_map", NAN);
        c.random_map_sd = header_float(h, "clean_random_map_sd", NAN);
        if (clean_has_uncertain(&c))
            meta_vector(S->in[0], "clean_uncertain_recall", c.uncertain_recall, nk);
        meta_vector(S->in[0], "clean_random_recall", c.random_recall, nk);
    }
    retrieval_global g = {0}, *gp = NULL;
    if (header_meta(h, "global_ap")) {
        gp = &g;
        g.pr_auc = header_float(h, "global_pr_auc", NAN);
        g.ap = header_float(h, "global_ap", NAN);
        g.pairs = header_int(h, "global_pairs", -1);
        g.positives = header_int(h, "global_positives", -1);
    }
    const char *gal = header_str(h, "retrieval_gallery", "?");
    const char *dist = header_str(h, "retrieval_distance", "?");
    report(f, &R->s, &R->cavg, R->gallery_n, !strcmp(gal, "leave-one-out") ? gal : "gallery",
           !strcmp(dist, "mean") ? "euclidean" : dist, R->depth, R->ks, nk, cp, R->has_eta, R->pearson, gp);
}

/* --merge: the means of the shards' records into the merged header */
static void merged(stream_header *h, const void *records_)
{
    const records *R = records_;
    set_means(h, &R->s, &R->cavg, R->nk);
    if (R->has_eta)
        header_set_float(h, "eta_ap_pearson", R->pearson);
}

const shard_reader retrieval_eval_shards = {"retrieval", retrieve_same, read_records, summary, merged, records_free};
