#include "rng.h"

#include <math.h>
#include <string.h>

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

/* Box-Muller's log and cos, hedge's own: the same bits from the same seed with any libc, on any
 * CPU and in the native and the portable build (simd.h). Plain additions and multiplications
 * (C11 mode: GCC contracts none into FMA; the pragma tells clang the same) on GCC's generic
 * vectors, 4 doubles at a time: ymm registers on AVX2, two xmm on x86-64's baseline, NEON on
 * aarch64, the same operations in the same order everywhere. Both within 2.5 ulp (test_rng
 * measures them over 10^6 arguments against long double libm). */
#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif
typedef double v4d __attribute__((vector_size(32)));
typedef int64_t v4l __attribute__((vector_size(32)));
#define V4(x) ((v4d){0} + (x))
#define L4(x) ((v4l){0} + (x))
static inline v4l bits_of(v4d x) { v4l b; memcpy(&b, &x, sizeof b); return b; }
static inline v4d from_bits(v4l b) { v4d x; memcpy(&x, &b, sizeof x); return x; }
static const double ROUNDER = 0x1.8p52; /* x + ROUNDER - ROUNDER rounds |x| < 2^51 to an integer */

/* log x for normal x > 0: x = m 2^e with m in [sqrt(1/2), sqrt(2)); log m = 2 atanh(s),
 * s = (m - 1) / (m + 1), |s| <= 0.1716, odd series to s^21 (its tail < 2^-57 of the sum) */
static v4d log4(v4d x)
{
    v4l b = bits_of(x);
    v4l e = (b >> 52) - 1023;
    v4d m = from_bits((b & L4(0x000fffffffffffffLL)) | L4(0x3ff0000000000000LL));
    v4l big = m > V4(1.4142135623730951); /* -1 where m >= sqrt 2: halve it, one more in e */
    m = from_bits((bits_of(m) & ~big) | (bits_of(m * V4(0.5)) & big));
    e -= big;
    v4d ed = from_bits(bits_of(V4(ROUNDER)) + e) - V4(ROUNDER); /* e exactly, as a double */
    v4d f = m - V4(1.0), s = f / (m + V4(1.0)), s2 = s * s;
    v4d p = V4(1.0 / 21);
    static const double inv[] = {1.0 / 19, 1.0 / 17, 1.0 / 15, 1.0 / 13, 1.0 / 11, 1.0 / 9, 1.0 / 7, 1.0 / 5, 1.0 / 3};
    for (int i = 0; i < 9; i++)
        p = p * s2 + V4(inv[i]);
    v4d t = V4(2.0) * s; /* log m = t + t s2 p */
    const double ln2_hi = 0x1.62e42fee00000p-1, ln2_lo = 0x1.a39ef35793c76p-33; /* ln2_hi e exact */
    return ed * V4(ln2_hi) + (t + (t * s2 * p + ed * V4(ln2_lo)));
}

/* cos(2 pi u) for u in [0, 1): u = q/4 + r exactly (q = round(4u), |r| <= 1/8), x = 2 pi r,
 * then cos x, -sin x, -cos x or sin x by q mod 4, each by Taylor's series (to x^16, x^17) */
static v4d cos2pi4(v4d u)
{
    v4d qd = (V4(4.0) * u + V4(ROUNDER)) - V4(ROUNDER);
    v4l q = bits_of(qd + V4(ROUNDER)) & L4(3);
    v4d x = (u - qd * V4(0.25)) * V4(6.283185307179586);
    v4d x2 = x * x, c = V4(1.0 / 20922789888000.0), sn = V4(1.0 / 355687428096000.0);
    static const double cc[] = {-1.0 / 87178291200.0, 1.0 / 479001600.0, -1.0 / 3628800.0, 1.0 / 40320.0,
                                -1.0 / 720.0, 1.0 / 24.0, -1.0 / 2.0, 1.0};
    static const double sc[] = {-1.0 / 1307674368000.0, 1.0 / 6227020800.0, -1.0 / 39916800.0, 1.0 / 362880.0,
                                -1.0 / 5040.0, 1.0 / 120.0, -1.0 / 6.0, 1.0};
    for (int i = 0; i < 8; i++) {
        c = c * x2 + V4(cc[i]);
        sn = sn * x2 + V4(sc[i]);
    }
    sn = sn * x;
    v4l odd = -(q & L4(1)); /* -1 where q is 1 or 3: the sine */
    v4l neg = ((q + L4(1)) & L4(2)) << 62; /* the sign bit where q is 1 or 2 */
    return from_bits(((bits_of(sn) & odd) | (bits_of(c) & ~odd)) ^ neg);
}

/* n normals, n <= NORMALS_BLOCK: the uniforms first (the generator is serial), then log and
 * cos 4 lanes at a time over the block, whose iterations are independent (their long chains
 * overlap); lanes past n: log 1 and cos 0 */
enum { NORMALS_BLOCK = 64 };
static void normals_block(rng *r, double *out, size_t n)
{
    double u1[NORMALS_BLOCK], u2[NORMALS_BLOCK];
    size_t j = 0;
    for (; j < n; j++) {
        u1[j] = 1.0 - rng_uniform(r); /* (0, 1] */
        u2[j] = rng_uniform(r);
    }
    for (; j % 4; j++)
        u1[j] = 1.0, u2[j] = 0.0;
    for (size_t i = 0; i < n; i += 4) {
        v4d a, b;
        memcpy(&a, u1 + i, sizeof a);
        memcpy(&b, u2 + i, sizeof b);
        v4d l = V4(-2.0) * log4(a), c = cos2pi4(b);
        for (size_t k = 0; k < 4 && i + k < n; k++)
            out[i + k] = sqrt(l[k]) * c[k];
    }
}

double rng_normal(rng *r)
{
    double z;
    normals_block(r, &z, 1);
    return z;
}

void rng_normals(rng *r, double *out, size_t n)
{
    for (size_t i = 0; i < n; i += NORMALS_BLOCK)
        normals_block(r, out + i, n - i < NORMALS_BLOCK ? n - i : NORMALS_BLOCK);
}

double rng_log(double x) { return log4(V4(x))[0]; }
double rng_cos2pi(double u) { return cos2pi4(V4(u))[0]; }

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
