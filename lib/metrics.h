/* metrics: the evaluation numbers of the HIB paper (section 4): average precision and the
 * precision-recall curve, equal-size binning by uncertainty, Kendall's tau-b, and k-nearest-
 * neighbour search in blocks (distances by blas_sgemm) with a majority vote; the AUC
 * (Mann-Whitney); and whether an uncertainty knows when it is wrong: the AUROC of wrong answers,
 * the area under the risk-coverage curve (AURC, E-AURC) and the calibration error (ECE), defined
 * at the end of this file.
 *
 * Every function works on caller-owned arrays and allocates only scratch it frees before
 * returning. Definitions and tie rules (each is also the documented behaviour of the programs):
 *
 *   AP       items sorted by score, descending. Items with equal scores form one block; every
 *            positive in a block gets the precision at the END of the block (tp / rank of the
 *            block's last item). AP = mean of that over the positives. This equals the step sum
 *            sum_t (R_t - R_{t-1}) P_t over the distinct scores t, and it does not depend on the
 *            input order (sklearn's average_precision_score gives the same number).
 *   PR curve one point per distinct score t (descending): recall, precision of "score >= t".
 *   PR-AUC   trapezoids between consecutive points of the curve, starting at
 *            (recall 0, precision of the first point). AP is the step (rectangle) version of the
 *            same area; PR-AUC >= AP whenever precision falls with recall.
 *   bins     n items in B equal-size bins: the first n mod B bins hold one item more
 *            (ceil(n/B)), the others floor(n/B) (numpy.array_split's rule).
 *   argsort  ascending by key, equal keys keep their input order (stable).
 *   argsort_random  ascending by key, equal keys in a seeded random order (a random permutation
 *            of the input positions drawn from the seed): the order of the input never matters,
 *            in distribution (retrieve's random cleaning).
 *   argsort_ties  ascending by key, equal keys by a tie key attached to the item (metrics_tie_key:
 *            a hash of the item's identity, e.g. its id, and a seed), equal in both by further
 *            columns of the item's values, then by input position. When the tie keys and the
 *            columns are all an item carries into the result, items equal in every one of them
 *            are interchangeable, so the result does not depend on the input order at all, not
 *            only in distribution (ktau's uncertainty bins).
 *   tie key  h = mix(seed ^ TIES), then h = mix(h ^ v) for each identity value v in turn (as a
 *            64-bit integer: an integral double in int64 range is converted, any other value
 *            enters by its bit pattern); mix is rng_mix (splitmix64's finaliser) and TIES is
 *            RNG_STREAM('t', 'i', 'e', 's'). A hash, not a position: among equal keys the order
 *            is a random permutation drawn from the seed, the same whatever the record order.
 *   tau-b    (nc - nd) / sqrt((n0 - n1)(n0 - n2)), n0 = n(n-1)/2, n1 / n2 = pairs tied in x / in
 *            y (a pair tied in both counts in both); tied pairs are neither concordant nor
 *            discordant. NaN when x or y is constant (the denominator is 0).
 *   kNN      squared Euclidean distances ||q||^2 + ||g||^2 - 2 q.g (float, blas_sgemm) in blocks of
 *            METRICS_QBLOCK queries x METRICS_GBLOCK gallery items, a sorted top-k per query
 *            kept while the blocks stream by (leave-one-out, the gallery as its own queries:
 *            only the square tiles on and above the diagonal, each read by rows and by columns,
 *            half the sgemm), the winners' distances then recomputed in double;
 *            equal distances: the lower gallery index first. Items whose squared norm (or added
 *            term) exceeds FLT_MAX / 16 (coordinates beyond about 4.6e18) could overflow the float
 *            sums: they are kept out of the float screen and compared exactly in double (a huge
 *            query against the whole gallery, every query against the huge gallery items), so
 *            no finite input overflows the screen or leaves a query without its k neighbours.
 *   vote     the class with the most of the k neighbours; tied counts: the smallest sum of
 *            (Euclidean, not squared) distances among the tied classes; still tied: the class of
 *            the best-ranked neighbour among them.
 *
 *   double ap = metrics_ap(score, label, n);                  // score[n] double, label[n] 0/1
 *   int64_t start[21]; metrics_bins(n, 20, start);            // bin b is [start[b], start[b+1])
 *   double tau = metrics_tau_b(x, y, 20, NULL);
 */
#ifndef HEDGE_METRICS_H
#define HEDGE_METRICS_H
#include <stdint.h>

