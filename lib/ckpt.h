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

typedef struct {
    model_config mc;
    char loss[32];
    loss_config lc;
    int optim_kind;
    double lr;
    int64_t step, steps;
    uint64_t seed;
    int batch_images;
} ckpt_info;

/* argc/argv: provenance of the training run; input: header of the batch stream (may be NULL) */
void ckpt_save(const char *path, const ckpt_info *ci, const model *m, const optim *o, int argc,
               char **argv, const stream_header *input);
/* Loads the model (allocated for maxbatch images); *o (if o != NULL) gets the optimizer state;
 * *header (if header != NULL) gets a copy of the checkpoint's stream header (for lineage). */
model *ckpt_load(const char *path, ckpt_info *ci, optim **o, int maxbatch, stream_header **header);
/* a = softplus(a_raw), b of the match probability stored in the model's extra parameters
 * (1, 0 when the loss has none) */
void ckpt_match_ab(const model *m, double *a, double *b);

#endif
