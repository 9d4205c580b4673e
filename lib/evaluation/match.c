/* match: match probability and self-mismatch, exact for points, Monte Carlo for Gaussians. */
#include "match.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loss.h"
#include "mls.h"
#include "util.h"

void match_scorer_init(match_scorer *s, double a, double b, int K, uint64_t seed, int stochastic)
{
    s->a = a;
    s->b = b;
    s->K = K;
    s->seed = seed;
    s->stochastic = stochastic;
    s->n1 = s->n2 = NULL;
    s->cap = 0;
}

void match_scorer_free(match_scorer *s)
{
    free(s->n1);
    free(s->n2);
    s->n1 = s->n2 = NULL;
    s->cap = 0;
}

double match_prob_points(const float *z1, const float *z2, int D, double a, double b)
{
    double s = 0;
    for (int d = 0; d < D; d++) {
        double u = (double)z1[d] - (double)z2[d];
        s += u * u;
    }
    return match_sigmoid(-a * sqrt(s) + b);
}

double match_prob_sets(const float *z1, int n1, const float *z2, int n2, int D, double a, double b)
{
    double sum = 0;
    for (int i = 0; i < n1; i++)
        for (int j = 0; j < n2; j++)
            sum += match_prob_points(z1 + (size_t)i * D, z2 + (size_t)j * D, D, a, b);
    return sum / ((double)n1 * (double)n2);
}

void match_draw_noise(const match_emb *x, int K, rng *r, double *n)
{
    int per = K / x->C; /* K is a multiple of C: K / C samples per component */
    for (int k = 0; k < K; k++) {
        int c = k / per;
        const float *var = x->var ? x->var + (size_t)c * x->D : NULL;
        for (int d = 0; d < x->D; d++)
            n[(size_t)k * x->D + d] = var ? sqrt((double)var[d]) * rng_normal(r) : 0.0;
    }
}

/* mean of sigmoid(-a ||z1_i - z2_j|| + b) over the K x K sample pairs, z = mu_c + n (match.h:
 * the means' difference and the noises' difference apart, so neither swamps the other) */
static double prob_samples(const match_emb *x1, const double *n1, const match_emb *x2, const double *n2, int K,
                           double a, double b)
{
    int D = x1->D, per1 = K / x1->C, per2 = K / x2->C;
    double sum = 0;
    for (int i = 0; i < K; i++) {
        const float *m1 = x1->mu + (size_t)(i / per1) * D;
        for (int j = 0; j < K; j++) {
            const float *m2 = x2->mu + (size_t)(j / per2) * D;
            double s = 0;
            for (int d = 0; d < D; d++) {
                double u = ((double)m1[d] - (double)m2[d]) + (n1[(size_t)i * D + d] - n2[(size_t)j * D + d]);
                s += u * u;
            }
            sum += match_sigmoid(-a * sqrt(s) + b);
        }
    }
    return sum / ((double)K * (double)K);
}

double match_prob(match_scorer *s, const match_emb *x1, const match_emb *x2)
{
    if (x1->D != x2->D)
        die("match: embeddings of %d and %d dimensions", x1->D, x2->D);
    if (!s->stochastic || (!x1->var && !x2->var))
        return match_prob_sets(x1->mu, x1->C, x2->mu, x2->C, x1->D, s->a, s->b);
    int K = s->K, D = x1->D;
    if (K % x1->C || K % x2->C)
        die("K = %d samples cannot be split evenly over %d components", K, K % x1->C ? x1->C : x2->C);
    if (s->cap < K * D) {
        free(s->n1);
        free(s->n2);
        s->cap = K * D;
        s->n1 = emalloc((size_t)s->cap * sizeof(double));
        s->n2 = emalloc((size_t)s->cap * sizeof(double));
    }
    /* the lower index draws set A, the other set B: symmetric, and (x, x) is A against B */
    const match_emb *lo = x1->index <= x2->index ? x1 : x2, *hi = lo == x1 ? x2 : x1;
    rng r;
    rng_init(&r, s->seed, MATCH_SET_A ^ lo->index);
    match_draw_noise(lo, K, &r, s->n1);
    rng_init(&r, s->seed, MATCH_SET_B ^ hi->index);
    match_draw_noise(hi, K, &r, s->n2);
    return prob_samples(lo, s->n1, hi, s->n2, K, s->a, s->b);
}

