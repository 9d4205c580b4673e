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
    "  Writes N-digit MNIST composites (uint8 28 x 28N) as a stream of kind `images`.\n"
    "  -N DIGITS          digits per image, 1..4 (default 2)\n"
    "  -s SPLIT           train | test-seen | test-unseen | val (default train)\n"
    "  -S SEED            seed of the digit draws and the order (default 714)\n"
    "  --class-seed SEED  seed of the seen/unseen class split: 70% of the 10^N numbers are seen\n"
    "                     (train) classes; keep it equal for train and test (default 714)\n"
    "  -n TOTAL           image budget (default 100000 for train, 10000 for the test splits);\n"
    "                     classes x K images are made, at most TOTAL\n"
    "  --per-class K      images per class (default max(100, TOTAL / classes of the split));\n"
    "                     if classes x K > TOTAL, only the first TOTAL / K classes of the split\n"
    "                     in the class-seed order are made. Defaults: N=2 train 70 x 1428,\n"
    "                     test-seen 70 x 142, test-unseen 30 x 333; N=3 700 x 142, 100 x 100,\n"
    "                     100 x 100\n"
    "  --holdout K        hold the last K MNIST training digits out of `train`: `-s train` then\n"
    "                     draws from the first 60000 - K only, and `-s val` (seen classes, like\n"
    "                     test-seen, default 10000 images) from the K held out only: a validation\n"
    "                     set for choosing a recipe without touching the test set\n"
    "  --mnist DIR        idx files (train-images-idx3-ubyte[.gz], t10k-..., labels alike);\n"
    "                     default $HEDGE_MNIST, else " DEFAULT_MNIST "\n"
    "  --dataset-name S   meta `dataset` (default mnist for the default data, else DIR)\n"
    "  --progress         show progress even when stderr is not a terminal\n"
    "  Train composites use MNIST train digits, test composites MNIST test digits only. Each\n"
    "  position of a class draws the digits of its label without replacement; when they run out\n"
    "  (the default data has ~143 test digits per label) a fresh permutation starts.\n"
    "  Exit: 0 ok, 1 bad idx data or I/O error, 2 misuse (also: no such MNIST directory).\n";

typedef struct {
    int N, split;
    uint64_t seed, class_seed;
    long total, per_class;      /* 0: default */
    long holdout;               /* MNIST training digits held out of train, for val */
    const char *mnist, *dataset;
} options;

