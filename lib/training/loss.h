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
 *   loss_config lc = loss_config_new(L); lc.K = 8; lc.beta = 1e-4;
 *   L->init_params(&lc, extra);                            // L->nparams floats
 *   double v = L->forward_backward(&lc, &in, extra, dextra, dmu, dvar, &r, &stats);
 */
#ifndef HEDGE_LOSS_H
#define HEDGE_LOSS_H
#include <stddef.h>
#include <stdint.h>

#include "rng.h"
#include "setting.h"

/* the batch kinds a loss may take (loss_kind.batches, a bit set); lib/training/feed.h turns the records
 * of each kind into a loss_input */
enum {
    LOSS_PAIRS = 1,    /* pairbatch (batcher -m pairs): npairs pairs with their match labels */
    LOSS_GROUPS = 2,   /* groupbatch (batcher -m pk): P classes x K images, classes in cls */
    LOSS_EPISODES = 4, /* episodes (batcher -m episodes): support and query images, query[] */
};

/* The settings of a loss (loss_config), each declared once in a table (lib/base/setting.h):
 * the five of the HIB paper's losses in loss_common[] (lib/training/loss.c), which every loss takes
 * and every checkpoint carries whatever its loss, then the loss's own, L->settings[] in its file.
 * Setting i of a loss (loss_setting) is loss_common[i] for i < LOSS_NCOMMON, else
 * L->settings[i - LOSS_NCOMMON]; its value is held in cfg->own[i - LOSS_NCOMMON] (the common
 * five in the named fields; a CHOICE as the index of its name). `train` makes its options from
 * the tables, the checkpoint stores the settings with a key in table order, and
 * `train --settings` lists them. */
enum { LOSS_K, LOSS_BETA, LOSS_MARGIN, LOSS_A0, LOSS_B0, LOSS_NCOMMON };
#define LOSS_MAX_OWN 8
typedef struct {
    int K;          /* samples per input (VIB), 8; samples per query (SPE), 1 */
    double beta;    /* KL weight (VIB), 1e-4 */
    double margin;  /* M of the hard-margin contrastive loss (Eq. 1) and the triplet hinge, 1.0 */
    double a0, b0;  /* initial a (> 0) and b of the match probability */
    double own[LOSS_MAX_OWN]; /* the loss's own settings, in the order of L->settings */
    unsigned given; /* bit i: setting i was given (train's options) or read (a checkpoint) */
} loss_config;
extern const setting loss_common[LOSS_NCOMMON];
/* 1 when setting i of cfg's loss was given; the index of the loss's own setting j */
#define LOSS_GIVEN(cfg, i) (((cfg)->given >> (i)) & 1u)
#define LOSS_OWN(j) (LOSS_NCOMMON + (j))

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
    /* episodes: query[i] = 1 for a query image, 0 for a support image (NULL otherwise) */
    const uint8_t *query;
    /* two-tower losses (needs_query): qmu (n, Dq) is the query tower's embedding of image i's
     * class (its digit string), unnormalised, Dq = D; the loss writes dL/dqmu into dqmu (same
     * shape) when dqmu is not NULL. NULL for every other loss. */
    const float *qmu;
    float *dqmu;
    /* workers the loss may hand its work to (lib/base/par.h; vib does), NULL: the caller alone; the
     * same bytes either way */
    struct par_pool *pool;
    /* losses with class weights (loss_kind.class_weights): item i's class is row row[i] of the
     * (classes, D) weight matrix, its place in the training stream's class list (feed.h) */
    const int32_t *row;
    int classes;
} loss_input;

typedef struct {
    double nll;       /* the data term, mean over pairs */
    double kl;        /* mean KL per image (VIB), 0 otherwise */
    double a, b;      /* current match-probability parameters (a after softplus) */
    double mean_var;  /* mean variance over the batch (0 for point) */
    double acc;       /* episodes: fraction of the queries classified right (NaN otherwise) */
    double se2;       /* SPE: s_e^2 (NaN otherwise) */
} loss_stats;

