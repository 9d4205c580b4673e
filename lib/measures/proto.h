/* proto: class prototypes and class posteriors of few-shot episodes, in double: Prototypical
 * Networks (PN) and Stochastic Prototype Embeddings (SPE, spe-scott-2019 section 3 and
 * ../shared/papers/NOTES.md). Used by the few-shot evaluation (bin/fewshot.c); meant for the
 * episode losses too.
 *
 * An episode has n classes, labelled 0 .. n-1, and m support embeddings with labels in [0, n);
 * every class needs at least one. An embedding enters as a diagonal Gaussian: a mean mu (D) and,
 * for SPE, variances var (D); proto_gaussian() turns a mixture (C, D) into one. All arrays are
 * row-major; shapes are in the comments.
 *
 * PN   m_y      = mean of the support means mu_i of class y                               (n, D)
 *      p(y|z)   = softmax_y( -||z - m_y||^2 )
 * SPE  se2 = s_e^2 >= 0; per dimension, for the support i of class y:
 *      1/S_y^2  = sum_i 1/(var_i + se2),   m_y = S_y^2 sum_i mu_i/(var_i + se2),   V_y = S_y^2 + se2
 *      p(y|z,S) = softmax_y( log N(z; m_y, V_y) )                  for a point z of the embedding
 *      p(y|x,S) = E_{z ~ N(mu_x, var_x)} p(y|z,S)                  for a query x (no closed form)
 *   naive sampler:  p(y|x,S) ~= 1/K sum_k p(y|z_k,S),  z_k = mu_x + sqrt(var_x) eps_k
 *   closed form:    score_y = log N(mu_x; m_y, var_x + V_y) = log E_{z ~ N(mu_x, var_x)} N(z; m_y, V_y)
 *      (the product of two Gaussian densities integrated over z). softmax_y(score_y) moves the
 *      expectation of p(y|z,S) = N_y / sum_y' N_y' into the numerator and the denominator
 *      separately; it is the exact class posterior of the model in which the query's mean is a
 *      noisy reading of a point of its class, mu_x = z + noise, z ~ N(m_y, V_y), noise ~
 *      N(0, var_x), classes equally likely. So it is a proper probability over classes, equal to
 *      p(y|x,S) when var_x = 0, ranking classes as PN does when var_x and V_y are the same for
 *      every class and dimension; in general an approximation of p(y|x,S) (the intersection
 *      formula below is exact: score_y is its first factor, without the second, class-dependent,
 *      one). Cheap (no sampling), deterministic.
 *   intersection sampler (NOTES.md): with T_y = var_x V_y / (var_x + V_y) and
 *      c_y = (V_y mu_x + var_x m_y) / (var_x + V_y) (per dimension; the product
 *      N(z; mu_x, var_x) N(z; m_y, V_y) = N(mu_x; m_y, var_x + V_y) N(z; c_y, T_y)),
 *      p(y|x,S) = N(mu_x; m_y, var_x + V_y) E_{z ~ N(c_y, T_y)} [ 1 / sum_y' N(z; m_y', V_y') ]
 *      ~= exp(score_y) 1/K sum_k 1 / sum_y' N(z_k; m_y', V_y'),  z_k = c_y + sqrt(T_y) eps_k.
 *      Unbiased for each class; the n estimates need not sum to 1 exactly.
 *   uncertainty:    1 - max_y p(y|.) of whichever p is used (0 when one class takes it all, at
 *      most 1 - 1/n), computed as the sum of the other classes' p, so that a small uncertainty
 *      keeps its digits (1 - max would round 1 - 1e-20 to 0, and ties to 0 are what ktau's bins
 *      cannot order).
 *
 * Precision. Differences z - m are formed as (mu_x - m_y) + sqrt(var_x) eps, never as a
 * difference of two rounded large numbers. The naive sampler leaves out of a query's softmax the
 * classes whose log density lies more than PROTO_CUTOFF (50) below the best class's at every one of
 * its samples (found from the samples' bounding box), and, per sample, the classes more than 50
 * below that sample's best: such a class's share is below e^-50 = 2e-22 at every sample, so its
 * p(y|x,S) is set to 0 instead of less than 2e-22 and the others move by less than n 2e-22
 * relative: under double rounding for any n below 10^5. This keeps 200 samples x 70 classes fast.
 * Ties: proto_argmax returns the lowest index.
 *
 * Preconditions (checked, dying with a message): every class has a support item; for SPE every
 * var_i + se2 > 0 (so S_y^2 > 0 and V_y > 0) and var_x >= 0. Means and variances finite.
 *
 * Ownership: a proto_set owns its arrays and scratch (proto_init, proto_free); it is refitted per
 * episode and used by one thread at a time. The other arguments are the caller's: inputs are
 * read, outputs written, nothing kept. eps (K, D) are the caller's standard normal draws, so
 * the caller decides what is random and how it is seeded (and a loss can differentiate through
 * z = mu + sqrt(var) eps).
 *
 *   proto_set P;
 *   proto_init(&P, n, D);
 *   proto_fit_spe(&P, mu, var, label, m, se2);        // mu, var (m, D); label (m) in [0, n)
 *   double score[n], p[n];
 *   proto_spe_closed(&P, qmu, qvar, score);            // qmu, qvar (D)
 *   proto_softmax(score, n, p);
 *   int y = proto_argmax(score, n);  double eta = proto_uncertainty_scores(score, n);
 *   proto_spe_naive(&P, qmu, qvar, eps, 200, p);       // eps (200, D) ~ N(0, 1)
 *   proto_fit_pn(&P, mu, label, m);                    // PN: the same set, refitted
 *   proto_pn_scores(&P, qmu, score);                   // -||qmu - m_y||^2
 *   proto_free(&P);
 */
