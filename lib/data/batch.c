/* batch.c: pools of labelled items and the pair, pk and episode draws. See batch.h. */
#include "batch.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

/* ------------------------------------------------------------------ the pool */

void batch_pool_init(batch_pool *p, int64_t item_bytes)
{
    memset(p, 0, sizeof *p);
    p->item_bytes = item_bytes;
}

void batch_pool_add(batch_pool *p, const void *pixels, int32_t cls)
{
    if (p->n == p->cap) {
        if (p->n >= INT32_MAX)
            die("more than %d items do not fit in memory here", INT32_MAX);
        p->cap = p->cap ? p->cap * 2 : 1024;
        p->items = erealloc(p->items, (size_t)(p->cap * p->item_bytes));
        p->cls = erealloc(p->cls, (size_t)p->cap * sizeof *p->cls);
    }
    memcpy(p->items + p->n * p->item_bytes, pixels, (size_t)p->item_bytes);
    p->cls[p->n++] = cls;
}

static const int32_t *sort_cls; /* qsort has no context argument in C11 */

static int by_class_then_index(const void *a, const void *b)
{
    int32_t i = *(const int32_t *)a, j = *(const int32_t *)b;
    if (sort_cls[i] != sort_cls[j])
        return sort_cls[i] < sort_cls[j] ? -1 : 1;
    return (i > j) - (i < j);
}

void batch_pool_index(batch_pool *p)
{
    if (p->n == 0)
        die("the input has no images");
    int64_t n = p->n;
    p->by_group = emalloc(n * sizeof *p->by_group);
    p->item_group = emalloc(n * sizeof *p->item_group);
    p->item_rank = emalloc(n * sizeof *p->item_rank);
    for (int64_t i = 0; i < n; i++)
        p->by_group[i] = (int32_t)i;
    sort_cls = p->cls;
    qsort(p->by_group, n, sizeof *p->by_group, by_class_then_index);
    sort_cls = NULL;
    p->group_class = emalloc(n * sizeof *p->group_class);
    p->group_start = emalloc((n + 1) * sizeof *p->group_start);
    int32_t g = -1;
    for (int64_t k = 0; k < n; k++) {
        int32_t it = p->by_group[k];
        if (g < 0 || p->cls[it] != p->group_class[g]) {
            g++;
            p->group_class[g] = p->cls[it];
            p->group_start[g] = k;
        }
        p->item_group[it] = g;
        p->item_rank[it] = (int32_t)(k - p->group_start[g]);
    }
    p->ngroups = g + 1;
    p->group_start[p->ngroups] = n;
}

void batch_pool_free(batch_pool *p)
{
    free(p->items);
    free(p->cls);
    free(p->group_class);
    free(p->group_start);
    free(p->by_group);
    free(p->item_group);
    free(p->item_rank);
    memset(p, 0, sizeof *p);
}

/* ------------------------------------------------------------------ epoch permutations */

void batch_perm_init(batch_perm *s, int64_t n, uint64_t seed, uint64_t tag)
{
    s->n = n;
    s->seed = seed;
    s->tag = tag;
    s->epoch = -1;
    s->perm = emalloc((n ? n : 1) * sizeof *s->perm);
}

int32_t batch_perm_at(batch_perm *s, int64_t pos)
{
    int64_t e = pos / s->n;
    if (e != s->epoch) {
        for (int64_t i = 0; i < s->n; i++)
            s->perm[i] = (int32_t)i;
        rng r;
        rng_init(&r, s->seed, s->tag ^ (uint64_t)e);
        rng_shuffle_i32(&r, s->perm, s->n);
        s->epoch = e;
    }
    return s->perm[pos % s->n];
}

void batch_perm_free(batch_perm *s)
{
    free(s->perm);
    s->perm = NULL;
}

/* ------------------------------------------------------------------ pairs */

/* uniform in [0, m) except `skip` (0 <= skip < m, m >= 2) */
static int64_t below_except(rng *r, int64_t m, int64_t skip)
{
    int64_t j = (int64_t)rng_below(r, (uint64_t)(m - 1));
    return j < skip ? j : j + 1;
}

