/* header: a stream's header in memory (formats/stream.md): its kind, its fields, its meta
 * entries, its provenance and the headers of its inputs, with the lineage bookkeeping a writer
 * needs to keep a deep lineage bounded. No encoding here: lib/streams/stream.c reads and writes headers
 * (stream.h, which includes this file); lib/streams/header_json.c prints one as JSON.
 *
 * Ownership: a header owns everything it points to (strings, meta tensors, raw meta bytes,
 * the deep copies of its inputs); the setters copy what they are given, header_free frees all.
 *
 *   stream_header *h = header_new("embeddings", 1);        // program = util_prog
 *   header_provenance(h, argc, argv);  header_set_seed(h, seed);
 *   header_add_input(h, in->header);                        // a deep copy
 *   header_add_field(h, "mu", DT_F32, 1, (int64_t[]){dim});
 *   header_copy_meta(h, in->header);  header_set_int(h, "dim", dim);
 *   int64_t n = header_need_int(in->header, "classes");     // dies if absent
 *   header_free(h);
 */
#ifndef HEDGE_HEADER_H
#define HEDGE_HEADER_H
#include <stdio.h>
#include <stdint.h>
#include <stddef.h>

#include "tensor.h"

#define STREAM_MAXFIELDS 24
#define STREAM_NAMELEN 32

typedef struct {
    char name[STREAM_NAMELEN];
    int dtype;
    int ndim;                      /* of one item, without the batch dimension */
    int64_t shape[TENSOR_MAXDIM];
} stream_field;

enum { META_INT, META_FLOAT, META_STR, META_BOOL, META_TENSOR, META_RAW };
typedef struct {
    char *key;
    int type;
    int64_t i;        /* META_INT, META_BOOL */
    double f;         /* META_FLOAT */
    char *s;          /* META_STR */
    tensor *t;        /* META_TENSOR (owned) */
    unsigned char *raw; size_t rawlen; /* META_RAW: a value of any other type, as the
                                        * bytes the stream held (lib/streams/stream.c reads them) */
} stream_meta;

typedef struct stream_header stream_header;
struct stream_header {
    char *kind;
    int batched;
    int nfields;
    stream_field fields[STREAM_MAXFIELDS];
    int nmeta;
    stream_meta *meta;
    /* provenance */
    char *program;
    char *version;             /* hedge's version that wrote it ("0.1.0-g835fe34"); NULL: not recorded */
    int nargs;
    char **args;
    int has_seed;
    uint64_t seed;
    int ninputs;
    stream_header **inputs;    /* owned deep copies */
};

stream_header *header_new(const char *kind, int batched);
void header_free(stream_header *h);
stream_header *header_copy(const stream_header *h);
void header_provenance(stream_header *h, int argc, char **argv); /* program = util_prog */
void header_set_seed(stream_header *h, uint64_t seed);
void header_add_input(stream_header *h, const stream_header *in);
void header_add_field(stream_header *h, const char *name, int dtype, int ndim, const int64_t *shape);
void header_copy_fields(stream_header *dst, const stream_header *src);
void header_copy_meta(stream_header *dst, const stream_header *src);
void header_del_meta(stream_header *h, const char *key); /* the key removed, the others in order */
/* The setters replace an entry of the same key in its place, or add one at the end. */
void header_set_int(stream_header *h, const char *key, int64_t v);
void header_set_float(stream_header *h, const char *key, double v);
void header_set_str(stream_header *h, const char *key, const char *v);
void header_set_bool(stream_header *h, const char *key, int v);
void header_set_tensor(stream_header *h, const char *key, const tensor *t); /* copied */
/* a value of no other type, as the len bytes the reader found (copied); for lib/streams/stream.c */
void header_set_raw(stream_header *h, const char *key, const unsigned char *raw, size_t len);
const stream_meta *header_meta(const stream_header *h, const char *key); /* NULL if absent */
/* m's value as text for the shell (tshow -m): a number (%.9g) or a string on one line, a tensor's
 * every value one per line; -1 (nothing printed) for a value of another type */
int header_meta_print(FILE *f, const stream_meta *m);
int64_t header_int(const stream_header *h, const char *key, int64_t dflt);
double header_float(const stream_header *h, const char *key, double dflt);
const char *header_str(const stream_header *h, const char *key, const char *dflt);
/* dies "input stream has no 'key' in its header" */
int64_t header_need_int(const stream_header *h, const char *key);
const tensor *header_tensor(const stream_header *h, const char *key); /* NULL if absent */
int header_field_find(const stream_header *h, const char *name);    /* -1 if absent */
/* index of the field; dies "input stream (kind K) has no field 'name'" */
int stream_field_index(const stream_header *h, const char *name);
/* The index of the field a reader takes by its type, checked for its dtype AND its item shape,
 * the one check of every reader that reads a field's items (a record holds exactly the items its
 * header declares, so a dtype alone does not say how many bytes there are to read): ndim
 * dimensions of these sizes, where a size FIELD_ANY is any size from 1; a scalar, one value per
 * record, is ndim 0 (shape NULL); ndim FIELD_ANY takes any shape (images: the caller reads whole
 * items and checks their geometry). Dies naming the stream (src; NULL: "input"), the field, what
 * it found and what was expected:
 *   "r.hs: field 'ap' is float32 [0], expected float32 [] (one value per record)" */
#define FIELD_ANY (-1)
int stream_field_need(const char *src, const stream_header *h, const char *name, int dtype, int ndim,
                      const int64_t *shape);
/* "float32 [2, 8]", "int32 []": a field's dtype and item shape, for messages */
char *stream_field_describe(const stream_field *f, char *buf, size_t n);

/* ------------------------------------------------------------------ bounded lineage
 * A writer keeps a lineage at most STREAM_LINEAGE_MAX levels deep (stream.h): the header at
 * the last level but one and everything below it but the origins (the headers without inputs)
 * become one marker header, kind `elided`, program "..." (formats/stream.md, "Lineage depth").
 * What the marker says is counted here; which origins are distinct is the writer's business
 * (those that pack to the same bytes are one). */

/* levels of header from h down to its deepest origin (h alone: 1) */
int header_lineage_depth(const stream_header *h);

typedef struct {
    long long levels;          /* the longest chain of headers the marker stands for */
    long long headers;         /* how many headers it stands for */
    char programs[256];        /* their distinct programs, newest first, comma-joined (what fits) */
    long long origins_dropped; /* origins earlier markers left out */
    int norigins;
    const stream_header **origins; /* every origin below, in the order met, repeats included */
} header_elision;

/* what a marker standing for h and everything below it would say; header_elision_free after */
void header_elide(const stream_header *h, header_elision *e);
void header_elision_free(header_elision *e);

#endif
