/* retrieve: the retrieval evaluation of metric learning (Recall@k, P@1, R-precision, MAP@R, AP,
 * mAP), leave-one-out or against a gallery (the union of one or more streams: distractors), gallery
 * cleaning by uncertainty against random cleaning (hetero-triplet-taha-2019 section 5), and global
 * precision-recall over every pair (cross-example-softmax-veit-2020's calibration measure); writes
 * kind `retrieval`. Definitions, tie rules and the blocked computation: lib/retrieval.h.
 */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "blas.h"
#include "match.h"
#include "metrics.h"
#include "retrieval.h"
#include "shard.h"
#include "stream.h"
#include "util.h"

static const char *usage =
    "usage: retrieve [-k K1,K2,...] [-g GALLERY [-g GALLERY2 ...] [--exclude-id]]\n"
    "                [--clean X | --clean-random X [--clean-draws R] [-S SEED]]\n"
    "                [--global] [--global-tsv FILE] [--distance euclidean|cosine] [-t THREADS]\n"
    "                [--queries FROM:TO] [--json FILE] [INPUT]\n"
    "       retrieve --summary [INPUT | SHARD...]\n"
    "       retrieve --merge SHARD...\n"
    "  Retrieval metrics of embeddings per query: Recall@k, P@1, R-precision, MAP@R, AP, MRR.\n";

typedef struct {
    int summary;
    int ks[RETRIEVAL_MAXK], nk, k_given, t_given, draws_given, seed_given;
    const char **gallery;  /* the -g streams, in order */
    int ngal;
    int exclude_id;
    int cosine, distance_given; /* --distance cosine */
    int merge;             /* --merge */
    shard_range queries;   /* --queries FROM:TO */
    int queries_given;
    int global;            /* --global */
    const char *global_tsv;
    double clean;   /* percent, 0: no cleaning */
    int clean_random_only; /* --clean-random: no uncertainty needed, the random draws only */
    int draws;
    uint64_t seed;
    int threads;
    const char *json;
    const char *input;
} options;

/* what cleaning found, for the meta and the JSON line */
typedef struct {
    double percent;
    int64_t dropped;
    int draws;
    const char *uncertainty;
    double uncertain_map, uncertain_recall[RETRIEVAL_MAXK];
    double random_map, random_map_sd, random_recall[RETRIEVAL_MAXK];
} cleaning;
/* the gallery: the union of the -g streams in order, or the queries themselves (leave-one-out) */
typedef struct {
    int64_t n;
    float *mean;           /* (n, D) the items' centres (match_set_means) */
    int32_t *cls;          /* (n) */
    int64_t *id;           /* (n) */
    double *u;             /* (n) the uncertainty (--clean: eta, else the mean var), or NULL */
    const char *ukind;     /* "eta", "var" or NULL */
    int64_t *part_n;       /* (streams) the items of each -g stream */
    char *names;           /* the -g paths, comma-joined */
} gallery;

/* random cleaning only: no uncertain gallery reported */
static int clean_has_uncertain(const cleaning *c) { return strcmp(c->uncertainty, "none") != 0; }

/* -k K1,K2,...: every element a number >= 1 (an empty one, as in '1,' or '1,,2', is misuse, not
 * skipped), increasing (so no repeat) */
static void parse_ks(options *o, const char *s)
{
    char *copy = estrdup(s);
    o->nk = 0;
    for (char *t = copy, *end;; t = end + 1) {
        end = strchr(t, ',');
        if (end)
            *end = 0;
        if (!*t)
            usage_die("-k: expected K1,K2,... like 1,2,4,8 (no empty element), got '%s'", s);
        if (o->nk == RETRIEVAL_MAXK)
            usage_die("-k: at most %d values", RETRIEVAL_MAXK);
        int k = (int)parse_long("-k", t, 1, 1000000000);
        if (o->nk && k <= o->ks[o->nk - 1])
            usage_die("-k: the k must increase, as in 1,2,4,8: '%s'", s);
        o->ks[o->nk++] = k;
        if (!end)
            break;
    }
    free(copy);
}

static void json_array(FILE *f, const double *v, int n)
{
    fputc('[', f);
    for (int j = 0; j < n; j++) {
        if (j)
            fputs(", ", f);
        metrics_json_num(f, v[j]);
    }
    fputc(']', f);
}

