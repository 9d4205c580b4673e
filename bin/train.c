/* train: the feedback loop. Reads training batches from stdin (from `batcher`: pairs, P x K
 * groups or episodes; lib/training/feed.h turns a record into a loss input, and the loss says which kinds
 * it takes), repeats forward, loss, backward, update, and writes a checkpoint
 * (formats/checkpoint.md) atomically every --save-every steps, at the end, and on SIGINT/SIGTERM
 * or when its input fails. The --log reaches the disk before each checkpoint, and a resumed run
 * cuts it back to the checkpoint's step, so that log and checkpoint agree after a kill -9.
 * A checkpoint only moves forward: a run that has trained no step writes nothing (nor changes
 * the log), and a resumed run refuses an output that holds a checkpoint at a later step.
 */
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blas.h"
#include "body.h"
#include "ckpt.h"
#include "feed.h"
#include "loss.h"
#include "model.h"
#include "model_query.h"
#include "nn.h"
#include "optim.h"
#include "stream.h"
#include "lossopt.h"
#include "trainer.h"
#include "trainlog.h"
#include "util.h"

static const char *usage =
    "usage: train -o MODEL.ckpt [options] < batches\n"
    "  Trains an embedding network on batches from batcher and writes a checkpoint.\n";

/* the synopsis and, from the registries, the names --loss, --body and --head know and the
 * losses' settings (their help: man/train.1.scd) */
static const char *synopsis(void)
{
    static char buf[8192];
    char names[1024];
    size_t n = (size_t)snprintf(buf, sizeof buf, "%s  losses (--loss): %s", usage, loss_names(names, sizeof names));
    if (n < sizeof buf)
        n += (size_t)snprintf(buf + n, sizeof buf - n, "\n%s", model_names());
    if (n < sizeof buf)
        lossopt_help(buf + n, sizeof buf - n);
    return buf;
}

typedef struct {
    const char *out, *resume, *log, *loss;
    int head, C, D, optim, threads;
    lossopt lo; /* the loss's settings given (lib/training/lossopt.h) */
    double lr, lr_end, wd;
    long warmup;
    int nat;                 /* --lr-steps: the steps where the rate falls tenfold */
    int64_t at[LR_MAX_STEPS];
    int decay;
    long steps, save_every, snapshot_every;
    int steps_set, C_set, save_every_set, snapshot_every_set; /* given: they override a resumed checkpoint's */
    int settings;            /* --settings: list the loss's (or every loss's) settings and exit */
    int D_set, given;        /* given: RECIPE_LR ..., the schedule's options that win over --recipe's */
    const lr_recipe *recipe; /* --recipe: the schedule's defaults (lib/training/optim.h) */
    model_config body; /* --body: the body and its settings (lib/network/body.h); body -1: by the input */
    uint64_t seed;
} options;

