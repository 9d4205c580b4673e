/* selective: every uncertainty source against every per-query loss, with bootstrap intervals
 * (lib/measures/selective.h). */
#include "selective.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "argsort.h"
#include "par.h"
#include "retrieval.h"
#include "rng.h"
#include "tau.h"
#include "util.h"

#define LANES 4 /* replicates side by side in a pass (the vectors below are of 4) */

typedef double v4d __attribute__((vector_size(4 * sizeof(double))));  /* GCC's generic vectors: */
typedef int64_t v4i __attribute__((vector_size(4 * sizeof(int64_t)))); /* scalar code where the */
typedef uint32_t v4u __attribute__((vector_size(4 * sizeof(uint32_t)))); /* target has no SIMD; */
typedef int32_t v4s __attribute__((vector_size(4 * sizeof(int32_t))));   /* counts: n < 2^31 */
_Static_assert(LANES == 4, "the lanes are the vectors' four elements");

/* lane j's counts of item t (masked) as a vector */
static inline v4s lane_counts(const uint32_t *k, int64_t t, uint32_t mask)
{
    v4u c;
    memcpy(&c, k + t * LANES, sizeof c);
    return (v4s)(c & mask);
}

static const char *const mnames[SELECTIVE_NMEASURES] = {"auroc", "aurc", "eaurc", "augrc", "tau", "pearson_bins"};

const char *selective_measure_name(int m) { return m >= 0 && m < SELECTIVE_NMEASURES ? mnames[m] : NULL; }

int selective_higher_better(int m) { return m == SELECTIVE_AUROC || m == SELECTIVE_TAU; }

/* B bins over positions 0 .. N-1: array_split's sizes (drop = 0: the first N mod B one larger),
 * or floor(N / B) each with the last N mod B positions left out (drop = 1, PCME++'s); start[B + 1] */
static void bin_starts(int64_t N, int B, int drop, int64_t *start)
{
    if (drop)
        for (int b = 0; b <= B; b++)
            start[b] = b * (N / B);
    else
        metrics_bins(N, B, start);
}


/* the oracle's sum_k r_k of each lane: the items by ascending loss (equal losses change no sum); c
 * the queries' counts (n, LANES); a binary loss in closed form, z right (loss 0) of N: sum_{k > z}
 * (k - z) / k = (N - z) - z (H[N] - H[z]) */
static void oracle_sum(const int64_t *oorder, const double *os, int64_t m, const uint32_t *c, int binary,
                       const int64_t *N, const double *L, const double *H, double *sum)
{
    if (binary) {
        for (int j = 0; j < LANES; j++) {
            int64_t z = N[j] - (int64_t)llround(L[j]);
            sum[j] = (double)(N[j] - z) - (double)z * (H[N[j]] - H[z]);
        }
        return;
    }
    v4d Lo = {0}, sm = {0};
    v4s K = {0};
    for (int64_t t = 0; t < m; t++) {
        v4s k = lane_counts(c, oorder[t], UINT32_MAX), to = K + k;
        v4d kd = __builtin_convertvector(k, v4d), Hn, Hk, o = {os[t], os[t], os[t], os[t]};
        Hn = (v4d){H[to[0]], H[to[1]], H[to[2]], H[to[3]]}, Hk = (v4d){H[K[0]], H[K[1]], H[K[2]], H[K[3]]};
        v4d dH = Hn - Hk, add = Lo * dH + o * (kd - __builtin_convertvector(K, v4d) * dH);
        sm += (v4d)((v4i)add & __builtin_convertvector(k != 0, v4i)); /* a query not drawn adds nothing */
        K = to, Lo += kd * o;
    }
    memcpy(sum, &sm, sizeof sm);
}

/* The measures of LANES replicates in one pass over the items in order (ascending u, then the
 * tie key), their losses ls[t] (0 where the query has none) and counts k[t LANES + j] of lane j
 * along it, mk[t] (all ones where the query has this loss, 0 where not), and the runs of equal u
 * starting at rs[0 .. nruns) (rs[nruns] = m). The lanes are independent replicates computed side
 * by side (so that their chains of sums overlap), each by the same operations as alone. A run of
 * total count w, losses summing to s, after K counted items whose losses sum to L adds
 *   to sum_k r_k (AURC)        sum_{j=1..w} (L + j s/w) / (K + j) = s + dH (L - (s/w) K),
 *                              dH = H[K+w] - H[K] (its expectation over the run's orders)
 *   to sum_k L_k (AUGRC)       w L + s (w + 1) / 2
 *   to AUROC's wrong-right pairs  s (K - L) + s (w - s) / 2: the wrong ones of the run (binary
 *                              losses: s of them) against the right ones before it, half against
 *                              its own right ones (none within one query's copies)
 * and the bins of tau and pearson_bins cut the sequence of positions: the performance summed up to
 * position P is F(P) = (K - L) + (P - K)(1 - l) inside an item at positions K .. K + k - 1, read
 * off when P is a bin's end. A run of one item (the usual case of a continuous u) takes no branch
 * on its count, 0 included. N[j], Ltot[j]: lane j's total count and loss; osum[j] the oracle's
 * sum_k r_k; lane j's measures to out + j stride. */