static void print_summary(FILE *f, const retrieval_summary *s, const retrieval_summary *cavg, int64_t ng,
                          const char *mode, const char *distance,
                          const int *ks, int nk, const cleaning *c, int has_eta, double pearson,
                          const retrieval_global *g)
{
    fprintf(f, "{\"program\": \"retrieve\", \"queries\": %lld, \"no_positive\": %lld, \"gallery\": %lld, \"mode\": ",
            (long long)s->queries, (long long)s->no_positive, (long long)ng);
    json_string(f, mode, strlen(mode));
    fputs(", \"distance\": ", f);
    json_string(f, distance, strlen(distance));
    fputs(", \"recall_at\": [", f);
    for (int j = 0; j < nk; j++)
        fprintf(f, "%s%d", j ? ", " : "", ks[j]);
    fputs("], \"recall\": ", f);
    json_array(f, s->recall, nk);
    const char *names[5] = {"p1", "rprec", "map_r", "map", "mrr"};
    double vals[5] = {s->p1, s->rprec, s->map_r, s->map, s->mrr};
    for (int i = 0; i < 5; i++) {
        fprintf(f, ", \"%s\": ", names[i]);
        metrics_json_num(f, vals[i]);
    }
    fprintf(f, ", \"query_classes\": %lld", (long long)cavg->queries);
    const char *cnames[4] = {"p1_avg_of_avgs", "rprec_avg_of_avgs", "map_r_avg_of_avgs", "mrr_avg_of_avgs"};
    double cvals[4] = {cavg->p1, cavg->rprec, cavg->map_r, cavg->mrr};
    for (int i = 0; i < 4; i++) {
        fprintf(f, ", \"%s\": ", cnames[i]);
        metrics_json_num(f, cvals[i]);
    }
    if (has_eta) {
        fputs(", \"eta_ap_pearson\": ", f);
        metrics_json_num(f, pearson);
    }
    if (g) {
        fputs(", \"global_pr_auc\": ", f);
        metrics_json_num(f, g->pr_auc);
        fputs(", \"global_ap\": ", f);
        metrics_json_num(f, g->ap);
        fprintf(f, ", \"global_pairs\": %lld, \"global_positives\": %lld", (long long)g->pairs,
                (long long)g->positives);
    }
    if (c) {
        fputs(", \"clean_percent\": ", f);
        metrics_json_num(f, c->percent);
        fprintf(f, ", \"clean_dropped\": %lld, \"clean_draws\": %d, \"clean_uncertainty\": ", (long long)c->dropped,
                c->draws);
        json_string(f, c->uncertainty, strlen(c->uncertainty));
        if (clean_has_uncertain(c)) {
            fputs(", \"clean_uncertain_map\": ", f);
            metrics_json_num(f, c->uncertain_map);
            fputs(", \"clean_uncertain_recall\": ", f);
            json_array(f, c->uncertain_recall, nk);
        }
        fputs(", \"clean_random_map\": ", f);
        metrics_json_num(f, c->random_map);
        fputs(", \"clean_random_map_sd\": ", f);
        metrics_json_num(f, c->random_map_sd);
        fputs(", \"clean_random_recall\": ", f);
        json_array(f, c->random_recall, nk);
    }
    fputs("}\n", f);
}

/* v (nk values of dtype) as the meta tensor key */
static void set_vector(stream_header *h, const char *key, int dtype, void *v, int nk)
{
    int64_t shape[1] = {nk};
    tensor *t = tensor_view(dtype, 1, shape, v);
    header_set_tensor(h, key, t);
    tensor_free(t);
}

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
                                            "recall_at", NULL};

/* the records of retrieval streams (one, or the shards of one run in query order), checked, and
 * their numbers */
typedef struct {
    int64_t n;               /* records */
    retrieval_query *per;    /* (n) */
    int32_t *cls;            /* (n) */
    double *eta, *ap;        /* (n) for eta_ap_pearson, with an eta field */
    int nk, ks[RETRIEVAL_MAXK];
    int has_eta, has_r1;     /* a stream written before MRR has no first_rank: no MRR then */
    int64_t no_positive, gallery_n;
    retrieval_summary s, cavg;
    double pearson;
} records;

