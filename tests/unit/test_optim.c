/* optim: Adam and SGD with momentum against two steps worked out by hand (float tolerance). */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "optim.h"

int main(void)
{
    /* Adam, lr 0.01, betas 0.9 / 0.999, eps 1e-8. Element 0, g = 0.1 then 0.3:
     *   t=1: m = 0.01, v = 1e-5, m^ = 0.1, v^ = 0.01: p = 1 - 0.01 * 0.1 / (0.1 + 1e-8) = 0.990000001
     *   t=2: m = 0.039, v = 9.999e-5, m^ = 0.039 / 0.19, v^ = 9.999e-5 / 0.001999:
     *        p = 0.990000001 - 0.01 * 0.2052632 / (0.2236515 + 1e-8) = 0.980822190
     * Element 1 (g = -0.2, 0.1) and element 2 (g = 0, -0.5: a zero gradient leaves p alone). */
    optim *o = optim_create(OPTIM_ADAM, 3, 0.01);
    CHECK(o->t == 0 && o->beta1 == 0.9 && o->beta2 == 0.999 && o->eps == 1e-8);
    CHECK(o->m[0] == 0 && o->v[2] == 0);
    float p[3] = {1.0f, -2.0f, 0.5f}, g1[3] = {0.1f, -0.2f, 0.0f}, g2[3] = {0.3f, 0.1f, -0.5f};
    optim_step(o, p, g1);
    CHECK(o->t == 1);
    CHECK_CLOSE(p[0], 0.990000001, 1e-6);
    CHECK_CLOSE(p[1], -1.990000001, 1e-6);
    CHECK(p[2] == 0.5f);
    CHECK_CLOSE(o->m[0], 0.01, 1e-8);
    CHECK_CLOSE(o->v[0], 1e-5, 1e-11); /* float: 1e-6 relative */
    optim_step(o, p, g2);
    CHECK(o->t == 2);
    CHECK_CLOSE(p[0], 0.980822190, 1e-6);
    CHECK_CLOSE(p[1], -1.987336630, 1e-6);
    CHECK_CLOSE(p[2], 0.507441368, 1e-6);
    CHECK_CLOSE(o->m[0], 0.039, 4e-8);
    CHECK_CLOSE(o->v[0], 9.999e-5, 1e-10);
    optim_free(o);

    /* SGD with momentum 0.9, lr 0.1: u = 0.9 u + g; p -= lr u.
     *   element 0: u = 0.1, p = 0.99; u = 0.09 + 0.3 = 0.39, p = 0.951 */
    o = optim_create(OPTIM_SGD, 3, 0.1);
    CHECK(o->momentum == 0.9 && o->v == NULL);
    float q[3] = {1.0f, -2.0f, 0.5f};
    optim_step(o, q, g1);
    CHECK_CLOSE(q[0], 0.99, 1e-6);
    CHECK_CLOSE(q[1], -1.98, 1e-6);
    optim_step(o, q, g2);
    CHECK_CLOSE(q[0], 0.951, 1e-6);
    CHECK_CLOSE(q[1], -1.98 - 0.1 * (0.9 * -0.2 + 0.1), 1e-6);
    CHECK_CLOSE(q[2], 0.55, 1e-6);
    CHECK(o->t == 2);
    optim_free(o);

    /* 19 elements: 16 through the 8-lane code, 3 through the scalar tail. Element 17 repeats
     * element 1: same bytes either way; all against the update in double. */
    {
        enum { N = 19 };
        optim *v = optim_create(OPTIM_ADAM, N, 3e-3);
        float pv[N], gv[N];
        double pd[N], md[N] = {0}, vd[N] = {0};
        for (int i = 0; i < N; i++) {
            pv[i] = (float)(0.1 * i - 0.7);
            gv[i] = (float)(0.05 * ((i * 7) % 5) - 0.1);
        }
        pv[17] = pv[1], gv[17] = gv[1];
        for (int i = 0; i < N; i++)
            pd[i] = pv[i];
        for (int t = 1; t <= 3; t++) {
            optim_step(v, pv, gv);
            for (int i = 0; i < N; i++) {
                md[i] = 0.9 * md[i] + 0.1 * gv[i];
                vd[i] = 0.999 * vd[i] + 0.001 * gv[i] * gv[i];
                pd[i] -= 3e-3 * (md[i] / (1 - pow(0.9, t))) / (sqrt(vd[i] / (1 - pow(0.999, t))) + 1e-8);
            }
        }
        for (int i = 0; i < N; i++)
            CHECK_CLOSE(pv[i], pd[i], 2e-6);
        CHECK(pv[17] == pv[1] && v->m[17] == v->m[1] && v->v[17] == v->v[1]);
        optim_free(v);
    }

    /* the state is plain arrays: a copy restores the run exactly */
    optim *a = optim_create(OPTIM_ADAM, 2, 1e-3), *b = optim_create(OPTIM_ADAM, 2, 1e-3);
    float pa[2] = {0.3f, -0.7f}, pb[2], g[2] = {0.02f, -0.05f};
    optim_step(a, pa, g);
    memcpy(pb, pa, sizeof pa);
    memcpy(b->m, a->m, sizeof pa), memcpy(b->v, a->v, sizeof pa), b->t = a->t;
    optim_step(a, pa, g2);
    optim_step(b, pb, g2);
    CHECK(!memcmp(pa, pb, sizeof pa));
    optim_free(a);
    optim_free(b);

    /* the learning-rate schedule, by hand: lr 1e-2, warm-up 4 steps, then decay over steps 4..13
     * (steps = 14, so x = (s - 4) / 9) to lr * 0.1 */
    lr_schedule sc = {.lr = 1e-2, .warmup = 4, .decay = DECAY_NONE, .end_frac = 0.1, .steps = 14};
    CHECK_CLOSE(lr_at(&sc, 0), 2.5e-3, 1e-15);   /* (0 + 1) / 4 */
    CHECK_CLOSE(lr_at(&sc, 3), 1e-2, 1e-15);     /* the last warm-up step reaches lr */
    CHECK_CLOSE(lr_at(&sc, 13), 1e-2, 1e-15);    /* none: constant after the warm-up */
    sc.decay = DECAY_LINEAR;
    CHECK_CLOSE(lr_at(&sc, 4), 1e-2, 1e-15);     /* x = 0 */
    CHECK_CLOSE(lr_at(&sc, 7), 1e-2 * (0.1 + 0.9 * (1 - 3.0 / 9)), 1e-15);
    CHECK_CLOSE(lr_at(&sc, 13), 1e-3, 1e-15);    /* x = 1: lr * end_frac */
    CHECK_CLOSE(lr_at(&sc, 20), 1e-3, 1e-15);    /* past the end (a longer resumed run): stays */
    sc.decay = DECAY_COSINE;
    CHECK_CLOSE(lr_at(&sc, 4), 1e-2, 1e-15);
    CHECK_CLOSE(lr_at(&sc, 13), 1e-3, 1e-15);
    /* halfway through (x = 1/2 needs s - 4 = 4.5: use 19 steps, x = (s - 4) / 14, s = 11) */
    sc.steps = 19;
    CHECK_CLOSE(lr_at(&sc, 11), 1e-2 * (0.1 + 0.9 * 0.5), 1e-15);
    /* no warm-up: the first step runs at lr */
    lr_schedule flat = {.lr = 1e-3, .steps = 100};
    CHECK_CLOSE(lr_at(&flat, 0), 1e-3, 1e-18);
    CHECK(decay_parse("cosine") == DECAY_COSINE && decay_parse("none") == DECAY_NONE && decay_parse("x") < 0);
    CHECK(!strcmp(decay_name(DECAY_LINEAR), "linear"));
    /* steps (--lr-steps 10,20): lr to step 9, a tenth from step 10, a hundredth from step 20; a
     * warm-up first when there is one */
    lr_schedule st = {.lr = 1e-2, .decay = DECAY_STEPS, .steps = 30, .nat = 2, .at = {10, 20}};
    CHECK_CLOSE(lr_at(&st, 0), 1e-2, 1e-18);
    CHECK_CLOSE(lr_at(&st, 9), 1e-2, 1e-18);
    CHECK_CLOSE(lr_at(&st, 10), 1e-3, 1e-18);
    CHECK_CLOSE(lr_at(&st, 19), 1e-3, 1e-18);
    CHECK_CLOSE(lr_at(&st, 20), 1e-4, 1e-18);
    CHECK_CLOSE(lr_at(&st, 1000), 1e-4, 1e-18); /* past the end: stays */
    st.warmup = 4;
    CHECK_CLOSE(lr_at(&st, 1), 5e-3, 1e-18);
    CHECK(decay_parse("steps") == DECAY_STEPS && !strcmp(decay_name(DECAY_STEPS), "steps"));
    int64_t at[LR_MAX_STEPS];
    char buf[64];
    CHECK(lr_steps_parse("1000,2000", at) == 2 && at[0] == 1000 && at[1] == 2000);
    CHECK(!strcmp(lr_steps_format(at, 2, buf, sizeof buf), "1000,2000"));
    CHECK(lr_steps_parse("5", at) == 1 && at[0] == 5);
    const char *bad[] = {"", "0", "-3", "20,10", "10,10", "10,", ",10", "10,x", "1,2,3,4,5,6,7,8,9", "1.5"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        CHECK(lr_steps_parse(bad[i], at) < 0);
    CHECK(lr_steps_parse("1,2,3,4,5,6,7,8", at) == 8);
    return check_done("test_optim");
}
