/* evalreport: bin/evaluate's table and JSON (lib/engine/evalreport.h) */
#include "evalreport.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "argsort.h"
#include "uncertainty.h"
#include "util.h"

static void uncertainty_table(FILE *f, const evalreport *R, int s, int text);
static void verification_table(FILE *f, const evalreport *R, int s, int text);

/* the rows after R@k, by metric id, with their labels */
static const int rows[] = {HEDGE_P1, HEDGE_RPREC, HEDGE_MAP_R, HEDGE_MAP, HEDGE_MRR, HEDGE_P1_AVG,
                           HEDGE_RPREC_AVG, HEDGE_MAP_R_AVG, HEDGE_MRR_AVG, HEDGE_NMI, HEDGE_AMI,
                           HEDGE_TAU, HEDGE_AUROC, HEDGE_AURC, HEDGE_EAURC};
#define NROWS (int)(sizeof rows / sizeof rows[0])

static void note(evalreport *R, const char *fmt, const char *a, const char *b, const char *c)
{
    char buf[512];
    snprintf(buf, sizeof buf, fmt, a, b, c);
    for (int i = 0; i < R->nnotes; i++)
        if (!strcmp(R->notes[i], buf))
            return;
    if (R->nnotes < EVALREPORT_MAXNOTES)
        R->notes[R->nnotes++] = estrdup(buf);
}

/* a metric's label in the notes: its row's name (R@k for the recalls) */
static void label(const evalreport *R, int id, char *buf, size_t n)
{
    if (id >= HEDGE_RECALL)
        snprintf(buf, n, "R@%d", R->o->ks[id - HEDGE_RECALL]);
    else
        snprintf(buf, n, "%s", hedge_metric_name(id));
}

void evalreport_notes(evalreport *R)
{
    if (R->few >= 0) {
        const hedge_result *r = R->r + R->few;
        int k = (int)r->value[HEDGE_KNN_K];
        char kb[64], buf[400];
        snprintf(kb, sizeof kb, "%d, not %d", k, R->o->knn_k);
        snprintf(buf, sizeof buf, "%d neighbour%s (%s)", k, k == 1 ? "" : "s", r->why[HEDGE_KNN_K]);
        note(R, "knn: k = %s: a query of %s has %s", kb, R->names[R->few], buf);
    }
    for (int s = 0; s < R->nsets; s++) {
        const hedge_result *r = R->r + s;
        const char *set = R->names[s];
        const char *d = R->distance, *gauss = !strcmp(d, "csd") ? "the closed-form sampled distance (PCME++)"
                                             : !strcmp(d, "kl")  ? "the symmetric KL divergence"
                                                                 : "Bhattacharyya's distance";
        if (!strcmp(d, "cosine"))
            note(R, "distance (%s): knn and retrieval rank by cosine similarity (normalised means); ap, nmi and ami by "
                    "the Euclidean distance of the means%s%s", set, "", "");
        else if (!strcmp(d, "w2"))
            note(R, "distance (%s): every number by the 2-Wasserstein distance of the Gaussians, the Euclidean "
                    "distance of (mu, sqrt var)%s%s", set, "", "");
        else if (!strcmp(d, "mls"))
            note(R, "distance (%s): knn, retrieval and ap by the mutual likelihood score of the Gaussians (PFE); nmi "
                    "and ami by the Euclidean distance of the means%s%s", set, "", "");
        else if (strcmp(d, "euclidean"))
            note(R, "distance (%s): knn, retrieval and ap by %s of the Gaussians; nmi and ami by the Euclidean "
                    "distance of the means%s", set, gauss, "");
        int ids[HEDGE_NMETRICS], m = 0;
        ids[m++] = HEDGE_AP, ids[m++] = HEDGE_ECE, ids[m++] = HEDGE_KNN;
        for (int i = 0; i < R->o->nk; i++)
            ids[m++] = HEDGE_RECALL + i;
        for (int i = 0; i < NROWS; i++)
            ids[m++] = rows[i];
        int done[HEDGE_NMETRICS] = {0};
        for (int i = 0; i < m; i++) {
            if (ids[i] == HEDGE_NMI && r->value[HEDGE_NO_POSITIVE] > 0) {
                char nb[32];
                snprintf(nb, sizeof nb, "%.0f", r->value[HEDGE_NO_POSITIVE]);
                note(R, "retrieval (%s): %s queries without a positive in the gallery are left out of its means%s",
                     set, nb, "");
            }
            if (ids[i] == HEDGE_AP && !strncmp(r->why[HEDGE_ECE], "no match probability", 20)) {
                if (!strcmp(r->why[HEDGE_ECE], "no match probability (give match_a, match_b)"))
                    note(R, "ap (%s): the embeddings have no match_a/match_b, so pairs are ranked by the distance of "
                            "their means; ece: no match probability (give --match-a A --match-b B)%s%s", set, "", "");
                else /* the caller's reason: a loss that learns none (bin/evaluate, match_meta_ab) */
                    note(R, "ap, ece (%s): %s: pairs are ranked by the distance of their means, and there is no ece "
                            "(give --match-a A --match-b B)%s", set, r->why[HEDGE_ECE], "");
                done[1] = 1; /* ece's */
            }
            if (done[i] || !r->why[ids[i]][0])
                continue;
            if (ids[i] >= HEDGE_RECALL && !strncmp(r->why[ids[i]], "no query has a positive", 23)) {
                note(R, "R@k, p1, rprec, map_r, map, mrr and their class averages (%s): %s%s", set, r->why[ids[i]], "");
                for (int j = i; j < m; j++)
                    done[j] |= !strcmp(r->why[ids[j]], r->why[ids[i]]);
                continue;
            }
            char names[600] = "", lb[64];
            int alone = !strncmp(r->why[ids[i]], "undefined (", 11); /* ktau's notes: one a metric */
            for (int j = i; j < m && (j == i || !alone); j++)
                if (!done[j] && !strcmp(r->why[ids[j]], r->why[ids[i]])) {
                    label(R, ids[j], lb, sizeof lb);
                    if (strlen(names) + strlen(lb) + 3 < sizeof names)
                        strcat(strcat(names, *names ? ", " : ""), lb);
                    done[j] = 1;
                }
            note(R, "%s (%s): %s", names, set, r->why[ids[i]]);
        }
    }
}

