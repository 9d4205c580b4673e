/* tshow: inspects a hedge stream. Prints the lineage (one line, from the program that made the
 * pixels to this stream), the header as one JSON line, and one JSON line per record with, for
 * each field, its dtype, shape, min, max, mean and first values; then "# N records".
 *
 * -H prints the full header with its whole lineage (the headers of every input, recursively)
 * and stops. -p passes the stream through unchanged (records and trailer re-written: for a
 * stream written by hedge the output is byte-identical) and sends the report to stderr, so it
 * can sit in the middle of a pipe. -i writes a contact sheet of the first 64 images: grey for
 * items of shape [H, W] or [W], colour (PNG only) for [3, H, W], channels first (mkshapes).
 */
#include <math.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "imgout.h"
#include "json.h"
#include "stream.h"
#include "util.h"

static const char *usage =
    "usage: tshow [-H | -m KEY] [-q] [-p] [-n N] [-i FILE.png|FILE.pgm [-f FIELD]] [IN]\n"
    "  Shows a stream's lineage, header and records (or passes it through, -p).\n";

#define NFIRST 8    /* values shown per field */
#define NSHEET 64   /* images on the -i sheet */
#define SHEET_COLS 8

typedef struct {
    int header_only;   /* -H */
    const char *meta;  /* -m: the meta value KEY alone */
    int quiet;         /* -q */
    int pass;          /* -p */
    long limit;        /* -n, 0 = all */
    const char *sheet; /* -i */
    const char *field; /* -f */
    const char *input;
} options;