static void read_records(shard_set *S, records *R)
{
    memset(R, 0, sizeof *R);
    const stream_header *h = S->in[0]->header;
    int ai = stream_field_typed(h, "ap", DT_F32), ri = stream_field_typed(h, "rprec", DT_F32),
        mi = stream_field_typed(h, "map_r", DT_F32), pi = stream_field_typed(h, "p1", DT_U8),
        ki = stream_field_typed(h, "recall", DT_U8), ni = stream_field_typed(h, "npos", DT_I32),
        ci = stream_field_typed(h, "class", DT_I32);
    int nk = R->nk = (int)shape_numel(h->fields[ki].ndim, h->fields[ki].shape);
    if (nk < 1 || nk > RETRIEVAL_MAXK)
        die("%s: field 'recall' holds %d values, expected 1 to %d", S->in[0]->name, nk, RETRIEVAL_MAXK);
    double kd[RETRIEVAL_MAXK];
    meta_vector(S->in[0], "recall_at", kd, nk);
    for (int j = 0; j < nk; j++)
        R->ks[j] = (int)kd[j];
    int fi = header_field_find(h, "first_rank");
    if (fi >= 0)
        fi = stream_field_typed(h, "first_rank", DT_I32);
    R->has_r1 = fi >= 0;
    int ei = header_field_find(h, "eta");
    if (ei >= 0)
        ei = stream_field_typed(h, "eta", DT_F32);
    R->has_eta = ei >= 0;
    R->gallery_n = header_int(h, "gallery_n", -1);
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
            for (int f = 0; f < 3; f++)
                if (!(fval[f] >= 0 && fval[f] <= 1))
                    die("%s: record %lld: %s %g is not a number in [0, 1]", in->name, at, fname[f], fval[f]);
            if (q.p1 > 1)
                die("%s: record %lld: p1 %d is neither 0 nor 1", in->name, at, q.p1);
            for (int j = 0; j < nk; j++)
                if (q.recall[j] > 1)
                    die("%s: record %lld: recall %d is neither 0 nor 1 (recall@%d)", in->name, at, q.recall[j],
                        R->ks[j]);
            if (fi >= 0 && (q.r1 < 1 || (R->gallery_n >= 0 && q.r1 > R->gallery_n) || q.p1 != (q.r1 == 1)))
                die("%s: record %lld: first_rank %d is not a rank from 1 to gallery_n %lld with p1 %d", in->name,
                    at, q.r1, (long long)R->gallery_n, q.p1);
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
}

static void records_free(records *R)
{
    free(R->per);
    free(R->cls);
    free(R->eta);
    free(R->ap);
}

/* --summary: the numbers of a finished `retrieval` stream, or of the shards of one run, the means
 * from the records */
static void summarize(const char *const *paths, int npaths)
{
    shard_set *S = shard_open(paths, npaths, "retrieval", retrieve_same);
    records R;
    read_records(S, &R);
    const stream_header *h = S->in[0]->header;
    int nk = R.nk;
    cleaning c = {0}, *cp = NULL;
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
    print_summary(stdout, &R.s, &R.cavg, R.gallery_n, !strcmp(gal, "leave-one-out") ? gal : "gallery",
                  !strcmp(dist, "mean") ? "euclidean" : dist, R.ks, nk, cp, R.has_eta, R.pearson, gp);
    records_free(&R);
    shard_close(S);
}

/* v (nk values of dtype) as the meta tensor key */
static void set_vector(stream_header *h, const char *key, int dtype, void *v, int nk);

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

/* --merge: the shards of one run as the unsharded run's stream */
static void merge(const char *const *paths, int npaths, int argc, char **argv)
{
    shard_set *S = shard_open(paths, npaths, "retrieval", retrieve_same);
    if (!S->sharded)
        die("%s: not a shard (no queries_from): nothing to merge", S->in[0]->name);
    records R;
    read_records(S, &R);
    shard_rewind(S);
    stream_header *h = shard_header(S, argc, argv);
    set_means(h, &R.s, &R.cavg, R.nk);
    if (R.has_eta)
        header_set_float(h, "eta_ap_pearson", R.pearson);
    stream_writer *w = stream_create(stdout, h);
    stream_record rec = {0};
    for (int i = 0; i < S->n; i++)
        while (stream_read(S->in[i], &rec))
            stream_write_record(w, &rec);
    stream_finish(w);
    record_free(&rec);
    header_free(h);
    records_free(&R);
    shard_close(S);
}

