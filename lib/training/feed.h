/* feed: the records of a batch stream turned into the input of one training step. It knows the
 * three batch kinds of `batcher` (formats/stream.md):
 *
 *   pairbatch  (LOSS_PAIRS)    image1, image2, class1, class2, match: B pairs; the images are
 *                              laid out as the B first images, then the B second ones, and pair
 *                              k is (k, B + k)
 *   groupbatch (LOSS_GROUPS)   image, class: P x K images, class-major, as they come
 *   episodes   (LOSS_EPISODES) image, class, query: support and query images, as they come
 *
 * so that `train` and the losses never copy fields by hand, and a new loss that takes one of
 * these kinds needs no change to `train`. The images are uint8 [H, W] (one channel) or
 * [C, H, W] (channel-major, e.g. the L-shapes' [3, 64, 64]), of a size the network takes
 * (model_check_input); their geometry is what `train` builds the model for. A batch stream
 * made from a `features` stream has `features1`, `features2` or `features` (float32 [F]) in
 * place of the image fields: f.features is 1 and f.inputs holds feature vectors.
 *
 * Ownership: a feed owns its buffers (sized for the largest batch the header announces) and
 * points the loss_input it fills into them; they stay valid until the next feed_next or
 * feed_free.
 *
 *   feed f;
 *   feed_open(&f, header);                      // dies on a kind or field it cannot use
 *   if (!(L->batches & f.kind)) die(...);
 *   while (stream_read(in, &rec)) {
 *       loss_input li;
 *       int n = feed_next(&f, &rec, in->name, in->count - 1, &li);  // f.inputs: n items; li: cls, pairs, query
 *       model_forward(m, f.inputs, n, mu, var); li.mu = mu; li.var = var; li.C = C; li.D = D;
 *       ...
 *   }
 *   feed_free(&f);
 */
#ifndef HEDGE_FEED_H
#define HEDGE_FEED_H
#include <stdint.h>

#include "loss.h"
#include "model.h"
#include "stream.h"

typedef struct {
    int kind;          /* LOSS_PAIRS, LOSS_GROUPS or LOSS_EPISODES */
    int features;      /* 1: the items are feature vectors (float32 [nfeatures]), 0: images */
    int nfeatures;
    int mean_dims;     /* features: the last mean_dims of each vector are a frozen mean (meta mean_dims) */
    int channels, height, width;  /* of the images */
    int digits;        /* N when they are 1 x 28 x 28N (N-digit MNIST), else 0 */
    size_t item_bytes; /* channels x height x width, or 4 nfeatures */
    int maxbatch;      /* images per record at most, from the header */
    int ways, shots, queries;  /* episodes: classes, support and queries per class (meta) */
    /* field indices: image (image1, or features, features1), image2 (features2), class
     * (class1), class2, match, query; -1 if none */
    int f_img, f_img2, f_cls, f_cls2, f_match, f_query;
    uint8_t *inputs;   /* (maxbatch, channels, height, width) bytes or (maxbatch, nfeatures) floats */
    int32_t *cls, *pa, *pb;
    uint8_t *match, *query;
    /* the stream's class list (meta classes, ascending; NULL without one), nclasses of them, and
     * with feed_rows on, each item's row in it (li->row) */
    int32_t *classes, *rows;
    int nclasses, want_rows;
} feed;

void feed_open(feed *f, const stream_header *h);
/* the items of record rec into f->inputs; returns their number n and fills li (n, cls and,
 * by kind, the pairs or the query flags; mu, var, C and D are the caller's). Dies on a record
 * larger than the header announced, and on a feature that is not finite, naming the stream
 * (name) and the record's place in it (index, from 0). */
int feed_next(feed *f, const stream_record *rec, const char *name, long long index, loss_input *li);
void feed_free(feed *f);
/* on: feed_next gives each item's place in the class list (li->row, li->classes), for a loss
 * with class weights; NULL, or what is wrong: the stream has no class list */
const char *feed_rows(feed *f);
/* feed_rows for a resumed run whose loss has nclasses rows of class weights: NULL, or what is
 * wrong: the stream's class list is not the one of the checkpoint's first input (ckpt: the
 * checkpoint's header) */
const char *feed_same_classes(feed *f, const stream_header *ckpt, int nclasses);
/* what the batches hold, for messages: "feature vectors of 64" or "1x28x56 images" (in a
 * thread-local buffer) */
const char *feed_items(const feed *f);
/* NULL if a model of configuration mc takes the feed's items (images of its size, or feature
 * vectors of its length; a size of 0 in mc is not checked), else what is wrong (in a
 * thread-local buffer) */
const char *feed_fits(const feed *f, const model_config *mc);
/* the input side of a new model's configuration (head, C, D, query set): its body when
 * mc->body < 0 (conv for images, linear for features), the images' geometry or the features'
 * length, D = the features for a pfe head (D_given: -D was given, and must agree); NULL when
 * the model can be built (model_check), else what is wrong */
const char *feed_model_input(const feed *f, model_config *mc, int D_given);
/* the batcher command that makes each kind in a bit set, for messages: "batcher -m pairs" ... */
const char *feed_batcher_mode(int kinds);

#endif
