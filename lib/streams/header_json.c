/* header_json.c: a stream header as JSON on one line (header_print_json, declared in stream.h):
 * what `tshow -H` prints and tonpz stores as the npz's header string. Written with lib/base/json.h;
 * a raw meta value (a value of any other type) is rendered by the codec (stream_raw_json),
 * the only code that reads the stream's encoding. Numbers are %.9g (null for NaN and infinities), as they always were;
 * a meta tensor shows its dtype, shape, element count and first 16 values. */
#include <stdlib.h>

#include "json.h"
#include "stream.h"

/* header, provenance, input: 3 levels of JSON per level of lineage, and 4 in the deepest */
_Static_assert(JSON_MAXDEPTH >= 3 * STREAM_LINEAGE_READ_MAX + 4, "JSON_MAXDEPTH too small for a header");

static void shape_json(json_writer *w, int ndim, const int64_t *shape)
{
    json_arr(w);
    for (int i = 0; i < ndim; i++)
        json_int(w, shape[i]);
    json_end(w);
}

static void tensor_brief_json(json_writer *w, const tensor *t)
{
    json_obj(w);
    json_key_str(w, "dtype", dtype_name(t->dtype));
    json_key(w, "shape");
    shape_json(w, t->ndim, t->shape);
    /* the first 16 values; "count" says how many there are in all */
    int64_t n = tensor_numel(t);
    json_key_int(w, "count", n);
    json_key(w, "values");
    json_arr(w);
    for (int64_t i = 0; i < n && i < 16; i++)
        json_numf(w, "%.9g", tensor_get(t, i));
    json_end(w);
    json_end(w);
}

static void meta_json(json_writer *w, const stream_meta *m)
{
    json_key(w, m->key);
    switch (m->type) {
    case META_INT: json_int(w, m->i); break;
    case META_FLOAT: json_numf(w, "%.9g", m->f); break;
    case META_STR: json_str(w, m->s); break;
    case META_BOOL: json_bool(w, m->i); break;
    case META_TENSOR: tensor_brief_json(w, m->t); break;
    case META_RAW: {
        char *text = stream_raw_json(m->raw, m->rawlen);
        json_raw(w, text);
        free(text);
        break;
    }
    }
}

static void header_json(json_writer *w, const stream_header *h, int with_inputs)
{
    json_obj(w);
    json_key_str(w, "format", "hedge-stream");
    json_key_int(w, "version", STREAM_VERSION);
    json_key_str(w, "kind", h->kind);
    json_key(w, "batched");
    json_bool(w, h->batched);
    json_key(w, "fields");
    json_arr(w);
    for (int i = 0; i < h->nfields; i++) {
        const stream_field *f = &h->fields[i];
        json_obj(w);
        json_key_str(w, "name", f->name);
        json_key_str(w, "dtype", dtype_name(f->dtype));
        json_key(w, "shape");
        shape_json(w, f->ndim, f->shape);
        json_end(w);
    }
    json_end(w);
    json_key(w, "meta");
    json_obj(w);
    for (int i = 0; i < h->nmeta; i++)
        meta_json(w, &h->meta[i]);
    json_end(w);
    json_key(w, "provenance");
    json_obj(w);
    json_key_str(w, "program", h->program);
    json_key(w, "args");
    json_arr(w);
    for (int i = 0; i < h->nargs; i++)
        json_str(w, h->args[i]);
    json_end(w);
    if (h->has_seed)
        json_key_uint(w, "seed", h->seed);
    if (h->version)
        json_key_str(w, "hedge", h->version);
    if (with_inputs) {
        json_key(w, "input");
        json_arr(w);
        for (int i = 0; i < h->ninputs; i++)
            header_json(w, h->inputs[i], 1);
        json_end(w);
    }
    json_end(w);
    json_end(w);
}

void header_print_json(FILE *f, const stream_header *h, int with_inputs)
{
    json_writer w;
    json_begin_inline(&w, f);
    header_json(&w, h, with_inputs);
}
