/* digits: the seen/unseen split, the default counts of every N and split (the public generator's
 * numbers), draws without replacement, composition, the occlusion patches (squares and
 * rectangles: their distributions, chi-square for the rectangles), and
 * the reader of the generator's image ids (.npy built here byte by byte; .npz: tests/shell).
 * Tolerances: 5 sigma of the sampling error, sigma stated beside each check. */
#include <stdio.h>
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
    digits_patch pa = {1, 3, 5, 4, 6};   /* x 3, y 5, w 4, h 6 in the right cell */
    digits_occlude(img, 2, 1, &pa);
    int zeros = 0, inside_ok = 1, outside_ok = 1;
    for (int r = 0; r < 28; r++)
        for (int c = 0; c < 56; c++) {
            int in = c >= 28 + 3 && c < 28 + 7 && r >= 5 && r < 11;
            const uint8_t *cell = c < 28 ? a : b;
            zeros += img[r * 56 + c] == 0;
            if (in)
                inside_ok &= img[r * 56 + c] == 0;
            else
                outside_ok &= img[r * 56 + c] == cell[r * 28 + c % 28];
        }
    CHECK(zeros == 24);
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
        digits_occlusion_draw(&r, 0.2, DIGITS_SQUARE, 2, pa);
        digits_occlusion_draw(&r1, 1.0, DIGITS_SQUARE, 2, pb);
        for (int k = 0; k < 2; k++) {
            bad += pb[k].w != pb[k].h;
            bad += pb[k].w < 0 || pb[k].w > 28 || pb[k].x < 0 || pb[k].y < 0 || pb[k].x + pb[k].w > 28 ||
                   pb[k].y + pb[k].h > 28 || !pb[k].occluded;
            bad += !pa[k].occluded && (pa[k].x || pa[k].y || pa[k].w || pa[k].h);
            differ += pa[k].occluded && (pa[k].x != pb[k].x || pa[k].y != pb[k].y || pa[k].w != pb[k].w);
            occ += pa[k].occluded;
            Lsum += pb[k].w;
            xsum += pb[k].x;
            want_x += (28 - pb[k].w) / 2.0;
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
        digits_occlusion_draw(&r, 0.0, DIGITS_SQUARE, 4, pz);
        for (int k = 0; k < 4; k++)
            none += pz[k].occluded;
    }
    CHECK(none == 0);
}

/* the chi-square quantile of upper tail 1e-6 (z = 4.753), Wilson-Hilferty: within 1 % for df >= 20 */
static double chi2_crit(int df)
{
    double a = 2.0 / (9.0 * df), c = 1 - a + 4.753 * sqrt(a);
    return df * c * c * c;
}

/* Rectangles (SPE appendix E): w and h each uniform on 0..28 (chi-square, 28 degrees of
 * freedom each), independent (the joint (w, h) uniform on the 29 x 29 grid: 840), x uniform on
 * 0..28-w given w and y on 0..28-h given h (the conditional tables pooled: sum over w of 28 - w =
 * 406), twins (p = 0.2 and p = 1 from one generator: the same rectangle), p respected. */
