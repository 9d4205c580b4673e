/* stream: read and write hedge tensor streams (formats/stream.md) over msgpack-c.
 * This is the only module that includes msgpack.h. The header in memory (stream_header, the
 * header_* functions) is lib/streams/header.h, included here.
 *
 * Ownership: a reader owns its header and the record it fills (tensor buffers are reused from
 * record to record, so memory stays constant); a writer does not own the header it is given,
 * and headers added as inputs are deep-copied.
 *
 *   stream_reader *in = stream_open(stdin, "stdin");
 *   stream_expect_kind(in, "images");
 *   int ci = stream_field_index(in->header, "image");       // dies if there is no such field
 *
 *   stream_header *h = header_new("images", 0);
 *   header_provenance(h, argc, argv);  header_add_input(h, in->header);
 *   header_copy_fields(h, in->header); header_copy_meta(h, in->header);
 *   stream_writer *out = stream_create(stdout, h);          // writes the header
 *
 *   stream_record rec = {0};
 *   while (stream_read(in, &rec))                           // 0 at the trailer; dies if cut short
 *       stream_write_record(out, &rec);                      // checked against h's fields
 *   stream_finish(out);                                     // trailer {"end": n}
 *   stream_close(in); record_free(&rec); header_free(h);
 *   close_stdout();
 */
#ifndef HEDGE_STREAM_H
#define HEDGE_STREAM_H
#include <stdint.h>
#include <stdio.h>

#include "header.h"
#include "tensor.h"

#define STREAM_VERSION 1
/* A writer keeps at most this many levels of lineage (the stream's own header is level 1): the
 * newest STREAM_LINEAGE_MAX - 2, then one header of kind `elided` standing for the middle,
 * then the origins (formats/stream.md, "Lineage"). Readers take up to
 * STREAM_LINEAGE_READ_MAX levels. */
#define STREAM_LINEAGE_MAX 8
#define STREAM_LINEAGE_READ_MAX 64

/* JSON to f: the header (lineage included when with_inputs), on one line, without a newline
 * (lib/streams/header_json.c) */
void header_print_json(FILE *f, const stream_header *h, int with_inputs);
/* a META_RAW value (any msgpack value) as JSON text, "null" if it is not msgpack; malloc'd */
char *stream_raw_json(const unsigned char *raw, size_t len);
/* A meta value that is an array of strings (class_names: lib/streams/classnames.h): its n elements, all
 * str (*bytes 0) or all bin (*bytes 1), each copied NUL-terminated after its (*len)[i] bytes into
 * (*s)[i] (the caller frees each and both arrays); NULL, or what is wrong (errmsg: "is a str:
 * expected an array of names (str or bin)", "name 3 is an int: ...", str beside bin), with
 * nothing allocated. The text of a str is not checked here. */
const char *stream_meta_strings(const stream_meta *m, int64_t *n, char ***s, size_t **len, int *bytes);
/* meta key of h as an array of the n strings s (lengths len): str, or bin when bytes */
void stream_set_strings(stream_header *h, const char *key, int64_t n, char *const *s, const size_t *len, int bytes);

/* A record: one tensor per field of the header, in the header's order. */
typedef struct {
    int n;
    tensor t[STREAM_MAXFIELDS];
} stream_record;
void record_free(stream_record *rec);
/* leading dimension (batch size) of a batched record */
int64_t record_batch(const stream_record *rec);

typedef struct stream_reader stream_reader;
struct stream_reader {
    stream_header *header;
    long long count;           /* records read so far */
    const char *name;          /* for messages */
    void *impl;
};
/* reads and checks the header; dies on anything that is not a hedge stream of this version, and
 * on a second reader of stdin in one process (two inputs given as -: one line saying so) */
stream_reader *stream_open(FILE *f, const char *name);
/* path "-" is stdin; dies if it cannot be opened */
stream_reader *stream_open_path(const char *path);
/* a stream held in memory (bytes, n of them, not copied: they outlive the reader), named name in
 * messages; dies on no bytes */
stream_reader *stream_open_bytes(const void *bytes, size_t n, const char *name);
void stream_expect_kind(const stream_reader *r, const char *kind);
/* 1: a record was read into rec; 0: the trailer was reached. Dies on truncation or corruption. */
int stream_read(stream_reader *r, stream_record *rec);
void stream_close(stream_reader *r);

typedef struct stream_writer stream_writer;
/* writes h at once; h must outlive the writer */
stream_writer *stream_create(FILE *f, const stream_header *h);
/* the same; name (which must outlive the writer) is the file named in error messages */
stream_writer *stream_create_named(FILE *f, const stream_header *h, const char *name);
/* rec must match the header's fields (batch dimension first when batched) */
void stream_write_record(stream_writer *w, const stream_record *rec);
/* one pointer per field, in header order; shapes from the header, batch B when batched */
void stream_write_data(stream_writer *w, void *const *data, int64_t batch);
/* A pipe holds 64 KiB by default, less than one batch record, so writer and reader would take
 * turns at every record: readers and writers grow the pipes they use to 1 MiB (best effort).
 * For programs that write to a descriptor behind their own FILE (batcher). */
void stream_pipe_grow(int fd);
/* the trailer; flushes but does not close f. Frees w. */
void stream_finish(stream_writer *w);
long long stream_written(const stream_writer *w);
/* gives up on a stream: writes what is buffered but no trailer, so readers see it as cut
 * short. Frees w. For programs that fail part way and for tests. */
void stream_abort(stream_writer *w);

#endif
