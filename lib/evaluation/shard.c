/* shard: query ranges and the checks that put shards back together. See shard.h. */
#include "shard.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

void shard_parse(const char *opt, const char *s, shard_range *r)
{
    const char *colon = strchr(s, ':');
    if (!colon || colon == s || !colon[1])
        usage_die("%s: expected FROM:TO (record indices, FROM < TO), got '%s'", opt, s);
    char *from = estrdup(s);
    from[colon - s] = 0;
    r->from = parse_long(opt, from, 0, 2147483646L);
    r->to = parse_long(opt, colon + 1, 1, 2147483647L);
    free(from);
    if (r->from >= r->to)
        usage_die("%s: FROM must be below TO, got '%s'", opt, s);
}

void shard_check(const shard_range *r, int64_t n, const char *name)
{
    if (r->to > n)
        die("%s: --queries %lld:%lld reaches past its %lld records", name, (long long)r->from, (long long)r->to,
            (long long)n);
}

void shard_set_meta(stream_header *h, const shard_range *r, int64_t total)
{
    header_set_int(h, "queries_from", r->from);
    header_set_int(h, "queries_to", r->to);
    header_set_int(h, "queries_total", total);
}

/* the same meta value (absent in both counts as the same) */
static int same_meta(const stream_meta *a, const stream_meta *b)
{
    if (!a || !b)
        return !a && !b;
    if (a->type != b->type)
        return 0;
    switch (a->type) {
    case META_INT:
    case META_BOOL: return a->i == b->i;
    case META_FLOAT: return a->f == b->f || (a->f != a->f && b->f != b->f);
    case META_STR: return !strcmp(a->s, b->s);
    case META_TENSOR: {
        int64_t n = tensor_numel(a->t);
        if (a->t->dtype != b->t->dtype || n != tensor_numel(b->t))
            return 0;
        for (int64_t i = 0; i < n; i++)
            if (tensor_get(a->t, i) != tensor_get(b->t, i))
                return 0;
        return 1;
    }
    default: return a->rawlen == b->rawlen && !memcmp(a->raw, b->raw, a->rawlen);
    }
}

static int same_fields(const stream_header *a, const stream_header *b)
{
    if (a->nfields != b->nfields)
        return 0;
    for (int f = 0; f < a->nfields; f++) {
        const stream_field *x = &a->fields[f], *y = &b->fields[f];
        if (strcmp(x->name, y->name) || x->dtype != y->dtype || x->ndim != y->ndim ||
            memcmp(x->shape, y->shape, (size_t)x->ndim * sizeof *x->shape))
            return 0;
    }
    return 1;
}

static int64_t range_of(const stream_reader *r, const char *key)
{
    int64_t v = header_int(r->header, key, -1);
    if (v < 0)
        die("%s: a shard without %s (an output of --queries FROM:TO has it)", r->name, key);
    return v;
}

shard_set *shard_open(const char *const *paths, int n, const char *kind, const char *const *same)
{
    if (n < 1)
        die("internal error: shard_open of %d files", n);
    stream_reader **in = emalloc((size_t)n * sizeof *in);
    for (int i = 0; i < n; i++) {
        if (n > 1 && !strcmp(paths[i], "-"))
            usage_die("several inputs: give each shard as a file, not '-'");
        in[i] = stream_open_path(paths[i]);
    }
    return shard_open_readers(in, paths, n, kind, same);
}

