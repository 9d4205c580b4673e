/* triplet: the triplet loss on P x K batches (groupbatch, batcher -m pk), point embeddings
 * (C = 1): the homoscedastic base of hetero-triplet-taha-2019 (Eq. 1), with the soft margin the
 * paper uses and the hinge, and three ways to pick the triplets (the paper tries batch-hard and
 * semi-hard). Classes are told apart by their values in cls; their order does not matter.
 *
 *   D(i, j) = sqrt(||mu_i - mu_j||^2 + LOSS_DIST_EPS)   (the guard of loss_util.h)
 *   x = D(a, p) - D(a, n), cls[p] = cls[a], p != a, cls[n] != cls[a]
 *   soft (--triplet soft, the default): f(x) = softplus(x)
 *   hinge (--triplet hinge): f(x) = max(0, cfg->margin + x); at margin + x = 0 exactly the
 *     subgradient 0 is taken
 *
 * Mining (--mining):
 *   all: loss = mean of f over EVERY valid triplet (a, p, n); for the hinge the
 *     triplets already beyond the margin count as zeros in the mean (so the loss shrinks as they
 *     become easy, not only the hard ones)
 *   hard (Hermans et al. 2017 "batch hard"): per anchor a with at
 *     least one positive, its farthest positive and nearest negative; loss = mean over those
 *     anchors of f(max_p D(a, p) - min_n D(a, n))
 *   semihard (the default; Schroff et al. 2015, FaceNet): per (a, p) pair the
 *     nearest negative n with D(a, n) > D(a, p) (hinge: also D(a, n) < D(a, p) + margin); when
 *     there is none, the hardest (nearest) negative of a; loss = mean over the (a, p) pairs
 *   Why semihard by default: from a freshly initialised network, batch-hard drives every
 *   embedding to one point (the loss sits at softplus(0) = log 2; 300 steps of 16 x 4 on 2-digit
 *   MNIST end at chance), the collapse FaceNet warns of; semihard and all learn (tests/shell/triplet.sh).
 *   Ties: the lowest image index wins among equal distances (strict comparisons, images scanned
 *   in batch order). The loss is then piecewise smooth: its gradient is the one of the triplets
 *   chosen, held fixed.
 *
 * Images of a class with one image are fine: they serve only as negatives (and, under hard and
 * semihard, are not anchors). A batch of one class has no negatives, and a batch with no two
 * images of one class has no positives: both die with a message.
 *
 * hetriplet (hetero-triplet-taha-2019 section 3, Eq. 11): the same mined triplets, each term
 * weighted by the images' s = log sigma^2,
 *   (e^{-s_a} + e^{-s_p} + e^{-s_n}) f(x) / 2 + (s_a + s_p + s_n) / 2,   loss = mean over the terms,
 * mining on the means alone (as the paper: the uncertainty weights, it does not choose). The
 * variance comes in as var (n, 1, D); s is the mean over dimensions of log var, which is exactly
 * s for the iso head (one variance per image, lib/network/model.h) and also defined for a diagonal
 * head; dvar = dL/ds / (D var). At the optimum of one term in s, e^{s} = f: the learned
 * variance tracks the image's triplet loss, large for confusing images.
 *
 * Stats: nll = the loss; acc = fraction of the images with a positive in the batch whose nearest
 * other image (Euclidean, lowest index on ties) is of their class: a batch-level retrieval
 * accuracy (NaN when no image has a positive, which the checks above already exclude);
 * a, b, se2 = NaN; kl = 0; mean_var = 0 (triplet) or the batch's mean variance (hetriplet). dmu
 * may be NULL (loss value only); dvar is written by hetriplet only (when not NULL).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "loss.h"
#include "loss_util.h"
#include "util.h"

/* the settings of both triplet losses (cfg->own[TRIPLET_*]); --margin is the hinge's margin */
enum { TRIPLET_FORM, TRIPLET_MINING, TRIPLET_NSET };
enum { TRIPLET_SOFT, TRIPLET_HINGE };
enum { MINING_ALL, MINING_HARD, MINING_SEMIHARD };
static const char *const triplet_forms[] = {"soft", "hinge", NULL};
static const char *const triplet_minings[] = {"all", "hard", "semihard", NULL};
static const setting triplet_settings[TRIPLET_NSET] = {
    [TRIPLET_FORM] = {"triplet", "FORM", "triplet", SETTING_CHOICE, 0, 0, TRIPLET_SOFT, triplet_forms,
                      "soft: softplus(D(a,p) - D(a,n)); hinge: max(0, margin + D(a,p) - D(a,n)) (--margin)"},
    [TRIPLET_MINING] = {"mining", "NAME", "mining", SETTING_CHOICE, 0, 0, MINING_SEMIHARD, triplet_minings,
                        "the triplets of a batch: semihard (FaceNet's), hard (batch-hard) or all"},
};

