/* body: the features bodies (mlp, linear) and the heads on them (point, mog, iso, pfe,
 * pfe-iso, pfe-bn; mlp-bn): parameter views and counts, the forward against a double-precision reference
 * written from the definitions (lib/network/body_mlp.c, lib/network/head.c, lib/network/head_pfe.c), gradients
 * against central differences of that reference, identical bytes for every thread count and
 * batch size, body specs; and the mutual likelihood score (lib/numerics/mls.h) and the mls loss against
 * values worked by hand and central differences. */
#include <stdlib.h>
#include <string.h>

#include "blas.h"
#include "body.h"
#include "check.h"
#include "loss.h"
#include "mls.h"
#include "model.h"
#include "rng.h"
#include "util.h"

static rng R;
/* dropout in the tests of test_model_on and test_threads (0: none), and the row of ref_item's
 * item in its batch (the masks are by row) */
static float test_dropout;
static int ref_row;

static float *randv(size_t n, double scale)
{
    float *v = malloc(n * sizeof(float));
    for (size_t i = 0; i < n; i++)
        v[i] = (float)(scale * (2 * rng_uniform(&R) - 1));
    return v;
}

static model_config features_cfg(const char *body, int F, int head, int C, int D)
{
    model_config c = {.head = head, .C = C, .D = D, .features = F};
    const char *bad = body_parse(&c, body);
    if (bad) {
        fprintf(stderr, "body_parse(%s): %s\n", body, bad);
        exit(1);
    }
    return c;
}

/* ---------------------------------------------------------------- the reference, in double */

/* one item: x (F) through the layers of m (its own parameters) and the head -> mu, var (C x D) */
static void ref_item(const model *m, const double *P, const float *x, double *mu, double *var)
{
    const model_config *c = &m->cfg;
    double a[2][MODEL_MAX_WIDTH];
    int in = m->F, cur = 0;
    for (int k = 0; k < in; k++)
        a[0][k] = x[k];
    for (int l = 0; l < c->nwidths; l++) {
        char nw[16], nb[16];
        snprintf(nw, sizeof nw, "fc%d.w", l + 1);
        snprintf(nb, sizeof nb, "fc%d.b", l + 1);
        const model_view *w = model_view_find(m, nw), *b = model_view_find(m, nb);
        int out = c->widths[l];
        for (int o = 0; o < out; o++) {
            double s = P[b->offset + o];
            for (int k = 0; k < in; k++)
                s += P[w->offset + (size_t)o * in + k] * a[cur][k];
            a[1 - cur][o] = s > 0 ? s : 0;
            if (m->drop_on) /* inverted dropout, by model_drop_keep's masks */
                a[1 - cur][o] = model_drop_keep(m, l + 1, ref_row, o) ? a[1 - cur][o] / (1 - (double)c->dropout) : 0;
        }
        cur = 1 - cur;
        in = out;
    }
    const model_view *hw = model_view_find(m, "head.w"), *hb = model_view_find(m, "head.b");
    int HO = (int)hw->shape[0];
    double ho[4096];
    for (int o = 0; o < HO; o++) {
        double s = P[hb->offset + o];
        for (int k = 0; k < in; k++)
            s += P[hw->offset + (size_t)o * in + k] * a[cur][k];
        ho[o] = s;
    }
    int C = c->C, D = c->D;
    double lv;
    switch (c->head) {
    case HEAD_POINT:
        for (int k = 0; k < D; k++)
            mu[k] = ho[k], var[k] = 0;
        break;
    case HEAD_MOG:
        for (int q = 0; q < C; q++)
            for (int k = 0; k < D; k++) {
                double r = ho[q * 2 * D + D + k];
                mu[q * D + k] = ho[q * 2 * D + k];
                var[q * D + k] = log1p(exp(r)) + MODEL_VAR_FLOOR;
            }
        break;
    case HEAD_ISO:
        for (int q = 0; q < C; q++)
            for (int k = 0; k < D; k++)
                mu[q * D + k] = ho[q * (D + 1) + k], var[q * D + k] = exp(ho[q * (D + 1) + D]);
        break;
    default: { /* pfe, pfe-iso: the mean is x / ||x|| */
        double n2 = 0;
        for (int k = 0; k < D; k++)
            n2 += (double)x[k] * x[k];
        for (int k = 0; k < D; k++) {
            mu[k] = x[k] / sqrt(n2);
            lv = c->head == HEAD_PFE ? ho[k] : ho[0];
            var[k] = exp(lv);
        }
    }
    }
}

/* the loss the gradients are checked on: sum of Rmu . mu + Rvar . var over the batch */
static double ref_loss(const model *m, const double *P, const float *X, int n, const float *Rmu, const float *Rvar)
{
    int k = m->cfg.C * m->cfg.D;
    double mu[4096], var[4096], s = 0;
    for (int i = 0; i < n; i++) {
        ref_row = i;
        ref_item(m, P, X + (size_t)i * m->F, mu, var);
        for (int j = 0; j < k; j++)
            s += Rmu[(size_t)i * k + j] * mu[j] + Rvar[(size_t)i * k + j] * var[j];
    }
    return s;
}

/* forward against the reference; every gradient against central differences of the reference
 * (in double, h = 1e-6: far from the float noise; a difference whose two one-sided halves
 * disagree crossed a ReLU kink and is skipped, counted) */
