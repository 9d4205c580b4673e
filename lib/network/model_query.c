/* model_query: the query tower of the two-tower models (lib/network/model.h, "the query tower"): digit
 * strings -> per-position embeddings, concatenated -> fc + ReLU -> fc to D. Plain loops in
 * double accumulation: a query costs N E H + H D multiply-adds (about 6,000 for N = 2, D = 16),
 * nothing next to an image's 8 MFLOP. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model_query.h"
#include "rng.h"
#include "util.h"

typedef struct {
    int n;              /* queries of the last forward */
    uint8_t *digits;    /* (maxbatch, N) */
    float *e, *h;       /* (maxbatch, N E), (maxbatch, H) after ReLU */
} qstate;

static float *pv(model *m, const char *name) { return m->params + model_view_find(m, name)->offset; }
static float *gv(model *m, const char *name) { return m->grads + model_view_find(m, name)->offset; }

void model_query_digits(int N, int32_t cls, uint8_t *digits)
{
    for (int p = N - 1; p >= 0; p--) {
        digits[p] = (uint8_t)(cls % 10);
        cls /= 10;
    }
}

static void model_query_free(model *m);

static qstate *state(model *m)
{
    if (!m->cfg.query)
        die("model: this model has no query tower");
    if (!m->qimpl) {
        qstate *q = ecalloc(1, sizeof *q);
        size_t nb = m->maxbatch, N = m->cfg.digits;
        q->digits = emalloc(nb * N);
        q->e = emalloc(nb * N * MODEL_QUERY_E * sizeof(float));
        q->h = emalloc(nb * MODEL_QUERY_H * sizeof(float));
        m->qimpl = q;
        m->qfree = model_query_free;
    }
    return m->qimpl;
}

static void model_query_free(model *m)
{
    qstate *q = m->qimpl;
    if (!q)
        return;
    free(q->digits);
    free(q->e);
    free(q->h);
    free(q);
    m->qimpl = NULL;
}

/* the embeddings uniform in [-1, 1] (unit-scale inputs to the first layer), the two weight
 * matrices Xavier uniform, biases zero; a stream of the seed of its own, so that adding the
 * tower leaves the image network's initial weights as they were */
void model_query_init(model *m, uint64_t seed)
{
    static const char *const names[3] = {"query.emb", "query.w1", "query.w2"};
    for (int t = 0; t < 3; t++) {
        const model_view *v = model_view_find(m, names[t]);
        double limit = t == 0 ? 1.0 : sqrt(6.0 / (double)(v->shape[0] + v->shape[1]));
        rng r;
        rng_init(&r, seed, RNG_STREAM('q', 'i', 'n', 'i') | (uint64_t)t);
        float *p = m->params + v->offset;
        for (size_t i = 0; i < v->size; i++)
            p[i] = (float)((2.0 * rng_uniform(&r) - 1.0) * limit);
    }
    memset(pv(m, "query.b1"), 0, MODEL_QUERY_H * sizeof(float));
    memset(pv(m, "query.b2"), 0, (size_t)m->cfg.D * sizeof(float));
}

void model_query_forward(model *m, const uint8_t *digits, int n, float *q)
{
    qstate *s = state(m);
    int N = m->cfg.digits, D = m->cfg.D, NE = N * MODEL_QUERY_E, H = MODEL_QUERY_H;
    if (n < 0 || n > m->maxbatch)
        die("model: %d queries, more than the %d the model was made for", n, m->maxbatch);
    const float *emb = pv(m, "query.emb"), *w1 = pv(m, "query.w1"), *b1 = pv(m, "query.b1"), *w2 = pv(m, "query.w2"),
                *b2 = pv(m, "query.b2");
    s->n = n;
    memcpy(s->digits, digits, (size_t)n * N);
    for (int i = 0; i < n; i++) {
        float *e = s->e + (size_t)i * NE, *h = s->h + (size_t)i * H;
        for (int p = 0; p < N; p++) {
            int d = digits[(size_t)i * N + p];
            if (d > 9)
                die("model: query %d has digit %d at position %d (digits are 0..9)", i, d, p);
            memcpy(e + p * MODEL_QUERY_E, emb + ((size_t)p * 10 + d) * MODEL_QUERY_E, MODEL_QUERY_E * sizeof(float));
        }
        for (int o = 0; o < H; o++) {
            double a = b1[o];
            for (int k = 0; k < NE; k++)
                a += (double)w1[(size_t)o * NE + k] * e[k];
            h[o] = a > 0 ? (float)a : 0.0f;
        }
        for (int o = 0; o < D; o++) {
            double a = b2[o];
            for (int k = 0; k < H; k++)
                a += (double)w2[(size_t)o * H + k] * h[k];
            q[(size_t)i * D + o] = (float)a;
        }
    }
}

void model_query_backward(model *m, const float *dq)
{
    qstate *s = state(m);
    int N = m->cfg.digits, D = m->cfg.D, NE = N * MODEL_QUERY_E, H = MODEL_QUERY_H;
    const float *w1 = pv(m, "query.w1"), *w2 = pv(m, "query.w2");
    float *gemb = gv(m, "query.emb"), *gw1 = gv(m, "query.w1"), *gb1 = gv(m, "query.b1"), *gw2 = gv(m, "query.w2"),
          *gb2 = gv(m, "query.b2");
    float dh[MODEL_QUERY_H];
    float *de = emalloc((size_t)NE * sizeof *de);
    for (int i = 0; i < s->n; i++) {
        const float *e = s->e + (size_t)i * NE, *h = s->h + (size_t)i * H, *g = dq + (size_t)i * D;
        // q = W2 h + b2: dW2 += g h^T, db2 += g, dh = W2^T g, through the ReLU
        for (int k = 0; k < H; k++)
            dh[k] = 0;
        for (int o = 0; o < D; o++) {
            gb2[o] += g[o];
            for (int k = 0; k < H; k++) {
                gw2[(size_t)o * H + k] += g[o] * h[k];
                dh[k] += w2[(size_t)o * H + k] * g[o];
            }
        }
        for (int k = 0; k < H; k++)
            if (h[k] <= 0)
                dh[k] = 0;
        // h = ReLU(W1 e + b1): dW1 += dh e^T, db1 += dh, de = W1^T dh
        for (int k = 0; k < NE; k++)
            de[k] = 0;
        for (int o = 0; o < H; o++) {
            if (dh[o] == 0)
                continue;
            gb1[o] += dh[o];
            for (int k = 0; k < NE; k++) {
                gw1[(size_t)o * NE + k] += dh[o] * e[k];
                de[k] += w1[(size_t)o * NE + k] * dh[o];
            }
        }
        // e: rows of query.emb
        for (int p = 0; p < N; p++) {
            int d = s->digits[(size_t)i * N + p];
            float *ge = gemb + ((size_t)p * 10 + d) * MODEL_QUERY_E;
            for (int k = 0; k < MODEL_QUERY_E; k++)
                ge[k] += de[p * MODEL_QUERY_E + k];
        }
    }
    free(de);
}

void model_unit_length(float *v, int n)
{
    double s = 0;
    for (int i = 0; i < n; i++)
        s += (double)v[i] * v[i];
    if (s > 0) {
        double r = 1 / sqrt(s);
        for (int i = 0; i < n; i++)
            v[i] = (float)(v[i] * r);
    }
}
