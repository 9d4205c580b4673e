/* occlude: blacks out random patches of the digits of N-digit MNIST images, in an `images`
 * stream (the test twins, a fixed training set) or in a batch stream between `batcher` and
 * `train` (occlusion drawn afresh at every use of an image, as HIB appendix A trains).
 *
 * Per digit independently, with probability p, a patch inside the digit's 28 x 28 cell is set to
 * 0 (lib/data/digits.h): --shape rect (the default; SPE appendix E, "identical to the scheme used in
 * Oh et al. (2019)") a rectangle of width and height each uniform on 0..28, corner x on
 * 0..28-w, y on 0..28-h; --shape square (HIB appendix A as written) a square of side L uniform
 * on 0..28, corner x, y each on 0..28-L. A side of 0 blacks out nothing but counts as occluded.
 *
 * images (unbatched): each image's generator comes from the seed and the image's id, so the
 * result does not depend on the order of the stream, and "clean" (-p 0) and "corrupt" (-p 1)
 * twins hold the same composites; the patches are drawn whatever p, so for one seed every
 * occluded digit gets the same patch at any p. Adds `occluded` uint8 [N] and `patch` int32
 * [N, 4] (x, y, w, h; 0 0 0 0 when not occluded), meta `occlusion_p`, `occlusion_shape`; with
 * --corrupt also `corrupt` uint8 [], 1 when any digit is occluded: the per-item flag of low
 * quality that embed carries into the embeddings, fromnpz reads and knn passes on (a frozen
 * backbone's features, PFE's low-quality items: pipelines/pfe.sh).
 *
 * pairbatch (image1, image2), groupbatch and episodes (image): each image of record i (its place
 * in the stream, from 0) and slot s draws from digits_occlusion_rng(seed, i, s): the same batches
 * give the same bytes, and `train --resume`, which skips the records it has trained on, sees the
 * same patches as an uninterrupted run. The flags travel with the images: `occluded1`,
 * `occluded2` (pairbatch) or `occluded` uint8 [N] per image, added, or OR-ed when present.
 */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>

#include "digits.h"
#include "rng.h"
#include "stream.h"
#include "util.h"

static const char *usage =
    "usage: occlude [-p P] [--shape rect|square] [-S SEED] [--corrupt] [--progress] [INPUT] > stream\n"
    "  Blacks out random patches of N-digit MNIST digits, in images or batch streams.\n";

typedef struct {
    double p;
    int shape;
    uint64_t seed;
    int corrupt; /* --corrupt: images get the flag `corrupt` */
    const char *input;
} options;

static options parse_options(int argc, char **argv)
{
    options o = {.p = 0.2, .shape = DIGITS_RECT, .seed = DIGITS_SEED, .input = "-"};
    static const struct option longs[] = {
        {"progress", no_argument, 0, 'P'},
        {"corrupt", no_argument, 0, 'C'},
        {"shape", required_argument, 0, 's'},
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
        case 's':
            if ((o.shape = digits_shape_parse(optarg)) < 0)
                usage_die("--shape: unknown shape '%s' (rect or square)", optarg);
            break;
        case 'S': o.seed = parse_u64("-S", optarg); break;
        case 'P': progress_force = 1; break;
        case 'C': o.corrupt = 1; break;
        case 'h': usage_help();
        default: usage_bad_option(argv);
        }
    }
    if (argc - optind > 1)
        usage_die("unexpected argument '%s'", argv[optind + 1]);
    if (optind < argc)
        o.input = argv[optind];
    return o;
}

/* What occlude does to one kind: the image fields, the flag field of each, the number of digits. */
typedef struct {
    int batched;
    int nimg;                /* image fields: 1, or 2 (pairbatch) */
    int img[2];              /* their indices in the input */
    int flag[2];             /* the index of each one's flags in the output */
    int flag_in[2];          /* ... in the input, -1 when occlude adds them */
    int id;                  /* images: the id field */
    int corrupt;             /* images with --corrupt: the index of `corrupt` in the output, else -1 */
    int N;
} plan;

