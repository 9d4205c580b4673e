/* rng: reproducible per stream, independent across streams, right moments. */
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "rng.h"

int main(void)
{
    rng a, b, c;
    rng_init(&a, 714, 3);
    rng_init(&b, 714, 3);
    rng_init(&c, 714, 4);
    int same = 1, diff = 0;
    for (int i = 0; i < 100; i++) {
        uint64_t x = rng_u64(&a), y = rng_u64(&b), z = rng_u64(&c);
        same &= x == y;
        diff += x != z;
    }
    CHECK(same);
    CHECK(diff == 100);
    /* uniform mean 1/2 and variance 1/12; normal mean 0 and variance 1; n = 1e6, 5 sigma bands */
    const int n = 1000000;
    double su = 0, su2 = 0, sn = 0, sn2 = 0, sn4 = 0;
    long counts[7] = {0};
    for (int i = 0; i < n; i++) {
        double u = rng_uniform(&a), g = rng_normal(&a);
        su += u;
        su2 += u * u;
        sn += g;
        sn2 += g * g;
        sn4 += g * g * g * g;
        counts[rng_below(&a, 7)]++;
    }
    CHECK_CLOSE(su / n, 0.5, 5 * sqrt(1.0 / 12 / n));
    CHECK_CLOSE(su2 / n - (su / n) * (su / n), 1.0 / 12, 0.001);
    CHECK_CLOSE(sn / n, 0, 5 / sqrt(n));
    CHECK_CLOSE(sn2 / n, 1, 5 * sqrt(2.0 / n));
    CHECK_CLOSE(sn4 / n, 3, 5 * sqrt(96.0 / n));
    for (int k = 0; k < 7; k++)
        CHECK_CLOSE(counts[k] / (double)n, 1.0 / 7, 5 * sqrt(1.0 / 7 * 6 / 7 / n));
    /* rng_normals: the bits of rng_normal and the generator left where rng_normal leaves it; a draw the same bits whatever the block (n = 1,
     * 3, 7: whole blocks of 4 and tails); moments as above */
    {
        enum { M = 11 };
        double x1[M], x3[M], x7[M], ref[M], worst = 0;
        rng g1, g3, g7, gr;
        rng_init(&g1, 714, 9), rng_init(&g3, 714, 9), rng_init(&g7, 714, 9), rng_init(&gr, 714, 9);
        for (int i = 0; i < M; i++) {
            rng_normals(&g1, x1 + i, 1);
            ref[i] = rng_normal(&gr);
        }
        rng_normals(&g3, x3, 3), rng_normals(&g3, x3 + 3, 8);
        rng_normals(&g7, x7, 7), rng_normals(&g7, x7 + 7, 4);
        CHECK(!memcmp(x1, x3, sizeof x1) && !memcmp(x1, x7, sizeof x1));
        CHECK(!memcmp(&g1, &gr, sizeof g1) && !memcmp(&g3, &gr, sizeof g1) && !memcmp(&g7, &gr, sizeof g1));
        for (int i = 0; i < M; i++)
            if (fabs(x1[i] - ref[i]) > worst)
                worst = fabs(x1[i] - ref[i]);
        CHECK(worst == 0);
        static double big[1000000];
        rng_normals(&g1, big, n);
        double s1 = 0, s2 = 0, s4 = 0;
        for (int i = 0; i < n; i++)
            s1 += big[i], s2 += big[i] * big[i], s4 += big[i] * big[i] * big[i] * big[i];
        CHECK_CLOSE(s1 / n, 0, 5 / sqrt(n));
        CHECK_CLOSE(s2 / n, 1, 5 * sqrt(2.0 / n));
        CHECK_CLOSE(s4 / n, 3, 5 * sqrt(96.0 / n));
    }
    /* hedge's own log and cos(2 pi u) against long double libm (logl, cosl of 2 pi u in long
     * double: 64 bits on x86-64, 113 on aarch64), in units of the last place of the double
     * value: 10^6 arguments each (log over (0, 1] as Box-Muller draws it, and 2^-40 .. 1 on a log
     * scale; cos over [0, 1) and near the quadrants' edges, where cos is near 0 and a double's
     * 2 pi u would be off by more than cos itself); at most 2.5 ulp (2.14 measured: the one rounding of 2 pi r, then
     * the series'). And the bits themselves, the
     * same on every libc, CPU and build (simd.h): three draws of seed 714, stream 1, printed by
     * this test's first run (native build, glibc 2.36); a change of these is a change of every
     * training's bytes (formats/checkpoint.md). */
    {
        rng g;
        rng_init(&g, 714, 11);
        double worst_log = 0, worst_cos = 0;
        for (int i = 0; i < 1000000; i++) {
            double x = i % 2 ? 1.0 - rng_uniform(&g) : exp2(-40.0 * rng_uniform(&g));
            long double want = logl(x);
            double got = rng_log(x), w = (double)want;
            double ulp = w ? fabs(nextafter(w, 2 * w) - w) : 0x1p-1074;
            if (fabsl(got - want) / ulp > worst_log)
                worst_log = fabsl(got - want) / ulp;
            double u = i % 3 ? rng_uniform(&g) : (i % 4) * 0.25 + (rng_uniform(&g) - 0.5) * 0x1p-30;
            if (u < 0 || u >= 1)
                u = 0.5;
            /* the reference reduced exactly too (u - q/4 is exact), else near cos's zeros the long
             * double's 2 pi u would be the larger error: cos(2 pi u) = cos, -sin, -cos, sin of
             * 2 pi r for q = 0, 1, 2, 3 */
            int q = (int)floor(4 * u + 0.5);
            long double xr = 2 * 3.141592653589793238462643383279502884L * (u - q * 0.25);
            want = q % 2 ? sinl(xr) : cosl(xr);
            want = (q % 4 == 1 || q % 4 == 2) ? -want : want;
            got = rng_cos2pi(u), w = (double)want;
            ulp = fabs(nextafter(w, 2 * w) - w);
            if (fabsl(got - want) / ulp > worst_cos)
                worst_cos = fabsl(got - want) / ulp;
        }
        printf("rng_log within %.2f ulp, rng_cos2pi within %.2f\n", worst_log, worst_cos);
        CHECK(worst_log <= 2.5 && worst_cos <= 2.5);
        CHECK(rng_log(1.0) == 0 && rng_log(0.5) == -M_LN2 && rng_cos2pi(0) == 1 && rng_cos2pi(0.5) == -1);
        double z[3];
        rng_init(&g, 714, 1);
        rng_normals(&g, z, 3);
        printf("seed 714 stream 1 normals: %a %a %a\n", z[0], z[1], z[2]);
        CHECK(z[0] == -0x1.326d212c556b1p-1 && z[1] == -0x1.304fe63a68056p+0 && z[2] == 0x1.84e2065a6df1fp-1);
    }
    /* shuffle is a permutation */
    int32_t p[50], seen[50] = {0};
    for (int i = 0; i < 50; i++)
        p[i] = i;
    rng_shuffle_i32(&a, p, 50);
    int perm = 1;
    for (int i = 0; i < 50; i++)
        perm &= !seen[p[i]]++;
    CHECK(perm);

    /* partial shuffle. With rng_init(714, 7) the first draws are rng_below(10) = 3,
     * rng_below(9) = 2, rng_below(8) = 6, rng_below(7) = 5 (checked below). By hand, from
     * 0..9: i=0 swaps a[0], a[3] -> 3 1 2 0 4 5 6 7 8 9; i=1 swaps a[1], a[1+2] -> 3 0 2 1 ...;
     * i=2 swaps a[2], a[2+6] -> 3 0 8 1 4 5 6 7 2 9; i=3 swaps a[3], a[3+5] -> 3 0 8 2 4 5 6 7 1 9. */
    rng_init(&a, 714, 7);
    const uint64_t want_draw[4] = {3, 2, 6, 5};
    for (int i = 0; i < 4; i++)
        CHECK(rng_below(&a, (uint64_t)(10 - i)) == want_draw[i]);
    const int64_t want[10] = {3, 0, 8, 2, 4, 5, 6, 7, 1, 9};
    int64_t q64[10];
    int32_t q32[10];
    struct { char c[3]; } q3[10]; /* the byte-wise path: any element size */
    for (int i = 0; i < 10; i++)
        q64[i] = q32[i] = q3[i].c[0] = (char)i;
    rng_init(&a, 714, 7);
    rng_shuffle_partial(&a, q64, sizeof *q64, 10, 4);
    rng_init(&b, 714, 7);
    rng_shuffle_partial(&b, q32, sizeof *q32, 10, 4);
    rng_init(&c, 714, 7);
    rng_shuffle_partial(&c, q3, sizeof *q3, 10, 4);
    for (int i = 0; i < 10; i++) {
        CHECK(q64[i] == want[i]);
        CHECK(q32[i] == want[i]);
        CHECK(q3[i].c[0] == want[i]);
    }
    /* exactly m draws: the generators are where four rng_below calls leave them */
    rng_init(&b, 714, 7);
    for (int i = 0; i < 4; i++)
        rng_below(&b, (uint64_t)(10 - i));
    CHECK(rng_u64(&a) == rng_u64(&b));
    /* m = 0 draws nothing; m = n is a permutation */
    rng_init(&a, 714, 8);
    rng_init(&b, 714, 8);
    rng_shuffle_partial(&a, q64, sizeof *q64, 10, 0);
    CHECK(rng_u64(&a) == rng_u64(&b));
    int64_t big[50];
    int seen2[50] = {0};
    for (int i = 0; i < 50; i++)
        big[i] = i;
    rng_shuffle_partial(&a, big, sizeof *big, 50, 50);
    perm = 1;
    for (int i = 0; i < 50; i++)
        perm &= !seen2[big[i]]++;
    CHECK(perm);
    return check_done("test_rng");
}