static void cell(char *buf, size_t n, double v)
{
    if (isnan(v))
        snprintf(buf, n, "-");
    else
        snprintf(buf, n, "%.10g", v);
}

/* the table as rows of cells: [row][0] the label, [row][1 + s] set s */
#define MAXROWS (3 + 16 + NROWS + 1)
typedef char cells[MAXROWS][1 + EVALREPORT_MAXSETS][64];

static int fill(const evalreport *R, cells c)
{
    int n = 0;
    snprintf(c[n][0], 64, "metric");
    for (int s = 0; s < R->nsets; s++)
        snprintf(c[n][1 + s], 64, "%s", R->names[s]);
    n++;
    double k = NAN;
    for (int s = 0; s < R->nsets; s++)
        if (!isnan(R->r[s].value[HEDGE_KNN_K]) && !(R->r[s].value[HEDGE_KNN_K] >= k))
            k = R->r[s].value[HEDGE_KNN_K];
    int ids[3 + 16 + NROWS], m = 0;
    ids[m++] = HEDGE_AP, ids[m++] = HEDGE_ECE, ids[m++] = HEDGE_KNN;
    for (int i = 0; i < R->o->nk; i++)
        ids[m++] = HEDGE_RECALL + i;
    for (int i = 0; i < NROWS; i++)
        ids[m++] = rows[i];
    for (int i = 0; i < m; i++, n++) {
        int id = ids[i];
        const char *name = hedge_metric_name(id);
        if (id == HEDGE_KNN)
            snprintf(c[n][0], 64, "knn (k = %d)", isnan(k) ? R->o->knn_k : (int)k);
        else if (id >= HEDGE_RECALL)
            snprintf(c[n][0], 64, "R@%d", R->o->ks[id - HEDGE_RECALL]);
        else if (strstr(name, "_avg_of_avgs"))
            snprintf(c[n][0], 64, "%.*s (class avg)", (int)(strstr(name, "_avg_of_avgs") - name), name);
        else
            snprintf(c[n][0], 64, "%s", name);
        for (int s = 0; s < R->nsets; s++)
            cell(c[n][1 + s], 64, R->r[s].value[id]);
    }
    return n;
}

