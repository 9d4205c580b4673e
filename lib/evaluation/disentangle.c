/* disentangle: the disentanglement measure (lib/evaluation/disentangle.h) */
#include "disentangle.h"

#include <math.h>
#include <stdlib.h>

#include "auc.h"
#include "util.h"

static int cmp_double(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;
    return (a > b) - (a < b);
}

/* the distinct values of attribute a and each item's index among them */
static void group_values(const double *raw, int A, int a, int64_t n, const char *name, disentangle_attr *r)
{
    double *v = emalloc((size_t)n * sizeof *v);
    for (int64_t i = 0; i < n; i++)
        v[i] = raw[i * A + a];
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    int64_t G = 0;
    for (int64_t i = 0; i < n; i++)
        if (!G || v[i] != v[G - 1])
            v[G++] = v[i];
    if (G > INT32_MAX)
        die("attribute %s has %lld values", name, (long long)G);
    r->G = (int)G;
    r->value = erealloc(v, (size_t)G * sizeof *v);
    r->grp = emalloc((size_t)n * sizeof *r->grp);
    for (int64_t i = 0; i < n; i++) {
        double x = raw[i * A + a];
        int64_t lo = 0, hi = G - 1;
        while (lo < hi) {
            int64_t mid = (lo + hi) / 2;
            if (r->value[mid] < x)
                lo = mid + 1;
            else
                hi = mid;
        }
        r->grp[i] = (int32_t)lo;
    }
}

/* best dimension per value, the attribute's mean, main dimension and distinct best dimensions */
static void summarize_attribute(disentangle_attr *r, int64_t n, int D)
{
    r->best = emalloc((size_t)r->G * sizeof *r->best);
    r->score = emalloc((size_t)r->G * sizeof *r->score);
    int *cnt = ecalloc((size_t)D, sizeof *cnt);
    double sum = 0;
    for (int g = 0; g < r->G; g++) {
        /* separations compared as max(U, pairs - U), exact: the two values of a two-valued
         * attribute get the same best dimension and score */
        double pairs = (double)r->npos[g] * (double)(n - r->npos[g]), bests = -1;
        int bd = -1;
        for (int d = 0; pairs > 0 && d < D; d++) {
            double u = r->u[(size_t)g * D + d], s = u > pairs - u ? u : pairs - u;
            if (s > bests)
                bests = s, bd = d;
        }
        r->best[g] = bd;
        r->score[g] = bd >= 0 ? bests / pairs : NAN;
        if (bd >= 0)
            cnt[bd]++;
        sum += r->score[g];
    }
    r->mean = r->G >= 2 ? sum / r->G : NAN;
    r->main_dim = -1;
    r->main_count = r->distinct = 0;
    for (int d = 0; d < D; d++) {
        r->distinct += cnt[d] > 0;
        if (cnt[d] > r->main_count)
            r->main_count = cnt[d], r->main_dim = d;
    }
    free(cnt);
}

void disentangle_measure(const double *mean, int64_t n, int D, const double *raw, int A,
                         const char *const *names, disentangle_result *R)
{
    R->n = n;
    R->D = D;
    R->A = A;
    R->attr = ecalloc((size_t)A, sizeof *R->attr);
    disentangle_attr *res = R->attr;
    for (int a = 0; a < A; a++) {
        group_values(raw, A, a, n, names[a], &res[a]);
        res[a].npos = emalloc((size_t)res[a].G * sizeof *res[a].npos);
        res[a].u = emalloc((size_t)res[a].G * D * sizeof *res[a].u);
    }
    /* one sort per dimension; every value's U from its rank sum */
    double *col = emalloc((size_t)n * sizeof *col), *rank = emalloc((size_t)n * sizeof *rank);
    int maxG = 0;
    for (int a = 0; a < A; a++)
        maxG = res[a].G > maxG ? res[a].G : maxG;
    double *ug = emalloc((size_t)maxG * sizeof *ug);
    for (int d = 0; d < D; d++) {
        for (int64_t i = 0; i < n; i++)
            col[i] = mean[i * D + d];
        metrics_auc_midranks(col, n, rank);
        for (int a = 0; a < A; a++) {
            metrics_auc_groups(rank, res[a].grp, n, res[a].G, res[a].npos, ug, NULL);
            for (int g = 0; g < res[a].G; g++)
                res[a].u[(size_t)g * D + d] = ug[g];
        }
    }
    free(ug);
    free(col);
    free(rank);

    /* per attribute, then the paper's pool: every value, a two-valued attribute once */
    double pooled = 0;
    R->nvalues = 0;
    for (int a = 0; a < A; a++) {
        disentangle_attr *r = &res[a];
        summarize_attribute(r, n, D);
        if (r->G >= 2) {
            int counted = r->G == 2 ? 1 : r->G;
            for (int g = 0; g < counted; g++)
                pooled += r->score[g];
            R->nvalues += counted;
        }
    }
    R->mean = R->nvalues ? pooled / R->nvalues : NAN;
}

int disentangle_shared(const disentangle_result *R, int a, int b)
{
    const disentangle_attr *x = &R->attr[a], *y = &R->attr[b];
    return x->G >= 2 && y->G >= 2 && x->main_dim == y->main_dim;
}

double disentangle_dim_auc(const disentangle_result *R, int a, int g, int d)
{
    const disentangle_attr *r = &R->attr[a];
    double pairs = (double)r->npos[g] * (double)(R->n - r->npos[g]);
    return pairs > 0 ? r->u[(size_t)g * R->D + d] / pairs : NAN;
}

void disentangle_free(disentangle_result *R)
{
    for (int a = 0; a < R->A; a++) {
        disentangle_attr *r = &R->attr[a];
        free(r->value);
        free(r->grp);
        free(r->npos);
        free(r->u);
        free(r->best);
        free(r->score);
    }
    free(R->attr);
    R->attr = NULL;
}
