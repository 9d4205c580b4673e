/* digits: N-digit MNIST (HIB paper, appendix A; ../shared/papers/NOTES.md): which numbers are
 * seen (training) classes, how many images of which classes a split holds, which MNIST digits
 * make each composite, and the occlusion patches of `occlude`.
 *
 * Conventions. A class is the number shown, 0 .. 10^N - 1; position 0 is the leftmost (most
 * significant) digit, in the image cell of columns 0..27. All randomness comes from rng_init
 * with a seed and a per-unit stream tag, so the same seeds give the same composites.
 *
 * Ownership: digits_plan_make allocates the plan's arrays, digits_plan_free frees them; every
 * other function writes into memory the caller owns.
 *
 *   digits_plan p;
 *   const char *err = digits_plan_make(&p, 2, DIGITS_TRAIN, 0, 0, 714);   // 70 x 1428
 *   if (err) usage_die("%s", err);
 *   int32_t *src = emalloc(digits_plan_total(&p) * p.N * sizeof *src);
 *   if ((err = digits_draw_sources(&p, mnist.labels, mnist.n, 714, src))) die("%s", err);
 *   digits_compose(image, 2, cells);                // cells[k]: 784 bytes, MNIST digit src[...]
 *   digits_plan_free(&p);
 */
#ifndef HEDGE_DIGITS_H
#define HEDGE_DIGITS_H
#include <stddef.h>
#include <stdint.h>

#include "rng.h"

#define DIGITS_MAXN 4
#define DIGITS_SIDE 28                       /* an MNIST digit is 28 x 28 */
#define DIGITS_CELL (DIGITS_SIDE * DIGITS_SIDE)
/* the public generator's defaults */
#define DIGITS_SEED 714
#define DIGITS_TRAIN_TOTAL 100000
#define DIGITS_TEST_TOTAL 10000
#define DIGITS_MIN_PER_CLASS 100

/* DIGITS_VAL: seen classes, like test-seen, but made of MNIST training digits held out from
 * training (mkdigits --holdout): a validation set for choosing recipes without the test set */
enum { DIGITS_TRAIN, DIGITS_TEST_SEEN, DIGITS_TEST_UNSEEN, DIGITS_VAL };
/* "train", "test-seen", "test-unseen", "val"; parse returns -1 for anything else */
const char *digits_split_name(int split);
int digits_split_parse(const char *s);

/* 10^N */
int64_t digits_nclasses(int N);
/* the digit at position k of class c (position 0 = leftmost) */
int digits_digit(int32_t c, int N, int k);

/* The class split: 0 .. 10^N-1 shuffled with class_seed; the first floor(0.7 * 10^N) of that order
 * are the seen classes, the rest unseen. order (10^N entries) receives the shuffled order;
 * returns the number of seen classes. */
int64_t digits_class_order(int N, uint64_t class_seed, int32_t *order);

typedef struct {
    int N, split;
    int64_t per_class;  /* images of each class */
    int64_t nclasses;   /* classes in the split's stream */
    int32_t *classes;   /* [nclasses], ascending */
    int64_t nseen;      /* seen (training) classes: 70% of 10^N */
    int32_t *seen;      /* [nseen], ascending */
} digits_plan;

/* How many images of which classes. total <= 0: the default (100,000 for train, 10,000 for the
 * test splits); per_class <= 0: max(100, floor(total / n)) where n is the number of classes of
 * the split. When per_class * n > total, only the first floor(total / per_class) classes of the
 * split in the class-seed order are used: a prefix, so smaller samples nest inside larger ones
 * (the 100 test-seen classes of 3-digit MNIST are among the train classes even when train is a
 * sample too). With per_class given and total not, every class of the split is used.
 * Returns NULL, or a message (for usage_die) when the numbers leave no class to make. */
const char *digits_plan_make(digits_plan *p, int N, int split, int64_t total, int64_t per_class,
                             uint64_t class_seed);
void digits_plan_free(digits_plan *p);
static inline int64_t digits_plan_total(const digits_plan *p) { return p->nclasses * p->per_class; }

/* Source digits of every composite, in class order: src[(c * per_class + j) * N + k] is the index
 * (into the MNIST split with labels[0..nlabels)) of the digit at position k of the j-th image of
 * the plan's c-th class. Each (class, position) draws from its own seeded permutation of the
 * digits of the needed label, without replacement; when those run out (the npm data has only
 * ~143 test digits per label) it goes on with a fresh permutation. Returns NULL, or a message
 * (for die) when a needed label has no digit at all. */
const char *digits_draw_sources(const digits_plan *p, const uint8_t *labels, int64_t nlabels,
                                uint64_t seed, int32_t *src);

/* image [28, 28N] from N digits of 784 bytes each, side by side, unshifted */
void digits_compose(uint8_t *image, int N, const uint8_t *const *cells);

