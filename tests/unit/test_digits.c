/* digits: the seen/unseen split, the default counts of every N and split (the public generator's
 * numbers), draws without replacement, composition, and the occlusion squares' distribution.
 * Tolerances: 5 sigma of the sampling error, sigma stated beside each check. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "digits.h"
#include "util.h"

static int contains(const int32_t *a, int64_t n, int32_t v)
{
    for (int64_t i = 0; i < n; i++)
        if (a[i] == v)
            return 1;
    return 0;
}

static void test_class_split(void)
{
    for (int N = 1; N <= 3; N++) {
        int64_t n = digits_nclasses(N);
        int32_t *a = emalloc(n * sizeof *a), *b = emalloc(n * sizeof *b), *c = emalloc(n * sizeof *c);
        int64_t ns = digits_class_order(N, 714, a);
        digits_class_order(N, 714, b);
        digits_class_order(N, 715, c);
        CHECK(ns == n * 7 / 10);
        CHECK(!memcmp(a, b, n * sizeof *a));   /* same seed, same split */
        CHECK(memcmp(a, c, n * sizeof *a));    /* another seed, another order */
        char *seen = calloc(n, 1);             /* a permutation of 0 .. 10^N - 1 */
        int ok = 1;
        for (int64_t i = 0; i < n; i++) {
            ok &= a[i] >= 0 && a[i] < n && !seen[a[i]];
            seen[a[i]] = 1;
        }
        CHECK(ok);
        free(seen);
        free(a);
        free(b);
        free(c);
    }
    CHECK(digits_digit(42, 2, 0) == 4 && digits_digit(42, 2, 1) == 2);
    CHECK(digits_digit(7, 3, 0) == 0 && digits_digit(7, 3, 1) == 0 && digits_digit(7, 3, 2) == 7);
    CHECK(digits_digit(9051, 4, 1) == 0 && digits_digit(9051, 4, 3) == 1);
}

/* the default counts: NOTES.md for N = 2, 3; the same rule for N = 1, 4 */
static void test_plans(void)
{
    static const struct { int N, split; int64_t nclasses, per_class; } want[] = {
        {1, DIGITS_TRAIN, 7, 14285},   {1, DIGITS_TEST_SEEN, 7, 1428},  {1, DIGITS_TEST_UNSEEN, 3, 3333},
        {2, DIGITS_TRAIN, 70, 1428},   {2, DIGITS_TEST_SEEN, 70, 142},  {2, DIGITS_TEST_UNSEEN, 30, 333},
        {3, DIGITS_TRAIN, 700, 142},   {3, DIGITS_TEST_SEEN, 100, 100}, {3, DIGITS_TEST_UNSEEN, 100, 100},
        {4, DIGITS_TRAIN, 1000, 100},  {4, DIGITS_TEST_SEEN, 100, 100}, {4, DIGITS_TEST_UNSEEN, 100, 100},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        digits_plan p;
        CHECK(digits_plan_make(&p, want[i].N, want[i].split, 0, 0, 714) == NULL);
        CHECK(p.nclasses == want[i].nclasses);
        CHECK(p.per_class == want[i].per_class);
        CHECK(p.nseen == digits_nclasses(want[i].N) * 7 / 10);
        int ok = 1;
        for (int64_t c = 0; c < p.nclasses; c++) {
            ok &= contains(p.seen, p.nseen, p.classes[c]) == (want[i].split != DIGITS_TEST_UNSEEN);
            ok &= c == 0 || p.classes[c] > p.classes[c - 1];   /* ascending, no repeats */
        }
        CHECK(ok);
        digits_plan_free(&p);
    }
    /* samples are prefixes of the class-seed order: test-seen classes are train classes */
    for (int N = 3; N <= 4; N++) {
        digits_plan tr, te;
        digits_plan_make(&tr, N, DIGITS_TRAIN, 0, 0, 714);
        digits_plan_make(&te, N, DIGITS_TEST_SEEN, 0, 0, 714);
        int ok = 1;
        for (int64_t c = 0; c < te.nclasses; c++)
            ok &= contains(tr.classes, tr.nclasses, te.classes[c]);
        CHECK(ok);
        digits_plan_free(&tr);
        digits_plan_free(&te);
    }
    /* the options: -n alone, --per-class alone, both, and too few images for one class */
    digits_plan p;
    CHECK(!digits_plan_make(&p, 2, DIGITS_TRAIN, 1000, 0, 714) && p.nclasses == 10 && p.per_class == 100);
    digits_plan_free(&p);
    CHECK(!digits_plan_make(&p, 2, DIGITS_TRAIN, 0, 5, 714) && p.nclasses == 70 && p.per_class == 5);
    digits_plan_free(&p);
    CHECK(!digits_plan_make(&p, 2, DIGITS_TEST_UNSEEN, 100, 7, 714) && p.nclasses == 14 && p.per_class == 7);
    digits_plan_free(&p);
    CHECK(digits_plan_make(&p, 2, DIGITS_TRAIN, 50, 0, 714) != NULL);
    CHECK(digits_plan_make(&p, 2, DIGITS_TRAIN, 5, 6, 714) != NULL);
}

/* 3 digits of each label: the first 3 draws of a (class, position) are a permutation of them,
 * the next 3 a fresh permutation, ... */