static options parse_options(int argc, char **argv)
{
    options op = {.head = -1, .C = 1, .D = 2, .lr = 1e-3, .steps = 20000,
                  .save_every = CKPT_SAVE_EVERY, .seed = 714, .threads = 2, .optim = OPTIM_ADAM,
                  .body = {.body = -1}};
    enum { O_RESUME = 256, O_HEAD, O_LOSS, O_OPTIM, O_LR, O_SAVE, O_LOG, O_PROG, O_WARMUP, O_DECAY, O_LREND,
           O_SNAP, O_BODY, O_RECIPE, O_SETTINGS, O_LRSTEPS, O_WD, O_DROP, O_ENS,
           O_LOSSOPT /* + k: the losses' (lossopt.h) */ };
    static const struct option base[] = {
        {"out", 1, 0, 'o'},        {"resume", 1, 0, O_RESUME}, {"head", 1, 0, O_HEAD}, {"loss", 1, 0, O_LOSS},
        {"optim", 1, 0, O_OPTIM},  {"lr", 1, 0, O_LR},         {"steps", 1, 0, 'n'},   {"seed", 1, 0, 'S'},
        {"threads", 1, 0, 't'},    {"save-every", 1, 0, O_SAVE}, {"log", 1, 0, O_LOG}, {"progress", 0, 0, O_PROG},
        {"snapshot-every", 1, 0, O_SNAP}, {"warmup", 1, 0, O_WARMUP}, {"decay", 1, 0, O_DECAY}, {"lr-end", 1, 0, O_LREND},
        {"body", 1, 0, O_BODY},    {"recipe", 1, 0, O_RECIPE}, {"settings", 0, 0, O_SETTINGS}, {"help", 0, 0, 'h'},
        {"lr-steps", 1, 0, O_LRSTEPS}, {"wd", 1, 0, O_WD}, {"dropout", 1, 0, O_DROP},
        {"ensemble", 1, 0, O_ENS}};
    const struct option *lo = lossopt_longopts(base, sizeof base / sizeof *base, O_LOSSOPT);
    int c;
    while ((c = getopt_long(argc, argv, "o:C:D:K:n:S:t:h", lo, NULL)) != -1) {
        switch (c) {
        case 'o': op.out = optarg; break;
        case O_RESUME: op.resume = optarg; break;
        case O_HEAD:
            if ((op.head = model_head_parse(optarg)) < 0)
                usage_die("--head: '%s' is not point, mog, iso, pfe, pfe-iso or pfe-bn", optarg);
            break;
        case O_BODY: {
            const char *bad = body_parse(&op.body, optarg);
            if (bad)
                usage_die("--body: %s", bad);
            break;
        }
        case 'C': op.C = (int)parse_long("-C", optarg, 1, 64); op.C_set = 1; break;
        case 'D': op.D = (int)parse_long("-D", optarg, 1, 4096); op.D_set = 1; break;
        case 'K': lossopt_add(&op.lo, lossopt_index("K"), optarg); break;
        case O_LOSS: op.loss = optarg; break;
        case O_OPTIM:
            if ((op.optim = !strcmp(optarg, "adam") ? OPTIM_ADAM : !strcmp(optarg, "sgd") ? OPTIM_SGD : -1) < 0)
                usage_die("--optim: '%s' is not adam or sgd", optarg);
            break;
        case O_LR: op.lr = parse_double("--lr", optarg, 1e-12, 1e9), op.given |= RECIPE_LR; break;
        case O_WARMUP: op.warmup = parse_long("--warmup", optarg, 0, 1000000000L), op.given |= RECIPE_WARMUP; break;
        case O_DECAY:
            if ((op.decay = decay_parse(optarg)) < 0)
                usage_die("--decay: '%s' is not none, cosine or linear", optarg);
            op.given |= RECIPE_DECAY;
            break;
        case O_LREND: op.lr_end = parse_double("--lr-end", optarg, 0, 1), op.given |= RECIPE_END; break;
        case O_LRSTEPS:
            if ((op.nat = lr_steps_parse(optarg, op.at)) < 0)
                usage_die("--lr-steps: '%s' is not ascending steps from 1, comma-separated, at most %d", optarg,
                          LR_MAX_STEPS);
            op.decay = DECAY_STEPS, op.given |= RECIPE_DECAY;
            break;
        case O_WD: op.wd = parse_double("--wd", optarg, 0, 1); break;
        case O_DROP: op.body.dropout = (float)parse_double("--dropout", optarg, 0, MODEL_MAX_DROPOUT); break;
        case O_ENS: op.body.ensemble = (int)parse_long("--ensemble", optarg, 2, MODEL_MAX_ENSEMBLE); break;
        case O_RECIPE:
            if (!(op.recipe = lr_recipe_find(optarg)))
                usage_die("--recipe: '%s' is not paper or fast", optarg);
            break;
        case 'n': op.steps = parse_long("--steps", optarg, 0, 1000000000L); op.steps_set = 1; break;
        case 'S': op.seed = parse_u64("--seed", optarg); break;
        case 't': op.threads = (int)parse_long("--threads", optarg, 1, 64); break;
        case O_SAVE: op.save_every = parse_long("--save-every", optarg, 1, 1000000000L), op.save_every_set = 1; break;
        case O_SNAP:
            op.snapshot_every = parse_long("--snapshot-every", optarg, 1, 1000000000L), op.snapshot_every_set = 1;
            break;
        case O_LOG: op.log = optarg; break;
        case O_PROG: progress_force = 1; break;
        case O_SETTINGS: op.settings = 1; break;
        case 'h': usage_help();
        default:
            if (c < O_LOSSOPT || c >= O_LOSSOPT + lossopt_count())
                usage_bad_option(argv);
            lossopt_add(&op.lo, c - O_LOSSOPT, optarg);
        }
    }
    if (optind != argc)
        usage_die("unexpected argument '%s'", argv[optind]);
    if (op.settings) {
        if (lossopt_list(stdout, op.loss) < 0)
            usage_die("--loss: unknown loss '%s'", op.loss);
        exit(0);
    }
    if (!op.out)
        op.out = op.resume;
    if (!op.out)
        usage_die("-o MODEL.ckpt is required");
    if (!op.resume && op.steps == 0)
        usage_die("-n 0: a new run trains at least one step");
    if (op.C * op.D > 4096)
        usage_die("-C %d x -D %d: at most 4096 embedding outputs", op.C, op.D);
    if ((op.decay == DECAY_STEPS) != (op.nat > 0))
        usage_die("--decay steps goes with --lr-steps, which sets it");
    /* (a resumed run keeps its checkpoint's schedule, as it does with --lr) */
    lr_recipe_apply(op.recipe, op.steps, op.given, &op.lr, &op.warmup, &op.decay, &op.lr_end);
    return op;
}

