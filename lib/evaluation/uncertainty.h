/* uncertainty: does performance fall as uncertainty rises, and does the uncertainty know when the
 * answer is wrong? The report of bin/ktau (hib-oh-2019 section 4.4, Table 2; the maths is in
 * lib/measures/tau.h and lib/measures/aurc.h): items sorted by uncertainty into equal-size bins, the mean
 * uncertainty and the performance of each bin, Kendall's tau-b between bin index and performance
 * with the sign inverted (tau > 0: performance falls as uncertainty rises); with a performance
 * per item, the area under the risk-coverage curve (AURC, its oracle, E-AURC; loss = 1 -
 * performance), its curve, and for a binary performance the AUROC of the uncertainty for the
 * wrong items.
 *
 * Undefined values are NaN (JSON null, text "undefined" with the reason): every bin and tau when
 * the uncertainty is the same for every item, AURC and AUROC for a performance per bin (AP) or
 * one outside [0, 1], AUROC for a non-binary performance or one class of answers only.
 *
 * The caller fills the description (the first block of uncertainty_report) and the columns; the
 * analysis allocates the results, uncertainty_free frees them:
 *
 *   uncertainty_report r = {.ufield = "eta", .pname = "accuracy", .f1 = "correct", .nbins = 20,
 *                           .seed = 714, .n = n};
 *   uncertainty_analyse(&r, eta, correct, NULL, tie, NULL);   // tie: metrics_tie_key per item
 *   uncertainty_write_json(stdout, &r);
 *   uncertainty_free(&r);
 */
#ifndef HEDGE_UNCERTAINTY_H
#define HEDGE_UNCERTAINTY_H
#include <stdint.h>
#include <stdio.h>

#include "aurc.h"

#define UNCERTAINTY_REJECT_POINTS 100 /* the risk-coverage curve: rejected 0 .. 99 % */

typedef struct {
    /* what is measured (the caller's; the strings are borrowed) */
    const char *ufield;       /* the uncertainty's field */
    const char *pname;        /* "accuracy", "error" (the performance is 1 - f1) or "ap" */
    const char *pcol;         /* the name of the bins' performance column; NULL: pname */
    const char *f1, *f2;      /* accuracy: f1 the performance per item; ap: f1 the score, f2 the label */
    int is_ap;
    int nbins;                /* B */
    uint64_t seed;            /* of the tie keys, reported */
    int64_t n;                /* items, n >= nbins */
    int quiet;                /* 1: no warnings on stderr (the reasons are in the results: lib/engine/hedge.c) */
    /* the results (uncertainty_analyse's) */
    int constant;             /* the uncertainty is u0 for every item: bins and tau undefined */
    double u0;
    int64_t *start;           /* [B + 1]: bin b holds the sorted items start[b] .. start[b + 1] - 1 */
    double *mean_u, *perf;    /* [B] */
    double tau;
    metrics_aurc_result aurc;
    metrics_rc_point *curve;  /* [UNCERTAINTY_REJECT_POINTS], NULL when AURC is undefined */
    double auroc;
    char aurc_why[256], auroc_why[256]; /* why AURC / AUROC are undefined, "" when they are not */
} uncertainty_report;

/* u, perf [n]: the uncertainty and the performance (ap: the score) of each item; label [n] the
 * labels for ap, else NULL; tie [n] the tie keys that order equal uncertainties. tie_warning, if
 * not NULL, is warned when two items have equal (non-constant) uncertainty. Warns (stderr) of a
 * constant uncertainty and of bins without a defined performance. */
void uncertainty_analyse(uncertainty_report *r, const double *u, const double *perf, const double *label,
                         const uint64_t *tie, const char *tie_warning);
void uncertainty_free(uncertainty_report *r);

/* the bins as TSV (bin, n, mean_UFIELD, PNAME; the header line only when they are undefined) */
void uncertainty_write_tsv(FILE *f, const uncertainty_report *r);
/* the risk-coverage curve as TSV (rejected, risk, oracle_risk; the header only when undefined) */
void uncertainty_write_reject_tsv(FILE *f, const uncertainty_report *r);
/* the report as one line of JSON (lib/base/json.h) */
void uncertainty_write_json(FILE *f, const uncertainty_report *r);
/* the report as text: the bins' table, aurc .. auroc, n, tau last */
void uncertainty_print(FILE *f, const uncertainty_report *r);
#endif
