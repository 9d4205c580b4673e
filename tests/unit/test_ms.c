/* ms: the Multi-Similarity loss (lib/training/loss_ms.c) against the paper's Eqs. 10 and 11 by hand
 * on a batch of four unit vectors whose cosines are exact (the mining keeps some pairs and drops
 * others), with every pair (epsilon 2) and with the authors' lambda 0.5; its settings table;
 * the batch accuracy; invariance to the embeddings' scale; central finite differences of the
 * gradient on random P x K batches, far from any mining boundary; misuse. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "loss.h"
#include "rng.h"

static const loss_kind *L;

static double eval(const loss_config *lc, const loss_input *in, float *dmu, loss_stats *st)
{
    return L->forward_backward(lc, in, NULL, NULL, dmu, NULL, NULL, st);
}

static loss_config config(double eps, double lambda)
{
    loss_config lc = loss_config_new(L);
    loss_set(&lc, L, "ms-epsilon", eps);
    loss_set(&lc, L, "ms-lambda", lambda);
    return lc;
}

/* the smallest distance of a cosine to a mining boundary of its anchor (S + eps against the
 * smallest positive, S - eps against the largest negative) */
static double mining_gap(const float *mu, const int32_t *cls, int n, int D, double eps)
{
    double gap = INFINITY, S[64][64];
    for (int i = 0; i < n; i++)
        for (int k = 0; k < n; k++) {
            double s = 0, a = 0, b = 0;
            for (int d = 0; d < D; d++)
                s += (double)mu[i * D + d] * mu[k * D + d], a += (double)mu[i * D + d] * mu[i * D + d],
                    b += (double)mu[k * D + d] * mu[k * D + d];
            S[i][k] = s / sqrt(a * b);
        }
    for (int i = 0; i < n; i++) {
        double minpos = INFINITY, maxneg = -INFINITY;
        for (int k = 0; k < n; k++)
            if (k != i)
                cls[k] == cls[i] ? (minpos = fmin(minpos, S[i][k])) : (maxneg = fmax(maxneg, S[i][k]));
        for (int k = 0; k < n; k++)
            if (k != i)
                gap = fmin(gap, cls[k] == cls[i] ? fabs(S[i][k] - eps - maxneg) : fabs(S[i][k] + eps - minpos));
    }
    return gap;
}

