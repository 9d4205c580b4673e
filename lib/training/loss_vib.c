/* vib: the HIB training loss (Eq. 8) for mixture-of-Gaussians embeddings, (mu, var) of shape
 * (n, C, D), C components of equal weight 1/C.
 *
 *   samples   z_i^(k) = mu_{i,c} + sqrt(var_{i,c}) eps_i^(k), c = k / (K/C), eps ~ N(0, I), K per
 *             image, drawn by loss_sample (loss_util.h) for all n images in (image, sample, dim)
 *             order, before anything else is drawn: the same rng state gives the same loss.
 *   per pair  s_kl = -a d(z1^(k), z2^(l)) + b,   a = softplus(a_raw)
 *             NLL = -log( (1/K^2) sum_kl sigmoid(s_kl) )    (match)      Eq. 5 in Eq. 3, as a
 *             NLL = -log( (1/K^2) sum_kl sigmoid(-s_kl) )   (non-match)  log-sum-exp
 *   KL        KL(p(z|x) || N(0, I)) for the mixture is replaced by its upper bound (KL is convex in
 *             its first argument): (1/C) sum_c KL(N(mu_c, var_c) || N(0, I)),
 *             KL(N(m, v) || N(0, I)) = 0.5 sum_j (v_j + m_j^2 - 1 - log v_j), closed form.
 *   loss      (1/P) sum_pairs [NLL + beta (KL(x1) + KL(x2))], P = npairs: the KL counts once per
 *             appearance of an image in a pair, as in Eq. 8.
 *   stats     nll = mean NLL over pairs; kl = mean KL per pair member (so loss = nll + 2 beta kl);
 *             a, b; mean_var = mean of var over the whole (n, C, D) batch.
 *
 * Gradients: dz/dmu_c = 1 and dz/dvar_c = eps / (2 sqrt(var_c)) for the samples of component c,
 * plus the closed-form KL terms beta/C * (mu, 0.5 (1 - 1/var)) per appearance; a_raw and b get
 * the chain through s. dmu, dvar and dparams may be NULL (loss value only).
 *
 * Work: after the samples (one generator, in order), the pairs and then the images run in tasks
 * fixed by the batch (VIB_TASKS at most) on in->pool when there is one, each writing its own
 * outputs (a pair's NLL and shares of da, db; an image's KL and gradients), summed in pair and
 * image order afterwards: the same bytes whatever the workers. The pair tasks write the dL/dz of
 * their images, so they run in the caller when an image is in more than one pair.
 */
#include "simd.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "loss.h"
#include "loss_util.h"
#include "par.h"
#include "util.h"

/* dist (K, K): loss_dist(z1^(k), z2^(l)) of two sample sets (K, D), four l at a time from z2t (D,
 * K), z2 transposed: each lane sums its own distance in loss_dist's order, so the same bits */
static void pair_distances(const double *z1, const double *z2, double *z2t, int K, int D, double *dist)
{
    for (int l = 0; l < K; l++)
        for (int c = 0; c < D; c++)
            z2t[(size_t)c * K + l] = z2[(size_t)l * D + c];
    for (int k = 0; k < K; k++) {
        const double *x = z1 + (size_t)k * D;
        int l = 0;
        for (; l + 4 <= K; l += 4) {
            __m256d s = _mm256_set1_pd(LOSS_DIST_EPS);
            for (int c = 0; c < D; c++) {
                __m256d d = _mm256_sub_pd(_mm256_set1_pd(x[c]), _mm256_loadu_pd(z2t + (size_t)c * K + l));
                s = _mm256_add_pd(s, _mm256_mul_pd(d, d));
            }
            _mm256_storeu_pd(dist + (size_t)k * K + l, _mm256_sqrt_pd(s));
        }
        for (; l < K; l++)
            dist[(size_t)k * K + l] = loss_dist(x, z2 + (size_t)l * D, D);
    }
}

/* v = g (x - y); dx += v; dy -= v, element by element (4 at a time: the same bits); dx and dy are
 * the same row or disjoint rows */
static void pair_grad(double g, const double *x, const double *y, double *dx, double *dy, int D)
{
    int c = 0;
    __m256d G = _mm256_set1_pd(g);
    for (; c + 4 <= D; c += 4) {
        __m256d v = _mm256_mul_pd(G, _mm256_sub_pd(_mm256_loadu_pd(x + c), _mm256_loadu_pd(y + c)));
        _mm256_storeu_pd(dx + c, _mm256_add_pd(_mm256_loadu_pd(dx + c), v));
        _mm256_storeu_pd(dy + c, _mm256_sub_pd(_mm256_loadu_pd(dy + c), v));
    }
    for (; c < D; c++) {
        double v = g * (x[c] - y[c]);
        dx[c] += v;
        dy[c] -= v;
    }
}

enum { VIB_TASKS = 16 }; /* pairs, and images, cut into at most this many tasks */

