/* hedge: the whole evaluation battery of one set of embeddings in one call, over float arrays in
 * memory (libhedge.so / libhedge.a): what pipelines/evaluate.sh printed from six programs, with
 * the data read once. bin/evaluate is a thin program on it; the Python package calls it through
 * ctypes (python/). The definitions of the metrics are those of the library parts that compute
 * them: lib/evaluation/knn_eval.h (kNN vote), lib/measures/retrieval.h (Recall@k, P@1, R-precision, MAP@R, mAP, MRR,
 * the class averages), lib/measures/cluster.h (k-means, NMI, AMI), lib/metrics.h (verification AP, ECE,
 * Kendall's tau, AUROC, AURC, E-AURC of the uncertainty on the kNN answers); the numbers are those
 * of knn, retrieve, cluster, pairscore | apcurve and ktau on the same set (tests/shell/evaluate*.sh).
 *
 * What a metric needs (a metric that cannot be had is NaN, with its reason in why[id], as
 * pytorch-metric-learning returns NaN for what it cannot compute):
 *   ap, ece        a class with two items and two classes among the queries; ece also match_a/b
 *                  (with var: 8 samples a pair as pairscore -K 8, or the next multiple of C)
 *                  (has_match; without it pairs rank by the distance of their means, ap only)
 *   knn            k = knn_k, or the neighbours every query has when fewer (knn_k in the result)
 *   recall_i       Recall@ks[i] for each ks[i] up to those neighbours
 *   retrieval      a query with a positive (another item of its class; with a gallery, an item
 *                  of its class there, not the one exclude_id leaves out)
 *   nmi, ami       always (k-means, k = the queries' classes)
 *   tau .. eaurc   an uncertainty (eta, else var) and at least 20 queries
 *
 * Errors: hedge_evaluate returns HEDGE_EINVAL (-1) with one line in err naming the array, what
 * was found and what was expected (e.g. "labels: 99 items, expected 100 (mu's)", "mu: NaN at item
 * 7"; with distance mls, variances so small beside the means' spread that MLS would leave
 * float32); HEDGE_ENOMEM (-2) when an allocation failed ("out of memory (N bytes)"), HEDGE_ESTOPPED
 * (-3) when o->stop was set during the call ("interrupted"). A failed call allocates nothing the
 * caller must free and leaves nothing behind: every block it made is freed on the way out
 * (lib/base/guard.h), and nothing under this header ends the process. It keeps no state between calls
 * (the OpenBLAS kernel aside: hedge_blas_kernel): calls with distinct results may run in parallel
 * threads. OpenBLAS's thread count is set to o->threads during the call and given back after.
 *
 *   hedge_options o;
 *   hedge_options_init(&o);                          // euclidean, knn_k 5, ks 1,2,4,8, ...
 *   hedge_set Q = {n, 1, D, mu, NULL, NULL, labels, NULL};
 *   hedge_result r;
 *   char err[256];
 *   if (hedge_evaluate(&Q, NULL, &o, &r, err, sizeof err) != 0) fprintf(stderr, "%s\n", err);
 *   double map_r = r.value[HEDGE_MAP_R];             // NaN: r.why[HEDGE_MAP_R] says why
 *   hedge_result_free(&r);
 */
#ifndef HEDGE_HEDGE_H
#define HEDGE_HEDGE_H
#include <stddef.h>
#include <stdint.h>

#define HEDGE_ABI 5
enum { HEDGE_OK = 0, HEDGE_EINVAL = -1, HEDGE_ENOMEM = -2, HEDGE_ESTOPPED = -3 };
/* the distances a ranking takes: the means' Euclidean distance, the cosine of the normalised means,
 * PFE's -MLS, or the 2-Wasserstein distance of the Gaussians (C = 1, var), which is the Euclidean
 * distance of the vectors (mu, sqrt var): every Euclidean part of the battery (kNN, the ranking,
 * pairs, clusters, few-shot) runs on those, at the matrix product's speed, the variances' sources
 * as given (docs/metric.md) */
/* or csd, kl, bhattacharyya (PCME++'s closed-form sampled distance, the symmetric KL and
 * Bhattacharyya's distance of the Gaussians, C = 1, var; docs/metric.md), ranked exactly over the
 * whole gallery by MLS's kernel as mls is (lib/numerics/mls.h). "elk" (the expected likelihood
 * kernel, whose log is MLS) and "bhatt" parse as mls and bhattacharyya. */