static void test_model_on(const char *body, int F, int head, int C, int D, int n)
{
    model_config cfg = features_cfg(body, F, head, C, D);
    cfg.dropout = test_dropout;
    model *m = model_create(&cfg, 0, NULL, n);
    model_init(m, 11);
    model_dropout(m, 1, 99, 3); /* (a model without dropout ignores it) */
    /* biases of 0.05 to 0.15 in magnitude, so that they matter */
    for (int t = 0; t < m->nviews; t++)
        if (m->views[t].ndim == 1)
            for (size_t i = 0; i < m->views[t].size; i++)
                m->params[m->views[t].offset + i] = (float)((rng_below(&R, 2) ? 1 : -1) * (0.05 + 0.1 * rng_uniform(&R)));
    int k = C * D, stoch = head != HEAD_POINT;
    float *X = randv((size_t)n * F, 1.5), *mu = malloc((size_t)n * k * 4), *var = malloc((size_t)n * k * 4);
    float *Rmu = randv((size_t)n * k, 1), *Rvar = randv((size_t)n * k, 1);
    if (!stoch)
        memset(Rvar, 0, (size_t)n * k * 4);
    model_forward(m, X, n, mu, stoch ? var : NULL);
    memset(m->grads, 0, m->nparams * 4);
    model_backward(m, Rmu, stoch ? Rvar : NULL);
    double *P = malloc(m->nparams * sizeof(double));
    for (size_t i = 0; i < m->nparams; i++)
        P[i] = m->params[i];
    double rmu[4096], rvar[4096];
    for (int i = 0; i < n; i++) {
        ref_row = i;
        ref_item(m, P, X + (size_t)i * F, rmu, rvar);
        for (int j = 0; j < k; j++) {
            CHECK_CLOSE(mu[(size_t)i * k + j], rmu[j], 1e-5 * (1 + fabs(rmu[j])));
            if (stoch)
                CHECK_CLOSE(var[(size_t)i * k + j], rvar[j], 1e-5 * (1 + fabs(rvar[j])));
        }
    }
    int checked = 0, skipped = 0;
    double worst = 0;
    for (int t = 0; t < m->nviews; t++) {
        const model_view *v = &m->views[t];
        double scale = 0;
        for (size_t i = 0; i < v->size; i++)
            scale = fmax(scale, fabs(m->grads[v->offset + i]));
        int samples = v->size < 30 ? (int)v->size : 30;
        for (int s = 0; s < samples; s++) {
            size_t j = v->offset + (samples == (int)v->size ? (size_t)s : rng_below(&R, v->size));
            double keep = P[j], h = 1e-6;
            double L0 = ref_loss(m, P, X, n, Rmu, Rvar);
            P[j] = keep + h;
            double lp = ref_loss(m, P, X, n, Rmu, Rvar);
            P[j] = keep - h;
            double lm = ref_loss(m, P, X, n, Rmu, Rvar);
            P[j] = keep;
            double fd = (lp - lm) / (2 * h), tol = 1e-3 * fabs(fd) + 1e-4 * scale + 1e-6;
            if (fabs((lp - L0) / h - (L0 - lm) / h) > 1e-3 * (fabs(fd) + scale) + 1e-6) {
                skipped++;
                continue;
            }
            checked++;
            CHECK_CLOSE(m->grads[j], fd, tol);
            worst = fmax(worst, fabs(m->grads[j] - fd) / tol);
        }
    }
    char spec[64];
    printf("%-12s %-7s C=%d D=%-2d F=%-2d n=%-3d%s: %zu parameters, forward within 1e-5, %d gradients within "
           "tolerance (worst %.3f of it), %d skipped at kinks\n",
           body_spec(&m->cfg, spec, sizeof spec), model_head_name(head), C, D, F, n, test_dropout > 0 ? " dropout" : "",
           m->nparams, checked, worst, skipped);
    CHECK(skipped <= checked / 10);
    free(X), free(mu), free(var), free(Rmu), free(Rvar), free(P);
    model_free(m);
}