typedef struct {
    const loss_input *in;
    int K, D, C, per, tasks;
    double a, b, inv, w0; /* w0 = beta inv / C */
    const double *eps, *z, *count;
    double *dz;          /* (n, K, D) */
    double *scratch;     /* per task: s, dL/ds, d (K, K), a sample set transposed (D, K) */
    double *pnll, *pda, *pdb; /* per pair */
    double *pkl, *pvar;  /* per image: its KL terms, its variances summed */
    float *dmu, *dvar;
} vib_job;

/* the pairs of task t: distances, NLL, dL/dz of both sample sets, the pair's share of da, db */
static void pair_task(void *ctx, int t, int worker)
{
    vib_job *J = ctx;
    const loss_input *in = J->in;
    int K = J->K, D = J->D;
    size_t KK = (size_t)K * K;
    double *s = J->scratch + (size_t)t * (3 * KK + (size_t)K * D), *gs = s + KK, *dist = gs + KK, *z2t = dist + KK;
    for (int p = (int)par_lo(in->npairs, J->tasks, t); p < par_lo(in->npairs, J->tasks, t + 1); p++) {
        int i = in->pair_a[p], j = in->pair_b[p];
        const double *z1 = J->z + (size_t)i * K * D, *z2 = J->z + (size_t)j * K * D;
        pair_distances(z1, z2, z2t, K, D, dist);
        for (size_t kl = 0; kl < KK; kl++)
            s[kl] = -J->a * dist[kl] + J->b;
        J->pnll[p] = loss_match_nll((int)KK, s, in->match[p], gs);
        double *dz1 = J->dz + (size_t)i * K * D, *dz2 = J->dz + (size_t)j * K * D, da = 0, db = 0;
        for (int k = 0; k < K; k++)
            for (int l = 0; l < K; l++) {
                double g = gs[k * K + l] * J->inv, d = dist[k * K + l];
                db += g;
                da -= g * d;
                double gd = -J->a * g / d;  /* dL/dz1^(k) += gd (z1^(k) - z2^(l)) */
                pair_grad(gd, z1 + (size_t)k * D, z2 + (size_t)l * D, dz1 + (size_t)k * D, dz2 + (size_t)l * D, D);
            }
        J->pda[p] = da;
        J->pdb[p] = db;
    }
}

/* the images of task t: the KL bound, counted once per appearance, and the gradients through the
 * samples */
static void image_task(void *ctx, int t, int worker)
{
    vib_job *J = ctx;
    const loss_input *in = J->in;
    int K = J->K, D = J->D, C = J->C, per = J->per;
    const double *dz = J->dz, *eps = J->eps;
    float *dmu = J->dmu, *dvar = J->dvar;
    for (int i = (int)par_lo(in->n, J->tasks, t); i < par_lo(in->n, J->tasks, t + 1); i++) {
        double kl = 0, sv = 0, count = J->count[i];
        for (int c = 0; c < C; c++) {
            const float *m = in->mu + ((size_t)i * C + c) * D, *v = in->var + ((size_t)i * C + c) * D;
            for (int j = 0; j < D; j++)
                sv += v[j];
            if (count > 0)
                kl += count * loss_kl_gauss(m, v, D) / C;
            if (!dmu && !dvar)
                continue;
            double w = J->w0 * count; /* d loss / d KL_c of this image: beta count inv / C */
            int j = 0;
            for (; j + 4 <= D; j += 4) { /* the loop below, 4 dimensions at a time: the same bits */
                __m256d vj = _mm256_cvtps_pd(_mm_loadu_ps(v + j)), one = _mm256_set1_pd(1);
                __m256d gm = _mm256_mul_pd(_mm256_set1_pd(w), _mm256_cvtps_pd(_mm_loadu_ps(m + j)));
                __m256d gv = _mm256_mul_pd(_mm256_set1_pd(w * 0.5), _mm256_sub_pd(one, _mm256_div_pd(one, vj)));
                __m256d sd2 = _mm256_mul_pd(_mm256_set1_pd(2), _mm256_sqrt_pd(vj));
                for (int k = c * per; k < (c + 1) * per; k++) {
                    size_t o = ((size_t)i * K + k) * D + j;
                    __m256d g = _mm256_loadu_pd(dz + o);
                    gm = _mm256_add_pd(gm, g);
                    gv = _mm256_add_pd(gv, _mm256_div_pd(_mm256_mul_pd(g, _mm256_loadu_pd(eps + o)), sd2));
                }
                if (dmu)
                    _mm_storeu_ps(dmu + ((size_t)i * C + c) * D + j, _mm256_cvtpd_ps(gm));
                if (dvar)
                    _mm_storeu_ps(dvar + ((size_t)i * C + c) * D + j, _mm256_cvtpd_ps(gv));
            }
            for (; j < D; j++) {
                double gm = w * m[j], gv = w * 0.5 * (1 - 1.0 / v[j]), sd = sqrt((double)v[j]);
                for (int k = c * per; k < (c + 1) * per; k++) {
                    size_t o = ((size_t)i * K + k) * D + j;
                    gm += dz[o];
                    gv += dz[o] * eps[o] / (2 * sd);
                }
                if (dmu)
                    dmu[((size_t)i * C + c) * D + j] = (float)gm;
                if (dvar)
                    dvar[((size_t)i * C + c) * D + j] = (float)gv;
            }
        }
        J->pkl[i] = kl;
        J->pvar[i] = sv;
    }
}