typedef struct {
    int64_t m, nruns;
    const double *ls;
    const int64_t *rs;
} pass_in;

typedef struct { /* each lane's bins: their ends (tau's 20 and pearson's 10, merged), F at each */
    int64_t ends[LANES][SELECTIVE_BINS + 11], ts[LANES][SELECTIVE_BINS + 1], ps[LANES][11];
    double F[LANES][SELECTIVE_BINS + 11];
    int nb[LANES], e[LANES];
    int32_t next[LANES]; /* the next end, INT32_MAX: none */
} bins;

/* lane j passes positions base .. base + kk of an item of loss l, done = the performance up to
 * base: F at every bin end within */
static void bins_at(bins *B, int j, int64_t base, double done, int64_t kk, double l)
{
    while (base + kk >= B->next[j]) {
        B->F[j][B->e[j]] = done + (double)(B->next[j] - base) * (1 - l);
        B->next[j] = ++B->e[j] < B->nb[j] ? (int32_t)B->ends[j][B->e[j]] : INT32_MAX;
    }
}

static void pass(const pass_in *P, const uint32_t *k, const uint32_t *mk, int binary, const int64_t *N,
                 const double *Ltot, const double *osum, const double *H, double *out, size_t stride)
{
    v4d aurc = {0}, augrc = {0}, pairs = {0}, L = {0}, Kd = {0}, Hk = {0}; /* Hk = H[K] */
    v4s K = {0}, next;
    bins B;
    for (int j = 0; j < LANES; j++) {
        B.nb[j] = B.e[j] = 0;
        if (N[j] >= SELECTIVE_BINS) {
            bin_starts(N[j], SELECTIVE_BINS, 0, B.ts[j]), bin_starts(N[j], 10, 1, B.ps[j]);
            for (int a = 1, b = 1; a <= SELECTIVE_BINS || b <= 10;) { /* merged, an end of both once */
                int64_t x = a <= SELECTIVE_BINS ? B.ts[j][a] : INT64_MAX, y = b <= 10 ? B.ps[j][b] : INT64_MAX,
                        v = x < y ? x : y;
                B.ends[j][B.nb[j]++] = v;
                a += x == v, b += y == v;
            }
        }
        B.next[j] = B.nb[j] ? (int32_t)B.ends[j][0] : INT32_MAX;
    }
    memcpy(&next, B.next, sizeof next);
    const int64_t *rs = P->rs;
    const double *ls = P->ls;
    for (int64_t r = 0; r < P->nruns; r++) {
        int64_t t0 = rs[r], t1 = rs[r + 1];
        if (t1 - t0 == 1) {
            double l = ls[t0];
            v4s kk = lane_counts(k, t0, mk[t0]), to = K + kk;
            v4d kd = __builtin_convertvector(kk, v4d), sk = kd * l, Hn, dH;
            Hn = (v4d){H[to[0]], H[to[1]], H[to[2]], H[to[3]]}; /* built in registers, not on the stack */
            dH = Hn - Hk;
            aurc += sk + dH * (L - l * Kd);
            augrc += kd * L + sk * (kd + 1) * 0.5;
            pairs += sk * (Kd - L);
            v4s over = to >= next;
            if (over[0] | over[1] | over[2] | over[3]) { /* a bin ends inside (or at the end of) this item */
                for (int j = 0; j < LANES; j++)
                    bins_at(&B, j, K[j], Kd[j] - L[j], kk[j], l);
                memcpy(&next, B.next, sizeof next);
            }
            K = to, Kd += kd, L += sk, Hk = Hn;
            continue;
        }
        v4d sv = {0};
        v4s w = {0};
        for (int64_t t = t0; t < t1; t++) { /* the bins see the run's items in order */
            v4s kk = lane_counts(k, t, mk[t]);
            double l = ls[t];
            v4s over = K + w + kk >= next;
            if (over[0] | over[1] | over[2] | over[3]) {
                for (int j = 0; j < LANES; j++)
                    bins_at(&B, j, (int64_t)K[j] + w[j], (double)(K[j] + w[j]) - (L[j] + sv[j]), kk[j], l);
                memcpy(&next, B.next, sizeof next);
            }
            w += kk, sv += __builtin_convertvector(kk, v4d) * l;
        }
        v4d wd = __builtin_convertvector(w, v4d), Hn, dH;
        v4s to = K + w;
        Hn = (v4d){H[to[0]], H[to[1]], H[to[2]], H[to[3]]};
        dH = Hn - Hk;
        v4i some = __builtin_convertvector(w != 0, v4i); /* a lane whose run counts nothing adds nothing (not 0 / 0) */
        v4d a = sv + dH * (L - sv / wd * Kd), g = wd * L + sv * (wd + 1) * 0.5;
        aurc += (v4d)((v4i)a & some), augrc += (v4d)((v4i)g & some);
        if (binary) {
            v4d q = sv * (Kd - L) + 0.5 * sv * (wd - sv);
            pairs += (v4d)((v4i)q & some);
        }
        K = to, Kd += wd, L += sv, Hk = Hn;
    }
    for (int j = 0; j < LANES; j++) {
        double n = (double)N[j], *o = out + (size_t)j * stride;
        o[SELECTIVE_AURC] = N[j] ? aurc[j] / n : NAN;
        o[SELECTIVE_EAURC] = N[j] ? (aurc[j] - osum[j]) / n : NAN;
        o[SELECTIVE_AUGRC] = N[j] ? augrc[j] / (n * n) : NAN;
        o[SELECTIVE_AUROC] = binary && Ltot[j] > 0 && Ltot[j] < n ? pairs[j] / (Ltot[j] * (n - Ltot[j])) : NAN;
        o[SELECTIVE_TAU] = o[SELECTIVE_PEARSON] = NAN;
        if (N[j] < SELECTIVE_BINS)
            continue;
        double idx[SELECTIVE_BINS], perf[SELECTIVE_BINS], prev = 0;
        for (int b = 0; b < SELECTIVE_BINS; b++)
            idx[b] = b;
        int q = 0;
        for (int b = 0; b < SELECTIVE_BINS; b++) { /* F at tau's ends, in the merged list */
            while (B.ends[j][q] != B.ts[j][b + 1])
                q++;
            perf[b] = (B.F[j][q] - prev) / (double)(B.ts[j][b + 1] - B.ts[j][b]), prev = B.F[j][q];
        }
        double tau = -metrics_tau_b(idx, perf, SELECTIVE_BINS, NULL);
        o[SELECTIVE_TAU] = tau == 0 ? 0 : tau; /* no -0 */
        q = 0, prev = 0;
        for (int b = 0; b < 10; b++) {
            while (B.ends[j][q] != B.ps[j][b + 1])
                q++;
            perf[b] = (B.F[j][q] - prev) / (double)(B.ps[j][b + 1] - B.ps[j][b]), prev = B.F[j][q];
        }
        o[SELECTIVE_PEARSON] = retrieval_pearson(idx, perf, 10);
    }
}

