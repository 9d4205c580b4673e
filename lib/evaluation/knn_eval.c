/* knn_eval: knn's search, votes, stream and report (lib/evaluation/knn_eval.h) */
#include "knn_eval.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "aurc.h"
#include "gallery.h"
#include "json.h"
#include "knn_search.h"
#include "knn_vote.h"
#include "mls.h"
#include "util.h"

/* a neighbour's distance as knn reports it (nn_dist, the votes) from what the search gives: the
 * Euclidean distance, 1 - cos for unit means (d2 / 2), -MLS as it is */
static double knn_distance(const knn_eval *E, double d2)
{
    return match_distance_kernel(E->distance) >= 0 ? d2 : E->distance == MATCH_DISTANCE_COSINE ? d2 / 2 : sqrt(d2);
}

/* the search of the means (euclidean, cosine; -d expected: plus the total variances) */
static void search_means(knn_eval *E, const match_set *Q, const char *qname, const match_set *G, const char *gname,
                         const int64_t *exclude, int threads)
{
    int D = Q->D;
    double *qtv = NULL, *gtv = NULL;
    float *qm = match_set_means(Q, E->expected ? &qtv : NULL);
    float *gm = G == Q ? qm : match_set_means(G, E->expected ? &gtv : NULL);
    if (G == Q)
        gtv = qtv;
    if (E->distance == MATCH_DISTANCE_COSINE) {
        gallery_unit_means(qname, Q, qm);
        if (gm != qm)
            gallery_unit_means(gname, G, gm);
    }
    metrics_knn(qm + E->q0 * D, qtv ? qtv + E->q0 : NULL, E->nq, gm, gtv, G->n, D, E->k, exclude, threads, E->nbr,
                E->d2);
    if (gm != qm)
        free(gm);
    free(qm);
    if (gtv != qtv)
        free(gtv);
    free(qtv);
}

void knn_eval_run(knn_eval *E, const match_set *Q, const char *qname, const match_set *G, const char *gname,
                  const int64_t *exclude, int threads)
{
    int k = E->k, D = Q->D;
    int64_t q0 = E->q0, nq = E->nq, ng = G->n;
    E->Q = Q, E->G = G, E->ng = ng;
    /* the queries' uncertainty: their eta, else their mean var (retrieve's rule), else none */
    double *qu = emalloc((size_t)nq * sizeof *qu);
    E->eta_source = metrics_item_uncertainty(Q->eta ? Q->eta + q0 : NULL, Q->var ? Q->var + q0 * Q->C * Q->D : NULL,
                                             nq, (int64_t)Q->C * Q->D, qu);
    E->qeta = NULL;
    if (E->eta_source) {
        E->qeta = emalloc((size_t)nq * sizeof *E->qeta);
        for (int64_t q = 0; q < nq; q++)
            E->qeta[q] = (float)qu[q];
    }
    free(qu);
    if (!E->searched) {
        E->nbr = emalloc((size_t)nq * k * sizeof *E->nbr);
        E->d2 = emalloc((size_t)nq * k * sizeof *E->d2);
    }
    if (E->searched)
        ; /* the caller's search (lib/evaluation/knnpass.h) */
    else if (match_distance_kernel(E->distance) >= 0) {
        match_kernel_check(qname, Q, E->distance);
        if (G != Q)
            match_kernel_check(gname, G, E->distance);
        mls_knn_kind(match_distance_kernel(E->distance), Q->mu + q0 * D, Q->var + q0 * D, nq, G->mu, G->var, ng, D, k,
                     exclude, threads, E->nbr, E->d2);
    } else
        search_means(E, Q, qname, G, gname, exclude, threads);
    for (int64_t q = 0; q < nq; q++)
        if (!(fabs(knn_distance(E, E->d2[q * k])) <= FLT_MAX))
            die("%s: record %lld: the distance to its nearest neighbour, %g, is beyond float32 (nn_dist)", qname,
                (long long)(q0 + q), knn_distance(E, E->d2[q * k]));

    /* votes and recall */
    const int32_t *qcls = Q->cls + q0;
    E->pred = emalloc((size_t)nq * sizeof *E->pred);
    E->recall = emalloc((size_t)nq * k);
    E->recall_at = ecalloc((size_t)k, sizeof *E->recall_at);
    E->correct = 0;
    int32_t *ncls = emalloc((size_t)k * sizeof *ncls);
    double *ndist = emalloc((size_t)k * sizeof *ndist);
    for (int64_t q = 0; q < nq; q++) {
        int hit = 0;
        for (int r = 0; r < k; r++) {
            ncls[r] = G->cls[E->nbr[q * k + r]];
            ndist[r] = knn_distance(E, E->d2[q * k + r]);
            hit |= ncls[r] == qcls[q];
            E->recall[q * k + r] = (uint8_t)hit;
            E->recall_at[r] += hit;
        }
        E->pred[q] = metrics_vote(ncls, ndist, k);
        E->correct += E->pred[q] == qcls[q];
    }
    for (int r = 0; r < k; r++)
        E->recall_at[r] /= (double)nq;
    free(ncls);
    free(ndist);
}

