/* fromnpz: numpy arrays in, a stream out. Reads an .npz (np.savez) or one .npy and writes an
 * `embeddings` stream (mu, var, class, id, eta and any other per-item arrays) or an `images`
 * stream, one record per item as embed and mkdigits write them, so that every evaluator (knn,
 * pairscore, retrieve, fewshot, ...) reads a model trained elsewhere. Every array is checked and
 * converted before the header is written: a refusal leaves stdout empty.
 */
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "npy.h"
#include "stream.h"
#include "util.h"

static const char *usage =
    "usage: fromnpz [-k embeddings|images] [--mu NAME] [--var NAME] [--class NAME] [--id NAME]\n"
    "               [--eta NAME] [--image NAME] [--skip NAME,...] [--match-a A --match-b B]\n"
    "               [--range 1|255] [--dataset NAME] FILE.npz|FILE.npy|- > stream\n"
    "  A NumPy .npz or .npy as a hedge stream of embeddings or images.\n";

enum { R_MU, R_VAR, R_ETA, R_IMAGE, R_CLASS, R_ID, NROLES };
static const char *role_field[NROLES] = {"mu", "var", "eta", "image", "class", "id"};

typedef struct {
    int images;
    const char *name[NROLES]; /* given by option: must exist */
    const char *skip, *dataset, *input;
    int range;                /* 0 auto, 1 or 255 */
    int has_a, has_b;
    double match_a, match_b;
} options;

/* one array of the archive */
typedef struct {
    char *name;
    uint8_t *buf;             /* the inflated member (NULL for a bare .npy: the file buffer) */
    npy_array a;
    int role;                 /* -1: an extra */
    char *err;                /* why it cannot be read (a string array, ...): fatal only if used */
} array;

static const char *shape_of(const npy_array *a)
{
    static char s[128];
    npy_shape_str(a, s, sizeof s);
    return s;
}

/* refuses array x, "FILE: array 'mu' is int64 (3, 4): why", after freeing p (what was being
 * converted: nothing is left behind for LeakSanitizer) */
__attribute__((noreturn, format(printf, 4, 5))) static void refuse(const options *o, const array *x, void *p,
                                                                   const char *fmt, ...)
{
    char why[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    free(p);
    die("%s: array '%s' is %s %s: %s", o->input, x->name, npy_dtype_name(&x->a), shape_of(&x->a), why);
}
#define REFUSE(o, x, ...) refuse(o, x, NULL, __VA_ARGS__)
#define REFUSE_FREE(p, o, x, ...) refuse(o, x, p, __VA_ARGS__)

static int in_list(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; p && *p;) {
        const char *c = strchr(p, ',');
        size_t k = c ? (size_t)(c - p) : strlen(p);
        if (k == n && !memcmp(p, name, n))
            return 1;
        p = c ? c + 1 : NULL;
    }
    return 0;
}

static array *find(array *v, int nv, const char *name)
{
    for (int i = 0; i < nv; i++)
        if (!strcmp(v[i].name, name))
            return &v[i];
    return NULL;
}

/* the archive's arrays (or the .npy's one, named after the role it plays) */
static array *load(const options *o, uint8_t *buf, size_t len, int *count)
{
    array *v;
    const char *err;
    if (len >= 6 && !memcmp(buf, "\x93NUMPY", 6)) {
        v = ecalloc(1, sizeof *v);
        v->name = estrdup(o->name[o->images ? R_IMAGE : R_MU] ? o->name[o->images ? R_IMAGE : R_MU]
                                                               : role_field[o->images ? R_IMAGE : R_MU]);
        char what[STREAM_NAMELEN + 64];
        snprintf(what, sizeof what, "array '%s'", v->name);
        if ((err = npy_parse_any(buf, len, what, &v->a)))
            die("%s: %s", o->input, err);
        v->role = -1;
        *count = 1;
        return v;
    }
    if (!npy_is_zip(buf, len))
        die("%s: neither an .npz (zip) nor an .npy file", o->input);
    char **names;
    int n;
    if ((err = npy_zip_names(buf, len, &names, &n)))
        die("%s: %s", o->input, err);
    v = ecalloc(n ? n : 1, sizeof *v);
    for (int i = 0; i < n; i++) {
        size_t k = strlen(names[i]), mn;
        if (k < 5 || strcmp(names[i] + k - 4, ".npy"))
            die("%s: member '%s' is not an .npy array", o->input, names[i]);
        if ((err = npy_zip_member(buf, len, names[i], &v[i].buf, &mn)))
            die("%s: %s", o->input, err);
        names[i][k - 4] = 0;
        v[i].name = names[i];
        char what[300];
        snprintf(what, sizeof what, "array '%.255s'", v[i].name);
        if ((err = npy_parse_any(v[i].buf, mn, what, &v[i].a)))
            v[i].err = estrdup(err); /* tonpz's header, a string array: fine unless it is used */
        v[i].role = -1;
    }
    free(names);
    *count = n;
    return v;
}