/* --- the public generator's standard data sets (github.com/google/n-digit-mnist): the MNIST
 * image ids of every composite, as it publishes them in standard_datasets/
 * dataset_mnist_<N>_<instance|number>_<train|test|test_seen|test_unseen>.npz. That file is a
 * numpy .npz (a zip archive of .npy arrays, stored or deflated) holding
 *   image_ids.npy          integer [K, S, N]: the MNIST index of the digit at position n (0 =
 *                          leftmost) of the s-th composite of the k-th class; MNIST train for
 *                          the train split, t10k for the others
 *   chosen_numbers.npy     integer [K] (optional here): the class (the number) of row k
 *   sample_per_number.npy  integer [] (optional here): S
 * A bare .npy of image ids ([K, S, N], or [M, N]: one composite per row) is accepted too; a
 * class is then read off the MNIST labels of its digits. Composites go out in file (C) order:
 * row k's S composites, then row k + 1's. Integer dtypes only ('<i8' as published, any of
 * i1..i8, u1..u8 in either byte order), C order; anything else is refused with a message.
 *
 *   digits_ids d;
 *   const char *err = digits_ids_load(&d, "dataset_mnist_2_number_test_seen.npz");
 *   if (!err) err = digits_ids_check(&d, mnist.labels, mnist.n, "t10k", cls);  // cls: [d.n]
 *   digit k of composite i: MNIST image d.ids[i * d.N + k]
 *   digits_ids_free(&d);
 */
typedef struct {
    int N;              /* digits per composite: the last dimension of image_ids */
    int ndim;           /* 3: image_ids is [K, S, N]; 2: [M, N] */
    int64_t n;          /* composites (K S, or M) */
    int64_t rows, per_row; /* K and S of [K, S, N]; M and 1 of [M, N] */
    int64_t *ids;       /* [n * N], owned */
    int64_t *chosen;    /* [rows]: chosen_numbers, owned; NULL when the file has none */
} digits_ids;

/* Parses an .npz or .npy file held in memory (buf[0..len)). Returns NULL, or a message; on
 * error d holds nothing to free. */
const char *digits_ids_parse(digits_ids *d, const uint8_t *buf, size_t len);
/* Reads and parses the file at path; a message names the file. */
const char *digits_ids_load(digits_ids *d, const char *path);
void digits_ids_free(digits_ids *d);
/* Checks every id against the MNIST split it indexes (labels[0..nlabels), named `mnist` in
 * messages) and chosen_numbers against the labels of its digits, and writes each composite's
 * class into cls[0..d->n). Returns NULL, or a message naming the first bad entry. */
const char *digits_ids_check(const digits_ids *d, const uint8_t *labels, int64_t nlabels,
                             const char *mnist, int32_t *cls);
/* The split a file name of the generator's convention names ("..._train.npz" -> "train",
 * "_test" -> "test", "_test_seen" -> "test-seen", "_test_unseen" -> "test-unseen"; .npz or
 * .npy), or NULL. */
const char *digits_ids_split_of_name(const char *path);
/* The train file of the same data set ("..._test_seen.npz" -> "..._train.npz") in out[size];
 * returns 0 when path is not a test file of that convention (or out is too small). */
int digits_ids_train_name(const char *path, char *out, size_t size);

/* --- occlusion: per digit, with probability p, a black patch inside the digit's cell. Two readings
 * of the papers (../shared/papers/NOTES.md):
 *   DIGITS_SQUARE  HIB appendix A: a square of side L ~ U(0, 28) at top-left (x, y), x and y
 *                  ~ U(0, 28 - L). Discretised: L uniform on the integers 0..28 (29 values),
 *                  then x, y uniform on 0..28-L; w = h = L.
 *   DIGITS_RECT    SPE appendix E ("identical to the scheme used in Oh et al. (2019)"): width
 *                  w and height h independently uniform on 0..28, then x uniform on 0..28-w and
 *                  y on 0..28-h.
 * A patch with w or h = 0 blacks out no pixel but the digit still counts as occluded. x is the
 * column, y the row, relative to the cell. */
enum { DIGITS_SQUARE, DIGITS_RECT };
typedef struct {
    int occluded;
    int x, y, w, h;   /* 0 0 0 0 when not occluded */
} digits_patch;

/* "square", "rect"; parse returns -1 for anything else */
const char *digits_shape_name(int shape);
int digits_shape_parse(const char *s);

/* The patches of one image of N digits. The geometry is drawn for every digit whatever p, so
 * the same generator gives the same patches for p = 0.2 and p = 1 (only the flags differ).
 * Draws per digit: u (the flag), then square: L, x, y; rect: w, h, x, y. */
void digits_occlusion_draw(rng *r, double p, int shape, int N, digits_patch *patch);
/* zeroes patch's rectangle in cell k of image [28, 28N] */
void digits_occlude(uint8_t *image, int N, int k, const digits_patch *patch);
/* The generator of one image of a batch stream (occlusion at every use): image `slot` of record
 * `record` (the record's position in the stream, from 0), so that the same batches give the same
 * patches and a resumed training, which skips the records it has seen, sees the same ones. */
void digits_occlusion_rng(rng *r, uint64_t seed, uint64_t record, uint64_t slot);
/* The generator of an unbatched image, from its id: twins of one composite get the same patches. */
void digits_occlusion_rng_id(rng *r, uint64_t seed, int64_t id);

#endif
