/* npy: see npy.h. */
#include "npy.h"

#include <errno.h>
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

/* b[0..n) is one .npy file; name is for messages; any: floats and bool too */
static const char *parse(const uint8_t *b, size_t n, const char *name, npy_array *a, int any)
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
    int known = (d[0] == '<' || d[0] == '>' || d[0] == '|') && strlen(d) == 3 && (d[0] != '|' || size == 1) &&
                (((d[1] == 'i' || d[1] == 'u') && (size == 1 || size == 2 || size == 4 || size == 8)) ||
                 (any && d[1] == 'f' && (size == 4 || size == 8)) || (any && d[1] == 'b' && size == 1));
    if (!known && !any)
        return errmsg("%s: dtype '%s' is not an integer type (the generator writes '<i8'; "
                        "i1..i8 and u1..u8 are read)", name, d);
    if (!known) {
        char sh[96];
        npy_shape_str(a, sh, sizeof sh);
        return errmsg("%s is '%s' %s: expected numbers (integers i1..i8, u1..u8, floats f4, f8 or bool)", name,
                        d, sh);
    }
    a->big = d[0] == '>';
    a->is_unsigned = d[1] == 'u' || d[1] == 'b';
    a->kind = d[1] == 'b' ? 'b' : d[1];
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

const char *npy_parse(const uint8_t *b, size_t n, const char *name, npy_array *a)
{
    return parse(b, n, name, a, 0);
}

const char *npy_parse_any(const uint8_t *b, size_t n, const char *name, npy_array *a)
{
    return parse(b, n, name, a, 1);
}

const char *npy_dtype_name(const npy_array *a)
{
    static const char *ints[] = {"int8", "int16", 0, "int32", 0, 0, 0, "int64"};
    static const char *uints[] = {"uint8", "uint16", 0, "uint32", 0, 0, 0, "uint64"};
    switch (a->kind) {
    case 'b': return "bool";
    case 'f': return a->size == 4 ? "float32" : "float64";
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

double npy_get_f64(const npy_array *a, int64_t i)
{
    if (a->kind != 'f')
        return a->kind == 'u' && a->size == 8 ? (double)raw(a, i) : (double)npy_get(a, i);
    uint64_t v = raw(a, i);
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
    if (entries == 0xFFFF || cdsize == 0xFFFFFFFF || cdoff == 0xFFFFFFFF)
        return errmsg("a zip64 archive: not supported (the generator's files are plain zip)");
    if ((uint64_t)cdoff + cdsize > eocd)
        return errmsg("a corrupt zip archive (central directory out of the file)");
    *first = b + cdoff;
    *last = b + cdoff + cdsize;
    *count = entries;
    return NULL;
}

const char *npy_zip_names(const uint8_t *b, size_t n, char ***names, int *count)
{
    *names = NULL;
    *count = 0;
    const uint8_t *p, *end;
    uint32_t entries;
    const char *err = zip_directory(b, n, &p, &end, &entries);
    if (err)
        return err;
    char **v = ecalloc(entries ? entries : 1, sizeof *v);
    for (uint32_t e = 0; e < entries; e++) {
        size_t fnlen, xlen, clen;
        if (end - p < 46 || rd32(p) != 0x02014b50 ||
            (size_t)(end - p) < 46 + (fnlen = rd16(p + 28)) + (xlen = rd16(p + 30)) + (clen = rd16(p + 32))) {
            for (uint32_t k = 0; k < e; k++)
                free(v[k]);
            free(v);
            return errmsg("a corrupt zip archive (central directory entry %u)", e);
        }
        v[e] = emalloc(fnlen + 1);
        memcpy(v[e], p + 46, fnlen);
        v[e][fnlen] = 0;
        p += 46 + fnlen + xlen + clen;
    }
    *names = v;
    *count = (int)entries;
    return NULL;
}

/* member `name` of the zip archive b[0..n), inflated, in *out (malloc'd; NULL when absent) */
const char *npy_zip_member(const uint8_t *b, size_t n, const char *name, uint8_t **out, size_t *outn)
{
    *out = NULL;
    *outn = 0;
    const uint8_t *p, *end;
    uint32_t entries;
    const char *err = zip_directory(b, n, &p, &end, &entries);
    if (err)
        return err;
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

const char *npy_load_file(const char *path, uint8_t **out, size_t *outn)
{
    *out = NULL;
    *outn = 0;
    int std = !strcmp(path, "-");
    FILE *f = std ? stdin : fopen(path, "rb");
    if (!f)
        return errmsg("%s: %s", path, strerror(errno));
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
    int bad = ferror(f);
    if (!std)
        fclose(f);
    if (bad) {
        free(buf);
        return errmsg("%s: read error", path);
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
