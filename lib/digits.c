/* digits.c: see digits.h. */
#include "digits.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "util.h"

static const char *split_names[] = {"train", "test-seen", "test-unseen", "val"};

const char *digits_split_name(int split) { return split_names[split]; }

int digits_split_parse(const char *s)
{
    for (int i = 0; i < (int)(sizeof split_names / sizeof split_names[0]); i++)
        if (!strcmp(s, split_names[i]))
            return i;
    return -1;
}

int64_t digits_nclasses(int N)
{
    int64_t n = 1;
    for (int i = 0; i < N; i++)
        n *= 10;
    return n;
}

int digits_digit(int32_t c, int N, int k)
{
    for (int i = N - 1; i > k; i--)
        c /= 10;
    return c % 10;
}

int64_t digits_class_order(int N, uint64_t class_seed, int32_t *order)
{
    int64_t n = digits_nclasses(N);
    for (int64_t i = 0; i < n; i++)
        order[i] = (int32_t)i;
    rng r;
    rng_init(&r, class_seed, RNG_STREAM('c', 'l', 's', N));
    rng_shuffle_i32(&r, order, n);
    return n * 7 / 10;
}

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

static int32_t *sorted_copy(const int32_t *a, int64_t n)
{
    int32_t *c = emalloc(n * sizeof *c);
    memcpy(c, a, n * sizeof *c);
    qsort(c, n, sizeof *c, cmp_i32);
    return c;
}

const char *digits_plan_make(digits_plan *p, int N, int split, int64_t total, int64_t per_class,
                             uint64_t class_seed)
{
    static char msg[160];
    memset(p, 0, sizeof *p);
    p->N = N;
    p->split = split;
    int64_t n10 = digits_nclasses(N);
    int32_t *order = emalloc(n10 * sizeof *order);
    p->nseen = digits_class_order(N, class_seed, order);
    p->seen = sorted_copy(order, p->nseen);
    /* the split's classes, in the class-seed order */
    const int32_t *cls = split == DIGITS_TEST_UNSEEN ? order + p->nseen : order;
    int64_t ncls = split == DIGITS_TEST_UNSEEN ? n10 - p->nseen : p->nseen;

    if (per_class > 0 && total <= 0)
        total = per_class * ncls;
    if (total <= 0)
        total = split == DIGITS_TRAIN ? DIGITS_TRAIN_TOTAL : DIGITS_TEST_TOTAL;
    if (per_class <= 0) {
        per_class = total / ncls;
        if (per_class < DIGITS_MIN_PER_CLASS)
            per_class = DIGITS_MIN_PER_CLASS;
    }
    int64_t m = total / per_class;
    if (m > ncls)
        m = ncls;
    if (m < 1) {
        snprintf(msg, sizeof msg,
                 "%lld images are fewer than one class of %lld (lower --per-class or raise -n)",
                 (long long)total, (long long)per_class);
        free(order);
        digits_plan_free(p);
        return msg;
    }
    p->per_class = per_class;
    p->nclasses = m;
    p->classes = sorted_copy(cls, m);
    free(order);
    return NULL;
}

void digits_plan_free(digits_plan *p)
{
    free(p->classes);
    free(p->seen);
    memset(p, 0, sizeof *p);
}