double match_eta(match_scorer *s, const match_emb *x) { return 1.0 - match_prob(s, x, x); }

/* ------------------------------------------------------------------ embedding sets */

match_layout match_check_header(const char *src, const stream_header *h)
{
    if (strcmp(h->kind, "embeddings") && strcmp(h->kind, "eta"))
        die("%s: expected a stream of kind 'embeddings' (or 'eta'), got '%s' (from %s)", src, h->kind, h->program);
    if (h->batched)
        die("%s: batched embedding streams are not supported", src);
    match_layout L = {-1, -1, 0, 0};
    L.mu = header_field_find(h, "mu");
    if (L.mu < 0)
        die("%s: no field 'mu' (expected float32 [C, D], the component means)", src);
    const stream_field *mf = &h->fields[L.mu];
    char got[128];
    stream_field_describe(mf, got, sizeof got);
    if (mf->dtype != DT_F32 || mf->ndim != 2 || mf->shape[0] < 1 || mf->shape[1] < 1)
        die("%s: field 'mu' is %s, expected float32 [C, D] with C >= 1 and D >= 1", src, got);
    if (mf->shape[0] > INT32_MAX / mf->shape[1])
        die("%s: field 'mu' is %s, expected float32 [C, D] with C x D below 2^31", src, got);
    L.C = (int)mf->shape[0];
    L.D = (int)mf->shape[1];
    L.var = header_field_find(h, "var");
    if (L.var >= 0) {
        const stream_field *vf = &h->fields[L.var];
        if (vf->dtype != DT_F32 || vf->ndim != 2 || vf->shape[0] != L.C || vf->shape[1] != L.D) {
            char vgot[128];
            stream_field_describe(vf, vgot, sizeof vgot);
            die("%s: field 'var' is %s, expected float32 [%d, %d] (the shape of 'mu')", src, vgot, L.C, L.D);
        }
    }
    return L;
}

int match_meta_ab(const stream_header *h, double *a, double *b, char *why, size_t why_len)
{
    *a = *b = NAN;
    if (!header_meta(h, "match_a") || !header_meta(h, "match_b")) {
        if (why)
            snprintf(why, why_len, "no match_a / match_b (the learned a and b of the match probability)");
        return 0;
    }
    const char *loss = header_str(h, "loss", NULL);
    const loss_kind *L = loss ? loss_find(loss) : NULL;
    if (L && !loss_learns_match(L)) {
        if (why)
            snprintf(why, why_len,
                     "no match probability: its loss %s learns none (its match_a %g, match_b %g are the placeholder "
                     "embed wrote before)", loss, header_float(h, "match_a", 0), header_float(h, "match_b", 0));
        return 0;
    }
    *a = header_float(h, "match_a", 0);
    *b = header_float(h, "match_b", 0);
    return 1;
}

