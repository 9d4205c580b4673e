/* selective: does an uncertainty know when a query's answer is wrong, and does it know more than
 * the signals every model gives for free? Every source of uncertainty (the free baselines and the
 * learned ones) against every per-query loss (the targets), by every measure of error versus
 * reject, each with a seeded bootstrap interval, and each learned source's difference from the
 * best free baseline with a paired interval. Definitions (docs/metric.md has the table, with how
 * the field's anchors map onto them):
 *
 *   order    queries by u ascending (surest first); a run of equal u is one step of every curve:
 *            what it contributes is its expectation over random orders within the run
 *   AUROC    P(u_wrong > u_right) + P(=) / 2, a binary loss only (lib/measures/aurc.h)
 *   AURC     (1/n) sum_k r_k, r_k = (1/k) sum_{j<=k} l_(j), the selective risk (Geifman 2019)
 *   E-AURC   AURC - AURC of the losses themselves in ascending order (the oracle)
 *   AUGRC    (1/n) sum_k GR_k, GR_k = (1/n) sum_{j<=k} l_(j): the share of queries both kept
 *            and wrong (Traub et al. 2024)
 *   tau      Kendall's tau-b between the bin index of 20 equal bins by u and the bins' mean
 *            performance (1 - loss), sign inverted: > 0 when performance falls as u rises
 *            (hib-oh-2019 section 4.4, ktau -b 20; equal u in bins by the items' tie keys)
 *   pearson_bins  PCME++'s (eval_uncertainty): the Pearson r between the bin index 0 .. 9 of 10
 *            bins of floor(n / 10) queries by u (the n mod 10 most uncertain left out) and the
 *            bins' mean performance: < 0 when performance falls as u rises
 * A target is a loss per query in [0, 1] defined on some queries (NaN elsewhere: left out); the
 * measures of a (source, target) are over the queries where both are defined.
 *
 * Bootstrap: replicate b (0 .. B-1) draws n query indices uniformly with replacement from the
 * generator rng_init(seed, SELECTIVE_BOOT ^ b) by rng_below(n), one after the other; a query's
 * count is how often it was drawn, and every number is recomputed with the queries weighted by
 * their counts (a query of count c is c tied copies). The 95 % interval of a number is the 2.5th
 * and 97.5th percentile of its replicates (numpy's default, linear interpolation between order
 * statistics), over the replicates where it is defined; NaN (why) when fewer than half are.
 * Per-query values are computed once; a replicate costs O(n) per (source, target).
 *
 * Ownership: the caller's arrays are borrowed; selective_run fills the caller's result.
 *
 *   selective_source S[] = {{"top1_dist", top1, 0}, {"var", var, 1}};
 *   selective_target T[] = {{"r1", r1_loss, 1}, {"ap", ap_loss, 0}};
 *   selective_result R;
 *   selective_run(S, 2, T, 2, means, nmeans, n, tie, 1000, 714, threads, &R);
 */
#ifndef HEDGE_SELECTIVE_H
#define HEDGE_SELECTIVE_H
#include <stdint.h>

#define SELECTIVE_MAXSOURCES 8
#define SELECTIVE_MAXTARGETS 4
#define SELECTIVE_MAXMEANS 40
#define SELECTIVE_BINS 20
#define SELECTIVE_CURVE 50 /* the risk-coverage curve's points: coverage 1/50, 2/50, .., 1 */
#define SELECTIVE_BOOT 0x626f6f7400000000ull /* RNG_STREAM('b','o','o','t') */
enum {
    SELECTIVE_AUROC, SELECTIVE_AURC, SELECTIVE_EAURC, SELECTIVE_AUGRC, SELECTIVE_TAU, SELECTIVE_PEARSON,
    SELECTIVE_NMEASURES
};

typedef struct {
    const char *name;
    const double *u;   /* (n) finite, or NULL: the source is missing (why) */
    int learned;       /* 0: a free baseline */
    const char *why;   /* why u is NULL */
} selective_source;