void evalreport_table(FILE *f, const evalreport *R, int text)
{
    static cells c;
    int n = fill(R, c), nc = 1 + R->nsets;
    size_t w[1 + EVALREPORT_MAXSETS] = {0};
    for (int i = 0; i < n; i++)
        for (int j = 0; j < nc; j++)
            if (strlen(c[i][j]) > w[j])
                w[j] = strlen(c[i][j]);
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < nc; j++) {
            if (text && j + 1 < nc)
                fprintf(f, "%-*s  ", (int)w[j], c[i][j]);
            else if (text)
                fputs(c[i][j], f);
            else
                fprintf(f, "%s%s", j ? " | " : "| ", c[i][j]);
        }
        fputs(text ? "\n" : " |\n", f);
        if (!text && !i) {
            for (int j = 0; j < nc; j++)
                fputs(j ? " | ---" : "| ---", f);
            fputs(" |\n", f);
        }
    }
    if (R->nnotes)
        fputc('\n', f);
    for (int i = 0; i < R->nnotes; i++)
        fprintf(f, "- %s\n", R->notes[i]);
    for (int s = 0; s < R->nsets; s++)
        if (R->reject[s])
            fprintf(f, "- error-versus-reject curve (%s): %s\n", R->names[s], R->reject[s]);
    for (int s = 0; s < R->nsets; s++)
        uncertainty_table(f, R, s, text);
    for (int s = 0; s < R->nsets; s++)
        verification_table(f, R, s, text);
}

/* a FAR's label: 1e-2 */
static void far_label(char *buf, size_t n, double far)
{
    snprintf(buf, n, "1e-%d", (int)lround(-log10(far)));
}

/* the verification section of set s: TAR (with the FAR reached), the ROC AUC, DIR; the '-' named
 * under it with their reasons, one line for a reason shared by several rows */
static void verification_table(FILE *f, const evalreport *R, int s, int text)
{
    const hedge_result *r = R->r + s;
    const struct hedge_verify *v = &r->verify;
    if (R->o->include)
        return;
    fprintf(f, "\nVerification (%s): %lld genuine and %lld impostor pairs (ap's), FNMR@FMR f = 1 - TAR@FAR f", R->names[s],
            (long long)v->genuine, (long long)v->impostor);
    if (v->mated || v->nonmated)
        fprintf(f, "; open set: %lld mated and %lld non-mated probes", (long long)v->mated, (long long)v->nonmated);
    fputs("\n\n", f);
    char label[HEDGE_NFAR * 2 + 1][32], value[HEDGE_NFAR * 2 + 1][64], fl[16];
    const char *why[HEDGE_NFAR * 2 + 1];
    int n = 0;
    for (int i = 0; i < HEDGE_NFAR; i++, n++) {
        far_label(fl, sizeof fl, v->far[i]);
        snprintf(label[n], 32, "TAR@FAR %s", fl);
        if (isnan(v->tar[i]))
            snprintf(value[n], 64, "-");
        else
            snprintf(value[n], 64, "%.4f (FAR %.2g)", v->tar[i], v->far_reached[i]);
        why[n] = v->tar_why[i];
    }
    snprintf(label[n], 32, "ROC AUC");
    cell(value[n], 64, v->roc_auc);
    why[n++] = v->roc_why;
    for (int i = 0; i < HEDGE_NFAR; i++, n++) {
        far_label(fl, sizeof fl, v->far[i]);
        snprintf(label[n], 32, "DIR@FAR %s", fl);
        if (isnan(v->dir[i]))
            snprintf(value[n], 64, "-");
        else
            snprintf(value[n], 64, "%.4f", v->dir[i]);
        why[n] = v->dir_why[i];
    }
    if (!text)
        fprintf(f, "| metric | %s |\n| --- | --- |\n", R->names[s]);
    for (int i = 0; i < n; i++)
        fprintf(f, text ? "%-14s  %s\n" : "| %s | %s |\n", label[i], value[i]);
    int done[HEDGE_NFAR * 2 + 1] = {0}, first = 1;
    for (int i = 0; i < n; i++) {
        if (done[i] || !*why[i] || strcmp(value[i], "-"))
            continue;
        char names[400] = "";
        for (int j = i; j < n; j++)
            if (!done[j] && !strcmp(value[j], "-") && !strcmp(why[j], why[i])) {
                snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", *names ? ", " : "", label[j]);
                done[j] = 1;
            }
        fprintf(f, "%s- %s: %s\n", first ? "\n" : "", names, why[i]);
        first = 0;
    }
}