/* the views of mlp:5,4 on 6 features with a mog head (C = 2, D = 3) */
static void test_views(void)
{
    model_config c = features_cfg("mlp:5,4", 6, HEAD_MOG, 2, 3);
    model *m = model_create(&c, 1, (const char *[]){"x"}, 3);
    const char *want[] = {"fc1.w", "fc1.b", "fc2.w", "fc2.b", "head.w", "head.b", "x"};
    size_t sizes[] = {30, 5, 20, 4, 12 * 4, 12, 1}, off = 0;
    CHECK(m->nviews == 7 && m->F == 6 && m->hw == 4);
    for (int i = 0; i < 7; i++) {
        const model_view *v = model_view_find(m, want[i]);
        CHECK(v == &m->views[i] && v->offset == off && v->size == sizes[i]);
        off += sizes[i];
    }
    CHECK(m->nparams == off && m->nnet == off - 1);
    CHECK(model_takes_features(&c) && model_input_bytes(m) == 24);
    char spec[64];
    CHECK(!strcmp(body_spec(&m->cfg, spec, sizeof spec), "mlp:5,4"));
    model_free(m);
    /* the linear body: the head reads the input */
    c = features_cfg("linear", 6, HEAD_POINT, 1, 2);
    m = model_create(&c, 0, NULL, 3);
    CHECK(m->nviews == 2 && m->hw == 6 && m->nparams == 2 * 6 + 2);
    model_free(m);
    /* the documented count: mlp:512,256 on 784 features, 533,248 body parameters */
    c = features_cfg("mlp:512,256", 784, HEAD_POINT, 1, 16);
    m = model_create(&c, 0, NULL, 1);
    CHECK(m->nparams == 533248 + 16 * 256 + 16);
    model_free(m);
    /* specs that are not bodies, and models that cannot be built */
    model_config b = {0};
    CHECK(body_parse(&b, "mlp") != NULL);
    CHECK(body_parse(&b, "mlp:") != NULL);
    CHECK(body_parse(&b, "mlp:0") != NULL);
    CHECK(body_parse(&b, "mlp:8,") != NULL);
    CHECK(body_parse(&b, "mlp:8,x") != NULL);
    CHECK(body_parse(&b, "mlp:1,2,3,4,5,6,7") != NULL);
    CHECK(body_parse(&b, "mlp:99999") != NULL);
    CHECK(body_parse(&b, "linear:3") != NULL);
    CHECK(body_parse(&b, "resnet") != NULL);
    CHECK(body_parse(&b, "mlp:8,16") == NULL && b.nwidths == 2 && b.widths[1] == 16);
    model_config p = features_cfg("mlp:8", 6, HEAD_PFE, 1, 5); /* pfe: D must be the features */
    CHECK(model_check(&p) != NULL);
    p.D = 6;
    CHECK(model_check(&p) == NULL);
    p.C = 2;
    CHECK(model_check(&p) != NULL);
    model_config q = {.head = HEAD_PFE, .C = 1, .D = 2, .digits = 1}; /* pfe on images */
    CHECK(model_check(&q) != NULL);
    model_config z = features_cfg("linear", 0, HEAD_POINT, 1, 2); /* no features */
    CHECK(model_check(&z) != NULL);
    printf("views, counts and refusals of the features bodies: checked\n");
}

/* same bytes for 1, 2, 3 threads; an item's outputs do not depend on the batch size beyond its
 * position modulo BODY_ROWS. F features, D dimensions (but for pfe) */
static void test_threads(const char *body, int head, int F, int D)
{
    int n = 150; /* more than two row units, not a multiple of any unit */
    model_config c = features_cfg(body, F, head, head == HEAD_POINT || head >= HEAD_PFE ? 1 : 2,
                                  head >= HEAD_PFE ? F : D);
    c.dropout = test_dropout;
    model *m = model_create(&c, 0, NULL, n);
    model_init(m, 5);
    model_dropout(m, 1, 7, 0);
    int k = c.C * c.D;
    float *X = randv((size_t)n * F, 1), *Rmu = randv((size_t)n * k, 1), *Rvar = randv((size_t)n * k, 1);
    float *mu[3], *var[3], *g[3];
    for (int r = 0; r < 3; r++) {
        mu[r] = malloc((size_t)n * k * 4), var[r] = malloc((size_t)n * k * 4), g[r] = malloc(m->nparams * 4);
        model_set_threads(m, r + 1);
        model_forward(m, X, n, mu[r], var[r]);
        memset(m->grads, 0, m->nparams * 4);
        model_backward(m, Rmu, Rvar);
        memcpy(g[r], m->grads, m->nparams * 4);
    }
    for (int r = 1; r < 3; r++)
        CHECK(!memcmp(mu[r], mu[0], (size_t)n * k * 4) && !memcmp(var[r], var[0], (size_t)n * k * 4) &&
              !memcmp(g[r], g[0], m->nparams * 4));
    model_forward(m, X, 7, mu[1], var[1]); /* a smaller batch: the same outputs */
    CHECK(!memcmp(mu[1], mu[0], (size_t)7 * k * 4) && !memcmp(var[1], var[0], (size_t)7 * k * 4));
    model_dropout(m, 1, 7, 5); /* the batch from item 5 on, as its rows 5.. (masks by the stream's index) */
    model_forward(m, X + (size_t)5 * F, 9, mu[1], var[1]);
    CHECK(!memcmp(mu[1], mu[0] + (size_t)5 * k, (size_t)9 * k * 4) &&
          !memcmp(var[1], var[0] + (size_t)5 * k, (size_t)9 * k * 4));
    for (int r = 0; r < 3; r++)
        free(mu[r]), free(var[r]), free(g[r]);
    free(X), free(Rmu), free(Rvar);
    model_free(m);
}

/* ---------------------------------------------------------------- batch normalisation */

/* the batch through mlp-bn and the pfe-bn head in double (lib/network/body_mlp.c, model.c,
 * nn.h): train, by the batch's statistics (biased variance), else by the running ones in P; the
 * mean is the last mean_dims of each input (or all of it), normalised */
