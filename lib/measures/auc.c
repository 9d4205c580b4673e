/* auc: midranks and the Mann-Whitney AUC. Definitions: auc.h. */
#include "auc.h"

#include <math.h>
#include <stdlib.h>

#include "argsort.h"
#include "util.h"

void metrics_auc_midranks(const double *x, int64_t n, double *rank)
{
    metrics_keyed *s = metrics_sorted(x, n, 1.0);
    for (int64_t i = 0, j; i < n; i = j) {
        j = metrics_block_end(s, i, n);
        /* positions i+1 .. j (1-based) share the mean of the block's positions */
        double mid = 0.5 * (double)(i + 1 + j);
        for (int64_t t = i; t < j; t++)
            rank[s[t].i] = mid;
    }
    free(s);
}

void metrics_auc_groups(const double *rank, const int32_t *group, int64_t n, int G, int64_t *npos, double *u,
                        double *auc)
{
    int64_t *cnt = ecalloc((size_t)(G > 0 ? G : 1), sizeof *cnt);
    double *sum = ecalloc((size_t)(G > 0 ? G : 1), sizeof *sum);
    for (int64_t i = 0; i < n; i++) {
        if (group[i] < 0 || group[i] >= G)
            die("metrics_auc_groups: item %lld is in group %d, outside 0..%d", (long long)i, (int)group[i], G - 1);
        cnt[group[i]]++;
        sum[group[i]] += rank[i];
    }
    for (int g = 0; g < G; g++) {
        double np = (double)cnt[g], U = sum[g] - np * (np + 1) / 2;
        if (npos)
            npos[g] = cnt[g];
        if (u)
            u[g] = U;
        if (auc)
            auc[g] = cnt[g] > 0 && cnt[g] < n ? U / (np * (double)(n - cnt[g])) : NAN;
    }
    free(cnt);
    free(sum);
}

double metrics_auc(const double *score, const uint8_t *label, int64_t n)
{
    double *rank = emalloc((size_t)(n ? n : 1) * sizeof *rank);
    int32_t *group = emalloc((size_t)(n ? n : 1) * sizeof *group);
    metrics_auc_midranks(score, n, rank);
    for (int64_t i = 0; i < n; i++)
        group[i] = label[i] != 0;
    double auc[2];
    metrics_auc_groups(rank, group, n, 2, NULL, NULL, auc);
    free(rank);
    free(group);
    return auc[1];
}