/* the verdict's lines and the uncertainty section's table: these (target, measure) pairs */
static const int shown[][2] = {{HEDGE_TGT_R1, 0}, {HEDGE_TGT_R1, 1}, {HEDGE_TGT_KNN, 0}, {HEDGE_TGT_AP, 1},
                               {HEDGE_TGT_MAP_R, 1}};
#define NSHOWN 5

static void num_ci(char *buf, size_t n, double v, const double ci[2], int sign)
{
    if (isnan(v))
        snprintf(buf, n, "-");
    else if (isnan(ci[0]))
        snprintf(buf, n, sign ? "%+.3f" : "%.3f", v);
    else
        snprintf(buf, n, sign ? "%+.3f [%+.3f, %+.3f]" : "%.3f [%.3f, %.3f]", v, ci[0], ci[1]);
}

/* the uncertainty section of set s: the learned sources against the best free baseline first (the
 * question), then every source on the shown pairs and the risk-controlled coverage */
static void uncertainty_table(FILE *f, const evalreport *R, int s, int text)
{
    const hedge_result *r = R->r + s;
    if (!r->nsources)
        return;
    char how[160];
    if (r->ci_why[0])
        snprintf(how, sizeof how, "no intervals: %s", r->ci_why);
    else
        snprintf(how, sizeof how, "95 %% intervals from %d bootstrap replicates of the queries, seed %llu",
                 r->replicates, (unsigned long long)R->o->seed);
    fprintf(f, "\nUncertainty (%s): does it know more than the free signals? (%s)\n\n", R->names[s], how);
    int any = 0;
    for (int u = 0; u < r->nsources; u++)
        for (int i = 0; r->learned[u] && i < NSHOWN; i++) {
            int t = shown[i][0], m = shown[i][1], b = r->best[t][m];
            if (b < 0 || isnan(r->diff[u][t][m]))
                continue;
            char d[96];
            num_ci(d, sizeof d, r->diff[u][t][m], r->diff_ci[u][t][m], 1);
            fprintf(f, "- %s - best free baseline (%s), %s %s: %s%s\n", r->source[u], r->source[b], hedge_target_name(t),
                    m ? "AURC" : "AUROC", d, m ? " (lower is better)" : "");
            any = 1;
        }
    if (!any)
        fprintf(f, "- no learned uncertainty to compare (no var, eta or --uncertainty), or no free baseline\n");
    char head[64];
    fprintf(f, text ? "\n%-22s" : "\n| source", "source");
    for (int i = 0; i < NSHOWN; i++) {
        snprintf(head, sizeof head, "%s %s", hedge_target_name(shown[i][0]), shown[i][1] ? "AURC" : "AUROC");
        fprintf(f, text ? "  %-26s" : " | %s", head);
    }
    fprintf(f, text ? "  coverage at R@1 error %g\n" : " | coverage at R@1 error %g |\n", R->o->risk);
    if (!text) {
        for (int i = 0; i < NSHOWN + 2; i++)
            fputs(i ? " | ---" : "| ---", f);
        fputs(" |\n", f);
    }
    char gone[400] = "";
    for (int u = 0; u < r->nsources; u++) {
        char name[64], c[96];
        int none = 1;
        for (int t = 0; t < HEDGE_NTARGETS; t++)
            for (int m = 0; m < HEDGE_NMEASURES; m++)
                none &= isnan(r->unc[u][t][m]) && !strcmp(r->unc_why[u][t][m], r->unc_why[u][0][0]);
        if (none) { /* a source it does not have: named under the table, with the reason */
            snprintf(gone + strlen(gone), sizeof gone - strlen(gone), "%s%s (%s)", *gone ? "; " : "", r->source[u],
                     r->unc_why[u][0][0]);
            continue;
        }
        snprintf(name, sizeof name, "%s (%s)", r->source[u], r->learned[u] ? "learned" : "free");
        fprintf(f, text ? "%-22s" : "| %s", name);
        for (int i = 0; i < NSHOWN; i++) {
            int t = shown[i][0], m = shown[i][1];
            num_ci(c, sizeof c, r->unc[u][t][m], r->unc_ci[u][t][m], 0);
            fprintf(f, text ? "  %-26s" : " | %s", c);
        }
        const struct hedge_risk *k = &r->riskctl[u];
        if (k->found)
            snprintf(c, sizeof c, "%.3f (error %.3f)", k->coverage, k->risk);
        else
            snprintf(c, sizeof c, "-");
        fprintf(f, text ? "  %s\n" : " | %s |\n", c);
    }
    if (*gone)
        fprintf(f, "\n- not measured: %s\n", gone);
}

