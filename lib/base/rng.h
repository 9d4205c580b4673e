/* rng: seeded, splittable random numbers (xoshiro256** seeded through splitmix64).
 *
 * Results never depend on thread count because work is never drawn from a shared generator:
 * each independent unit of work (an image, a batch, a sample set) gets its own generator,
 * rng_init(&r, seed, stream), where stream names the unit (its index, a hash of a purpose
 * and an index, ...). Two generators with the same (seed, stream) give the same numbers.
 *
 *   rng r;
 *   rng_init(&r, 714, RNG_STREAM('o','c','c',0) ^ image_index);
 *   int L = rng_below(&r, 29);           // uniform integer in [0, 29)
 *   double e = rng_normal(&r);           // N(0, 1)
 *
 * The state is plain data: copy it, save it in a checkpoint, restore it.
 */
#ifndef HEDGE_RNG_H
#define HEDGE_RNG_H
#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint64_t s[4];
} rng;

/* a 64-bit stream tag from four characters and a number, e.g. RNG_STREAM('p','a','i','r', 3) */
#define RNG_STREAM(a, b, c, d) (((uint64_t)(a) << 56) | ((uint64_t)(b) << 48) | ((uint64_t)(c) << 40) | ((uint64_t)(d) << 32))

void rng_init(rng *r, uint64_t seed, uint64_t stream);
uint64_t rng_u64(rng *r);
/* uniform in [0, 1) with 53 random bits */
double rng_uniform(rng *r);
/* uniform float in [0, 1) with 24 random bits */
float rng_uniformf(rng *r);
/* unbiased uniform integer in [0, n), n > 0 */
uint64_t rng_below(rng *r, uint64_t n);
/* standard normal (Box-Muller on two fresh uniforms, no cached value: state stays plain), its log
 * and cos hedge's own (rng_log, rng_cos2pi): the same bits on any libc, CPU and build */
double rng_normal(rng *r);
/* n standard normals: the same bits as n calls of rng_normal, 4 at a time */
void rng_normals(rng *r, double *out, size_t n);
/* the two functions under them: log x for normal x > 0 and cos(2 pi u) for u in [0, 1), each
 * within 2.5 ulp (test_rng) */
double rng_log(double x);
double rng_cos2pi(double u);
/* Fisher-Yates shuffle of n ints (backward: i = n-1 .. 1 swaps a[i] with a[rng_below(i + 1)]) */
void rng_shuffle_i32(rng *r, int32_t *a, int64_t n);
/* partial Fisher-Yates, forward: the first m of the n elements of a (each `size` bytes, 0 <= m
 * <= n) become a uniform random m-subset of them in draw order. Step i = 0 .. m-1 swaps a[i]
 * with a[i + rng_below(n - i)], so m draws, and the rest of a keeps the elements not drawn (call
 * it again on the same array to go on drawing from a fresh permutation of them all). */
void rng_shuffle_partial(rng *r, void *a, size_t size, int64_t n, int64_t m);
/* splitmix64 finaliser: a good 64-bit mix, handy for deriving stream tags */
uint64_t rng_mix(uint64_t x);

#endif
