/* npy: numpy's .npy arrays of integers and the members of .npz (zip) archives, read from memory
 * (the public N-digit MNIST generator publishes its image ids so: lib/digits.h, mkdigits
 * --image-ids). Nothing is trusted: every size, offset and count is checked against the buffer,
 * and a bad file gets a message (errmsg in lib/util.h: one static buffer, valid until the next
 * failing call of any module) instead of a crash; the fuzz target fuzz_npy feeds it arbitrary
 * bytes through digits_ids_parse.
 *
 *   .npy   versions 1 to 3; dtype '<i8' and the other integer types i1..i8, u1..u8 in either
 *          byte order; C order; at most 8 dimensions; the data at most NPY_MAX_BYTES
 *   .npz   a zip archive, members stored or deflated (CRC checked), no zip64, no encryption
 *
 *   uint8_t *m; size_t mn;
 *   const char *err = npy_zip_member(buf, len, "image_ids.npy", &m, &mn);  // m NULL: absent
 *   npy_array a;
 *   if (!err && m) err = npy_parse(m, mn, "image_ids.npy", &a);            // a.data points into m
 *   int64_t v = npy_get(&a, 0);
 *   free(m);
 */
#ifndef HEDGE_NPY_H
#define HEDGE_NPY_H
#include <stddef.h>
#include <stdint.h>

#define NPY_MAX_BYTES (1LL << 30)   /* a file or member larger than 1 GiB is refused */

/* one .npy array of integers: the header's dtype and shape, and where its data starts */
typedef struct {
    char descr[16];
    int big, is_unsigned, size;   /* byte order, signedness and bytes of an element */
    int ndim;
    int64_t shape[8];
    int64_t count;                /* elements */
    const uint8_t *data;
} npy_array;

/* parses the .npy in b[0..n) (name: for messages); NULL, or what is wrong */
const char *npy_parse(const uint8_t *b, size_t n, const char *name, npy_array *a);
/* element i as int64; an unsigned 64-bit value above INT64_MAX reads as INT64_MAX */
int64_t npy_get(const npy_array *a, int64_t i);
/* "(2, 3, 4)" into out */
void npy_shape_str(const npy_array *a, char *out, size_t size);
/* 1 when b[0..n) starts as a zip archive does (a local file header or an empty archive's end) */
int npy_is_zip(const uint8_t *b, size_t n);
/* member `name` of the zip archive b[0..n), inflated, in *out (malloc'd; NULL when absent) */
const char *npy_zip_member(const uint8_t *b, size_t n, const char *name, uint8_t **out, size_t *outn);

#endif
