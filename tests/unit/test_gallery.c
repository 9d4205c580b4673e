/* gallery: the item each query never sees (leave-one-out, --exclude-id, a repeated id refused), an
 * item's uncertainty (its eta, else the mean of its var), unit means (a zero mean refused), the
 * queries as their own gallery; values derived by hand. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "gallery.h"

static void test_exclude(void)
{
    int64_t gid[3] = {10, 20, 30}, qid[3] = {30, 99, 10};
    /* leave-one-out: queries 3 and 4 of the input never see gallery items 3 and 4 */
    int64_t *ex = gallery_exclude(1, 0, gid, 3, qid, 3, 2, "g");
    CHECK(ex && ex[0] == 3 && ex[1] == 4);
    free(ex);
    /* --exclude-id: the item with the query's id, -1 when the gallery has none */
    ex = gallery_exclude(0, 1, gid, 3, qid, 0, 3, "g");
    CHECK(ex && ex[0] == 2 && ex[1] == -1 && ex[2] == 0);
    free(ex);
    CHECK(gallery_exclude(0, 0, gid, 3, qid, 0, 3, "g") == NULL);
    int64_t dup[3] = {10, 20, 10};
    if (check_child()) {
        gallery_exclude(0, 1, dup, 3, qid, 0, 3, "g");
        _exit(0);
    }
    CHECK(check_died());
}

static void test_uncertainty(void)
{
    /* two items, C = 1, D = 2: var (1, 3) and (2, 6) have the means 2 and 4 */
    float mu[4] = {3, 4, 0, 0}, var[4] = {1, 3, 2, 6}, eta[2] = {0.25f, 0.5f};
    int32_t cls[2] = {1, 2};
    int64_t id[2] = {7, 8};
    match_set S = {.n = 2, .C = 1, .D = 2, .mu = mu, .var = var, .cls = cls, .id = id};
    double *u = gallery_uncertainty(&S);
    CHECK(u != NULL);
    CHECK_CLOSE(u[0], 2, 0);
    CHECK_CLOSE(u[1], 4, 0);
    free(u);
    CHECK(!strcmp(gallery_uncertainty_kind(&S), "var"));
    S.eta = eta;
    u = gallery_uncertainty(&S);
    CHECK_CLOSE(u[0], 0.25, 0);
    CHECK_CLOSE(u[1], 0.5, 0);
    free(u);
    CHECK(!strcmp(gallery_uncertainty_kind(&S), "eta"));
    /* the queries as their own gallery borrow the means, classes and ids; own the uncertainty */
    gallery G = gallery_self(&S, mu, 1);
    CHECK(G.n == 2 && G.mean == mu && G.cls == cls && G.id == id && G.u && !strcmp(G.ukind, "eta"));
    CHECK(G.names == NULL && G.part_n == NULL);
    gallery_free(&G); /* frees only the uncertainty: mu, cls, id are on the stack */
    S.eta = NULL, S.var = NULL;
    CHECK(gallery_uncertainty(&S) == NULL && gallery_uncertainty_kind(&S) == NULL);

    /* unit means: (3, 4) becomes (0.6, 0.8); the zero vector (item 1) is refused */
    float m[2] = {3, 4};
    S.n = 1;
    gallery_unit_means("s", &S, m);
    CHECK_CLOSE(m[0], 0.6, 1e-7);
    CHECK_CLOSE(m[1], 0.8, 1e-7);
    S.n = 2;
    if (check_child()) {
        gallery_unit_means("s", &S, mu);
        _exit(0);
    }
    CHECK(check_died());
}

/* match_set_take_means: one component hands S->mu over (same pointer, S->mu NULL after), two
 * components compute the means as match_set_means does */
static void test_take_means(void)
{
    float *mu = malloc(4 * sizeof *mu);
    float mu2[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    for (int i = 0; i < 4; i++)
        mu[i] = (float)i;
    match_set S = {.n = 2, .C = 1, .D = 2, .mu = mu};
    float *m = match_set_take_means(&S);
    CHECK(m == mu && S.mu == NULL);
    free(m);
    match_set T = {.n = 2, .C = 2, .D = 2, .mu = mu2};
    float *a = match_set_take_means(&T), *b = match_set_means(&T, NULL);
    CHECK(T.mu == mu2 && !memcmp(a, b, 4 * sizeof *a));
    CHECK_CLOSE(a[0], 2, 0);
    CHECK_CLOSE(a[3], 7, 0);
    free(a);
    free(b);
}

int main(void)
{
    test_exclude();
    test_uncertainty();
    test_take_means();
    return check_done("gallery");
}
