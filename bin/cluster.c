/* cluster: NMI and AMI of the k-means clusters of embeddings against their classes, as
 * pytorch-metric-learning's AccuracyCalculator computes them (k-means with as many clusters as
 * classes, faiss's 20 rounds and training subset; sklearn's NMI and AMI, arithmetic mean), with a
 * k-means at least as good as faiss's: greedy k-means++ starts, the best of 3 (--init random
 * --redo 1 is faiss's own scheme). k-means and the measures: lib/measures/cluster.h.
 */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "blas.h"
#include "cluster.h"
#include "json.h"
#include "match.h"
#include "stream.h"
#include "util.h"

static const char *usage =
    "usage: cluster [-k K] [-S SEED] [--iter N] [--redo N] [--init kmeans++|random]\n"
    "               [--max-per-cluster M] [--distance euclidean|cosine] [-t THREADS] [--json FILE] [INPUT]\n"
    "  k-means on the embeddings' means; NMI and AMI of classes against clusters.\n";

typedef struct {
    cluster_opts km;
    int k_given;
    int cosine;
    const char *json;
    const char *input;
} options;

typedef struct {
    int64_t n;
    int k, classes;
    double nmi, ami;
    cluster_result r;
} outcome;

/* a measure in the text report: %.10g, or null when it is not finite (as in the JSON) */
static void print_num(FILE *f, const char *key, double v)
{
    if (isfinite(v))
        fprintf(f, "%s %.10g\n", key, v);
    else
        fprintf(f, "%s null\n", key);
}

static void print_text(FILE *f, const outcome *u)
{
    print_num(f, "nmi", u->nmi);
    print_num(f, "ami", u->ami);
    fprintf(f, "k %d\nclasses %d\nn %lld\niterations %d\nconverged %d\ntrained %lld\nstart %d\n", u->k, u->classes,
            (long long)u->n, u->r.iterations, u->r.converged, (long long)u->r.trained, u->r.start);
    print_num(f, "inertia", u->r.inertia);
}

static void print_json(FILE *f, const outcome *u, const options *o)
{
    json_writer w;
    json_report(&w, f, "cluster");
    json_key_int(&w, "n", u->n);
    json_key_int(&w, "k", u->k);
    json_key_int(&w, "classes", u->classes);
    json_key_num(&w, "nmi", u->nmi);
    json_key_num(&w, "ami", u->ami);
    json_key_int(&w, "iterations", u->r.iterations);
    json_key(&w, "converged");
    json_bool(&w, u->r.converged);
    json_key_int(&w, "trained", u->r.trained);
    json_key_int(&w, "start", u->r.start);
    json_key_num(&w, "inertia", u->r.inertia);
    json_key_str(&w, "distance", o->cosine ? "cosine" : "euclidean");
    json_key_str(&w, "init", o->km.plusplus ? "kmeans++" : "random");
    json_key_int(&w, "redo", o->km.redo);
    json_key_uint(&w, "seed", o->km.seed);
    json_end(&w);
}

