/* disentangle: how well single embedding dimensions pick out the values of the generative
 * attributes (fstat-ridgeway-2018 section 3); writes kind `disentangle` (formats/stream.md).
 *
 * An item's embedding is its mean mu [D] (a mixture: the average of its C component means); its
 * attributes are the digits of a digits stream, the class centres of L-shapes, or an integer
 * field (-a). The measure itself (per value: the AUC of its best dimension; per attribute: the
 * mean and the main dimension; the paper's pooled mean): lib/evaluation/disentangle.h. The paper does not
 * say how it treats the direction; it reports the distribution of per-value AUCs, not
 * per-attribute means (we give both: the per-value records and the pooled mean).
 */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "disentangle.h"
#include "json.h"
#include "match.h"
#include "stream.h"
#include "util.h"

static const char *usage =
    "usage: disentangle [-a FIELD] [--table] [--json FILE] [INPUT]\n"
    "  How well single embedding dimensions separate attribute values (AUC per value).\n";

typedef struct {
    const char *field;
    int table;
    const char *json;
    const char *input;
} options;

/* the attributes of n items: attribute a of item i has value raw[i * A + a] */
typedef struct {
    int A;
    char **name;
    const char *source;  /* "digits", "lshapes" or the -a field */
    double *raw;         /* (n, A) */
} attributes;

/* at->A names from printf's FMT with BASE and the attribute's number from FIRST: "%s[%d]"
 * gives field[0] .., "%s" the field's name alone (a scalar field) */
static void name_attributes(attributes *at, const char *fmt, const char *base, int first)
{
    at->name = ecalloc((size_t)(at->A ? at->A : 1), sizeof *at->name);
    for (int a = 0; a < at->A; a++) {
        char buf[STREAM_NAMELEN + 32];
        snprintf(buf, sizeof buf, fmt, base, a + first);
        at->name[a] = estrdup(buf);
    }
}

/* which attributes the stream has: -a FIELD, else digits, else the L-shapes' class centres */
static void choose_attributes(const stream_reader *in, const char *field, attributes *at, int *fi, int *ci,
                              const tensor **centres)
{
    const stream_header *h = in->header;
    *fi = *ci = -1;
    centres[0] = centres[1] = NULL;
    if (field) {
        *fi = stream_field_index(h, field);
        const stream_field *f = &h->fields[*fi];
        if (f->dtype != DT_U8 && f->dtype != DT_I32)
            die("%s: field '%s' is %s: -a needs an integer field (uint8 or int32)", in->name, field,
                dtype_name(f->dtype));
        at->A = (int)shape_numel(f->ndim, f->shape);
        at->source = field;
        name_attributes(at, f->ndim == 0 ? "%s" : "%s[%d]", field, 0);
    } else if (header_field_find(h, "digits") >= 0) {
        *fi = stream_field_need(in->name, h, "digits", DT_U8, 1, (int64_t[]){FIELD_ANY});
        at->A = (int)h->fields[*fi].shape[0];
        at->source = "digits";
        name_attributes(at, "%s%d", "digit", 1);
    } else if (header_tensor(h, "orientation_centres") && header_tensor(h, "hue_centres") &&
               header_field_find(h, "class") >= 0) {
        *ci = stream_field_need(in->name, h, "class", DT_I32, 0, NULL);
        centres[0] = header_tensor(h, "orientation_centres");
        centres[1] = header_tensor(h, "hue_centres");
        at->A = 2;
        at->source = "lshapes";
        at->name = ecalloc(2, sizeof *at->name);
        at->name[0] = estrdup("orientation");
        at->name[1] = estrdup("hue");
    } else
        die("%s: the input has no digits field (nor the class centres of L-shapes); give -a FIELD", in->name);
    if (at->A < 1)
        die("%s: field '%s' has no elements: no attributes", in->name, h->fields[*fi].name);
}

