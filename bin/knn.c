/* knn: k-nearest-neighbour identification of embeddings (hib-oh-2019 section 4.3, k = 5), leave-one-
 * out within one set or queries against a gallery; writes kind `knn`. Search and vote: lib/metrics.h.
 */
#include <float.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "blas.h"
#include "match.h"
#include "metrics.h"
#include "shard.h"
#include "stream.h"
#include "util.h"

static const char *usage =
    "usage: knn [-k K] [-g GALLERY [--exclude-id]] [-d mean|expected] [--distance euclidean|cosine]\n"
    "           [--queries FROM:TO] [-t THREADS] [--json FILE] [INPUT]\n"
    "       knn --summary [INPUT | SHARD...]\n"
    "       knn --merge SHARD...\n"
    "  k-nearest-neighbour classification of embeddings, leave-one-out or against a gallery.\n";

typedef struct {
    int summary;
    int k, k_given, d_given, t_given;
    int cosine;            /* --distance cosine */
    int distance_given;
    int merge;             /* --merge */
    shard_range queries;   /* --queries FROM:TO */
    int queries_given;
    const char *gallery;
    int exclude_id;
    int expected;
    int threads;
    const char *json;
    const char *input;
} options;

static void print_summary(FILE *f, int64_t n, int k, double accuracy, const double *recall_at,
                          const char *distance, int64_t ng, const char *mode)
{
    fprintf(f, "{\"program\": \"knn\", \"n\": %lld, \"k\": %d, \"accuracy\": ", (long long)n, k);
    metrics_json_num(f, accuracy);
    fputs(", \"recall\": [", f);
    for (int r = 0; r < k; r++) {
        if (r)
            fputs(", ", f);
        metrics_json_num(f, recall_at[r]);
    }
    fprintf(f, "], \"distance\": \"%s\", \"gallery\": %lld, \"mode\": \"%s\"}\n", distance, (long long)ng, mode);
}

/* --distance cosine: the means m (S's, n x D) as unit vectors; a zero mean is refused by name */
static void unit_means(const char *name, const match_set *S, float *m)
{
    int64_t z = match_normalise(m, S->n, S->D);
    if (z >= 0)
        die("%s: record %lld (id %lld): its mean is the zero vector, which has no direction for --distance cosine",
            name, (long long)z, (long long)S->id[z]);
}

/* the meta that the shards of one knn run share */
static const char *const knn_same[] = {"k", "knn_distance", "knn_gallery", "knn_gallery_n", "eta_source", NULL};

/* the numbers of knn streams (one, or the shards of one run in query order): records n, correct
 * count, recall_at[k] (the means); k from the field */
static void knn_numbers(shard_set *S, int64_t *n, double *correct, double **recall_at, int *k)
{
    const stream_header *h = S->in[0]->header;
    int ci = stream_field_typed(h, "correct", DT_U8), ri = stream_field_typed(h, "recall", DT_U8);
    *k = (int)shape_numel(h->fields[ri].ndim, h->fields[ri].shape);
    *recall_at = ecalloc((size_t)(*k ? *k : 1), sizeof **recall_at);
    *n = 0;
    *correct = 0;
    stream_record rec = {0};
    for (int i = 0; i < S->n; i++) {
        int64_t before = *n;
        while (stream_read(S->in[i], &rec)) {
            *correct += *(const uint8_t *)rec.t[ci].data != 0;
            for (int r = 0; r < *k; r++)
                (*recall_at)[r] += ((const uint8_t *)rec.t[ri].data)[r] != 0;
            (*n)++;
        }
        int64_t want = S->sharded ? header_int(S->in[i]->header, "queries_to", 0) -
                                        header_int(S->in[i]->header, "queries_from", 0)
                                  : *n - before;
        if (*n - before != want)
            die("%s: %lld records, but the shard's queries are %lld", S->in[i]->name, (long long)(*n - before),
                (long long)want);
    }
    if (!*n)
        die("%s: the stream has no records", S->in[0]->name);
    for (int r = 0; r < *k; r++)
        (*recall_at)[r] /= (double)*n;
    record_free(&rec);
}

