/* retrieval_eval: the retrieval evaluation that the retrieve program runs and reports: the ranking
 * metrics of every query (retrieval_run, lib/measures/retrieval.h) against a gallery (lib/evaluation/gallery.h), with
 * gallery cleaning (uncertain against random, hetero-triplet-taha-2019 section 5) and global
 * precision-recall over every pair; the `retrieval` stream, its header, its --json line and the
 * global curve's TSV; and the reading back of `retrieval` streams for retrieve --summary and
 * --merge (retrieval_eval_shards, lib/evaluation/shard.h). The definitions are lib/measures/retrieval.h's.
 *
 * Ownership: a retrieval_eval owns its result arrays (retrieval_eval_free); it borrows the query
 * set, its means and the gallery.
 *
 *   retrieval_eval E = {.ks = ks, .nk = 4, .q0 = 0, .nq = Q->n};     // leave-one-out, no cleaning
 *   retrieval_eval_run(&E, Q, qm, &G, exclude, threads);
 *   stream_header *h = retrieval_eval_header(&E, argc, argv, qin->header, NULL, NULL);
 *   stream_writer *w = stream_create(stdout, h);
 *   retrieval_eval_write(&E, w);
 *   retrieval_eval_json(jf, &E);
 *   retrieval_eval_free(&E);
 */
#ifndef HEDGE_RETRIEVAL_EVAL_H
#define HEDGE_RETRIEVAL_EVAL_H
#include <stdint.h>
#include <stdio.h>

#include "gallery.h"
#include "match.h"
#include "retrieval.h"
#include "shard.h"
#include "stream.h"

/* what cleaning found, for the meta and the JSON line */
typedef struct {
    double percent;
    int64_t dropped;
    int draws;
    const char *uncertainty;  /* the gallery's "eta" or "var"; "none": random cleaning only */
    double uncertain_map, uncertain_recall[RETRIEVAL_MAXK];
    double random_map, random_map_sd, random_recall[RETRIEVAL_MAXK];
} retrieval_cleaning;

typedef struct {
    /* the run (the caller's) */
    const int *ks;            /* (nk) the k of Recall@k */
    int nk;
    int distance;             /* --distance: MATCH_DISTANCE_* */
    int ngal;                 /* the -g streams, 0: leave-one-out */
    double clean;             /* percent, 0: no cleaning */
    int clean_random_only;    /* the random draws only (no uncertainty needed) */
    int draws;
    uint64_t seed;
    int global;               /* global precision-recall */
    int sharded;              /* a --queries run: one without a query with a positive is no error */
    int at_r;                 /* --at-r: each query's K nearest only (retrieval_run_at_r) */
    int64_t q0, nq;           /* the queries: the input's records q0 .. q0 + nq - 1 */
    /* the results (retrieval_eval_run's) */
    const match_set *Q;
    const gallery *G;
    int64_t depth;            /* --at-r: K, the nearest ranked per query; 0 for the full ranking */
    retrieval_query *per;     /* (nq) */
    retrieval_summary sum, cavg; /* the means (the full gallery) and the per-class averages */
    retrieval_cleaning cl;
    retrieval_hist *hist;     /* or NULL without global */
    retrieval_global glob;
    double *qeta;             /* (Q->n) the queries' uncertainty, or NULL */
    double pearson;           /* of qeta and AP over the records, NaN without qeta */
} retrieval_eval;

/* the ranking of Q's queries q0 .. q0 + nq - 1 (their means qm, Q's) against G, exclude (nq) or NULL
 * as retrieval_job's; with cleaning, G's uncertainty. Dies when cleaning has no uncertainty or drops
 * nothing, and (not sharded) when no query has a positive; warns of queries without one. */
void retrieval_eval_run(retrieval_eval *E, const match_set *Q, float *qm, const gallery *G, const int64_t *exclude,
                        int threads);
/* the `retrieval` header: provenance, the inputs' headers (gh[0 .. ngal)), the queries' meta, the
 * run's keys, queries (or NULL: not a shard) last, the fields */
stream_header *retrieval_eval_header(const retrieval_eval *E, int argc, char **argv, const stream_header *qh,
                                     stream_reader *const *gin, const shard_range *queries);
/* a record per query with a positive */
void retrieval_eval_write(const retrieval_eval *E, stream_writer *w);
/* the --json line */
void retrieval_eval_json(FILE *f, const retrieval_eval *E);
/* the global precision-recall curve (--global-tsv): recall, precision, threshold (the distance) */
void retrieval_eval_tsv(FILE *f, const retrieval_eval *E);
void retrieval_eval_free(retrieval_eval *E);

/* retrieve --summary and --merge (shard_report) */
extern const shard_reader retrieval_eval_shards;
#endif
