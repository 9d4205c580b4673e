/* model: an embedding network, a body and a head, on one parameter block.
 *
 *   body (lib/network/body.h; one file each, chosen per model like a loss) turns the input into F
 *         features h (n, F):
 *         conv    u8 images (n, Cin, H, W), channel-major, scaled to [0, 1] (N-digit MNIST is
 *                 1 x 28 x 28N, the SPE paper's L-shapes 3 x 64 x 64; H, W multiples of 4):
 *                 the HIB paper's network (NOTES.md), F = 120 (lib/network/body_conv.c)
 *         mlp     float features (n, Fin): fully connected layers with ReLU, F = the last width
 *         linear  float features (n, Fin): h is the input, F = Fin
 *   head (lib/network/head.h) reads h and writes (mu, var), (n, C, D) each:
 *         point   fc to D
 *         mog     fc to C x 2D (mixture of C Gaussians: per component D means, then D raw
 *                 variances; var = softplus(raw) + MODEL_VAR_FLOOR keeps variances positive)
 *         iso     fc to C x (D + 1) (per component D means and one s = log sigma^2, the same
 *                 variance exp(s) in every dimension, as the heteroscedastic triplet loss of
 *                 Taha et al. learns it; s is clamped to [-MODEL_LOGVAR_MAX, MODEL_LOGVAR_MAX],
 *                 and beyond the bound the gradient is the bound's (straight through), so that
 *                 s can come back)
 *         pfe     PFE (Shi & Jain 2019): the mean is the input features themselves, L2-normalised
 *                 and not trained (D = Fin, C = 1); fc to D values s = log sigma^2 (one per
 *                 dimension), var = exp(s), clamped as iso's
 *         pfe-iso the same with one s per item (fc to 1), the same variance in every dimension
 *         pfe-bn  PFE's authors' module: the D values batch-normalised, then one shared scale and
 *                 shift (head.ss), var = 1e-6 + exp(s) (lib/network/head_pfe.c)
 *
 * Batch normalisation (the mlp-bn body, the pfe-bn head): in training (m->bn_train, which
 * trainer_step sets) each layer is normalised by the batch's statistics and its running
 * averages, tensors NAME.rm and NAME.rv of the block that no gradient reaches, move towards
 * them; otherwise (embed) by the running averages. model_init sets NAME.g and NAME.rv to 1,
 * NAME.rm to 0.
 *
 * All parameters live in one float block (m->params, m->nparams) with a named view per tensor
 * (m->views), followed by `nextra` extra parameters owned by the loss (the learned a and b of
 * the match probability), so that zeroing gradients, the optimizer step and checkpointing are one
 * loop each. m->grads has the same layout.
 *
 * Ownership: the model owns params, grads and its activation buffers (sized for maxbatch).
 *
 *   model_config cfg = {.digits = 2, .head = HEAD_MOG, .C = 1, .D = 2};     // 1 x 28 x 56
 *   // or {.head = HEAD_MOG, .C = 1, .D = 2, .channels = 3, .height = 64, .width = 64}
 *   // or features: body_parse(&cfg, "mlp:512,256"); cfg.features = 784;
 *   model *m = model_create(&cfg, 2, (const char *[]){"match.a_raw", "match.b"}, 256);
 *   model_init(m, seed);                         // Xavier uniform weights, zero biases
 *   model_forward(m, input, n, mu, var);         // input: n images (u8) or feature vectors
 *                                                // (float), as the body takes;
 *                                                // mu, var: (n, C, D); var NULL for point
 *   memset(m->grads, 0, m->nparams * sizeof(float));
 *   model_backward(m, dmu, dvar);                // after a forward on the same batch
 */
#ifndef HEDGE_MODEL_H
#define HEDGE_MODEL_H
#include <stddef.h>
#include <stdint.h>

/* the heads, in lib/network/head.c's head_kinds[] order */
enum { HEAD_POINT = 0, HEAD_MOG = 1, HEAD_ISO = 2, HEAD_PFE = 3, HEAD_PFE_ISO = 4, HEAD_PFE_BN = 5 };
#define MODEL_VAR_FLOOR 1e-6f
#define MODEL_LOGVAR_MAX 20.0f
/* "point", "mog", "iso", "pfe", "pfe-iso", "pfe-bn"; parse returns -1 for an unknown name */
/* for usage texts, from the registries: "  bodies (--body): conv, mlp:W1,W2,..., linear\n  heads
 * (--head): point, ...\n" */
const char *model_names(void);
const char *model_head_name(int head);
int model_head_parse(const char *name);

/* Input bounds, checked wherever a geometry comes from outside (model_check_input): fc1 alone
 * has 120 x H x W weights, so that a hostile checkpoint header cannot make the model allocate
 * more than a few tens of MB. */
