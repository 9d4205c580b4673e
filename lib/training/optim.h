/* optim: Adam and SGD with momentum over one flat parameter block.
 * The state (m, v or velocity, and the step count) is plain arrays owned by the optimizer, so a
 * checkpoint saves and restores it exactly.
 *
 *   optim *o = optim_create(OPTIM_ADAM, n, 1e-3);     // lr; betas 0.9, 0.999, eps 1e-8
 *   optim_step(o, params, grads);                     // t += 1, update params in place
 */
#ifndef HEDGE_OPTIM_H
#define HEDGE_OPTIM_H
#include <stddef.h>
#include <stdint.h>

enum { OPTIM_ADAM = 0, OPTIM_SGD = 1 };

typedef struct {
    int kind;
    size_t n;
    double lr, beta1, beta2, eps;  /* Adam */
    double momentum;               /* SGD (0.9 by default) */
    int64_t t;                     /* steps taken */
    float *m, *v;                  /* Adam moments; SGD uses m as velocity; owned, n each */
} optim;

/* The learning-rate schedule: a function of the step only, so a resumed run follows it exactly.
 * Linear warm-up from lr / warmup to lr over the first `warmup` steps, then constant (the
 * paper's recipe: warmup 0, DECAY_NONE) or decayed to lr * end_frac at step `steps`, by a
 * cosine (DECAY_COSINE) or linearly (DECAY_LINEAR), or a tenth of it from each of the steps at[]
 * on (DECAY_STEPS, train --lr-steps: PFE's and the face losses' step schedule; 0-based steps, so
 * --lr-steps 1000 trains steps 0 to 999 at lr and step 1000 on at lr / 10). */
enum { DECAY_NONE = 0, DECAY_COSINE = 1, DECAY_LINEAR = 2, DECAY_STEPS = 3 };
#define LR_MAX_STEPS 8
typedef struct {
    double lr;           /* the peak (base) rate */
    int64_t warmup;      /* steps of linear warm-up */
    int decay;           /* DECAY_* */
    double end_frac;     /* the last step's rate, as a fraction of lr */
    int64_t steps;       /* the length of the run: where the decay ends */
    int nat;             /* DECAY_STEPS: the steps where the rate falls tenfold, ascending */
    int64_t at[LR_MAX_STEPS];
} lr_schedule;
/* "1000,2000" (ascending steps >= 1, at most LR_MAX_STEPS) into at: their count, or -1 */
int lr_steps_parse(const char *text, int64_t *at);
/* at as lr_steps_parse takes it, into buf */
const char *lr_steps_format(const int64_t *at, int nat, char *buf, size_t n);
/* the rate of step s (0-based: the step being taken) */
double lr_at(const lr_schedule *sc, int64_t s);
const char *decay_name(int decay);   /* "none", "cosine", "linear", "steps" */
int decay_parse(const char *name);   /* -1 if unknown */

/* train --recipe NAME: a named schedule, written once here for every pipeline (docs/hib.md,
 * "Recipes"); what the command line gives besides (--lr, --warmup, ...) wins over it.
 *   paper  Adam 1e-3, constant: train's own defaults (the HIB paper's)
 *   fast   peak 3e-3, warm-up over the first 1/20 of the steps, cosine decay to 1/100 of the
 *          peak at the last step (chosen on the validation split for a two-core budget) */
typedef struct {
    const char *name;
    double lr;           /* the peak; 0: train's default */
    int64_t warmup_div;  /* warm-up steps = steps / warmup_div; 0: none */
    int decay;
    double end_frac;
} lr_recipe;
const lr_recipe *lr_recipe_find(const char *name); /* NULL if unknown */
/* recipe r's schedule for a run of `steps` into what the command line did not give (given:
 * RECIPE_* bits); r NULL: nothing */
enum { RECIPE_LR = 1, RECIPE_WARMUP = 2, RECIPE_DECAY = 4, RECIPE_END = 8 };
void lr_recipe_apply(const lr_recipe *r, long steps, int given, double *lr, long *warmup, int *decay, double *end);
extern const lr_recipe lr_recipes[];               /* ending with {NULL} */

optim *optim_create(int kind, size_t n, double lr);
void optim_free(optim *o);
void optim_step(optim *o, float *params, const float *grads);

#endif