enum { HEDGE_EUCLIDEAN = 0, HEDGE_COSINE = 1, HEDGE_MLS = 2, HEDGE_W2 = 3, HEDGE_CSD = 4, HEDGE_KL = 5, HEDGE_BHATT = 6 };
/* "euclidean", "cosine", "mls", "w2", "csd", "kl", "bhattacharyya"; NULL for another value */
const char *hedge_distance_name(int distance);
/* the distance of a name, -1 if none */
int hedge_distance_parse(const char *name);

/* the metric ids: value[id], why[id], bit id of include; names by hedge_metric_name (the JSON
 * keys evaluate.sh writes; recall_i is Recall@ks[i], JSON "recall": [...]) */
enum {
    HEDGE_AP = 0, HEDGE_ECE, HEDGE_KNN, HEDGE_KNN_K,
    HEDGE_P1, HEDGE_RPREC, HEDGE_MAP_R, HEDGE_MAP, HEDGE_MRR,
    HEDGE_P1_AVG, HEDGE_RPREC_AVG, HEDGE_MAP_R_AVG, HEDGE_MAP_AVG, HEDGE_MRR_AVG,
    HEDGE_NMI, HEDGE_AMI, HEDGE_TAU, HEDGE_AUROC, HEDGE_AURC, HEDGE_EAURC,
    HEDGE_NO_POSITIVE,        /* queries without a positive, left out of the retrieval means */
    HEDGE_RECALL,             /* HEDGE_RECALL + i: Recall@ks[i], i < 16 */
    HEDGE_NMETRICS = HEDGE_RECALL + 16
};

typedef struct {            /* one set of embeddings; arrays are C-contiguous, borrowed */
    int64_t n;              /* items */
    int C, D;               /* components (>= 1) and dimensions (>= 1) */
    const float *mu;        /* [n, C, D] */
    const float *var;       /* [n, C, D] or NULL */
    const float *eta;       /* [n] or NULL (the uncertainty; else the mean of var is used) */
    const int32_t *labels;  /* [n] class of each item */
    const int64_t *ids;     /* [n] or NULL: the item's index (for exclude_id) */
    /* the user's own uncertainties of the items (larger = less sure), beside var and eta as
     * learned sources of the uncertainty section: up to HEDGE_MAXUSER, each [n] finite */
    int nuser;
    const char *user_name[2];
    const float *user[2];
} hedge_set;

/* The uncertainty section: does an uncertainty know when a query's answer is wrong, and more than
 * what every model gives for free? Sources, per query (larger = less sure): the free baselines
 * top1_dist (the distance to the nearest gallery item; 1 - cosine under cosine, -MLS under mls),
 * ratio (nearest over second-nearest distance, Lowe's ratio), vote_entropy (of the classes of
 * kNN's k nearest, natural log), norm (minus the L2 norm of the mean); the learned ones var (the
 * mean of the variances), eta, and the set's user sources. Targets, per query (a loss in [0, 1]):
 * r1 (the nearest item is of another class: 1 - P@1), knn (kNN's vote is wrong), ap (1 - the
 * query's AP; at K with at_k), map_r (1 - MAP@R); r1, ap, map_r over the queries with a positive.
 * Measures (lib/measures/selective.h has the definitions, docs/metric.md the anchors' mappings): auroc
 * (binary targets), aurc, eaurc, augrc, tau, pearson_bins. Each with a bootstrap interval over
 * queries (o->bootstrap replicates from o->seed), and each learned source's difference from the
 * best free baseline of that target and measure, on the same replicates. */