/* ---- ranking */
/* idx[0..n) such that key[idx[0]] <= key[idx[1]] <= ...; equal keys in input order */
void metrics_argsort(const double *key, int64_t n, int64_t *idx);
/* the same, but equal keys in a random order drawn from seed (the same seed, the same order) */
void metrics_argsort_random(const double *key, int64_t n, uint64_t seed, int64_t *idx);
/* the tie key of an item from its nident identity values (e.g. {id}; fewshot {episode, id}) */
uint64_t metrics_tie_key(uint64_t seed, const double *ident, int nident);
/* ascending by key; equal keys by tie[] ascending; equal in both by more[0][i], more[1][i], ...
 * ascending (nmore columns, NaN last); then by input position */
void metrics_argsort_ties(const double *key, const uint64_t *tie, int nmore, const double *const *more, int64_t n,
                          int64_t *idx);

/* AP of score against label (nonzero = positive) by the tie-block rule above; NaN when there is
 * no positive. Scores must be finite. */
double metrics_ap(const double *score, const uint8_t *label, int64_t n);

typedef struct {
    double threshold;  /* a distinct score; the point is "predict positive when score >= it" */
    double recall, precision;
    int64_t tp, fp;
} metrics_pr_point;
/* writes one point per distinct score, highest threshold first, into pts (room for n points);
 * returns how many. Recall is 0/0 = NaN when there is no positive. */
int64_t metrics_pr_curve(const double *score, const uint8_t *label, int64_t n, metrics_pr_point *pts);
/* AP from the curve: sum (R_t - R_{t-1}) P_t (equals metrics_ap) */
double metrics_pr_step_area(const metrics_pr_point *pts, int64_t npts);
/* trapezoids from (0, P_first) through every point */
double metrics_pr_trapezoid_area(const metrics_pr_point *pts, int64_t npts);

/* ---- binning and rank correlation */
/* start[B + 1]: bin b holds sorted items start[b] .. start[b+1]-1. Requires n >= B >= 1. */
void metrics_bins(int64_t n, int B, int64_t *start);

typedef struct {
    int64_t concordant, discordant, tied_x, tied_y, tied_both, pairs;
} metrics_tau_counts;
/* Kendall's tau-b of (x[i], y[i]), O(n^2) (meant for bins); counts may be NULL */
double metrics_tau_b(const double *x, const double *y, int64_t n, metrics_tau_counts *counts);

/* ---- k nearest neighbours */
#ifndef METRICS_QBLOCK
#define METRICS_QBLOCK 256
#endif
#ifndef METRICS_GBLOCK
#define METRICS_GBLOCK 2048
#endif

/* For each query q (nq x D, row-major) the k nearest gallery items (ng x D) by
 *     d2(q, g) = ||q - g||^2 + qx[q] + gx[g]
 * qx, gx (or NULL for 0): per-item terms added to the squared distance (total variances turn d2
 * into the expected squared distance between two random embeddings), finite and >= 0, in double
 * so that huge variances do not overflow. Coordinates must be finite (dies otherwise, naming the
 * query or gallery index). exclude[q] (or NULL): a
 * gallery index never returned for query q (the query itself, for leave-one-out), -1 for none.
 * Needs at least k gallery items left for every query (dies otherwise).
 * Selection scans float distances from blas_sgemm on coordinates centred on the gallery's mean
 * (metrics_centre), keeping the best k + METRICS_KNN_SLACK per query; those candidates' d2 are
 * then recomputed directly in double and the best k kept, by (d2, gallery index). The screen's
 * rounding is bounded (lib/metrics.c, KNN_SCREEN_ERR): a query whose candidates cannot be proven
 * to hold its true k nearest by that bound (near-ties, duplicates) is searched in full in
 * double, so the result is always the exact one in double, however far from the origin.
 * Results: nbr[q*k + r] the gallery index of rank r, d2[q*k + r] >= 0 (d2 may be NULL: not kept).
 * threads: workers (lib/par.h) that take the blocks of queries as they free up, with single-threaded
 * sgemms (BLAS threads are set to 1 meanwhile and restored after); the results do not depend on it.
 * Leave-one-out (Q and G the same array, qx and gx too) computes only the distance tiles on and
 * above the diagonal; with k + slack >= 32 each query first gets a threshold from a sample of the
 * gallery and the tiles keep what lies below it (lib/metrics.c: knn_screen_theta, knn_screen_self).
 * Memory: the inputs, their centred float copies, (nq, k + slack) candidates and one block of
 * floats per thread (2 MB); leave-one-out also (nq, 4 (k + slack)) thresholded candidates, a
 * permuted copy of the centred gallery and 256 x (its sample, about 8 ng / (k + 4)) floats per
 * thread, or with k + slack < 32 (nq, k + slack) candidates per thread, while they fit 1 GB (else
 * the plain screen). */
