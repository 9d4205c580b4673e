/* ckpt: model checkpoints (formats/checkpoint.md): a one-record hedge stream of kind
 * "checkpoint" with the architecture, loss and optimizer settings in the header and every
 * parameter tensor plus the optimizer state in the record.
 *
 *   ckpt_info ci = {...};                                   // filled by train
 *   ckpt_save("model.ckpt", &ci, m, opt, batch_header);      // atomic: tmp + fsync + rename
 *   model *m = ckpt_load("model.ckpt", &ci, &opt, 512, &lineage);  // dies with a message
 */
#ifndef HEDGE_CKPT_H
#define HEDGE_CKPT_H
#include <stdint.h>

#include "loss.h"
#include "model.h"
#include "optim.h"
#include "stream.h"

#define CKPT_VERSION 1
/* arch: the conv body (the HIB network: digits or channels, height, width), or any body of
 * the registry (lib/network/body.h: body, features) */
#define CKPT_ARCH_CONV "hib-cnn-1"
#define CKPT_ARCH_BODY "hedge-body-1"
#define CKPT_RESUMED 2048
#define CKPT_SAVE_EVERY 1000 /* train's default --save-every */

typedef struct {
    model_config mc;
    char loss[32];
    loss_config lc;
    int optim_kind;
    double lr;           /* the base (peak) rate of the schedule */
    int64_t warmup;      /* the learning-rate schedule (lib/training/optim.h lr_schedule) */
    int decay;
    double lr_end;       /* the last step's rate as a fraction of lr */
    int nlr_steps;       /* decay DECAY_STEPS: the steps where the rate falls tenfold */
    int64_t lr_steps[LR_MAX_STEPS];
    double wd;           /* weight decay: wd x each weight (NAME.w) added to its gradient; 0: none */
    int64_t step, steps;
    uint64_t seed;
    int batch_images;
    int nclasses;           /* a loss with class weights: the rows, the training stream's classes */
    int64_t save_every;     /* a checkpoint every N steps (train's default 1000) */
    int64_t snapshot_every; /* a kept copy every N steps, 0: none */
    /* provenance of a resumed run: one line per resume, "step S: ARGS" (the step it resumed
     * at and train's arguments then); the header's provenance keeps the command that started
     * the run. Empty: never resumed. At most CKPT_RESUMED - 1 bytes: the oldest lines give way. */
    char resumed[CKPT_RESUMED];
    /* what computed it (provenance, not configuration): the OpenBLAS kernel and the forward
     * code path of every run that trained it, comma-separated when a resume changed them */
    char blas_core[96], code_path[32];
} ckpt_info;

/* argc/argv: provenance of the training run (a resumed run gives the command that started it,
 * and ci->resumed says how it was resumed); input: header of the batch stream (may be NULL).
 * Written to a temp file beside PATH, then renamed (util.h atomic_open): a save that is killed
 * leaves PATH intact, and the next save removes the temp file a save killed with -9 left; saves
 * of several runs into one PATH at once leave one run's whole checkpoint. Dies naming PATH if it
 * cannot be written. */
void ckpt_save(const char *path, const ckpt_info *ci, const model *m, const optim *o, int argc,
               char **argv, const stream_header *input);
/* what a deep ensemble (mc->ensemble M > 0) needs of its loss, or NULL: one that learns no
 * parameter of its own (no scalar parameters, no class weights: M members sharing them would
 * learn one set), on point embeddings; a message otherwise (train and ckpt_load die with it) */
struct loss_kind;
const char *ckpt_ensemble_check(const struct loss_kind *L, const model_config *mc);
/* Appends "step S: ARGS" (argv after the program name, quoted where a shell would need it) to
 * ci->resumed, dropping its oldest lines if it would not fit. */
void ckpt_note_resume(ckpt_info *ci, int argc, char **argv);
/* Records the kernel and code path this process computes with in ci (appended to those of
 * the runs before it when they differ); returns 1 if they differ from what ci held. */
int ckpt_note_compute(ckpt_info *ci);
/* Loads the model (allocated for maxbatch images); *o (if o != NULL) gets the optimizer state.
 * Every tensor is checked against the model the header describes (dtype, shape, count; no
 * missing or extra tensor; every number finite, or it dies naming the tensor) and every setting
 * for range, before anything is used;
 * *header (if header != NULL) gets a copy of the checkpoint's stream header (for lineage). */
model *ckpt_load(const char *path, ckpt_info *ci, optim **o, int maxbatch, stream_header **header);
/* the field of stream header ih that model m (loaded from ckpt, named in messages) takes: the
 * `image` of an `images` stream of its size (conv body), or the `features` of a `features`
 * stream of its length (features bodies); dies naming what was found and what was expected */
int ckpt_input_field(const model *m, const stream_header *ih, const char *ckpt);
/* the step of the checkpoint at path, read from its header only; -1 when path holds none: no
 * such file, an empty one, not a regular file (a device, a FIFO: never read), a stream of
 * another kind or one without an integer step. Dies, naming path, on a file that is not a
 * hedge stream (train --resume looks at its output with it before any work) */
int64_t ckpt_step_at(const char *path);
/* 1 with a = softplus(a_raw), b of the match probability the loss learned (the model's extra
 * parameters match.a_raw, match.b: softcon, vib); 0 when the loss learns none, a and b NaN */
int ckpt_match_ab(const model *m, double *a, double *b);
/* SPE's s_e^2 = softplus(gamma) of the loss parameter spe.gamma; NaN when the loss has none */
double ckpt_spe_se2(const model *m);

#endif
