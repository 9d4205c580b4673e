/* tonpz: a stream in, numpy arrays out. Stacks each field of every record into one array and
 * writes them as an .npz (np.load reads it, allow_pickle=False), with the header, lineage
 * included, as a JSON string and each meta tensor in full. The whole stream is held in memory.
 *
 * Several inputs of the same kind and fields are stacked one after the other, as np.concatenate
 * would (e.g. the clean and the corrupt twins of a test set as one mixed set, back through
 * fromnpz): streams are never concatenated as bytes (formats/stream.md), so this is where a
 * pipeline joins them. The archive's header is then tonpz's own, naming every input's header in
 * its lineage, with the first input's kind, fields and meta.
 *
 * A `class` field whose stream names its classes (meta class_names, formats/stream.md) is written
 * as the names, '<U' (or '|S' for names that are bytes), so that np.load gives back the labels
 * fromnpz read; several inputs are matched by name (lib/streams/classnames.h) before they are stacked.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "classnames.h"
#include "npy.h"
#include "stream.h"
#include "util.h"

static const char *usage =
    "usage: tonpz [-o FILE.npz] [-z] [INPUT...]\n"
    "  Writes a stream (or several, stacked) as a NumPy .npz archive (never to a terminal).\n";

static const char *descr(int dtype)
{
    static const char *d[DT_COUNT] = {"|u1", "<i4", "<i8", "<f4", "<f8"};
    return d[dtype];
}

/* the JSON text (UTF-8) as a numpy '<U' string: one little-endian UCS-4 code point per character */
static uint32_t *ucs4(const char *s, size_t n, size_t *len)
{
    uint32_t *u = emalloc((n + 1) * sizeof *u);
    size_t k = 0;
    for (size_t i = 0; i < n;) {
        unsigned char c = (unsigned char)s[i];
        int extra = c >= 0xF0 ? 3 : c >= 0xE0 ? 2 : c >= 0xC0 ? 1 : 0;
        uint32_t cp = extra ? c & (0x3F >> extra) : c;
        for (int j = 1; j <= extra && i + j < n; j++)
            cp = cp << 6 | ((unsigned char)s[i + j] & 0x3F);
        i += 1 + extra; /* json_string wrote valid UTF-8 */
        uint8_t *b = (uint8_t *)&u[k++];
        b[0] = (uint8_t)cp, b[1] = (uint8_t)(cp >> 8), b[2] = (uint8_t)(cp >> 16), b[3] = (uint8_t)(cp >> 24);
    }
    *len = k;
    return u;
}

/* an input after the first must hold items of the same kind and fields (name, dtype, shape, in
 * order) as the first, whose fields h has; else one line naming the input and what differs */
static void check_same(const stream_reader *in, const stream_header *h)
{
    const stream_header *g = in->header;
    if (strcmp(g->kind, h->kind))
        die("%s: a stream of kind '%s', expected '%s' as the first input: tonpz stacks streams of one kind",
            in->name, g->kind, h->kind);
    char want[256], got[256];
    for (int i = 0; i < h->nfields || i < g->nfields; i++) {
        if (i >= g->nfields)
            die("%s: no field '%s' (%s), which the first input has", in->name, h->fields[i].name,
                stream_field_describe(&h->fields[i], want, sizeof want));
        if (i >= h->nfields)
            die("%s: a field '%s' (%s) that the first input lacks", in->name, g->fields[i].name,
                stream_field_describe(&g->fields[i], got, sizeof got));
        stream_field_describe(&h->fields[i], want, sizeof want);
        stream_field_describe(&g->fields[i], got, sizeof got);
        if (strcmp(g->fields[i].name, h->fields[i].name) || strcmp(want, got))
            die("%s: field %d is '%s' %s, expected '%s' %s as in the first input", in->name, i, g->fields[i].name,
                got, h->fields[i].name, want);
    }
}

static void check(const char *err, const char *out)
{
    if (err)
        die("%s: %s", out, err);
}

