/* npy: see npy.h. */
#include "npy.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "util.h"

static uint32_t rd16(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8; }
static uint32_t rd32(const uint8_t *p) { return rd16(p) | rd16(p + 2) << 16; }
static uint64_t rd64(const uint8_t *p) { return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32; }


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

void npy_shape_str(const npy_array *a, char *out, size_t size)
{
    int n = snprintf(out, size, "(");
    for (int i = 0; i < a->ndim && n < (int)size; i++)
        n += snprintf(out + n, size - n, "%s%lld", i ? ", " : "", (long long)a->shape[i]);
    if (n < (int)size)
        snprintf(out + n, size - n, a->ndim == 1 ? ",)" : ")");
}

/* what each reader takes, for messages */
static const char *expected(int any)
{
    return any ? "integers (i1..i8, u1..u8), floats (f2, f4, f8), bool or strings (U, S)"
               : "an integer type (i1..i8, u1..u8; the generator writes '<i8')";
}

/* the header dict: {'descr': '<i8', 'fortran_order': False, 'shape': (2, 3), } */
static const char *npy_dict(cursor *c, npy_array *a, const char *name, int any)
{
    int have_descr = 0, have_order = 0, have_shape = 0;
    if (!cur_eat(c, '{'))
        return errmsg("%s: the .npy header is not a dict", name);
    while (!cur_eat(c, '}')) {
        char key[32];
        if (!cur_string(c, key, sizeof key) || !cur_eat(c, ':'))
            return errmsg("%s: unreadable .npy header", name);
        if (!strcmp(key, "descr")) {
            if (cur_eat(c, '['))
                return errmsg("%s: a structured dtype (a list of fields), which is not supported: expected "
                              "one plain dtype, %s", name, expected(any));
            if (!cur_string(c, a->descr, sizeof a->descr))
                return errmsg("%s: unreadable dtype in the .npy header: expected a string such as '<f4'", name);
            have_descr = 1;
        } else if (!strcmp(key, "fortran_order")) {
            if (cur_word(c, "True"))
                have_order = 2; /* refused below, once the shape is known */
            else if (cur_word(c, "False"))
                have_order = 1;
            else
                return errmsg("%s: unreadable fortran_order in the .npy header", name);
        } else if (!strcmp(key, "shape")) {
            if (!cur_eat(c, '('))
                return errmsg("%s: unreadable shape in the .npy header", name);
            a->ndim = 0;
            while (!cur_eat(c, ')')) {
                int64_t d;
                if (!cur_int(c, &d))
                    return errmsg("%s: unreadable shape in the .npy header", name);
                if (a->ndim < 8)
                    a->shape[a->ndim] = d;
                a->ndim++; /* counted on past 8, to say how many */
                if (!cur_eat(c, ',')) {
                    if (!cur_eat(c, ')'))
                        return errmsg("%s: unreadable shape in the .npy header", name);
                    break;
                }
            }
            if (a->ndim > 8)
                return errmsg("%s: a shape of %d dimensions in the .npy header, expected at most 8", name, a->ndim);
            have_shape = 1;
        } else {
            return errmsg("%s: unknown key '%s' in the .npy header", name, key);
        }
        if (!cur_eat(c, ',')) {
            if (!cur_eat(c, '}'))
                return errmsg("%s: unreadable .npy header", name);
            break;
        }
    }
    cur_ws(c);
    if (c->p != c->e)
        return errmsg("%s: unreadable .npy header (text after the dict)", name);
    if (!have_descr || !have_order || !have_shape)
        return errmsg("%s: the .npy header lacks '%s'", name,
                        !have_descr ? "descr" : !have_order ? "fortran_order" : "shape");
    if (have_order == 2)
        return errmsg("%s: fortran_order is True: only C-order arrays are read "
                        "(save np.ascontiguousarray(a))", name);
    return NULL;
}

/* b[0..n) is one .npy file; name is for messages; any: floats and bool too. header_only: b may
 * end after the header (npy_zip_header), and the data is not looked at */
