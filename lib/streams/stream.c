/* stream.c: the one module that talks to msgpack-c (stream.h, formats/stream.md): a header
 * packed (its lineage bounded) and parsed, the writer of records and trailer, the reader.
 * The header in memory is lib/streams/header.c's, its JSON lib/streams/header_json.c's. */
#include "stream.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <msgpack.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

#define MAX_DEPTH STREAM_LINEAGE_READ_MAX /* lineage depth we accept when parsing a header */

/* Under AddressSanitizer a record's tensors get buffers of exactly their size, allocated anew
 * when the size changes, so that a program reading past a field (trusting an item shape the
 * header did not promise) is caught; otherwise buffers are rounded up and reused. */
#if defined(__SANITIZE_ADDRESS__)
#define EXACT_BUFFERS 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define EXACT_BUFFERS 1
#endif
#endif
#ifndef EXACT_BUFFERS
#define EXACT_BUFFERS 0
#endif

/* ------------------------------------------------------------------ records */

void record_free(stream_record *rec)
{
    for (int i = 0; i < STREAM_MAXFIELDS; i++)
        if (rec->t[i].owns) {
            free(rec->t[i].data);
            rec->t[i].data = NULL;
            rec->t[i].owns = 0;
            rec->t[i].cap = 0;
        }
    rec->n = 0;
}

int64_t record_batch(const stream_record *rec) { return rec->n > 0 && rec->t[0].ndim > 0 ? rec->t[0].shape[0] : 1; }

/* ------------------------------------------------------------------ packing */

static void pack_strn(msgpack_packer *pk, const char *s, size_t n)
{
    msgpack_pack_str(pk, n);
    msgpack_pack_str_body(pk, s, n);
}

static void pack_str(msgpack_packer *pk, const char *s) { pack_strn(pk, s, strlen(s)); }

static void pack_tensor(msgpack_packer *pk, int dtype, int ndim, const int64_t *shape, const void *data)
{
    static const size_t dtlen[DT_COUNT] = {5, 5, 5, 7, 7}; /* uint8 int32 int64 float32 float64 */
    msgpack_pack_map(pk, 3);
    pack_strn(pk, "dtype", 5);
    pack_strn(pk, dtype_name(dtype), dtlen[dtype]);
    pack_strn(pk, "shape", 5);
    msgpack_pack_array(pk, ndim);
    for (int i = 0; i < ndim; i++)
        msgpack_pack_int64(pk, shape[i]);
    pack_strn(pk, "data", 4);
    size_t n = (size_t)shape_numel(ndim, shape) * dtype_size(dtype);
    msgpack_pack_bin(pk, n);
    msgpack_pack_bin_body(pk, data, n);
}

static void pack_header_at(msgpack_packer *pk, const stream_header *h, int level);

/* ------------------------------------------------------------------ bounded lineage */

#define ELIDED_ORIGINS 8 /* distinct origins a marker keeps */

/* the opening of a header map of 7 keys: format, version, kind, batched (fields, meta and
 * provenance follow) */
static void pack_header_open(msgpack_packer *pk, const char *kind, int batched)
{
    msgpack_pack_map(pk, 7);
    pack_str(pk, "format");
    pack_str(pk, "hedge-stream");
    pack_str(pk, "version");
    msgpack_pack_int(pk, STREAM_VERSION);
    pack_str(pk, "kind");
    pack_str(pk, kind);
    pack_str(pk, "batched");
    if (batched)
        msgpack_pack_true(pk);
    else
        msgpack_pack_false(pk);
}

/* h and everything below it but its origins, as one header: kind `elided`, program "...",
 * meta elided_levels (the longest chain of headers it stands for), elided_headers,
 * elided_programs, elided_origins (when more than ELIDED_ORIGINS distinct origins). Origins
 * are distinct when their packed bytes differ. */
static void pack_elided(msgpack_packer *pk, const stream_header *h)
{
    header_elision e;
    header_elide(h, &e);
    msgpack_sbuffer origins[ELIDED_ORIGINS]; /* the distinct origins, packed */
    int norigins = 0;
    long long dropped = e.origins_dropped;
    for (int k = 0; k < e.norigins; k++) {
        msgpack_sbuffer sb;
        msgpack_sbuffer_init(&sb);
        msgpack_packer opk;
        msgpack_packer_init(&opk, &sb, msgpack_sbuffer_write);
        pack_header_at(&opk, e.origins[k], STREAM_LINEAGE_MAX - 1);
        int seen = 0;
        for (int i = 0; i < norigins && !seen; i++)
            seen = origins[i].size == sb.size && !memcmp(origins[i].data, sb.data, sb.size);
        if (!seen && norigins < ELIDED_ORIGINS)
            origins[norigins++] = sb;
        else {
            dropped += !seen;
            msgpack_sbuffer_destroy(&sb);
        }
    }
    pack_header_open(pk, "elided", 0);
    pack_str(pk, "fields");
    msgpack_pack_array(pk, 0);
    pack_str(pk, "meta");
    msgpack_pack_map(pk, dropped ? 4 : 3);
    pack_str(pk, "elided_levels");
    msgpack_pack_int64(pk, e.levels);
    pack_str(pk, "elided_headers");
    msgpack_pack_int64(pk, e.headers);
    pack_str(pk, "elided_programs");
    pack_str(pk, e.programs);
    if (dropped) {
        pack_str(pk, "elided_origins");
        msgpack_pack_int64(pk, dropped);
    }
    pack_str(pk, "provenance");
    msgpack_pack_map(pk, 3);
    pack_str(pk, "program");
    pack_str(pk, "...");
    pack_str(pk, "args");
    msgpack_pack_array(pk, 0);
    pack_str(pk, "input");
    msgpack_pack_array(pk, norigins);
    for (int i = 0; i < norigins; i++) {
        pk->callback(pk->data, origins[i].data, origins[i].size);
        msgpack_sbuffer_destroy(&origins[i]);
    }
    header_elision_free(&e);
}

