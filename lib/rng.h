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
/* standard normal (Box-Muller on two fresh uniforms, no cached value: state stays plain) */
double rng_normal(rng *r);
/* Fisher-Yates shuffle of n ints */
void rng_shuffle_i32(rng *r, int32_t *a, int64_t n);
/* splitmix64 finaliser: a good 64-bit mix, handy for deriving stream tags */
uint64_t rng_mix(uint64_t x);

#endif
