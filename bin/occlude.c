/* occlude: blacks out random squares of the digits of an `images` stream (HIB paper, appendix A).
 *
 * Per digit independently, with probability p: side L uniform on the integers 0..28 (the paper's
 * L ~ U(0, 28), discretised; L = 0 blacks out nothing but the digit still counts as occluded),
 * top-left corner x (column) and y (row) each uniform on 0..28-L within the digit's cell; the
 * square is set to 0. Adds the fields `occluded` uint8 [N] and `patch` int32 [N, 3] (x, y, L;
 * 0 0 0 when not occluded) and meta `occlusion_p`.
 *
 * Each image's generator is rng_init(seed, tag ^ id), from the image's id: the result does not
 * depend on the order of the stream, and "clean" (-p 0) and "corrupt" (-p 1) twins of one mkdigits
 * stream hold the same composites. The squares are drawn whatever p, so for one seed every
 * occluded digit gets the same square at any p.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <string.h>

#include "digits.h"
#include "rng.h"
#include "stream.h"
#include "util.h"

static const char *usage =
    "usage: occlude [-p P] [-S SEED] [--progress] [INPUT] > images\n"
    "  Reads a stream of kind `images` (INPUT, or stdin when absent or -) and blacks out, per\n"
    "  digit with probability P, a square of side L uniform on 0..28 at a top-left corner\n"
    "  uniform on 0..28-L (each coordinate) within the digit's 28 x 28 cell.\n"
    "  (The paper's L ~ U(0, 28), discretised; L = 0 blacks out nothing but counts as occluded.)\n"
    "  Adds the fields occluded uint8 [N] and patch int32 [N, 3] (x = column, y = row, L; 0 0 0\n"
    "  when not occluded) and meta occlusion_p.\n"
    "  -p P        probability per digit, 0..1, or `clean` (0) or `corrupt` (1) (default 0.2)\n"
    "  -S SEED     seed; each image's squares depend only on SEED and its id (default 714)\n"
    "  --progress  show progress even when stderr is not a terminal\n"
    "  Exit: 0 ok, 1 bad or truncated input stream, 2 misuse.\n";

typedef struct {
    double p;
    uint64_t seed;
    const char *input;
} options;

static options parse_options(int argc, char **argv)
{
    options o = {.p = 0.2, .seed = DIGITS_SEED, .input = "-"};
    static const struct option longs[] = {
        {"progress", no_argument, 0, 'P'},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    int c;
    while ((c = getopt_long(argc, argv, "p:S:h", longs, NULL)) != -1) {
        switch (c) {
        case 'p':
            o.p = !strcmp(optarg, "clean") ? 0 : !strcmp(optarg, "corrupt") ? 1
                                                                                 : parse_double("-p", optarg, 0, 1);
            break;
        case 'S': o.seed = parse_u64("-S", optarg); break;
        case 'P': progress_force = 1; break;
        case 'h': usage_help();
        default: usage_die("unknown option");
        }
    }
    if (argc - optind > 1)
        usage_die("unexpected argument '%s'", argv[optind + 1]);
    if (optind < argc)
        o.input = argv[optind];
    return o;
}

/* the number of digits N of an images stream, after checking the fields occlude needs */
static int check_input(const stream_reader *in)
{
    const stream_header *h = in->header;
    stream_expect_kind(in, "images");
    const char *done[] = {"occluded", "patch"};
    for (int i = 0; i < 2; i++)
        if (header_field_find(h, done[i]) >= 0)
            die("%s: the images are already occluded (field '%s'); occlude the output of mkdigits",
                in->name, done[i]);
    const stream_field *img = &h->fields[stream_field_typed(h, "image", DT_U8)];
    const stream_field *id = &h->fields[stream_field_typed(h, "id", DT_I64)];
    if (h->batched || img->ndim != 2 || img->shape[0] != DIGITS_SIDE || img->shape[1] % DIGITS_SIDE ||
        img->shape[1] < DIGITS_SIDE || img->shape[1] > DIGITS_SIDE * DIGITS_MAXN || id->ndim != 0)
        die("%s: expected unbatched images [28, 28N] with N in 1..%d and a scalar id", in->name,
            DIGITS_MAXN);
    int N = (int)(img->shape[1] / DIGITS_SIDE);
    if (header_int(h, "digits", N) != N)
        die("%s: meta digits = %lld does not match the image width %lld", in->name,
            (long long)header_int(h, "digits", N), (long long)img->shape[1]);
    return N;
}

int main(int argc, char **argv)
{
    util_init(argv[0]);
    util_usage = usage;
    options o = parse_options(argc, argv);

    stream_reader *in = stream_open_path(o.input);
    const int N = check_input(in);
    const int ii = header_field_find(in->header, "image"), ji = header_field_find(in->header, "id");
    const int nin = in->header->nfields;

    stream_header *h = header_new("images", 0);
    header_provenance(h, argc, argv);
    header_set_seed(h, o.seed);
    header_add_input(h, in->header);
    header_copy_fields(h, in->header);
    int64_t nshape[1] = {N}, pshape[2] = {N, 3};
    header_add_field(h, "occluded", DT_U8, 1, nshape);
    header_add_field(h, "patch", DT_I32, 2, pshape);
    header_copy_meta(h, in->header);
    header_set_float(h, "occlusion_p", o.p);

    static char obuf[1 << 20];
    setvbuf(stdout, obuf, _IOFBF, sizeof obuf);
    __fsetlocking(stdout, FSETLOCKING_BYCALLER); /* one thread: the writer's many small fwrites skip the lock */
    stream_writer *w = stream_create(stdout, h);
    stream_record rec = {0};
    uint8_t occluded[DIGITS_MAXN];
    int32_t patch[DIGITS_MAXN][3];
    void *data[STREAM_MAXFIELDS];
    data[nin] = occluded;
    data[nin + 1] = patch;
    digits_patch pa[DIGITS_MAXN];
    progress pr;
    progress_start(&pr, "images", 0);
    while (stream_read(in, &rec)) {
        uint8_t *image = rec.t[ii].data;
        int64_t id = *(const int64_t *)rec.t[ji].data;
        rng r;
        rng_init(&r, o.seed, RNG_STREAM('o', 'c', 'c', 0) ^ (uint64_t)id);
        digits_occlusion_draw(&r, o.p, N, pa);
        for (int k = 0; k < N; k++) {
            occluded[k] = (uint8_t)pa[k].occluded;
            patch[k][0] = pa[k].x;
            patch[k][1] = pa[k].y;
            patch[k][2] = pa[k].L;
            if (pa[k].occluded)
                digits_occlude(image, N, k, &pa[k]);
        }
        for (int i = 0; i < nin; i++)
            data[i] = rec.t[i].data;
        stream_write_data(w, data, 0);
        if ((in->count & 4095) == 0)
            progress_update(&pr, in->count, NULL);
    }
    progress_end(&pr, in->count);
    stream_finish(w);
    close_stdout();

    record_free(&rec);
    stream_close(in);
    header_free(h);
    return 0;
}
