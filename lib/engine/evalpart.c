/* evalpart: the queries' answers of lib/engine/hedge.c's first half as an `evaluate` stream, and back
 * (lib/engine/evalpart.h; the halves themselves are in lib/engine/hedge.c). */
#include "evalpart.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "shard.h"
#include "stream.h"
#include "util.h"

/* the fields, in order */
enum { F_PRED, F_ETA, F_AP, F_RPREC, F_MAP_R, F_P1, F_NPOS, F_R1, F_RECALL, F_APK, F_RRK, F_TOP1, F_RATIO, F_VOTE, F_N };
static const char *const fname[F_N] = {"pred", "eta", "ap", "rprec", "map_r", "p1", "npos", "r1", "recall",
                                       "ap_at_k", "rr_at_k", "top1_dist", "ratio", "vote_entropy"};
static const int ftype[F_N] = {DT_I32, DT_F32, DT_F32, DT_F32, DT_F32, DT_U8, DT_I32, DT_I32, DT_U8, DT_F64, DT_F64,
                               DT_F32, DT_F32, DT_F32};

/* the meta that the shards of one run share, and that evalpart_read checks against the caller's */
static const char *const same[] = {"evaluate_sets", "has", "knn_k", "distance", "ks", "at_k", "exclude_id",
                                   "include", "input_items", "gallery_items", "set0_hash", "set1_hash",
                                   "gallery_hash", NULL};

