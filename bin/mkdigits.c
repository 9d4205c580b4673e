/* mkdigits: N-digit MNIST (HIB paper, appendix A) as an `images` stream (formats/stream.md).
 *
 * The 10^N numbers are shuffled with --class-seed; the first 70% are the seen (train) classes,
 * the rest unseen. A split holds per_class images of each of its classes (see digits.h for the
 * counts and the class sample). Train composites use MNIST train digits only, the test splits
 * MNIST test digits only. Each position of each class draws its digits without replacement from
 * a seeded permutation of the digits of that label, starting a fresh permutation when they run
 * out (the default npm data has ~143 test digits per label, fewer than the 333 images of a
 * 2-digit test-unseen class). The composites are written in a seeded random order; id is the
 * position in the stream.
 *
 * --image-ids FILE instead rebuilds the composites listed by the public generator's standard
 * data sets (google/n-digit-mnist, the .npz files of standard_datasets; the format in
 * digits.h), in the file's order, with no randomness at all.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "digits.h"
#include "idx.h"
#include "rng.h"
#include "stream.h"
#include "util.h"

#define DEFAULT_MNIST HEDGE_DATA_DIR "/mnist"
#define MAX_IMAGES 20000000L

static const char *usage =
    "usage: mkdigits [-N DIGITS] [-s SPLIT] [-S SEED] [--class-seed SEED] [-n TOTAL]\n"
    "                [--per-class K] [--holdout K] [--mnist DIR] [--dataset-name NAME] [--progress]\n"
    "                > images\n"
    "       mkdigits --image-ids FILE [-N DIGITS] [-s SPLIT] [--seen-from FILE] [--mnist DIR] ...\n"
    "  N-digit MNIST composites as an images stream.\n";

typedef struct {
    int N, split;
    int N_given;
    uint64_t seed, class_seed;
    long total, per_class;      /* 0: default */
    long holdout;               /* MNIST training digits held out of train, for val */
    const char *mnist, *dataset;
    const char *ids, *seen_from; /* --image-ids, --seen-from */
    const char *ids_split;      /* with --image-ids: train, test, test-seen or test-unseen */
    const char *drawing_opt;    /* the last option given that only the drawn composites take */
} options;

