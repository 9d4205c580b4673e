/* gallery: what knn and retrieve rank their queries against, and the helpers both need: the union
 * of one or more embedding streams (retrieve -g A -g B), or the queries themselves (leave-one-out);
 * the means as unit vectors (--distance cosine), the variances beside them (--distance mls); the
 * item each query never sees (itself, or its
 * id with --exclude-id); an item's scalar uncertainty (its eta, else its mean var).
 *
 * Ownership: a gallery read from streams owns its arrays (gallery_free); a self gallery borrows the
 * queries' means, classes and ids and owns only its uncertainty. The readers passed to gallery_read
 * are opened there and left open for the caller's provenance (the caller closes them).
 *
 *   stream_reader *gin[2];
 *   gallery G = gallery_read(paths, 2, Q, "q.hs", cosine, exclude_id, need_u, gin);   // or gallery_self
 *   int64_t *ex = gallery_exclude(0, exclude_id, G.id, G.n, Q->id + q0, q0, nq, G.names);
 *   gallery_free(&G);
 */
#ifndef HEDGE_GALLERY_H
#define HEDGE_GALLERY_H
#include <stdint.h>

#include "match.h"
#include "stream.h"

typedef struct {
    int64_t n;
    float *mean;           /* (n, D) the items' centres (match_set_means) */
    float *var;            /* (n, D) their variances for --distance mls (C = 1), else NULL */
    int32_t *cls;          /* (n) */
    int64_t *id;           /* (n) */
    double *u;             /* (n) the uncertainty (gallery_uncertainty), or NULL */
    const char *ukind;     /* "eta", "var" or NULL */
    int64_t *part_n;       /* (streams) the items of each stream, NULL for a self gallery */
    char *names;           /* the streams' paths, comma-joined, NULL for a self gallery */
    int owned;             /* mean, var, cls, id belong to the gallery */
} gallery;

/* the union of the streams paths[0 .. n) (opened into gin[0 .. n)): the same D as the queries Q, a
 * class each, matched with Q's by name when they are names (match_sets_unify: Q's classes and
 * names are renumbered too); with exclude_id over several streams, an `id` field each; with need_u, the same
 * uncertainty kind in every stream (that of the first); distance (MATCH_DISTANCE_*) cosine: unit
 * means; mls: the variances too (match_mls_check). Dies naming the stream otherwise. */
gallery gallery_read(const char *const *paths, int n, match_set *Q, const char *qname, int distance, int exclude_id, int need_u,
                     stream_reader **gin);
/* the queries as their own gallery: their means qm (already unit with cosine), and their variances
 * (borrowed) when they have them */
gallery gallery_self(const match_set *Q, float *qm, int need_u);
void gallery_free(gallery *G);

/* --distance cosine: the means m (S's, n x D) as unit vectors; a zero mean is refused by name */
void gallery_unit_means(const char *name, const match_set *S, float *m);
/* each item's uncertainty: its eta, else the mean of its var over C x D; NULL without either */
double *gallery_uncertainty(const match_set *S);
/* the uncertainty kind of a set: "eta", "var" or NULL */
const char *gallery_uncertainty_kind(const match_set *S);

/* the gallery index each query q < nq never sees: leave-one-out its own record q0 + q; with
 * exclude_id the gallery item with its id qid[q] (-1: none; dies naming `name` when an id appears
 * twice in gid); NULL with neither */
int64_t *gallery_exclude(int leave_one_out, int exclude_id, const int64_t *gid, int64_t ng, const int64_t *qid,
                         int64_t q0, int64_t nq, const char *name);

/* the fields of a per-query record of knn and retrieve, in order: id and class; the program's
 * own fields f[0 .. n) (vector 1: k values a record, else one); eta when with_eta; the queries'
 * occluded vector and corrupt flag when Q has them */
typedef struct {
    const char *name;
    int dtype, vector;
} gallery_field;
void gallery_record_fields(stream_header *h, const gallery_field *f, int n, int64_t k, int with_eta,
                           const match_set *Q);
#endif
