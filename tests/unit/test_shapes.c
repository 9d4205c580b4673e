/* shapes: colours, the rendered L against hand-drawn rectangles and the analytic centroid, the
 * class statistics of the sampler against the parameters, reproducibility, what the
 * out-of-distribution options change (and what not), and the Bayes rate against a closed form
 * and a Monte Carlo estimate. Statistical tolerances are 5 standard errors, derived beside each
 * check (for a wrapped normal of sd s, rho_k = E cos(k (x - mu)) = exp(-k^2 s^2 / 2)). */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "shapes.h"
#include "util.h"

#define S SHAPES_SIDE
#define PLANE (SHAPES_SIDE * SHAPES_SIDE)
#define RAD (M_PI / 180.0)

static double Phi(double x) { return 0.5 * erfc(-x / sqrt(2.0)); }

/* 1-D, two wrapped normals of sd s whose centres are d degrees apart, equal priors: the Bayes rule
 * picks the nearer centre (the density falls with the circular distance), so a class is right on
 * the arc of offsets (-(180 - d/2), d/2) from its centre; its wrapped-normal mass by the CDF */
static double bayes_1d(double d, double s)
{
    double a = -(180 - d / 2), b = d / 2, m = 0;
    for (int k = -10; k <= 10; k++)
        m += Phi((b + 360.0 * k) / s) - Phi((a + 360.0 * k) / s);
    return m;
}

/* the hue of an RGB pixel (the inverse of HSV, written out independently of shapes_hsv_rgb) */
static double rgb_hue(const uint8_t *px, int plane)
{
    double r = px[0], g = px[plane], b = px[2 * plane];
    double mx = fmax(r, fmax(g, b)), mn = fmin(r, fmin(g, b)), c = mx - mn, h;
    if (c == 0)
        return 0;
    if (mx == r)
        h = fmod((g - b) / c + 6, 6);
    else if (mx == g)
        h = (b - r) / c + 2;
    else
        h = (r - g) / c + 4;
    return 60 * h;
}

static void test_colour(void)
{
    static const struct { double h, s, v; uint8_t rgb[3]; } want[] = {
        {0, 1, 1, {255, 0, 0}},      {60, 1, 1, {255, 255, 0}},   {90, 1, 1, {128, 255, 0}},
        {120, 1, 1, {0, 255, 0}},    {180, 1, 1, {0, 255, 255}},  {240, 1, 1, {0, 0, 255}},
        {300, 1, 1, {255, 0, 255}},  {-60, 1, 1, {255, 0, 255}},  {420, 1, 1, {255, 255, 0}},
        {0, 0.5, 1, {255, 128, 128}}, {0, 0, 0.5, {128, 128, 128}}, {200, 1, 0, {0, 0, 0}},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        uint8_t rgb[3];
        shapes_hsv_rgb(want[i].h, want[i].s, want[i].v, rgb);
        CHECK(!memcmp(rgb, want[i].rgb, 3));
    }
    CHECK_CLOSE(shapes_wrap(-30), 330, 1e-12);
    CHECK_CLOSE(shapes_wrap(725), 5, 1e-12);
    CHECK(shapes_wrap(-1e-17) == 0);
}

static int mask_of(const uint8_t *image, int row, int col)
{
    return image[row * S + col] || image[PLANE + row * S + col] || image[2 * PLANE + row * S + col];
}

/* The defaults (stroke 8, arm 32: legs 40 px from the outer corner, pivot 20 px from each outer
 * edge, at the image centre 32, 32). Orientation 0, full legs, by hand: the stem is columns
 * 12..19, rows 12..51; the foot rows 44..51, columns 12..51. Legs 0.5 and 0.25: the stem is 8 + 16
 * = 24 px, rows 28..51; the foot 8 + 8 = 16 px, columns 12..27. */
