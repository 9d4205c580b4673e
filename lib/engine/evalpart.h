/* evalpart: the battery of lib/engine/hedge.h in its two halves, and the first half's answers as a
 * stream, so that a run's queries can be split into ranges (shards) on several machines and put
 * back together with the same numbers, to the bit, as one run (bin/evaluate --queries, --merge).
 *
 *   queries half  (hedge_queries) the n x gallery work of queries q0 .. q1 - 1: each query's kNN
 *                 vote and retrieval metrics (retrieval_query), and its mAP and RR at K (at_k)
 *   finish half   (hedge_finish) everything else, from the queries' answers and the whole sets:
 *                 the means, the class averages and per-class values, the uncertainty on kNN's
 *                 answers, k-means NMI/AMI and the pairs' AP/ECE (which need every query)
 * hedge_evaluate is the two in a row over o->q0 .. o->q1. Both halves decide what can be had
 * (kNN's k, the Recall@k that fit, whether any query has a positive) from the whole sets, never
 * from the range, so that every shard of a run does the same work; the finish half sums the
 * answers in query order, as the queries half's own summary does, so the means are the same
 * doubles however the answers were split.
 *
 * The stream (kind `evaluate`, batched, formats/stream.md): records of up to EVALPART_BLOCK
 * queries, each query's answers in each of the S sets of one bin/evaluate run (the input, its
 * --corrupt twin) as fields with S after the batch dimension;
 * meta: the options the answers depend on, the sets' sizes and a hash of their contents
 * (evalpart_hash), and a shard's queries_from, queries_to, queries_total (lib/evaluation/shard.h).
 *
 * The faces other than bin/evaluate see a shard as that stream's bytes (hedge.h's hedge_shard,
 * hedge_merge: Python's hedge.Shard), never as these structures.
 *
 * Ownership: an evalpart owns its arrays (evalpart_free).
 *
 *   int k = hedge_neighbours(&Q, NULL, &o);              // kNN's k for this set
 *   evalpart p;
 *   hedge_queries(&Q, NULL, &o, 0, 5000, k, &p, err, sizeof err); // queries 0 .. 4999
 *   evalpart_write(stdout, &p, 1, &info, argc, argv);    // a shard
 *   ...
 *   evalpart whole[1];
 *   evalpart_read(paths, nshards, &info, whole);         // every shard, checked, in query order
 *   hedge_finish(&Q, NULL, &o, &whole[0], &r, err, sizeof err);
 */
#ifndef HEDGE_EVALPART_H
#define HEDGE_EVALPART_H
#include <stdint.h>
#include <stdio.h>

#include "hedge.h"
#include "retrieval.h"

#define EVALPART_MAXSETS 2
#define EVALPART_BLOCK 4096 /* queries a record of the stream */

enum { EVALPART_PRED = 1, EVALPART_ETA = 2, EVALPART_PER = 4, EVALPART_ATK = 8, EVALPART_BASE = 16 };

struct evalpart {          /* (hedge.h's evalpart) */
    int64_t q0, nq;        /* the queries q0 .. q0 + nq - 1 (nq = 0: none, a shard of a small set) */
    int knn_k;             /* the k kNN voted with (0: no kNN) */
    int has;               /* EVALPART_*: the answers the run has (its arrays below, when nq > 0) */
    int32_t *pred;         /* (nq) kNN's vote, or NULL: kNN not run */
    float *eta;            /* (nq) the queries' uncertainty (eta, else the mean of var), or NULL */
    retrieval_query *per;  /* (nq) or NULL: retrieval not run */
    double *apk, *rrk;     /* (nq) a query's AP and RR at K (at_k), or NULL */
    /* (nq) the free baselines of the uncertainty section (lib/hedge.h), from kNN's neighbours,
     * or NULL (no kNN): the nearest distance, the ratio of the two nearest (NaN under mls or
     * with one neighbour), the entropy of the k nearest's classes */
    float *top1, *ratio, *vote;
};

/* (the halves, hedge_neighbours, hedge_queries and hedge_finish, are declared in hedge.h) */
void evalpart_free(evalpart *p);

/* what the stream says about the run besides the answers; evalpart_read checks a shard's against
 * the caller's, naming what differs */
typedef struct {
    int nsets;
    const char *names[EVALPART_MAXSETS]; /* the sets' files, for messages */
    uint64_t hash[EVALPART_MAXSETS];     /* evalpart_hash of each set */
    uint64_t ghash;                      /* of the gallery (0: leave-one-out) */
    int64_t n, ng;                       /* queries (every set's), gallery items (0: none) */
    const hedge_options *o;
    int knn_k;
} evalpart_info;

/* a hash of a set's contents (n, C, D, mu, var, eta, labels, ids): parts of other data refused */
uint64_t evalpart_hash(const hedge_set *S);
/* a hash of the answers of queries from .. to - 1 (indices into each part's arrays) of the parts
 * p[0 .. nsets) with nk Recall@k flags each, value by value: what a shard states of itself
 * (meta answers_hash, Python's Shard), so that values damaged after it was made are refused */
uint64_t evalpart_answers_hash(const evalpart *p, int nsets, int64_t from, int64_t to, int nk);
/* the parts p[0 .. I->nsets) (one range of queries, o->q0 .. o->q1) as an `evaluate` stream to f */
void evalpart_write(FILE *f, const evalpart *p, const evalpart_info *I, int argc, char **argv);
/* the streams paths[0 .. n): shards of one run covering every query once, or one whole stream,
 * made from the same sets with the same options as I says; into whole[0 .. I->nsets), each over
 * every query. Dies naming the file and what differs. */
void evalpart_read(const char *const *paths, int n, const evalpart_info *I, evalpart *whole);
/* the same from n shards in memory (hedge_merge: each bytes[i] of sizes[i], named "shard I") */
void evalpart_read_bytes(const void *const *bytes, const size_t *sizes, int n, const evalpart_info *I,
                         evalpart *whole);
#endif
