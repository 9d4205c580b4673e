/* match: the HIB match probability and the self-mismatch uncertainty (hib-oh-2019, Eqs. 2, 4, 5, 9).
 *
 *   p(m | z1, z2) = sigmoid(-a ||z1 - z2||_2 + b)            a > 0, b from the embedding stream
 *
 * An embedding is an equal-weight mixture of C diagonal Gaussians, mu and var (C, D), row-major;
 * var NULL is a point embedding (C = 1), or for C > 1 a mixture of C points.
 *   - points: p is exact, the mean of the sigmoid over the C1 x C2 component pairs (for C = 1 the
 *     closed form sigmoid(-a ||mu1 - mu2|| + b)); eta = 1 - p(x, x) = 1 - sigmoid(b) for C = 1.
 *   - stochastic (var given, scorer.stochastic): Eq. 5, p = mean over the K x K sample pairs, with K
 *     samples per embedding, stratified (K / C from each component: sample k comes from component
 *     k / (K / C)), z = mu_c + sqrt(var_c) eps, eps ~ N(0, I). K must be a multiple of C.
 *     Precision: a sample is kept as its component and its noise n = sqrt(var_c) eps in double, and
 *     z1 - z2 is computed as (mu_c1 - mu_c2) + (n1 - n2), never as a difference of rounded samples:
 *     so any finite mean and variance give the right p, e.g. eta does not depend on where the
 *     embedding sits (a mean of 1e20 with variance 1 has the eta of a mean of 0 with variance 1),
 *     and a variance of 3e38 gives eta near 1 instead of collapsing the samples onto the mean.
 *
 * Randomness: an embedding's samples depend only on (seed, its index, which set): set A is drawn
 * from rng stream MATCH_SET_A ^ index, set B from MATCH_SET_B ^ index. For a pair, the embedding
 * with the lower index uses set A and the other set B; for (x, x) that is A against B, two
 * independent sample sets, as Eq. 9 needs. So p is symmetric and eta(x) = 1 - p(x, x). Results
 * never depend on the order pairs are scored in.
 *
 * Ownership: a scorer owns its scratch (two K x D noise buffers); it is not shared by threads.
 *
 *   match_scorer s;
 *   match_scorer_init(&s, a, b, 8, 714, 1);                   // K = 8, seed, stochastic
 *   match_emb x = {mu, var, C, D, index}, y = {...};
 *   double p = match_prob(&s, &x, &y), eta = match_eta(&s, &x);
 *   match_scorer_free(&s);
 *
 * An embedding set is a whole `embeddings` (or `eta`) stream in memory, for the programs that need
 * random access (pairscore, knn); it owns its arrays:
 *   match_set *S = match_set_read(reader);    // dies on another kind or on no records
 *   match_emb x = match_set_emb(S, i);
 *   match_set_free(S);
 */
#ifndef HEDGE_MATCH_H
#define HEDGE_MATCH_H
#include <stdint.h>

#include "classnames.h"
#include "rng.h"
#include "stream.h"

#define MATCH_SET_A RNG_STREAM('m', 'c', 's', 'A')
#define MATCH_SET_B RNG_STREAM('m', 'c', 's', 'B')

typedef struct {
    const float *mu;   /* (C, D) */
    const float *var;  /* (C, D), or NULL: point components */
    int C, D;
    uint64_t index;    /* record index: names the embedding's random streams */
} match_emb;

typedef struct {
    double a, b;
    int K;             /* samples per embedding (stochastic) */
    uint64_t seed;
    int stochastic;    /* 1: Monte Carlo on var; 0: exact over component means, var ignored */
    double *n1, *n2;   /* scratch, K x D each: the samples' noise around their components */
    int cap;           /* doubles allocated in each */
} match_scorer;

static inline double match_sigmoid(double x)
{
    return x >= 0 ? 1.0 / (1.0 + __builtin_exp(-x)) : __builtin_exp(x) / (1.0 + __builtin_exp(x));
}

