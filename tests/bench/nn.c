/* nn bench: throughput of the embedding network against an OpenBLAS sgemm probe, in one run.
 *
 *   sh tests/bench/nn.sh [-r REPS] [-b BATCH] [-N DIGITS] [-t MAXTHREADS]
 *
 * For each head (point D=2, MoG C=1 D=2, MoG C=2 D=2) and 1..MAXTHREADS threads:
 *   embed  model_forward on a batch                                    images/s
 *   train  model_forward + zero grads + model_backward + Adam step      images/s
 * (the loss is replaced by fixed random output gradients: it is cheap and not the network's).
 * Each figure is the best of REPS timings of 8 batches (the machine is shared: the best is the
 * least disturbed), wall clock. Effective GFLOPS count the dense network's multiply-adds
 * (forward 1740 HW + 240 HO per image, forward+backward 4920 HW + 720 HO, HO head outputs),
 * also where the kernels skip work (the sparse pool backward); "/probe" divides by the sgemm
 * probe's GFLOPS with the same thread count. Defaults: 5 repetitions, batch 256, 2 digits, 1 and 2
 * threads. HEDGE_NO_AVX512=1 measures the AVX2 kernels. Then the mlp body on 784 features and
 * issue 35's wide head (512 -> 512 -> 128, batch 512), the same way. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "blas.h"
#include "body.h"
#include "model.h"
#include "optim.h"
#include "rng.h"
#include "util.h"

static double best_of(int reps, int batches, model *m, optim *o, const void *img, int n, float *mu,
                      float *var, const float *dmu, const float *dvar, int train)
{
    double best = 1e30;
    for (int r = 0; r < reps; r++) {
        double t = now_seconds();
        for (int b = 0; b < batches; b++) {
            model_forward(m, img, n, mu, var);
            if (train) {
                memset(m->grads, 0, m->nparams * sizeof(float));
                model_backward(m, dmu, var ? dvar : NULL);
                optim_step(o, m->params, m->grads);
            }
        }
        t = (now_seconds() - t) / batches;
        if (t < best)
            best = t;
    }
    return n / best;
}

/* one model, 1 .. maxt threads: embed and train rates, their GFLOPS (fwd, fb: flops per item of
 * forward and forward + backward) and their share of the probe's, a line per thread count */
static void measure(const char *name, const model_config *cfg, const void *input, int n, int reps, int maxt,
                    const double *probe, double fwd, double fb, rng *r)
{
    int k = n * cfg->C * cfg->D;
    model *m = model_create(cfg, 2, (const char *[]){"match.a_raw", "match.b"}, n);
    model_init(m, 1);
    optim *o = optim_create(OPTIM_ADAM, m->nparams, 1e-4);
    float *mu = malloc(k * sizeof(float)), *var = cfg->head == HEAD_MOG ? malloc(k * sizeof(float)) : NULL;
    float *dmu = malloc(k * sizeof(float)), *dvar = malloc(k * sizeof(float));
    for (int i = 0; i < k; i++) {
        dmu[i] = (float)(1e-2 * (2 * rng_uniform(r) - 1));
        dvar[i] = (float)(1e-2 * (2 * rng_uniform(r) - 1));
    }
    for (int t = 1; t <= maxt; t++) {
        model_set_threads(m, t);
        best_of(1, 1, m, o, input, n, mu, var, dmu, dvar, 1); /* warm up */
        double e = best_of(reps, 8, m, o, input, n, mu, var, dmu, dvar, 0);
        double tr = best_of(reps, 8, m, o, input, n, mu, var, dmu, dvar, 1);
        printf("%-6s %7d  %11.0f %7.1f %6.2f  %11.0f %7.1f %6.2f\n", name, t, e, e * fwd / 1e9, e * fwd / 1e9 / probe[t],
               tr, tr * fb / 1e9, tr * fb / 1e9 / probe[t]);
        fflush(stdout);
    }
    free(mu), free(var), free(dmu), free(dvar);
    optim_free(o);
    model_free(m);
}

