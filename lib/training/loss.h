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
#include <stddef.h>
#include <stdint.h>

#include "rng.h"

/* the batch kinds a loss may take (loss_kind.batches, a bit set); lib/training/feed.h turns the records
 * of each kind into a loss_input */
enum {
    LOSS_PAIRS = 1,    /* pairbatch (batcher -m pairs): npairs pairs with their match labels */
    LOSS_GROUPS = 2,   /* groupbatch (batcher -m pk): P classes x K images, classes in cls */
    LOSS_EPISODES = 4, /* episodes (batcher -m episodes): support and query images, query[] */
};

/* the settings a loss owns (loss_kind.options, a bit set): train refuses the options of a bit on a
 * run whose loss does not own it, naming the losses that do (loss_owners), and a checkpoint
 * stores the keys of its loss's bits only (formats/checkpoint.md) */
enum {
    LOSS_OPT_SPE = 1,      /* --se2-0, --sampler; keys gamma0, sampler */
    LOSS_OPT_TRIPLET = 2,  /* --triplet, --mining; keys triplet, mining */
    LOSS_OPT_CE = 4,       /* --ce-scale0; keys ce_scale0, ce_topk, ce_frac */
    LOSS_OPT_CE_TOPK = 8,  /* --ce-topk */
    LOSS_OPT_CE_FRAC = 16, /* --ce-frac */
    LOSS_OPT_FSTAT = 32,   /* --fstat-dims; key fstat_dims */
};

typedef struct {
    int K;          /* samples per input (VIB), 8; samples per query (SPE), 1 */
    double beta;    /* KL weight (VIB), 1e-4 */
    double margin;  /* M of the hard-margin contrastive loss (Eq. 1), 1.0 */
    double a0, b0;  /* initial a (> 0) and b of the match probability */
    double gamma0;  /* SPE: initial gamma, s_e^2 = softplus(gamma) (train fills it in) */
    int sampler;    /* SPE: LOSS_SAMPLER_INTERSECTION (training default) or LOSS_SAMPLER_NAIVE */
    int triplet_form; /* triplet: LOSS_TRIPLET_SOFT (softplus, default) or LOSS_TRIPLET_HINGE (margin) */
    int mining;     /* triplet: LOSS_MINING_SEMIHARD (default), _HARD (batch-hard) or _ALL */
    int fstat_dims; /* fstat: d, the best-separated dimensions per class pair; 0 (default): all D */
    double ce_scale0; /* two-tower losses: the initial scale of the cosine scores (learned) */
    int ce_topk;    /* snm: the hardest negatives per query */
    double ce_frac; /* cenm: the fraction of the batch's non-matching pairs kept (0.5) */
} loss_config;
enum { LOSS_SAMPLER_INTERSECTION = 0, LOSS_SAMPLER_NAIVE = 1 };
enum { LOSS_TRIPLET_SOFT = 0, LOSS_TRIPLET_HINGE = 1 };
enum { LOSS_MINING_ALL = 0, LOSS_MINING_HARD = 1, LOSS_MINING_SEMIHARD = 2 };
/* triplet settings by name ("soft", "hinge"; "all", "hard", "semihard"): parse returns -1 for
 * an unknown name */
const char *loss_triplet_form_name(int form);
const char *loss_mining_name(int mining);
int loss_triplet_form_parse(const char *s);
int loss_mining_parse(const char *s);
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
    int default_K;          /* K when the user gives none (0: loss_defaults.K) */
    int max_C;              /* mixture components per image it takes at most (0: any) */
    int nparams;            /* learnable parameters of the loss itself */
    const char *const *param_names;
    void (*init_params)(const loss_config *cfg, float *params);
    /* returns the loss; writes dmu and dvar (dvar only when var != NULL) and ADDS to dparams */
    double (*forward_backward)(const loss_config *cfg, const loss_input *in, const float *params,
                               float *dparams, float *dmu, float *dvar, rng *r, loss_stats *st);
    int options;            /* the LOSS_OPT_* settings it owns */
    /* optional: the settings of a new run this loss derives or checks. train calls it with the
     * options given applied to loss_defaults, except that margin < 0, fstat_dims = 0 and gamma0
     * NaN mean "not given"; D is the embedding size, shots the support images per class of an
     * episode stream (0 otherwise). It fills what it derives and returns NULL, or says what is
     * wrong (train's misuse). What is still unset after it gets loss_defaults' value. */
    const char *(*settle)(loss_config *cfg, int D, int shots);
};

const loss_kind *loss_find(const char *name);
/* 1 when the loss learns a match probability (its parameters match.a_raw, match.b: softcon, vib) */
int loss_learns_match(const loss_kind *L);
/* the loss a run trains without --loss: softcon for point embeddings, vib for stochastic ones */
const char *loss_default_name(int stochastic);
/* the losses owning the settings of bit, as text for a message: "spe", "triplet and hetriplet",
 * "a, b and c" (truncated to fit n bytes) */
const char *loss_owners(int bit, char *buf, size_t n);
/* "pairbatch", "groupbatch" or "episodes" for one LOSS_* bit */
const char *loss_batch_name(int kind);
/* NULL-terminated list of all losses, for usage texts */
extern const loss_kind *const loss_kinds[];

#endif
