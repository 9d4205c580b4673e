/* evalset: bin/evaluate's input sets (lib/engine/evalset.h) */
#include "evalset.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "columns.h"
#include "npzimport.h"
#include "stream.h"
#include "util.h"

int evalset_is_npz(const char *path)
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

void evalset_read(evalset *E, const char *path, const char *const *name)
{
    memset(E, 0, sizeof *E);
    E->path = path;
    if (evalset_is_npz(path)) {
        npzimport *im = ecalloc(1, sizeof *im);
        npzimport_options o = {.input = path};
        for (int r = 0; name && r < NPZIMPORT_NROLES; r++)
            o.name[r] = name[r];
        npzimport_read(im, &o);
        E->npz = im;
        E->cls = column(im, "class");
        E->names = im->names; /* (handed over) */
        im->names = (classnames){0};
        E->set = (hedge_set){.n = im->n, .C = (int)im->C, .D = (int)im->D, .mu = column(im, "mu"),
                             .var = column(im, "var"), .eta = column(im, "eta"), .labels = E->cls,
                             .ids = column(im, "id")};
    } else {
        stream_reader *in = stream_open_path(path);
        match_set *S = match_set_read(in);
        const stream_header *h = in->header;
        E->has_match = match_meta_ab(h, &E->match_a, &E->match_b, E->match_why, sizeof E->match_why);
        stream_close(in);
        E->S = S;
        E->cls = S->cls;
        E->names = S->names;
        S->names = (classnames){0};
        E->set = (hedge_set){.n = S->n, .C = S->C, .D = S->D, .mu = S->mu, .var = S->var, .eta = S->eta,
                             .labels = S->cls, .ids = S->has_id ? S->id : NULL};
    }
    if (!E->set.labels)
        die("%s: no class labels (a stream needs a 'class' field; an .npz an array class, labels or label)", path);
}

void evalset_user(evalset *E, const char *const *fields, int n)
{
    for (int u = 0; u < n; u++) {
        int64_t m = E->set.n;
        float *x = emalloc((size_t)m * sizeof *x);
        if (E->npz) {
            const npzimport *im = E->npz;
            const npzimport_column *c = NULL;
            for (int k = 0; k < im->ncol && !c; k++)
                c = !strcmp(im->col[k].name, fields[u]) ? &im->col[k] : NULL;
            if (!c)
                die("%s: --uncertainty %s: no such array (an extra array of one number an item)", E->path, fields[u]);
            if (c->ndim != 0 || (c->dtype != DT_F32 && c->dtype != DT_I32 && c->dtype != DT_I64 && c->dtype != DT_U8))
                die("%s: --uncertainty %s: an array of %d dimension%s an item, expected one number an item", E->path,
                    fields[u], c->ndim, c->ndim == 1 ? "" : "s");
            for (int64_t i = 0; i < m; i++)
                x[i] = c->dtype == DT_F32 ? ((const float *)c->data)[i]
                     : c->dtype == DT_I32 ? (float)((const int32_t *)c->data)[i]
                     : c->dtype == DT_I64 ? (float)((const int64_t *)c->data)[i]
                                          : (float)((const uint8_t *)c->data)[i];
        } else {
            if (!strcmp(E->path, "-"))
                die("--uncertainty %s: the input is stdin, which cannot be read twice: give a file", fields[u]);
            stream_reader *in = stream_open_path(E->path);
            double *col;
            if (metrics_read_columns(in, 1, &fields[u], &col) != m)
                die("%s: --uncertainty %s: not one value a record", E->path, fields[u]);
            stream_close(in);
            for (int64_t i = 0; i < m; i++)
                x[i] = (float)col[i];
            free(col);
        }
        E->user[u] = x;
        E->set.user[u] = x, E->set.user_name[u] = fields[u];
    }
    E->set.nuser = n;
}

void evalset_unify(evalset *const *E, int n)
{
    classnames_part *p = emalloc((size_t)n * sizeof *p);
    for (int i = 0; i < n; i++)
        p[i] = (classnames_part){&E[i]->names, E[i]->cls, E[i]->cls ? E[i]->set.n : 0, E[i]->path};
    classnames U;
    classnames_unify(&U, p, n);
    free(p);
    for (int i = 0; U.present && i < n; i++) {
        classnames_free(&E[i]->names);
        classnames_copy(&E[i]->names, &U);
    }
    classnames_free(&U);
}

void evalset_explain(const evalset *E, const hedge_options *o, hedge_result *r)
{
    if (!o->has_match && !strncmp(E->match_why, "no match probability", 20) &&
        !strncmp(r->why[HEDGE_ECE], "no match probability", 20))
        snprintf(r->why[HEDGE_ECE], sizeof r->why[HEDGE_ECE], "%s", E->match_why);
}

void evalset_free(evalset *E)
{
    classnames_free(&E->names);
    if (E->npz) {
        npzimport_free(E->npz);
        free(E->npz);
    }
    match_set_free(E->S);
    for (int u = 0; u < HEDGE_MAXUSER; u++)
        free(E->user[u]);
    memset(E, 0, sizeof *E);
}