match_set *match_set_read(stream_reader *r)
{
    const stream_header *h = r->header;
    match_layout L = match_check_header(r->name, h);
    int mi = L.mu, vi = L.var;
    match_set *S = ecalloc(1, sizeof *S);
    S->C = L.C;
    S->D = L.D;
    /* optional fields, each checked if present */
    int ci = header_field_find(h, "class"), ii = header_field_find(h, "id"), ei = header_field_find(h, "eta"),
        oi = header_field_find(h, "occluded"), xi = header_field_find(h, "corrupt");
    if (ci >= 0)
        stream_field_need(r->name, h, "class", DT_I32, 0, NULL);
    if (ii >= 0)
        stream_field_need(r->name, h, "id", DT_I64, 0, NULL);
    if (ei >= 0)
        stream_field_need(r->name, h, "eta", DT_F32, 0, NULL);
    if (oi >= 0) {
        stream_field_need(r->name, h, "occluded", DT_U8, 1, (int64_t[]){FIELD_ANY});
        S->nocc = (int)h->fields[oi].shape[0];
    }
    if (xi >= 0)
        stream_field_need(r->name, h, "corrupt", DT_U8, 0, NULL);
    S->has_id = ii >= 0;
    size_t cd = (size_t)S->C * S->D;
    int64_t cap = 0;
    stream_record rec = {0};
    while (stream_read(r, &rec)) {
        int64_t i = S->n++;
        if (S->n > cap) {
            cap = cap ? 2 * cap : 1024;
            S->mu = erealloc(S->mu, (size_t)cap * cd * sizeof(float));
            if (vi >= 0)
                S->var = erealloc(S->var, (size_t)cap * cd * sizeof(float));
            if (ci >= 0)
                S->cls = erealloc(S->cls, (size_t)cap * sizeof(int32_t));
            S->id = erealloc(S->id, (size_t)cap * sizeof(int64_t));
            if (ei >= 0)
                S->eta = erealloc(S->eta, (size_t)cap * sizeof(float));
            if (oi >= 0)
                S->occ = erealloc(S->occ, (size_t)cap * S->nocc);
            if (xi >= 0)
                S->corrupt = erealloc(S->corrupt, (size_t)cap);
        }
        memcpy(S->mu + i * cd, rec.t[mi].data, cd * sizeof(float));
        if (vi >= 0) {
            const float *v = rec.t[vi].data;
            for (size_t e = 0; e < cd; e++)
                if (!(v[e] >= 0) || !isfinite(v[e]))
                    die("%s: record %lld: variance %g is not a finite number >= 0", r->name, (long long)i, v[e]);
            memcpy(S->var + i * cd, v, cd * sizeof(float));
        }
        const float *m = rec.t[mi].data;
        for (size_t e = 0; e < cd; e++)
            if (!isfinite(m[e]))
                die("%s: record %lld: mean %g is not finite", r->name, (long long)i, m[e]);
        if (ci >= 0)
            S->cls[i] = *(const int32_t *)rec.t[ci].data;
        S->id[i] = ii >= 0 ? *(const int64_t *)rec.t[ii].data : i;
        if (ei >= 0) {
            float eta = *(const float *)rec.t[ei].data;
            if (!isfinite(eta))
                die("%s: record %lld: eta %g is not finite", r->name, (long long)i, eta);
            S->eta[i] = eta;
        }
        if (oi >= 0)
            memcpy(S->occ + i * S->nocc, rec.t[oi].data, S->nocc);
        if (xi >= 0)
            S->corrupt[i] = *(const uint8_t *)rec.t[xi].data;
    }
    record_free(&rec);
    if (!S->n)
        die("%s: the stream has no records (nothing to evaluate)", r->name);
    if (ci >= 0) { /* class names: every class an index into them */
        classnames_read(&S->names, r->name, h);
        classnames_check(&S->names, r->name, S->cls, S->n);
    }
    return S;
}

void match_sets_unify(match_set *const *S, const char *const *src, int n)
{
    classnames_part *p = emalloc((size_t)n * sizeof *p);
    for (int i = 0; i < n; i++)
        p[i] = (classnames_part){&S[i]->names, S[i]->cls, S[i]->cls ? S[i]->n : 0, src[i]};
    classnames U;
    classnames_unify(&U, p, n);
    free(p);
    if (!U.present)
        return;
    for (int i = 0; i < n; i++) {
        classnames_free(&S[i]->names);
        classnames_copy(&S[i]->names, &U);
    }
    classnames_free(&U);
}

