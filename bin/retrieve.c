/* retrieve: the retrieval evaluation of metric learning (Recall@k, P@1, R-precision, MAP@R, AP,
 * mAP), leave-one-out or against a gallery, and gallery cleaning by uncertainty against random
 * cleaning (hetero-triplet-taha-2019 section 5); writes kind `retrieval`. Definitions, tie rule
 * and the blocked computation: lib/retrieval.h.
 */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "blas.h"
#include "match.h"
#include "metrics.h"
#include "retrieval.h"
#include "stream.h"
#include "util.h"

static const char *usage =
    "usage: retrieve [-k K1,K2,...] [-g GALLERY [--exclude-id]]\n"
    "                [--clean X | --clean-random X [--clean-draws R] [-S SEED]]\n"
    "                [-t THREADS] [--json FILE] [INPUT]\n"
    "       retrieve --summary [INPUT]\n"
    "  Reads an `embeddings` (or `eta`) stream of queries (INPUT or stdin) and ranks, for each, the\n"
    "  gallery: leave-one-out within INPUT (the query itself never counts) or with -g the GALLERY's\n"
    "  items. Distance: Euclidean between the embeddings' means (a mixture: the average of its\n"
    "  component means), as knn -d mean, as float32 squared distances from sgemm in blocks: memory\n"
    "  grows with the gallery, never with queries x gallery. Equal distances: the lower gallery\n"
    "  record index ranks first (as in knn). A query's positives are the gallery items of its class;\n"
    "  with their ranks r_1 < ... < r_R (R = npos):\n"
    "    recall[j] 1 if r_1 <= k_j                p1     1 if r_1 = 1\n"
    "    rprec     #{i : r_i <= R} / R            map_r  (sum of i / r_i over r_i <= R) / R (MAP@R)\n"
    "    ap        (sum of i / r_i over all i) / R: average precision over the whole gallery\n"
    "  Writes kind `retrieval`, one record per query with a positive: id, class, ap, rprec, map_r,\n"
    "  p1, recall [nk], npos, eta (the input's; else, when it has var, the mean of var over C x D)\n"
    "  and occluded when the input has it. With an eta, the meta and JSON also get eta_ap_pearson:\n"
    "  the Pearson correlation of eta and ap over the records (Taha et al.'s Figure 6; null when\n"
    "  eta is constant). A query with no positive in the gallery is left out of\n"
    "  the stream and of every mean, and counted (meta no_positive; a warning). The header's meta\n"
    "  gets recall_at (the k), recall, p1, rprec, map_r, map (means over the records), queries,\n"
    "  no_positive, gallery_n.\n"
    "  -k K1,K2,...   the k of Recall@k, increasing, at most 16 (default 1,2,4,8)\n"
    "  -g GALLERY     an embedding stream to search instead of the input itself\n"
    "  --exclude-id   with -g: never rank the gallery item with the query's own id (for twin sets)\n"
    "  --clean X      also drop the X % (0 < X < 100; floor(X n / 100) items) most uncertain gallery\n"
    "                 items (the gallery's eta, else its mean var; equal values in a random order\n"
    "                 from SEED), and R times as many items drawn at random; the mAP and Recall@k\n"
    "                 of each cleaned gallery (over the queries with a positive left in it; queries\n"
    "                 are never dropped) go into the meta and the JSON: clean_uncertain_map,\n"
    "                 clean_uncertain_recall, clean_random_map (mean over the draws),\n"
    "                 clean_random_map_sd (their sd, R - 1 in the denominator), clean_random_recall\n"
    "  --clean-random X  only the random draws of --clean (for a model without an uncertainty: the\n"
    "                 baseline of the comparison); clean_uncertainty is \"none\"\n"
    "  --clean-draws R  random draws (default 5, at most 30)\n"
    "  -S SEED        seed of the draws and of the order of equal uncertainties (default 714)\n"
    "  -t THREADS     threads for the distance blocks (default: OPENBLAS_NUM_THREADS, else 1); the\n"
    "                 output does not depend on it\n"
    "  --json FILE    also write a one-line JSON summary to FILE (e.g. /dev/stderr); it is opened\n"
    "                 before any work and committed only when the stream is whole\n"
    "  --summary      read a `retrieval` stream instead and print its JSON summary line to stdout:\n"
    "                 {\"program\": \"retrieve\", \"queries\": N, \"no_positive\": M, \"gallery\": G,\n"
    "                  \"mode\": ..., \"recall_at\": [1, ...], \"recall\": [...], \"p1\": P, \"rprec\": ...,\n"
    "                  \"map_r\": ..., \"map\": ... [, \"clean_percent\": X, ...]}\n"
    "  -h             this help\n";