/* the array that plays role r: the option's name (must exist), else the default names in turn */
static array *pick(const options *o, array *v, int nv, int r)
{
    array *x = NULL;
    if (o->name[r]) {
        if (!(x = find(v, nv, o->name[r]))) {
            char have[256] = "";
            for (int i = 0, k = 0; i < nv && k < (int)sizeof have; i++)
                k += snprintf(have + k, sizeof have - k, "%s'%s'", i ? ", " : "", v[i].name);
            die("%s: no array '%s' (--%s); the file holds %s", o->input, o->name[r], role_field[r], have);
        }
    } else if (r == R_CLASS) {
        if (!(x = find(v, nv, "class")) && !(x = find(v, nv, "labels")))
            x = find(v, nv, "label");
    } else
        x = find(v, nv, role_field[r]);
    if (x && x->err)
        die("%s: %s", o->input, x->err);
    if (x)
        x->role = r;
    return x;
}

/* the elements of x as float32, checked finite (and >= 0 for a variance) */
static float *to_f32(const options *o, const array *x, int nonneg)
{
    float *f = emalloc((size_t)(x->a.count ? x->a.count : 1) * sizeof *f);
    int fast = x->a.kind == 'f' && x->a.size == 4 && !x->a.big;
    if (fast)
        memcpy(f, x->a.data, (size_t)x->a.count * 4);
    for (int64_t i = 0; i < x->a.count; i++) {
        double d = fast ? f[i] : npy_get_f64(&x->a, i);
        float v = (float)d;
        if (!isfinite(v))
            REFUSE_FREE(f, o, x, "element %lld is %g%s: expected finite values", (long long)i, d,
                   isfinite(d) ? " (beyond float32)" : "");
        if (nonneg && v < 0)
            REFUSE_FREE(f, o, x, "element %lld is %g: a variance must be >= 0", (long long)i, d);
        f[i] = v;
    }
    return f;
}

/* an integer array as int64, each value in [lo, hi] */
static int64_t *to_i64(const options *o, const array *x, int64_t lo, int64_t hi, const char *what)
{
    if (x->a.kind == 'f')
        REFUSE(o, x, "expected integers (%s)", what);
    int64_t *v = emalloc((size_t)(x->a.count ? x->a.count : 1) * sizeof *v);
    for (int64_t i = 0; i < x->a.count; i++) {
        v[i] = npy_get(&x->a, i);
        if (v[i] < lo || v[i] > hi || (x->a.kind == 'u' && x->a.size == 8 && v[i] == INT64_MAX))
            REFUSE_FREE(v, o, x, "element %lld is %lld: expected %s", (long long)i, (long long)v[i], what);
    }
    return v;
}

/* the images as uint8 */
static uint8_t *to_u8(const options *o, const array *x)
{
    if (x->a.kind != 'f') {
        int64_t *v = to_i64(o, x, 0, 255, "pixel values 0..255");
        uint8_t *u = emalloc((size_t)(x->a.count ? x->a.count : 1));
        for (int64_t i = 0; i < x->a.count; i++)
            u[i] = (uint8_t)v[i];
        free(v);
        return u;
    }
    double lo = INFINITY, hi = -INFINITY;
    for (int64_t i = 0; i < x->a.count; i++) {
        double d = npy_get_f64(&x->a, i);
        if (!isfinite(d))
            REFUSE(o, x, "element %lld is %g: expected pixel values in [0, 1] or [0, 255]", (long long)i, d);
        lo = d < lo ? d : lo;
        hi = d > hi ? d : hi;
    }
    int scale = o->range ? o->range : hi <= 1 ? 1 : 255;
    if (x->a.count && (lo < 0 || hi > scale)) {
        if (o->range)
            REFUSE(o, x, "values from %g to %g: expected pixel values in [0, %d] (--range)", lo, hi, scale);
        REFUSE(o, x, "values from %g to %g: expected pixel values in [0, 1] or [0, 255]", lo, hi);
    }
    if (!o->range)
        warn("note: %s: array '%s' is %s in [%g, %g]: %s to uint8 (--range 1 or 255 to decide)", o->input,
             x->name, npy_dtype_name(&x->a), lo, hi, scale == 1 ? "scaled by 255 and rounded" : "rounded");
    uint8_t *u = emalloc((size_t)(x->a.count ? x->a.count : 1));
    for (int64_t i = 0; i < x->a.count; i++)
        u[i] = (uint8_t)lrint(npy_get_f64(&x->a, i) * (scale == 1 ? 255 : 1));
    return u;
}