match_emb match_set_emb(const match_set *S, int64_t i)
{
    size_t cd = (size_t)S->C * S->D;
    match_emb x = {S->mu + i * cd, S->var ? S->var + i * cd : NULL, S->C, S->D, (uint64_t)i};
    return x;
}

float *match_set_means(const match_set *S, double **tv)
{
    int C = S->C, D = S->D;
    float *m = emalloc((size_t)S->n * D * sizeof *m);
    if (tv)
        *tv = emalloc((size_t)S->n * sizeof **tv);
    if (C == 1 && !tv) { /* a point's mean is itself (float -> double / 1 -> float: the same value) */
        memcpy(m, S->mu, (size_t)S->n * D * sizeof *m);
        return m;
    }
    for (int64_t i = 0; i < S->n; i++) {
        const float *mu = S->mu + (size_t)i * C * D, *var = S->var ? S->var + (size_t)i * C * D : NULL;
        double within = 0, second = 0, mean2 = 0;
        for (int d = 0; d < D; d++) {
            double s = 0;
            for (int c = 0; c < C; c++) {
                double u = mu[c * D + d];
                s += u;
                second += u * u;
                if (var)
                    within += var[c * D + d];
            }
            m[i * D + d] = (float)(s / C);
            mean2 += (s / C) * (s / C);
        }
        /* total variance = E||z||^2 - ||E z||^2 = within + (mean of ||mu_c||^2 - ||mean||^2) */
        if (tv) {
            double between = second / C - mean2;
            (*tv)[i] = within / C + (between > 0 ? between : 0);
        }
    }
    return m;
}

int64_t match_normalise(float *X, int64_t n, int D)
{
    for (int64_t i = 0; i < n; i++) {
        float *x = X + (size_t)i * D;
        double s = 0;
        for (int d = 0; d < D; d++)
            s += (double)x[d] * x[d];
        if (s == 0)
            return i;
        if (!isfinite(s))
            continue; /* the distance's own check names the coordinate */
        double norm = sqrt(s);
        for (int d = 0; d < D; d++)
            x[d] = (float)(x[d] / norm);
    }
    return -1;
}

float *match_set_take_means(match_set *S)
{
    if (S->C != 1)
        return match_set_means(S, NULL);
    float *m = S->mu;
    S->mu = NULL;
    return m;
}

void match_set_free(match_set *S)
{
    if (!S)
        return;
    free(S->mu);
    free(S->var);
    free(S->cls);
    free(S->id);
    free(S->eta);
    free(S->occ);
    free(S->corrupt);
    classnames_free(&S->names);
    free(S);
}

static int id_cmp(const void *pa, const void *pb)
{
    const match_id_index *a = pa, *b = pb;
    return (a->id > b->id) - (a->id < b->id);
}

match_id_index *match_ids_index(const int64_t *ids, int64_t n, int *dup, int64_t *dup_id)
{
    match_id_index *t = emalloc((size_t)(n > 0 ? n : 1) * sizeof *t);
    for (int64_t i = 0; i < n; i++)
        t[i] = (match_id_index){ids[i], i};
    qsort(t, (size_t)n, sizeof *t, id_cmp);
    *dup = 0;
    for (int64_t i = 1; i < n && !*dup; i++)
        if (t[i].id == t[i - 1].id) {
            *dup = 1;
            *dup_id = t[i].id;
        }
    return t;
}

int64_t match_ids_lookup(const match_id_index *t, int64_t n, int64_t id)
{
    match_id_index k = {id, 0}, *f = bsearch(&k, t, (size_t)n, sizeof *t, id_cmp);
    return f ? f->index : -1;
}

void match_w2_vectors(const float *mu, const float *var, int64_t n, int D, float *mu2, float *var2)
{
    for (int64_t i = 0; i < n; i++)
        for (int d = 0; d < D; d++) {
            float v = var[i * D + d];
            mu2[i * 2 * D + d] = mu[i * D + d];
            mu2[i * 2 * D + D + d] = sqrtf(v);
            var2[i * 2 * D + d] = var2[i * 2 * D + D + d] = v;
        }
}

