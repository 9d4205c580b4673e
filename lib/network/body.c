/* body: the registry of bodies and what they share (lib/network/body.h) */
#include "body.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

extern const body_kind body_conv, body_mlp, body_linear, body_mlpbn;
/* the order is the index kept in model_config.body: conv first, the default */
const body_kind *const body_kinds[] = {&body_conv, &body_mlp, &body_linear, &body_mlpbn, NULL};

const body_kind *body_find(const char *name)
{
    for (int i = 0; body_kinds[i]; i++)
        if (!strcmp(body_kinds[i]->name, name))
            return body_kinds[i];
    return NULL;
}

const body_kind *body_of(const model_config *cfg)
{
    int n = (int)(sizeof body_kinds / sizeof body_kinds[0]) - 1;
    return cfg->body >= 0 && cfg->body < n ? body_kinds[cfg->body] : NULL;
}

const char *body_parse(model_config *cfg, const char *spec)
{
    static _Thread_local char why[160];
    const char *colon = strchr(spec, ':');
    size_t len = colon ? (size_t)(colon - spec) : strlen(spec);
    for (int i = 0; body_kinds[i]; i++)
        if (strlen(body_kinds[i]->name) == len && !strncmp(body_kinds[i]->name, spec, len)) {
            cfg->body = i;
            cfg->nwidths = 0;
            return body_kinds[i]->parse(cfg, colon ? colon + 1 : NULL);
        }
    snprintf(why, sizeof why, "'%.*s' is not a body (conv, mlp:W1,W2,..., linear, mlp-bn:W1,W2,...)", (int)(len < 40 ? len : 40), spec);
    return why;
}

const char *body_spec(const model_config *cfg, char *buf, size_t n)
{
    const body_kind *B = body_of(cfg);
    int k = snprintf(buf, n, "%s", B ? B->name : "?");
    for (int l = 0; l < cfg->nwidths && k > 0 && (size_t)k < n; l++)
        k += snprintf(buf + k, n - k, "%c%d", l ? ',' : ':', cfg->widths[l]);
    return buf;
}

const char *body_parse_widths(model_config *cfg, const char *args)
{
    static _Thread_local char why[160];
    cfg->nwidths = 0;
    const char *p = args;
    for (;;) {
        if (cfg->nwidths == MODEL_MAX_LAYERS) {
            snprintf(why, sizeof why, "'%.60s': more than %d layers", args, MODEL_MAX_LAYERS);
            return why;
        }
        char *end;
        errno = 0;
        long w = *p >= '0' && *p <= '9' ? strtol(p, &end, 10) : -1;
        if (w < 1 || w > MODEL_MAX_WIDTH || errno || (*end && *end != ',')) {
            snprintf(why, sizeof why, "'%.60s': widths are numbers from 1 to %d separated by commas, e.g. 512,256",
                     args, MODEL_MAX_WIDTH);
            return why;
        }
        cfg->widths[cfg->nwidths++] = (int)w;
        if (!*end)
            return NULL;
        p = end + 1;
    }
}

int body_input_width(const model_config *cfg)
{
    if (cfg->features > 0)
        return cfg->features - cfg->mean_dims;
    long long w = (long long)cfg->channels * cfg->height * cfg->width;
    return w > 0 && w <= MODEL_MAX_FEATURES ? (int)w : 0;
}

void body_input_floats(const model *m, const void *input, int n, float *x)
{
    if (m->F && !m->cfg.mean_dims) {
        memcpy(x, input, (size_t)n * m->F * sizeof(float));
        return;
    }
    if (m->F) { /* the head's input apart from the frozen mean: the first F - mean_dims of each */
        int w = m->F - m->cfg.mean_dims;
        for (int i = 0; i < n; i++)
            memcpy(x + (size_t)i * w, (const float *)input + (size_t)i * m->F, (size_t)w * sizeof(float));
        return;
    }
    const uint8_t *p = input;
    size_t k = (size_t)n * m->Cin * m->H * m->W;
    for (size_t i = 0; i < k; i++)
        x[i] = p[i] * (1.0f / 255);
}

int body_col_units(int in)
{
    return in < 64 ? 1 : in >= 4 * 64 ? 4 : in / 64;
}

float *body_rows_alloc(size_t rows, size_t width)
{
    size_t r = (rows + BODY_ROWS - 1) / BODY_ROWS * BODY_ROWS, n = r * width;
    float *p = ealloc_aligned((n ? n : 1) * sizeof(float));
    memset(p, 0, (n ? n : 1) * sizeof(float));
    return p;
}
