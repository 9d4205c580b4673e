/* columns: scalar fields of a stream as columns of doubles (lib/evaluation/columns.h) */
#include "columns.h"

#include <stdlib.h>

#include "util.h"

int64_t metrics_read_columns(stream_reader *r, int nf, const char *const *names, double **cols)
{
    const stream_header *h = r->header;
    if (h->batched)
        die("%s: batched streams are not supported here", r->name);
    int idx[STREAM_MAXFIELDS];
    for (int f = 0; f < nf; f++) {
        idx[f] = stream_field_index(h, names[f]);
        const stream_field *fd = &h->fields[idx[f]];
        if (shape_numel(fd->ndim, fd->shape) != 1)
            die("%s: field '%s' holds %lld numbers per record, expected one", r->name, names[f],
                (long long)shape_numel(fd->ndim, fd->shape));
    }
    int64_t n = 0, cap = 0;
    for (int f = 0; f < nf; f++)
        cols[f] = NULL;
    stream_record rec = {0};
    while (stream_read(r, &rec)) {
        if (n == cap) {
            cap = cap ? 2 * cap : 4096;
            for (int f = 0; f < nf; f++)
                cols[f] = erealloc(cols[f], (size_t)cap * sizeof **cols);
        }
        for (int f = 0; f < nf; f++)
            cols[f][n] = tensor_get(&rec.t[idx[f]], 0);
        n++;
    }
    record_free(&rec);
    for (int f = 0; f < nf; f++)
        if (!cols[f])
            cols[f] = emalloc(sizeof **cols);
    return n;
}