static const char *parse(const uint8_t *b, size_t n, const char *name, npy_array *a, int any, int header_only)
{
    memset(a, 0, sizeof *a);
    if (n < 10 || memcmp(b, "\x93NUMPY", 6))
        return errmsg("%s: not an .npy file (no \\x93NUMPY magic)", name);
    int major = b[6];
    if (major < 1 || major > 3)
        return errmsg("%s: .npy format version %d.%d is not known (1.0 to 3.0 are)", name, major, b[7]);
    size_t start = major == 1 ? 10 : 12;
    if (n < start)
        return errmsg("%s: truncated .npy header", name);
    size_t hlen = major == 1 ? rd16(b + 8) : rd32(b + 8);
    if (hlen > NPY_MAX_HEADER - start)
        return errmsg("%s: an .npy header of %zu bytes: expected at most %d", name, start + hlen, NPY_MAX_HEADER);
    if (hlen > n - start)
        return errmsg("%s: truncated .npy header (%zu bytes announced, %zu left)", name, hlen, n - start);
    cursor c = {(const char *)b + start, (const char *)b + start + hlen};
    const char *err = npy_dict(&c, a, name, any);
    if (err)
        return err;
    const char *d = a->descr;
    int size = d[0] && d[1] ? atoi(d + 2) : 0;
    int known = (d[0] == '<' || d[0] == '>' || d[0] == '|') && strlen(d) == 3 && (d[0] != '|' || size == 1) &&
                (((d[1] == 'i' || d[1] == 'u') && (size == 1 || size == 2 || size == 4 || size == 8)) ||
                 (any && d[1] == 'f' && (size == 2 || size == 4 || size == 8)) || (any && d[1] == 'b' && size == 1));
    /* strings: '<U5' (UCS-4, 4 bytes a character, either byte order), '|S5' (bytes); 1 to
     * NPY_MAX_CHARS characters (digits only after the letter, as numpy writes them) */
    size_t digits = d[0] && d[1] ? strspn(d + 2, "0123456789") : 0;
    int text = any && (d[1] == 'U' || d[1] == 'S') && digits >= 1 && digits <= 7 && !d[2 + digits] &&
               (d[1] == 'U' ? d[0] == '<' || d[0] == '>' : d[0] == '|') && size >= 1 && size <= NPY_MAX_CHARS;
    if (any && (d[1] == 'U' || d[1] == 'S') && !text) {
        char sh[96];
        npy_shape_str(a, sh, sizeof sh);
        return errmsg("%s is '%s' %s: expected strings of 1 to %d characters, '<U', '>U' (UCS-4) or '|S' (bytes)",
                      name, d, sh, NPY_MAX_CHARS);
    }
    if (text) {
        known = 1;
        a->chars = size;
        size *= d[1] == 'U' ? 4 : 1;
    }
    if (!known && !any)
        return errmsg("%s: dtype '%s' is not an integer type (the generator writes '<i8'; "
                        "i1..i8 and u1..u8 are read)", name, d);
    if (!known) {
        char sh[96];
        npy_shape_str(a, sh, sizeof sh);
        return errmsg("%s is '%s' %s: expected %s", name, d, sh, expected(1));
    }
    a->big = d[0] == '>';
    a->is_unsigned = d[1] == 'u' || d[1] == 'b' || text;
    a->kind = d[1] == 'b' ? 'b' : d[1];
    a->size = size;
    /* every dimension, and the product of the non-zero ones, at most NPY_MAX_COUNT: a zero beside
     * a huge one would hold nothing but still describe items no reader can take */
    int64_t nonzero = 1;
    int huge = 0;
    for (int i = 0; i < a->ndim && !huge; i++)
        if (a->shape[i] && !(huge = a->shape[i] > NPY_MAX_COUNT / nonzero))
            nonzero *= a->shape[i];
    char sh[96];
    npy_shape_str(a, sh, sizeof sh);
    if (huge)
        return errmsg("%s: shape %s is too large: expected each dimension, and the product of the non-zero "
                      "ones, at most %lld", name, sh, (long long)NPY_MAX_COUNT);
    a->count = 1;
    for (int i = 0; i < a->ndim; i++)
        a->count *= a->shape[i];
    if (text && a->count > NPY_MAX_BYTES / size) /* (numbers: at most 8 bytes each, so within) */
        return errmsg("%s: '%s' %s is %lld x %d bytes: expected at most %lld (1 GiB)", name, d, sh,
                      (long long)a->count, size, (long long)NPY_MAX_BYTES);
    a->offset = start + hlen;
    a->filesize = a->offset + (size_t)a->count * size;
    if (header_only)
        return NULL;
    size_t have = n - a->offset, want = (size_t)a->count * size;
    if (have < want)
        return errmsg("%s: truncated: %zu bytes of data, but shape %s of '%s' needs %zu", name, have,
                        sh, d, want);
    if (have > want)
        return errmsg("%s: %zu bytes of data, but shape %s of '%s' needs only %zu", name, have, sh, d,
                        want);
    a->data = b + a->offset;
    return NULL;
}

