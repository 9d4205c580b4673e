/* ktau: does performance fall as uncertainty rises? Items sorted by uncertainty into equal-size
 * bins, per-bin performance, and Kendall's tau-b between bin index and performance with the sign
 * inverted (hib-oh-2019 section 4.4, Table 2). Definitions: lib/measures/tau.h.
 *
 * Items with equal uncertainty are ordered by a hash of their identity and the seed (-S, default
 * 714; lib/measures/argsort.h metrics_tie_key): `id` (fewshot: `episode` and `id`; pairscores: `id1` and
 * `id2`), so the order of the records never matters, not even in distribution: any permutation
 * of the records gives the same bytes. Stream order would put, e.g., all the correct items of a
 * tie first and make tau up; a seeded permutation of the positions (the old rule) made tau depend
 * on the record order for one seed. Why not the exact expectation over tie orders, as for AURC
 * below: AURC is linear in the order, tau-b is not (the signs of differences between bin
 * performances and a denominator counting their ties); its expectation sums over every way the
 * items of a tie fill the bins it spans (multivariate hypergeometric), exponential in the bins a
 * tie spans, and for AP bins over every subset. Items equal in uncertainty, identity and
 * performance are interchangeable. A stream without the identity fields falls back on the record
 * number (warned when there are ties: then the record order matters). When the uncertainty is
 * the same for every
 * item (a point model's eta is the constant 1 - sigmoid(b)) the bins are arbitrary: tau and the
 * per-bin values are undefined and reported as such (JSON null and a note, text "undefined",
 * a TSV with its header line only), exit 0.
 *
 * With a performance per item (-m accuracy:FIELD) it also says whether the uncertainty knows when
 * the answer is wrong: the area under the risk-coverage curve (AURC, its oracle and E-AURC; loss
 * = 1 - FIELD) and, for a binary FIELD, the AUROC of the uncertainty for the wrong items (both
 * without a seed: ties are averaged exactly). Definitions: lib/measures/aurc.h. -m error:FIELD is the
 * same with the loss FIELD itself (performance 1 - FIELD): for a 0/1 flag such as `corrupt`, the
 * AUROC of the uncertainty at telling the flagged items from the others, PFE's "the variance
 * grows with the occlusion".
 */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "argsort.h"
#include "columns.h"
#include "stream.h"
#include "uncertainty.h"
#include "util.h"

static const char *usage =
    "usage: ktau [-b BINS] [-u FIELD] [-m accuracy:FIELD | -m error:FIELD | -m ap:SCORE:LABEL] [-S SEED]\n"
    "            [-o FILE.tsv] [--reject-tsv FILE] [--json FILE] [INPUT]\n"
    "  Kendall's tau of uncertainty against performance in bins; the risk-coverage curve.\n";

typedef struct {
    int bins;
    uint64_t seed;
    const char *ufield;
    const char *perf;
    const char *tsv;
    const char *reject_tsv;
    const char *json;
    const char *input;
    /* -m parsed: accuracy:F1, error:F1 (the performance is 1 - F1) or ap:F1:F2 (F1, F2 point
     * into spec) */
    int is_ap, is_error;
    char *spec, *f1, *f2;
} options;

/* the performance spec: accuracy:FIELD, error:FIELD or ap:SCORE:LABEL */
static void parse_perf(options *o)
{
    if (!o->perf)
        return;
    o->spec = estrdup(o->perf);
    char *colon = strchr(o->spec, ':');
    if (!colon)
        usage_die("-m: expected accuracy:FIELD, error:FIELD or ap:SCORE:LABEL, got '%s'", o->perf);
    *colon = 0;
    o->f1 = colon + 1;
    if (!strcmp(o->spec, "accuracy") || !strcmp(o->spec, "error")) {
        o->is_error = !strcmp(o->spec, "error");
        if (!*o->f1 || strchr(o->f1, ':'))
            usage_die("-m: expected %s:FIELD, got '%s'", o->spec, o->perf);
    } else if (!strcmp(o->spec, "ap")) {
        o->is_ap = 1;
        o->f2 = strchr(o->f1, ':');
        if (!o->f2 || o->f2 == o->f1 || !o->f2[1] || strchr(o->f2 + 1, ':'))
            usage_die("-m: expected ap:SCORE:LABEL, got '%s'", o->perf);
        *o->f2++ = 0;
    } else
        usage_die("-m: '%s' is none of accuracy, error, ap", o->spec);
}

