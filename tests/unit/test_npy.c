/* npy: writing .npy headers and .npz archives, read back by the module's own reader; floats and
 * bool read (npy_parse_any) in both byte orders. The integer reader and its refusals: test_digits.
 * That numpy itself loads what is written: tests/shell/npz.sh.
 */
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
    /* what npy_parse_any still refuses, naming the dtype; the integer reader refuses floats */
    const char *err = roundtrip(buf, "<f2", 1, &two, i2, sizeof i2, &a);
    CHECK(err && !strcmp(err, "x is '<f2' (2,): expected numbers (integers i1..i8, u1..u8, floats f4, f8 or bool)"));
    err = roundtrip(buf, "<U3", 0, NULL, "a\0\0\0b\0\0\0c\0\0\0", 12, &a);
    CHECK(err && strstr(err, "x is '<U3' (): expected numbers"));
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
    char **names;
    int count;
    CHECK(npy_zip_names(b, len, &names, &count) == NULL);
    CHECK(count == 3 && !strcmp(names[0], "mu.npy") && !strcmp(names[1], "class.npy") &&
          !strcmp(names[2], "meta/empty.npy"));
    for (int i = 0; i < count; i++)
        free(names[i]);
    free(names);
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
    /* a flipped data byte: the reader says CRC mismatch (stored) or corrupt data (deflated) */
    mem[30 + 6 + (level ? 20 : 130)] ^= 1;
    CHECK(npy_zip_member(b, len, "mu.npy", &m, &mn) != NULL && !m);
    free(mem);
}

int main(void)
{
    test_header();
    test_floats();
    test_npz(0);
    test_npz(6);
    return check_done("npy");
}
