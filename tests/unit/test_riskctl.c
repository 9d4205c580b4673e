/* riskctl: the threshold of lib/measures/riskctl.h on a hand-built set, and its guarantee checked the way it
 * is stated: over many calibration draws from a known distribution, the true error rate of the
 * queries kept exceeds alpha in at most a share delta of them (plus Monte-Carlo slack). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "riskctl.h"
#include "rng.h"
#include "util.h"

/* 200 queries: u = i, wrong when i >= 150 (and i odd), so the surest 150 are all right: with
 * alpha 0.05, delta 0.1, m_min = ceil(log 0.1 / log 0.95) = 45 */
static void test_hand(void)
{
    int64_t n = 200;
    double u[200], loss[200];
    for (int i = 0; i < n; i++)
        u[i] = i, loss[i] = i >= 150 && i % 2;
    riskctl_result r;
    riskctl_run(u, loss, n, 714, 0.05, 0.1, &r);
    CHECK(r.ncal == 100 && r.ntest == 100 && r.found);
    /* no calibration query below 150 is wrong: every threshold there is certified; above it the
     * errors climb at 1/2 per query and the scan stops within a few */
    CHECK(r.threshold >= 149 && r.threshold < 170);
    CHECK(r.cal_wrong <= 0.05 * r.cal_kept + 3);
    /* risk at coverage over all 200 (no ties): 0.5 -> the 100 surest, none wrong; 0.8 -> 160,
     * 5 wrong (151 .. 159 odd); 0.95 -> 190, 20 wrong */
    CHECK_CLOSE(r.risk_at[0], 0, 0);
    CHECK_CLOSE(r.risk_at[1], 5.0 / 160, 1e-15);
    CHECK_CLOSE(r.risk_at[2], 20.0 / 190, 1e-15);
    /* ties: u constant: one run, kept all or none; every query wrong: nothing certified */
    for (int i = 0; i < n; i++)
        u[i] = 1, loss[i] = 1;
    riskctl_run(u, loss, n, 714, 0.05, 0.1, &r);
    CHECK(!r.found && strstr(r.why, "no threshold") && r.coverage == 0 && isnan(r.risk));
    CHECK_CLOSE(r.risk_at[1], 1, 0);
    /* one query with a loss, NaN for the others */
    for (int i = 0; i < n; i++)
        loss[i] = i ? NAN : 0;
    riskctl_run(u, loss, n, 714, 0.05, 0.1, &r);
    CHECK(!r.found && strstr(r.why, "1 query with an R@1"));
}

/* u ~ U(0, 1), p(wrong | u) = 0.3 u^2: the true risk of "keep u <= t" is 0.1 t^2 (mean of 0.3 u^2
 * over U(0, t)); with alpha 0.05 the largest safe t is sqrt(0.5). 400 draws of 600 queries: the
 * chosen t is unsafe (t > sqrt(0.5)) in at most delta = 0.1 of them (binomial slack: 0.1 + 3 sd) */
static void test_guarantee(void)
{
    int draws = 400, unsafe = 0, found = 0;
    int64_t n = 600;
    double *u = malloc(n * sizeof *u), *loss = malloc(n * sizeof *loss), cover = 0;
    for (int d = 0; d < draws; d++) {
        rng g;
        rng_init(&g, 1000 + d, 7);
        for (int64_t i = 0; i < n; i++) {
            u[i] = rng_uniform(&g);
            loss[i] = rng_uniform(&g) < 0.3 * u[i] * u[i];
        }
        riskctl_result r;
        riskctl_run(u, loss, n, 714 + d, 0.05, 0.1, &r);
        found += r.found;
        unsafe += r.found && r.threshold > sqrt(0.5);
        cover += r.coverage;
    }
    double sd = sqrt(0.1 * 0.9 / draws);
    fprintf(stderr, "riskctl: %d of %d draws certified a threshold, %d unsafe (at most %.1f expected), mean coverage %.3f "
                    "(the best safe one: %.3f)\n", found, draws, unsafe, (0.1 + 3 * sd) * draws, cover / draws, sqrt(0.5));
    CHECK(unsafe <= (0.1 + 3 * sd) * draws);
    CHECK(found > draws / 2 && cover / draws > 0.3); /* and it is not vacuous */
    free(u), free(loss);
}

int main(void)
{
    util_init("test_riskctl");
    test_hand();
    test_guarantee();
    return check_done("riskctl");
}
