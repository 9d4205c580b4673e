/* optim: Adam and SGD with momentum (see optim.h). Element-wise float updates: the result of
 * each element depends only on its own values, so vectorisation cannot change any byte. */
#include "optim.h"

#include "simd.h"
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

optim *optim_create(int kind, size_t n, double lr)
{
    if (kind != OPTIM_ADAM && kind != OPTIM_SGD)
        die("optim: unknown kind %d", kind);
    optim *o = ecalloc(1, sizeof *o);
    o->kind = kind;
    o->n = n;
    o->lr = lr;
    o->beta1 = 0.9;
    o->beta2 = 0.999;
    o->eps = 1e-8;
    o->momentum = 0.9;
    o->m = ealloc_aligned((n ? n : 1) * sizeof(float));
    if (kind == OPTIM_ADAM)
        o->v = ealloc_aligned((n ? n : 1) * sizeof(float));
    return o;
}

void optim_free(optim *o)
{
    if (!o)
        return;
    free(o->m);
    free(o->v);
    free(o);
}

/* SGD: u = momentum u + g; p -= lr u (PyTorch's form) */
static void sgd_step(size_t n, float mom, float lr, float *restrict u, float *restrict p, const float *restrict g)
{
    for (size_t i = 0; i < n; i++) {
        float v = mom * u[i] + g[i];
        u[i] = v;
        p[i] -= lr * v;
    }
}

void optim_step(optim *o, float *params, const float *grads)
{
    o->t++;
    if (o->kind == OPTIM_SGD) {
        sgd_step(o->n, (float)o->momentum, (float)o->lr, o->m, params, grads);
        return;
    }
    /* Adam with bias correction: m = b1 m + (1-b1) g; v = b2 v + (1-b2) g^2;
     * p -= lr * (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps).
     * 1 - beta in double first: 1 - 0.999f in float is off by 1.3e-5 relative. 8 lanes, then
     * the same operations one at a time for the tail (sqrtf alone keeps the compiler from
     * vectorising: it may set errno). */
    float b1 = (float)o->beta1, b2 = (float)o->beta2, eps = (float)o->eps;
    float omb1 = (float)(1.0 - o->beta1), omb2 = (float)(1.0 - o->beta2);
    float c1 = (float)(1.0 / (1.0 - pow(o->beta1, (double)o->t)));
    float c2 = (float)(1.0 / (1.0 - pow(o->beta2, (double)o->t)));
    float lr = (float)o->lr;
    float *m = o->m, *v = o->v;
    size_t i = 0;
    const __m256 B1 = _mm256_set1_ps(b1), B2 = _mm256_set1_ps(b2), OMB1 = _mm256_set1_ps(omb1),
                 OMB2 = _mm256_set1_ps(omb2), C1 = _mm256_set1_ps(c1), C2 = _mm256_set1_ps(c2),
                 LR = _mm256_set1_ps(lr), EPS = _mm256_set1_ps(eps);
    for (; i + 8 <= o->n; i += 8) {
        __m256 g = _mm256_loadu_ps(grads + i);
        __m256 mi = _mm256_add_ps(_mm256_mul_ps(B1, _mm256_loadu_ps(m + i)), _mm256_mul_ps(OMB1, g));
        __m256 vi = _mm256_add_ps(_mm256_mul_ps(B2, _mm256_loadu_ps(v + i)), _mm256_mul_ps(_mm256_mul_ps(OMB2, g), g));
        _mm256_storeu_ps(m + i, mi);
        _mm256_storeu_ps(v + i, vi);
        __m256 step = _mm256_div_ps(_mm256_mul_ps(LR, _mm256_mul_ps(mi, C1)),
                                    _mm256_add_ps(_mm256_sqrt_ps(_mm256_mul_ps(vi, C2)), EPS));
        _mm256_storeu_ps(params + i, _mm256_sub_ps(_mm256_loadu_ps(params + i), step));
    }
    for (; i < o->n; i++) {
        float g = grads[i];
        float mi = b1 * m[i] + omb1 * g;
        float vi = b2 * v[i] + omb2 * g * g;
        m[i] = mi;
        v[i] = vi;
        params[i] -= lr * (mi * c1) / (sqrtf(vi * c2) + eps);
    }
}

double lr_at(const lr_schedule *sc, int64_t s)
{
    if (s < sc->warmup)
        return sc->lr * (double)(s + 1) / (double)sc->warmup;
    if (sc->decay == DECAY_STEPS) {
        double r = sc->lr;
        for (int i = 0; i < sc->nat; i++)
            r *= s >= sc->at[i] ? 0.1 : 1;
        return r;
    }
    if (sc->decay == DECAY_NONE || sc->steps <= sc->warmup + 1)
        return sc->lr;
    /* progress through the decay: 0 at the first step after warm-up, 1 at the last step */
    double x = (double)(s - sc->warmup) / (double)(sc->steps - 1 - sc->warmup);
    if (x > 1)
        x = 1;
    double f = sc->decay == DECAY_COSINE ? 0.5 * (1 + cos(M_PI * x)) : 1 - x;
    return sc->lr * (sc->end_frac + (1 - sc->end_frac) * f);
}

static const char *decay_names[] = {"none", "cosine", "linear", "steps"};
#define NDECAY ((int)(sizeof decay_names / sizeof *decay_names))
const char *decay_name(int decay) { return decay >= 0 && decay < NDECAY ? decay_names[decay] : "?"; }

int lr_steps_parse(const char *text, int64_t *at)
{
    int n = 0;
    const char *p = text;
    while (*p) {
        char *end;
        errno = 0;
        long long v = strtoll(p, &end, 10);
        if (errno || end == p || v < 1 || (n && v <= at[n - 1]) || n == LR_MAX_STEPS || (*end && *end != ','))
            return -1;
        at[n++] = v;
        p = *end ? end + 1 : end;
        if (*end && !*p)
            return -1; /* a trailing comma */
    }
    return n ? n : -1;
}

const char *lr_steps_format(const int64_t *at, int nat, char *buf, size_t n)
{
    size_t used = 0;
    buf[0] = 0;
    for (int i = 0; i < nat && used < n; i++)
        used += (size_t)snprintf(buf + used, n - used, "%s%lld", i ? "," : "", (long long)at[i]);
    return buf;
}
const lr_recipe lr_recipes[] = {
    {"paper", 0, 0, DECAY_NONE, 0},
    {"fast", 3e-3, 20, DECAY_COSINE, 0.01},
    {NULL, 0, 0, 0, 0},
};

const lr_recipe *lr_recipe_find(const char *name)
{
    for (const lr_recipe *r = lr_recipes; r->name; r++)
        if (!strcmp(r->name, name))
            return r;
    return NULL;
}

void lr_recipe_apply(const lr_recipe *r, long steps, int given, double *lr, long *warmup, int *decay, double *end)
{
    if (!r)
        return;
    if (!(given & RECIPE_LR) && r->lr > 0)
        *lr = r->lr;
    if (!(given & RECIPE_WARMUP) && r->warmup_div)
        *warmup = steps / (long)r->warmup_div;
    if (!(given & RECIPE_DECAY))
        *decay = r->decay;
    if (!(given & RECIPE_END))
        *end = r->end_frac;
}

int decay_parse(const char *name)
{
    for (int i = 0; i < NDECAY; i++)
        if (!strcmp(name, decay_names[i]))
            return i;
    return -1;
}