const char *npy_parse(const uint8_t *b, size_t n, const char *name, npy_array *a)
{
    return parse(b, n, name, a, 0, 0);
}

const char *npy_parse_any(const uint8_t *b, size_t n, const char *name, npy_array *a)
{
    return parse(b, n, name, a, 1, 0);
}

const char *npy_dtype_name(const npy_array *a)
{
    static const char *ints[] = {"int8", "int16", 0, "int32", 0, 0, 0, "int64"};
    static const char *uints[] = {"uint8", "uint16", 0, "uint32", 0, 0, 0, "uint64"};
    static char quoted[sizeof a->descr + 2];
    switch (a->kind) {
    case 0:
    case 'U':
    case 'S': snprintf(quoted, sizeof quoted, "'%s'", a->descr); return quoted;
    case 'b': return "bool";
    case 'f': return a->size == 2 ? "float16" : a->size == 4 ? "float32" : "float64";
    case 'u': return uints[a->size - 1];
    default: return ints[a->size - 1];
    }
}

/* the raw element i, byte-swapped to the host's (little-endian) order */
static uint64_t raw(const npy_array *a, int64_t i)
{
    const uint8_t *p = a->data + i * a->size;
    uint64_t v = 0;
    for (int k = 0; k < a->size; k++)
        v |= (uint64_t)p[a->big ? a->size - 1 - k : k] << (8 * k);
    return v;
}

/* IEEE 754 binary16 h as a double (exact: every half is a double) */
static double half(uint32_t h)
{
    int e = (int)(h >> 10 & 0x1f);
    double m = (double)(h & 0x3ff), s = h >> 15 ? -1 : 1;
    if (e == 0x1f)
        return m ? NAN : s * INFINITY;
    return e ? s * ldexp(1024 + m, e - 25) : s * ldexp(m, -24); /* normal; subnormal (and zero) */
}

double npy_get_f64(const npy_array *a, int64_t i)
{
    if (a->kind != 'f')
        return a->kind == 'u' && a->size == 8 ? (double)raw(a, i) : (double)npy_get(a, i);
    uint64_t v = raw(a, i);
    if (a->size == 2)
        return half((uint32_t)v);
    if (a->size == 4) {
        uint32_t u = (uint32_t)v;
        float f;
        memcpy(&f, &u, 4);
        return f;
    }
    double x;
    memcpy(&x, &v, 8);
    return x;
}

/* code point j of a 'U' element at p */
static uint32_t ucs4_at(const uint8_t *p, int j, int big)
{
    const uint8_t *q = p + 4 * j;
    return big ? (uint32_t)q[0] << 24 | (uint32_t)q[1] << 16 | (uint32_t)q[2] << 8 | q[3]
               : (uint32_t)q[3] << 24 | (uint32_t)q[2] << 16 | (uint32_t)q[1] << 8 | q[0];
}

