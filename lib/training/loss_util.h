/* loss_util: the numerics shared by the pair losses (softcon, contrastive, vib) and by anyone who
 * needs the HIB match probability outside training (eval: eta(x) = 1 - p(m|x,x), Eq. 9; the
 * verification score p(m|x1,x2), Eq. 5). Everything is computed in double; nothing allocates.
 *
 * Choices, fixed here once (also in the README of the losses):
 *   - distance guard: d(z1, z2) = sqrt(sum_j (z1_j - z2_j)^2 + LOSS_DIST_EPS), LOSS_DIST_EPS = 1e-12,
 *     in the forward and the backward pass alike (dd/dz1 = (z1 - z2) / d is then finite at z1 = z2);
 *   - a = softplus(a_raw) keeps a > 0; da/da_raw = sigmoid(a_raw);
 *   - the log of an AVERAGE of sigmoids (Eq. 5) is a log-sum-exp of log-sigmoids, so a pair at
 *     distance 1e4 gives a finite loss and finite gradients;
 *   - samples (loss_sample): eps is drawn with rng_normals in row-major (image, sample, dim) order
 *     for ALL n images of the batch, whether or not they are in a pair; sample k of an image comes
 *     from component c = k / (K / C) (stratified, K/C consecutive samples per component).
 *
 *   double za[8 * 2], zb[8 * 2];    // two independent sets of K = 8 samples (D = 2) of image x
 *   loss_sample(mu_x, var_x, 1, C, 2, 8, &r, NULL, za);
 *   loss_sample(mu_x, var_x, 1, C, 2, 8, &r, NULL, zb);
 *   double eta = exp(loss_match_logp(za, 8, zb, 8, 2, a, b, 0));   // 1 - p(m|x,x), Eq. 9
 */
#ifndef HEDGE_LOSS_UTIL_H
#define HEDGE_LOSS_UTIL_H
#include <math.h>

#include "loss.h"
#include "rng.h"

#define LOSS_DIST_EPS 1e-12

/* softplus(x) = log(1 + e^x), without overflow */
static inline double loss_softplus(double x) { return x > 0 ? x + log1p(exp(-x)) : log1p(exp(x)); }
/* the inverse, y > 0: log(e^y - 1) */
static inline double loss_softplus_inv(double y) { return y > 30 ? y : log(expm1(y)); }
static inline double loss_sigmoid(double x)
{
    if (x >= 0)
        return 1 / (1 + exp(-x));
    double e = exp(x);
    return e / (1 + e);
}
/* log sigmoid(x) = -softplus(-x) */
static inline double loss_log_sigmoid(double x) { return (x < 0 ? x : 0) - log1p(exp(-fabs(x))); }

/* the guarded Euclidean distance between two D-vectors */
static inline double loss_dist(const double *x, const double *y, int D)
{
    double s = LOSS_DIST_EPS;
    for (int j = 0; j < D; j++)
        s += (x[j] - y[j]) * (x[j] - y[j]);
    return sqrt(s);
}

/* a and b from the loss parameters {a_raw, b} */
static inline void loss_match_ab(const float *params, double *a, double *b)
{
    *a = loss_softplus(params[0]);
    *b = params[1];
}

/* The negative log-likelihood of the label `match` under the average of n match probabilities
 * sigmoid(s_k), s_k = -a d_k + b (Eq. 5 with n = K^2 sample pairs; n = 1 for Eq. 3):
 *   match:     NLL = -log( (1/n) sum_k sigmoid(s_k) )  = -LSE_k(log sigmoid(s_k))  + log n
 *   non-match: NLL = -log( (1/n) sum_k sigmoid(-s_k) ) = -LSE_k(log sigmoid(-s_k)) + log n
 * dnll_ds (n, may be NULL) receives dNLL/ds_k. */
double loss_match_nll(int n, const double *s, int match, double *dnll_ds);

/* log p(m = match | x1, x2) of Eq. 5 over the K1 x K2 pairs of the sample sets z1 (K1, D) and
 * z2 (K2, D); match = 0 gives log(1 - p). */
double loss_match_logp(const double *z1, int K1, const double *z2, int K2, int D, double a, double b,
                       int match);

/* Stratified reparameterised samples of n MoG embeddings (mu, var: (n, C, D), var > 0; K a
 * multiple of C): eps (n, K, D) = rng_normals(r, eps, n K D), in that row-major order, and
 * z[i][k][j] = mu[i][c][j] + sqrt(var[i][c][j]) * eps[i][k][j] with c = k / (K / C).
 * eps and z are (n, K, D), caller-owned; eps may be NULL. Draws exactly n * K * D normals. */
void loss_sample(const float *mu, const float *var, int n, int C, int D, int K, rng *r, double *eps,
                 double *z);

