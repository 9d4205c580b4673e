/* evaluate: the whole evaluation battery of one set of embeddings (and of its --corrupt twin) in
 * one process, as one table (markdown; --text aligned columns) and, with --json, one JSON object:
 * what pipelines/evaluate.sh printed from six programs, from lib/engine/hedge.h's one call. Definitions
 * and what each number needs: lib/engine/hedge.h, man/evaluate.1.scd.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "blas.h"
#include "evalpart.h"
#include "evalreport.h"
#include "evalset.h"
#include "hedge.h"
#include "shard.h"
#include "util.h"

static const char *usage =
    "usage: evaluate [-g GALLERY]... [--exclude-id] [--corrupt FILE] [--match-a A --match-b B]\n"
    "                [--distance D] [-k K1,K2,...] [-n PAIRS] [-S SEED] [-t THREADS]\n"
    "                [--mu NAME] [--var NAME] [--eta NAME] [--labels NAME] [--id NAME]\n"
    "                [--uncertainty FIELD]... [--bootstrap B] [--risk ALPHA]\n"
    "                [--text] [--json FILE] [--report FILE.html] [-o DIR] INPUT\n"
    "       evaluate --queries FROM:TO | --shard I/N [options] INPUT > PART   (one shard's answers)\n"
    "       evaluate --merge [options] INPUT PART...   (the table, from every shard's answers)\n"
    "  The evaluation battery of a set of embeddings (stream or .npz) as one table.\n"
    "  D: euclidean (default), cosine, mls (elk), w2, csd, kl, bhattacharyya (evaluate(1)).\n";

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

/* --shard I/N: 0 <= I < N */
static void parse_shard(const char *s, long *i, long *n)
{
    char *end;
    *i = strtol(s, &end, 10);
    if (end == s || *end != '/' || *i < 0)
        usage_die("--shard: expected I/N, shard I (from 0) of N, like 3/8, got '%s'", s);
    const char *p = end + 1;
    *n = strtol(p, &end, 10);
    if (end == p || *end || *n < 1 || *n > 1000000 || *i >= *n)
        usage_die("--shard: expected I/N with 0 <= I < N (at most 1000000 shards), got '%s'", s);
}

/* S's options: knn's k, S's match probability unless given (has_a: a, b) */
static hedge_options set_options(const evalset *S, const hedge_options *o, int has_a, double a, double b, int k)
{
    hedge_options os = *o;
    os.knn_k = k;
    os.has_match = has_a || S->has_match;
    os.match_a = has_a ? a : S->match_a, os.match_b = has_a ? b : S->match_b;
    return os;
}

#define MAXGALLERIES 8

/* the sets S[0 .. nsets) (INPUT, --corrupt, each with its user uncertainties) and the galleries
 * G[0 .. ng) read, an archive's arrays named by names; with galleries all matched by name
 * (hedge.evaluate's rule: the classes numbered by the sorted union of every set's names) */
static void read_sets(evalset *S, int nsets, evalset *G, int ng, const char *const *paths, const char *const *gpaths,
                      const char *const *names, const char *const *user, int nuser)
{
    for (int g = 0; g < ng; g++)
        evalset_read(&G[g], gpaths[g], names);
    evalset *all[2 + MAXGALLERIES];
    for (int s = 0; s < nsets; s++) {
        evalset_read(&S[s], paths[s], names);
        evalset_user(&S[s], user, nuser); /* --uncertainty FIELD: the set's own */
        all[s] = &S[s];
    }
    for (int g = 0; g < ng; g++)
        all[nsets + g] = &G[g];
    if (ng)
        evalset_unify(all, nsets + ng);
}

/* each set's neighbours in G (NULL: leave-one-out) into ks; returns knn's one k for every column,
 * the fewest neighbours (R->few: whose); an error names the gallery too with several */
static int neighbours(const evalset *S, const evalset *G, int several, const hedge_options *o, evalreport *R, int *ks)
{
    char err[512];
    int kmin = o->knn_k;
    for (int s = 0; s < R->nsets; s++) {
        if ((ks[s] = hedge_neighbours(&S[s].set, G ? &G->set : NULL, o, err, sizeof err)) < 0)
            die("%s: %s%s%s", S[s].path, several ? G->path : "", several ? ": " : "", err);
        if (ks[s] >= 1 && ks[s] < kmin) /* the first set with the fewest neighbours: the note names it */
            kmin = ks[s], R->few = s;
    }
    return kmin;
}

/* the results res[0 .. R->nsets) of the sets S as one table to stdout (and --json to jf; -o DIR: the
 * error-versus-reject curves) */
