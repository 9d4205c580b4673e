/* check.h: the tiny harness of hedge's C unit tests. Each CHECK prints what failed with file and
 * line; CHECK_CLOSE also tracks the largest difference seen, printed by check_done(), which
 * returns the exit status (1 if anything failed: a failing test never exits 0). */
#ifndef HEDGE_CHECK_H
#define HEDGE_CHECK_H
#include <math.h>
#include <stdio.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

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

/* Misuse must die with exit status 1 (util's die()): `if (check_child()) { misuse; _exit(0); }
 * return check_died();` runs the misuse in a child process with its stderr silenced (check_child
 * is 1 there, 0 here) and is 1 when the child exited with status 1. */
static pid_t check_child_pid;

static inline int check_child(void)
{
    fflush(NULL);
    check_child_pid = fork();
    if (check_child_pid == 0) {
        if (!freopen("/dev/null", "w", stderr))
            _exit(3);
        return 1;
    }
    return 0;
}

static inline int check_died(void)
{
    int status;
    if (check_child_pid < 0 || waitpid(check_child_pid, &status, 0) != check_child_pid)
        return 0;
    return WIFEXITED(status) && WEXITSTATUS(status) == 1;
}

static inline int check_done(const char *name)
{
    printf("%s: %d checks, %d failed, largest difference %.3g\n", name, check_count, check_failures,
           check_maxdiff);
    return check_failures ? 1 : 0;
}
#endif