static options parse_options(int argc, char **argv)
{
    const char *env = getenv("HEDGE_MNIST");
    options o = {
        .N = 2, .split = DIGITS_TRAIN, .seed = DIGITS_SEED, .class_seed = DIGITS_SEED,
        .total = 0, .per_class = 0, .mnist = env && *env ? env : DEFAULT_MNIST, .dataset = NULL,
    };
    enum { OPT_CLASS_SEED = 256, OPT_PER_CLASS, OPT_MNIST, OPT_DATASET, OPT_PROGRESS, OPT_HOLDOUT,
           OPT_IDS, OPT_SEEN_FROM };
    static const struct option longs[] = {
        {"class-seed", required_argument, 0, OPT_CLASS_SEED},
        {"per-class", required_argument, 0, OPT_PER_CLASS},
        {"mnist", required_argument, 0, OPT_MNIST},
        {"dataset-name", required_argument, 0, OPT_DATASET},
        {"progress", no_argument, 0, OPT_PROGRESS},
        {"holdout", required_argument, 0, OPT_HOLDOUT},
        {"image-ids", required_argument, 0, OPT_IDS},
        {"seen-from", required_argument, 0, OPT_SEEN_FROM},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    const char *split = NULL;
    int c;
    while ((c = getopt_long(argc, argv, "N:s:S:n:h", longs, NULL)) != -1) {
        switch (c) {
        case 'N': o.N = (int)parse_long("-N", optarg, 1, DIGITS_MAXN); o.N_given = 1; break;
        case 's': split = optarg; break;
        case 'S': o.seed = parse_u64("-S", optarg); o.drawing_opt = "-S"; break;
        case OPT_CLASS_SEED:
            o.class_seed = parse_u64("--class-seed", optarg);
            o.drawing_opt = "--class-seed";
            break;
        case 'n': o.total = parse_long("-n", optarg, 1, MAX_IMAGES); o.drawing_opt = "-n"; break;
        case OPT_PER_CLASS:
            o.per_class = parse_long("--per-class", optarg, 1, MAX_IMAGES);
            o.drawing_opt = "--per-class";
            break;
        case OPT_MNIST: o.mnist = optarg; break;
        case OPT_DATASET: o.dataset = optarg; break;
        case OPT_PROGRESS: progress_force = 1; break;
        case OPT_HOLDOUT:
            o.holdout = parse_long("--holdout", optarg, 1, MAX_IMAGES);
            o.drawing_opt = "--holdout";
            break;
        case OPT_IDS: o.ids = optarg; break;
        case OPT_SEEN_FROM: o.seen_from = optarg; break;
        case 'h': usage_help();
        default: usage_bad_option(argv);
        }
    }
    if (optind < argc)
        usage_die("unexpected argument '%s'", argv[optind]);
    if (!o.dataset)
        o.dataset = strcmp(o.mnist, DEFAULT_MNIST) ? o.mnist : "mnist";
    if (o.ids) {
        if (o.drawing_opt)
            usage_die("%s does not go with --image-ids: the file fixes every composite", o.drawing_opt);
        o.ids_split = split ? split : digits_ids_split_of_name(o.ids);
        if (!o.ids_split)
            usage_die("--image-ids %s: the file name does not end in _train, _test, _test_seen or "
                      "_test_unseen (.npz/.npy): give -s train, test, test-seen or test-unseen", o.ids);
        if (strcmp(o.ids_split, "train") && strcmp(o.ids_split, "test") &&
            strcmp(o.ids_split, "test-seen") && strcmp(o.ids_split, "test-unseen"))
            usage_die("-s: '%s' is not train, test, test-seen or test-unseen (with --image-ids)",
                      o.ids_split);
        return o;
    }
    if (o.seen_from)
        usage_die("--seen-from goes with --image-ids");
    if (split && (o.split = digits_split_parse(split)) < 0)
        usage_die("-s: '%s' is not train, test-seen, test-unseen or val", split);
    if (o.split == DIGITS_VAL && !o.holdout)
        usage_die("-s val is made of held-out training digits: give --holdout K");
    if (o.holdout && (o.split == DIGITS_TEST_SEEN || o.split == DIGITS_TEST_UNSEEN))
        usage_die("--holdout splits the MNIST training digits: it goes with -s train or val");
    return o;
}

static void set_classes(stream_header *h, const char *key, const int32_t *c, int64_t n)
{
    tensor *t = tensor_view(DT_I32, 1, &n, (void *)c);
    header_set_tensor(h, key, t);
    tensor_free(t);
}

static void need_mnist_dir(const char *dir)
{
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        usage_die("no MNIST directory %s (give --mnist DIR or set HEDGE_MNIST; `make data` makes the "
                  "default, `hedge fetch-mnist` the installed hedge's)", dir);
}

/* the header both ways share: provenance, the fields, and meta up to `dataset` */
static stream_header *images_header(int argc, char **argv, const uint64_t *seed, int N,
                                    const char *split, const char *dataset)
{
    stream_header *h = header_new("images", 0);
    header_provenance(h, argc, argv);
    if (seed)
        header_set_seed(h, *seed);
    /* scalars get a non-NULL shape too: header_add_field memcpy's ndim entries from it */
    int64_t ishape[2] = {DIGITS_SIDE, DIGITS_SIDE * N}, nshape[1] = {N}, scalar[1] = {0};
    header_add_field(h, "image", DT_U8, 2, ishape);
    header_add_field(h, "class", DT_I32, 0, scalar);
    header_add_field(h, "digits", DT_U8, 1, nshape);
    header_add_field(h, "source", DT_I32, 1, nshape);
    header_add_field(h, "id", DT_I64, 0, scalar);
    header_set_int(h, "digits", N);
    header_set_int(h, "height", DIGITS_SIDE);
    header_set_int(h, "width", DIGITS_SIDE * N);
    header_set_str(h, "split", split);
    header_set_str(h, "dataset", dataset);
    return h;
}

static stream_writer *stdout_writer(const stream_header *h)
{
    static char obuf[1 << 20];
    setvbuf(stdout, obuf, _IOFBF, sizeof obuf);
    __fsetlocking(stdout, FSETLOCKING_BYCALLER); /* one thread: the writer's many small fwrites skip the lock */
    return stream_create(stdout, h);
}

/* one composite record: the MNIST digits source[0..N) side by side (image: scratch of 28 x 28N) */
static void write_composite(stream_writer *w, const idx_set *mn, int N, const int32_t *source, int32_t cls,
                            int64_t id, uint8_t *image)
{
    uint8_t digits[DIGITS_MAXN];
    int32_t src[DIGITS_MAXN];
    const uint8_t *cells[DIGITS_MAXN];
    for (int k = 0; k < N; k++) {
        src[k] = source[k];
        digits[k] = mn->labels[src[k]];
        cells[k] = mn->images + (int64_t)src[k] * DIGITS_CELL;
    }
    digits_compose(image, N, cells);
    void *data[] = {image, &cls, digits, src, &id};
    stream_write_data(w, data, 0);
}

/* the distinct values of c[0..n), ascending, in a new array of *m */
static int32_t *distinct(const int32_t *c, int64_t n, int64_t *m)
{
    int64_t n10 = digits_nclasses(DIGITS_MAXN);
    uint8_t *seen = ecalloc(n10, 1);
    for (int64_t i = 0; i < n; i++)
        seen[c[i]] = 1;
    int32_t *out = emalloc(n10 * sizeof *out);
    *m = 0;
    for (int64_t v = 0; v < n10; v++)
        if (seen[v])
            out[(*m)++] = (int32_t)v;
    free(seen);
    return out;
}

/* a checked ids file of MNIST split `mnist` (train or test): its composites' classes in cls */
static void load_ids(digits_ids *d, const char *path, int N, const uint8_t *labels, int64_t nlabels,
                     const char *mnist, int32_t **cls)
{
    const char *err = digits_ids_load(d, path);
    if (err)
        die("%s", err);
    if (N && d->N != N)
        die("%s holds %d-digit composites, not %d-digit ones", path, d->N, N);
    if (d->n > MAX_IMAGES)
        die("%s: %lld composites are more than %ld", path, (long long)d->n, MAX_IMAGES);
    *cls = emalloc(d->n * sizeof **cls);
    if ((err = digits_ids_check(d, labels, nlabels, mnist, *cls)))
        die("%s: %s", path, err);
}

/* the classes of the train ids file `path` (checked against the MNIST training labels) */
static int32_t *train_classes(const char *path, const char *mnist_dir, int N, int64_t *m)
{
    char lp[4096];
    snprintf(lp, sizeof lp, "%s/train-labels-idx1-ubyte", mnist_dir);
    int ndim;
    int64_t dims[4];
    uint8_t *labels = idx_read(lp, &ndim, dims);
    if (ndim != 1)
        die("%s: expected a 1-dimensional idx file of labels, got %d dimensions", lp, ndim);
    for (int64_t i = 0; i < dims[0]; i++)
        if (labels[i] > 9)
            die("%s: label %d at %lld is not in 0..9", lp, labels[i], (long long)i);
    digits_ids d;
    int32_t *cls;
    load_ids(&d, path, N, labels, dims[0], "train", &cls);
    int32_t *out = distinct(cls, d.n, m);
    free(cls);
    free(labels);
    digits_ids_free(&d);
    return out;
}

/* --image-ids: the composites of the file, in its order, as the stream */
static int from_ids(const options *o, int argc, char **argv)
{
    need_mnist_dir(o->mnist);
    const int train = !strcmp(o->ids_split, "train");
    idx_set mn;
    idx_load_split(&mn, o->mnist, train ? "train" : "test");
    digits_ids d;
    int32_t *cls;
    load_ids(&d, o->ids, o->N_given ? o->N : 0, mn.labels, mn.n, train ? "train" : "t10k", &cls);
    const int N = d.N, W = DIGITS_SIDE * N;
    int64_t nclasses, nseen = 0;
    int32_t *classes = distinct(cls, d.n, &nclasses), *seen = NULL;
    /* the seen classes: the train file's */
    char sibling[4096];
    const char *seen_from = o->seen_from;
    struct stat st;
    if (!seen_from && !train && digits_ids_train_name(o->ids, sibling, sizeof sibling) &&
        stat(sibling, &st) == 0 && S_ISREG(st.st_mode))
        seen_from = sibling;
    if (train && !o->seen_from) {
        seen = emalloc(nclasses * sizeof *seen);
        memcpy(seen, classes, nclasses * sizeof *seen);
        nseen = nclasses;
    } else if (seen_from) {
        seen = train_classes(seen_from, o->mnist, N, &nseen);
    }

    stream_header *h = images_header(argc, argv, NULL, N, o->ids_split, o->dataset);
    header_set_str(h, "image_ids", o->ids);
    set_classes(h, "classes", classes, nclasses);
    if (seen) {
        set_classes(h, "seen_classes", seen, nseen);
        if (seen_from)
            header_set_str(h, "seen_from", seen_from);
    }
    stream_writer *w = stdout_writer(h);
    uint8_t *image = emalloc(DIGITS_SIDE * W);
    int32_t source[DIGITS_MAXN];
    progress pr;
    progress_start(&pr, "images", d.n);
    for (int64_t id = 0; id < d.n; id++) {
        for (int k = 0; k < N; k++)
            source[k] = (int32_t)d.ids[id * N + k]; /* checked against the MNIST split's size */
        write_composite(w, &mn, N, source, cls[id], id, image);
        if ((id & 4095) == 0)
            progress_update(&pr, id, NULL);
    }
    progress_end(&pr, d.n);
    stream_finish(w);
    close_stdout();

    free(image);
    free(seen);
    free(classes);
    free(cls);
    digits_ids_free(&d);
    idx_set_free(&mn);
    header_free(h);
    return 0;
}

int main(int argc, char **argv)
{
    util_start(argc, argv, usage);
    options o = parse_options(argc, argv);
    stdout_not_terminal();
    if (o.ids)
        return from_ids(&o, argc, argv);
    const int N = o.N, W = DIGITS_SIDE * N;

    digits_plan plan;
    const char *err = digits_plan_make(&plan, N, o.split, o.total, o.per_class, o.class_seed);
    if (err)
        usage_die("%s", err);
    const int64_t total = digits_plan_total(&plan);
    if (total > MAX_IMAGES)
        usage_die("%lld images are more than %ld", (long long)total, MAX_IMAGES);

    need_mnist_dir(o.mnist);
    idx_set mn;
    idx_load_split(&mn, o.mnist, o.split == DIGITS_TRAIN || o.split == DIGITS_VAL ? "train" : "test");
    /* the digits this split may use: [first, first + count) of the MNIST file */
    int64_t first = 0, count = mn.n;
    if (o.holdout) {
        if (o.holdout >= mn.n)
            usage_die("--holdout %ld: the MNIST training set of %s has only %lld digits", o.holdout, o.mnist,
                      (long long)mn.n);
        first = o.split == DIGITS_VAL ? mn.n - o.holdout : 0;
        count = o.split == DIGITS_VAL ? o.holdout : mn.n - o.holdout;
    }
    int32_t *src = emalloc(total * N * sizeof *src);
    if ((err = digits_draw_sources(&plan, mn.labels + first, count, o.seed, src)))
        die("%s (%s)", err, o.mnist);
    for (int64_t i = 0; i < total * N; i++)
        src[i] += (int32_t)first; /* indices into the whole file, as the source field says */
    /* the order of the stream: composite perm[p] (in class order) goes out p-th, with id p */
    int32_t *perm = emalloc(total * sizeof *perm);
    for (int64_t i = 0; i < total; i++)
        perm[i] = (int32_t)i;
    rng r;
    rng_init(&r, o.seed, RNG_STREAM('o', 'r', 'd', o.split));
    rng_shuffle_i32(&r, perm, total);

    stream_header *h = images_header(argc, argv, &o.seed, N, digits_split_name(o.split), o.dataset);
    if (o.holdout)
        header_set_int(h, "holdout", o.holdout);
    set_classes(h, "classes", plan.classes, plan.nclasses);
    set_classes(h, "seen_classes", plan.seen, plan.nseen);

    stream_writer *w = stdout_writer(h);
    uint8_t *image = emalloc(DIGITS_SIDE * W);
    progress pr;
    progress_start(&pr, "images", total);
    for (int64_t id = 0; id < total; id++) {
        int64_t q = perm[id];
        /* src and the MNIST pixels are read in random order: fetch them a few images ahead */
        if (id + 16 < total)
            __builtin_prefetch(src + (int64_t)perm[id + 16] * N);
        if (id + 4 < total)
            for (int k = 0; k < N; k++) {
                const uint8_t *c = mn.images + (int64_t)src[(int64_t)perm[id + 4] * N + k] * DIGITS_CELL;
                for (int b = 0; b < DIGITS_CELL; b += 64)
                    __builtin_prefetch(c + b);
            }
        write_composite(w, &mn, N, src + q * N, plan.classes[q / plan.per_class], id, image);
        if ((id & 4095) == 0)
            progress_update(&pr, id, NULL);
    }
    progress_end(&pr, total);
    stream_finish(w);
    close_stdout();

    free(image);
    free(perm);
    free(src);
    idx_set_free(&mn);
    header_free(h);
    digits_plan_free(&plan);
    return 0;
}
