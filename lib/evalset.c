/* evalset: bin/evaluate's input sets (lib/evalset.h) */
#include "evalset.h"

#include <stdlib.h>
#include <string.h>

#include "npzimport.h"
#include "stream.h"
#include "util.h"

static int is_npz(const char *path)
{
    size_t n = strlen(path);
    return n > 4 && (!strcmp(path + n - 4, ".npz") || !strcmp(path + n - 4, ".npy"));
}

static void *column(const npzimport *im, const char *name)
{
    for (int k = 0; k < im->ncol; k++)
        if (!strcmp(im->col[k].name, name))
            return im->col[k].data;
    return NULL;
}

void evalset_read(evalset *E, const char *path)
{
    memset(E, 0, sizeof *E);
    E->path = path;
    if (is_npz(path)) {
        npzimport *im = ecalloc(1, sizeof *im);
        npzimport_options o = {.input = path};
        npzimport_read(im, &o);
        E->npz = im;
        E->set = (hedge_set){im->n, (int)im->C, (int)im->D, column(im, "mu"), column(im, "var"), column(im, "eta"),
                             column(im, "class"), column(im, "id")};
    } else {
        stream_reader *in = stream_open_path(path);
        match_set *S = match_set_read(in);
        const stream_header *h = in->header;
        if (header_meta(h, "match_a") && header_meta(h, "match_b"))
            E->has_match = 1, E->match_a = header_float(h, "match_a", 0), E->match_b = header_float(h, "match_b", 0);
        stream_close(in);
        E->S = S;
        E->set = (hedge_set){S->n, S->C, S->D, S->mu, S->var, S->eta, S->cls, S->has_id ? S->id : NULL};
    }
    if (!E->set.labels)
        die("%s: no class labels (a stream needs a 'class' field; an .npz an array class, labels or label)", path);
}

void evalset_free(evalset *E)
{
    if (E->npz) {
        npzimport_free(E->npz);
        free(E->npz);
    }
    match_set_free(E->S);
    memset(E, 0, sizeof *E);
}