static void ref_bn_batch(const model *m, const double *P, const float *X, int n, int train, double *mu, double *var)
{
    const model_config *c = &m->cfg;
    int F = m->F, md = c->mean_dims ? c->mean_dims : F, in = F - c->mean_dims, D = c->D;
    double *a = malloc(sizeof(double) * n * 64), *z = malloc(sizeof(double) * n * 64);
    for (int i = 0; i < n; i++)
        for (int k = 0; k < in; k++)
            a[i * 64 + k] = X[(size_t)i * F + k];
    for (int l = 0; l <= c->nwidths; l++) {
        int head = l == c->nwidths, out = head ? D : c->widths[l];
        char nm[5][16];
        const char *fmt[5] = {"fc%d.w", "bn%d.g", "bn%d.b", "bn%d.rm", "bn%d.rv"};
        for (int t = 0; t < 5; t++)
            snprintf(nm[t], 16, fmt[t], l + 1);
        if (head)
            strcpy(nm[0], "head.w"), strcpy(nm[3], "head.rm"), strcpy(nm[4], "head.rv");
        const model_view *w = model_view_find(m, nm[0]), *rm = model_view_find(m, nm[3]),
                         *rv = model_view_find(m, nm[4]);
        for (int i = 0; i < n; i++)
            for (int o = 0; o < out; o++) {
                double t = head ? P[model_view_find(m, "head.b")->offset + o] : 0;
                for (int k = 0; k < in; k++)
                    t += P[w->offset + (size_t)o * in + k] * a[i * 64 + k];
                z[i * 64 + o] = t;
            }
        for (int o = 0; o < out; o++) {
            double mm = P[rm->offset + o], vv = P[rv->offset + o];
            if (train) {
                mm = vv = 0;
                for (int i = 0; i < n; i++)
                    mm += z[i * 64 + o] / n;
                for (int i = 0; i < n; i++)
                    vv += (z[i * 64 + o] - mm) * (z[i * 64 + o] - mm) / n;
            }
            for (int i = 0; i < n; i++) {
                double xh = (z[i * 64 + o] - mm) / sqrt(vv + 1e-3);
                if (head) {
                    const double *ss = P + model_view_find(m, "head.ss")->offset;
                    var[(size_t)i * D + o] = 1e-6 + exp(ss[0] * xh + ss[1]);
                } else {
                    double y = P[model_view_find(m, nm[1])->offset + o] * xh + P[model_view_find(m, nm[2])->offset + o];
                    a[i * 64 + o] = y > 0 ? y : 0;
                }
            }
        }
        in = out;
    }
    for (int i = 0; i < n; i++) {
        const float *x = X + (size_t)i * F + (F - md);
        double n2 = 0;
        for (int k = 0; k < md; k++)
            n2 += (double)x[k] * x[k];
        for (int k = 0; k < md; k++)
            mu[(size_t)i * D + k] = x[k] / sqrt(n2);
    }
    free(a), free(z);
}

/* mlp-bn with the pfe-bn head (PFE's authors' module): the forward against ref_bn_batch in
 * training and out of it, every trained parameter's gradient against central differences of the
 * batch's loss sum Rvar . var (in training: through the batch's statistics), the running
 * averages after one training forward by their definition (keep 0.995, the unbiased variance),
 * the same bytes at 1 and 3 threads, and nothing but zero gradients for rm, rv and the biases
 * the normalisation cancels */
