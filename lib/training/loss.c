/* loss: the registry of training losses, the five settings every loss takes (loss_common) and
 * the functions over a loss's settings table. A new loss defines its `const loss_kind` and its
 * settings in its own file and is listed once in LOSSES below.
 *
 * Defaults: K = 8 and beta = 1e-4 as in the paper; margin M = 1 for the hard-margin loss
 * (appendix B sweeps M; 1 is a common middle value). The match probability starts at a = 1,
 * b = 0: p = sigmoid(-d), i.e. 0.5 at distance 0 and falling off on the unit scale of a freshly
 * initialised network's embeddings, with gradients of moderate size for every pair; the paper
 * learns a and b and does not give their initial values (a is stored as a_raw = softplus^-1(a)).
 */
#include "loss.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "util.h"

const setting loss_common[LOSS_NCOMMON] = {
    [LOSS_K] = {"K", "N", "K", SETTING_INT, 1, 1024, 8, NULL,
                "samples per input (vib) or per query (spe: 1 by default)"},
    [LOSS_BETA] = {"beta", "X", "beta", SETTING_REAL, 0, 1e6, 1e-4, NULL, "KL weight (vib)"},
    [LOSS_MARGIN] = {"margin", "M", "margin", SETTING_REAL, 0, 1e6, 1.0, NULL,
                     "margin of the hard contrastive loss and the triplet hinge; cemargin: the angular margin "
                     "m of L-Softmax, an integer 1..8 (2 by default)"},
    [LOSS_A0] = {"a0", "X", "a0", SETTING_REAL, 1e-6, 1e6, 1.0, NULL,
                 "initial a > 0 of the match probability sigmoid(-a d + b) (softcon, vib)"},
    [LOSS_B0] = {"b0", "X", "b0", SETTING_REAL, -1e6, 1e6, 0.0, NULL, "initial b of the match probability"},
};

/* the losses, each defined in its own file (lib/training/loss_*.c): a new loss is one file and one
 * line here */
#define LOSSES(X)                                                                                                \
    X(softcon)                                                                                                   \
    X(contrastive)                                                                                               \
    X(vib)                                                                                                       \
    X(proto)                                                                                                     \
    X(spe)                                                                                                       \
    X(triplet)                                                                                                   \
    X(hetriplet)                                                                                                 \
    X(fstat)                                                                                                     \
    X(sampled_softmax)                                                                                           \
    X(snm)                                                                                                       \
    X(cesoftmax)                                                                                                 \
    X(cenm)                                                                                                      \
    X(cemargin)                                                                                                  \
    X(mls)                                                                                                       \
    X(ms)                                                                                                        \
    X(cosface)                                                                                                   \
    X(arcface)                                                                                                   \
    X(proxynca)                                                                                                  \
    X(proxy_anchor)                                                                                               \
    X(dul_cls)                                                                                                   \
    X(losspred)                                                                                                  \
    X(scf)                                                                                                       \
    X(dul_rgs)                                                                                                   \
    X(vmf_fl)

#define LOSS_DECLARE(name) extern const loss_kind loss_##name;
#define LOSS_ENTRY(name) &loss_##name,
LOSSES(LOSS_DECLARE)
const loss_kind *const loss_kinds[] = {LOSSES(LOSS_ENTRY) NULL};

int loss_nsettings(const loss_kind *L) { return LOSS_NCOMMON + (L->settings ? L->nsettings : 0); }

const setting *loss_setting(const loss_kind *L, int i)
{
    if (i < 0 || i >= loss_nsettings(L))
        return NULL;
    return i < LOSS_NCOMMON ? &loss_common[i] : &L->settings[i - LOSS_NCOMMON];
}

int loss_setting_index(const loss_kind *L, const char *name)
{
    for (int i = 0; i < loss_nsettings(L); i++) {
        const setting *s = loss_setting(L, i);
        if (s->type != SETTING_NONE && ((s->option && !strcmp(s->option, name)) || (s->key && !strcmp(s->key, name))))
            return i;
    }
    return -1;
}

double loss_get(const loss_config *c, int i)
{
    switch (i) {
    case LOSS_K: return c->K;
    case LOSS_BETA: return c->beta;
    case LOSS_MARGIN: return c->margin;
    case LOSS_A0: return c->a0;
    case LOSS_B0: return c->b0;
    }
    return c->own[i - LOSS_NCOMMON];
}

void loss_put(loss_config *c, int i, double v)
{
    switch (i) {
    case LOSS_K: c->K = (int)v; return;
    case LOSS_BETA: c->beta = v; return;
    case LOSS_MARGIN: c->margin = v; return;
    case LOSS_A0: c->a0 = v; return;
    case LOSS_B0: c->b0 = v; return;
    }
    c->own[i - LOSS_NCOMMON] = v;
}

loss_config loss_config_new(const loss_kind *L)
{
    loss_config c = {0};
    if (L->settings && L->nsettings > LOSS_MAX_OWN)
        die("loss %s: %d settings, more than %d", L->name, L->nsettings, LOSS_MAX_OWN);
    for (int i = 0; i < loss_nsettings(L); i++)
        loss_put(&c, i, loss_setting(L, i)->def);
    if (L->default_K)
        c.K = L->default_K;
    return c;
}

int loss_option_index(const loss_kind *L, const char *option)
{
    for (int i = 0; i < loss_nsettings(L); i++) {
        const setting *s = loss_setting(L, i);
        if (s->type != SETTING_NONE && s->option && !strcmp(s->option, option))
            return i;
    }
    return -1;
}

static int index_of(const loss_kind *L, const char *name)
{
    int i = loss_setting_index(L, name);
    if (i < 0)
        die("loss %s has no setting '%s'", L->name, name);
    return i;
}

void loss_set(loss_config *c, const loss_kind *L, const char *name, double v)
{
    int i = index_of(L, name);
    loss_put(c, i, v);
    c->given |= 1u << i;
}

void loss_set_text(loss_config *c, const loss_kind *L, const char *name, const char *text)
{
    loss_set(c, L, name, setting_parse(loss_setting(L, index_of(L, name)), text));
}

double loss_value(const loss_config *c, const loss_kind *L, const char *name) { return loss_get(c, index_of(L, name)); }

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

const char *loss_owners(const char *option, char *buf, size_t n)
{
    int count = 0, k = 0;
    for (int i = 0; loss_kinds[i]; i++)
        count += loss_option_index(loss_kinds[i], option) >= 0;
    buf[0] = 0;
    for (int i = 0; loss_kinds[i]; i++) {
        if (loss_option_index(loss_kinds[i], option) < 0)
            continue;
        size_t used = strlen(buf);
        snprintf(buf + used, n - used, "%s%s", k == 0 ? "" : k == count - 1 ? " and " : ", ", loss_kinds[i]->name);
        k++;
    }
    return buf;
}

int loss_params(const loss_kind *L, int D, int classes, const char **names, int64_t *shapes)
{
    int n = 0;
    for (; n < L->nparams && n < LOSS_MAX_PARAMS - 1; n++) {
        names[n] = L->param_names[n];
        shapes[2 * n] = 1, shapes[2 * n + 1] = 0;
    }
    if (L->class_weights) {
        names[n] = L->class_weights;
        shapes[2 * n] = classes, shapes[2 * n + 1] = D;
        n++;
    }
    return n;
}

const char *loss_names(char *buf, size_t n)
{
    size_t used = 0;
    buf[0] = 0;
    for (int i = 0; loss_kinds[i] && used < n; i++)
        used += (size_t)snprintf(buf + used, n - used, "%s%s", i ? ", " : "", loss_kinds[i]->name);
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