/* the uncertainty section and the intervals of set r, as hedge.evaluate's dict has them */
static void uncertainty_json(json_writer *w, const hedge_result *r, const hedge_options *o)
{
    if (o->include) /* only the metrics asked for, as the dict */
        return;
    json_key(w, "ci");
    json_obj(w);
    for (int id = 0; id < HEDGE_RECALL; id++) /* every metric with one, as the dict has them */
        if (!isnan(r->ci[id][0])) {
            json_key(w, hedge_metric_name(id));
            json_nums(w, r->ci[id], 2);
        }
    int recall = 0;
    for (int i = 0; i < o->nk; i++)
        recall |= !isnan(r->ci[HEDGE_RECALL + i][0]);
    if (recall) {
        json_key(w, "recall");
        json_arr(w);
        for (int i = 0; i < o->nk; i++)
            if (isnan(r->ci[HEDGE_RECALL + i][0]))
                json_null(w);
            else
                json_nums(w, r->ci[HEDGE_RECALL + i], 2);
        json_end(w);
    }
    for (int u = 0; u < r->nsources; u++) {
        int has = 0;
        for (int t = 0; t < HEDGE_NTARGETS; t++)
            for (int m = 0; m < HEDGE_NMEASURES; m++)
                has |= !isnan(r->unc[u][t][m]) && !isnan(r->unc_ci[u][t][m][0]);
        if (!has)
            continue;
        json_key(w, r->source[u]);
        json_obj(w);
        for (int t = 0; t < HEDGE_NTARGETS; t++) {
            int ht = 0;
            for (int m = 0; m < HEDGE_NMEASURES; m++)
                ht |= !isnan(r->unc[u][t][m]) && !isnan(r->unc_ci[u][t][m][0]);
            if (!ht)
                continue;
            json_key(w, hedge_target_name(t));
            json_obj(w);
            for (int m = 0; m < HEDGE_NMEASURES; m++)
                if (!isnan(r->unc[u][t][m]) && !isnan(r->unc_ci[u][t][m][0])) {
                    json_key(w, hedge_measure_name(m));
                    json_nums(w, r->unc_ci[u][t][m], 2);
                }
            json_end(w);
        }
        json_end(w);
    }
    json_end(w);
    json_key_int(w, "bootstrap", r->replicates);
    if (r->ci_why[0])
        json_key_str(w, "ci_why", r->ci_why);
    if (!r->nsources)
        return;
    for (int pass = 0; pass < 3; pass++) { /* uncertainty, uncertainty_why, verdict */
        json_key(w, pass == 0 ? "uncertainty" : pass == 1 ? "uncertainty_why" : "verdict");
        json_obj(w);
        for (int u = 0; u < r->nsources; u++) {
            int has = pass == 0;
            for (int t = 0; t < HEDGE_NTARGETS; t++)
                for (int m = 0; m < HEDGE_NMEASURES; m++)
                    has |= pass == 1 ? isnan(r->unc[u][t][m])
                                     : r->learned[u] && r->best[t][m] >= 0 && !isnan(r->diff[u][t][m]);
            if (!has)
                continue;
            json_key(w, r->source[u]);
            json_obj(w);
            for (int t = 0; t < HEDGE_NTARGETS; t++) {
                int ht = pass == 0;
                for (int m = 0; m < HEDGE_NMEASURES; m++)
                    ht |= pass == 1 ? isnan(r->unc[u][t][m])
                                    : r->learned[u] && r->best[t][m] >= 0 && !isnan(r->diff[u][t][m]);
                if (!ht)
                    continue;
                json_key(w, hedge_target_name(t));
                json_obj(w);
                for (int m = 0; m < HEDGE_NMEASURES; m++) {
                    if (pass == 0)
                        json_key_num(w, hedge_measure_name(m), r->unc[u][t][m]);
                    else if (pass == 1 && isnan(r->unc[u][t][m]))
                        json_key_str(w, hedge_measure_name(m), r->unc_why[u][t][m]);
                    else if (pass == 2 && r->learned[u] && r->best[t][m] >= 0 && !isnan(r->diff[u][t][m])) {
                        json_key(w, hedge_measure_name(m));
                        json_obj(w);
                        json_key_str(w, "baseline", r->source[r->best[t][m]]);
                        json_key_num(w, "difference", r->diff[u][t][m]);
                        json_key(w, "ci");
                        if (isnan(r->diff_ci[u][t][m][0]))
                            json_null(w);
                        else
                            json_nums(w, r->diff_ci[u][t][m], 2);
                        json_end(w);
                    }
                }
                json_end(w);
            }
            json_end(w);
        }
        json_end(w);
    }
    json_key(w, "risk");
    json_obj(w);
    json_key_num(w, "alpha", o->risk);
    json_key_num(w, "delta", o->risk_delta);
    for (int u = 0; u < r->nsources; u++) {
        const struct hedge_risk *k = &r->riskctl[u];
        json_key(w, r->source[u]);
        json_obj(w);
        json_key(w, "found");
        json_bool(w, k->found);
        json_key_num(w, "threshold", k->threshold);
        json_key_num(w, "coverage", k->coverage);
        json_key_num(w, "risk", k->risk);
        json_key_int(w, "calibration", k->ncal);
        json_key_int(w, "test", k->ntest);
        json_key_nums(w, "risk_at_coverage", k->risk_at, 3);
        if (k->why[0])
            json_key_str(w, "why", k->why);
        json_end(w);
    }
    json_end(w);
}

