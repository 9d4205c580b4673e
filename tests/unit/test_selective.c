/* selective: the measures of lib/measures/selective.h against hand-derived values and against lib/measures/aurc.h's
 * exact functions (the fast path of a replicate with every count 1), counts against copies, the
 * bootstrap's scheme and its independence of the thread count, and what cannot be had. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "argsort.h"
#include "aurc.h"
#include "check.h"
#include "rng.h"
#include "selective.h"
#include "uncertainty.h"
#include "util.h"

static double H[4096];

static void harmonic(void)
{
    for (int k = 1; k < 4096; k++)
        H[k] = H[k - 1] + 1.0 / k;
}

/* the orders selective_measures takes: by (u, tie, performance), and by loss */
static void orders(const double *u, const double *loss, const uint64_t *tie, int64_t n, int64_t *order, int64_t *oorder)
{
    double *perf = malloc((size_t)n * sizeof *perf);
    for (int64_t i = 0; i < n; i++)
        perf[i] = 1 - loss[i];
    const double *more[1] = {perf};
    metrics_argsort_ties(u, tie, 1, more, n, order);
    metrics_argsort(loss, n, oorder);
    free(perf);
}

/* u = .1 .4 .4 .9, loss 0 1 0 1. Ties: the run {.4, .4} is one step, its expected loss 1/2 at
 * either position. risk(k): 0, (0 + .5) / 2, 1/3, 2/4 = 0, 1/4, 1/3, 1/2: AURC = 13/12 / 4 =
 * 13/48; the oracle 0, 0, 1/3, 1/2: 5/24, E-AURC = 3/48 = 1/16; cumulative losses 0, .5, 1, 2:
 * AUGRC = 3.5 / 16 = 7/32; AUROC: wrong {.4, .9} against right {.1, .4}: (1 + 1/2 + 1 + 1) / 4 =
 * 0.875 (the research notes on the anchors, /work/notes/anchors.md, computed the same by hand) */
static void test_hand(void)
{
    double u[] = {0.1, 0.4, 0.4, 0.9}, loss[] = {0, 1, 0, 1}, out[SELECTIVE_NMEASURES];
    uint64_t tie[] = {1, 2, 3, 4};
    int64_t order[4], oorder[4];
    orders(u, loss, tie, 4, order, oorder);
    selective_measures(u, loss, 1, order, oorder, 4, NULL, H, out);
    CHECK_CLOSE(out[SELECTIVE_AURC], 13.0 / 48, 1e-15);
    CHECK_CLOSE(out[SELECTIVE_EAURC], 1.0 / 16, 1e-15);
    CHECK_CLOSE(out[SELECTIVE_AUGRC], 7.0 / 32, 1e-15);
    CHECK_CLOSE(out[SELECTIVE_AUROC], 0.875, 1e-15);
    CHECK(isnan(out[SELECTIVE_TAU]) && isnan(out[SELECTIVE_PEARSON])); /* fewer queries than bins */
    /* PCME++'s pearson_bins by hand: 25 queries, u = 0 .. 24, losses so that the 10 bins of 2
     * (queries 20 .. 24 left out) have performance 1, 1, .5, .5, .5, 0, .5, 0, 0, 0:
     * mean index 4.5, mean performance 0.4; sum (b - 4.5)(p - .4) = -8.5 ... by numpy:
     * np.corrcoef(range(10), [1,1,.5,.5,.5,0,.5,0,0,0])[0,1] = -0.88395999...  */
    double u2[25], l2[25], perf[10] = {1, 1, .5, .5, .5, 0, .5, 0, 0, 0};
    uint64_t t2[25];
    for (int i = 0; i < 25; i++) {
        u2[i] = i, t2[i] = (uint64_t)i;
        l2[i] = i < 20 ? (perf[i / 2] == 1 ? 0 : perf[i / 2] == 0 ? 1 : (double)(i % 2)) : 1;
    }
    int64_t o2[25], oo2[25];
    orders(u2, l2, t2, 25, o2, oo2);
    selective_measures(u2, l2, 1, o2, oo2, 25, NULL, H, out);
    double mx = 4.5, my = 0.4, sxy = 0, sxx = 0, syy = 0;
    for (int b = 0; b < 10; b++)
        sxy += (b - mx) * (perf[b] - my), sxx += (b - mx) * (b - mx), syy += (perf[b] - my) * (perf[b] - my);
    CHECK_CLOSE(out[SELECTIVE_PEARSON], sxy / sqrt(sxx * syy), 1e-14);
    CHECK_CLOSE(out[SELECTIVE_PEARSON], -0.8839599999, 1e-9);
}

