/* evalhtml: the evaluation as one self-contained page (lib/engine/evalreport.h's evalreport_html,
 * hedge.h's hedge_report): the table and its notes as evalreport_table prints them (markdown
 * made HTML), then inline SVG figures of each set: the risk-coverage curves of every source on
 * each target (learned sources solid, free baselines dashed, the oracle dotted), the performance
 * in tau's bins of each learned source, the reliability diagram of the match probability, and
 * the verification ROC. No script, no network. Each curve is a <polyline> whose data-set,
 * data-source and data-target attributes name it and whose data-x and data-y hold its numbers
 * (%.10g, the JSON's digits), so that a test (or a reader's script) can check it. */
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "evalreport.h"
#include "guard.h"
#include "hedge.h"
#include "util.h"

static void esc(FILE *f, const char *s, size_t n)
{
    for (size_t i = 0; i < n && s[i]; i++)
        switch (s[i]) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        default: fputc(s[i], f);
        }
}

/* evalreport_table's markdown as HTML: tables, lists, paragraphs */
static void markdown(FILE *f, const char *md)
{
    int in_table = 0, in_list = 0, row = 0;
    for (const char *l = md; *l;) {
        const char *e = strchr(l, '\n');
        size_t n = e ? (size_t)(e - l) : strlen(l);
        int is_row = n && l[0] == '|', is_item = n > 1 && l[0] == '-' && l[1] == ' ';
        if (in_table && !is_row)
            fputs("</table>\n", f), in_table = 0;
        if (in_list && !is_item)
            fputs("</ul>\n", f), in_list = 0;
        if (is_row) {
            if (!in_table)
                fputs("<table>\n", f), in_table = 1, row = 0;
            if (strncmp(l, "| ---", 5)) {
                const char *tag = row ? "td" : "th";
                fputs("<tr>", f);
                const char *c = l + 1;
                while (c < l + n) {
                    const char *bar = memchr(c, '|', (size_t)(l + n - c));
                    if (!bar)
                        break;
                    const char *a = c, *b = bar;
                    while (a < b && *a == ' ')
                        a++;
                    while (b > a && b[-1] == ' ')
                        b--;
                    fprintf(f, "<%s>", tag);
                    esc(f, a, (size_t)(b - a));
                    fprintf(f, "</%s>", tag);
                    c = bar + 1;
                }
                fputs("</tr>\n", f);
                row++;
            }
        } else if (is_item) {
            if (!in_list)
                fputs("<ul>\n", f), in_list = 1;
            fputs("<li>", f), esc(f, l + 2, n - 2), fputs("</li>\n", f);
        } else if (n) {
            fputs("<p>", f), esc(f, l, n), fputs("</p>\n", f);
        }
        l += n + (e != NULL);
    }
    if (in_table)
        fputs("</table>\n", f);
    if (in_list)
        fputs("</ul>\n", f);
}

typedef struct {
    const char *name;   /* the legend's, and data-source */
    const char *target; /* data-target, or NULL */
    const double *x, *y;
    int n;
    int style;          /* 0 solid, 1 dashed, 2 dotted (the oracle, the diagonal), 3 points only */
    int colour;
} series;

static const char *const colours[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b",
                                      "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"};