static volatile sig_atomic_t got_signal;
static void on_signal(int sig) { got_signal = sig; }

/* the loss of a new run, checked against the head before any input is read */
static const loss_kind *choose_loss(options *op)
{
    const char *ln = op->loss ? op->loss : loss_default_name(op->head != HEAD_POINT);
    const loss_kind *L = loss_find(ln);
    char known[1024];
    if (!L)
        usage_die("--loss: unknown loss '%s'; known: %s", ln, loss_names(known, sizeof known));
    if (op->head < 0) /* no --head: the loss's own */
        op->head = model_head_parse(L->default_head ? L->default_head : L->needs_var ? "mog" : "point");
    if (L->needs_var && op->head == HEAD_POINT)
        usage_die("loss %s needs a stochastic head (--head %s)", ln, L->default_head ? L->default_head : "mog");
    if (!L->needs_var && op->head != HEAD_POINT)
        usage_die("loss %s works on point embeddings (--head point)", ln);
    if (op->head == HEAD_POINT && op->C_set && op->C != 1)
        usage_die("a point model has one component (-C 1)");
    if ((op->body.head = op->head, ckpt_ensemble_check(L, &op->body)))
        usage_die("%s", ckpt_ensemble_check(L, &op->body));
    int C0 = op->head == HEAD_POINT ? 1 : op->C;
    if (L->max_C && C0 > L->max_C)
        usage_die("loss %s takes %d component%s per image (-C %d)", ln, L->max_C, L->max_C > 1 ? "s" : "",
                  L->max_C);
    /* each setting given belongs to the loss, and what the loss derives from them is checked now
     * (a new run's own settings: start) */
    loss_config lc;
    const char *bad = lossopt_configure(&op->lo, L, op->D, 0, &lc);
    if (bad)
        usage_die("%s", bad);
    if (L->needs_var && lc.K % C0)
        usage_die("-K %d must be a multiple of -C %d (stratified sampling)", lc.K, C0);
    return L;
}