#define METRICS_KNN_SLACK 4
void metrics_knn(const float *Q, const double *qx, int64_t nq, const float *G, const double *gx, int64_t ng,
                 int D, int k, const int64_t *exclude, int threads, int64_t *nbr, double *d2);
/* what the last metrics_knn call did (for tests): its screen, and how many queries the threshold
 * screen handed to the plain one (its threshold fell below the k + slack nearest, or too many
 * items lay below it) */
enum { METRICS_SCREEN_PLAIN, METRICS_SCREEN_SELF, METRICS_SCREEN_THETA };
typedef struct {
    int screen;
    int64_t fell;
} metrics_knn_info;
extern metrics_knn_info metrics_knn_last;

/* The centre mean (D) that the float distance screens (metrics_knn, retrieval_run) subtract from
 * queries Q (nq, D) and gallery G (ng, D) before ||q||^2 + ||g||^2 - 2 q.g, which far from the
 * origin cancels catastrophically: the mean of the gallery items whose squared norm is at most
 * limit (0 when none), in double, each coordinate d rounded to the nearest multiple of the
 * coarsest power of two dividing every nonzero coordinate d of G and Q. So q - mean is exact in
 * double, and in float wherever it is small enough: integer coordinates stay integers and their
 * squared distances stay exact in float32 (below 2^24), as without centring. */
void metrics_centre(const float *Q, int64_t nq, const float *G, int64_t ng, int D, double limit, double *mean);

/* the voted class of one query from its k neighbours' classes and distances (rank order) */
int32_t metrics_vote(const int32_t *cls, const double *dist, int k);

/* ---- AUC (Mann-Whitney), ties counting 1/2
 *   AUC      of score for positives against negatives: the fraction of (positive, negative) pairs
 *            in which the positive scores higher, a tied pair counting 1/2. From midranks (1-based
 *            ranks, ascending; a block of equal scores all get the mean of the positions it
 *            spans): U = R_pos - n_pos (n_pos + 1) / 2 (R_pos the positives' rank sum) and
 *            AUC = U / (n_pos n_neg). Midranks are multiples of 1/2, so U is exact in double
 *            while n^2 < 2^52 (n below about 6.7e7). NaN when there is no positive or no negative.
 *   groups   one sort gives the AUC of every group against the rest (group g's rank sum): for
 *            G values of an attribute, O(n log n + n) instead of G sorts.
 *
 *   metrics_auc_midranks(x, n, rank);                        // once per score column
 *   metrics_auc_groups(rank, group, n, G, npos, u, auc);     // every group's U and AUC
 */
/* rank[i] = the midrank of x[i] among x[0..n); x must hold no NaN */
void metrics_auc_midranks(const double *x, int64_t n, double *rank);
/* group[i] in 0..G-1 (dies otherwise). npos[g] = items of group g, u[g] = its Mann-Whitney U against
 * the other items (pairs won plus half the ties), auc[g] = u[g] / (npos[g] (n - npos[g])), NaN
 * when npos[g] is 0 or n; npos, u or auc may be NULL */
void metrics_auc_groups(const double *rank, const int32_t *group, int64_t n, int G, int64_t *npos, double *u,
                        double *auc);
/* AUC of score against label (nonzero = positive); scores must not be NaN */
double metrics_auc(const double *score, const uint8_t *label, int64_t n);