static void test_rect_draws(void)
{
    const int n = 29 * 29 * 400;  /* 336,400 digits: 400 expected per (w, h) cell */
    static long cw[29], ch[29], cwh[29][29], cx[29][29], cy[29][29];
    rng r, r1;
    rng_init(&r, 715, 2);
    long occ = 0, bad = 0, differ = 0, square = 0;
    for (int i = 0; i < n / 2; i++) {
        digits_patch pa[2], pb[2];
        r1 = r;
        digits_occlusion_draw(&r, 0.2, DIGITS_RECT, 2, pa);
        digits_occlusion_draw(&r1, 1.0, DIGITS_RECT, 2, pb);
        for (int k = 0; k < 2; k++) {
            const digits_patch *q = &pb[k];
            bad += q->w < 0 || q->w > 28 || q->h < 0 || q->h > 28 || q->x < 0 || q->y < 0 ||
                   q->x + q->w > 28 || q->y + q->h > 28 || !q->occluded;
            bad += !pa[k].occluded && (pa[k].x || pa[k].y || pa[k].w || pa[k].h);
            differ += pa[k].occluded && memcmp(&pa[k], q, sizeof *q);
            if (bad)
                continue;
            occ += pa[k].occluded;
            square += q->w == q->h;
            cw[q->w]++, ch[q->h]++, cwh[q->w][q->h]++;
            cx[q->w][q->x]++, cy[q->h][q->y]++;
        }
    }
    CHECK(bad == 0);
    CHECK(differ == 0);
    CHECK_CLOSE((double)occ / n, 0.2, 5 * sqrt(0.2 * 0.8 / n));
    double Xw = 0, Xh = 0, Xwh = 0, Xx = 0, Xy = 0;
    for (int a = 0; a < 29; a++) {
        double e = n / 29.0;
        Xw += (cw[a] - e) * (cw[a] - e) / e;
        Xh += (ch[a] - e) * (ch[a] - e) / e;
        for (int b = 0; b < 29; b++) {
            double e2 = n / 841.0;
            Xwh += (cwh[a][b] - e2) * (cwh[a][b] - e2) / e2;
        }
        for (int b = 0; b <= 28 - a; b++) {  /* x given w = a: uniform on 0..28-a */
            double ex = (double)cw[a] / (29 - a), ey = (double)ch[a] / (29 - a);
            Xx += (cx[a][b] - ex) * (cx[a][b] - ex) / ex;
            Xy += (cy[a][b] - ey) * (cy[a][b] - ey) / ey;
        }
    }
    printf("  rect: chi2 w %.1f h %.1f (crit %.1f), (w, h) %.1f (crit %.1f), x|w %.1f y|h %.1f (crit %.1f); "
           "w = h in %.4f (1/29 = %.4f)\n", Xw, Xh, chi2_crit(28), Xwh, chi2_crit(840), Xx, Xy, chi2_crit(406),
           (double)square / n, 1 / 29.0);
    CHECK(Xw < chi2_crit(28));
    CHECK(Xh < chi2_crit(28));
    CHECK(Xwh < chi2_crit(840));
    CHECK(Xx < chi2_crit(406));
    CHECK(Xy < chi2_crit(406));
    /* the default: nothing blacked out for a side of 0, yet occluded */
    uint8_t img[28 * 28];
    memset(img, 7, sizeof img);
    digits_patch z = {1, 5, 5, 0, 20};
    digits_occlude(img, 1, 0, &z);
    long zeros = 0;
    for (int i = 0; i < 28 * 28; i++)
        zeros += img[i] == 0;
    CHECK(zeros == 0);
    CHECK(digits_shape_parse("rect") == DIGITS_RECT && digits_shape_parse("square") == DIGITS_SQUARE);
    CHECK(digits_shape_parse("squares") == -1);
    CHECK(!strcmp(digits_shape_name(DIGITS_RECT), "rect"));
}

/* batch-stream generators: one per (record, slot), distinct across records and slots */
static void test_occlusion_rng(void)
{
    rng a, b;
    digits_occlusion_rng(&a, 714, 3, 5);
    digits_occlusion_rng(&b, 714, 3, 5);
    CHECK(rng_u64(&a) == rng_u64(&b));
    uint64_t first[4 * 3];
    int same = 0;
    for (int rec = 0; rec < 4; rec++)
        for (int s = 0; s < 3; s++) {
            digits_occlusion_rng(&a, 714, (uint64_t)rec, (uint64_t)s << 32);
            first[rec * 3 + s] = rng_u64(&a);
        }
    for (int i = 0; i < 12; i++)
        for (int j = 0; j < i; j++)
            same += first[i] == first[j];
    CHECK(same == 0);
    digits_occlusion_rng(&a, 715, 0, 0);
    CHECK(rng_u64(&a) != first[0]);
}

