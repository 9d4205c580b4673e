/* npzimport: numpy arrays as a stream (lib/npzimport.h) */
#include "npzimport.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npy.h"
#include "util.h"

typedef npzimport_options options;
typedef npzimport_column column;
typedef struct npzimport_array array;

static const char *role_field[NPZIMPORT_NROLES] = {"mu", "var", "eta", "image", "class", "id"};

/* one array of the archive */
struct npzimport_array {
    char *name;
    uint8_t *buf;             /* the inflated member (NULL for a bare .npy: the file buffer) */
    npy_array a;
    int role;                 /* -1: an extra */
    char *err;                /* why it cannot be read (a string array, ...): fatal only if used */
};

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
        int r = o->images ? NPZIMPORT_IMAGE : NPZIMPORT_MU;
        v->name = estrdup(o->name[r] ? o->name[r] : role_field[r]);
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
    } else if (r == NPZIMPORT_CLASS) {
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

/* the arrays of each role (x), their shapes checked against the main one's: n, C, D into im */
static void pick_roles(npzimport *im, const options *o, array **x)
{
    int main_role = o->images ? NPZIMPORT_IMAGE : NPZIMPORT_MU;
    for (int r = 0; r < NPZIMPORT_NROLES; r++)
        if ((r == NPZIMPORT_IMAGE) == (main_role == NPZIMPORT_IMAGE) || r >= NPZIMPORT_CLASS)
            x[r] = pick(o, im->v, im->nv, r);
    const array *m = x[main_role];
    if (!m)
        die("%s: no array '%s' (name the %s with --%s)", o->input, role_field[main_role],
            o->images ? "images" : "embedding means", role_field[main_role]);
    /* the main array's shape gives n and the item shape */
    int64_t n = m->a.ndim ? m->a.shape[0] : 0, C = 1, D = 0;
    if (!o->images) {
        if (m->a.ndim != 2 && m->a.ndim != 3)
            REFUSE(o, m, "expected the means, [n, D] or [n, C, D]");
        C = m->a.ndim == 3 ? m->a.shape[1] : 1;
        D = m->a.shape[m->a.ndim - 1];
        if (C < 1 || D < 1 || C > 1 << 20 || D > 1 << 20)
            REFUSE(o, m, "expected C >= 1 components of D >= 1 dimensions");
    } else if (m->a.ndim != 3 && m->a.ndim != 4) {
        REFUSE(o, m, "expected images, [n, H, W] or [n, C, H, W]");
    } else if (m->a.ndim == 4 && m->a.shape[3] <= 4 && m->a.shape[1] > 4) {
        REFUSE(o, m, "expected channels first, [n, C, H, W] (np.moveaxis(x, -1, 1) makes it so)");
    }
    if (n < 1)
        REFUSE(o, m, "expected at least one item");
    const array *var = x[NPZIMPORT_VAR];
    if (var && (var->a.ndim != m->a.ndim || memcmp(var->a.shape, m->a.shape, m->a.ndim * 8)))
        REFUSE(o, var, "expected the shape of '%s' %s", m->name, shape_of(&m->a));
    for (int r = NPZIMPORT_ETA; r < NPZIMPORT_NROLES; r++)
        if (r != NPZIMPORT_IMAGE && x[r] && (x[r]->a.ndim != 1 || x[r]->a.shape[0] != n))
            REFUSE(o, x[r], "expected one %s per item of '%s', [%lld]", role_field[r], m->name, (long long)n);
    im->main = m;
    im->has_var = var != NULL;
    im->n = n;
    im->C = C;
    im->D = D;
}

/* the other arrays with one row per item, as they are (add_extra) unless --skip'ped */
static void add_extras(npzimport *im, const options *o)
{
    const array *m = im->main;
    for (int i = 0; i < im->nv; i++) {
        array *e = &im->v[i];
        if (e->role >= 0 || in_list(o->skip, e->name))
            continue;
        if (e->err) {
            warn("note: %s: %s: left out", o->input, e->err);
            continue;
        }
        if (e->a.ndim < 1 || e->a.shape[0] != im->n) {
            warn("note: %s: array '%s' %s %s has not one row per item of '%s' (%lld): left out", o->input,
                 e->name, npy_dtype_name(&e->a), shape_of(&e->a), m->name, (long long)im->n);
            continue;
        }
        for (int k = 0; k < im->ncol; k++)
            if (!strcmp(im->col[k].name, e->name))
                REFUSE(o, e, "its name is that of a field made from another array: --skip it");
        add_extra(o, im->col, &im->ncol, e);
    }
}

void npzimport_read(npzimport *im, const npzimport_options *o)
{
    memset(im, 0, sizeof *im);
    size_t len;
    const char *err = npy_load_file(o->input, &im->buf, &len);
    if (err)
        die("%s", err);
    im->v = load(o, im->buf, len, &im->nv);
    array *x[NPZIMPORT_NROLES] = {0};
    pick_roles(im, o, x);
    /* the fields, converted and checked before anything is written */
    const array *m = im->main;
    int64_t n = im->n, cd[2] = {im->C, im->D};
    column *col = im->col;
    if (!o->images) {
        add_column(col, &im->ncol, "mu", DT_F32, 2, cd, to_f32(o, m, 0));
        if (x[NPZIMPORT_VAR])
            add_column(col, &im->ncol, "var", DT_F32, 2, cd, to_f32(o, x[NPZIMPORT_VAR], 1));
        if (x[NPZIMPORT_ETA])
            add_column(col, &im->ncol, "eta", DT_F32, 0, NULL, to_f32(o, x[NPZIMPORT_ETA], 0));
    } else
        add_column(col, &im->ncol, "image", DT_U8, m->a.ndim - 1, m->a.shape + 1, to_u8(o, m));
    if (x[NPZIMPORT_CLASS]) {
        int64_t *v64 = to_i64(o, x[NPZIMPORT_CLASS], INT32_MIN, INT32_MAX, "int32 classes");
        im->cls = emalloc((size_t)n * sizeof *im->cls);
        for (int64_t i = 0; i < n; i++)
            im->cls[i] = (int32_t)v64[i];
        free(v64);
        add_column(col, &im->ncol, "class", DT_I32, 0, NULL, im->cls);
    }
    int64_t *ids;
    if (x[NPZIMPORT_ID])
        ids = to_i64(o, x[NPZIMPORT_ID], INT64_MIN, INT64_MAX, "int64 ids");
    else {
        ids = emalloc((size_t)n * sizeof *ids);
        for (int64_t i = 0; i < n; i++)
            ids[i] = i;
    }
    add_column(col, &im->ncol, "id", DT_I64, 0, NULL, ids);
    add_extras(im, o);
}

stream_header *npzimport_header(const npzimport *im, const npzimport_options *o, int argc, char **argv)
{
    const array *m = im->main;
    stream_header *h = header_new(o->images ? "images" : "embeddings", 0);
    header_provenance(h, argc, argv);
    for (int k = 0; k < im->ncol; k++)
        header_add_field(h, im->col[k].name, im->col[k].dtype, im->col[k].ndim, im->col[k].shape);
    const char *base = strrchr(o->input, '/');
    header_set_str(h, "dataset", o->dataset ? o->dataset : base ? base + 1 : o->input);
    if (o->images) {
        int nd = m->a.ndim;
        if (nd == 4)
            header_set_int(h, "channels", m->a.shape[1]);
        header_set_int(h, "height", m->a.shape[nd - 2]);
        header_set_int(h, "width", m->a.shape[nd - 1]);
    } else {
        header_set_str(h, "model", im->has_var ? "mog" : "point");
        header_set_int(h, "C", im->C);
        header_set_int(h, "D", im->D);
        if (o->has_a) {
            header_set_float(h, "match_a", o->match_a);
            header_set_float(h, "match_b", o->match_b);
        }
    }
    if (im->cls) { /* the distinct classes, ascending */
        int64_t n = im->n;
        int32_t *s = emalloc((size_t)n * sizeof *s);
        memcpy(s, im->cls, (size_t)n * sizeof *s);
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
    return h;
}

void npzimport_write(const npzimport *im, stream_writer *w)
{
    for (int64_t i = 0; i < im->n; i++) {
        void *d[STREAM_MAXFIELDS];
        for (int k = 0; k < im->ncol; k++)
            d[k] = (uint8_t *)im->col[k].data + i * im->col[k].item;
        stream_write_data(w, d, 0);
    }
}

void npzimport_free(npzimport *im)
{
    for (int k = 0; k < im->ncol; k++)
        free(im->col[k].data);
    for (int i = 0; i < im->nv; i++) {
        free(im->v[i].name);
        free(im->v[i].buf);
        free(im->v[i].err);
    }
    free(im->v);
    free(im->buf);
    memset(im, 0, sizeof *im);
}
