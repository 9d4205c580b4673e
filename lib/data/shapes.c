/* shapes.c: sampling, rendering and the Bayes rate of the L-shapes. See shapes.h. */
#include "shapes.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rng.h"
#include "util.h"

const char *shapes_split_name(int split) { return split == SHAPES_TEST ? "test" : "train"; }

int shapes_split_parse(const char *s)
{
    return !strcmp(s, "train") ? SHAPES_TRAIN : !strcmp(s, "test") ? SHAPES_TEST : -1;
}

void shapes_defaults(shapes_params *p, int split)
{
    *p = (shapes_params){
        .orient = {90, 180}, .hue = {90, 180}, .sd = 30,
        .leg_lo = 0.10, .leg_hi = 0.98, .leg_noise = SHAPES_LEGS_ALL,
        .noisy_frac = split == SHAPES_TRAIN ? 0.15 : 0, .noise_lo = 18, .noise_hi = 54,
        .hue_noise = -1, .short_legs = 1,
        .stroke = 8, .arm = 32, .saturation = 1, .value = 1,
    };
}

const char *shapes_check(const shapes_params *p)
{
    if (!(p->leg_lo <= p->leg_hi))
        return "the leg fraction range is empty (LO > HI)";
    if (!(p->noise_lo <= p->noise_hi))
        return "the hue noise range is empty (LO > HI)";
    if (!(p->stroke >= 1))
        return "the stroke must be at least 1 pixel";
    /* the farthest point from the pivot is the outer corner: half the diagonal of the L's square */
    if ((p->stroke + p->arm) * M_SQRT1_2 > SHAPES_SIDE / 2.0)
        return "the L does not fit the 64 x 64 image at every orientation: stroke + arm must be at most 45";
    return NULL;
}

double shapes_wrap(double deg)
{
    double w = fmod(deg, 360.0);
    if (w < 0)
        w += 360.0;
    return w >= 360.0 ? 0.0 : w; /* -1e-17 + 360 rounds to 360 */
}

/* the same, for a value about to be stored as float32 (which may round 359.99999 up to 360) */
static float wrapf(double deg)
{
    float f = (float)shapes_wrap(deg);
    return f >= 360.0f ? 0.0f : f;
}

static uint64_t tag(int what, int split)
{
    return what ? RNG_STREAM('l', 'p', 'x', split) : RNG_STREAM('l', 's', 'h', split);
}

void shapes_sample(const shapes_params *p, uint64_t seed, int split, int64_t id, shapes_item *it)
{
    rng r;
    rng_init(&r, seed, tag(0, split) ^ (uint64_t)id);
    /* every draw is made whatever the parameters: options never shift the stream */
    int c = (int)rng_below(&r, SHAPES_CLASSES);
    double zo = rng_normal(&r), zh = rng_normal(&r);
    double u0 = rng_uniform(&r), u1 = rng_uniform(&r);
    int noisy = rng_uniform(&r) < p->noisy_frac;
    double us = rng_uniform(&r);

    it->cls = c;
    it->orientation = wrapf(p->orient[c & 1] + p->sd * zo);
    it->hue = wrapf(p->hue[c >> 1] + p->sd * zh);
    int legs = p->leg_noise == SHAPES_LEGS_ALL || noisy;
    double l0 = legs ? p->leg_lo + (p->leg_hi - p->leg_lo) * u0 : 1.0;
    double l1 = legs ? p->leg_lo + (p->leg_hi - p->leg_lo) * u1 : 1.0;
    it->leg[0] = (float)(l0 * p->short_legs);
    it->leg[1] = (float)(l1 * p->short_legs);
    if (p->hue_noise >= 0)
        it->hue_noise = (float)p->hue_noise;
    else
        it->hue_noise = noisy ? (float)(p->noise_lo + (p->noise_hi - p->noise_lo) * us) : 0.0f;
}

/* the L of one item, ready for the per-pixel test */
typedef struct {
    double cos, sin;     /* of the orientation */
    double pivot;        /* the rotation centre, (pivot, pivot) in the L's own frame */
    double stroke;
    double stem, foot;   /* leg lengths from the outer corner, pixels */
} geometry;

static geometry geometry_of(const shapes_params *p, const shapes_item *it)
{
    double th = (double)it->orientation * (M_PI / 180.0);
    return (geometry){
        .cos = cos(th), .sin = sin(th), .pivot = (p->stroke + p->arm) / 2, .stroke = p->stroke,
        .stem = p->stroke + (double)it->leg[0] * p->arm, .foot = p->stroke + (double)it->leg[1] * p->arm,
    };
}

/* The L's own frame: outer corner at the origin, x to the right, y up; stem [0, stroke) x
 * [0, stem), foot [0, foot) x [0, stroke). A pixel centre (x right, y up from the image centre)
 * is rotated back by the orientation and moved by the pivot into that frame. */
static int geometry_inside(const geometry *g, int row, int col)
{
    double x = col + 0.5 - SHAPES_SIDE / 2.0, y = SHAPES_SIDE / 2.0 - (row + 0.5);
    double qx = g->cos * x + g->sin * y + g->pivot, qy = -g->sin * x + g->cos * y + g->pivot;
    return qx >= 0 && qy >= 0 && ((qx < g->stroke && qy < g->stem) || (qy < g->stroke && qx < g->foot));
}

