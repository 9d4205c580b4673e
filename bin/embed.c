/* embed: images or feature vectors in, embeddings out. Reads an `images` stream (a conv model)
 * or a `features` stream (a model with a features body: mlp, linear) and a checkpoint, writes an
 * `embeddings` stream: for each item the means (and, for a stochastic model, the variances) of
 * its C components, with every other field of the input passed through. Batched for speed.
 * --mc T (a model trained with --dropout): MC dropout, T forwards with dropout on, the masks by
 * SEED and each item's place in the stream (not the batch): mu the mean of the T means, var the
 * variance of the T means (plus the mean of the T variances for a stochastic head), a Gaussian
 * per item (model mog, C = 1). A deep ensemble (train --ensemble M) the same from its M members'
 * means: their mean, and their variance as the item's (model mog, C = 1, meta ensemble M).
 */
#include <getopt.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blas.h"
#include "ckpt.h"
#include "model.h"
#include "model_query.h"
#include "stream.h"
#include "util.h"

static const char *usage =
    "usage: embed -m MODEL.ckpt [-b BATCH] [-t THREADS] [--mc T [-S SEED]] [--hidden] < images|features > embeddings\n"
    "  Embeds an images or features stream with a checkpoint written by train (kind embeddings).\n"
    "  --hidden: also the body's output, the head's input (field hidden [F]): PFE's head input.\n";

/* one batch of input: images and the pass-through fields, filled by fill() */
typedef struct {
    stream_reader *in;
    stream_record *rec;
    int batch, f_img, npass, n, ended;
    int features; /* 1: the items are float feature vectors (checked finite) */
    size_t imgbytes;
    uint8_t *imgs;
    int pass_in[STREAM_MAXFIELDS];
    size_t pass_bytes[STREAM_MAXFIELDS];
    uint8_t *pass[STREAM_MAXFIELDS];
} batchbuf;

/* reads up to b->batch records (runs on the reader thread; dies like any reader on bad input) */
static void *fill(void *arg)
{
    batchbuf *b = arg;
    b->n = 0;
    while (b->n < b->batch) {
        if (!stream_read(b->in, b->rec)) {
            b->ended = 1;
            break;
        }
        memcpy(b->imgs + b->n * b->imgbytes, b->rec->t[b->f_img].data, b->imgbytes);
        if (b->features) {
            int64_t bad = floats_first_nonfinite(b->rec->t[b->f_img].data, (int64_t)(b->imgbytes / sizeof(float)));
            if (bad >= 0)
                die("%s: record %lld: feature %lld is %g; feature vectors must be finite", b->in->name,
                    b->in->count - 1, (long long)bad, ((const float *)b->rec->t[b->f_img].data)[bad]);
        }
        for (int k = 0; k < b->npass; k++)
            memcpy(b->pass[k] + b->n * b->pass_bytes[k], b->rec->t[b->pass_in[k]].data, b->pass_bytes[k]);
        b->n++;
    }
    return NULL;
}

/* the options into ckpt (-m), batch (-b), threads (-t), T (--mc), seed (-S), hidden (--hidden) */
static void parse_options(int argc, char **argv, const char **ckpt, int *batch, int *threads, int *T, uint64_t *seed,
                          int *hidden)
{
    int c, seed_set = 0;
    static const struct option longs[] = {
        {"help", no_argument, 0, 'h'}, {"mc", 1, 0, 'M'}, {"hidden", 0, 0, 'H'}, {0, 0, 0, 0}};
    while ((c = getopt_long(argc, argv, "m:b:t:S:h", longs, NULL)) != -1) {
        switch (c) {
        case 'm': *ckpt = optarg; break;
        case 'M': *T = (int)parse_long("--mc", optarg, 2, 10000); break;
        case 'H': *hidden = 1; break;
        case 'S': *seed = parse_u64("-S", optarg), seed_set = 1; break;
        case 'b': *batch = (int)parse_long("-b", optarg, 1, 65536); break;
        case 't': *threads = (int)parse_long("-t", optarg, 1, 64); break;
        case 'h': usage_help();
        default: usage_bad_option(argv);
        }
    }
    if (optind != argc)
        usage_die("unexpected argument '%s'", argv[optind]);
    if (!*ckpt)
        usage_die("-m MODEL.ckpt is required");
    if (seed_set && !*T)
        usage_die("-S seeds the masks of --mc: give --mc T");
    if (*hidden && *T)
        usage_die("--hidden with --mc: the body's output differs in every pass");
}

