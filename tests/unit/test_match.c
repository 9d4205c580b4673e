/* match: closed form, Monte Carlo against the closed form and a numerical integral, stratified
 * mixtures, eta (two independent sample sets), symmetry and order independence; the pair scores
 * of the means (l2, cosine) by hand. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "match.h"
#include "rng.h"
#include "util.h"

/* E[sigmoid(-a|u| + b)] for u ~ N(mean, var): Simpson's rule over mean +- 12 sd, 20000 intervals
 * (the integrand is smooth except for a kink at 0; the error is far below the tolerances used) */
static double expect_sigmoid(double mean, double var, double a, double b)
{
    double sd = sqrt(var), lo = mean - 12 * sd, hi = mean + 12 * sd, h = (hi - lo) / 20000, s = 0;
    for (int i = 0; i <= 20000; i++) {
        double u = lo + i * h, w = (i == 0 || i == 20000) ? 1 : (i % 2 ? 4 : 2);
        s += w * match_sigmoid(-a * fabs(u) + b) * exp(-(u - mean) * (u - mean) / (2 * var)) / sqrt(2 * M_PI * var);
    }
    return s * h / 3;
}

int main(void)
{
    util_init("test_match");
    const double a = 2, b = 1;
    /* closed form: ||(0,0) - (3,4)|| = 5, sigmoid(-2 * 5 + 1) = 1 / (1 + e^9) */
    float z0[] = {0, 0}, z1[] = {3, 4};
    CHECK_CLOSE(match_prob_points(z0, z1, 2, a, b), 1 / (1 + exp(9.0)), 1e-18);
    CHECK_CLOSE(match_sigmoid(0), 0.5, 0);
    CHECK_CLOSE(match_sigmoid(-800), 0, 1e-300); /* no overflow either way */
    CHECK_CLOSE(match_sigmoid(800), 1, 0);

    /* Monte Carlo with variances ~0 equals the closed form of the means (samples = means up to
     * sqrt(1e-12) * eps ~ 1e-6, so p moves by at most ~ a * 1e-5) */
    match_scorer mc, ex;
    match_scorer_init(&mc, a, b, 8, 714, 1);
    match_scorer_init(&ex, a, b, 8, 714, 0);
    rng r;
    rng_init(&r, 714, 7);
    double worst = 0;
    for (int t = 0; t < 200; t++) {
        float m1[3], m2[3], v[3] = {1e-12f, 1e-12f, 1e-12f};
        for (int d = 0; d < 3; d++) {
            m1[d] = (float)rng_normal(&r);
            m2[d] = (float)rng_normal(&r);
        }
        match_emb x = {m1, v, 1, 3, 2 * t}, y = {m2, v, 1, 3, 2 * t + 1};
        double e = fabs(match_prob(&mc, &x, &y) - match_prob_points(m1, m2, 3, a, b));
        worst = e > worst ? e : worst;
    }
    CHECK_CLOSE(worst, 0, 1e-4);

    /* a mixture of 2 with zero variances: stratified sampling puts K/C = 4 samples on each
     * component, so the 64 sample pairs hit each of the 4 component pairs 16 times and MC is
     * exact. 1-D components {0, 2} and {1, 5}: distances 1, 5, 1, 3:
     * p = (s(-1) + s(-9) + s(-1) + s(-5)) / 4 with s(t) = sigmoid(t) */
    float mA[] = {0, 2}, mB[] = {1, 5}, v0[] = {0, 0};
    match_emb xa = {mA, v0, 2, 1, 0}, xb = {mB, v0, 2, 1, 1};
    double want = (2 * match_sigmoid(-1) + match_sigmoid(-9) + match_sigmoid(-5)) / 4;
    CHECK_CLOSE(match_prob(&mc, &xa, &xb), want, 1e-15);
    match_emb pa = {mA, NULL, 2, 1, 0}, pb = {mB, NULL, 2, 1, 1};
    CHECK_CLOSE(match_prob(&ex, &pa, &pb), want, 1e-15);

    /* 1-D Gaussians x1 ~ N(0, 0.5), x2 ~ N(1, 0.3): z1 - z2 ~ N(-1, 0.8), so
     * p = E sigmoid(-2|u| + 1) = 0.30106004 (integral). The K = 8 estimator has sd 0.069 (measured);
     * the mean of 4000 independent estimates (different indices = different samples) has standard
     * error 0.0011: tolerance 0.005. One K = 2048 estimate has sd 0.0043: tolerance 0.02. */
    float g1 = 0, gv1 = 0.5f, g2 = 1, gv2 = 0.3f;
    double exact = expect_sigmoid(-1, 0.8, a, b);
    CHECK_CLOSE(exact, 0.3010600443, 1e-9);
    double sum = 0;
    for (int t = 0; t < 4000; t++) {
        match_emb x = {&g1, &gv1, 1, 1, 2 * t}, y = {&g2, &gv2, 1, 1, 2 * t + 1};
        sum += match_prob(&mc, &x, &y);
    }
    CHECK_CLOSE(sum / 4000, exact, 0.005);
    match_scorer big;
    match_scorer_init(&big, a, b, 2048, 714, 1);
    match_emb x1 = {&g1, &gv1, 1, 1, 0}, x2 = {&g2, &gv2, 1, 1, 1};
    CHECK_CLOSE(match_prob(&big, &x1, &x2), exact, 0.02);

    /* eta with two independent sample sets: for x ~ N(0, 0.5), z - z' ~ N(0, 1), so
     * eta = 1 - E sigmoid(-2|u| + 1) = 0.60136000. Mean of 4000 K = 8 estimates: standard error
     * 0.0008, tolerance 0.004. (Reusing one sample set would add the K zero-distance pairs and
     * bias eta by -(sigmoid(1) - 0.399)/8 = -0.041.) */
    double eta_exact = 1 - expect_sigmoid(0, 1.0, a, b);
    sum = 0;
    for (int t = 0; t < 4000; t++) {
        match_emb x = {&g1, &gv1, 1, 1, t};
        sum += match_eta(&mc, &x);
    }
    CHECK_CLOSE(sum / 4000, eta_exact, 0.004);

    /* eta of a point-like embedding: 1 - sigmoid(b) (exact for points, ~1e-6 off for var 1e-12) */
    float pm[] = {0.3f, -1.2f}, pv[] = {1e-12f, 1e-12f};
    match_emb pt = {pm, NULL, 1, 2, 5}, ptl = {pm, pv, 1, 2, 5};
    CHECK_CLOSE(match_eta(&ex, &pt), 1 - match_sigmoid(b), 1e-15);
    CHECK_CLOSE(match_eta(&mc, &pt), 1 - match_sigmoid(b), 1e-15); /* no var: nothing to sample */
    CHECK_CLOSE(match_eta(&mc, &ptl), 1 - match_sigmoid(b), 1e-5);

    /* eta grows with the variance: with the same index the same eps are drawn, every sample
     * distance scales with sqrt(var), every sigmoid falls, so eta rises strictly */
    double prev = -1;
    int rising = 1;
    const float vars[] = {1e-6f, 1e-3f, 0.01f, 0.1f, 1, 10};
    for (int t = 0; t < 6; t++) {
        float vv[2] = {vars[t], vars[t]};
        match_emb x = {pm, vv, 1, 2, 9};
        double e = match_eta(&mc, &x);
        rising &= e > prev;
        prev = e;
    }
    CHECK(rising);
    CHECK(prev > 0.9); /* var 10: the two sample sets are far apart */

    /* symmetric, and independent of what was scored before */
    match_emb x = {&g1, &gv1, 1, 1, 3}, y = {&g2, &gv2, 1, 1, 8};
    double p1 = match_prob(&mc, &x, &y);
    match_prob(&mc, &x1, &x2);
    match_eta(&mc, &x);
    CHECK(match_prob(&mc, &y, &x) == p1);
    CHECK(match_prob(&mc, &x, &y) == p1);

    /* huge means and variances: z1 - z2 is (mu1 - mu2) + (n1 - n2) in double, so a mean of 1e20
     * (float spacing there 8.8e12) does not swallow a variance of 0.5: eta and p equal those at
     * the origin exactly (the same index, the same eps); a variance of 3e38 (sd 1.7e19) puts the
     * two sample sets far apart: eta ~ 1, not the 1 - sigmoid(b) of samples collapsed onto mu */
    float far[] = {1e20f, -1e20f}, far2[] = {1e20f, -1e20f}, origin[] = {0, 0}, hv[] = {0.5f, 0.5f};
    float top[] = {3e38f, -3e38f}, huge_var[] = {3e38f, 3e38f};
    match_emb xf = {far, hv, 1, 2, 11}, xo = {origin, hv, 1, 2, 11};
    CHECK(match_eta(&mc, &xf) == match_eta(&mc, &xo));
    CHECK(match_eta(&mc, &xf) > 0.4); /* var 0.5: about 0.60 (above), far from 0.27 */
    match_emb yf = {far2, hv, 1, 2, 12}, yo = {origin, hv, 1, 2, 12};
    CHECK(match_prob(&mc, &xf, &yf) == match_prob(&mc, &xo, &yo));
    match_emb xh = {top, huge_var, 1, 2, 13};
    double eh = match_eta(&mc, &xh);
    CHECK(isfinite(eh) && eh > 0.999 && eh <= 1);
    match_emb xt = {top, hv, 1, 2, 11};
    CHECK(match_eta(&mc, &xt) == match_eta(&mc, &xo)); /* even at 3e38 */

    /* pair scores of the means (pairscore --score l2 / cosine), by hand. S: item 0 a mixture of
     * (1,0) and (3,0) (mean (2,0)), item 1 the point (0,0) twice (mean 0); G: (0,2) and (-4,0).
     *   l2(0, 0) = -|(2,-2)| = -2 sqrt 2, l2(0, 1) = -|(6,0)| = -6, l2(1, 1) = -4
     *   cosine(0, 0) = 0, cosine(0, 1) = -8 / (2 x 4) = -1; item 1 of S has no direction */
    float smu[] = {1, 0, 3, 0, 0, 0, 0, 0}, gmu[] = {0, 2, 0, 2, -4, 0, -4, 0};
    match_set Sx = {.n = 2, .C = 2, .D = 2, .mu = smu}, Gx = {.n = 2, .C = 2, .D = 2, .mu = gmu};
    CHECK(match_score_parse("cosine") == MATCH_SCORE_COSINE && match_score_parse("l2") == MATCH_SCORE_L2);
    CHECK(match_score_parse("p") == MATCH_SCORE_P && match_score_parse("L2") == -1);
    CHECK(!strcmp(match_score_fields[MATCH_SCORE_L2], "neg_l2") && !strcmp(match_score_fields[MATCH_SCORE_COSINE], "cos"));
    match_pair_scorer pl, pc;
    match_pair_scorer_init(&pl, MATCH_SCORE_L2, &Sx, &Gx);
    CHECK_CLOSE(match_pair_score(&pl, 0, 0), -2 * sqrt(2.0), 1e-12);
    CHECK_CLOSE(match_pair_score(&pl, 0, 1), -6, 1e-12);
    CHECK_CLOSE(match_pair_score(&pl, 1, 1), -4, 1e-12);
    int which = -1;
    CHECK(match_pair_directed(&pl, 1, 1, &which) && which == -1); /* l2 takes a zero mean */
    match_pair_scorer_init(&pc, MATCH_SCORE_COSINE, &Sx, &Gx);
    CHECK_CLOSE(match_pair_score(&pc, 0, 0), 0, 1e-12);
    CHECK_CLOSE(match_pair_score(&pc, 0, 1), -1, 1e-12);
    CHECK(match_pair_directed(&pc, 0, 1, &which));
    CHECK(!match_pair_directed(&pc, 1, 0, &which) && which == 0);
    match_pair_scorer_free(&pl);
    match_pair_scorer_free(&pc);
    match_pair_scorer_init(&pc, MATCH_SCORE_COSINE, &Gx, &Gx); /* one set against itself */
    CHECK_CLOSE(match_pair_score(&pc, 0, 1), 0, 1e-12);
    CHECK_CLOSE(match_pair_score(&pc, 1, 1), 1, 1e-12);
    match_pair_scorer_free(&pc);

    match_scorer_free(&mc);
    match_scorer_free(&ex);
    match_scorer_free(&big);
    return check_done("test_match");
}
