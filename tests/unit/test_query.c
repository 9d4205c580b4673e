/* the query tower of the two-tower models (lib/network/model_query.c): the digits of a class, the
 * forward pass on hand-set weights, gradients of every query parameter against central
 * differences (in double: the tower is small), the image network's initial weights unchanged
 * by adding the tower, and the parameter layout. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "model.h"
#include "model_query.h"
#include "rng.h"

static float *P(model *m, const char *name) { return m->params + model_view_find(m, name)->offset; }

static void test_digits(void)
{
    uint8_t d[3];
    model_query_digits(2, 7, d);
    CHECK(d[0] == 0 && d[1] == 7);
    model_query_digits(2, 94, d);
    CHECK(d[0] == 9 && d[1] == 4);
    model_query_digits(3, 305, d);
    CHECK(d[0] == 3 && d[1] == 0 && d[2] == 5);
}

/* N = 1, D = 1, hand weights: emb[1][digit][k] = digit for k = 0, 0 otherwise; w1 row 0 picks
 * e[0] with weight 2, row 1 with weight -1, bias -3 on row 0; w2 = (1, 1, 0...), b2 = 0.5.
 * digit 4: h0 = ReLU(2*4 - 3) = 5, h1 = ReLU(-4) = 0: q = 5.5. digit 1: h0 = ReLU(-1) = 0,
 * h1 = 0: q = 0.5. */
static void test_forward(void)
{
    model *m = model_create(&(model_config){.digits = 1, .head = HEAD_POINT, .C = 1, .D = 1, .query = 1}, 0, NULL, 4);
    memset(m->params, 0, m->nparams * sizeof(float));
    float *emb = P(m, "query.emb"), *w1 = P(m, "query.w1"), *b1 = P(m, "query.b1"), *w2 = P(m, "query.w2"),
          *b2 = P(m, "query.b2");
    for (int d = 0; d < 10; d++)
        emb[d * MODEL_QUERY_E] = (float)d;
    w1[0] = 2, w1[MODEL_QUERY_E] = -1, b1[0] = -3;
    w2[0] = 1, w2[1] = 1, b2[0] = 0.5f;
    uint8_t dg[2] = {4, 1};
    float q[2];
    model_query_forward(m, dg, 2, q);
    CHECK_CLOSE(q[0], 5.5, 1e-6);
    CHECK_CLOSE(q[1], 0.5, 1e-6);
    model_free(m);
}

/* L = sum_i R_i . q_i with fixed random R: analytic gradients of every query parameter against
 * central differences; the forward rounds q to float (about 6e-8 relative), so h = 1e-2 (the
 * tower is piecewise linear: the difference is exact between kinks) and a 1e-3
 * relative tolerance plus 2e-5 (points within h of a ReLU kink skipped) */
static void test_gradients(void)
{
    int N = 3, D = 4, n = 5;
    model *m = model_create(&(model_config){.digits = N, .head = HEAD_POINT, .C = 1, .D = D, .query = 1}, 0, NULL, n);
    model_init(m, 11);
    model_query_init(m, 11);
    rng r;
    rng_init(&r, 5, 0);
    for (size_t i = model_view_find(m, "query.b1")->offset; i < m->nparams; i++) /* biases, too */
        if (m->params[i] == 0)
            m->params[i] = (float)(0.2 * (rng_uniform(&r) - 0.5));
    uint8_t dg[15];
    for (int i = 0; i < n * N; i++)
        dg[i] = (uint8_t)rng_below(&r, 10);
    double R[20];
    for (int i = 0; i < n * D; i++)
        R[i] = rng_uniform(&r) - 0.5;
    float q[20], dq[20];
    for (int i = 0; i < n * D; i++)
        dq[i] = (float)R[i];
    memset(m->grads, 0, m->nparams * sizeof(float));
    model_query_forward(m, dg, n, q);
    model_query_backward(m, dq);
    const char *names[5] = {"query.emb", "query.w1", "query.b1", "query.w2", "query.b2"};
    double worst = 0;
    int checked = 0, skipped = 0, nonzero = 0;
    for (int t = 0; t < 5; t++) {
        const model_view *v = model_view_find(m, names[t]);
        for (size_t j = v->offset; j < v->offset + v->size; j++) {
            float keep = m->params[j], h = 1e-2f;
            double L[3];
            for (int s = -1; s <= 1; s++) {
                m->params[j] = keep + s * h;
                model_query_forward(m, dg, n, q);
                L[s + 1] = 0;
                for (int i = 0; i < n * D; i++)
                    L[s + 1] += R[i] * q[i];
            }
            m->params[j] = keep;
            double fd = (L[2] - L[0]) / (2 * h), left = (L[1] - L[0]) / h, right = (L[2] - L[1]) / h;
            if (fabs(left - right) > 5e-4 * fabs(fd) + 2e-5) { /* a kink between */
                skipped++;
                continue;
            }
            double g = m->grads[j];
            CHECK_CLOSE(g, fd, 1e-3 * fabs(fd) + 2e-5);
            worst = fmax(worst, fabs(g - fd) / (fabs(fd) + 0.01));
            checked++;
            nonzero += g != 0;
        }
    }
    CHECK(nonzero > 100 && skipped < checked / 20);
    printf("query tower gradients: %d parameters checked (%d nonzero), %d skipped (kinks), largest |g - fd| / (|fd| + "
           "0.01) %.2g\n", checked, nonzero, skipped, worst);
    /* grads accumulate, and a query's embedding depends on its digits only */
    model_query_backward(m, dq);
    const model_view *v = model_view_find(m, "query.w2");
    memset(m->grads, 0, m->nparams * sizeof(float));
    model_query_forward(m, dg, n, q);
    model_query_backward(m, dq);
    float g1 = m->grads[v->offset];
    model_query_backward(m, dq);
    CHECK_CLOSE(m->grads[v->offset], 2 * g1, 1e-6 * (1 + fabs(g1)));
    uint8_t same[6] = {1, 2, 3, 1, 2, 3};
    float qs[8];
    model_query_forward(m, same, 2, qs);
    CHECK(!memcmp(qs, qs + D, D * sizeof(float)));
    model_free(m);
}

/* the tower's views sit between the head and the loss's parameters, and the image network
 * starts from the same weights with or without it */
static void test_layout(void)
{
    model_config c = {.digits = 2, .head = HEAD_POINT, .C = 1, .D = 8};
    model *a = model_create(&c, 1, (const char *[]){"ce.scale_raw"}, 8);
    c.query = 1;
    model *b = model_create(&c, 1, (const char *[]){"ce.scale_raw"}, 8);
    model_init(a, 714);
    model_init(b, 714);
    model_query_init(b, 714);
    size_t img = model_view_find(a, "head.b")->offset + model_view_find(a, "head.b")->size;
    CHECK(!memcmp(a->params, b->params, img * sizeof(float)));
    CHECK(model_view_find(b, "query.emb")->offset == img);
    CHECK(b->nnet == model_view_find(b, "query.b2")->offset + 8);
    CHECK(!strcmp(b->views[b->nviews - 1].name, "ce.scale_raw"));
    CHECK(b->nnet - a->nnet == 2 * 10 * MODEL_QUERY_E + MODEL_QUERY_H * (2 * MODEL_QUERY_E + 1) + 8 * (MODEL_QUERY_H + 1));
    CHECK(!model_view_find(a, "query.emb"));
    model_free(a);
    model_free(b);
}

int main(void)
{
    test_digits();
    test_forward();
    test_gradients();
    test_layout();
    return check_done("test_query");
}