typedef struct loss_kind loss_kind;
struct loss_kind {
    const char *name;       /* "softcon", "contrastive", "vib", ... */
    const char *help;       /* one line for usage texts */
    int needs_var;          /* 1: needs a stochastic head (mog or iso); 0: point embeddings */
    const char *default_head; /* the head train builds without --head: NULL = mog if needs_var,
                               * else point; "iso" for hetriplet */
    int batches;            /* the batch kinds it takes: LOSS_PAIRS | LOSS_GROUPS | LOSS_EPISODES */
    int needs_query;        /* 1: a two-tower loss: train builds the query tower (lib/network/model.h) and
                             * fills qmu / dqmu; the images' head is point (needs_var 0) */
    int default_K;          /* K when the user gives none (0: loss_common[LOSS_K]'s, 8) */
    int max_C;              /* mixture components per image it takes at most (0: any) */
    int nparams;            /* learnable parameters of the loss itself */
    const char *const *param_names;
    /* or NULL: the name ("arcface.w") of a (classes, D) matrix of weights, a row per class of the
     * training stream (its meta classes), after the nparams scalars; train starts it Xavier
     * uniform (model_init_extra), the loss reads it at params + nparams and ADDS its gradient
     * at dparams + nparams, and the checkpoint keeps the class list (loss_classes) */
    const char *class_weights;
    void (*init_params)(const loss_config *cfg, float *params);
    /* returns the loss; writes dmu and dvar (dvar only when var != NULL) and ADDS to dparams */
    double (*forward_backward)(const loss_config *cfg, const loss_input *in, const float *params,
                               float *dparams, float *dmu, float *dvar, rng *r, loss_stats *st);
    const setting *settings; /* its own settings (NULL: none), nsettings of them; a slot of type
                              * SETTING_NONE is unused */
    int nsettings;
    /* optional: what a run derives from the settings given (cfg->given says which) and checks:
     * train calls it on a new run's settings, the checkpoint's reader on those it read. D is the
     * embedding size, shots the support images per class of an episode stream (0 otherwise).
     * NULL, or what is wrong (train's misuse) */
    const char *(*settle)(loss_config *cfg, int D, int shots);
};

const loss_kind *loss_find(const char *name);
/* 1 when the loss learns a match probability (its parameters match.a_raw, match.b: softcon, vib) */
int loss_learns_match(const loss_kind *L);
/* the loss a run trains without --loss: softcon for point embeddings, vib for stochastic ones */
const char *loss_default_name(int stochastic);
/* the settings of L: LOSS_NCOMMON + L->nsettings of them; setting i (NULL past the end) */
int loss_nsettings(const loss_kind *L);
const setting *loss_setting(const loss_kind *L, int i);
/* the index of L's setting of that option or key name ("ce-topk", "ce_topk"), -1 if none;
 * loss_option_index: of that option only (what train's command line may set) */
int loss_setting_index(const loss_kind *L, const char *name);
int loss_option_index(const loss_kind *L, const char *option);
/* the value of setting i */
double loss_get(const loss_config *cfg, int i);
void loss_put(loss_config *cfg, int i, double v);
/* L's settings at their defaults (NaN where derived), none given */
loss_config loss_config_new(const loss_kind *L);
/* the setting of that name set to v, or to the value of text as train's option takes it, and
 * marked given; die if L has no such setting (for callers that know the loss: tests, examples) */
void loss_set(loss_config *cfg, const loss_kind *L, const char *name, double v);
void loss_set_text(loss_config *cfg, const loss_kind *L, const char *name, const char *text);
double loss_value(const loss_config *cfg, const loss_kind *L, const char *name);
/* the losses with a setting of that option, as text for a message: "spe", "triplet and
 * hetriplet", "a, b and c" (truncated to fit n bytes) */
const char *loss_owners(const char *option, char *buf, size_t n);
/* the loss's parameters as model_create_shaped takes them: their number, names and shapes (the
 * scalars, then a (classes, D) class-weight matrix) into names and shapes (2 a parameter), which
 * hold LOSS_MAX_PARAMS */
#define LOSS_MAX_PARAMS 8
int loss_params(const loss_kind *L, int D, int classes, const char **names, int64_t *shapes);
/* "pairbatch", "groupbatch" or "episodes" for one LOSS_* bit */
const char *loss_batch_name(int kind);
/* the losses' names, "softcon, contrastive, ...", into buf */
const char *loss_names(char *buf, size_t n);
/* NULL-terminated list of all losses, for usage texts */
extern const loss_kind *const loss_kinds[];

#endif
