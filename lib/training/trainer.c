/* trainer: a training run's step and checkpoints (lib/training/trainer.h) */
#include "trainer.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model_query.h"
#include "rng.h"
#include "util.h"

void trainer_init(trainer *t, model *m, optim *o, const loss_kind *L, ckpt_info *ci, int maxbatch)
{
    size_t outs = (size_t)maxbatch * ci->mc.C * ci->mc.D * sizeof(float);
    int stoch = ci->mc.head != HEAD_POINT;
    *t = (trainer){.m = m, .o = o, .L = L, .ci = ci, .between_steps = 1, .first_step = ci->step, .saved_step = -1,
                   .mu = ealloc_aligned(outs), .dmu = ealloc_aligned(outs),
                   .var = stoch ? ealloc_aligned(outs) : NULL, .dvar = stoch ? ealloc_aligned(outs) : NULL};
    if (ci->mc.ensemble) {
        t->emu = ealloc_aligned(outs / ci->mc.C);
        t->edmu = ealloc_aligned(outs / ci->mc.C);
    }
    if (ci->mc.query) {
        size_t qouts = (size_t)maxbatch * ci->mc.D * sizeof(float);
        t->qdigits = emalloc((size_t)maxbatch * ci->mc.digits);
        t->qmu = ealloc_aligned(qouts);
        t->dqmu = ealloc_aligned(qouts);
    }
}

void trainer_provenance(trainer *t, int argc, char **argv, const stream_header *resumed, const stream_header *input,
                        trainlog *log)
{
    t->argc = argc;
    t->argv = argv;
    if (resumed) {
        t->argc = resumed->nargs + 1;
        t->argv = emalloc((size_t)(t->argc + 1) * sizeof *t->argv);
        t->argv[0] = argv[0];
        for (int i = 0; i < resumed->nargs; i++)
            t->argv[i + 1] = resumed->args[i];
        t->argv[t->argc] = NULL;
        t->own_argv = 1;
    }
    t->input = input;
    t->log = log;
}

/* A step can overflow with a finite loss (gradients of inputs of a huge scale, too large a rate:
 * Adam's v, the square of a gradient, reaches inf first): the parameters and the optimizer's
 * state are checked every TRAINER_CHECK_EVERY steps and before every save, and a run whose numbers
 * are no longer finite stops without saving them (no later step could use them; embed and train
 * --resume refuse such a checkpoint). */
static void check_finite(trainer *t)
{
    const float *blocks[3] = {t->m->params, t->o->m, t->o->v};
    const char *names[3] = {"a parameter", "optim.m", "optim.v"};
    size_t n[3] = {t->m->nparams, t->o->n, t->o->v ? t->o->n : 0};
    for (int b = 0; b < 3; b++)
        for (size_t i = 0; i < n[b]; i++)
            if (!isfinite(blocks[b][i])) {
                t->between_steps = 0; /* the guard saves nothing */
                die("the model diverged by step %lld: %s (index %zu) is %g; stopping without saving it; %s. "
                    "A smaller --lr, or inputs of a smaller scale?",
                    (long long)t->ci->step, names[b], i, (double)blocks[b][i], trainer_last_good(t));
            }
}

/* the step's loss and its gradients into t->dmu, t->dvar and the loss's parameters: one call, or
 * for an ensemble (mc.ensemble M) one call per member on that member's means alone, with its own
 * draws (the rng stream also by the member), the gradients of their sum (each member learns as if
 * it were alone; the body takes all M), the mean of their values, nll and acc */
static double step_loss(trainer *t, loss_input *li, loss_stats *st)
{
    model *m = t->m;
    ckpt_info *ci = t->ci;
    int M = ci->mc.ensemble, D = ci->mc.D, n = li->n;
    rng r;
    rng_init(&r, ci->seed, RNG_STREAM('l', 'o', 's', 's') ^ (uint64_t)ci->step);
    if (!M)
        return t->L->forward_backward(&ci->lc, li, m->params + m->nnet, m->grads + m->nnet, t->dmu, t->dvar, &r, st);
    double sum = 0, nll = 0, acc = 0;
    li->C = 1, li->mu = t->emu, li->var = NULL;
    for (int k = 0; k < M; k++) {
        for (int i = 0; i < n; i++)
            memcpy(t->emu + (size_t)i * D, t->mu + ((size_t)i * M + k) * D, (size_t)D * sizeof *t->emu);
        loss_stats one;
        if (k)
            rng_init(&r, ci->seed,
                     RNG_STREAM('l', 'o', 's', 's') ^ (uint64_t)ci->step ^ (uint64_t)k * 0x9e3779b97f4a7c15ULL);
        double v = t->L->forward_backward(&ci->lc, li, m->params + m->nnet, m->grads + m->nnet, t->edmu, NULL, &r,
                                          st ? &one : NULL);
        if (!isfinite(v))
            return v;
        for (int i = 0; i < n; i++)
            memcpy(t->dmu + ((size_t)i * M + k) * D, t->edmu + (size_t)i * D, (size_t)D * sizeof *t->dmu);
        sum += v;
        if (st) {
            if (!k)
                *st = one;
            nll += one.nll, acc += one.acc;
        }
    }
    if (st)
        st->nll = nll / M, st->acc = acc / M;
    return sum / M;
}