int shapes_inside(const shapes_params *p, const shapes_item *it, int row, int col)
{
    geometry g = geometry_of(p, it);
    return geometry_inside(&g, row, col);
}

void shapes_hsv_rgb(double h, double s, double v, uint8_t rgb[3])
{
    double hp = shapes_wrap(h) / 60.0, c = v * s;
    double x = c * (1 - fabs(fmod(hp, 2.0) - 1)), m = v - c, r, g, b;
    switch ((int)hp) {
    case 0: r = c, g = x, b = 0; break;
    case 1: r = x, g = c, b = 0; break;
    case 2: r = 0, g = c, b = x; break;
    case 3: r = 0, g = x, b = c; break;
    case 4: r = x, g = 0, b = c; break;
    default: r = c, g = 0, b = x; break;
    }
    double ch[3] = {r + m, g + m, b + m};
    for (int k = 0; k < 3; k++) {
        double q = ch[k] * 255.0 + 0.5;
        rgb[k] = (uint8_t)(q < 0 ? 0 : q > 255 ? 255 : q);
    }
}

void shapes_render(const shapes_params *p, const shapes_item *it, uint64_t seed, int split, int64_t id,
                   uint8_t *image)
{
    enum { S = SHAPES_SIDE, PLANE = SHAPES_SIDE * SHAPES_SIDE };
    memset(image, 0, (size_t)SHAPES_CHANNELS * PLANE);
    geometry g = geometry_of(p, it);
    uint8_t rgb[3];
    shapes_hsv_rgb(it->hue, p->saturation, p->value, rgb);
    int noisy = it->hue_noise > 0;
    rng r;
    if (noisy) /* one normal per pixel, inside the L or not: a pixel's noise does not depend on the legs */
        rng_init(&r, seed, tag(1, split) ^ (uint64_t)id);
    for (int row = 0; row < S; row++)
        for (int col = 0; col < S; col++) {
            double z = noisy ? rng_normal(&r) : 0;
            if (!geometry_inside(&g, row, col))
                continue;
            if (noisy)
                shapes_hsv_rgb((double)it->hue + (double)it->hue_noise * z, p->saturation, p->value, rgb);
            for (int k = 0; k < 3; k++)
                image[k * PLANE + row * S + col] = rgb[k];
        }
}

double shapes_wrapped_normal(double x, double mu, double sd)
{
    double d = shapes_wrap(x - mu);
    if (d >= 180.0)
        d -= 360.0;
    int K = (int)ceil(8.0 * sd / 360.0) + 1; /* terms beyond 8 sd are below 1e-14 */
    double s = 0;
    for (int k = -K; k <= K; k++) {
        double t = (d + 360.0 * k) / sd;
        s += exp(-0.5 * t * t);
    }
    return s / (sd * sqrt(2.0 * M_PI));
}

/* The midpoint rule on a grid x grid lattice. The class densities are products of one density
 * per circle: tabulate each at the cell midpoints, then take the largest product at every point
 * of the lattice. The integrand is smooth but for kinks where the most probable class changes,
 * so the error falls as grid^-2 (1.7e-7 at 3600 for the defaults). */
static double bayes_midpoint(const shapes_params *p, int grid)
{
    double h = 360.0 / grid;
    double *po = emalloc((size_t)SHAPES_CLASSES * grid * sizeof *po);
    double *ph = emalloc((size_t)SHAPES_CLASSES * grid * sizeof *ph);
    for (int c = 0; c < SHAPES_CLASSES; c++)
        for (int i = 0; i < grid; i++) {
            double x = (i + 0.5) * h;
            po[c * grid + i] = shapes_wrapped_normal(x, p->orient[c & 1], p->sd);
            ph[c * grid + i] = shapes_wrapped_normal(x, p->hue[c >> 1], p->sd);
        }
    double total = 0;
    for (int i = 0; i < grid; i++) {
        double row = 0;
        for (int j = 0; j < grid; j++) {
            double best = 0;
            for (int c = 0; c < SHAPES_CLASSES; c++) {
                double v = po[c * grid + i] * ph[c * grid + j];
                best = v > best ? v : best;
            }
            row += best;
        }
        total += row;
    }
    free(po);
    free(ph);
    return total * h * h / SHAPES_CLASSES;
}

double shapes_bayes(const shapes_params *p)
{
    if (p->sd <= 0) { /* point masses: classes on the same point tie, the others are certain */
        int distinct = 0;
        for (int c = 0; c < SHAPES_CLASSES; c++) {
            int first = 1;
            for (int d = 0; d < c; d++)
                first &= !(p->orient[d & 1] == p->orient[c & 1] && p->hue[d >> 1] == p->hue[c >> 1]);
            distinct += first;
        }
        return distinct / (double)SHAPES_CLASSES;
    }
    /* Richardson extrapolation of the h^2 error term from the grids of 1800 and 3600: with
     * centres on whole degrees the kinks fall on cell edges and what is left is below 1e-12 */
    return (4 * bayes_midpoint(p, SHAPES_BAYES_GRID) - bayes_midpoint(p, SHAPES_BAYES_GRID / 2)) / 3;
}