#define HEDGE_NFAR 4     /* the FARs of the verification section: 1e-1 .. 1e-4 */
#define HEDGE_MAXUSER 2
#define HEDGE_NSOURCES 8
#define HEDGE_NTARGETS 4
#define HEDGE_NMEASURES 6
#define HEDGE_CURVE 50   /* the risk-coverage curves' points: coverage 1/50 .. 1 */
#define HEDGE_TAUBINS 20 /* tau's bins */
#define HEDGE_ECEBINS 15 /* ece's bins (apcurve --ece 15) */
#define HEDGE_ROC 33     /* the ROC's FARs: 10^(-4 + i / 8), i = 0 .. 32 */
enum { HEDGE_SRC_TOP1, HEDGE_SRC_RATIO, HEDGE_SRC_VOTE, HEDGE_SRC_NORM, HEDGE_SRC_VAR, HEDGE_SRC_ETA, HEDGE_SRC_USER };
enum { HEDGE_TGT_R1, HEDGE_TGT_KNN, HEDGE_TGT_AP, HEDGE_TGT_MAP_R };

typedef struct {
    int abi;                /* HEDGE_ABI, set by hedge_options_init; checked */
    int distance;           /* HEDGE_EUCLIDEAN (default), HEDGE_COSINE, HEDGE_MLS, HEDGE_W2 */
    int knn_k;              /* 5 */
    int ks[16], nk;         /* Recall@k: 1, 2, 4, 8 (increasing, >= 1) */
    int64_t pairs;          /* verification pairs for ap/ece: 10000 */
    uint64_t seed;          /* 714 */
    int has_match;          /* p(match) = sigmoid(-a d + b) for ap and ece (0: rank by d, no ece) */
    double match_a, match_b;
    int exclude_id;         /* with a gallery: never the gallery item with the query's id */
    int at_k;               /* 0: mAP and MRR over the whole ranking (hedge's default);
                               K > 0: pytorch-metric-learning's convention truncated at K: a
                               query's AP sums i / r_i over its positives within the K nearest
                               and divides by R, its positives in the gallery (PML's
                               count_per_query), its RR is 1 / r_1 when r_1 <= K, else 0 (map,
                               mrr, their class averages and per-class values) */
    int avg_of_avgs;        /* also the per-class averages (1) */
    int per_class;          /* fill result->per_class (PML's return_per_class) (0) */
    uint64_t include;       /* bit i = metric i; 0: every metric */
    int64_t q0, q1;         /* the queries q0 .. q1-1 only, their means; q1 = 0: all (shards that
                               merge to the whole run's doubles: lib/engine/evalpart.h) */
    int threads;            /* 1 */
    int bootstrap;          /* 1000: replicates of the intervals (0: none) */
    double risk, risk_delta; /* 0.05, 0.1: the R@1 error rate a source's threshold must keep with
                               confidence 1 - risk_delta (lib/measures/riskctl.h) */
    const volatile int *stop; /* NULL, or a flag another thread sets to nonzero to stop the call
                               between two blocks of its work: HEDGE_ESTOPPED (Ctrl-C in Python) */
} hedge_options;