const char *digits_draw_sources(const digits_plan *p, const uint8_t *labels, int64_t nlabels,
                                uint64_t seed, int32_t *src)
{
    static char msg[96];
    /* the indices of each label's digits, in file order */
    int64_t count[10] = {0};
    for (int64_t i = 0; i < nlabels; i++)
        count[labels[i]]++;
    int32_t *byl[10], *work = emalloc((nlabels ? nlabels : 1) * sizeof *work);
    int64_t fill[10] = {0};
    for (int d = 0; d < 10; d++)
        byl[d] = emalloc((count[d] ? count[d] : 1) * sizeof *byl[d]);
    for (int64_t i = 0; i < nlabels; i++)
        byl[labels[i]][fill[labels[i]]++] = (int32_t)i;

    const char *err = NULL;
    const int N = p->N;
    for (int64_t c = 0; c < p->nclasses && !err; c++)
        for (int k = 0; k < N; k++) {
            int d = digits_digit(p->classes[c], N, k);
            int64_t n = count[d];
            if (n == 0) {
                snprintf(msg, sizeof msg, "no digit with label %d in the MNIST data", d);
                err = msg;
                break;
            }
            /* a forward Fisher-Yates, one step per draw: work[0..i) are the draws so far of the
             * current permutation; a used-up permutation starts afresh */
            memcpy(work, byl[d], n * sizeof *work);
            rng r;
            rng_init(&r, seed, RNG_STREAM('s', 'r', 'c', k) ^ (uint64_t)p->classes[c]);
            int64_t i = 0;
            int32_t *out = src + c * p->per_class * N + k;
            for (int64_t j = 0; j < p->per_class; j++) {
                if (i == n)
                    i = 0;
                int64_t t = i + (int64_t)rng_below(&r, (uint64_t)(n - i));
                int32_t v = work[t];
                work[t] = work[i];
                work[i++] = v;
                out[j * N] = v;
            }
        }
    for (int d = 0; d < 10; d++)
        free(byl[d]);
    free(work);
    return err;
}

void digits_compose(uint8_t *image, int N, const uint8_t *const *cells)
{
    const int W = DIGITS_SIDE * N;
    for (int row = 0; row < DIGITS_SIDE; row++)
        for (int k = 0; k < N; k++)
            memcpy(image + row * W + k * DIGITS_SIDE, cells[k] + row * DIGITS_SIDE, DIGITS_SIDE);
}

void digits_occlusion_draw(rng *r, double p, int N, digits_patch *patch)
{
    for (int k = 0; k < N; k++) {
        double u = rng_uniform(r);
        int L = (int)rng_below(r, DIGITS_SIDE + 1);
        int x = (int)rng_below(r, DIGITS_SIDE + 1 - L);
        int y = (int)rng_below(r, DIGITS_SIDE + 1 - L);
        patch[k].occluded = u < p;
        patch[k].x = patch[k].occluded ? x : 0;
        patch[k].y = patch[k].occluded ? y : 0;
        patch[k].L = patch[k].occluded ? L : 0;
    }
}

void digits_occlude(uint8_t *image, int N, int k, const digits_patch *patch)
{
    const int W = DIGITS_SIDE * N;
    for (int row = patch->y; row < patch->y + patch->L; row++)
        memset(image + row * W + k * DIGITS_SIDE + patch->x, 0, patch->L);
}

/* --- the generator's image ids: .npy and .npz (zip) read from memory ------------------------ */

#define IDS_MAX_BYTES (1LL << 30)   /* a file or member larger than 1 GiB is refused */
#define IDS_MAX_COMPOSITES 20000000LL /* mkdigits' own limit */

static char ids_msg[400];

__attribute__((format(printf, 1, 2))) static const char *ids_fail(const char *fmt, ...)
{
    char tmp[sizeof ids_msg];   /* the arguments may point into ids_msg */
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    memcpy(ids_msg, tmp, sizeof ids_msg);
    return ids_msg;
}

static uint32_t rd16(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8; }
static uint32_t rd32(const uint8_t *p) { return rd16(p) | rd16(p + 2) << 16; }
static uint64_t rd64(const uint8_t *p) { return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32; }

/* one .npy array of integers: the header's dtype and shape, and where its data starts */
typedef struct {
    char descr[16];
    int big, is_unsigned, size;   /* byte order, signedness and bytes of an element */
    int ndim;
    int64_t shape[8];
    int64_t count;                /* elements */
    const uint8_t *data;
} npy_array;

typedef struct {
    const char *p, *e;
} cursor;

