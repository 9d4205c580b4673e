/* ktau: does performance fall as uncertainty rises? Items sorted by uncertainty into equal-size
 * bins, per-bin performance, and Kendall's tau-b between bin index and performance with the sign
 * inverted (hib-oh-2019 section 4.4, Table 2). Definitions: lib/metrics.h.
 *
 * Items with equal uncertainty are ordered by a hash of their identity and the seed (-S, default
 * 714; lib/metrics.h metrics_tie_key): `id` (fewshot: `episode` and `id`; pairscores: `id1` and
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
 * without a seed: ties are averaged exactly). Definitions: lib/metrics.h.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "columns.h"
#include "metrics.h"
#include "stream.h"
#include "util.h"

static const char *usage =
    "usage: ktau [-b BINS] [-u FIELD] [-m accuracy:FIELD | -m ap:SCORE:LABEL] [-S SEED] [-o FILE.tsv]\n"
    "            [--reject-tsv FILE] [--json FILE] [INPUT]\n"
    "  Kendall's tau of uncertainty against performance in bins; the risk-coverage curve.\n";

#define REJECT_POINTS 100 /* rejected 0 .. 99 % */

typedef struct {
    int bins;
    uint64_t seed;
    const char *ufield;
    const char *perf;
    const char *tsv;
    const char *reject_tsv;
    const char *json;
    const char *input;
} options;

