/* loss: one small interface for every training loss, so that new losses (SPE, prototypical,
 * F-statistic, Cross-Example Softmax, triplet) plug in without touching `train`.
 *
 * A loss sees the embeddings of one batch of n images, (mu, var) of shape (n, C, D) (var is
 * NULL for point embeddings), the class of every image, and, for pair batches, which images
 * form the pairs. It returns the loss value and writes dL/dmu and dL/dvar (same shapes).
 * It may have its own learnable parameters (for HIB: a_raw and b of the match probability
 * p = sigmoid(-a ||z1 - z2|| + b), a = softplus(a_raw) > 0); they live at the end of the model's
 * parameter block, so the optimizer and the checkpoint treat them like any weight.
 *
 * Randomness (the VIB samples) comes only from the rng passed in; train seeds it per step,
 * rng_init(&r, seed, step), so a resumed run draws exactly the same samples.
 *
 *   const loss_kind *L = loss_find("vib");                 // NULL if unknown
 *   loss_config lc = loss_defaults; lc.K = 8; lc.beta = 1e-4;
 *   L->init_params(&lc, extra);                            // L->nparams floats
 *   double v = L->forward_backward(&lc, &in, extra, dextra, dmu, dvar, &r, &stats);
 */
#ifndef HEDGE_LOSS_H
#define HEDGE_LOSS_H
#include <stdint.h>

#include "rng.h"

typedef struct {
    int K;          /* samples per input (VIB), 8 */
    double beta;    /* KL weight (VIB), 1e-4 */
    double margin;  /* M of the hard-margin contrastive loss (Eq. 1), 1.0 */
    double a0, b0;  /* initial a (> 0) and b of the match probability */
} loss_config;
extern const loss_config loss_defaults;

typedef struct {
    int n, C, D;
    const float *mu;        /* (n, C, D) */
    const float *var;       /* (n, C, D), NULL for point embeddings */
    const int32_t *cls;     /* (n) */
    /* pair batches: pair k is (pair_a[k], pair_b[k]) with label match[k] (1 = same class).
     * npairs = 0 for losses that form their own pairs or groups from cls. */
    int npairs;
    const int32_t *pair_a, *pair_b;
    const uint8_t *match;
} loss_input;

typedef struct {
    double nll;       /* the data term, mean over pairs */
    double kl;        /* mean KL per image (VIB), 0 otherwise */
    double a, b;      /* current match-probability parameters (a after softplus) */
    double mean_var;  /* mean variance over the batch (0 for point) */
} loss_stats;

typedef struct loss_kind loss_kind;
struct loss_kind {
    const char *name;       /* "softcon", "contrastive", "vib", ... */
    const char *help;       /* one line for usage texts */
    int needs_var;          /* 1: needs a stochastic (MoG) head; 0: point embeddings */
    int needs_pairs;        /* 1: needs pair batches (npairs > 0) */
    int nparams;            /* learnable parameters of the loss itself */
    const char *const *param_names;
    void (*init_params)(const loss_config *cfg, float *params);
    /* returns the loss; writes dmu and dvar (dvar only when var != NULL) and ADDS to dparams */
    double (*forward_backward)(const loss_config *cfg, const loss_input *in, const float *params,
                               float *dparams, float *dmu, float *dvar, rng *r, loss_stats *st);
};

const loss_kind *loss_find(const char *name);
/* NULL-terminated list of all losses, for usage texts */
extern const loss_kind *const loss_kinds[];

#endif
