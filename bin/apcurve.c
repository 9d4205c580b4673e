/* apcurve: average precision, precision-recall curve and its area for scored, labelled items
 * (verification, hib-oh-2019 section 4.3); with --ece, the expected calibration error of the
 * score read as a probability. Definitions and tie rule: lib/metrics.h.
 */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "metrics.h"
#include "stream.h"
#include "util.h"

static const char *usage =
    "usage: apcurve [-s SCORE] [-l LABEL] [-o FILE.tsv] [--ece B] [--json] [INPUT]\n"
    "  Reads a `pairscores` stream (INPUT or stdin; another kind with -s and -l) and prints\n"
    "  `n`, `positives`, `ap` and `pr_auc`, one per line.\n"
    "  ap      mean over the positives of the precision at the positive's rank, ranked by score,\n"
    "          descending; items with equal scores form a block and each positive in a block gets\n"
    "          the precision at the END of the block (so the input order never matters)\n"
    "  pr_auc  area under the PR curve by trapezoids between the curve's points (one per distinct\n"
    "          score), starting at recall 0 with the first point's precision; ap is the step\n"
    "          version of the same area\n"
    "  -s SCORE     the score field (default p; higher = more likely positive)\n"
    "  -l LABEL     the label field (default match; nonzero = positive)\n"
    "  -o FILE.tsv  also write the PR curve as TSV: a # header line, then recall precision threshold\n"
    "               per distinct score, highest threshold first; it is opened before any work and\n"
    "               committed only when stdout is written\n"
    "  --ece B      the score is a probability: also print `ece`, the expected calibration error\n"
    "               in B equal-width bins on [0, 1]: bin b holds the scores in (b/B, (b+1)/B], a\n"
    "               score of 0 is in the first (Guo et al.'s intervals, and sklearn's\n"
    "               calibration_curve bins so), compared exactly, not by a rounded product;\n"
    "               sum over the non-empty bins of (n_b / n) |mean label - mean score|, and\n"
    "               `ece_bins` B (Guo et al. 2017 use B = 15); a score outside [0, 1] or NaN is an\n"
    "               error\n"
    "  --json       print a one-line JSON summary instead\n"
    "  -h           this help\n";

int main(int argc, char **argv)
{
    util_init(argv[0]);
    util_usage = usage;
    const char *sfield = NULL, *lfield = NULL, *tsv = NULL;
    int json = 0, ece_bins = 0;
    enum { OPT_ECE = 256 };
    static const struct option lopts[] = {{"json", no_argument, 0, 'J'},
                                          {"ece", required_argument, 0, OPT_ECE},
                                          {"help", no_argument, 0, 'h'},
                                          {0, 0, 0, 0}};
    int c;
    opterr = 0; /* our own message, then the usage */
    while ((c = getopt_long(argc, argv, "s:l:o:h", lopts, NULL)) != -1) {
        switch (c) {
        case 's': sfield = optarg; break;
        case 'l': lfield = optarg; break;
        case 'o': tsv = optarg; break;
        case 'J': json = 1; break;
        case OPT_ECE: ece_bins = (int)parse_long("--ece", optarg, 1, 1000000); break;
        case 'h': usage_help();
        default: usage_die("unknown option or missing value: %s", argv[optind - 1]);
        }
    }
    if (argc - optind > 1)
        usage_die("at most one input");
    /* the TSV exists (as a temp file) before any work: an unwritable path fails now */
    FILE *tf = tsv ? atomic_open(tsv) : NULL;
    stream_reader *in = stream_open_path(optind < argc ? argv[optind] : "-");
    if (strcmp(in->header->kind, "pairscores") && (!sfield || !lfield))
        die("%s: expected a stream of kind 'pairscores', got '%s' (or name the fields with -s and -l)",
            in->name, in->header->kind);
    if (!sfield)
        sfield = "p";
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
        fprintf(tf, "# recall\tprecision\tthreshold\n");
        for (int64_t t = 0; t < npts; t++)
            fprintf(tf, "%.9g\t%.9g\t%.9g\n", pts[t].recall, pts[t].precision, pts[t].threshold);
        atomic_sync(tf); /* the data is safe; it is renamed into place once stdout is written */
    }
    if (json) {
        printf("{\"program\": \"apcurve\", \"n\": %lld, \"positives\": %lld, \"ap\": ", (long long)n,
               (long long)positives);
        metrics_json_num(stdout, ap);
        printf(", \"pr_auc\": ");
        metrics_json_num(stdout, auc);
        if (ece_bins) {
            printf(", \"ece\": ");
            metrics_json_num(stdout, ece);
            printf(", \"ece_bins\": %d", ece_bins);
        }
        printf(", \"thresholds\": %lld, \"score\": ", (long long)npts);
        json_string(stdout, sfield, strlen(sfield)); /* names from the command line, escaped */
        printf(", \"label\": ");
        json_string(stdout, lfield, strlen(lfield));
        printf("}\n");
    } else {
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
    if (tf)
        atomic_commit(tf);
    return 0;
}
