/* body: what turns a model's input into the features its head reads (lib/network/model.h). A body is
 * one file and one line in body_kinds[] (lib/network/body.c), like a loss:
 *
 *   conv    lib/network/body_conv.c    the HIB paper's network, on images: conv 5x5 (6) ReLU pool 2,
 *                              conv 5x5 (16) ReLU pool 2, fc 120 ReLU -> 120 features
 *   mlp     lib/network/body_mlp.c     fully connected layers with ReLU, on feature vectors or on the
 *                              pixels of images (C x H x W values, scaled to [0, 1]), widths by
 *                              option (`mlp:512,256`) -> the last width's features
 *   linear  lib/network/body_linear.c  nothing: the head reads the input (features or pixels) itself
 *
 * A body owns its parameter tensors (views of the model's block, laid out by `layout`, weights
 * named NAME.w and biases NAME.b so that model_init knows them), its activations, and h and dh,
 * the features it hands the head and their gradient, (maxbatch rounded up to BODY_ROWS, out)
 * floats each. Work is cut as the conv body's always was (lib/network/body_conv.c): into units whose
 * boundaries depend only on the batch size, each with its own outputs and a fixed summation
 * order, OpenBLAS single-threaded inside a unit, so the bytes are the same for every thread
 * count. A body computes no gradient with respect to its input: nothing before it learns.
 *
 *   const body_kind *B = body_find("mlp");            // NULL if unknown
 *   B->parse(&cfg, "512,256");                        // widths into cfg, or what is wrong
 *   (model_create calls check, layout and create; model_forward forward; model_backward
 *    backward, after the head has written m->body_dh)
 */
#ifndef HEDGE_BODY_H
#define HEDGE_BODY_H
#include <stddef.h>

#include "model.h"

/* what a body takes (a bit set): uint8 images (n, Cin, H, W), float32 feature vectors (n, F).
 * A model is built for one of them: cfg.features > 0 means feature vectors, else images. */
enum { BODY_IMAGES = 1, BODY_FEATURES = 2 };
/* every row unit has this many rows (h and dh are allocated to a whole number of units) */
#define BODY_ROWS 64

typedef struct body_kind body_kind;
struct body_kind {
    const char *name;   /* "conv", "mlp", "linear" */
    const char *help;   /* one line for usage texts */
    int input;          /* what it takes: BODY_IMAGES, BODY_FEATURES or both */
    /* the text after "NAME:" (NULL when there is none) into cfg (widths); NULL, or what is
     * wrong (in a static buffer) */
    const char *(*parse)(model_config *cfg, const char *args);
    /* cfg's input and settings checked: NULL, or what is wrong (in a thread-local buffer) */
    const char *(*check)(const model_config *cfg);
    /* adds its tensors to m (model_add_view) and returns the width of h */
    int (*layout)(model *m);
    /* allocates its state (m->body_state) and m->body_h, m->body_dh for m->maxbatch rows */
    void (*create)(model *m);
    void (*destroy)(model *m);
    /* scratch for `threads` workers of the model's pool (called again when it changes) */
    void (*threads)(model *m, int threads);
    /* input (n items) -> m->body_h (n, out) */
    void (*forward)(model *m, const void *input, int n);
    /* m->body_dh (n, out), dL/dh of the last forward's batch (the body may overwrite it) ->
     * ADDS its weight gradients into m->grads */
    void (*backward)(model *m);
};

/* NULL if unknown */
const body_kind *body_find(const char *name);
/* NULL-terminated, for usage texts */
extern const body_kind *const body_kinds[];
/* the body of cfg (cfg->body indexes body_kinds[]) */
const body_kind *body_of(const model_config *cfg);
/* "NAME" or "NAME:ARGS" (e.g. "mlp:512,256") into cfg->body and its settings; NULL, or what
 * is wrong */
const char *body_parse(model_config *cfg, const char *spec);
/* the spec of cfg's body, as body_parse takes it: "conv", "mlp:512,256", "linear" */
const char *body_spec(const model_config *cfg, char *buf, size_t n);

/* shared by the bodies with fully connected layers: widths "W1,W2,..." (1 to
 * MODEL_MAX_LAYERS numbers of 1 to MODEL_MAX_WIDTH) into cfg; NULL or what is wrong */
const char *body_parse_widths(model_config *cfg, const char *args);
/* the column blocks of a fully connected layer's weight gradient (out, in), each summed over
 * the whole batch by one task: one per 64 inputs, 1 to 4 (a small layer is one task; OpenBLAS
 * packs the whole output gradient again for each block: 8 blocks cost 4 % more CPU than 4 on
 * 512 -> 512, and 4 still let two workers share a layer unevenly) */
int body_col_units(int in);
/* floats for `rows` rows of `width`, rows rounded up to whole units, 64-byte aligned, zeroed */
float *body_rows_alloc(size_t rows, size_t width);
/* the input width of the fully connected bodies: cfg->features, or the C x H x W pixels of an
 * images model */
int body_input_width(const model_config *cfg);
/* n inputs of the model into x (n, body_input_width) floats: features copied, pixels / 255 */
void body_input_floats(const model *m, const void *input, int n, float *x);

#endif