static void test_sources(void)
{
    uint8_t labels[30];
    for (int i = 0; i < 30; i++)
        labels[i] = i % 10;
    digits_plan p;
    CHECK(!digits_plan_make(&p, 2, DIGITS_TRAIN, 0, 7, 714));
    int32_t *src = emalloc(digits_plan_total(&p) * 2 * sizeof *src);
    int32_t *again = emalloc(digits_plan_total(&p) * 2 * sizeof *src);
    CHECK(digits_draw_sources(&p, labels, 30, 714, src) == NULL);
    CHECK(digits_draw_sources(&p, labels, 30, 714, again) == NULL);
    CHECK(!memcmp(src, again, digits_plan_total(&p) * 2 * sizeof *src));
    int ok_label = 1, ok_perm = 1;
    for (int64_t c = 0; c < p.nclasses; c++)
        for (int k = 0; k < 2; k++) {
            int d = digits_digit(p.classes[c], 2, k);
            for (int j0 = 0; j0 < 7; j0 += 3) {
                int hit[3] = {0};
                for (int j = j0; j < j0 + 3 && j < 7; j++) {
                    int32_t s = src[(c * 7 + j) * 2 + k];
                    ok_label &= s >= 0 && s < 30 && labels[s] == d;
                    hit[s / 10]++;
                }
                ok_perm &= hit[0] <= 1 && hit[1] <= 1 && hit[2] <= 1;
            }
        }
    CHECK(ok_label);
    CHECK(ok_perm);
    labels[3] = 4;   /* no digit 3 left: a class with a 3 cannot be made */
    labels[13] = 4;
    labels[23] = 4;
    CHECK(digits_draw_sources(&p, labels, 30, 714, src) != NULL);
    free(src);
    free(again);
    digits_plan_free(&p);
}

static void test_compose_occlude(void)
{
    uint8_t a[DIGITS_CELL], b[DIGITS_CELL], img[28 * 56];
    for (int i = 0; i < DIGITS_CELL; i++) {
        a[i] = (uint8_t)(1 + i % 200);
        b[i] = (uint8_t)(201 + i % 50);
    }
    const uint8_t *cells[2] = {a, b};
    digits_compose(img, 2, cells);
    int ok = 1;
    for (int r = 0; r < 28; r++)
        for (int c = 0; c < 28; c++)
            ok &= img[r * 56 + c] == a[r * 28 + c] && img[r * 56 + 28 + c] == b[r * 28 + c];
    CHECK(ok);
    digits_patch pa = {1, 3, 5, 4};   /* x 3, y 5, L 4 in the right cell */
    digits_occlude(img, 2, 1, &pa);
    int zeros = 0, inside_ok = 1, outside_ok = 1;
    for (int r = 0; r < 28; r++)
        for (int c = 0; c < 56; c++) {
            int in = c >= 28 + 3 && c < 28 + 7 && r >= 5 && r < 9;
            const uint8_t *cell = c < 28 ? a : b;
            zeros += img[r * 56 + c] == 0;
            if (in)
                inside_ok &= img[r * 56 + c] == 0;
            else
                outside_ok &= img[r * 56 + c] == cell[r * 28 + c % 28];
        }
    CHECK(zeros == 16);
    CHECK(inside_ok);
    CHECK(outside_ok);
}

/* flags ~ Bernoulli(p): sigma = sqrt(p (1 - p) / n); L uniform on 0..28: mean 14, variance
 * (29^2 - 1) / 12 = 70, sigma of the mean sqrt(70 / n); x uniform on 0..28-L */
static void test_occlusion_draws(void)
{
    const int n = 200000;
    rng r, r1;
    rng_init(&r, 714, 1);
    long occ = 0, Lsum = 0, xsum = 0, bad = 0, differ = 0;
    double want_x = 0;
    for (int i = 0; i < n / 2; i++) {
        digits_patch pa[2], pb[2];
        r1 = r;
        digits_occlusion_draw(&r, 0.2, 2, pa);
        digits_occlusion_draw(&r1, 1.0, 2, pb);
        for (int k = 0; k < 2; k++) {
            bad += pb[k].L < 0 || pb[k].L > 28 || pb[k].x < 0 || pb[k].y < 0 || pb[k].x + pb[k].L > 28 ||
                   pb[k].y + pb[k].L > 28 || !pb[k].occluded;
            bad += !pa[k].occluded && (pa[k].x || pa[k].y || pa[k].L);
            differ += pa[k].occluded && (pa[k].x != pb[k].x || pa[k].y != pb[k].y || pa[k].L != pb[k].L);
            occ += pa[k].occluded;
            Lsum += pb[k].L;
            xsum += pb[k].x;
            want_x += (28 - pb[k].L) / 2.0;
        }
    }
    CHECK(bad == 0);
    CHECK(differ == 0);   /* the same square for every p */
    CHECK_CLOSE((double)occ / n, 0.2, 5 * sqrt(0.2 * 0.8 / n));
    CHECK_CLOSE((double)Lsum / n, 14.0, 5 * sqrt(70.0 / n));
    /* given L, x is uniform on 0..28-L: variance ((29-L)^2 - 1)/12 <= 70 */
    CHECK_CLOSE((double)xsum / n, want_x / n, 5 * sqrt(70.0 / n));
    digits_patch pz[4];
    long none = 0;
    for (int i = 0; i < 1000; i++) {
        digits_occlusion_draw(&r, 0.0, 4, pz);
        for (int k = 0; k < 4; k++)
            none += pz[k].occluded;
    }
    CHECK(none == 0);
}

int main(void)
{
    test_class_split();
    test_plans();
    test_sources();
    test_compose_occlude();
    test_occlusion_draws();
    return check_done("test_digits");
}