/* the embeddings' meta: the model (an ensemble's and MC dropout's a Gaussian per item), C, D, the
 * match probability's a and b when the loss learns one, the checkpoint, the loss, normalized for a
 * cosine-trained model, spe_se2 */
static void set_meta(stream_header *h, const ckpt_info *ci, const model *m, const char *ckpt, int T, int C, int D)
{
    header_set_str(h, "model", T || ci->mc.ensemble ? "mog" : model_head_name(ci->mc.head));
    if (ci->mc.ensemble)
        header_set_int(h, "ensemble", ci->mc.ensemble);
    if (T) {
        header_set_int(h, "mc_samples", T);
        header_set_float(h, "mc_dropout", ci->mc.dropout);
    }
    header_set_int(h, "C", C);
    header_set_int(h, "D", D);
    double a, b;
    if (ckpt_match_ab(m, &a, &b)) { /* a loss without one gets none (formats/stream.md) */
        header_set_float(h, "match_a", a);
        header_set_float(h, "match_b", b);
    }
    header_set_str(h, "checkpoint", ckpt);
    header_set_str(h, "loss", ci->loss);
    if (ci->mc.query)
        header_set_int(h, "normalized", 1);
    double se2 = ckpt_spe_se2(m);
    if (!isnan(se2))
        header_set_float(h, "spe_se2", se2);
}

