/* gallery: the items queries are ranked against (lib/evaluation/gallery.h) */
#include "gallery.h"

#include <stdlib.h>
#include <string.h>

#include "aurc.h"
#include "util.h"

void gallery_unit_means(const char *name, const match_set *S, float *m)
{
    int64_t z = match_normalise(m, S->n, S->D);
    if (z >= 0)
        die("%s: record %lld (id %lld): its mean is the zero vector, which has no direction for --distance cosine",
            name, (long long)z, (long long)S->id[z]);
}

double *gallery_uncertainty(const match_set *S)
{
    if (!S->eta && !S->var)
        return NULL;
    double *u = emalloc((size_t)S->n * sizeof *u);
    metrics_item_uncertainty(S->eta, S->var, S->n, (int64_t)S->C * S->D, u);
    return u;
}

const char *gallery_uncertainty_kind(const match_set *S) { return S->eta ? "eta" : S->var ? "var" : NULL; }

gallery gallery_read(const char *const *paths, int n, match_set *Q, const char *qname, int distance, int exclude_id, int need_u,
                     stream_reader **gin)
{
    gallery G = {.owned = 1};
    G.part_n = emalloc((size_t)n * sizeof *G.part_n);
    size_t len = 1;
    for (int i = 0; i < n; i++)
        len += strlen(paths[i]) + 1;
    G.names = ecalloc(len, 1);
    /* each stream's class names, kept to match all of them with the queries' at the end */
    classnames *cn = ecalloc((size_t)n, sizeof *cn);
    for (int i = 0; i < n; i++) {
        gin[i] = stream_open_path(paths[i]);
        match_set *S = match_set_read(gin[i]);
        const char *name = gin[i]->name;
        if (distance == MATCH_DISTANCE_W2)
            match_set_w2(name, S);
        if (S->D != Q->D)
            die("%s: the gallery has %d dimensions, the queries %d", name, S->D, Q->D);
        if (!S->cls)
            die("%s: no 'class' field: no positives to rank", name);
        if (exclude_id && n > 1 && !S->has_id)
            die("%s: no 'id' field: --exclude-id over several galleries needs the ids", name);
        const char *k = gallery_uncertainty_kind(S);
        if (need_u && i == 0)
            G.ukind = k;
        if (need_u && G.ukind && (!k || strcmp(k, G.ukind)))
            die("%s: no '%s' field: --clean needs the first gallery's uncertainty (%s) in every gallery", name,
                G.ukind, G.ukind);
        int64_t n0 = G.n, ni = S->n, D = Q->D;
        G.n += ni;
        G.part_n[i] = ni;
        float *m = match_set_means(S, NULL);
        if (distance == MATCH_DISTANCE_COSINE)
            gallery_unit_means(name, S, m);
        if (match_distance_kernel(distance) >= 0) {
            match_kernel_check(name, S, distance);
            G.var = erealloc(G.var, (size_t)G.n * D * sizeof *G.var);
            memcpy(G.var + n0 * D, S->var, (size_t)ni * D * sizeof *G.var);
        }
        G.mean = erealloc(G.mean, (size_t)G.n * D * sizeof *G.mean);
        memcpy(G.mean + n0 * D, m, (size_t)ni * D * sizeof *m);
        free(m);
        G.cls = erealloc(G.cls, (size_t)G.n * sizeof *G.cls);
        memcpy(G.cls + n0, S->cls, (size_t)ni * sizeof *G.cls);
        G.id = erealloc(G.id, (size_t)G.n * sizeof *G.id);
        memcpy(G.id + n0, S->id, (size_t)ni * sizeof *G.id);
        if (need_u && G.ukind) {
            double *u = gallery_uncertainty(S);
            G.u = erealloc(G.u, (size_t)G.n * sizeof *G.u);
            memcpy(G.u + n0, u, (size_t)ni * sizeof *u);
            free(u);
        }
        if (i)
            strcat(G.names, ",");
        strcat(G.names, paths[i]);
        cn[i] = S->names; /* (handed over) */
        S->names = (classnames){0};
        match_set_free(S);
    }
    /* the queries and every stream matched by name: the classes renumbered into their union,
     * which the queries' names become (what the caller writes) */
    classnames_part *p = emalloc((size_t)(n + 1) * sizeof *p);
    p[0] = (classnames_part){&Q->names, Q->cls, Q->n, qname};
    int64_t at = 0;
    for (int i = 0; i < n; at += G.part_n[i], i++)
        p[i + 1] = (classnames_part){&cn[i], G.cls + at, G.part_n[i], gin[i]->name};
    classnames U;
    classnames_unify(&U, p, n + 1);
    if (U.present) {
        classnames_free(&Q->names);
        Q->names = U;
    }
    for (int i = 0; i < n; i++)
        classnames_free(&cn[i]);
    free(cn);
    free(p);
    return G;
}

gallery gallery_self(const match_set *Q, float *qm, int need_u)
{
    gallery G = {.n = Q->n, .mean = qm, .var = Q->var, .cls = Q->cls, .id = Q->id};
    if (need_u) {
        G.ukind = gallery_uncertainty_kind(Q);
        G.u = gallery_uncertainty(Q);
    }
    return G;
}

void gallery_free(gallery *G)
{
    if (G->owned) {
        free(G->mean);
        free(G->var);
        free(G->cls);
        free(G->id);
    }
    free(G->u);
    free(G->part_n);
    free(G->names);
}

int64_t *gallery_exclude(int leave_one_out, int exclude_id, const int64_t *gid, int64_t ng, const int64_t *qid,
                         int64_t q0, int64_t nq, const char *name)
{
    int64_t *exclude = NULL;
    if (leave_one_out) {
        exclude = emalloc((size_t)nq * sizeof *exclude);
        for (int64_t q = 0; q < nq; q++)
            exclude[q] = q0 + q;
    } else if (exclude_id) {
        int dup;
        int64_t dup_id;
        match_id_index *t = match_ids_index(gid, ng, &dup, &dup_id);
        if (dup)
            die("%s: id %lld appears twice in the gallery: --exclude-id needs unique ids", name, (long long)dup_id);
        exclude = emalloc((size_t)nq * sizeof *exclude);
        for (int64_t q = 0; q < nq; q++)
            exclude[q] = match_ids_lookup(t, ng, qid[q]);
        free(t);
    }
    return exclude;
}

void gallery_record_fields(stream_header *h, const gallery_field *f, int n, int64_t k, int with_eta,
                           const match_set *Q)
{
    int64_t kshape[1] = {k}, nocc[1] = {Q->nocc};
    header_add_field(h, "id", DT_I64, 0, NULL);
    header_add_field(h, "class", DT_I32, 0, NULL);
    for (int i = 0; i < n; i++)
        header_add_field(h, f[i].name, f[i].dtype, f[i].vector ? 1 : 0, f[i].vector ? kshape : NULL);
    if (with_eta)
        header_add_field(h, "eta", DT_F32, 0, NULL);
    if (Q->occ)
        header_add_field(h, "occluded", DT_U8, 1, nocc);
    if (Q->corrupt)
        header_add_field(h, "corrupt", DT_U8, 0, NULL);
}
