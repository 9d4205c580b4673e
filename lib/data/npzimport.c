/* npzimport: numpy arrays as a stream (lib/data/npzimport.h) */
#include "npzimport.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "classnames.h"
#include "npy.h"
#include "util.h"

typedef npzimport_options options;
typedef npzimport_column column;
typedef struct npzimport_array array;

const char *const npzimport_role_names[NPZIMPORT_NROLES] = {"mu",    "var", "eta", "image", "features",
                                                             "class", "id",  "corrupt"};
const char *const npzimport_kind_names[NPZIMPORT_NKINDS] = {"embeddings", "images", "features"};
static const char *const *const role_field = npzimport_role_names;

/* each kind's main role (its first) and the others it takes, as bits */
#define ANY_KIND (1 << NPZIMPORT_CLASS | 1 << NPZIMPORT_ID | 1 << NPZIMPORT_CORRUPT)
static const struct {
    int main, roles;
} kind_roles[NPZIMPORT_NKINDS] = {
    [NPZIMPORT_TO_EMBEDDINGS] = {NPZIMPORT_MU, 1 << NPZIMPORT_MU | 1 << NPZIMPORT_VAR | 1 << NPZIMPORT_ETA | ANY_KIND},
    [NPZIMPORT_TO_IMAGES] = {NPZIMPORT_IMAGE, 1 << NPZIMPORT_IMAGE | ANY_KIND},
    /* (features: mu only when named, PFE's frozen mean beside the head's input) */
    [NPZIMPORT_TO_FEATURES] = {NPZIMPORT_FEATURES, 1 << NPZIMPORT_FEATURES | 1 << NPZIMPORT_MU | ANY_KIND},
};

int npzimport_takes(int kind, int r)
{
    return kind >= 0 && kind < NPZIMPORT_NKINDS && r >= 0 && r < NPZIMPORT_NROLES && kind_roles[kind].roles >> r & 1;
}

/* one array of the archive. Its header is read when it is looked at (a zip member: inflating
 * no more than the header), its data only when it is converted, and released after that. */
struct npzimport_array {
    char *name;               /* the member's name without .npy */
    char *label;              /* the name as messages show it (escaped: shown) */
    npy_zip_entry zip;        /* where it is in the archive; zip.data NULL for a bare .npy */
    int have_header;          /* a (or err) is set */
    npy_array a;              /* dtype and shape; a.data while it is converted */
    uint8_t *buf;             /* the inflated member while it is converted */
    int role;                 /* -1: not used; an NPZIMPORT_ role, or EXTRA */
    char *err;                /* why it cannot be read (a string array, ...): fatal only if used */
};
enum { EXTRA = NPZIMPORT_NROLES }; /* an array that becomes a field of its own name */

static const char *shape_of(const npy_array *a)
{
    static char s[128];
    npy_shape_str(a, s, sizeof s);
    return s;
}