static options parse_options(int argc, char **argv)
{
    options o = {.bins = 20, .seed = 714};
    enum { OPT_REJECT = 256 };
    static const struct option lopts[] = {{"json", required_argument, 0, 'J'},
                                          {"reject-tsv", required_argument, 0, OPT_REJECT},
                                          {"help", no_argument, 0, 'h'},
                                          {0, 0, 0, 0}};
    int c;
    while ((c = getopt_long(argc, argv, "b:u:m:o:S:h", lopts, NULL)) != -1) {
        switch (c) {
        case 'b': o.bins = (int)parse_long("-b", optarg, 1, 1000000); break;
        case 'u': o.ufield = optarg; break;
        case 'm': o.perf = optarg; break;
        case 'o': o.tsv = optarg; break;
        case 'S': o.seed = parse_u64("-S", optarg); break;
        case 'J': o.json = optarg; break;
        case OPT_REJECT: o.reject_tsv = optarg; break;
        case 'h': usage_help();
        default: usage_bad_option(argv);
        }
    }
    if (argc - optind > 1)
        usage_die("at most one input");
    parse_perf(&o);
    o.input = optind < argc ? argv[optind] : "-";
    return o;
}

/* the uncertainty and performance of the evaluators' streams, unless -u and -m name them */
static void stream_defaults(options *o, const stream_reader *in)
{
    const char *kind = in->header->kind;
    if (!strcmp(kind, "knn") || !strcmp(kind, "fewshot") || !strcmp(kind, "pairscores") || !strcmp(kind, "retrieval")) {
        if (!o->ufield)
            o->ufield = "eta";
        if (!o->perf) {
            o->is_ap = !strcmp(kind, "pairscores");
            o->f1 = o->is_ap ? "p" : !strcmp(kind, "retrieval") ? "ap" : "correct";
            o->f2 = o->is_ap ? "match" : NULL;
        }
    } else if (!o->ufield || !o->perf)
        die("%s: a stream of kind '%s' has no default uncertainty and performance: give -u and -m",
            in->name, kind);
    if (!strcmp(o->ufield, "eta") && header_field_find(in->header, "eta") < 0)
        die("%s: no field 'eta' in this %s stream (knn of point embeddings, which have no var: run "
            "pairscore --self before knn; or choose another uncertainty with -u, e.g. -u nn_dist)",
            in->name, kind);
}

/* the tie key of each item: a hash of its identity (fields that travel with the item) and the
 * seed, or of its record number when the stream lacks them (then *warning says so) */
static uint64_t *tie_keys(const options *o, const stream_reader *in, int nident, const char *const *ident,
                          double *const *idcols, int64_t n, char *warning, size_t size)
{
    uint64_t *tie = emalloc((size_t)n * sizeof *tie);
    for (int64_t i = 0; i < n; i++) {
        double id[2];
        for (int k = 0; k < nident; k++)
            id[k] = idcols[k][i];
        if (!nident)
            id[0] = (double)i;
        tie[i] = metrics_tie_key(o->seed, id, nident ? nident : 1);
    }
    int two = !strcmp(in->header->kind, "fewshot") || !strcmp(in->header->kind, "pairscores");
    snprintf(warning, size, "%s: no identity field (%s%s%s): items with equal %s are ordered by record number (hashed "
             "with the seed), so their order in the stream matters",
             in->name, ident[0], two ? " and " : "", two ? ident[1] : "", o->ufield);
    return tie;
}

