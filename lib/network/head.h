/* head: what a model makes of its body's features h, per item (lib/network/model.h): the raw outputs
 * ho = W h + b of the head's linear layer (head.w, head.b), then the embedding (mu, var) from
 * them. A head is a few functions and one line in head_kinds[] (lib/network/head.c), indexed by the
 * HEAD_* constants of model.h:
 *
 *   point, mog, iso   lib/network/head.c       means (and variances) from ho
 *   pfe, pfe-iso,     lib/network/head_pfe.c   PFE: the mean is the input features, L2-normalised and
 *   pfe-bn                                     not trained; ho are log-variances (pfe-bn: batch-
 *                                              normalised first, as PFE's authors' module)
 *
 * The functions see one item at a time and keep no state: the model calls them from its row
 * units, so they must not write anything but their outputs.
 */
#ifndef HEDGE_HEAD_H
#define HEDGE_HEAD_H

typedef struct head_kind head_kind;
struct head_kind {
    const char *name;      /* "point", "mog", "iso", "pfe", "pfe-iso", "pfe-bn" */
    const char *help;      /* one line for usage texts */
    int stochastic;        /* 1: it has variances (var is not NULL in model_forward) */
    int mean_is_input;     /* 1: mu is the input features (a features body, D = its input, C = 1) */
    int (*outputs)(int C, int D);   /* raw outputs per item */
    /* one item: ho (outputs) and, when mean_is_input, x (D floats, else NULL) -> mu (C x D),
     * var (C x D; NULL when not wanted) */
    void (*forward)(int C, int D, const float *ho, const float *x, float *mu, float *var);
    /* one item: dL/dmu, dL/dvar (NULL: zero) -> dL/dho; ho as the forward had them */
    void (*backward)(int C, int D, const float *ho, const float *dmu, const float *dvar, float *dho);
    /* 1: the linear layer's outputs are batch-normalised (lib/network/nn.h nn_bn_forward, no
     * learned scale or shift of their own, the bias unused) and then take one scale and shift
     * shared by all of them, head.ss = {HEAD_BN_SCALE0, HEAD_BN_SHIFT0} at first, before
     * forward sees them: PFE's authors' module (pfe-bn); the running statistics head.rm,
     * head.rv. 0 for the others. */
    int bn;
};
#define HEAD_BN_SCALE0 1e-4f
#define HEAD_BN_SHIFT0 -7.0f

/* indexed by HEAD_*; NULL-terminated */
extern const head_kind *const head_kinds[];
extern const head_kind head_point, head_mog, head_iso, head_pfe, head_pfe_iso, head_pfe_bn;
/* the head of index `head`, NULL if there is none */
const head_kind *head_of(int head);

/* shared by the heads: the clamped log-variance (model.h MODEL_LOGVAR_MAX) */
float head_clamp_logvar(float s);

#endif