static void report(evalreport *R, hedge_result *res, const evalset *S, const char *dir, FILE *jf, int text,
                   FILE *hf, const char *title)
{
    char rpath[EVALREPORT_MAXSETS][4096];
    for (int s = 0; s < R->nsets && dir; s++) {
        snprintf(rpath[s], sizeof rpath[s], "%s/reject-%s.tsv", dir, R->names[s]);
        if (evalreport_reject(rpath[s], &res[s], &S[s].set, R->o->seed))
            R->reject[s] = rpath[s];
    }
    R->r = res;
    evalreport_notes(R);
    if (jf) {
        evalreport_json(jf, R);
        if (jf != stdout)
            atomic_sync(jf);
    }
    if (hf) { /* --report FILE: the page */
        evalreport_html(hf, R, title);
        atomic_sync(hf);
    }
    if (jf != stdout) /* --json -: the JSON in the table's place */
        evalreport_table(stdout, R, text);
    close_stdout();
    json_commit(jf);
    if (hf)
        atomic_commit(hf);
    evalreport_free(R);
}

/* several galleries' reports R[0 .. ng): a table each, headed by its gallery, and one JSON */
static void report_galleries(evalreport *R, hedge_result (*res)[2], int ng, FILE *jf, int text)
{
    for (int g = 0; g < ng; g++) {
        R[g].r = res[g];
        evalreport_notes(&R[g]);
    }
    if (jf) {
        evalreport_json_galleries(jf, R, ng);
        if (jf != stdout)
            atomic_sync(jf);
    }
    for (int g = 0; g < ng && jf != stdout; g++) {
        printf("%sGallery %d: %s\n\n", g ? "\n" : "", g + 1, R[g].gallery_name);
        evalreport_table(stdout, &R[g], text);
    }
    close_stdout();
    json_commit(jf);
    for (int g = 0; g < ng; g++)
        evalreport_free(&R[g]);
}

/* each set of S against each gallery G[g] (none: ngal 0), the merged shards' answers part[s] when
 * given, into res[g][s], the notes of S's own reading added */
static void evaluate_sets(const evalset *S, int nsets, const evalset *G, int ngal, const char *const *gpaths,
                          const hedge_options *o, int has_a, double a, double b, const int *kmins,
                          const evalpart *part, hedge_result (*res)[2])
{
    char err[512];
    for (int g = 0; g < (ngal ? ngal : 1); g++) /* the queries read once, searched in each gallery */
        for (int s = 0; s < nsets; s++) {
            const hedge_set *gs = ngal ? &G[g].set : NULL;
            hedge_options os = set_options(&S[s], o, has_a, a, b, kmins[g]);
            int rc = part ? hedge_finish(&S[s].set, gs, &os, &part[s], &res[g][s], err, sizeof err)
                          : hedge_evaluate(&S[s].set, gs, &os, &res[g][s], err, sizeof err);
            if (rc)
                die("%s: %s%s%s", S[s].path, ngal > 1 ? gpaths[g] : "", ngal > 1 ? ": " : "", err);
            evalset_explain(&S[s], &os, &res[g][s]);
        }
}

/* the options' combinations that are misuse: one line and exit 2 */
typedef struct {
    int argc, optind;
    char **argv;
    int merge, sharded, text, ngal, has_a, has_b, named, exclude_id;
    const char *json, *dir, *html, *gpath, *cpath;
} misuse;

static void check_misuse(const misuse *m)
{
    if (m->argc == m->optind)
        usage_die("which input? (an embeddings stream or .npz)");
    if (m->argc - m->optind > 1 && !m->merge)
        usage_die("one input only (the shards' answers after it only with --merge)");
    if (m->merge && m->argc - m->optind < 2)
        usage_die("--merge: give INPUT, then the outputs of evaluate --queries FROM:TO (every query once)");
    if (m->merge && m->sharded)
        usage_die("%s and --merge: give one", m->sharded == 1 ? "--queries" : "--shard");
    if (m->sharded && (m->json || m->dir || m->text))
        usage_die("%s writes the queries' answers as a stream to stdout: no %s", m->sharded == 1 ? "--queries" : "--shard",
                  m->json ? "--json" : m->dir ? "-o" : "--text");
    if (m->ngal > 1 && (m->sharded || m->merge))
        usage_die("%s: one gallery at a time (-g given %d times)",
                  m->merge ? "--merge" : m->sharded == 1 ? "--queries" : "--shard", m->ngal);
    if (m->html && (m->sharded || m->ngal > 1))
        usage_die("--report: %s", m->sharded ? "the page is the whole run's (with --merge, not with a shard)"
                                          : "one gallery at a time (-g given more than once)");
    if (m->html && !strcmp(m->html, "-"))
        usage_die("--report -: give the page a file (stdout has the table)");
    if (m->ngal > 1 && m->dir)
        usage_die("-o DIR: one gallery at a time (-g given %d times; the curves of each would take one name)", m->ngal);
    if (m->has_a != m->has_b)
        usage_die(m->has_a ? "--match-a needs --match-b" : "--match-b needs --match-a");
    if (m->exclude_id && !m->gpath)
        usage_die("--exclude-id needs -g GALLERY");
    if (m->named && !evalset_is_npz(m->argv[m->optind]) && !(m->gpath && evalset_is_npz(m->gpath)) &&
        !(m->cpath && evalset_is_npz(m->cpath)))
        usage_die("--%s names an array of an .npz or .npy input, and none is one (a stream's fields have their names)",
                  m->named - 1 == NPZIMPORT_CLASS ? "labels" : npzimport_role_names[m->named - 1]);
}

