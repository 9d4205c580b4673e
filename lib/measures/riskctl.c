/* riskctl: a threshold on the uncertainty that controls the risk of the answers kept
 * (lib/measures/riskctl.h). */
#include "riskctl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "argsort.h"
#include "betainc.h"
#include "rng.h"
#include "util.h"

const double riskctl_coverages[3] = {0.5, 0.8, 0.95};

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* P(Bin(m, p) <= e) = I_{1-p}(m - e, e + 1) for e < m */
static double binom_cdf(int64_t e, int64_t m, double p)
{
    return e >= m ? 1 : exp(betainc_log((double)(m - e), (double)(e + 1), 1 - p, NULL));
}

/* the empirical selective risk at coverage c over the m items in ascending order of u: the mean
 * loss of the k = ceil(c m) surest, a run of equal u crossed by k counted by its mean loss */
static double risk_at(const double *u, const double *loss, const int64_t *order, int64_t m, double c)
{
    int64_t k = (int64_t)ceil(c * (double)m - 1e-9);
    if (k < 1)
        k = 1;
    double L = 0;
    for (int64_t a = 0, b; a < m; a = b) {
        double s = 0;
        for (b = a; b < m && u[order[b]] == u[order[a]]; b++)
            s += loss[order[b]];
        if (b >= k)
            return (L + (double)(k - a) * s / (double)(b - a)) / (double)k;
        L += s;
    }
    return L / (double)m;
}

void riskctl_run(const double *u, const double *loss, int64_t n, uint64_t seed, double alpha, double delta,
                 riskctl_result *r)
{
    memset(r, 0, sizeof *r);
    r->alpha = alpha, r->delta = delta, r->threshold = NAN, r->coverage = r->risk = NAN;
    for (int i = 0; i < 3; i++)
        r->risk_at[i] = NAN;
    int64_t *idx = emalloc((size_t)(n ? n : 1) * sizeof *idx), m = 0;
    for (int64_t i = 0; i < n; i++)
        if (!isnan(loss[i]))
            idx[m++] = i;
    if (m < 2) {
        snprintf(r->why, sizeof r->why, "%lld quer%s with an R@1: nothing to split", (long long)m, m == 1 ? "y" : "ies");
        free(idx);
        return;
    }
    /* the risk at coverages, over every query */
    double *key = emalloc((size_t)m * sizeof *key);
    int64_t *ord = emalloc((size_t)m * sizeof *ord);
    for (int64_t t = 0; t < m; t++)
        key[t] = u[idx[t]];
    metrics_argsort(key, m, ord);
    for (int64_t t = 0; t < m; t++)
        ord[t] = idx[ord[t]];
    for (int i = 0; i < 3; i++)
        r->risk_at[i] = risk_at(u, loss, ord, m, riskctl_coverages[i]);
    /* the split */
    rng g;
    rng_init(&g, seed, RISKCTL_SPLIT);
    for (int64_t i = m - 1; i > 0; i--) {
        int64_t j = (int64_t)rng_below(&g, (uint64_t)i + 1), t = idx[i];
        idx[i] = idx[j], idx[j] = t;
    }
    int64_t nc = m / 2, nt = m - nc;
    r->ncal = nc, r->ntest = nt;
    /* the thresholds: the test half's distinct u, ascending (fixed before the calibration
     * losses are looked at: the fixed sequence's condition); the calibration half by u */
    double *th = emalloc((size_t)nt * sizeof *th), *cu = emalloc((size_t)(nc ? nc : 1) * sizeof *cu);
    int64_t *co = emalloc((size_t)(nc ? nc : 1) * sizeof *co);
    for (int64_t t = 0; t < nt; t++)
        th[t] = u[idx[nc + t]];
    qsort(th, (size_t)nt, sizeof *th, cmp_double);
    for (int64_t t = 0; t < nc; t++)
        cu[t] = u[idx[t]];
    metrics_argsort(cu, nc, co);
    double mmin = ceil(log(delta) / log1p(-alpha));
    int64_t kept = 0, wrong = 0;
    for (int64_t j = 0; j < nt; j++) {
        if (j && th[j] == th[j - 1])
            continue;
        while (kept < nc && cu[co[kept]] <= th[j]) /* the calibration queries this threshold keeps */
            wrong += loss[idx[co[kept]]] != 0, kept++;
        if ((double)kept < mmin)
            continue; /* no errors could certify it: passed over, not a stop */
        if (binom_cdf(wrong, kept, alpha) > delta)
            break;
        r->found = 1, r->threshold = th[j], r->cal_kept = kept, r->cal_wrong = wrong;
    }
    free(th), free(cu), free(co);
    if (!r->found)
        snprintf(r->why, sizeof r->why,
                 "no threshold keeps an error rate at most %g with confidence %g on %lld calibration queries (at "
                 "least %.0f must be kept)", alpha, 1 - delta, (long long)nc, mmin);
    int64_t tk = 0, tw = 0;
    for (int64_t t = nc; t < m; t++)
        if (r->found && u[idx[t]] <= r->threshold)
            tk++, tw += loss[idx[t]] != 0;
    r->coverage = (double)tk / (double)nt;
    r->risk = tk ? (double)tw / (double)tk : NAN;
    free(ord), free(key), free(idx);
}
