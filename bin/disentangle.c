/* disentangle: how well single embedding dimensions pick out the values of the generative
 * attributes (fstat-ridgeway-2018 section 3); writes kind `disentangle` (formats/stream.md).
 *
 * The measure. An item's embedding is its mean mu [D] (a mixture: the average of its C component
 * means). For each attribute a, each of its values v and each dimension d: the AUC (Mann-Whitney,
 * ties counting 1/2; lib/metrics.h) of mu[d] at separating the items with a = v from the other
 * items, and the dimension's separation max(AUC, 1 - AUC) (the direction does not matter). The
 * value's score is that of its best dimension (equal separations: the lowest d), which is
 * reported. An attribute's score is the mean over its values; its main dimension is the one that
 * is best for the most values (ties: the lowest), and we count how many distinct dimensions are
 * best for some value and which attributes share their main dimension. The overall mean is the
 * paper's: over the non-redundant values, the pool of AUCs of its Figure 3 (an attribute of two
 * values counts once: both values have the same separation, as U_0 + U_1 = n_0 n_1). The paper
 * does not say how it treats the direction; it reports the distribution of per-value AUCs, not
 * per-attribute means (we give both: the per-value records and the pooled mean).
 *
 * Speed: one sort per dimension gives midranks, from which every value's AUC is its rank sum:
 * O(D n log n + D A n), not O(values x n log n).
 */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "metrics.h"
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

/* per attribute, its distinct values and each item's value index */
typedef struct {
    int G;               /* distinct values */
    double *value;       /* [G], ascending */
    int32_t *grp;        /* [n] */
    int64_t *npos;       /* [G] */
    double *u;           /* [G, D]: U of value g on dimension d */
    int32_t *best;       /* [G] */
    double *score;       /* [G]: the best separation */
    double mean;         /* over values; NaN when G < 2 */
    int main_dim, main_count, distinct;
} attr_result;