static void test_render_by_hand(void)
{
    shapes_params p;
    shapes_defaults(&p, SHAPES_TEST);
    static uint8_t image[3 * PLANE], turned[3 * PLANE];
    static const struct { float leg0, leg1; int stem_top, foot_right; } cases[] = {{1, 1, 12, 51}, {0.5f, 0.25f, 28, 27}};
    for (int k = 0; k < 2; k++) {
        shapes_item it = {.cls = 0, .orientation = 0, .hue = 90, .leg = {cases[k].leg0, cases[k].leg1}};
        shapes_render(&p, &it, 714, SHAPES_TEST, 0, image);
        int ok = 1, colour = 1;
        for (int r = 0; r < S; r++)
            for (int c = 0; c < S; c++) {
                int stem = c >= 12 && c <= 19 && r >= cases[k].stem_top && r <= 51;
                int foot = r >= 44 && r <= 51 && c >= 12 && c <= cases[k].foot_right;
                ok &= mask_of(image, r, c) == (stem || foot) && shapes_inside(&p, &it, r, c) == (stem || foot);
                if (stem || foot) /* hue 90 at S = V = 1: (128, 255, 0) */
                    colour &= image[r * S + c] == 128 && image[PLANE + r * S + c] == 255 && image[2 * PLANE + r * S + c] == 0;
            }
        CHECK(ok);
        CHECK(colour);
        /* quarter turns are exact: counterclockwise as displayed, about the image centre */
        for (int q = 1; q < 4; q++) {
            it.orientation = 90.0f * q;
            shapes_render(&p, &it, 714, SHAPES_TEST, 0, turned);
            int same = 1;
            for (int r = 0; r < S; r++)
                for (int c = 0; c < S; c++) {
                    /* the pixel that turns onto (r, c) */
                    int r0 = q == 1 ? c : q == 2 ? S - 1 - r : S - 1 - c;
                    int c0 = q == 1 ? S - 1 - r : q == 2 ? S - 1 - c : r;
                    same &= mask_of(turned, r, c) == mask_of(image, r0, c0);
                }
            CHECK(same);
        }
    }
}

/* Any orientation: the pixel count near the L's area and the pixels' centroid on the L's centroid,
 * turned. In the L's frame (outer corner at 0, pivot at (20, 20)) the stem [0, 8] x [0, s] and
 * the rest of the foot [8, f] x [0, 8] have their centroids at (4, s/2) and ((8 + f)/2, 4). */
static void test_render_centroid(void)
{
    shapes_params p;
    shapes_defaults(&p, SHAPES_TEST);
    static uint8_t image[3 * PLANE];
    double worst = 0;
    int ok = 1;
    for (int k = 0; k < 72; k++) {
        shapes_item it = {.orientation = 5.0f * k + 1.7f, .hue = 200, .leg = {1.0f - k / 100.0f, 0.2f + k / 100.0f}};
        shapes_render(&p, &it, 714, SHAPES_TEST, 0, image);
        double s = 8 + it.leg[0] * 32, f = 8 + it.leg[1] * 32;
        double a1 = 8 * s, a2 = 8 * (f - 8), area = a1 + a2;
        double lx = (a1 * 4 + a2 * (8 + f) / 2) / area - 20, ly = (a1 * s / 2 + a2 * 4) / area - 20;
        double th = it.orientation * RAD;
        double x = cos(th) * lx - sin(th) * ly, y = sin(th) * lx + cos(th) * ly;
        double want_c = 31.5 + x, want_r = 31.5 - y; /* pixel (r, c) has its centre at (c + 0.5, r + 0.5) */
        double n = 0, sr = 0, sc = 0;
        for (int r = 0; r < S; r++)
            for (int c = 0; c < S; c++)
                if (mask_of(image, r, c))
                    n++, sr += r, sc += c;
        /* pixel centres inside a polygon: the count is off by at most about half the perimeter */
        ok &= fabs(n - area) <= (2 * (s + f)) / 2;
        double d = hypot(sr / n - want_r, sc / n - want_c);
        worst = d > worst ? d : worst;
    }
    CHECK(ok);
    CHECK(worst < 0.5);
    printf("centroid: the largest distance from the analytic centroid over 72 orientations %.3f px\n", worst);
}

typedef struct { double c, s; long n; } circ;
static void circ_add(circ *a, double deg) { a->c += cos(deg * RAD), a->s += sin(deg * RAD), a->n++; }
static double circ_mean(const circ *a) { return shapes_wrap(atan2(a->s, a->c) / RAD); }
static double circ_sd(const circ *a) { return sqrt(-2 * log(hypot(a->c, a->s) / a->n)) / RAD; }
/* the signed difference a - b on the circle, in (-180, 180] */
static double circ_diff(double a, double b)
{
    double d = shapes_wrap(a - b);
    return d > 180 ? d - 360 : d;
}

