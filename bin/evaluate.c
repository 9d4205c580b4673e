/* evaluate: the whole evaluation battery of one set of embeddings (and of its --corrupt twin) in
 * one process, as one table (markdown; --text aligned columns) and, with --json, one JSON object:
 * what pipelines/evaluate.sh printed from six programs, from lib/hedge.h's one call. Definitions
 * and what each number needs: lib/hedge.h, man/evaluate.1.scd.
 */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "blas.h"
#include "evalreport.h"
#include "evalset.h"
#include "hedge.h"
#include "util.h"

static const char *usage =
    "usage: evaluate [-g GALLERY [--exclude-id]] [--corrupt FILE] [--match-a A --match-b B]\n"
    "                [--distance euclidean|cosine|mls] [-k K1,K2,...] [-n PAIRS] [-S SEED] [-t THREADS]\n"
    "                [--text] [--json FILE] INPUT\n"
    "  The evaluation battery of a set of embeddings (stream or .npz) as one table.\n";

/* -k K1,K2,...: increasing, each >= 1, at most 16 */
static void parse_ks(hedge_options *o, const char *s)
{
    char *end;
    const char *p = s;
    o->nk = 0;
    for (;;) {
        long k = strtol(p, &end, 10);
        if (end == p || k < 1 || k > 1000000 || o->nk == 16 || (o->nk && k <= o->ks[o->nk - 1]) ||
            (*end && *end != ','))
            usage_die("-k: expected K1,K2,... increasing, each 1 or more (at most 16), like 1,2,4,8, got '%s'", s);
        o->ks[o->nk++] = (int)k;
        if (!*end)
            break;
        p = end + 1;
    }
}

/* S's battery (against G, or leave-one-out) with knn's k at most k; dies naming S on an error */
static void run(const evalset *S, const evalset *G, const hedge_options *o, int has_a, double a, double b, int k,
                hedge_result *r)
{
    hedge_options os = *o;
    os.knn_k = k;
    os.has_match = has_a || S->has_match;
    os.match_a = has_a ? a : S->match_a, os.match_b = has_a ? b : S->match_b;
    char err[512];
    if (hedge_evaluate(&S->set, G ? &G->set : NULL, &os, r, err, sizeof err))
        die("%s: %s", S->path, err);
}

int main(int argc, char **argv)
{
    util_start(argc, argv, usage);
    char **args = emalloc((size_t)(argc + 1) * sizeof *args); /* before getopt permutes argv */
    memcpy(args, argv, (size_t)(argc + 1) * sizeof *args);
    hedge_options o;
    hedge_options_init(&o);
    const char *gpath = NULL, *cpath = NULL, *json = NULL, *dist = "euclidean";
    int text = 0, has_a = 0, has_b = 0;
    double a = 0, b = 0;
    enum { O_EXCL = 256, O_CORRUPT, O_A, O_B, O_DIST, O_TEXT, O_JSON };
    static const struct option lopts[] = {{"exclude-id", 0, 0, O_EXCL}, {"corrupt", 1, 0, O_CORRUPT},
                                          {"match-a", 1, 0, O_A},       {"match-b", 1, 0, O_B},
                                          {"distance", 1, 0, O_DIST},   {"text", 0, 0, O_TEXT},
                                          {"json", 1, 0, O_JSON},       {"help", 0, 0, 'h'},
                                          {0, 0, 0, 0}};
    int c;
    while ((c = getopt_long(argc, argv, "g:k:n:S:t:h", lopts, NULL)) != -1) {
        switch (c) {
        case 'g': gpath = optarg; break;
        case 'k': parse_ks(&o, optarg); break;
        case 'n': o.pairs = parse_long("-n", optarg, 1, 1000000000); break;
        case 'S': o.seed = parse_u64("-S", optarg); break;
        case 't': o.threads = (int)parse_long("-t", optarg, 1, 64); break;
        case O_EXCL: o.exclude_id = 1; break;
        case O_CORRUPT: cpath = optarg; break;
        case O_A: a = parse_double("--match-a", optarg, 1e-300, 1e300), has_a = 1; break;
        case O_B: b = parse_double("--match-b", optarg, -1e300, 1e300), has_b = 1; break;
        case O_TEXT: text = 1; break;
        case O_JSON: json = optarg; break;
        case O_DIST:
            dist = optarg;
            o.distance = !strcmp(optarg, "euclidean") ? HEDGE_EUCLIDEAN
                       : !strcmp(optarg, "cosine")    ? HEDGE_COSINE
                       : !strcmp(optarg, "mls")       ? HEDGE_MLS
                                                      : -1;
            if (o.distance < 0)
                usage_die("--distance: '%s' is not euclidean, cosine or mls", optarg);
            break;
        case 'h': usage_help();
        default: usage_bad_option(argv);
        }
    }
    if (argc - optind != 1)
        usage_die(argc == optind ? "which input? (an embeddings stream or .npz)" : "one input only");
    if (has_a != has_b)
        usage_die(has_a ? "--match-a needs --match-b" : "--match-b needs --match-a");
    if (o.exclude_id && !gpath)
        usage_die("--exclude-id needs -g GALLERY");
    FILE *jf = json ? json_open(json, 0) : NULL;
    blas_init(args, o.threads);

    const char *paths[2] = {argv[optind], cpath};
    evalreport R = {.names = {"input", "corrupt"}, .nsets = cpath ? 2 : 1, .o = &o, .distance = dist,
                    .gallery = gpath != NULL, .few = -1};
    evalset S[2], G;
    hedge_result res[2];
    if (gpath)
        evalset_read(&G, gpath);
    int kmin = o.knn_k;
    for (int s = 0; s < R.nsets; s++) {
        evalset_read(&S[s], paths[s]);
        run(&S[s], gpath ? &G : NULL, &o, has_a, a, b, o.knn_k, &res[s]);
        double k = res[s].value[HEDGE_KNN_K];
        if (k < kmin) /* the first set with the fewest neighbours: the note names it */
            kmin = (int)k, R.few = s;
    }
    for (int s = 0; s < R.nsets; s++) /* one k of knn for every column */
        if (res[s].value[HEDGE_KNN_K] > kmin) {
            hedge_result_free(&res[s]);
            run(&S[s], gpath ? &G : NULL, &o, has_a, a, b, kmin, &res[s]);
        }
    R.r = res;
    evalreport_notes(&R);
    if (jf) {
        evalreport_json(jf, &R);
        if (jf != stdout)
            atomic_sync(jf);
    }
    if (jf != stdout) /* --json -: the JSON in the table's place */
        evalreport_table(stdout, &R, text);
    close_stdout();
    json_commit(jf);
    evalreport_free(&R);
    for (int s = 0; s < R.nsets; s++) {
        hedge_result_free(&res[s]);
        evalset_free(&S[s]);
    }
    if (gpath)
        evalset_free(&G);
    free(args);
    return 0;
}