typedef struct {
    const char *name;
    const double *loss; /* (n) in [0, 1] or NaN (the query has no such loss) */
    int binary;         /* every defined loss is 0 or 1 */
    const char *why;    /* why loss is NULL */
} selective_target;

/* a mean over the queries whose value is defined (a retrieval metric), for its interval; with
 * cls, the mean over classes of the means within each class (avg_of_avgs) */
typedef struct {
    const double *v;     /* (n), NaN where undefined */
    const int32_t *cls;  /* (n) or NULL */
} selective_mean;

typedef struct {
    int nsources, ntargets, nmeans, replicates;
    double value[SELECTIVE_MAXSOURCES][SELECTIVE_MAXTARGETS][SELECTIVE_NMEASURES];
    double ci[SELECTIVE_MAXSOURCES][SELECTIVE_MAXTARGETS][SELECTIVE_NMEASURES][2];
    char why[SELECTIVE_MAXSOURCES][SELECTIVE_MAXTARGETS][SELECTIVE_NMEASURES][120];
    /* for each learned source: its difference from the best free baseline (by the point value:
     * the highest AUROC and tau, the lowest AURC, E-AURC and AUGRC), on the same replicates */
    int best[SELECTIVE_MAXTARGETS][SELECTIVE_NMEASURES];   /* that baseline's index, -1: none */
    double diff[SELECTIVE_MAXSOURCES][SELECTIVE_MAXTARGETS][SELECTIVE_NMEASURES];
    double diff_ci[SELECTIVE_MAXSOURCES][SELECTIVE_MAXTARGETS][SELECTIVE_NMEASURES][2];
    double mean_ci[SELECTIVE_MAXMEANS][2];
    char ci_why[120];    /* why there are no intervals (no bootstrap, too few queries) */
    /* the pictures of each (source, target) that can be measured (NaN where not): the risk, the
     * mean loss of the queries answered, at coverage (i + 1) / SELECTIVE_CURVE of those with this
     * loss (the most certain first, equal u by their expectation over the run's orders, as
     * AURC), and the oracle's (by the loss itself); the performance (1 - loss) in each of tau's
     * bins (the items in tau's order: -tau_b of (bin, performance) is the tau above) */
    double curve[SELECTIVE_MAXSOURCES][SELECTIVE_MAXTARGETS][SELECTIVE_CURVE];
    double oracle[SELECTIVE_MAXTARGETS][SELECTIVE_CURVE];
    double bins[SELECTIVE_MAXSOURCES][SELECTIVE_MAXTARGETS][SELECTIVE_BINS];
} selective_result;

/* every measure of every (source, target) into R, with B bootstrap replicates (0: none) from
 * seed, on `threads` threads (the same bytes for any number); tie (n): the queries' tie keys
 * (metrics_tie_key) for tau's bins. means (nmeans) get intervals only. */
void selective_run(const selective_source *S, int nsources, const selective_target *T, int ntargets,
                   const selective_mean *means, int nmeans, int64_t n, const uint64_t *tie, int B, uint64_t seed,
                   int threads, selective_result *R);
/* a measure's name ("auroc", ...), NULL out of range */
const char *selective_measure_name(int m);
/* 1 when a larger value of measure m is better (AUROC, tau), 0 when a smaller one is (AURC,
 * E-AURC, AUGRC, and pearson_bins, negative for a useful uncertainty) */
int selective_higher_better(int m);

/* the fast path of a replicate (tested against lib/measures/aurc.h's exact functions with every count 1):
 * the measures of u against loss over the items order[0 .. m) (ascending u, equal u adjacent;
 * oorder: the same items by ascending loss) with counts c (NULL: 1 each); H (>= the total
 * count + 1 entries): the harmonic numbers H[k] = sum_{j<=k} 1/j */
void selective_measures(const double *u, const double *loss, int binary, const int64_t *order,
                        const int64_t *oorder, int64_t m, const uint32_t *c, const double *H,
                        double out[SELECTIVE_NMEASURES]);
#endif
