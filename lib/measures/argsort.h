/* argsort: the orders the metrics sort items by: ascending and stable, ascending with equal keys
 * in a seeded random order (retrieve), or by a tie key hashed from the item's identity (ktau);
 * and the keyed sort under them all (metrics_sorted: AP, the AUC's midranks, AURC).
 * The names keep the metrics_ prefix of lib/metrics.c, which this module was split from.
 *
 * Every function works on caller-owned arrays and allocates only scratch it frees before
 * returning (but metrics_sorted, whose result the caller frees). Definitions and tie rules (each
 * is also the documented behaviour of the programs):
 *
 *   argsort  ascending by key, equal keys keep their input order (stable).
 *   argsort_random  ascending by key, equal keys in a seeded random order (a random permutation
 *            of the input positions drawn from the seed): the order of the input never matters,
 *            in distribution (retrieve's random cleaning).
 *   argsort_ties  ascending by key, equal keys by a tie key attached to the item (metrics_tie_key:
 *            a hash of the item's identity, e.g. its id, and a seed), equal in both by further
 *            columns of the item's values, then by input position. When the tie keys and the
 *            columns are all an item carries into the result, items equal in every one of them
 *            are interchangeable, so the result does not depend on the input order at all, not
 *            only in distribution (ktau's uncertainty bins).
 *   tie key  h = mix(seed ^ TIES), then h = mix(h ^ v) for each identity value v in turn (as a
 *            64-bit integer: an integral double in int64 range is converted, any other value
 *            enters by its bit pattern); mix is rng_mix (splitmix64's finaliser) and TIES is
 *            RNG_STREAM('t', 'i', 'e', 's'). A hash, not a position: among equal keys the order
 *            is a random permutation drawn from the seed, the same whatever the record order.
 *
 *   int64_t idx[n]; metrics_argsort(key, n, idx);                // key[idx[0]] <= key[idx[1]] ...
 */
#ifndef HEDGE_ARGSORT_H
#define HEDGE_ARGSORT_H
#include <stdint.h>

/* idx[0..n) such that key[idx[0]] <= key[idx[1]] <= ...; equal keys in input order */
void metrics_argsort(const double *key, int64_t n, int64_t *idx);
/* the same, but equal keys in a random order drawn from seed (the same seed, the same order) */
void metrics_argsort_random(const double *key, int64_t n, uint64_t seed, int64_t *idx);
/* the tie key of an item from its nident identity values (e.g. {id}; fewshot {episode, id}) */
uint64_t metrics_tie_key(uint64_t seed, const double *ident, int nident);
/* ascending by key; equal keys by tie[] ascending; equal in both by more[0][i], more[1][i], ...
 * ascending (nmore columns, NaN last); then by input position */
void metrics_argsort_ties(const double *key, const uint64_t *tie, int nmore, const double *const *more, int64_t n,
                          int64_t *idx);

/* a value and its input position; metrics_sorted returns them ascending by key, NaN last, equal
 * keys by position (stable) */
typedef struct {
    double key;
    int64_t i;
} metrics_keyed;
/* s[t].key = sign x v[s[t].i], ascending (sign -1: descending by the value), NaNs after every
 * number; the caller frees s */
metrics_keyed *metrics_sorted(const double *v, int64_t n, double sign);
/* the end of the block of equal keys that starts at s[a] (a < n): the first b > a whose key
 * differs (NaNs are one block, as the sort puts them); every walk over tie blocks uses it, so
 * that none can stand still on a key that equals nothing, not even itself */
static inline int64_t metrics_block_end(const metrics_keyed *s, int64_t a, int64_t n)
{
    int64_t b = a + 1;
    while (b < n && (s[b].key == s[a].key || (s[b].key != s[b].key && s[a].key != s[a].key)))
        b++;
    return b;
}

#endif
