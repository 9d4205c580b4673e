/* npy: writing .npy headers and .npz archives, read back by the module's own reader; floats and
 * bool read (npy_parse_any) in both byte orders; an archive read lazily (npy_zip_entries, a
 * member's header alone, a member inflated no further than its declared size) and the refusals
 * of the float reader. The integer reader and its refusals: test_digits. That numpy itself
 * loads what is written, and fromnpz on crafted archives: tests/shell/npz.sh.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "check.h"
#include "npy.h"

/* numpy's own header for a float32 [2, 3] array (np.save, format 1.0): the dict, spaces to
 * make magic + length + dict + '\n' a multiple of 64, then '\n' */
static void test_header(void)
{
    char h[256];
    int64_t shape[2] = {2, 3};
    size_t n = npy_header(h, sizeof h, "<f4", 2, shape);
    const char *dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
    CHECK(n == 128); /* 10 + 60 + 1 = 71, up to 128 */
    CHECK(!memcmp(h, "\x93NUMPY\x01\x00", 8) && (uint8_t)h[8] == 118 && h[9] == 0);
    CHECK(!memcmp(h + 10, dict, strlen(dict)));
    CHECK(h[127] == '\n' && h[126] == ' ' && h[10 + strlen(dict)] == ' ');
    /* 1-d and 0-d as numpy spells them (np.save gives these 128 bytes too) */
    int64_t one = 5;
    n = npy_header(h, sizeof h, "|u1", 1, &one);
    CHECK(n == 128 && !memcmp(h + 10, "{'descr': '|u1', 'fortran_order': False, 'shape': (5,), }", 57));
    n = npy_header(h, sizeof h, "<U3", 0, NULL);
    CHECK(n == 128 && !memcmp(h + 10, "{'descr': '<U3', 'fortran_order': False, 'shape': (), }", 55));
    CHECK(npy_header(h, 63, "<f4", 2, shape) == 0); /* too small: nothing written */
}

/* a header and data into one buffer, parsed back */
static const char *roundtrip(uint8_t *buf, const char *descr, int ndim, const int64_t *shape, const void *data,
                             size_t nbytes, npy_array *a)
{
    size_t h = npy_header((char *)buf, 256, descr, ndim, shape);
    memcpy(buf + h, data, nbytes);
    return npy_parse_any(buf, h + nbytes, "x", a);
}

