/* apcurve: average precision, precision-recall curve and its area for scored, labelled items
 * (verification, hib-oh-2019 section 4.3); with --ece, the expected calibration error of the
 * score read as a probability. Definitions and tie rule: lib/measures/ap.h, lib/measures/ece.h.
 */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ap.h"
#include "columns.h"
#include "ece.h"
#include "json.h"
#include "match.h"
#include "stream.h"
#include "util.h"

static const char *usage =
    "usage: apcurve [-s SCORE] [-l LABEL] [-o FILE.tsv] [--ece B] [--json FILE] [INPUT]\n"
    "  Average precision and PR-AUC of a scored stream (pairscores), the PR curve as TSV.\n";

int main(int argc, char **argv)
{
    util_start(argc, argv, usage);
    const char *sfield = NULL, *lfield = NULL, *tsv = NULL;
    const char *json = NULL;
    int ece_bins = 0;
    enum { OPT_ECE = 256 };
    static const struct option lopts[] = {{"json", required_argument, 0, 'J'},
                                          {"ece", required_argument, 0, OPT_ECE},
                                          {"help", no_argument, 0, 'h'},
                                          {0, 0, 0, 0}};
    int c;
    while ((c = getopt_long(argc, argv, "s:l:o:h", lopts, NULL)) != -1) {
        switch (c) {
        case 's': sfield = optarg; break;
        case 'l': lfield = optarg; break;
        case 'o': tsv = optarg; break;
        case 'J': json = optarg; break;
        case OPT_ECE: ece_bins = (int)parse_long("--ece", optarg, 1, 1000000); break;
        case 'h': usage_help();
        default: usage_bad_option(argv);
        }
    }
    if (argc - optind > 1)
        usage_die("at most one input");
    /* the TSV exists (as a temp file) before any work: an unwritable path fails now */
    FILE *tf = tsv ? atomic_open(tsv) : NULL, *jf = json ? json_open(json, 0) : NULL;
    stream_reader *in = stream_open_path(optind < argc ? argv[optind] : "-");
    if (strcmp(in->header->kind, "pairscores") && (!sfield || !lfield))
        die("%s: expected a stream of kind 'pairscores', got '%s' (or name the fields with -s and -l)",
            in->name, in->header->kind);
    if (!sfield) { /* pairscore's match probability, or the score --score chose (its meta scorer) */
        const char *sc = header_str(in->header, "scorer", "");
        int k = match_score_parse(sc); /* (lib/evaluation/match.h: the field of each score) */
        sfield = k > 0 ? match_score_fields[k] : "p";
    }
    if (!lfield)
        lfield = "match";
    const char *names[2] = {sfield, lfield};
    double *cols[2];
    int64_t n = metrics_read_columns(in, 2, names, cols);
    if (!n)
        die("%s: the stream has no records", in->name);
    uint8_t *label = emalloc((size_t)n);
    for (int64_t i = 0; i < n; i++)
        label[i] = cols[1][i] != 0;
    double ece = NAN;
    if (ece_bins) {
        int64_t bad;
        ece = metrics_ece(cols[0], label, n, ece_bins, NULL, &bad);
        if (bad >= 0)
            die("--ece: score %g of record %lld is not a probability", cols[0][bad], (long long)bad);
    }
    int64_t positives = 0;
    for (int64_t i = 0; i < n; i++) {
        if (!isfinite(cols[0][i]))
            die("%s: record %lld: %s %g is not finite", in->name, (long long)i, sfield, cols[0][i]);
        positives += label[i];
    }
    if (!positives)
        die("%s: no positive items (%s is 0 everywhere): AP is undefined", in->name, lfield);
    metrics_pr_point *pts = emalloc((size_t)n * sizeof *pts);
    int64_t npts = metrics_pr_curve(cols[0], label, n, pts);
    double ap = metrics_ap(cols[0], label, n), auc = metrics_pr_trapezoid_area(pts, npts);
    if (tf) {
        fprintf(tf, "recall\tprecision\tthreshold\n");
        for (int64_t t = 0; t < npts; t++)
            fprintf(tf, "%.9g\t%.9g\t%.9g\n", pts[t].recall, pts[t].precision, pts[t].threshold);
        atomic_sync(tf); /* the data is safe; it is renamed into place once stdout is written */
    }
    if (jf) {
        json_writer w;
        json_report(&w, jf, "apcurve");
        json_key_int(&w, "n", n);
        json_key_int(&w, "positives", positives);
        json_key_num(&w, "ap", ap);
        json_key_num(&w, "pr_auc", auc);
        if (ece_bins) {
            json_key_num(&w, "ece", ece);
            json_key_int(&w, "ece_bins", ece_bins);
        }
        json_key_int(&w, "thresholds", npts);
        json_key_str(&w, "score", sfield); /* names from the command line, escaped */
        json_key_str(&w, "label", lfield);
        json_end(&w);
        if (jf != stdout)
            atomic_sync(jf);
    }
    if (jf != stdout) { /* --json -: the JSON in the text's place */
        printf("n %lld\npositives %lld\nap %.6f\npr_auc %.6f\n", (long long)n, (long long)positives, ap, auc);
        if (ece_bins)
            printf("ece %.6f\nece_bins %d\n", ece, ece_bins);
    }
    free(pts);
    free(label);
    free(cols[0]);
    free(cols[1]);
    stream_close(in);
    close_stdout();
    json_commit(jf);
    if (tf)
        atomic_commit(tf);
    return 0;
}
