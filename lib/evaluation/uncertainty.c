/* uncertainty: ktau's report, bins, tau and AURC (lib/evaluation/uncertainty.h) */
#include "uncertainty.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ap.h"
#include "argsort.h"
#include "aurc.h"
#include "json.h"
#include "tau.h"
#include "util.h"

/* the bins: mean uncertainty and performance of each, tau between bin index and performance */
static void bin_items(uncertainty_report *r, const double *u, const double *perf, const double *label,
                      const int64_t *order)
{
    int B = r->nbins;
    int64_t n = r->n;
    r->start = emalloc((size_t)(B + 1) * sizeof *r->start);
    metrics_bins(n, B, r->start);
    r->mean_u = emalloc((size_t)B * sizeof *r->mean_u);
    r->perf = emalloc((size_t)B * sizeof *r->perf);
    double *score = emalloc((size_t)n * sizeof *score);
    uint8_t *lab = emalloc((size_t)n);
    double *bx = emalloc((size_t)B * sizeof *bx), *by = emalloc((size_t)B * sizeof *by);
    int nvalid = 0;
    for (int b = 0; b < B; b++) {
        int64_t s = r->start[b], e = r->start[b + 1];
        double su = 0, sp = 0;
        for (int64_t t = s; t < e; t++) {
            int64_t i = order[t];
            su += u[i];
            sp += perf[i];
            score[t - s] = perf[i];
            if (r->is_ap)
                lab[t - s] = label[i] != 0;
        }
        r->mean_u[b] = su / (double)(e - s);
        r->perf[b] = r->is_ap ? metrics_ap(score, lab, e - s) : sp / (double)(e - s);
        if (isfinite(r->perf[b])) {
            bx[nvalid] = b;
            by[nvalid++] = r->perf[b];
        }
    }
    if (nvalid < B && !r->constant && !r->quiet)
        warn("%d of %d bins have no defined performance (no positives): left out of tau", B - nvalid, B);
    /* sign inverted: bin index rises with uncertainty, so tau > 0 means performance falls */
    r->tau = nvalid >= 2 && !r->constant ? -metrics_tau_b(bx, by, nvalid, NULL) : NAN;
    if (r->tau == 0)
        r->tau = 0; /* no "-0" */
    free(score);
    free(lab);
    free(bx);
    free(by);
}

/* AURC (loss = 1 - performance) and the AUROC of the wrong items, each defined only for a
 * performance per item; else the reason why not */
static void error_detection(uncertainty_report *r, const double *u, const double *perf)
{
    int64_t n = r->n;
    const char *f1 = r->f1;
    if (r->constant) {
        snprintf(r->aurc_why, sizeof r->aurc_why, "constant uncertainty");
        snprintf(r->auroc_why, sizeof r->auroc_why, "constant uncertainty");
        return;
    }
    if (r->is_ap) {
        snprintf(r->aurc_why, sizeof r->aurc_why, "-m ap gives a performance per bin, not per item: use -m accuracy:FIELD");
        snprintf(r->auroc_why, sizeof r->auroc_why, "%s", r->aurc_why);
        return;
    }
    int64_t outside = -1, nonbinary = -1, right = 0;
    for (int64_t i = 0; i < n; i++) {
        double v = perf[i];
        if (!(v >= 0 && v <= 1)) {
            if (outside < 0)
                outside = i;
        } else if (v != 0 && v != 1) {
            if (nonbinary < 0)
                nonbinary = i;
        } else
            right += v == 1;
    }
    /* -m error:FIELD: perf is 1 - FIELD; the messages name FIELD's own values */
    int err = !strcmp(r->pname, "error");
    if (outside >= 0) {
        snprintf(r->aurc_why, sizeof r->aurc_why, "%s is not %s in [0, 1]: record %lld has %g", f1,
                 err ? "an error" : "a performance", (long long)outside, err ? 1 - perf[outside] : perf[outside]);
        snprintf(r->auroc_why, sizeof r->auroc_why, "%s", r->aurc_why);
        return;
    }
    double *loss = emalloc((size_t)n * sizeof *loss);
    for (int64_t i = 0; i < n; i++)
        loss[i] = 1 - perf[i];
    r->curve = emalloc(UNCERTAINTY_REJECT_POINTS * sizeof *r->curve);
    metrics_aurc(u, loss, n, &r->aurc, UNCERTAINTY_REJECT_POINTS, r->curve);
    if (r->aurc.eaurc == 0)
        r->aurc.eaurc = 0; /* no "-0" */
    free(loss);
    if (nonbinary >= 0)
        snprintf(r->auroc_why, sizeof r->auroc_why, "%s is not binary: record %lld has %g", f1, (long long)nonbinary,
                 err ? 1 - perf[nonbinary] : perf[nonbinary]);
    else if (right == n || right == 0)
        snprintf(r->auroc_why, sizeof r->auroc_why, "every item is %s (%s = %d for all)", right ? "right" : "wrong",
                 f1, (right ? 1 : 0) ^ err);
    else {
        uint8_t *correct = emalloc((size_t)n);
        for (int64_t i = 0; i < n; i++)
            correct[i] = perf[i] == 1;
        r->auroc = metrics_error_auroc(u, correct, n);
        free(correct);
    }
}

