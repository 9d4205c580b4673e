#include "rng.h"

#include <immintrin.h>
#include <math.h>

uint64_t rng_mix(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

void rng_init(rng *r, uint64_t seed, uint64_t stream)
{
    uint64_t x = rng_mix(seed) ^ rng_mix(stream ^ 0x6a09e667f3bcc908ULL);
    for (int i = 0; i < 4; i++) {
        x += 0x9e3779b97f4a7c15ULL;
        r->s[i] = rng_mix(x);
    }
    if (!(r->s[0] | r->s[1] | r->s[2] | r->s[3]))
        r->s[0] = 1;
}

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t rng_u64(rng *r)
{
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

double rng_uniform(rng *r) { return (rng_u64(r) >> 11) * 0x1.0p-53; }
float rng_uniformf(rng *r) { return (rng_u64(r) >> 40) * 0x1.0p-24f; }

uint64_t rng_below(rng *r, uint64_t n)
{
    /* Lemire's multiply-and-reject */
    uint64_t x = rng_u64(r);
    __uint128_t m = (__uint128_t)x * n;
    uint64_t l = (uint64_t)m;
    if (l < n) {
        uint64_t t = -n % n;
        while (l < t) {
            x = rng_u64(r);
            m = (__uint128_t)x * n;
            l = (uint64_t)m;
        }
    }
    return (uint64_t)(m >> 64);
}

double rng_normal(rng *r)
{
    double u1 = 1.0 - rng_uniform(r); /* (0, 1] */
    double u2 = rng_uniform(r);
    return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}

/* glibc's libmvec, 4 doubles in AVX2 registers (the vector ABI's names; libm.so links it) */
__m256d _ZGVdN4v_log(__m256d x);
__m256d _ZGVdN4v_cos(__m256d x);

void rng_normals(rng *r, double *out, size_t n)
{
    for (size_t i = 0; i < n; i += 4) {
        size_t k = n - i < 4 ? n - i : 4;
        double u1[4] = {1, 1, 1, 1}, u2[4] = {0, 0, 0, 0}, z[4]; /* lanes past k: log 1, cos 0 */
        for (size_t j = 0; j < k; j++) {
            u1[j] = 1.0 - rng_uniform(r); /* (0, 1] */
            u2[j] = rng_uniform(r);
        }
        __m256d l = _ZGVdN4v_log(_mm256_loadu_pd(u1));
        __m256d c = _ZGVdN4v_cos(_mm256_mul_pd(_mm256_set1_pd(2.0 * M_PI), _mm256_loadu_pd(u2)));
        _mm256_storeu_pd(z, _mm256_mul_pd(_mm256_sqrt_pd(_mm256_mul_pd(_mm256_set1_pd(-2.0), l)), c));
        for (size_t j = 0; j < k; j++)
            out[i + j] = z[j];
    }
}

void rng_shuffle_i32(rng *r, int32_t *a, int64_t n)
{
    for (int64_t i = n - 1; i > 0; i--) {
        int64_t j = (int64_t)rng_below(r, (uint64_t)i + 1);
        int32_t t = a[i];
        a[i] = a[j];
        a[j] = t;
    }
}

void rng_shuffle_partial(rng *r, void *a, size_t size, int64_t n, int64_t m)
{
    unsigned char *b = a;
    for (int64_t i = 0; i < m; i++) {
        int64_t j = i + (int64_t)rng_below(r, (uint64_t)(n - i));
        if (size == sizeof(int64_t)) {
            int64_t t = ((int64_t *)a)[i];
            ((int64_t *)a)[i] = ((int64_t *)a)[j];
            ((int64_t *)a)[j] = t;
        } else if (size == sizeof(int32_t)) {
            int32_t t = ((int32_t *)a)[i];
            ((int32_t *)a)[i] = ((int32_t *)a)[j];
            ((int32_t *)a)[j] = t;
        } else
            for (size_t k = 0; k < size; k++) {
                unsigned char t = b[i * size + k];
                b[i * size + k] = b[j * size + k];
                b[j * size + k] = t;
            }
    }
}