#define MODEL_MAX_CHANNELS 4
#define MODEL_MAX_PIXELS 16384 /* H x W: 128 x 128, or 28 x 28N up to N = 20 */
/* features bodies: input features, hidden layers and their widths at most (the largest
 * weight matrix is 8192 x 16384 floats, 512 MB: a hostile header cannot ask for more) */
#define MODEL_MAX_FEATURES 16384
#define MODEL_MAX_LAYERS 6
#define MODEL_MAX_WIDTH 8192
/* C x D, the embedding outputs per item, at most */
#define MODEL_MAX_OUTPUTS 4096

typedef struct {
    int digits;     /* N for N-digit MNIST (1 x 28 x 28N); 0 for other images */
    int head;       /* HEAD_POINT, HEAD_MOG or HEAD_ISO (var: NULL only for HEAD_POINT) */
    int C;          /* mixture components (1 for point) */
    int D;          /* embedding dimensions */
    /* the input geometry; all 0: that of digits (1, 28, 28N) */
    int channels, height, width;
    /* 1: also a query tower over the digit strings of N-digit classes (digits >= 1 needed):
     * the two-tower losses (Cross-Example Softmax) embed each class's string beside the images */
    int query;
    /* the body: an index into body_kinds[] (lib/network/body.h; 0 = conv, the default), and the
     * settings a body owns: the input features of a features body (0 for images), the widths
     * of the hidden layers (mlp) */
    int body;
    int features;
    int nwidths;
    int widths[MODEL_MAX_LAYERS];
    /* mlp: the probability that dropout zeroes a hidden unit (each layer's output, scaled by
     * 1 / (1 - p) when kept), in training and under embed --mc; 0: none (MODEL_MAX_DROPOUT) */
    float dropout;
    /* features: the last mean_dims of each input vector are the item's frozen mean, which a pfe
     * head takes as its mean (normalised) while the body reads the first features - mean_dims,
     * PFE's head input (fromnpz -k features --features H --mu MU: meta mean_dims); 0: none */
    int mean_dims;
    /* a deep ensemble of M point heads on one body (train --ensemble M, 2 .. MODEL_MAX_ENSEMBLE;
     * 0: none): the point head has C = M components, one member's mean each, each trained by the
     * loss on its own (lib/training/trainer.c); embed gives their mean and the spread of their
     * means as the variance (model_ensemble_moments) */
    int ensemble;
} model_config;
#define MODEL_MAX_DROPOUT 0.9
#define MODEL_MAX_ENSEMBLE 16

typedef struct {
    char name[32];  /* e.g. "conv1.w" */
    int ndim;
    int64_t shape[4];
    size_t offset;  /* in floats, into params / grads */
    size_t size;    /* in floats */
} model_view;

typedef struct model model;
struct model {
    model_config cfg;       /* with the geometry filled in */
    int Cin, H, W;          /* input channels, height, width */
    size_t nparams;         /* network + extra */
    size_t nnet;            /* network parameters only; extra ones start here */
    int nextra;
    float *params, *grads;  /* 64-byte aligned, nparams each */
    int nviews;
    model_view views[48];   /* network tensors (the body's, the head's, the query tower's), then
                             * one view per extra parameter */
    int maxbatch;
    int F;                  /* features bodies: input features per item (0 for images) */
    int hw;                 /* the width of the body's output h, the head's input */
    void *body_state;       /* the body's activations and workspaces (lib/network/body.h) */
    float *body_h, *body_dh; /* (maxbatch rounded up to BODY_ROWS, hw): h and dL/dh */
    void *impl;             /* the head's buffers, the thread pool */
    void *qimpl;            /* the query tower's activations (cfg.query), lib/network/model_query.h */
    int drop_on;            /* dropout in the next forwards (model_dropout) */
    int bn_train;           /* 1: batch normalisation by the batch's statistics, updating the
                             * running ones (training); 0: by the running ones */
    uint64_t drop_seed;     /* their masks' key, and the global index of the batch's first row */
    int64_t drop_row0;
    void (*qfree)(struct model *m); /* frees them (set by the query tower; model_free calls it) */
};

model *model_create(const model_config *cfg, int nextra, const char *const *extra_names, int maxbatch);
/* the same, extra parameter i of shape extra_shapes[2 i], extra_shapes[2 i + 1] (a matrix, e.g. a
 * loss's weight per class, (classes, D)), or of extra_shapes[2 i] floats when the second is 0;
 * extra_shapes NULL: every extra parameter one float */
model *model_create_shaped(const model_config *cfg, int nextra, const char *const *extra_names,
                           const int64_t *extra_shapes, int maxbatch);
void model_free(model *m);
/* Xavier uniform for weights, zero biases; deterministic in seed. The image network's only: a
 * query tower is initialised by model_query_init (lib/network/model_query.h), extra parameters are left
 * at 0 for the loss to initialise. */
