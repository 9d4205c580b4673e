/* verify: verification and open-set identification rates at a false-accept rate, as PFE's
 * find_thresholds_by_FAR and its TAR / DIR_FAR (seasonSH/Probabilistic-Face-Embeddings, evaluation/metrics.py): the threshold is
 * read off the negatives' scores (impostor pairs, or the probes of classes absent from the
 * gallery), the rate is the share of positives (genuine pairs, mated probes) accepted.
 *
 *   scores: higher = more similar; a positive with score -INFINITY is never accepted (DIR's
 *           mated probe whose nearest gallery item is of another class)
 *   k       = round(nneg * far), half to even (numpy's np.round)
 *   T       = the k-th largest negative score (k >= 1), or, for k = 0, the next double above the
 *             largest one (PFE adds 1e-8: it accepts no negative either)
 *   accept  s >= T; rate = the share of positives accepted; far_reached = the share of negatives
 *           accepted (k / nneg, more when negatives tie at T)
 *   enough  nneg * far >= VERIFY_MIN_FALSE (10) negatives expected above T: with fewer the rate
 *           is a count of two or three pairs, and callers report NaN with the reason
 *
 * Every function works on caller-owned arrays and allocates only scratch it frees.
 *
 *   verify_point v;
 *   verify_at_far(gen, ngen, imp, nimp, 1e-2, &v);   // v.rate = TAR@FAR 1e-2
 */
#ifndef HEDGE_VERIFY_H
#define HEDGE_VERIFY_H
#include <stdint.h>

#define VERIFY_MIN_FALSE 10

typedef struct {
    int64_t k;            /* negatives meant above the threshold: round(nneg * far) */
    double threshold;     /* T: accept s >= T */
    double rate;          /* the share of positives accepted (TAR, DIR); NaN without positives */
    double far_reached;   /* the share of negatives accepted */
} verify_point;

/* 1 when nneg negatives are enough for far (nneg * far >= VERIFY_MIN_FALSE) */
int verify_enough(int64_t nneg, double far);
/* the point at far (0 < far <= 1) of pos[npos] against neg[nneg] (nneg >= 1, no NaN in either) */
void verify_at_far(const double *pos, int64_t npos, const double *neg, int64_t nneg, double far, verify_point *v);
/* the points v[0 .. nf) at far[0 .. nf) of the same scores, the negatives sorted once */
void verify_at_fars(const double *pos, int64_t npos, const double *neg, int64_t nneg, const double *far, int nf,
                    verify_point *v);
#endif