int main(int argc, char **argv)
{
    util_start(argc, argv, usage);
    options o = parse_options(argc, argv);

    /* the TSV exists (as a temp file) before any work: an unwritable path fails now */
    FILE *tf = o.tsv ? atomic_open(o.tsv) : NULL;
    FILE *rf = o.reject_tsv ? atomic_open(o.reject_tsv) : NULL;
    FILE *jf = o.json ? json_open(o.json, 0) : NULL;
    stream_reader *in = stream_open_path(o.input);
    stream_defaults(&o, in);
    /* the identity that orders equal uncertainties: fields that travel with the item */
    const char *kind = in->header->kind;
    const char *ident_knn[] = {"id"}, *ident_fewshot[] = {"episode", "id"}, *ident_pairs[] = {"id1", "id2"};
    const char *const *ident = !strcmp(kind, "fewshot") ? ident_fewshot : !strcmp(kind, "pairscores") ? ident_pairs
                                                                                                         : ident_knn;
    int nident = !strcmp(kind, "fewshot") || !strcmp(kind, "pairscores") ? 2 : 1;
    for (int k = 0; k < nident; k++) {
        int fi = header_field_find(in->header, ident[k]);
        if (fi < 0 || shape_numel(in->header->fields[fi].ndim, in->header->fields[fi].shape) != 1)
            nident = 0; /* the record number instead */
    }
    int nperf = o.is_ap ? 3 : 2;
    const char *names[5] = {o.ufield, o.f1, o.f2};
    for (int k = 0; k < nident; k++)
        names[nperf + k] = ident[k];
    double *cols[5];
    int64_t n = metrics_read_columns(in, nperf + nident, names, cols);
    if (!n)
        die("%s: the stream has no records", in->name);
    if (n < o.bins)
        die("%lld items cannot fill %d bins", (long long)n, o.bins);
    for (int64_t i = 0; i < n; i++)
        if (!isfinite(cols[0][i]) || !isfinite(cols[1][i]))
            die("%s: record %lld: %s %g is not finite", in->name, (long long)i,
                !isfinite(cols[0][i]) ? o.ufield : o.f1, !isfinite(cols[0][i]) ? cols[0][i] : cols[1][i]);

    /* -m error:FIELD: the performance is 1 - FIELD (FIELD a loss, e.g. a flag of low-quality items) */
    char pcol[256];
    snprintf(pcol, sizeof pcol, "1-%s", o.f1);
    if (o.is_error)
        for (int64_t i = 0; i < n; i++)
            cols[1][i] = 1 - cols[1][i];
    uncertainty_report r = {.ufield = o.ufield, .pname = o.is_ap ? "ap" : o.is_error ? "error" : "accuracy",
                            .pcol = o.is_error ? pcol : NULL, .f1 = o.f1, .f2 = o.f2, .is_ap = o.is_ap,
                            .nbins = o.bins, .seed = o.seed, .n = n};
    char warning[1024];
    uint64_t *tie = tie_keys(&o, in, nident, ident, cols + nperf, n, warning, sizeof warning);
    uncertainty_analyse(&r, cols[0], cols[1], o.is_ap ? cols[2] : NULL, tie, nident ? NULL : warning);
    free(tie);

    if (tf) {
        uncertainty_write_tsv(tf, &r);
        atomic_sync(tf); /* the data is safe; it is renamed into place once stdout is written */
    }
    if (rf) {
        uncertainty_write_reject_tsv(rf, &r);
        atomic_sync(rf);
    }
    if (jf) {
        uncertainty_write_json(jf, &r);
        if (jf != stdout)
            atomic_sync(jf);
    }
    if (jf != stdout) /* --json -: the JSON in the text's place */
        uncertainty_print(stdout, &r);
    for (int f = 0; f < nperf + nident; f++)
        free(cols[f]);
    uncertainty_free(&r);
    free(o.spec);
    stream_close(in);
    close_stdout();
    json_commit(jf);
    if (tf)
        atomic_commit(tf);
    if (rf)
        atomic_commit(rf);
    return 0;
}