double trainer_step(trainer *t, const void *input, loss_input *li, loss_stats *st)
{
    model *m = t->m;
    ckpt_info *ci = t->ci;
    t->between_steps = 0; /* parameters change from here until the step is complete */
    /* dropout's masks (cfg.dropout > 0): the step's own, by the run's seed */
    model_dropout(m, 1, ci->seed ^ RNG_STREAM('d', 'r', 'o', 'p') ^ (uint64_t)ci->step * 0x9e3779b97f4a7c15ULL, 0);
    m->bn_train = 1; /* batch normalisation by the batch, its running statistics updated */
    model_forward(m, input, li->n, t->mu, t->var);
    li->C = ci->mc.C;
    li->D = ci->mc.D;
    li->mu = t->mu;
    li->var = t->var;
    li->pool = model_pool(m);
    if (t->qmu) { /* query i: the digit string of image i's class */
        int64_t top = 1;
        for (int p = 0; p < ci->mc.digits; p++)
            top *= 10;
        for (int i = 0; i < li->n; i++) {
            if (li->cls[i] < 0 || li->cls[i] >= top)
                die("class %d is not a %d-digit number: the query tower cannot spell it", (int)li->cls[i],
                    ci->mc.digits);
            model_query_digits(ci->mc.digits, li->cls[i], t->qdigits + (size_t)i * ci->mc.digits);
        }
        model_query_forward(m, t->qdigits, li->n, t->qmu);
        li->qmu = t->qmu;
        li->dqmu = t->dqmu;
    }
    memset(m->grads, 0, m->nparams * sizeof(float));
    double lv = step_loss(t, li, st);
    if (!isfinite(lv))
        return lv;
    model_backward(m, t->dmu, t->dvar);
    if (t->qmu)
        model_query_backward(m, t->dqmu);
    lr_schedule sched = {.lr = ci->lr, .warmup = ci->warmup, .decay = ci->decay, .end_frac = ci->lr_end,
                         .steps = ci->steps, .nat = ci->nlr_steps};
    memcpy(sched.at, ci->lr_steps, sizeof sched.at);
    if (ci->wd > 0)
        model_weight_decay(m, ci->wd);
    t->o->lr = lr_at(&sched, ci->step);
    optim_step(t->o, m->params, m->grads);
    ci->step++;
    t->between_steps = 1;
    if (ci->step % TRAINER_CHECK_EVERY == 0)
        check_finite(t);
    return lv;
}

const char *trainer_last_good(const trainer *t)
{
    static char msg[4200];
    if (t->saved_step < 0)
        return "no checkpoint saved by this run";
    snprintf(msg, sizeof msg, "the last good checkpoint (step %lld) is %s", (long long)t->saved_step, t->saved_path);
    return msg;
}

static void save(trainer *t, const char *path, int snapshot)
{
    check_finite(t);
    int ok = t->between_steps;
    t->between_steps = 0; /* a save that dies must not be tried again by the guard */
    if (t->log)
        trainlog_sync(t->log);
    ckpt_save(path, t->ci, t->m, t->o, t->argc, t->argv, t->input);
    t->between_steps = ok;
    if (!snapshot) {
        t->saved_step = t->ci->step;
        t->saved_path = path;
    }
}

void trainer_save(trainer *t, const char *path) { save(t, path, 0); }

void trainer_snapshot(trainer *t, const char *out)
{
    char snap[4096];
    size_t n = strlen(out);
    int base = n > 5 && !strcmp(out + n - 5, ".ckpt") ? (int)n - 5 : (int)n;
    snprintf(snap, sizeof snap, "%.*s.step%09lld.ckpt", base, out, (long long)t->ci->step);
    save(t, snap, 1);
}

static trainer *guarded;
static const char *guarded_path;

static void guard_hook(void)
{
    trainer *t = guarded;
    if (t && t->ci->step == t->first_step) /* (a failed input before the first batch) */
        fprintf(stderr, "%s: no step trained: %s left as it was\n", util_prog, guarded_path);
    else if (t && t->between_steps) {
        t->between_steps = 0;
        trainer_save(t, guarded_path);
        fprintf(stderr, "%s: saved the state after step %lld to %s\n", util_prog, (long long)t->ci->step,
                guarded_path);
    }
}

void trainer_guard(trainer *t, const char *path)
{
    guarded = path ? t : NULL;
    guarded_path = path;
    util_die_hook = path ? guard_hook : NULL;
}

void trainer_free(trainer *t)
{
    free(t->mu);
    free(t->var);
    free(t->dmu);
    free(t->emu);
    free(t->edmu);
    free(t->dvar);
    free(t->qdigits);
    free(t->qmu);
    free(t->dqmu);
    if (t->own_argv)
        free(t->argv);
}