const char *npy_get_text(const npy_array *a, int64_t i, char *out, size_t *len)
{
    const uint8_t *p = a->data + i * a->size;
    *len = 0;
    if (a->kind == 'S') {
        size_t k = (size_t)a->size;
        while (k && !p[k - 1]) /* numpy's rule: trailing NULs are not part of the string */
            k--;
        if (memchr(p, 0, k))
            return errmsg("element %lld holds a NUL byte inside: expected names without one", (long long)i);
        memcpy(out, p, k);
        *len = k;
        return NULL;
    }
    int k = a->chars;
    while (k && !ucs4_at(p, k - 1, a->big))
        k--;
    size_t n = 0;
    for (int j = 0; j < k; j++) {
        uint32_t c = ucs4_at(p, j, a->big);
        if (!c)
            return errmsg("element %lld holds a NUL character inside: expected names without one", (long long)i);
        if (c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
            return errmsg("element %lld holds U+%04X, which is no Unicode character (a surrogate or beyond U+10FFFF)",
                          (long long)i, (unsigned)c);
        if (c < 0x80) {
            out[n++] = (char)c;
        } else if (c < 0x800) {
            out[n++] = (char)(0xc0 | c >> 6);
            out[n++] = (char)(0x80 | (c & 0x3f));
        } else if (c < 0x10000) {
            out[n++] = (char)(0xe0 | c >> 12);
            out[n++] = (char)(0x80 | (c >> 6 & 0x3f));
            out[n++] = (char)(0x80 | (c & 0x3f));
        } else {
            out[n++] = (char)(0xf0 | c >> 18);
            out[n++] = (char)(0x80 | (c >> 12 & 0x3f));
            out[n++] = (char)(0x80 | (c >> 6 & 0x3f));
            out[n++] = (char)(0x80 | (c & 0x3f));
        }
    }
    *len = n;
    return NULL;
}

uint64_t npy_get_u64(const npy_array *a, int64_t i)
{
    return a->is_unsigned ? raw(a, i) : (uint64_t)npy_get(a, i);
}

/* element i; an unsigned 64-bit value above INT64_MAX reads as INT64_MAX (out of any range) */
int64_t npy_get(const npy_array *a, int64_t i)
{
    uint64_t v = raw(a, i);
    if (a->is_unsigned)
        return v > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)v;
    if (a->size < 8 && (v >> (8 * a->size - 1)) & 1)
        v |= ~(uint64_t)0 << (8 * a->size);   /* sign extension */
    return (int64_t)v;
}

/* the central directory of the zip archive b[0..n): its first entry and end, and how many */
static const char *zip_directory(const uint8_t *b, size_t n, const uint8_t **first, const uint8_t **last,
                                 uint32_t *count)
{
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
        return errmsg("a truncated or corrupt zip archive (no end of central directory)");
    uint32_t entries = rd16(b + eocd + 10), cdsize = rd32(b + eocd + 12), cdoff = rd32(b + eocd + 16);
    /* a zip64 end record, found by its locator (20 bytes before this one) or by the fields it fills */
    if ((eocd >= 20 && rd32(b + eocd - 20) == 0x07064b50) || cdsize == 0xFFFFFFFF || cdoff == 0xFFFFFFFF)
        return errmsg("a zip64 archive (its end record is zip64's), which is not read: expected a plain zip "
                      "archive, as np.savez writes one for up to 65535 arrays and 4 GiB");
    if ((uint64_t)cdoff + cdsize > eocd)
        return errmsg("a corrupt zip archive (central directory out of the file)");
    *first = b + cdoff;
    *last = b + cdoff + cdsize;
    *count = entries;
    return NULL;
}