static void test_sampling(void)
{
    const int n = 40000;
    for (int split = SHAPES_TRAIN; split <= SHAPES_TEST; split++) {
        shapes_params p;
        shapes_defaults(&p, split);
        circ o[4] = {{0}}, h[4] = {{0}};
        double legsum = 0, l01 = 0, l0 = 0, l1 = 0, l00 = 0, l11 = 0, noisesum = 0, lmin = 1, lmax = 0;
        long noisy = 0, outside = 0;
        for (int i = 0; i < n; i++) {
            shapes_item it;
            shapes_sample(&p, 714, split, i, &it);
            circ_add(&o[it.cls], it.orientation);
            circ_add(&h[it.cls], it.hue);
            outside += !(it.orientation >= 0 && it.orientation < 360 && it.hue >= 0 && it.hue < 360);
            for (int k = 0; k < 2; k++) {
                legsum += it.leg[k];
                lmin = fmin(lmin, it.leg[k]);
                lmax = fmax(lmax, it.leg[k]);
            }
            l0 += it.leg[0], l1 += it.leg[1], l00 += it.leg[0] * it.leg[0], l11 += it.leg[1] * it.leg[1];
            l01 += it.leg[0] * it.leg[1];
            if (it.hue_noise > 0) {
                noisy++;
                noisesum += it.hue_noise;
                outside += !(it.hue_noise >= 18 && it.hue_noise <= 54);
            }
        }
        CHECK(outside == 0);
        const double s = 30 * RAD, r1 = exp(-s * s / 2), r2 = exp(-2 * s * s);
        for (int c = 0; c < 4; c++) {
            double m = o[c].n;
            /* class frequency: binomial */
            CHECK_CLOSE(m / n, 0.25, 5 * sqrt(0.25 * 0.75 / n));
            /* mean direction: sd sqrt((1 - rho2) / (2 m rho1^2)) radians */
            double se_mean = sqrt((1 - r2) / (2 * m * r1 * r1)) / RAD;
            CHECK_CLOSE(circ_diff(circ_mean(&o[c]), p.orient[c & 1]), 0, 5 * se_mean);
            CHECK_CLOSE(circ_diff(circ_mean(&h[c]), p.hue[c >> 1]), 0, 5 * se_mean);
            /* circular sd sqrt(-2 ln R) is s for a wrapped normal; R has sd sqrt((1 + rho2 -
             * 2 rho1^2) / (2 m)), and d sd / d R = -1 / (R s) */
            double se_sd = sqrt((1 + r2 - 2 * r1 * r1) / (2 * m)) / (r1 * s) / RAD;
            CHECK_CLOSE(circ_sd(&o[c]), 30, 5 * se_sd);
            CHECK_CLOSE(circ_sd(&h[c]), 30, 5 * se_sd);
            if (split == SHAPES_TRAIN && c == 0)
                printf("class 0 of %.0f: orientation mean %.2f sd %.2f, hue mean %.2f sd %.2f (tolerances %.2f, %.2f)\n",
                       m, circ_mean(&o[c]), circ_sd(&o[c]), circ_mean(&h[c]), circ_sd(&h[c]), 5 * se_mean, 5 * se_sd);
        }
        /* legs uniform on [0.1, 0.98]: mean 0.54, sd 0.88 / sqrt(12); the two independent */
        CHECK_CLOSE(legsum / (2.0 * n), 0.54, 5 * 0.88 / sqrt(12.0 * 2 * n));
        CHECK(lmin >= 0.1f && lmax <= 0.98f);
        double corr = (l01 / n - l0 / n * l1 / n) / sqrt((l00 / n - l0 / n * l0 / n) * (l11 / n - l1 / n * l1 / n));
        CHECK_CLOSE(corr, 0, 5 / sqrt((double)n));
        if (split == SHAPES_TRAIN) { /* 15%, noise sd uniform on [18, 54]: mean 36, sd 36 / sqrt(12) */
            CHECK_CLOSE(noisy / (double)n, 0.15, 5 * sqrt(0.15 * 0.85 / n));
            CHECK_CLOSE(noisesum / noisy, 36, 5 * 36 / sqrt(12.0 * noisy));
        } else
            CHECK(noisy == 0);
    }
}