/* ---- does an uncertainty know when it is wrong? (the per-item measures of ktau, apcurve --ece)
 *   AUROC    of the uncertainty u at telling wrong items (the positives) from right ones:
 *            P(u_wrong > u_right) + 1/2 P(u_wrong = u_right), metrics_auc with label = wrong.
 *            NaN when every item is right or every item is wrong.
 *   risk-coverage (Geifman and El-Yaniv, "Selective classification for deep neural networks",
 *            2017; "Bias-reduced uncertainty estimation", 2019). loss[i] is an item's loss,
 *            1 - its performance (the 0/1 error of a binary `correct`; 1 - AP of a query).
 *            Items are kept most confident first: ascending u. risk(k) = mean loss of the k
 *            first, and
 *                AURC = (1/n) sum_{k=1..n} risk(k).
 *            Ties: items of equal u are in no order, so risk(k) is its EXACT expectation over
 *            uniformly random orders inside each block of equal u: for k inside a block that
 *            starts after b items whose losses sum to L_b, E[sum of the k first] =
 *            L_b + (k - b) x (the block's mean loss). The record order never matters, there is
 *            no seed, and a constant u gives risk(k) = the mean loss for every k, so AURC = the
 *            overall error rate.
 *   oracle   the same with the items ordered by loss, ascending (the best possible ordering;
 *            ties in loss change nothing). E-AURC = AURC - oracle AURC (>= 0 up to rounding).
 *   curve    at rejected fractions r / npts, r = 0 .. npts-1 (ktau: npts = 100, 0 .. 99 %):
 *            kept k = n - floor(r n / npts) >= 1 items, risk(k) and the oracle's risk(k).
 *   ECE      expected calibration error of a probability p against a binary label y (Guo et al.,
 *            "On calibration of modern neural networks", 2017, with B = 15 bins,
 *            METRICS_ECE_BINS): B equal-width bins on [0, 1], bin b (0-based) holding
 *            (b/B, (b+1)/B] (Guo et al.'s I_m = ((m-1)/M, m/M]), and p = 0 in the first bin, as
 *            sklearn's calibration_curve puts it (np.searchsorted(bins[1:-1], p): the number of
 *            inner edges strictly below p). Decided exactly (p against k/B by the sign of
 *            fma(p, B, -k)), not by a rounded product. sklearn's inner edges are numpy.linspace's
 *            k x fl(1/B), which can differ from k/B in the last bit: a double p within an ulp of
 *            such an edge can land one bin apart; a float32 p never does (a 24-bit fraction is
 *            never that close to k/B unless it equals it, and then both agree), and with B = 15
 *            no float32 p other than 0 and 1 lies on an edge, so [lo, hi) gave the same numbers.
 *                ECE = sum over the non-empty bins b of (n_b / n) |mean(y)_b - mean(p)_b|
 *                    = (1/n) sum_b |sum(y)_b - sum(p)_b|.
 *            A p outside [0, 1] or NaN is not a probability: the caller reports it.
 * Cost: one sort each (O(n log n)), sums in double.
 *
 *   double auroc = metrics_error_auroc(u, correct, n);
 *   metrics_aurc_result a; metrics_rc_point curve[100];
 *   metrics_aurc(u, loss, n, &a, 100, curve);               // a.aurc, a.oracle, a.eaurc
 *   int64_t bad; double ece = metrics_ece(p, y, n, METRICS_ECE_BINS, NULL, &bad);
 */
/* u must hold no NaN; correct[i] nonzero = right */
double metrics_error_auroc(const double *u, const uint8_t *correct, int64_t n);

typedef struct {
    double aurc, oracle, eaurc;
} metrics_aurc_result;
typedef struct {
    double rejected;         /* r / npts */
    int64_t kept;            /* n - floor(r n / npts) */
    double risk, oracle_risk; /* the expected mean loss of the kept items, and the oracle's */
} metrics_rc_point;
/* AURC, oracle AURC and E-AURC of u (finite) against loss (finite), into *res (all NaN when n is
 * 0); curve (or NULL): npts points, rejected 0, 1/npts, ..., (npts-1)/npts */
void metrics_aurc(const double *u, const double *loss, int64_t n, metrics_aurc_result *res, int npts,
                  metrics_rc_point *curve);

#define METRICS_ECE_BINS 15
typedef struct {
    int64_t n;
    double mean_p, mean_y; /* NaN for an empty bin */
} metrics_ece_bin;
/* ECE of p against y (nonzero = 1) in B >= 1 bins (dies otherwise); bins (or NULL): B entries.
 * A p[i] that is not a probability: returns NaN with *bad = i (the first such item); else *bad =
 * -1 (bad may be NULL). NaN when n is 0. */
double metrics_ece(const double *p, const uint8_t *y, int64_t n, int B, metrics_ece_bin *bins, int64_t *bad);

/* ---- an item's scalar uncertainty from an embedding stream (knn's `eta`, like retrieve's):
 * u[i] = eta[i] when eta is given; else, when var is, the mean of the item's cd = C x D
 * variances var[i cd .. (i+1) cd), summed in double. Returns "eta", "var", or NULL (neither: a
 * point embedding, u untouched). */
const char *metrics_item_uncertainty(const float *eta, const float *var, int64_t n, int64_t cd, double *u);

#endif
