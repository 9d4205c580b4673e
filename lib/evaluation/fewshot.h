/* fewshot: the test episodes of few-shot classification (spe-scott-2019 section 4 and appendix A)
 * and their accuracy report, for bin/fewshot.c; the prototypes themselves: lib/measures/proto.h.
 *
 * Items: one embedding stream in memory, each image as one diagonal Gaussian (proto_gaussian: a
 * mixture by its moments), with its class, id and occlusion mask. Classes: those present in both
 * the support and the query stream, ascending, each with its support and query images in record
 * order.
 *
 * An episode e (fewshot_episode_draw), from a generator seeded by (seed, FEWSHOT_EPISODE ^ e): the
 * classes (all common ones, or n of them by a partial Fisher-Yates shuffle, then ascending), for
 * each class in ascending order `shots` support images (a partial Fisher-Yates shuffle of its
 * support images in record order), then for each class `queries` query images among its query
 * images whose id is no support image's id in this episode (same shuffle; lib/base/rng.h,
 * rng_shuffle_partial). So an episode depends only on the seed and its number, whatever the
 * thread count.
 *
 * Report: per scorer (pn, spe-naive, spe-closed) the mean accuracy over episodes and its 95%
 * half-width, written as one JSON line (fewshot_summary_json, lib/base/json.h); fewshot_summary_read
 * rebuilds that line from a `fewshot` stream (--summary).
 *
 * Ownership: items, classes and episodes own their arrays (the matching _free); inputs are the
 * caller's. An episode is scratch for one thread: one per worker.
 *
 *   fewshot_items S, Q;  stream_reader *sr, *qr;
 *   fewshot_items_read(support_path, &S, &sr);  fewshot_items_read(query_path, &Q, &qr);
 *   fewshot_check_alike(&S, &Q);                       // the same D and C
 *   fewshot_classes C;  fewshot_classes_make(&S, &Q, &C);
 *   fewshot_check_sizes(&C, &S, &Q, shots, queries);
 *   fewshot_episode ep;  fewshot_episode_init(&ep, &C, n, shots, queries);
 *   fewshot_episode_draw(&ep, &C, &S, &Q, seed, e);   // ep.chosen (n), ep.sup (n, shots), ep.qry (n, queries)
 */
#ifndef HEDGE_FEWSHOT_H
#define HEDGE_FEWSHOT_H
#include "classnames.h"
#include <stdint.h>
#include <stdio.h>

#include "rng.h"
#include "stream.h"

#define FEWSHOT_EPISODE RNG_STREAM('f', 's', 'e', 'p')
#define FEWSHOT_MAX_EPISODES 1000000 /* fewshot -R; --summary holds two counts per episode */

/* the scorers, in the order of the report */
enum { FEWSHOT_PN, FEWSHOT_NAIVE, FEWSHOT_CLOSED, FEWSHOT_NSC };
extern const char *const fewshot_score_name[FEWSHOT_NSC]; /* "pn", "spe-naive", "spe-closed" */
extern const char *const fewshot_score_json[FEWSHOT_NSC]; /* "pn", "spe_naive", "spe_closed" */
/* the scorer named NAME, -1 if none */
int fewshot_score_index(const char *name);

/* one stream's images as Gaussians */
typedef struct {
    const char *name;
    int64_t n;
    int C, D, has_var; /* C: the components of each embedding (mu [C, D]) before its moments */
    double *mu, *var; /* (n, D); var NULL without `var` */
    int32_t *cls;     /* (n) */
    int64_t *id;      /* (n) */
    uint8_t *occ;     /* (n, nocc) or NULL */
    int nocc;
    classnames names; /* meta class_names: cls indexes them (present 0: integer classes) */
} fewshot_items;

/* reads the embedding stream at PATH (dies without 'class' or 'id'); *rd stays open for its header */
void fewshot_items_read(const char *path, fewshot_items *it, stream_reader **rd);
/* dies unless the support S and queries Q are embeddings of one model: the same D and C; their
 * classes matched by name when they are names (lib/streams/classnames.h: both renumbered into the union
 * of their names, which both names become) */
void fewshot_check_alike(fewshot_items *S, fewshot_items *Q);
void fewshot_items_free(fewshot_items *it);

/* the classes present in both streams and, per class, its images in record order */
typedef struct {
    int nc;
    int32_t *label;       /* (nc) ascending */
    int64_t *ns, *nq;     /* (nc) counts */
    int64_t **sup, **qry; /* (nc) lists of record indices */
} fewshot_classes;

/* dies when no class is common */
void fewshot_classes_make(const fewshot_items *S, const fewshot_items *Q, fewshot_classes *C);
void fewshot_classes_free(fewshot_classes *C);
/* dies unless every episode is possible: every class has `shots` support images and `queries`
 * query images left when the most twins (same id) its support images can take are out */
void fewshot_check_sizes(const fewshot_classes *C, const fewshot_items *S, const fewshot_items *Q, int shots,
                         int queries);

/* s_e^2 of SPE: VALUE when GIVEN (the option), else the support header's meta spe_se2, else the
 * query's, else 0 (dies on a negative or non-finite one); *from says which, for the report */
double fewshot_se2(int given, double value, const stream_header *sh, const stream_header *qh, const char **from);
/* dies unless var + se2 > 0 for every support image that an episode can draw (SPE's prototypes) */
void fewshot_check_spe(const fewshot_items *S, const fewshot_classes *C, double se2);

/* one episode's draw, and the sampler's scratch */
typedef struct {
    int n, shots, queries;
    int *chosen;      /* (n) class indices into C, ascending */
    int64_t *sup;     /* (n, shots) support record indices, class chosen[j]'s in row j */
    int64_t *qry;     /* (n, queries) query record indices */
    int *perm;        /* scratch */
    int64_t *pool, *sup_ids;
} fewshot_episode;

void fewshot_episode_init(fewshot_episode *ep, const fewshot_classes *C, int n, int shots, int queries);
/* episode e of the seed (dies if a class has too few queries left once its twins are out) */
void fewshot_episode_draw(fewshot_episode *ep, const fewshot_classes *C, const fewshot_items *S,
                          const fewshot_items *Q, uint64_t seed, int64_t e);
void fewshot_episode_free(fewshot_episode *ep);

/* mean over R episodes of correct[e * stride] / per, and the 95% half-width 1.96 sd / sqrt(R)
 * (sd over episodes, R - 1 in the denominator; NaN for R = 1) */
void fewshot_accuracy(const int64_t *correct, int stride, int64_t R, int64_t per, double *mean, double *ci);

/* the report: scorers other than pn are null without SPE */
typedef struct {
    int64_t episodes;
    int ways, shots, queries, samples, spe;
    const char *score, *se2_from;
    double se2, acc[FEWSHOT_NSC], ci[FEWSHOT_NSC];
    uint64_t seed;
} fewshot_summary;

void fewshot_summary_json(FILE *f, const fewshot_summary *s);
/* the summary of the `fewshot` stream at PATH: the chosen scorer's numbers from its records, the
 * others' from the header. The strings point into the header: valid until stream_close(*rd). */
void fewshot_summary_read(const char *path, fewshot_summary *s, stream_reader **rd);
#endif
