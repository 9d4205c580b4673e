/* fewshot: few-shot classification by class prototypes over random test episodes (spe-scott-2019
 * section 4 and appendix A: the mean accuracy over 1000 episodes), for PN and SPE; writes kind
 * `fewshot`. The episodes and the report: lib/evaluation/fewshot.h; the math: lib/measures/proto.h.
 *
 * Each image enters as one diagonal Gaussian (PN uses its mean). Episode e comes from a generator
 * seeded by (seed, e) (lib/evaluation/fewshot.h); the naive sampler's K standard normal draws of a query
 * image come from (seed, the image's record index): the same image gets the same draws in every
 * episode. So an episode depends only on the seed and its number, and the episodes run on
 * lib/base/par.h's workers, each writing only its own episode's results: the same bytes whatever the
 * thread count.
 */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fewshot.h"
#include "par.h"
#include "proto.h"
#include "rng.h"
#include "stream.h"
#include "util.h"

static const char *usage =
    "usage: fewshot -s SUPPORT [-R EPISODES] [-n WAYS] [-k SHOTS] [-q QUERIES] [--score SCORER]\n"
    "               [--se2 X] [-K SAMPLES] [-S SEED] [-t THREADS] [--json FILE] [QUERY]\n"
    "       fewshot --summary [INPUT]\n"
    "  Few-shot classification by prototypes (pn, SPE) over random episodes.\n";

enum { SC_PN = FEWSHOT_PN, SC_NAIVE = FEWSHOT_NAIVE, SC_CLOSED = FEWSHOT_CLOSED, NSC = FEWSHOT_NSC };
#define SAMPLE_STREAM RNG_STREAM('f', 's', 'z', 'k')
/* the naive sampler's draws are kept for every query image when they fit in this many bytes,
 * else drawn again at each use (the same numbers either way) */
#define EPS_CACHE_BYTES ((size_t)1 << 30)

typedef struct {
    const char *support, *input, *json;
    int summary;
    int64_t episodes;
    int ways, shots, queries, samples, threads;
    int score; /* -1: the default */
    int se2_given;
    double se2;
    uint64_t seed;
} options;

/* per worker: the episode's draw and the scorers' scratch */
typedef struct {
    fewshot_episode ep;
    int *label;
    double *smu, *svar, *score, *p, *eps;
    proto_set pn, spe;
} worker;

typedef struct {
    const options *o;
    const fewshot_items *S, *Q;
    const fewshot_classes *C;
    int n, spe;                 /* ways; SPE scorers run */
    double se2;
    const double *eps;          /* (Q->n, K, D) cached draws, or NULL */
    worker *w;                  /* (threads) */
    /* results: record r = (e * n + j) * Q + q; correct counts (episodes, NSC) */
    int64_t *rec_item;
    int32_t *rec_pred;
    uint8_t *rec_ok;
    float *rec_eta;
    int64_t *ep_correct;
} context;

/* K x D standard normals of query image i */
static void draw_eps(uint64_t seed, int64_t i, int K, int D, double *eps)
{
    rng r;
    rng_init(&r, seed, SAMPLE_STREAM ^ (uint64_t)i);
    for (int e = 0; e < K * D; e++)
        eps[e] = rng_normal(&r);
}

static void worker_init(worker *w, const context *c)
{
    int n = c->n, S = c->o->shots, D = c->S->D, K = c->o->samples;
    memset(w, 0, sizeof *w);
    fewshot_episode_init(&w->ep, c->C, n, S, c->o->queries);
    w->label = emalloc((size_t)n * S * sizeof *w->label);
    w->smu = emalloc((size_t)n * S * D * sizeof *w->smu);
    w->svar = emalloc((size_t)n * S * D * sizeof *w->svar);
    w->score = emalloc((size_t)n * sizeof *w->score);
    w->p = emalloc((size_t)n * sizeof *w->p);
    if (c->spe && !c->eps)
        w->eps = emalloc((size_t)K * D * sizeof *w->eps);
    proto_init(&w->pn, n, D);
    if (c->spe)
        proto_init(&w->spe, n, D);
}

static void worker_free(worker *w, int spe)
{
    fewshot_episode_free(&w->ep);
    free(w->label);
    free(w->smu);
    free(w->svar);
    free(w->score);
    free(w->p);
    free(w->eps);
    proto_free(&w->pn);
    if (spe)
        proto_free(&w->spe);
}