/* h as the header at this level of a lineage (the stream's own: 1) */
static void pack_header_at(msgpack_packer *pk, const stream_header *h, int level)
{
    if (level == STREAM_LINEAGE_MAX - 1 && header_lineage_depth(h) > 2) {
        pack_elided(pk, h);
        return;
    }
    pack_header_open(pk, h->kind, h->batched);
    pack_str(pk, "fields");
    msgpack_pack_array(pk, h->nfields);
    for (int i = 0; i < h->nfields; i++) {
        const stream_field *f = &h->fields[i];
        msgpack_pack_map(pk, 3);
        pack_str(pk, "name");
        pack_str(pk, f->name);
        pack_str(pk, "dtype");
        pack_str(pk, dtype_name(f->dtype));
        pack_str(pk, "shape");
        msgpack_pack_array(pk, f->ndim);
        for (int d = 0; d < f->ndim; d++)
            msgpack_pack_int64(pk, f->shape[d]);
    }
    pack_str(pk, "meta");
    msgpack_pack_map(pk, h->nmeta);
    for (int i = 0; i < h->nmeta; i++) {
        const stream_meta *m = &h->meta[i];
        pack_str(pk, m->key);
        switch (m->type) {
        case META_INT: msgpack_pack_int64(pk, m->i); break;
        case META_FLOAT: msgpack_pack_double(pk, m->f); break;
        case META_STR: pack_str(pk, m->s); break;
        case META_BOOL:
            if (m->i)
                msgpack_pack_true(pk);
            else
                msgpack_pack_false(pk);
            break;
        case META_TENSOR: pack_tensor(pk, m->t->dtype, m->t->ndim, m->t->shape, m->t->data); break;
        case META_RAW: pk->callback(pk->data, (const char *)m->raw, m->rawlen); break;
        }
    }
    pack_str(pk, "provenance");
    msgpack_pack_map(pk, 3 + !!h->has_seed + !!h->version);
    pack_str(pk, "program");
    pack_str(pk, h->program ? h->program : "?");
    pack_str(pk, "args");
    msgpack_pack_array(pk, h->nargs);
    for (int i = 0; i < h->nargs; i++)
        pack_str(pk, h->args[i]);
    if (h->has_seed) {
        pack_str(pk, "seed");
        msgpack_pack_uint64(pk, h->seed);
    }
    if (h->version) {
        pack_str(pk, "hedge");
        pack_str(pk, h->version);
    }
    pack_str(pk, "input");
    msgpack_pack_array(pk, h->ninputs);
    for (int i = 0; i < h->ninputs; i++)
        pack_header_at(pk, h->inputs[i], level + 1);
}

static void pack_header(msgpack_packer *pk, const stream_header *h) { pack_header_at(pk, h, 1); }

/* ------------------------------------------------------------------ writer */

struct stream_writer {
    FILE *f;
    const stream_header *h;
    msgpack_packer pk;
    msgpack_sbuffer sb; /* objects are packed here and written in chunks of >= 64 KiB */
    size_t namelen[STREAM_MAXFIELDS];
    long long count;
    const char *name; /* for messages: "standard output" or a file name */
};

/* big chunks go straight to the file descriptor (after whatever stdio holds), saving a copy */
static void writer_flush(stream_writer *w, size_t atleast)
{
    if (w->sb.size < atleast || !w->sb.size)
        return;
    if (w->sb.size >= (1 << 16) && fileno(w->f) >= 0) { /* not for memory or cookie streams */
        if (fflush(w->f) != 0)
            die("cannot write %s: %s", w->name, strerror(errno));
        const char *p = w->sb.data;
        size_t left = w->sb.size;
        while (left > 0) {
            ssize_t n = write(fileno(w->f), p, left);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0)
                die("cannot write %s: %s", w->name, strerror(errno));
            p += n;
            left -= n;
        }
    } else if (fwrite(w->sb.data, 1, w->sb.size, w->f) != w->sb.size)
        die("cannot write %s: %s", w->name, strerror(errno));
    msgpack_sbuffer_clear(&w->sb);
}

static void writer_check(stream_writer *w)
{
    if (ferror(w->f))
        die("cannot write %s: %s", w->name, strerror(errno));
}

/* A pipe holds 64 KiB by default: less than one batch record (400 KB for 128 pairs), so writer
 * and reader would take turns at every record. 1 MiB (the default /proc/sys/fs/pipe-max-size)
 * lets them run side by side. Best effort: not a pipe, or not allowed, changes nothing. */
void stream_pipe_grow(int fd)
{
    struct stat st;
    if (fd >= 0 && fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode))
        fcntl(fd, F_SETPIPE_SZ, 1 << 20);
}

stream_writer *stream_create_named(FILE *f, const stream_header *h, const char *name)
{
    stream_writer *w = ecalloc(1, sizeof *w);
    w->f = f;
    w->h = h;
    w->name = name;
    stream_pipe_grow(fileno(f));
    for (int i = 0; i < h->nfields; i++)
        w->namelen[i] = strlen(h->fields[i].name);
    msgpack_sbuffer_init(&w->sb);
    msgpack_packer_init(&w->pk, &w->sb, msgpack_sbuffer_write);
    pack_header(&w->pk, h);
    writer_flush(w, 0);
    writer_check(w);
    return w;
}

stream_writer *stream_create(FILE *f, const stream_header *h)
{
    return stream_create_named(f, h, f == stdout ? "standard output" : "the output stream");
}

static void check_shape(const stream_writer *w, int i, const tensor *t)
{
    const stream_field *f = &w->h->fields[i];
    int off = w->h->batched;
    int ok = t->dtype == f->dtype && t->ndim == f->ndim + off;
    for (int d = 0; ok && d < f->ndim; d++)
        ok = t->shape[d + off] == f->shape[d];
    if (!ok) {
        char b[96];
        die("internal error: field '%s' written as %s, declared otherwise", f->name,
            tensor_describe(t, b, sizeof b));
    }
}

void stream_write_record(stream_writer *w, const stream_record *rec)
{
    const stream_header *h = w->h;
    if (rec->n != h->nfields)
        die("internal error: record has %d fields, header declares %d", rec->n, h->nfields);
    msgpack_pack_map(&w->pk, h->nfields);
    for (int i = 0; i < h->nfields; i++) {
        check_shape(w, i, &rec->t[i]);
        pack_strn(&w->pk, h->fields[i].name, w->namelen[i]);
        pack_tensor(&w->pk, rec->t[i].dtype, rec->t[i].ndim, rec->t[i].shape, rec->t[i].data);
    }
    writer_flush(w, 1 << 16);
    writer_check(w);
    w->count++;
}

void stream_write_data(stream_writer *w, void *const *data, int64_t batch)
{
    const stream_header *h = w->h;
    msgpack_pack_map(&w->pk, h->nfields);
    for (int i = 0; i < h->nfields; i++) {
        const stream_field *f = &h->fields[i];
        int64_t shape[TENSOR_MAXDIM + 1];
        int nd = 0;
        if (h->batched)
            shape[nd++] = batch;
        for (int d = 0; d < f->ndim; d++)
            shape[nd++] = f->shape[d];
        pack_strn(&w->pk, f->name, w->namelen[i]);
        pack_tensor(&w->pk, f->dtype, nd, shape, data[i]);
    }
    writer_flush(w, 1 << 16);
    writer_check(w);
    w->count++;
}

long long stream_written(const stream_writer *w) { return w->count; }

void stream_abort(stream_writer *w)
{
    writer_flush(w, 0);
    msgpack_sbuffer_destroy(&w->sb);
    fflush(w->f);
    free(w);
}

void stream_finish(stream_writer *w)
{
    msgpack_pack_map(&w->pk, 1);
    pack_str(&w->pk, "end");
    msgpack_pack_int64(&w->pk, w->count);
    writer_flush(w, 0);
    msgpack_sbuffer_destroy(&w->sb);
    if (fflush(w->f) != 0)
        die("cannot write %s: %s", w->name, strerror(errno));
    writer_check(w);
    free(w);
}