typedef struct {
    int nmetrics;                  /* HEDGE_NMETRICS */
    double value[64];              /* by metric id; NaN = undefined: why[i] says why */
    char why[64][160];
    char notes[8][200];            /* notes of evaluate.sh's table that are not one metric's */
    int nnotes;
    int64_t nclasses;              /* with per_class: */
    int32_t *classes;              /* [nclasses] ascending */
    double *per_class;             /* [nclasses, nmetrics], NaN where undefined */
    float *knn_correct;            /* internal: [nq] the kNN answers (1 right), for the reject curve */
    float *knn_eta;                /* internal: [nq] their uncertainty */
    int64_t nq;
    /* the bootstrap interval of each metric that is a mean over queries ([id][0] NaN: none) */
    double ci[64][2];
    char ci_why[120];              /* why there are no intervals at all, "" when there are */
    int replicates;
    /* the uncertainty section: sources [s] (names, 0 = a free baseline), targets, measures */
    int nsources;
    char source[HEDGE_NSOURCES][32];
    int learned[HEDGE_NSOURCES];
    double unc[HEDGE_NSOURCES][HEDGE_NTARGETS][HEDGE_NMEASURES];
    double unc_ci[HEDGE_NSOURCES][HEDGE_NTARGETS][HEDGE_NMEASURES][2];
    char unc_why[HEDGE_NSOURCES][HEDGE_NTARGETS][HEDGE_NMEASURES][120];
    int best[HEDGE_NTARGETS][HEDGE_NMEASURES]; /* the best free baseline's source, -1: none */
    double diff[HEDGE_NSOURCES][HEDGE_NTARGETS][HEDGE_NMEASURES]; /* learned - that baseline */
    double diff_ci[HEDGE_NSOURCES][HEDGE_NTARGETS][HEDGE_NMEASURES][2];
    /* each source's selective retrieval with a guarantee on R@1's error (lib/measures/riskctl.h):
     * the threshold certified on a calibration half, the coverage and error rate it gives on the
     * other half, and the empirical risk at coverage 50 / 80 / 95 % over every query */
    struct hedge_risk {
        int found;                 /* a threshold was certified */
        int64_t ncal, ntest;
        double threshold, coverage, risk;
        double risk_at[3];
        char why[160];             /* why there is none */
    } riskctl[HEDGE_NSOURCES];
    /* verification and open-set identification (lib/measures/verify.h, docs/metric.md), NaN where
     * the set cannot give a number, with the reason in the *_why beside it. Over the pairs of ap
     * (their score s: the match probability, else sigmoid(-d) of the means' distance, MLS under
     * mls; higher = more alike; genuine = one class): TAR at far[f] (PFE's rule), the FAR that
     * threshold reaches, FNMR at FMR far[f] (= 1 - TAR), and the ROC AUC P(s_gen > s_imp) + P(=)/2.
     * Open set, with a gallery missing some queries' classes, rank 1: a probe's score is minus its
     * nearest distance (the top1_dist baseline), mated probes (their class in the gallery) are
     * identified when the nearest item is of their class and the score passes the threshold that
     * the non-mated probes (absent classes) give at far[f]: DIR = the share identified. A rate
     * needs 10 / far negatives (impostor pairs, non-mated probes). Not with include. */
    struct hedge_verify {
        int64_t genuine, impostor;     /* the pairs */
        int64_t mated, nonmated;       /* the probes (queries), with a gallery */
        double far[HEDGE_NFAR];        /* 1e-1, 1e-2, 1e-3, 1e-4 */
        double tar[HEDGE_NFAR], far_reached[HEDGE_NFAR], fnmr[HEDGE_NFAR], dir[HEDGE_NFAR];
        double roc_auc;
        char tar_why[HEDGE_NFAR][160], dir_why[HEDGE_NFAR][160], roc_why[160];
        double roc_far[HEDGE_ROC], roc_tar[HEDGE_ROC]; /* TAR at each FAR by the rule above (one
                                                           impostor pair above T at least; NaN: none) */
    } verify;
    /* the pictures (evaluate --report), NaN where a number cannot be had: each source's
     * risk-coverage curve on each target (the mean loss of the queries answered, the most certain
     * first, at coverage (i + 1) / HEDGE_CURVE; equal uncertainties by their expectation, as AURC)
     * and the oracle's; the performance (1 - loss) of each of tau's bins; the reliability diagram
     * of the match probability over ap's pairs (each bin's count, mean p and share genuine) */
    double curve[HEDGE_NSOURCES][HEDGE_NTARGETS][HEDGE_CURVE];
    double oracle_curve[HEDGE_NTARGETS][HEDGE_CURVE];
    double tau_bins[HEDGE_NSOURCES][HEDGE_NTARGETS][HEDGE_TAUBINS];
    int64_t ece_n[HEDGE_ECEBINS];
    double ece_p[HEDGE_ECEBINS], ece_y[HEDGE_ECEBINS];
} hedge_result;

void hedge_options_init(hedge_options *o);
int hedge_nmetrics(void);
/* the metric's name ("knn", "recall_0", ...), NULL out of range */
const char *hedge_metric_name(int id);
/* the uncertainty section's names: targets ("r1", ...) and measures ("auroc", ...), NULL out of
 * range (the sources' are in the result: a set's user sources are named by the caller) */
const char *hedge_target_name(int t);
const char *hedge_measure_name(int m);
/* 0: done; HEDGE_EINVAL, HEDGE_ENOMEM or HEDGE_ESTOPPED, one line in err (errlen bytes) */
int hedge_evaluate(const hedge_set *queries, const hedge_set *gallery /* NULL: leave-one-out */,
                   const hedge_options *o, hedge_result *r, char *err, size_t errlen);
void hedge_result_free(hedge_result *r);

/* The engine's two halves, for shards (lib/engine/evalpart.h: what a shard's answers hold, their
 * stream): hedge_evaluate is hedge_queries over every query, then hedge_finish. */