/* f and df/dx of the chosen form */
static double triplet_f(const loss_config *cfg, double x, double *df)
{
    if (cfg->own[TRIPLET_FORM] == TRIPLET_HINGE) {
        double v = cfg->margin + x;
        *df = v > 0;
        return v > 0 ? v : 0;
    }
    *df = loss_sigmoid(x);
    return loss_softplus(x);
}

/* the running sums of the chosen triplets' terms (see the header comment): plain triplet when
 * s == NULL, else the heteroscedastic weighting by the images' s = log sigma^2 */
typedef struct {
    const loss_config *cfg;
    const double *dist, *s; /* dist (n, n); s (n) or NULL */
    double *G, *ds;         /* dL/dD(i, j) (n, n) and dL/ds (n), before the division by terms */
    int n;
    double sum;
    long terms;
} triplet_acc;

static void triplet_term(triplet_acc *t, int a, int p, int k)
{
    const double *da = t->dist + (size_t)a * t->n;
    double df, f = triplet_f(t->cfg, da[p] - da[k], &df), w = 1;
    if (t->s) {
        const double *s = t->s;
        double ea = exp(-s[a]), ep = exp(-s[p]), en = exp(-s[k]);
        w = (ea + ep + en) / 2;
        t->sum += w * f + (s[a] + s[p] + s[k]) / 2;
        t->ds[a] += 0.5 - ea * f / 2;
        t->ds[p] += 0.5 - ep * f / 2;
        t->ds[k] += 0.5 - en * f / 2;
    } else
        t->sum += f;
    t->G[(size_t)a * t->n + p] += w * df;
    t->G[(size_t)a * t->n + k] -= w * df;
    t->terms++;
}

static double triplet_common(const char *name, const loss_config *cfg, const loss_input *in, float *dmu, float *dvar,
                             loss_stats *st, int hetero)
{
    int n = in->n, D = in->D;
    const int32_t *cls = in->cls;
    if (in->C != 1)
        die("%s loss: needs one embedding per image (C = 1), got C = %d", name, in->C);
    if (!cls)
        die("%s loss: needs the class of every image (P x K batches; batcher -m pk)", name);
    if (hetero && !in->var)
        die("%s loss: needs a variance per image (a stochastic head: --head iso)", name);
    if (!setting_valid(&triplet_settings[TRIPLET_FORM], cfg->own[TRIPLET_FORM]))
        die("%s loss: unknown form %g", name, cfg->own[TRIPLET_FORM]);
    if (!setting_valid(&triplet_settings[TRIPLET_MINING], cfg->own[TRIPLET_MINING]))
        die("%s loss: unknown mining %g", name, cfg->own[TRIPLET_MINING]);
    int has_neg = 0, has_pos = 0;
    for (int i = 0; i < n && !(has_neg && has_pos); i++)
        for (int j = i + 1; j < n; j++) {
            has_neg |= cls[j] != cls[i];
            has_pos |= cls[j] == cls[i];
        }
    if (!has_neg)
        die("%s loss: a batch of one class has no negatives (batcher -m pk -P 2 or more)", name);
    if (!has_pos)
        die("%s loss: no class has two images in the batch, so there are no positives (batcher -m pk -K 2 or more)",
            name);

    /* dist (n, n) in double; G (n, n): dL/dD(i, j), accumulated as D(i, j) enters the loss;
     * hetero: s (n), ds (n) */
    double *dist = emalloc(sizeof(double) * ((size_t)2 * n * n + (size_t)2 * D + (size_t)2 * n));
    double *G = dist + (size_t)n * n, *xi = G + (size_t)n * n, *xj = xi + D, *s = xj + D, *ds = s + n;
    memset(G, 0, sizeof(double) * n * n);
    for (int i = 0; i < n; i++) {
        dist[(size_t)i * n + i] = 0;
        for (int j = i + 1; j < n; j++) {
            for (int d = 0; d < D; d++) {
                xi[d] = in->mu[(size_t)i * D + d];
                xj[d] = in->mu[(size_t)j * D + d];
            }
            dist[(size_t)i * n + j] = dist[(size_t)j * n + i] = loss_dist(xi, xj, D);
        }
    }
    double mean_var = 0;
    if (hetero)
        for (int i = 0; i < n; i++) {
            /* s = the mean over dimensions of log var: exactly s for the iso head */
            double si = 0;
            for (int d = 0; d < D; d++) {
                double v = in->var[(size_t)i * D + d];
                if (!(v > 0) || !isfinite(v))
                    die("%s loss: variance %g of image %d is not positive and finite", name, v, i);
                si += log(v);
                mean_var += v;
            }
            s[i] = si / D;
            ds[i] = 0;
        }

    /* the terms of the loss: sum over the chosen triplets, then divide by their number */
    triplet_acc t = {.cfg = cfg, .dist = dist, .s = hetero ? s : NULL, .G = G, .ds = ds, .n = n};
    int right = 0, anchors = 0;
    for (int a = 0; a < n; a++) {
        const double *da = dist + (size_t)a * n;
        int pos = -1, neg = -1, near = -1;
        for (int j = 0; j < n; j++) {
            if (j == a)
                continue;
            if (near < 0 || da[j] < da[near])
                near = j;
            if (cls[j] == cls[a]) {
                if (pos < 0 || da[j] > da[pos])
                    pos = j; /* farthest positive */
            } else if (neg < 0 || da[j] < da[neg])
                neg = j; /* nearest negative */
        }
        if (pos < 0) /* no positive: only a negative for others */
            continue;
        anchors++;
        right += cls[near] == cls[a];
        if (cfg->own[TRIPLET_MINING] == MINING_HARD) {
            triplet_term(&t, a, pos, neg);
            continue;
        }
        for (int p = 0; p < n; p++) {
            if (p == a || cls[p] != cls[a])
                continue;
            if (cfg->own[TRIPLET_MINING] == MINING_ALL) {
                for (int k = 0; k < n; k++)
                    if (cls[k] != cls[a])
                        triplet_term(&t, a, p, k);
                continue;
            }
            /* semihard: the nearest negative farther than p (hinge: and within the margin) */
            double hi = cfg->own[TRIPLET_FORM] == TRIPLET_HINGE ? da[p] + cfg->margin : INFINITY;
            int semi = -1;
            for (int k = 0; k < n; k++)
                if (cls[k] != cls[a] && da[k] > da[p] && da[k] < hi && (semi < 0 || da[k] < da[semi]))
                    semi = k;
            triplet_term(&t, a, p, semi >= 0 ? semi : neg);
        }
    }
    long terms = t.terms;
    double loss = t.sum / terms;

    if (dmu) {
        /* dD(i, j)/dmu_i = (mu_i - mu_j) / D(i, j) = -dD(i, j)/dmu_j */
        memset(dmu, 0, sizeof(float) * n * D);
        double *g = emalloc(sizeof(double) * n * D);
        memset(g, 0, sizeof(double) * n * D);
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++) {
                double w = G[(size_t)i * n + j];
                if (w == 0 || i == j)
                    continue;
                w /= terms * dist[(size_t)i * n + j];
                for (int d = 0; d < D; d++) {
                    double v = w * ((double)in->mu[(size_t)i * D + d] - in->mu[(size_t)j * D + d]);
                    g[(size_t)i * D + d] += v;
                    g[(size_t)j * D + d] -= v;
                }
            }
        for (size_t k = 0; k < (size_t)n * D; k++)
            dmu[k] = (float)g[k];
        free(g);
    }
    if (hetero && dvar)
        /* s = mean_d log var[d]: ds/dvar[d] = 1 / (D var[d]) */
        for (int i = 0; i < n; i++)
            for (int d = 0; d < D; d++)
                dvar[(size_t)i * D + d] = (float)(ds[i] / terms / (D * (double)in->var[(size_t)i * D + d]));
    if (st) {
        memset(st, 0, sizeof *st);
        st->nll = loss;
        st->acc = anchors ? (double)right / anchors : NAN;
        st->a = st->b = st->se2 = NAN;
        st->mean_var = hetero ? mean_var / ((double)n * D) : 0;
    }
    free(dist);
    return loss;
}

