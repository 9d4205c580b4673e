/* body_linear: no layers (lib/network/body.h): the head reads the input feature vectors themselves,
 * h = x (n, F), F = cfg->features (or the pixels of images, scaled to [0, 1]). A point head on it is a linear map of the features; a pfe
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
    static _Thread_local char why[128];
    if (body_input_width(c) >= 1)
        return NULL;
    snprintf(why, sizeof why, "%d input features (images of %dx%dx%d), the linear body takes 1 to %d", c->features,
             c->channels, c->height, c->width, MODEL_MAX_FEATURES);
    return why;
}

static int linear_layout(model *m) { return body_input_width(&m->cfg); }

static void linear_create(model *m)
{
    m->body_h = body_rows_alloc(m->maxbatch, body_input_width(&m->cfg));
    m->body_dh = body_rows_alloc(m->maxbatch, body_input_width(&m->cfg));
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
    body_input_floats(m, input, n, m->body_h);
}

static void linear_backward(model *m) {}

const body_kind body_linear = {
    .name = "linear",
    .help = "no layers: the head reads the input features (or pixels)",
    .input = BODY_FEATURES | BODY_IMAGES,
    .parse = linear_parse,
    .check = linear_check,
    .layout = linear_layout,
    .create = linear_create,
    .destroy = linear_destroy,
    .threads = linear_threads,
    .forward = linear_forward,
    .backward = linear_backward,
};