static void test_floats(void)
{
    uint8_t buf[512];
    npy_array a;
    float f4[3] = {1.5f, -2.25f, 3e-8f};
    int64_t three = 3;
    CHECK(roundtrip(buf, "<f4", 1, &three, f4, sizeof f4, &a) == NULL);
    CHECK(a.kind == 'f' && a.size == 4 && !strcmp(npy_dtype_name(&a), "float32"));
    CHECK(npy_get_f64(&a, 0) == 1.5 && npy_get_f64(&a, 1) == -2.25 && npy_get_f64(&a, 2) == (double)3e-8f);
    /* big-endian float64: 1.5 is 3F F8 00 .. 00, -0.1 is BF B9 99 99 99 99 99 9A */
    uint8_t be[16] = {0x3f, 0xf8, 0, 0, 0, 0, 0, 0, 0xbf, 0xb9, 0x99, 0x99, 0x99, 0x99, 0x99, 0x9a};
    int64_t two = 2;
    CHECK(roundtrip(buf, ">f8", 1, &two, be, sizeof be, &a) == NULL);
    CHECK(!strcmp(npy_dtype_name(&a), "float64") && npy_get_f64(&a, 0) == 1.5 && npy_get_f64(&a, 1) == -0.1);
    uint8_t b1[2] = {1, 0};
    CHECK(roundtrip(buf, "|b1", 1, &two, b1, 2, &a) == NULL);
    CHECK(a.kind == 'b' && !strcmp(npy_dtype_name(&a), "bool") && npy_get(&a, 0) == 1 && npy_get_f64(&a, 1) == 0);
    /* integers read as doubles; the largest uint64 too */
    uint64_t u8[2] = {7, UINT64_MAX};
    CHECK(roundtrip(buf, "<u8", 1, &two, u8, sizeof u8, &a) == NULL);
    CHECK(!strcmp(npy_dtype_name(&a), "uint64") && npy_get_f64(&a, 0) == 7 && npy_get_f64(&a, 1) == 18446744073709551616.0);
    int16_t i2[2] = {-300, 5};
    CHECK(roundtrip(buf, "<i2", 1, &two, i2, sizeof i2, &a) == NULL && !strcmp(npy_dtype_name(&a), "int16"));
    CHECK(npy_get_f64(&a, 0) == -300);
    /* float16, either byte order, exactly (binary16: sign, 5 exponent bits biased by 15, 10
     * mantissa bits): 0x3c00 1, 0xc000 -2, 0x3555 1 + 341/1024 times 2^-2 = 0.333251953125,
     * 0x7bff the largest, (2 - 2^-10) 2^15 = 65504, 0x0001 the smallest subnormal 2^-24,
     * 0x8000 -0, 0x7c00 infinity, 0x7e00 a NaN */
    uint16_t f2[8] = {0x3c00, 0xc000, 0x3555, 0x7bff, 0x0001, 0x8000, 0x7c00, 0x7e00};
    int64_t eight = 8;
    CHECK(roundtrip(buf, "<f2", 1, &eight, f2, sizeof f2, &a) == NULL);
    CHECK(a.kind == 'f' && a.size == 2 && !strcmp(npy_dtype_name(&a), "float16"));
    CHECK(npy_get_f64(&a, 0) == 1 && npy_get_f64(&a, 1) == -2 && npy_get_f64(&a, 2) == 0.333251953125);
    CHECK(npy_get_f64(&a, 3) == 65504 && npy_get_f64(&a, 4) == ldexp(1, -24));
    CHECK(npy_get_f64(&a, 5) == 0 && signbit(npy_get_f64(&a, 5)) && isinf(npy_get_f64(&a, 6)) &&
          npy_get_f64(&a, 6) > 0 && isnan(npy_get_f64(&a, 7)));
    uint8_t f2be[4] = {0xc0, 0x00, 0x35, 0x55}; /* -2, 0.333251953125 */
    CHECK(roundtrip(buf, ">f2", 1, &two, f2be, 4, &a) == NULL && npy_get_f64(&a, 0) == -2 &&
          npy_get_f64(&a, 1) == 0.333251953125);
    /* what npy_parse_any still refuses, naming the dtype; the integer reader refuses floats */
    float c8[4] = {1, 2, 3, 4}; /* two complex64 */
    const char *err = roundtrip(buf, "<c8", 1, &two, c8, sizeof c8, &a);
    CHECK(err && !strcmp(err, "x is '<c8' (2,): expected integers (i1..i8, u1..u8), floats (f2, f4, f8), bool or "
                              "strings (U, S)"));
    CHECK(a.kind == 0 && !strcmp(npy_dtype_name(&a), "'<c8'") && a.ndim == 1 && a.shape[0] == 2);
    size_t h = npy_header((char *)buf, 256, "<f4", 1, &three);
    memcpy(buf + h, f4, sizeof f4);
    err = npy_parse(buf, h + sizeof f4, "x", &a);
    CHECK(err && strstr(err, "dtype '<f4' is not an integer type"));
}