/* ------------------------------------------------------------------ reader */

/* Records are parsed by msgpack_unpack from a buffer of our own: buf[off .. used) not parsed yet,
 * cap allocated. The buffer is reused (its unparsed tail moved to the front before a read) and
 * grows only to hold a record larger than it; the record just parsed (obj, its strings and bins
 * pointing into buf) is copied out by stream_read before the next read can move it. msgpack-c's
 * own unpacker took a fresh buffer for every megabyte (its parsed bins are referenced) and a
 * fresh zone for every record: five times slower on 20,000 records of 128 floats, most of it
 * first touches of new pages. */
typedef struct {
    FILE *f;
    int own_file;
    char *buf;
    size_t cap, used, off;
    msgpack_zone zone; /* obj's arrays and maps; cleared for every record */
    msgpack_object obj;
    int eof;
    int read_error; /* errno of a failed read() */
} reader_impl;

/* Up to cap bytes of input, as soon as there are any. fread would wait until the whole buffer
 * (1 MiB) is filled, and on a pipe that serialises the two programs: the writer blocks on a
 * full pipe while the reader parses the megabyte it waited for. A read() returns what the pipe
 * holds, so parsing overlaps with the writer. FILEs without a descriptor (fmemopen) use fread. */
static size_t read_some(reader_impl *im, char *buf, size_t cap)
{
    int fd = fileno(im->f);
    if (fd < 0)
        return fread(buf, 1, cap, im->f);
    for (;;) {
        ssize_t n = read(fd, buf, cap);
        if (n >= 0)
            return (size_t)n;
        if (errno != EINTR) {
            im->read_error = errno;
            return 0;
        }
    }
}

static int str_eq(const msgpack_object *o, const char *s)
{
    size_t n = strlen(s);
    return o->type == MSGPACK_OBJECT_STR && o->via.str.size == n && !memcmp(o->via.str.ptr, s, n);
}

static char *str_dup(const msgpack_object *o)
{
    char *s = emalloc(o->via.str.size + 1);
    memcpy(s, o->via.str.ptr, o->via.str.size);
    s[o->via.str.size] = 0;
    return s;
}

static const msgpack_object *map_get(const msgpack_object *m, const char *key)
{
    if (m->type != MSGPACK_OBJECT_MAP)
        return NULL;
    for (uint32_t i = 0; i < m->via.map.size; i++)
        if (str_eq(&m->via.map.ptr[i].key, key))
            return &m->via.map.ptr[i].val;
    return NULL;
}

static int obj_int(const msgpack_object *o, int64_t *v)
{
    if (o->type == MSGPACK_OBJECT_POSITIVE_INTEGER) {
        if (o->via.u64 > INT64_MAX)
            return 0;
        *v = (int64_t)o->via.u64;
        return 1;
    }
    if (o->type == MSGPACK_OBJECT_NEGATIVE_INTEGER) {
        *v = o->via.i64;
        return 1;
    }
    return 0;
}

/* A tensor's data is one msgpack bin, at most 2^32 - 1 bytes, so no shape we accept describes
 * more than that. The bound also keeps every element count far from int64 overflow, whatever
 * a program later multiplies (shape_numel, batch x item sizes). Zero-sized dimensions are
 * allowed; the other dimensions must fit the bound by themselves. */
static int shape_fits(int dtype, int ndim, const int64_t *shape)
{
    uint64_t bytes = dtype_size(dtype);
    for (int i = 0; i < ndim; i++) {
        if (shape[i] < 0 || (uint64_t)shape[i] > UINT32_MAX)
            return 0;
        if (shape[i] == 0)
            continue;
        if (bytes > UINT32_MAX / (uint64_t)shape[i])
            return 0;
        bytes *= (uint64_t)shape[i];
    }
    return 1;
}

/* parse a tensor map; on failure returns a message describing the problem */
static const char *parse_tensor(const msgpack_object *o, int *dtype, int *ndim, int64_t *shape,
                                const char **data, size_t *len)
{
    const msgpack_object *dt = map_get(o, "dtype"), *sh = map_get(o, "shape"), *da = map_get(o, "data");
    if (!dt || !sh || !da)
        return "is not a tensor (needs dtype, shape and data)";
    if (dt->type != MSGPACK_OBJECT_STR)
        return "has a dtype that is not a string";
    *dtype = -1;
    for (int k = 0; k < DT_COUNT && *dtype < 0; k++) {
        const char *nm = dtype_name(k);
        if (dt->via.str.size == strlen(nm) && !memcmp(dt->via.str.ptr, nm, dt->via.str.size))
            *dtype = k;
    }
    if (*dtype < 0)
        return "has an unknown dtype";
    if (sh->type != MSGPACK_OBJECT_ARRAY || sh->via.array.size > TENSOR_MAXDIM)
        return "has a bad shape";
    *ndim = sh->via.array.size;
    for (int i = 0; i < *ndim; i++)
        if (!obj_int(&sh->via.array.ptr[i], &shape[i]) || shape[i] < 0)
            return "has a bad shape";
    if (!shape_fits(*dtype, *ndim, shape))
        return "has a shape too large for one record (over 4 GiB)";
    if (da->type != MSGPACK_OBJECT_BIN)
        return "has data that is not a msgpack bin";
    double want = (double)dtype_size(*dtype);
    for (int i = 0; i < *ndim; i++)
        want *= (double)shape[i];
    if (want != (double)da->via.bin.size)
        return "has a data size that does not match its shape and dtype";
    *data = da->via.bin.ptr;
    *len = da->via.bin.size;
    return NULL;
}

/* a meta value of no type the header knows, kept as its packed bytes */
static void set_raw(stream_header *h, const char *key, const msgpack_object *o)
{
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    msgpack_packer pk;
    msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
    msgpack_pack_object(&pk, *o);
    header_set_raw(h, key, (const unsigned char *)sb.data, sb.size);
    msgpack_sbuffer_destroy(&sb);
}

/* ------------------------------------------------------------------ the header's own parser
 *
 * msgpack-c's parser nests at most 32 containers (MSGPACK_EMBED_STACK_SIZE, fixed when the
 * library was built), and a header nests 3 per level of lineage: a lineage 11 levels deep
 * made msgpack_unpacker_next fail with "out of memory". The header is therefore found and
 * parsed here, with no limit but MP_NESTING, into msgpack_objects that parse_header reads as
 * before; records, 3 levels deep, go through msgpack-c. */

#define MP_NESTING 512          /* containers inside containers; 64 lineage levels need 196 */
/* A record is a map of at most STREAM_MAXFIELDS tensors, a tensor a map of 3 keys whose shape is
 * an array of at most TENSOR_MAXDIM sizes: 3 levels of containers of a few elements. The bounds
 * leave room for keys a later version adds; beyond them a record is corrupt. */