#ifndef HEDGE_PROTO_H
#define HEDGE_PROTO_H

#define PROTO_CUTOFF 50.0

typedef struct {
    int n, D;
    int spe;          /* 1 when fitted by proto_fit_spe, 0 by proto_fit_pn */
    double se2;
    double *m;        /* (n, D) prototypes: PN the plain means, SPE m_y */
    double *S2;       /* (n, D) SPE: S_y^2 */
    double *V;        /* (n, D) SPE: V_y = S_y^2 + se2 */
    double *iV;       /* (n, D) SPE: 1 / V_y */
    double *logc;     /* (n) SPE: -1/2 sum_d log(2 pi V_yd), the log normaliser of N(.; m_y, V_y) */
    double *work;     /* scratch */
    double *pack;     /* scratch, 32-byte aligned: the naive sampler's classes packed for AVX2 */
    int *iwork;       /* scratch */
} proto_set;

void proto_init(proto_set *P, int n, int D);
void proto_free(proto_set *P);

/* the Gaussian of a mixture of C equal-weight diagonal components, mu and var (C, D), by
 * moments: mean = the mean of the component means, v = the mean of the component variances plus
 * the variance of the component means (per dimension; C = 1: the component itself). var NULL
 * (point components): v is that second term alone. mean, v (D); v may be NULL. */
void proto_gaussian(const float *mu, const float *var, int C, int D, double *mean, double *v);

/* PN prototypes from mu (m, D) and label (m) */
void proto_fit_pn(proto_set *P, const double *mu, const int *label, int m);
/* SPE prototypes from mu, var (m, D), label (m) and se2 */
void proto_fit_spe(proto_set *P, const double *mu, const double *var, const int *label, int m, double se2);

/* PN: score (n) = -||z - m_y||^2 (softmax of it: p(y|z)) */
void proto_pn_scores(const proto_set *P, const double *z, double *score);
/* SPE: out (n) = log N(z; m_y, V_y), the log class scores of a point z (softmax: p(y|z,S)) */
void proto_spe_logdens(const proto_set *P, const double *z, double *out);
/* SPE closed form: score (n) = log N(mu; m_y, var + V_y) */
void proto_spe_closed(const proto_set *P, const double *mu, const double *var, double *score);
/* SPE naive sampler: p (n) = 1/K sum_k p(y | mu + sqrt(var) eps_k, S); eps (K, D) */
void proto_spe_naive(proto_set *P, const double *mu, const double *var, const double *eps, int K, double *p);
/* SPE intersection sampler for one class y: the log of its estimate of p(y|x,S) from eps (K, D)
 * (z_k = c_y + sqrt(T_y) eps_k) */
double proto_spe_intersection(proto_set *P, const double *mu, const double *var, int y, const double *eps, int K);

/* p (n) = softmax of score (n), shifted by the max: any finite scores */
void proto_softmax(const double *score, int n, double *p);
/* log sum_i exp(x_i), shifted by the max */
double proto_logsumexp(const double *x, int n);
/* the index of the largest x_i, the lowest on ties */
int proto_argmax(const double *x, int n);
/* 1 - max_y p_y of probabilities p (n) that sum to 1, computed as the sum of the others (so a
 * tiny uncertainty keeps its digits) */
double proto_uncertainty(const double *p, int n);
/* the same of softmax(score) straight from the scores: r / (1 + r), r = sum over the classes but
 * the best of exp(score_y - best), leaving out the terms below e^-PROTO_CUTOFF of r's largest */
double proto_uncertainty_scores(const double *score, int n);

#endif