/* --summary: the numbers of a finished `knn` stream, or of the shards of one run */
static void summarize(const char *const *paths, int npaths)
{
    shard_set *S = shard_open(paths, npaths, "knn", knn_same);
    int64_t n;
    double correct, *recall_at;
    int k;
    knn_numbers(S, &n, &correct, &recall_at, &k);
    const stream_header *h = S->in[0]->header;
    const char *gal = header_str(h, "knn_gallery", "?");
    print_summary(stdout, n, k, correct / (double)n, recall_at, header_str(h, "knn_distance", "?"),
                  header_int(h, "knn_gallery_n", -1), !strcmp(gal, "leave-one-out") ? gal : "gallery");
    free(recall_at);
    shard_close(S);
}

/* --merge: the shards of one run as the unsharded run's stream */
static void merge(const char *const *paths, int npaths, int argc, char **argv)
{
    shard_set *S = shard_open(paths, npaths, "knn", knn_same);
    if (!S->sharded)
        die("%s: not a shard (no queries_from): nothing to merge", S->in[0]->name);
    int64_t n;
    double correct, *recall_at;
    int k;
    knn_numbers(S, &n, &correct, &recall_at, &k);
    shard_rewind(S);
    stream_header *h = shard_header(S, argc, argv);
    header_set_float(h, "accuracy", correct / (double)n);
    int64_t kshape[1] = {k};
    tensor *rt = tensor_view(DT_F64, 1, kshape, recall_at);
    header_set_tensor(h, "recall_at", rt);
    tensor_free(rt);
    stream_writer *w = stream_create(stdout, h);
    stream_record rec = {0};
    for (int i = 0; i < S->n; i++)
        while (stream_read(S->in[i], &rec))
            stream_write_record(w, &rec);
    stream_finish(w);
    record_free(&rec);
    header_free(h);
    free(recall_at);
    shard_close(S);
}

