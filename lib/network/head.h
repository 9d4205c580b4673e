/* head: what a model makes of its body's features h, per item (lib/network/model.h): the raw outputs
 * ho = W h + b of the head's linear layer (head.w, head.b), then the embedding (mu, var) from
 * them. A head is a few functions and one line in head_kinds[] (lib/network/head.c), indexed by the
 * HEAD_* constants of model.h:
 *
 *   point, mog, iso   lib/network/head.c       means (and variances) from ho
 *   pfe, pfe-iso      lib/network/head_pfe.c   PFE: the mean is the input features, L2-normalised and
 *                                      not trained; ho are log-variances
 *
 * The functions see one item at a time and keep no state: the model calls them from its row
 * units, so they must not write anything but their outputs.
 */
#ifndef HEDGE_HEAD_H
#define HEDGE_HEAD_H

typedef struct head_kind head_kind;
struct head_kind {
    const char *name;      /* "point", "mog", "iso", "pfe", "pfe-iso" */
    const char *help;      /* one line for usage texts */
    int stochastic;        /* 1: it has variances (var is not NULL in model_forward) */
    int mean_is_input;     /* 1: mu is the input features (a features body, D = its input, C = 1) */
    int (*outputs)(int C, int D);   /* raw outputs per item */
    /* one item: ho (outputs) and, when mean_is_input, x (D floats, else NULL) -> mu (C x D),
     * var (C x D; NULL when not wanted) */
    void (*forward)(int C, int D, const float *ho, const float *x, float *mu, float *var);
    /* one item: dL/dmu, dL/dvar (NULL: zero) -> dL/dho; ho as the forward had them */
    void (*backward)(int C, int D, const float *ho, const float *dmu, const float *dvar, float *dho);
};

/* indexed by HEAD_*; NULL-terminated */
extern const head_kind *const head_kinds[];
extern const head_kind head_point, head_mog, head_iso, head_pfe, head_pfe_iso;
/* the head of index `head`, NULL if there is none */
const head_kind *head_of(int head);

/* shared by the heads: the clamped log-variance (model.h MODEL_LOGVAR_MAX) */
float head_clamp_logvar(float s);

#endif