/* an .npy (format 1.0) of the header dict `dict` and nbytes of data, into out; returns its size */
static size_t npy(uint8_t *out, const char *dict, const void *data, size_t nbytes)
{
    size_t h = strlen(dict);
    memcpy(out, "\x93NUMPY\x01\x00", 8);
    out[8] = (uint8_t)(h & 255);
    out[9] = (uint8_t)(h >> 8);
    memcpy(out + 10, dict, h);
    memcpy(out + 10 + h, data, nbytes);
    return 10 + h + nbytes;
}

static int rejects(const uint8_t *buf, size_t n, const char *want)
{
    digits_ids d;
    const char *err = digits_ids_parse(&d, buf, n);
    int ok = err && strstr(err, want) && !d.ids && !d.chosen;
    if (!ok)
        fprintf(stderr, "  expected a message with '%s', got '%s'\n", want, err ? err : "(none)");
    return ok;
}

static void test_ids_npy(void)
{
    uint8_t buf[1024];
    /* the generator's layout: '<i8' [K=2, S=3, N=2], C order */
    int64_t v[12] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
    size_t n = npy(buf, "{'descr': '<i8', 'fortran_order': False, 'shape': (2, 3, 2), }   \n", v, sizeof v);
    digits_ids d;
    CHECK(digits_ids_parse(&d, buf, n) == NULL);
    CHECK(d.N == 2 && d.ndim == 3 && d.n == 6 && d.rows == 2 && d.per_row == 3 && !d.chosen);
    CHECK(d.ids && !memcmp(d.ids, v, sizeof v));
    digits_ids_free(&d);
    /* [M, N] in other integer dtypes, keys in another order, Python 2's longs; signs extended */
    uint8_t be[6] = {0x00, 0x07, 0xff, 0xfd, 0x01, 0x00};   /* >i2: 7, -3, 256 */
    n = npy(buf, "{'shape': (3L, 1L), 'fortran_order': False, \"descr\": '>i2'}\n", be, 6);
    CHECK(digits_ids_parse(&d, buf, n) == NULL);
    CHECK(d.N == 1 && d.ndim == 2 && d.n == 3 && d.rows == 3 && d.per_row == 1);
    CHECK(d.ids && d.ids[0] == 7 && d.ids[1] == -3 && d.ids[2] == 256);
    digits_ids_free(&d);
    uint8_t u1[4] = {200, 1, 2, 3};
    n = npy(buf, "{'descr': '|u1', 'fortran_order': False, 'shape': (2, 2), }\n", u1, 4);
    CHECK(digits_ids_parse(&d, buf, n) == NULL);
    CHECK(d.N == 2 && d.n == 2 && d.ids && d.ids[0] == 200 && d.ids[3] == 3);
    digits_ids_free(&d);
    int32_t i4[4] = {-1, 5, 9, 70000};
    n = npy(buf, "{'descr': '<i4', 'fortran_order': False, 'shape': (1, 4), }\n", i4, 16);
    CHECK(digits_ids_parse(&d, buf, n) == NULL);
    CHECK(d.N == 4 && d.n == 1 && d.ids && d.ids[0] == -1 && d.ids[3] == 70000);
    digits_ids_free(&d);

    /* what is refused, each with its own message */
    double f8[4] = {0, 1, 2, 3};
    n = npy(buf, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2), }\n", f8, 32);
    CHECK(rejects(buf, n, "dtype '<f8' is not an integer type"));
    n = npy(buf, "{'descr': '|b1', 'fortran_order': False, 'shape': (2, 2), }\n", u1, 4);
    CHECK(rejects(buf, n, "dtype '|b1'"));
    n = npy(buf, "{'descr': '<i16', 'fortran_order': False, 'shape': (2, 2), }\n", f8, 32);
    CHECK(rejects(buf, n, "not an integer type"));
    n = npy(buf, "{'descr': [('a', '<i8')], 'fortran_order': False, 'shape': (2,), }\n", v, 16);
    CHECK(rejects(buf, n, "structured"));
    n = npy(buf, "{'descr': '<i8', 'fortran_order': True, 'shape': (2, 3, 2), }\n", v, sizeof v);
    CHECK(rejects(buf, n, "fortran_order is True"));
    n = npy(buf, "{'descr': '<i8', 'fortran_order': False, 'shape': (12,), }\n", v, sizeof v);
    CHECK(rejects(buf, n, "shape (12,): image ids are [K, S, N]"));
    n = npy(buf, "{'descr': '<i8', 'fortran_order': False, 'shape': (1, 2, 3, 2), }\n", v, sizeof v);
    CHECK(rejects(buf, n, "shape (1, 2, 3, 2)"));
    n = npy(buf, "{'descr': '<i8', 'fortran_order': False, 'shape': (2, 6), }\n", v, sizeof v);
    CHECK(rejects(buf, n, "composites of 6 digits"));
    n = npy(buf, "{'descr': '<i8', 'fortran_order': False, 'shape': (0, 2), }\n", v, 0);
    CHECK(rejects(buf, n, "holds no composite"));
    n = npy(buf, "{'descr': '<i8', 'fortran_order': False, 'shape': (2, 3, 2), }\n", v, sizeof v - 1);
    CHECK(rejects(buf, n, "truncated: 95 bytes of data, but shape (2, 3, 2) of '<i8' needs 96"));
    n = npy(buf, "{'descr': '<i8', 'fortran_order': False, 'shape': (2, 2, 2), }\n", v, sizeof v);
    CHECK(rejects(buf, n, "needs only 64"));
    n = npy(buf, "{'descr': '<i8', 'shape': (2, 3, 2), }\n", v, sizeof v);
    CHECK(rejects(buf, n, "lacks 'fortran_order'"));
    n = npy(buf, "{'descr': '<i8', 'fortran_order': False, 'shape': (2, 3, 2), 'x': 1}\n", v, sizeof v);
    CHECK(rejects(buf, n, "unknown key 'x'"));
    n = npy(buf, "{'descr': '<i8', 'fortran_order': False, 'shape': (2, 3, 2), }\n", v, sizeof v);
    CHECK(rejects(buf, 30, "truncated .npy header"));   /* the file ends inside the header */
    buf[6] = 4;
    CHECK(rejects(buf, n, "version 4.0 is not known"));
    CHECK(rejects((const uint8_t *)"hello, world", 12, "neither an .npz (zip) nor an .npy file"));
    CHECK(rejects((const uint8_t *)"PK\x03\x04 and then nothing", 24, "no end of central directory"));
}