static void cur_ws(cursor *c)
{
    while (c->p < c->e && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r'))
        c->p++;
}

static int cur_eat(cursor *c, char ch)
{
    cur_ws(c);
    if (c->p < c->e && *c->p == ch) {
        c->p++;
        return 1;
    }
    return 0;
}

static int cur_word(cursor *c, const char *w)
{
    size_t n = strlen(w);
    cur_ws(c);
    if ((size_t)(c->e - c->p) >= n && !memcmp(c->p, w, n)) {
        c->p += n;
        return 1;
    }
    return 0;
}

/* a Python string literal without escapes, 'x' or "x" */
static int cur_string(cursor *c, char *out, size_t size)
{
    cur_ws(c);
    if (c->p >= c->e || (*c->p != '\'' && *c->p != '"'))
        return 0;
    char q = *c->p++;
    size_t n = 0;
    for (; c->p < c->e && *c->p != q; c->p++) {
        if (*c->p == '\\' || n + 1 >= size)
            return 0;
        out[n++] = *c->p;
    }
    if (c->p >= c->e)
        return 0;
    c->p++;
    out[n] = 0;
    return 1;
}

/* a non-negative integer (Python 2 may have written a long: 100L) */
static int cur_int(cursor *c, int64_t *v)
{
    cur_ws(c);
    if (c->p >= c->e || *c->p < '0' || *c->p > '9')
        return 0;
    int64_t x = 0;
    for (; c->p < c->e && *c->p >= '0' && *c->p <= '9'; c->p++) {
        if (x > (INT64_MAX - 9) / 10)
            return 0;
        x = x * 10 + (*c->p - '0');
    }
    if (c->p < c->e && *c->p == 'L')
        c->p++;
    *v = x;
    return 1;
}

static void shape_str(const npy_array *a, char *out, size_t size)
{
    int n = snprintf(out, size, "(");
    for (int i = 0; i < a->ndim && n < (int)size; i++)
        n += snprintf(out + n, size - n, "%s%lld", i ? ", " : "", (long long)a->shape[i]);
    if (n < (int)size)
        snprintf(out + n, size - n, a->ndim == 1 ? ",)" : ")");
}

/* the header dict: {'descr': '<i8', 'fortran_order': False, 'shape': (2, 3), } */
static const char *npy_dict(cursor *c, npy_array *a, const char *name)
{
    int have_descr = 0, have_order = 0, have_shape = 0;
    if (!cur_eat(c, '{'))
        return ids_fail("%s: the .npy header is not a dict", name);
    while (!cur_eat(c, '}')) {
        char key[32];
        if (!cur_string(c, key, sizeof key) || !cur_eat(c, ':'))
            return ids_fail("%s: unreadable .npy header", name);
        if (!strcmp(key, "descr")) {
            if (!cur_string(c, a->descr, sizeof a->descr))
                return ids_fail("%s: dtype is not an integer type (a structured or unknown dtype)", name);
            have_descr = 1;
        } else if (!strcmp(key, "fortran_order")) {
            if (cur_word(c, "True"))
                return ids_fail("%s: fortran_order is True: only C-order arrays are read "
                                "(save np.ascontiguousarray(a))", name);
            if (!cur_word(c, "False"))
                return ids_fail("%s: unreadable fortran_order in the .npy header", name);
            have_order = 1;
        } else if (!strcmp(key, "shape")) {
            if (!cur_eat(c, '('))
                return ids_fail("%s: unreadable shape in the .npy header", name);
            a->ndim = 0;
            while (!cur_eat(c, ')')) {
                if (a->ndim == 8 || !cur_int(c, &a->shape[a->ndim++]))
                    return ids_fail("%s: unreadable shape in the .npy header", name);
                if (!cur_eat(c, ',')) {
                    if (!cur_eat(c, ')'))
                        return ids_fail("%s: unreadable shape in the .npy header", name);
                    break;
                }
            }
            have_shape = 1;
        } else {
            return ids_fail("%s: unknown key '%s' in the .npy header", name, key);
        }
        if (!cur_eat(c, ',')) {
            if (!cur_eat(c, '}'))
                return ids_fail("%s: unreadable .npy header", name);
            break;
        }
    }
    cur_ws(c);
    if (c->p != c->e)
        return ids_fail("%s: unreadable .npy header (text after the dict)", name);
    if (!have_descr || !have_order || !have_shape)
        return ids_fail("%s: the .npy header lacks '%s'", name,
                        !have_descr ? "descr" : !have_order ? "fortran_order" : "shape");
    return NULL;
}

/* b[0..n) is one .npy file; name is for messages */
static const char *npy_parse(const uint8_t *b, size_t n, const char *name, npy_array *a)
{
    memset(a, 0, sizeof *a);
    if (n < 10 || memcmp(b, "\x93NUMPY", 6))
        return ids_fail("%s: not an .npy file (no \\x93NUMPY magic)", name);
    int major = b[6];
    if (major < 1 || major > 3)
        return ids_fail("%s: .npy format version %d.%d is not known (1.0 to 3.0 are)", name, major, b[7]);
    size_t start = major == 1 ? 10 : 12;
    if (n < start)
        return ids_fail("%s: truncated .npy header", name);
    size_t hlen = major == 1 ? rd16(b + 8) : rd32(b + 8);
    if (hlen > n - start)
        return ids_fail("%s: truncated .npy header (%zu bytes announced, %zu left)", name, hlen, n - start);
    cursor c = {(const char *)b + start, (const char *)b + start + hlen};
    const char *err = npy_dict(&c, a, name);
    if (err)
        return err;
    const char *d = a->descr;
    int size = d[0] && d[1] ? atoi(d + 2) : 0;
    if (!(d[0] == '<' || d[0] == '>' || d[0] == '|') || !(d[1] == 'i' || d[1] == 'u') ||
        !(size == 1 || size == 2 || size == 4 || size == 8) || strlen(d) != 3 || (d[0] == '|' && size != 1))
        return ids_fail("%s: dtype '%s' is not an integer type (the generator writes '<i8'; "
                        "i1..i8 and u1..u8 are read)", name, d);
    a->big = d[0] == '>';
    a->is_unsigned = d[1] == 'u';
    a->size = size;
    a->count = 1;
    for (int i = 0; i < a->ndim; i++) {
        if (a->shape[i] && a->count > (IDS_MAX_BYTES / 8) / a->shape[i])
            return ids_fail("%s: shape too large", name);
        a->count *= a->shape[i];
    }
    size_t have = n - start - hlen, want = (size_t)a->count * size;
    char sh[96];
    shape_str(a, sh, sizeof sh);
    if (have < want)
        return ids_fail("%s: truncated: %zu bytes of data, but shape %s of '%s' needs %zu", name, have,
                        sh, d, want);
    if (have > want)
        return ids_fail("%s: %zu bytes of data, but shape %s of '%s' needs only %zu", name, have, sh, d,
                        want);
    a->data = b + start + hlen;
    return NULL;
}

/* element i; an unsigned 64-bit value above INT64_MAX reads as INT64_MAX (out of any range) */
static int64_t npy_get(const npy_array *a, int64_t i)
{
    const uint8_t *p = a->data + i * a->size;
    uint64_t v = 0;
    for (int k = 0; k < a->size; k++)
        v |= (uint64_t)p[a->big ? a->size - 1 - k : k] << (8 * k);
    if (a->is_unsigned)
        return v > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)v;
    if (a->size < 8 && (v >> (8 * a->size - 1)) & 1)
        v |= ~(uint64_t)0 << (8 * a->size);   /* sign extension */
    return (int64_t)v;
}

