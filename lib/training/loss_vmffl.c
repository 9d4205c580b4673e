/* vmf-fl: von Mises-Fisher feature learning (Hasnat, Bohné, Milgram, Gentric & Chen, "von Mises-Fisher
 * Mixture Model-based Deep learning: Application to Face Verification", 2017), as tinkoff-ai's
 * probabilistic-embeddings has it (its "vmfmm": a vMF distribution per item, the LogLike classifier).
 * Item i is vMF(x_i, kappa_i) on the unit sphere, x_i = mu_i / |mu_i|, its concentration kappa_i its
 * own; the class weights W (classes, D) give the unit directions w_j. Each class's logit is the log
 * density of its direction under the item's vMF, log C_D(kappa_i) + kappa_i c_ij, c_ij = x_i . w_j,
 * and the loss is the softmax cross-entropy over the classes, in which log C_D(kappa_i), the same
 * for every class, cancels: CE_i(t) = log sum_j exp(t c_ij) - t c_iy at the temperature t = kappa_i,
 * a normalised softmax whose temperature is the item's. dL/dkappa_i = sum_j p_ij c_ij - c_iy: kappa
 * rises where the class cosine beats the softmax's expected cosine (a confident, right item) and
 * falls where it does not, so the concentration is learned as the item's confidence.
 * Trained jointly from the start, that collapses: every item is wrong at first, so every kappa
 * falls, and the means' gradient, proportional to kappa, vanishes with it (in tests/shell/margin.sh
 * the variances rose to 5e8 and the 5-NN accuracy stayed at chance; tinkoff starts from a
 * pretrained backbone, whose cosines are informative at once). So, as SCF learns its confidence
 * with the cosines detached, the two roles are split:
 *   L = mean_i CE_i(S) [the means and the class weights]  +  mean_i CE_i(kappa_i) [kappa alone]
 * S = --scale (64): the means learn a normalised softmax, and each kappa_i the temperature that
 * fits its own cosines best. kappa is the head's: kappa_i = 1 / var_i = exp(-s_i) on the iso head
 * (s its log-variance; another stochastic head: the mean of its D log-variances), so the battery
 * reads var = 1 / kappa; dL/ds_i = -kappa_i dL/dkappa_i / n. tinkoff bounds kappa by e^10; here the
 * head's bounds on s (e^-20 to e^20) hold it. Below, the concentration's term takes kappa at least
 * VMFFL_KAPPA_FLOOR (1), with the floor's gradient when it leads back above the floor and 0 when
 * it leads further down (the one-sided gradient of the floored kappa): dL/ds is proportional to
 * kappa, so without it a kappa driven towards 0 while the cosines were uninformative could not
 * come back; passed through both ways, as scf's is, an item whose class cosine stays below the
 * softmax's expected one pushed its s up without end, and through the shared body that stopped
 * the means learning (margin.sh: 5-NN accuracy at chance).
 * What it learns saturates: the cross-entropy's best temperature for a training item it ranks
 * right is infinite and for one it ranks wrong 0, so trained kappas go to the head's bounds (on
 * the real sets of results/uncertainty most judged items, of unseen classes, end at kappa e^-20,
 * with the floor or without: the median judged item there in 7 of 9 runs without it, in 4 of 9
 * with it).
 * Stats: nll = the means' term, kl = the concentrations' term (a cross-entropy, in kl's column),
 * acc = the fraction whose largest cosine is their class's, mean_var.
 * D >= 2 (the sphere of R^1 is two points). Cost O(n classes D).
 */
#include <math.h>
#include <stdlib.h>

#include "loss.h"
#include "loss_util.h"
#include "util.h"

enum { VMFFL_SCALE, VMFFL_NSET };
#define VMFFL_KAPPA_FLOOR 1.0
static const setting vmffl_settings[VMFFL_NSET] = {[VMFFL_SCALE] = LOSS_SETTING_SCALE};

static double vmffl_fb(const loss_config *cfg, const loss_input *in, const float *params, float *dparams,
                       float *dmu, float *dvar, rng *r, loss_stats *st)
{
    (void)r;
    int n = in->n, D = in->D, K = in->classes;
    if (in->C != 1 || !in->var || D < 2)
        die("vmf-fl loss: needs one mean of D >= 2 and a variance per item (--head iso, C = 1), got C = %d, D = %d%s",
            in->C, D, in->var ? "" : ", no variance");
    loss_input mi = *in;
    mi.var = NULL;
    loss_check_class_input("vmf-fl", &mi, params);
    double *s = emalloc((size_t)(n ? n : 1) * sizeof *s), mean_var;
    loss_mean_logvar("vmf-fl", in, s, &mean_var);
    loss_cosines C;
    loss_cosines_make(&C, in->mu, params, n, K, D);
    double *gc = emalloc((size_t)n * K * sizeof *gc), loss = 0, conf = 0, S = cfg->own[VMFFL_SCALE];
    int right = 0;
    for (int i = 0; i < n; i++) {
        int y = in->row[i], best = 0;
        const double *ci = C.c + (size_t)i * K;
        for (int j = 0; j < K; j++)
            best = ci[j] > ci[best] ? j : best;
        right += best == y;
        /* t = S: the means' and the weights' softmax; t = kappa_i: the concentration's, c detached */
        for (int pass = 0; pass < 2; pass++) {
            double t = pass ? fmax(exp(-s[i]), VMFFL_KAPPA_FLOOR) : S, zmax = -INFINITY, sum = 0, ec = 0;
            for (int j = 0; j < K; j++)
                zmax = fmax(zmax, t * ci[j]);
            for (int j = 0; j < K; j++)
                sum += exp(t * ci[j] - zmax);
            double lse = zmax + log(sum);
            *(pass ? &conf : &loss) += lse - t * ci[y];
            for (int j = 0; j < K; j++) {
                double p = exp(t * ci[j] - lse);
                ec += p * ci[j];
                if (!pass)
                    gc[(size_t)i * K + j] = t * (p - (j == y)) / n;
            }
            double g = -t * (ec - ci[y]) / n; /* dL/ds = -kappa dL/dkappa */
            if (pass && exp(-s[i]) < VMFFL_KAPPA_FLOOR && g < 0)
                g = 0; /* below the floor, only the way back up */
            if (pass && dvar)
                loss_mean_logvar_back(in, i, g, dvar);
        }
    }
    conf /= n;
    loss /= n;
    loss_cosines_back(&C, gc, dmu, dparams);
    loss_cosines_free(&C);
    free(gc), free(s);
    if (st)
        *st = (loss_stats){.nll = loss, .a = NAN, .b = NAN, .acc = (double)right / n, .se2 = NAN, .kl = conf,
                           .mean_var = mean_var};
    return loss + conf;
}

LOSS_CLASS_WEIGHTS_KIND(loss_vmf_fl, "vmf-fl",
                        "vMF-FL (Hasnat et al. 2017): softmax of cos(mu, w_c) at scale S; each item's vMF concentration "
                        "kappa = 1 / var (iso head) learns the temperature that fits its cosines",
                        vmffl_fb, NULL, "vmf-fl.w", 1, "iso", vmffl_settings, VMFFL_NSET);