const char *npy_zip_entries(const uint8_t *b, size_t n, npy_zip_entry **out, int *count)
{
    *out = NULL;
    *count = 0;
    const uint8_t *p = NULL, *end = NULL;
    uint32_t entries = 0;
    const char *err = zip_directory(b, n, &p, &end, &entries);
    if (err)
        return err;
    npy_zip_entry *v = ecalloc(entries ? entries : 1, sizeof *v);
    for (uint32_t k = 0; k < entries; k++) {
        npy_zip_entry *e = &v[k];
        size_t fnlen, xlen, clen;
        if (end - p < 46 || rd32(p) != 0x02014b50 ||
            (size_t)(end - p) < 46 + (fnlen = rd16(p + 28)) + (xlen = rd16(p + 30)) + (clen = rd16(p + 32))) {
            free(v);
            return errmsg("a corrupt zip archive (central directory entry %u of %u)", k + 1, entries);
        }
        e->encrypted = rd16(p + 8) & 1;
        e->method = (int)rd16(p + 10);
        e->crc = rd32(p + 16);
        e->csize = rd32(p + 20);
        e->usize = rd32(p + 24);
        uint64_t loff = rd32(p + 42);
        e->name = (const char *)p + 46;
        e->namelen = fnlen;
        /* sizes that do not fit 32 bits are in the zip64 extra field (id 1), in this order */
        const uint8_t *x = p + 46 + fnlen;
        for (size_t f = 0; f + 4 <= xlen; f += 4 + rd16(x + f + 2)) {
            if (rd16(x + f) != 1 || f + 4 + rd16(x + f + 2) > xlen)
                continue;
            const uint8_t *z = x + f + 4, *zend = z + rd16(x + f + 2);
            if (e->usize == 0xFFFFFFFF && z + 8 <= zend)
                e->usize = rd64(z), z += 8;
            if (e->csize == 0xFFFFFFFF && z + 8 <= zend)
                e->csize = rd64(z), z += 8;
            if (loff == 0xFFFFFFFF && z + 8 <= zend)
                loff = rd64(z);
        }
        p += 46 + fnlen + xlen + clen;
        if (loff > n || n - loff < 30 || rd32(b + loff) != 0x04034b50) {
            free(v);
            return errmsg("a truncated or corrupt zip archive (entry %u of %u has no local header)", k + 1, entries);
        }
        uint64_t data = loff + 30 + rd16(b + loff + 26) + rd16(b + loff + 28);
        if (data > n || n - data < e->csize) {
            unsigned long long want = e->csize, left = data > n ? 0 : n - data;
            free(v);
            return errmsg("a truncated zip archive (entry %u of %u: %llu bytes, %llu left in the file)", k + 1,
                          entries, want, left);
        }
        e->data = b + data;
    }
    *out = v;
    *count = (int)entries;
    return NULL;
}

/* the first `want` bytes of member e inflated into out, *got of them (fewer when the member is
 * shorter); nothing past them is inflated. whole: want is the member's size, and its data must
 * end there, with the directory's CRC */