/* each item's uncertainty: its eta, else the mean of its var over C x D; NULL without either */
static double *uncertainty(const match_set *S)
{
    if (!S->eta && !S->var)
        return NULL;
    double *u = emalloc((size_t)S->n * sizeof *u);
    metrics_item_uncertainty(S->eta, S->var, S->n, (int64_t)S->C * S->D, u);
    return u;
}

/* galleries 1 .. 1 + draws of a run with cleaning into c */
static void clean_report(cleaning *c, const retrieval_summary *sum, int nk)
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

/* --distance cosine: the means m (S's, n x D) as unit vectors; a zero mean is refused by name */
static void unit_means(const char *name, const match_set *S, float *m)
{
    int64_t z = match_normalise(m, S->n, S->D);
    if (z >= 0)
        die("%s: record %lld (id %lld): its mean is the zero vector, which has no direction for --distance cosine",
            name, (long long)z, (long long)S->id[z]);
}

/* the uncertainty kind of a set: "eta", "var" or NULL */
static const char *uncertainty_kind(const match_set *S) { return S->eta ? "eta" : S->var ? "var" : NULL; }

/* the union of the -g streams (gin[0 .. ngal), opened here and left open for the provenance): the
 * same D as the queries, a class each; with --exclude-id, ids (several streams: an `id` field each);
 * with need_u, the same uncertainty kind in every stream (that of the first) */
static gallery read_galleries(const options *o, const match_set *Q, int need_u, stream_reader **gin)
{
    gallery G = {0};
    G.part_n = emalloc((size_t)o->ngal * sizeof *G.part_n);
    size_t len = 1;
    for (int i = 0; i < o->ngal; i++)
        len += strlen(o->gallery[i]) + 1;
    G.names = ecalloc(len, 1);
    for (int i = 0; i < o->ngal; i++) {
        gin[i] = stream_open_path(o->gallery[i]);
        match_set *S = match_set_read(gin[i]);
        const char *name = gin[i]->name;
        if (S->D != Q->D)
            die("%s: the gallery has %d dimensions, the queries %d", name, S->D, Q->D);
        if (!S->cls)
            die("%s: no 'class' field: no positives to rank", name);
        if (o->exclude_id && o->ngal > 1 && !S->has_id)
            die("%s: no 'id' field: --exclude-id over several galleries needs the ids", name);
        const char *k = uncertainty_kind(S);
        if (need_u && i == 0)
            G.ukind = k;
        if (need_u && G.ukind && (!k || strcmp(k, G.ukind)))
            die("%s: no '%s' field: --clean needs the first gallery's uncertainty (%s) in every gallery", name,
                G.ukind, G.ukind);
        int64_t n0 = G.n, n = S->n, D = Q->D;
        G.n += n;
        G.part_n[i] = n;
        float *m = match_set_means(S, NULL);
        if (o->cosine)
            unit_means(name, S, m);
        G.mean = erealloc(G.mean, (size_t)G.n * D * sizeof *G.mean);
        memcpy(G.mean + n0 * D, m, (size_t)n * D * sizeof *m);
        free(m);
        G.cls = erealloc(G.cls, (size_t)G.n * sizeof *G.cls);
        memcpy(G.cls + n0, S->cls, (size_t)n * sizeof *G.cls);
        G.id = erealloc(G.id, (size_t)G.n * sizeof *G.id);
        memcpy(G.id + n0, S->id, (size_t)n * sizeof *G.id);
        if (need_u && G.ukind) {
            double *u = uncertainty(S);
            G.u = erealloc(G.u, (size_t)G.n * sizeof *G.u);
            memcpy(G.u + n0, u, (size_t)n * sizeof *u);
            free(u);
        }
        if (i)
            strcat(G.names, ",");
        strcat(G.names, o->gallery[i]);
        match_set_free(S);
    }
    return G;
}

