/* train: the feedback loop. Reads training batches from stdin (from `batcher`), repeats
 * forward, loss, backward, update, and writes a checkpoint (formats/checkpoint.md) atomically
 * every --save-every steps, at the end, and on SIGINT/SIGTERM or when its input fails.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blas.h"
#include "ckpt.h"
#include "loss.h"
#include "model.h"
#include "nn.h"
#include "optim.h"
#include "rng.h"
#include "stream.h"
#include "util.h"

static const char *usage =
    "usage: train -o MODEL.ckpt [options] < batches\n"
    "  Trains an embedding network on a batch stream (kind pairbatch, from `batcher -m pairs`).\n"
    "  -o, --out PATH       checkpoint to write (atomically)\n"
    "      --resume PATH    continue exactly from PATH (its settings win; -o defaults to PATH).\n"
    "                       Feed the same batcher command: the first STEP batches are skipped.\n"
    "      --head H         point | mog (default mog)\n"
    "  -C N                 mixture components (default 1; point: 1)\n"
    "  -D N                 embedding dimensions (default 2)\n"
    "      --loss NAME      default softcon for point, vib for mog; see below\n"
    "  -K N                 samples per input for vib (default 8)\n"
    "      --beta X         KL weight for vib (default 1e-4)\n"
    "      --margin M       margin of the hard contrastive loss (default 1)\n"
    "      --a0 X --b0 X    initial a > 0 and b of the match probability\n"
    "      --optim NAME     adam | sgd (default adam, momentum 0.9 for sgd)\n"
    "      --lr X           learning rate, the peak of the schedule (default 1e-3)\n"
    "      --warmup N       linear warm-up of the rate over the first N steps (default 0)\n"
    "      --decay NAME     none | cosine | linear: after warm-up, decay the rate to lr x FRAC at the\n"
    "                       last step (-n); default none (the paper's recipe: Adam 1e-3, constant)\n"
    "      --lr-end FRAC    the last step's rate as a fraction of --lr (default 0)\n"
    "  -n, --steps N        training steps (default 20000; the paper used 500000)\n"
    "  -S, --seed N         seed of the initial weights and the samples (default 714)\n"
    "  -t, --threads N      threads (default 2: the machine's two cores)\n"
    "      --save-every N   checkpoint every N steps (default 1000)\n"
    "      --snapshot-every N  also keep a copy of the checkpoint every N steps, as PATH.stepS\n"
    "                       (PATH without its .ckpt, S the step, 9 digits) + .ckpt: for curves\n"
    "      --log FILE       training log, TSV: step loss nll kl a b mean_var images_per_s seconds lr\n"
    "      --progress       progress on stderr even when it is not a terminal\n"
    "  -h                   this help\n";

typedef struct {
    const char *out, *resume, *log, *loss;
    int head, C, D, K, optim, threads, progress;
    double beta, margin, a0, b0, lr, lr_end;
    long warmup;
    int decay;
    long steps, save_every, snapshot_every;
    int steps_set;
    uint64_t seed;
} options;

static volatile sig_atomic_t got_signal;
static void on_signal(int sig) { got_signal = sig; }

/* the state the die hook saves: consistent between steps only */
typedef struct {
    int ok;
    const char *path;
    ckpt_info *ci;
    model *m;
    optim *o;
    int argc;
    char **argv;
    const stream_header *input;
} saver_state;
static saver_state saver;

static void save_now(void)
{
    int ok = saver.ok;
    saver.ok = 0; /* a save that dies must not be tried again by the die hook */
    ckpt_save(saver.path, saver.ci, saver.m, saver.o, saver.argc, saver.argv, saver.input);
    saver.ok = ok;
}

static void die_hook(void)
{
    if (saver.ok) {
        saver.ok = 0;
        save_now();
        fprintf(stderr, "%s: saved the state after step %lld to %s\n", util_prog, (long long)saver.ci->step,
                saver.path);
    }
}

