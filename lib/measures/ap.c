/* ap: AP, the PR curve and its areas. Definitions and the tie rule: ap.h. */
#include "ap.h"

#include <math.h>
#include <stdlib.h>

#include "argsort.h"
#include "util.h"

int64_t metrics_pr_curve(const double *score, const uint8_t *label, int64_t n, metrics_pr_point *pts)
{
    int64_t P = 0;
    for (int64_t i = 0; i < n; i++)
        P += label[i] != 0;
    metrics_keyed *s = metrics_sorted(score, n, -1.0); /* descending score */
    int64_t npts = 0, tp = 0, fp = 0;
    for (int64_t a = 0; a < n;) {
        int64_t b = metrics_block_end(s, a, n); /* the block of equal scores is [a, b) */
        for (int64_t t = a; t < b; t++) {
            if (label[s[t].i])
                tp++;
            else
                fp++;
        }
        metrics_pr_point *p = &pts[npts++];
        p->threshold = -s[a].key;
        p->tp = tp;
        p->fp = fp;
        p->precision = (double)tp / (double)(tp + fp);
        p->recall = P ? (double)tp / (double)P : NAN;
        a = b;
    }
    free(s);
    return npts;
}

double metrics_pr_step_area(const metrics_pr_point *pts, int64_t npts)
{
    double area = 0, r0 = 0;
    for (int64_t t = 0; t < npts; t++) {
        area += (pts[t].recall - r0) * pts[t].precision;
        r0 = pts[t].recall;
    }
    return area;
}

double metrics_pr_trapezoid_area(const metrics_pr_point *pts, int64_t npts)
{
    if (npts == 0)
        return NAN;
    double area = 0, r0 = 0, p0 = pts[0].precision;
    for (int64_t t = 0; t < npts; t++) {
        area += (pts[t].recall - r0) * 0.5 * (pts[t].precision + p0);
        r0 = pts[t].recall;
        p0 = pts[t].precision;
    }
    return area;
}

double metrics_ap(const double *score, const uint8_t *label, int64_t n)
{
    metrics_pr_point *pts = emalloc((size_t)(n ? n : 1) * sizeof *pts);
    int64_t npts = metrics_pr_curve(score, label, n, pts);
    /* sum over blocks of (new positives) x (precision at the block's end), over P: the same as
     * the step area, but summed in counts so a perfect ranking gives exactly 1 */
    int64_t P = npts ? pts[npts - 1].tp : 0, prev = 0;
    double sum = 0;
    for (int64_t t = 0; t < npts; t++) {
        sum += (double)(pts[t].tp - prev) * pts[t].precision;
        prev = pts[t].tp;
    }
    free(pts);
    return P ? sum / (double)P : NAN;
}