static const char *distance_name(const knn_eval *E)
{
    return E->distance != MATCH_DISTANCE_EUCLIDEAN ? match_distance_name(E->distance)
           : E->expected                          ? "expected"
                                                  : "mean";
}

/* recall_at (k values) as the meta key recall_at */
static void set_recall_at(stream_header *h, const double *recall_at, int k)
{
    int64_t kshape[1] = {k};
    tensor *rt = tensor_view(DT_F64, 1, kshape, (void *)recall_at);
    header_set_tensor(h, "recall_at", rt);
    tensor_free(rt);
}

stream_header *knn_eval_header(const knn_eval *E, int argc, char **argv, const stream_header *qh,
                               const stream_header *gh, const shard_range *queries)
{
    int k = E->k;
    stream_header *h = header_new("knn", 0);
    header_provenance(h, argc, argv);
    header_add_input(h, qh);
    if (gh)
        header_add_input(h, gh);
    header_copy_meta(h, qh);
    header_set_int(h, "k", k);
    header_set_str(h, "knn_distance", distance_name(E));
    header_set_str(h, "knn_gallery", E->gallery ? E->gallery : "leave-one-out");
    header_set_int(h, "knn_gallery_n", E->ng);
    header_set_float(h, "accuracy", E->correct / (double)E->nq);
    set_recall_at(h, E->recall_at, k);
    if (E->eta_source)
        header_set_str(h, "eta_source", E->eta_source);
    if (queries) /* after every other key: --merge deletes them, the rest keeps its order */
        shard_set_meta(h, queries, E->Q->n);
    static const gallery_field fields[] = {{"predicted", DT_I32, 0}, {"correct", DT_U8, 0}, {"recall", DT_U8, 1},
                                           {"nn_dist", DT_F32, 0}, {"neighbors", DT_I64, 1}};
    gallery_record_fields(h, fields, 5, k, E->qeta != NULL, E->Q);
    return h;
}

void knn_eval_write(const knn_eval *E, stream_writer *w)
{
    int k = E->k;
    const match_set *Q = E->Q;
    const int32_t *qcls = Q->cls + E->q0;
    const int64_t *qid = Q->id + E->q0;
    int64_t *nid = emalloc((size_t)k * sizeof *nid);
    for (int64_t q = 0; q < E->nq; q++) {
        uint8_t ok = E->pred[q] == qcls[q];
        float nn = (float)knn_distance(E, E->d2[q * k]);
        for (int r = 0; r < k; r++)
            nid[r] = E->G->id[E->nbr[q * k + r]];
        void *data[10] = {(void *)&qid[q], (void *)&qcls[q], &E->pred[q], &ok, E->recall + q * k, &nn, nid};
        int f = 7;
        if (E->qeta)
            data[f++] = &E->qeta[q];
        if (Q->occ)
            data[f++] = Q->occ + (E->q0 + q) * Q->nocc;
        if (Q->corrupt)
            data[f++] = Q->corrupt + E->q0 + q;
        stream_write_data(w, data, 0);
    }
    free(nid);
}

