/* evalset: a set of embeddings for bin/evaluate, read whole from an `embeddings` stream or a numpy
 * archive (.npz/.npy, as fromnpz reads it: mu [n, D] or [n, C, D], optional var, eta, class or
 * labels, id), as the hedge_set of lib/hedge.h, with the match probability's a and b when the
 * stream's header (or, for an archive, the caller) has them. Dies with one line on what cannot be
 * read, naming the file (the readers' own messages: stream.h, npzimport.h); a set without
 * classes: "FILE: no class labels (...)".
 *
 * Ownership: the evalset owns its arrays (evalset_free).
 *
 *   evalset S;
 *   evalset_read(&S, "emb.npz");
 *   hedge_evaluate(&S.set, NULL, &o, &r, err, sizeof err);
 *   evalset_free(&S);
 */
#ifndef HEDGE_EVALSET_H
#define HEDGE_EVALSET_H
#include "hedge.h"
#include "match.h"

typedef struct {
    hedge_set set;
    int has_match;         /* match_a, match_b from the stream's header */
    double match_a, match_b;
    match_set *S;          /* a stream's records (owned), or NULL */
    void *npz;             /* an archive's arrays (owned), or NULL */
    const char *path;
} evalset;

void evalset_read(evalset *E, const char *path);
void evalset_free(evalset *E);
#endif