int main(int argc, char **argv)
{
    util_start(argc, argv, usage);
    const char *ckpt = NULL;
    int batch = 256, threads = 1, T = 0, hidden = 0;
    uint64_t seed = 714;
    parse_options(argc, argv, &ckpt, &batch, &threads, &T, &seed, &hidden);
    stdout_not_terminal();
    blas_init(argv, threads);

    ckpt_info ci;
    stream_header *ch;
    model *m = ckpt_load(ckpt, &ci, NULL, batch, &ch);
    stream_reader *in = stream_open(stdin, "stdin");
    const stream_header *ih = in->header;
    int f_img = ckpt_input_field(m, ih, ckpt);

    /* an ensemble's M members (ci.mc.C of them) become one Gaussian: their mean and spread */
    int M = ci.mc.ensemble, stoch = ci.mc.head != HEAD_POINT || M, C = M ? 1 : ci.mc.C, D = ci.mc.D;
    if (T && M)
        usage_die("--mc: %s is an ensemble of %d: its members' spread is its variance already", ckpt, M);
    if (T && !(ci.mc.dropout > 0))
        usage_die("--mc: %s was trained without dropout (train --dropout P): its forwards are all the same", ckpt);
    if (T && C != 1)
        usage_die("--mc: a model of one component per item, not C = %d", C);
    stream_header *h = header_new("embeddings", 0);
    header_provenance(h, argc, argv);
    header_add_input(h, ih);
    header_add_input(h, ch);
    header_copy_meta(h, ih);
    set_meta(h, &ci, m, ckpt, T, C, D);
    int unit = ci.mc.query; /* cosine-trained: unit-length embeddings */
    int64_t cd[2] = {C, D};
    header_add_field(h, "mu", DT_F32, 2, cd);
    if (stoch || T)
        header_add_field(h, "var", DT_F32, 2, cd);
    int64_t hw = m->hw; /* the body's output per item, the head's input */
    if (hidden)
        header_add_field(h, "hidden", DT_F32, 1, &hw);
    /* pass-through fields: everything but the image (the features) */
    int npass = 0, pass_in[STREAM_MAXFIELDS];
    size_t pass_bytes[STREAM_MAXFIELDS];
    for (int i = 0; i < ih->nfields; i++) {
        if (i == f_img)
            continue;
        const stream_field *f = &ih->fields[i];
        if (header_field_find(h, f->name) >= 0)
            die("input field '%s' clashes with an output field", f->name);
        header_add_field(h, f->name, f->dtype, f->ndim, f->shape);
        pass_in[npass] = i;
        pass_bytes[npass] = (size_t)shape_numel(f->ndim, f->shape) * dtype_size(f->dtype);
        npass++;
    }
    stream_writer *out = stream_create(stdout, h);

    size_t imgbytes = model_input_bytes(m), per = (size_t)C * D;
    float *mu = ealloc_aligned(batch * per * 4), *var = stoch ? ealloc_aligned(batch * per * 4) : NULL;
    float *mcvar = T && !stoch ? ealloc_aligned(batch * per * 4) : NULL; /* --mc of a point head's var */
    float *members = M ? ealloc_aligned(batch * per * M * 4) : NULL;       /* an ensemble's (n, M, D) */
    /* two batch buffers: a reader thread fills the next batch while this one is embedded */
    batchbuf bb[2];
    for (int s = 0; s < 2; s++) {
        bb[s] = (batchbuf){.in = in, .batch = batch, .f_img = f_img, .imgbytes = imgbytes, .npass = npass,
                         .features = m->F > 0};
        bb[s].imgs = ealloc_aligned(batch * imgbytes);
        for (int k = 0; k < npass; k++) {
            bb[s].pass_in[k] = pass_in[k];
            bb[s].pass_bytes[k] = pass_bytes[k];
            bb[s].pass[k] = ealloc_aligned(batch * pass_bytes[k]);
        }
    }
    stream_record rec = {0};
    bb[0].rec = bb[1].rec = &rec; /* only one filler runs at a time */
    progress pr;
    progress_start(&pr, "images", -1);
    long long done = 0;
    int cur = 0;
    fill(&bb[0]);
    while (bb[cur].n > 0) {
        batchbuf *b = &bb[cur], *next = &bb[1 - cur];
        pthread_t th;
        int threaded = !b->ended && pthread_create(&th, NULL, fill, next) == 0;
        if (!threaded)
            next->n = 0;
        if (T)
            model_forward_mc(m, b->imgs, b->n, T, seed, done, unit, mu, stoch ? var : mcvar);
        else if (M) {
            model_forward(m, b->imgs, b->n, members, NULL);
            model_ensemble_moments(members, b->n, M, D, mu, var);
        } else
            model_forward(m, b->imgs, b->n, mu, var);
        if (unit && !T)
            for (int i = 0; i < b->n; i++)
                model_unit_length(mu + i * per, (int)per);
        for (int i = 0; i < b->n; i++) {
            void *d[STREAM_MAXFIELDS];
            int j = 0;
            d[j++] = mu + i * per;
            if (stoch)
                d[j++] = var + i * per;
            else if (T)
                d[j++] = mcvar + i * per;
            if (hidden)
                d[j++] = m->body_h + (size_t)i * m->hw;
            for (int k = 0; k < npass; k++)
                d[j++] = b->pass[k] + i * pass_bytes[k];
            stream_write_data(out, d, 0);
        }
        done += b->n;
        progress_update(&pr, done, NULL);
        if (threaded)
            pthread_join(th, NULL);
        cur = 1 - cur;
    }
    progress_end(&pr, done);
    stream_finish(out);
    close_stdout();
    record_free(&rec);
    stream_close(in);
    header_free(h);
    header_free(ch);
    model_free(m);
    free(mu);
    free(var);
    free(mcvar);
    free(members);
    for (int s = 0; s < 2; s++) {
        free(bb[s].imgs);
        for (int k = 0; k < npass; k++)
            free(bb[s].pass[k]);
    }
    return 0;
}
