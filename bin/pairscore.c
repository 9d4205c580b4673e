/* pairscore: match probabilities of image pairs (verification) and the self-mismatch uncertainty
 * eta of each image, from an `embeddings` stream (hib-oh-2019, Eqs. 2, 5 and 9; lib/evaluation/match.h); or,
 * with --score mls, the mutual likelihood score of each pair of Gaussians (PFE; lib/numerics/mls.h); or,
 * with --score l2 / cosine, minus the Euclidean distance / the cosine similarity of the pair's
 * means (each mixture's average mean, as knn -d mean), the baselines PFE compares MLS with; or,
 * with --score w2 / csd / kl / bhatt, minus a distance between the pair's Gaussians (2-Wasserstein,
 * PCME++'s closed-form sampled distance, the symmetric KL, Bhattacharyya: lib/evaluation/match.h).
 */
#include <errno.h>
#include <float.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "match.h"
#include "pairs.h"
#include "stream.h"
#include "util.h"

static const char *usage =
    "usage: pairscore [-n PAIRS] [-S SEED] [-K SAMPLES] [--pairs FILE] [--mc | --means]\n"
    "                 [--json FILE] [INPUT]\n"
    "       pairscore -g OTHER [-n PAIRS] [-S SEED] [-K SAMPLES] [--mc | --means] [--json FILE] [INPUT]\n"
    "       pairscore --self [-S SEED] [-K SAMPLES] [--mc | --means] [--json FILE] [INPUT]\n"
    "       pairscore --score S [-n PAIRS | --pairs FILE | -g OTHER] [-S SEED] [--json FILE] [INPUT]\n"
    "  Match probabilities of embedding pairs (random pairs, a gallery, or --self); --score mls: the\n"
    "  mutual likelihood score of Gaussian pairs instead; l2, cosine: -distance, cosine of the means;\n"
    "  w2, csd, kl, bhatt: -(2-Wasserstein, PCME++'s sampled, symmetric KL, Bhattacharyya) distance.\n";

typedef struct {
    long npairs;
    int npairs_given, K_given;
    uint64_t seed;
    int K;
    const char *pairs_file;
    const char *other;
    int self, force_mc, means;
    int score;             /* --score: MATCH_SCORE_P (default), _MLS, _L2, _COSINE (lib/evaluation/match.h) */
    const char *json;
    const char *input;
} options;

/* ------------------------------------------------------------------ output */

static const char *scorer_name(const match_scorer *sc) { return sc->stochastic ? "monte-carlo" : "exact"; }

/* the last members of both JSON summaries: how p was computed */
static void report_scorer(json_writer *j, const match_scorer *sc)
{
    json_key_str(j, "scorer", scorer_name(sc));
    json_key_int(j, "K", sc->stochastic ? sc->K : 0);
}

/* Both writers end the same way: the JSON summary (jf, from atomic_open, or NULL) written and
 * synced, then the stream finished; main then closes stdout and commits the summary, so that a
 * failure of either leaves neither a committed summary nor a whole stream. */