/* one figure: the series' finite points, x in [x0, x1] (logx: log10 of x), y in [y0, y1] */
static void plot(FILE *f, const char *set, const char *title, const char *xl, const char *yl, double x0, double x1,
                 double y0, double y1, int logx, const series *S, int ns)
{
    const double W = 440, H = 300, L = 56, R = 150, T = 30, B = 44, pw = W - L - R, ph = H - T - B;
    if (!(y1 > y0))
        y1 = y0 + 1;
    fprintf(f, "<svg class=\"figure\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
               "viewBox=\"0 0 %.0f %.0f\" data-set=\"", W, H, W, H);
    esc(f, set, 64);
    fprintf(f, "\" data-title=\"");
    esc(f, title, 200);
    fprintf(f, "\">\n<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"#444\"/>\n", L, T,
            pw, ph);
    fprintf(f, "<text x=\"%.1f\" y=\"18\" font-size=\"13\" text-anchor=\"middle\">", L + pw / 2);
    esc(f, title, 200);
    fputs("</text>\n", f);
    for (int i = 0; i <= 4; i++) { /* ticks */
        double fx = x0 + (x1 - x0) * i / 4, fy = y0 + (y1 - y0) * i / 4, px = L + pw * i / 4, py = T + ph - ph * i / 4;
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>", px, T, px, T + ph);
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n", L, py, L + pw, py);
        if (logx)
            fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" text-anchor=\"middle\">1e%.0f</text>", px,
                    T + ph + 14, fx);
        else
            fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" text-anchor=\"middle\">%.2g</text>", px,
                    T + ph + 14, fx);
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" text-anchor=\"end\">%.3g</text>\n", L - 4, py + 3, fy);
    }
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"middle\">", L + pw / 2, H - 8);
    esc(f, xl, 100);
    fprintf(f, "</text>\n<text x=\"14\" y=\"%.1f\" font-size=\"11\" text-anchor=\"middle\" transform=\"rotate(-90 14 %.1f)\">",
            T + ph / 2, T + ph / 2);
    esc(f, yl, 100);
    fputs("</text>\n", f);
    for (int k = 0; k < ns; k++) {
        const series *s = &S[k];
        const char *c = colours[s->colour % (int)(sizeof colours / sizeof colours[0])];
        fputs(s->style == 3 ? "<g class=\"points\"" : "<polyline class=\"curve\" fill=\"none\"", f);
        fprintf(f, " stroke=\"%s\" stroke-width=\"%s\"%s data-source=\"", c, s->style == 0 ? "2" : "1.5",
                s->style == 1 ? " stroke-dasharray=\"5,3\"" : s->style == 2 ? " stroke-dasharray=\"2,2\"" : "");
        esc(f, s->name, 64);
        fputs("\"", f);
        if (s->target)
            fprintf(f, " data-target=\"%s\"", s->target);
        fputs(" data-x=\"", f);
        for (int i = 0; i < s->n; i++)
            fprintf(f, "%s%.10g", i ? " " : "", s->x[i]);
        fputs("\" data-y=\"", f);
        for (int i = 0; i < s->n; i++)
            if (isnan(s->y[i]))
                fprintf(f, "%snan", i ? " " : "");
            else
                fprintf(f, "%s%.10g", i ? " " : "", s->y[i]);
        fputs(s->style == 3 ? "\">" : "\" points=\"", f);
        for (int i = 0; i < s->n; i++) {
            double x = logx ? log10(s->x[i]) : s->x[i], y = s->y[i];
            if (!isfinite(x) || !isfinite(y))
                continue;
            double px = L + pw * (x - x0) / (x1 - x0), py = T + ph - ph * (y - y0) / (y1 - y0);
            if (s->style == 3)
                fprintf(f, "<circle cx=\"%.2f\" cy=\"%.2f\" r=\"3\" fill=\"%s\"/>", px, py, c);
            else
                fprintf(f, "%.2f,%.2f ", px, py);
        }
        fputs(s->style == 3 ? "</g>\n" : "\"/>\n", f);
        /* the legend */
        double ly = T + 10 + 15 * k;
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"2\"%s/>", L + pw + 10,
                ly, L + pw + 30, ly, c,
                s->style == 1 ? " stroke-dasharray=\"5,3\"" : s->style == 2 ? " stroke-dasharray=\"2,2\"" : "");
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\">", L + pw + 34, ly + 4);
        esc(f, s->name, 64);
        fputs("</text>\n", f);
    }
    fputs("</svg>\n", f);
}

static const char *const tlabel[HEDGE_NTARGETS] = {"R@1's error (r1)", "kNN's error (knn)", "1 - AP (ap)",
                                                    "1 - MAP@R (map_r)"};

