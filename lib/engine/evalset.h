/* evalset: a set of embeddings for bin/evaluate, read whole from an `embeddings` stream or a numpy
 * archive (.npz/.npy, read by fromnpz's reader, lib/data/npzimport.h: mu [n, D] or [n, C, D] of any
 * numeric dtype, optional var, eta, class or labels (integers or names), id; the arrays under
 * other names when the caller names them, as fromnpz --mu ... does), as the hedge_set of
 * lib/engine/hedge.h, with the match probability's a and b when the stream's header has one
 * (match_meta_ab), and the class names when the labels are names. Dies with one line on what
 * cannot be read, naming the file (the readers' own messages: stream.h, npzimport.h); a set
 * without classes: "FILE: no class labels (...)".
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
#include "classnames.h"
#include "hedge.h"
#include "match.h"
#include "npzimport.h"

typedef struct {
    hedge_set set;
    int has_match;         /* match_a, match_b from the stream's header (match_meta_ab) */
    double match_a, match_b;
    char match_why[160];   /* without: why (a loss that learns none, or no keys); hedge_result.why's size */
    int32_t *cls;          /* set.labels, owned by S or npz: renumbered by evalset_unify */
    classnames names;      /* the labels' names (present 0: integers) */
    match_set *S;          /* a stream's records (owned), or NULL */
    void *npz;             /* an archive's arrays (owned), or NULL */
    const char *path;
    float *user[HEDGE_MAXUSER]; /* set.user's arrays (owned) */
} evalset;

/* path: a stream, or an archive (.npz, .npy) whose arrays of each role are named by name[r]
 * (NULL: fromnpz's defaults; name NULL: all defaults) */
void evalset_read(evalset *E, const char *path, const char *const *name);
/* the user's own uncertainties of E's items, fields[0 .. n) (n <= HEDGE_MAXUSER): a per-item
 * scalar field of the stream (read again from the file: not stdin) or an array of the archive (an
 * extra the reader kept: any numeric dtype), into set.user, named as the field. Dies naming the
 * file and the field when there is none, or it is not one number an item. */
void evalset_user(evalset *E, const char *const *fields, int n);
/* 1 when path is read as a numpy archive (.npz, .npy), 0 as a stream */
int evalset_is_npz(const char *path);
/* the sets E[0 .. n) evaluated together (queries and their gallery) matched by name, as
 * hedge.evaluate does (lib/streams/classnames.h): their classes renumbered into the union of their names */
void evalset_unify(evalset *const *E, int n);
/* r's reason for no ece, when E's stream has none because its loss learns no match probability
 * (match_meta_ab's reason) and o gave none: that reason in place of "give match_a, match_b" */
void evalset_explain(const evalset *E, const hedge_options *o, hedge_result *r);
void evalset_free(evalset *E);
#endif