void match_scorer_init(match_scorer *s, double a, double b, int K, uint64_t seed, int stochastic);
void match_scorer_free(match_scorer *s);

/* sigmoid(-a ||z1 - z2|| + b) for two D-vectors */
double match_prob_points(const float *z1, const float *z2, int D, double a, double b);
/* mean of sigmoid(-a ||z1_i - z2_j|| + b) over all n1 x n2 pairs of rows of z1 (n1, D), z2 (n2, D) */
double match_prob_sets(const float *z1, int n1, const float *z2, int n2, int D, double a, double b);
/* K stratified samples of x from generator r as noise n (K, D) around their components: sample k
 * is mu[k / (K / C)] + n[k], n = sqrt(var) eps (var NULL: n = 0) */
void match_draw_noise(const match_emb *x, int K, rng *r, double *n);

/* p(m | x1, x2) by the rules above */
double match_prob(match_scorer *s, const match_emb *x1, const match_emb *x2);
/* eta(x) = 1 - p(m | x, x) */
double match_eta(match_scorer *s, const match_emb *x);

/* The shape check of an embedding stream's header, in one place: kind `embeddings` or `eta`,
 * unbatched, `mu` float32 [C, D] with C >= 1 components and D >= 1 dimensions (C x D below 2^31),
 * and `var`, when present, float32 of the same shape. Dies with one line naming what was found and
 * what was expected, e.g. "x.hs: field 'mu' is float32 [0, 8], expected float32 [C, D] with C >= 1
 * and D >= 1". Every reader of embeddings calls it before it reads a record (match_set_read does,
 * so knn, retrieve and fewshot; pairscore; centroids); src names the input in the message.
 *   match_layout L = match_check_header(in->name, in->header);   // L.mu, L.var (-1), L.C, L.D */
typedef struct {
    int mu, var;  /* field indices; var -1 when absent (point embeddings) */
    int C, D;
} match_layout;
match_layout match_check_header(const char *src, const stream_header *h);

/* a whole embedding stream in memory */
typedef struct {
    int64_t n;
    int C, D;
    float *mu;        /* (n, C, D) */
    float *var;       /* (n, C, D), NULL for point embeddings (no `var` field) */
    int32_t *cls;     /* (n), NULL without a `class` field */
    int64_t *id;      /* (n): the `id` field, or the record index when there is none */
    int has_id;
    float *eta;       /* (n), NULL without an `eta` field */
    uint8_t *occ;     /* (n, nocc), NULL without an `occluded` field */
    int nocc;
    uint8_t *corrupt; /* (n), NULL without a `corrupt` field (0/1: a low-quality item, fromnpz) */
    classnames names; /* meta class_names (cls indexes it; present 0: integer classes), checked */
} match_set;
/* The match probability of an embeddings stream (formats/stream.md): 1 with its meta match_a,
 * match_b in *a, *b; 0 without them, or when its meta `loss` names a loss that learns none
 * (embed wrote a = 1, b = 0 for those before: a placeholder, not a probability), with why
 * (why_len bytes, may be NULL) saying which. */
int match_meta_ab(const stream_header *h, double *a, double *b, char *why, size_t why_len);

/* reads every record of r, whose header must pass match_check_header; dies on an empty stream
 * ("no records") */
match_set *match_set_read(stream_reader *r);
/* the n distinct sets S[i] (src[i] their names), read to be used together (queries and a gallery,
 * support and queries), matched by name (lib/streams/classnames.h): each one's classes renumbered into
 * the union of their class names, which every S[i]->names becomes; nothing changes when none is
 * named. Dies when one is named and another not, or str names meet bytes. */
