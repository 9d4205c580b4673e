/* trainer: one training run's state between steps, its step (forward, loss, backward, update) and
 * its checkpoints: the model, its optimizer, the loss, the checkpoint's settings (ckpt_info, whose
 * step counts the steps done) and the buffers of one batch.
 *
 * Checkpoints: trainer_save writes the run's checkpoint (lib/training/ckpt.h) after syncing the log, so
 * that a checkpoint is never ahead of its log; trainer_guard makes every die() between two steps
 * save it first (a bad record, a broken input), but not one inside a step, whose parameters are
 * half updated, nor one before the run's first step: a run that has trained no step writes
 * nothing (the checkpoint already at the path, a trained one perhaps, stays). The provenance of
 * every checkpoint is the command that started the run.
 *
 * Ownership: a trainer owns its batch buffers; the model, optimizer, settings, log, provenance and
 * input header are the caller's and must outlive it. One trainer can be guarded at a time.
 *
 *   trainer t;
 *   trainer_init(&t, m, o, L, &ci, f.maxbatch);
 *   trainer_provenance(&t, argc, argv, resumed_header, in->header, &log);
 *   trainer_guard(&t, path);
 *   while (...) { loss_input li; feed_next(&f, &rec, &li);
 *                 double loss = trainer_step(&t, f.inputs, &li, &st); ... }
 *   trainer_guard(&t, NULL);
 *   trainer_save(&t, path);
 *   trainer_free(&t);
 */
#ifndef HEDGE_TRAINER_H
#define HEDGE_TRAINER_H
#include <stdint.h>

#include "ckpt.h"
#include "loss.h"
#include "model.h"
#include "optim.h"
#include "stream.h"
#include "trainlog.h"

typedef struct {
    model *m;
    optim *o;
    const loss_kind *L;
    ckpt_info *ci;
    /* checkpoints: the command that started the run, the input's header, the log to sync */
    int argc;
    char **argv;
    int own_argv;      /* 1: argv was made for a resumed run (its strings are the header's) */
    const stream_header *input;
    trainlog *log;
    int between_steps; /* 1: the parameters are a whole step's (the guard may save them) */
    int64_t first_step; /* ci->step when the run began: ci->step == first_step, no step trained */
    int64_t saved_step;     /* this run's last checkpoint (a snapshot aside): its step, -1 before */
    const char *saved_path; /* ... and its path (the caller's string), NULL before */
    /* (maxbatch, C, D) the embeddings and their gradients; var, dvar only for a stochastic head */
    float *mu, *var, *dmu, *dvar;
    float *emu, *edmu; /* an ensemble (mc.ensemble): (maxbatch, D) one member's means and gradients */
    /* two-tower losses: the digits of each image's class (maxbatch, N), the query embeddings and
     * their gradients (maxbatch, D) */
    uint8_t *qdigits;
    float *qmu, *dqmu;
} trainer;

void trainer_init(trainer *t, model *m, optim *o, const loss_kind *L, ckpt_info *ci, int maxbatch);
/* what every checkpoint records: the command that started the run, which is argc, argv for a new
 * run (resumed NULL) and, for a resumed one, argv[0] with the arguments of the provenance of the
 * checkpoint's header resumed (kept by the caller while t lives); input, the batch stream's header;
 * log, the log to sync before each save (may be NULL) */
void trainer_provenance(trainer *t, int argc, char **argv, const stream_header *resumed, const stream_header *input,
                        trainlog *log);
/* forward, loss, backward, update of the batch: input (li->n images or feature vectors) from the feed, li its loss
 * input (the embeddings are filled in here); then ci->step counts it. Returns the loss; not
 * finite: nothing was updated, and the guard does not save any more. */
double trainer_step(trainer *t, const void *input, loss_input *li, loss_stats *st);
/* the parameters and the optimizer's state are checked every TRAINER_CHECK_EVERY steps and
 * before each save: a number no longer finite (a run diverged with a finite loss) ends the
 * program with one line, and nothing is saved (the guard's save neither) */
#define TRAINER_CHECK_EVERY 50
/* the checkpoint at path now (the log synced first) */
void trainer_save(trainer *t, const char *path);
/* what a run that stops on a diverged model says of its checkpoint: "the last good checkpoint
 * (step S) is PATH", or "no checkpoint saved by this run" (a static buffer) */
const char *trainer_last_good(const trainer *t);
/* a snapshot beside out: out without .ckpt, then .stepSSSSSSSSS.ckpt */
void trainer_snapshot(trainer *t, const char *out);
/* from now on a die() between steps saves the checkpoint at path first and says so on stderr
 * (before the run's first step it saves nothing and says that); NULL: no longer */
void trainer_guard(trainer *t, const char *path);
void trainer_free(trainer *t);
#endif
