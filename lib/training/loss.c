/* loss: the registry of training losses and their shared defaults. A new loss defines its
 * `const loss_kind` in its own file and is listed once in loss_kinds[] below.
 *
 * Defaults: K = 8 and beta = 1e-4 as in the paper; margin M = 1 for the hard-margin loss
 * (appendix B sweeps M; 1 is a common middle value). The match probability starts at a = 1,
 * b = 0: p = sigmoid(-d), i.e. 0.5 at distance 0 and falling off on the unit scale of a freshly
 * initialised network's embeddings, with gradients of moderate size for every pair; the paper
 * learns a and b and does not give their initial values (a is stored as a_raw = softplus^-1(a)).
 *
 * The two-tower losses (loss_ce.c): the scale of the cosine scores starts at ce_scale0 = 10 and is
 * learned. The paper's value was lost in the extraction ("scaled with a factor of ."); 10 sits
 * between NormFace's bound for a softmax over normalised vectors to reach probability p = 0.9
 * against n - 1 negatives, (n-1)/n log((n-1) p / (1-p)) = 7.0 for n = 128 (one query's row), and
 * the same for a shared set of n^2 pairs, 11.9 (cesoftmax): large enough that the softmax is not
 * stuck near uniform, small enough that the first steps do not saturate. ce_topk = 32 for snm:
 * the paper keeps "the 50% largest scores" of each negative set; half of the 63 negatives of a
 * 64-class batch (2-digit MNIST has 70 training classes). ce_frac = 0.5 for cenm, the paper's.
 */
#include "loss.h"

#include <stdio.h>
#include <string.h>

const loss_config loss_defaults = {
    .K = 8,
    .beta = 1e-4,
    .margin = 1.0,
    .a0 = 1.0,
    .b0 = 0.0,
    .gamma0 = 0.0,
    .sampler = LOSS_SAMPLER_INTERSECTION,
    .triplet_form = LOSS_TRIPLET_SOFT,
    .mining = LOSS_MINING_SEMIHARD,
    .fstat_dims = 0,
    .ce_scale0 = 10.0,
    .ce_topk = 32,
    .ce_frac = 0.5,
};

/* the losses, each defined in its own file (lib/loss_*.c): a new loss is one file, its name
 * here and in the list below */
extern const loss_kind loss_softcon, loss_contrastive, loss_vib, loss_proto, loss_spe;
extern const loss_kind loss_triplet, loss_hetriplet;
extern const loss_kind loss_fstat;
extern const loss_kind loss_sampled_softmax, loss_snm, loss_cesoftmax, loss_cenm, loss_cemargin;
extern const loss_kind loss_mls;

const loss_kind *const loss_kinds[] = {
    &loss_softcon,
    &loss_contrastive,
    &loss_vib,
    &loss_proto,
    &loss_spe,
    &loss_triplet,
    &loss_hetriplet,
    &loss_fstat,
    &loss_sampled_softmax,
    &loss_snm,
    &loss_cesoftmax,
    &loss_cenm,
    &loss_cemargin,
    &loss_mls,
    NULL,
};

int loss_learns_match(const loss_kind *L)
{
    return L->nparams >= 2 && L->param_names && !strcmp(L->param_names[0], "match.a_raw");
}

const loss_kind *loss_find(const char *name)
{
    if (!name)
        return NULL;
    for (int i = 0; loss_kinds[i]; i++)
        if (!strcmp(loss_kinds[i]->name, name))
            return loss_kinds[i];
    return NULL;
}

const char *loss_default_name(int stochastic) { return stochastic ? loss_vib.name : loss_softcon.name; }

const char *loss_owners(int bit, char *buf, size_t n)
{
    int count = 0, k = 0;
    for (int i = 0; loss_kinds[i]; i++)
        count += (loss_kinds[i]->options & bit) != 0;
    buf[0] = 0;
    for (int i = 0; loss_kinds[i]; i++) {
        if (!(loss_kinds[i]->options & bit))
            continue;
        size_t used = strlen(buf);
        snprintf(buf + used, n - used, "%s%s", k == 0 ? "" : k == count - 1 ? " and " : ", ", loss_kinds[i]->name);
        k++;
    }
    return buf;
}

const char *loss_batch_name(int kind)
{
    switch (kind) {
    case LOSS_PAIRS: return "pairbatch";
    case LOSS_GROUPS: return "groupbatch";
    case LOSS_EPISODES: return "episodes";
    }
    return "?";
}
