/* header.c: a stream's header in memory, and what a marker of an elided lineage says (header.h).
 * The encoding is lib/streams/stream.c's. */
#include "header.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

/* ------------------------------------------------------------------ header building */

stream_header *header_new(const char *kind, int batched)
{
    stream_header *h = ecalloc(1, sizeof *h);
    h->kind = estrdup(kind);
    h->batched = batched;
    h->program = estrdup(util_prog);
    h->version = estrdup(util_version);
    return h;
}

static void meta_clear(stream_meta *m)
{
    free(m->key);
    free(m->s);
    tensor_free(m->t);
    free(m->raw);
}

void header_free(stream_header *h)
{
    if (!h)
        return;
    free(h->kind);
    for (int i = 0; i < h->nmeta; i++)
        meta_clear(&h->meta[i]);
    free(h->meta);
    free(h->program);
    free(h->version);
    for (int i = 0; i < h->nargs; i++)
        free(h->args[i]);
    free(h->args);
    for (int i = 0; i < h->ninputs; i++)
        header_free(h->inputs[i]);
    free(h->inputs);
    free(h);
}

static tensor *tensor_clone(const tensor *t)
{
    tensor *c = tensor_new(t->dtype, t->ndim, t->shape);
    memcpy(c->data, t->data, tensor_nbytes(t));
    return c;
}

static void meta_copy(stream_meta *d, const stream_meta *s)
{
    *d = *s;
    d->key = estrdup(s->key);
    d->s = s->s ? estrdup(s->s) : NULL;
    d->t = s->t ? tensor_clone(s->t) : NULL;
    if (s->raw) {
        d->raw = emalloc(s->rawlen);
        memcpy(d->raw, s->raw, s->rawlen);
    }
}

stream_header *header_copy(const stream_header *s)
{
    stream_header *h = ecalloc(1, sizeof *h);
    h->kind = estrdup(s->kind);
    h->batched = s->batched;
    h->nfields = s->nfields;
    memcpy(h->fields, s->fields, sizeof h->fields);
    h->nmeta = s->nmeta;
    h->meta = ecalloc(s->nmeta, sizeof *h->meta);
    for (int i = 0; i < s->nmeta; i++)
        meta_copy(&h->meta[i], &s->meta[i]);
    h->program = estrdup(s->program ? s->program : "?");
    h->version = s->version ? estrdup(s->version) : NULL;
    h->nargs = s->nargs;
    h->args = ecalloc(s->nargs, sizeof *h->args);
    for (int i = 0; i < s->nargs; i++)
        h->args[i] = estrdup(s->args[i]);
    h->has_seed = s->has_seed;
    h->seed = s->seed;
    h->ninputs = s->ninputs;
    h->inputs = ecalloc(s->ninputs, sizeof *h->inputs);
    for (int i = 0; i < s->ninputs; i++)
        h->inputs[i] = header_copy(s->inputs[i]);
    return h;
}

void header_provenance(stream_header *h, int argc, char **argv)
{
    free(h->program);
    h->program = estrdup(util_prog);
    free(h->version);
    h->version = estrdup(util_version);
    for (int i = 0; i < h->nargs; i++)
        free(h->args[i]);
    free(h->args);
    h->nargs = argc > 1 ? argc - 1 : 0;
    h->args = ecalloc(h->nargs, sizeof *h->args);
    for (int i = 0; i < h->nargs; i++)
        h->args[i] = estrdup(argv[i + 1]);
}

void header_set_seed(stream_header *h, uint64_t seed)
{
    h->has_seed = 1;
    h->seed = seed;
}

void header_add_input(stream_header *h, const stream_header *in)
{
    h->inputs = erealloc(h->inputs, (h->ninputs + 1) * sizeof *h->inputs);
    h->inputs[h->ninputs++] = header_copy(in);
}

void header_add_field(stream_header *h, const char *name, int dtype, int ndim, const int64_t *shape)
{
    if (h->nfields >= STREAM_MAXFIELDS)
        die("internal error: more than %d fields", STREAM_MAXFIELDS);
    if (strlen(name) >= STREAM_NAMELEN || !strcmp(name, "end"))
        die("internal error: bad field name '%s'", name);
    if (header_field_find(h, name) >= 0)
        die("internal error: field '%s' declared twice", name);
    stream_field *f = &h->fields[h->nfields++];
    memset(f, 0, sizeof *f);
    strcpy(f->name, name);
    f->dtype = dtype;
    f->ndim = ndim;
    if (ndim)
        memcpy(f->shape, shape, ndim * sizeof *shape);
}

void header_copy_fields(stream_header *dst, const stream_header *src)
{
    for (int i = 0; i < src->nfields; i++)
        header_add_field(dst, src->fields[i].name, src->fields[i].dtype, src->fields[i].ndim,
                         src->fields[i].shape);
}