/* reads every record: the items' means (n, D) in *mean and their attributes */
static int64_t read_items(stream_reader *in, const char *field, attributes *at, int *Dout, double **mean)
{
    match_layout L = match_check_header(in->name, in->header); /* kind, mu [C, D] */
    int mi = L.mu, C = L.C, D = L.D;
    int fi, ci;
    const tensor *centres[2];
    choose_attributes(in, field, at, &fi, &ci, centres);
    int A = at->A;
    int64_t n = 0, cap = 0;
    double *m = NULL, *raw = NULL;
    stream_record rec = {0};
    while (stream_read(in, &rec)) {
        if (n == cap) {
            cap = cap ? 2 * cap : 4096;
            m = erealloc(m, (size_t)cap * D * sizeof *m);
            raw = erealloc(raw, (size_t)cap * A * sizeof *raw);
        }
        const float *mu = rec.t[mi].data;
        for (int d = 0; d < D; d++) {
            double s = 0;
            for (int c = 0; c < C; c++) {
                if (!isfinite(mu[c * D + d]))
                    die("%s: record %lld: mean %g is not finite", in->name, (long long)n, mu[c * D + d]);
                s += mu[c * D + d];
            }
            m[n * D + d] = s / C;
        }
        if (ci >= 0) {
            int32_t cls = *(const int32_t *)rec.t[ci].data;
            for (int a = 0; a < 2; a++) {
                if (cls < 0 || cls >= tensor_numel(centres[a]))
                    die("%s: record %lld: class %d has no %s centre (meta %s_centres holds %lld)", in->name,
                        (long long)n, (int)cls, at->name[a], at->name[a], (long long)tensor_numel(centres[a]));
                raw[n * A + a] = tensor_get(centres[a], cls);
                if (!isfinite(raw[n * A + a]))
                    die("%s: meta %s_centres[%d] is not finite", in->name, at->name[a], (int)cls);
            }
        } else
            for (int a = 0; a < A; a++)
                raw[n * A + a] = tensor_get(&rec.t[fi], a);
        n++;
    }
    record_free(&rec);
    if (!n)
        die("%s: the stream has no records (nothing to evaluate)", in->name);
    at->raw = raw;
    *Dout = D;
    *mean = m;
    return n;
}

/* a warning per attribute with one value, and the same joined by "; " for the header and JSON
 * (NULL when there is none) */
static char *one_value_note(const attributes *at, const disentangle_result *R)
{
    size_t notelen = 0;
    char *note = NULL;
    for (int a = 0; a < at->A; a++) {
        const disentangle_attr *r = &R->attr[a];
        if (r->G >= 2)
            continue;
        char buf[STREAM_NAMELEN + 160];
        snprintf(buf, sizeof buf, "%s has one value (%g) in all %lld items: its AUC is undefined", at->name[a],
                 r->value[0], (long long)R->n);
        warn("%s", buf);
        size_t bl = strlen(buf);
        note = erealloc(note, notelen + bl + 3);
        if (notelen)
            memcpy(note + notelen, "; ", 2), notelen += 2;
        memcpy(note + notelen, buf, bl + 1);
        notelen += bl;
    }
    return note;
}

static void print_json(FILE *f, const attributes *at, const disentangle_result *R, const char *note)
{
    json_writer w;
    json_report(&w, f, "disentangle");
    json_key_int(&w, "n", R->n);
    json_key_int(&w, "D", R->D);
    json_key_str(&w, "source", at->source);
    json_key_num(&w, "mean", R->mean);
    json_key_int(&w, "mean_values", R->nvalues);
    json_key(&w, "attributes");
    json_arr(&w);
    for (int a = 0; a < at->A; a++) {
        const disentangle_attr *r = &R->attr[a];
        json_obj(&w);
        json_key_str(&w, "name", at->name[a]);
        json_key_int(&w, "values", r->G);
        json_key_num(&w, "auc", r->mean);
        json_key(&w, "main_dim");
        if (r->G >= 2)
            json_int(&w, r->main_dim);
        else
            json_null(&w);
        json_key_int(&w, "main_count", r->G >= 2 ? r->main_count : 0);
        json_key_int(&w, "distinct_dims", r->G >= 2 ? r->distinct : 0);
        json_end(&w);
    }
    json_end(&w);
    json_key(&w, "shared");
    json_arr(&w);
    for (int a = 0; a < at->A; a++)
        for (int b = a + 1; b < at->A; b++)
            if (disentangle_shared(R, a, b)) {
                json_arr(&w);
                json_str(&w, at->name[a]);
                json_str(&w, at->name[b]);
                json_int(&w, R->attr[a].main_dim);
                json_end(&w);
            }
    json_end(&w);
    if (note)
        json_key_str(&w, "note", note);
    json_end(&w);
}