/* the runs of equal u along order: their starts into rs (m + 1 room); returns how many */
static int64_t runs(const double *u, const int64_t *order, int64_t m, int64_t *rs)
{
    int64_t nr = 0;
    for (int64_t t = 0; t < m; t++)
        if (!t || u[order[t]] != u[order[t - 1]])
            rs[nr++] = t;
    rs[nr] = m;
    return nr;
}

void selective_measures(const double *u, const double *loss, int binary, const int64_t *order,
                        const int64_t *oorder, int64_t m, const uint32_t *c, const double *H,
                        double out[SELECTIVE_NMEASURES])
{
    /* lane 0 of a pass, the others empty */
    size_t m1 = (size_t)(m ? m : 1);
    double *ls = emalloc(m1 * sizeof *ls), *os = emalloc(m1 * sizeof *os), L[LANES] = {0}, osum[LANES],
           o[LANES][SELECTIVE_NMEASURES];
    int64_t *rs = emalloc((size_t)(m + 1) * sizeof *rs), N[LANES] = {0};
    uint32_t *k = ecalloc(m1 * LANES, sizeof *k), *c4 = ecalloc(m1 * LANES, sizeof *c4), *mk = emalloc(m1 * sizeof *mk);
    for (int64_t i = 0; i < m; i++)
        c4[i * LANES] = c ? c[i] : 1;
    for (int64_t t = 0; t < m; t++) {
        ls[t] = loss[order[t]], os[t] = loss[oorder[t]], k[t * LANES] = c4[order[t] * LANES], mk[t] = UINT32_MAX;
        N[0] += k[t * LANES], L[0] += (double)k[t * LANES] * ls[t];
    }
    pass_in P = {m, runs(u, order, m, rs), ls, rs};
    oracle_sum(oorder, os, m, c4, binary, N, L, H, osum);
    pass(&P, k, mk, binary, N, L, osum, H, &o[0][0], SELECTIVE_NMEASURES);
    memcpy(out, o[0], sizeof o[0]);
    free(mk), free(c4), free(k), free(rs), free(os), free(ls);
}

/* ---- the run */

typedef struct {      /* a source: every query by (u, tie key, position), the runs of equal u */
    int64_t *order, *rs, nruns;
} src;

typedef struct {      /* a target: its queries by loss, their losses */
    int64_t m, *oorder;
    double *os;
} tgt;

