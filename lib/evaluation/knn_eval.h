/* knn_eval: the k-nearest-neighbour identification that the knn program runs and reports
 * (hib-oh-2019 section 4.3): queries searched against a gallery (metrics_knn), the neighbours'
 * majority vote (metrics_vote), recall at every rank r < k (a neighbour of the query's class among
 * the first r + 1), and the `knn` stream, its header and its --json line; and the reading back of
 * `knn` streams for knn --summary and --merge (knn_eval_shards, lib/evaluation/shard.h).
 *
 * Ownership: a knn_eval owns its result arrays (knn_eval_free); it borrows the sets it ran on.
 *
 *   knn_eval E = {.k = 5, .q0 = 0, .nq = Q->n, .gallery = NULL};     // leave-one-out
 *   knn_eval_run(&E, Q, qin->name, Q, NULL, exclude, threads);
 *   stream_header *h = knn_eval_header(&E, argc, argv, qin->header, NULL, NULL);
 *   stream_writer *w = stream_create(stdout, h);
 *   knn_eval_write(&E, w);
 *   knn_eval_json(jf, &E);
 *   knn_eval_free(&E);
 */
#ifndef HEDGE_KNN_EVAL_H
#define HEDGE_KNN_EVAL_H
#include <stdint.h>
#include <stdio.h>

#include "match.h"
#include "shard.h"
#include "stream.h"

#define KNN_MAXK 1000 /* knn -k: neighbours per query */

typedef struct {
    /* the run (the caller's) */
    int k, distance, expected; /* --distance (MATCH_DISTANCE_*); -d expected */
    const char *gallery;      /* the -g path, NULL: leave-one-out */
    int64_t q0, nq;           /* the queries: the input's records q0 .. q0 + nq - 1 */
    int searched;             /* 1: nbr and d2 hold the search already (emalloc'd, metrics_knn's
                               * result: lib/evaluation/knnpass.h); knn_eval_run only votes */
    /* the results (knn_eval_run's) */
    const match_set *Q, *G;
    int64_t ng;
    int64_t *nbr;             /* (nq, k) the neighbours' gallery indices, nearest first */
    double *d2;               /* (nq, k) their squared distances (mls: their -MLS) */
    int32_t *pred;            /* (nq) the voted class */
    uint8_t *recall;          /* (nq, k) 1 when a neighbour of rank <= r has the query's class */
    double *recall_at;        /* (k) the means of recall */
    double correct;           /* the queries whose vote is their class */
    const char *eta_source;   /* the queries' uncertainty: "eta", "var" or NULL */
    float *qeta;              /* (nq) or NULL */
} knn_eval;

/* the search and the votes of Q's queries q0 .. q0 + nq - 1 against G (Q itself: leave-one-out),
 * exclude (nq) or NULL as metrics_knn (mls: mls_knn); names for the messages (gname NULL for
 * leave-one-out). Dies on a zero mean under cosine, on what mls cannot score (match_mls_check) and
 * on a nearest distance beyond float32. */
void knn_eval_run(knn_eval *E, const match_set *Q, const char *qname, const match_set *G, const char *gname,
                  const int64_t *exclude, int threads);
/* the `knn` header: provenance, the inputs' headers (gh NULL: leave-one-out), the queries' meta,
 * the run's keys, queries (or NULL: not a shard) last, the fields */
stream_header *knn_eval_header(const knn_eval *E, int argc, char **argv, const stream_header *qh,
                               const stream_header *gh, const shard_range *queries);
/* a record per query */
void knn_eval_write(const knn_eval *E, stream_writer *w);
/* the --json line */
void knn_eval_json(FILE *f, const knn_eval *E);
void knn_eval_free(knn_eval *E);

/* knn --summary and --merge (shard_report) */
extern const shard_reader knn_eval_shards;
#endif