static const char *zip_inflate(const npy_zip_entry *e, const char *name, uint8_t *out, size_t want, size_t *got,
                               int whole)
{
    *got = 0;
    if (e->encrypted)
        return errmsg("%s: an encrypted zip member, which is not read: expected stored or deflated data", name);
    if (e->method != 0 && e->method != 8)
        return errmsg("%s: zip compression method %d, which is not read: expected stored (0) or deflated (8)",
                      name, e->method);
    if (e->csize > 0xFFFFFFFFu)
        return errmsg("%s: %llu compressed bytes: expected at most 4 GiB", name, (unsigned long long)e->csize);
    if (e->method == 0) {
        if (e->csize != e->usize)
            return errmsg("%s: a corrupt zip entry (stored, but %llu bytes become %llu)", name,
                          (unsigned long long)e->csize, (unsigned long long)e->usize);
        *got = want < e->csize ? want : (size_t)e->csize;
        if (*got)
            memcpy(out, e->data, *got);
    } else {
        z_stream zs;
        memset(&zs, 0, sizeof zs);
        if (inflateInit2(&zs, -MAX_WBITS) != Z_OK)
            return errmsg("%s: zlib cannot start inflating", name);
        zs.next_in = (Bytef *)e->data;
        zs.avail_in = (uInt)e->csize; /* within the file: npy_load_file reads at most 2 GiB */
        zs.next_out = out;
        zs.avail_out = (uInt)want;
        int r = want ? inflate(&zs, Z_NO_FLUSH) : Z_OK, more = 0;
        if (whole && r != Z_STREAM_END && zs.avail_out == 0 && (r == Z_OK || r == Z_BUF_ERROR)) {
            /* out is full: the data must end here, and one more byte is one too many */
            uint8_t one;
            zs.next_out = &one;
            zs.avail_out = 1;
            r = inflate(&zs, Z_NO_FLUSH);
            more = zs.avail_out == 0;
        }
        *got = (size_t)zs.total_out - (size_t)more;
        inflateEnd(&zs);
        if (more)
            return errmsg("%s: inflates to more than the %llu bytes its zip entry declares: a corrupt archive", name,
                          (unsigned long long)e->usize);
        if (r != Z_STREAM_END && (whole || *got < want || (r != Z_OK && r != Z_BUF_ERROR)))
            return errmsg("%s: corrupt deflated data", name);
    }
    if (whole && *got != e->usize)
        return errmsg("%s: a corrupt zip entry (%zu bytes inflated, %llu declared)", name, *got,
                      (unsigned long long)e->usize);
    if (whole && crc32(0, out, (uInt)want) != e->crc)
        return errmsg("%s: CRC mismatch: the archive is corrupt", name);
    return NULL;
}

const char *npy_zip_header(const npy_zip_entry *e, const char *name, npy_array *a)
{
    memset(a, 0, sizeof *a);
    uint8_t pre[12];
    size_t got, need;
    const char *err = zip_inflate(e, name, pre, sizeof pre, &got, 0);
    if (err)
        return err;
    /* the header's length, from the magic, version and length; parse reports what is wrong */
    need = got;
    if (got >= 10 && !memcmp(pre, "\x93NUMPY", 6) && (pre[6] == 1 || ((pre[6] == 2 || pre[6] == 3) && got == 12))) {
        size_t start = pre[6] == 1 ? 10 : 12, hlen = pre[6] == 1 ? rd16(pre + 8) : rd32(pre + 8);
        if (hlen <= NPY_MAX_HEADER - start)
            need = start + hlen;
    }
    if (need <= got)
        return parse(pre, got, name, a, 1, 1);
    uint8_t *h = emalloc(need);
    if (!(err = zip_inflate(e, name, h, need, &got, 0)))
        err = parse(h, got, name, a, 1, 1);
    free(h);
    return err;
}

const char *npy_zip_inflate(const npy_zip_entry *e, const char *name, uint8_t **out)
{
    *out = NULL;
    if (e->usize > NPY_MAX_BYTES)
        return errmsg("%s: %llu bytes inflated: expected at most 1 GiB", name, (unsigned long long)e->usize);
    uint8_t *u = emalloc(e->usize ? e->usize : 1);
    size_t got;
    const char *err = zip_inflate(e, name, u, e->usize, &got, 1);
    if (err) {
        free(u);
        return err;
    }
    *out = u;
    return NULL;
}

const char *npy_zip_member(const uint8_t *b, size_t n, const char *name, uint8_t **out, size_t *outn)
{
    *out = NULL;
    *outn = 0;
    npy_zip_entry *e;
    int count;
    const char *err = npy_zip_entries(b, n, &e, &count);
    for (int i = 0; !err && i < count; i++)
        if (e[i].namelen == strlen(name) && !memcmp(e[i].name, name, e[i].namelen)) {
            if (!(err = npy_zip_inflate(&e[i], name, out)))
                *outn = e[i].usize;
            break;
        }
    free(e);
    return err;
}

int npy_is_zip(const uint8_t *b, size_t n)
{
    return n >= 4 && (rd32(b) == 0x04034b50 || rd32(b) == 0x06054b50); /* a local header, or an empty archive */
}

