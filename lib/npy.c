/* npy: see npy.h. */
#include "npy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

/* the header dict: {'descr': '<i8', 'fortran_order': False, 'shape': (2, 3), } */
static const char *npy_dict(cursor *c, npy_array *a, const char *name)
{
    int have_descr = 0, have_order = 0, have_shape = 0;
    if (!cur_eat(c, '{'))
        return errmsg("%s: the .npy header is not a dict", name);
    while (!cur_eat(c, '}')) {
        char key[32];
        if (!cur_string(c, key, sizeof key) || !cur_eat(c, ':'))
            return errmsg("%s: unreadable .npy header", name);
        if (!strcmp(key, "descr")) {
            if (!cur_string(c, a->descr, sizeof a->descr))
                return errmsg("%s: dtype is not an integer type (a structured or unknown dtype)", name);
            have_descr = 1;
        } else if (!strcmp(key, "fortran_order")) {
            if (cur_word(c, "True"))
                return errmsg("%s: fortran_order is True: only C-order arrays are read "
                                "(save np.ascontiguousarray(a))", name);
            if (!cur_word(c, "False"))
                return errmsg("%s: unreadable fortran_order in the .npy header", name);
            have_order = 1;
        } else if (!strcmp(key, "shape")) {
            if (!cur_eat(c, '('))
                return errmsg("%s: unreadable shape in the .npy header", name);
            a->ndim = 0;
            while (!cur_eat(c, ')')) {
                if (a->ndim == 8 || !cur_int(c, &a->shape[a->ndim++]))
                    return errmsg("%s: unreadable shape in the .npy header", name);
                if (!cur_eat(c, ',')) {
                    if (!cur_eat(c, ')'))
                        return errmsg("%s: unreadable shape in the .npy header", name);
                    break;
                }
            }
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
    return NULL;
}

/* b[0..n) is one .npy file; name is for messages */
const char *npy_parse(const uint8_t *b, size_t n, const char *name, npy_array *a)
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
    if (hlen > n - start)
        return errmsg("%s: truncated .npy header (%zu bytes announced, %zu left)", name, hlen, n - start);
    cursor c = {(const char *)b + start, (const char *)b + start + hlen};
    const char *err = npy_dict(&c, a, name);
    if (err)
        return err;
    const char *d = a->descr;
    int size = d[0] && d[1] ? atoi(d + 2) : 0;
    if (!(d[0] == '<' || d[0] == '>' || d[0] == '|') || !(d[1] == 'i' || d[1] == 'u') ||
        !(size == 1 || size == 2 || size == 4 || size == 8) || strlen(d) != 3 || (d[0] == '|' && size != 1))
        return errmsg("%s: dtype '%s' is not an integer type (the generator writes '<i8'; "
                        "i1..i8 and u1..u8 are read)", name, d);
    a->big = d[0] == '>';
    a->is_unsigned = d[1] == 'u';
    a->size = size;
    a->count = 1;
    for (int i = 0; i < a->ndim; i++) {
        if (a->shape[i] && a->count > (NPY_MAX_BYTES / 8) / a->shape[i])
            return errmsg("%s: shape too large", name);
        a->count *= a->shape[i];
    }
    size_t have = n - start - hlen, want = (size_t)a->count * size;
    char sh[96];
    npy_shape_str(a, sh, sizeof sh);
    if (have < want)
        return errmsg("%s: truncated: %zu bytes of data, but shape %s of '%s' needs %zu", name, have,
                        sh, d, want);
    if (have > want)
        return errmsg("%s: %zu bytes of data, but shape %s of '%s' needs only %zu", name, have, sh, d,
                        want);
    a->data = b + start + hlen;
    return NULL;
}

/* element i; an unsigned 64-bit value above INT64_MAX reads as INT64_MAX (out of any range) */
int64_t npy_get(const npy_array *a, int64_t i)
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
const char *npy_zip_member(const uint8_t *b, size_t n, const char *name, uint8_t **out, size_t *outn)
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
        return errmsg("a truncated or corrupt zip archive (no end of central directory)");
    uint32_t entries = rd16(b + eocd + 10), cdsize = rd32(b + eocd + 12), cdoff = rd32(b + eocd + 16);
    if (entries == 0xFFFF || cdsize == 0xFFFFFFFF || cdoff == 0xFFFFFFFF)
        return errmsg("a zip64 archive: not supported (the generator's files are plain zip)");
    if ((uint64_t)cdoff + cdsize > eocd)
        return errmsg("a corrupt zip archive (central directory out of the file)");
    const uint8_t *p = b + cdoff, *end = b + cdoff + cdsize;
    for (uint32_t e = 0; e < entries; e++) {
        if (end - p < 46 || rd32(p) != 0x02014b50)
            return errmsg("a corrupt zip archive (central directory entry %u)", e);
        uint32_t flags = rd16(p + 8), method = rd16(p + 10), crc = rd32(p + 16);
        uint64_t csize = rd32(p + 20), usize = rd32(p + 24), loff = rd32(p + 42);
        size_t fnlen = rd16(p + 28), xlen = rd16(p + 30), clen = rd16(p + 32);
        if ((size_t)(end - p) < 46 + fnlen + xlen + clen)
            return errmsg("a corrupt zip archive (central directory entry %u)", e);
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
            return errmsg("%s is encrypted", name);
        if (method != 0 && method != 8)
            return errmsg("%s: zip compression method %u is not read (stored and deflated are)", name,
                            method);
        if (usize > NPY_MAX_BYTES || csize > NPY_MAX_BYTES)
            return errmsg("%s: larger than 1 GiB", name);
        if (loff > n || n - loff < 30 || rd32(b + loff) != 0x04034b50)
            return errmsg("%s: a truncated or corrupt zip archive (no local header)", name);
        uint64_t data = loff + 30 + rd16(b + loff + 26) + rd16(b + loff + 28);
        if (data > n || n - data < csize)
            return errmsg("%s: truncated (%llu bytes in the archive, %llu left in the file)", name,
                            (unsigned long long)csize, (unsigned long long)(data > n ? 0 : n - data));
        uint8_t *u = emalloc(usize ? usize : 1);
        if (method == 0) {
            if (csize != usize) {
                free(u);
                return errmsg("%s: a corrupt zip entry (stored, but %llu bytes become %llu)", name,
                                (unsigned long long)csize, (unsigned long long)usize);
            }
            memcpy(u, b + data, usize);
        } else {
            z_stream zs;
            memset(&zs, 0, sizeof zs);
            if (inflateInit2(&zs, -MAX_WBITS) != Z_OK) {
                free(u);
                return errmsg("%s: zlib cannot start inflating", name);
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
                return errmsg("%s: corrupt deflated data", name);
            }
        }
        if (crc32(0, u, (uInt)usize) != crc) {
            free(u);
            return errmsg("%s: CRC mismatch: the archive is corrupt", name);
        }
        *out = u;
        *outn = usize;
        return NULL;
    }
    return NULL;
}


int npy_is_zip(const uint8_t *b, size_t n)
{
    return n >= 4 && (rd32(b) == 0x04034b50 || rd32(b) == 0x06054b50); /* a local header, or an empty archive */
}
