/* lossopt: the loss settings of train's command line (lib/training/lossopt.h) */
#include "lossopt.h"

#include <math.h>
#include <string.h>

#include "loss_util.h"
#include "util.h"

lossopt lossopt_none(void)
{
    return (lossopt){.K = -1, .beta = -1, .margin = -1, .a0 = NAN, .b0 = NAN, .se2_0 = NAN, .sampler = -1,
                     .triplet_form = -1, .mining = -1, .ce_scale0 = NAN, .ce_frac = NAN};
}

int lossopt_K(const lossopt *g, const loss_kind *L)
{
    return g->K > 0 ? g->K : L->default_K ? L->default_K : loss_defaults.K;
}

void lossopt_check_owned(const lossopt *g, const loss_kind *L)
{
    static const struct {
        int bit;
        const char *what;
    } owned[] = {
        {LOSS_OPT_SPE, "--se2-0 and --sampler are options"}, {LOSS_OPT_TRIPLET, "--triplet and --mining are options"},
        {LOSS_OPT_CE, "--ce-scale0 is an option"},           {LOSS_OPT_CE_TOPK, "--ce-topk is an option"},
        {LOSS_OPT_CE_FRAC, "--ce-frac is an option"},         {LOSS_OPT_FSTAT, "--fstat-dims is an option"},
    };
    int given = (!isnan(g->se2_0) || g->sampler >= 0 ? LOSS_OPT_SPE : 0) |
                (g->triplet_form >= 0 || g->mining >= 0 ? LOSS_OPT_TRIPLET : 0) |
                (!isnan(g->ce_scale0) ? LOSS_OPT_CE : 0) | (g->ce_topk ? LOSS_OPT_CE_TOPK : 0) |
                (!isnan(g->ce_frac) ? LOSS_OPT_CE_FRAC : 0) | (g->fstat_dims ? LOSS_OPT_FSTAT : 0);
    for (size_t i = 0; i < sizeof owned / sizeof *owned; i++) {
        char who[256];
        if (!(given & owned[i].bit & ~L->options))
            continue;
        loss_owners(owned[i].bit, who, sizeof who);
        usage_die("%s of the %s loss%s", owned[i].what, who, strchr(who, ' ') ? "es" : "");
    }
}

const char *lossopt_configure(const lossopt *g, const loss_kind *L, int D, int shots, loss_config *lc)
{
    *lc = loss_defaults;
    lc->K = lossopt_K(g, L);
    if (g->beta >= 0)
        lc->beta = g->beta;
    lc->margin = g->margin; /* < 0: not given */
    if (!isnan(g->a0))
        lc->a0 = g->a0;
    if (!isnan(g->b0))
        lc->b0 = g->b0;
    lc->gamma0 = isnan(g->se2_0) ? NAN : loss_softplus_inv(g->se2_0);
    if (g->sampler >= 0)
        lc->sampler = g->sampler;
    if (g->triplet_form >= 0)
        lc->triplet_form = g->triplet_form;
    if (g->mining >= 0)
        lc->mining = g->mining;
    if (!isnan(g->ce_scale0))
        lc->ce_scale0 = g->ce_scale0;
    if (g->ce_topk)
        lc->ce_topk = g->ce_topk;
    if (!isnan(g->ce_frac))
        lc->ce_frac = g->ce_frac;
    lc->fstat_dims = g->fstat_dims;
    const char *bad = L->settle ? L->settle(lc, D, shots) : NULL;
    if (lc->margin < 0)
        lc->margin = loss_defaults.margin;
    if (isnan(lc->gamma0))
        lc->gamma0 = loss_defaults.gamma0;
    return bad;
}
