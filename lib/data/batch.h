/* batch: drawing training batches from an in-memory pool of labelled items (used by batcher).
 *
 * A pool holds n items of item_bytes each (the pixels of one image) and their int32 classes.
 * Once indexed, it knows the items of each class ("group" g = 0 .. ngroups-1, in increasing
 * class order; items of a group in input order).
 *
 * Determinism: every draw is a pure function of (seed, unit index). Batch i draws from
 * rng_init(&r, seed, TAG ^ i); the permutation of epoch (or class cycle) e comes from
 * rng_init(&r, seed, PERMTAG ^ e). So the same seed gives the same batches, and batch i can be
 * recomputed on its own, whatever was drawn before (a resumed run can start at batch i).
 *
 * Ownership: the pool and a batch_perm own their arrays (free with batch_pool_free and
 * batch_perm_free); the draw functions write item indices into arrays the caller provides.
 *
 *   batch_pool p;
 *   batch_pool_init(&p, 28 * 56);
 *   while (...) batch_pool_add(&p, pixels, cls);
 *   batch_pool_index(&p);                                   // dies on an empty pool
 *   batch_perm ep;
 *   batch_perm_init(&ep, p.n, seed, BATCH_TAG_EPOCH);       // the random stream, epoch by epoch
 *   int32_t a[128], b[128];
 *   batch_pairs(&p, &ep, seed, i, (int64_t)i * 128, 128, a, b);   // pair batch i
 *   ... batch_item(&p, a[0]) is the pixels of the first image ...
 *   int32_t g[70], sup[70 * 5], qry[70 * 15];                // 70 classes: all of them
 *   batch_episode(&p, NULL, seed, i, 70, 5, 15, g, sup, qry); // episode i, 5 shots, 15 queries
 *   batch_perm_free(&ep); batch_pool_free(&p);
 *
 * The three batch shapes:
 *   pairs    (HIB section 2.3, "two streams"): batch_pairs
 *   pk       P classes x K instances (F-statistic, triplet losses): batch_classes + batch_pick
 *   episodes (prototypical networks): batch_episode, n classes x (S support + Q query)
 */
#ifndef HEDGE_BATCH_H
#define HEDGE_BATCH_H
#include <stdint.h>

#include "rng.h"

/* rng stream tags; the unit index (batch, epoch, cycle) is xor-ed in */
#define BATCH_TAG_EPOCH RNG_STREAM('e', 'p', 'o', 'c')   /* epoch permutation of the items */
#define BATCH_TAG_PAIR RNG_STREAM('p', 'a', 'i', 'r')    /* pair batch i */
#define BATCH_TAG_CYCLE RNG_STREAM('c', 'y', 'c', 'l')   /* class order of pk cycle c */
#define BATCH_TAG_PK RNG_STREAM('p', 'k', 'b', 't')      /* pk batch i */
#define BATCH_TAG_EPISODE RNG_STREAM('e', 'p', 'i', 's') /* episode i */

typedef struct {
    int64_t n, cap;
    int64_t item_bytes;
    uint8_t *items;        /* [n][item_bytes] */
    int32_t *cls;          /* [n] class of each item */
    /* the class index, built by batch_pool_index */
    int32_t ngroups;
    int32_t *group_class;  /* [ngroups] class value of group g, increasing */
    int64_t *group_start;  /* [ngroups + 1] group g is by_group[group_start[g] .. group_start[g+1]) */
    int32_t *by_group;     /* [n] item indices, grouped by class */
    int32_t *item_group;   /* [n] group of each item */
    int32_t *item_rank;    /* [n] position of the item inside its group */
} batch_pool;

void batch_pool_init(batch_pool *p, int64_t item_bytes);
/* copies item_bytes bytes from pixels */
void batch_pool_add(batch_pool *p, const void *pixels, int32_t cls);
void batch_pool_index(batch_pool *p);
void batch_pool_free(batch_pool *p);
static inline const uint8_t *batch_item(const batch_pool *p, int32_t i)
{
    return p->items + (int64_t)i * p->item_bytes;
}
static inline int64_t batch_group_size(const batch_pool *p, int32_t g)
{
    return p->group_start[g + 1] - p->group_start[g];
}