static stream_meta *meta_slot(stream_header *h, const char *key)
{
    for (int i = 0; i < h->nmeta; i++)
        if (!strcmp(h->meta[i].key, key)) {
            meta_clear(&h->meta[i]);
            memset(&h->meta[i], 0, sizeof h->meta[i]);
            h->meta[i].key = estrdup(key);
            return &h->meta[i];
        }
    h->meta = erealloc(h->meta, (h->nmeta + 1) * sizeof *h->meta);
    stream_meta *m = &h->meta[h->nmeta++];
    memset(m, 0, sizeof *m);
    m->key = estrdup(key);
    return m;
}

void header_copy_meta(stream_header *dst, const stream_header *src)
{
    for (int i = 0; i < src->nmeta; i++) {
        stream_meta *m = meta_slot(dst, src->meta[i].key);
        char *key = m->key;
        meta_copy(m, &src->meta[i]);
        free(m->key);
        m->key = key;
    }
}

void header_del_meta(stream_header *h, const char *key)
{
    for (int i = 0; i < h->nmeta; i++)
        if (!strcmp(h->meta[i].key, key)) {
            meta_clear(&h->meta[i]);
            memmove(&h->meta[i], &h->meta[i + 1], (size_t)(h->nmeta - i - 1) * sizeof *h->meta);
            h->nmeta--;
            return;
        }
}

void header_set_int(stream_header *h, const char *key, int64_t v)
{
    stream_meta *m = meta_slot(h, key);
    m->type = META_INT;
    m->i = v;
}

void header_set_float(stream_header *h, const char *key, double v)
{
    stream_meta *m = meta_slot(h, key);
    m->type = META_FLOAT;
    m->f = v;
}

void header_set_str(stream_header *h, const char *key, const char *v)
{
    stream_meta *m = meta_slot(h, key);
    m->type = META_STR;
    m->s = estrdup(v);
}

void header_set_bool(stream_header *h, const char *key, int v)
{
    stream_meta *m = meta_slot(h, key);
    m->type = META_BOOL;
    m->i = !!v;
}

void header_set_tensor(stream_header *h, const char *key, const tensor *t)
{
    stream_meta *m = meta_slot(h, key);
    m->type = META_TENSOR;
    m->t = tensor_clone(t);
}

void header_set_raw(stream_header *h, const char *key, const unsigned char *raw, size_t len)
{
    stream_meta *m = meta_slot(h, key);
    m->type = META_RAW;
    m->raw = emalloc(len);
    memcpy(m->raw, raw, len);
    m->rawlen = len;
}

const stream_meta *header_meta(const stream_header *h, const char *key)
{
    for (int i = 0; i < h->nmeta; i++)
        if (!strcmp(h->meta[i].key, key))
            return &h->meta[i];
    return NULL;
}

int64_t header_int(const stream_header *h, const char *key, int64_t dflt)
{
    const stream_meta *m = header_meta(h, key);
    if (!m)
        return dflt;
    if (m->type == META_INT || m->type == META_BOOL)
        return m->i;
    if (m->type == META_FLOAT)
        return (int64_t)m->f;
    die("header entry '%s' is not a number", key);
}

double header_float(const stream_header *h, const char *key, double dflt)
{
    const stream_meta *m = header_meta(h, key);
    if (!m)
        return dflt;
    if (m->type == META_FLOAT)
        return m->f;
    if (m->type == META_INT || m->type == META_BOOL)
        return (double)m->i;
    die("header entry '%s' is not a number", key);
}

const char *header_str(const stream_header *h, const char *key, const char *dflt)
{
    const stream_meta *m = header_meta(h, key);
    if (!m)
        return dflt;
    if (m->type != META_STR)
        die("header entry '%s' is not a string", key);
    return m->s;
}

int64_t header_need_int(const stream_header *h, const char *key)
{
    if (!header_meta(h, key))
        die("input stream (kind %s) has no '%s' in its header", h->kind, key);
    return header_int(h, key, 0);
}

const tensor *header_tensor(const stream_header *h, const char *key)
{
    const stream_meta *m = header_meta(h, key);
    return m && m->type == META_TENSOR ? m->t : NULL;
}

int header_field_find(const stream_header *h, const char *name)
{
    for (int i = 0; i < h->nfields; i++)
        if (!strcmp(h->fields[i].name, name))
            return i;
    return -1;
}

int stream_field_index(const stream_header *h, const char *name)
{
    int i = header_field_find(h, name);
    if (i < 0)
        die("input stream (kind %s) has no field '%s'", h->kind, name);
    return i;
}

char *stream_field_describe(const stream_field *f, char *buf, size_t n)
{
    size_t k = (size_t)snprintf(buf, n, "%s [", dtype_name(f->dtype));
    for (int d = 0; d < f->ndim && k < n; d++)
        k += (size_t)snprintf(buf + k, n - k, d ? ", %lld" : "%lld", (long long)f->shape[d]);
    if (k < n)
        snprintf(buf + k, n - k, "]");
    return buf;
}

/* what stream_field_need expects, as it says it: "uint8 [n] (n >= 1)"; a scalar is one value
 * per record, or per item of a batched stream's records */
