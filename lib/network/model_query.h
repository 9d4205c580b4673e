/* model_query: the query tower of the two-tower models (Cross-Example Softmax), beside the image
 * network of lib/network/model.h, whose parameter block holds its weights (views "query.*"). It uses the
 * model; the model does not use it (model_free frees its activations through m->qfree). */
#ifndef HEDGE_MODEL_QUERY_H
#define HEDGE_MODEL_QUERY_H
#include <stdint.h>

#include "model.h"

/* The query tower (cfg.query): a class of N-digit MNIST is the number
 * its digits spell, and the tower embeds that digit string, so it can embed numbers it never
 * saw in training (the unseen split: zero-shot retrieval).
 *   e = concat over positions p of E[p][digit_p]    (N x MODEL_QUERY_E: one vector per value and
 *                                                    position, "query.emb" (N, 10, E))
 *   h = ReLU(W1 e + b1)                              (MODEL_QUERY_H; "query.w1" (H, N E), "query.b1")
 *   q = W2 h + b2                                    (D; "query.w2" (D, H), "query.b2")
 * q is unnormalised: the losses normalise it (and the image embedding) for cosine scores.
 * Views come after the image network's, before the loss's parameters; single-threaded (a few
 * thousand multiply-adds per query). */
/* the N digits of class cls (most significant first), as mkdigits numbers its classes */
void model_query_digits(int N, int32_t cls, uint8_t *digits);
/* digits: (n, N) values 0..9 (n <= maxbatch); q: (n, D) */
void model_query_forward(model *m, const uint8_t *digits, int n, float *q);
/* dq: (n, D) for the last query forward; ADDS into m->grads */
void model_query_backward(model *m, const float *dq);
/* v /= ||v|| (in double; a zero vector stays zero): the unit-length embeddings of two-tower
 * models, whose scores are cosines (embed, qembed) */
void model_unit_length(float *v, int n);
/* the tower's initial weights, for a new model with cfg.query after model_init (which sets the
 * image network's only); its activations are freed by model_free */
void model_query_init(model *m, uint64_t seed);
#endif