void uncertainty_analyse(uncertainty_report *r, const double *u, const double *perf, const double *label,
                         const uint64_t *tie, const char *tie_warning)
{
    int64_t n = r->n;
    r->aurc = (metrics_aurc_result){NAN, NAN, NAN};
    r->curve = NULL;
    r->auroc = NAN;
    r->aurc_why[0] = r->auroc_why[0] = 0;
    /* a constant uncertainty ranks nothing: every cut into bins would be arbitrary */
    r->constant = 1;
    r->u0 = u[0];
    for (int64_t i = 1; i < n && r->constant; i++)
        r->constant = u[i] == u[0];
    if (r->constant && !r->quiet)
        warn("%s is %g for every item: the bins and tau are undefined", r->ufield, u[0]);
    /* equal uncertainties: by the tie key, then by the performance fields, so that items equal in
     * all are interchangeable (lib/measures/argsort.h argsort_ties) */
    int64_t *order = emalloc((size_t)n * sizeof *order);
    const double *more[2] = {perf, r->is_ap ? label : NULL};
    metrics_argsort_ties(u, tie, r->is_ap ? 2 : 1, more, n, order);
    if (tie_warning && !r->constant)
        for (int64_t t = 1; t < n; t++)
            if (u[order[t]] == u[order[t - 1]]) {
                warn("%s", tie_warning);
                break;
            }
    bin_items(r, u, perf, label, order);
    free(order);
    error_detection(r, u, perf);
}

void uncertainty_free(uncertainty_report *r)
{
    free(r->start);
    free(r->mean_u);
    free(r->perf);
    free(r->curve);
    r->start = NULL;
    r->mean_u = r->perf = NULL;
    r->curve = NULL;
}

/* the bins that are reported: none when they are undefined */
static int bins_out(const uncertainty_report *r) { return r->constant ? 0 : r->nbins; }

void uncertainty_write_tsv(FILE *f, const uncertainty_report *r)
{
    fprintf(f, "bin\tn\tmean_%s\t%s\n", r->ufield, r->pcol ? r->pcol : r->pname);
    for (int b = 0; b < bins_out(r); b++)
        fprintf(f, "%d\t%lld\t%.9g\t%.9g\n", b, (long long)(r->start[b + 1] - r->start[b]), r->mean_u[b], r->perf[b]);
}

void uncertainty_write_reject_tsv(FILE *f, const uncertainty_report *r)
{
    fprintf(f, "rejected\trisk\toracle_risk\n");
    for (int k = 0; r->curve && k < UNCERTAINTY_REJECT_POINTS; k++)
        fprintf(f, "%.9g\t%.9g\t%.9g\n", r->curve[k].rejected, r->curve[k].risk, r->curve[k].oracle_risk);
}