/* a new run: settings from the options, fresh weights */
static model *start(const options *op, const loss_kind *L, feed *f, ckpt_info *ci, optim **o)
{
    memset(ci, 0, sizeof *ci);
    ci->mc = op->body; /* the body and its settings; the rest from the options and the input */
    ci->mc.head = op->head;
    ci->mc.C = op->head == HEAD_POINT ? (op->body.ensemble ? op->body.ensemble : 1) : op->C;
    ci->mc.D = op->D;
    ci->mc.query = L->needs_query;
    if (L->needs_query && f->digits < 1)
        die("loss %s embeds each class's digit string with a query tower: it needs N-digit MNIST batches (meta "
            "digits), not %s", L->name, feed_items(f));
    const char *why = feed_model_input(f, &ci->mc, op->D_set);
    if (why)
        die("cannot build the model: %s", why);
    snprintf(ci->loss, sizeof ci->loss, "%s", L->name);
    const char *bad = lossopt_configure(&op->lo, L, op->D, f->shots, &ci->lc);
    if (bad) /* (checked by choose_loss already: the shots do not change a verdict) */
        usage_die("%s", bad);
    ci->optim_kind = op->optim;
    ci->lr = op->lr;
    ci->warmup = op->warmup;
    ci->decay = op->decay;
    ci->lr_end = op->lr_end;
    ci->nlr_steps = op->nat;
    memcpy(ci->lr_steps, op->at, sizeof ci->lr_steps);
    ci->wd = op->wd;
    ci->steps = op->steps;
    ci->seed = op->seed;
    ci->save_every = op->save_every;
    ci->snapshot_every = op->snapshot_every;
    ckpt_note_compute(ci);
    if (L->class_weights) { /* a row of weights per class of the stream */
        const char *no = feed_rows(f);
        if (no)
            die("loss %s learns a weight vector per class: %s", L->name, no);
        ci->nclasses = f->nclasses;
        if ((int64_t)ci->nclasses * ci->mc.D > (1 << 26))
            die("loss %s: %d classes x -D %d, more than 2^26 class weights", L->name, ci->nclasses, ci->mc.D);
    }
    const char *pn[LOSS_MAX_PARAMS];
    int64_t ps[2 * LOSS_MAX_PARAMS];
    int np = loss_params(L, ci->mc.D, ci->nclasses, pn, ps);
    model *m = model_create_shaped(&ci->mc, np, pn, ps, f->maxbatch);
    model_init(m, ci->seed);
    if (ci->mc.query)
        model_query_init(m, ci->seed);
    L->init_params(&ci->lc, m->params + m->nnet);
    model_init_extra(m, ci->seed);
    *o = optim_create(op->optim, m->nparams, op->lr);
    return m;
}

/* a resumed run: settings from the checkpoint (-n, --save-every and --snapshot-every when given
 * override them); *hdr gets its header, whose provenance is the command that started the run */
static model *resume(const options *op, feed *f, ckpt_info *ci, optim **o, int argc, char **argv,
                     stream_header **hdr)
{
    model *m = ckpt_load(op->resume, ci, o, f->maxbatch, hdr);
    const char *misfit = feed_fits(f, &ci->mc);
    if (!misfit && ci->nclasses)
        misfit = feed_same_classes(f, *hdr, ci->nclasses);
    if (misfit)
        die("%s: %s", op->resume, misfit);
    if (op->steps_set)
        ci->steps = op->steps;
    if (op->save_every_set)
        ci->save_every = op->save_every;
    if (op->snapshot_every_set)
        ci->snapshot_every = op->snapshot_every;
    ckpt_note_resume(ci, argc, argv);
    fprintf(stderr, "train: resuming %s at step %lld of %lld\n", op->resume, (long long)ci->step,
            (long long)ci->steps);
    if (ckpt_note_compute(ci))
        warn("%s was trained with OpenBLAS kernel / code path %s / %s so far; the rest runs on %s / %s, so "
             "the result may differ in the last bits from an uninterrupted run",
             op->resume, ci->blas_core, ci->code_path, blas_corename(), nn_code_path());
    return m;
}

