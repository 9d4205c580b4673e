/* loss: the registry of training losses and their shared defaults. A new loss defines its
 * `const loss_kind` in its own file and is listed once in loss_kinds[] below.
 *
 * Defaults: K = 8 and beta = 1e-4 as in the paper; margin M = 1 for the hard-margin loss
 * (appendix B sweeps M; 1 is a common middle value). The match probability starts at a = 1,
 * b = 0: p = sigmoid(-d), i.e. 0.5 at distance 0 and falling off on the unit scale of a freshly
 * initialised network's embeddings, with gradients of moderate size for every pair; the paper
 * learns a and b and does not give their initial values (a is stored as a_raw = softplus^-1(a)).
 */
#include "loss.h"

#include <string.h>

#include "loss_util.h"

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
};

const loss_kind *const loss_kinds[] = {
    &loss_softcon,
    &loss_contrastive,
    &loss_vib,
    &loss_proto,
    &loss_spe,
    &loss_triplet,
    &loss_hetriplet,
    &loss_fstat,
    NULL,
};

const loss_kind *loss_find(const char *name)
{
    if (!name)
        return NULL;
    for (int i = 0; loss_kinds[i]; i++)
        if (!strcmp(loss_kinds[i]->name, name))
            return loss_kinds[i];
    return NULL;
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