/* the classes cls [n] (indices into N) as N's names: one numpy string array, '<U' as long as the
 * longest name in code points, or '|S' for bytes; into the archive as field `name` */
static void add_names(npz_writer *w, const char *name, const classnames *N, const int32_t *cls, int64_t n,
                      const char *out)
{
    size_t width = 1; /* characters of an element (numpy has no '<U0') */
    uint32_t **u = emalloc((size_t)(N->n ? N->n : 1) * sizeof *u);
    size_t *ulen = emalloc((size_t)(N->n ? N->n : 1) * sizeof *ulen);
    for (int64_t k = 0; k < N->n; k++) {
        if (N->bytes) {
            u[k] = NULL, ulen[k] = N->len[k];
        } else {
            u[k] = ucs4(N->s[k], N->len[k], &ulen[k]);
        }
        width = ulen[k] > width ? ulen[k] : width;
    }
    size_t item = N->bytes ? width : 4 * width;
    uint8_t *data = ecalloc((size_t)(n ? n : 1), item); /* the NULs numpy pads with */
    for (int64_t i = 0; i < n; i++) {
        int32_t c = cls[i];
        if (N->bytes)
            memcpy(data + (size_t)i * item, N->s[c], N->len[c]);
        else
            memcpy(data + (size_t)i * item, u[c], ulen[c] * 4);
    }
    char d[32];
    snprintf(d, sizeof d, "%s%zu", N->bytes ? "|S" : "<U", width);
    check(npz_add(w, name, d, 1, &n, data, (size_t)n * item), out);
    for (int64_t k = 0; k < N->n; k++)
        free(u[k]);
    free(u);
    free(ulen);
    free(data);
}