/* an archive written into memory: stored, then deflated; members read back byte for byte */
static void test_npz(int level)
{
    char *mem = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&mem, &len);
    npz_writer *w = npz_create(f, level);
    float mu[6] = {0, 1, 2, 3, 4, 5};
    int64_t shape[2] = {2, 3}, n4 = 4, zero[2] = {0, 3};
    int32_t cls[4] = {7, -1, 7, 2};
    CHECK(npz_add(w, "mu", "<f4", 2, shape, mu, sizeof mu) == NULL);
    CHECK(npz_add(w, "class", "<i4", 1, &n4, cls, sizeof cls) == NULL);
    CHECK(npz_add(w, "meta/empty", "<f4", 2, zero, NULL, 0) == NULL);
    CHECK(npz_finish(w) == NULL);
    fclose(f);
    const uint8_t *b = (const uint8_t *)mem;
    CHECK(npy_is_zip(b, len));
    npy_zip_entry *e;
    int count;
    CHECK(npy_zip_entries(b, len, &e, &count) == NULL);
    CHECK(count == 3 && e[0].namelen == 6 && !memcmp(e[0].name, "mu.npy", 6) && e[1].namelen == 9 &&
          !memcmp(e[1].name, "class.npy", 9) && e[2].namelen == 14 && !memcmp(e[2].name, "meta/empty.npy", 14));
    /* the directory's sizes: mu is a 128-byte header and 6 floats; stored, the same compressed */
    CHECK(e[0].usize == 128 + sizeof mu && e[0].method == (level ? 8 : 0) && (level || e[0].csize == e[0].usize));
    free(e);
    uint8_t *m;
    size_t mn;
    npy_array a;
    CHECK(npy_zip_member(b, len, "mu.npy", &m, &mn) == NULL && m); /* CRC checked on the way */
    CHECK(m && mn == 128 + sizeof mu && npy_parse_any(m, mn, "mu", &a) == NULL);
    CHECK(a.ndim == 2 && a.shape[0] == 2 && a.shape[1] == 3 && !memcmp(a.data, mu, sizeof mu));
    free(m);
    CHECK(npy_zip_member(b, len, "class.npy", &m, &mn) == NULL && m);
    CHECK(m && npy_parse(m, mn, "class", &a) == NULL && a.count == 4 && npy_get(&a, 1) == -1 && npy_get(&a, 3) == 2);
    free(m);
    CHECK(npy_zip_member(b, len, "meta/empty.npy", &m, &mn) == NULL && m);
    CHECK(m && npy_parse_any(m, mn, "empty", &a) == NULL && a.count == 0 && a.shape[1] == 3);
    free(m);
    /* the local header: PK 3 4, version 2.0, the method (0 stored, 8 deflated) */
    CHECK(b[0] == 'P' && b[1] == 'K' && b[2] == 3 && b[3] == 4 && b[4] == 20 && b[8] == (level ? 8 : 0));
    /* stored: the member's bytes are in the file as they are, and their CRC is zlib's */
    if (!level) {
        uint8_t want[128 + sizeof mu];
        npy_header((char *)want, 128, "<f4", 2, shape);
        memcpy(want + 128, mu, sizeof mu);
        CHECK(!memcmp(b + 30 + 6, want, sizeof want));
        uint32_t crc = b[14] | b[15] << 8 | b[16] << 16 | (uint32_t)b[17] << 24;
        CHECK(crc == crc32(0, want, sizeof want));
    }
    /* the directory says mu's data runs past the file: the archive is truncated (the message
     * is made after the entries are freed: ASan once caught it reading them) */
    size_t cd = b[len - 6] | b[len - 5] << 8 | b[len - 4] << 16 | (size_t)b[len - 3] << 24;
    uint8_t keep[4];
    memcpy(keep, mem + cd + 20, 4);
    memcpy(mem + cd + 20, "\xff\xff\xff\x7f", 4);
    const char *err = npy_zip_entries(b, len, &e, &count);
    CHECK(err && strstr(err, "a truncated zip archive (entry 1 of 3: 2147483647 bytes, ") && !e);
    memcpy(mem + cd + 20, keep, 4);
    /* a flipped data byte: the reader says CRC mismatch (stored) or corrupt data (deflated) */
    mem[30 + 6 + (level ? 20 : 130)] ^= 1;
    CHECK(npy_zip_member(b, len, "mu.npy", &m, &mn) != NULL && !m);
    free(mem);
}