void model_init(model *m, uint64_t seed);
/* Xavier uniform for the extra parameters that are matrices named NAME.w (a loss's weights per
 * class), each from its own random stream of seed; the others are left as they are */
void model_init_extra(model *m, uint64_t seed);
/* weight decay (L2): wd x w added to the gradient of every weight, the tensors named NAME.w (the
 * body's, the head's, the query tower's, a loss's class weights), not the biases nor a loss's
 * scalars */
void model_weight_decay(model *m, double wd);
/* input: n items (n <= maxbatch) of what the body takes: images, n x Cin x H x W bytes, or
 * features, n x F floats (model_input_bytes each); mu: n x C x D; var: n x C x D (NULL for
 * point) */
void model_forward(model *m, const void *input, int n, float *mu, float *var);
/* dropout (cfg.dropout > 0) on or off for the next forwards and backwards: each unit's mask is a
 * hash of (seed, its layer, row0 + its row in the batch, its index), so that it is the same bytes
 * at every thread count and batch size (train: seed of the step, row0 0; embed --mc: seed of the
 * pass, row0 the item's index in the stream). Off (the default) every unit is kept unscaled. */
void model_dropout(model *m, int on, uint64_t seed, int64_t row0);
/* MC dropout (embed --mc): T forwards of the n items, the first at index row0 of the stream, pass t
 * (0-based) with dropout on by the seed seed ^ (t + 1) 0x9e3779b97f4a7c15, each pass's means made
 * unit length when unit; mu = their mean, var = their variance over the passes (unbiased, / (T -
 * 1)) plus the mean of the passes' variances (a stochastic head's), at least MODEL_VAR_FLOOR,
 * summed in double in pass order. C x D outputs per item each; T >= 2; dropout is off after. */
/* a deep ensemble's embedding (cfg.ensemble M): from members (n, M, D), each item's mean over the
 * M members into mu (n, D) and their unbiased variance (M - 1) per dimension, at least
 * MODEL_VAR_FLOOR, into var (n, D), in double then float (Lakshminarayanan et al. 2017's spread
 * of the members as the uncertainty, as MC dropout's of its passes) */
void model_ensemble_moments(const float *members, int n, int M, int D, float *mu, float *var);
void model_forward_mc(model *m, const void *input, int n, int T, uint64_t seed, int64_t row0, int unit, float *mu,
                      float *var);
/* 1 when dropout keeps unit k of layer l (1-based) in row r of a forward's batch */
int model_drop_keep(const model *m, int l, int64_t r, int k);
/* gradients of the loss with respect to mu and var (var: NULL for point) for the batch of the
 * last forward; ADDS into m->grads (the caller zeroes them). */
void model_backward(model *m, const float *dmu, const float *dvar);
const model_view *model_view_find(const model *m, const char *name); /* NULL if absent */
/* for the bodies: a parameter tensor at the end of the block so far (before create's
 * allocation), and the model's thread pool (lib/base/par.h) */
void model_add_view(model *m, const char *name, int ndim, const int64_t *shape);
struct par_pool *model_pool(const model *m);
/* bytes of one input item: Cin x H x W (images) or 4 F (features) */
size_t model_input_bytes(const model *m);
/* 1 if the model is built for feature vectors (cfg->features > 0), 0 for images */
int model_takes_features(const model_config *cfg);

/* the sizes of the query tower (cfg.query, lib/network/model_query.h), whose weights the model's
 * parameter block lays out: E per digit value and position, H hidden units */
#define MODEL_QUERY_E 16
#define MODEL_QUERY_H 64
/* Threads the model computes on: 1 to 16, by default blas_threads() when it was created.
 * Forward and backward give the same bytes for every thread count. (Inside the model, OpenBLAS
 * runs single-threaded; the caller's BLAS thread count is restored on return.) */
void model_set_threads(model *m, int threads);
int model_threads(const model *m);
/* raw head outputs per image: C x D (point), C x 2D (mog), C x (D + 1) (iso), D (pfe, pfe-bn) or 1
 * (pfe-iso) */
int model_outputs(const model_config *cfg);
/* NULL if cfg is a model that can be built (its body's input and settings, the head's C and D
 * against the body), else what is wrong (in a thread-local buffer) */
const char *model_check(const model_config *cfg);
/* NULL if the network takes images of channels x height x width (1 to MODEL_MAX_CHANNELS
 * channels, sides multiples of 4, at most MODEL_MAX_PIXELS pixels), else what is wrong, e.g.
 * "height 30 is not a positive multiple of 4" (in a thread-local buffer, valid until the next
 * call) */
const char *model_check_input(int channels, int height, int width);

#endif