void batch_pairs(const batch_pool *p, batch_perm *ep, uint64_t seed, int64_t index, int64_t pos,
                 int64_t B, int32_t *first, int32_t *second)
{
    rng r;
    rng_init(&r, seed, BATCH_TAG_PAIR ^ (uint64_t)index);
    for (int64_t k = 0; k < B; k++) {
        int32_t a = batch_perm_at(ep, pos + k);
        int32_t b = a;
        if (rng_u64(&r) >> 63) { /* the class-specific stream */
            int32_t g = p->item_group[a];
            int64_t m = batch_group_size(p, g);
            if (m > 1)
                b = p->by_group[p->group_start[g] + below_except(&r, m, p->item_rank[a])];
        } else if (p->n > 1) { /* the random stream */
            b = (int32_t)below_except(&r, p->n, a);
        }
        first[k] = a;
        second[k] = b;
    }
}

/* ------------------------------------------------------------------ P classes x K instances */

int64_t batch_per_cycle(const batch_pool *p, int P) { return (p->ngroups + P - 1) / P; }

void batch_classes(const batch_pool *p, batch_perm *cy, int64_t index, int P, rng *r, int32_t *groups)
{
    int64_t M = p->ngroups, per = batch_per_cycle(p, P);
    int64_t c = index / per, j = index % per;
    int64_t start = c * M + j * P;       /* position in the endless class sequence */
    int64_t have = M - j * P < P ? M - j * P : P;
    for (int64_t k = 0; k < have; k++)
        groups[k] = batch_perm_at(cy, start + k);
    if (have == P)
        return;
    /* the short last batch of the cycle: complete it with distinct classes from the earlier
     * positions 0 .. j*P-1 of this cycle's order (partial Fisher-Yates over a copy) */
    int64_t m = j * P;
    int32_t *rest = emalloc((m ? m : 1) * sizeof *rest);
    for (int64_t k = 0; k < m; k++)
        rest[k] = batch_perm_at(cy, c * M + k);
    rng_shuffle_partial(r, rest, sizeof *rest, m, P - have);
    memcpy(groups + have, rest, (size_t)(P - have) * sizeof *rest);
    free(rest);
}

void batch_pick(const batch_pool *p, int32_t g, int K, rng *r, int32_t *out)
{
    int64_t m = batch_group_size(p, g);
    const int32_t *items = p->by_group + p->group_start[g];
    if (m >= K) {
        /* Floyd's sampling of K distinct ranks (O(K^2), K is small), then a shuffle for order */
        for (int64_t j = m - K, k = 0; j < m; j++, k++) {
            int32_t t = (int32_t)rng_below(r, (uint64_t)j + 1);
            for (int64_t q = 0; q < k; q++)
                if (out[q] == t) {
                    t = (int32_t)j;
                    break;
                }
            out[k] = t;
        }
    } else {
        for (int64_t k = 0; k < K; k++)
            out[k] = k < m ? (int32_t)k : (int32_t)rng_below(r, (uint64_t)m);
    }
    rng_shuffle_i32(r, out, K);
    for (int k = 0; k < K; k++)
        out[k] = items[out[k]];
}

void batch_pk(const batch_pool *p, batch_perm *cy, uint64_t seed, int64_t index, int P, int K,
              int32_t *items)
{
    rng r;
    rng_init(&r, seed, BATCH_TAG_PK ^ (uint64_t)index);
    int32_t *groups = emalloc(P * sizeof *groups);
    batch_classes(p, cy, index, P, &r, groups);
    for (int j = 0; j < P; j++)
        batch_pick(p, groups[j], K, &r, items + (int64_t)K * j);
    free(groups);
}

/* ------------------------------------------------------------------ episodes */

void batch_episode(const batch_pool *p, batch_perm *cy, uint64_t seed, int64_t index, int n, int S,
                   int Q, int32_t *groups, int32_t *support, int32_t *query)
{
    if (n < 1 || n > p->ngroups || S < 0 || Q < 0)
        die("batch_episode: %d classes x (%d + %d) items from %d classes", n, S, Q, p->ngroups);
    rng r;
    rng_init(&r, seed, BATCH_TAG_EPISODE ^ (uint64_t)index);
    if (n == p->ngroups)
        for (int j = 0; j < n; j++)
            groups[j] = j;
    else
        batch_classes(p, cy, index, n, &r, groups);
    int32_t *pick = emalloc(((int64_t)S + Q ? (int64_t)S + Q : 1) * sizeof *pick);
    for (int j = 0; j < n; j++) {
        batch_pick(p, groups[j], S + Q, &r, pick);
        memcpy(support + (int64_t)j * S, pick, (size_t)S * sizeof *pick);
        memcpy(query + (int64_t)j * Q, pick + S, (size_t)Q * sizeof *pick);
    }
    free(pick);
}