void match_sets_unify(match_set *const *S, const char *const *src, int n);
match_emb match_set_emb(const match_set *S, int64_t i);
void match_set_free(match_set *S);
/* each item's centre, the mean of its C component means (n, D; the distance of knn -d mean and
 * retrieve), and, when tv is not NULL, its total variance E||z - E z||^2 (within- plus
 * between-component, n doubles: a sum of huge variances may exceed float) in *tv. The caller
 * frees both. */
float *match_set_means(const match_set *S, double **tv);
/* the same means (no tv), for a caller done with S->mu: with one component they are S->mu itself,
 * handed over (S->mu becomes NULL): no copy, and no fresh memory to fault in (on these machines
 * first touching a page costs more than copying it; 10 MB for 20,000 x 128) */
float *match_set_take_means(match_set *S);

/* --distance cosine (knn, retrieve): each row of X (n, D) divided by its Euclidean norm (summed in
 * double), so that the Euclidean ranking of the rows is the ranking by cosine similarity
 * (||x - y||^2 = 2 - 2 cos for unit vectors; pytorch-metric-learning's normalised embeddings).
 * Returns the index of the first row whose norm is 0 (a zero vector has no direction: the caller
 * refuses it, naming the item; rows before it are normalised), else -1. A row with a coordinate
 * that is not finite is left as it is, for the distance's own check to name. */
int64_t match_normalise(float *X, int64_t n, int D);
/* --distance of knn and retrieve, parsed here only: euclidean (the default), cosine, mls (the
 * mutual likelihood score of single Gaussians, lib/numerics/mls.h: ranked by -MLS) or w2 (the
 * 2-Wasserstein distance of single Gaussians: the Euclidean distance of (mu, sqrt var),
 * match_set_w2); anything else is misuse */
enum { MATCH_DISTANCE_EUCLIDEAN, MATCH_DISTANCE_COSINE, MATCH_DISTANCE_MLS, MATCH_DISTANCE_W2, MATCH_DISTANCE_CSD,
       MATCH_DISTANCE_KL, MATCH_DISTANCE_BHATT };
/* csd, kl and bhatt (bhattacharyya) rank single Gaussians by the MLS kernel's other distances
 * (lib/numerics/mls.h), exactly over the whole gallery as mls does; elk (the expected likelihood
 * kernel, whose log is MLS) is mls. */
int match_distance_parse(const char *s);
/* the same without dying: -1 for a name that is none of them */
int match_distance_find(const char *s);
/* the kernel's kind of a distance (MLS_NEG for mls, MLS_CSD, MLS_KL, MLS_BHATT), -1 for the
 * others (the Euclidean ones: euclidean, cosine, w2) */
int match_distance_kernel(int distance);
/* the option's name of a distance: euclidean cosine mls w2 csd kl bhattacharyya */
const char *match_distance_name(int distance);
/* what --distance mls (option: the option's name, for the messages) needs of an embedding set:
 * a var field, one component (C = 1), every variance at least FLT_MIN (MLS takes its log). Dies
 * with one line naming the set (name) and, for a variance, the record. */
void match_mls_check(const char *name, const match_set *S, const char *option);
/* the same for a kernel distance (match_distance_kernel): csd takes any variance match_set_read
 * takes (finite, >= 0: no log), the others as mls; the message names --distance NAME */
void match_kernel_check(const char *name, const match_set *S, int distance);
/* distance w2: W2(N(m1, diag v1), N(m2, diag v2))^2 = |m1 - m2|^2 + |sqrt v1 - sqrt v2|^2, the
 * squared Euclidean distance of the vectors (m, sqrt v) of 2D dimensions, so that every Euclidean
 * part of an evaluation ranks by W2 at the matrix product's speed. match_w2_vectors writes n items'
 * (mu, sqrt var) into mu2 and (var, var) into var2 (n x 2D each: the variances' mean per item is
 * var's, the uncertainty the evaluations read); match_set_w2 makes S, a set it owns (match_set_read),
 * so, dying with one line naming it (name) when it has no var, C != 1 or a negative variance. */