/* the ids against a split's labels: classes, ranges, chosen_numbers */
static void test_ids_check(void)
{
    const uint8_t labels[8] = {7, 2, 1, 0, 4, 1, 4, 9};   /* the first MNIST test labels */
    int64_t ids[8] = {0, 1, 2, 3, 4, 5, 6, 7}, chosen[2] = {72, 10};
    digits_ids d = {.N = 2, .ndim = 3, .n = 4, .rows = 2, .per_row = 2, .ids = ids, .chosen = NULL};
    int32_t cls[4];
    CHECK(digits_ids_check(&d, labels, 8, "t10k", cls) == NULL);
    CHECK(cls[0] == 72 && cls[1] == 10 && cls[2] == 41 && cls[3] == 49);
    /* with chosen_numbers: row k's S composites are all of class chosen[k] */
    int64_t rowids[8] = {0, 1, 0, 1, 2, 3, 2, 3};   /* 72 72 10 10 */
    d.ids = rowids;
    d.chosen = chosen;
    CHECK(digits_ids_check(&d, labels, 8, "t10k", cls) == NULL);
    CHECK(cls[0] == 72 && cls[1] == 72 && cls[2] == 10 && cls[3] == 10);
    chosen[1] = 41;
    const char *err = digits_ids_check(&d, labels, 8, "t10k", cls);
    CHECK(err && strstr(err, "image_ids[1, 0, 0] = 2: MNIST t10k digit 2 is a 1, but its class 41 "
                             "(chosen_numbers) needs a 4"));
    chosen[1] = 11;   /* row 0: the second digit differs */
    chosen[0] = 79;
    err = digits_ids_check(&d, labels, 8, "t10k", cls);
    CHECK(err && strstr(err, "image_ids[0, 0, 1] = 1: MNIST t10k digit 1 is a 2, but its class 79"));
    d.ids = ids;
    chosen[1] = 100;
    err = digits_ids_check(&d, labels, 8, "t10k", cls);
    CHECK(err && strstr(err, "chosen_numbers[1] = 100 is not a 2-digit number"));
    d.chosen = NULL;
    ids[5] = 8;
    err = digits_ids_check(&d, labels, 8, "t10k", cls);
    CHECK(err && strstr(err, "image_ids[1, 0, 1] = 8: out of range "
                             "(the MNIST t10k split has 8 digits: 0 to 7)"));
    ids[5] = -2;
    err = digits_ids_check(&d, labels, 8, "t10k", cls);
    CHECK(err && strstr(err, "image_ids[1, 0, 1] = -2: negative"));
    d.ndim = 2;   /* [M, N], with a class per row */
    d.per_row = 1;
    d.rows = 4;
    int64_t rowchosen[4] = {72, 10, 41, 49};
    d.chosen = rowchosen;
    err = digits_ids_check(&d, labels, 8, "t10k", cls);
    CHECK(err && strstr(err, "image_ids[2, 1] = -2: negative"));
    ids[5] = 5;
    CHECK(digits_ids_check(&d, labels, 8, "t10k", cls) == NULL && cls[2] == 41);
    rowchosen[3] = 48;
    err = digits_ids_check(&d, labels, 8, "t10k", cls);
    CHECK(err && strstr(err, "image_ids[3, 1] = 7: MNIST t10k digit 7 is a 9, but its class 48"));
}