/* the guarded normalisation of the cosine losses (loss_ce, loss_ms): x (n, D) float -> u (n, D) =
 * x / |x|_eps in double, |x|_eps = sqrt(||x||^2 + LOSS_DIST_EPS) into norm (n); and back: dL/dx
 * (n, D) from g = dL/du (n, D), (g - u (u . g)) / |x|_eps */
void loss_normalise(const float *x, int n, int D, double *u, double *norm);
void loss_unnormalise(const double *u, const double *norm, const double *g, int n, int D, float *dx);
/* what the losses with class weights take (loss_margin, loss_proxy), or die naming the loss: one
 * point embedding per item, each item's class row (in range), the weights */
void loss_check_class_input(const char *name, const loss_input *in, const float *params);
/* the scale s of the cosine logits, a setting of every loss with ArcFace's or CosFace's logits */
#define LOSS_SETTING_SCALE {"scale", "S", "scale", SETTING_REAL, 1, 1000, 64, NULL, "s, the scale of the cosine logits"}
/* the parameter names and init of a loss without scalar parameters */
extern const char *const loss_no_param_names[];
void loss_no_init(const loss_config *cfg, float *params);
/* the loss_kind of a loss with class weights (loss_margin.c, loss_proxy.c, and the ArcFace-based
 * uncertainties): point embeddings (stochastic 0) or one Gaussian per item (1, on the head `head`
 * unless one is given: NULL for the default, mog), any batch kind, no scalar parameters, the
 * (classes, D) matrix wname */
#define LOSS_CLASS_WEIGHTS_KIND(var, nm, hlp, fn, settle_fn, wname, stochastic, head, set, nset)                 \
    const loss_kind var = {                                                                                       \
        .name = nm,                                                                                               \
        .help = hlp,                                                                                              \
        .needs_var = stochastic,                                                                                  \
        .default_head = head,                                                                                     \
        .batches = LOSS_PAIRS | LOSS_GROUPS | LOSS_EPISODES,                                                      \
        .max_C = 1,                                                                                               \
        .nparams = 0,                                                                                             \
        .param_names = loss_no_param_names,                                                                       \
        .class_weights = wname,                                                                                   \
        .init_params = loss_no_init,                                                                              \
        .forward_backward = fn,                                                                                   \
        .settings = set,                                                                                          \
        .nsettings = nset,                                                                                        \
        .settle = settle_fn,                                                                                      \
    }
/* The cosines of n items against K class weights, for the losses with class weights (loss_margin,
 * loss_proxy): x (n, D) and the weights W (K, D) normalised as loss_normalise does into the
 * returned block (a struct of the caller's, loss_cosines_free), c (n, K) = x_i . w_j; and back:
 * from g (n, K) = dL/dc, dL/dmu into dmu (n, D; NULL: not wanted) and dL/dW ADDED into dW (K, D;
 * NULL: not wanted). */
typedef struct {
    int n, K, D;
    double *x, *xn, *w, *wn, *c;
} loss_cosines;
void loss_cosines_make(loss_cosines *lc, const float *mu, const float *W, int n, int K, int D);
void loss_cosines_back(const loss_cosines *lc, const double *g, float *dmu, float *dW);
void loss_cosines_free(loss_cosines *lc);
/* ArcFace (loss_margin.c) for the losses built on it, name's (its messages name it): the mean loss,
 * each item's loss into items (n; NULL: not wanted), the gradients as arcface's; with keep, the
 * cosines of the items to the class weights it computed (the caller frees them: loss_cosines_free);
 * its scale is cfg->own[0] (a loss that uses it declares the scale setting first) and its margin
 * cfg->margin, settled by loss_arcface_settle (0.5 when not given) */
/* the losses that read one log-variance per item (losspred, scf): s[i] = the mean of item i's D
 * log-variances (the iso head's one s), dying with one line naming the loss (name) on a variance
 * that is not positive; the items' mean variance into *mean_var. And back: dL/ds_i = g handed to
 * item i's D variances, dvar_d = g / (D var_d) (so that the iso head, which sums them times exp(s),
 * gets g) */
void loss_mean_logvar(const char *name, const loss_input *in, double *s, double *mean_var);
void loss_mean_logvar_back(const loss_input *in, int i, double g, float *dvar);
double loss_arcface_items(const char *name, const loss_config *cfg, const loss_input *in, const float *params,
                          float *dparams, float *dmu, double *items, loss_cosines *keep, loss_stats *st);
const char *loss_arcface_settle(loss_config *cfg, int D, int shots);
/* KL(N(mu, diag var) || N(0, I)) = 0.5 sum_j (var_j + mu_j^2 - 1 - log var_j), for D dims */
double loss_kl_gauss(const float *mu, const float *var, int D);

/* the {a_raw, b} parameters shared by softcon and vib */
extern const char *const loss_match_param_names[];
void loss_match_init_params(const loss_config *cfg, float *params);
/* die unless every pair index is in [0, n) */
void loss_check_pairs(const char *loss, const loss_input *in);

#endif