int main(int argc, char **argv)
{
    util_start(argc, argv, usage);
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
    /* the performance spec: accuracy:FIELD or ap:SCORE:LABEL */
    int is_ap = 0;
    char *spec = NULL, *f1 = NULL, *f2 = NULL;
    if (o.perf) {
        spec = estrdup(o.perf);
        char *colon = strchr(spec, ':');
        if (!colon)
            usage_die("-m: expected accuracy:FIELD or ap:SCORE:LABEL, got '%s'", o.perf);
        *colon = 0;
        f1 = colon + 1;
        if (!strcmp(spec, "accuracy")) {
            if (!*f1 || strchr(f1, ':'))
                usage_die("-m: expected accuracy:FIELD, got '%s'", o.perf);
        } else if (!strcmp(spec, "ap")) {
            is_ap = 1;
            f2 = strchr(f1, ':');
            if (!f2 || f2 == f1 || !f2[1] || strchr(f2 + 1, ':'))
                usage_die("-m: expected ap:SCORE:LABEL, got '%s'", o.perf);
            *f2++ = 0;
        } else
            usage_die("-m: '%s' is neither accuracy nor ap", spec);
    }
    o.input = optind < argc ? argv[optind] : "-";

    /* the TSV exists (as a temp file) before any work: an unwritable path fails now */
    FILE *tf = o.tsv ? atomic_open(o.tsv) : NULL;
    FILE *rf = o.reject_tsv ? atomic_open(o.reject_tsv) : NULL;
    FILE *jf = o.json ? json_open(o.json, 0) : NULL;
    stream_reader *in = stream_open_path(o.input);
    const char *kind = in->header->kind;
    if (!strcmp(kind, "knn") || !strcmp(kind, "fewshot") || !strcmp(kind, "pairscores") || !strcmp(kind, "retrieval")) {
        if (!o.ufield)
            o.ufield = "eta";
        if (!o.perf) {
            is_ap = !strcmp(kind, "pairscores");
            f1 = is_ap ? "p" : !strcmp(kind, "retrieval") ? "ap" : "correct";
            f2 = is_ap ? "match" : NULL;
        }
    } else if (!o.ufield || !o.perf)
        die("%s: a stream of kind '%s' has no default uncertainty and performance: give -u and -m",
            in->name, kind);
    if (!strcmp(o.ufield, "eta") && header_field_find(in->header, "eta") < 0)
        die("%s: no field 'eta' in this %s stream (knn of point embeddings, which have no var: run "
            "pairscore --self before knn; or choose another uncertainty with -u, e.g. -u nn_dist)",
            in->name, kind);
    /* the identity that orders equal uncertainties: fields that travel with the item */
    const char *ident_knn[] = {"id"}, *ident_fewshot[] = {"episode", "id"}, *ident_pairs[] = {"id1", "id2"};
    const char *const *ident = !strcmp(kind, "fewshot") ? ident_fewshot : !strcmp(kind, "pairscores") ? ident_pairs
                                                                                                         : ident_knn;
    int nident = !strcmp(kind, "fewshot") || !strcmp(kind, "pairscores") ? 2 : 1;
    for (int k = 0; k < nident; k++) {
        int fi = header_field_find(in->header, ident[k]);
        if (fi < 0 || shape_numel(in->header->fields[fi].ndim, in->header->fields[fi].shape) != 1)
            nident = 0; /* the record number instead */
    }
    int nperf = is_ap ? 3 : 2;
    const char *names[5] = {o.ufield, f1, f2};
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
                !isfinite(cols[0][i]) ? o.ufield : f1, !isfinite(cols[0][i]) ? cols[0][i] : cols[1][i]);

    int B = o.bins;
    /* a constant uncertainty ranks nothing: every cut into bins would be arbitrary */
    int constant = 1;
    for (int64_t i = 1; i < n && constant; i++)
        constant = cols[0][i] == cols[0][0];
    if (constant)
        warn("%s is %g for every item: the bins and tau are undefined", o.ufield, cols[0][0]);
    int64_t *order = emalloc((size_t)n * sizeof *order), *start = emalloc((size_t)(B + 1) * sizeof *start);
    /* equal uncertainties: by the hash of the identity and the seed, then by the performance
     * fields, so that items equal in all are interchangeable (lib/metrics.h argsort_ties) */
    uint64_t *tie = emalloc((size_t)n * sizeof *tie);
    for (int64_t i = 0; i < n; i++) {
        double id[2];
        for (int k = 0; k < nident; k++)
            id[k] = cols[nperf + k][i];
        if (!nident)
            id[0] = (double)i;
        tie[i] = metrics_tie_key(o.seed, id, nident ? nident : 1);
    }
    const double *more[2] = {cols[1], is_ap ? cols[2] : NULL};
    metrics_argsort_ties(cols[0], tie, nperf - 1, more, n, order);
    if (!nident && !constant)
        for (int64_t t = 1; t < n; t++)
            if (cols[0][order[t]] == cols[0][order[t - 1]]) {
                warn("%s: no identity field (%s%s%s): items with equal %s are ordered by record number (hashed "
                     "with the seed), so their order in the stream matters",
                     in->name, ident[0], ident == ident_knn ? "" : " and ", ident == ident_knn ? "" : ident[1],
                     o.ufield);
                break;
            }
    free(tie);
    metrics_bins(n, B, start);
    double *mean_u = emalloc((size_t)B * sizeof *mean_u), *perf = emalloc((size_t)B * sizeof *perf);
    double *score = emalloc((size_t)n * sizeof *score);
    uint8_t *label = emalloc((size_t)n);
    double *bx = emalloc((size_t)B * sizeof *bx), *by = emalloc((size_t)B * sizeof *by);
    int nvalid = 0;
    for (int b = 0; b < B; b++) {
        int64_t s = start[b], e = start[b + 1];
        double su = 0, sp = 0;
        for (int64_t t = s; t < e; t++) {
            int64_t i = order[t];
            su += cols[0][i];
            sp += cols[1][i];
            score[t - s] = cols[1][i];
            if (is_ap)
                label[t - s] = cols[2][i] != 0;
        }
        mean_u[b] = su / (double)(e - s);
        perf[b] = is_ap ? metrics_ap(score, label, e - s) : sp / (double)(e - s);
        if (isfinite(perf[b])) {
            bx[nvalid] = b;
            by[nvalid++] = perf[b];
        }
    }
    if (nvalid < B && !constant)
        warn("%d of %d bins have no defined performance (no positives): left out of tau", B - nvalid, B);
    /* sign inverted: bin index rises with uncertainty, so tau > 0 means performance falls */
    double tau = nvalid >= 2 && !constant ? -metrics_tau_b(bx, by, nvalid, NULL) : NAN;
    if (tau == 0)
        tau = 0; /* no "-0" */
    char pname[128];
    snprintf(pname, sizeof pname, "%s", is_ap ? "ap" : "accuracy");

    /* does the uncertainty know when it is wrong: AURC (loss = 1 - performance) and the AUROC of
     * the wrong items, each defined only for a performance per item; else the reason why not */
    char aurc_why[256] = "", auroc_why[256] = "";
    metrics_aurc_result ar = {NAN, NAN, NAN};
    metrics_rc_point *curve = NULL;
    double auroc = NAN;
    if (constant) {
        snprintf(aurc_why, sizeof aurc_why, "constant uncertainty");
        snprintf(auroc_why, sizeof auroc_why, "constant uncertainty");
    } else if (is_ap) {
        snprintf(aurc_why, sizeof aurc_why, "-m ap gives a performance per bin, not per item: use -m accuracy:FIELD");
        snprintf(auroc_why, sizeof auroc_why, "%s", aurc_why);
    } else {
        int64_t outside = -1, nonbinary = -1, right = 0;
        for (int64_t i = 0; i < n; i++) {
            double v = cols[1][i];
            if (!(v >= 0 && v <= 1)) {
                if (outside < 0)
                    outside = i;
            } else if (v != 0 && v != 1) {
                if (nonbinary < 0)
                    nonbinary = i;
            } else
                right += v == 1;
        }
        if (outside >= 0) {
            snprintf(aurc_why, sizeof aurc_why, "%s is not a performance in [0, 1]: record %lld has %g", f1,
                     (long long)outside, cols[1][outside]);
            snprintf(auroc_why, sizeof auroc_why, "%s", aurc_why);
        } else {
            double *loss = emalloc((size_t)n * sizeof *loss);
            for (int64_t i = 0; i < n; i++)
                loss[i] = 1 - cols[1][i];
            curve = emalloc(REJECT_POINTS * sizeof *curve);
            metrics_aurc(cols[0], loss, n, &ar, REJECT_POINTS, curve);
            if (ar.eaurc == 0)
                ar.eaurc = 0; /* no "-0" */
            free(loss);
            if (nonbinary >= 0)
                snprintf(auroc_why, sizeof auroc_why, "%s is not binary: record %lld has %g", f1, (long long)nonbinary,
                         cols[1][nonbinary]);
            else if (right == n || right == 0)
                snprintf(auroc_why, sizeof auroc_why, "every item is %s (%s = %d for all)", right ? "right" : "wrong",
                         f1, right ? 1 : 0);
            else {
                uint8_t *correct = emalloc((size_t)n);
                for (int64_t i = 0; i < n; i++)
                    correct[i] = cols[1][i] == 1;
                auroc = metrics_error_auroc(cols[0], correct, n);
                free(correct);
            }
        }
    }

    /* the bins that are reported: none when they are undefined */
    int Bout = constant ? 0 : B;
    if (tf) {
        fprintf(tf, "bin\tn\tmean_%s\t%s\n", o.ufield, pname);
        for (int b = 0; b < Bout; b++)
            fprintf(tf, "%d\t%lld\t%.9g\t%.9g\n", b, (long long)(start[b + 1] - start[b]), mean_u[b], perf[b]);
        atomic_sync(tf); /* the data is safe; it is renamed into place once stdout is written */
    }
    if (rf) {
        fprintf(rf, "rejected\trisk\toracle_risk\n");
        for (int r = 0; curve && r < REJECT_POINTS; r++)
            fprintf(rf, "%.9g\t%.9g\t%.9g\n", curve[r].rejected, curve[r].risk, curve[r].oracle_risk);
        atomic_sync(rf);
    }
    if (jf) {
        /* top-level n after the bins: a text grep for the last "n" finds the total */
        fprintf(jf, "{\"program\": \"ktau\", \"tau\": ");
        metrics_json_num(jf, tau);
        if (constant) {
            fprintf(jf, ", \"note\": ");
            char note[256];
            snprintf(note, sizeof note, "the uncertainty is constant (%s = %.9g for every item): bins and tau are undefined",
                     o.ufield, cols[0][0]);
            json_string(jf, note, strlen(note));
        } else if (*aurc_why || *auroc_why) {
            fprintf(jf, ", \"note\": ");
            char note[1024];
            if (*aurc_why)
                snprintf(note, sizeof note, "aurc, aurc_oracle, eaurc%s are undefined: %s",
                         strcmp(aurc_why, auroc_why) ? "" : " and auroc", aurc_why);
            if (*aurc_why && strcmp(aurc_why, auroc_why))
                snprintf(note + strlen(note), sizeof note - strlen(note), "; auroc is undefined: %s", auroc_why);
            else if (!*aurc_why)
                snprintf(note, sizeof note, "auroc is undefined: %s", auroc_why);
            json_string(jf, note, strlen(note));
        }
        fprintf(jf, ", \"aurc\": ");
        metrics_json_num(jf, ar.aurc);
        fprintf(jf, ", \"aurc_oracle\": ");
        metrics_json_num(jf, ar.oracle);
        fprintf(jf, ", \"eaurc\": ");
        metrics_json_num(jf, ar.eaurc);
        fprintf(jf, ", \"auroc\": ");
        metrics_json_num(jf, auroc);
        /* field names come from the command line: escaped, so the line stays valid JSON */
        char pspec[1024];
        snprintf(pspec, sizeof pspec, "%s:%s%s%s", pname, f1, is_ap ? ":" : "", is_ap ? f2 : "");
        fprintf(jf, ", \"nbins\": %d, \"uncertainty\": ", B);
        json_string(jf, o.ufield, strlen(o.ufield));
        fprintf(jf, ", \"performance\": ");
        json_string(jf, pspec, strlen(pspec));
        fprintf(jf, ", \"seed\": %llu, \"bins\": [", (unsigned long long)o.seed);
        for (int b = 0; b < Bout; b++) {
            fprintf(jf, "%s{\"bin\": %d, \"n\": %lld, \"mean_u\": ", b ? ", " : "", b,
                    (long long)(start[b + 1] - start[b]));
            metrics_json_num(jf, mean_u[b]);
            fprintf(jf, ", \"perf\": ");
            metrics_json_num(jf, perf[b]);
            fprintf(jf, "}");
        }
        fprintf(jf, "], \"n\": %lld}\n", (long long)n);
        if (jf != stdout)
            atomic_sync(jf);
    }
    if (jf != stdout) { /* --json -: the JSON in the text's place */
        char ucol[64];
        snprintf(ucol, sizeof ucol, "mean_%s", o.ufield);
        if (!constant)
            printf("%-4s %8s %12s %12s\n", "bin", "n", ucol, pname);
        for (int b = 0; b < Bout; b++)
            printf("%-4d %8lld %12.6f %12.6f\n", b, (long long)(start[b + 1] - start[b]), mean_u[b], perf[b]);
        const char *qname[4] = {"aurc", "aurc_oracle", "eaurc", "auroc"};
        double qval[4] = {ar.aurc, ar.oracle, ar.eaurc, auroc};
        for (int q = 0; q < 4; q++) {
            if (isfinite(qval[q]))
                printf("%s %.6f\n", qname[q], qval[q]);
            else
                printf("%s undefined (%s)\n", qname[q], q < 3 ? aurc_why : auroc_why);
        }
        printf("n %lld\n", (long long)n);
        if (constant)
            printf("tau undefined (constant uncertainty)\n");
        else if (isfinite(tau))
            printf("tau %.6f\n", tau);
        else
            printf("tau nan\n");
    }
    for (int f = 0; f < nperf + nident; f++)
        free(cols[f]);
    free(order);
    free(start);
    free(mean_u);
    free(perf);
    free(score);
    free(label);
    free(bx);
    free(by);
    free(curve);
    free(spec);
    stream_close(in);
    close_stdout();
    json_commit(jf);
    if (tf)
        atomic_commit(tf);
    if (rf)
        atomic_commit(rf);
    return 0;
}