#define RECORD_MAX_ITEMS 4096
#define RECORD_MAX_DEPTH 16
#define HEADER_MAX (256u << 20) /* bytes */

enum { MP_NIL, MP_BOOL, MP_UINT, MP_INT, MP_F32, MP_F64, MP_STR, MP_BIN, MP_EXT, MP_ARRAY, MP_MAP };
typedef struct {
    int type;
    uint64_t n; /* bytes of a str, bin or ext; elements of an array; pairs of a map */
    uint64_t u; /* MP_UINT, MP_BOOL */
    int64_t i;  /* MP_INT */
    double f;   /* MP_F32, MP_F64 */
    int8_t ext; /* MP_EXT: its type */
} mp_item;

static uint64_t be(const unsigned char *p, int k)
{
    uint64_t v = 0;
    for (int i = 0; i < k; i++)
        v = v << 8 | p[i];
    return v;
}

/* The head of the object at p (avail bytes): its length (the payload of a str, bin or ext
 * follows it), 0 when avail is too short to tell, -1 for 0xc1, which msgpack never uses. */
static int mp_head(const unsigned char *p, size_t avail, mp_item *it)
{
    if (!avail)
        return 0;
    unsigned c = p[0];
    memset(it, 0, sizeof *it);
    if (c <= 0x7f || c >= 0xe0) { /* positive and negative fixint */
        it->type = c <= 0x7f ? MP_UINT : MP_INT;
        it->u = c;
        it->i = (int8_t)c;
        return 1;
    }
    if (c <= 0x9f) {
        it->type = c <= 0x8f ? MP_MAP : MP_ARRAY;
        it->n = c & 0x0f;
        return 1;
    }
    if (c <= 0xbf) {
        it->type = MP_STR;
        it->n = c & 0x1f;
        return 1;
    }
    int len; /* of the head */
    switch (c) {
    case 0xc0: it->type = MP_NIL; return 1;
    case 0xc2: case 0xc3: it->type = MP_BOOL; it->u = c == 0xc3; return 1;
    case 0xc4: case 0xc5: case 0xc6: len = 1 + (1 << (c - 0xc4)); it->type = MP_BIN; break;
    case 0xc7: case 0xc8: case 0xc9: len = 2 + (1 << (c - 0xc7)); it->type = MP_EXT; break;
    case 0xca: len = 5; it->type = MP_F32; break;
    case 0xcb: len = 9; it->type = MP_F64; break;
    case 0xcc: case 0xcd: case 0xce: case 0xcf: len = 1 + (1 << (c - 0xcc)); it->type = MP_UINT; break;
    case 0xd0: case 0xd1: case 0xd2: case 0xd3: len = 1 + (1 << (c - 0xd0)); it->type = MP_INT; break;
    case 0xd4: case 0xd5: case 0xd6: case 0xd7: case 0xd8: len = 2; it->type = MP_EXT; break;
    case 0xd9: case 0xda: case 0xdb: len = 1 + (1 << (c - 0xd9)); it->type = MP_STR; break;
    case 0xdc: case 0xdd: len = 1 + (2 << (c - 0xdc)); it->type = MP_ARRAY; break;
    case 0xde: case 0xdf: len = 1 + (2 << (c - 0xde)); it->type = MP_MAP; break;
    default: return -1; /* 0xc1 */
    }
    if (avail < (size_t)len)
        return 0;
    int k = len - 1; /* bytes of the number or of the length */
    switch (it->type) {
    case MP_BIN: case MP_STR: case MP_ARRAY: case MP_MAP: it->n = be(p + 1, k); break;
    case MP_EXT:
        if (c >= 0xd4) {
            it->n = (uint64_t)1 << (c - 0xd4);
            it->ext = (int8_t)p[1];
        } else {
            it->n = be(p + 1, k - 1);
            it->ext = (int8_t)p[len - 1];
        }
        break;
    case MP_UINT: it->u = be(p + 1, k); break;
    case MP_INT: {
        uint64_t v = be(p + 1, k);
        if (k < 8 && v >> (8 * k - 1)) /* sign-extend */
            v |= ~(uint64_t)0 << (8 * k);
        it->i = (int64_t)v;
        break;
    }
    case MP_F32: {
        uint32_t v = (uint32_t)be(p + 1, 4);
        float f;
        memcpy(&f, &v, 4);
        it->f = f;
        break;
    }
    case MP_F64: {
        uint64_t v = be(p + 1, 8);
        memcpy(&it->f, &v, 8);
        break;
    }
    }
    return len;
}

/* Finds where the first object of the input ends, as bytes arrive: call again with the same
 * state and more bytes (buf grows, its start stays). 1: the object is whole, *size bytes;
 * 0: more bytes are needed; -1: not msgpack; -2: nested deeper than MP_NESTING (a record:
 * RECORD_MAX_DEPTH); -3 (a record) an array or map of more than RECORD_MAX_ITEMS elements,
 * their count in too_many. */
typedef struct {
    size_t pos;     /* the next object starts here */
    int depth;      /* open containers */
    int record;     /* 1: a record's bounds */
    uint64_t too_many;
    uint64_t left[MP_NESTING]; /* objects each open container still holds */
} mp_scan;

static int mp_scan_more(mp_scan *s, const unsigned char *buf, size_t len, size_t *size)
{
    for (;;) {
        mp_item it;
        int h = mp_head(buf + s->pos, len - s->pos, &it);
        if (h <= 0)
            return h;
        uint64_t step = h;
        if (it.type == MP_STR || it.type == MP_BIN || it.type == MP_EXT) {
            if (it.n > len - s->pos - h)
                return 0;
            step += it.n;
        }
        s->pos += step;
        if ((it.type == MP_ARRAY || it.type == MP_MAP) && s->record && it.n > RECORD_MAX_ITEMS) {
            s->too_many = it.n;
            return -3;
        }
        if ((it.type == MP_ARRAY || it.type == MP_MAP) && it.n > 0) {
            if (s->depth == (s->record ? RECORD_MAX_DEPTH : MP_NESTING))
                return -2;
            s->left[s->depth++] = it.type == MP_MAP ? 2 * it.n : it.n;
            continue;
        }
        /* a whole object: it completes the containers it was the last one of */
        while (s->depth > 0 && --s->left[s->depth - 1] == 0)
            s->depth--;
        if (s->depth == 0) {
            *size = s->pos;
            return 1;
        }
    }
}

/* the object at *p (a whole one: mp_scan_more found its end) into o; strings and bins point
 * into the bytes; 0 ok, -1 malformed */