int main(int argc, char **argv)
{
    util_start(argc, argv, synopsis());
    options op = parse_options(argc, argv);
    const loss_kind *L = op.resume ? NULL : choose_loss(&op);
    blas_init(argv, op.threads);
    /* the checkpoint and the log must be writable before any work: fail now, not at the first
     * save after --save-every steps */
    atomic_check(op.out);

    stream_reader *in = stream_open(stdin, "stdin");
    const stream_header *ih = in->header;
    feed f;
    feed_open(&f, ih);
    ckpt_info ci;
    optim *o;
    /* the provenance of every checkpoint: the command that started the run (a resumed run's
     * checkpoint has it; ci.resumed lists the resumes) */
    stream_header *rh = NULL;
    model *m = op.resume ? resume(&op, &f, &ci, &o, argc, argv, &rh) : start(&op, L, &f, &ci, &o);
    if (op.resume) {
        /* a checkpoint only moves forward (formats/checkpoint.md): a run from an earlier
         * snapshot does not write over a later checkpoint, and nothing to train writes nothing */
        int64_t at = ckpt_step_at(op.out);
        if (at > ci.step)
            die("%s is at step %lld, past step %lld where %s resumes: a resumed run does not move a checkpoint "
                "back (resume from %s, or give another -o)", op.out, (long long)at, (long long)ci.step, op.resume,
                op.out);
        if (ci.step >= ci.steps) {
            fprintf(stderr, "train: %s is at step %lld of %lld: nothing to train, %s left as it was\n", op.resume,
                    (long long)ci.step, (long long)ci.steps, op.out);
            exit(0);
        }
    }
    L = loss_find(ci.loss);
    if (!(L->batches & f.kind))
        die("loss %s does not take %s batches; feed it `%s`", ci.loss, loss_batch_name(f.kind),
            feed_batcher_mode(L->batches));
    ci.batch_images = f.maxbatch;
    trainlog g;
    trainlog_open(&g, op.log, op.resume != NULL, ci.step);

    /* on resume, the same batcher command is fed again: skip the batches already trained on */
    stream_record rec = {0};
    for (int64_t s = 0; s < ci.step; s++)
        if (!stream_read(in, &rec))
            die("input ended while skipping the %lld batches already trained on", (long long)ci.step);

    trainer t;
    trainer_init(&t, m, o, L, &ci, f.maxbatch);
    trainer_provenance(&t, argc, argv, rh, ih, &g);

    struct sigaction sa = {0};
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    trainer_guard(&t, op.out);

    progress pr;
    progress_start(&pr, "step", ci.steps);
    trainlog_start(&g);
    int ended = 0;
    while (ci.step < ci.steps && !got_signal) {
        if (!stream_read(in, &rec)) {
            ended = 1;
            break;
        }
        loss_input li;
        int n = feed_next(&f, &rec, in->name, in->count - 1, &li);
        loss_stats st = {0};
        double lv = trainer_step(&t, f.inputs, &li, &st);
        if (!isfinite(lv)) {
            fprintf(stderr, "train: loss is %g at step %lld; stopping: %s\n", lv, (long long)ci.step + 1,
                    trainer_last_good(&t));
            trainer_guard(&t, NULL);
            exit(1);
        }
        trainlog_step(&g, ci.step, ci.steps, n, lv, &st, o->lr);
        char extra[160];
        trainlog_progress(&g, f.kind == LOSS_PAIRS, lv, &st, extra, sizeof extra);
        progress_update(&pr, ci.step, extra);
        if (ci.step % ci.save_every == 0 && ci.step < ci.steps)
            trainer_save(&t, op.out);
        if (ci.snapshot_every && ci.step % ci.snapshot_every == 0)
            trainer_snapshot(&t, op.out);
    }
    progress_end(&pr, ci.step);
    trainer_guard(&t, NULL);
    if (ci.step == t.first_step) {
        fprintf(stderr, "train: %s before the first step: no step trained: %s left as it was\n",
                got_signal ? "interrupted" : "input ended", op.out);
        exit(got_signal ? 128 + got_signal : 1);
    }
    trainer_save(&t, op.out);
    double el = now_seconds() - g.t0;
    fprintf(stderr, "train: %lld steps, %lld images in %.1f s (%.0f images/s); checkpoint %s\n",
            (long long)ci.step, g.images, el, g.images / (el > 0 ? el : 1e-9), op.out);
    if (ended && ci.step < ci.steps)
        fprintf(stderr, "train: input ended after step %lld (of %lld)\n", (long long)ci.step, (long long)ci.steps);
    trainlog_close(&g);
    int rc = 0;
    if (got_signal) {
        fprintf(stderr, "train: interrupted; resume with --resume %s\n", op.out);
        rc = 128 + got_signal;
    }
    record_free(&rec);
    stream_close(in);
    feed_free(&f);
    model_free(m);
    optim_free(o);
    if (rh)
        header_free(rh);
    trainer_free(&t);
    return rc;
}
