/* npy: numpy's .npy arrays and the members of .npz (zip) archives, read from memory and written
 * (the public N-digit MNIST generator publishes its image ids so: lib/digits.h, mkdigits
 * --image-ids). Nothing is trusted: every size, offset and count is checked against the buffer,
 * and a bad file gets a message (errmsg in lib/util.h: one static buffer, valid until the next
 * failing call of any module) instead of a crash; the fuzz target fuzz_npy feeds it arbitrary
 * bytes through digits_ids_parse.
 *
 *   .npy   versions 1 to 3; dtype '<i8' and the other integer types i1..i8, u1..u8 in either
 *          byte order (npy_parse_any: also f4, f8 and b1, for fromnpz); C order; at most 8
 *          dimensions; the data at most NPY_MAX_BYTES
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
#include <stdio.h>

#define NPY_MAX_BYTES (1LL << 30)   /* a file or member larger than 1 GiB is refused */

/* one .npy array: the header's dtype and shape, and where its data starts */
typedef struct {
    char descr[16];
    int big, is_unsigned, size;   /* byte order, signedness and bytes of an element */
    char kind;                    /* 'i', 'u', 'f' (float) or 'b' (bool) */
    int ndim;
    int64_t shape[8];
    int64_t count;                /* elements */
    const uint8_t *data;
} npy_array;

/* parses the .npy of integers in b[0..n) (name: for messages); NULL, or what is wrong */
const char *npy_parse(const uint8_t *b, size_t n, const char *name, npy_array *a);
/* the same, and floats ('<f4', '<f8', either byte order) and bool ('|b1') */
const char *npy_parse_any(const uint8_t *b, size_t n, const char *name, npy_array *a);
/* numpy's name of the dtype: "int64", "uint8", "float32", "bool", ... */
const char *npy_dtype_name(const npy_array *a);
/* element i of an integer array as int64; an unsigned 64-bit value above INT64_MAX reads as INT64_MAX */
int64_t npy_get(const npy_array *a, int64_t i);
/* element i of any array as a double (exact for floats; integers beyond 2^53 rounded) */
double npy_get_f64(const npy_array *a, int64_t i);
/* "(2, 3, 4)" into out */
void npy_shape_str(const npy_array *a, char *out, size_t size);
/* 1 when b[0..n) starts as a zip archive does (a local file header or an empty archive's end) */
int npy_is_zip(const uint8_t *b, size_t n);
/* member `name` of the zip archive b[0..n), inflated, in *out (malloc'd; NULL when absent) */
const char *npy_zip_member(const uint8_t *b, size_t n, const char *name, uint8_t **out, size_t *outn);
/* the names of the archive's members, in its order (*names and each name malloc'd) */
const char *npy_zip_names(const uint8_t *b, size_t n, char ***names, int *count);
/* the whole file at path ("-": stdin) in *out (malloc'd), at most about 1 GiB */
const char *npy_load_file(const char *path, uint8_t **out, size_t *outn);

/* Writing. An .npy header (format 1.0, C order, padded to 64 bytes as numpy pads it) for dtype
 * descr ('<f4', '|u1', '<U12', ...) and shape into out; its length, 0 when size is too small.
 * An .npz as np.savez (level 0: members stored) or np.savez_compressed (level 1..9: deflated)
 * writes it: each member name.npy is built in memory and written at once, so f may be a pipe;
 * the archive is not zip64 (at most 4 GiB and 65535 members: larger is an error). Write errors
 * are left in f for its closer (atomic_commit, close_stdout) to report.
 *
 *   npz_writer *w = npz_create(stdout, 0);
 *   const char *err = npz_add(w, "mu", "<f4", 2, (int64_t[]){n, D}, mu, n * D * 4);
 *   if (!err) err = npz_finish(w);                          // the central directory; frees w
 */
size_t npy_header(char *out, size_t size, const char *descr, int ndim, const int64_t *shape);
typedef struct npz_writer npz_writer;
npz_writer *npz_create(FILE *f, int level);
const char *npz_add(npz_writer *w, const char *name, const char *descr, int ndim, const int64_t *shape,
                    const void *data, size_t nbytes);
const char *npz_finish(npz_writer *w);

#endif
