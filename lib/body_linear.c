/* body_linear: no layers (lib/body.h): the head reads the input feature vectors themselves,
 * h = x (n, F), F = cfg->features. A point head on it is a linear map of the features; a pfe
 * head learns one linear map from the features to their log-variances. No parameters.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "body.h"
#include "util.h"

static const char *linear_parse(model_config *cfg, const char *args)
{
    return args ? "the linear body takes no settings" : NULL;
}

static const char *linear_check(const model_config *c)
{
    static _Thread_local char why[96];
    if (c->features >= 1 && c->features <= MODEL_MAX_FEATURES)
        return NULL;
    snprintf(why, sizeof why, "%d input features, the linear body takes 1 to %d", c->features, MODEL_MAX_FEATURES);
    return why;
}

static int linear_layout(model *m) { return m->cfg.features; }

static void linear_create(model *m)
{
    m->body_h = body_rows_alloc(m->maxbatch, m->cfg.features);
    m->body_dh = body_rows_alloc(m->maxbatch, m->cfg.features);
}

static void linear_destroy(model *m)
{
    free(m->body_h);
    free(m->body_dh);
    m->body_h = m->body_dh = NULL;
}

static void linear_threads(model *m, int threads) {}

static void linear_forward(model *m, const void *input, int n)
{
    memcpy(m->body_h, input, (size_t)n * m->cfg.features * sizeof(float));
}

static void linear_backward(model *m) {}

const body_kind body_linear = {
    .name = "linear",
    .help = "no layers: the head reads the input features",
    .input = BODY_FEATURES,
    .parse = linear_parse,
    .check = linear_check,
    .layout = linear_layout,
    .create = linear_create,
    .destroy = linear_destroy,
    .threads = linear_threads,
    .forward = linear_forward,
    .backward = linear_backward,
};