const char *npy_load_file(const char *path, uint8_t **out, size_t *outn)
{
    *out = NULL;
    *outn = 0;
    int std = !strcmp(path, "-");
    FILE *f = std ? stdin : fopen(path, "rb");
    if (!f)
        return errmsg("%s: %s", path, strerror(errno));
    /* open() takes a directory, and its first read fails with EISDIR: say what it is */
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
        if (!std)
            fclose(f);
        return errmsg("%s: it is a directory, expected an .npz or .npy file", std ? "stdin" : path);
    }
    size_t cap = 1 << 16, n = 0, got;
    uint8_t *buf = emalloc(cap);
    while ((got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            if (cap > NPY_MAX_BYTES) {
                if (!std)
                    fclose(f);
                free(buf);
                return errmsg("%s: larger than 1 GiB", path);
            }
            buf = erealloc(buf, cap *= 2);
        }
    }
    int bad = ferror(f), e = errno;
    if (!std)
        fclose(f);
    if (bad) {
        free(buf);
        return errmsg("%s: read error: %s", path, strerror(e));
    }
    *out = buf;
    *outn = n;
    return NULL;
}

/* ---- writing ---- */

size_t npy_header(char *out, size_t size, const char *descr, int ndim, const int64_t *shape)
{
    char dict[512];
    int k = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
    for (int i = 0; i < ndim; i++)
        k += snprintf(dict + k, sizeof dict - k, "%s%lld", i ? ", " : "", (long long)shape[i]);
    k += snprintf(dict + k, sizeof dict - k, ndim == 1 ? ",), }" : "), }"); /* numpy's own spelling */
    /* magic (6) + version (2) + length (2) + dict + spaces + '\n', a multiple of 64 (numpy's) */
    size_t total = (10 + (size_t)k + 1 + 63) / 64 * 64;
    if (total > size || total - 10 > 65535)
        return 0;
    memcpy(out, "\x93NUMPY\x01\x00", 8);
    out[8] = (char)((total - 10) & 0xff);
    out[9] = (char)((total - 10) >> 8);
    memcpy(out + 10, dict, (size_t)k);
    memset(out + 10 + k, ' ', total - 10 - k - 1);
    out[total - 1] = '\n';
    return total;
}

struct npz_writer {
    FILE *f;
    int level;
    uint64_t offset;         /* bytes written so far */
    int n, cap;
    struct npz_entry { char *name; uint32_t crc, csize, usize, offset; uint16_t method; } *e;
};

static void put16(uint8_t *p, uint32_t v) { p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); }
static void put32(uint8_t *p, uint32_t v) { put16(p, v & 0xffff); put16(p + 2, v >> 16); }

npz_writer *npz_create(FILE *f, int level)
{
    npz_writer *w = ecalloc(1, sizeof *w);
    w->f = f;
    w->level = level;
    return w;
}

static void zwrite(npz_writer *w, const void *p, size_t n)
{
    if (n && fwrite(p, 1, n, w->f) != n)
        return; /* the caller's close (atomic_commit, close_stdout) reports the failed write */
    w->offset += n;
}