/* random sets with many ties, binary and graded losses: the fast path against the exact
 * functions (AURC, oracle, AUROC; tau against ktau's report with the same tie keys); AUGRC against
 * its definition with the tie rule, position by position */
static void test_exact(void)
{
    rng r;
    rng_init(&r, 46, 1);
    for (int rep = 0; rep < 60; rep++) {
        int64_t n = 20 + (int64_t)rng_below(&r, 300);
        int binary = rep % 2, levels = 1 + (int)rng_below(&r, 12);
        double *u = malloc(n * sizeof *u), *loss = malloc(n * sizeof *loss), out[SELECTIVE_NMEASURES];
        uint64_t *tie = malloc(n * sizeof *tie);
        int64_t *order = malloc(n * sizeof *order), *oorder = malloc(n * sizeof *oorder);
        for (int64_t i = 0; i < n; i++) {
            u[i] = (double)rng_below(&r, (uint64_t)levels) / 4;
            loss[i] = binary ? (double)(rng_uniform(&r) < 0.3 + 0.05 * u[i]) : floor(rng_uniform(&r) * 9) / 8;
            double id = (double)i;
            tie[i] = metrics_tie_key(714, &id, 1);
        }
        orders(u, loss, tie, n, order, oorder);
        selective_measures(u, loss, binary, order, oorder, n, NULL, H, out);
        metrics_aurc_result a;
        metrics_aurc(u, loss, n, &a, 0, NULL);
        CHECK_CLOSE(out[SELECTIVE_AURC], a.aurc, 1e-12);
        CHECK_CLOSE(out[SELECTIVE_EAURC], a.eaurc, 1e-12);
        /* AUGRC: E[cumulative loss at k] by the same tie rule, summed */
        double *cum = malloc(n * sizeof *cum), sum = 0, L = 0;
        for (int64_t s = 0, e; s < n; s = e) {
            double S = 0;
            for (e = s; e < n && u[order[e]] == u[order[s]]; e++)
                S += loss[order[e]];
            for (int64_t k = s; k < e; k++)
                cum[k] = L + (double)(k - s + 1) * S / (double)(e - s);
            L += S;
        }
        for (int64_t k = 0; k < n; k++)
            sum += cum[k];
        CHECK_CLOSE(out[SELECTIVE_AUGRC], sum / ((double)n * n), 1e-12);
        free(cum);
        uncertainty_report ur = {.ufield = "u", .pname = "accuracy", .f1 = "correct", .nbins = SELECTIVE_BINS,
                                 .seed = 714, .n = n, .quiet = 1};
        double *perf = malloc(n * sizeof *perf);
        for (int64_t i = 0; i < n; i++)
            perf[i] = 1 - loss[i];
        uncertainty_analyse(&ur, u, perf, NULL, tie, NULL);
        if (levels > 1) {
            CHECK(out[SELECTIVE_TAU] == ur.tau || (isnan(out[SELECTIVE_TAU]) && isnan(ur.tau)));
            if (binary)
                CHECK(out[SELECTIVE_AUROC] == ur.auroc || (isnan(out[SELECTIVE_AUROC]) && isnan(ur.auroc)));
        }
        if (!binary)
            CHECK(isnan(out[SELECTIVE_AUROC]));
        uncertainty_free(&ur);
        /* counts: item i of count c[i] is c[i] copies (same u, tie key and loss), side by side */
        uint32_t *c = malloc(n * sizeof *c);
        int64_t N = 0;
        for (int64_t i = 0; i < n; i++)
            N += c[i] = (uint32_t)rng_below(&r, 4);
        double *U = malloc((N + 1) * sizeof *U), *Ls = malloc((N + 1) * sizeof *Ls), cout[SELECTIVE_NMEASURES],
               eout[SELECTIVE_NMEASURES];
        uint64_t *T = malloc((N + 1) * sizeof *T);
        int64_t *O = malloc((N + 1) * sizeof *O), *OO = malloc((N + 1) * sizeof *OO), j = 0;
        for (int64_t i = 0; i < n; i++)
            for (uint32_t k = 0; k < c[i]; k++)
                U[j] = u[i], Ls[j] = loss[i], T[j] = tie[i], j++;
        orders(U, Ls, T, N, O, OO);
        selective_measures(U, Ls, binary, O, OO, N, NULL, H, eout);
        selective_measures(u, loss, binary, order, oorder, n, c, H, cout);
        /* (tau of graded losses only where the bins' sums are exact: a bin's sum of k copies
         * and its sum of k x the loss may round apart, and tau-b counts exact ties) */
        for (int m = 0; m < SELECTIVE_NMEASURES; m++)
            if (binary || m != SELECTIVE_TAU)
                CHECK(fabs(cout[m] - eout[m]) <= 1e-12 || (isnan(cout[m]) && isnan(eout[m])));
        free(c), free(U), free(Ls), free(T), free(O), free(OO);
        free(perf), free(u), free(loss), free(tie), free(order), free(oorder);
    }
}