/* par_fn: episode e on worker `worker`'s scratch */
static void run_episode(void *ctx, int task, int worker_index)
{
    const context *c = ctx;
    worker *w = &c->w[worker_index];
    const options *o = c->o;
    const fewshot_classes *C = c->C;
    const fewshot_items *Si = c->S, *Qi = c->Q;
    int n = c->n, S = o->shots, Q = o->queries, D = Si->D, K = o->samples;
    int64_t e = task;
    fewshot_episode_draw(&w->ep, C, Si, Qi, o->seed, e);
    for (int j = 0; j < n; j++)
        for (int s = 0; s < S; s++) {
            int64_t i = w->ep.sup[j * S + s];
            w->label[j * S + s] = j;
            memcpy(w->smu + (size_t)(j * S + s) * D, Si->mu + i * D, (size_t)D * sizeof *w->smu);
            if (c->spe)
                memcpy(w->svar + (size_t)(j * S + s) * D, Si->var + i * D, (size_t)D * sizeof *w->svar);
        }
    /* prototypes, then every query by every scorer */
    proto_fit_pn(&w->pn, w->smu, w->label, n * S);
    if (c->spe)
        proto_fit_spe(&w->spe, w->smu, w->svar, w->label, n * S, c->se2);
    int64_t *ok = c->ep_correct + e * NSC;
    for (int s = 0; s < NSC; s++)
        ok[s] = 0;
    for (int j = 0; j < n; j++)
        for (int q = 0; q < Q; q++) {
            int64_t i = w->ep.qry[(size_t)j * Q + q], rec = (e * n + j) * Q + q;
            const double *mu = Qi->mu + i * D;
            for (int s = 0; s < NSC; s++) {
                if (s != SC_PN && !c->spe)
                    continue;
                if (s == SC_PN)
                    proto_pn_scores(&w->pn, mu, w->score);
                else if (s == SC_CLOSED)
                    proto_spe_closed(&w->spe, mu, Qi->var + i * D, w->score);
                else {
                    const double *eps = c->eps ? c->eps + (size_t)i * K * D : w->eps;
                    if (!c->eps)
                        draw_eps(o->seed, i, K, D, w->eps);
                    proto_spe_naive(&w->spe, mu, Qi->var + i * D, eps, K, w->p);
                }
                /* pn and closed: the argmax of the scores is that of their softmax */
                const double *v = s == SC_NAIVE ? w->p : w->score;
                int y = proto_argmax(v, n);
                ok[s] += y == j;
                if (s == o->score) {
                    c->rec_item[rec] = i;
                    c->rec_pred[rec] = C->label[w->ep.chosen[y]];
                    c->rec_ok[rec] = y == j;
                    c->rec_eta[rec] = (float)(s == SC_NAIVE ? proto_uncertainty(v, n) : proto_uncertainty_scores(v, n));
                }
            }
        }
}

/* --summary: the line of --json from a `fewshot` stream */
static void summarize(const char *path)
{
    fewshot_summary s;
    stream_reader *in;
    fewshot_summary_read(path, &s, &in);
    fewshot_summary_json(stdout, &s);
    stream_close(in);
}

/* the naive sampler's draws of every query image that can be drawn, or NULL when too big */
static double *eps_cache_new(const options *o, const fewshot_items *Q, const fewshot_classes *C)
{
    int D = Q->D;
    if ((double)Q->n * o->samples * D * sizeof(double) > (double)EPS_CACHE_BYTES)
        return NULL;
    double *eps = emalloc((size_t)Q->n * o->samples * D * sizeof *eps);
    for (int k = 0; k < C->nc; k++)
        for (int64_t t = 0; t < C->nq[k]; t++) {
            int64_t i = C->qry[k][t];
            draw_eps(o->seed, i, o->samples, D, eps + (size_t)i * o->samples * D);
        }
    return eps;
}