int main(int argc, char **argv)
{
    util_start(argc, argv, usage);
    char **args = emalloc((size_t)(argc + 1) * sizeof *args); /* before getopt permutes argv */
    memcpy(args, argv, (size_t)(argc + 1) * sizeof *args);
    hedge_options o;
    hedge_options_init(&o);
    const char *gpaths[MAXGALLERIES], *gpath = NULL, *cpath = NULL, *json = NULL, *html = NULL, *dist = "euclidean", *dir = NULL;
    int ngal = 0, text = 0, has_a = 0, has_b = 0, merge = 0, sharded = 0; /* sharded 1: --queries, 2: --shard */
    long part_i = 0, part_n = 1;
    double a = 0, b = 0;
    shard_range qr = {0, 0};
    /* the arrays of an .npz input named as fromnpz names them (lib/data/npzimport.h's roles) */
    const char *names[NPZIMPORT_NROLES] = {0};
    int named = 0;
    const char *user[HEDGE_MAXUSER];
    int nuser = 0;
    enum { O_EXCL = 256, O_CORRUPT, O_A, O_B, O_DIST, O_TEXT, O_JSON, O_QUERIES, O_SHARD, O_MERGE, O_UNC, O_BOOT, O_RISK,
           O_REPORT, O_ROLE };
    static const struct option lopts[] = {
        {"exclude-id", 0, 0, O_EXCL}, {"corrupt", 1, 0, O_CORRUPT}, {"match-a", 1, 0, O_A}, {"match-b", 1, 0, O_B},
        {"distance", 1, 0, O_DIST},   {"text", 0, 0, O_TEXT},       {"json", 1, 0, O_JSON},
        {"queries", 1, 0, O_QUERIES}, {"shard", 1, 0, O_SHARD},     {"merge", 0, 0, O_MERGE},
        {"mu", 1, 0, O_ROLE + NPZIMPORT_MU},         {"var", 1, 0, O_ROLE + NPZIMPORT_VAR},
        {"eta", 1, 0, O_ROLE + NPZIMPORT_ETA},       {"labels", 1, 0, O_ROLE + NPZIMPORT_CLASS},
        {"class", 1, 0, O_ROLE + NPZIMPORT_CLASS},   {"id", 1, 0, O_ROLE + NPZIMPORT_ID},
        {"uncertainty", 1, 0, O_UNC}, {"bootstrap", 1, 0, O_BOOT}, {"risk", 1, 0, O_RISK},
        {"report", 1, 0, O_REPORT},
        {"help", 0, 0, 'h'},          {0, 0, 0, 0}};
    int c;
    while ((c = getopt_long(argc, argv, "g:k:n:S:t:o:h", lopts, NULL)) != -1) {
        if (c >= O_ROLE && c < O_ROLE + NPZIMPORT_NROLES) {
            names[c - O_ROLE] = optarg, named = c - O_ROLE + 1;
            continue;
        }
        switch (c) {
        case 'o': dir = optarg; break;
        case 'g':
            if (ngal == MAXGALLERIES)
                usage_die("-g: at most %d galleries", MAXGALLERIES);
            gpath = gpaths[ngal++] = optarg;
            break;
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
        case O_REPORT: html = optarg; break;
        case O_QUERIES: shard_parse("--queries", optarg, &qr), sharded = 1; break;
        case O_SHARD: parse_shard(optarg, &part_i, &part_n), sharded = 2; break;
        case O_MERGE: merge = 1; break;
        case O_UNC:
            if (nuser == HEDGE_MAXUSER)
                usage_die("--uncertainty: at most %d fields", HEDGE_MAXUSER);
            user[nuser++] = optarg;
            break;
        case O_BOOT: o.bootstrap = (int)parse_long("--bootstrap", optarg, 0, 1000000); break;
        case O_RISK: o.risk = parse_double("--risk", optarg, 1e-9, 1 - 1e-9); break;
        case O_DIST:
            if ((o.distance = hedge_distance_parse(optarg)) < 0)
                usage_die("--distance: '%s' is none of euclidean, cosine, mls (elk), w2, csd, kl, bhattacharyya", optarg);
            dist = hedge_distance_name(o.distance); /* (elk: mls, bhatt: bhattacharyya) */
            break;
        case 'h': usage_help();
        default: usage_bad_option(argv);
        }
    }
    gpath = ngal ? gpaths[0] : NULL;
    check_misuse(&(misuse){argc, optind, argv, merge, sharded, text, ngal, has_a, has_b, named, o.exclude_id, json, dir,
                           html, gpath, cpath});
    if (dir && mkdir(dir, 0777) && errno != EEXIST)
        die("-o %s: cannot make the folder: %s", dir, strerror(errno));
    FILE *jf = json ? json_open(json, 0) : NULL;
    FILE *hf = html ? atomic_open(html) : NULL;
    char title[4200];
    snprintf(title, sizeof title, "hedge evaluate: %s%s%s", argv[optind], cpath ? " and " : "", cpath ? cpath : "");
    blas_init(args, o.threads);

    const char *paths[2] = {argv[optind], cpath};
    int nsets = cpath ? 2 : 1, ng1 = ngal ? ngal : 1; /* ng1: the reports, one without a gallery */
    evalreport R[MAXGALLERIES];
    evalset S[2], G[MAXGALLERIES];
    hedge_result res[MAXGALLERIES][2];
    evalpart part[2];
    char err[512];
    int ks[MAXGALLERIES][2], kmins[MAXGALLERIES];
    read_sets(S, nsets, G, ngal, paths, gpaths, names, user, nuser);
    for (int g = 0; g < ng1; g++) {
        R[g] = (evalreport){.names = {"input", "corrupt"}, .nsets = nsets, .o = &o, .distance = dist,
                            .gallery = ngal > 0, .gallery_name = ngal ? gpaths[g] : NULL, .few = -1};
        kmins[g] = neighbours(S, ngal ? &G[g] : NULL, ngal > 1, &o, &R[g], ks[g]);
    }
    int kmin = kmins[0];
    evalpart_info I = {.nsets = nsets, .names = {S[0].path, cpath ? S[1].path : NULL}, .n = S[0].set.n,
                       .ng = gpath ? G[0].set.n : 0, .o = &o, .knn_k = kmin};
    if (sharded || merge) {
        for (int s = 0; s < nsets; s++)
            I.hash[s] = evalpart_hash(&S[s].set);
        I.ghash = gpath ? evalpart_hash(&G[0].set) : 0;
        if (nsets == 2 && S[1].set.n != S[0].set.n)
            die("%s: %lld items, but %s has %lld: the shards' records hold both sets' answers to one query: "
                "evaluate twins of one size, or each set alone", S[1].path,
                (long long)S[1].set.n, S[0].path, (long long)S[0].set.n);
    }
    if (sharded) { /* the queries' answers of FROM:TO, to stdout */
        int64_t n = S[0].set.n;
        if (sharded == 2) /* (a set of fewer queries than shards leaves some empty) */
            qr.from = n * part_i / part_n, qr.to = n * (part_i + 1) / part_n;
        shard_check(&qr, n, S[0].path);
        for (int s = 0; s < nsets; s++)
            if (hedge_queries(&S[s].set, gpath ? &G[0].set : NULL, &o, qr.from, qr.to, ks[0][s] ? kmin : 0, &part[s], err,
                              sizeof err))
                die("%s: %s", S[s].path, err);
        evalpart_write(stdout, part, &I, argc, args);
        close_stdout();
    } else {
        if (merge)
            evalpart_read((const char *const *)argv + optind + 1, argc - optind - 1, &I, part);
        evaluate_sets(S, nsets, G, ngal, gpaths, &o, has_a, a, b, kmins, merge ? part : NULL, res);
        if (ngal > 1)
            report_galleries(R, res, ngal, jf, text);
        else
            report(&R[0], res[0], S, dir, jf, text, hf, title);
    }
    for (int s = 0; s < nsets; s++) {
        if (sharded || merge)
            evalpart_free(&part[s]);
        for (int g = 0; g < ng1 && !sharded; g++)
            hedge_result_free(&res[g][s]);
        evalset_free(&S[s]);
    }
    for (int g = 0; g < ngal; g++)
        evalset_free(&G[g]);
    free(args);
    return 0;
}