int main(int argc, char **argv)
{
    util_start(argc, argv, usage);
    const char *out = NULL;
    int level = 0, c;
    static const struct option lopts[] = {{"help", 0, 0, 'h'}, {0, 0, 0, 0}};
    while ((c = getopt_long(argc, argv, "o:zh", lopts, NULL)) != -1) {
        switch (c) {
        case 'o': out = optarg; break;
        case 'z': level = 6; break;
        case 'h': usage_help();
        default: usage_bad_option(argv);
        }
    }
    int nin = argc > optind ? argc - optind : 1; /* none: stdin */
    for (int k = optind; k < argc; k++)
        for (int j = k + 1; j < argc; j++)
            if (!strcmp(argv[k], "-") && !strcmp(argv[j], "-"))
                usage_die("stdin (-) can be read only once");
    if (!out)
        stdout_not_terminal();
    FILE *f = out ? atomic_open(out) : stdout;
    const char *name = out ? out : "stdout";

    stream_reader *in = stream_open_path(argc > optind ? argv[optind] : "-");
    const stream_header *h = in->header;
    for (int i = 0; i < h->nfields; i++)
        if (!strcmp(h->fields[i].name, "header"))
            die("%s: a field is called 'header', the name of the archive's header member", in->name);
    /* several inputs: the archive's header is a new one, with every input in its lineage */
    stream_header *own = NULL;
    if (nin > 1) {
        own = header_new(h->kind, h->batched);
        header_provenance(own, argc, argv);
        header_copy_fields(own, h);
        header_copy_meta(own, h);
        h = own; /* the first input's header goes when it is closed */
    }
    /* every field's items, one growing buffer each */
    uint8_t *data[STREAM_MAXFIELDS] = {0};
    size_t cap[STREAM_MAXFIELDS] = {0}, item[STREAM_MAXFIELDS];
    for (int i = 0; i < h->nfields; i++)
        item[i] = (size_t)shape_numel(h->fields[i].ndim, h->fields[i].shape) * dtype_size(h->fields[i].dtype);
    int64_t n = 0;
    stream_record rec = {0};
    /* the class field's names, per input: each one's classes matched with the others' by name */
    int fc = header_field_find(h, "class");
    if (fc >= 0 && (h->fields[fc].dtype != DT_I32 || h->fields[fc].ndim != 0 || h->batched))
        fc = -1; /* (not the classes of items) */
    classnames *names = ecalloc((size_t)nin, sizeof *names);
    int64_t *upto = ecalloc((size_t)nin, sizeof *upto);
    const char **src = ecalloc((size_t)nin, sizeof *src);
    for (int k = 0;; k++) {
        if (k) { /* the next input: the first's kind and fields, in order */
            if (k >= nin)
                break;
            in = stream_open_path(argv[optind + k]);
            check_same(in, own);
        }
        if (own)
            header_add_input(own, in->header);
        if (fc >= 0)
            classnames_read(&names[k], in->name, in->header);
        src[k] = argc > optind ? argv[optind + k] : "stdin";
        int batched = in->header->batched;
        while (stream_read(in, &rec)) {
            int64_t b = batched ? record_batch(&rec) : 1;
            for (int i = 0; i < h->nfields; i++) {
                size_t need = (size_t)(n + b) * item[i];
                if (need > cap[i])
                    data[i] = erealloc(data[i], cap[i] = need > 2 * cap[i] ? need : 2 * cap[i]);
                if (item[i] && b) /* (a batch of 0 items: no buffer yet, nothing to copy) */
                    memcpy(data[i] + (size_t)n * item[i], rec.t[i].data, (size_t)b * item[i]);
            }
            n += b;
        }
        upto[k] = n;
        if (k + 1 < nin) {
            record_free(&rec); /* the next input's records get buffers of their own */
            rec = (stream_record){0};
            stream_close(in);
        }
    }
    classnames U = {0};
    if (fc >= 0) { /* every input's classes checked against its names, all matched by name */
        classnames_part *p = emalloc((size_t)nin * sizeof *p);
        for (int k = 0; k < nin; k++) {
            int64_t from = k ? upto[k - 1] : 0;
            p[k] = (classnames_part){&names[k], (int32_t *)data[fc] + from, upto[k] - from, src[k]};
            classnames_check(&names[k], src[k], p[k].cls, p[k].n);
        }
        classnames_unify(&U, p, nin);
        free(p);
        if (own && U.present)
            classnames_set(own, &U);
    }
    npz_writer *w = npz_create(f, level);
    for (int i = 0; i < h->nfields; i++) {
        const stream_field *fl = &h->fields[i];
        int64_t shape[TENSOR_MAXDIM + 1] = {n};
        memcpy(shape + 1, fl->shape, (size_t)fl->ndim * sizeof *shape);
        if (i == fc && U.present)
            add_names(w, fl->name, &U, (const int32_t *)data[i], n, name);
        else
            check(npz_add(w, fl->name, descr(fl->dtype), fl->ndim + 1, shape, data[i], (size_t)n * item[i]), name);
    }
    char *json;
    size_t jn;
    FILE *m = open_memstream(&json, &jn);
    if (!m)
        die("out of memory");
    header_print_json(m, h, 1);
    fclose(m);
    size_t len;
    uint32_t *u = ucs4(json, jn, &len);
    char d[32];
    snprintf(d, sizeof d, "<U%zu", len ? len : 1);
    if (!len)
        u[0] = 0;
    check(npz_add(w, "header", d, 0, NULL, u, (len ? len : 1) * 4), name);
    for (int i = 0; i < h->nmeta; i++) {
        const stream_meta *mt = &h->meta[i];
        if (mt->type != META_TENSOR)
            continue;
        char key[256];
        snprintf(key, sizeof key, "meta/%s", mt->key);
        check(npz_add(w, key, descr(mt->t->dtype), mt->t->ndim, mt->t->shape, mt->t->data, tensor_nbytes(mt->t)),
              name);
    }
    check(npz_finish(w), name);
    if (out)
        atomic_commit(f);
    else
        close_stdout();
    free(json);
    free(u);
    for (int i = 0; i < h->nfields; i++)
        free(data[i]);
    for (int k = 0; k < nin; k++)
        classnames_free(&names[k]);
    classnames_free(&U);
    free(names);
    free(upto);
    free(src);
    record_free(&rec);
    stream_close(in);
    if (own)
        header_free(own);
    return 0;
}
