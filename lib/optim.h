/* optim: Adam and SGD with momentum over one flat parameter block.
 * The state (m, v or velocity, and the step count) is plain arrays owned by the optimizer, so a
 * checkpoint saves and restores it exactly.
 *
 *   optim *o = optim_create(OPTIM_ADAM, n, 1e-3);     // lr; betas 0.9, 0.999, eps 1e-8
 *   optim_step(o, params, grads);                     // t += 1, update params in place
 */
#ifndef HEDGE_OPTIM_H
#define HEDGE_OPTIM_H
#include <stddef.h>
#include <stdint.h>

enum { OPTIM_ADAM = 0, OPTIM_SGD = 1 };

typedef struct {
    int kind;
    size_t n;
    double lr, beta1, beta2, eps;  /* Adam */
    double momentum;               /* SGD (0.9 by default) */
    int64_t t;                     /* steps taken */
    float *m, *v;                  /* Adam moments; SGD uses m as velocity; owned, n each */
} optim;

optim *optim_create(int kind, size_t n, double lr);
void optim_free(optim *o);
void optim_step(optim *o, float *params, const float *grads);

#endif