static void test_bn(const char *body, int F, int mean_dims, int n)
{
    int D = mean_dims ? mean_dims : F;
    model_config cfg = features_cfg(body, F, HEAD_PFE_BN, 1, D);
    cfg.mean_dims = mean_dims;
    model *m = model_create(&cfg, 0, NULL, n);
    model_init(m, 3);
    CHECK(model_view_find(m, "head.ss") && m->params[model_view_find(m, "head.ss")->offset] == 1e-4f &&
          m->params[model_view_find(m, "head.ss")->offset + 1] == -7.0f);
    CHECK(!model_view_find(m, "fc1.b") && model_view_find(m, "bn1.g") &&
          m->params[model_view_find(m, "bn1.rv")->offset] == 1.0f);
    /* scale and shift away from their start, so that the variances vary and every term matters;
     * running statistics away from 0 and 1 */
    m->params[model_view_find(m, "head.ss")->offset] = 0.7f;
    m->params[model_view_find(m, "head.ss")->offset + 1] = -0.3f;
    for (int t = 0; t < m->nviews; t++) {
        const model_view *v = &m->views[t];
        int g = strstr(v->name, ".g") != NULL, rv = strstr(v->name, ".rv") != NULL;
        if (v->ndim == 1 && strcmp(v->name, "head.ss"))
            for (size_t i = 0; i < v->size; i++)
                m->params[v->offset + i] = (float)(g || rv ? 0.6 + 0.8 * rng_uniform(&R) : 0.3 * (2 * rng_uniform(&R) - 1));
    }
    float *X = randv((size_t)n * F, 1.5), *mu = malloc((size_t)n * D * 4), *var = malloc((size_t)n * D * 4);
    float *Rmu = randv((size_t)n * D, 1), *Rvar = randv((size_t)n * D, 1), *keep = malloc(m->nparams * 4);
    double *P = malloc(m->nparams * sizeof(double)), *rmu = malloc(sizeof(double) * n * D),
           *rvar = malloc(sizeof(double) * n * D);
    for (int train = 0; train < 2; train++) {
        for (size_t i = 0; i < m->nparams; i++)
            P[i] = m->params[i];
        memcpy(keep, m->params, m->nparams * 4);
        m->bn_train = train;
        model_forward(m, X, n, mu, var);
        ref_bn_batch(m, P, X, n, train, rmu, rvar);
        for (int e = 0; e < n * D; e++) {
            CHECK_CLOSE(mu[e], rmu[e], 1e-5 * (1 + fabs(rmu[e])));
            CHECK_CLOSE(var[e], rvar[e], 1e-5 * (1 + fabs(rvar[e])));
        }
        /* the running averages: moved in training by their definition, untouched out of it */
        for (int t = 0; t < m->nviews; t++) {
            const model_view *v = &m->views[t];
            int isrm = strstr(v->name, ".rm") != NULL, isrv = strstr(v->name, ".rv") != NULL;
            for (size_t i = 0; i < v->size; i++) {
                size_t j = v->offset + i;
                if (!(isrm || isrv) || !train) {
                    CHECK(m->params[j] == keep[j]);
                    continue;
                }
                CHECK(m->params[j] != keep[j]);
            }
        }
        memcpy(m->params, keep, m->nparams * 4);
        model_forward(m, X, n, mu, var); /* again from the same parameters, for the backward */
        memset(m->grads, 0, m->nparams * 4);
        model_backward(m, Rmu, Rvar);
        int checked = 0;
        double worst = 0;
        for (int t = 0; t < m->nviews; t++) {
            const model_view *v = &m->views[t];
            int frozen = strstr(v->name, ".rm") || strstr(v->name, ".rv") || !strcmp(v->name, "head.b");
            double scale = 0;
            for (size_t i = 0; i < v->size; i++)
                scale = fmax(scale, fabs(m->grads[v->offset + i]));
            if (frozen) { /* no gradient: statistics, and a bias the normalisation cancels */
                CHECK(scale == 0);
                continue;
            }
            int samples = v->size < 20 ? (int)v->size : 20;
            for (int s = 0; s < samples; s++) {
                size_t j = v->offset + (samples == (int)v->size ? (size_t)s : rng_below(&R, v->size));
                double kp = P[j], h = 1e-6, lp = 0, lm = 0;
                P[j] = kp + h;
                ref_bn_batch(m, P, X, n, train, rmu, rvar);
                for (int e = 0; e < n * D; e++)
                    lp += Rvar[e] * rvar[e];
                P[j] = kp - h;
                ref_bn_batch(m, P, X, n, train, rmu, rvar);
                for (int e = 0; e < n * D; e++)
                    lm += Rvar[e] * rvar[e];
                P[j] = kp;
                double fd = (lp - lm) / (2 * h), tol = 2e-3 * fabs(fd) + 2e-4 * scale + 1e-6;
                CHECK_CLOSE(m->grads[j], fd, tol);
                worst = fmax(worst, fabs(m->grads[j] - fd) / tol);
                checked++;
            }
        }
        /* 1 and 3 threads: the same bytes (forward, gradients and running averages) */
        float *g1 = malloc(m->nparams * 4), *p1 = malloc(m->nparams * 4), *v1 = malloc((size_t)n * D * 4);
        for (int r = 0; r < 2; r++) {
            memcpy(m->params, keep, m->nparams * 4);
            model_set_threads(m, r ? 3 : 1);
            model_forward(m, X, n, mu, var);
            memset(m->grads, 0, m->nparams * 4);
            model_backward(m, Rmu, Rvar);
            if (!r)
                memcpy(g1, m->grads, m->nparams * 4), memcpy(p1, m->params, m->nparams * 4),
                    memcpy(v1, var, (size_t)n * D * 4);
            else
                CHECK(!memcmp(g1, m->grads, m->nparams * 4) && !memcmp(p1, m->params, m->nparams * 4) &&
                      !memcmp(v1, var, (size_t)n * D * 4));
        }
        char spec[64];
        printf("%-12s pfe-bn  F=%-2d mean %d n=%-3d %s: forward within 1e-5, %d gradients within tolerance "
               "(worst %.3f of it), the same bytes at 1 and 3 threads\n",
               body_spec(&m->cfg, spec, sizeof spec), F, mean_dims, n, train ? "training" : "running statistics",
               checked, worst);
        free(g1), free(p1), free(v1);
        memcpy(m->params, keep, m->nparams * 4);
    }
    /* one training forward's running averages, by the definition */
    m->bn_train = 1;
    const model_view *rm = model_view_find(m, "head.rm"), *rv = model_view_find(m, "head.rv");
    for (size_t i = 0; i < m->nparams; i++)
        P[i] = m->params[i];
    model_forward(m, X, n, mu, var);
    /* the head's pre-normalisation outputs: the linear layer on the body's h, in double */
    const model_view *hw = model_view_find(m, "head.w");
    int hwid = (int)hw->shape[1];
    for (int o = 0; o < D; o++) {
        double a = 0, q = 0, *z = malloc(sizeof(double) * n);
        for (int i = 0; i < n; i++) {
            double t = P[model_view_find(m, "head.b")->offset + o];
            for (int k = 0; k < hwid; k++)
                t += P[hw->offset + (size_t)o * hwid + k] * m->body_h[(size_t)i * hwid + k];
            z[i] = t, a += t / n;
        }
        for (int i = 0; i < n; i++)
            q += (z[i] - a) * (z[i] - a);
        CHECK_CLOSE(m->params[rm->offset + o], 0.995 * P[rm->offset + o] + 0.005 * a, 1e-6 * (1 + fabs(a)));
        CHECK_CLOSE(m->params[rv->offset + o], 0.995 * P[rv->offset + o] + 0.005 * q / (n - 1), 1e-6 * (1 + q / n));
        free(z);
    }
    free(X), free(mu), free(var), free(Rmu), free(Rvar), free(keep), free(P), free(rmu), free(rvar);
    model_free(m);
}