static options parse_options(int argc, char **argv)
{
    const char *env = getenv("HEDGE_MNIST");
    options o = {
        .N = 2, .split = DIGITS_TRAIN, .seed = DIGITS_SEED, .class_seed = DIGITS_SEED,
        .total = 0, .per_class = 0, .mnist = env && *env ? env : DEFAULT_MNIST, .dataset = NULL,
    };
    enum { OPT_CLASS_SEED = 256, OPT_PER_CLASS, OPT_MNIST, OPT_DATASET, OPT_PROGRESS, OPT_HOLDOUT };
    static const struct option longs[] = {
        {"class-seed", required_argument, 0, OPT_CLASS_SEED},
        {"per-class", required_argument, 0, OPT_PER_CLASS},
        {"mnist", required_argument, 0, OPT_MNIST},
        {"dataset-name", required_argument, 0, OPT_DATASET},
        {"progress", no_argument, 0, OPT_PROGRESS},
        {"holdout", required_argument, 0, OPT_HOLDOUT},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    int c;
    while ((c = getopt_long(argc, argv, "N:s:S:n:h", longs, NULL)) != -1) {
        switch (c) {
        case 'N': o.N = (int)parse_long("-N", optarg, 1, DIGITS_MAXN); break;
        case 's':
            if ((o.split = digits_split_parse(optarg)) < 0)
                usage_die("-s: '%s' is not train, test-seen, test-unseen or val", optarg);
            break;
        case 'S': o.seed = parse_u64("-S", optarg); break;
        case OPT_CLASS_SEED: o.class_seed = parse_u64("--class-seed", optarg); break;
        case 'n': o.total = parse_long("-n", optarg, 1, MAX_IMAGES); break;
        case OPT_PER_CLASS: o.per_class = parse_long("--per-class", optarg, 1, MAX_IMAGES); break;
        case OPT_MNIST: o.mnist = optarg; break;
        case OPT_DATASET: o.dataset = optarg; break;
        case OPT_PROGRESS: progress_force = 1; break;
        case OPT_HOLDOUT: o.holdout = parse_long("--holdout", optarg, 1, MAX_IMAGES); break;
        case 'h': usage_help();
        default: usage_die("unknown option");
        }
    }
    if (optind < argc)
        usage_die("unexpected argument '%s'", argv[optind]);
    if (o.split == DIGITS_VAL && !o.holdout)
        usage_die("-s val is made of held-out training digits: give --holdout K");
    if (o.holdout && (o.split == DIGITS_TEST_SEEN || o.split == DIGITS_TEST_UNSEEN))
        usage_die("--holdout splits the MNIST training digits: it goes with -s train or val");
    if (!o.dataset)
        o.dataset = strcmp(o.mnist, DEFAULT_MNIST) ? o.mnist : "mnist";
    return o;
}

static void set_classes(stream_header *h, const char *key, const int32_t *c, int64_t n)
{
    tensor *t = tensor_view(DT_I32, 1, &n, (void *)c);
    header_set_tensor(h, key, t);
    tensor_free(t);
}

int main(int argc, char **argv)
{
    util_init(argv[0]);
    util_usage = usage;
    options o = parse_options(argc, argv);
    const int N = o.N, W = DIGITS_SIDE * N;

    digits_plan plan;
    const char *err = digits_plan_make(&plan, N, o.split, o.total, o.per_class, o.class_seed);
    if (err)
        usage_die("%s", err);
    const int64_t total = digits_plan_total(&plan);
    if (total > MAX_IMAGES)
        usage_die("%lld images are more than %ld", (long long)total, MAX_IMAGES);

    struct stat st;
    if (stat(o.mnist, &st) != 0 || !S_ISDIR(st.st_mode))
        usage_die("no MNIST directory %s (give --mnist DIR or set HEDGE_MNIST; `make data` makes the "
                  "default)", o.mnist);
    idx_set mn;
    idx_load_split(&mn, o.mnist, o.split == DIGITS_TRAIN || o.split == DIGITS_VAL ? "train" : "test");
    /* the digits this split may use: [first, first + count) of the MNIST file */
    int64_t first = 0, count = mn.n;
    if (o.holdout) {
        if (o.holdout >= mn.n)
            die("--holdout %ld: the MNIST training set of %s has only %lld digits", o.holdout, o.mnist,
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

    stream_header *h = header_new("images", 0);
    header_provenance(h, argc, argv);
    header_set_seed(h, o.seed);
    /* scalars get a non-NULL shape too: header_add_field memcpy's ndim entries from it */
    int64_t ishape[2] = {DIGITS_SIDE, W}, nshape[1] = {N}, scalar[1] = {0};
    header_add_field(h, "image", DT_U8, 2, ishape);
    header_add_field(h, "class", DT_I32, 0, scalar);
    header_add_field(h, "digits", DT_U8, 1, nshape);
    header_add_field(h, "source", DT_I32, 1, nshape);
    header_add_field(h, "id", DT_I64, 0, scalar);
    header_set_int(h, "digits", N);
    header_set_int(h, "height", DIGITS_SIDE);
    header_set_int(h, "width", W);
    header_set_str(h, "split", digits_split_name(o.split));
    header_set_str(h, "dataset", o.dataset);
    if (o.holdout)
        header_set_int(h, "holdout", o.holdout);
    set_classes(h, "classes", plan.classes, plan.nclasses);
    set_classes(h, "seen_classes", plan.seen, plan.nseen);

    static char obuf[1 << 20];
    setvbuf(stdout, obuf, _IOFBF, sizeof obuf);
    __fsetlocking(stdout, FSETLOCKING_BYCALLER); /* one thread: the writer's many small fwrites skip the lock */
    stream_writer *w = stream_create(stdout, h);
    uint8_t *image = emalloc(DIGITS_SIDE * W);
    uint8_t digits[DIGITS_MAXN];
    int32_t cls, source[DIGITS_MAXN];
    int64_t id;
    void *data[] = {image, &cls, digits, source, &id};
    const uint8_t *cells[DIGITS_MAXN];
    progress pr;
    progress_start(&pr, "images", total);
    for (id = 0; id < total; id++) {
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
        cls = plan.classes[q / plan.per_class];
        for (int k = 0; k < N; k++) {
            source[k] = src[q * N + k];
            digits[k] = mn.labels[source[k]];
            cells[k] = mn.images + (int64_t)source[k] * DIGITS_CELL;
        }
        digits_compose(image, N, cells);
        stream_write_data(w, data, 0);
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
