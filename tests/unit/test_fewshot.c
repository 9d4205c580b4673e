/* fewshot (lib/evaluation/fewshot.h): the test episode sampler against a re-derivation of its definition
 * from rng_below draws (classes by a partial Fisher-Yates, then ascending; per class its support,
 * then per class its queries without the support's twins), twins never in the queries, one
 * episode the same whatever was drawn before; the accuracy and its 95% half-width by hand; the
 * summary's JSON line. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fewshot.h"
#include "util.h"

/* 3 classes. Support: 2 images each, ids 10 11 | 20 21 | 30 31. Queries: 3 each, ids 10 12 13
 * | 20 22 23 | 30 32 33, so the support image of id x0 has a twin among the queries. */
static const int32_t s_cls[6] = {0, 0, 1, 1, 2, 2};
static int64_t s_id[6] = {10, 11, 20, 21, 30, 31};
static const int32_t q_cls[9] = {0, 0, 0, 1, 1, 1, 2, 2, 2};
static int64_t q_id[9] = {10, 12, 13, 20, 22, 23, 30, 32, 33};

static void swap64(int64_t *a, int64_t i, int64_t j) { int64_t t = a[i]; a[i] = a[j]; a[j] = t; }

/* the definition, 2-way 1-shot 2-query, written out with rng_below */
static void reference(uint64_t seed, int64_t e, int *chosen, int64_t *sup, int64_t *qry)
{
    rng r;
    rng_init(&r, seed, FEWSHOT_EPISODE ^ (uint64_t)e);
    int64_t perm[3] = {0, 1, 2};
    for (int i = 0; i < 2; i++)
        swap64(perm, i, i + (int64_t)rng_below(&r, (uint64_t)(3 - i)));
    chosen[0] = (int)(perm[0] < perm[1] ? perm[0] : perm[1]);
    chosen[1] = (int)(perm[0] < perm[1] ? perm[1] : perm[0]);
    for (int j = 0; j < 2; j++) /* support records of class k: 2k, 2k + 1 */
        sup[j] = 2 * chosen[j] + (int64_t)rng_below(&r, 2);
    for (int j = 0; j < 2; j++) {
        int64_t pool[3], len = 0;
        for (int64_t i = 3 * chosen[j]; i < 3 * chosen[j] + 3; i++)
            if (q_id[i] != s_id[sup[0]] && q_id[i] != s_id[sup[1]])
                pool[len++] = i;
        for (int i = 0; i < 2; i++)
            swap64(pool, i, i + (int64_t)rng_below(&r, (uint64_t)(len - i)));
        qry[2 * j] = pool[0];
        qry[2 * j + 1] = pool[1];
    }
}

static void test_episodes(void)
{
    double mu[9] = {0};
    fewshot_items S = {.name = "support", .n = 6, .D = 1, .mu = mu, .cls = (int32_t *)s_cls, .id = s_id};
    fewshot_items Q = {.name = "query", .n = 9, .D = 1, .mu = mu, .cls = (int32_t *)q_cls, .id = q_id};
    fewshot_classes C;
    fewshot_classes_make(&S, &Q, &C);
    CHECK(C.nc == 3 && C.ns[1] == 2 && C.nq[2] == 3 && C.sup[1][1] == 3 && C.qry[2][0] == 6);
    fewshot_check_sizes(&C, &S, &Q, 1, 2); /* 3 queries, at most 1 twin: possible */
    fewshot_episode ep, ep2;
    fewshot_episode_init(&ep, &C, 2, 1, 2);
    fewshot_episode_init(&ep2, &C, 2, 1, 2);
    int twin_free = 1, differs = 0;
    for (int64_t e = 0; e < 50; e++) {
        int chosen[2];
        int64_t sup[2], qry[4];
        reference(714, e, chosen, sup, qry);
        fewshot_episode_draw(&ep, &C, &S, &Q, 714, e);
        CHECK(ep.chosen[0] == chosen[0] && ep.chosen[1] == chosen[1]);
        CHECK(ep.sup[0] == sup[0] && ep.sup[1] == sup[1]);
        for (int t = 0; t < 4; t++) {
            CHECK(ep.qry[t] == qry[t]);
            twin_free &= q_id[ep.qry[t]] != s_id[ep.sup[0]] && q_id[ep.qry[t]] != s_id[ep.sup[1]];
            twin_free &= q_cls[ep.qry[t]] == ep.chosen[t / 2];
        }
        /* episode e alone, after another episode on the same scratch: the same draw */
        fewshot_episode_draw(&ep2, &C, &S, &Q, 714, 49 - e);
        fewshot_episode_draw(&ep2, &C, &S, &Q, 714, e);
        CHECK(!memcmp(ep.qry, ep2.qry, 4 * sizeof *ep.qry) && !memcmp(ep.sup, ep2.sup, 2 * sizeof *ep.sup));
        fewshot_episode_draw(&ep2, &C, &S, &Q, 715, e);
        differs += memcmp(ep.qry, ep2.qry, 4 * sizeof *ep.qry) != 0;
    }
    CHECK(twin_free);
    CHECK(differs > 0);
    fewshot_episode_free(&ep);
    fewshot_episode_free(&ep2);
    free(C.label), free(C.ns), free(C.nq);
    for (int k = 0; k < C.nc; k++)
        free(C.sup[k]), free(C.qry[k]);
    free(C.sup), free(C.qry);
}

static void test_report(void)
{
    /* episodes with 3 and 1 of 4 right: accuracies 0.75 and 0.25, mean 0.5; sd over episodes
     * sqrt((0.25^2 + 0.25^2) / 1) = 0.353553, half-width 1.96 * 0.353553 / sqrt(2) = 0.49 */
    const int64_t correct[4] = {3, 9, 1, 9}; /* stride 2: the 9s belong to another scorer */
    double m, ci;
    fewshot_accuracy(correct, 2, 2, 4, &m, &ci);
    CHECK_CLOSE(m, 0.5, 1e-15);
    CHECK_CLOSE(ci, 0.49, 1e-15);
    fewshot_accuracy(correct, 2, 1, 4, &m, &ci);
    CHECK(m == 0.75 && isnan(ci));

    fewshot_summary s = {.episodes = 2, .ways = 5, .shots = 1, .queries = 15, .samples = 200, .spe = 0,
                         .score = "pn", .se2_from = "none", .se2 = 0, .seed = 714};
    s.acc[0] = 0.5, s.ci[0] = 0.49;
    char buf[512] = {0};
    FILE *f = fmemopen(buf, sizeof buf - 1, "w");
    fewshot_summary_json(f, &s);
    fclose(f);
    CHECK(!strcmp(buf, "{\"program\": \"fewshot\", \"episodes\": 2, \"ways\": 5, \"shots\": 1, \"queries\": 15, "
                       "\"score\": \"pn\", \"samples\": 200, \"pn\": {\"accuracy\": 0.5, \"ci95\": 0.49}, "
                       "\"spe_naive\": null, \"spe_closed\": null, \"se2\": null, \"se2_from\": \"none\", "
                       "\"seed\": 714}\n"));
    CHECK(fewshot_score_index("spe-naive") == FEWSHOT_NAIVE && fewshot_score_index("spe") == -1);
}

int main(void)
{
    util_init("test_fewshot");
    test_episodes();
    test_report();
    return check_done("test_fewshot");
}