typedef struct {      /* a pair along its source's order: the losses (0 where none) and the mask */
    int ok;
    double *ls;
    uint32_t *mk;
} pair;

typedef struct {
    const selective_source *S;
    const selective_target *T;
    const selective_mean *means;
    int ns, nt, nmeans, B;
    int64_t n;
    uint64_t seed;
    const src *src;      /* (ns) */
    const tgt *tgt;      /* (nt) */
    const pair *P;       /* (ns, nt) */
    const double *H;
    double *rep;         /* (B, width): each replicate's numbers */
    int width;           /* ns nt NMEASURES + nmeans */
    int ntasks;
    int nclassed;        /* means with classes */
    int32_t *cls_index;  /* (n) their classes as 0 .. ncls-1 */
    int ncls;
    float *mv;           /* (n, nmeans) the means' values, 0 where undefined (float32: the metrics' own) */
    float *mok;          /* (n, ngroups) 1 / 0: defined, for each group of means defined alike */
    int *group;          /* (nmeans) a mean's group */
    int ngroups;
} run;

/* every mean of each lane's replicate (the counts c, (n, LANES)) into out + j stride + [0 ..
 * nmeans): the weighted mean, or for those with classes (one array for all of them) the mean over
 * classes of the weighted means within them, all in one walk over the queries (rows of nm values,
 * the lanes side by side); scratch (LANES (nmeans + ngroups) (ncls + 1)) */
static void weighted_means(const run *R, const uint32_t *c, v4d *scratch, double *out, size_t stride)
{
    int nm = R->nmeans, ng = R->ngroups, nc = R->ncls;
    /* sums and weights: of every mean (s, w by group), and within each class (cs, cw by group) */
    v4d *restrict s = scratch, *restrict w = s + nm, *restrict cs = w + ng, *restrict cw = cs + (size_t)nc * nm;
    memset(scratch, 0, ((size_t)nm + ng + (size_t)nc * (nm + ng)) * sizeof *scratch);
    const float *restrict mv = R->mv, *restrict mok = R->mok;
    for (int64_t i = 0; i < R->n; i++) {
        v4s k = lane_counts(c, i, UINT32_MAX);
        if (!(k[0] | k[1] | k[2] | k[3]))
            continue;
        v4d ci = __builtin_convertvector(k, v4d);
        const float *restrict v = mv + i * nm, *restrict ok = mok + i * ng;
        for (int j = 0; j < nm; j++)
            s[j] += ci * (double)v[j];
        for (int g = 0; g < ng; g++)
            w[g] += ci * (double)ok[g];
        if (R->nclassed) {
            v4d *restrict rs = cs + (size_t)R->cls_index[i] * nm, *restrict rw = cw + (size_t)R->cls_index[i] * ng;
            for (int j = 0; j < nm; j++)
                rs[j] += ci * (double)v[j];
            for (int g = 0; g < ng; g++)
                rw[g] += ci * (double)ok[g];
        }
    }
    for (int l = 0; l < LANES; l++)
        for (int j = 0; j < nm; j++) {
            int g = R->group[j];
            double *o = out + (size_t)l * stride + j;
            if (!R->means[j].cls) {
                *o = w[g][l] ? s[j][l] / w[g][l] : NAN;
                continue;
            }
            double sum = 0;
            int k = 0;
            for (int q = 0; q < nc; q++)
                if (cw[(size_t)q * ng + g][l] > 0)
                    sum += cs[(size_t)q * nm + j][l] / cw[(size_t)q * ng + g][l], k++;
            *o = k ? sum / k : NAN;
        }
}

/* the counts of replicates b0 .. b0 + nl - 1 in lanes 0 .. nl - 1 of c (n, LANES), the other
 * lanes 0: replicate b is n draws of rng_below(n) from rng_init(seed, SELECTIVE_BOOT ^ b) */
static void counts(uint64_t seed, long long b0, int nl, int64_t n, uint32_t *c)
{
    memset(c, 0, (size_t)n * LANES * sizeof *c);
    for (int j = 0; j < nl; j++) {
        rng g;
        rng_init(&g, seed, SELECTIVE_BOOT ^ (uint64_t)(b0 + j));
        for (int64_t t = 0; t < n; t++)
            c[rng_below(&g, (uint64_t)n) * LANES + j]++;
    }
}

/* every pair of LANES replicates (c: the queries' counts, (n, LANES)) into out + j width for lane j;
 * ks (n, LANES) scratch */