/* the `fewshot` stream: the summary in the header, a record per query of every episode */
static void write_stream(int argc, char **args, const options *o, const stream_reader *qin,
                         const stream_reader *sin, const fewshot_summary *sm, const context *c, FILE *jf)
{
    const fewshot_items *Q = c->Q;
    stream_header *h = header_new("fewshot", 0);
    header_provenance(h, argc, args);
    header_set_seed(h, o->seed);
    header_add_input(h, qin->header);
    header_add_input(h, sin->header);
    header_copy_meta(h, qin->header);
    classnames_set(h, &Q->names); /* class and predicted index the union of both sets' names */
    header_set_int(h, "episodes", o->episodes);
    header_set_int(h, "ways", c->n);
    header_set_int(h, "shots", o->shots);
    header_set_int(h, "queries", o->queries);
    header_set_int(h, "samples", o->samples);
    header_set_str(h, "score", fewshot_score_name[o->score]);
    header_set_str(h, "support", o->support);
    if (c->spe)
        header_set_float(h, "se2", c->se2);
    header_set_str(h, "se2_from", sm->se2_from);
    header_set_float(h, "accuracy", sm->acc[o->score]);
    header_set_float(h, "ci95", sm->ci[o->score]);
    char key[64];
    for (int k = 0; k < NSC; k++)
        if (k == SC_PN || c->spe) {
            snprintf(key, sizeof key, "%s_accuracy", fewshot_score_json[k]);
            header_set_float(h, key, sm->acc[k]);
            snprintf(key, sizeof key, "%s_ci95", fewshot_score_json[k]);
            header_set_float(h, key, sm->ci[k]);
        }
    header_add_field(h, "episode", DT_I32, 0, NULL);
    header_add_field(h, "id", DT_I64, 0, NULL);
    header_add_field(h, "class", DT_I32, 0, NULL);
    header_add_field(h, "predicted", DT_I32, 0, NULL);
    header_add_field(h, "correct", DT_U8, 0, NULL);
    header_add_field(h, "eta", DT_F32, 0, NULL);
    int64_t nocc[1] = {Q->nocc};
    if (Q->occ)
        header_add_field(h, "occluded", DT_U8, 1, nocc);
    stream_writer *out = stream_create(stdout, h);
    int64_t per = (int64_t)c->n * o->queries, N = o->episodes * per;
    for (int64_t r = 0; r < N; r++) {
        int32_t ep = (int32_t)(r / per);
        int64_t i = c->rec_item[r];
        void *data[7] = {&ep, &Q->id[i], &Q->cls[i], &c->rec_pred[r], &c->rec_ok[r], &c->rec_eta[r],
                         Q->occ ? Q->occ + i * Q->nocc : NULL};
        stream_write_data(out, data, 0);
    }
    /* the summary's data is safe first, then the stream whole, then the summary in place */
    if (jf) {
        fewshot_summary_json(jf, sm);
        atomic_sync(jf);
    }
    stream_finish(out);
    close_stdout();
    if (jf)
        atomic_commit(jf);
    header_free(h);
}