int main(int argc, char **argv)
{
    util_start(argc, argv, usage);
    char **args = emalloc((size_t)(argc + 1) * sizeof *args); /* before getopt permutes argv */
    memcpy(args, argv, (size_t)(argc + 1) * sizeof *args);
    options o = {.km = cluster_defaults(0)};
    o.km.threads = 0;
    enum { OPT_JSON = 256, OPT_ITER, OPT_REDO, OPT_INIT, OPT_MAXPC, OPT_DIST };
    static const struct option lopts[] = {{"json", required_argument, 0, OPT_JSON},
                                          {"iter", required_argument, 0, OPT_ITER},
                                          {"redo", required_argument, 0, OPT_REDO},
                                          {"init", required_argument, 0, OPT_INIT},
                                          {"max-per-cluster", required_argument, 0, OPT_MAXPC},
                                          {"distance", required_argument, 0, OPT_DIST},
                                          {"help", no_argument, 0, 'h'},
                                          {0, 0, 0, 0}};
    int c;
    while ((c = getopt_long(argc, argv, "k:S:t:h", lopts, NULL)) != -1) {
        switch (c) {
        case 'k': o.km.k = (int)parse_long("-k", optarg, 1, 1000000), o.k_given = 1; break;
        case 'S': o.km.seed = parse_u64("-S", optarg); break;
        case 't': o.km.threads = (int)parse_long("-t", optarg, 1, 64); break;
        case OPT_ITER: o.km.niter = (int)parse_long("--iter", optarg, 1, 1000000); break;
        case OPT_REDO: o.km.redo = (int)parse_long("--redo", optarg, 1, 1000); break;
        case OPT_MAXPC: o.km.max_per_cluster = parse_long("--max-per-cluster", optarg, 0, 1000000000); break;
        case OPT_INIT:
            if (!strcmp(optarg, "random"))
                o.km.plusplus = 0;
            else if (!strcmp(optarg, "kmeans++"))
                o.km.plusplus = 1;
            else
                usage_die("--init: '%s' is neither random nor kmeans++", optarg);
            break;
        case OPT_DIST:
            if (!strcmp(optarg, "euclidean"))
                o.cosine = 0;
            else if (!strcmp(optarg, "cosine"))
                o.cosine = 1;
            else
                usage_die("--distance: '%s' is neither euclidean nor cosine", optarg);
            break;
        case OPT_JSON: o.json = optarg; break;
        case 'h': usage_help();
        default: usage_bad_option(argv);
        }
    }
    if (argc - optind > 1)
        usage_die("at most one input");
    o.input = optind < argc ? argv[optind] : "-";
    /* the summary file exists (as a temp file) before any work: an unwritable path fails now */
    FILE *jf = o.json ? json_open(o.json, 0) : NULL;
    blas_init(args, o.km.threads);
    o.km.threads = blas_threads();

    stream_reader *in = stream_open_path(o.input);
    match_set *S = match_set_read(in);
    if (!S->cls)
        die("%s: no 'class' field: nothing to compare the clusters with", in->name);
    int D = S->D;
    int64_t n = S->n;
    float *X = match_set_means(S, NULL);
    if (o.cosine)
        for (int64_t i = 0; i < n; i++) {
            double s = 0;
            for (int d = 0; d < D; d++)
                s += (double)X[i * D + d] * X[i * D + d];
            if (!(s > 0) || !isfinite(s))
                die("%s: record %lld: its mean has length %g: no direction for --distance cosine", in->name,
                    (long long)i, sqrt(s));
            double inv = 1 / sqrt(s);
            for (int d = 0; d < D; d++)
                X[i * D + d] = (float)(X[i * D + d] * inv);
        }
    else
        for (int64_t i = 0; i < n * D; i++)
            if (!isfinite(X[i]))
                die("%s: record %lld: its mean has a coordinate %g that is not finite", in->name,
                    (long long)(i / D), X[i]);

    outcome u = {.n = n, .classes = cluster_count_distinct(S->cls, n)};
    u.k = o.k_given ? o.km.k : u.classes;
    if (u.k > n)
        die("%s: k = %d clusters need at least %d items, the input has %lld", in->name, u.k, u.k, (long long)n);
    o.km.k = u.k;
    int32_t *assign = emalloc((size_t)n * sizeof *assign);
    cluster_kmeans(X, n, D, &o.km, assign, NULL, &u.r);
    int R, C;
    int64_t *t = cluster_contingency(S->cls, assign, n, &R, &C);
    u.nmi = cluster_nmi(t, R, C);
    u.ami = cluster_ami(t, R, C);

    /* the file's data safe first, then stdout whole, then the file in place */
    if (jf) {
        print_json(jf, &u, &o);
        if (jf != stdout)
            atomic_sync(jf);
    }
    if (jf != stdout) /* --json -: the JSON in the text's place */
        print_text(stdout, &u);
    close_stdout();
    json_commit(jf);
    free(t);
    free(assign);
    free(X);
    match_set_free(S);
    stream_close(in);
    free(args);
    return 0;
}