static uint64_t mix(uint64_t h, const void *p, size_t bytes)
{
    const unsigned char *b = p;
    for (size_t i = 0; i + 4 <= bytes; i += 4) { /* FNV-1a over 32-bit words, a 64-bit state */
        uint32_t w;
        memcpy(&w, b + i, 4);
        h = (h ^ w) * 0x100000001b3ull;
    }
    for (size_t i = bytes & ~(size_t)3; i < bytes; i++)
        h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

uint64_t evalpart_hash(const hedge_set *S)
{
    int64_t shape[3] = {S->n, S->C, S->D}, cd = (int64_t)S->C * S->D;
    int has = (S->var != NULL) | (S->eta != NULL) << 1 | (S->ids != NULL) << 2;
    uint64_t h = mix(0xcbf29ce484222325ull, shape, sizeof shape);
    h = mix(h, &has, sizeof has);
    h = mix(h, S->mu, (size_t)(S->n * cd) * sizeof *S->mu);
    if (S->var)
        h = mix(h, S->var, (size_t)(S->n * cd) * sizeof *S->var);
    if (S->eta)
        h = mix(h, S->eta, (size_t)S->n * sizeof *S->eta);
    h = mix(h, S->labels, (size_t)S->n * sizeof *S->labels);
    if (S->ids)
        h = mix(h, S->ids, (size_t)S->n * sizeof *S->ids);
    return h;
}

/* the answers as the stream holds them, query by query in each set (the fields' values, never a
 * struct's padding): the shard's answers_hash */
uint64_t evalpart_answers_hash(const evalpart *p, int nsets, int64_t from, int64_t to, int nk)
{
    uint64_t h = mix(0xcbf29ce484222325ull, (int64_t[]){to - from, nsets, nk}, 3 * sizeof(int64_t));
    for (int64_t q = from; q < to; q++)
        for (int s = 0; s < nsets; s++) {
            const evalpart *e = &p[s];
            if (e->pred)
                h = mix(h, &e->pred[q], sizeof *e->pred);
            if (e->eta)
                h = mix(h, &e->eta[q], sizeof *e->eta);
            if (e->per) {
                const retrieval_query *x = &e->per[q];
                float f[3] = {x->ap, x->rprec, x->map_r};
                int32_t i[3] = {x->p1, x->npos, x->r1};
                h = mix(mix(mix(h, f, sizeof f), i, sizeof i), x->recall, (size_t)nk);
            }
            if (e->apk)
                h = mix(mix(h, &e->apk[q], sizeof *e->apk), &e->rrk[q], sizeof *e->rrk);
            if (e->top1)
                h = mix(mix(mix(h, &e->top1[q], 4), &e->ratio[q], 4), &e->vote[q], 4);
        }
    return h;
}

static const char *distance_name(int d) { return hedge_distance_name(d) ? hedge_distance_name(d) : "euclidean"; }

/* meta ks: the k of Recall@k as "1,2,4,8" */
#define KS_LEN (16 * 12)
static void ks_text(const hedge_options *o, char *ks)
{
    *ks = 0;
    for (int i = 0; i < o->nk; i++)
        snprintf(ks + strlen(ks), KS_LEN - strlen(ks), "%s%d", i ? "," : "", o->ks[i]);
}

static void hex(char *buf, uint64_t v) { snprintf(buf, 17, "%016" PRIx64, v); }


/* the meta of I into h (has: the parts' answers, one mask a set) */
static void set_meta(stream_header *h, const evalpart_info *I, const int *has)
{
    const hedge_options *o = I->o;
    char ks[KS_LEN], buf[24];
    ks_text(o, ks);
    header_set_int(h, "evaluate_sets", I->nsets);
    tensor *t = tensor_new(DT_I32, 1, (int64_t[]){I->nsets});
    for (int s = 0; s < I->nsets; s++)
        ((int32_t *)t->data)[s] = has[s];
    header_set_tensor(h, "has", t);
    tensor_free(t);
    header_set_int(h, "knn_k", I->knn_k);
    header_set_str(h, "distance", distance_name(o->distance));
    header_set_str(h, "ks", ks);
    header_set_int(h, "at_k", o->at_k);
    header_set_bool(h, "exclude_id", o->exclude_id);
    header_set_int(h, "include", (int64_t)o->include);
    header_set_int(h, "input_items", I->n);
    header_set_int(h, "gallery_items", I->ng);
    for (int s = 0; s < I->nsets; s++) {
        hex(buf, I->hash[s]);
        header_set_str(h, s ? "set1_hash" : "set0_hash", buf);
    }
    if (I->ng) {
        hex(buf, I->ghash);
        header_set_str(h, "gallery_hash", buf);
    }
}

static void add_fields(stream_header *h, int nsets, int nk)
{
    for (int f = 0; f < F_N; f++)
        header_add_field(h, fname[f], ftype[f], f == F_RECALL ? 2 : 1, (int64_t[]){nsets, nk});
}

void evalpart_write(FILE *f, const evalpart *p, const evalpart_info *I, int argc, char **argv)
{
    int S = I->nsets, nk = I->o->nk, has[EVALPART_MAXSETS];
    for (int s = 0; s < S; s++)
        has[s] = p[s].has;
    stream_header *h = header_new("evaluate", 1);
    header_provenance(h, argc, argv);
    add_fields(h, S, nk);
    set_meta(h, I, has);
    char hash[24];
    hex(hash, evalpart_answers_hash(p, S, 0, p[0].nq, nk));
    header_set_str(h, "answers_hash", hash);
    shard_range r = {p[0].q0, p[0].q0 + p[0].nq};
    shard_set_meta(h, &r, I->n);
    stream_writer *w = stream_create(f, h);
    size_t B = EVALPART_BLOCK, m = B * (size_t)S;
    int32_t *pred = emalloc(m * sizeof *pred), *npos = emalloc(m * sizeof *npos), *r1 = emalloc(m * sizeof *r1);
    float *eta = emalloc(m * sizeof *eta), *ap = emalloc(m * sizeof *ap), *rprec = emalloc(m * sizeof *rprec),
          *map_r = emalloc(m * sizeof *map_r);
    uint8_t *p1 = emalloc(m), *recall = emalloc(m * (size_t)nk);
    double *apk = emalloc(m * sizeof *apk), *rrk = emalloc(m * sizeof *rrk);
    float *top1 = emalloc(m * sizeof *top1), *ratio = emalloc(m * sizeof *ratio), *vote = emalloc(m * sizeof *vote);
    void *data[F_N] = {pred, eta, ap, rprec, map_r, p1, npos, r1, recall, apk, rrk, top1, ratio, vote};
    const retrieval_query none = {NAN, NAN, NAN, 0, 0, 0, {0}};
    for (int64_t q0 = 0; q0 < p[0].nq; q0 += (int64_t)B) {
        int64_t nb = p[0].nq - q0 < (int64_t)B ? p[0].nq - q0 : (int64_t)B;
        for (int64_t b = 0; b < nb; b++)
            for (int s = 0; s < S; s++) {
                const evalpart *e = &p[s];
                int64_t q = q0 + b, i = b * S + s;
                const retrieval_query *x = e->per ? &e->per[q] : &none;
                pred[i] = e->pred ? e->pred[q] : -1;
                eta[i] = e->eta ? e->eta[q] : NAN;
                ap[i] = x->ap, rprec[i] = x->rprec, map_r[i] = x->map_r, p1[i] = x->p1, npos[i] = x->npos;
                r1[i] = x->r1;
                memcpy(recall + i * nk, x->recall, (size_t)nk);
                apk[i] = e->apk ? e->apk[q] : NAN, rrk[i] = e->rrk ? e->rrk[q] : NAN;
                top1[i] = e->top1 ? e->top1[q] : NAN, ratio[i] = e->top1 ? e->ratio[q] : NAN;
                vote[i] = e->top1 ? e->vote[q] : NAN;
            }
        stream_write_data(w, data, nb);
    }
    for (int f = 0; f < F_N; f++)
        free(data[f]);
    stream_finish(w);
    header_free(h);
}

/* the first shard's meta key against the caller's value, naming both when they differ */
static void check_str(const stream_header *h, const char *src, const char *key, const char *want, const char *what)
{
    const char *got = header_str(h, key, "(none)");
    if (strcmp(got, want))
        die("%s: %s %s, but %s: the answers of another run", src, key, got, what);
}

static void check_int(const stream_header *h, const char *src, const char *key, int64_t want, const char *what)
{
    int64_t got = header_int(h, key, -1);
    if (got != want)
        die("%s: %s %lld, but %s: the answers of another run", src, key, (long long)got, what);
}

static void read_set(shard_set *SS, const evalpart_info *I, evalpart *whole);

void evalpart_read(const char *const *paths, int n, const evalpart_info *I, evalpart *whole)
{
    read_set(shard_open(paths, n, "evaluate", same), I, whole);
}

void evalpart_read_bytes(const void *const *bytes, const size_t *sizes, int n, const evalpart_info *I,
                         evalpart *whole)
{
    if (n < 1)
        die("no shards: expected the shards of one run");
    stream_reader **in = emalloc((size_t)n * sizeof *in);
    char **names = emalloc((size_t)n * sizeof *names);
    for (int i = 0; i < n; i++) {
        names[i] = emalloc(32);
        snprintf(names[i], 32, "shard %d", i);
        in[i] = stream_open_bytes(bytes[i], sizes[i], names[i]);
    }
    read_set(shard_open_readers(in, (const char *const *)names, n, "evaluate", same), I, whole);
    for (int i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

static void read_set(shard_set *SS, const evalpart_info *I, evalpart *whole)
{
    const stream_header *h = SS->in[0]->header;
    const char *src = SS->in[0]->name;
    if (!h->batched)
        die("%s: an unbatched evaluate stream, expected batched records (evaluate --queries writes them)", src);
    if (!SS->sharded)
        die("%s: not a shard (no queries_from): give the outputs of evaluate --queries FROM:TO", src);
    const hedge_options *o = I->o;
    int S = I->nsets, nk = o->nk;
    char ks[KS_LEN], buf[24], what[256];
    ks_text(o, ks);
    check_int(h, src, "evaluate_sets", S, S == 2 ? "two sets here (INPUT and --corrupt)" : "one set here (no --corrupt)");
    snprintf(what, sizeof what, "%lld queries here", (long long)I->n);
    check_int(h, src, "input_items", I->n, what);
    check_int(h, src, "queries_total", I->n, what);
    snprintf(what, sizeof what, I->ng ? "a gallery of %lld items here" : "leave-one-out here (no -g)", (long long)I->ng);
    check_int(h, src, "gallery_items", I->ng, what);
    for (int s = 0; s < S; s++) {
        hex(buf, I->hash[s]);
        snprintf(what, sizeof what, "%s here has %s: other data", I->names[s], buf);
        check_str(h, src, s ? "set1_hash" : "set0_hash", buf, what);
    }
    if (I->ng) {
        hex(buf, I->ghash);
        snprintf(what, sizeof what, "the gallery here has %s: other data", buf);
        check_str(h, src, "gallery_hash", buf, what);
    }
    snprintf(what, sizeof what, "--distance %s here", distance_name(o->distance));
    check_str(h, src, "distance", distance_name(o->distance), what);
    snprintf(what, sizeof what, "-k %s here", ks);
    check_str(h, src, "ks", ks, what);
    snprintf(what, sizeof what, "kNN votes with k = %d here", I->knn_k);
    check_int(h, src, "knn_k", I->knn_k, what);
    snprintf(what, sizeof what, "at_k %d here", o->at_k);
    check_int(h, src, "at_k", o->at_k, what);
    snprintf(what, sizeof what, "include %lld here", (long long)o->include);
    check_int(h, src, "include", (int64_t)o->include, what);
    const stream_meta *ex = header_meta(h, "exclude_id");
    if (!ex || ex->type != META_BOOL || !ex->i != !o->exclude_id)
        die("%s: exclude_id %s, but %s here: the answers of another run", src, ex && ex->i ? "true" : "false",
            o->exclude_id ? "--exclude-id" : "no --exclude-id");
    const tensor *ht = header_tensor(h, "has");
    if (!ht || ht->dtype != DT_I32 || tensor_numel(ht) != S)
        die("%s: meta has: expected %d int32 masks, one a set", src, S);
    int fi[F_N];
    for (int f = 0; f < F_N; f++)
        fi[f] = stream_field_need(src, h, fname[f], ftype[f], f == F_RECALL ? 2 : 1, (int64_t[]){S, nk});
    for (int s = 0; s < S; s++) {
        int has = ((const int32_t *)ht->data)[s];
        evalpart *p = &whole[s];
        memset(p, 0, sizeof *p);
        p->q0 = 0, p->nq = I->n, p->knn_k = (has & EVALPART_PRED) ? I->knn_k : 0, p->has = has;
        size_t m = (size_t)I->n;
        p->pred = has & EVALPART_PRED ? emalloc(m * sizeof *p->pred) : NULL;
        p->eta = has & EVALPART_ETA ? emalloc(m * sizeof *p->eta) : NULL;
        p->per = has & EVALPART_PER ? emalloc(m * sizeof *p->per) : NULL;
        p->apk = has & EVALPART_ATK ? emalloc(m * sizeof *p->apk) : NULL;
        p->rrk = has & EVALPART_ATK ? emalloc(m * sizeof *p->rrk) : NULL;
        p->top1 = has & EVALPART_BASE ? emalloc(m * sizeof *p->top1) : NULL;
        p->ratio = has & EVALPART_BASE ? emalloc(m * sizeof *p->ratio) : NULL;
        p->vote = has & EVALPART_BASE ? emalloc(m * sizeof *p->vote) : NULL;
    }
    stream_record rec = {0};
    int64_t q = 0;
    for (int i = 0; i < SS->n; i++) {
        int64_t want = header_int(SS->in[i]->header, "queries_to", 0) - header_int(SS->in[i]->header, "queries_from", 0),
                before = q;
        while (stream_read(SS->in[i], &rec)) {
            int64_t nb = record_batch(&rec);
            if (q + nb > I->n)
                die("%s: more records than its queries (%lld)", SS->in[i]->name, (long long)want);
            for (int64_t b = 0; b < nb; b++, q++)
                for (int s = 0; s < S; s++) {
                    evalpart *p = &whole[s];
                    int64_t j = b * S + s;
#define AT(f, T) (((const T *)rec.t[fi[f]].data)[j])
                    if (p->pred)
                        p->pred[q] = AT(F_PRED, int32_t);
                    if (p->eta)
                        p->eta[q] = AT(F_ETA, float);
                    if (p->per) {
                        retrieval_query *x = &p->per[q];
                        memset(x, 0, sizeof *x);
                        x->ap = AT(F_AP, float), x->rprec = AT(F_RPREC, float), x->map_r = AT(F_MAP_R, float);
                        x->p1 = AT(F_P1, uint8_t), x->npos = AT(F_NPOS, int32_t), x->r1 = AT(F_R1, int32_t);
                        memcpy(x->recall, (const uint8_t *)rec.t[fi[F_RECALL]].data + j * nk, (size_t)nk);
                    }
                    if (p->apk)
                        p->apk[q] = AT(F_APK, double), p->rrk[q] = AT(F_RRK, double);
                    if (p->top1)
                        p->top1[q] = AT(F_TOP1, float), p->ratio[q] = AT(F_RATIO, float), p->vote[q] = AT(F_VOTE, float);
#undef AT
                }
        }
        if (q - before != want)
            die("%s: %lld records, but the shard's queries are %lld", SS->in[i]->name, (long long)(q - before),
                (long long)want);
        /* damage to the values (the stream's own checks see only its structure) */
        const char *stated = header_str(SS->in[i]->header, "answers_hash", NULL);
        hex(buf, evalpart_answers_hash(whole, S, before, q, nk));
        if (stated && strcmp(stated, buf))
            die("%s: its answers hash to %s, but the shard says %s: damaged after evaluate wrote it", SS->in[i]->name,
                buf, stated);
    }
    record_free(&rec);
    shard_close(SS);
}