/* N from an image field [28, 28N] */
static int digits_of(const stream_reader *in, const stream_field *img)
{
    if (img->ndim != 2 || img->shape[0] != DIGITS_SIDE || img->shape[1] % DIGITS_SIDE ||
        img->shape[1] < DIGITS_SIDE || img->shape[1] > DIGITS_SIDE * DIGITS_MAXN)
        die("%s: field '%s' is not an N-digit MNIST image [28, 28N] with N in 1..%d; occlude blacks out "
            "patches of 28 x 28 digit cells", in->name, img->name, DIGITS_MAXN);
    int N = (int)(img->shape[1] / DIGITS_SIDE);
    if (header_int(in->header, "digits", N) != N)
        die("%s: meta digits = %lld does not match the image width %lld", in->name,
            (long long)header_int(in->header, "digits", N), (long long)img->shape[1]);
    return N;
}

/* checks the input and lays out the output header h (fields after the input's) */
static plan make_plan(const stream_reader *in, stream_header *h, int corrupt)
{
    const stream_header *ih = in->header;
    plan pl = {.id = -1, .flag_in = {-1, -1}, .corrupt = -1};
    const char *names[2] = {"image", NULL}, *flags[2] = {"occluded", NULL};
    if (!strcmp(ih->kind, "images")) {
        const char *done[] = {"occluded", "patch", "corrupt"};
        for (int i = 0; i < 3; i++)
            if (header_field_find(ih, done[i]) >= 0)
                die("%s: the images are already occluded (field '%s'); occlude the output of mkdigits",
                    in->name, done[i]);
        if (ih->batched)
            die("%s: expected unbatched images, the stream is batched", in->name);
        pl.id = stream_field_need(in->name, ih, "id", DT_I64, 0, NULL);
    } else if (!strcmp(ih->kind, "pairbatch")) {
        names[0] = "image1", names[1] = "image2", flags[0] = "occluded1", flags[1] = "occluded2";
    } else if (strcmp(ih->kind, "groupbatch") && strcmp(ih->kind, "episodes")) {
        die("%s: expected a stream of kind images, pairbatch, groupbatch or episodes, got '%s' (from %s)",
            in->name, ih->kind, ih->program);
    }
    if (corrupt && strcmp(ih->kind, "images"))
        die("%s: --corrupt flags images (kind images, from mkdigits); a %s stream carries its flags in %s",
            in->name, ih->kind, names[1] ? "occluded1 and occluded2" : "occluded");
    pl.batched = ih->batched;
    if (strcmp(ih->kind, "images") && !pl.batched)
        die("%s: a %s stream must be batched", in->name, ih->kind);
    pl.nimg = names[1] ? 2 : 1;
    int nf = ih->nfields;
    for (int i = 0; i < pl.nimg; i++) {
        pl.img[i] = stream_field_need(in->name, ih, names[i], DT_U8, FIELD_ANY, NULL); /* digits_of: its shape */
        int N = digits_of(in, &ih->fields[pl.img[i]]);
        if (i && N != pl.N)
            die("%s: image1 and image2 differ in size", in->name);
        pl.N = N;
    }
    int64_t nshape[1] = {pl.N};
    for (int i = 0; i < pl.nimg; i++) {
        int f = header_field_find(ih, flags[i]);
        if (f >= 0) { /* this occlusion's flags are added to it */
            stream_field_need(in->name, ih, flags[i], DT_U8, 1, nshape);
            pl.flag[i] = pl.flag_in[i] = f;
        } else {
            pl.flag[i] = nf++;
        }
    }
    header_copy_fields(h, ih);
    for (int i = 0; i < pl.nimg; i++)
        if (pl.flag_in[i] < 0)
            header_add_field(h, flags[i], DT_U8, 1, nshape);
    if (!pl.batched) {
        int64_t pshape[2] = {pl.N, 4};
        header_add_field(h, "patch", DT_I32, 2, pshape);
    }
    if (corrupt) {
        header_add_field(h, "corrupt", DT_U8, 0, NULL);
        pl.corrupt = h->nfields - 1;
    }
    return pl;
}