/* the same (seed, split, id) gives the same item and pixels; any other seed, split or id others */
static void test_reproducible(void)
{
    shapes_params p;
    shapes_defaults(&p, SHAPES_TRAIN);
    p.noisy_frac = 1; /* pixel noise everywhere: the pixel generator is checked too */
    static uint8_t a[3 * PLANE], b[3 * PLANE];
    shapes_item x, y;
    int same = 1, differ = 0;
    for (int i = 0; i < 50; i++) {
        shapes_sample(&p, 714, SHAPES_TRAIN, i, &x);
        shapes_sample(&p, 714, SHAPES_TRAIN, i, &y);
        shapes_render(&p, &x, 714, SHAPES_TRAIN, i, a);
        shapes_render(&p, &y, 714, SHAPES_TRAIN, i, b);
        same &= !memcmp(&x, &y, sizeof x) && !memcmp(a, b, sizeof a);
        shapes_sample(&p, 715, SHAPES_TRAIN, i, &y);
        differ += x.orientation != y.orientation;
        shapes_sample(&p, 714, SHAPES_TEST, i, &y);
        differ += x.orientation != y.orientation;
        shapes_sample(&p, 714, SHAPES_TRAIN, i + 1, &y);
        differ += x.orientation != y.orientation;
        /* the same coordinates, another seed: other pixel noise */
        shapes_render(&p, &x, 715, SHAPES_TRAIN, i, b);
        differ += memcmp(a, b, sizeof a) != 0;
    }
    CHECK(same);
    CHECK(differ == 200);
}

/* --hue-noise changes the hue of the pixels inside the L, by N(0, X^2) each, and nothing else;
 * --short-legs F multiplies the legs and keeps the rest: its L's pixels are the long L's pixels
 * that are still inside, with the same colours */
static void test_ood(void)
{
    shapes_params base, hn, sl;
    shapes_defaults(&base, SHAPES_TRAIN); /* with the training minority: hue-noise replaces it */
    hn = base, sl = base;
    hn.hue_noise = 40;
    sl.short_legs = 0.5;
    static uint8_t a[3 * PLANE], b[3 * PLANE];
    int fields = 1, mask = 1, subset = 1, colours = 1, shorter = 0;
    circ dev = {0};
    double dsum = 0;
    for (int i = 0; i < 200; i++) {
        shapes_item x, y, z;
        shapes_sample(&base, 714, SHAPES_TRAIN, i, &x);
        shapes_sample(&hn, 714, SHAPES_TRAIN, i, &y);
        shapes_sample(&sl, 714, SHAPES_TRAIN, i, &z);
        fields &= x.cls == y.cls && x.orientation == y.orientation && x.hue == y.hue && y.hue_noise == 40 &&
                  !memcmp(x.leg, y.leg, sizeof x.leg);
        fields &= x.cls == z.cls && x.orientation == z.orientation && x.hue == z.hue && x.hue_noise == z.hue_noise &&
                  z.leg[0] == (float)(0.5 * x.leg[0]) && z.leg[1] == (float)(0.5 * x.leg[1]);
        shapes_render(&base, &x, 714, SHAPES_TRAIN, i, a);
        shapes_render(&hn, &y, 714, SHAPES_TRAIN, i, b);
        for (int q = 0; q < PLANE; q++) {
            int in = mask_of(a, q / S, q % S);
            mask &= in == mask_of(b, q / S, q % S);
            if (in) {
                double d = circ_diff(rgb_hue(b + q, PLANE), x.hue);
                circ_add(&dev, d);
                dsum += d;
            }
        }
        shapes_render(&sl, &z, 714, SHAPES_TRAIN, i, b);
        for (int q = 0; q < PLANE; q++) {
            int in = mask_of(b, q / S, q % S);
            subset &= !in || mask_of(a, q / S, q % S);
            shorter += !in && mask_of(a, q / S, q % S);
            for (int k = 0; k < 3 && in; k++)
                colours &= a[k * PLANE + q] == b[k * PLANE + q];
        }
    }
    CHECK(fields);
    CHECK(mask);
    CHECK(subset);
    CHECK(colours);
    CHECK(shorter > 200 * 100);
    /* m pixel deviations N(0, 40^2) (8-bit colour adds about 0.1 degree of rounding): the mean
     * within 5 * 40 / sqrt(m), the sd within 5 * 40 / sqrt(2 m) + 0.5 */
    double m = dev.n;
    CHECK_CLOSE(dsum / m, 0, 5 * 40 / sqrt(m));
    double sd = sqrt(-2 * log(hypot(dev.c, dev.s) / m)) / RAD; /* wrapped: the circular sd */
    CHECK_CLOSE(sd, 40, 5 * 40 / sqrt(2 * m) + 0.5);
    printf("hue noise 40: circular sd of %.0f pixel hues about their image's hue %.2f\n", m, sd);
}