/* An endless sequence made of permutations of 0 .. n-1, one per epoch ("cycle"): element at
 * position pos is perm_{pos / n}[pos % n], perm_e shuffled by rng_init(seed, tag ^ e). The
 * current epoch's permutation is cached, so sequential access costs O(n) per epoch. */
typedef struct {
    int64_t n;
    uint64_t seed, tag;
    int64_t epoch;      /* the epoch in perm, -1 if none */
    int32_t *perm;      /* [n] */
} batch_perm;

void batch_perm_init(batch_perm *s, int64_t n, uint64_t seed, uint64_t tag);
int32_t batch_perm_at(batch_perm *s, int64_t pos);
void batch_perm_free(batch_perm *s);

/* Pair batch `index`: B pairs whose first items are the random stream (ep, over p->n items)
 * at positions pos .. pos+B-1. The second item, drawn from rng_init(seed, BATCH_TAG_PAIR ^ index):
 * with probability 1/2 from the class-specific stream, a uniformly random *other* item of the
 * first item's class (the first item itself if it is alone in its class); otherwise a uniformly
 * random item of the whole pool other than the first (the first itself only if n = 1), drawn
 * independently of the epoch permutation. So P(match) = 1/2 + 1/2 * P(two random distinct items
 * share a class): 0.507 for 70 equal classes. first, second: [B] item indices. */
void batch_pairs(const batch_pool *p, batch_perm *ep, uint64_t seed, int64_t index, int64_t pos,
                 int64_t B, int32_t *first, int32_t *second);

/* Number of pk batches per class cycle: ceil(ngroups / P). */
int64_t batch_per_cycle(const batch_pool *p, int P);

/* The P distinct groups of pk batch `index` (P <= p->ngroups). Batches never span two cycles:
 * cycle c = index / per_cycle walks through the class order perm_c (cy over ngroups, tag
 * BATCH_TAG_CYCLE) P classes at a time; its last batch, if short (ngroups % P leftover
 * classes), is completed with distinct classes drawn at random from the rest of that cycle's
 * order. So every class appears at least once per cycle, and every batch has P distinct
 * classes. r is the batch's generator (used only for that completion). groups: [P]. */
void batch_classes(const batch_pool *p, batch_perm *cy, int64_t index, int P, rng *r, int32_t *groups);

/* K items of group g into out[0 .. K-1], in random order: distinct when the class has at least
 * K items; otherwise every item of the class once, then K - size more drawn with replacement. */
void batch_pick(const batch_pool *p, int32_t g, int K, rng *r, int32_t *out);

/* pk batch `index`: P classes (batch_classes) x K items (batch_pick), class-major
 * (items[k + K * j] is instance k of class j), from rng_init(seed, BATCH_TAG_PK ^ index).
 * items: [P * K]. */
void batch_pk(const batch_pool *p, batch_perm *cy, uint64_t seed, int64_t index, int P, int K,
              int32_t *items);

/* Episode `index` for prototypical networks, from rng_init(seed, BATCH_TAG_EPISODE ^ index).
 * Its n classes (1 <= n <= p->ngroups) go to groups[0 .. n-1]:
 *   n == p->ngroups: every group, in increasing class order (the SPE paper's N-digit MNIST
 *                    setting: each episode holds all 70 training classes); cy is not used and
 *                    may be NULL;
 *   n <  p->ngroups: the n distinct groups of batch_classes(p, cy, index, n, ...), so episodes
 *                    walk through class cycles as pk batches do (cy: a batch_perm over
 *                    p->ngroups with tag BATCH_TAG_CYCLE; batch_per_cycle(p, n) episodes a cycle).
 * Then, for each j, batch_pick draws S + Q items of groups[j]: the first S are
 * support[j*S .. j*S+S-1], the last Q are query[j*Q .. j*Q+Q-1]. The S + Q items are distinct
 * when the class has at least S + Q items. A smaller class gives every one of its items once and
 * then repeats (batch_pick): an item may then appear twice in the support, twice in the query,
 * or in both, i.e. a query may be its own support image (batcher warns about such classes).
 * groups: [n], support: [n * S], query: [n * Q] item indices. */
void batch_episode(const batch_pool *p, batch_perm *cy, uint64_t seed, int64_t index, int n, int S,
                   int Q, int32_t *groups, int32_t *support, int32_t *query);

#endif