typedef struct {
    int summary;
    int ks[RETRIEVAL_MAXK], nk, k_given, t_given, draws_given, seed_given;
    const char *gallery;
    int exclude_id;
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
/* random cleaning only: no uncertain gallery reported */
static int clean_has_uncertain(const cleaning *c) { return strcmp(c->uncertainty, "none") != 0; }

static void parse_ks(options *o, const char *s)
{
    char *copy = estrdup(s), *save = NULL;
    o->nk = 0;
    for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (o->nk == RETRIEVAL_MAXK)
            usage_die("-k: at most %d values", RETRIEVAL_MAXK);
        int k = (int)parse_long("-k", t, 1, 1000000000);
        if (o->nk && k <= o->ks[o->nk - 1])
            usage_die("-k: the k must increase, as in 1,2,4,8: '%s'", s);
        o->ks[o->nk++] = k;
    }
    if (!o->nk)
        usage_die("-k: expected K1,K2,... like 1,2,4,8, got '%s'", s);
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

static void print_summary(FILE *f, const retrieval_summary *s, int64_t ng, const char *mode, const int *ks, int nk,
                          const cleaning *c, int has_eta, double pearson)
{
    fprintf(f, "{\"program\": \"retrieve\", \"queries\": %lld, \"no_positive\": %lld, \"gallery\": %lld, \"mode\": ",
            (long long)s->queries, (long long)s->no_positive, (long long)ng);
    json_string(f, mode, strlen(mode));
    fputs(", \"recall_at\": [", f);
    for (int j = 0; j < nk; j++)
        fprintf(f, "%s%d", j ? ", " : "", ks[j]);
    fputs("], \"recall\": ", f);
    json_array(f, s->recall, nk);
    const char *names[4] = {"p1", "rprec", "map_r", "map"};
    double vals[4] = {s->p1, s->rprec, s->map_r, s->map};
    for (int i = 0; i < 4; i++) {
        fprintf(f, ", \"%s\": ", names[i]);
        metrics_json_num(f, vals[i]);
    }
    if (has_eta) {
        fputs(", \"eta_ap_pearson\": ", f);
        metrics_json_num(f, pearson);
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

/* --summary: the numbers of a finished `retrieval` stream, the means from its records */
static void summarize(const char *path)
{
    stream_reader *in = stream_open_path(path);
    stream_expect_kind(in, "retrieval");
    const stream_header *h = in->header;
    int ai = stream_field_typed(h, "ap", DT_F32), ri = stream_field_typed(h, "rprec", DT_F32),
        mi = stream_field_typed(h, "map_r", DT_F32), pi = stream_field_typed(h, "p1", DT_U8),
        ki = stream_field_typed(h, "recall", DT_U8), ni = stream_field_typed(h, "npos", DT_I32);
    int nk = (int)shape_numel(h->fields[ki].ndim, h->fields[ki].shape);
    if (nk < 1 || nk > RETRIEVAL_MAXK)
        die("%s: field 'recall' holds %d values, expected 1 to %d", in->name, nk, RETRIEVAL_MAXK);
    double kd[RETRIEVAL_MAXK];
    int ks[RETRIEVAL_MAXK];
    meta_vector(in, "recall_at", kd, nk);
    for (int j = 0; j < nk; j++)
        ks[j] = (int)kd[j];
    retrieval_summary s = {0};
    stream_record rec = {0};
    int ei = header_field_find(h, "eta");
    if (ei >= 0)
        ei = stream_field_typed(h, "eta", DT_F32);
    double *eta = NULL, *ap = NULL;
    size_t cap = 0;
    while (stream_read(in, &rec)) {
        retrieval_query q = {.ap = *(const float *)rec.t[ai].data, .rprec = *(const float *)rec.t[ri].data,
                             .map_r = *(const float *)rec.t[mi].data, .p1 = *(const uint8_t *)rec.t[pi].data,
                             .npos = *(const int32_t *)rec.t[ni].data};
        memcpy(q.recall, rec.t[ki].data, (size_t)nk);
        if (ei >= 0) {
            if ((size_t)s.queries == cap) {
                cap = cap ? 2 * cap : 1024;
                eta = erealloc(eta, cap * sizeof *eta);
                ap = erealloc(ap, cap * sizeof *ap);
            }
            eta[s.queries] = *(const float *)rec.t[ei].data;
            ap[s.queries] = q.ap;
        }
        if (q.npos < 1)
            die("%s: record %lld has npos %d: a retrieval record has a positive", in->name, in->count - 1, q.npos);
        retrieval_summary_add(&s, &q, nk);
    }
    if (!s.queries)
        die("%s: the stream has no records", in->name);
    retrieval_summary_finish(&s, nk);
    s.no_positive = header_int(h, "no_positive", 0);
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
            meta_vector(in, "clean_uncertain_recall", c.uncertain_recall, nk);
        meta_vector(in, "clean_random_recall", c.random_recall, nk);
    }
    const char *gal = header_str(h, "retrieval_gallery", "?");
    double r = ei >= 0 ? retrieval_pearson(eta, ap, s.queries) : NAN;
    print_summary(stdout, &s, header_int(h, "gallery_n", -1), !strcmp(gal, "leave-one-out") ? gal : "gallery", ks, nk,
                  cp, ei >= 0, r);
    free(eta);
    free(ap);
    record_free(&rec);
    stream_close(in);
}

/* each item's uncertainty: its eta, else the mean of its var over C x D; NULL without either */
static double *uncertainty(const match_set *S)
{
    if (!S->eta && !S->var)
        return NULL;
    double *u = emalloc((size_t)S->n * sizeof *u);
    size_t cd = (size_t)S->C * S->D;
    for (int64_t i = 0; i < S->n; i++) {
        if (S->eta) {
            u[i] = S->eta[i];
            continue;
        }
        double s = 0;
        for (size_t e = 0; e < cd; e++)
            s += S->var[i * cd + e];
        u[i] = s / (double)cd;
    }
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

int main(int argc, char **argv)
{
    util_init(argv[0]);
    util_usage = usage;
    char **args = emalloc((size_t)(argc + 1) * sizeof *args); /* before getopt permutes argv */
    memcpy(args, argv, (size_t)(argc + 1) * sizeof *args);
    options o = {.ks = {1, 2, 4, 8}, .nk = 4, .draws = 5, .seed = 714};
    enum { OPT_JSON = 256, OPT_EXCL, OPT_SUMMARY, OPT_CLEAN, OPT_CLEAN_RANDOM, OPT_DRAWS };
    static const struct option lopts[] = {{"json", required_argument, 0, OPT_JSON},
                                          {"summary", no_argument, 0, OPT_SUMMARY},
                                          {"exclude-id", no_argument, 0, OPT_EXCL},
                                          {"clean", required_argument, 0, OPT_CLEAN},
                                          {"clean-random", required_argument, 0, OPT_CLEAN_RANDOM},
                                          {"clean-draws", required_argument, 0, OPT_DRAWS},
                                          {"help", no_argument, 0, 'h'},
                                          {0, 0, 0, 0}};
    int c;
    opterr = 0; /* our own message, then the usage */
    while ((c = getopt_long(argc, argv, "k:g:t:S:h", lopts, NULL)) != -1) {
        switch (c) {
        case 'k': parse_ks(&o, optarg), o.k_given = 1; break;
        case 'g': o.gallery = optarg; break;
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
        default: usage_die("unknown option or missing value: %s", argv[optind - 1]);
        }
    }
    if (argc - optind > 1)
        usage_die("at most one input");
    if (o.exclude_id && !o.gallery)
        usage_die("--exclude-id needs a gallery (-g); leave-one-out already excludes the item itself");
    if ((o.draws_given || o.seed_given) && !o.clean)
        usage_die("%s only matters with --clean", o.draws_given ? "--clean-draws" : "-S");
    o.input = optind < argc ? argv[optind] : "-";
    if (o.summary) {
        if (o.gallery || o.json || o.exclude_id || o.k_given || o.t_given || o.clean)
            usage_die("--summary reads a retrieval stream: no -k, -t, -g, --json, --exclude-id or --clean");
        summarize(o.input);
        free(args);
        close_stdout();
        return 0;
    }
    /* the summary file exists (as a temp file) before any work: an unwritable path fails now */
    FILE *jf = o.json ? atomic_open(o.json) : NULL;
    blas_init(args, o.threads);

    stream_reader *qin = stream_open_path(o.input), *gin = NULL;
    match_set *Q = match_set_read(qin), *G = Q;
    if (o.gallery) {
        gin = stream_open_path(o.gallery);
        G = match_set_read(gin);
        if (G->D != Q->D)
            die("the gallery has %d dimensions, the queries %d", G->D, Q->D);
    }
    if (!Q->cls || !G->cls)
        die("%s: no 'class' field: no positives to rank", !Q->cls ? qin->name : gin->name);
    int64_t nq = Q->n, ng = G->n, kmax = o.ks[o.nk - 1];
    if (kmax > ng - (o.gallery ? 0 : 1))
        die("Recall@%lld needs at least %lld %s items, the %s has %lld", (long long)kmax,
            (long long)(o.gallery ? kmax : kmax + 1), o.gallery ? "gallery" : "(leave-one-out)",
            o.gallery ? "gallery" : "input", (long long)ng);
    int64_t *exclude = NULL;
    if (!o.gallery) {
        exclude = emalloc((size_t)nq * sizeof *exclude);
        for (int64_t q = 0; q < nq; q++)
            exclude[q] = q;
    } else if (o.exclude_id) {
        int dup;
        int64_t dup_id;
        match_id_index *t = match_ids_index(G->id, ng, &dup, &dup_id);
        if (dup)
            die("%s: id %lld appears twice in the gallery: --exclude-id needs unique ids", gin->name,
                (long long)dup_id);
        exclude = emalloc((size_t)nq * sizeof *exclude);
        for (int64_t q = 0; q < nq; q++)
            exclude[q] = match_ids_lookup(t, ng, Q->id[q]);
        free(t);
    }
    /* cleaning: galleries 1 (uncertain dropped) and 2 .. 1 + draws (random) */
    cleaning cl = {0};
    uint32_t *mask = NULL;
    int nmask = 1;
    if (o.clean) {
        double *u = o.clean_random_only ? ecalloc((size_t)(ng ? ng : 1), sizeof *u) : uncertainty(G);
        if (!u)
            die("--clean needs an uncertainty: the gallery has neither eta nor var (--clean-random: the random "
                "draws alone)");
        mask = emalloc((size_t)ng * sizeof *mask);
        cl = (cleaning){.percent = o.clean, .draws = o.draws,
                        .uncertainty = o.clean_random_only ? "none" : G->eta ? "eta" : "var"};
        cl.dropped = retrieval_clean_masks(u, ng, o.clean, o.draws, o.seed, mask);
        if (!cl.dropped)
            die("--clean %g drops no item of a gallery of %lld", o.clean, (long long)ng);
        nmask = 2 + o.draws;
        free(u);
    }
    float *qm = match_set_means(Q, NULL), *gm = G == Q ? qm : match_set_means(G, NULL);
    retrieval_job J = {qm, Q->cls, nq, gm, G->cls, ng, Q->D, exclude, mask, nmask, o.ks, o.nk, blas_threads()};
    retrieval_query *per = emalloc((size_t)nq * sizeof *per);
    retrieval_summary sum[RETRIEVAL_MAXMASK];
    retrieval_run(&J, per, sum);
    if (!sum[0].queries)
        die("no query has a positive (an item of its class) in the gallery: nothing to evaluate");
    if (sum[0].no_positive)
        warn("%lld of %lld queries have no positive in the gallery: left out", (long long)sum[0].no_positive,
             (long long)nq);
    if (o.clean)
        clean_report(&cl, sum, o.nk);
    double *qeta = uncertainty(Q), pearson = NAN;
    if (qeta) { /* over the records: the queries with a positive */
        double *e = emalloc((size_t)(nq ? nq : 1) * sizeof *e), *a = emalloc((size_t)(nq ? nq : 1) * sizeof *a);
        int64_t m = 0;
        for (int64_t q = 0; q < nq; q++)
            if (per[q].npos) {
                e[m] = (float)qeta[q];
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
    if (gin)
        header_add_input(h, gin->header);
    header_copy_meta(h, qin->header);
    header_set_str(h, "retrieval_distance", "mean");
    header_set_str(h, "retrieval_gallery", o.gallery ? o.gallery : "leave-one-out");
    header_set_int(h, "gallery_n", ng);
    header_set_int(h, "queries", sum[0].queries);
    header_set_int(h, "no_positive", sum[0].no_positive);
    int64_t kshape[1] = {o.nk}, kv[RETRIEVAL_MAXK];
    for (int j = 0; j < o.nk; j++)
        kv[j] = o.ks[j];
    set_vector(h, "recall_at", DT_I64, kv, o.nk);
    set_vector(h, "recall", DT_F64, sum[0].recall, o.nk);
    header_set_float(h, "p1", sum[0].p1);
    header_set_float(h, "rprec", sum[0].rprec);
    header_set_float(h, "map_r", sum[0].map_r);
    header_set_float(h, "map", sum[0].map);
    if (qeta)
        header_set_float(h, "eta_ap_pearson", pearson);
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
    header_add_field(h, "id", DT_I64, 0, NULL);
    header_add_field(h, "class", DT_I32, 0, NULL);
    header_add_field(h, "ap", DT_F32, 0, NULL);
    header_add_field(h, "rprec", DT_F32, 0, NULL);
    header_add_field(h, "map_r", DT_F32, 0, NULL);
    header_add_field(h, "p1", DT_U8, 0, NULL);
    header_add_field(h, "recall", DT_U8, 1, kshape);
    header_add_field(h, "npos", DT_I32, 0, NULL);
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
        float eta = qeta ? (float)qeta[q] : 0;
        void *data[10] = {&Q->id[q], &Q->cls[q], (void *)&r->ap, (void *)&r->rprec, (void *)&r->map_r,
                          (void *)&r->p1, (void *)r->recall, (void *)&r->npos};
        int f = 8;
        if (qeta)
            data[f++] = &eta;
        if (Q->occ)
            data[f++] = Q->occ + q * Q->nocc;
        stream_write_data(w, data, 0);
    }
    /* the summary's data is safe first, then the stream whole, then the summary in place */
    if (jf) {
        print_summary(jf, &sum[0], ng, o.gallery ? "gallery" : "leave-one-out", o.ks, o.nk, o.clean ? &cl : NULL,
                      qeta != NULL, pearson);
        atomic_sync(jf);
    }
    stream_finish(w);
    close_stdout();
    if (jf)
        atomic_commit(jf);
    free(qeta);
    free(per);
    if (gm != qm)
        free(gm);
    free(qm);
    free(mask);
    free(exclude);
    header_free(h);
    if (G != Q)
        match_set_free(G);
    match_set_free(Q);
    if (gin)
        stream_close(gin);
    stream_close(qin);
    free(args);
    return 0;
}