static int mp_build(const unsigned char **pp, const unsigned char *end, msgpack_zone *z, msgpack_object *o,
                    int depth)
{
    mp_item it;
    int h = mp_head(*pp, end - *pp, &it);
    if (h <= 0 || depth > MP_NESTING)
        return -1;
    const unsigned char *p = *pp + h;
    size_t avail = end - p;
    memset(o, 0, sizeof *o);
    switch (it.type) {
    case MP_NIL: o->type = MSGPACK_OBJECT_NIL; break;
    case MP_BOOL: o->type = MSGPACK_OBJECT_BOOLEAN; o->via.boolean = it.u; break;
    case MP_UINT: o->type = MSGPACK_OBJECT_POSITIVE_INTEGER; o->via.u64 = it.u; break;
    case MP_INT: /* as msgpack-c: a signed encoding of a value >= 0 is a positive integer */
        if (it.i >= 0) {
            o->type = MSGPACK_OBJECT_POSITIVE_INTEGER;
            o->via.u64 = (uint64_t)it.i;
        } else {
            o->type = MSGPACK_OBJECT_NEGATIVE_INTEGER;
            o->via.i64 = it.i;
        }
        break;
    case MP_F32: o->type = MSGPACK_OBJECT_FLOAT32; o->via.f64 = it.f; break;
    case MP_F64: o->type = MSGPACK_OBJECT_FLOAT64; o->via.f64 = it.f; break;
    case MP_STR: case MP_BIN: case MP_EXT:
        if (it.n > avail)
            return -1;
        if (it.type == MP_EXT) {
            o->type = MSGPACK_OBJECT_EXT;
            o->via.ext.type = it.ext;
            o->via.ext.size = (uint32_t)it.n;
            o->via.ext.ptr = (const char *)p;
        } else {
            o->type = it.type == MP_STR ? MSGPACK_OBJECT_STR : MSGPACK_OBJECT_BIN;
            o->via.str.size = (uint32_t)it.n; /* str and bin share the layout */
            o->via.str.ptr = (const char *)p;
        }
        p += it.n;
        break;
    case MP_ARRAY: case MP_MAP: {
        int map = it.type == MP_MAP;
        if (it.n > avail / (map ? 2 : 1)) /* every object takes at least one byte */
            return -1;
        o->type = map ? MSGPACK_OBJECT_MAP : MSGPACK_OBJECT_ARRAY;
        o->via.array.size = (uint32_t)it.n; /* array and map share the layout */
        if (it.n == 0)
            break;
        size_t each = map ? sizeof(msgpack_object_kv) : sizeof(msgpack_object);
        void *mem = msgpack_zone_malloc(z, it.n * each);
        if (!mem)
            die("out of memory");
        if (map)
            o->via.map.ptr = mem;
        else
            o->via.array.ptr = mem;
        for (uint64_t i = 0; i < it.n; i++) {
            msgpack_object *a = map ? &o->via.map.ptr[i].key : &o->via.array.ptr[i];
            if (mp_build(&p, end, z, a, depth + 1))
                return -1;
            if (map && mp_build(&p, end, z, &o->via.map.ptr[i].val, depth + 1))
                return -1;
        }
        break;
    }
    }
    *pp = p;
    return 0;
}

static stream_header *parse_header(const char *src, const msgpack_object *o, int depth)
{
    if (depth >= MAX_DEPTH)
        die("%s: stream lineage is more than %d levels deep (hedge reads up to %d and writes at most %d)",
            src, MAX_DEPTH, MAX_DEPTH, STREAM_LINEAGE_MAX);
    const msgpack_object *fmt = map_get(o, "format");
    if (!fmt || !str_eq(fmt, "hedge-stream"))
        die("%s: not a hedge stream (the first object has no format \"hedge-stream\")", src);
    const msgpack_object *ver = map_get(o, "version");
    int64_t v;
    if (!ver || !obj_int(ver, &v))
        die("%s: stream header has no version", src);
    if (v != STREAM_VERSION)
        die("%s: stream version %lld is not supported (this build reads version %d; rebuild the "
            "stream with this build of hedge or update hedge)",
            src, (long long)v, STREAM_VERSION);
    const msgpack_object *kind = map_get(o, "kind");
    if (!kind || kind->type != MSGPACK_OBJECT_STR)
        die("%s: stream header has no kind", src);
    char *k = str_dup(kind);
    stream_header *h = header_new(k, 0);
    free(h->version); /* as the stream says: absent from streams written before hedge recorded it */
    h->version = NULL;
    free(k);
    const msgpack_object *b = map_get(o, "batched");
    h->batched = b && b->type == MSGPACK_OBJECT_BOOLEAN && b->via.boolean;

    const msgpack_object *fields = map_get(o, "fields");
    if (!fields || fields->type != MSGPACK_OBJECT_ARRAY)
        die("%s: stream header has no fields", src);
    if (fields->via.array.size > STREAM_MAXFIELDS)
        die("%s: stream has %u fields, at most %d are supported", src, fields->via.array.size, STREAM_MAXFIELDS);
    for (uint32_t i = 0; i < fields->via.array.size; i++) {
        const msgpack_object *f = &fields->via.array.ptr[i];
        const msgpack_object *nm = map_get(f, "name"), *dt = map_get(f, "dtype"), *sh = map_get(f, "shape");
        if (!nm || nm->type != MSGPACK_OBJECT_STR || nm->via.str.size >= STREAM_NAMELEN || !dt ||
            dt->type != MSGPACK_OBJECT_STR || !sh || sh->type != MSGPACK_OBJECT_ARRAY ||
            sh->via.array.size > TENSOR_MAXDIM)
            die("%s: stream header has a malformed field %u", src, i);
        char *name = str_dup(nm), *dts = str_dup(dt);
        int dtype = dtype_parse(dts);
        if (dtype < 0)
            die("%s: field '%s' has unknown dtype '%s'", src, name, dts);
        int64_t shape[TENSOR_MAXDIM];
        for (uint32_t d = 0; d < sh->via.array.size; d++)
            if (!obj_int(&sh->via.array.ptr[d], &shape[d]) || shape[d] < 0)
                die("%s: field '%s' has a bad shape", src, name);
        if (!shape_fits(dtype, sh->via.array.size, shape))
            die("%s: field '%s' has a shape too large for one record (over 4 GiB per item)", src, name);
        if (header_field_find(h, name) >= 0 || !strcmp(name, "end"))
            die("%s: field name '%s' is repeated or reserved", src, name);
        header_add_field(h, name, dtype, sh->via.array.size, shape);
        free(name);
        free(dts);
    }

    const msgpack_object *meta = map_get(o, "meta");
    if (meta && meta->type == MSGPACK_OBJECT_MAP)
        for (uint32_t i = 0; i < meta->via.map.size; i++) {
            const msgpack_object *key = &meta->via.map.ptr[i].key, *val = &meta->via.map.ptr[i].val;
            if (key->type != MSGPACK_OBJECT_STR)
                continue;
            char *ks = str_dup(key);
            int64_t iv;
            int dtype, ndim;
            int64_t shape[TENSOR_MAXDIM];
            const char *data;
            size_t len;
            if (obj_int(val, &iv))
                header_set_int(h, ks, iv);
            else if (val->type == MSGPACK_OBJECT_FLOAT64 || val->type == MSGPACK_OBJECT_FLOAT32)
                header_set_float(h, ks, val->via.f64);
            else if (val->type == MSGPACK_OBJECT_STR) {
                char *vs = str_dup(val);
                header_set_str(h, ks, vs);
                free(vs);
            } else if (val->type == MSGPACK_OBJECT_BOOLEAN)
                header_set_bool(h, ks, val->via.boolean);
            else if (val->type == MSGPACK_OBJECT_MAP && !parse_tensor(val, &dtype, &ndim, shape, &data, &len)) {
                tensor t = {.dtype = dtype, .ndim = ndim, .data = (void *)data}; /* a view of the bytes */
                memcpy(t.shape, shape, sizeof shape);
                header_set_tensor(h, ks, &t);
            } else
                set_raw(h, ks, val);
            free(ks);
        }

    const msgpack_object *prov = map_get(o, "provenance");
    if (prov) {
        const msgpack_object *p = map_get(prov, "program"), *a = map_get(prov, "args"),
                             *s = map_get(prov, "seed"), *in = map_get(prov, "input"),
                             *v = map_get(prov, "hedge");
        if (p && p->type == MSGPACK_OBJECT_STR) {
            free(h->program);
            h->program = str_dup(p);
        }
        if (a && a->type == MSGPACK_OBJECT_ARRAY) {
            h->args = ecalloc(a->via.array.size, sizeof *h->args);
            for (uint32_t i = 0; i < a->via.array.size; i++)
                if (a->via.array.ptr[i].type == MSGPACK_OBJECT_STR)
                    h->args[h->nargs++] = str_dup(&a->via.array.ptr[i]);
        }
        if (v && v->type == MSGPACK_OBJECT_STR) {
            free(h->version);
            h->version = str_dup(v);
        }
        if (s && s->type == MSGPACK_OBJECT_POSITIVE_INTEGER) {
            h->has_seed = 1;
            h->seed = s->via.u64;
        }
        if (in && in->type == MSGPACK_OBJECT_ARRAY) {
            h->inputs = ecalloc(in->via.array.size, sizeof *h->inputs);
            for (uint32_t i = 0; i < in->via.array.size; i++)
                h->inputs[h->ninputs++] = parse_header(src, &in->via.array.ptr[i], depth + 1);
        }
    } else {
        free(h->program);
        h->program = estrdup("?");
    }
    return h;
}