/* fn's tasks on in->pool when `together` (they write disjoint outputs) and the work pays, else in
 * the caller in order: the same bytes either way */
static void run_tasks(const loss_input *in, int together, double work, int tasks, par_fn fn, vib_job *J)
{
    J->tasks = tasks;
    if (in->pool && together)
        par_run_sized(in->pool, work, tasks, fn, J);
    else
        for (int t = 0; t < tasks; t++)
            fn(J, t, 0);
}

static double vib_forward_backward(const loss_config *cfg, const loss_input *in, const float *params,
                                   float *dparams, float *dmu, float *dvar, rng *r, loss_stats *st)
{
    int n = in->n, C = in->C, D = in->D, K = cfg->K, P = in->npairs;
    if (!in->var)
        die("vib loss: needs stochastic embeddings (a mixture-of-Gaussians head)");
    if (K < 1 || C < 1 || D < 1 || K % C)
        die("vib loss: K = %d samples per input must be a positive multiple of C = %d components", K, C);
    loss_check_pairs("vib", in);
    double a, b;
    loss_match_ab(params, &a, &b);
    size_t nz = (size_t)n * K * D, nm = (size_t)n * C * D, KK = (size_t)K * K, per_task = 3 * KK + (size_t)K * D;
    /* one scratch block: eps, z, dL/dz (n, K, D); appearances, KL, variance sums (n); NLL, da, db
     * per pair (P); the pair tasks' scratch */
    double *eps = emalloc(sizeof(double) * (3 * nz + 3 * (size_t)n + 3 * (size_t)P + VIB_TASKS * per_task));
    double *z = eps + nz, *dz = z + nz, *count = dz + nz, *pkl = count + n, *pvar = pkl + n;
    double *pnll = pvar + n, *pda = pnll + P, *pdb = pda + P, *scratch = pdb + P;
    memset(dz, 0, sizeof(double) * nz);
    memset(count, 0, sizeof(double) * n);
    loss_sample(in->mu, in->var, n, C, D, K, r, eps, z);

    double inv = P > 0 ? 1.0 / P : 0, beta = cfg->beta;
    int once = 1; /* every image in one pair at most: the pair tasks write disjoint dL/dz */
    for (int p = 0; p < P; p++) {
        count[in->pair_a[p]]++;
        count[in->pair_b[p]]++;
        once &= count[in->pair_a[p]] <= 1 && count[in->pair_b[p]] <= 1;
    }
    vib_job J = {.in = in, .K = K, .D = D, .C = C, .per = K / C, .a = a, .b = b, .inv = inv,
                 .w0 = beta * inv / C, .eps = eps, .z = z, .count = count, .dz = dz, .scratch = scratch,
                 .pnll = pnll, .pda = pda, .pdb = pdb, .pkl = pkl, .pvar = pvar, .dmu = dmu, .dvar = dvar};
    run_tasks(in, once, 6.0 * P * KK * D, P < VIB_TASKS ? P : VIB_TASKS, pair_task, &J);
    /* the per-pair sums, in pair order */
    double sum_nll = 0, da = 0, db = 0;
    for (int p = 0; p < P; p++) {
        sum_nll += pnll[p];
        da += pda[p];
        db += pdb[p];
    }
    run_tasks(in, 1, (double)nz * 6, n < VIB_TASKS ? n : VIB_TASKS, image_task, &J);
    double sum_kl = 0, sum_var = 0;
    for (int i = 0; i < n; i++) {
        sum_kl += pkl[i];
        sum_var += pvar[i];
    }
    if (dparams) {
        dparams[0] += (float)(da * loss_sigmoid(params[0]));  /* da/da_raw = sigmoid(a_raw) */
        dparams[1] += (float)db;
    }
    free(eps);

    double loss = (sum_nll + beta * sum_kl) * inv;
    if (st) {
        memset(st, 0, sizeof *st);
        st->nll = sum_nll * inv;
        st->kl = P > 0 ? sum_kl / (2.0 * P) : 0;
        st->a = a;
        st->b = b;
        st->mean_var = nm ? sum_var / nm : 0;
    }
    return loss;
}

const loss_kind loss_vib = {
    .name = "vib",
    .help = "HIB VIB loss (Eq. 8): MoG embeddings, NLL of the K x K sample average (Eq. 5) + beta KL",
    .needs_var = 1,
    .batches = LOSS_PAIRS,
    .nparams = 2,
    .param_names = loss_match_param_names,
    .init_params = loss_match_init_params,
    .forward_backward = vib_forward_backward,
};
