/* npy: numpy's .npy arrays and the members of .npz (zip) archives, read from memory and written
 * (the public N-digit MNIST generator publishes its image ids so: lib/data/digits.h, mkdigits
 * --image-ids; fromnpz: lib/data/npzimport.h). Nothing is trusted: every size, offset and count is
 * checked against the buffer, and a bad file gets a message (errmsg in lib/base/util.h: one static
 * buffer, valid until the next failing call of any module) instead of a crash; the fuzz target
 * fuzz_npy feeds it arbitrary bytes through digits_ids_parse and npzimport_read.
 *
 *   .npy   versions 1 to 3; dtype '<i8' and the other integer types i1..i8, u1..u8 in either
 *          byte order (npy_parse_any: also f2, f4, f8, b1 and strings, '<U' / '>U' (UCS-4) and
 *          '|S' (bytes) of 1 to NPY_MAX_CHARS characters, for fromnpz); C order; at most 8
 *          dimensions, each and the product of the non-zero ones at most NPY_MAX_COUNT, and so
 *          the data at most NPY_MAX_BYTES; a header at most NPY_MAX_HEADER bytes
 *   .npz   a zip archive, members stored or deflated (CRC checked), no encryption; sizes in
 *          zip64 extra fields are read (np.savez writes them), a zip64 end record is not (it
 *          comes with more than 65535 members or 4 GiB, beyond what is read anyway)
 *
 * An archive is read lazily: npy_zip_entries lists the members from the central directory
 * without inflating any, npy_zip_header inflates no more of a member than its .npy header, and
 * npy_zip_inflate inflates a whole member, stopping as soon as it would exceed the size the
 * directory declares, so that a deflate bomb costs no more than that size.
 *
 *   npy_zip_entry *e;
 *   int n;
 *   const char *err = npy_zip_entries(buf, len, &e, &n);   // e[i].name: not NUL-terminated
 *   npy_array a;
 *   if (!err) err = npy_zip_header(&e[0], "mu", &a);       // dtype, shape, a.filesize; no data
 *   uint8_t *m;
 *   if (!err && e[0].usize == a.filesize && !(err = npy_zip_inflate(&e[0], "mu", &m)))
 *       err = npy_parse_any(m, e[0].usize, "mu", &a);      // a.data points into m
 *   double v = npy_get_f64(&a, 0);
 *   free(m), free(e);
 *
 * npy_zip_member (one member by name, inflated) and npy_parse (integers only) serve the image ids.
 */
#ifndef HEDGE_NPY_H
#define HEDGE_NPY_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define NPY_MAX_BYTES (1LL << 30)   /* a file or member larger than 1 GiB is refused */
#define NPY_MAX_COUNT (NPY_MAX_BYTES / 8) /* elements of an array (2^27: 1 GiB of float64) */
#define NPY_MAX_HEADER 65536        /* bytes of an .npy header (numpy's np.load takes 10,000) */
#define NPY_MAX_CHARS 65536         /* characters of one string element ('<U65536') */

/* one .npy array: the header's dtype and shape, and where its data starts */
typedef struct {
    char descr[16];
    int big, is_unsigned, size;   /* byte order, signedness and bytes of an element */
    char kind;                    /* 'i', 'u', 'f' (float), 'b' (bool), 'U' (UCS-4 text), 'S' (bytes) */
    int chars;                    /* 'U', 'S': characters of an element ('<U5': 5, size 20) */
    int ndim;
    int64_t shape[8];
    int64_t count;                /* elements */
    size_t offset;                /* the header's bytes: the data starts there */
    size_t filesize;              /* the .npy's bytes as the header declares them: offset + count x size */
    const uint8_t *data;          /* NULL after npy_zip_header */
} npy_array;

/* parses the .npy of integers in b[0..n) (name: for messages); NULL, or what is wrong */
const char *npy_parse(const uint8_t *b, size_t n, const char *name, npy_array *a);
/* the same, and floats ('<f2', '<f4', '<f8', either byte order), bool ('|b1') and strings
 * ('<U5', '>U5', '|S5') */
const char *npy_parse_any(const uint8_t *b, size_t n, const char *name, npy_array *a);
/* numpy's name of the dtype: "int64", "uint8", "float16", "bool", ...; for a string or a dtype
 * that is not read, as the header spells it, quoted: "'<U5'", "'<c8'" */
const char *npy_dtype_name(const npy_array *a);
/* element i of an integer array as int64; an unsigned 64-bit value above INT64_MAX reads as INT64_MAX */
int64_t npy_get(const npy_array *a, int64_t i);
/* element i of an integer array, all 64 bits as they are (a uint64 above INT64_MAX too) */
uint64_t npy_get_u64(const npy_array *a, int64_t i);
/* element i of any array of numbers as a double (exact for floats; integers beyond 2^53 rounded) */
double npy_get_f64(const npy_array *a, int64_t i);
/* element i of a string array ('U', 'S') as text: UTF-8 for 'U', the bytes for 'S', without the
 * trailing NULs numpy pads with, into out (a->size bytes at least), *len bytes of it; NULL, or
 * what is wrong ("element 3 holds a NUL character inside: ...", a surrogate, beyond U+10FFFF) */
const char *npy_get_text(const npy_array *a, int64_t i, char *out, size_t *len);
/* "(2, 3, 4)" into out */
void npy_shape_str(const npy_array *a, char *out, size_t size);
/* 1 when b[0..n) starts as a zip archive does (a local file header or an empty archive's end) */
int npy_is_zip(const uint8_t *b, size_t n);

/* one member of a zip archive, as its central directory describes it */
typedef struct {
    const char *name;      /* namelen bytes in the archive: not NUL-terminated, and may hold a NUL */
    size_t namelen;
    int method, encrypted; /* method 0 stored, 8 deflated (others are refused when inflated) */
    uint32_t crc;
    uint64_t csize, usize; /* compressed and inflated bytes */
    const uint8_t *data;   /* the csize compressed bytes, checked to lie within the archive */
} npy_zip_entry;
/* the members of the zip archive b[0..n) in its order, in *e (malloc'd; the entries point into
 * b), none inflated; a corrupt directory or local header, or data out of the file, is an error */
const char *npy_zip_entries(const uint8_t *b, size_t n, npy_zip_entry **e, int *count);
/* the .npy header of member e (name: for messages), inflating no further than it goes: as
 * npy_parse_any, without the data (a->data NULL); a->filesize says how large the member must be */
const char *npy_zip_header(const npy_zip_entry *e, const char *name, npy_array *a);
/* member e inflated, its e->usize bytes (at most NPY_MAX_BYTES) in *out (malloc'd): inflating
 * stops once past e->usize, and more or fewer bytes, or a wrong CRC, is an error */
const char *npy_zip_inflate(const npy_zip_entry *e, const char *name, uint8_t **out);
/* member `name` of the zip archive b[0..n), inflated, in *out (malloc'd; NULL when absent) */
const char *npy_zip_member(const uint8_t *b, size_t n, const char *name, uint8_t **out, size_t *outn);
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
