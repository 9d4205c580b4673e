/* check.h: the tiny harness of hedge's C unit tests. Each CHECK prints what failed with file and
 * line; CHECK_CLOSE also tracks the largest difference seen, printed by check_done(), which
 * returns the exit status (1 if anything failed: a failing test never exits 0). */
#ifndef HEDGE_CHECK_H
#define HEDGE_CHECK_H
#include <math.h>
#include <stdio.h>

static int check_failures, check_count;
static double check_maxdiff;

#define CHECK(cond)                                                                      \
    do {                                                                                 \
        check_count++;                                                                   \
        if (!(cond)) {                                                                   \
            check_failures++;                                                            \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);     \
        }                                                                                \
    } while (0)

/* |got - want| <= tol (absolute) */
#define CHECK_CLOSE(got, want, tol)                                                      \
    do {                                                                                 \
        double g_ = (got), w_ = (want), d_ = fabs(g_ - w_);                              \
        check_count++;                                                                   \
        if (d_ > check_maxdiff && isfinite(d_))                                          \
            check_maxdiff = d_;                                                          \
        if (!(d_ <= (tol))) {                                                            \
            check_failures++;                                                            \
            fprintf(stderr, "%s:%d: %s = %.9g, expected %.9g (tolerance %g)\n", __FILE__, \
                    __LINE__, #got, g_, w_, (double)(tol));                              \
        }                                                                                \
    } while (0)

static inline int check_done(const char *name)
{
    printf("%s: %d checks, %d failed, largest difference %.3g\n", name, check_count, check_failures,
           check_maxdiff);
    return check_failures ? 1 : 0;
}
#endif