static char *describe_need(const stream_header *h, int dtype, int ndim, const int64_t *shape, char *buf, size_t n)
{
    const char *per = h->batched ? " (one value per item)" : " (one value per record)";
    if (ndim == FIELD_ANY) {
        snprintf(buf, n, "%s", dtype_name(dtype));
        return buf;
    }
    int any = 0;
    size_t k = (size_t)snprintf(buf, n, "%s [", dtype_name(dtype));
    for (int d = 0; d < ndim && k < n; d++) {
        any += shape[d] == FIELD_ANY;
        k += shape[d] == FIELD_ANY ? (size_t)snprintf(buf + k, n - k, d ? ", n" : "n")
                                   : (size_t)snprintf(buf + k, n - k, d ? ", %lld" : "%lld", (long long)shape[d]);
    }
    if (k < n)
        snprintf(buf + k, n - k, "]%s", !ndim ? per : any == 1 ? " (n >= 1)" : any ? " (each n >= 1)" : "");
    return buf;
}

int stream_field_need(const char *src, const stream_header *h, const char *name, int dtype, int ndim,
                      const int64_t *shape)
{
    char want[160], got[160];
    src = src ? src : "input";
    int i = header_field_find(h, name);
    if (i < 0)
        die("%s: the %s stream has no field '%s', expected %s", src, h->kind, name,
            describe_need(h, dtype, ndim, shape, want, sizeof want));
    const stream_field *f = &h->fields[i];
    int ok = f->dtype == dtype && (ndim == FIELD_ANY || f->ndim == ndim);
    for (int d = 0; ok && ndim != FIELD_ANY && d < ndim; d++)
        ok = shape[d] == FIELD_ANY ? f->shape[d] >= 1 : f->shape[d] == shape[d];
    if (!ok)
        die("%s: field '%s' is %s, expected %s", src, name, stream_field_describe(f, got, sizeof got),
            describe_need(h, dtype, ndim, shape, want, sizeof want));
    return i;
}

/* ------------------------------------------------------------------ bounded lineage */

int header_lineage_depth(const stream_header *h)
{
    int d = 0;
    for (int i = 0; i < h->ninputs; i++) {
        int k = header_lineage_depth(h->inputs[i]);
        d = k > d ? k : d;
    }
    return d + 1;
}

static int is_marker(const stream_header *h) { return !strcmp(h->kind, "elided") && !strcmp(h->program, "..."); }

static void elided_program(header_elision *e, const char *p, size_t n)
{
    for (const char *s = e->programs; *s;) { /* already listed? */
        const char *c = strchr(s, ',');
        size_t k = c ? (size_t)(c - s) : strlen(s);
        if (k == n && !memcmp(s, p, n))
            return;
        s += k + (c != NULL);
    }
    size_t len = strlen(e->programs);
    if (len + n + 2 > sizeof e->programs)
        return; /* the list is a summary: what does not fit is left out */
    if (len)
        e->programs[len++] = ',';
    memcpy(e->programs + len, p, n);
    e->programs[len + n] = 0;
}

/* walks the headers below a marker: counts them, lists their programs, collects the origins
 * (the headers without inputs); returns the levels h stands for (an earlier marker: its own) */
static long long elide_walk(const stream_header *h, header_elision *e)
{
    if (!h->ninputs) {
        e->origins = erealloc(e->origins, (e->norigins + 1) * sizeof *e->origins);
        e->origins[e->norigins++] = h;
        return 0;
    }
    long long levels = 1;
    if (is_marker(h)) {
        levels = header_int(h, "elided_levels", 1);
        e->headers += header_int(h, "elided_headers", 1);
        e->origins_dropped += header_int(h, "elided_origins", 0);
        const char *p = header_str(h, "elided_programs", "");
        while (*p) {
            const char *c = strchr(p, ',');
            size_t k = c ? (size_t)(c - p) : strlen(p);
            elided_program(e, p, k);
            p += k + (c != NULL);
        }
    } else {
        e->headers++;
        elided_program(e, h->program, strlen(h->program));
    }
    long long below = 0;
    for (int i = 0; i < h->ninputs; i++) {
        long long k = elide_walk(h->inputs[i], e);
        below = k > below ? k : below;
    }
    return levels + below;
}

void header_elide(const stream_header *h, header_elision *e)
{
    memset(e, 0, sizeof *e);
    e->levels = elide_walk(h, e);
}

void header_elision_free(header_elision *e)
{
    free(e->origins);
    e->origins = NULL;
    e->norigins = 0;
}

int header_meta_print(FILE *f, const stream_meta *m)
{
    switch (m->type) {
    case META_INT: fprintf(f, "%lld\n", (long long)m->i); return 0;
    case META_FLOAT: fprintf(f, "%.9g\n", m->f); return 0;
    case META_STR: fprintf(f, "%s\n", m->s); return 0;
    case META_BOOL: fprintf(f, "%s\n", m->i ? "true" : "false"); return 0;
    case META_TENSOR:
        for (int64_t i = 0; i < tensor_numel(m->t); i++)
            fprintf(f, "%.9g\n", tensor_get(m->t, i));
        return 0;
    default: return -1;
    }
}
