/* npzimport: numpy arrays as a stream (bin/fromnpz). An .npz (np.savez) or one .npy becomes an
 * `embeddings` stream (mu, var, eta, class, id and any other per-item arrays), an `images`
 * stream or a `features` stream (a backbone's feature vectors, for train's features bodies),
 * one record per item as embed, mkdigits and formats/stream.md say. Every array is checked and
 * converted in npzimport_read, before a header exists: a refusal (die, "FILE: array 'mu' is int64
 * (3, 4): why") leaves the output empty.
 *
 * Roles: the array that plays each role is named by an option (it must exist) or found under its
 * default name (class: also labels, label). Conversions: mu, var, eta and float extras to float32
 * from any numeric dtype (float16, float64, integers, bool; then checked finite; var >= 0),
 * features to float32 (finite; [n, F], or [n, 1, F]: the mu of a C = 1 embeddings stream), class
 * to int32 from integers, or from names ('<U', '|S' strings: their indices into the sorted
 * distinct names, kept in names and written as meta class_names, lib/data/classnames.h; floats are
 * refused), id to int64 (default: the item's index), corrupt to uint8
 * (0 or 1), images to uint8 (floats in [0, 1] scaled by 255 or in [0, 255], rounded; --range
 * decides), integer extras to int32 when they fit, else int64, bool/uint8 extras as uint8.
 * Extras without one row per item or not of numbers (tonpz's header, a string) are left out with
 * a note on stderr; numbers that cannot be read (complex) and names that cannot be field names
 * (not UTF-8, a control character) are refused: --skip them.
 *
 * Only what is used is inflated: the zip's central directory first, then the .npy header of each
 * array looked at (a role's, or an extra not skipped), then the data of the arrays used, one at a
 * time, each released once converted. Each must inflate to exactly its header's declared size
 * (header + count x itemsize; inflating stops there) and all together at most NPZIMPORT_MAX_BYTES,
 * so that neither a deflate bomb nor a header declaring too much costs more than is stated.
 *
 * A new kind is one more main role (its field, shape checks in pick_roles and conversion in
 * npzimport_read) beside mu, image and features, and its line in kind_roles; the class, id,
 * corrupt and extra fields come with any kind.
 *
 *   npzimport_options o = {.input = "emb.npz"};
 *   npzimport im;
 *   npzimport_read(&im, &o);
 *   stream_header *h = npzimport_header(&im, &o, argc, argv);
 *   stream_writer *w = stream_create(stdout, h);
 *   npzimport_write(&im, w);
 *   stream_finish(w);
 *   npzimport_free(&im);
 *   header_free(h);
 */
#ifndef HEDGE_NPZIMPORT_H
#define HEDGE_NPZIMPORT_H
#include <stddef.h>
#include <stdint.h>

#include "classnames.h"
#include "stream.h"

#define NPZIMPORT_MAX_BYTES (2LL << 30) /* the arrays used, inflated, at most 2 GiB together */
#define NPZIMPORT_MAX_CD (1 << 20)        /* embeddings: C and D at most 2^20 */

/* the roles, in the order of fromnpz's options --mu ... --corrupt; from CLASS on, any kind's */
enum { NPZIMPORT_MU, NPZIMPORT_VAR, NPZIMPORT_ETA, NPZIMPORT_IMAGE, NPZIMPORT_FEATURES, NPZIMPORT_CLASS,
       NPZIMPORT_ID, NPZIMPORT_CORRUPT, NPZIMPORT_NROLES };
/* the kinds of stream made */
enum { NPZIMPORT_TO_EMBEDDINGS, NPZIMPORT_TO_IMAGES, NPZIMPORT_TO_FEATURES, NPZIMPORT_NKINDS };
extern const char *const npzimport_kind_names[NPZIMPORT_NKINDS]; /* "embeddings", "images", "features" */
extern const char *const npzimport_role_names[NPZIMPORT_NROLES]; /* "mu", ..., "corrupt": the fields */

typedef struct {
    int kind;                            /* NPZIMPORT_TO_EMBEDDINGS (0), _TO_IMAGES or _TO_FEATURES */
    const char *name[NPZIMPORT_NROLES];  /* the array of each role, given by option: must exist */
    const char *skip;                    /* arrays left out, comma-separated */
    const char *where;                   /* --where: only the items whose field where (class, id, corrupt or
                                          * an integer extra) lies in [where_lo, where_hi]; NULL: all */
    int64_t where_lo, where_hi;
    const char *dataset;                 /* the header's dataset (default: the file's name) */
    const char *input;                   /* the file, - for stdin */
    int range;                           /* images: 0 decide from the values, 1 or 255 */
    int has_a, has_b;
    double match_a, match_b;             /* the header's match_a, match_b, if given */
} npzimport_options;

/* one field of the output: its item shape and its values, all n items in one buffer */
typedef struct {
    const char *name;
    int dtype, ndim;
    int64_t shape[TENSOR_MAXDIM];
    void *data;
    size_t item;  /* bytes per item */
} npzimport_column;

typedef struct npzimport_array npzimport_array; /* one array of the archive */

typedef struct {
    uint8_t *buf;                        /* the file */
    npzimport_array *v;                  /* its arrays [nv] */
    int nv;
    const npzimport_array *main;         /* mu, image or features */
    int has_var;
    int64_t n, C, D;                     /* items; embeddings: components and dimensions;
                                          * features: C 1, D the vectors' length F (with --mu, F + the
                                          * mean's length) */
    int64_t mean_dims;                   /* features with --mu: the frozen mean's length, else 0 */
    int32_t *cls;                        /* [n] the classes, NULL without */
    classnames names;                    /* labels that were names: cls indexes them (present 0: integers) */
    npzimport_column col[STREAM_MAXFIELDS];
    int ncol;
} npzimport;

/* 1 when the stream of kind takes role r (an option naming its array is misuse otherwise) */
int npzimport_takes(int kind, int r);
/* reads o->input and converts its arrays into im->col; dies on what it cannot convert */
void npzimport_read(npzimport *im, const npzimport_options *o);
/* the stream's header (the caller frees it), with argc, argv as its provenance */
stream_header *npzimport_header(const npzimport *im, const npzimport_options *o, int argc, char **argv);
/* the n records */
void npzimport_write(const npzimport *im, stream_writer *w);
void npzimport_free(npzimport *im);
#endif