int main(int argc, char **argv)
{
    util_start(argc, argv, usage);
    char **args = emalloc((size_t)(argc + 1) * sizeof *args); /* before getopt permutes argv */
    memcpy(args, argv, (size_t)(argc + 1) * sizeof *args);
    options o = {.episodes = 1000, .shots = 5, .queries = 15, .samples = 200, .threads = 1, .score = -1, .seed = 714};
    int other_given = 0;
    enum { OPT_JSON = 256, OPT_SUMMARY, OPT_SCORE, OPT_SE2 };
    static const struct option lopts[] = {{"json", required_argument, 0, OPT_JSON},
                                          {"summary", no_argument, 0, OPT_SUMMARY},
                                          {"score", required_argument, 0, OPT_SCORE},
                                          {"se2", required_argument, 0, OPT_SE2},
                                          {"help", no_argument, 0, 'h'},
                                          {0, 0, 0, 0}};
    int c;
    while ((c = getopt_long(argc, argv, "s:R:n:k:q:K:S:t:h", lopts, NULL)) != -1) {
        if (c != OPT_SUMMARY && c != 'h')
            other_given = 1;
        switch (c) {
        case 's': o.support = optarg; break;
        case 'R': o.episodes = parse_long("-R", optarg, 1, FEWSHOT_MAX_EPISODES); break;
        case 'n': o.ways = (int)parse_long("-n", optarg, 2, 1000000); break;
        case 'k': o.shots = (int)parse_long("-k", optarg, 1, 100000); break;
        case 'q': o.queries = (int)parse_long("-q", optarg, 1, 100000); break;
        case 'K': o.samples = (int)parse_long("-K", optarg, 1, 100000); break;
        case 'S': o.seed = parse_u64("-S", optarg); break;
        case 't': o.threads = (int)parse_long("-t", optarg, 1, 64); break;
        case OPT_JSON: o.json = optarg; break;
        case OPT_SUMMARY: o.summary = 1; break;
        case OPT_SCORE:
            if ((o.score = fewshot_score_index(optarg)) < 0)
                usage_die("--score: '%s' is none of pn, spe-naive, spe-closed", optarg);
            break;
        case OPT_SE2:
            o.se2 = parse_double("--se2", optarg, 0, 1e300);
            o.se2_given = 1;
            break;
        case 'h': usage_help();
        default: usage_bad_option(argv);
        }
    }
    if (argc - optind > 1)
        usage_die("at most one input");
    o.input = optind < argc ? argv[optind] : "-";
    if (o.summary) {
        if (other_given)
            usage_die("--summary reads a fewshot stream: no other option");
        summarize(o.input);
        free(args);
        close_stdout();
        return 0;
    }
    if (!o.support)
        usage_die("no support stream: give -s SUPPORT");
    stdout_not_terminal();

    /* the summary file exists (as a temp file) before any work: an unwritable path fails now */
    FILE *jf = o.json ? json_open(o.json, 1) : NULL;
    fewshot_items S = {0}, Q = {0};
    stream_reader *qin, *sin;
    fewshot_items_read(o.input, &Q, &qin);
    fewshot_items_read(o.support, &S, &sin);
    fewshot_check_alike(&S, &Q);
    int spe = S.has_var && Q.has_var;
    if (o.score < 0)
        o.score = spe ? SC_CLOSED : SC_PN;
    if (o.score != SC_PN && !spe)
        die("--score %s needs variances: the %s stream %s has no field 'var' (a point model): use --score pn",
            fewshot_score_name[o.score], !S.has_var ? "support" : "query", !S.has_var ? S.name : Q.name);
    /* (after the error above, so that a failing run says one thing) */
    if (S.has_var != Q.has_var)
        warn("only the %s stream carries variances ('var'): SPE needs both; PN only",
             S.has_var ? "support" : "query");
    const char *se2_from = "none (no variances: PN only)";
    double se2 = spe ? fewshot_se2(o.se2_given, o.se2, sin->header, qin->header, &se2_from) : 0;

    fewshot_classes C = {0};
    fewshot_classes_make(&S, &Q, &C);
    if (o.ways > C.nc)
        die("-n %d classes per episode, but only %d class%s present in both streams", o.ways, C.nc,
            C.nc == 1 ? " is" : "es are");
    if (!o.ways && C.nc < 2)
        die("only one class (%d) is present in both streams: an episode needs at least 2", C.label[0]);
    int n = o.ways ? o.ways : C.nc;
    fewshot_check_sizes(&C, &S, &Q, o.shots, o.queries);
    if (spe)
        fewshot_check_spe(&S, &C, se2);

    int64_t per = (int64_t)n * o.queries, N = o.episodes * per;
    context ctx = {.o = &o, .S = &S, .Q = &Q, .C = &C, .n = n, .spe = spe, .se2 = se2};
    ctx.rec_item = emalloc((size_t)N * sizeof *ctx.rec_item);
    ctx.rec_pred = emalloc((size_t)N * sizeof *ctx.rec_pred);
    ctx.rec_ok = emalloc((size_t)N);
    ctx.rec_eta = emalloc((size_t)N * sizeof *ctx.rec_eta);
    ctx.ep_correct = emalloc((size_t)o.episodes * NSC * sizeof *ctx.ep_correct);
    double *eps_cache = spe ? eps_cache_new(&o, &Q, &C) : NULL;
    ctx.eps = eps_cache;

    int T = o.threads < o.episodes ? o.threads : (int)o.episodes;
    ctx.w = emalloc((size_t)T * sizeof *ctx.w);
    for (int t = 0; t < T; t++)
        worker_init(&ctx.w[t], &ctx);
    par_for(T, (int)o.episodes, run_episode, &ctx);

    fewshot_summary sm = {.episodes = o.episodes, .ways = n, .shots = o.shots, .queries = o.queries,
                          .samples = o.samples, .spe = spe, .score = fewshot_score_name[o.score],
                          .se2_from = se2_from, .se2 = se2, .seed = o.seed};
    for (int k = 0; k < NSC; k++) {
        sm.acc[k] = sm.ci[k] = NAN;
        if (k == SC_PN || spe)
            fewshot_accuracy(ctx.ep_correct + k, NSC, o.episodes, per, &sm.acc[k], &sm.ci[k]);
    }
    write_stream(argc, args, &o, qin, sin, &sm, &ctx, jf);

    for (int t = 0; t < T; t++)
        worker_free(&ctx.w[t], spe);
    free(ctx.w);
    free(eps_cache);
    free(ctx.rec_item);
    free(ctx.rec_pred);
    free(ctx.rec_ok);
    free(ctx.rec_eta);
    free(ctx.ep_correct);
    fewshot_classes_free(&C);
    fewshot_items_free(&S);
    fewshot_items_free(&Q);
    stream_close(sin);
    stream_close(qin);
    free(args);
    return 0;
}