/* "array 'mu'", as messages name x */
static const char *what(const array *x)
{
    static char w[300];
    snprintf(w, sizeof w, "array '%s'", x->label);
    return w;
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
    die("%s: array '%s' is %s %s: %s", o->input, x->label, npy_dtype_name(&x->a), shape_of(&x->a), why);
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

/* the archive's arrays from its central directory, none inflated (or the .npy's one, named
 * after the role it plays, read at once) */
static array *load(const options *o, const uint8_t *buf, size_t len, int *count)
{
    array *v;
    const char *err;
    if (len >= 6 && !memcmp(buf, "\x93NUMPY", 6)) {
        v = ecalloc(1, sizeof *v);
        int r = kind_roles[o->kind].main;
        v->name = estrdup(o->name[r] ? o->name[r] : role_field[r]);
        char sh[UTIL_SHOWN];
        v->label = estrdup(util_shown(sh, v->name, strlen(v->name)));
        if ((err = npy_parse_any(buf, len, what(v), &v->a)))
            die("%s: %s", o->input, err);
        v->have_header = 1;
        v->role = -1;
        *count = 1;
        return v;
    }
    if (!npy_is_zip(buf, len))
        die("%s: neither an .npz (zip) nor an .npy file", o->input);
    npy_zip_entry *z;
    int n;
    if ((err = npy_zip_entries(buf, len, &z, &n)))
        die("%s: %s", o->input, err);
    v = ecalloc(n ? n : 1, sizeof *v);
    for (int i = 0; i < n; i++) {
        size_t k = z[i].namelen;
        char sh[UTIL_SHOWN];
        if (memchr(z[i].name, 0, k))
            die("%s: member %d's name '%s' holds a NUL byte: expected a file name such as 'mu.npy'", o->input,
                i + 1, util_shown(sh, z[i].name, k));
        if (k < 5 || memcmp(z[i].name + k - 4, ".npy", 4))
            die("%s: member '%s' is not an .npy array: expected NAME.npy, as np.savez writes", o->input,
                util_shown(sh, z[i].name, k));
        v[i].name = emalloc(k - 3);
        memcpy(v[i].name, z[i].name, k - 4);
        v[i].name[k - 4] = 0;
        v[i].label = estrdup(util_shown(sh, v[i].name, k - 4));
        v[i].zip = z[i];
        v[i].role = -1;
    }
    free(z);
    *count = n;
    return v;
}

/* x's header, read once; what is wrong with it is kept in x->err */
static void read_header(array *x)
{
    if (x->have_header)
        return;
    x->have_header = 1;
    const char *err = npy_zip_header(&x->zip, what(x), &x->a);
    if (err)
        x->err = estrdup(err);
}

/* x's data: a zip member is inflated now, no further than its declared size (check_sizes has
 * made the directory's size the header's) */
static void fetch(const options *o, array *x)
{
    if (x->a.data)
        return;
    const char *err = npy_zip_inflate(&x->zip, what(x), &x->buf);
    if (!err)
        err = npy_parse_any(x->buf, x->zip.usize, what(x), &x->a);
    if (err)
        die("%s: %s", o->input, err);
}

/* x converted: its data released (the header stays) */
static void drop(array *x)
{
    if (!x->buf)
        return;
    free(x->buf);
    x->buf = NULL;
    x->a.data = NULL;
}

/* 1 when x holds strings ('<U', '|S'), not numbers */
static int is_text(const array *x) { return x->a.kind == 'U' || x->a.kind == 'S'; }

/* the array that plays role r: the option's name (must exist), else the default names in turn */
static array *pick(const options *o, array *v, int nv, int r)
{
    array *x = NULL;
    if (o->name[r]) {
        if (!(x = find(v, nv, o->name[r]))) {
            char have[256] = "";
            for (int i = 0, k = 0; i < nv && k < (int)sizeof have; i++)
                k += snprintf(have + k, sizeof have - k, "%s'%s'", i ? ", " : "", v[i].label);
            die("%s: no array '%s' (--%s); the file holds %s", o->input, o->name[r], role_field[r], have);
        }
    } else if (r == NPZIMPORT_CLASS) {
        if (!(x = find(v, nv, "class")) && !(x = find(v, nv, "labels")))
            x = find(v, nv, "label");
    } else
        x = find(v, nv, role_field[r]);
    if (!x)
        return NULL;
    read_header(x);
    if (x->err)
        die("%s: %s", o->input, x->err);
    if (is_text(x) && r != NPZIMPORT_CLASS)
        REFUSE(o, x, "expected numbers (integers, floats or bool): of the arrays only the labels (--class) may be "
               "names");
    x->role = r;
    return x;
}

/* the elements of x as float32, checked finite (and >= 0 for a variance); cols > 0: x is rows
 * of cols numbers, and a message names the row and the column, else the element */
static float *to_f32(const options *o, array *x, int nonneg, int64_t cols)
{
    fetch(o, x);
    float *f = emalloc((size_t)(x->a.count ? x->a.count : 1) * sizeof *f);
    int fast = x->a.kind == 'f' && x->a.size == 4 && !x->a.big;
    if (fast)
        memcpy(f, x->a.data, (size_t)x->a.count * 4);
    for (int64_t i = 0; i < x->a.count; i++) {
        double d = fast ? f[i] : npy_get_f64(&x->a, i);
        float v = (float)d;
        if (!isfinite(v)) {
            char at[64];
            if (cols > 0)
                snprintf(at, sizeof at, "row %lld, column %lld", (long long)(i / cols), (long long)(i % cols));
            else
                snprintf(at, sizeof at, "element %lld", (long long)i);
            REFUSE_FREE(f, o, x, "%s is %g%s: expected finite values", at, d, isfinite(d) ? " (beyond float32)" : "");
        }
        if (nonneg && v < 0)
            REFUSE_FREE(f, o, x, "element %lld is %g: a variance must be >= 0", (long long)i, d);
        f[i] = v;
    }
    drop(x);
    return f;
}

/* the integers of x (fetched) as int64, each value in [lo, hi] */
static int64_t *ints(const options *o, const array *x, int64_t lo, int64_t hi, const char *what)
{
    if (x->a.kind == 'f' || is_text(x))
        REFUSE(o, x, "expected integers (%s)", what);
    int64_t *v = emalloc((size_t)(x->a.count ? x->a.count : 1) * sizeof *v);
    int u64 = x->a.kind == 'u' && x->a.size == 8;
    for (int64_t i = 0; i < x->a.count; i++) {
        if (u64 && npy_get_u64(&x->a, i) > INT64_MAX) /* beyond int64: say the value itself */
            REFUSE_FREE(v, o, x, "element %lld is %llu: expected %s", (long long)i,
                        (unsigned long long)npy_get_u64(&x->a, i), what);
        v[i] = npy_get(&x->a, i);
        if (v[i] < lo || v[i] > hi)
            REFUSE_FREE(v, o, x, "element %lld is %lld: expected %s", (long long)i, (long long)v[i], what);
    }
    return v;
}

static int64_t *to_i64(const options *o, array *x, int64_t lo, int64_t hi, const char *what)
{
    fetch(o, x);
    int64_t *v = ints(o, x, lo, hi, what);
    drop(x);
    return v;
}

/* the images as uint8 */
static uint8_t *to_u8(const options *o, array *x)
{
    fetch(o, x);
    uint8_t *u;
    if (x->a.kind != 'f') {
        int64_t *v = ints(o, x, 0, 255, "pixel values 0..255");
        u = emalloc((size_t)(x->a.count ? x->a.count : 1));
        for (int64_t i = 0; i < x->a.count; i++)
            u[i] = (uint8_t)v[i];
        free(v);
        drop(x);
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
             x->label, npy_dtype_name(&x->a), lo, hi, scale == 1 ? "scaled by 255 and rounded" : "rounded");
    u = emalloc((size_t)(x->a.count ? x->a.count : 1));
    for (int64_t i = 0; i < x->a.count; i++)
        u[i] = (uint8_t)lrint(npy_get_f64(&x->a, i) * (scale == 1 ? 255 : 1));
    drop(x);
    return u;
}

/* the labels as classes: integers as they are (int32), names (strings) as their indices into the
 * sorted distinct names, left in N (formats/stream.md, "Class names"); floats are no classes */
static int32_t *to_classes(const options *o, array *x, classnames *N)
{
    memset(N, 0, sizeof *N);
    if (x->a.kind == 'f')
        REFUSE(o, x, "expected the classes as integers (any width) or as names (strings: '<U' or '|S'); a float is "
               "no class");
    int64_t n = x->a.count;
    int32_t *cls = emalloc((size_t)(n ? n : 1) * sizeof *cls);
    if (!is_text(x)) {
        int64_t *v64 = to_i64(o, x, INT32_MIN, INT32_MAX, "int32 classes");
        for (int64_t i = 0; i < n; i++)
            cls[i] = (int32_t)v64[i];
        free(v64);
        return cls;
    }
    fetch(o, x);
    /* each name's bytes one after the other (UTF-8 is never longer than UCS-4) */
    size_t cap = 1 << 16, used = 0, *off = emalloc((size_t)(n ? n : 1) * sizeof *off),
           *len = emalloc((size_t)(n ? n : 1) * sizeof *len);
    char *buf = emalloc(cap);
    for (int64_t i = 0; i < n; i++) {
        if (cap - used < (size_t)x->a.size)
            buf = erealloc(buf, cap = 2 * cap + (size_t)x->a.size);
        const char *err = npy_get_text(&x->a, i, buf + used, &len[i]);
        if (err) {
            free(off), free(len), free(buf);
            REFUSE_FREE(cls, o, x, "%s", err);
        }
        off[i] = used;
        used += len[i];
    }
    drop(x);
    char **s = emalloc((size_t)(n ? n : 1) * sizeof *s);
    for (int64_t i = 0; i < n; i++)
        s[i] = buf + off[i];
    classnames_from(N, o->input, what(x), n, s, len, x->a.kind == 'S', cls);
    free(s), free(off), free(len), free(buf);
    return cls;
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

/* an extra per-item array (pick_extras chose it): bool/uint8 stay uint8, integers int32 or
 * int64, floats float32 */
static void add_extra(const options *o, column *c, int *nc, array *x)
{
    int64_t n = x->a.count;
    if (x->a.kind == 'f') {
        add_column(c, nc, x->name, DT_F32, x->a.ndim - 1, x->a.shape + 1, to_f32(o, x, 0, 0));
        return;
    }
    fetch(o, x);
    if (x->a.kind == 'b' || (x->a.kind == 'u' && x->a.size == 1)) {
        uint8_t *u = emalloc((size_t)(n ? n : 1));
        for (int64_t i = 0; i < n; i++)
            u[i] = (uint8_t)npy_get(&x->a, i);
        drop(x);
        add_column(c, nc, x->name, DT_U8, x->a.ndim - 1, x->a.shape + 1, u);
        return;
    }
    int64_t *v = ints(o, x, INT64_MIN, INT64_MAX, "int64 values");
    drop(x);
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
    static const char *const main_what[NPZIMPORT_NKINDS] = {"embedding means", "images", "feature vectors"};
    int main_role = kind_roles[o->kind].main;
    for (int r = 0; r < NPZIMPORT_NROLES; r++)
        if (npzimport_takes(o->kind, r) && !(o->kind == NPZIMPORT_TO_FEATURES && r == NPZIMPORT_MU && !o->name[r]))
            x[r] = pick(o, im->v, im->nv, r);
    const array *m = x[main_role];
    if (!m)
        die("%s: no array '%s' (name the %s with --%s)", o->input, role_field[main_role], main_what[o->kind],
            role_field[main_role]);
    /* the main array's shape gives n and the item shape */
    int64_t n = m->a.ndim ? m->a.shape[0] : 0, C = 1, D = 0;
    if (o->kind == NPZIMPORT_TO_FEATURES) {
        if ((m->a.ndim != 2 && m->a.ndim != 3) || (m->a.ndim == 3 && m->a.shape[1] != 1))
            REFUSE(o, m, "expected feature vectors, [n, F] (or [n, 1, F], the mu of a C = 1 embeddings stream)");
        D = m->a.shape[m->a.ndim - 1];
        if (D < 1 || D > NPZIMPORT_MAX_CD)
            REFUSE(o, m, "expected vectors of F from 1 to %d numbers", NPZIMPORT_MAX_CD);
        const array *mu = x[NPZIMPORT_MU]; /* --mu: the frozen mean, [n, D] or [n, 1, D] */
        if (mu) {
            int64_t md = mu->a.ndim >= 2 ? mu->a.shape[mu->a.ndim - 1] : 0;
            if ((mu->a.ndim != 2 && mu->a.ndim != 3) || (mu->a.ndim == 3 && mu->a.shape[1] != 1) ||
                mu->a.shape[0] != n || md < 1 || D + md > NPZIMPORT_MAX_CD)
                REFUSE(o, mu,
                       "expected the frozen mean of each item of '%s', [%lld, D] or [%lld, 1, D], D from 1 to %lld",
                       m->label, (long long)n, (long long)n, (long long)(NPZIMPORT_MAX_CD - D));
            im->mean_dims = md;
        }
    } else if (o->kind == NPZIMPORT_TO_EMBEDDINGS) {
        if (m->a.ndim != 2 && m->a.ndim != 3)
            REFUSE(o, m, "expected the means, [n, D] or [n, C, D]");
        C = m->a.ndim == 3 ? m->a.shape[1] : 1;
        D = m->a.shape[m->a.ndim - 1];
        if (C < 1 || D < 1 || C > NPZIMPORT_MAX_CD || D > NPZIMPORT_MAX_CD)
            REFUSE(o, m, "expected C components of D dimensions, each from 1 to %d", NPZIMPORT_MAX_CD);
    } else if (m->a.ndim != 3 && m->a.ndim != 4) {
        REFUSE(o, m, "expected images, [n, H, W] or [n, C, H, W]");
    } else if (m->a.shape[m->a.ndim - 1] < 1 || m->a.shape[m->a.ndim - 2] < 1 || (m->a.ndim == 4 && m->a.shape[1] < 1)) {
        REFUSE(o, m, "expected images of at least 1 x 1 pixel%s", m->a.ndim == 4 ? " and 1 channel" : "");
    } else if (m->a.ndim == 4 && m->a.shape[3] <= 4 && m->a.shape[1] > 4) {
        REFUSE(o, m, "expected channels first, [n, C, H, W] (np.moveaxis(x, -1, 1) makes it so)");
    }
    if (n < 1)
        REFUSE(o, m, "expected at least one item");
    const array *var = x[NPZIMPORT_VAR];
    if (var && (var->a.ndim != m->a.ndim || memcmp(var->a.shape, m->a.shape, m->a.ndim * 8)))
        REFUSE(o, var, "expected the shape of '%s' %s", m->label, shape_of(&m->a));
    static const int per_item[] = {NPZIMPORT_ETA, NPZIMPORT_CLASS, NPZIMPORT_ID, NPZIMPORT_CORRUPT};
    for (size_t k = 0; k < sizeof per_item / sizeof *per_item; k++) {
        const array *y = x[per_item[k]];
        if (y && (y->a.ndim != 1 || y->a.shape[0] != n))
            REFUSE(o, y, "expected one %s per item of '%s', [%lld]", role_field[per_item[k]], m->label, (long long)n);
    }
    im->main = m;
    im->has_var = var != NULL;
    im->n = n;
    im->C = C;
    im->D = D;
}

/* 1 when name can be a field's: 1 to STREAM_NAMELEN - 1 bytes of printable UTF-8, not "end" (the
 * Python reader decodes names as UTF-8, totsv writes them into one header line) */
static int field_name_ok(const char *name)
{
    size_t n = strlen(name);
    if (!n || n >= STREAM_NAMELEN || !strcmp(name, "end"))
        return 0;
    for (size_t i = 0, k; i < n; i += k)
        if (!(k = util_text_len((const unsigned char *)name + i, n - i)))
            return 0;
    return 1;
}

/* 1 when a field of this name is made already: from a role's array, from an extra chosen
 * before, or id (the index, without an array) */
static int field_made(const npzimport *im, const char *name)
{
    if (!strcmp(name, "id"))
        return 1;
    for (int k = 0; k < im->nv; k++) {
        int r = im->v[k].role;
        if (r >= 0 && !strcmp(r == EXTRA ? im->v[k].name : role_field[r], name))
            return 1;
    }
    return 0;
}

/* the other arrays with one row per item, unless --skip'ped: each will be a field of its name
 * (role EXTRA). Arrays not of numbers (tonpz's header, a string) or without n rows are left out
 * with a note; numbers that cannot be read (float16, complex, Fortran order) are refused. */
static void pick_extras(npzimport *im, const options *o)
{
    const array *m = im->main;
    int nfields = 1; /* id, from its array or the index */
    for (int i = 0; i < im->nv; i++)
        nfields += im->v[i].role >= 0 && im->v[i].role != NPZIMPORT_ID;
    for (int i = 0; i < im->nv; i++) {
        array *e = &im->v[i];
        if (e->role >= 0 || in_list(o->skip, e->name))
            continue;
        read_header(e);
        int rows = e->a.ndim >= 1 && e->a.shape[0] == im->n;
        if (e->err) {
            if (rows && e->a.descr[0] && e->a.descr[1] && strchr("biufc", e->a.descr[1]))
                die("%s: %s: --skip it", o->input, e->err);
            warn("note: %s: %s: left out", o->input, e->err);
            continue;
        }
        if (is_text(e)) {
            warn("note: %s: array '%s' is %s %s: strings, and of the strings only the labels (--class) are read: "
                 "left out", o->input, e->label, npy_dtype_name(&e->a), shape_of(&e->a));
            continue;
        }
        if (!rows) {
            warn("note: %s: array '%s' %s %s has not one row per item of '%s' (%lld): left out", o->input,
                 e->label, npy_dtype_name(&e->a), shape_of(&e->a), m->label, (long long)im->n);
            continue;
        }
        if (!field_name_ok(e->name))
            REFUSE(o, e, "its name is not a field name (1 to %d bytes of UTF-8 text without control characters, "
                   "not 'end'): --skip it", STREAM_NAMELEN - 1);
        if (e->a.ndim - 1 > TENSOR_MAXDIM)
            REFUSE(o, e, "expected at most %d dimensions after n", TENSOR_MAXDIM);
        if (field_made(im, e->name))
            REFUSE(o, e, "its name is that of a field made from another array: --skip it");
        if (++nfields > STREAM_MAXFIELDS)
            die("%s: more than %d fields: leave some arrays out with --skip", o->input, STREAM_MAXFIELDS);
        e->role = EXTRA;
    }
}

/* the arrays used, as their headers declare them: each zip member exactly that large (else the
 * archive is corrupt), and all of them together at most NPZIMPORT_MAX_BYTES, checked before any
 * is inflated */
static void check_sizes(const npzimport *im, const options *o)
{
    uint64_t total = 0;
    for (int i = 0; i < im->nv; i++) {
        const array *x = &im->v[i];
        if (x->role < 0 || !x->zip.data) /* not used, or a bare .npy, read already */
            continue;
        if (x->zip.usize != x->a.filesize)
            REFUSE(o, x, "its zip entry inflates to %llu bytes, but its .npy header declares %zu (%zu of header, "
                   "%lld x %d of data): a corrupt archive", (unsigned long long)x->zip.usize, x->a.filesize,
                   x->a.offset, (long long)x->a.count, x->a.size);
        total += x->a.filesize;
        if (total > NPZIMPORT_MAX_BYTES)
            REFUSE(o, x, "with it the arrays used come to %llu bytes: expected at most %lld (2 GiB) in all",
                   (unsigned long long)total, (long long)NPZIMPORT_MAX_BYTES);
    }
}

/* --where: the items whose integer field o->where lies in [where_lo, where_hi], every column
 * compacted in place (im->cls with them); dies when the field is not there or not an integer
 * per item, or when no item is kept */
static void keep_where(npzimport *im, const options *o)
{
    const char *name = o->where; /* a field's name, or the array's that plays a role (labels: class) */
    for (int i = 0; i < im->nv; i++)
        if (im->v[i].role >= 0 && im->v[i].role < EXTRA && !strcmp(im->v[i].name, name))
            name = npzimport_role_names[im->v[i].role];
    column *f = NULL;
    for (int k = 0; k < im->ncol && !f; k++)
        if (!strcmp(im->col[k].name, name))
            f = &im->col[k];
    if (!f)
        die("%s: --where %s: no such field (class, id, corrupt or an integer array with one value per item)",
            o->input, o->where);
    if (f->ndim || (f->dtype != DT_I32 && f->dtype != DT_I64 && f->dtype != DT_U8))
        die("%s: --where %s: the field is %s with %d dimensions per item, expected one integer per item", o->input,
            o->where, dtype_name(f->dtype), f->ndim);
    int64_t kept = 0;
    for (int64_t i = 0; i < im->n; i++) {
        const void *p = (const uint8_t *)f->data + i * f->item;
        int64_t v = f->dtype == DT_I32   ? *(const int32_t *)p
                    : f->dtype == DT_I64 ? *(const int64_t *)p
                                         : *(const uint8_t *)p;
        if (v < o->where_lo || v > o->where_hi)
            continue;
        for (int k = 0; k < im->ncol; k++) /* f itself last read at i >= kept: in place is safe */
            memmove((uint8_t *)im->col[k].data + kept * im->col[k].item,
                    (uint8_t *)im->col[k].data + i * im->col[k].item, im->col[k].item);
        kept++;
    }
    if (!kept)
        die("%s: --where %s=%lld..%lld: none of the %lld items has it", o->input, o->where, (long long)o->where_lo,
            (long long)o->where_hi, (long long)im->n);
    im->n = kept;
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
    pick_extras(im, o);
    check_sizes(im, o);
    /* the fields, each array inflated only now, converted, checked and released, before
     * anything is written */
    int64_t n = im->n, cd[2] = {im->C, im->D};
    column *col = im->col;
    if (o->kind == NPZIMPORT_TO_FEATURES && im->mean_dims) { /* the head's input, then the frozen mean */
        int64_t F = im->D, md = im->mean_dims, w = F + md;
        float *h = to_f32(o, x[NPZIMPORT_FEATURES], 0, F), *mu = to_f32(o, x[NPZIMPORT_MU], 0, md);
        float *both = emalloc((size_t)n * w * sizeof *both);
        for (int64_t i = 0; i < n; i++) {
            memcpy(both + i * w, h + i * F, (size_t)F * sizeof *both);
            memcpy(both + i * w + F, mu + i * md, (size_t)md * sizeof *both);
        }
        free(h), free(mu);
        im->D = w;
        add_column(col, &im->ncol, "features", DT_F32, 1, &im->D, both);
    } else if (o->kind == NPZIMPORT_TO_FEATURES) {
        add_column(col, &im->ncol, "features", DT_F32, 1, &im->D, to_f32(o, x[NPZIMPORT_FEATURES], 0, im->D));
    } else if (o->kind == NPZIMPORT_TO_EMBEDDINGS) {
        add_column(col, &im->ncol, "mu", DT_F32, 2, cd, to_f32(o, x[NPZIMPORT_MU], 0, 0));
        if (x[NPZIMPORT_VAR])
            add_column(col, &im->ncol, "var", DT_F32, 2, cd, to_f32(o, x[NPZIMPORT_VAR], 1, 0));
        if (x[NPZIMPORT_ETA])
            add_column(col, &im->ncol, "eta", DT_F32, 0, NULL, to_f32(o, x[NPZIMPORT_ETA], 0, 0));
    } else {
        array *m = x[NPZIMPORT_IMAGE];
        add_column(col, &im->ncol, "image", DT_U8, m->a.ndim - 1, m->a.shape + 1, to_u8(o, m));
    }
    if (x[NPZIMPORT_CLASS]) {
        im->cls = to_classes(o, x[NPZIMPORT_CLASS], &im->names);
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
    if (x[NPZIMPORT_CORRUPT]) { /* a flag, as occlude's occluded: 0 or 1 */
        int64_t *v64 = to_i64(o, x[NPZIMPORT_CORRUPT], 0, 1, "0 or 1, 1 for an item of low quality");
        uint8_t *u = emalloc((size_t)n);
        for (int64_t i = 0; i < n; i++)
            u[i] = (uint8_t)v64[i];
        free(v64);
        add_column(col, &im->ncol, "corrupt", DT_U8, 0, NULL, u);
    }
    for (int i = 0; i < im->nv; i++)
        if (im->v[i].role == EXTRA)
            add_extra(o, im->col, &im->ncol, &im->v[i]);
    if (o->where)
        keep_where(im, o);
}
stream_header *npzimport_header(const npzimport *im, const npzimport_options *o, int argc, char **argv)
{
    const array *m = im->main;
    stream_header *h = header_new(npzimport_kind_names[o->kind], 0);
    header_provenance(h, argc, argv);
    for (int k = 0; k < im->ncol; k++)
        header_add_field(h, im->col[k].name, im->col[k].dtype, im->col[k].ndim, im->col[k].shape);
    const char *base = strrchr(o->input, '/');
    header_set_str(h, "dataset", o->dataset ? o->dataset : base ? base + 1 : o->input);
    if (o->kind == NPZIMPORT_TO_FEATURES) {
        header_set_int(h, "features", im->D);
        if (im->mean_dims)
            header_set_int(h, "mean_dims", im->mean_dims);
    } else if (o->kind == NPZIMPORT_TO_IMAGES) {
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
        if (im->names.present)
            classnames_set(h, &im->names);
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
        free(im->v[i].label);
        free(im->v[i].buf);
        free(im->v[i].err);
    }
    free(im->v);
    free(im->buf);
    classnames_free(&im->names);
    memset(im, 0, sizeof *im);
}