static void one_chunk(const run *R, const uint32_t *c, uint32_t *ks, double *out)
{
    int64_t n = R->n, N[SELECTIVE_MAXTARGETS][LANES];
    double L[SELECTIVE_MAXTARGETS][LANES], osum[SELECTIVE_MAXTARGETS][LANES];
    for (int t = 0; t < R->nt; t++) { /* a target's total count and loss, its oracle: once for every source */
        const tgt *T = &R->tgt[t];
        for (int j = 0; j < LANES; j++)
            N[t][j] = 0, L[t][j] = 0, osum[t][j] = 0;
        for (int64_t q = 0; q < T->m; q++) {
            const uint32_t *cq = c + T->oorder[q] * LANES;
            for (int j = 0; j < LANES; j++)
                N[t][j] += cq[j], L[t][j] += (double)cq[j] * T->os[q];
        }
        if (T->m)
            oracle_sum(T->oorder, T->os, T->m, c, R->T[t].binary, N[t], L[t], R->H, osum[t]);
    }
    for (int s = 0; s < R->ns; s++) {
        const src *S = &R->src[s];
        int gathered = 0;
        for (int t = 0; t < R->nt; t++) {
            const pair *p = &R->P[s * R->nt + t];
            double *o = out + (s * R->nt + t) * SELECTIVE_NMEASURES;
            if (!p->ok) {
                for (int j = 0; j < LANES; j++)
                    for (int k = 0; k < SELECTIVE_NMEASURES; k++)
                        o[(size_t)j * R->width + k] = NAN;
                continue;
            }
            if (!gathered) /* the counts along the source's order, once for its targets */
                for (int64_t q = 0; q < n; q++)
                    memcpy(ks + q * LANES, c + S->order[q] * LANES, LANES * sizeof *ks);
            gathered = 1;
            pass_in in = {n, S->nruns, p->ls, S->rs};
            pass(&in, ks, p->mk, R->T[t].binary, N[t], L[t], osum[t], R->H, o, (size_t)R->width);
        }
    }
}

