/* pairs: which image pairs of an embedding set pairscore scores (verification). Three sources:
 *   pairs_random     pairs within one set S: even pairs p match (two images of one class, never
 *                    an image with itself), odd ones do not (two classes)
 *   pairs_cross      the first image from S, the second from G (-g): even pairs match (same class,
 *                    another id: never an image with its twin), odd ones do not
 *   pairs_read_file  the pairs a text file names by id, two ids a line ('#' starts a comment)
 * A random pair p comes from its own generator (rng stream RNG_STREAM('p','a','i','r') ^ p), so
 * the set depends only on (seed, p, the classes and ids of the records), never on how many pairs
 * are drawn or in which order they are scored. What cannot be drawn or read dies with one line
 * ("no class has two images: no matching pair can be drawn", "pairs file line 3: expected two
 * ids").
 *
 * Ownership: each returns an array of pairs (indices into S, and into G for pairs_cross) that the
 * caller frees.
 *
 *   pairs_ij *P = pairs_random(S, 10000, seed);    // P[p].i, P[p].j index S
 *   ...; free(P);
 */
#ifndef HEDGE_PAIRS_H
#define HEDGE_PAIRS_H
#include <stdint.h>

#include "match.h"

typedef struct {
    int64_t i, j;
} pairs_ij;

/* npairs pairs of S (needs S->cls): S must have a class of two images, and for npairs > 1 two
 * classes */
pairs_ij *pairs_random(const match_set *S, long npairs, uint64_t seed);
/* npairs pairs from S to G (both with classes; G's ids distinct) */
pairs_ij *pairs_cross(const match_set *S, const match_set *G, long npairs, uint64_t seed);
/* the pairs of the file at path, by the ids of S (distinct); *npairs gets their number (>= 1) */
pairs_ij *pairs_read_file(const match_set *S, const char *path, long *npairs);
#endif