/* model_drop_keep: the share kept is 1 - p (within 5 sd of 10^6 draws), and the masks of two
 * layers, and of two seeds, agree as independent ones do; off, the forward is the model's
 * without dropout, to the byte; on, it is not */
static void test_dropout_masks(void)
{
    model_config c = features_cfg("mlp:50,50", 8, HEAD_POINT, 1, 4), c0 = c;
    c.dropout = 0.25f;
    model *m = model_create(&c, 0, NULL, 64), *m0 = model_create(&c0, 0, NULL, 64);
    model_init(m, 3), model_init(m0, 3);
    model_dropout(m, 1, 42, 0);
    long kept = 0, same_l = 0, same_s = 0, N = 1000000;
    for (long i = 0; i < N; i++) {
        int r = (int)(i / 1000), k = (int)(i % 1000);
        int a = model_drop_keep(m, 1, r, k);
        kept += a;
        same_l += a == model_drop_keep(m, 2, r, k);
    }
    for (long i = 0; i < N; i++) { /* seed 43 against 42, unit by unit */
        model_dropout(m, 1, 42, 0);
        int a = model_drop_keep(m, 1, i / 1000, (int)(i % 1000));
        model_dropout(m, 1, 43, 0);
        same_s += a == model_drop_keep(m, 1, i / 1000, (int)(i % 1000));
    }
    double sd = sqrt(N * 0.25 * 0.75);
    CHECK(fabs(kept - 0.75 * N) < 5 * sd);
    /* two independent masks agree with probability 0.75^2 + 0.25^2 = 0.625 */
    CHECK(fabs(same_l - 0.625 * N) < 5 * sqrt(N * 0.625 * 0.375));
    CHECK(fabs(same_s - 0.625 * N) < 5 * sqrt(N * 0.625 * 0.375));
    printf("dropout masks: kept %.4f of 10^6 (p = 0.25); layers 1 and 2 agree on %.4f, seeds 42 and 43 on %.4f "
           "(independent: 0.625)\n", (double)kept / N, (double)same_l / N, (double)same_s / N);
    float X[64 * 8], mu[64 * 4], mu0[64 * 4];
    for (int i = 0; i < 64 * 8; i++)
        X[i] = (float)(2 * rng_uniform(&R) - 1);
    model_dropout(m, 0, 0, 0);
    model_forward(m, X, 64, mu, NULL);
    model_forward(m0, X, 64, mu0, NULL);
    CHECK(!memcmp(mu, mu0, sizeof mu));
    model_dropout(m, 1, 42, 0);
    model_forward(m, X, 64, mu, NULL);
    CHECK(memcmp(mu, mu0, sizeof mu) != 0);
    model_free(m), model_free(m0);
}

/* model_forward_mc: T = 3 passes by hand (model_dropout with the documented seeds, row0), their
 * mean and unbiased variance in double, plus the head's mean variance (mog) */
static void test_mc(void)
{
    for (int head = HEAD_POINT; head <= HEAD_MOG; head++) {
        model_config c = features_cfg("mlp:16,12", 6, head, 1, 3);
        c.dropout = 0.4f;
        int n = 11, T = 3, k = 3;
        model *m = model_create(&c, 0, NULL, n);
        model_init(m, 8);
        float *X = randv((size_t)n * 6, 1), mu[11 * 3], var[11 * 3], pm[3][11 * 3], pv[3][11 * 3];
        for (int t = 0; t < T; t++) {
            model_dropout(m, 1, 77 ^ (uint64_t)(t + 1) * 0x9e3779b97f4a7c15ULL, 20);
            model_forward(m, X, n, pm[t], head ? pv[t] : NULL);
        }
        model_forward_mc(m, X, n, T, 77, 20, 0, mu, var);
        CHECK(!m->drop_on);
        double worst = 0;
        for (int j = 0; j < n * k; j++) {
            double a = (pm[0][j] + pm[1][j] + pm[2][j]) / 3.0, v = 0, hv = 0;
            for (int t = 0; t < T; t++)
                v += (pm[t][j] - a) * (pm[t][j] - a) / (T - 1), hv += head ? pv[t][j] / T : 0;
            v += hv;
            v = v > MODEL_VAR_FLOOR ? v : MODEL_VAR_FLOOR;
            CHECK_CLOSE(mu[j], a, 1e-6 * (1 + fabs(a)));
            CHECK_CLOSE(var[j], v, 1e-5 * (1 + v));
            worst = fmax(worst, fabs(var[j] - v) / (1 + v));
        }
        printf("model_forward_mc (%s): T = 3 passes by hand, mean and variance within %.2g\n", model_head_name(head),
               worst);
        free(X);
        model_free(m);
    }
}

/* the fully connected bodies on images: the pixels / 255 as the feature vector, so an images
 * model gives the bytes of the features model of the same weights fed those floats */
