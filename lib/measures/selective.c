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


/* the oracle's sum_k r_k: the items by ascending loss (equal losses change no sum); a binary loss
 * in closed form, z right (loss 0) of N: sum_{k > z} (k - z) / k = (N - z) - z (H[N] - H[z]) */
static double oracle_sum(const int64_t *oorder, const double *os, int64_t m, const uint32_t *c, int binary,
                         int64_t N, double L, const double *H)
{
    if (binary) {
        int64_t z = N - (int64_t)llround(L);
        return (double)(N - z) - (double)z * (H[N] - H[z]);
    }
    double sum = 0, Lo = 0;
    int64_t K = 0;
    for (int64_t t = 0; t < m; t++) {
        int64_t k = c ? c[oorder[t]] : 1;
        if (!k)
            continue;
        double dH = H[K + k] - H[K];
        sum += Lo * dH + os[t] * ((double)k - (double)K * dH);
        K += k, Lo += (double)k * os[t];
    }
    return sum;
}

/* The measures of one replicate in one pass over the items in order (ascending u, then the tie
 * key), their losses ls[t] (0 where the query has none) and counts k[t] & mk[t] (mk: all ones
 * where the query has this loss, 0 where not) along it, and the runs of equal u starting at rs[0 .. nruns) (rs[nruns] = m). A run of total count w,
 * losses summing to s, after K counted items whose losses sum to L adds
 *   to sum_k r_k (AURC)        sum_{j=1..w} (L + j s/w) / (K + j) = s + dH (L - (s/w) K),
 *                              dH = H[K+w] - H[K] (its expectation over the run's orders)
 *   to sum_k L_k (AUGRC)       w L + s (w + 1) / 2
 *   to AUROC's wrong-right pairs  s (K - L) + s (w - s) / 2: the wrong ones of the run (binary
 *                              losses: s of them) against the right ones before it, half against
 *                              its own right ones (none within one query's copies)
 * and the bins of tau and pearson_bins cut the sequence of positions: the performance summed up to
 * position P is F(P) = (K - L) + (P - K)(1 - l) inside an item at positions K .. K + k - 1, read
 * off when P is a bin's end. A run of one item (the usual case of a continuous u) takes no branch
 * on its count, 0 included. N, Ltot: the total count and loss; osum the oracle's sum_k r_k. */
typedef struct {
    int64_t m, nruns;
    const double *ls;
    const int64_t *rs;
} pass_in;