shard_set *shard_open_readers(stream_reader **in, const char *const *paths, int n, const char *kind,
                              const char *const *same)
{
    if (n < 1)
        die("internal error: shard_open of %d streams", n);
    shard_set *S = ecalloc(1, sizeof *S);
    S->n = n;
    S->in = in;
    S->path = emalloc((size_t)n * sizeof *S->path);
    for (int i = 0; i < n; i++) {
        S->path[i] = paths[i];
        stream_expect_kind(S->in[i], kind);
        int has = header_meta(S->in[i]->header, "queries_from") != NULL;
        if (i && has != S->sharded)
            die("%s %s a shard (queries_from) but %s %s: give the shards of one run, or one whole output",
                S->in[i]->name, has ? "is" : "is not", S->in[0]->name, S->sharded ? "is" : "is not");
        S->sharded = has;
    }
    int64_t *from = emalloc((size_t)n * sizeof *from);
    if (!S->sharded) {
        if (n > 1)
            die("%s is a whole output (no queries_from): several inputs must be the shards of one run "
                "(--queries FROM:TO)", S->in[0]->name);
        free(from);
        return S;
    }
    for (int i = 0; i < n; i++)
        from[i] = range_of(S->in[i], "queries_from");
    /* query order: an insertion sort of a few shards, by FROM, then TO (an empty shard first) */
    int64_t *to = emalloc((size_t)n * sizeof *to);
    for (int i = 0; i < n; i++)
        to[i] = header_int(S->in[i]->header, "queries_to", -1);
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && (from[j] < from[j - 1] || (from[j] == from[j - 1] && to[j] < to[j - 1])); j--) {
            int64_t f = from[j], t = to[j];
            from[j] = from[j - 1], from[j - 1] = f;
            to[j] = to[j - 1], to[j - 1] = t;
            stream_reader *r = S->in[j];
            S->in[j] = S->in[j - 1], S->in[j - 1] = r;
            const char *p = S->path[j];
            S->path[j] = S->path[j - 1], S->path[j - 1] = p;
        }
    const stream_header *h0 = S->in[0]->header;
    S->total = range_of(S->in[0], "queries_total");
    int64_t at = 0;
    for (int i = 0; i < n; i++) {
        const stream_reader *r = S->in[i];
        int64_t end = range_of(r, "queries_to"), total = range_of(r, "queries_total");
        if (end < from[i])
            die("%s: queries_to %lld is below queries_from %lld", r->name, (long long)end, (long long)from[i]);
        if (total != S->total)
            die("%s: queries_total %lld, but %s has %lld: not shards of one input", r->name, (long long)total,
                S->in[0]->name, (long long)S->total);
        if (from[i] > at)
            die("queries %lld:%lld are in no shard (%s starts at %lld)", (long long)at, (long long)from[i],
                r->name, (long long)from[i]);
        if (from[i] < at)
            die("%s (queries %lld:%lld) overlaps %s (up to %lld)", r->name, (long long)from[i], (long long)end,
                S->in[i - 1]->name, (long long)at);
        if (!same_fields(r->header, h0))
            die("%s: other fields than %s: not shards of one run", r->name, S->in[0]->name);
        for (int k = 0; same && same[k]; k++)
            if (!same_meta(header_meta(r->header, same[k]), header_meta(h0, same[k])))
                die("%s: meta %s differs from %s's: not shards of one run", r->name, same[k], S->in[0]->name);
        at = end;
    }
    if (at != S->total)
        die("queries %lld:%lld are in no shard (the last ends at %lld of %lld)", (long long)at,
            (long long)S->total, (long long)at, (long long)S->total);
    free(from);
    free(to);
    return S;
}

void shard_rewind(shard_set *S)
{
    for (int i = 0; i < S->n; i++) {
        if (!strcmp(S->path[i], "-"))
            usage_die("this reads its input twice: give a file, not stdin");
        stream_close(S->in[i]);
        S->in[i] = stream_open_path(S->path[i]);
    }
}

stream_header *shard_header(const shard_set *S, int argc, char **argv)
{
    const stream_header *h0 = S->in[0]->header;
    stream_header *h = header_new(h0->kind, h0->batched);
    header_provenance(h, argc, argv);
    for (int i = 0; i < S->n; i++)
        header_add_input(h, S->in[i]->header);
    header_copy_meta(h, h0);
    header_del_meta(h, "queries_from");
    header_del_meta(h, "queries_to");
    header_del_meta(h, "queries_total");
    header_copy_fields(h, h0);
    return h;
}

void shard_close(shard_set *S)
{
    if (!S)
        return;
    for (int i = 0; i < S->n; i++)
        stream_close(S->in[i]);
    free(S->in);
    free(S->path);
    free(S);
}

void shard_report(const shard_reader *R, int merge, const char *const *paths, int n, int argc, char **argv)
{
    const char *dash = "-";
    if (n < 1)
        paths = &dash, n = 1;
    shard_set *S = shard_open(paths, n, R->kind, R->same);
    if (merge && !S->sharded)
        die("%s: not a shard (no queries_from): nothing to merge", S->in[0]->name);
    void *numbers = R->read(S);
    if (!merge)
        R->summary(stdout, S, numbers);
    else {
        shard_rewind(S);
        stream_header *h = shard_header(S, argc, argv);
        R->merged(h, numbers);
        stream_writer *w = stream_create(stdout, h);
        stream_record rec = {0};
        for (int i = 0; i < S->n; i++)
            while (stream_read(S->in[i], &rec))
                stream_write_record(w, &rec);
        stream_finish(w);
        record_free(&rec);
        header_free(h);
    }
    R->free(numbers);
    shard_close(S);
    close_stdout();
}
