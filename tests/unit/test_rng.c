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
    /* shuffle is a permutation */
    int32_t p[50], seen[50] = {0};
    for (int i = 0; i < 50; i++)
        p[i] = i;
    rng_shuffle_i32(&a, p, 50);
    int perm = 1;
    for (int i = 0; i < 50; i++)
        perm &= !seen[p[i]]++;
    CHECK(perm);
    return check_done("test_rng");
}