static double triplet_forward_backward(const loss_config *cfg, const loss_input *in, const float *params,
                                       float *dparams, float *dmu, float *dvar, rng *r, loss_stats *st)
{
    (void)params, (void)dparams, (void)dvar, (void)r;
    return triplet_common("triplet", cfg, in, dmu, NULL, st, 0);
}

static double hetriplet_forward_backward(const loss_config *cfg, const loss_input *in, const float *params,
                                         float *dparams, float *dmu, float *dvar, rng *r, loss_stats *st)
{
    (void)params, (void)dparams, (void)r;
    return triplet_common("hetriplet", cfg, in, dmu, dvar, st, 1);
}

static const char *const triplet_param_names[] = {NULL};
static void triplet_init_params(const loss_config *cfg, float *params) { (void)cfg, (void)params; }

const loss_kind loss_triplet = {
    .name = "triplet",
    .help = "triplet loss, soft margin or hinge (--triplet), all / batch-hard / semi-hard (--mining) (P x K batches, point)",
    .needs_var = 0,
    .batches = LOSS_GROUPS,
    .max_C = 1,
    .nparams = 0,
    .param_names = triplet_param_names,
    .init_params = triplet_init_params,
    .forward_backward = triplet_forward_backward,
    .settings = triplet_settings,
    .nsettings = TRIPLET_NSET,
};

const loss_kind loss_hetriplet = {
    .name = "hetriplet",
    .help = "heteroscedastic triplet loss (Taha et al.), weighted by each image's learned sigma^2 (P x K batches, --head iso)",
    .needs_var = 1,
    .default_head = "iso",
    .batches = LOSS_GROUPS,
    .max_C = 1,
    .nparams = 0,
    .param_names = triplet_param_names,
    .init_params = triplet_init_params,
    .forward_backward = hetriplet_forward_backward,
    .settings = triplet_settings,
    .nsettings = TRIPLET_NSET,
};