static void test_bayes(void)
{
    shapes_params p;
    shapes_defaults(&p, SHAPES_TRAIN);
    /* the grid of 2 x 2 factorises: accuracy = (1-D accuracy of orientation) x (that of hue) */
    const double sds[] = {30, 10, 60, 90};
    for (int i = 0; i < 4; i++) {
        p.sd = sds[i];
        CHECK_CLOSE(shapes_bayes(&p), pow(bayes_1d(90, p.sd), 2), 1e-9);
    }
    p.sd = 30;
    double paper = shapes_bayes(&p);
    CHECK_CLOSE(paper, pow(Phi(1.5) - Phi(-4.5), 2), 1e-6); /* the wrap adds < 1e-9 */
    printf("Bayes rate at the paper's parameters: %.6f (the paper: about 0.87)\n", paper);
    p.orient[0] = 30, p.orient[1] = 110, p.hue[0] = 0, p.hue[1] = 200;
    CHECK_CLOSE(shapes_bayes(&p), bayes_1d(80, 30) * bayes_1d(160, 30), 1e-9);
    /* the 1-D case: the orientations coincide and tell nothing, half the classes are guessed */
    p.orient[0] = p.orient[1] = 90, p.hue[0] = 90, p.hue[1] = 180;
    CHECK_CLOSE(shapes_bayes(&p), 0.5 * bayes_1d(90, 30), 1e-9);
    p.sd = 0;
    CHECK_CLOSE(shapes_bayes(&p), 0.5, 0);
    p.orient[1] = 180;
    CHECK_CLOSE(shapes_bayes(&p), 1, 0);

    /* Monte Carlo from the sampler itself: classify n draws by the largest class density; the
     * accuracy is within 5 sqrt(a (1 - a) / n) of the integral */
    shapes_defaults(&p, SHAPES_TEST);
    const int n = 200000;
    long right = 0;
    for (int i = 0; i < n; i++) {
        shapes_item it;
        shapes_sample(&p, 714, SHAPES_TEST, i, &it);
        int best = 0;
        double bv = -1;
        for (int c = 0; c < 4; c++) {
            double v = shapes_wrapped_normal(it.orientation, p.orient[c & 1], p.sd) *
                       shapes_wrapped_normal(it.hue, p.hue[c >> 1], p.sd);
            if (v > bv)
                bv = v, best = c;
        }
        right += best == it.cls;
    }
    CHECK_CLOSE(right / (double)n, paper, 5 * sqrt(paper * (1 - paper) / n));
    printf("Monte Carlo: %.4f +/- %.4f over %d draws\n", right / (double)n, sqrt(paper * (1 - paper) / n), n);
    /* the wrapped normal integrates to 1 on the circle, even when it wraps a lot */
    for (int i = 0; i < 3; i++) {
        double sum = 0, sd = (double[]){5, 60, 180}[i];
        for (int k = 0; k < 3600; k++)
            sum += shapes_wrapped_normal((k + 0.5) * 0.1, 17, sd) * 0.1;
        CHECK_CLOSE(sum, 1, 1e-9);
    }
}

static void test_check(void)
{
    shapes_params p;
    shapes_defaults(&p, SHAPES_TRAIN);
    CHECK(shapes_check(&p) == NULL);
    p.arm = 37; /* 8 + 37 = 45: the outer corner at 31.8 px from the centre */
    CHECK(shapes_check(&p) == NULL);
    p.arm = 38;
    CHECK(shapes_check(&p) != NULL);
    shapes_defaults(&p, SHAPES_TRAIN);
    p.leg_lo = 0.9, p.leg_hi = 0.5;
    CHECK(shapes_check(&p) != NULL);
    CHECK(shapes_split_parse("train") == SHAPES_TRAIN && shapes_split_parse("test") == SHAPES_TEST);
    CHECK(shapes_split_parse("val") == -1);
}

int main(void)
{
    test_colour();
    test_render_by_hand();
    test_render_centroid();
    test_sampling();
    test_reproducible();
    test_ood();
    test_bayes();
    test_check();
    return check_done("test_shapes");
}
