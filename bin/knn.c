/* knn: k-nearest-neighbour identification of embeddings (hib-oh-2019 section 4.3, k = 5), leave-one-
 * out within one set or queries against a gallery; writes kind `knn`. Search and vote: lib/measures/knn_search.h,
 * lib/measures/knn_vote.h;
 * the run and its reports: lib/evaluation/knn_eval.h.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "blas.h"
#include "gallery.h"
#include "knn_eval.h"
#include "match.h"
#include "shard.h"
#include "stream.h"
#include "util.h"

static const char *usage =
    "usage: knn [-k K] [-g GALLERY [--exclude-id]] [-d mean|expected] [--distance D]\n"
    "           [--queries FROM:TO] [-t THREADS] [--json FILE] [INPUT]\n"
    "       knn --summary [INPUT | SHARD...]\n"
    "       knn --merge SHARD...\n"
    "  k-nearest-neighbour classification of embeddings, leave-one-out or against a gallery.\n"
    "  D: euclidean (default), cosine, mls (elk), w2, csd, kl, bhattacharyya (knn(1)).\n";

typedef struct {
    int summary;
    int k, k_given, d_given, t_given;
    int distance;          /* --distance: MATCH_DISTANCE_* */
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
        case 'k': o.k = (int)parse_long("-k", optarg, 1, KNN_MAXK), o.k_given = 1; break;
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
        case OPT_DISTANCE: o.distance = match_distance_parse(optarg), o.distance_given = 1; break;
        case 'h': usage_help();
        default: usage_bad_option(argv);
        }
    }
    if (argc - optind > 1 && !o.summary && !o.merge)
        usage_die("at most one input (several only with --summary or --merge)");
    if (o.exclude_id && !o.gallery)
        usage_die("--exclude-id needs a gallery (-g); leave-one-out already excludes the item itself");
    if (o.distance == MATCH_DISTANCE_COSINE && o.expected)
        usage_die("--distance cosine ranks the means by their direction: not with -d expected");
    if ((o.distance == MATCH_DISTANCE_W2 || match_distance_kernel(o.distance) >= 0) && o.d_given)
        usage_die("--distance %s ranks by the %s of the Gaussians, not by -d mean or expected",
                  match_distance_name(o.distance),
                  o.distance == MATCH_DISTANCE_MLS  ? "mutual likelihood score"
                  : o.distance == MATCH_DISTANCE_W2 ? "2-Wasserstein distance"
                  : o.distance == MATCH_DISTANCE_KL ? "symmetric KL divergence"
                  : o.distance == MATCH_DISTANCE_CSD ? "closed-form sampled distance"
                                                     : "Bhattacharyya distance");
    o.input = optind < argc ? argv[optind] : "-";
    if (o.summary || o.merge) {
        const char *mode = o.summary ? "--summary" : "--merge";
        if (o.summary && o.merge)
            usage_die("--summary and --merge: give one");
        if (o.gallery || o.json || o.exclude_id || o.k_given || o.d_given || o.t_given || o.distance_given ||
            o.queries_given)
            usage_die("%s reads knn streams: no -k, -d, --distance, -t, -g, --json, --exclude-id or --queries", mode);
        shard_report(&knn_eval_shards, o.merge, (const char *const *)argv + optind, argc - optind, argc, args);
        free(args);
        return 0;
    }
    /* the summary file exists (as a temp file) before any work: an unwritable path fails now */
    stdout_not_terminal();
    FILE *jf = o.json ? json_open(o.json, 1) : NULL;
    blas_init(args, o.threads);

    stream_reader *qin = stream_open_path(o.input);
    match_set *Q = match_set_read(qin);
    stream_reader *gin = NULL;
    match_set *G = Q;
    if (o.distance == MATCH_DISTANCE_W2)
        match_set_w2(qin->name, Q);
    if (o.gallery) {
        gin = stream_open_path(o.gallery);
        G = match_set_read(gin);
        if (o.distance == MATCH_DISTANCE_W2)
            match_set_w2(gin->name, G);
        if (G->D != Q->D)
            die("the gallery has %d dimensions, the queries %d", G->D, Q->D);
    }
    if (!Q->cls || !G->cls)
        die("%s: no 'class' field: nothing to identify", !Q->cls ? qin->name : gin->name);
    if (G != Q) /* classes that are names: matched by name (lib/streams/classnames.h) */
        match_sets_unify((match_set *[]){Q, G}, (const char *[]){qin->name, gin->name}, 2);
    /* the queries: records q0 .. q0 + nq - 1 of the input (--queries), all of it by default */
    if (o.queries_given)
        shard_check(&o.queries, Q->n, qin->name);
    int64_t q0 = o.queries_given ? o.queries.from : 0, nq = o.queries_given ? o.queries.to - q0 : Q->n, ng = G->n;
    if (ng - (o.gallery ? 0 : 1) < o.k)
        die("k = %d needs at least %d %s items, the input has %lld", o.k, o.gallery ? o.k : o.k + 1,
            o.gallery ? "gallery" : "(leave-one-out)", (long long)ng);
    int64_t *exclude = gallery_exclude(!o.gallery, o.exclude_id, G->id, ng, Q->id + q0, q0, nq,
                                       gin ? gin->name : NULL);
    knn_eval E = {.k = o.k, .distance = o.distance, .expected = o.expected, .gallery = o.gallery, .q0 = q0, .nq = nq};
    knn_eval_run(&E, Q, qin->name, G, gin ? gin->name : NULL, exclude, blas_threads());
    stream_header *h = knn_eval_header(&E, argc, args, qin->header, gin ? gin->header : NULL,
                                       o.queries_given ? &o.queries : NULL);
    classnames_set(h, &Q->names); /* class and predicted index the queries' and gallery's names */
    stream_writer *w = stream_create(stdout, h);
    knn_eval_write(&E, w);
    /* the summary's data is safe first, then the stream whole, then the summary in place: a
     * failure of either leaves neither a committed summary nor a whole stream */
    if (jf) {
        knn_eval_json(jf, &E);
        atomic_sync(jf);
    }
    stream_finish(w);
    close_stdout();
    if (jf)
        atomic_commit(jf);
    knn_eval_free(&E);
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