typedef struct evalpart evalpart;
/* kNN's k for Q against G (NULL: leave-one-out): o->knn_k, or the neighbours every query has when
 * fewer (0: none); -1 and err on bad input, as hedge_evaluate */
int hedge_neighbours(const hedge_set *Q, const hedge_set *G, const hedge_options *o, char *err, size_t len);
/* the queries half for the queries q0 .. q1 - 1 (0 <= q0 <= q1 <= n; o->q0, o->q1 are not used)
 * with kNN's k = knn_k (<= hedge_neighbours; several sets of one report vote with one k); 0, or -1
 * and err */
int hedge_queries(const hedge_set *Q, const hedge_set *G, const hedge_options *o, int64_t q0, int64_t q1, int knn_k,
                  evalpart *p, char *err, size_t len);
/* the finish half over p's queries (p->q0 .. p->q0 + p->nq - 1); 0, or -1 and err (p made with
 * other options or sets is refused when it can be seen: its size, its k) */
int hedge_finish(const hedge_set *Q, const hedge_set *G, const hedge_options *o, const evalpart *p,
                 hedge_result *r, char *err, size_t len);

/* A shard as bytes, for every face but bin/evaluate (Python's hedge.Shard): the answers of the
 * queries q0 .. q1 - 1 (the queries half) as the `evaluate` stream bin/evaluate --queries writes
 * for one set (formats/stream.md: the format's version in its header; the set's and the gallery's
 * hashes, the options and the queries' range in its meta), in *bytes, *nbytes long, to free with
 * hedge_free. Opaque to its holder: written to a file it is a shard bin/evaluate --merge reads.
 * 0, or HEDGE_EINVAL / HEDGE_ENOMEM / HEDGE_ESTOPPED with one line in err */
int hedge_shard(const hedge_set *queries, const hedge_set *gallery, const hedge_options *o, int64_t q0, int64_t q1,
                void **bytes, size_t *nbytes, char *err, size_t errlen);
/* the result of the whole call from its shards' bytes (shards[i], sizes[i] bytes; any order;
 * every query once), as hedge_evaluate gives it; shards of other sets or options, damaged ones,
 * a gap or an overlap refused (HEDGE_EINVAL) naming the shard ("shard I": its place in shards)
 * and what differs */
int hedge_merge(const hedge_set *queries, const hedge_set *gallery, const hedge_options *o, const void *const *shards,
                const size_t *sizes, int nshards, hedge_result *r, char *err, size_t errlen);
/* a shard's queries, from its bytes: range[0] .. range[1] - 1 of range[2]; 0, or HEDGE_EINVAL
 * and err (not an evaluate stream, not a shard) */
int hedge_shard_range(const void *bytes, size_t nbytes, int64_t range[3], char *err, size_t errlen);
void hedge_free(void *p);

/* the OpenBLAS kernel the engine runs. The first call of the engine (or of this) sets the
 * process's OpenBLAS to the kernel hedge's programs use on this CPU (lib/numerics/blas.h: SkylakeX with
 * AVX-512, Haswell for a Prescott fallback on AVX2), in place, so that a library caller (Python)
 * gets the programs' numbers to the bit and their speed; the process's other users of that
 * OpenBLAS (numpy's) run it too. HEDGE_BLAS_KEEP=1 in the environment keeps OpenBLAS's choice. */
const char *hedge_blas_kernel(void);
/* the library's version, as the programs' --version prints it ("0.1.0-gCOMMIT"; "-dirty" for a
 * tree with changes): hedge.__version__ */
const char *hedge_version(void);
/* the results r[0 .. nsets) of one call's sets (named names: "input", "corrupt") as one
 * self-contained HTML page at path (written whole or not at all), as evaluate --report writes it:
 * the table, then each set's risk-coverage curves, tau's bins, the reliability diagram and the
 * verification ROC (lib/engine/evalhtml.c); title NULL: "hedge evaluate". 0, or HEDGE_EINVAL /
 * HEDGE_ENOMEM with one line in err */
int hedge_report(const char *path, const hedge_result *r, int nsets, const char *const *names,
                 const hedge_options *o, const char *title, char *err, size_t errlen);
#endif