static void test_images_input(void)
{
    int n = 70, C = 2, H = 4, W = 8, F = C * H * W;
    const char *bodies[] = {"mlp:9,5", "linear"};
    for (int b = 0; b < 2; b++) {
        model_config ci = {.head = HEAD_MOG, .C = 1, .D = 3, .channels = C, .height = H, .width = W};
        body_parse(&ci, bodies[b]);
        model_config cf = features_cfg(bodies[b], F, HEAD_MOG, 1, 3);
        model *mi = model_create(&ci, 0, NULL, n), *mf = model_create(&cf, 0, NULL, n);
        CHECK(mi->nparams == mf->nparams && mi->F == 0 && mi->Cin == C && mf->F == F);
        model_init(mi, 9);
        memcpy(mf->params, mi->params, mi->nparams * 4);
        uint8_t *img = malloc((size_t)n * F);
        float *x = malloc((size_t)n * F * 4), *mu[2], *var[2], *G = randv((size_t)n * 3, 1);
        for (int i = 0; i < n * F; i++) {
            img[i] = (uint8_t)rng_below(&R, 256);
            x[i] = img[i] * (1.0f / 255);
        }
        for (int k = 0; k < 2; k++)
            mu[k] = malloc((size_t)n * 3 * 4), var[k] = malloc((size_t)n * 3 * 4);
        model_forward(mi, img, n, mu[0], var[0]);
        model_forward(mf, x, n, mu[1], var[1]);
        memset(mi->grads, 0, mi->nparams * 4);
        memset(mf->grads, 0, mf->nparams * 4);
        model_backward(mi, G, G);
        model_backward(mf, G, G);
        CHECK(!memcmp(mu[0], mu[1], (size_t)n * 3 * 4) && !memcmp(var[0], var[1], (size_t)n * 3 * 4));
        CHECK(!memcmp(mi->grads, mf->grads, mi->nparams * 4));
        CHECK(model_input_bytes(mi) == (size_t)F && model_input_bytes(mf) == (size_t)F * 4);
        for (int k = 0; k < 2; k++)
            free(mu[k]), free(var[k]);
        free(img), free(x), free(G);
        model_free(mi), model_free(mf);
    }
    /* conv takes no feature vectors; pfe's mean needs them */
    model_config cv = features_cfg("conv", 8, HEAD_POINT, 1, 2);
    CHECK(model_check(&cv) != NULL);
    model_config pi = {.head = HEAD_PFE, .C = 1, .D = 32, .channels = 1, .height = 4, .width = 8};
    body_parse(&pi, "mlp:4");
    CHECK(model_check(&pi) != NULL);
    printf("mlp and linear on images: the bytes of the same model on pixels / 255; conv refuses features\n");
}

/* ---------------------------------------------------------------- MLS */

static void test_mls(void)
{
    /* D = 1, mu 0 and 1, variances 0.5 each: v = 1, MLS = -1/2 (1 + 0) - 1/2 log(2 pi) */
    float a0[1] = {0}, a1[1] = {1}, h[1] = {0.5f};
    CHECK_CLOSE(mls_score(a0, h, a1, h, 1), -0.5 - 0.5 * log(2 * M_PI), 1e-12);
    /* D = 2: d = (3, -1), v = (2, 0.5): -1/2 (9/2 + log 2 + 2 + log 0.5) - log(2 pi) = -3.25 - log 2pi */
    float m1[2] = {3, 0}, m2[2] = {0, 1}, v1[2] = {1.5f, 0.25f}, v2[2] = {0.5f, 0.25f};
    CHECK_CLOSE(mls_score(m1, v1, m2, v2, 2), -3.25 - log(2 * M_PI), 1e-12);
    CHECK_CLOSE(mls_score(m1, v1, m2, v2, 2), mls_score(m2, v2, m1, v1, 2), 1e-15);
    /* gradients: by hand at this point, dMLS/dmu1 = -d/v = (-1.5, 2), dMLS/dv = (d^2/v^2 - 1/v)/2
     * = ((9/4 - 1/2)/2, (4 - 2)/2) = (0.875, 1); and against central differences */
    float dm1[2] = {0}, dv1[2] = {0}, dm2[2] = {0}, dv2[2] = {0};
    mls_grad(m1, v1, m2, v2, 2, 1.0, dm1, dv1, dm2, dv2);
    CHECK_CLOSE(dm1[0], -1.5, 1e-6);
    CHECK_CLOSE(dm1[1], 2, 1e-6);
    CHECK_CLOSE(dm2[0], 1.5, 1e-6);
    CHECK_CLOSE(dv1[0], 0.875, 1e-6);
    CHECK_CLOSE(dv1[1], 1, 1e-6);
    CHECK_CLOSE(dv2[0], 0.875, 1e-6);
    float *arrs[4] = {m1, v1, m2, v2}, *grads[4] = {dm1, dv1, dm2, dv2};
    for (int a = 0; a < 4; a++)
        for (int l = 0; l < 2; l++) {
            float keep = arrs[a][l], e = 1e-3f;
            arrs[a][l] = keep + e;
            double p = mls_score(m1, v1, m2, v2, 2);
            arrs[a][l] = keep - e;
            double q = mls_score(m1, v1, m2, v2, 2);
            arrs[a][l] = keep;
            CHECK_CLOSE(grads[a][l], (p - q) / (2 * e), 2e-3);
        }

    /* the loss: 5 items of classes 0 0 1 1 2 (P x K style): genuine pairs (0,1), (2,3);
     * L = -(MLS01 + MLS23) / 2, item 4 untouched */
    const loss_kind *L = loss_find("mls");
    CHECK(L && L->needs_var && L->max_C == 1);
    int n = 5, D = 3;
    float *mu = randv(n * D, 1), *var = randv(n * D, 0.5), dmu[15], dvar[15];
    for (int i = 0; i < n * D; i++)
        var[i] = 0.6f + var[i];
    int32_t cls[5] = {0, 0, 1, 1, 2};
    loss_input in = {.n = n, .C = 1, .D = D, .mu = mu, .var = var, .cls = cls};
    loss_stats st;
    loss_config lc = loss_config_new(L);
    double v = L->forward_backward(&lc, &in, NULL, NULL, dmu, dvar, NULL, &st);
    double want = -(mls_score(mu, var, mu + D, var + D, D) + mls_score(mu + 2 * D, var + 2 * D, mu + 3 * D, var + 3 * D, D)) / 2;
    CHECK_CLOSE(v, want, 1e-12);
    CHECK_CLOSE(st.nll, want, 1e-12);
    for (int l = 0; l < D; l++)
        CHECK(dmu[4 * D + l] == 0 && dvar[4 * D + l] == 0);
    for (int i = 0; i < n * D; i++)
        for (int w = 0; w < 2; w++) {
            float *x = w ? var : mu, keep = x[i], e = 1e-3f;
            x[i] = keep + e;
            double p = L->forward_backward(&lc, &in, NULL, NULL, NULL, NULL, NULL, NULL);
            x[i] = keep - e;
            double q = L->forward_backward(&lc, &in, NULL, NULL, NULL, NULL, NULL, NULL);
            x[i] = keep;
            CHECK_CLOSE(w ? dvar[i] : dmu[i], (p - q) / (2 * e), 2e-3 * (1 + fabs((p - q) / (2 * e))));
        }
    /* pair batches: only the pairs with match = 1; none -> 0 and zero gradients */
    int32_t pa[3] = {0, 2, 1}, pb[3] = {1, 3, 4};
    uint8_t match[3] = {1, 0, 1};
    loss_input pin = in;
    pin.npairs = 3, pin.pair_a = pa, pin.pair_b = pb, pin.match = match;
    v = L->forward_backward(&lc, &pin, NULL, NULL, dmu, dvar, NULL, NULL);
    CHECK_CLOSE(v, -(mls_score(mu, var, mu + D, var + D, D) + mls_score(mu + D, var + D, mu + 4 * D, var + 4 * D, D)) / 2,
                1e-12);
    match[0] = match[2] = 0;
    v = L->forward_backward(&lc, &pin, NULL, NULL, dmu, dvar, NULL, NULL);
    int zero = v == 0;
    for (int i = 0; i < n * D; i++)
        zero &= dmu[i] == 0 && dvar[i] == 0;
    CHECK(zero);
    printf("MLS: hand values, gradients by hand and by central differences; the mls loss on groups and pairs\n");
    free(mu), free(var);
}

