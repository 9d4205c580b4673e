/* check.h: the tiny harness of hedge's C unit tests. Each CHECK prints what failed with file and
 * line; CHECK_CLOSE also tracks the largest difference seen, printed by check_done(), which
 * returns the exit status (1 if anything failed: a failing test never exits 0). */
#ifndef HEDGE_CHECK_H
#define HEDGE_CHECK_H
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

static int check_failures, check_count;
static double check_maxdiff;
/* set by check_died when HEDGE_TEST_NO_FORK skipped the child (below): the CHECK that asked
 * is counted as skipped, whatever the value it got */
static int check_skip_pending, check_skipped;

#define CHECK(cond)                                                                      \
    do {                                                                                 \
        check_count++;                                                                   \
        int ok_ = !!(cond);                                                              \
        if (check_skip_pending)                                                          \
            check_skip_pending = 0, check_skipped++;                                     \
        else if (!ok_) {                                                                 \
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
/* Under qemu-user on this project's machines a fork()ed child never runs (tests/shell/aarch64.sh):
 * with HEDGE_TEST_NO_FORK=1 no child is made, and the CHECK that asked for one is skipped,
 * counted and said by check_done; the tests whose own helpers fork are not run there at all */
static inline int check_nofork(void)
{
    const char *e = getenv("HEDGE_TEST_NO_FORK");
    return e && *e == '1';
}

static inline int check_child(void)
{
    if (check_nofork()) {
        check_child_pid = -2;
        return 0;
    }
    fflush(NULL);
    check_child_pid = fork();
    if (check_child_pid == 0) {
        if (!freopen("/dev/null", "w", stderr))
            _exit(3);
        return 1;
    }
    return 0;
}

/* 1 when the child exited with status code (under HEDGE_TEST_NO_FORK: skipped, see above) */
static inline int check_exited(int code)
{
    int status;
    if (check_child_pid == -2) {
        check_skip_pending = 1;
        return 1;
    }
    if (check_child_pid < 0 || waitpid(check_child_pid, &status, 0) != check_child_pid)
        return 0;
    return WIFEXITED(status) && WEXITSTATUS(status) == code;
}

static inline int check_died(void) { return check_exited(1); }

static inline int check_done(const char *name)
{
    printf("%s: %d checks, %d failed, largest difference %.3g\n", name, check_count, check_failures,
           check_maxdiff);
    if (check_skipped)
        printf("%s: %d of them skipped (HEDGE_TEST_NO_FORK: they need a child process)\n", name, check_skipped);
    return check_failures ? 1 : 0;
}
#endif