/* the verification section of set r, as hedge.evaluate's dict has it: "why" names each NaN by its
 * table label */
static void verification_json(json_writer *w, const hedge_result *r, const hedge_options *o)
{
    if (o->include)
        return;
    const struct hedge_verify *v = &r->verify;
    json_key(w, "verification");
    json_obj(w);
    json_key_int(w, "genuine", v->genuine);
    json_key_int(w, "impostor", v->impostor);
    json_key_int(w, "mated", v->mated);
    json_key_int(w, "non_mated", v->nonmated);
    json_key_nums(w, "far", v->far, HEDGE_NFAR);
    json_key_nums(w, "tar_at_far", v->tar, HEDGE_NFAR);
    json_key_nums(w, "far_reached", v->far_reached, HEDGE_NFAR);
    json_key_nums(w, "fnmr_at_fmr", v->fnmr, HEDGE_NFAR);
    json_key_num(w, "roc_auc", v->roc_auc);
    json_key_nums(w, "dir_at_far", v->dir, HEDGE_NFAR);
    json_key(w, "why");
    json_obj(w);
    char key[32], fl[16];
    for (int i = 0; i < HEDGE_NFAR; i++)
        if (isnan(v->tar[i])) {
            far_label(fl, sizeof fl, v->far[i]);
            snprintf(key, sizeof key, "TAR@FAR %s", fl);
            json_key_str(w, key, v->tar_why[i]);
        }
    if (isnan(v->roc_auc))
        json_key_str(w, "ROC AUC", v->roc_why);
    for (int i = 0; i < HEDGE_NFAR; i++)
        if (isnan(v->dir[i])) {
            far_label(fl, sizeof fl, v->far[i]);
            snprintf(key, sizeof key, "DIR@FAR %s", fl);
            json_key_str(w, key, v->dir_why[i]);
        }
    json_end(w);
    json_end(w);
}