/* the queries as their own gallery (leave-one-out) */
static gallery self_gallery(const match_set *Q, float *qm, int need_u)
{
    gallery G = {.n = Q->n, .mean = qm, .cls = Q->cls, .id = Q->id};
    if (need_u) {
        G.ukind = uncertainty_kind(Q);
        G.u = uncertainty(Q);
    }
    return G;
}

#define GLOBAL_TSV_POINTS 1000 /* the plotted curve's points, at most */
static void write_global_tsv(FILE *f, const retrieval_hist *h, int cosine)
{
    metrics_pr_point *pts = emalloc(GLOBAL_TSV_POINTS * sizeof *pts);
    int64_t n = retrieval_hist_curve(h, GLOBAL_TSV_POINTS, pts);
    fprintf(f, "recall\tprecision\tthreshold\n");
    for (int64_t t = 0; t < n; t++)
        fprintf(f, "%.9g\t%.9g\t%.9g\n", pts[t].recall, pts[t].precision,
                cosine ? pts[t].threshold / 2 : pts[t].threshold); /* unit vectors: d2 = 2 (1 - cos) */
    free(pts);
}

int main(int argc, char **argv)
{
    util_start(argc, argv, usage);
    char **args = emalloc((size_t)(argc + 1) * sizeof *args); /* before getopt permutes argv */
    memcpy(args, argv, (size_t)(argc + 1) * sizeof *args);
    options o = {.ks = {1, 2, 4, 8}, .nk = 4, .draws = 5, .seed = 714};
    enum { OPT_JSON = 256, OPT_EXCL, OPT_SUMMARY, OPT_CLEAN, OPT_CLEAN_RANDOM, OPT_DRAWS, OPT_GLOBAL, OPT_GTSV,
           OPT_DISTANCE, OPT_MERGE, OPT_QUERIES };
    static const struct option lopts[] = {{"json", required_argument, 0, OPT_JSON},
                                          {"summary", no_argument, 0, OPT_SUMMARY},
                                          {"exclude-id", no_argument, 0, OPT_EXCL},
                                          {"clean", required_argument, 0, OPT_CLEAN},
                                          {"clean-random", required_argument, 0, OPT_CLEAN_RANDOM},
                                          {"clean-draws", required_argument, 0, OPT_DRAWS},
                                          {"global", no_argument, 0, OPT_GLOBAL},
                                          {"global-tsv", required_argument, 0, OPT_GTSV},
                                          {"distance", required_argument, 0, OPT_DISTANCE},
                                          {"merge", no_argument, 0, OPT_MERGE},
                                          {"queries", required_argument, 0, OPT_QUERIES},
                                          {"help", no_argument, 0, 'h'},
                                          {0, 0, 0, 0}};
    int c;
    while ((c = getopt_long(argc, argv, "k:g:t:S:h", lopts, NULL)) != -1) {
        switch (c) {
        case 'k': parse_ks(&o, optarg), o.k_given = 1; break;
        case 'g':
            o.gallery = erealloc(o.gallery, (size_t)(o.ngal + 1) * sizeof *o.gallery);
            o.gallery[o.ngal++] = optarg;
            break;
        case OPT_GLOBAL: o.global = 1; break;
        case OPT_MERGE: o.merge = 1; break;
        case OPT_QUERIES: shard_parse("--queries", optarg, &o.queries), o.queries_given = 1; break;
        case OPT_DISTANCE: o.cosine = match_distance_parse(optarg), o.distance_given = 1; break;
        case OPT_GTSV: o.global_tsv = optarg, o.global = 1; break;
        case 't': o.threads = (int)parse_long("-t", optarg, 1, 64), o.t_given = 1; break;
        case 'S': o.seed = parse_u64("-S", optarg), o.seed_given = 1; break;
        case OPT_JSON: o.json = optarg; break;
        case OPT_EXCL: o.exclude_id = 1; break;
        case OPT_SUMMARY: o.summary = 1; break;
        case OPT_CLEAN:
        case OPT_CLEAN_RANDOM: {
            const char *name = c == OPT_CLEAN ? "--clean" : "--clean-random";
            if (o.clean)
                usage_die("--clean and --clean-random: give one");
            o.clean = parse_double(name, optarg, 0, 100);
            if (!(o.clean > 0 && o.clean < 100))
                usage_die("%s: the percentage must be above 0 and below 100, got '%s'", name, optarg);
            o.clean_random_only = c == OPT_CLEAN_RANDOM;
            break;
        }
        case OPT_DRAWS:
            o.draws = (int)parse_long("--clean-draws", optarg, 1, RETRIEVAL_MAXMASK - 2), o.draws_given = 1;
            break;
        case 'h': usage_help();
        default: usage_bad_option(argv);
        }
    }
    if (argc - optind > 1 && !o.summary && !o.merge)
        usage_die("at most one input (several only with --summary or --merge)");
    if (o.queries_given && (o.global || o.clean))
        usage_die("--queries: --global and --clean take every query at once (their numbers do not add up from "
                  "shards)");
    if (o.exclude_id && !o.ngal)
        usage_die("--exclude-id needs a gallery (-g); leave-one-out already excludes the item itself");
    if ((o.draws_given || o.seed_given) && !o.clean)
        usage_die("%s only matters with --clean", o.draws_given ? "--clean-draws" : "-S");
    o.input = optind < argc ? argv[optind] : "-";
    if (o.summary || o.merge) {
        const char *mode = o.summary ? "--summary" : "--merge";
        if (o.summary && o.merge)
            usage_die("--summary and --merge: give one");
        if (o.ngal || o.json || o.exclude_id || o.k_given || o.t_given || o.clean || o.global || o.distance_given ||
            o.queries_given)
            usage_die("%s reads retrieval streams: no -k, -t, -g, --json, --exclude-id, --clean, --global, "
                      "--distance or --queries", mode);
        const char *dash = "-";
        const char *const *paths = optind < argc ? (const char *const *)argv + optind : &dash;
        int npaths = optind < argc ? argc - optind : 1;
        if (o.summary)
            summarize(paths, npaths);
        else
            merge(paths, npaths, argc, args);
        free(args);
        free(o.gallery);
        close_stdout();
        return 0;
    }
    /* the output files exist (as temp files) before any work: an unwritable path fails now */
    stdout_not_terminal();
    FILE *jf = o.json ? json_open(o.json, 1) : NULL, *tf = o.global_tsv ? atomic_open(o.global_tsv) : NULL;
    blas_init(args, o.threads);

    stream_reader *qin = stream_open_path(o.input);
    stream_reader **gin = emalloc((size_t)(o.ngal ? o.ngal : 1) * sizeof *gin);
    match_set *Q = match_set_read(qin);
    if (!Q->cls)
        die("%s: no 'class' field: no positives to rank", qin->name);
    int need_u = o.clean && !o.clean_random_only;
    float *qm = match_set_means(Q, NULL);
    if (o.cosine)
        unit_means(qin->name, Q, qm);
    gallery G = o.ngal ? read_galleries(&o, Q, need_u, gin) : self_gallery(Q, qm, need_u);
    /* the queries: records q0 .. q0 + nq - 1 of the input (--queries), all of it by default */
    if (o.queries_given)
        shard_check(&o.queries, Q->n, qin->name);
    int64_t q0 = o.queries_given ? o.queries.from : 0, nq = o.queries_given ? o.queries.to - q0 : Q->n;
    int64_t ng = G.n, kmax = o.ks[o.nk - 1];
    const int32_t *qcls = Q->cls + q0;
    const int64_t *qid = Q->id + q0;
    if (kmax > ng - (o.ngal ? 0 : 1))
        die("Recall@%lld needs at least %lld %s items, the %s has %lld", (long long)kmax,
            (long long)(o.ngal ? kmax : kmax + 1), o.ngal ? "gallery" : "(leave-one-out)",
            o.ngal ? "gallery" : "input", (long long)ng);
    int64_t *exclude = NULL;
    if (!o.ngal) {
        exclude = emalloc((size_t)nq * sizeof *exclude);
        for (int64_t q = 0; q < nq; q++)
            exclude[q] = q0 + q;
    } else if (o.exclude_id) {
        int dup;
        int64_t dup_id;
        match_id_index *t = match_ids_index(G.id, ng, &dup, &dup_id);
        if (dup)
            die("%s: id %lld appears twice in the gallery: --exclude-id needs unique ids",
                o.ngal == 1 ? gin[0]->name : G.names, (long long)dup_id);
        exclude = emalloc((size_t)nq * sizeof *exclude);
        for (int64_t q = 0; q < nq; q++)
            exclude[q] = match_ids_lookup(t, ng, qid[q]);
        free(t);
    }
    /* cleaning: galleries 1 (uncertain dropped) and 2 .. 1 + draws (random) */
    cleaning cl = {0};
    uint32_t *mask = NULL;
    int nmask = 1;
    if (o.clean) {
        double *u = o.clean_random_only ? ecalloc((size_t)(ng ? ng : 1), sizeof *u) : G.u;
        if (!u)
            die("--clean needs an uncertainty: the gallery has neither eta nor var (--clean-random: the random "
                "draws alone)");
        mask = emalloc((size_t)ng * sizeof *mask);
        cl = (cleaning){.percent = o.clean, .draws = o.draws, .uncertainty = o.clean_random_only ? "none" : G.ukind};
        cl.dropped = retrieval_clean_masks(u, ng, o.clean, o.draws, o.seed, mask);
        if (!cl.dropped)
            die("--clean %g drops no item of a gallery of %lld", o.clean, (long long)ng);
        nmask = 2 + o.draws;
        if (o.clean_random_only)
            free(u);
    }
    retrieval_hist *hist = o.global ? retrieval_hist_new() : NULL;
    /* a shard centres on what the whole run centres on: the rounding of the centre respects every
     * query's coordinates (retrieval.h), so the distances are the unsharded run's to the bit */
    retrieval_job J = {qm + q0 * Q->D, qcls, nq, G.mean, G.cls, ng, Q->D, exclude, mask, nmask, o.ks, o.nk,
                       blas_threads(), hist, qm, Q->n};
    retrieval_query *per = emalloc((size_t)nq * sizeof *per);
    retrieval_summary sum[RETRIEVAL_MAXMASK];
    retrieval_run(&J, per, sum);
    if (!sum[0].queries && !o.queries_given) /* a shard may have none: the others have */
        die("no query has a positive (an item of its class) in the gallery: nothing to evaluate");
    if (sum[0].no_positive)
        warn("%lld of %lld queries have no positive in the gallery: left out", (long long)sum[0].no_positive,
             (long long)nq);
    if (o.clean)
        clean_report(&cl, sum, o.nk);
    retrieval_summary cavg; /* pytorch-metric-learning's avg_of_avgs */
    retrieval_class_average(qcls, per, nq, o.nk, &cavg);
    retrieval_global glob = {0};
    if (hist)
        retrieval_hist_summary(hist, &glob);
    double *qeta = uncertainty(Q), pearson = NAN;
    if (qeta) { /* over the records: the queries with a positive */
        double *e = emalloc((size_t)(nq ? nq : 1) * sizeof *e), *a = emalloc((size_t)(nq ? nq : 1) * sizeof *a);
        int64_t m = 0;
        for (int64_t q = 0; q < nq; q++)
            if (per[q].npos) {
                e[m] = (float)qeta[q0 + q];
                a[m++] = per[q].ap;
            }
        pearson = retrieval_pearson(e, a, m);
        free(e);
        free(a);
    }

    stream_header *h = header_new("retrieval", 0);
    header_provenance(h, argc, args);
    if (o.clean)
        header_set_seed(h, o.seed);
    header_add_input(h, qin->header);
    for (int i = 0; i < o.ngal; i++)
        header_add_input(h, gin[i]->header);
    header_copy_meta(h, qin->header);
    header_set_str(h, "retrieval_distance", o.cosine ? "cosine" : "mean");
    header_set_str(h, "retrieval_gallery", o.ngal ? G.names : "leave-one-out");
    header_set_int(h, "gallery_n", ng);
    if (o.ngal > 1)
        set_vector(h, "gallery_part_n", DT_I64, G.part_n, o.ngal);
    header_set_int(h, "queries", sum[0].queries);
    header_set_int(h, "no_positive", sum[0].no_positive);
    int64_t kshape[1] = {o.nk}, kv[RETRIEVAL_MAXK];
    for (int j = 0; j < o.nk; j++)
        kv[j] = o.ks[j];
    set_vector(h, "recall_at", DT_I64, kv, o.nk);
    set_means(h, &sum[0], &cavg, o.nk);
    if (qeta)
        header_set_float(h, "eta_ap_pearson", pearson);
    if (hist) {
        header_set_int(h, "global_pairs", glob.pairs);
        header_set_int(h, "global_positives", glob.positives);
        header_set_float(h, "global_ap", glob.ap);
        header_set_float(h, "global_pr_auc", glob.pr_auc);
        header_set_int(h, "global_points", glob.points);
        header_set_int(h, "global_mantissa_bits", RETRIEVAL_GLOBAL_MANTISSA);
    }
    if (o.clean) {
        header_set_float(h, "clean_percent", cl.percent);
        header_set_int(h, "clean_dropped", cl.dropped);
        header_set_int(h, "clean_draws", cl.draws);
        header_set_str(h, "clean_uncertainty", cl.uncertainty);
        if (clean_has_uncertain(&cl)) {
            header_set_float(h, "clean_uncertain_map", cl.uncertain_map);
            set_vector(h, "clean_uncertain_recall", DT_F64, cl.uncertain_recall, o.nk);
        }
        header_set_float(h, "clean_random_map", cl.random_map);
        header_set_float(h, "clean_random_map_sd", cl.random_map_sd);
        set_vector(h, "clean_random_recall", DT_F64, cl.random_recall, o.nk);
    }
    if (o.queries_given) /* after every other key: --merge deletes them, the rest keeps its order */
        shard_set_meta(h, &o.queries, Q->n);
    header_add_field(h, "id", DT_I64, 0, NULL);
    header_add_field(h, "class", DT_I32, 0, NULL);
    header_add_field(h, "ap", DT_F32, 0, NULL);
    header_add_field(h, "rprec", DT_F32, 0, NULL);
    header_add_field(h, "map_r", DT_F32, 0, NULL);
    header_add_field(h, "p1", DT_U8, 0, NULL);
    header_add_field(h, "recall", DT_U8, 1, kshape);
    header_add_field(h, "npos", DT_I32, 0, NULL);
    header_add_field(h, "first_rank", DT_I32, 0, NULL);
    if (qeta)
        header_add_field(h, "eta", DT_F32, 0, NULL);
    int64_t nocc[1] = {Q->nocc};
    if (Q->occ)
        header_add_field(h, "occluded", DT_U8, 1, nocc);
    stream_writer *w = stream_create(stdout, h);
    for (int64_t q = 0; q < nq; q++) {
        const retrieval_query *r = &per[q];
        if (!r->npos)
            continue;
        float eta = qeta ? (float)qeta[q0 + q] : 0;
        void *data[11] = {(void *)&qid[q], (void *)&qcls[q], (void *)&r->ap, (void *)&r->rprec, (void *)&r->map_r,
                          (void *)&r->p1, (void *)r->recall, (void *)&r->npos, (void *)&r->r1};
        int f = 9;
        if (qeta)
            data[f++] = &eta;
        if (Q->occ)
            data[f++] = Q->occ + (q0 + q) * Q->nocc;
        stream_write_data(w, data, 0);
    }
    /* the files' data is safe first, then the stream whole, then the files in place */
    if (jf) {
        print_summary(jf, &sum[0], &cavg, ng, o.ngal ? "gallery" : "leave-one-out", o.cosine ? "cosine" : "euclidean",
                      o.ks, o.nk, o.clean ? &cl : NULL, qeta != NULL, pearson, hist ? &glob : NULL);
        atomic_sync(jf);
    }
    if (tf) {
        write_global_tsv(tf, hist, o.cosine);
        atomic_sync(tf);
    }
    stream_finish(w);
    close_stdout();
    if (jf)
        atomic_commit(jf);
    if (tf)
        atomic_commit(tf);
    retrieval_hist_free(hist);
    free(qeta);
    free(per);
    if (o.ngal) {
        free(G.mean);
        free(G.cls);
        free(G.id);
    }
    free(G.u);
    free(G.part_n);
    free(G.names);
    free(qm);
    free(mask);
    free(exclude);
    header_free(h);
    match_set_free(Q);
    for (int i = 0; i < o.ngal; i++)
        stream_close(gin[i]);
    free(gin);
    free(o.gallery);
    stream_close(qin);
    free(args);
    return 0;
}