void match_set_w2(const char *name, match_set *S)
{
    if (!S->var || S->C != 1)
        die("%s: --distance w2 needs a var field and one component (C = 1), got %s and C = %d", name,
            S->var ? "var" : "no var", S->C);
    for (int64_t k = 0; k < S->n * S->D; k++)
        if (!(S->var[k] >= 0))
            die("%s: record %lld: var %g: --distance w2 takes its square root", name, (long long)(k / S->D),
                S->var[k]);
    size_t m = (size_t)S->n * 2 * S->D;
    float *mu2 = emalloc(m * sizeof *mu2), *var2 = emalloc(m * sizeof *var2);
    match_w2_vectors(S->mu, S->var, S->n, S->D, mu2, var2);
    free(S->mu), free(S->var);
    S->mu = mu2, S->var = var2, S->D *= 2;
}

int match_distance_find(const char *s)
{
    if (!strcmp(s, "elk"))
        return MATCH_DISTANCE_MLS;
    if (!strcmp(s, "bhatt"))
        return MATCH_DISTANCE_BHATT;
    for (int d = MATCH_DISTANCE_EUCLIDEAN; d <= MATCH_DISTANCE_BHATT; d++)
        if (!strcmp(s, match_distance_name(d)))
            return d;
    return -1;
}

int match_distance_parse(const char *s)
{
    int d = match_distance_find(s);
    if (d < 0)
        usage_die("--distance: '%s' is none of euclidean, cosine, mls (elk), w2, csd, kl, bhattacharyya", s);
    return d;
}

const char *match_distance_name(int d)
{
    static const char *const nm[] = {"euclidean", "cosine", "mls", "w2", "csd", "kl", "bhattacharyya"};
    return d >= MATCH_DISTANCE_EUCLIDEAN && d <= MATCH_DISTANCE_BHATT ? nm[d] : NULL;
}

int match_distance_kernel(int d)
{
    return d == MATCH_DISTANCE_MLS ? MLS_NEG : d == MATCH_DISTANCE_CSD ? MLS_CSD : d == MATCH_DISTANCE_KL ? MLS_KL
                                          : d == MATCH_DISTANCE_BHATT ? MLS_BHATT : -1;
}

const char *const match_score_names[MATCH_SCORES] = {"p", "mls", "l2", "cosine", "w2", "csd", "kl", "bhatt"};
const char *const match_score_fields[MATCH_SCORES] = {"p",      "mls",     "neg_l2", "cos",
                                                      "neg_w2", "neg_csd", "neg_kl", "neg_bhatt"};

int match_score_gaussian(int score) { return score == MATCH_SCORE_MLS || score >= MATCH_SCORE_W2; }

int match_score_parse(const char *s)
{
    if (!strcmp(s, "elk"))
        return MATCH_SCORE_MLS;
    if (!strcmp(s, "bhattacharyya")) /* (the name issue 47 gives it; bhatt is its field's) */
        return MATCH_SCORE_BHATT;
    for (int k = 0; k < MATCH_SCORES; k++)
        if (!strcmp(s, match_score_names[k]))
            return k;
    return -1;
}

/* the Euclidean norm of each mean (n, D), in double */
static double *mean_norms(const float *M, int64_t n, int D)
{
    double *nr = emalloc((size_t)(n ? n : 1) * sizeof *nr);
    for (int64_t i = 0; i < n; i++) {
        double s = 0;
        for (int l = 0; l < D; l++)
            s += (double)M[i * D + l] * M[i * D + l];
        nr[i] = sqrt(s);
    }
    return nr;
}

/* w2, csd, kl, bhatt between N(m1, diag v1) and N(m2, diag v2) (match.h): the last three as the
 * rankings compute them exactly (lib/numerics/mls.h) */
