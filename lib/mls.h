/* mls: the mutual likelihood score of PFE (Shi & Jain, ICCV 2019, Eq. 3; PFE-NOTES.md) between
 * two diagonal Gaussians N(mu1, diag(v1)) and N(mu2, diag(v2)) in D dimensions:
 *
 *   MLS = -1/2 sum_l [ (mu1_l - mu2_l)^2 / (v1_l + v2_l) + log(v1_l + v2_l) ] - D/2 log(2 pi)
 *
 * log p(z1 = z2): higher means more likely the same. The loss `mls` (lib/loss_mls.c) and the
 * evaluators' MLS scores and rankings (pairscore --score mls, knn/retrieve --distance mls) all
 * compute it here. Sums in double.
 *
 *   double s = mls_score(mu1, v1, mu2, v2, D);
 *   mls_grad(mu1, v1, mu2, v2, D, g, dmu1, dv1, dmu2, dv2);   // ADDS g * dMLS/d.
 */
#ifndef HEDGE_MLS_H
#define HEDGE_MLS_H

double mls_score(const float *mu1, const float *v1, const float *mu2, const float *v2, int D);
/* ADDS g times the gradient of MLS: with d = mu1 - mu2, v = v1 + v2 per dimension,
 * dMLS/dmu1 = -d / v = -dMLS/dmu2, dMLS/dv1 = dMLS/dv2 = (d^2 / v^2 - 1 / v) / 2 (PFE's
 * appendix). Any of the outputs may be NULL. */
void mls_grad(const float *mu1, const float *v1, const float *mu2, const float *v2, int D, double g, float *dmu1,
              float *dv1, float *dmu2, float *dv2);

#endif