/* the --json line, of a run or of its streams read back */
static void report(FILE *f, int64_t n, int k, double accuracy, const double *recall_at, const char *distance,
                   int64_t ng, const char *mode)
{
    json_writer w;
    json_report(&w, f, "knn");
    json_key_int(&w, "n", n);
    json_key_int(&w, "k", k);
    json_key_num(&w, "accuracy", accuracy);
    json_key_nums(&w, "recall", recall_at, k);
    json_key_str(&w, "distance", distance);
    json_key_int(&w, "gallery", ng);
    json_key_str(&w, "mode", mode);
    json_end(&w);
}

void knn_eval_json(FILE *f, const knn_eval *E)
{
    report(f, E->nq, E->k, E->correct / (double)E->nq, E->recall_at, distance_name(E), E->ng,
           E->gallery ? "gallery" : "leave-one-out");
}

void knn_eval_free(knn_eval *E)
{
    free(E->qeta);
    free(E->recall_at);
    free(E->recall);
    free(E->pred);
    free(E->d2);
    free(E->nbr);
}

/* ---- knn --summary and --merge */

/* the meta that the shards of one knn run share */
static const char *const knn_same[] = {"k", "knn_distance", "knn_gallery", "knn_gallery_n", "eta_source", NULL};

typedef struct {
    int64_t n;          /* records */
    double correct;     /* records with correct set */
    double *recall_at;  /* (k) the means of recall */
    int k;              /* from the field */
} numbers;

static void *read_numbers(shard_set *S)
{
    numbers *N = ecalloc(1, sizeof *N);
    const stream_header *h = S->in[0]->header;
    const char *src = S->in[0]->name; /* (the shards have its fields: shard_open) */
    int ci = stream_field_need(src, h, "correct", DT_U8, 0, NULL),
        ri = stream_field_need(src, h, "recall", DT_U8, 1, (int64_t[]){FIELD_ANY});
    if (h->fields[ri].shape[0] > KNN_MAXK)
        die("%s: field 'recall' holds %lld values, expected 1 to %d", src, (long long)h->fields[ri].shape[0], KNN_MAXK);
    N->k = (int)h->fields[ri].shape[0];
    N->recall_at = ecalloc((size_t)N->k, sizeof *N->recall_at);
    stream_record rec = {0};
    for (int i = 0; i < S->n; i++) {
        int64_t before = N->n;
        while (stream_read(S->in[i], &rec)) {
            N->correct += *(const uint8_t *)rec.t[ci].data != 0;
            for (int r = 0; r < N->k; r++)
                N->recall_at[r] += ((const uint8_t *)rec.t[ri].data)[r] != 0;
            N->n++;
        }
        int64_t want = S->sharded ? header_int(S->in[i]->header, "queries_to", 0) -
                                        header_int(S->in[i]->header, "queries_from", 0)
                                  : N->n - before;
        if (N->n - before != want)
            die("%s: %lld records, but the shard's queries are %lld", S->in[i]->name, (long long)(N->n - before),
                (long long)want);
    }
    if (!N->n)
        die("%s: the stream has no records", S->in[0]->name);
    for (int r = 0; r < N->k; r++)
        N->recall_at[r] /= (double)N->n;
    record_free(&rec);
    return N;
}

static void summary(FILE *f, const shard_set *S, const void *numbers_)
{
    const numbers *N = numbers_;
    const stream_header *h = S->in[0]->header;
    const char *gal = header_str(h, "knn_gallery", "?");
    report(f, N->n, N->k, N->correct / (double)N->n, N->recall_at, header_str(h, "knn_distance", "?"),
           header_int(h, "knn_gallery_n", -1), !strcmp(gal, "leave-one-out") ? gal : "gallery");
}

static void merged(stream_header *h, const void *numbers_)
{
    const numbers *N = numbers_;
    header_set_float(h, "accuracy", N->correct / (double)N->n);
    set_recall_at(h, N->recall_at, N->k);
}

static void free_numbers(void *numbers_)
{
    numbers *N = numbers_;
    free(N->recall_at);
    free(N);
}

const shard_reader knn_eval_shards = {"knn", knn_same, read_numbers, summary, merged, free_numbers};