/* the run: the bootstrap's counts as lib/measures/selective.h says (replicate b from rng_init(seed,
 * SELECTIVE_BOOT ^ b), n draws of rng_below(n)), its intervals the percentiles of replicates
 * recomputed here, the same bytes on 1 and 4 threads, the differences paired, and what cannot be
 * had said */
static void test_run(void)
{
    int64_t n = 400;
    double *u1 = malloc(n * sizeof *u1), *u2 = malloc(n * sizeof *u2), *u3 = malloc(n * sizeof *u3),
           *l = malloc(n * sizeof *l), *g = malloc(n * sizeof *g), *v = malloc(n * sizeof *v);
    uint64_t *tie = malloc(n * sizeof *tie);
    int32_t *cls = malloc(n * sizeof *cls);
    rng r;
    rng_init(&r, 46, 2);
    for (int64_t i = 0; i < n; i++) {
        double z = rng_normal(&r);
        l[i] = rng_uniform(&r) < 1 / (1 + exp(-2 * z));
        u1[i] = z + rng_normal(&r), u2[i] = rng_uniform(&r), u3[i] = 1;
        g[i] = i % 7 ? rng_uniform(&r) : NAN;
        v[i] = 1 - l[i], cls[i] = (int32_t)(i % 5);
        double id = (double)i;
        tie[i] = metrics_tie_key(714, &id, 1);
    }
    selective_source S[] = {{"noise", u2, 0, NULL}, {"constant", u3, 0, NULL}, {"learned", u1, 1, NULL},
                            {"missing", NULL, 1, "no var"}};
    selective_target T[] = {{"wrong", l, 1, NULL}, {"graded", g, 0, NULL}};
    selective_mean M[] = {{v, NULL}, {v, cls}};
    selective_result *a = malloc(sizeof *a), *b = malloc(sizeof *b);
    selective_run(S, 4, T, 2, M, 2, n, tie, 200, 714, 1, a);
    selective_run(S, 4, T, 2, M, 2, n, tie, 200, 714, 4, b);
    CHECK(!memcmp(a->ci, b->ci, sizeof a->ci) && !memcmp(a->diff_ci, b->diff_ci, sizeof a->diff_ci) &&
          !memcmp(a->mean_ci, b->mean_ci, sizeof a->mean_ci));
    CHECK(isnan(a->value[1][0][SELECTIVE_AURC]) && strstr(a->why[1][0][SELECTIVE_AURC], "the same for every query"));
    CHECK(isnan(a->value[3][1][SELECTIVE_TAU]) && !strcmp(a->why[3][1][SELECTIVE_TAU], "no var"));
    CHECK(isnan(a->value[2][1][SELECTIVE_AUROC]) && strstr(a->why[2][1][SELECTIVE_AUROC], "graded"));
    CHECK(a->best[0][SELECTIVE_AUROC] == 0); /* the only measurable free baseline */
    CHECK_CLOSE(a->diff[2][0][SELECTIVE_AUROC], a->value[2][0][SELECTIVE_AUROC] - a->value[0][0][SELECTIVE_AUROC], 0);
    /* the replicates recomputed here, by the documented scheme */
    double *rep = malloc(200 * sizeof *rep), *drep = malloc(200 * sizeof *drep), *mrep = malloc(200 * sizeof *mrep);
    uint32_t *c = malloc(n * sizeof *c);
    int64_t *o1 = malloc(n * sizeof *o1), *oo = malloc(n * sizeof *oo), *o2 = malloc(n * sizeof *o2),
            *oo2 = malloc(n * sizeof *oo2);
    orders(u1, l, tie, n, o1, oo);
    orders(u2, l, tie, n, o2, oo2);
    for (int k = 0; k < 200; k++) {
        rng g2;
        rng_init(&g2, 714, SELECTIVE_BOOT ^ (uint64_t)k);
        memset(c, 0, n * sizeof *c);
        for (int64_t t = 0; t < n; t++)
            c[rng_below(&g2, (uint64_t)n)]++;
        double o[SELECTIVE_NMEASURES], ob[SELECTIVE_NMEASURES], s = 0, w = 0;
        selective_measures(u1, l, 1, o1, oo, n, c, H, o);
        selective_measures(u2, l, 1, o2, oo2, n, c, H, ob);
        rep[k] = o[SELECTIVE_AURC], drep[k] = o[SELECTIVE_AUROC] - ob[SELECTIVE_AUROC];
        for (int64_t i = 0; i < n; i++)
            s += c[i] * v[i], w += c[i];
        mrep[k] = s / w;
    }
    double *arrays[3] = {rep, drep, mrep}, *want[3] = {a->ci[2][0][SELECTIVE_AURC], a->diff_ci[2][0][SELECTIVE_AUROC],
                                                        a->mean_ci[0]};
    for (int q = 0; q < 3; q++) {
        double *x = arrays[q];
        for (int i = 1; i < 200; i++) /* insertion sort, then numpy's linear percentile */
            for (int j = i; j > 0 && x[j - 1] > x[j]; j--) {
                double t = x[j];
                x[j] = x[j - 1], x[j - 1] = t;
            }
        for (int e = 0; e < 2; e++) {
            double pos = (e ? 0.975 : 0.025) * 199, f = floor(pos);
            int i = (int)f;
            CHECK_CLOSE(want[q][e], x[i] + (pos - f) * (x[i + 1] - x[i]), 1e-15);
        }
    }
    CHECK(a->ci[2][0][SELECTIVE_AURC][0] < a->value[2][0][SELECTIVE_AURC] &&
          a->value[2][0][SELECTIVE_AURC] < a->ci[2][0][SELECTIVE_AURC][1]);
    CHECK(a->diff_ci[2][0][SELECTIVE_AUROC][0] > 0); /* the learned source knows, the noise does not */
    /* no bootstrap: values, no intervals, the reason */
    selective_run(S, 4, T, 2, M, 2, n, tie, 0, 714, 1, b);
    CHECK(b->value[2][0][SELECTIVE_AURC] == a->value[2][0][SELECTIVE_AURC] && isnan(b->ci[2][0][SELECTIVE_AURC][0]) &&
          strstr(b->ci_why, "no bootstrap"));
    free(c), free(o1), free(oo), free(o2), free(oo2), free(rep), free(drep), free(mrep);
    free(a), free(b), free(u1), free(u2), free(u3), free(l), free(g), free(v), free(tie), free(cls);
}

int main(void)
{
    util_init("test_selective");
    harmonic();
    test_hand();
    test_exact();
    test_run();
    return check_done("selective");
}