void match_w2_vectors(const float *mu, const float *var, int64_t n, int D, float *mu2, float *var2);
void match_set_w2(const char *name, match_set *S);

/* The scores of pairscore --score: p (the match probability above), or one number per pair,
 * higher = more alike: mls (lib/numerics/mls.h), l2 (minus the Euclidean distance of the two means) and
 * cosine (their cosine similarity), each mean a mixture's average component mean (knn -d mean),
 * in double; and the distances between two Gaussians N(mu1, diag v1), N(mu2, diag v2) (C = 1,
 * variances as MLS needs them), negated (docs/metric.md, "Distribution scores"):
 *   w2     the 2-Wasserstein distance, sqrt(||mu1 - mu2||^2 + ||sqrt v1 - sqrt v2||^2)
 *   csd    PCME++'s closed-form sampled distance, E||z1 - z2||^2 = ||mu1 - mu2||^2 + sum (v1 + v2)
 *   kl     the symmetric KL, (KL(1||2) + KL(2||1)) / 2 = 1/4 sum [v1/v2 + v2/v1 - 2 + (mu1 -
 *          mu2)^2 (1/v1 + 1/v2)]
 *   bhatt  the Bhattacharyya distance, 1/8 sum (mu1 - mu2)^2 / v + 1/2 sum log(v / sqrt(v1 v2)),
 *          v = (v1 + v2) / 2
 * (elk, the log of the expected likelihood kernel, is MLS itself for Gaussians: the name is
 * taken for mls.) Names and the fields that hold them in a pairscores stream: */
enum { MATCH_SCORE_P, MATCH_SCORE_MLS, MATCH_SCORE_L2, MATCH_SCORE_COSINE, MATCH_SCORE_W2, MATCH_SCORE_CSD,
       MATCH_SCORE_KL, MATCH_SCORE_BHATT, MATCH_SCORES };
extern const char *const match_score_names[MATCH_SCORES];  /* p mls l2 cosine w2 csd kl bhatt */
extern const char *const match_score_fields[MATCH_SCORES]; /* p mls neg_l2 cos neg_w2 neg_csd neg_kl neg_bhatt */
int match_score_parse(const char *s); /* -1: none of them ("elk": mls) */
/* 1 for the scores of two Gaussians (mls and the distances): they need match_mls_check */
int match_score_gaussian(int score);
/* a pair scorer for the scores other than p, of S's item i against G's item j (G may be S);
 * it keeps each set's means (and for cosine their norms), so init checks nothing: mls needs
 * match_mls_check of both sets first, cosine a non-zero mean (match_pair_directed) */
typedef struct {
    int score, D;
    const match_set *S, *G;
    float *Sm, *Gm;   /* (n, D) means, NULL for mls */
    double *Sn, *Gn;  /* their norms, for cosine */
} match_pair_scorer;
void match_pair_scorer_init(match_pair_scorer *p, int score, const match_set *S, const match_set *G);
double match_pair_score(const match_pair_scorer *p, int64_t i, int64_t j);
/* cosine: 0 when item i of S or j of G has a zero mean (no direction; *which 0 or 1 says which),
 * else 1; always 1 for the other scores */
int match_pair_directed(const match_pair_scorer *p, int64_t i, int64_t j, int *which);
void match_pair_scorer_free(match_pair_scorer *p);

/* An index from record id to record position, for the programs that look records up by id
 * (pairscore --pairs, knn --exclude-id). match_ids_index returns the sorted table (owned by the
 * caller, free()) and sets *dup to 1 and *dup_id to an id that appears twice, if any. */
typedef struct {
    int64_t id, index;
} match_id_index;
match_id_index *match_ids_index(const int64_t *ids, int64_t n, int *dup, int64_t *dup_id);
/* position of id in the table's records, -1 if absent */
int64_t match_ids_lookup(const match_id_index *t, int64_t n, int64_t id);

#endif