/* member `name` of the zip archive b[0..n), inflated, in *out (malloc'd; NULL when absent) */
static const char *zip_member(const uint8_t *b, size_t n, const char *name, uint8_t **out, size_t *outn)
{
    *out = NULL;
    *outn = 0;
    /* the end of central directory record: 22 bytes and a comment of up to 65535 */
    size_t eocd = 0;
    int found = 0;
    for (size_t i = n >= 22 ? n - 22 : 0; n >= 22 && n - i <= 22 + 65535; i--) {
        if (rd32(b + i) == 0x06054b50 && i + 22 + rd16(b + i + 20) == n) {
            eocd = i;
            found = 1;
            break;
        }
        if (i == 0)
            break;
    }
    if (!found)
        return ids_fail("a truncated or corrupt zip archive (no end of central directory)");
    uint32_t entries = rd16(b + eocd + 10), cdsize = rd32(b + eocd + 12), cdoff = rd32(b + eocd + 16);
    if (entries == 0xFFFF || cdsize == 0xFFFFFFFF || cdoff == 0xFFFFFFFF)
        return ids_fail("a zip64 archive: not supported (the generator's files are plain zip)");
    if ((uint64_t)cdoff + cdsize > eocd)
        return ids_fail("a corrupt zip archive (central directory out of the file)");
    const uint8_t *p = b + cdoff, *end = b + cdoff + cdsize;
    for (uint32_t e = 0; e < entries; e++) {
        if (end - p < 46 || rd32(p) != 0x02014b50)
            return ids_fail("a corrupt zip archive (central directory entry %u)", e);
        uint32_t flags = rd16(p + 8), method = rd16(p + 10), crc = rd32(p + 16);
        uint64_t csize = rd32(p + 20), usize = rd32(p + 24), loff = rd32(p + 42);
        size_t fnlen = rd16(p + 28), xlen = rd16(p + 30), clen = rd16(p + 32);
        if ((size_t)(end - p) < 46 + fnlen + xlen + clen)
            return ids_fail("a corrupt zip archive (central directory entry %u)", e);
        const uint8_t *fname = p + 46, *x = fname + fnlen;
        p += 46 + fnlen + xlen + clen;
        if (fnlen != strlen(name) || memcmp(fname, name, fnlen))
            continue;
        /* sizes that do not fit 32 bits are in the zip64 extra field (id 1), in this order */
        for (size_t f = 0; f + 4 <= xlen; f += 4 + rd16(x + f + 2)) {
            if (rd16(x + f) != 1 || f + 4 + rd16(x + f + 2) > xlen)
                continue;
            const uint8_t *v = x + f + 4, *vend = v + rd16(x + f + 2);
            if (usize == 0xFFFFFFFF && v + 8 <= vend)
                usize = rd64(v), v += 8;
            if (csize == 0xFFFFFFFF && v + 8 <= vend)
                csize = rd64(v), v += 8;
            if (loff == 0xFFFFFFFF && v + 8 <= vend)
                loff = rd64(v);
        }
        if (flags & 1)
            return ids_fail("%s is encrypted", name);
        if (method != 0 && method != 8)
            return ids_fail("%s: zip compression method %u is not read (stored and deflated are)", name,
                            method);
        if (usize > IDS_MAX_BYTES || csize > IDS_MAX_BYTES)
            return ids_fail("%s: larger than 1 GiB", name);
        if (loff > n || n - loff < 30 || rd32(b + loff) != 0x04034b50)
            return ids_fail("%s: a truncated or corrupt zip archive (no local header)", name);
        uint64_t data = loff + 30 + rd16(b + loff + 26) + rd16(b + loff + 28);
        if (data > n || n - data < csize)
            return ids_fail("%s: truncated (%llu bytes in the archive, %llu left in the file)", name,
                            (unsigned long long)csize, (unsigned long long)(data > n ? 0 : n - data));
        uint8_t *u = emalloc(usize ? usize : 1);
        if (method == 0) {
            if (csize != usize) {
                free(u);
                return ids_fail("%s: a corrupt zip entry (stored, but %llu bytes become %llu)", name,
                                (unsigned long long)csize, (unsigned long long)usize);
            }
            memcpy(u, b + data, usize);
        } else {
            z_stream zs;
            memset(&zs, 0, sizeof zs);
            if (inflateInit2(&zs, -MAX_WBITS) != Z_OK) {
                free(u);
                return ids_fail("%s: zlib cannot start inflating", name);
            }
            zs.next_in = (Bytef *)(b + data);
            zs.avail_in = (uInt)csize;
            zs.next_out = u;
            zs.avail_out = (uInt)usize;
            int r = inflate(&zs, Z_FINISH);
            uLong got = zs.total_out;
            inflateEnd(&zs);
            if (r != Z_STREAM_END || got != usize) {
                free(u);
                return ids_fail("%s: corrupt deflated data", name);
            }
        }
        if (crc32(0, u, (uInt)usize) != crc) {
            free(u);
            return ids_fail("%s: CRC mismatch: the archive is corrupt", name);
        }
        *out = u;
        *outn = usize;
        return NULL;
    }
    return NULL;
}