int main(int argc, char **argv)
{
    util_start(argc, argv, usage);
    options o = parse_options(argc, argv);
    stdout_not_terminal();

    stream_reader *in = stream_open_path(o.input);
    stream_header *h = header_new(in->header->kind, in->header->batched);
    header_provenance(h, argc, argv);
    header_set_seed(h, o.seed);
    header_add_input(h, in->header);
    const plan pl = make_plan(in, h, o.corrupt);
    const int N = pl.N, nin = in->header->nfields;
    /* an endless batch stream ends when train, having done its steps, closes the pipe: end
     * quietly of SIGPIPE as batcher does, even under a parent that ignores it */
    if (pl.batched)
        signal(SIGPIPE, SIG_DFL);
    header_copy_meta(h, in->header);
    header_set_float(h, "occlusion_p", o.p);
    header_set_str(h, "occlusion_shape", digits_shape_name(o.shape));

    static char obuf[1 << 20];
    setvbuf(stdout, obuf, _IOFBF, sizeof obuf);
    __fsetlocking(stdout, FSETLOCKING_BYCALLER); /* one thread: the writer's many small fwrites skip the lock */
    stream_writer *w = stream_create(stdout, h);
    stream_record rec = {0};
    int32_t patch[DIGITS_MAXN][4];
    uint8_t any = 0; /* --corrupt: any digit of the image occluded */
    uint8_t *added[2] = {NULL, NULL};   /* flags occlude adds: [maxB][N] */
    size_t added_cap = 0;
    void *data[STREAM_MAXFIELDS];
    digits_patch pa[DIGITS_MAXN];
    const size_t ib = (size_t)DIGITS_CELL * N;
    progress pr;
    progress_start(&pr, pl.batched ? "batches" : "images", 0);
    while (stream_read(in, &rec)) {
        int64_t B = pl.batched ? record_batch(&rec) : 1;
        if ((size_t)B > added_cap) {
            for (int i = 0; i < pl.nimg; i++)
                if (pl.flag_in[i] < 0)
                    added[i] = erealloc(added[i], (size_t)B * N);
            added_cap = (size_t)B;
        }
        for (int i = 0; i < nin; i++)
            data[i] = rec.t[i].data;
        const uint64_t record = (uint64_t)(in->count - 1);
        any = 0;
        for (int i = 0; i < pl.nimg; i++) {
            uint8_t *flags = pl.flag_in[i] >= 0 ? rec.t[pl.flag_in[i]].data : added[i];
            data[pl.flag[i]] = flags;
            for (int64_t b = 0; b < B; b++) {
                uint8_t *image = (uint8_t *)rec.t[pl.img[i]].data + b * ib;
                rng r;
                if (pl.batched)
                    digits_occlusion_rng(&r, o.seed, record, (uint64_t)i << 32 | (uint64_t)b);
                else
                    digits_occlusion_rng_id(&r, o.seed, *(const int64_t *)rec.t[pl.id].data);
                digits_occlusion_draw(&r, o.p, o.shape, N, pa);
                for (int k = 0; k < N; k++) {
                    if (pl.flag_in[i] >= 0)
                        flags[b * N + k] |= (uint8_t)pa[k].occluded;
                    else
                        flags[b * N + k] = (uint8_t)pa[k].occluded;
                    any |= (uint8_t)pa[k].occluded;
                    if (pa[k].occluded)
                        digits_occlude(image, N, k, &pa[k]);
                    patch[k][0] = pa[k].x, patch[k][1] = pa[k].y, patch[k][2] = pa[k].w, patch[k][3] = pa[k].h;
                }
            }
        }
        if (!pl.batched)
            data[pl.corrupt >= 0 ? h->nfields - 2 : h->nfields - 1] = patch;
        if (pl.corrupt >= 0)
            data[pl.corrupt] = &any;
        stream_write_data(w, data, pl.batched ? B : 0);
        if ((in->count & (pl.batched ? 63 : 4095)) == 0)
            progress_update(&pr, in->count, NULL);
    }
    progress_end(&pr, in->count);
    stream_finish(w);
    close_stdout();

    free(added[0]);
    free(added[1]);
    record_free(&rec);
    stream_close(in);
    header_free(h);
    return 0;
}