const char *npz_add(npz_writer *w, const char *name, const char *descr, int ndim, const int64_t *shape,
                    const void *data, size_t nbytes)
{
    char head[640];
    size_t hn = npy_header(head, sizeof head, descr, ndim, shape);
    if (!hn)
        return errmsg("%s: the .npy header is too long", name);
    if (nbytes > 0xFFFFFFFFu - hn || w->offset > 0xFFFFFFFFu)
        return errmsg("%s: the archive would exceed 4 GiB (zip64 is not written)", name);
    size_t usize = hn + nbytes, fnlen = strlen(name) + 4;
    uLong crc = crc32(0, (const Bytef *)head, (uInt)hn);
    for (size_t done = 0; done < nbytes;) { /* crc32 takes at most 4 GiB - 1 at a time */
        size_t part = nbytes - done > (1u << 30) ? (1u << 30) : nbytes - done;
        crc = crc32(crc, (const Bytef *)data + done, (uInt)part);
        done += part;
    }
    uint8_t *z = NULL;
    size_t csize = usize;
    if (w->level) { /* raw deflate of header and data, as zip wants it */
        z_stream zs;
        memset(&zs, 0, sizeof zs);
        if (deflateInit2(&zs, w->level, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK)
            return errmsg("%s: zlib cannot start deflating", name);
        size_t bound = deflateBound(&zs, (uLong)usize);
        z = emalloc(bound);
        zs.next_out = z;
        zs.avail_out = (uInt)bound;
        zs.next_in = (Bytef *)head;
        zs.avail_in = (uInt)hn;
        int r = deflate(&zs, Z_NO_FLUSH);
        zs.next_in = (Bytef *)data;
        zs.avail_in = (uInt)nbytes;
        if (r == Z_OK)
            r = deflate(&zs, Z_FINISH);
        csize = zs.total_out;
        deflateEnd(&zs);
        if (r != Z_STREAM_END) {
            free(z);
            return errmsg("%s: zlib could not deflate it", name);
        }
    }
    if (w->n == w->cap)
        w->e = erealloc(w->e, (size_t)(w->cap = w->cap ? 2 * w->cap : 16) * sizeof *w->e);
    struct npz_entry *e = &w->e[w->n++];
    e->name = emalloc(fnlen + 1);
    snprintf(e->name, fnlen + 1, "%s.npy", name);
    *e = (struct npz_entry){e->name, (uint32_t)crc, (uint32_t)csize, (uint32_t)usize, (uint32_t)w->offset,
                            (uint16_t)(w->level ? 8 : 0)};
    uint8_t lh[30] = {0};
    put32(lh, 0x04034b50);
    put16(lh + 4, 20);           /* version needed: 2.0 */
    put16(lh + 8, e->method);
    put16(lh + 12, 0x21);        /* DOS date 1980-01-01: no time recorded, the same bytes every run */
    put32(lh + 14, e->crc);
    put32(lh + 18, e->csize);
    put32(lh + 22, e->usize);
    put16(lh + 26, (uint32_t)fnlen);
    zwrite(w, lh, 30);
    zwrite(w, e->name, fnlen);
    if (z) {
        zwrite(w, z, csize);
        free(z);
    } else {
        zwrite(w, head, hn);
        zwrite(w, data, nbytes);
    }
    return NULL;
}

const char *npz_finish(npz_writer *w)
{
    const char *err = NULL;
    uint64_t cdoff = w->offset;
    for (int i = 0; i < w->n; i++) {
        struct npz_entry *e = &w->e[i];
        size_t fnlen = strlen(e->name);
        uint8_t ch[46] = {0};
        put32(ch, 0x02014b50);
        put16(ch + 4, 20);       /* made by: MS-DOS, 2.0 */
        put16(ch + 6, 20);
        put16(ch + 10, e->method);
        put16(ch + 14, 0x21);
        put32(ch + 16, e->crc);
        put32(ch + 20, e->csize);
        put32(ch + 24, e->usize);
        put16(ch + 28, (uint32_t)fnlen);
        put32(ch + 42, e->offset);
        zwrite(w, ch, 46);
        zwrite(w, e->name, fnlen);
    }
    if (w->n > 0xFFFF || w->offset > 0xFFFFFFFFu)
        err = errmsg("the archive would exceed 65535 members or 4 GiB (zip64 is not written)");
    uint8_t eocd[22] = {0};
    put32(eocd, 0x06054b50);
    put16(eocd + 8, (uint32_t)w->n);
    put16(eocd + 10, (uint32_t)w->n);
    put32(eocd + 12, (uint32_t)(w->offset - cdoff));
    put32(eocd + 16, (uint32_t)cdoff);
    if (!err)
        zwrite(w, eocd, 22);
    for (int i = 0; i < w->n; i++)
        free(w->e[i].name);
    free(w->e);
    free(w);
    return err;
}