static options parse_options(int argc, char **argv)
{
    options o = {.field = "image", .input = "-"};
    int c, have_f = 0;
    static const struct option longs[] = {{"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    while ((c = getopt_long(argc, argv, "Hm:qpn:i:f:h", longs, NULL)) != -1) {
        switch (c) {
        case 'H': o.header_only = 1; break;
        case 'm': o.meta = optarg; break;
        case 'q': o.quiet = 1; break;
        case 'p': o.pass = 1; break;
        case 'n': o.limit = parse_long("-n", optarg, 1, 1L << 50); break;
        case 'i': o.sheet = optarg; break;
        case 'f': o.field = optarg, have_f = 1; break;
        case 'h': usage_help();
        default: usage_bad_option(argv);
        }
    }
    if (argc - optind > 1)
        usage_die("at most one input, got %d", argc - optind);
    if (optind < argc)
        o.input = argv[optind];
    if (o.sheet && imgout_format(o.sheet) < 0)
        usage_die("-i: '%s' must end in .png or .pgm", o.sheet);
    if (have_f && !o.sheet)
        usage_die("-f names the images of -i; give -i too");
    if ((o.header_only || o.meta) && (o.pass || o.sheet || o.quiet || o.limit || (o.header_only && o.meta)))
        usage_die("%s; it does not go with -p, -i, -q, -n or %s",
                  o.meta ? "-m prints one meta value" : "-H prints only the header", o.meta ? "-H" : "-m");
    return o;
}

/* ------------------------------------------------------------------ lineage and stats */

static void print_arg(FILE *f, const char *a)
{
    if (*a && !strpbrk(a, " \t\n'\"\\$`*?;&|<>()"))
        fputs(a, f);
    else {
        fputc('\'', f);
        for (; *a; a++)
            if (*a == '\'')
                fputs("'\\''", f);
            else
                fputc(*a, f);
        fputc('\'', f);
    }
}

/* "mkdigits -N 2 (seed 714) -> occlude -p 0.2 (seed 714) -> batcher -m pairs (seed 714)";
 * a program with several inputs shows them as "(a + b) -> prog" */
static void print_lineage(FILE *f, const stream_header *h)
{
    if (h->ninputs == 1) {
        print_lineage(f, h->inputs[0]);
        fputs(" -> ", f);
    } else if (h->ninputs > 1) {
        fputc('(', f);
        for (int i = 0; i < h->ninputs; i++) {
            fputs(i ? " + " : "", f);
            print_lineage(f, h->inputs[i]);
        }
        fputs(") -> ", f);
    }
    fputs(h->program, f);
    for (int i = 0; i < h->nargs; i++) {
        fputc(' ', f);
        print_arg(f, h->args[i]);
    }
    if (h->has_seed)
        fprintf(f, " (seed %llu)", (unsigned long long)h->seed);
}

typedef struct {
    int64_t count;
    double min, max, sum;
} stats;

#define STATS_LOOP(type)                                        \
    do {                                                        \
        const type *v = t->data;                                \
        for (int64_t i = 0; i < n; i++) {                       \
            double x = (double)v[i];                            \
            lo = x < lo ? x : lo;                               \
            hi = x > hi ? x : hi;                               \
            sum += x;                                           \
        }                                                       \
    } while (0)

/* adds the elements of t into s (NaNs make the mean NaN; min and max skip them) */
static void stats_add(stats *s, const tensor *t)
{
    int64_t n = tensor_numel(t);
    double lo = s->count ? s->min : INFINITY, hi = s->count ? s->max : -INFINITY, sum = 0;
    if (t->dtype == DT_U8) { /* the common case, images: integer sums, exact and fast */
        const uint8_t *v = t->data;
        uint64_t isum = 0;
        uint8_t ilo = 255, ihi = 0;
        for (int64_t i = 0; i < n; i++) {
            ilo = v[i] < ilo ? v[i] : ilo;
            ihi = v[i] > ihi ? v[i] : ihi;
            isum += v[i];
        }
        if (n) {
            lo = ilo < lo ? ilo : lo;
            hi = ihi > hi ? ihi : hi;
        }
        sum = (double)isum;
    } else if (t->dtype == DT_I32)
        STATS_LOOP(int32_t);
    else if (t->dtype == DT_I64)
        STATS_LOOP(int64_t);
    else if (t->dtype == DT_F32)
        STATS_LOOP(float);
    else
        STATS_LOOP(double);
    s->count += n;
    s->min = lo;
    s->max = hi;
    s->sum += sum;
}

/* tshow's numbers: %.7g (null when not finite) */
static void num7(json_writer *w, const char *key, double v)
{
    json_key(w, key);
    json_numf(w, "%.7g", v);
}

/* "NAME": {"dtype": ..., "shape": [...] (then the caller's members) */
static void field_begin(json_writer *w, const char *name, int dtype, int ndim, const int64_t *shape)
{
    json_key(w, name);
    json_obj(w);
    json_key_str(w, "dtype", dtype_name(dtype));
    json_key(w, "shape");
    json_arr(w);
    for (int d = 0; d < ndim; d++)
        json_int(w, shape[d]);
    json_end(w);
}

static void json_stats(json_writer *w, const stats *s)
{
    num7(w, "min", s->count ? s->min : NAN);
    num7(w, "max", s->count ? s->max : NAN);
    num7(w, "mean", s->count ? s->sum / s->count : NAN);
}

/* {"record": i, "fields": {"image": {"dtype": ..., "shape": ..., "min": ..., "max": ...,
 *  "mean": ..., "first": [...]}, ...}} */
static void print_record(FILE *f, const stream_header *h, const stream_record *rec, long long index)
{
    json_writer w;
    json_begin(&w, f);
    json_obj(&w);
    json_key_int(&w, "record", index);
    json_key(&w, "fields");
    json_obj(&w);
    for (int i = 0; i < h->nfields; i++) {
        const tensor *t = &rec->t[i];
        stats s = {0};
        stats_add(&s, t);
        field_begin(&w, h->fields[i].name, t->dtype, t->ndim, t->shape);
        json_stats(&w, &s);
        json_key(&w, "first");
        json_arr(&w);
        int64_t n = tensor_numel(t);
        for (int64_t k = 0; k < n && k < NFIRST; k++)
            json_numf(&w, "%.7g", tensor_get(t, k));
        json_end(&w);
        json_end(&w);
    }
    json_end(&w);
    json_end(&w);
}

/* -q: {"records": n, "fields": {"image": {"dtype": ..., "shape": ..., "count": ..., "min": ...,
 *  "max": ..., "mean": ...}, ...}} */
static void print_summary(FILE *f, const stream_header *h, const stats *sum, long long records)
{
    json_writer w;
    json_begin(&w, f);
    json_obj(&w);
    json_key_int(&w, "records", records);
    json_key(&w, "fields");
    json_obj(&w);
    for (int i = 0; i < h->nfields; i++) {
        const stream_field *fd = &h->fields[i];
        field_begin(&w, fd->name, fd->dtype, fd->ndim, fd->shape);
        json_key_int(&w, "count", sum[i].count);
        json_stats(&w, &sum[i]);
        json_end(&w);
    }
    json_end(&w);
    json_end(&w);
}

/* ------------------------------------------------------------------ the -i sheet */

typedef struct {
    int field, w, h;   /* the field and its item size */
    int channels;      /* 1, or 3 for [3, H, W] items (RGB planes) */
    int dtype;
    int n;             /* images collected */
    double *px;        /* [NSHEET][channels][h][w] */
} sheet;

static void sheet_init(sheet *s, const stream_header *hd, const char *name, const char *path)
{
    s->field = stream_field_index(hd, name);
    const stream_field *f = &hd->fields[s->field];
    s->channels = f->ndim == 3 && f->shape[0] == 3 ? 3 : 1;
    if (f->ndim != 1 && f->ndim != 2 && s->channels != 3)
        die("field '%s' has %d dimensions per item; -i draws items of shape [H, W], [W] or [3, H, W]", name,
            f->ndim);
    if (s->channels == 3 && imgout_format(path) != IMGOUT_PNG)
        die("field '%s' holds colour images [3, H, W]; PGM holds grey images only: name the file .png", name);
    s->h = f->ndim >= 2 ? (int)f->shape[f->ndim - 2] : 1;
    s->w = (int)f->shape[f->ndim - 1];
    if (s->w < 1 || s->h < 1 || (int64_t)s->w * s->h > (1 << 24))
        die("field '%s' items of %d x %d cannot be drawn", name, s->h, s->w);
    s->dtype = f->dtype;
    s->n = 0;
    s->px = emalloc((size_t)NSHEET * s->channels * s->w * s->h * sizeof *s->px);
}

static void sheet_add(sheet *s, const stream_header *hd, const stream_record *rec)
{
    const tensor *t = &rec->t[s->field];
    int64_t items = hd->batched ? t->shape[0] : 1, per = (int64_t)s->channels * s->w * s->h;
    for (int64_t k = 0; k < items && s->n < NSHEET; k++, s->n++)
        for (int64_t i = 0; i < per; i++)
            s->px[s->n * per + i] = tensor_get(t, k * per + i);
}

/* the sheet into f (atomic_open(path)), synced: only the rename is left to do */
static void sheet_write(sheet *s, FILE *f, const char *path)
{
    if (s->n == 0)
        die("no images to draw into %s", path);
    int64_t plane = (int64_t)s->w * s->h, per = plane * s->channels, total = per * s->n;
    double lo = 0, hi = 255; /* uint8 as it is; anything else scaled from its min..max */
    if (s->dtype != DT_U8) {
        lo = INFINITY, hi = -INFINITY;
        for (int64_t i = 0; i < total; i++)
            if (isfinite(s->px[i])) {
                lo = s->px[i] < lo ? s->px[i] : lo;
                hi = s->px[i] > hi ? s->px[i] : hi;
            }
        if (!(hi > lo))
            hi = lo + 1;
    }
    imgout_grid g;
    if (s->channels == 3)
        imgout_grid_init_rgb(&g, s->w, s->h, s->n, SHEET_COLS);
    else
        imgout_grid_init(&g, s->w, s->h, s->n, SHEET_COLS);
    uint8_t *cell = emalloc(per);
    for (int k = 0; k < s->n; k++) {
        for (int64_t i = 0; i < per; i++) { /* channel c of pixel p: planes in, interleaved out */
            int64_t c = i / plane, p = i % plane;
            double v = s->px[k * per + i];
            v = isfinite(v) ? (v - lo) / (hi - lo) * 255.0 : 0;
            cell[p * s->channels + c] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v + 0.5);
        }
        imgout_grid_put(&g, k, cell);
    }
    if (s->channels == 3)
        imgout_write_rgb_file(f, path, g.px, g.w, g.h);
    else
        imgout_write_file(f, path, g.px, g.w, g.h);
    atomic_sync(f);
    imgout_grid_free(&g);
    free(cell);
    free(s->px);
}