int main(int argc, char **argv)
{
    util_init(argv[0]);
    util_usage = "usage: nn [-r REPS] [-b BATCH] [-N DIGITS] [-t MAXTHREADS]\n";
    int reps = 5, n = 256, digits = 2, maxt = 2, opt;
    while ((opt = getopt(argc, argv, "r:b:N:t:h")) != -1)
        switch (opt) {
        case 'r': reps = (int)parse_long("-r", optarg, 1, 1000); break;
        case 'b': n = (int)parse_long("-b", optarg, 1, 65536); break;
        case 'N': digits = (int)parse_long("-N", optarg, 1, 8); break;
        case 't': maxt = (int)parse_long("-t", optarg, 1, 16); break;
        case 'h': usage_help();
        default: usage_die("unknown option");
        }
    blas_init(argv, 1);

    double probe[17];
    for (int t = 1; t <= maxt; t++) {
        blas_set_threads(t);
        probe[t] = 0;
        for (int r = 0; r < 3; r++) { /* best of 3 probes of 10 */
            double g = blas_probe_gflops(512, 10);
            if (g > probe[t])
                probe[t] = g;
        }
    }
    blas_set_threads(1);
    printf("OpenBLAS core %s; sgemm probe (512^3, best of 30):", blas_corename());
    for (int t = 1; t <= maxt; t++)
        printf(" %d thread%s %.1f GFLOPS%s", t, t > 1 ? "s" : "", probe[t], t < maxt ? "," : "\n");

    int H = 28, W = 28 * digits;
    rng r;
    rng_init(&r, 714, RNG_STREAM('b', 'e', 'n', 'c'));
    uint8_t *img = malloc((size_t)n * H * W);
    for (size_t i = 0; i < (size_t)n * H * W; i++)
        img[i] = (uint8_t)rng_below(&r, 256);
    struct {
        const char *name;
        model_config cfg;
    } heads[] = {{"point", {.digits = digits, .head = HEAD_POINT, .C = 1, .D = 2}},
                 {"MoG-1", {.digits = digits, .head = HEAD_MOG, .C = 1, .D = 2}},
                 {"MoG-2", {.digits = digits, .head = HEAD_MOG, .C = 2, .D = 2}}};
    printf("batch %d images of %dx%d; targets: train >= 15000 img/s, embed >= 50000 img/s (2 threads)\n", n, H, W);
    printf("%-6s %7s  %11s %7s %6s  %11s %7s %6s\n", "head", "threads", "embed img/s", "GFLOPS", "/probe",
           "train img/s", "GFLOPS", "/probe");
    for (size_t h = 0; h < sizeof heads / sizeof heads[0]; h++) {
        const model_config *cfg = &heads[h].cfg;
        int HO = model_outputs(cfg);
        double HW = (double)H * W, fwd = 1740 * HW + 240.0 * HO, fb = 4920 * HW + 720.0 * HO;
        measure(heads[h].name, cfg, img, n, reps, maxt, probe, fwd, fb, &r);
    }
    free(img);

    /* the mlp body (lib/network/body_mlp.c) on feature vectors: F = 784 (a Fashion-MNIST image as
     * features), mlp:512,256, heads point D = 64 and MoG-1 D = 64; flops 2 x the multiply-adds:
     * forward F W1 + W1 W2 + W2 HO, backward the weight gradients (the same) and the input
     * gradients of every layer but the first (W1 W2 + W2 HO) */
    enum { F = 784, W1 = 512, W2 = 256 };
    float *x = malloc((size_t)n * F * sizeof(float));
    for (size_t i = 0; i < (size_t)n * F; i++)
        x[i] = (float)rng_uniform(&r);
    struct {
        const char *name;
        int head, D;
    } mheads[] = {{"point", HEAD_POINT, 64}, {"MoG-1", HEAD_MOG, 64}};
    printf("mlp:%d,%d on %d features, batch %d\n", W1, W2, F, n);
    printf("%-6s %7s  %11s %7s %6s  %11s %7s %6s\n", "head", "threads", "embed it/s", "GFLOPS", "/probe",
           "train it/s", "GFLOPS", "/probe");
    for (size_t h = 0; h < sizeof mheads / sizeof mheads[0]; h++) {
        model_config cfg = {.head = mheads[h].head, .C = 1, .D = mheads[h].D, .features = F};
        body_parse(&cfg, "mlp:512,256");
        int HO = model_outputs(&cfg);
        double fwd = 2.0 * ((double)F * W1 + (double)W1 * W2 + (double)W2 * HO);
        double fb = fwd + fwd + 2.0 * ((double)W1 * W2 + (double)W2 * HO);
        measure(mheads[h].name, &cfg, x, n, reps, maxt, probe, fwd, fb, &r);
    }
    free(x);

    /* issue 35's wide head: 512 features, mlp:512, point and MoG-1 at D = 128, batches of 256
     * pairs (512 items); flops per item forward 2 (F W + W HO), backward the weight gradients (the
     * same) and the hidden layer's input gradient 2 W HO (none for the first layer's input) */
    enum { WF = 512, WW = 512, WN = 512 };
    x = malloc((size_t)WN * WF * sizeof(float));
    for (size_t i = 0; i < (size_t)WN * WF; i++)
        x[i] = (float)rng_normal(&r);
    printf("issue 35's wide head: mlp:%d on %d features, D = 128, batch %d\n", WW, WF, WN);
    printf("%-6s %7s  %11s %7s %6s  %11s %7s %6s\n", "head", "threads", "embed it/s", "GFLOPS", "/probe",
           "train it/s", "GFLOPS", "/probe");
    for (size_t h = 0; h < sizeof mheads / sizeof mheads[0]; h++) {
        model_config cfg = {.head = mheads[h].head, .C = 1, .D = 128, .features = WF};
        body_parse(&cfg, "mlp:512");
        int HO = model_outputs(&cfg);
        double fwd = 2.0 * ((double)WF * WW + (double)WW * HO), fb = fwd + fwd + 2.0 * WW * HO;
        measure(mheads[h].name, &cfg, x, WN, reps, maxt, probe, fwd, fb, &r);
    }
    free(x);
    return 0;
}
