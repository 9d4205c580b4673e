/* shard: one run of knn or retrieve split by query ranges (--queries FROM:TO) so that its pieces
 * can run on several machines, and the pieces' outputs put back together (--summary, --merge).
 *
 * A shard is the unsharded run's work for the input's records FROM .. TO-1 as queries (their ids
 * kept; leave-one-out still against the whole input, a gallery whole): its output holds the
 * unsharded output's records for those queries, and three more meta keys, set after every other
 * key: queries_from, queries_to and queries_total (the input's records). Shards of one run agree
 * on their fields and on the keys the program names (the distance, the gallery, k, ...), and
 * together cover 0 .. queries_total once: shard_open checks all that, in any order given, and
 * hands the shards back in query order, so that a reader that sums their records in that order
 * gets the unsharded sums to the bit.
 *
 * Ownership: a shard_set owns its readers; shard_header's result belongs to the caller.
 *
 *   shard_range r;
 *   shard_parse("--queries", "0:5000", &r);          // usage_die on anything but FROM < TO
 *   shard_check(&r, Q->n, in->name);                 // dies when TO is past the input's end
 *   ... work on queries r.from .. r.to - 1, then, after every other meta key:
 *   shard_set_meta(h, &r, Q->n);
 *
 *   const char *same[] = {"k", "knn_distance", NULL};
 *   shard_set *S = shard_open(paths, n, "knn", same); // shards of one run, or one whole output
 *   for (int i = 0; i < S->n; i++) while (stream_read(S->in[i], &rec)) ...
 *   shard_rewind(S);                                 // to read them again (files only)
 *   stream_header *h = shard_header(S, argc, argv);  // the first's meta without queries_*
 *   shard_close(S);
 *
 * A program's --summary and --merge are one call: the program says how to read its records' numbers
 * and what to do with them (shard_reader), shard_report opens, checks, reads and writes:
 *
 *   const shard_reader knn_eval_shards = {"knn", knn_same, read, summary, merged, free_numbers};
 *   shard_report(&knn_eval_shards, o.merge, argv + optind, argc - optind, argc, args);
 */
#ifndef HEDGE_SHARD_H
#define HEDGE_SHARD_H
#include <stdint.h>
#include <stdio.h>

#include "stream.h"

typedef struct {
    int64_t from, to;   /* the queries: input records [from, to) */
} shard_range;

typedef struct {
    int n;
    stream_reader **in; /* in query order */
    const char **path;  /* (n) in the same order */
    int sharded;        /* 1: shards (queries_from ...); 0: one whole output */
    int64_t total;      /* queries_total (sharded) */
} shard_set;

/* "FROM:TO", 0 <= FROM < TO, into r; usage_die (exit 2) otherwise, naming opt */
void shard_parse(const char *opt, const char *s, shard_range *r);
/* TO <= n (the input's records), else dies naming the input */
void shard_check(const shard_range *r, int64_t n, const char *name);
void shard_set_meta(stream_header *h, const shard_range *r, int64_t total);
/* opens paths[0 .. n) ("-": stdin, for one), each of kind `kind`: one whole output, or shards of
 * one run (any order). Dies naming the file on another kind, a whole output among several, shards
 * that differ in a field or in a meta key of same (NULL-terminated), overlap, or leave a gap. */
shard_set *shard_open(const char *const *paths, int n, const char *kind, const char *const *same);
/* the same over streams already open (the set owns them: shard_close closes them), paths[i] the
 * name of in[i] (shard_rewind reopens it: only for files) */
shard_set *shard_open_readers(stream_reader **in, const char *const *paths, int n, const char *kind,
                              const char *const *same);
/* every reader back at its first record (dies on stdin: it cannot be read twice) */
void shard_rewind(shard_set *S);
/* a header for the merged output: kind and fields of the shards, provenance (argc, argv) with
 * the shards' headers as inputs, the first shard's meta without queries_from/_to/_total (the
 * other keys in their order: setting them again keeps it) */
stream_header *shard_header(const shard_set *S, int argc, char **argv);
void shard_close(shard_set *S);

/* how a program reads back its own streams for --summary and --merge */
typedef struct {
    const char *kind;            /* the streams' kind */
    const char *const *same;     /* the meta keys shards of one run agree on (shard_open) */
    /* the numbers of every record of S (in query order), checked; dies on a bad record */
    void *(*read)(shard_set *S);
    /* --summary: the report (the run's --json line) to f, from the numbers and S's first header */
    void (*summary)(FILE *f, const shard_set *S, const void *numbers);
    /* --merge: the numbers' means into the merged header (shard_header's) */
    void (*merged)(stream_header *h, const void *numbers);
    void (*free)(void *numbers);
} shard_reader;

/* --summary (merge 0) or --merge (merge 1) of the streams paths[0 .. n) (n = 0: stdin) to stdout:
 * the summary line, or the shards' records in query order under one header with the provenance
 * (argc, argv); --merge dies on a whole output. Closes stdout (close_stdout). */
void shard_report(const shard_reader *R, int merge, const char *const *paths, int n, int argc, char **argv);

#endif