/* next object into im->obj: 1 ok, 0 clean EOF at an object boundary. Dies on corruption.
 * mp_scan_more finds the object whole first, from its start again after each read (a record is
 * a few dozen msgpack objects whatever its bytes; bins are not walked), with a record's bounds:
 * msgpack-c allocates an array's or map's elements as soon as it meets their count, so a corrupt
 * count (2^32 - 1 elements in 100 bytes) must never reach it; it then parses a whole object. */
static int next_object(stream_reader *r)
{
    reader_impl *im = r->impl;
    for (;;) {
        if (im->used > im->off) {
            mp_scan sc;
            sc.pos = 0, sc.depth = 0, sc.record = 1; /* (left[] is written before it is read) */
            size_t size = 0;
            int st = mp_scan_more(&sc, (const unsigned char *)im->buf + im->off, im->used - im->off, &size);
            if (st == -3)
                die("%s: corrupt stream: record %lld is not valid msgpack (an array or map in it claims %llu "
                    "elements; a record is a map of a few tensors)",
                    r->name, r->count + 1, (unsigned long long)sc.too_many);
            if (st == -2)
                die("%s: corrupt stream: record %lld is not valid msgpack (containers nested over %d deep; a "
                    "record nests 3)",
                    r->name, r->count + 1, RECORD_MAX_DEPTH);
            if (st < 0)
                die("%s: corrupt stream: record %lld is not valid msgpack (after %lld records)", r->name,
                    r->count + 1, r->count);
            if (st == 1) {
                size_t off = im->off;
                msgpack_zone_clear(&im->zone);
                msgpack_unpack_return ret = msgpack_unpack(im->buf, im->off + size, &off, &im->zone, &im->obj);
                if (ret == MSGPACK_UNPACK_NOMEM_ERROR)
                    die("out of memory");
                if (ret != MSGPACK_UNPACK_SUCCESS || off != im->off + size)
                    die("%s: corrupt stream: record %lld is not valid msgpack (after %lld records)", r->name,
                        r->count + 1, r->count);
                im->off = off;
                return 1;
            }
        }
        /* more bytes are needed */
        if (im->eof) {
            if (im->used > im->off)
                die("%s: truncated stream: input ends inside record %lld (did the program upstream fail?)",
                    r->name, r->count + 1);
            return 0;
        }
        if (im->cap - im->used < 65536) {
            memmove(im->buf, im->buf + im->off, im->used - im->off);
            im->used -= im->off;
            im->off = 0;
            if (im->cap - im->used < 65536) {
                im->cap = im->cap < (1 << 20) ? 1 << 20 : 2 * im->cap;
                im->buf = erealloc(im->buf, im->cap);
            }
        }
        size_t n = read_some(im, im->buf + im->used, im->cap - im->used);
        if (n == 0) {
            if (ferror(im->f) || im->read_error)
                die("%s: read error: %s", r->name, strerror(im->read_error ? im->read_error : errno));
            im->eof = 1;
        }
        im->used += n;
    }
}

/* The header, by the parser above; its buffer, with the bytes read past it, becomes the records'. */
static void read_header(stream_reader *r)
{
    reader_impl *im = r->impl;
    size_t cap = 1 << 16, len = 0, size = 0;
    unsigned char *buf = emalloc(cap);
    mp_scan *sc = ecalloc(1, sizeof *sc);
    int st = 0;
    for (;;) {
        if (len > 0 && (st = mp_scan_more(sc, buf, len, &size)) != 0)
            break;
        if (im->eof)
            break;
        if (len == cap) {
            if (cap >= HEADER_MAX)
                die("%s: the stream header is larger than %u MiB (not a hedge stream?)", r->name, HEADER_MAX >> 20);
            cap *= 2;
            buf = erealloc(buf, cap);
        }
        size_t n = read_some(im, (char *)buf + len, cap - len);
        if (n == 0) {
            if (ferror(im->f) || im->read_error)
                die("%s: read error: %s", r->name, strerror(im->read_error ? im->read_error : errno));
            im->eof = 1;
        }
        len += n;
    }
    free(sc);
    if (st == 0)
        die(len ? "%s: truncated stream: input ends inside the header" : "%s: empty input: expected a hedge stream",
            r->name);
    if (st == -1)
        die("%s: corrupt stream: the header is not valid msgpack", r->name);
    if (st == -2)
        die("%s: stream header nests deeper than %d levels (a lineage over %d levels deep?)", r->name,
            MP_NESTING, MP_NESTING / 3);
    msgpack_zone z;
    if (!msgpack_zone_init(&z, 4096))
        die("out of memory");
    msgpack_object o;
    const unsigned char *p = buf;
    if (mp_build(&p, buf + size, &z, &o, 0) != 0)
        die("%s: corrupt stream: the header is not valid msgpack", r->name);
    if (o.type != MSGPACK_OBJECT_MAP)
        die("%s: not a hedge stream (the first object is not a map)", r->name);
    r->header = parse_header(r->name, &o, 0);
    msgpack_zone_destroy(&z);
    /* the bytes read past the header are the records' buffer's first */
    im->buf = (char *)buf;
    im->cap = cap;
    im->used = len;
    im->off = size;
}