static double gauss_distance(int score, const float *m1, const float *v1, const float *m2, const float *v2, int D)
{
    if (score != MATCH_SCORE_W2)
        return mls_distance(score == MATCH_SCORE_CSD ? MLS_CSD : score == MATCH_SCORE_KL ? MLS_KL : MLS_BHATT, m1, v1,
                            m2, v2, D);
    double s = 0;
    for (int l = 0; l < D; l++) {
        double d = (double)m1[l] - m2[l], a = sqrt(v1[l]) - sqrt(v2[l]);
        s += d * d + a * a;
    }
    return sqrt(s);
}

void match_pair_scorer_init(match_pair_scorer *p, int score, const match_set *S, const match_set *G)
{
    *p = (match_pair_scorer){.score = score, .D = S->D, .S = S, .G = G};
    if (score != MATCH_SCORE_L2 && score != MATCH_SCORE_COSINE)
        return;
    p->Sm = match_set_means(S, NULL);
    p->Gm = G != S ? match_set_means(G, NULL) : p->Sm;
    if (score == MATCH_SCORE_COSINE) {
        p->Sn = mean_norms(p->Sm, S->n, S->D);
        p->Gn = G != S ? mean_norms(p->Gm, G->n, G->D) : p->Sn;
    }
}

double match_pair_score(const match_pair_scorer *p, int64_t i, int64_t j)
{
    int D = p->D;
    if (p->score == MATCH_SCORE_MLS)
        return mls_score(p->S->mu + i * D, p->S->var + i * D, p->G->mu + j * D, p->G->var + j * D, D);
    if (p->score >= MATCH_SCORE_W2) /* the distances of two Gaussians, in double, negated */
        return -gauss_distance(p->score, p->S->mu + i * D, p->S->var + i * D, p->G->mu + j * D, p->G->var + j * D, D);
    const float *a = p->Sm + i * D, *b = p->Gm + j * D;
    double s = 0;
    for (int l = 0; l < D; l++)
        s += p->score == MATCH_SCORE_L2 ? ((double)a[l] - b[l]) * ((double)a[l] - b[l]) : (double)a[l] * b[l];
    return p->score == MATCH_SCORE_L2 ? -sqrt(s) : s / (p->Sn[i] * p->Gn[j]);
}

int match_pair_directed(const match_pair_scorer *p, int64_t i, int64_t j, int *which)
{
    if (p->score != MATCH_SCORE_COSINE)
        return 1;
    *which = !(p->Sn[i] > 0) ? 0 : 1;
    return p->Sn[i] > 0 && p->Gn[j] > 0;
}

void match_pair_scorer_free(match_pair_scorer *p)
{
    if (p->Gm != p->Sm)
        free(p->Gm);
    if (p->Gn != p->Sn)
        free(p->Gn);
    free(p->Sm);
    free(p->Sn);
}

void match_kernel_check(const char *name, const match_set *S, int distance)
{
    const char *nm = match_distance_name(distance);
    char opt[64];
    snprintf(opt, sizeof opt, "--distance %s", nm ? nm : "?");
    if (distance != MATCH_DISTANCE_CSD || !S->var || S->C != 1) /* csd's variances: finite and >= 0, as */
        match_mls_check(name, S, opt);                          /* match_set_read has them */
}

void match_mls_check(const char *name, const match_set *S, const char *option)
{
    if (!S->var)
        die("%s: %s needs Gaussian embeddings, but the input has no 'var' field (point embeddings)", name, option);
    if (S->C != 1)
        die("%s: %s compares single Gaussians (C = 1), but the input has C = %d components", name, option, S->C);
    int64_t e = mls_check_var(S->var, S->n, S->D);
    if (e >= 0)
        die("%s: record %lld: variance %g (dimension %lld) is below %g: %s takes the log of the variances", name,
            (long long)(e / S->D), S->var[e], (long long)(e % S->D), FLT_MIN, option);
}