static void score_pairs(const options *o, stream_reader *in, stream_reader *gin, match_scorer *sc, FILE *jf,
                        int argc, char **argv)
{
    match_set *S = match_set_read(in);
    if (!S->cls)
        die("%s: the input has no 'class' field: pairs cannot be labelled", in->name);
    /* -g: the second images come from G, whose embeddings take sample streams after S's */
    match_set *G = gin ? match_set_read(gin) : S;
    if (!G->cls)
        die("%s: the second stream has no 'class' field: pairs cannot be labelled", gin->name);
    if (gin) /* a pair matches when its names are one (lib/streams/classnames.h) */
        match_sets_unify((match_set *[]){S, G}, (const char *[]){in->name, gin->name}, 2);
    if (match_score_gaussian(o->score)) {
        char opt[32];
        snprintf(opt, sizeof opt, "--score %s", match_score_names[o->score]);
        match_mls_check(in->name, S, opt);
        if (gin)
            match_mls_check(gin->name, G, opt);
    }
    match_pair_scorer ps; /* --score mls, l2, cosine, w2, csd, kl, bhatt */
    match_pair_scorer_init(&ps, o->score, S, G);
    uint64_t goff = gin ? (uint64_t)S->n : 0;
    long npairs = o->npairs;
    pairs_ij *P = o->pairs_file ? pairs_read_file(S, o->pairs_file, &npairs)
              : gin         ? pairs_cross(S, G, npairs, o->seed)
                            : pairs_random(S, npairs, o->seed);

    /* cosine: a pair with a zero mean has no direction; refused before anything is written */
    int which;
    for (long p = 0; p < npairs; p++)
        if (!match_pair_directed(&ps, P[p].i, P[p].j, &which))
            die("%s: record %lld: its mean is zero: --score cosine needs a direction",
                which && gin ? gin->name : in->name, (long long)(which ? P[p].j : P[p].i));

    stream_header *h = header_new("pairscores", 0);
    header_provenance(h, argc, argv);
    int one = o->score != MATCH_SCORE_P; /* one score per pair, no eta */
    if (!o->pairs_file || (!one && sc->stochastic))
        header_set_seed(h, o->seed);
    header_add_input(h, in->header);
    if (gin)
        header_add_input(h, gin->header);
    header_copy_meta(h, in->header);
    classnames_set(h, &S->names); /* class1, class2 index them */
    header_set_int(h, "pairs", npairs);
    if (gin)
        header_set_str(h, "second", o->other);
    header_set_str(h, "scorer", one ? match_score_names[o->score] : scorer_name(sc));
    if (!one && sc->stochastic)
        header_set_int(h, "K", sc->K);
    if (o->pairs_file)
        header_set_str(h, "pairs_file", o->pairs_file);
    const char *i64f[] = {"i", "j", "id1", "id2"};
    for (int k = 0; k < 4; k++)
        header_add_field(h, i64f[k], DT_I64, 0, NULL);
    header_add_field(h, "class1", DT_I32, 0, NULL);
    header_add_field(h, "class2", DT_I32, 0, NULL);
    header_add_field(h, "match", DT_U8, 0, NULL);
    /* the score: p and the etas; with another --score that score alone (no eta: MLS has no
     * self-mismatch, and neither has a distance or a cosine) */
    const char *f32f[] = {"p", "eta1", "eta2", "eta"};
    for (int k = 0; k < (one ? 1 : 4); k++)
        header_add_field(h, one ? match_score_fields[o->score] : f32f[k], DT_F32, 0, NULL);
    stream_writer *w = stream_create(stdout, h);

    /* eta of an image is computed once, when a pair first needs it */
    double *eta = emalloc((size_t)S->n * sizeof *eta), *geta = eta;
    for (int64_t i = 0; i < S->n; i++)
        eta[i] = NAN;
    if (gin) {
        geta = emalloc((size_t)G->n * sizeof *geta);
        for (int64_t j = 0; j < G->n; j++)
            geta[j] = NAN;
    }
    double sum_pm = 0, sum_pn = 0, sum_eta = 0;
    long positives = 0;
    for (long p = 0; p < npairs; p++) {
        int64_t i = P[p].i, j = P[p].j;
        match_emb x = match_set_emb(S, i), y = match_set_emb(G, j);
        y.index += goff;
        if (one) { /* higher = more alike: apcurve ranks it as it ranks p */
            int64_t id1 = S->id[i], id2 = G->id[j];
            int32_t c1 = S->cls[i], c2 = G->cls[j];
            uint8_t m = c1 == c2;
            double s = match_pair_score(&ps, i, j);
            if (!(fabs(s) <= FLT_MAX))
                die("pair %ld (records %lld and %lld): %s %g is beyond float32", p, (long long)i, (long long)j,
                    o->score == MATCH_SCORE_MLS ? "MLS" : "the distance", s);
            float sf = (float)s;
            void *data[] = {&i, &j, &id1, &id2, &c1, &c2, &m, &sf};
            stream_write_data(w, data, 0);
            positives += m;
            if (m)
                sum_pm += s;
            else
                sum_pn += s;
            continue;
        }
        if (isnan(eta[i]))
            eta[i] = match_eta(sc, &x);
        if (isnan(geta[j]))
            geta[j] = match_eta(sc, &y);
        int64_t id1 = S->id[i], id2 = G->id[j];
        int32_t c1 = S->cls[i], c2 = G->cls[j];
        uint8_t m = c1 == c2;
        float pr = (float)match_prob(sc, &x, &y), e1 = (float)eta[i], e2 = (float)geta[j],
              e = (float)(0.5 * (eta[i] + geta[j]));
        void *data[] = {&i, &j, &id1, &id2, &c1, &c2, &m, &pr, &e1, &e2, &e};
        stream_write_data(w, data, 0);
        positives += m;
        if (m)
            sum_pm += pr;
        else
            sum_pn += pr;
        sum_eta += e;
    }
    if (jf) {
        json_writer j;
        json_report(&j, jf, "pairscore");
        json_key_int(&j, "n", npairs);
        json_key_int(&j, "positives", positives);
        char km[64], kn[64];
        snprintf(km, sizeof km, "mean_%s_match", match_score_fields[o->score]);
        snprintf(kn, sizeof kn, "mean_%s_nonmatch", match_score_fields[o->score]);
        json_key_num(&j, km, positives ? sum_pm / positives : NAN);
        json_key_num(&j, kn, npairs > positives ? sum_pn / (npairs - positives) : NAN);
        if (one)
            json_key_str(&j, "scorer", match_score_names[o->score]);
        else {
            json_key_num(&j, "mean_eta", sum_eta / npairs);
            report_scorer(&j, sc);
        }
        json_end(&j);
        atomic_sync(jf);
    }
    stream_finish(w);
    free(eta);
    match_pair_scorer_free(&ps);
    if (gin) {
        free(geta);
        match_set_free(G);
    }
    free(P);
    header_free(h);
    match_set_free(S);
}