/* task: replicates par_lo(B, ntasks, task) .. */
static void replicates(void *arg, int task, int worker)
{
    run *R = arg;
    uint32_t *c = emalloc((size_t)R->n * LANES * sizeof *c), *ks = emalloc((size_t)R->n * LANES * sizeof *ks);
    v4d *scratch = ealloc_aligned(((size_t)(R->nmeans + R->ngroups) * (R->ncls + 1) + 1) * sizeof *scratch);
    double *out = emalloc((size_t)LANES * R->width * sizeof *out);
    long long hi = par_lo(R->B, R->ntasks, task + 1);
    int head = R->ns * R->nt * SELECTIVE_NMEASURES;
    for (long long b = par_lo(R->B, R->ntasks, task); b < hi; b += LANES) {
        int nl = hi - b < LANES ? (int)(hi - b) : LANES;
        counts(R->seed, b, nl, R->n, c);
        one_chunk(R, c, ks, out);
        weighted_means(R, c, scratch, out + head, (size_t)R->width);
        memcpy(R->rep + (size_t)b * R->width, out, (size_t)nl * R->width * sizeof *out);
    }
    free(out), free(scratch), free(ks), free(c);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* the 2.5th and 97.5th percentiles (numpy's linear rule) of the finite x[0 .. B) (stride apart);
 * 0, or -1 when fewer than half are finite */
static int interval(const double *x, int B, int stride, double *v, double ci[2])
{
    int k = 0;
    for (int b = 0; b < B; b++)
        if (isfinite(x[(size_t)b * stride]))
            v[k++] = x[(size_t)b * stride];
    if (!k || 2 * k < B) {
        ci[0] = ci[1] = NAN;
        return -1;
    }
    qsort(v, (size_t)k, sizeof *v, cmp_double);
    for (int e = 0; e < 2; e++) {
        double pos = (e ? 0.975 : 0.025) * (k - 1), f = floor(pos);
        int i = (int)f;
        ci[e] = i + 1 < k ? v[i] + (pos - f) * (v[i + 1] - v[i]) : v[i];
    }
    return 0;
}

/* a source's order and runs (u NULL: none) */
static void make_src(const selective_source *S, int64_t n, const uint64_t *tie, src *o)
{
    memset(o, 0, sizeof *o);
    if (!S->u)
        return;
    o->order = emalloc((size_t)n * sizeof *o->order);
    o->rs = emalloc((size_t)(n + 1) * sizeof *o->rs);
    metrics_argsort_ties(S->u, tie, 0, NULL, n, o->order);
    o->nruns = runs(S->u, o->order, n, o->rs);
}

/* a target's queries by loss (loss NULL: none) */
static void make_tgt(const selective_target *T, int64_t n, tgt *o)
{
    memset(o, 0, sizeof *o);
    if (!T->loss)
        return;
    double *key = emalloc((size_t)n * sizeof *key);
    int64_t *idx = emalloc((size_t)n * sizeof *idx), m = 0;
    for (int64_t i = 0; i < n; i++)
        if (!isnan(T->loss[i]))
            key[m] = T->loss[i], idx[m++] = i;
    o->m = m;
    o->oorder = emalloc((size_t)(m ? m : 1) * sizeof *o->oorder);
    o->os = emalloc((size_t)(m ? m : 1) * sizeof *o->os);
    metrics_argsort(key, m, o->oorder);
    for (int64_t t = 0; t < m; t++)
        o->os[t] = key[o->oorder[t]], o->oorder[t] = idx[o->oorder[t]];
    free(idx), free(key);
}

/* the pair of a source and a target along the source's order; 0 when it cannot be measured (why) */
static int make_pair(const selective_source *S, const selective_target *T, const src *so, const tgt *to, int64_t n,
                     pair *p, char *why, size_t len)
{
    memset(p, 0, sizeof *p);
    if (!S->u || !T->loss) {
        snprintf(why, len, "%s", !S->u ? (S->why ? S->why : "no such uncertainty") : (T->why ? T->why : "no such loss"));
        return 0;
    }
    int64_t m = to->m;
    int constant = 1;
    for (int64_t t = 1; t < m && constant; t++)
        constant = S->u[to->oorder[t]] == S->u[to->oorder[0]];
    if (m < 2 || constant) {
        if (m < 2)
            snprintf(why, len, "%lld quer%s with this loss: nothing to rank", (long long)m, m == 1 ? "y" : "ies");
        else
            snprintf(why, len, "%s is the same for every query: it ranks nothing", S->name);
        return 0;
    }
    p->ls = emalloc((size_t)n * sizeof *p->ls);
    p->mk = emalloc((size_t)n * sizeof *p->mk);
    for (int64_t t = 0; t < n; t++) {
        double l = T->loss[so->order[t]];
        p->ls[t] = isnan(l) ? 0 : l, p->mk[t] = isnan(l) ? 0 : UINT32_MAX;
    }
    p->ok = 1;
    return 1;
}

/* the pictures of a pair (selective_result's curve and bins) along its source's order: the m
 * queries with this loss, the runs of equal u. The curve's loss sum at k answered, inside a run
 * of w (with this loss) summing to s after K summing to L, is L + (k - K) s / w; the bins' sums
 * take the items in order. */
/* the queries answered at the curve's point i: ceil((i + 1) m / SELECTIVE_CURVE), >= 1 */
static int64_t curve_k(int i, int64_t m) { return ((int64_t)(i + 1) * m + SELECTIVE_CURVE - 1) / SELECTIVE_CURVE; }

static void pair_pictures(const src *S, const pair *p, int64_t m, double *curve, double *bins)
{
    int64_t ks[SELECTIVE_CURVE], start[SELECTIVE_BINS + 1];
    for (int i = 0; i < SELECTIVE_CURVE; i++)
        ks[i] = curve_k(i, m);
    int bins_ok = m >= SELECTIVE_BINS;
    if (bins_ok)
        metrics_bins(m, SELECTIVE_BINS, start);
    int i = 0, b = 1;
    int64_t K = 0, pos = 0; /* answered before the run; items with this loss seen (the bins) */
    double L = 0, Lb = 0, prevF = 0;
    for (int64_t r = 0; r < S->nruns; r++) {
        int64_t w = 0;
        double sum = 0;
        for (int64_t t = S->rs[r]; t < S->rs[r + 1]; t++) {
            if (!p->mk[t])
                continue;
            w++, sum += p->ls[t], pos++, Lb += p->ls[t];
            while (bins_ok && b <= SELECTIVE_BINS && pos == start[b]) {
                bins[b - 1] = 1 - (Lb - prevF) / (double)(start[b] - start[b - 1]);
                prevF = Lb, b++;
            }
        }
        while (i < SELECTIVE_CURVE && ks[i] <= K + w) {
            curve[i] = (L + (double)(ks[i] - K) * (w ? sum / (double)w : 0)) / (double)ks[i];
            i++;
        }
        K += w, L += sum;
    }
    if (!bins_ok)
        for (int j = 0; j < SELECTIVE_BINS; j++)
            bins[j] = NAN;
}

/* the oracle's curve: the queries by ascending loss */
static void oracle_curve(const tgt *T, double *curve)
{
    int64_t m = T->m;
    double L = 0;
    int i = 0;
    for (int64_t t = 0; t < m; t++) {
        L += T->os[t];
        while (i < SELECTIVE_CURVE && curve_k(i, m) == t + 1)
            curve[i++] = L / (double)(t + 1);
    }
    for (; i < SELECTIVE_CURVE; i++)
        curve[i] = NAN;
}

void selective_run(const selective_source *S, int ns, const selective_target *T, int nt, const selective_mean *means,
                   int nmeans, int64_t n, const uint64_t *tie, int B, uint64_t seed, int threads, selective_result *out)
{
    if (ns > SELECTIVE_MAXSOURCES || nt > SELECTIVE_MAXTARGETS || nmeans > SELECTIVE_MAXMEANS || B < 0 || n < 1 || n >= INT32_MAX)
        die("internal error: selective_run: %d sources, %d targets, %d means, %d replicates, %lld queries", ns, nt,
            nmeans, B, (long long)n);
    memset(out, 0, sizeof *out);
    out->nsources = ns, out->ntargets = nt, out->nmeans = nmeans, out->replicates = B;
    double *H = emalloc((size_t)(n + 2) * sizeof *H);
    H[0] = 0;
    for (int64_t k = 1; k <= n + 1; k++)
        H[k] = H[k - 1] + 1.0 / (double)k;
    src *so = ecalloc((size_t)(ns > 0 ? ns : 1), sizeof *so);
    tgt *to = ecalloc((size_t)(nt > 0 ? nt : 1), sizeof *to);
    pair *P = ecalloc((size_t)(ns * nt > 0 ? ns * nt : 1), sizeof *P);
    for (int s = 0; s < ns; s++)
        make_src(&S[s], n, tie, &so[s]);
    for (int t = 0; t < nt; t++)
        make_tgt(&T[t], n, &to[t]);
    run R = {.S = S, .T = T, .means = means, .ns = ns, .nt = nt, .nmeans = nmeans, .B = B, .n = n, .seed = seed,
             .src = so, .tgt = to, .P = P, .H = H, .width = ns * nt * SELECTIVE_NMEASURES + nmeans};
    for (int s = 0; s < ns; s++)
        for (int t = 0; t < nt; t++) {
            char why[120];
            for (int k = 0; k < SELECTIVE_NMEASURES; k++)
                out->ci[s][t][k][0] = out->ci[s][t][k][1] = NAN;
            if (!make_pair(&S[s], &T[t], &so[s], &to[t], n, &P[s * nt + t], why, sizeof why))
                for (int k = 0; k < SELECTIVE_NMEASURES; k++)
                    snprintf(out->why[s][t][k], sizeof out->why[s][t][k], "%s", why);
        }
    /* the pictures */
    for (int t = 0; t < nt; t++)
        if (to[t].m)
            oracle_curve(&to[t], out->oracle[t]);
        else
            for (int i = 0; i < SELECTIVE_CURVE; i++)
                out->oracle[t][i] = NAN;
    for (int s = 0; s < ns; s++)
        for (int t = 0; t < nt; t++) {
            if (P[s * nt + t].ok) {
                pair_pictures(&so[s], &P[s * nt + t], to[t].m, out->curve[s][t], out->bins[s][t]);
                continue;
            }
            for (int i = 0; i < SELECTIVE_CURVE; i++)
                out->curve[s][t][i] = NAN;
            for (int i = 0; i < SELECTIVE_BINS; i++)
                out->bins[s][t][i] = NAN;
        }
    /* the point values: the replicate of every count 1 */
    uint32_t *ks = emalloc((size_t)n * LANES * sizeof *ks), *c1 = ecalloc((size_t)n * LANES, sizeof *c1);
    double *point = emalloc((size_t)LANES * R.width * sizeof *point);
    for (int64_t i = 0; i < n; i++) /* lane 0 every count 1, the others empty */
        c1[i * LANES] = 1;
    one_chunk(&R, c1, ks, point);
    free(c1), free(ks);
    for (int s = 0; s < ns; s++)
        for (int t = 0; t < nt; t++)
            for (int k = 0; k < SELECTIVE_NMEASURES; k++) {
                double v = out->value[s][t][k] = point[(s * nt + t) * SELECTIVE_NMEASURES + k];
                if (isnan(v) && P[s * nt + t].ok)
                    snprintf(out->why[s][t][k], sizeof out->why[s][t][k], "%s",
                             k == SELECTIVE_AUROC && !T[t].binary ? "a graded loss: AUROC needs right and wrong"
                             : k == SELECTIVE_AUROC ? "every query is right, or every one wrong"
                             : k == SELECTIVE_TAU || k == SELECTIVE_PEARSON
                                 ? "fewer queries than bins, or the bins' performance is the same everywhere"
                                 : "undefined");
            }
    free(point);
    /* the best free baseline of each (target, measure), and the learned sources' differences */
    for (int t = 0; t < nt; t++)
        for (int k = 0; k < SELECTIVE_NMEASURES; k++) {
            int best = -1;
            for (int s = 0; s < ns; s++) {
                double v = out->value[s][t][k];
                if (S[s].learned || isnan(v))
                    continue;
                if (best < 0 || (selective_higher_better(k) ? v > out->value[best][t][k] : v < out->value[best][t][k]))
                    best = s;
            }
            out->best[t][k] = best;
            for (int s = 0; s < ns; s++) {
                out->diff[s][t][k] = best >= 0 && S[s].learned ? out->value[s][t][k] - out->value[best][t][k] : NAN;
                out->diff_ci[s][t][k][0] = out->diff_ci[s][t][k][1] = NAN;
            }
        }
    for (int j = 0; j < nmeans; j++)
        out->mean_ci[j][0] = out->mean_ci[j][1] = NAN;
    if (!B)
        snprintf(out->ci_why, sizeof out->ci_why, "no bootstrap (0 replicates)");
    else if (n < 2)
        snprintf(out->ci_why, sizeof out->ci_why, "one query: no bootstrap");
    if (B && n >= 2) {
        R.rep = emalloc((size_t)B * R.width * sizeof *R.rep);
        const int32_t *cls = NULL;
        for (int j = 0; j < nmeans; j++)
            if (means[j].cls) {
                if (cls && means[j].cls != cls)
                    die("internal error: selective_run: the class averages of two class arrays");
                cls = means[j].cls, R.nclassed++;
            }
        if (cls) { /* the classes as 0 .. ncls-1 in ascending order */
            int32_t *sorted = emalloc((size_t)n * sizeof *sorted);
            memcpy(sorted, cls, (size_t)n * sizeof *sorted);
            qsort(sorted, (size_t)n, sizeof *sorted, util_cmp_i32);
            int64_t u = 0;
            for (int64_t i = 0; i < n; i++)
                if (!i || sorted[i] != sorted[i - 1])
                    sorted[u++] = sorted[i];
            R.ncls = (int)u;
            R.cls_index = emalloc((size_t)n * sizeof *R.cls_index);
            for (int64_t i = 0; i < n; i++)
                R.cls_index[i] = (int32_t)util_lower_bound_i32(sorted, u, cls[i]);
            free(sorted);
        }
        /* the means' values as float32 rows, and the groups of means defined on the same queries */
        R.group = emalloc((size_t)(nmeans ? nmeans : 1) * sizeof *R.group);
        int rep_of[SELECTIVE_MAXMEANS];
        for (int j = 0; j < nmeans; j++) {
            R.group[j] = -1;
            for (int g = 0; g < R.ngroups && R.group[j] < 0; g++) {
                const double *a = means[j].v, *b = means[rep_of[g]].v;
                int64_t i = 0;
                while (i < n && isnan(a[i]) == isnan(b[i]))
                    i++;
                if (i == n)
                    R.group[j] = g;
            }
            if (R.group[j] < 0)
                rep_of[R.ngroups] = j, R.group[j] = R.ngroups++;
        }
        R.mv = emalloc((size_t)n * (nmeans ? nmeans : 1) * sizeof *R.mv);
        R.mok = emalloc((size_t)n * (R.ngroups ? R.ngroups : 1) * sizeof *R.mok);
        for (int64_t i = 0; i < n; i++) {
            for (int j = 0; j < nmeans; j++) {
                double x = means[j].v[i];
                R.mv[i * nmeans + j] = isnan(x) ? 0 : (float)x;
            }
            for (int g = 0; g < R.ngroups; g++)
                R.mok[i * R.ngroups + g] = !isnan(means[rep_of[g]].v[i]);
        }
        R.ntasks = B < 64 ? B : 64; /* replicates in fixed pieces: the same bytes for any threads */
        par_for(threads, R.ntasks, replicates, &R);
        double *v = emalloc((size_t)B * sizeof *v), *d = emalloc((size_t)B * sizeof *d);
        for (int s = 0; s < ns; s++)
            for (int t = 0; t < nt; t++)
                for (int k = 0; k < SELECTIVE_NMEASURES; k++) {
                    int col = (s * nt + t) * SELECTIVE_NMEASURES + k, best = out->best[t][k];
                    if (isnan(out->value[s][t][k]))
                        continue;
                    if (interval(R.rep + col, B, R.width, v, out->ci[s][t][k]))
                        snprintf(out->why[s][t][k], sizeof out->why[s][t][k],
                                 "its interval: defined in fewer than half of the bootstrap replicates");
                    if (S[s].learned && best >= 0) {
                        int bcol = (best * nt + t) * SELECTIVE_NMEASURES + k;
                        for (int b = 0; b < B; b++)
                            d[b] = R.rep[(size_t)b * R.width + col] - R.rep[(size_t)b * R.width + bcol];
                        interval(d, B, 1, v, out->diff_ci[s][t][k]);
                    }
                }
        for (int j = 0; j < nmeans; j++)
            interval(R.rep + ns * nt * SELECTIVE_NMEASURES + j, B, R.width, v, out->mean_ci[j]);
        free(d), free(v), free(R.cls_index), free(R.rep), free(R.mv), free(R.mok), free(R.group);
    }
    for (int i = 0; i < ns * nt; i++)
        free(P[i].ls), free(P[i].mk);
    for (int s = 0; s < ns; s++)
        free(so[s].order), free(so[s].rs);
    for (int t = 0; t < nt; t++)
        free(to[t].oorder), free(to[t].os);
    free(P), free(so), free(to), free(H);
}
