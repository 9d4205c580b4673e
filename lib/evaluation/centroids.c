/* centroids: class centroids and the appendix D ordering statistics (lib/evaluation/centroids.h) */
#include "centroids.h"

#include <stdlib.h>

#include "proto.h"
#include "util.h"

void centroid_set_init(centroid_set *s, int D) { *s = (centroid_set){.D = D}; }

void centroid_set_free(centroid_set *s)
{
    for (int i = 0; i < s->n; i++) {
        free(s->c[i].sum);
        free(s->c[i].vsum);
    }
    free(s->c);
    free(s->slot);
    *s = (centroid_set){0};
}

/* the centroid of class cls, added on its first item */
static centroid *class_centroid(centroid_set *s, int cls)
{
    if (cls >= s->slotcap) {
        int nc = cls + 1024;
        s->slot = erealloc(s->slot, nc * sizeof *s->slot);
        for (int i = s->slotcap; i < nc; i++)
            s->slot[i] = -1;
        s->slotcap = nc;
    }
    if (s->slot[cls] < 0) {
        if (s->n == s->cap) {
            s->cap = s->cap ? 2 * s->cap : 128;
            s->c = erealloc(s->c, s->cap * sizeof *s->c);
        }
        s->c[s->n] = (centroid){.cls = cls, .n = 0, .sum = ecalloc(s->D, sizeof(double)),
                                .vsum = ecalloc(s->D, sizeof(double))};
        s->slot[cls] = s->n++;
    }
    return &s->c[s->slot[cls]];
}

void centroid_add(centroid_set *s, int cls, const float *mu, const float *var, int C)
{
    int D = s->D;
    centroid *ct = class_centroid(s, cls);
    for (int k = 0; k < C; k++)
        for (int d = 0; d < D; d++)
            ct->sum[d] += mu[k * D + d] / C;
    if (var) {
        double mean[CENTROID_MAXD], v[CENTROID_MAXD];
        if (D > CENTROID_MAXD)
            die("internal error: centroid_add with variances of %d > %d dimensions", D, CENTROID_MAXD);
        proto_gaussian(mu, var, C, D, mean, v);
        for (int d = 0; d < D; d++)
            ct->vsum[d] += v[d];
    }
    ct->n++;
}

static int by_first(const void *a, const void *b)
{
    const centroid *x = a, *y = b;
    double u = x->sum[0] / x->n, v = y->sum[0] / y->n;
    return u < v ? -1 : u > v ? 1 : x->cls - y->cls;
}

static int share_digit(int a, int b, int digits)
{
    for (int i = 0; i < digits; i++, a /= 10, b /= 10)
        if (a % 10 == b % 10)
            return 1;
    return 0;
}

void centroid_order(centroid_set *s, int digits, centroid_order_stats *st)
{
    qsort(s->c, s->n, sizeof *s->c, by_first);
    int shared = 0, runs = 0, inrun = 0, runclasses = 0;
    for (int i = 0; i + 1 < s->n; i++) {
        if (share_digit(s->c[i].cls, s->c[i + 1].cls, digits)) {
            shared++;
            if (!inrun) {
                runs++;
                runclasses += 2;
                inrun = 1;
            } else
                runclasses++;
        } else
            inrun = 0;
    }
    st->shared = shared;
    st->runs = runs;
    st->mean_run = runs ? (double)runclasses / runs : 0;
}