int main(int argc, char **argv)
{
    util_start(argc, argv, usage);
    char **args = emalloc((size_t)(argc + 1) * sizeof *args); /* before getopt permutes argv */
    memcpy(args, argv, (size_t)(argc + 1) * sizeof *args);
    options o = {.k = 5};
    enum { OPT_JSON = 256, OPT_EXCL, OPT_SUMMARY, OPT_DISTANCE, OPT_MERGE, OPT_QUERIES };
    static const struct option lopts[] = {{"json", required_argument, 0, OPT_JSON},
                                          {"summary", no_argument, 0, OPT_SUMMARY},
                                          {"exclude-id", no_argument, 0, OPT_EXCL},
                                          {"distance", required_argument, 0, OPT_DISTANCE},
                                          {"merge", no_argument, 0, OPT_MERGE},
                                          {"queries", required_argument, 0, OPT_QUERIES},
                                          {"help", no_argument, 0, 'h'},
                                          {0, 0, 0, 0}};
    int c;
    while ((c = getopt_long(argc, argv, "k:g:d:t:h", lopts, NULL)) != -1) {
        switch (c) {
        case 'k': o.k = (int)parse_long("-k", optarg, 1, 1000), o.k_given = 1; break;
        case 'g': o.gallery = optarg; break;
        case 'd':
            o.d_given = 1;
            if (!strcmp(optarg, "mean"))
                o.expected = 0;
            else if (!strcmp(optarg, "expected"))
                o.expected = 1;
            else
                usage_die("-d: '%s' is neither mean nor expected", optarg);
            break;
        case 't': o.threads = (int)parse_long("-t", optarg, 1, 64), o.t_given = 1; break;
        case OPT_JSON: o.json = optarg; break;
        case OPT_EXCL: o.exclude_id = 1; break;
        case OPT_SUMMARY: o.summary = 1; break;
        case OPT_MERGE: o.merge = 1; break;
        case OPT_QUERIES: shard_parse("--queries", optarg, &o.queries), o.queries_given = 1; break;
        case OPT_DISTANCE: o.cosine = match_distance_parse(optarg), o.distance_given = 1; break;
        case 'h': usage_help();
        default: usage_bad_option(argv);
        }
    }
    if (argc - optind > 1 && !o.summary && !o.merge)
        usage_die("at most one input (several only with --summary or --merge)");
    if (o.exclude_id && !o.gallery)
        usage_die("--exclude-id needs a gallery (-g); leave-one-out already excludes the item itself");
    if (o.cosine && o.expected)
        usage_die("--distance cosine ranks the means by their direction: not with -d expected");
    o.input = optind < argc ? argv[optind] : "-";
    if (o.summary || o.merge) {
        const char *mode = o.summary ? "--summary" : "--merge";
        if (o.summary && o.merge)
            usage_die("--summary and --merge: give one");
        if (o.gallery || o.json || o.exclude_id || o.k_given || o.d_given || o.t_given || o.distance_given ||
            o.queries_given)
            usage_die("%s reads knn streams: no -k, -d, --distance, -t, -g, --json, --exclude-id or --queries", mode);
        const char *dash = "-";
        const char *const *paths = optind < argc ? (const char *const *)argv + optind : &dash;
        int npaths = optind < argc ? argc - optind : 1;
        if (o.summary)
            summarize(paths, npaths);
        else
            merge(paths, npaths, argc, args);
        free(args);
        close_stdout();
        return 0;
    }
    /* the summary file exists (as a temp file) before any work: an unwritable path fails now */
    stdout_not_terminal();
    FILE *jf = o.json ? json_open(o.json, 1) : NULL;
    blas_init(args, o.threads);
    int threads = blas_threads();

    stream_reader *qin = stream_open_path(o.input);
    match_set *Q = match_set_read(qin);
    stream_reader *gin = NULL;
    match_set *G = Q;
    if (o.gallery) {
        gin = stream_open_path(o.gallery);
        G = match_set_read(gin);
        if (G->D != Q->D)
            die("the gallery has %d dimensions, the queries %d", G->D, Q->D);
    }
    if (!Q->cls || !G->cls)
        die("%s: no 'class' field: nothing to identify", !Q->cls ? qin->name : gin->name);
    int k = o.k, D = Q->D;
    /* the queries: records q0 .. q0 + nq - 1 of the input (--queries), all of it by default */
    if (o.queries_given)
        shard_check(&o.queries, Q->n, qin->name);
    int64_t q0 = o.queries_given ? o.queries.from : 0, nq = o.queries_given ? o.queries.to - q0 : Q->n, ng = G->n;
    const int32_t *qcls = Q->cls + q0;
    const int64_t *qid = Q->id + q0;
    if (ng - (o.gallery ? 0 : 1) < k)
        die("k = %d needs at least %d %s items, the input has %lld", k, o.gallery ? k : k + 1,
            o.gallery ? "gallery" : "(leave-one-out)", (long long)ng);

    int64_t *exclude = NULL;
    if (!o.gallery) {
        exclude = emalloc((size_t)nq * sizeof *exclude);
        for (int64_t q = 0; q < nq; q++)
            exclude[q] = q0 + q;
    } else if (o.exclude_id) {
        int dup;
        int64_t dup_id;
        match_id_index *t = match_ids_index(G->id, ng, &dup, &dup_id);
        if (dup)
            die("%s: id %lld appears twice in the gallery: --exclude-id needs unique ids", gin->name,
                (long long)dup_id);
        exclude = emalloc((size_t)nq * sizeof *exclude);
        for (int64_t q = 0; q < nq; q++)
            exclude[q] = match_ids_lookup(t, ng, qid[q]);
        free(t);
    }

    double *qtv = NULL, *gtv = NULL;
    /* the queries' uncertainty: their eta, else their mean var (retrieve's rule), else none */
    double *qu = emalloc((size_t)nq * sizeof *qu);
    const char *eta_source = metrics_item_uncertainty(Q->eta ? Q->eta + q0 : NULL,
                                                      Q->var ? Q->var + q0 * Q->C * Q->D : NULL, nq,
                                                      (int64_t)Q->C * Q->D, qu);
    float *qeta = NULL;
    if (eta_source) {
        qeta = emalloc((size_t)nq * sizeof *qeta);
        for (int64_t q = 0; q < nq; q++)
            qeta[q] = (float)qu[q];
    }
    free(qu);
    float *qm = match_set_means(Q, o.expected ? &qtv : NULL);
    float *gm = G == Q ? qm : match_set_means(G, o.expected ? &gtv : NULL);
    if (G == Q)
        gtv = qtv;
    if (o.cosine) {
        unit_means(qin->name, Q, qm);
        if (gm != qm)
            unit_means(gin->name, G, gm);
    }
    int64_t *nbr = emalloc((size_t)nq * k * sizeof *nbr);
    double *d2 = emalloc((size_t)nq * k * sizeof *d2);
    metrics_knn(qm + q0 * D, qtv ? qtv + q0 : NULL, nq, gm, gtv, ng, D, k, exclude, threads, nbr, d2);
    for (int64_t q = 0; q < nq; q++)
        if (!(sqrt(d2[q * k]) <= FLT_MAX))
            die("%s: record %lld: the distance to its nearest neighbour, %g, is beyond float32 (nn_dist)",
                qin->name, (long long)(q0 + q), sqrt(d2[q * k]));

    /* votes and recall, then the stream */
    int32_t *pred = emalloc((size_t)nq * sizeof *pred);
    uint8_t *recall = emalloc((size_t)nq * k);
    double *recall_at = ecalloc((size_t)k, sizeof *recall_at), correct_sum = 0;
    int32_t *ncls = emalloc((size_t)k * sizeof *ncls);
    double *ndist = emalloc((size_t)k * sizeof *ndist);
    for (int64_t q = 0; q < nq; q++) {
        int hit = 0;
        for (int r = 0; r < k; r++) {
            ncls[r] = G->cls[nbr[q * k + r]];
            ndist[r] = o.cosine ? d2[q * k + r] / 2 : sqrt(d2[q * k + r]);
            hit |= ncls[r] == qcls[q];
            recall[q * k + r] = (uint8_t)hit;
            recall_at[r] += hit;
        }
        pred[q] = metrics_vote(ncls, ndist, k);
        correct_sum += pred[q] == qcls[q];
    }
    for (int r = 0; r < k; r++)
        recall_at[r] /= (double)nq;

    stream_header *h = header_new("knn", 0);
    header_provenance(h, argc, args);
    header_add_input(h, qin->header);
    if (gin)
        header_add_input(h, gin->header);
    header_copy_meta(h, qin->header);
    header_set_int(h, "k", k);
    const char *distance = o.cosine ? "cosine" : o.expected ? "expected" : "mean";
    header_set_str(h, "knn_distance", distance);
    header_set_str(h, "knn_gallery", o.gallery ? o.gallery : "leave-one-out");
    header_set_int(h, "knn_gallery_n", ng);
    header_set_float(h, "accuracy", correct_sum / (double)nq);
    int64_t kshape[1] = {k};
    tensor *rt = tensor_view(DT_F64, 1, kshape, recall_at);
    header_set_tensor(h, "recall_at", rt);
    tensor_free(rt);
    if (eta_source)
        header_set_str(h, "eta_source", eta_source);
    if (o.queries_given) /* after every other key: --merge deletes them, the rest keeps its order */
        shard_set_meta(h, &o.queries, Q->n);
    header_add_field(h, "id", DT_I64, 0, NULL);
    header_add_field(h, "class", DT_I32, 0, NULL);
    header_add_field(h, "predicted", DT_I32, 0, NULL);
    header_add_field(h, "correct", DT_U8, 0, NULL);
    header_add_field(h, "recall", DT_U8, 1, kshape);
    header_add_field(h, "nn_dist", DT_F32, 0, NULL);
    header_add_field(h, "neighbors", DT_I64, 1, kshape);
    if (qeta)
        header_add_field(h, "eta", DT_F32, 0, NULL);
    int64_t nocc[1] = {Q->nocc};
    if (Q->occ)
        header_add_field(h, "occluded", DT_U8, 1, nocc);
    stream_writer *w = stream_create(stdout, h);
    int64_t *nid = emalloc((size_t)k * sizeof *nid);
    for (int64_t q = 0; q < nq; q++) {
        uint8_t ok = pred[q] == qcls[q];
        float nn = (float)(o.cosine ? d2[q * k] / 2 : sqrt(d2[q * k]));
        for (int r = 0; r < k; r++)
            nid[r] = G->id[nbr[q * k + r]];
        void *data[9] = {(void *)&qid[q], (void *)&qcls[q], &pred[q], &ok, recall + q * k, &nn, nid};
        int f = 7;
        if (qeta)
            data[f++] = &qeta[q];
        if (Q->occ)
            data[f++] = Q->occ + (q0 + q) * Q->nocc;
        stream_write_data(w, data, 0);
    }
    /* the summary's data is safe first, then the stream whole, then the summary in place: a
     * failure of either leaves neither a committed summary nor a whole stream */
    if (jf) {
        print_summary(jf, nq, k, correct_sum / (double)nq, recall_at, distance, ng,
                      o.gallery ? "gallery" : "leave-one-out");
        atomic_sync(jf);
    }
    stream_finish(w);
    close_stdout();
    if (jf)
        atomic_commit(jf);
    free(nid);
    free(qeta);
    free(ndist);
    free(ncls);
    free(recall_at);
    free(recall);
    free(pred);
    free(d2);
    free(nbr);
    if (gm != qm)
        free(gm);
    free(qm);
    if (gtv != qtv)
        free(gtv);
    free(qtv);
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