static void print_table(FILE *f, const attributes *at, const disentangle_result *R)
{
    int D = R->D;
    fprintf(f, "%-12s %6s %9s  %s\n", "attribute", "values", "auc", "best dimensions (dim:values)");
    int *cnt = ecalloc((size_t)D, sizeof *cnt);
    for (int a = 0; a < at->A; a++) {
        const disentangle_attr *r = &R->attr[a];
        if (r->G < 2) {
            fprintf(f, "%-12s %6d %9s  (one value, %g: no AUC)\n", at->name[a], r->G, "undefined", r->value[0]);
            continue;
        }
        fprintf(f, "%-12s %6d %9.6f ", at->name[a], r->G, r->mean);
        memset(cnt, 0, (size_t)D * sizeof *cnt);
        for (int g = 0; g < r->G; g++)
            cnt[r->best[g]]++;
        /* most frequent first, equal counts by dimension */
        for (int shown = 0; shown < r->distinct; shown++) {
            int bd = -1;
            for (int d = 0; d < D; d++)
                if (cnt[d] > 0 && (bd < 0 || cnt[d] > cnt[bd]))
                    bd = d;
            fprintf(f, " %d:%d", bd, cnt[bd]);
            cnt[bd] = 0;
        }
        fputc('\n', f);
    }
    free(cnt);
    if (R->nvalues)
        fprintf(f, "mean %.6f over %d value%s\n", R->mean, R->nvalues, R->nvalues == 1 ? "" : "s");
    else
        fprintf(f, "mean undefined (no attribute has two values)\n");
    int shared = 0;
    for (int a = 0; a < at->A; a++)
        for (int b = a + 1; b < at->A; b++)
            if (disentangle_shared(R, a, b)) {
                fprintf(f, "shared: %s and %s both have dimension %d as their main one\n", at->name[a], at->name[b],
                        R->attr[a].main_dim);
                shared++;
            }
    if (!shared)
        fprintf(f, "shared: none (every attribute has a main dimension of its own)\n");
}

