/* ap: average precision and the precision-recall curve of scores against 0/1 labels (the HIB
 * paper's verification AP, section 4; apcurve, retrieve's per-query AP).
 * The names keep the metrics_ prefix of lib/metrics.c, which this module was split from.
 *
 * Every function works on caller-owned arrays and allocates only scratch it frees before
 * returning. Definitions and tie rules (each is also the documented behaviour of the programs):
 *
 *   AP       items sorted by score, descending. Items with equal scores form one block; every
 *            positive in a block gets the precision at the END of the block (tp / rank of the
 *            block's last item). AP = mean of that over the positives. This equals the step sum
 *            sum_t (R_t - R_{t-1}) P_t over the distinct scores t, and it does not depend on the
 *            input order (sklearn's average_precision_score gives the same number).
 *   PR curve one point per distinct score t (descending): recall, precision of "score >= t".
 *   PR-AUC   trapezoids between consecutive points of the curve, starting at
 *            (recall 0, precision of the first point). AP is the step (rectangle) version of the
 *            same area; PR-AUC >= AP whenever precision falls with recall.
 *
 *   double ap = metrics_ap(score, label, n);                  // score[n] double, label[n] 0/1
 */
#ifndef HEDGE_AP_H
#define HEDGE_AP_H
#include <stdint.h>

/* AP of score against label (nonzero = positive) by the tie-block rule above; NaN when there is
 * no positive. Scores must be finite. */
double metrics_ap(const double *score, const uint8_t *label, int64_t n);

typedef struct {
    double threshold;  /* a distinct score; the point is "predict positive when score >= it" */
    double recall, precision;
    int64_t tp, fp;
} metrics_pr_point;
/* writes one point per distinct score, highest threshold first, into pts (room for n points);
 * returns how many. Recall is 0/0 = NaN when there is no positive. */
int64_t metrics_pr_curve(const double *score, const uint8_t *label, int64_t n, metrics_pr_point *pts);
/* AP from the curve: sum (R_t - R_{t-1}) P_t (equals metrics_ap) */
double metrics_pr_step_area(const metrics_pr_point *pts, int64_t npts);
/* trapezoids from (0, P_first) through every point */
double metrics_pr_trapezoid_area(const metrics_pr_point *pts, int64_t npts);

#endif
