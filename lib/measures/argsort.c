/* argsort: stable, seeded-random and tie-keyed argsorts. Definitions: argsort.h. */
#include "argsort.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rng.h"
#include "util.h"

static int cmp_values(double a, double b) /* ascending, NaN last (and equal to NaN) */
{
    if (a < b || (!isnan(a) && isnan(b)))
        return -1;
    if (a > b || (isnan(a) && !isnan(b)))
        return 1;
    return 0;
}

static int keyed_cmp(const void *pa, const void *pb)
{
    const metrics_keyed *a = pa, *b = pb;
    int r = cmp_values(a->key, b->key);
    return r ? r : (a->i > b->i) - (a->i < b->i);
}

metrics_keyed *metrics_sorted(const double *v, int64_t n, double sign)
{
    metrics_keyed *s = emalloc((size_t)(n ? n : 1) * sizeof *s);
    for (int64_t i = 0; i < n; i++) {
        s[i].key = sign * v[i];
        s[i].i = i;
    }
    qsort(s, (size_t)n, sizeof *s, keyed_cmp);
    return s;
}

void metrics_argsort(const double *key, int64_t n, int64_t *idx)
{
    metrics_keyed *s = metrics_sorted(key, n, 1.0);
    for (int64_t i = 0; i < n; i++)
        idx[i] = s[i].i;
    free(s);
}

void metrics_argsort_random(const double *key, int64_t n, uint64_t seed, int64_t *idx)
{
    /* a seeded random permutation of the positions, then a stable sort by key: equal keys end up
     * in the permutation's order, whatever their order in the input */
    int64_t *perm = emalloc((size_t)(n ? n : 1) * sizeof *perm);
    for (int64_t i = 0; i < n; i++)
        perm[i] = i;
    rng r;
    rng_init(&r, seed, RNG_STREAM('t', 'i', 'e', 's'));
    for (int64_t i = n - 1; i > 0; i--) {
        int64_t j = (int64_t)rng_below(&r, (uint64_t)i + 1), t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    double *shuffled = emalloc((size_t)(n ? n : 1) * sizeof *shuffled);
    for (int64_t t = 0; t < n; t++)
        shuffled[t] = key[perm[t]];
    metrics_keyed *s = metrics_sorted(shuffled, n, 1.0);
    for (int64_t t = 0; t < n; t++)
        idx[t] = perm[s[t].i];
    free(s);
    free(shuffled);
    free(perm);
}

uint64_t metrics_tie_key(uint64_t seed, const double *ident, int nident)
{
    uint64_t h = rng_mix(seed ^ RNG_STREAM('t', 'i', 'e', 's'));
    for (int k = 0; k < nident; k++) {
        double v = ident[k];
        uint64_t u;
        if (v == floor(v) && v >= -9223372036854775808.0 && v < 9223372036854775808.0)
            u = (uint64_t)(int64_t)v; /* an integer id, -0 as 0 */
        else
            memcpy(&u, &v, sizeof u);
        h = rng_mix(h ^ u);
    }
    return h;
}

typedef struct {
    double key;
    uint64_t tie;
    int64_t i;
} tie_keyed;

typedef struct {
    int nmore;
    const double *const *more;
} tie_ctx;

static int tie_keyed_cmp(const void *pa, const void *pb, void *pc)
{
    const tie_keyed *a = pa, *b = pb;
    const tie_ctx *c = pc;
    int r = cmp_values(a->key, b->key);
    if (r)
        return r;
    if (a->tie != b->tie)
        return a->tie < b->tie ? -1 : 1;
    for (int m = 0; m < c->nmore; m++)
        if ((r = cmp_values(c->more[m][a->i], c->more[m][b->i])))
            return r;
    return (a->i > b->i) - (a->i < b->i);
}

void metrics_argsort_ties(const double *key, const uint64_t *tie, int nmore, const double *const *more, int64_t n,
                          int64_t *idx)
{
    tie_keyed *s = emalloc((size_t)(n ? n : 1) * sizeof *s);
    for (int64_t i = 0; i < n; i++)
        s[i] = (tie_keyed){key[i], tie[i], i};
    tie_ctx c = {nmore, more};
    qsort_r(s, (size_t)n, sizeof *s, tie_keyed_cmp, &c);
    for (int64_t i = 0; i < n; i++)
        idx[i] = s[i].i;
    free(s);
}