/* --self streams: one record in, the same record plus eta out */
static void score_self(const options *o, stream_reader *in, match_scorer *sc, FILE *jf, int argc, char **argv)
{
    const stream_header *ih = in->header;
    match_layout L = match_check_header(in->name, ih); /* main checked it too: the same answer */
    int mi = L.mu, vi = L.var;
    stream_header *h = header_new("eta", 0);
    header_provenance(h, argc, argv);
    if (sc->stochastic)
        header_set_seed(h, o->seed);
    header_add_input(h, ih);
    header_copy_meta(h, ih);
    header_set_str(h, "scorer", scorer_name(sc));
    if (sc->stochastic)
        header_set_int(h, "K", sc->K);
    header_copy_fields(h, ih);
    int ei = header_field_find(h, "eta");
    if (ei < 0) {
        header_add_field(h, "eta", DT_F32, 0, NULL);
        ei = h->nfields - 1;
    } else /* written over in place */
        stream_field_need(in->name, h, "eta", DT_F32, 0, NULL);
    stream_record rec = {0};
    if (!stream_read(in, &rec))
        die("%s: the stream has no records (nothing to evaluate)", in->name);
    stream_writer *w = stream_create(stdout, h);
    int C = L.C, D = L.D;
    float etav = 0;
    double sum = 0, lo = INFINITY, hi = -INFINITY;
    long n = 0;
    do {
        match_emb x = {rec.t[mi].data, vi >= 0 ? rec.t[vi].data : NULL, C, D, (uint64_t)n};
        for (int e = 0; e < C * D; e++) { /* as match_set_read checks for the pair scorer */
            if (!isfinite(x.mu[e]))
                die("%s: record %ld: mean %g is not finite", in->name, n, x.mu[e]);
            if (x.var && (!(x.var[e] >= 0) || !isfinite(x.var[e])))
                die("%s: record %ld: variance %g is not a finite number >= 0", in->name, n, x.var[e]);
        }
        double e = match_eta(sc, &x);
        etav = (float)e;
        sum += e;
        lo = e < lo ? e : lo;
        hi = e > hi ? e : hi;
        stream_record out = rec;
        if (ei == ih->nfields) { /* a new last field */
            out.t[ei] = (tensor){.dtype = DT_F32, .ndim = 0, .data = &etav};
            out.n = ih->nfields + 1;
        } else
            *(float *)out.t[ei].data = etav;
        stream_write_record(w, &out);
        n++;
    } while (stream_read(in, &rec));
    if (jf) {
        json_writer j;
        json_report(&j, jf, "pairscore");
        json_key(&j, "self");
        json_bool(&j, 1);
        json_key_int(&j, "n", n);
        json_key_num(&j, "mean_eta", sum / n);
        json_key_num(&j, "min_eta", lo);
        json_key_num(&j, "max_eta", hi);
        report_scorer(&j, sc);
        json_end(&j);
        atomic_sync(jf);
    }
    stream_finish(w);
    record_free(&rec);
    header_free(h);
}

