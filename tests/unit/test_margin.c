/* margin: CosFace and ArcFace (lib/training/loss_margin.c) against their papers' Eqs. by hand on a
 * batch of two items and two classes whose cosines are exact (ArcFace's angular margin, and its
 * continuation where theta + m passes pi), invariance to the scale of embeddings and weights, the
 * margins' defaults (settle), the batch accuracy, central finite differences of the gradients with
 * respect to the embeddings and to the class weights, and misuse. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "lossgrad.h"
#include "loss.h"
#include "rng.h"

static double eval(const loss_kind *L, const loss_config *lc, const loss_input *in, const float *W, float *dW,
                   float *dmu, loss_stats *st)
{
    return L->forward_backward(lc, in, W, dW, dmu, NULL, NULL, st);
}

static loss_config config(const loss_kind *L, double s, double m)
{
    loss_config lc = loss_config_new(L);
    loss_set(&lc, L, "scale", s);
    loss_set(&lc, L, "margin", m);
    return lc;
}

/* softmax cross-entropy of the target logit zy against the other, zo */
static double ce2(double zy, double zo) { return log(exp(zy) + exp(zo)) - zy; }

int main(void)
{
    const loss_kind *cos_ = loss_find("cosface"), *arc = loss_find("arcface");
    CHECK(cos_ && arc);
    if (!cos_ || !arc)
        return check_done("test_margin");
    CHECK(cos_->class_weights && !strcmp(arc->class_weights, "arcface.w") && arc->nparams == 0);
    /* the papers' margins when --margin is not given, s = 64 */
    loss_config d = loss_config_new(arc);
    CHECK(arc->settle(&d, 8, 0) == NULL && d.margin == 0.5 && loss_value(&d, arc, "scale") == 64);
    d = loss_config_new(cos_);
    CHECK(cos_->settle(&d, 8, 0) == NULL && d.margin == 0.35);
    loss_set(&d, cos_, "margin", 0.2);
    CHECK(cos_->settle(&d, 8, 0) == NULL && d.margin == 0.2);
    loss_set(&d, cos_, "margin", 2);
    CHECK(cos_->settle(&d, 8, 0) != NULL);

    /* w0 = (1, 0) x 2, w1 = (0, 1) x 0.5; item 0 = (0.8, 0.6) x 3 of class 0: c = 0.8, 0.6; item 1
     * = (-0.95, sqrt(1 - 0.9025)) of class 0: c = -0.95, 0.3122..., below cos(pi - 0.5) =
     * -0.8776, where ArcFace continues with c - m sin(pi - m) */
    float W[4] = {2, 0, 0, 0.5f};
    double s1 = sqrt(1 - 0.9025);
    float mu[4] = {0.8f * 3, 0.6f * 3, -0.95f, (float)s1};
    int32_t row[2] = {0, 0}, cls[2] = {5, 5};
    loss_input in = {.n = 2, .C = 1, .D = 2, .mu = mu, .cls = cls, .row = row, .classes = 2};
    loss_stats st;
    loss_config lc = config(cos_, 2, 0.35);
    double want = (ce2(2 * (0.8 - 0.35), 2 * 0.6) + ce2(2 * (-0.95 - 0.35), 2 * s1)) / 2;
    CHECK_CLOSE(eval(cos_, &lc, &in, W, NULL, NULL, &st), want, 1e-6);
    CHECK_CLOSE(st.acc, 0.5, 0); /* item 0's largest cosine is its class's, item 1's is not */
    lc = config(arc, 2, 0.5);
    double psi0 = 0.8 * cos(0.5) - 0.6 * sin(0.5), psi1 = -0.95 - sin(M_PI - 0.5) * 0.5;
    want = (ce2(2 * psi0, 2 * 0.6) + ce2(2 * psi1, 2 * s1)) / 2;
    CHECK_CLOSE(eval(arc, &lc, &in, W, NULL, NULL, NULL), want, 1e-6);
    /* a margin of 0: both are the normalised softmax (NormFace) */
    lc = config(arc, 2, 0);
    double a0 = eval(arc, &lc, &in, W, NULL, NULL, NULL);
    lc = config(cos_, 2, 0);
    CHECK_CLOSE(a0, eval(cos_, &lc, &in, W, NULL, NULL, NULL), 1e-12);
    CHECK_CLOSE(a0, (ce2(1.6, 1.2) + ce2(-1.9, 2 * s1)) / 2, 1e-6);

    /* gradients against central differences: 6 items of 4 classes, D = 3, s = 4, both forms;
     * ArcFace's target cosines kept away from its threshold and from 1 */
    rng r;
    double worst = 0;
    int checked = 0;
    for (int seed = 1; seed < 100 && checked < 6; seed++) {
        enum { N = 6, K = 4, DD = 3 };
        float x[N * DD], w[K * DD];
        int32_t y[N];
        rng_init(&r, 5, seed);
        for (int i = 0; i < N * DD; i++)
            x[i] = (float)rng_normal(&r);
        for (int i = 0; i < K * DD; i++)
            w[i] = (float)rng_normal(&r);
        for (int i = 0; i < N; i++)
            y[i] = i % K;
        const loss_kind *L = checked % 2 ? arc : cos_;
        lc = config(L, 4, checked % 2 ? 0.5 : 0.35);
        int ok = 1;
        for (int i = 0; i < N && L == arc; i++) { /* the target cosine */
            double c = 0, a = 0, b = 0;
            for (int k = 0; k < DD; k++)
                c += (double)x[i * DD + k] * w[y[i] * DD + k], a += (double)x[i * DD + k] * x[i * DD + k],
                    b += (double)w[y[i] * DD + k] * w[y[i] * DD + k];
            c /= sqrt(a * b);
            ok &= fabs(c - cos(M_PI - 0.5)) > 0.05 && c < 0.95;
        }
        if (!ok)
            continue;
        loss_input b = {.n = N, .C = 1, .D = DD, .mu = x, .cls = y, .row = y, .classes = K};
        worst = fmax(worst, lossgrad_check(L, &lc, &b, w, K, 2e-3));
        checked++;
    }
    CHECK(checked == 6);
    printf("gradcheck cosface, arcface: %d batches (embeddings and class weights), worst relative error %.2g\n", checked,
           worst);
    /* the gradient of the weights ADDS */
    {
        float g1[4] = {0}, g2[4] = {1, 1, 1, 1};
        lc = config(arc, 2, 0.5);
        eval(arc, &lc, &in, W, g1, NULL, NULL);
        eval(arc, &lc, &in, W, g2, NULL, NULL);
        for (int k = 0; k < 4; k++)
            CHECK_CLOSE(g2[k], g1[k] + 1, 1e-6);
    }

    /* dul: ArcFace on z = mu + sigma eps (eps: the step's rng) plus lambda KL(N(mu, sigma^2) ||
     * N(0, I)); against arcface on the same z, by hand, and its gradients (mu and the variance)
     * against central differences with the same draws */
    {
        const loss_kind *dul = loss_find("dul-cls");
        CHECK(dul && dul->needs_var && dul->max_C == 1 && !strcmp(dul->class_weights, "dul-cls.w"));
        enum { N = 4, K = 3, DD = 3 };
        float m4[N * DD], v4[N * DD], w3[K * DD], z[N * DD];
        int32_t y4[N] = {0, 1, 2, 1};
        rng_init(&r, 21, 0);
        for (int i = 0; i < N * DD; i++)
            m4[i] = (float)rng_normal(&r), v4[i] = (float)(0.05 + 0.1 * rng_uniform(&r));
        for (int i = 0; i < K * DD; i++)
            w3[i] = (float)rng_normal(&r);
        loss_config dc = loss_config_new(dul);
        CHECK(dul->settle(&dc, DD, 0) == NULL && dc.margin == 0.5 && loss_value(&dc, dul, "dul-lambda") == 0.01);
        loss_set(&dc, dul, "scale", 4);
        double eps[N * DD], kl = 0;
        rng_init(&r, 3, 7);
        rng_normals(&r, eps, N * DD);
        for (int k = 0; k < N * DD; k++) {
            z[k] = (float)(m4[k] + sqrt(v4[k]) * eps[k]);
            kl += 0.5 * (v4[k] + (double)m4[k] * m4[k] - 1 - log(v4[k]));
        }
        loss_input zi = {.n = N, .C = 1, .D = DD, .mu = z, .cls = y4, .row = y4, .classes = K};
        loss_config ac = config(arc, 4, 0.5);
        double want = eval(arc, &ac, &zi, w3, NULL, NULL, NULL) + 0.01 * kl / N;
        loss_input di = {.n = N, .C = 1, .D = DD, .mu = m4, .var = v4, .cls = y4, .row = y4, .classes = K};
        rng_init(&r, 3, 7);
        loss_stats ds;
        CHECK_CLOSE(dul->forward_backward(&dc, &di, w3, NULL, NULL, NULL, &r, &ds), want, 1e-12);
        CHECK_CLOSE(ds.kl, kl / N, 1e-12);
        float gm[N * DD], gv[N * DD];
        rng_init(&r, 3, 7);
        dul->forward_backward(&dc, &di, w3, NULL, gm, gv, &r, NULL);
        double dworst = 0;
        for (int v = 0; v < 2; v++)
            for (int j = 0; j < N * DD; j++) {
                float *p = v ? &v4[j] : &m4[j], keep = *p;
                double h = v ? 1e-4 : 1e-3, f[2];
                for (int sgn = 0; sgn < 2; sgn++) {
                    *p = (float)(keep + (sgn ? -h : h));
                    rng_init(&r, 3, 7);
                    f[sgn] = dul->forward_backward(&dc, &di, w3, NULL, NULL, NULL, &r, NULL);
                }
                *p = keep;
                double fd = (f[0] - f[1]) / (2 * h), g = v ? gv[j] : gm[j], e = fabs(fd - g) / (1e-3 + fabs(fd));
                dworst = fmax(dworst, e);
                CHECK(e < 3e-3);
            }
        printf("gradcheck dul: mean and variance, worst relative error %.2g\n", dworst);
        /* a point batch is refused */
        di.var = NULL;
        if (check_child()) {
            rng_init(&r, 3, 7);
            dul->forward_backward(&dc, &di, w3, NULL, NULL, NULL, &r, NULL);
            _exit(0);
        }
        CHECK(check_died());
    }

    /* losspred: ArcFace on the means plus lambda x the pairwise ranking loss of s = log var
     * against each item's own ArcFace loss (pairs i, i + 3 of 6 items), by hand; the gradients to
     * the means and to s against central differences (the ranks are detached: away from a tie a
     * small step moves no sign) */
    {
        const loss_kind *lp = loss_find("losspred");
        CHECK(lp && lp->needs_var && lp->default_head && !strcmp(lp->default_head, "iso") &&
              !strcmp(lp->class_weights, "losspred.w"));
        enum { N = 6, K = 3, DD = 3 };
        float m6[N * DD], v6[N * DD], w3[K * DD];
        int32_t y6[N] = {0, 1, 2, 1, 0, 2};
        double sv[N];
        rng_init(&r, 23, 0);
        for (int i = 0; i < N; i++) {
            sv[i] = rng_normal(&r);
            for (int d = 0; d < DD; d++)
                m6[i * DD + d] = (float)rng_normal(&r), v6[i * DD + d] = (float)exp(sv[i]);
        }
        for (int i = 0; i < K * DD; i++)
            w3[i] = (float)rng_normal(&r);
        loss_config pc = loss_config_new(lp);
        CHECK(lp->settle(&pc, DD, 0) == NULL && pc.margin == 0.5 && loss_value(&pc, lp, "lp-lambda") == 1 &&
              loss_value(&pc, lp, "lp-margin") == 1);
        loss_set(&pc, lp, "scale", 4);
        loss_set(&pc, lp, "lp-lambda", 0.7);
        loss_config ac = config(arc, 4, 0.5);
        double li[N], pred = 0;
        for (int i = 0; i < N; i++) { /* each item's own ArcFace loss: a batch of one */
            loss_input one = {.n = 1, .C = 1, .D = DD, .mu = m6 + i * DD, .cls = y6 + i, .row = y6 + i, .classes = K};
            li[i] = eval(arc, &ac, &one, w3, NULL, NULL, NULL);
        }
        for (int i = 0; i < 3; i++) {
            double sg = li[i] > li[i + 3] ? 1 : -1, t = -sg * (log(v6[i * DD]) - log(v6[(i + 3) * DD])) + 1;
            pred += t > 0 ? t / 3 : 0;
        }
        loss_input mi = {.n = N, .C = 1, .D = DD, .mu = m6, .cls = y6, .row = y6, .classes = K};
        double want = eval(arc, &ac, &mi, w3, NULL, NULL, NULL) + 0.7 * pred;
        loss_input pi = mi;
        pi.var = v6;
        loss_stats ps;
        CHECK_CLOSE(lp->forward_backward(&pc, &pi, w3, NULL, NULL, NULL, NULL, &ps), want, 1e-9);
        CHECK_CLOSE(ps.kl, pred, 1e-9);
        CHECK(pred > 0);
        double pworst = lossgrad_check_stoch(lp, &pc, &pi, w3, LOSSGRAD_MU | LOSSGRAD_VAR, 3e-3);
        printf("gradcheck losspred: means and s, worst relative error %.2g\n", pworst);
    }

    /* scf: ArcFace on the means plus lambda x the mean of -log C_3(kappa) - kappa c, kappa = 1 /
     * var; in D = 3 the vMF normaliser is closed-form, C_3(kappa) = kappa / (4 pi sinh kappa), so
     * the value is checked by hand without the Bessel code; the means' gradient is ArcFace's (the
     * KL's cosine is detached), the variances' against central differences */
    {
        const loss_kind *sc = loss_find("scf");
        CHECK(sc && sc->needs_var && sc->default_head && !strcmp(sc->default_head, "iso") &&
              !strcmp(sc->class_weights, "scf.w"));
        enum { N = 5, K = 3, DD = 3 };
        float m5[N * DD], v5[N * DD], w3[K * DD];
        int32_t y5[N] = {0, 1, 2, 1, 0};
        double kap[N] = {1.3, 2, 9, 40, 150}; /* (at least the floor, 1: below it, the floor's value, checked after) */
        rng_init(&r, 29, 0);
        for (int i = 0; i < N; i++)
            for (int d = 0; d < DD; d++)
                m5[i * DD + d] = (float)rng_normal(&r), v5[i * DD + d] = (float)(1 / kap[i]);
        for (int i = 0; i < K * DD; i++)
            w3[i] = (float)rng_normal(&r);
        loss_config sfc = loss_config_new(sc);
        CHECK(sc->settle(&sfc, DD, 0) == NULL && sfc.margin == 0.5 && loss_value(&sfc, sc, "scf-lambda") == 1);
        loss_set(&sfc, sc, "scale", 4);
        loss_set(&sfc, sc, "scf-lambda", 0.5);
        loss_config ac = config(arc, 4, 0.5);
        loss_input mi = {.n = N, .C = 1, .D = DD, .mu = m5, .cls = y5, .row = y5, .classes = K};
        double kl = 0;
        for (int i = 0; i < N; i++) {
            double k = 1 / (double)v5[i * DD], mm = 0, ww = 0, mw = 0;
            for (int d = 0; d < DD; d++) {
                double a = m5[i * DD + d], b = w3[y5[i] * DD + d];
                mm += a * a, ww += b * b, mw += a * b;
            }
            kl += (log(4 * M_PI) + k + log1p(-exp(-2 * k)) - log(2 * k)) - k * mw / sqrt(mm * ww); /* log(4 pi sinh k / k) */
        }
        kl /= N;
        double want = eval(arc, &ac, &mi, w3, NULL, NULL, NULL) + 0.5 * kl;
        loss_input si = mi;
        si.var = v5;
        loss_stats ss;
        CHECK_CLOSE(sc->forward_backward(&sfc, &si, w3, NULL, NULL, NULL, NULL, &ss), want, 1e-8 * fabs(want));
        CHECK_CLOSE(ss.kl, kl, 1e-8 * fabs(kl));
        float gm[N * DD], gv[N * DD], ga[N * DD];
        sc->forward_backward(&sfc, &si, w3, NULL, gm, gv, NULL, NULL);
        /* the means learn ArcFace alone (c is detached in the KL): arcface's gradient, exactly */
        eval(arc, &ac, &mi, w3, NULL, ga, NULL);
        for (int j = 0; j < N * DD; j++)
            CHECK(gm[j] == ga[j]);
        double sworst = lossgrad_check_stoch(sc, &sfc, &si, w3, LOSSGRAD_VAR, 3e-3);
        /* below the floor: kappa 0.25 counts as 1, its gradient the floor's (straight through) */
        float keep = v5[0];
        for (int d = 0; d < DD; d++)
            v5[d] = 1;
        double at1 = sc->forward_backward(&sfc, &si, w3, NULL, NULL, NULL, NULL, NULL);
        float g1[N * DD], g4[N * DD], gm2[N * DD];
        sc->forward_backward(&sfc, &si, w3, NULL, gm2, g1, NULL, NULL);
        for (int d = 0; d < DD; d++)
            v5[d] = 4;
        CHECK_CLOSE(sc->forward_backward(&sfc, &si, w3, NULL, NULL, NULL, NULL, NULL), at1, 1e-12 * fabs(at1));
        sc->forward_backward(&sfc, &si, w3, NULL, gm2, g4, NULL, NULL);
        for (int d = 0; d < DD; d++)
            CHECK_CLOSE(g4[d] * 4, g1[d], 1e-6 * fabs(g1[d])); /* ds the same: dvar = ds / (D var) */
        for (int d = 0; d < DD; d++)
            v5[d] = keep;
        printf("scf: the value by the closed-form C_3 (%.6g); the means' gradient arcface's; gradcheck variances, "
               "worst relative error %.2g\n", want, sworst);
    }

    /* vmf-fl: the means' softmax cross-entropy of S cos(mu_i, w_j) plus the concentrations' of
     * kappa_i cos, kappa_i = 1 / var_i (the cosines detached), by hand from the definition with
     * the vMF's log-normaliser kept (it cancels); the means' and the weights' gradients are
     * cosface's at margin 0 (itself checked against central differences above), the variances'
     * against central differences */
    {
        const loss_kind *vf = loss_find("vmf-fl"), *cf = loss_find("cosface");
        CHECK(vf && vf->needs_var && vf->default_head && !strcmp(vf->default_head, "iso") &&
              !strcmp(vf->class_weights, "vmf-fl.w") && vf->nsettings == 1);
        enum { N = 5, K = 3, DD = 4 };
        float m5[N * DD], v5[N * DD], w3[K * DD];
        int32_t y5[N] = {0, 1, 2, 1, 0};
        double kap[N] = {1.3, 2, 9, 25, 1.1}, S = 4; /* (at least the floor, 1: below it, after) */
        rng_init(&r, 31, 0);
        for (int i = 0; i < N; i++)
            for (int d = 0; d < DD; d++)
                m5[i * DD + d] = (float)rng_normal(&r), v5[i * DD + d] = (float)(1 / kap[i]);
        for (int i = 0; i < K * DD; i++)
            w3[i] = (float)rng_normal(&r);
        loss_config vc = loss_config_new(vf);
        loss_set(&vc, vf, "scale", S);
        double means = 0, conf = 0;
        int right = 0;
        for (int i = 0; i < N; i++) {
            double k = 1 / (double)v5[i * DD], c[K], logc = 0.3 * k - 7; /* any per-item constant */
            int best = 0;
            for (int j = 0; j < K; j++) {
                double mm = 0, ww = 0, mw = 0;
                for (int d = 0; d < DD; d++) {
                    double a = m5[i * DD + d], b = w3[j * DD + d];
                    mm += a * a, ww += b * b, mw += a * b;
                }
                c[j] = mw / sqrt(mm * ww);
                best = c[j] > c[best] ? j : best;
            }
            right += best == y5[i];
            means += log(exp(S * c[0]) + exp(S * c[1]) + exp(S * c[2])) - S * c[y5[i]];
            conf += log(exp(logc + k * c[0]) + exp(logc + k * c[1]) + exp(logc + k * c[2])) - (logc + k * c[y5[i]]);
        }
        means /= N, conf /= N;
        loss_input vi = {.n = N, .C = 1, .D = DD, .mu = m5, .var = v5, .cls = y5, .row = y5, .classes = K};
        loss_stats vs;
        CHECK_CLOSE(vf->forward_backward(&vc, &vi, w3, NULL, NULL, NULL, NULL, &vs), means + conf, 1e-9 * (means + conf));
        CHECK_CLOSE(vs.nll, means, 1e-9 * means);
        CHECK_CLOSE(vs.kl, conf, 1e-9 * conf);
        CHECK(vs.acc == (double)right / N);
        float gm[N * DD], gw[K * DD] = {0}, cm[N * DD], cw[K * DD] = {0};
        vf->forward_backward(&vc, &vi, w3, gw, gm, NULL, NULL, NULL);
        loss_config cc = config(cf, S, 0);
        loss_input pi = vi;
        pi.var = NULL;
        eval(cf, &cc, &pi, w3, cw, cm, NULL);
        for (int j = 0; j < N * DD; j++)
            CHECK_CLOSE(gm[j], cm[j], 1e-6 * fabs(cm[j]) + 1e-12);
        for (int j = 0; j < K * DD; j++)
            CHECK_CLOSE(gw[j], cw[j], 1e-6 * fabs(cw[j]) + 1e-12);
        double vworst = lossgrad_check_stoch(vf, &vc, &vi, w3, LOSSGRAD_VAR, 3e-3);
        /* below the floor: kappa 0.25 counts as 1; its gradient in s the floor's where that leads back
         * up (dL/ds > 0), else 0; every item once at kappa 1, once at 0.25 */
        float keep5[N * DD], g1[N * DD], g4[N * DD];
        memcpy(keep5, v5, sizeof v5);
        for (int j = 0; j < N * DD; j++)
            v5[j] = 1;
        double at1 = vf->forward_backward(&vc, &vi, w3, NULL, NULL, NULL, NULL, NULL);
        vf->forward_backward(&vc, &vi, w3, NULL, gm, g1, NULL, NULL);
        for (int j = 0; j < N * DD; j++)
            v5[j] = 4;
        CHECK_CLOSE(vf->forward_backward(&vc, &vi, w3, NULL, NULL, NULL, NULL, NULL), at1, 1e-12 * fabs(at1));
        vf->forward_backward(&vc, &vi, w3, NULL, gm, g4, NULL, NULL);
        int up = 0, down = 0;
        for (int j = 0; j < N * DD; j++) { /* dvar = ds / (D var): the same ds is 4 x g4 */
            CHECK_CLOSE(g4[j] * 4, g1[j] > 0 ? g1[j] : 0, 1e-6 * fabs(g1[j]));
            up += g1[j] > 0, down += g1[j] < 0;
        }
        CHECK(up > 0 && down > 0); /* both sides seen */
        memcpy(v5, keep5, sizeof v5);
        printf("vmf-fl: the value by hand (%.6g + %.6g); the means' and weights' gradients cosface's at margin 0; "
               "gradcheck variances %.2g\n", means, conf, vworst);
    }

    /* dul-rgs: ArcFace on the means plus lambda x each item's Gaussian NLL of its unit class
     * centre, by hand; the gradients to the means and the variances against central differences
     * (the centres are fixed targets: the class weights are not moved) */
    {
        const loss_kind *rg = loss_find("dul-rgs");
        CHECK(rg && rg->needs_var && rg->max_C == 1 && !strcmp(rg->class_weights, "dul-rgs.w"));
        enum { N = 5, K = 3, DD = 4 };
        float m5[N * DD], v5[N * DD], w3[K * DD];
        int32_t y5[N] = {2, 1, 0, 1, 2};
        rng_init(&r, 31, 0);
        for (int i = 0; i < N * DD; i++)
            m5[i] = (float)(0.5 * rng_normal(&r)), v5[i] = (float)(0.05 + rng_uniform(&r));
        for (int i = 0; i < K * DD; i++)
            w3[i] = (float)rng_normal(&r);
        loss_config rc = loss_config_new(rg);
        CHECK(rg->settle(&rc, DD, 0) == NULL && rc.margin == 0.5 && loss_value(&rc, rg, "rgs-lambda") == 1);
        loss_set(&rc, rg, "scale", 4);
        loss_set(&rc, rg, "rgs-lambda", 0.3);
        loss_config ac = config(arc, 4, 0.5);
        loss_input mi = {.n = N, .C = 1, .D = DD, .mu = m5, .cls = y5, .row = y5, .classes = K};
        double nll = 0;
        for (int i = 0; i < N; i++) {
            double ww = 0;
            for (int d = 0; d < DD; d++)
                ww += (double)w3[y5[i] * DD + d] * w3[y5[i] * DD + d];
            for (int d = 0; d < DD; d++) {
                double e = w3[y5[i] * DD + d] / sqrt(ww) - m5[i * DD + d], v = v5[i * DD + d];
                nll += (e * e / (2 * v) + 0.5 * log(2 * M_PI * v)) / DD;
            }
        }
        nll /= N;
        double want = eval(arc, &ac, &mi, w3, NULL, NULL, NULL) + 0.3 * nll;
        loss_input ri = mi;
        ri.var = v5;
        loss_stats rs;
        CHECK_CLOSE(rg->forward_backward(&rc, &ri, w3, NULL, NULL, NULL, NULL, &rs), want, 1e-9 * fabs(want));
        CHECK_CLOSE(rs.kl, nll, 1e-9 * fabs(nll));
        double rworst = lossgrad_check_stoch(rg, &rc, &ri, w3, LOSSGRAD_MU | LOSSGRAD_VAR, 3e-3);
        printf("gradcheck dul-rgs: means and variances, worst relative error %.2g\n", rworst);
    }

    /* misuse: no class rows, a row out of range, a variance */
    lc = config(arc, 2, 0.5);
    loss_input bad = in;
    bad.row = NULL;
    if (check_child()) {
        eval(arc, &lc, &bad, W, NULL, NULL, NULL);
        _exit(0);
    }
    CHECK(check_died());
    int32_t far[2] = {0, 2};
    bad = in, bad.row = far;
    if (check_child()) {
        eval(arc, &lc, &bad, W, NULL, NULL, NULL);
        _exit(0);
    }
    CHECK(check_died());
    float var[4] = {1, 1, 1, 1};
    bad = in, bad.var = var;
    if (check_child()) {
        eval(cos_, &lc, &bad, W, NULL, NULL, NULL);
        _exit(0);
    }
    CHECK(check_died());
    return check_done("test_margin");
}