/* set s's figures */
static void figures(FILE *f, const evalreport *R, int s)
{
    const hedge_result *r = &R->r[s];
    const char *set = R->names[s];
    double cov[HEDGE_CURVE], bin[HEDGE_TAUBINS], diag[2] = {0, 1};
    for (int i = 0; i < HEDGE_CURVE; i++)
        cov[i] = (double)(i + 1) / HEDGE_CURVE;
    for (int b = 0; b < HEDGE_TAUBINS; b++)
        bin[b] = b + 1;
    fprintf(f, "<h2>Figures (%s)</h2>\n<p>Risk-coverage: the queries answered in the order of each source, the most "
               "certain first; solid: the learned sources, dashed: the free baselines, dotted: the oracle (by the "
               "loss itself). Tau's bins: the share of the queries right (1 - the loss) in each of tau's 20 bins of "
               "the uncertainty.</p>\n<div class=\"figures\">\n", set);
    series S[HEDGE_NSOURCES + 1];
    char title[200];
    for (int t = 0; t < HEDGE_NTARGETS; t++) { /* risk against coverage, every source */
        int ns = 0;
        double ymax = 0;
        for (int k = 0; k < r->nsources; k++) {
            int any = 0;
            for (int i = 0; i < HEDGE_CURVE; i++)
                if (isfinite(r->curve[k][t][i]))
                    any = 1, ymax = fmax(ymax, r->curve[k][t][i]);
            if (any)
                S[ns++] = (series){r->source[k], hedge_target_name(t), cov, r->curve[k][t], HEDGE_CURVE,
                                   r->learned[k] ? 0 : 1, k};
        }
        if (!ns)
            continue;
        S[ns++] = (series){"oracle", hedge_target_name(t), cov, r->oracle_curve[t], HEDGE_CURVE, 2, 8};
        snprintf(title, sizeof title, "risk-coverage: %s", tlabel[t]);
        plot(f, set, title, "coverage (share of queries answered, the most certain first)", "risk (mean loss)", 0, 1, 0,
             ymax * 1.05, 0, S, ns);
    }
    for (int k = 0; k < r->nsources; k++) { /* tau's bins of each learned source */
        if (!r->learned[k])
            continue;
        int ns = 0;
        double lo = 1, hi = 0;
        for (int t = 0; t < HEDGE_NTARGETS; t++) {
            int any = 0;
            for (int b = 0; b < HEDGE_TAUBINS; b++)
                if (isfinite(r->tau_bins[k][t][b]))
                    any = 1, lo = fmin(lo, r->tau_bins[k][t][b]), hi = fmax(hi, r->tau_bins[k][t][b]);
            if (any)
                S[ns++] = (series){hedge_target_name(t), hedge_target_name(t), bin, r->tau_bins[k][t], HEDGE_TAUBINS,
                                   0, t};
        }
        if (!ns)
            continue;
        snprintf(title, sizeof title, "tau's bins: %s", r->source[k]);
        double pad = (hi - lo) * 0.05 + 1e-3; /* the bins' range: their trend, not the page's 0 .. 1 */
        plot(f, set, title, "bin of uncertainty (1: the most certain)", "performance (1 - loss)", 1, HEDGE_TAUBINS,
             fmax(0, lo - pad), fmin(1, hi + pad), 0, S, ns);
    }
    double ep[HEDGE_ECEBINS], ey[HEDGE_ECEBINS];
    int ne = 0;
    for (int b = 0; b < HEDGE_ECEBINS; b++)
        if (r->ece_n[b] > 0 && isfinite(r->ece_p[b]))
            ep[ne] = r->ece_p[b], ey[ne++] = r->ece_y[b];
    if (ne && isfinite(r->value[HEDGE_ECE])) {
        S[0] = (series){"match probability", NULL, ep, ey, ne, 0, 0};
        S[1] = (series){"calibrated", NULL, diag, diag, 2, 2, 8};
        snprintf(title, sizeof title, "reliability: ECE %.4f over %lld pairs", r->value[HEDGE_ECE],
                 (long long)(r->verify.genuine + r->verify.impostor));
        plot(f, set, title, "mean p(match) in the bin", "share of genuine pairs", 0, 1, 0, 1, 0, S, 2);
    }
    int nr = 0;
    for (int i = 0; i < HEDGE_ROC; i++)
        nr += isfinite(r->verify.roc_tar[i]);
    if (nr) {
        S[0] = (series){"TAR", "roc", r->verify.roc_far, r->verify.roc_tar, HEDGE_ROC, 0, 0};
        snprintf(title, sizeof title, "verification ROC: AUC %.4f", r->verify.roc_auc);
        plot(f, set, title, "false accept rate", "true accept rate", -4, 0, 0, 1, 1, S, 1);
    }
    fputs("</div>\n", f);
}