int main(void)
{
    blas_init(NULL, 1);
    rng_init(&R, 714, RNG_STREAM('t', 'b', 'o', 'd'));
    test_views();
    test_model_on("mlp:7,5", 6, HEAD_POINT, 1, 3, 9);
    test_model_on("mlp:7,5", 6, HEAD_MOG, 2, 3, 9);
    test_model_on("mlp:9", 6, HEAD_ISO, 2, 2, 5);
    test_model_on("mlp:8,6,4", 5, HEAD_PFE, 1, 5, 7);
    test_model_on("mlp:8", 5, HEAD_PFE_ISO, 1, 5, 7);
    test_model_on("linear", 11, HEAD_POINT, 1, 4, 6);
    test_model_on("linear", 11, HEAD_MOG, 1, 4, 6);
    test_model_on("linear", 6, HEAD_PFE, 1, 6, 6);
    test_model_on("mlp:13", 70, HEAD_POINT, 1, 9, 70); /* two row units, widths not multiples of 8 */
    test_threads("mlp:33,17", HEAD_MOG, 20, 3);
    test_threads("mlp:24", HEAD_PFE, 20, 0);
    test_threads("linear", HEAD_ISO, 20, 3);
    /* layers large enough to be handed out (PAR_MIN_WORK: the forward 2 x 192 rows x (150 x 200 +
     * 200 x 130) = 21.5 Mflop, the head's 2 x 192 x 130 x 160 = 8 Mflop; on linear 2 x 192 x 600
     * x 140 = 32 Mflop) in 2, 3 and 4 column blocks (body_col_units); the small models above run
     * every fan-out in the caller */
    test_threads("mlp:200,130", HEAD_MOG, 150, 40);
    test_threads("linear", HEAD_MOG, 600, 35);
    test_images_input();
    /* dropout (p = 0.3) on: the forward and every gradient against the reference with the same
     * masks, the same bytes at every thread count, batch size and start */
    test_dropout = 0.3f;
    test_model_on("mlp:7,5", 6, HEAD_POINT, 1, 3, 9);
    test_model_on("mlp:13", 70, HEAD_MOG, 1, 4, 70);
    test_threads("mlp:33,17", HEAD_MOG, 20, 3);
    test_threads("mlp:200,130", HEAD_ISO, 150, 40);
    test_dropout = 0;
    test_dropout_masks();
    test_bn("mlp-bn:7,5", 6, 0, 9);
    test_bn("mlp-bn:6", 9, 4, 70); /* the head's input apart from the mean; two row units */
    test_threads("mlp-bn:24", HEAD_PFE_BN, 20, 0); /* out of training: the running statistics */
    test_mc();
    test_mls();
    return check_done("test_body");
}