/* the `disentangle` stream: the per-attribute numbers in the header, a record per value */
static void write_stream(const stream_reader *in, int argc, char **args, const attributes *at,
                         const disentangle_result *R, const char *note)
{
    int A = at->A, D = R->D;
    stream_header *h = header_new("disentangle", 0);
    header_provenance(h, argc, args);
    header_add_input(h, in->header);
    header_copy_meta(h, in->header);
    size_t nl = 1;
    for (int a = 0; a < A; a++)
        nl += strlen(at->name[a]) + 1;
    char *names = ecalloc(nl, 1); /* the names joined by commas */
    for (int a = 0; a < A; a++)
        strcat(strcat(names, a ? "," : ""), at->name[a]);
    header_set_str(h, "attributes", names);
    free(names);
    header_set_str(h, "attribute_source", at->source);
    /* per attribute: its mean AUC (float64), values, main dimension and its count, distinct dims */
    static const char *const key[5] = {"attribute_auc", "attribute_values", "attribute_main_dim",
                                       "attribute_main_count", "attribute_distinct_dims"};
    int64_t ashape[1] = {A};
    int shared = 0;
    for (int k = 0; k < 5; k++) {
        tensor *t = tensor_new(k ? DT_I32 : DT_F64, 1, ashape);
        for (int a = 0; a < A; a++) {
            const disentangle_attr *r = &R->attr[a];
            if (k == 0)
                ((double *)t->data)[a] = r->mean;
            else
                ((int32_t *)t->data)[a] = k == 1 ? r->G : k == 2 ? r->main_dim : k == 3 ? r->main_count : r->distinct;
            for (int b = a + 1; k == 0 && b < A; b++)
                shared += disentangle_shared(R, a, b);
        }
        header_set_tensor(h, key[k], t);
        tensor_free(t);
    }
    header_set_float(h, "auc_mean", R->mean);
    header_set_int(h, "auc_mean_values", R->nvalues);
    header_set_int(h, "shared_main_dims", shared);
    header_set_int(h, "items", R->n);
    if (note)
        header_set_str(h, "attribute_note", note);
    int64_t dshape[1] = {D};
    header_add_field(h, "attribute", DT_I32, 0, NULL);
    header_add_field(h, "value", DT_F64, 0, NULL);
    header_add_field(h, "n_pos", DT_I64, 0, NULL);
    header_add_field(h, "best_dim", DT_I32, 0, NULL);
    header_add_field(h, "auc", DT_F32, 0, NULL);
    header_add_field(h, "dim_auc", DT_F32, 1, dshape);
    stream_writer *w = stream_create(stdout, h);
    float *dim_auc = emalloc((size_t)D * sizeof *dim_auc);
    for (int a = 0; a < A; a++) {
        const disentangle_attr *r = &R->attr[a];
        for (int g = 0; g < r->G; g++) {
            for (int d = 0; d < D; d++)
                dim_auc[d] = (float)disentangle_dim_auc(R, a, g, d);
            int32_t ai = a, bd = r->best[g];
            float auc = (float)r->score[g];
            void *data[6] = {&ai, &r->value[g], &r->npos[g], &bd, &auc, dim_auc};
            stream_write_data(w, data, 0);
        }
    }
    free(dim_auc);
    stream_finish(w);
    header_free(h);
}

int main(int argc, char **argv)
{
    util_start(argc, argv, usage);
    char **args = emalloc((size_t)(argc + 1) * sizeof *args); /* before getopt permutes argv */
    memcpy(args, argv, (size_t)(argc + 1) * sizeof *args);
    options o = {0};
    enum { OPT_JSON = 256, OPT_TABLE };
    static const struct option lopts[] = {{"json", required_argument, 0, OPT_JSON},
                                          {"table", no_argument, 0, OPT_TABLE},
                                          {"text", no_argument, 0, OPT_TABLE},
                                          {"help", no_argument, 0, 'h'},
                                          {0, 0, 0, 0}};
    int c;
    while ((c = getopt_long(argc, argv, "a:h", lopts, NULL)) != -1) {
        switch (c) {
        case 'a':
            if (!*optarg)
                usage_die("-a: an empty field name");
            o.field = optarg;
            break;
        case OPT_JSON: o.json = optarg; break;
        case OPT_TABLE: o.table = 1; break;
        case 'h': usage_help();
        default: usage_bad_option(argv);
        }
    }
    if (argc - optind > 1)
        usage_die("at most one input");
    o.input = optind < argc ? argv[optind] : "-";
    /* the summary file exists (as a temp file) before any work: an unwritable path fails now */
    FILE *jf = o.json ? json_open(o.json, !o.table) : NULL;
    if (!o.table)
        stdout_not_terminal();

    stream_reader *in = stream_open_path(o.input);
    attributes at = {0};
    int D;
    double *mean;
    int64_t n = read_items(in, o.field, &at, &D, &mean);
    disentangle_result R;
    disentangle_measure(mean, n, D, at.raw, at.A, (const char *const *)at.name, &R);
    char *note = one_value_note(&at, &R);

    if (jf) {
        print_json(jf, &at, &R, note);
        if (jf != stdout)
            atomic_sync(jf);
    }
    if (!o.table)
        write_stream(in, argc, args, &at, &R, note);
    else if (jf != stdout) /* --json -: the JSON in the table's place */
        print_table(stdout, &at, &R);
    close_stdout();
    json_commit(jf);

    disentangle_free(&R);
    for (int a = 0; a < at.A; a++)
        free(at.name[a]);
    free(at.name);
    free(at.raw);
    free(mean);
    free(note);
    stream_close(in);
    free(args);
    return 0;
}