int main(void)
{
    L = loss_find("ms");
    CHECK(L != NULL);
    if (!L)
        return check_done("test_ms");
    CHECK(L->batches == LOSS_GROUPS && !L->needs_var && L->max_C == 1 && L->nparams == 0);
    /* the paper's settings (section 5.1) are the defaults */
    loss_config d = loss_config_new(L);
    CHECK(loss_value(&d, L, "ms-alpha") == 2 && loss_value(&d, L, "ms-beta") == 50);
    CHECK(loss_value(&d, L, "ms-lambda") == 1 && loss_value(&d, L, "ms-epsilon") == 0.1);

    /* u0 = (1, 0), u1 = (0.6, 0.8), u2 = (0, 1), u3 = (-0.8, 0.6); classes A A B B. Cosines:
     * S01 = 0.6, S02 = 0, S03 = -0.8, S12 = 0.8, S13 = 0, S23 = 0.6.
     * epsilon 0.1: anchor 0 (min positive 0.6, max negative 0) keeps nothing (0 + 0.1 < 0.6, and
     * 0.6 - 0.1 > 0); anchor 1 (0.6; 0.8) keeps its positive 0 and its negative 2; anchor 2 the
     * same (positive 3, negative 1); anchor 3 nothing. L_1 = L_2 = 1/2 log(1 + e^{-2 (0.6 - 1)})
     * + 1/50 log(1 + e^{50 (0.8 - 1)}), the loss (L_1 + L_2) / 4. Scaled by 3 and 0.5: the same. */
    float mu[8] = {1, 0, 0.6f * 3, 0.8f * 3, 0, 0.5f, -0.8f, 0.6f};
    int32_t cls[4] = {7, 7, 2, 2};
    loss_input in = {.n = 4, .C = 1, .D = 2, .mu = mu, .cls = cls};
    loss_config lc = config(0.1, 1);
    loss_stats st;
    double l1 = 0.5 * log1p(exp(0.8)) + 0.02 * log1p(exp(-10));
    CHECK_CLOSE(eval(&lc, &in, NULL, &st), 2 * l1 / 4, 1e-7);
    CHECK_CLOSE(st.nll, 2 * l1 / 4, 1e-7);
    CHECK_CLOSE(st.acc, 0.5, 0); /* nearest: 0 -> 1 right, 1 -> 2 wrong, 2 -> 1 wrong, 3 -> 2 right */
    /* epsilon 2: every pair. Anchor 0: positive 0.6, negatives 0 and -0.8; 1: 0.6; 0.8, 0;
     * 2: 0.6; 0, 0.8; 3: 0.6; -0.8, 0 */
    lc = config(2, 1);
    double pos = 0.5 * log1p(exp(0.8));
    double n0 = 0.02 * log1p(exp(-50) + exp(-90)), n1 = 0.02 * log1p(exp(-10) + exp(-50));
    CHECK_CLOSE(eval(&lc, &in, NULL, NULL), (4 * pos + 2 * n0 + 2 * n1) / 4, 1e-7);
    /* the authors' lambda 0.5, epsilon 2: positive 1/2 log(1 + e^{-2 (0.6 - 0.5)}) */
    lc = config(2, 0.5);
    pos = 0.5 * log1p(exp(-0.2));
    n0 = 0.02 * log1p(exp(50 * -0.5) + exp(50 * -1.3)), n1 = 0.02 * log1p(exp(50 * 0.3) + exp(50 * -0.5));
    CHECK_CLOSE(eval(&lc, &in, NULL, NULL), (4 * pos + 2 * n0 + 2 * n1) / 4, 1e-6);
    /* alpha and beta by the table's names */
    lc = config(2, 0.5);
    loss_set(&lc, L, "ms-alpha", 1);
    loss_set(&lc, L, "ms-beta", 10);
    pos = log1p(exp(-0.1));
    n0 = 0.1 * log1p(exp(10 * -0.5) + exp(10 * -1.3)), n1 = 0.1 * log1p(exp(10 * 0.3) + exp(10 * -0.5));
    CHECK_CLOSE(eval(&lc, &in, NULL, NULL), (4 * pos + 2 * n0 + 2 * n1) / 4, 1e-6);

    /* gradients against central differences, P x K = 4 x 2, D = 5; epsilon 0.1 (batches whose
     * cosines lie 0.01 or more from every mining boundary: a step of 1e-3 moves a cosine by less
     * than 1e-3) and 2, lambda 1 and 0.5 */
    rng r;
    int checked = 0;
    double worst = 0;
    for (int seed = 1; seed < 400 && checked < 8; seed++) {
        enum { N = 8, DD = 5 };
        float x[N * DD], g[N * DD];
        int32_t c[N];
        rng_init(&r, 99, seed);
        for (int i = 0; i < N; i++) {
            c[i] = 10 + i / 2;
            for (int k = 0; k < DD; k++)
                x[i * DD + k] = (float)(rng_normal(&r) + (k == i / 2 ? 1.5 : 0));
        }
        double eps = checked % 2 ? 2 : 0.1;
        if (eps < 1 && mining_gap(x, c, N, DD, eps) < 0.01)
            continue;
        loss_input b = {.n = N, .C = 1, .D = DD, .mu = x, .cls = c};
        lc = config(eps, checked % 4 < 2 ? 1 : 0.5);
        eval(&lc, &b, g, NULL);
        for (int j = 0; j < N * DD; j++) {
            float keep = x[j];
            double h = 1e-3;
            x[j] = (float)(keep + h);
            double p = eval(&lc, &b, NULL, NULL);
            x[j] = (float)(keep - h);
            double q = eval(&lc, &b, NULL, NULL);
            x[j] = keep;
            double fd = (p - q) / (2 * h), e = fabs(fd - g[j]) / (1e-3 + fabs(fd));
            worst = fmax(worst, e);
            CHECK(e < 2e-3);
        }
        checked++;
    }
    CHECK(checked == 8);
    printf("gradcheck ms: %d batches, worst relative error %.2g\n", checked, worst);

    /* misuse: two components, a variance, no classes */
    lc = loss_config_new(L);
    float var[8] = {1, 1, 1, 1, 1, 1, 1, 1};
    loss_input bad = in;
    bad.C = 2, bad.D = 1;
    if (check_child()) {
        eval(&lc, &bad, NULL, NULL);
        _exit(0);
    }
    CHECK(check_died());
    bad = in, bad.var = var;
    if (check_child()) {
        eval(&lc, &bad, NULL, NULL);
        _exit(0);
    }
    CHECK(check_died());
    bad = in, bad.cls = NULL;
    if (check_child()) {
        eval(&lc, &bad, NULL, NULL);
        _exit(0);
    }
    CHECK(check_died());
    return check_done("test_ms");
}