/* a raw deflate stream of b[0..n) into out (zip's own: no zlib header) */
static size_t deflate_raw(const uint8_t *b, size_t n, uint8_t *out, size_t cap)
{
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    deflateInit2(&zs, 9, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
    zs.next_in = (Bytef *)b, zs.avail_in = (uInt)n;
    zs.next_out = out, zs.avail_out = (uInt)cap;
    int r = deflate(&zs, Z_FINISH);
    size_t got = zs.total_out;
    deflateEnd(&zs);
    return r == Z_STREAM_END ? got : 0;
}

/* a member read lazily: its header alone, then the whole, and a member whose data goes on past
 * the size its directory declares (a deflate bomb) stops there */
static void test_lazy(void)
{
    /* an .npy of uint8 [4] with 1 MiB of zeros after it: the header says 128 + 4 bytes */
    size_t big = 1 << 20;
    uint8_t *plain = calloc(1, 128 + big), *z = malloc(big);
    int64_t four = 4;
    CHECK(npy_header((char *)plain, 128, "|u1", 1, &four) == 128);
    memcpy(plain + 128, "\1\2\3\4", 4);
    size_t zn = deflate_raw(plain, 128 + big, z, big);
    CHECK(zn > 0 && zn < 4096); /* zeros deflate about 1000 to 1 */
    npy_zip_entry e = {.name = "x.npy", .namelen = 5, .method = 8, .csize = zn, .usize = 132, .data = z};
    e.crc = (uint32_t)crc32(0, plain, 132);
    npy_array a;
    CHECK(npy_zip_header(&e, "x", &a) == NULL);
    CHECK(a.kind == 'u' && a.ndim == 1 && a.shape[0] == 4 && a.offset == 128 && a.filesize == 132 && !a.data);
    /* declared 132 bytes: inflating stops at byte 133, long before the megabyte */
    uint8_t *m;
    const char *err = npy_zip_inflate(&e, "x", &m);
    CHECK(err && !strcmp(err, "x: inflates to more than the 132 bytes its zip entry declares: a corrupt archive"));
    CHECK(!m);
    /* the same member cut to its 132 bytes reads back, CRC checked; declared longer, it is short */
    zn = deflate_raw(plain, 132, z, big);
    e.csize = zn;
    CHECK(npy_zip_inflate(&e, "x", &m) == NULL && m);
    CHECK(m && npy_parse_any(m, 132, "x", &a) == NULL && npy_get(&a, 3) == 4);
    free(m);
    e.usize = 200;
    err = npy_zip_inflate(&e, "x", &m);
    CHECK(err && !strcmp(err, "x: a corrupt zip entry (132 bytes inflated, 200 declared)") && !m);
    e.usize = 132;
    e.crc ^= 1;
    err = npy_zip_inflate(&e, "x", &m);
    CHECK(err && strstr(err, "CRC mismatch") && !m);
    /* stored: the header read from the first bytes alone */
    npy_zip_entry s = {.name = "x.npy", .namelen = 5, .method = 0, .csize = 132, .usize = 132, .data = plain};
    CHECK(npy_zip_header(&s, "x", &a) == NULL && a.filesize == 132);
    s.method = 12; /* bzip2 */
    err = npy_zip_header(&s, "x", &a);
    CHECK(err && !strcmp(err, "x: zip compression method 12, which is not read: expected stored (0) or deflated (8)"));
    free(plain);
    free(z);
}

/* a 128-byte .npy header holding dict (padded with spaces and '\n'), as np.save writes one */
static size_t put_dict(uint8_t *buf, const char *dict)
{
    memcpy(buf, "\x93NUMPY\x01\x00\x76\x00", 10);
    memset(buf + 10, ' ', 117);
    memcpy(buf + 10, dict, strlen(dict));
    buf[127] = '\n';
    return 128;
}

/* shapes, dtypes and archives refused, each saying what it found and what is read */
static void test_refusals(void)
{
    uint8_t buf[512];
    npy_array a;
    /* a zero beside a dimension of 2^62: no elements, but no reader takes such items */
    int64_t huge[2] = {0, (int64_t)1 << 62};
    const char *err = roundtrip(buf, "<f4", 2, huge, "", 0, &a);
    CHECK(err && !strcmp(err, "x: shape (0, 4611686018427387904) is too large: expected each dimension, and the "
                              "product of the non-zero ones, at most 134217728"));
    int64_t fits[3] = {0, 1 << 13, 1 << 14}; /* 2^27 without the zero: the largest taken */
    CHECK(roundtrip(buf, "<f4", 3, fits, "", 0, &a) == NULL && a.count == 0);
    fits[0] = 2;
    CHECK(roundtrip(buf, "|u1", 3, fits, "", 0, &a) != NULL);
    /* a structured dtype says so, for both readers */
    size_t h = put_dict(buf, "{'descr': [('a', '<f4'), ('b', '<i4')], 'fortran_order': False, 'shape': (0,), }");
    err = npy_parse_any(buf, h, "x", &a);
    CHECK(err && !strcmp(err, "x: a structured dtype (a list of fields), which is not supported: expected one "
                              "plain dtype, integers (i1..i8, u1..u8), floats (f2, f4, f8), bool or strings (U, S)"));
    err = npy_parse(buf, h, "x", &a);
    CHECK(err && strstr(err, "x: a structured dtype (a list of fields), which is not supported: expected one "
                             "plain dtype, an integer type (i1..i8, u1..u8"));
    /* Fortran order: refused with the shape known (fromnpz tells an array of n rows by it) */
    h = put_dict(buf, "{'descr': '<f4', 'fortran_order': True, 'shape': (3, 2), }");
    err = npy_parse_any(buf, h + 24, "x", &a);
    CHECK(err && strstr(err, "fortran_order is True") && a.ndim == 2 && a.shape[0] == 3);
    /* a uint64 above INT64_MAX: npy_get saturates, npy_get_u64 has it */
    uint64_t u8[1] = {((uint64_t)1 << 63) + 5};
    int64_t one = 1;
    CHECK(roundtrip(buf, "<u8", 1, &one, u8, 8, &a) == NULL);
    CHECK(npy_get(&a, 0) == INT64_MAX && npy_get_u64(&a, 0) == u8[0]);
    /* a zip64 end record (its locator, then the usual end with its fields at 0xFFFF...) */
    uint8_t zip[98] = {0};
    uint8_t *loc = zip + 56, *end = zip + 76;
    memcpy(zip, "PK\6\6", 4);
    memcpy(loc, "PK\6\7", 4);
    memcpy(end, "PK\5\6", 4);
    memset(end + 8, 0xff, 12);
    npy_zip_entry *e;
    int n;
    err = npy_zip_entries(zip, sizeof zip, &e, &n);
    CHECK(err && !strcmp(err, "a zip64 archive (its end record is zip64's), which is not read: expected a plain "
                              "zip archive, as np.savez writes one for up to 65535 arrays and 4 GiB"));
}

/* strings: '<U' (UCS-4 code points, little or big endian) as UTF-8, '|S' as bytes, numpy's
 * trailing NULs dropped; a NUL inside, a surrogate and what is not a string dtype refused */
static void test_strings(void)
{
    uint8_t buf[512];
    npy_array a;
    char out[64];
    size_t len;
    int64_t three = 3, two = 2;
    /* "ab", U+00E9 U+20AC U+1F600 (UTF-8 C3 A9, E2 82 AC, F0 9F 98 80), "" (all NULs) */
    uint32_t u3[9] = {'a', 'b', 0, 0xe9, 0x20ac, 0x1f600, 0, 0, 0};
    CHECK(roundtrip(buf, "<U3", 1, &three, u3, sizeof u3, &a) == NULL);
    CHECK(a.kind == 'U' && a.size == 12 && a.chars == 3 && !strcmp(npy_dtype_name(&a), "'<U3'"));
    CHECK(npy_get_text(&a, 0, out, &len) == NULL && len == 2 && !memcmp(out, "ab", 2));
    CHECK(npy_get_text(&a, 1, out, &len) == NULL && len == 9 &&
          !memcmp(out, "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", 9));
    CHECK(npy_get_text(&a, 2, out, &len) == NULL && len == 0);
    uint8_t be[8] = {0, 0, 0, 'z', 0, 0, 0, 0}; /* '>U1' "z", "" */
    CHECK(roundtrip(buf, ">U1", 1, &two, be, 8, &a) == NULL && npy_get_text(&a, 0, out, &len) == NULL && len == 1 &&
          out[0] == 'z' && npy_get_text(&a, 1, out, &len) == NULL && len == 0);
    CHECK(roundtrip(buf, "|S3", 1, &two, "ab\0xyz", 6, &a) == NULL && a.kind == 'S' && a.size == 3);
    CHECK(npy_get_text(&a, 0, out, &len) == NULL && len == 2 && !memcmp(out, "ab", 2));
    CHECK(npy_get_text(&a, 1, out, &len) == NULL && len == 3 && !memcmp(out, "xyz", 3));
    /* refusals: a NUL inside, a surrogate, beyond U+10FFFF; no string dtype */
    uint32_t bad[6] = {'a', 0, 'b', 0xd800, 0x110000, 0};
    CHECK(roundtrip(buf, "<U3", 1, &two, bad, 24, &a) == NULL);
    const char *err = npy_get_text(&a, 0, out, &len);
    CHECK(err && !strcmp(err, "element 0 holds a NUL character inside: expected names without one"));
    err = npy_get_text(&a, 1, out, &len);
    CHECK(err && strstr(err, "element 1 holds U+D800, which is no Unicode character"));
    bad[3] = 'c';
    CHECK(roundtrip(buf, "<U3", 1, &two, bad, 24, &a) == NULL);
    err = npy_get_text(&a, 1, out, &len);
    CHECK(err && strstr(err, "element 1 holds U+110000, which is no Unicode character"));
    CHECK(roundtrip(buf, "|S2", 1, &two, "a\0\0b", 4, &a) == NULL);
    CHECK(npy_get_text(&a, 1, out, &len) && npy_get_text(&a, 0, out, &len) == NULL && len == 1);
    err = roundtrip(buf, "<U0", 1, &two, "", 0, &a);
    CHECK(err && strstr(err, "x is '<U0' (2,): expected strings of 1 to 65536 characters"));
    err = roundtrip(buf, "|U1", 1, &two, bad, 8, &a);
    CHECK(err && strstr(err, "x is '|U1' (2,): expected strings"));
    err = roundtrip(buf, "<S2", 1, &two, "abcd", 4, &a);
    CHECK(err && strstr(err, "x is '<S2' (2,): expected strings"));
    /* the data of a string array at most 1 GiB: 2^27 items of 16 bytes are twice that */
    int64_t many = 1 << 27;
    size_t h = npy_header((char *)buf, 256, "<U4", 1, &many);
    err = npy_parse_any(buf, h, "x", &a);
    CHECK(err && strstr(err, "x: '<U4' (134217728,) is 134217728 x 16 bytes: expected at most 1073741824 (1 GiB)"));
}

int main(void)
{
    test_header();
    test_floats();
    test_strings();
    test_npz(0);
    test_npz(6);
    test_lazy();
    test_refusals();
    return check_done("npy");
}
