/* shapes: the synthetic colour-orientation L-shapes of the SPE paper (Scott et al. 2019,
 * section 4.1 and appendix A.2): the class-conditional sampling of the generative coordinates,
 * the rendering of one 64 x 64 RGB image, and the Bayes-optimal accuracy of the 4-class problem.
 *
 * The generative model (what appendix A.2 says, then what it leaves open, chosen here):
 *   - four classes, a 2 x 2 grid: orientation centre orient[c & 1], hue centre hue[c >> 1], the
 *     paper's 90 and 180 degrees on both; class 0 = (90, 90), 1 = (180, 90), 2 = (90, 180),
 *     3 = (180, 180) as (orientation, hue). Equal priors, the class of each image drawn i.i.d.
 *   - orientation and hue: centre + sd * N(0, 1), sd 30 degrees on both (isotropic), wrapped
 *     into [0, 360): a wrapped normal on each circle, independent given the class.
 *   - colour: HSV with hue as drawn, saturation and value constant (1 and 1 here; the paper
 *     gives no values), on a black background.
 *   - leg-length noise: each leg's length "chosen uniformly between 10% and 98% of its original
 *     length"; here each leg independently, for every image (leg_noise ALL; NOISY: only the
 *     noisy minority, the others full length). The fraction scales the arm, the part of a leg
 *     beyond the stroke x stroke corner square the two legs share, so a leg never vanishes.
 *   - training noise: a fraction (15% for train, 0 for test) of the images get Gaussian noise on
 *     the hue of every pixel inside the shape, its sd uniform on [18, 54] degrees per image.
 *   - geometry: stroke 8 px, arm 32 px (legs 40 px long from the outer corner). Orientation 0 is
 *     the upright letter L (stem up, foot to the right); theta rotates it counterclockwise as
 *     displayed, about the centre of the full-length L's bounding square, which sits at the image
 *     centre. A pixel is inside when its centre is (no anti-aliasing).
 * The two out-of-distribution variants of the paper's Figure 3: hue_noise >= 0 gives every
 * image per-pixel hue noise of that sd (instead of the training noise); short_legs multiplies
 * both leg fractions.
 *
 * Randomness: the coordinates of image `id` come from rng_init(seed, tag(split) ^ id), its pixel
 * noise from a second generator of its own; a fixed number of draws per image whatever the
 * options, so an option changes only what it is about (the same orientations, hues and classes
 * with and without --hue-noise), and image id does not depend on how many are made.
 * Angles are in degrees throughout.
 *
 * Ownership: nothing here allocates except shapes_bayes (internally, freed before it returns).
 *
 *   shapes_params p;
 *   shapes_defaults(&p, SHAPES_TRAIN);
 *   shapes_item it;
 *   shapes_sample(&p, 714, SHAPES_TRAIN, id, &it);
 *   uint8_t image[SHAPES_CHANNELS * SHAPES_SIDE * SHAPES_SIDE];       // [3][64][64], C x H x W
 *   shapes_render(&p, &it, 714, SHAPES_TRAIN, id, image);
 *   double acc = shapes_bayes(&p);                                       // 0.870842
 */
#ifndef HEDGE_SHAPES_H
#define HEDGE_SHAPES_H
#include <stdint.h>

#define SHAPES_SIDE 64
#define SHAPES_CHANNELS 3
#define SHAPES_CLASSES 4
#define SHAPES_SEED 714
#define SHAPES_BAYES_GRID 3600 /* cells per circle of shapes_bayes's finer lattice: 0.1 degree */

enum { SHAPES_TRAIN, SHAPES_TEST };
/* "train", "test"; parse returns -1 for anything else */
const char *shapes_split_name(int split);
int shapes_split_parse(const char *s);

enum { SHAPES_LEGS_ALL, SHAPES_LEGS_NOISY };

typedef struct {
    double orient[2], hue[2];     /* class centres, degrees: orientation orient[c & 1], hue hue[c >> 1] */
    double sd;                    /* of orientation and of hue, degrees (0: every image at its centre) */
    double leg_lo, leg_hi;        /* leg fraction uniform on [leg_lo, leg_hi] */
    int leg_noise;                /* SHAPES_LEGS_ALL or SHAPES_LEGS_NOISY */
    double noisy_frac;            /* fraction of images with per-pixel hue noise */
    double noise_lo, noise_hi;    /* its sd, uniform on [noise_lo, noise_hi] degrees */
    double hue_noise;             /* < 0: the training noise above; >= 0: every image, this sd */
    double short_legs;            /* leg fractions multiplied by this (1: unchanged) */
    double stroke, arm;           /* pixels */
    double saturation, value;     /* HSV, constant */
} shapes_params;

/* the paper's values (appendix A.2) and the choices above; noisy_frac 0.15 for train, 0 for test */
void shapes_defaults(shapes_params *p, int split);
/* NULL, or what is wrong with p (for usage_die): the L must fit the image at every orientation */
const char *shapes_check(const shapes_params *p);

typedef struct {
    int32_t cls;                  /* 0..3 */
    float orientation, hue;       /* degrees, [0, 360) */
    float leg[2];                 /* stem, foot: fractions of the arm, short_legs applied */
    float hue_noise;              /* per-pixel hue noise sd of this image, degrees; 0: none */
} shapes_item;

/* the generative coordinates of image id of a split */
void shapes_sample(const shapes_params *p, uint64_t seed, int split, int64_t id, shapes_item *it);
/* 1 if the centre of pixel (row, col) lies inside the L of it (rows from the top) */
int shapes_inside(const shapes_params *p, const shapes_item *it, int row, int col);
/* image [3][64][64] (channels first: R, G, B planes), 0 outside the L */
void shapes_render(const shapes_params *p, const shapes_item *it, uint64_t seed, int split, int64_t id,
                   uint8_t *image);
/* HSV (h in degrees, any real; s, v in [0, 1]) to 8-bit RGB, rounded */
void shapes_hsv_rgb(double h, double s, double v, uint8_t rgb[3]);
/* deg wrapped into [0, 360) */
double shapes_wrap(double deg);
/* the density of the normal N(mu, sd^2) wrapped onto the circle of 360 degrees, at x (per degree) */
double shapes_wrapped_normal(double x, double mu, double sd);
/* The Bayes-optimal accuracy of telling the four classes from (orientation, hue), equal priors:
 * the integral over the torus of max_c p(c) p(o | c) p(h | c), by the midpoint rule on lattices
 * of 0.1 and 0.2 degrees combined by Richardson extrapolation (within 1e-12 of the closed form
 * for centres on whole degrees and sd of 2 to 90 degrees; about 0.1 s). sd = 0: point masses,
 * the share of classes on distinct points. */
double shapes_bayes(const shapes_params *p);

#endif
