/* tensor: floats_first_nonfinite (every input float of train and batcher passes it, 64 at a time
 * in vector code) against its definition, the first i with !isfinite(x[i]): each length 0..300,
 * a NaN, +inf or -inf at every position, two of them (the first wins), and the finite extremes
 * (FLT_MAX, -FLT_MAX, the smallest subnormal, -0), which are no such value */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "check.h"
#include "tensor.h"

static int64_t plain(const float *x, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        if (!isfinite(x[i]))
            return i;
    return -1;
}

int main(void)
{
    enum { MAX = 300 };
    float x[MAX + 1];
    const float bad[3] = {NAN, INFINITY, -INFINITY};
    const float edge[4] = {FLT_MAX, -FLT_MAX, 0x1p-149f, -0.0f};
    int wrong = 0, cases = 0;
    for (int n = 0; n <= MAX; n++) {
        for (int i = 0; i < n; i++)
            x[i] = edge[i % 4] * (i % 8 < 4 ? 1.0f : 0.5f);
        wrong += floats_first_nonfinite(x, n) != -1, cases++;
        for (int p = 0; p < n; p++)
            for (int b = 0; b < 3; b++) {
                float keep = x[p];
                x[p] = bad[b];
                wrong += floats_first_nonfinite(x, n) != p, cases++;
                if (p + 37 < n) { /* a second one further on */
                    float keep2 = x[p + 37];
                    x[p + 37] = bad[(b + 1) % 3];
                    wrong += floats_first_nonfinite(x, n) != p, cases++;
                    x[p + 37] = keep2;
                }
                x[p] = keep;
            }
    }
    CHECK(wrong == 0);
    /* random data with rare NaNs against the plain loop */
    srand(7);
    static float y[100000];
    for (int r = 0; r < 50; r++) {
        for (int i = 0; i < 100000; i++)
            y[i] = (float)rand() / RAND_MAX - 0.5f;
        int at = rand() % 120000; /* sometimes none */
        if (at < 100000)
            y[at] = NAN;
        CHECK(floats_first_nonfinite(y, 100000) == plain(y, 100000));
    }
    printf("floats_first_nonfinite: %d cases of lengths 0..%d, all as the plain loop\n", cases, MAX);
    return check_done("test_tensor");
}