/* stdin is one input: a second reader of it (evaluate -g - -) found it read already and said
 * "stdin: empty input"; it is told so instead, before anything is read */
static int stdin_taken;

stream_reader *stream_open(FILE *f, const char *name)
{
    if (f == stdin) {
        if (stdin_taken)
            die("%s: standard input is already read as another input of this command: give a file for all "
                "but one of them", name);
        stdin_taken = 1;
    }
    stream_reader *r = ecalloc(1, sizeof *r);
    reader_impl *im = ecalloc(1, sizeof *im);
    r->impl = im;
    r->name = name;
    im->f = f;
    if (!msgpack_zone_init(&im->zone, MSGPACK_ZONE_CHUNK_SIZE))
        die("out of memory");
    input_not_directory(f, name, "a hedge stream");
    stream_pipe_grow(fileno(f));
    read_header(r);
    return r;
}

stream_reader *stream_open_path(const char *path)
{
    if (!strcmp(path, "-"))
        return stream_open(stdin, "stdin");
    FILE *f = fopen(path, "rb");
    if (!f)
        die("cannot open %s: %s", path, strerror(errno));
    stream_reader *r = stream_open(f, path);
    ((reader_impl *)r->impl)->own_file = 1;
    return r;
}

stream_reader *stream_open_bytes(const void *bytes, size_t n, const char *name)
{
    if (!bytes || !n)
        die("%s: no bytes, expected a stream", name);
    FILE *f = fmemopen((void *)bytes, n, "rb");
    if (!f)
        die("%s: cannot read it: %s", name, strerror(errno));
    stream_reader *r = stream_open(f, name);
    ((reader_impl *)r->impl)->own_file = 1;
    return r;
}

void stream_expect_kind(const stream_reader *r, const char *kind)
{
    if (strcmp(r->header->kind, kind))
        die("%s: expected a stream of kind '%s', got '%s' (from %s)", r->name, kind, r->header->kind,
            r->header->program);
}

int stream_read(stream_reader *r, stream_record *rec)
{
    reader_impl *im = r->impl;
    const stream_header *h = r->header;
    if (!next_object(r))
        die("%s: truncated stream: no end marker after %lld records (did the program upstream fail?)",
            r->name, r->count);
    const msgpack_object *o = &im->obj;
    if (o->type != MSGPACK_OBJECT_MAP)
        die("%s: corrupt stream: record %lld is not a map", r->name, r->count + 1);
    const msgpack_object *end = map_get(o, "end");
    if (end) {
        int64_t n;
        if (!obj_int(end, &n) || n != r->count)
            die("%s: corrupt stream: end marker says %lld records, read %lld", r->name,
                obj_int(end, &n) ? (long long)n : -1LL, r->count);
        /* a stream ends at its trailer; anything after it (a second stream concatenated, a
         * stray byte) is an error, never silently ignored (formats/stream.md) */
        if (im->used > im->off || (!im->eof && fgetc(im->f) != EOF))
            die("%s: data after the end marker (one stream per input; concatenated streams are "
                "not supported)", r->name);
        if (ferror(im->f))
            die("%s: read error: %s", r->name, strerror(errno));
        im->eof = 1;
        return 0;
    }
    if (o->via.map.size != (uint32_t)h->nfields)
        die("%s: record %lld has %u fields, the header declares %d", r->name, r->count + 1,
            o->via.map.size, h->nfields);
    int seen[STREAM_MAXFIELDS] = {0};
    int64_t batch = -1;
    for (uint32_t i = 0; i < o->via.map.size; i++) {
        const msgpack_object *key = &o->via.map.ptr[i].key;
        int idx = -1;
        for (int j = 0; j < h->nfields && idx < 0; j++)
            if (str_eq(key, h->fields[j].name))
                idx = j;
        if (idx < 0 || seen[idx])
            die("%s: record %lld has a field the header does not declare (or twice)", r->name, r->count + 1);
        seen[idx] = 1;
        const stream_field *f = &h->fields[idx];
        int dtype, ndim;
        int64_t shape[TENSOR_MAXDIM];
        const char *data;
        size_t len;
        const char *err = parse_tensor(&o->via.map.ptr[i].val, &dtype, &ndim, shape, &data, &len);
        if (err)
            die("%s: record %lld: field '%s' %s", r->name, r->count + 1, f->name, err);
        int off = h->batched;
        int ok = dtype == f->dtype && ndim == f->ndim + off;
        for (int d = 0; ok && d < f->ndim; d++)
            ok = shape[d + off] == f->shape[d];
        if (ok && off) {
            if (batch < 0)
                batch = shape[0];
            ok = shape[0] == batch;
        }
        if (!ok)
            die("%s: record %lld: field '%s' does not have the dtype and shape the header declares",
                r->name, r->count + 1, f->name);
        tensor *t = &rec->t[idx];
#if EXACT_BUFFERS
        if (!t->owns || t->cap != len) {
            if (t->owns)
                free(t->data);
            void *p = NULL;
            if (posix_memalign(&p, 64, len ? len : 1))
                die("out of memory (%zu bytes)", len);
            t->data = p;
            t->cap = len;
            t->owns = 1;
        }
#else
        if (!t->owns || t->cap < len) {
            if (t->owns)
                free(t->data);
            t->cap = len < 64 ? 64 : len + len / 4;
            t->data = ealloc_aligned(t->cap);
            t->owns = 1;
        }
#endif
        memcpy(t->data, data, len);
        t->dtype = dtype;
        t->ndim = ndim;
        memcpy(t->shape, shape, sizeof shape);
    }
    rec->n = h->nfields;
    r->count++;
    return 1;
}

void stream_close(stream_reader *r)
{
    reader_impl *im = r->impl;
    msgpack_zone_destroy(&im->zone);
    free(im->buf);
    if (im->own_file)
        fclose(im->f);
    header_free(r->header);
    free(im);
    free(r);
}

/* ------------------------------------------------------------------ raw meta values as JSON
 *
 * A META_RAW value is any msgpack value, nested as deep as a header may be (MP_NESTING) and
 * with keys of any type, so it is printed here as text, which lib/streams/header_json.c embeds in the
 * header's JSON (json_raw). Numbers as the header's: %.9g, null for NaN and infinities. */

static void raw_json_num(FILE *f, double v)
{
    if (isfinite(v))
        fprintf(f, "%.9g", v);
    else
        fputs("null", f);
}