static const char *ids_from_array(digits_ids *d, const npy_array *a, const char *name)
{
    char sh[96];
    shape_str(a, sh, sizeof sh);
    if (a->ndim != 2 && a->ndim != 3)
        return ids_fail("%s: shape %s: image ids are [K, S, N] (the generator's) or [M, N]", name, sh);
    int64_t N = a->shape[a->ndim - 1];
    if (N < 1 || N > DIGITS_MAXN)
        return ids_fail("%s: shape %s: composites of %lld digits (mkdigits makes 1 to %d)", name, sh,
                        (long long)N, DIGITS_MAXN);
    d->N = (int)N;
    d->ndim = a->ndim;
    d->rows = a->shape[0];
    d->per_row = a->ndim == 3 ? a->shape[1] : 1;
    d->n = d->rows * d->per_row;
    if (d->n == 0)
        return ids_fail("%s: shape %s holds no composite", name, sh);
    if (d->n > IDS_MAX_COMPOSITES)
        return ids_fail("%s: shape %s: more than %lld composites", name, sh, IDS_MAX_COMPOSITES);
    d->ids = emalloc(a->count * sizeof *d->ids);
    for (int64_t i = 0; i < a->count; i++)
        d->ids[i] = npy_get(a, i);
    return NULL;
}