/* ------------------------------------------------------------------ main */

int main(int argc, char **argv)
{
    util_start(argc, argv, usage);
    options o = parse_options(argc, argv);
    if (o.pass)
        stdout_not_terminal();

    /* the -i file exists (as a temp file) before any work: an unwritable path fails now */
    FILE *sf = o.sheet ? atomic_open(o.sheet) : NULL;
    stream_reader *in = stream_open_path(o.input);
    const stream_header *h = in->header;
    if (o.meta || o.header_only) { /* -m: every value, a tensor's one per line (-H shows 16) */
        const stream_meta *m = o.meta ? header_meta(h, o.meta) : NULL;
        if (o.meta && !m)
            die("%s: no meta %s in the header (tshow -H shows what there is)", o.input, o.meta);
        if (m && header_meta_print(stdout, m) < 0)
            die("%s: meta %s is neither a number, a string nor a tensor", o.input, o.meta);
        if (!m)
            header_print_json(stdout, h, 1), putchar('\n');
        stream_close(in);
        close_stdout();
        return 0;
    }
    sheet sh = {0};
    if (o.sheet) /* before any output: a field -i cannot draw fails with nothing written */
        sheet_init(&sh, h, o.field, o.sheet);
    FILE *rep = o.pass ? stderr : stdout;
    if (o.pass)
        setvbuf(stdout, NULL, _IOFBF, 1 << 20);
    fputs("# ", rep);
    print_lineage(rep, h);
    fputc('\n', rep);
    header_print_json(rep, h, 0);
    fputc('\n', rep);

    stream_writer *w = o.pass ? stream_create(stdout, h) : NULL;
    stats *sum = ecalloc(h->nfields, sizeof *sum);
    stream_record rec = {0};
    int stopped = 0;
    for (;;) {
        if (o.limit && in->count >= o.limit) {
            stopped = 1;   /* stop without reading further: the rest is not our business */
            break;
        }
        if (!stream_read(in, &rec))
            break;
        if (w)
            stream_write_record(w, &rec);
        if (!o.quiet)
            print_record(rep, h, &rec, in->count - 1);
        else
            for (int i = 0; i < h->nfields; i++)
                stats_add(&sum[i], &rec.t[i]);
        if (o.sheet && sh.n < NSHEET)
            sheet_add(&sh, h, &rec);
    }
    /* the sheet's data safe first, then stdout whole, then the sheet renamed into place: a
     * failure of either leaves neither a committed sheet nor a whole stream */
    if (sf)
        sheet_write(&sh, sf, o.sheet);
    if (w)
        stream_finish(w);
    if (o.quiet)
        print_summary(rep, h, sum, in->count);
    fprintf(rep, "# %lld record%s%s%s%s\n", in->count, in->count == 1 ? "" : "s",
            stopped ? " (stopped by -n)" : "", o.sheet ? ", images in " : "", o.sheet ? o.sheet : "");

    free(sum);
    record_free(&rec);
    stream_close(in);
    close_stdout();
    if (sf)
        atomic_commit(sf);
    return 0;
}