/* one field of the output: its item shape and its values, all n items in one buffer */
typedef struct {
    const char *name;
    int dtype, ndim;
    int64_t shape[TENSOR_MAXDIM];
    void *data;
    size_t item;  /* bytes per item */
} column;

static void add_column(column *c, int *nc, const char *name, int dtype, int ndim, const int64_t *shape, void *data)
{
    if (*nc == STREAM_MAXFIELDS)
        die("more than %d fields: leave some arrays out with --skip", STREAM_MAXFIELDS);
    column *k = &c[(*nc)++];
    *k = (column){.name = name, .dtype = dtype, .ndim = ndim, .data = data};
    if (ndim) /* a scalar field passes shape NULL */
        memcpy(k->shape, shape, (size_t)ndim * sizeof *shape);
    k->item = (size_t)shape_numel(ndim, shape) * dtype_size(dtype);
}

/* an extra per-item array: bool/uint8 stay uint8, integers int32 or int64, floats float32 */
static void add_extra(const options *o, column *c, int *nc, const array *x)
{
    if (strlen(x->name) >= STREAM_NAMELEN || !strcmp(x->name, "end"))
        REFUSE(o, x, "not a field name (at most %d characters, not 'end'): --skip it", STREAM_NAMELEN - 1);
    if (x->a.ndim - 1 > TENSOR_MAXDIM)
        REFUSE(o, x, "expected at most %d dimensions after n", TENSOR_MAXDIM);
    int64_t n = x->a.count;
    if (x->a.kind == 'f') {
        add_column(c, nc, x->name, DT_F32, x->a.ndim - 1, x->a.shape + 1, to_f32(o, x, 0));
        return;
    }
    if (x->a.kind == 'b' || (x->a.kind == 'u' && x->a.size == 1)) {
        uint8_t *u = emalloc((size_t)(n ? n : 1));
        for (int64_t i = 0; i < n; i++)
            u[i] = (uint8_t)npy_get(&x->a, i);
        add_column(c, nc, x->name, DT_U8, x->a.ndim - 1, x->a.shape + 1, u);
        return;
    }
    int64_t *v = to_i64(o, x, INT64_MIN, INT64_MAX, "int64 values");
    int wide = 0;
    for (int64_t i = 0; i < n; i++)
        wide |= v[i] < INT32_MIN || v[i] > INT32_MAX;
    if (wide) {
        add_column(c, nc, x->name, DT_I64, x->a.ndim - 1, x->a.shape + 1, v);
        return;
    }
    int32_t *w = emalloc((size_t)(n ? n : 1) * sizeof *w);
    for (int64_t i = 0; i < n; i++)
        w[i] = (int32_t)v[i];
    free(v);
    add_column(c, nc, x->name, DT_I32, x->a.ndim - 1, x->a.shape + 1, w);
}

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    util_start(argc, argv, usage);
    options o = {0};
    enum { O_MU = 256, O_VAR, O_ETA, O_IMAGE, O_CLASS, O_ID, O_SKIP, O_A, O_B, O_RANGE, O_DATASET };
    static const struct option lopts[] = {
        {"mu", 1, 0, O_MU},       {"var", 1, 0, O_VAR},         {"eta", 1, 0, O_ETA},
        {"image", 1, 0, O_IMAGE}, {"class", 1, 0, O_CLASS},     {"id", 1, 0, O_ID},
        {"skip", 1, 0, O_SKIP},   {"match-a", 1, 0, O_A},       {"match-b", 1, 0, O_B},
        {"range", 1, 0, O_RANGE}, {"dataset", 1, 0, O_DATASET}, {"help", 0, 0, 'h'},
        {0, 0, 0, 0}};
    int c;
    while ((c = getopt_long(argc, argv, "k:h", lopts, NULL)) != -1) {
        switch (c) {
        case 'k':
            if (strcmp(optarg, "embeddings") && strcmp(optarg, "images"))
                usage_die("-k: '%s' is neither embeddings nor images", optarg);
            o.images = !strcmp(optarg, "images");
            break;
        case O_MU: case O_VAR: case O_ETA: case O_IMAGE: case O_CLASS: case O_ID:
            o.name[c - O_MU] = optarg;
            break;
        case O_SKIP: o.skip = optarg; break;
        case O_A: o.match_a = parse_double("--match-a", optarg, 1e-300, 1e300), o.has_a = 1; break;
        case O_B: o.match_b = parse_double("--match-b", optarg, -1e300, 1e300), o.has_b = 1; break;
        case O_RANGE:
            o.range = (int)parse_long("--range", optarg, 1, 255);
            if (o.range != 1 && o.range != 255)
                usage_die("--range: %s is neither 1 nor 255", optarg);
            break;
        case O_DATASET: o.dataset = optarg; break;
        case 'h': usage_help();
        default: usage_bad_option(argv);
        }
    }
    if (argc - optind != 1)
        usage_die(argc == optind ? "which file? (an .npz or .npy, or - for stdin)" : "one input file only");
    o.input = argv[optind];
    if (o.has_a != o.has_b)
        usage_die("--match-a and --match-b go together");
    if (o.images && (o.name[R_MU] || o.name[R_VAR] || o.name[R_ETA] || o.has_a))
        usage_die("-k images takes no --mu, --var, --eta or --match-a/-b");
    if (!o.images && (o.name[R_IMAGE] || o.range))
        usage_die("--image and --range are for -k images");
    stdout_not_terminal();

    uint8_t *buf;
    size_t len;
    const char *err = npy_load_file(o.input, &buf, &len);
    if (err)
        die("%s", err);
    int nv;
    array *v = load(&o, buf, len, &nv);
    int main_role = o.images ? R_IMAGE : R_MU;
    array *x[NROLES] = {0};
    for (int r = 0; r < NROLES; r++)
        if ((r == R_IMAGE) == (main_role == R_IMAGE) || r >= R_CLASS)
            x[r] = pick(&o, v, nv, r);
    const array *m = x[main_role];
    if (!m)
        die("%s: no array '%s' (name the %s with --%s)", o.input, role_field[main_role],
            o.images ? "images" : "embedding means", role_field[main_role]);
    /* the main array's shape gives n and the item shape */
    int64_t n = m->a.ndim ? m->a.shape[0] : 0, C = 1, D = 0;
    if (!o.images) {
        if (m->a.ndim != 2 && m->a.ndim != 3)
            REFUSE(&o, m, "expected the means, [n, D] or [n, C, D]");
        C = m->a.ndim == 3 ? m->a.shape[1] : 1;
        D = m->a.shape[m->a.ndim - 1];
        if (C < 1 || D < 1 || C > 1 << 20 || D > 1 << 20)
            REFUSE(&o, m, "expected C >= 1 components of D >= 1 dimensions");
    } else if (m->a.ndim != 3 && m->a.ndim != 4) {
        REFUSE(&o, m, "expected images, [n, H, W] or [n, C, H, W]");
    } else if (m->a.ndim == 4 && m->a.shape[3] <= 4 && m->a.shape[1] > 4) {
        REFUSE(&o, m, "expected channels first, [n, C, H, W] (np.moveaxis(x, -1, 1) makes it so)");
    }
    if (n < 1)
        REFUSE(&o, m, "expected at least one item");
    if (x[R_VAR] && (x[R_VAR]->a.ndim != m->a.ndim || memcmp(x[R_VAR]->a.shape, m->a.shape, m->a.ndim * 8)))
        REFUSE(&o, x[R_VAR], "expected the shape of '%s' %s", m->name, shape_of(&m->a));
    for (int r = R_ETA; r < NROLES; r++)
        if (r != R_IMAGE && x[r] && (x[r]->a.ndim != 1 || x[r]->a.shape[0] != n))
            REFUSE(&o, x[r], "expected one %s per item of '%s', [%lld]", role_field[r], m->name, (long long)n);

    /* the fields, converted and checked before anything is written */
    column col[STREAM_MAXFIELDS];
    int ncol = 0;
    int64_t cd[2] = {C, D};
    if (!o.images) {
        add_column(col, &ncol, "mu", DT_F32, 2, cd, to_f32(&o, m, 0));
        if (x[R_VAR])
            add_column(col, &ncol, "var", DT_F32, 2, cd, to_f32(&o, x[R_VAR], 1));
        if (x[R_ETA])
            add_column(col, &ncol, "eta", DT_F32, 0, NULL, to_f32(&o, x[R_ETA], 0));
    } else
        add_column(col, &ncol, "image", DT_U8, m->a.ndim - 1, m->a.shape + 1, to_u8(&o, m));
    int32_t *cls = NULL;
    if (x[R_CLASS]) {
        int64_t *v64 = to_i64(&o, x[R_CLASS], INT32_MIN, INT32_MAX, "int32 classes");
        cls = emalloc((size_t)n * sizeof *cls);
        for (int64_t i = 0; i < n; i++)
            cls[i] = (int32_t)v64[i];
        free(v64);
        add_column(col, &ncol, "class", DT_I32, 0, NULL, cls);
    }
    int64_t *ids;
    if (x[R_ID])
        ids = to_i64(&o, x[R_ID], INT64_MIN, INT64_MAX, "int64 ids");
    else {
        ids = emalloc((size_t)n * sizeof *ids);
        for (int64_t i = 0; i < n; i++)
            ids[i] = i;
    }
    add_column(col, &ncol, "id", DT_I64, 0, NULL, ids);
    for (int i = 0; i < nv; i++) {
        array *e = &v[i];
        if (e->role >= 0 || in_list(o.skip, e->name))
            continue;
        if (e->err) {
            warn("note: %s: %s: left out", o.input, e->err);
            continue;
        }
        if (e->a.ndim < 1 || e->a.shape[0] != n) {
            warn("note: %s: array '%s' %s %s has not one row per item of '%s' (%lld): left out", o.input,
                 e->name, npy_dtype_name(&e->a), shape_of(&e->a), m->name, (long long)n);
            continue;
        }
        for (int k = 0; k < ncol; k++)
            if (!strcmp(col[k].name, e->name))
                REFUSE(&o, e, "its name is that of a field made from another array: --skip it");
        add_extra(&o, col, &ncol, e);
    }

    stream_header *h = header_new(o.images ? "images" : "embeddings", 0);
    header_provenance(h, argc, argv);
    for (int k = 0; k < ncol; k++)
        header_add_field(h, col[k].name, col[k].dtype, col[k].ndim, col[k].shape);
    const char *base = strrchr(o.input, '/');
    header_set_str(h, "dataset", o.dataset ? o.dataset : base ? base + 1 : o.input);
    if (o.images) {
        int nd = m->a.ndim;
        if (nd == 4)
            header_set_int(h, "channels", m->a.shape[1]);
        header_set_int(h, "height", m->a.shape[nd - 2]);
        header_set_int(h, "width", m->a.shape[nd - 1]);
    } else {
        header_set_str(h, "model", x[R_VAR] ? "mog" : "point");
        header_set_int(h, "C", C);
        header_set_int(h, "D", D);
        if (o.has_a) {
            header_set_float(h, "match_a", o.match_a);
            header_set_float(h, "match_b", o.match_b);
        }
    }
    if (cls) {
        int32_t *s = emalloc((size_t)n * sizeof *s);
        memcpy(s, cls, (size_t)n * sizeof *s);
        qsort(s, (size_t)n, sizeof *s, cmp_i32);
        int64_t k = 0;
        for (int64_t i = 0; i < n; i++)
            if (!i || s[i] != s[k - 1])
                s[k++] = s[i];
        tensor *t = tensor_view(DT_I32, 1, &k, s);
        header_set_tensor(h, "classes", t);
        tensor_free(t);
        free(s);
    }

    stream_writer *w = stream_create(stdout, h);
    for (int64_t i = 0; i < n; i++) {
        void *d[STREAM_MAXFIELDS];
        for (int k = 0; k < ncol; k++)
            d[k] = (uint8_t *)col[k].data + i * col[k].item;
        stream_write_data(w, d, 0);
    }
    stream_finish(w);
    close_stdout();
    for (int k = 0; k < ncol; k++)
        free(col[k].data);
    for (int i = 0; i < nv; i++) {
        free(v[i].name);
        free(v[i].buf);
        free(v[i].err);
    }
    free(v);
    free(buf);
    header_free(h);
    return 0;
}