static const char *ids_parse_npz(digits_ids *d, const uint8_t *buf, size_t len)
{
    uint8_t *m = NULL;
    size_t mn;
    npy_array a;
    const char *err = zip_member(buf, len, "image_ids.npy", &m, &mn);
    if (!err && !m)
        err = ids_fail("a zip archive without image_ids.npy (not one of the generator's .npz files?)");
    if (!err)
        err = npy_parse(m, mn, "image_ids.npy", &a);
    if (!err)
        err = ids_from_array(d, &a, "image_ids.npy");
    free(m);
    m = NULL;
    if (!err && !(err = zip_member(buf, len, "chosen_numbers.npy", &m, &mn)) && m &&
        !(err = npy_parse(m, mn, "chosen_numbers.npy", &a))) {
        char sh[96];
        shape_str(&a, sh, sizeof sh);
        if (a.ndim != 1 || a.shape[0] != d->rows)
            err = ids_fail("chosen_numbers.npy: shape %s, but image_ids.npy has %lld rows", sh,
                           (long long)d->rows);
        else {
            d->chosen = emalloc(d->rows * sizeof *d->chosen);
            for (int64_t i = 0; i < d->rows; i++)
                d->chosen[i] = npy_get(&a, i);
        }
    }
    free(m);
    m = NULL;
    if (!err && !(err = zip_member(buf, len, "sample_per_number.npy", &m, &mn)) && m &&
        !(err = npy_parse(m, mn, "sample_per_number.npy", &a))) {
        if (a.count != 1 || a.ndim > 1)
            err = ids_fail("sample_per_number.npy: not a single number");
        else if (npy_get(&a, 0) != d->per_row)
            err = ids_fail("sample_per_number.npy says %lld, but image_ids.npy has %lld composites per class",
                           (long long)npy_get(&a, 0), (long long)d->per_row);
    }
    free(m);
    return err;
}

const char *digits_ids_parse(digits_ids *d, const uint8_t *buf, size_t len)
{
    memset(d, 0, sizeof *d);
    const char *err;
    if (len >= 6 && !memcmp(buf, "\x93NUMPY", 6)) {
        npy_array a;
        err = npy_parse(buf, len, "the .npy file", &a);
        if (!err)
            err = ids_from_array(d, &a, "the .npy file");
    } else if (len >= 4 && (rd32(buf) == 0x04034b50 || rd32(buf) == 0x06054b50)) {
        err = ids_parse_npz(d, buf, len);
    } else {
        err = ids_fail("neither an .npz (zip) nor an .npy file");
    }
    if (err)
        digits_ids_free(d);
    return err;
}

const char *digits_ids_load(digits_ids *d, const char *path)
{
    memset(d, 0, sizeof *d);
    FILE *f = fopen(path, "rb");
    if (!f)
        return ids_fail("%s: %s", path, strerror(errno));
    size_t cap = 1 << 16, n = 0, got;
    uint8_t *buf = emalloc(cap);
    while ((got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            if (cap > IDS_MAX_BYTES) {
                fclose(f);
                free(buf);
                return ids_fail("%s: larger than 1 GiB", path);
            }
            buf = erealloc(buf, cap *= 2);
        }
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        return ids_fail("%s: read error", path);
    }
    const char *err = digits_ids_parse(d, buf, n);
    free(buf);
    return err ? ids_fail("%s: %s", path, err) : NULL;
}