/* why some of the report is undefined, "" when all of it is defined */
static void note(const uncertainty_report *r, char *out, size_t size)
{
    const char *aw = r->aurc_why, *rw = r->auroc_why;
    out[0] = 0;
    if (r->constant)
        snprintf(out, size, "the uncertainty is constant (%s = %.9g for every item): bins and tau are undefined",
                 r->ufield, r->u0);
    else if (*aw) {
        snprintf(out, size, "aurc, aurc_oracle, eaurc%s are undefined: %s", strcmp(aw, rw) ? "" : " and auroc", aw);
        if (strcmp(aw, rw))
            snprintf(out + strlen(out), size - strlen(out), "; auroc is undefined: %s", rw);
    } else if (*rw)
        snprintf(out, size, "auroc is undefined: %s", rw);
}

void uncertainty_write_json(FILE *f, const uncertainty_report *r)
{
    json_writer w;
    json_report(&w, f, "ktau");
    json_key_num(&w, "tau", r->tau);
    char nt[1024];
    note(r, nt, r->constant ? 256 : sizeof nt);
    if (*nt)
        json_key_str(&w, "note", nt);
    json_key_num(&w, "aurc", r->aurc.aurc);
    json_key_num(&w, "aurc_oracle", r->aurc.oracle);
    json_key_num(&w, "eaurc", r->aurc.eaurc);
    json_key_num(&w, "auroc", r->auroc);
    /* field names come from the command line: escaped, so the line stays valid JSON */
    char pspec[1024];
    snprintf(pspec, sizeof pspec, "%s:%s%s%s", r->pname, r->f1, r->is_ap ? ":" : "", r->is_ap ? r->f2 : "");
    json_key_int(&w, "nbins", r->nbins);
    json_key_str(&w, "uncertainty", r->ufield);
    json_key_str(&w, "performance", pspec);
    json_key_uint(&w, "seed", r->seed);
    json_key(&w, "bins");
    json_arr(&w);
    for (int b = 0; b < bins_out(r); b++) {
        json_obj(&w);
        json_key_int(&w, "bin", b);
        json_key_int(&w, "n", r->start[b + 1] - r->start[b]);
        json_key_num(&w, "mean_u", r->mean_u[b]);
        json_key_num(&w, "perf", r->perf[b]);
        json_end(&w);
    }
    json_end(&w);
    /* top-level n after the bins: a text grep for the last "n" finds the total */
    json_key_int(&w, "n", r->n);
    json_end(&w);
}

void uncertainty_print(FILE *f, const uncertainty_report *r)
{
    char ucol[64];
    snprintf(ucol, sizeof ucol, "mean_%s", r->ufield);
    if (!r->constant)
        fprintf(f, "%-4s %8s %12s %12s\n", "bin", "n", ucol, r->pcol ? r->pcol : r->pname);
    for (int b = 0; b < bins_out(r); b++)
        fprintf(f, "%-4d %8lld %12.6f %12.6f\n", b, (long long)(r->start[b + 1] - r->start[b]), r->mean_u[b],
                r->perf[b]);
    const char *qname[4] = {"aurc", "aurc_oracle", "eaurc", "auroc"};
    double qval[4] = {r->aurc.aurc, r->aurc.oracle, r->aurc.eaurc, r->auroc};
    for (int q = 0; q < 4; q++) {
        if (isfinite(qval[q]))
            fprintf(f, "%s %.6f\n", qname[q], qval[q]);
        else
            fprintf(f, "%s undefined (%s)\n", qname[q], q < 3 ? r->aurc_why : r->auroc_why);
    }
    fprintf(f, "n %lld\n", (long long)r->n);
    if (r->constant)
        fprintf(f, "tau undefined (constant uncertainty)\n");
    else if (isfinite(r->tau))
        fprintf(f, "tau %.6f\n", r->tau);
    else
        fprintf(f, "tau nan\n");
}
