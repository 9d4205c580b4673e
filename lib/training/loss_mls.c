/* loss_mls: PFE's loss (Shi & Jain, ICCV 2019, Eq. 4; PFE-NOTES.md): the negative mutual
 * likelihood score (lib/numerics/mls.h) averaged over the genuine pairs of the batch,
 *
 *   L = -(1/|P|) sum_{(i,j) in P} MLS(i, j)
 *
 * P: in a P x K batch (groupbatch), every pair i < j of the same class; in a pair batch, the
 * pairs with match = 1. Impostor pairs are not used (the paper's choice: the mean, from a
 * frozen backbone, already separates the classes; the loss only learns how far to trust it).
 * One Gaussian per item (C = 1). With the pfe head (its default) only the variances learn, the
 * mean being the input; with mog or iso the mean learns too (the loss then pulls genuine pairs
 * together and has nothing pushing impostors apart: use it on a frozen mean). With no genuine
 * pair the loss is 0 and so are the gradients. stats: nll = L, mean_var = the batch's mean
 * variance; a, b, se2 NaN, kl 0.
 */
#include <math.h>
#include <string.h>

#include "loss.h"
#include "mls.h"
#include "util.h"

static double mls_forward_backward(const loss_config *cfg, const loss_input *in, const float *params,
                                   float *dparams, float *dmu, float *dvar, rng *r, loss_stats *st)
{
    (void)cfg, (void)params, (void)dparams, (void)r;
    if (in->C != 1)
        die("mls loss: needs one Gaussian per item (C = 1), got C = %d", in->C);
    if (!in->var)
        die("mls loss: needs variances (a stochastic head)");
    int n = in->n, D = in->D;
    size_t all = (size_t)n * D;
    if (dmu)
        memset(dmu, 0, all * sizeof(float));
    if (dvar)
        memset(dvar, 0, all * sizeof(float));
    /* the genuine pairs, counted first so that each gets the weight 1/|P| */
    long long np = 0;
    if (in->npairs > 0) {
        for (int k = 0; k < in->npairs; k++)
            np += in->match[k] != 0;
    } else {
        for (int i = 0; i < n; i++)
            for (int j = i + 1; j < n; j++)
                np += in->cls[i] == in->cls[j];
    }
    double sum = 0, w = np ? -1.0 / (double)np : 0;
#define PAIR(i, j)                                                                                                   \
    do {                                                                                                             \
        const float *m1 = in->mu + (size_t)(i) * D, *m2 = in->mu + (size_t)(j) * D;                               \
        const float *v1 = in->var + (size_t)(i) * D, *v2 = in->var + (size_t)(j) * D;                              \
        sum += mls_score(m1, v1, m2, v2, D);                                                                         \
        mls_grad(m1, v1, m2, v2, D, w, dmu ? dmu + (size_t)(i) * D : NULL, dvar ? dvar + (size_t)(i) * D : NULL,    \
                 dmu ? dmu + (size_t)(j) * D : NULL, dvar ? dvar + (size_t)(j) * D : NULL);                         \
    } while (0)
    if (in->npairs > 0) {
        for (int k = 0; k < in->npairs; k++)
            if (in->match[k])
                PAIR(in->pair_a[k], in->pair_b[k]);
    } else {
        for (int i = 0; i < n; i++)
            for (int j = i + 1; j < n; j++)
                if (in->cls[i] == in->cls[j])
                    PAIR(i, j);
    }
#undef PAIR
    double loss = np ? -sum / (double)np : 0;
    if (st) {
        memset(st, 0, sizeof *st);
        st->nll = loss;
        st->a = st->b = st->acc = st->se2 = NAN;
        double mv = 0;
        for (size_t k = 0; k < all; k++)
            mv += in->var[k];
        st->mean_var = all ? mv / (double)all : 0;
    }
    return loss;
}

static const char *const mls_param_names[] = {NULL};
static void mls_init_params(const loss_config *cfg, float *params) { (void)cfg, (void)params; }

const loss_kind loss_mls = {
    .name = "mls",
    .help = "PFE's mutual likelihood score over the genuine pairs (P x K or pair batches, --head pfe on features)",
    .needs_var = 1,
    .default_head = "pfe",
    .batches = LOSS_GROUPS | LOSS_PAIRS,
    .max_C = 1,
    .nparams = 0,
    .param_names = mls_param_names,
    .init_params = mls_init_params,
    .forward_backward = mls_forward_backward,
};
