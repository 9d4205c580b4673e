/* totsv: a stream's records as tab-separated text, one line per record (or per batch item), for
 * gnuplot, spreadsheets and quick looks. Tensor fields are flattened into columns named
 * field[i] (row-major); -f picks and orders the fields. In a stream whose classes are names (meta
 * class_names, formats/stream.md) the class fields (class, predicted, class1, class2) show the
 * names, a tab, newline, backslash or other control byte in one escaped (\t, \n, \\, \xNN).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "classnames.h"
#include "stream.h"
#include "util.h"

static const char *usage =
    "usage: totsv [-f FIELD,FIELD,...] [-n N] [FILE]\n"
    "  Prints a stream's records as TSV with one header line.\n";

/* the fields that hold classes, shown as their names when the stream names them */
static int is_class_field(const stream_field *f)
{
    static const char *const names[] = {"class", "predicted", "class1", "class2"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (!strcmp(f->name, names[i]))
            return f->dtype == DT_I32 && f->ndim == 0;
    return 0;
}

/* name i of N as one TSV cell */
static void put_name(const classnames *N, int64_t i)
{
    const unsigned char *s = (const unsigned char *)N->s[i];
    for (size_t j = 0; j < N->len[i]; j++) {
        unsigned char c = s[j];
        if (c == '\t' || c == '\n' || c == '\r' || c == '\\')
            printf("\\%c", c == '\t' ? 't' : c == '\n' ? 'n' : c == '\r' ? 'r' : '\\');
        else if (c < 0x20 || c == 0x7f)
            printf("\\x%02x", c);
        else
            putchar(c);
    }
}

int main(int argc, char **argv)
{
    util_start(argc, argv, usage);
    char *list = NULL;
    long maxn = -1;
    int c;
    static const struct option longs[] = {{"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    while ((c = getopt_long(argc, argv, "f:n:h", longs, NULL)) != -1) {
        switch (c) {
        case 'f': list = optarg; break;
        case 'n': maxn = parse_long("-n", optarg, 0, 1L << 62); break;
        case 'h': usage_help();
        default: usage_bad_option(argv);
        }
    }
    if (argc - optind > 1)
        usage_die("at most one input file");
    /* the names of -f, checked before any input is read: an empty name (",," or a comma at
     * either end) or more names than a stream has fields is misuse, never silently dropped */
    char *names[STREAM_MAXFIELDS], *buf = list ? estrdup(list) : NULL;
    int nnames = 0;
    if (list) {
        for (char *p = buf;;) {
            char *comma = strchr(p, ',');
            if (comma)
                *comma = 0;
            if (!*p)
                usage_die("-f: empty field name in '%s'", list);
            if (nnames == STREAM_MAXFIELDS)
                usage_die("-f: more than %d fields", STREAM_MAXFIELDS);
            names[nnames++] = p;
            if (!comma)
                break;
            p = comma + 1;
        }
    }
    stream_reader *in = stream_open_path(optind < argc ? argv[optind] : "-");
    const stream_header *h = in->header;
    int sel[STREAM_MAXFIELDS], ns = 0;
    if (list) {
        for (int k = 0; k < nnames; k++)
            sel[ns++] = stream_field_index(h, names[k]);
    } else
        for (int i = 0; i < h->nfields; i++)
            if (!(h->fields[i].dtype == DT_U8 && h->fields[i].ndim >= 2)) /* images: [H, W] or [C, H, W] */
                sel[ns++] = i;
    classnames N;
    classnames_read(&N, in->name, h);
    /* one plain header line, always (docs/cli.md) */
    for (int k = 0; k < ns; k++) {
        const stream_field *f = &h->fields[sel[k]];
        int64_t n = shape_numel(f->ndim, f->shape);
        for (int64_t i = 0; i < n; i++) {
            if (k || i)
                putchar('\t');
            if (f->ndim == 0)
                fputs(f->name, stdout);
            else
                printf("%s[%lld]", f->name, (long long)i);
        }
    }
    putchar('\n');
    stream_record rec = {0};
    long lines = 0;
    while ((maxn < 0 || lines < maxn) && stream_read(in, &rec)) {
        int64_t items = h->batched ? record_batch(&rec) : 1;
        for (int64_t it = 0; it < items && (maxn < 0 || lines < maxn); it++, lines++) {
            for (int k = 0; k < ns; k++) {
                const stream_field *f = &h->fields[sel[k]];
                const tensor *t = &rec.t[sel[k]];
                int64_t n = shape_numel(f->ndim, f->shape);
                for (int64_t i = 0; i < n; i++) {
                    if (k || i)
                        putchar('\t');
                    double v = tensor_get(t, it * n + i);
                    if (N.present && is_class_field(f) && v >= 0 && v < N.n)
                        put_name(&N, (int64_t)v);
                    else if (t->dtype == DT_F32 || t->dtype == DT_F64)
                        printf("%.9g", v);
                    else
                        printf("%.0f", v);
                }
            }
            putchar('\n');
        }
    }
    close_stdout();
    classnames_free(&N);
    free(buf);
    record_free(&rec);
    stream_close(in); /* frees the reader only: the rest of a stream cut short by -n is not read */
    return 0;
}