/* R's keys (distance, knn_k, each set, notes) into the open object of w */
static void json_sets(json_writer *w, const evalreport *R)
{
    json_key_str(w, "distance", R->distance);
    double k = NAN;
    for (int s = 0; s < R->nsets; s++)
        if (!isnan(R->r[s].value[HEDGE_KNN_K]) && !(R->r[s].value[HEDGE_KNN_K] >= k))
            k = R->r[s].value[HEDGE_KNN_K];
    json_key_num(w, "knn_k", k);
    for (int s = 0; s < R->nsets; s++) {
        const hedge_result *r = R->r + s;
        json_key(w, R->names[s]);
        json_obj(w);
        json_key_num(w, "ap", r->value[HEDGE_AP]);
        json_key_num(w, "ece", r->value[HEDGE_ECE]);
        json_key_num(w, "knn", r->value[HEDGE_KNN]);
        json_key(w, "recall_at");
        json_ints(w, R->o->ks, R->o->nk);
        json_key_nums(w, "recall", r->value + HEDGE_RECALL, R->o->nk);
        for (int i = 0; i < NROWS; i++)
            json_key_num(w, hedge_metric_name(rows[i]), r->value[rows[i]]);
        if (R->reject[s])
            json_key_str(w, "reject_tsv", R->reject[s]);
        uncertainty_json(w, r, R->o);
        verification_json(w, r, R->o);
        json_end(w);
    }
    json_key(w, "notes");
    json_arr(w);
    for (int i = 0; i < R->nnotes; i++)
        json_str(w, R->notes[i]);
    json_end(w);
}

void evalreport_json(FILE *f, const evalreport *R)
{
    json_writer w;
    json_report(&w, f, "evaluate");
    json_sets(&w, R);
    json_end(&w);
}

void evalreport_json_galleries(FILE *f, const evalreport *R, int ng)
{
    json_writer w;
    json_report(&w, f, "evaluate");
    json_key(&w, "galleries");
    json_arr(&w);
    for (int g = 0; g < ng; g++) {
        json_obj(&w);
        json_key_str(&w, "gallery", R[g].gallery_name);
        json_sets(&w, &R[g]);
        json_end(&w);
    }
    json_end(&w);
    json_end(&w);
}

void evalreport_free(evalreport *R)
{
    for (int i = 0; i < R->nnotes; i++)
        free(R->notes[i]);
    R->nnotes = 0;
}

int evalreport_reject(const char *path, const hedge_result *r, const hedge_set *S, uint64_t seed)
{
    int64_t n = r->nq;
    if (!r->knn_eta || n < 20)
        return 0;
    double *u = emalloc((size_t)n * sizeof *u), *perf = emalloc((size_t)n * sizeof *perf);
    uint64_t *tie = emalloc((size_t)n * sizeof *tie);
    for (int64_t q = 0; q < n; q++) {
        double id = S->ids ? (double)S->ids[q] : (double)q;
        u[q] = r->knn_eta[q], perf[q] = r->knn_correct[q];
        tie[q] = metrics_tie_key(seed, &id, 1);
    }
    uncertainty_report U = {.ufield = "eta", .pname = "accuracy", .f1 = "correct", .nbins = 20, .seed = seed,
                            .n = n, .quiet = 1};
    uncertainty_analyse(&U, u, perf, NULL, tie, NULL);
    FILE *f = atomic_open(path);
    uncertainty_write_reject_tsv(f, &U);
    atomic_commit(f);
    uncertainty_free(&U);
    free(u), free(perf), free(tie);
    return 1;
}
