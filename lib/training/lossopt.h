/* lossopt: the loss settings given on train's command line (-K, --beta, --margin, --a0, --b0,
 * --se2-0, --sampler, --triplet, --mining, --fstat-dims, --ce-scale0, --ce-topk, --ce-frac): the
 * check that each belongs to the loss chosen (its LOSS_OPT_* bit, lib/training/loss.h), and the
 * loss_config a new run starts from (the options given over loss_defaults, then what the loss
 * derives from them: its settle).
 *
 * "Not given" is NaN for the reals, -1 for K, beta, margin and the choices, 0 for the counts:
 *
 *   lossopt g = lossopt_none();
 *   g.beta = 1e-4;                                    // from the options
 *   lossopt_check_owned(&g, L);                       // misuse: "--ce-topk is an option of ..."
 *   const char *bad = lossopt_configure(&g, L, D, shots, &lc);   // NULL, or what is wrong
 */
#ifndef HEDGE_LOSSOPT_H
#define HEDGE_LOSSOPT_H
#include "loss.h"

typedef struct {
    int K;                              /* -K: samples per embedding, -1 */
    double beta, margin;                /* -1 */
    double a0, b0, se2_0;               /* NaN */
    int sampler, triplet_form, mining;  /* -1 */
    int fstat_dims, ce_topk;            /* 0 */
    double ce_scale0, ce_frac;          /* NaN */
} lossopt;

lossopt lossopt_none(void);
/* the K of a run of loss L: -K, else the loss's default_K, else loss_defaults.K */
int lossopt_K(const lossopt *g, const loss_kind *L);
/* dies as misuse (usage_die) on the first option given that L does not own, naming the losses
 * that own it */
void lossopt_check_owned(const lossopt *g, const loss_kind *L);
/* the settings of a new run of loss L with embeddings of D dimensions (shots: the support images
 * per class of an episode stream, 0 otherwise) into lc; NULL, or what is wrong (misuse) */
const char *lossopt_configure(const lossopt *g, const loss_kind *L, int D, int shots, loss_config *lc);
#endif