int main(int argc, char **argv)
{
    util_init(argv[0]);
    util_usage = usage;
    options op = {.head = HEAD_MOG, .C = 1, .D = 2, .K = -1, .beta = -1, .margin = -1, .a0 = NAN,
                  .b0 = NAN, .lr = 1e-3, .steps = 20000, .save_every = 1000, .seed = 714, .threads = 2,
                  .optim = OPTIM_ADAM};
    enum { O_RESUME = 256, O_HEAD, O_LOSS, O_BETA, O_MARGIN, O_A0, O_B0, O_OPTIM, O_LR, O_SAVE, O_LOG, O_PROG,
           O_WARMUP, O_DECAY, O_LREND, O_SNAP };
    static const struct option lo[] = {
        {"out", 1, 0, 'o'},        {"resume", 1, 0, O_RESUME}, {"head", 1, 0, O_HEAD}, {"loss", 1, 0, O_LOSS},
        {"beta", 1, 0, O_BETA},    {"margin", 1, 0, O_MARGIN}, {"a0", 1, 0, O_A0},     {"b0", 1, 0, O_B0},
        {"optim", 1, 0, O_OPTIM},  {"lr", 1, 0, O_LR},         {"steps", 1, 0, 'n'},   {"seed", 1, 0, 'S'},
        {"threads", 1, 0, 't'},    {"save-every", 1, 0, O_SAVE}, {"log", 1, 0, O_LOG}, {"progress", 0, 0, O_PROG},
        {"snapshot-every", 1, 0, O_SNAP}, {"warmup", 1, 0, O_WARMUP}, {"decay", 1, 0, O_DECAY}, {"lr-end", 1, 0, O_LREND},
        {"help", 0, 0, 'h'},       {0, 0, 0, 0}};
    int c, set_c = 0;
    while ((c = getopt_long(argc, argv, "o:C:D:K:n:S:t:h", lo, NULL)) != -1) {
        switch (c) {
        case 'o': op.out = optarg; break;
        case O_RESUME: op.resume = optarg; break;
        case O_HEAD:
            if (!strcmp(optarg, "point"))
                op.head = HEAD_POINT;
            else if (!strcmp(optarg, "mog"))
                op.head = HEAD_MOG;
            else
                usage_die("--head: '%s' is not point or mog", optarg);
            break;
        case 'C': op.C = (int)parse_long("-C", optarg, 1, 64); set_c = 1; break;
        case 'D': op.D = (int)parse_long("-D", optarg, 1, 4096); break;
        case 'K': op.K = (int)parse_long("-K", optarg, 1, 1024); break;
        case O_LOSS: op.loss = optarg; break;
        case O_BETA: op.beta = parse_double("--beta", optarg, 0, 1e6); break;
        case O_MARGIN: op.margin = parse_double("--margin", optarg, 0, 1e6); break;
        case O_A0: op.a0 = parse_double("--a0", optarg, 1e-6, 1e6); break;
        case O_B0: op.b0 = parse_double("--b0", optarg, -1e6, 1e6); break;
        case O_OPTIM:
            if (!strcmp(optarg, "adam"))
                op.optim = OPTIM_ADAM;
            else if (!strcmp(optarg, "sgd"))
                op.optim = OPTIM_SGD;
            else
                usage_die("--optim: '%s' is not adam or sgd", optarg);
            break;
        case O_LR: op.lr = parse_double("--lr", optarg, 1e-12, 1e9); break;
        case O_WARMUP: op.warmup = parse_long("--warmup", optarg, 0, 1000000000L); break;
        case O_DECAY:
            if ((op.decay = decay_parse(optarg)) < 0)
                usage_die("--decay: '%s' is not none, cosine or linear", optarg);
            break;
        case O_LREND: op.lr_end = parse_double("--lr-end", optarg, 0, 1); break;
        case 'n': op.steps = parse_long("--steps", optarg, 0, 1000000000L); op.steps_set = 1; break;
        case 'S': op.seed = parse_u64("--seed", optarg); break;
        case 't': op.threads = (int)parse_long("--threads", optarg, 1, 64); break;
        case O_SAVE: op.save_every = parse_long("--save-every", optarg, 1, 1000000000L); break;
        case O_SNAP: op.snapshot_every = parse_long("--snapshot-every", optarg, 1, 1000000000L); break;
        case O_LOG: op.log = optarg; break;
        case O_PROG: progress_force = 1; break;
        case 'h': usage_help();
        default: usage_die("unknown option");
        }
    }
    if (optind != argc)
        usage_die("unexpected argument '%s'", argv[optind]);
    if (!op.out)
        op.out = op.resume;
    if (!op.out)
        usage_die("-o MODEL.ckpt is required");
    if (op.C * op.D > 4096)
        usage_die("-C %d x -D %d: at most 4096 embedding outputs", op.C, op.D);
    if (op.head == HEAD_POINT && set_c && op.C != 1)
        usage_die("a point model has one component (-C 1)");
    /* options are checked before any input is read */
    const loss_kind *L = NULL;
    const char *ln = NULL;
    if (!op.resume) {
        ln = op.loss ? op.loss : (op.head == HEAD_POINT ? "softcon" : "vib");
        L = loss_find(ln);
        if (!L) {
            fprintf(stderr, "train: unknown loss '%s'; known:", ln);
            for (int i = 0; loss_kinds[i]; i++)
                fprintf(stderr, " %s", loss_kinds[i]->name);
            fputc('\n', stderr);
            exit(2);
        }
        if (L->needs_var && op.head == HEAD_POINT)
            usage_die("loss %s needs a stochastic head (--head mog)", ln);
        if (!L->needs_var && op.head == HEAD_MOG)
            usage_die("loss %s works on point embeddings (--head point)", ln);
        int C0 = op.head == HEAD_POINT ? 1 : op.C, K0 = op.K > 0 ? op.K : loss_defaults.K;
        if (L->needs_var && K0 % C0)
            usage_die("-K %d must be a multiple of -C %d (stratified sampling)", K0, C0);
    }
    blas_init(argv, op.threads);
    /* the checkpoint and the log must be writable before any work: fail now, not at the first
     * save after --save-every steps */
    atomic_check(op.out);

    stream_reader *in = stream_open(stdin, "stdin");
    const stream_header *ih = in->header;
    if (strcmp(ih->kind, "pairbatch"))
        die("expected a stream of kind 'pairbatch' (from `batcher -m pairs`), got '%s' (from %s)", ih->kind,
            ih->program);
    int f_i1 = stream_field_typed(ih, "image1", DT_U8), f_i2 = stream_field_typed(ih, "image2", DT_U8);
    int f_c1 = stream_field_typed(ih, "class1", DT_I32), f_c2 = stream_field_typed(ih, "class2", DT_I32);
    int f_m = stream_field_typed(ih, "match", DT_U8);
    const stream_field *imf = &ih->fields[f_i1];
    if (imf->ndim != 2 || imf->shape[0] != 28 || imf->shape[1] % 28 || imf->shape[1] / 28 < 1)
        die("input images are not 28 x 28N");
    int digits = (int)(imf->shape[1] / 28);
    int64_t pairs_max = header_int(ih, "batch", 128);
    if (pairs_max < 1 || pairs_max > 65536)
        die("input header has an implausible batch size %lld", (long long)pairs_max);

    ckpt_info ci;
    model *m;
    optim *o;
    int maxbatch = (int)(2 * pairs_max);
    if (op.resume) {
        m = ckpt_load(op.resume, &ci, &o, maxbatch, NULL);
        L = loss_find(ci.loss);
        if (ci.mc.digits != digits)
            die("%s was trained on %d-digit images, the input has %d digits", op.resume, ci.mc.digits, digits);
        if (op.steps_set)
            ci.steps = op.steps;
        fprintf(stderr, "train: resuming %s at step %lld of %lld\n", op.resume, (long long)ci.step,
                (long long)ci.steps);
        if (ckpt_note_compute(&ci))
            warn("%s was trained with OpenBLAS kernel / code path %s / %s so far; the rest runs on %s / %s, so "
                 "the result may differ in the last bits from an uninterrupted run",
                 op.resume, ci.blas_core, ci.code_path, blas_corename(), nn_code_path());
    } else {
        memset(&ci, 0, sizeof ci);
        ci.mc = (model_config){.digits = digits, .head = op.head, .C = op.head == HEAD_POINT ? 1 : op.C, .D = op.D};
        snprintf(ci.loss, sizeof ci.loss, "%s", ln);
        ci.lc = loss_defaults;
        if (op.K > 0)
            ci.lc.K = op.K;
        if (op.beta >= 0)
            ci.lc.beta = op.beta;
        if (op.margin >= 0)
            ci.lc.margin = op.margin;
        if (!isnan(op.a0))
            ci.lc.a0 = op.a0;
        if (!isnan(op.b0))
            ci.lc.b0 = op.b0;
        ci.optim_kind = op.optim;
        ci.lr = op.lr;
        ci.warmup = op.warmup;
        ci.decay = op.decay;
        ci.lr_end = op.lr_end;
        ci.steps = op.steps;
        ci.seed = op.seed;
        ckpt_note_compute(&ci);
        m = model_create(&ci.mc, L->nparams, L->param_names, maxbatch);
        model_init(m, ci.seed);
        L->init_params(&ci.lc, m->params + m->nnet);
        o = optim_create(op.optim, m->nparams, op.lr);
    }
    if (L->needs_pairs == 0)
        die("loss %s does not take pair batches", ci.loss);
    ci.batch_images = maxbatch;

    FILE *logf = NULL;
    if (op.log) {
        logf = fopen(op.log, op.resume ? "a" : "w");
        if (!logf)
            die("cannot write %s: %s", op.log, strerror(errno));
        if (!op.resume)
            fprintf(logf, "step\tloss\tnll\tkl\ta\tb\tmean_var\timages_per_s\tseconds\tlr\n");
    }

    /* on resume, the same batcher command is fed again: skip the batches already trained on */
    stream_record rec = {0};
    for (int64_t s = 0; s < ci.step; s++)
        if (!stream_read(in, &rec))
            die("input ended while skipping the %lld batches already trained on", (long long)ci.step);

    int C = ci.mc.C, D = ci.mc.D, stoch = ci.mc.head == HEAD_MOG;
    size_t per = (size_t)C * D;
    uint8_t *imgs = ealloc_aligned((size_t)maxbatch * 28 * 28 * digits);
    int32_t *cls = ealloc_aligned(maxbatch * sizeof *cls), *pa = ealloc_aligned(pairs_max * 4),
            *pb = ealloc_aligned(pairs_max * 4);
    uint8_t *match = ealloc_aligned(pairs_max);
    float *mu = ealloc_aligned(maxbatch * per * 4), *var = stoch ? ealloc_aligned(maxbatch * per * 4) : NULL;
    float *dmu = ealloc_aligned(maxbatch * per * 4), *dvar = stoch ? ealloc_aligned(maxbatch * per * 4) : NULL;

    struct sigaction sa = {0};
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    saver = (saver_state){.ok = 1, .path = op.out, .ci = &ci, .m = m, .o = o, .argc = argc, .argv = argv, .input = ih};
    util_die_hook = die_hook;

    progress pr;
    progress_start(&pr, "step", ci.steps);
    double t0 = now_seconds(), tlast = t0;
    long long images_done = 0, images_last = 0;
    int64_t last_saved = ci.step;
    const size_t imgbytes = (size_t)28 * 28 * digits;
    int ended = 0;
    while (ci.step < ci.steps && !got_signal) {
        if (!stream_read(in, &rec)) {
            ended = 1;
            break;
        }
        int P = (int)record_batch(&rec), n = 2 * P;
        if (P > pairs_max)
            die("batch of %d pairs is larger than the header's %lld", P, (long long)pairs_max);
        memcpy(imgs, rec.t[f_i1].data, P * imgbytes);
        memcpy(imgs + P * imgbytes, rec.t[f_i2].data, P * imgbytes);
        memcpy(cls, rec.t[f_c1].data, P * 4);
        memcpy(cls + P, rec.t[f_c2].data, P * 4);
        memcpy(match, rec.t[f_m].data, P);
        for (int k = 0; k < P; k++) {
            pa[k] = k;
            pb[k] = P + k;
        }
        saver.ok = 0; /* parameters change from here until the step is complete */
        model_forward(m, imgs, n, mu, var);
        loss_input li = {.n = n, .C = C, .D = D, .mu = mu, .var = var, .cls = cls, .npairs = P, .pair_a = pa,
                         .pair_b = pb, .match = match};
        memset(m->grads, 0, m->nparams * sizeof(float));
        rng r;
        rng_init(&r, ci.seed, RNG_STREAM('l', 'o', 's', 's') ^ (uint64_t)ci.step);
        loss_stats st = {0};
        double lv = L->forward_backward(&ci.lc, &li, m->params + m->nnet, m->grads + m->nnet, dmu, dvar, &r, &st);
        if (!isfinite(lv)) {
            fprintf(stderr, "train: loss is %g at step %lld; stopping. The last good checkpoint (step %lld) is %s\n",
                    lv, (long long)ci.step + 1, (long long)last_saved, op.out);
            util_die_hook = NULL;
            exit(1);
        }
        model_backward(m, dmu, dvar);
        lr_schedule sched = {.lr = ci.lr, .warmup = ci.warmup, .decay = ci.decay, .end_frac = ci.lr_end,
                             .steps = ci.steps};
        o->lr = lr_at(&sched, ci.step);
        optim_step(o, m->params, m->grads);
        ci.step++;
        images_done += n;
        saver.ok = 1;
        double t = now_seconds();
        if (logf && (ci.step % 50 == 0 || ci.step == ci.steps)) {
            double rate = (images_done - images_last) / (t - tlast > 0 ? t - tlast : 1e-9);
            fprintf(logf, "%lld\t%.6g\t%.6g\t%.6g\t%.6g\t%.6g\t%.6g\t%.0f\t%.2f\t%.6g\n", (long long)ci.step, lv, st.nll,
                    st.kl, st.a, st.b, st.mean_var, rate, t - t0, o->lr);
            tlast = t;
            images_last = images_done;
        }
        char extra[160];
        snprintf(extra, sizeof extra, "loss %.4f a %.3f b %.3f var %.3g %.0f img/s", lv, st.a, st.b, st.mean_var,
                 images_done / (t - t0 > 0 ? t - t0 : 1e-9));
        progress_update(&pr, ci.step, extra);
        if (ci.step % op.save_every == 0 && ci.step < ci.steps) {
            save_now();
            last_saved = ci.step;
        }
        if (op.snapshot_every && ci.step % op.snapshot_every == 0) {
            char snap[4096];
            size_t n = strlen(op.out);
            int base = n > 5 && !strcmp(op.out + n - 5, ".ckpt") ? (int)n - 5 : (int)n;
            snprintf(snap, sizeof snap, "%.*s.step%09lld.ckpt", base, op.out, (long long)ci.step);
            saver.ok = 0;
            ckpt_save(snap, &ci, m, o, argc, argv, ih);
            saver.ok = 1;
        }
    }
    progress_end(&pr, ci.step);
    util_die_hook = NULL;
    save_now();
    double el = now_seconds() - t0;
    fprintf(stderr, "train: %lld steps, %lld images in %.1f s (%.0f images/s); checkpoint %s\n",
            (long long)ci.step, images_done, el, images_done / (el > 0 ? el : 1e-9), op.out);
    if (ended && ci.step < ci.steps)
        fprintf(stderr, "train: input ended after step %lld (of %lld)\n", (long long)ci.step, (long long)ci.steps);
    if (logf && fclose(logf) != 0)
        die("cannot write %s", op.log);
    int rc = 0;
    if (got_signal) {
        fprintf(stderr, "train: interrupted; resume with --resume %s\n", op.out);
        rc = 128 + got_signal;
    }
    record_free(&rec);
    stream_close(in);
    model_free(m);
    optim_free(o);
    free(imgs); free(cls); free(pa); free(pb); free(match); free(mu); free(var); free(dmu); free(dvar);
    return rc;
}
