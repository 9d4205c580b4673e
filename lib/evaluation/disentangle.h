/* disentangle: how well single embedding dimensions pick out the values of generative attributes
 * (fstat-ridgeway-2018 section 3): the measure of bin/disentangle.c, on numbers in memory.
 *
 * For each attribute a, each of its distinct values v and each dimension d: U, the Mann-Whitney
 * count (ties 1/2; lib/measures/auc.h) of mean[., d] at separating the items with a = v from the
 * others, AUC = U / pairs, and the separation max(AUC, 1 - AUC) (the direction does not matter).
 * A value's score is that of its best dimension (equal separations: the lowest d). An attribute's
 * score is the mean over its values (NaN with fewer than 2); its main dimension is the one that is
 * best for the most values (ties: the lowest), `distinct` counts the dimensions best for some
 * value. The pooled mean is the paper's (its Figure 3): over the non-redundant values, a
 * two-valued attribute counting once (both values have the same separation, U_0 + U_1 = n_0 n_1).
 * One sort per dimension gives midranks, from which every value's U is its rank sum:
 * O(D n log n + D A n).
 *
 * Ownership: disentangle_measure fills a disentangle_result that owns its arrays
 * (disentangle_free); the inputs stay the caller's.
 *
 *   disentangle_result R;
 *   disentangle_measure(mean, n, D, raw, A, names, &R);   // mean (n, D), raw (n, A), names (A)
 *   R.attr[a].mean, R.attr[a].main_dim, R.mean (NaN when R.nvalues = 0)
 *   disentangle_free(&R);
 */
#ifndef HEDGE_DISENTANGLE_H
#define HEDGE_DISENTANGLE_H
#include <stdint.h>

/* one attribute: its distinct values and what each dimension makes of them */
typedef struct {
    int G;               /* distinct values */
    double *value;       /* (G) ascending */
    int32_t *grp;        /* (n) each item's value index */
    int64_t *npos;       /* (G) items with that value */
    double *u;           /* (G, D) U of value g on dimension d */
    int32_t *best;       /* (G) best dimension, -1 when pairs = 0 */
    double *score;       /* (G) the best separation, NaN when pairs = 0 */
    double mean;         /* over the values; NaN when G < 2 */
    int main_dim, main_count, distinct;
} disentangle_attr;

typedef struct {
    int64_t n;
    int D, A;
    disentangle_attr *attr; /* (A) */
    double mean;            /* the pooled mean, NaN when nvalues = 0 */
    int nvalues;            /* the values pooled */
} disentangle_result;

/* the measure of n items' means (n, D) against A attributes, attribute a of item i being
 * raw[i * A + a]; names (A) only for messages */
void disentangle_measure(const double *mean, int64_t n, int D, const double *raw, int A,
                         const char *const *names, disentangle_result *R);
/* 1 when attributes a and b both have two values or more and the same main dimension */
int disentangle_shared(const disentangle_result *R, int a, int b);
/* U / pairs of value g of attribute a on dimension d (NaN when pairs = 0) */
double disentangle_dim_auc(const disentangle_result *R, int a, int g, int d);
void disentangle_free(disentangle_result *R);
#endif
