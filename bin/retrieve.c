/* retrieve: the retrieval evaluation of metric learning (Recall@k, P@1, R-precision, MAP@R, AP,
 * mAP), leave-one-out or against a gallery (the union of one or more streams: distractors), gallery
 * cleaning by uncertainty against random cleaning (hetero-triplet-taha-2019 section 5), and global
 * precision-recall over every pair (cross-example-softmax-veit-2020's calibration measure); writes
 * kind `retrieval`. Definitions, tie rules and the blocked computation: lib/measures/retrieval.h; the run and
 * its reports: lib/evaluation/retrieval_eval.h.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "blas.h"
#include "gallery.h"
#include "match.h"
#include "retrieval.h"
#include "retrieval_eval.h"
#include "shard.h"
#include "stream.h"
#include "util.h"

static const char *usage =
    "usage: retrieve [-k K1,K2,...] [-g GALLERY [-g GALLERY2 ...] [--exclude-id]] [--at-r]\n"
    "                [--clean X | --clean-random X [--clean-draws R] [-S SEED]]\n"
    "                [--global] [--global-tsv FILE] [--distance D] [-t THREADS]\n"
    "                [--queries FROM:TO] [--json FILE] [INPUT]\n"
    "       retrieve --summary [INPUT | SHARD...]\n"
    "       retrieve --merge SHARD...\n"
    "  Retrieval metrics of embeddings per query: Recall@k, P@1, R-precision, MAP@R, AP, MRR;\n"
    "  --at-r: from each query's R nearest only (no AP), faster unless classes are large.\n"
    "  D: euclidean (default), cosine, mls (elk), w2, csd, kl, bhattacharyya (retrieve(1)).\n";

typedef struct {
    int summary;
    int ks[RETRIEVAL_MAXK], nk, k_given, t_given, draws_given, seed_given;
    const char **gallery;  /* the -g streams, in order */
    int ngal;
    int exclude_id;
    int distance, distance_given; /* --distance: MATCH_DISTANCE_* */
    int merge;             /* --merge */
    int at_r;              /* --at-r */
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

/* --clean X or --clean-random X (random_only) into o */
static void parse_clean(options *o, int random_only, const char *arg)
{
    const char *name = random_only ? "--clean-random" : "--clean";
    if (o->clean)
        usage_die("--clean and --clean-random: give one");
    o->clean = parse_double(name, arg, 0, 100);
    if (!(o->clean > 0 && o->clean < 100))
        usage_die("%s: the percentage must be above 0 and below 100, got '%s'", name, arg);
    o->clean_random_only = random_only;
}

int main(int argc, char **argv)
{
    util_start(argc, argv, usage);
    char **args = emalloc((size_t)(argc + 1) * sizeof *args); /* before getopt permutes argv */
    memcpy(args, argv, (size_t)(argc + 1) * sizeof *args);
    options o = {.ks = {1, 2, 4, 8}, .nk = 4, .draws = 5, .seed = 714};
    enum { OPT_JSON = 256, OPT_EXCL, OPT_SUMMARY, OPT_CLEAN, OPT_CLEAN_RANDOM, OPT_DRAWS, OPT_GLOBAL, OPT_GTSV,
           OPT_DISTANCE, OPT_MERGE, OPT_QUERIES, OPT_AT_R };
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
                                          {"at-r", no_argument, 0, OPT_AT_R},
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
        case OPT_AT_R: o.at_r = 1; break;
        case OPT_QUERIES: shard_parse("--queries", optarg, &o.queries), o.queries_given = 1; break;
        case OPT_DISTANCE: o.distance = match_distance_parse(optarg), o.distance_given = 1; break;
        case OPT_GTSV: o.global_tsv = optarg, o.global = 1; break;
        case 't': o.threads = (int)parse_long("-t", optarg, 1, 64), o.t_given = 1; break;
        case 'S': o.seed = parse_u64("-S", optarg), o.seed_given = 1; break;
        case OPT_JSON: o.json = optarg; break;
        case OPT_EXCL: o.exclude_id = 1; break;
        case OPT_SUMMARY: o.summary = 1; break;
        case OPT_CLEAN:
        case OPT_CLEAN_RANDOM: parse_clean(&o, c == OPT_CLEAN_RANDOM, optarg); break;
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
    if (o.at_r && (o.global || o.clean))
        usage_die("--at-r: --global and --clean need every pair's distance (the full ranking)");
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
            o.queries_given || o.at_r)
            usage_die("%s reads retrieval streams: no -k, -t, -g, --json, --exclude-id, --clean, --global, "
                      "--distance, --queries or --at-r", mode);
        shard_report(&retrieval_eval_shards, o.merge, (const char *const *)argv + optind, argc - optind, argc, args);
        free(args);
        free(o.gallery);
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
    if (match_distance_kernel(o.distance) >= 0)
        match_kernel_check(qin->name, Q, o.distance);
    if (o.distance == MATCH_DISTANCE_W2)
        match_set_w2(qin->name, Q);
    int need_u = o.clean && !o.clean_random_only;
    float *qm = match_set_take_means(Q); /* Q->mu is not needed after */
    if (o.distance == MATCH_DISTANCE_COSINE)
        gallery_unit_means(qin->name, Q, qm);
    gallery G = o.ngal ? gallery_read(o.gallery, o.ngal, Q, qin->name, o.distance, o.exclude_id, need_u, gin)
                       : gallery_self(Q, qm, need_u);
    /* the queries: records q0 .. q0 + nq - 1 of the input (--queries), all of it by default */
    if (o.queries_given)
        shard_check(&o.queries, Q->n, qin->name);
    int64_t q0 = o.queries_given ? o.queries.from : 0, nq = o.queries_given ? o.queries.to - q0 : Q->n;
    int64_t ng = G.n, kmax = o.ks[o.nk - 1];
    if (kmax > ng - (o.ngal ? 0 : 1))
        die("Recall@%lld needs at least %lld %s items, the %s has %lld", (long long)kmax,
            (long long)(o.ngal ? kmax : kmax + 1), o.ngal ? "gallery" : "(leave-one-out)",
            o.ngal ? "gallery" : "input", (long long)ng);
    int64_t *exclude = gallery_exclude(!o.ngal, o.exclude_id, G.id, ng, Q->id + q0, q0, nq,
                                       o.ngal == 1 ? gin[0]->name : G.names);
    retrieval_eval E = {.ks = o.ks, .nk = o.nk, .distance = o.distance, .ngal = o.ngal, .clean = o.clean,
                        .clean_random_only = o.clean_random_only, .draws = o.draws, .seed = o.seed,
                        .global = o.global, .sharded = o.queries_given, .at_r = o.at_r, .q0 = q0, .nq = nq};
    retrieval_eval_run(&E, Q, qm, &G, exclude, blas_threads());
    stream_header *h = retrieval_eval_header(&E, argc, args, qin->header, gin, o.queries_given ? &o.queries : NULL);
    classnames_set(h, &Q->names); /* (with -g: the union gallery_read matched them by) */
    stream_writer *w = stream_create(stdout, h);
    retrieval_eval_write(&E, w);
    /* the files' data is safe first, then the stream whole, then the files in place */
    if (jf) {
        retrieval_eval_json(jf, &E);
        atomic_sync(jf);
    }
    if (tf) {
        retrieval_eval_tsv(tf, &E);
        atomic_sync(tf);
    }
    stream_finish(w);
    close_stdout();
    if (jf)
        atomic_commit(jf);
    if (tf)
        atomic_commit(tf);
    retrieval_eval_free(&E);
    gallery_free(&G);
    free(qm);
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