static void pass(const pass_in *P, const uint32_t *k, const uint32_t *mk, int binary, int64_t N, double Ltot, double osum,
                 const double *H, double out[SELECTIVE_NMEASURES])
{
    double aurc = 0, augrc = 0, pairs = 0, L = 0, Kd = 0, Hk = 0; /* Hk = H[K] */
    int64_t K = 0;
    int bins_ok = N >= SELECTIVE_BINS, nb = 0;
    int64_t ends[SELECTIVE_BINS + 11]; /* the bins' ends, ascending: tau's 20 and pearson's 10 */
    double F[SELECTIVE_BINS + 11];     /* F at each */
    int64_t ts[SELECTIVE_BINS + 1], ps[11];
    if (bins_ok) {
        bin_starts(N, SELECTIVE_BINS, 0, ts), bin_starts(N, 10, 1, ps);
        for (int a = 1, b = 1; a <= SELECTIVE_BINS || b <= 10;) { /* merged, an end of both once */
            int64_t x = a <= SELECTIVE_BINS ? ts[a] : INT64_MAX, y = b <= 10 ? ps[b] : INT64_MAX, v = x < y ? x : y;
            ends[nb++] = v;
            a += x == v, b += y == v;
        }
    }
    int e = 0;
    int64_t next = nb ? ends[0] : INT64_MAX;
    const int64_t *rs = P->rs;
    const double *ls = P->ls;
    for (int64_t r = 0; r < P->nruns; r++) {
        int64_t t0 = rs[r], t1 = rs[r + 1];
        if (t1 - t0 == 1) {
            int64_t kk = k[t0] & mk[t0];
            double l = ls[t0], kd = (double)kk, sk = kd * l, Hn = H[K + kk], dH = Hn - Hk;
            aurc += sk + dH * (L - l * Kd);
            augrc += kd * L + sk * (kd + 1) * 0.5;
            pairs += sk * (Kd - L);
            while (K + kk >= next) { /* a bin ends inside (or at the end of) this item */
                F[e] = (Kd - L) + (double)(next - K) * (1 - l);
                next = ++e < nb ? ends[e] : INT64_MAX;
            }
            K += kk, Kd += kd, L += sk, Hk = Hn;
            continue;
        }
        double s = 0;
        int64_t w = 0;
        for (int64_t t = t0; t < t1; t++) { /* the bins see the run's items in order */
            int64_t kk = k[t] & mk[t];
            double l = ls[t];
            while (K + w + kk >= next) {
                F[e] = ((double)(K + w) - (L + s)) + (double)(next - K - w) * (1 - l);
                next = ++e < nb ? ends[e] : INT64_MAX;
            }
            w += kk, s += (double)kk * l;
        }
        double wd = (double)w, Hn = H[K + w], dH = Hn - Hk;
        if (w) {
            aurc += s + dH * (L - s / wd * Kd);
            augrc += wd * L + s * (wd + 1) * 0.5;
            if (binary)
                pairs += s * (Kd - L) + 0.5 * s * (wd - s);
        }
        K += w, Kd += wd, L += s, Hk = Hn;
    }
    double n = (double)N;
    out[SELECTIVE_AURC] = N ? aurc / n : NAN;
    out[SELECTIVE_EAURC] = N ? (aurc - osum) / n : NAN;
    out[SELECTIVE_AUGRC] = N ? augrc / (n * n) : NAN;
    out[SELECTIVE_AUROC] = binary && Ltot > 0 && Ltot < n ? pairs / (Ltot * (n - Ltot)) : NAN;
    out[SELECTIVE_TAU] = out[SELECTIVE_PEARSON] = NAN;
    if (bins_ok) {
        double idx[SELECTIVE_BINS], perf[SELECTIVE_BINS], prev = 0;
        for (int b = 0; b < SELECTIVE_BINS; b++)
            idx[b] = b;
        int j = 0;
        for (int b = 0; b < SELECTIVE_BINS; b++) { /* F at tau's ends, in the merged list */
            while (ends[j] != ts[b + 1])
                j++;
            perf[b] = (F[j] - prev) / (double)(ts[b + 1] - ts[b]), prev = F[j];
        }
        double tau = -metrics_tau_b(idx, perf, SELECTIVE_BINS, NULL);
        out[SELECTIVE_TAU] = tau == 0 ? 0 : tau; /* no -0 */
        j = 0, prev = 0;
        for (int b = 0; b < 10; b++) {
            while (ends[j] != ps[b + 1])
                j++;
            perf[b] = (F[j] - prev) / (double)(ps[b + 1] - ps[b]), prev = F[j];
        }
        out[SELECTIVE_PEARSON] = retrieval_pearson(idx, perf, 10);
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
    double *ls = emalloc((size_t)(m ? m : 1) * sizeof *ls), *os = emalloc((size_t)(m ? m : 1) * sizeof *os), L = 0;
    int64_t *rs = emalloc((size_t)(m + 1) * sizeof *rs), N = 0;
    uint32_t *k = emalloc((size_t)(m ? m : 1) * sizeof *k), *mk = emalloc((size_t)(m ? m : 1) * sizeof *mk);
    for (int64_t t = 0; t < m; t++) {
        ls[t] = loss[order[t]], os[t] = loss[oorder[t]], k[t] = c ? c[order[t]] : 1, mk[t] = UINT32_MAX;
        N += k[t], L += (double)k[t] * ls[t];
    }
    pass_in P = {m, runs(u, order, m, rs), ls, rs};
    pass(&P, k, mk, binary, N, L, oracle_sum(oorder, os, m, c, binary, N, L, H), H, out);
    free(mk), free(k), free(rs), free(os), free(ls);
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

/* every mean of a replicate into out[0 .. nmeans): the weighted mean, or for those with classes
 * (one array for all of them) the mean over classes of the weighted means within them, all in
 * one walk over the queries (rows of nm values, so that the inner loops vectorise); scratch
 * (2 nmeans (ncls + 1)) */
static void weighted_means(const run *R, const uint32_t *c, double *scratch, double *out)
{
    int nm = R->nmeans, ng = R->ngroups, nc = R->ncls;
    /* sums and weights: of every mean (s, w by group), and within each class (cs, cw by group) */
    double *restrict s = scratch, *restrict w = s + nm, *restrict cs = w + ng, *restrict cw = cs + (size_t)nc * nm;
    memset(scratch, 0, ((size_t)nm + ng + (size_t)nc * (nm + ng)) * sizeof *scratch);
    const float *restrict mv = R->mv, *restrict mok = R->mok;
    for (int64_t i = 0; i < R->n; i++) {
        if (!c[i])
            continue;
        double ci = c[i];
        const float *restrict v = mv + i * nm, *restrict ok = mok + i * ng;
        for (int j = 0; j < nm; j++)
            s[j] += ci * v[j];
        for (int g = 0; g < ng; g++)
            w[g] += ci * ok[g];
        if (R->nclassed) {
            double *restrict rs = cs + (size_t)R->cls_index[i] * nm, *restrict rw = cw + (size_t)R->cls_index[i] * ng;
            for (int j = 0; j < nm; j++)
                rs[j] += ci * v[j];
            for (int g = 0; g < ng; g++)
                rw[g] += ci * ok[g];
        }
    }
    for (int j = 0; j < nm; j++) {
        int g = R->group[j];
        if (!R->means[j].cls) {
            out[j] = w[g] ? s[j] / w[g] : NAN;
            continue;
        }
        double sum = 0;
        int k = 0;
        for (int q = 0; q < nc; q++)
            if (cw[(size_t)q * ng + g] > 0)
                sum += cs[(size_t)q * nm + j] / cw[(size_t)q * ng + g], k++;
        out[j] = k ? sum / k : NAN;
    }
}

/* the counts of replicate b: n draws of rng_below(n) from rng_init(seed, SELECTIVE_BOOT ^ b) */
static void counts(uint64_t seed, long long b, int64_t n, uint32_t *c)
{
    rng g;
    rng_init(&g, seed, SELECTIVE_BOOT ^ (uint64_t)b);
    memset(c, 0, (size_t)n * sizeof *c);
    for (int64_t t = 0; t < n; t++)
        c[rng_below(&g, (uint64_t)n)]++;
}

/* every pair of one replicate (c: the queries' counts; NULL: every count 1) into out */
static void one_replicate(const run *R, const uint32_t *c, uint32_t *ks, double *out)
{
    int64_t n = R->n;
    double N[SELECTIVE_MAXTARGETS], L[SELECTIVE_MAXTARGETS], osum[SELECTIVE_MAXTARGETS];
    for (int t = 0; t < R->nt; t++) { /* a target's total count and loss, its oracle: once for every source */
        const tgt *T = &R->tgt[t];
        int64_t Nt = 0;
        double Lt = 0;
        for (int64_t q = 0; q < T->m; q++) {
            int64_t k = c ? c[T->oorder[q]] : 1;
            Nt += k, Lt += (double)k * T->os[q];
        }
        N[t] = (double)Nt, L[t] = Lt;
        osum[t] = T->m ? oracle_sum(T->oorder, T->os, T->m, c, R->T[t].binary, Nt, Lt, R->H) : 0;
    }
    for (int s = 0; s < R->ns; s++) {
        const src *S = &R->src[s];
        int gathered = 0;
        for (int t = 0; t < R->nt; t++) {
            const pair *p = &R->P[s * R->nt + t];
            double *o = out + (s * R->nt + t) * SELECTIVE_NMEASURES;
            if (!p->ok) {
                for (int k = 0; k < SELECTIVE_NMEASURES; k++)
                    o[k] = NAN;
                continue;
            }
            if (!gathered) /* the counts along the source's order, once for its targets */
                for (int64_t q = 0; q < n; q++)
                    ks[q] = c ? c[S->order[q]] : 1;
            gathered = 1;
            pass_in in = {n, S->nruns, p->ls, S->rs};
            pass(&in, ks, p->mk, R->T[t].binary, (int64_t)N[t], L[t], osum[t], R->H, o);
        }
    }
}

/* task: replicates par_lo(B, ntasks, task) .. */
static void replicates(void *arg, int task, int worker)
{
    run *R = arg;
    uint32_t *c = emalloc((size_t)R->n * sizeof *c), *ks = emalloc((size_t)R->n * sizeof *ks);
    double *scratch = emalloc(((size_t)(R->nmeans + R->ngroups) * (R->ncls + 1) + 1) * sizeof *scratch);
    for (long long b = par_lo(R->B, R->ntasks, task); b < par_lo(R->B, R->ntasks, task + 1); b++) {
        double *out = R->rep + (size_t)b * R->width;
        counts(R->seed, b, R->n, c);
        one_replicate(R, c, ks, out);
        weighted_means(R, c, scratch, out + R->ns * R->nt * SELECTIVE_NMEASURES);
    }
    free(scratch), free(ks), free(c);
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

void selective_run(const selective_source *S, int ns, const selective_target *T, int nt, const selective_mean *means,
                   int nmeans, int64_t n, const uint64_t *tie, int B, uint64_t seed, int threads, selective_result *out)
{
    if (ns > SELECTIVE_MAXSOURCES || nt > SELECTIVE_MAXTARGETS || nmeans > SELECTIVE_MAXMEANS || B < 0 || n < 1)
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
    /* the point values: the replicate of every count 1 */
    uint32_t *ks = emalloc((size_t)n * sizeof *ks);
    double *point = emalloc((size_t)R.width * sizeof *point);
    one_replicate(&R, NULL, ks, point);
    free(ks);
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