void evalreport_html(FILE *f, const evalreport *R, const char *title)
{
    char *md = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&md, &len);
    if (!m)
        die("evaluate: out of memory (the report's table)");
    evalreport_table(m, R, 0);
    fclose(m);
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>", f);
    esc(f, title, 500);
    fputs("</title>\n<style>\nbody { font-family: sans-serif; margin: 2em; max-width: 1400px; color: #222; }\n"
          "table { border-collapse: collapse; margin: 1em 0; font-size: 13px; }\n"
          "td, th { border: 1px solid #bbb; padding: 2px 8px; text-align: left; }\n"
          "th { background: #eee; }\nli, p { font-size: 13px; }\n"
          ".figures { display: flex; flex-wrap: wrap; gap: 12px; }\n</style>\n</head>\n<body>\n<h1>", f);
    esc(f, title, 500);
    fputs("</h1>\n", f);
    markdown(f, md);
    free(md);
    for (int s = 0; s < R->nsets; s++)
        figures(f, R, s);
    fprintf(f, "<p>hedge %s; definitions: docs/metric.md.</p>\n</body>\n</html>\n", hedge_version());
}

/* the page of r[0 .. nsets) at path (inside hedge_report's guard: R is this frame's, never looked
 * at after a way out, its notes freed then by the guard's ledger) */
static void write_page(const char *path, const hedge_result *r, int nsets, const char *const *names,
                       const hedge_options *o, const char *title)
{
    const char *dist = hedge_distance_name(o->distance);
    evalreport R = {.r = r, .nsets = nsets, .o = o, .few = -1, .distance = dist ? dist : "euclidean"};
    for (int s = 0; s < nsets; s++)
        R.names[s] = names[s];
    FILE *f = atomic_open(path);
    evalreport_notes(&R);
    evalreport_html(f, &R, title);
    evalreport_free(&R);
    atomic_commit(f);
}

int hedge_report(const char *path, const hedge_result *r, int nsets, const char *const *names,
                 const hedge_options *o, const char *title, char *err, size_t errlen)
{
    if (nsets < 1 || nsets > EVALREPORT_MAXSETS || !path || !r || !names || !o) {
        snprintf(err, errlen, "report: %d sets (expected 1 to %d), a path, results, names and options", nsets,
                 EVALREPORT_MAXSETS);
        return HEDGE_EINVAL;
    }
    /* one page at a time: the table of atomic outputs (lib/base/util.h) is the process's, and
     * Python's threads call this with the GIL released */
    static pthread_mutex_t one = PTHREAD_MUTEX_INITIALIZER;
    guard g;
    guard_push(&g, NULL);
    if (setjmp(g.jb)) { /* only write_page leaves this way, with the lock held */
        pthread_mutex_unlock(&one);
        snprintf(err, errlen, "report: %s", g.msg);
        return g.kind == GUARD_NOMEM ? HEDGE_ENOMEM : HEDGE_EINVAL;
    }
    pthread_mutex_lock(&one);
    write_page(path, r, nsets, names, o, title ? title : "hedge evaluate");
    pthread_mutex_unlock(&one);
    guard_pop(&g);
    return 0;
}
