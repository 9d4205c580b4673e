/* aurc: the AUROC of errors, AURC and E-AURC, an item's uncertainty. Definitions: aurc.h. */
#include "aurc.h"

#include <math.h>
#include <stdlib.h>

#include "argsort.h"
#include "auc.h"
#include "util.h"

double metrics_error_auroc(const double *u, const uint8_t *correct, int64_t n)
{
    uint8_t *wrong = emalloc((size_t)(n ? n : 1));
    for (int64_t i = 0; i < n; i++)
        wrong[i] = !correct[i];
    double auc = metrics_auc(u, wrong, n);
    free(wrong);
    return auc;
}

/* cum[k-1] = the expected loss of the first k items in ascending key order, items of equal key
 * in a uniformly random order: inside a block [a, b) of equal keys, after L = the losses of the
 * a items before it, E = L + (k - a) x the block's mean loss (exactly L + S at the block's end) */
static void expected_cumloss(const double *key, const double *loss, int64_t n, double *cum)
{
    metrics_keyed *s = metrics_sorted(key, n, 1.0);
    double L = 0;
    for (int64_t a = 0, b; a < n; a = b) {
        double S = 0;
        b = metrics_block_end(s, a, n);
        for (int64_t t = a; t < b; t++)
            S += loss[s[t].i];
        double mean = S / (double)(b - a);
        for (int64_t k = a + 1; k < b; k++)
            cum[k - 1] = L + (double)(k - a) * mean;
        L += S;
        cum[b - 1] = L;
    }
    free(s);
}

void metrics_aurc(const double *u, const double *loss, int64_t n, metrics_aurc_result *res, int npts,
                  metrics_rc_point *curve)
{
    double *cu = emalloc((size_t)(n ? n : 1) * sizeof *cu), *co = emalloc((size_t)(n ? n : 1) * sizeof *co);
    expected_cumloss(u, loss, n, cu);
    expected_cumloss(loss, loss, n, co); /* the oracle: ties in loss change no sum */
    double a = 0, o = 0;
    for (int64_t k = 1; k <= n; k++) {
        a += cu[k - 1] / (double)k;
        o += co[k - 1] / (double)k;
    }
    res->aurc = n ? a / (double)n : NAN;
    res->oracle = n ? o / (double)n : NAN;
    res->eaurc = res->aurc - res->oracle;
    for (int r = 0; curve && r < npts; r++) {
        metrics_rc_point *p = &curve[r];
        p->rejected = (double)r / npts;
        p->kept = n - (int64_t)r * n / npts; /* r < npts, so kept >= 1 when n >= 1 */
        p->risk = n ? cu[p->kept - 1] / (double)p->kept : NAN;
        p->oracle_risk = n ? co[p->kept - 1] / (double)p->kept : NAN;
    }
    free(cu);
    free(co);
}

const char *metrics_item_uncertainty(const float *eta, const float *var, int64_t n, int64_t cd, double *u)
{
    if (eta) {
        for (int64_t i = 0; i < n; i++)
            u[i] = eta[i];
        return "eta";
    }
    if (!var)
        return NULL;
    for (int64_t i = 0; i < n; i++) {
        double s = 0;
        for (int64_t e = 0; e < cd; e++)
            s += var[i * cd + e];
        u[i] = s / (double)cd;
    }
    return "var";
}