int main(int argc, char **argv)
{
    util_start(argc, argv, usage);
    char **args = emalloc((size_t)(argc + 1) * sizeof *args); /* before getopt permutes argv */
    memcpy(args, argv, (size_t)(argc + 1) * sizeof *args);
    options o = {.npairs = 10000, .seed = 714, .K = 8};
    enum { OPT_PAIRS = 256, OPT_SELF, OPT_MC, OPT_MEANS, OPT_JSON, OPT_SCORE };
    static const struct option lopts[] = {{"pairs", required_argument, 0, OPT_PAIRS},
                                          {"score", required_argument, 0, OPT_SCORE},
                                          {"self", no_argument, 0, OPT_SELF},
                                          {"mc", no_argument, 0, OPT_MC},
                                          {"means", no_argument, 0, OPT_MEANS},
                                          {"json", required_argument, 0, OPT_JSON},
                                          {"help", no_argument, 0, 'h'},
                                          {0, 0, 0, 0}};
    int c;
    while ((c = getopt_long(argc, argv, "n:S:K:g:h", lopts, NULL)) != -1) {
        switch (c) {
        case 'n': o.npairs = parse_long("-n", optarg, 1, 1000000000), o.npairs_given = 1; break;
        case 'S': o.seed = parse_u64("-S", optarg); break;
        case 'K': o.K = (int)parse_long("-K", optarg, 1, 4096), o.K_given = 1; break;
        case 'g': o.other = optarg; break;
        case OPT_PAIRS: o.pairs_file = optarg; break;
        case OPT_SELF: o.self = 1; break;
        case OPT_MC: o.force_mc = 1; break;
        case OPT_MEANS: o.means = 1; break;
        case OPT_JSON: o.json = optarg; break;
        case OPT_SCORE:
            if ((o.score = match_score_parse(optarg)) < 0)
                usage_die("--score: '%s' is none of p, mls (elk), l2, cosine, w2, csd, kl, bhatt (bhattacharyya)", optarg);
            break;
        case 'h': usage_help();
        default: usage_bad_option(argv);
        }
    }
    if (argc - optind > 1)
        usage_die("at most one input");
    if (o.force_mc && o.means)
        usage_die("--mc and --means contradict each other");
    if (o.self && o.pairs_file)
        usage_die("--self scores images, not pairs: drop --pairs");
    if (o.self && o.npairs_given)
        usage_die("--self scores every image, not random pairs: drop -n");
    if (o.pairs_file && o.npairs_given)
        usage_die("--pairs scores the pairs of the file, not random pairs: drop -n");
    if (o.other && o.self)
        usage_die("--self scores images, not pairs: drop -g");
    if (o.other && o.pairs_file)
        usage_die("-g draws random cross pairs: drop --pairs");
    if (o.means && o.K_given)
        usage_die("--means scores the means exactly, there is nothing to sample: drop -K");
    if (o.score != MATCH_SCORE_P && (o.self || o.force_mc || o.means || o.K_given))
        usage_die("--score %s scores pairs exactly, with nothing to sample: drop %s", match_score_names[o.score],
                  o.self ? "--self" : o.force_mc ? "--mc" : o.means ? "--means" : "-K");
    o.input = optind < argc ? argv[optind] : "-";
    if (o.other && !strcmp(o.other, "-") && !strcmp(o.input, "-"))
        usage_die("INPUT and OTHER cannot both be stdin");
    stdout_not_terminal();

    /* the summary file exists (as a temp file) before any work: an unwritable path fails now */
    FILE *jf = o.json ? json_open(o.json, 1) : NULL;
    stream_reader *in = stream_open_path(o.input);
    const stream_header *ih = in->header;
    /* kind, mu [C, D] with C, D >= 1 and var of its shape: C = 0 would divide K by 0 */
    match_layout L = match_check_header(in->name, ih);
    /* the match probability's a and b (the other scores need none: any model's embeddings) */
    int no_p = o.score != MATCH_SCORE_P; /* MLS, l2, cosine: no a, b, nor samples */
    double a = 1, b = 0;
    char why[256];
    if (!no_p && !match_meta_ab(ih, &a, &b, why, sizeof why))
        die("%s: %s: --score l2 or cosine ranks pairs without one", in->name, why);
    if (!(a > 0) || !isfinite(a) || !isfinite(b))
        die("%s: match_a = %g, match_b = %g: need a finite a > 0 and a finite b", in->name, a, b);
    int has_var = L.var >= 0;
    if (o.force_mc && !has_var)
        die("%s: --mc needs stochastic embeddings, but the input has no 'var' field (point embeddings: "
            "p is computed exactly, there is nothing to sample)",
            in->name);
    if (o.K_given && !has_var)
        die("%s: -K needs stochastic embeddings, but the input has no 'var' field (point embeddings: "
            "p is computed exactly, there is nothing to sample)",
            in->name);
    int stochastic = has_var && !o.means && !no_p;
    int64_t C = L.C;
    if (stochastic && o.K % C)
        die("-K %d is not a multiple of the %lld mixture components (stratified sampling draws K / C "
            "from each)",
            o.K, (long long)C);
    stream_reader *gin = NULL;
    if (o.other) { /* the second stream must be the same kind of embedding, scored the same way */
        gin = stream_open_path(o.other);
        const stream_header *gh = gin->header;
        match_layout M = match_check_header(gin->name, gh);
        if (M.C != L.C || M.D != L.D || (M.var >= 0) != has_var)
            die("%s: embeddings C = %d, D = %d %s, expected C = %d, D = %d %s as in %s", gin->name, M.C, M.D,
                M.var >= 0 ? "with var" : "without var", L.C, L.D, has_var ? "with var" : "without var",
                in->name);
        double ga = a, gb = b;
        if (!no_p && !match_meta_ab(gh, &ga, &gb, why, sizeof why))
            die("%s: %s: --score l2 or cosine ranks pairs without one", gin->name, why);
        if (ga != a || gb != b)
            die("%s: match_a = %g, match_b = %g, expected %g, %g as in %s (the same model)", gin->name, ga,
                gb, a, b, in->name);
    }
    match_scorer sc;
    match_scorer_init(&sc, a, b, o.K, o.seed, stochastic);
    if (o.self)
        score_self(&o, in, &sc, jf, argc, args);
    else
        score_pairs(&o, in, gin, &sc, jf, argc, args);
    if (gin)
        stream_close(gin);
    close_stdout();
    if (jf)
        atomic_commit(jf);
    match_scorer_free(&sc);
    stream_close(in);
    free(args);
    return 0;
}