static void test_ids_names(void)
{
    char out[256];
    CHECK(!strcmp(digits_ids_split_of_name("a/dataset_mnist_2_number_train.npz"), "train"));
    CHECK(!strcmp(digits_ids_split_of_name("dataset_mnist_2_instance_test.npz"), "test"));
    CHECK(!strcmp(digits_ids_split_of_name("x_test_seen.npy"), "test-seen"));
    CHECK(!strcmp(digits_ids_split_of_name("dataset_mnist_3_number_test_unseen.npz"), "test-unseen"));
    CHECK(digits_ids_split_of_name("dataset_mnist_3_number_test_unseen.zip") == NULL);
    CHECK(digits_ids_split_of_name("ids.npz") == NULL);
    CHECK(digits_ids_split_of_name("npz") == NULL);
    CHECK(digits_ids_train_name("d/dataset_mnist_2_number_test_unseen.npz", out, sizeof out) &&
          !strcmp(out, "d/dataset_mnist_2_number_train.npz"));
    CHECK(digits_ids_train_name("m_test.npy", out, sizeof out) && !strcmp(out, "m_train.npy"));
    CHECK(!digits_ids_train_name("m_train.npz", out, sizeof out));
    CHECK(!digits_ids_train_name("ids.npz", out, sizeof out));
    CHECK(!digits_ids_train_name("m_test.npz", out, 8));   /* too small for m_train.npz */
}

int main(void)
{
    test_class_split();
    test_plans();
    test_sources();
    test_compose_occlude();
    test_occlusion_draws();
    test_rect_draws();
    test_occlusion_rng();
    test_ids_npy();
    test_ids_check();
    test_ids_names();
    return check_done("test_digits");
}