static void raw_json_object(FILE *f, const msgpack_object *o)
{
    switch (o->type) {
    case MSGPACK_OBJECT_NIL: fputs("null", f); break;
    case MSGPACK_OBJECT_BOOLEAN: fputs(o->via.boolean ? "true" : "false", f); break;
    case MSGPACK_OBJECT_POSITIVE_INTEGER: fprintf(f, "%llu", (unsigned long long)o->via.u64); break;
    case MSGPACK_OBJECT_NEGATIVE_INTEGER: fprintf(f, "%lld", (long long)o->via.i64); break;
    case MSGPACK_OBJECT_FLOAT32:
    case MSGPACK_OBJECT_FLOAT64: raw_json_num(f, o->via.f64); break;
    case MSGPACK_OBJECT_STR: json_string(f, o->via.str.ptr, o->via.str.size); break;
    case MSGPACK_OBJECT_BIN: fprintf(f, "\"<%u bytes>\"", o->via.bin.size); break;
    case MSGPACK_OBJECT_ARRAY:
        fputc('[', f);
        for (uint32_t i = 0; i < o->via.array.size; i++) {
            if (i)
                fputs(", ", f);
            raw_json_object(f, &o->via.array.ptr[i]);
        }
        fputc(']', f);
        break;
    case MSGPACK_OBJECT_MAP:
        fputc('{', f);
        for (uint32_t i = 0; i < o->via.map.size; i++) {
            if (i)
                fputs(", ", f);
            const msgpack_object *key = &o->via.map.ptr[i].key;
            if (key->type == MSGPACK_OBJECT_STR) {
                raw_json_object(f, key);
            } else if (key->type == MSGPACK_OBJECT_ARRAY || key->type == MSGPACK_OBJECT_MAP) {
                /* not its text: quoting a key that holds keys doubles the backslashes at every
                 * level, 2^depth bytes out of a few bytes in */
                fputs(key->type == MSGPACK_OBJECT_MAP ? "\"<map>\"" : "\"<array>\"", f);
            } else { /* JSON keys are strings: a number (or anything else) becomes its text */
                char *buf = NULL;
                size_t len = 0;
                FILE *m = open_memstream(&buf, &len);
                if (!m)
                    die("out of memory");
                raw_json_object(m, key);
                fclose(m);
                json_string(f, buf, len);
                free(buf);
            }
            fputs(": ", f);
            raw_json_object(f, &o->via.map.ptr[i].val);
        }
        fputc('}', f);
        break;
    default: fputs("null", f);
    }
}

char *stream_raw_json(const unsigned char *raw, size_t len)
{
    char *text = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&text, &n);
    if (!f)
        die("out of memory");
    msgpack_zone z;
    msgpack_zone_init(&z, 2048);
    msgpack_object o;
    const unsigned char *p = raw; /* read by the header's parser: nested at will */
    if (mp_build(&p, raw + len, &z, &o, 0) == 0)
        raw_json_object(f, &o);
    else
        fputs("null", f);
    msgpack_zone_destroy(&z);
    if (fclose(f) != 0)
        die("out of memory");
    return text;
}

/* ------------------------------------------------------------------ arrays of strings in meta */

static const char *meta_type_name(const stream_meta *m)
{
    switch (m->type) {
    case META_INT: return "an int";
    case META_FLOAT: return "a float";
    case META_STR: return "a str";
    case META_BOOL: return "a bool";
    case META_TENSOR: return "a tensor";
    default: return "a value of another type";
    }
}

static const char *object_type_name(const msgpack_object *o)
{
    switch (o->type) {
    case MSGPACK_OBJECT_NIL: return "nil";
    case MSGPACK_OBJECT_BOOLEAN: return "a bool";
    case MSGPACK_OBJECT_POSITIVE_INTEGER:
    case MSGPACK_OBJECT_NEGATIVE_INTEGER: return "an int";
    case MSGPACK_OBJECT_FLOAT32:
    case MSGPACK_OBJECT_FLOAT64: return "a float";
    case MSGPACK_OBJECT_ARRAY: return "an array";
    case MSGPACK_OBJECT_MAP: return "a map";
    case MSGPACK_OBJECT_EXT: return "an ext";
    default: return "a value of another type";
    }
}

const char *stream_meta_strings(const stream_meta *m, int64_t *n, char ***s, size_t **len, int *bytes)
{
    *n = 0, *s = NULL, *len = NULL, *bytes = 0;
    if (m->type != META_RAW)
        return errmsg("is %s: expected an array of names (str or bin)", meta_type_name(m));
    msgpack_zone z;
    msgpack_zone_init(&z, 2048);
    msgpack_object o;
    const unsigned char *p = m->raw;
    const char *err = NULL;
    if (mp_build(&p, m->raw + m->rawlen, &z, &o, 0) != 0)
        err = errmsg("is not msgpack");
    else if (o.type != MSGPACK_OBJECT_ARRAY)
        err = errmsg("is %s: expected an array of names (str or bin)", object_type_name(&o));
    int64_t k = err ? 0 : o.via.array.size;
    for (int64_t i = 0; i < k && !err; i++) {
        const msgpack_object *e = &o.via.array.ptr[i];
        int bin = e->type == MSGPACK_OBJECT_BIN;
        if (!bin && e->type != MSGPACK_OBJECT_STR)
            err = errmsg("name %lld is %s: expected names, all str (text) or all bin (bytes)", (long long)i,
                         object_type_name(e));
        else if (i && bin != *bytes)
            err = errmsg("name %lld is %s, name 0 %s: expected all str (text) or all bin (bytes)", (long long)i,
                         bin ? "bin (bytes)" : "str (text)", *bytes ? "bin" : "str");
        *bytes = bin;
    }
    if (!err) {
        *s = emalloc((size_t)(k ? k : 1) * sizeof **s);
        *len = emalloc((size_t)(k ? k : 1) * sizeof **len);
        for (int64_t i = 0; i < k; i++) {
            const msgpack_object *e = &o.via.array.ptr[i];
            const char *b = *bytes ? e->via.bin.ptr : e->via.str.ptr;
            size_t l = *bytes ? e->via.bin.size : e->via.str.size;
            (*s)[i] = emalloc(l + 1);
            if (l)
                memcpy((*s)[i], b, l);
            (*s)[i][l] = 0;
            (*len)[i] = l;
        }
        *n = k;
    }
    msgpack_zone_destroy(&z);
    return err;
}

void stream_set_strings(stream_header *h, const char *key, int64_t n, char *const *s, const size_t *len, int bytes)
{
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    msgpack_packer pk;
    msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
    msgpack_pack_array(&pk, (size_t)n);
    for (int64_t i = 0; i < n; i++) {
        if (bytes) {
            msgpack_pack_bin(&pk, len[i]);
            msgpack_pack_bin_body(&pk, s[i], len[i]);
        } else {
            pack_strn(&pk, s[i], len[i]);
        }
    }
    header_set_raw(h, key, (const unsigned char *)sb.data, sb.size);
    msgpack_sbuffer_destroy(&sb);
}