static int cmp_double(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;
    return (a > b) - (a < b);
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
        at->name = ecalloc((size_t)(at->A ? at->A : 1), sizeof *at->name);
        for (int a = 0; a < at->A; a++) {
            char buf[STREAM_NAMELEN + 32];
            if (f->ndim == 0)
                snprintf(buf, sizeof buf, "%s", field);
            else
                snprintf(buf, sizeof buf, "%s[%d]", field, a);
            at->name[a] = estrdup(buf);
        }
    } else if ((*fi = header_field_find(h, "digits")) >= 0) {
        const stream_field *f = &h->fields[*fi];
        if (f->dtype != DT_U8)
            die("%s: field 'digits' is %s, expected uint8 [N]", in->name, dtype_name(f->dtype));
        at->A = (int)shape_numel(f->ndim, f->shape);
        at->source = "digits";
        at->name = ecalloc((size_t)(at->A ? at->A : 1), sizeof *at->name);
        for (int a = 0; a < at->A; a++) {
            char buf[32];
            snprintf(buf, sizeof buf, "digit%d", a + 1);
            at->name[a] = estrdup(buf);
        }
    } else if (header_tensor(h, "orientation_centres") && header_tensor(h, "hue_centres") &&
               header_field_find(h, "class") >= 0) {
        *ci = stream_field_typed(h, "class", DT_I32);
        if (h->fields[*ci].ndim != 0)
            die("%s: field 'class' must be a scalar", in->name);
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
    const stream_header *h = in->header;
    if (strcmp(h->kind, "embeddings") && strcmp(h->kind, "eta"))
        die("%s: expected a stream of kind 'embeddings' (or 'eta'), got '%s' (from %s)", in->name, h->kind,
            h->program);
    if (h->batched)
        die("%s: batched embedding streams are not supported", in->name);
    int mi = stream_field_typed(h, "mu", DT_F32);
    const stream_field *mf = &h->fields[mi];
    if (mf->ndim != 2 || mf->shape[0] < 1 || mf->shape[1] < 1)
        die("%s: field 'mu' must have shape [C, D]", in->name);
    int C = (int)mf->shape[0], D = (int)mf->shape[1];
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

/* the distinct values of attribute a and each item's index among them */
static void group_values(const attributes *at, int a, int64_t n, attr_result *r)
{
    double *v = emalloc((size_t)n * sizeof *v);
    for (int64_t i = 0; i < n; i++)
        v[i] = at->raw[i * at->A + a];
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    int64_t G = 0;
    for (int64_t i = 0; i < n; i++)
        if (!G || v[i] != v[G - 1])
            v[G++] = v[i];
    if (G > INT32_MAX)
        die("attribute %s has %lld values", at->name[a], (long long)G);
    r->G = (int)G;
    r->value = erealloc(v, (size_t)G * sizeof *v);
    r->grp = emalloc((size_t)n * sizeof *r->grp);
    for (int64_t i = 0; i < n; i++) {
        double x = at->raw[i * at->A + a];
        int64_t lo = 0, hi = G - 1;
        while (lo < hi) {
            int64_t mid = (lo + hi) / 2;
            if (r->value[mid] < x)
                lo = mid + 1;
            else
                hi = mid;
        }
        r->grp[i] = (int32_t)lo;
    }
}

/* best dimension per value, the attribute's mean, main dimension and distinct best dimensions */
static void summarize_attribute(attr_result *r, int64_t n, int D)
{
    r->best = emalloc((size_t)r->G * sizeof *r->best);
    r->score = emalloc((size_t)r->G * sizeof *r->score);
    int *cnt = ecalloc((size_t)D, sizeof *cnt);
    double sum = 0;
    for (int g = 0; g < r->G; g++) {
        /* separations compared as max(U, pairs - U), exact: the two values of a two-valued
         * attribute get the same best dimension and score */
        double pairs = (double)r->npos[g] * (double)(n - r->npos[g]), bests = -1;
        int bd = -1;
        for (int d = 0; pairs > 0 && d < D; d++) {
            double u = r->u[(size_t)g * D + d], s = u > pairs - u ? u : pairs - u;
            if (s > bests)
                bests = s, bd = d;
        }
        r->best[g] = bd;
        r->score[g] = bd >= 0 ? bests / pairs : NAN;
        if (bd >= 0)
            cnt[bd]++;
        sum += r->score[g];
    }
    r->mean = r->G >= 2 ? sum / r->G : NAN;
    r->main_dim = -1;
    r->main_count = r->distinct = 0;
    for (int d = 0; d < D; d++) {
        r->distinct += cnt[d] > 0;
        if (cnt[d] > r->main_count)
            r->main_count = cnt[d], r->main_dim = d;
    }
    free(cnt);
}

static void print_json(FILE *f, int64_t n, int D, const attributes *at, const attr_result *res, double mean,
                       int nvalues, const char *note)
{
    fprintf(f, "{\"program\": \"disentangle\", \"n\": %lld, \"D\": %d, \"source\": ", (long long)n, D);
    json_string(f, at->source, strlen(at->source));
    fputs(", \"mean\": ", f);
    metrics_json_num(f, mean);
    fprintf(f, ", \"mean_values\": %d, \"attributes\": [", nvalues);
    for (int a = 0; a < at->A; a++) {
        const attr_result *r = &res[a];
        fputs(a ? ", {\"name\": " : "{\"name\": ", f);
        json_string(f, at->name[a], strlen(at->name[a]));
        fprintf(f, ", \"values\": %d, \"auc\": ", r->G);
        metrics_json_num(f, r->mean);
        if (r->G >= 2)
            fprintf(f, ", \"main_dim\": %d, \"main_count\": %d, \"distinct_dims\": %d}", r->main_dim,
                    r->main_count, r->distinct);
        else
            fputs(", \"main_dim\": null, \"main_count\": 0, \"distinct_dims\": 0}", f);
    }
    fputs("], \"shared\": [", f);
    int first = 1;
    for (int a = 0; a < at->A; a++)
        for (int b = a + 1; b < at->A; b++)
            if (res[a].G >= 2 && res[b].G >= 2 && res[a].main_dim == res[b].main_dim) {
                fputs(first ? "[" : ", [", f);
                json_string(f, at->name[a], strlen(at->name[a]));
                fputs(", ", f);
                json_string(f, at->name[b], strlen(at->name[b]));
                fprintf(f, ", %d]", res[a].main_dim);
                first = 0;
            }
    fputc(']', f);
    if (note) {
        fputs(", \"note\": ", f);
        json_string(f, note, strlen(note));
    }
    fputs("}\n", f);
}

static void print_table(FILE *f, int D, const attributes *at, const attr_result *res, double mean, int nvalues)
{
    fprintf(f, "%-12s %6s %9s  %s\n", "attribute", "values", "auc", "best dimensions (dim:values)");
    int *cnt = ecalloc((size_t)D, sizeof *cnt);
    for (int a = 0; a < at->A; a++) {
        const attr_result *r = &res[a];
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
    if (nvalues)
        fprintf(f, "mean %.6f over %d value%s\n", mean, nvalues, nvalues == 1 ? "" : "s");
    else
        fprintf(f, "mean undefined (no attribute has two values)\n");
    int shared = 0;
    for (int a = 0; a < at->A; a++)
        for (int b = a + 1; b < at->A; b++)
            if (res[a].G >= 2 && res[b].G >= 2 && res[a].main_dim == res[b].main_dim) {
                fprintf(f, "shared: %s and %s both have dimension %d as their main one\n", at->name[a], at->name[b],
                        res[a].main_dim);
                shared++;
            }
    if (!shared)
        fprintf(f, "shared: none (every attribute has a main dimension of its own)\n");
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
    int A = at.A;

    /* one sort per dimension; every value's U from its rank sum */
    attr_result *res = ecalloc((size_t)A, sizeof *res);
    for (int a = 0; a < A; a++) {
        group_values(&at, a, n, &res[a]);
        res[a].npos = emalloc((size_t)res[a].G * sizeof *res[a].npos);
        res[a].u = emalloc((size_t)res[a].G * D * sizeof *res[a].u);
    }
    double *col = emalloc((size_t)n * sizeof *col), *rank = emalloc((size_t)n * sizeof *rank);
    double *ug = NULL;
    int maxG = 0;
    for (int a = 0; a < A; a++)
        maxG = res[a].G > maxG ? res[a].G : maxG;
    ug = emalloc((size_t)maxG * sizeof *ug);
    for (int d = 0; d < D; d++) {
        for (int64_t i = 0; i < n; i++)
            col[i] = mean[i * D + d];
        metrics_auc_midranks(col, n, rank);
        for (int a = 0; a < A; a++) {
            metrics_auc_groups(rank, res[a].grp, n, res[a].G, res[a].npos, ug, NULL);
            for (int g = 0; g < res[a].G; g++)
                res[a].u[(size_t)g * D + d] = ug[g];
        }
    }
    free(ug);
    free(col);
    free(rank);

    /* per attribute, then the paper's pool: every value, a two-valued attribute once */
    double pooled = 0;
    int nvalues = 0;
    size_t notelen = 0;
    char *note = NULL;
    for (int a = 0; a < A; a++) {
        attr_result *r = &res[a];
        summarize_attribute(r, n, D);
        if (r->G >= 2) {
            int counted = r->G == 2 ? 1 : r->G;
            for (int g = 0; g < counted; g++)
                pooled += r->score[g];
            nvalues += counted;
            continue;
        }
        char buf[STREAM_NAMELEN + 160];
        snprintf(buf, sizeof buf, "%s has one value (%g) in all %lld items: its AUC is undefined", at.name[a],
                 r->value[0], (long long)n);
        warn("%s", buf);
        size_t bl = strlen(buf);
        note = erealloc(note, notelen + bl + 3);
        if (notelen)
            memcpy(note + notelen, "; ", 2), notelen += 2;
        memcpy(note + notelen, buf, bl + 1);
        notelen += bl;
    }
    double overall = nvalues ? pooled / nvalues : NAN;

    if (jf) {
        print_json(jf, n, D, &at, res, overall, nvalues, note);
        if (jf != stdout)
            atomic_sync(jf);
    }
    stream_header *h = NULL;
    if (o.table) {
        if (jf != stdout) /* --json -: the JSON in the table's place */
            print_table(stdout, D, &at, res, overall, nvalues);
    } else {
        h = header_new("disentangle", 0);
        header_provenance(h, argc, args);
        header_add_input(h, in->header);
        header_copy_meta(h, in->header);
        size_t nl = 1;
        for (int a = 0; a < A; a++)
            nl += strlen(at.name[a]) + 1;
        char *names = emalloc(nl);
        names[0] = 0;
        for (int a = 0; a < A; a++) {
            if (a)
                strcat(names, ",");
            strcat(names, at.name[a]);
        }
        header_set_str(h, "attributes", names);
        free(names);
        header_set_str(h, "attribute_source", at.source);
        int64_t ashape[1] = {A};
        tensor *t_auc = tensor_new(DT_F64, 1, ashape), *t_vals = tensor_new(DT_I32, 1, ashape);
        tensor *t_main = tensor_new(DT_I32, 1, ashape), *t_mc = tensor_new(DT_I32, 1, ashape);
        tensor *t_dist = tensor_new(DT_I32, 1, ashape);
        int shared = 0;
        for (int a = 0; a < A; a++) {
            ((double *)t_auc->data)[a] = res[a].mean;
            ((int32_t *)t_vals->data)[a] = res[a].G;
            ((int32_t *)t_main->data)[a] = res[a].main_dim;
            ((int32_t *)t_mc->data)[a] = res[a].main_count;
            ((int32_t *)t_dist->data)[a] = res[a].distinct;
            for (int b = a + 1; b < A; b++)
                shared += res[a].G >= 2 && res[b].G >= 2 && res[a].main_dim == res[b].main_dim;
        }
        header_set_tensor(h, "attribute_auc", t_auc);
        header_set_tensor(h, "attribute_values", t_vals);
        header_set_tensor(h, "attribute_main_dim", t_main);
        header_set_tensor(h, "attribute_main_count", t_mc);
        header_set_tensor(h, "attribute_distinct_dims", t_dist);
        tensor_free(t_auc);
        tensor_free(t_vals);
        tensor_free(t_main);
        tensor_free(t_mc);
        tensor_free(t_dist);
        header_set_float(h, "auc_mean", overall);
        header_set_int(h, "auc_mean_values", nvalues);
        header_set_int(h, "shared_main_dims", shared);
        header_set_int(h, "items", n);
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
            const attr_result *r = &res[a];
            for (int g = 0; g < r->G; g++) {
                double pairs = (double)r->npos[g] * (double)(n - r->npos[g]);
                for (int d = 0; d < D; d++)
                    dim_auc[d] = pairs > 0 ? (float)(r->u[(size_t)g * D + d] / pairs) : NAN;
                int32_t ai = a, bd = r->best[g];
                float auc = (float)r->score[g];
                void *data[6] = {&ai, &r->value[g], &r->npos[g], &bd, &auc, dim_auc};
                stream_write_data(w, data, 0);
            }
        }
        free(dim_auc);
        stream_finish(w);
    }
    close_stdout();
    json_commit(jf);

    for (int a = 0; a < A; a++) {
        free(res[a].value);
        free(res[a].grp);
        free(res[a].npos);
        free(res[a].u);
        free(res[a].best);
        free(res[a].score);
        free(at.name[a]);
    }
    free(res);
    free(at.name);
    free(at.raw);
    free(mean);
    free(note);
    header_free(h);
    stream_close(in);
    free(args);
    return 0;
}