void digits_ids_free(digits_ids *d)
{
    free(d->ids);
    free(d->chosen);
    memset(d, 0, sizeof *d);
}

/* "image_ids[k, s, j]" or "image_ids[i, j]" for composite i, position j */
static void ids_where(const digits_ids *d, int64_t i, int j, char *out, size_t size)
{
    if (d->ndim == 3)
        snprintf(out, size, "image_ids[%lld, %lld, %d]", (long long)(i / d->per_row),
                 (long long)(i % d->per_row), j);
    else
        snprintf(out, size, "image_ids[%lld, %d]", (long long)i, j);
}

const char *digits_ids_check(const digits_ids *d, const uint8_t *labels, int64_t nlabels,
                             const char *mnist, int32_t *cls)
{
    const int N = d->N;
    const int64_t n10 = digits_nclasses(N);
    char where[80];
    for (int64_t r = 0; d->chosen && r < d->rows; r++)
        if (d->chosen[r] < 0 || d->chosen[r] >= n10)
            return ids_fail("chosen_numbers[%lld] = %lld is not a %d-digit number", (long long)r,
                            (long long)d->chosen[r], N);
    for (int64_t i = 0; i < d->n; i++) {
        int64_t c = 0;
        for (int j = 0; j < N; j++) {
            int64_t id = d->ids[i * N + j];
            if (id < 0 || id >= nlabels) {
                ids_where(d, i, j, where, sizeof where);
                return ids_fail("%s = %lld: %s (the MNIST %s split has %lld digits: 0 to %lld)", where,
                                (long long)id, id < 0 ? "negative" : "out of range", mnist,
                                (long long)nlabels, (long long)nlabels - 1);
            }
            c = c * 10 + labels[id];
        }
        if (d->chosen && c != d->chosen[i / d->per_row]) {
            int64_t want = d->chosen[i / d->per_row];
            int j = 0;
            while (digits_digit((int32_t)c, N, j) == digits_digit((int32_t)want, N, j))
                j++;
            ids_where(d, i, j, where, sizeof where);
            return ids_fail("%s = %lld: MNIST %s digit %lld is a %d, but its class %0*lld "
                            "(chosen_numbers) needs a %d: not the MNIST the ids were drawn from, "
                            "or the wrong split", where, (long long)d->ids[i * N + j], mnist,
                            (long long)d->ids[i * N + j], digits_digit((int32_t)c, N, j), N,
                            (long long)want, digits_digit((int32_t)want, N, j));
        }
        cls[i] = (int32_t)c;
    }
    return NULL;
}

/* the generator's split names, as the last part of dataset_mnist_<N>_<gap>_<split>.npz */
static const struct {
    const char *suffix, *split;
} ids_names[] = {
    {"_train", "train"}, {"_test", "test"}, {"_test_seen", "test-seen"}, {"_test_unseen", "test-unseen"},
};

/* the index into ids_names of path's suffix, or -1; *stem receives the length before it */
static int ids_name_index(const char *path, size_t *stem)
{
    size_t n = strlen(path);
    if (n < 4 || (strcmp(path + n - 4, ".npz") && strcmp(path + n - 4, ".npy")))
        return -1;
    n -= 4;
    for (int i = 0; i < (int)(sizeof ids_names / sizeof ids_names[0]); i++) {
        size_t k = strlen(ids_names[i].suffix);
        if (n >= k && !memcmp(path + n - k, ids_names[i].suffix, k)) {
            *stem = n - k;
            return i;
        }
    }
    return -1;
}

const char *digits_ids_split_of_name(const char *path)
{
    size_t stem;
    int i = ids_name_index(path, &stem);
    return i < 0 ? NULL : ids_names[i].split;
}

int digits_ids_train_name(const char *path, char *out, size_t size)
{
    size_t stem;
    int i = ids_name_index(path, &stem);
    if (i <= 0)   /* not of the convention, or a train file itself */
        return 0;
    int w = snprintf(out, size, "%.*s_train%s", (int)stem, path, path + strlen(path) - 4);
    return w > 0 && (size_t)w < size;
}
