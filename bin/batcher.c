/* batcher: reads a whole `images` stream into memory and writes training batches, endlessly by
 * default.
 *
 *   -m pairs  (kind pairbatch) HIB's two streams (section 2.3): image1 walks through the random
 *             stream, a seeded shuffle of all images, epoch after epoch; image2 comes with
 *             probability 1/2 from the class-specific stream (a random other image of image1's
 *             class; image1 itself only if its class has one image), otherwise from the random
 *             stream (a uniformly random image other than image1, drawn independently of the
 *             epoch shuffle). About half the pairs match; match = (class1 == class2), computed.
 *   -m pk     (kind groupbatch) P distinct classes x K images each, class-major. The classes
 *             cycle through a shuffled class order (reshuffled every cycle; the short last batch
 *             of a cycle is completed with other classes of that cycle); the K images of a class
 *             are distinct, unless the class has fewer than K, then all of them plus random
 *             repeats.
 *   -m episodes  (kind episodes) prototypical-network episodes: one record holds n classes x
 *             (S support + Q query) images, the n*S support images class-major, then the n*Q
 *             queries class-major in the same class order; field `query` says which is which.
 *             n = all classes (the default): every episode holds every class, in increasing
 *             class order; n smaller: the classes cycle as in pk (ceil(classes / n) episodes a
 *             cycle, each with n distinct classes). The S + Q images of a class are distinct
 *             unless the class has fewer, then all of them plus random repeats, and a query may
 *             be one of the support images (a warning says so once, at the start).
 *
 * Ending: endless by default, until the reader closes the pipe (EPIPE is a normal end: exit 0,
 * no message, no trailer). -e E stops after E epochs (pairs: every image once as image1 per
 * epoch, the last batch of an epoch short; pk: E class cycles; episodes of n < all classes: E
 * class cycles; episodes of all classes, where a cycle would be one episode: E times
 * ceil(images / (n (S + Q))) episodes, as many images as the input holds per epoch, drawn
 * independently, so not each image once); -n N after N batches (episodes). Both write the end
 * trailer. Without -e, pair batches are cut from the endless random stream: all are full, and
 * one may straddle two epochs.
 *
 * Determinism: batch i draws from rng_init(seed, tag ^ i), epoch e's shuffle from
 * rng_init(seed, tag' ^ e) (lib/data/batch.h); the same seed gives the same bytes.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "batch.h"
#include "stream.h"
#include "util.h"

static const char *usage =
    "usage: batcher [-m pairs|pk|episodes] [-b B] [-P P] [-K K] [-c N] [-s S] [-q Q] [-e E] [-n N]\n"
    "               [-S SEED] [--progress] [IN]\n"
    "  Batches an images stream for train: pairs, P x K groups or few-shot episodes.\n";

enum { MODE_PAIRS, MODE_PK, MODE_EPISODES };

typedef struct {
    int mode;
    long batch;        /* -b: pairs per batch */
    long P, K;         /* -P, -K */
    long ways;         /* -c: classes per episode, 0 = all the input has */
    long shots, queries; /* -s, -q: support and query images per class of an episode */
    long epochs;       /* -e: 0 = no epoch limit */
    long limit;        /* -n: 0 = no batch limit */
    uint64_t seed;     /* -S */
    const char *input; /* "-" = stdin */
} options;

static options parse_options(int argc, char **argv)
{
    options o = {.mode = MODE_PAIRS, .batch = 128, .P = 12, .K = 4, .ways = 0, .shots = 5, .queries = 5,
                 .seed = 714, .input = "-"};
    static const struct option longs[] = {{"progress", no_argument, 0, 'G'}, {0, 0, 0, 0}};
    int c, b_given = 0, pk_given = 0, ep_given = 0;
    while ((c = getopt_long(argc, argv, "m:b:P:K:c:s:q:e:n:S:h", longs, NULL)) != -1) {
        switch (c) {
        case 'm':
            if (!strcmp(optarg, "pairs"))
                o.mode = MODE_PAIRS;
            else if (!strcmp(optarg, "pk"))
                o.mode = MODE_PK;
            else if (!strcmp(optarg, "episodes"))
                o.mode = MODE_EPISODES;
            else
                usage_die("-m: unknown mode '%s' (pairs, pk or episodes)", optarg);
            break;
        case 'b': o.batch = parse_long("-b", optarg, 1, 1 << 20), b_given = 1; break;
        case 'P': o.P = parse_long("-P", optarg, 1, 1 << 16), pk_given = 1; break;
        case 'K': o.K = parse_long("-K", optarg, 1, 1 << 16), pk_given = 1; break;
        case 'c': o.ways = parse_long("-c", optarg, 2, INT32_MAX), ep_given = 1; break;
        case 's': o.shots = parse_long("-s", optarg, 1, 1 << 16), ep_given = 1; break;
        case 'q': o.queries = parse_long("-q", optarg, 1, 1 << 16), ep_given = 1; break;
        case 'e': o.epochs = parse_long("-e", optarg, 1, 1L << 40); break;
        case 'n': o.limit = parse_long("-n", optarg, 1, 1L << 50); break;
        case 'S': o.seed = parse_u64("-S", optarg); break;
        case 'G': progress_force = 1; break;
        case 'h': usage_help();
        default: usage_bad_option(argv);
        }
    }
    if (argc - optind > 1)
        usage_die("at most one input, got %d", argc - optind);
    /* an option of the other mode would be silently ignored */
    if (o.mode == MODE_PAIRS && pk_given)
        usage_die("-P and -K size the batches of -m pk; -m pairs batches take -b");
    if (o.mode == MODE_PK && b_given)
        usage_die("-b sizes the batches of -m pairs; -m pk batches are -P x -K");
    if (o.mode == MODE_EPISODES && (b_given || pk_given))
        usage_die("%s the batches of -m %s; -m episodes are -c x (-s + -q)",
                  b_given ? "-b sizes" : "-P and -K size", b_given ? "pairs" : "pk");
    if (o.mode != MODE_EPISODES && ep_given)
        usage_die("-c, -s and -q shape the episodes of -m episodes; -m %s batches take %s",
                  o.mode == MODE_PAIRS ? "pairs" : "pk", o.mode == MODE_PAIRS ? "-b" : "-P and -K");
    if (optind < argc)
        o.input = argv[optind];
    return o;
}

/* stdout as a stdio stream whose writes go straight to fd 1, where a reader that has gone
 * (EPIPE; SIGPIPE is ignored) ends the program quietly with status 0: that is how an endless
 * batcher is meant to stop. Any other write error reaches the stream writer, which dies. */
static ssize_t pipe_write(void *cookie, const char *buf, size_t n)
{
    size_t done = 0;
    while (done < n) {
        ssize_t w = write(STDOUT_FILENO, buf + done, n - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && errno == EPIPE)
            _exit(0); /* not exit(): stdio would try to flush this very stream again */
        if (w < 0)
            return -1;
        done += (size_t)w;
    }
    return (ssize_t)n;
}

static FILE *open_pipe_out(void)
{
    signal(SIGPIPE, SIG_IGN);
    stream_pipe_grow(STDOUT_FILENO);
    FILE *f = fopencookie(NULL, "w", (cookie_io_functions_t){.write = pipe_write});
    if (!f)
        die("cannot set up standard output: %s", strerror(errno));
    setvbuf(f, NULL, _IOFBF, 1 << 20);
    return f;
}

/* the item field: image (uint8, an images stream) or features (float32 [F], a features
 * stream); *name gets its name */
static int item_field(const stream_reader *in, const char **name)
{
    const stream_header *h = in->header;
    if (!strcmp(h->kind, "features")) {
        *name = "features";
        return stream_field_need(in->name, h, "features", DT_F32, 1, (int64_t[]){FIELD_ANY});
    }
    stream_expect_kind(in, "images"); /* (or features, above) */
    *name = "image";
    /* images of any shape (batch_pool copies whole items; train checks their geometry) */
    return stream_field_need(in->name, h, "image", DT_U8, FIELD_ANY, NULL);
}

static void read_pool(stream_reader *in, batch_pool *pool)
{
    const stream_header *h = in->header;
    const char *iname;
    int fi = item_field(in, &iname), fc = stream_field_need(in->name, h, "class", DT_I32, 0, NULL);
    if (h->batched)
        die("%s: expected unbatched %s, the stream is batched", in->name, h->kind);
    batch_pool_init(pool, shape_numel(h->fields[fi].ndim, h->fields[fi].shape) * (int64_t)dtype_size(h->fields[fi].dtype));
    stream_record rec = {0};
    progress pr;
    progress_start(&pr, h->kind[0] == 'f' ? "reading features" : "reading images", 0);
    int features = iname[0] == 'f';
    while (stream_read(in, &rec)) {
        if (features) { /* a NaN feature would poison every weight it meets in train */
            const tensor *t = &rec.t[fi];
            int64_t bad = floats_first_nonfinite(t->data, tensor_numel(t));
            if (bad >= 0)
                die("%s: record %lld: feature %lld is %g; feature vectors must be finite", in->name,
                    in->count - 1, (long long)bad, ((const float *)t->data)[bad]);
        }
        batch_pool_add(pool, rec.t[fi].data, *(const int32_t *)rec.t[fc].data);
        progress_update(&pr, pool->n, NULL);
    }
    progress_end(&pr, pool->n);
    record_free(&rec);
    batch_pool_index(pool);
}

/* the output header: the input's meta, plus batch, or P, K, or ways, shots, queries; the input
 * as lineage */
static stream_header *make_header(const options *o, const stream_header *in, int argc, char **argv)
{
    static const char *kind[] = {[MODE_PAIRS] = "pairbatch", [MODE_PK] = "groupbatch",
                                 [MODE_EPISODES] = "episodes"};
    /* images make image1, image2 / image (uint8); features features1, features2 / features
     * (float32 [F]) */
    int feat = header_field_find(in, "image") < 0;
    const stream_field *img = &in->fields[header_field_find(in, feat ? "features" : "image")];
    const char *n1 = feat ? "features1" : "image1", *n2 = feat ? "features2" : "image2",
               *n0 = feat ? "features" : "image";
    int dt = img->dtype;
    stream_header *h = header_new(kind[o->mode], 1);
    header_provenance(h, argc, argv);
    header_set_seed(h, o->seed);
    header_add_input(h, in);
    header_copy_meta(h, in);
    if (o->mode == MODE_PAIRS) {
        header_add_field(h, n1, dt, img->ndim, img->shape);
        header_add_field(h, n2, dt, img->ndim, img->shape);
        header_add_field(h, "class1", DT_I32, 0, NULL);
        header_add_field(h, "class2", DT_I32, 0, NULL);
        header_add_field(h, "match", DT_U8, 0, NULL);
        header_set_int(h, "batch", o->batch);
    } else if (o->mode == MODE_PK) {
        header_add_field(h, n0, dt, img->ndim, img->shape);
        header_add_field(h, "class", DT_I32, 0, NULL);
        header_set_int(h, "P", o->P);
        header_set_int(h, "K", o->K);
    } else {
        header_add_field(h, n0, dt, img->ndim, img->shape);
        header_add_field(h, "class", DT_I32, 0, NULL);
        header_add_field(h, "query", DT_U8, 0, NULL);
        header_set_int(h, "ways", o->ways);
        header_set_int(h, "shots", o->shots);
        header_set_int(h, "queries", o->queries);
    }
    return h;
}

/* classes of fewer than `need` items, warned about once, before any output: their batches repeat
 * items (`what` says how) */
static void warn_small(const batch_pool *pool, int64_t need, const char *label, const char *what)
{
    int32_t small = 0, smallest = 0;
    for (int32_t g = 0; g < pool->ngroups; g++)
        if (batch_group_size(pool, g) < need && (!small++ || batch_group_size(pool, g) < batch_group_size(pool, smallest)))
            smallest = g;
    if (small)
        warn("%d of %d classes have fewer than %s%lld images (class %d has %lld): their %s", small, pool->ngroups,
             label, (long long)need, pool->group_class[smallest], (long long)batch_group_size(pool, smallest), what);
}

static void write_pairs(const options *o, const batch_pool *pool, stream_writer *w, progress *pr)
{
    int64_t B = o->batch, n = pool->n, ib = pool->item_bytes;
    int64_t per_epoch = (n + B - 1) / B;
    int32_t *a = emalloc(B * sizeof *a), *b = emalloc(B * sizeof *b);
    uint8_t *img1 = emalloc(B * ib), *img2 = emalloc(B * ib), *match = emalloc(B);
    int32_t *c1 = emalloc(B * sizeof *c1), *c2 = emalloc(B * sizeof *c2);
    void *data[] = {img1, img2, c1, c2, match};
    batch_perm ep;
    batch_perm_init(&ep, n, o->seed, BATCH_TAG_EPOCH);
    for (int64_t i = 0; !o->limit || i < o->limit; i++) {
        int64_t pos = i * B, size = B;
        if (o->epochs) { /* batches restart at each epoch; its last one is short */
            int64_t e = i / per_epoch, j = i % per_epoch;
            if (e >= o->epochs)
                break;
            pos = e * n + j * B;
            size = n - j * B < B ? n - j * B : B;
        }
        batch_pairs(pool, &ep, o->seed, i, pos, size, a, b);
        for (int64_t k = 0; k < size; k++) {
            memcpy(img1 + k * ib, batch_item(pool, a[k]), ib);
            memcpy(img2 + k * ib, batch_item(pool, b[k]), ib);
            c1[k] = pool->cls[a[k]];
            c2[k] = pool->cls[b[k]];
            match[k] = c1[k] == c2[k];
        }
        stream_write_data(w, data, size);
        progress_update(pr, i + 1, NULL);
    }
    batch_perm_free(&ep);
    free(a), free(b), free(img1), free(img2), free(match), free(c1), free(c2);
}

static void write_pk(const options *o, const batch_pool *pool, stream_writer *w, progress *pr)
{
    int64_t PK = o->P * o->K, ib = pool->item_bytes, per_cycle = batch_per_cycle(pool, (int)o->P);
    int32_t *items = emalloc(PK * sizeof *items), *cls = emalloc(PK * sizeof *cls);
    uint8_t *img = emalloc(PK * ib);
    void *data[] = {img, cls};
    batch_perm cy;
    batch_perm_init(&cy, pool->ngroups, o->seed, BATCH_TAG_CYCLE);
    for (int64_t i = 0; !o->limit || i < o->limit; i++) {
        if (o->epochs && i >= o->epochs * per_cycle)
            break;
        batch_pk(pool, &cy, o->seed, i, (int)o->P, (int)o->K, items);
        for (int64_t k = 0; k < PK; k++) {
            memcpy(img + k * ib, batch_item(pool, items[k]), ib);
            cls[k] = pool->cls[items[k]];
        }
        stream_write_data(w, data, PK);
        progress_update(pr, i + 1, NULL);
    }
    batch_perm_free(&cy);
    free(items), free(cls), free(img);
}

/* what the mode needs of the input, before any output: two classes (pairs, episodes), -P classes
 * (pk), -c classes and an episode that fits one record (episodes: -c defaults to every class);
 * classes too small for a batch are warned about once */
static void check_mode(options *o, const batch_pool *pool)
{
    if (o->mode == MODE_PK) {
        if (o->P > pool->ngroups)
            die("the input has %d class%s, -P %ld needs at least that many", pool->ngroups,
                pool->ngroups == 1 ? "" : "es", o->P);
        warn_small(pool, o->K, "K = ", "groups repeat images: a positive pair may be an image with itself");
        return;
    }
    if (pool->ngroups < 2)
        die("the input has 1 class; %s", o->mode == MODE_PAIRS ? "pairs need at least 2 (every pair would match)"
                                                                : "an episode needs at least 2");
    if (o->mode == MODE_PAIRS) {
        warn_small(pool, 2, "", "matching pairs are an image with itself");
        return;
    }
    if (!o->ways)
        o->ways = pool->ngroups;
    if (o->ways > pool->ngroups)
        die("the input has %d classes, -c %ld needs at least that many", pool->ngroups, o->ways);
    int64_t B = o->ways * (o->shots + o->queries);
    if (pool->item_bytes && B > (int64_t)(UINT32_MAX / (uint64_t)pool->item_bytes))
        die("an episode of %lld images of %lld bytes does not fit one record (4 GB at most)",
            (long long)B, (long long)pool->item_bytes);
    warn_small(pool, o->shots + o->queries, "S + Q = ",
               "episodes repeat images, and a query may be one of the support images");
}

/* one record per episode: the n*S support images class-major, then the n*Q queries */
static void write_episodes(const options *o, const batch_pool *pool, stream_writer *w, progress *pr)
{
    int n = (int)o->ways, S = (int)o->shots, Q = (int)o->queries;
    int64_t nS = (int64_t)n * S, nQ = (int64_t)n * Q, B = nS + nQ, ib = pool->item_bytes;
    /* an epoch: a class cycle; with all classes in every episode, as many images as the input */
    int64_t per_epoch = n == pool->ngroups ? (pool->n + B - 1) / B : batch_per_cycle(pool, n);
    int32_t *groups = emalloc(n * sizeof *groups);
    int32_t *items = emalloc(B * sizeof *items), *cls = emalloc(B * sizeof *cls);
    uint8_t *img = emalloc(B * ib), *query = emalloc(B);
    memset(query, 0, nS);
    memset(query + nS, 1, nQ);
    void *data[] = {img, cls, query};
    batch_perm cy;
    batch_perm_init(&cy, pool->ngroups, o->seed, BATCH_TAG_CYCLE);
    for (int64_t i = 0; !o->limit || i < o->limit; i++) {
        if (o->epochs && i / per_epoch >= o->epochs)
            break;
        batch_episode(pool, &cy, o->seed, i, n, S, Q, groups, items, items + nS);
        for (int64_t k = 0; k < B; k++) {
            memcpy(img + k * ib, batch_item(pool, items[k]), ib);
            cls[k] = pool->cls[items[k]];
        }
        stream_write_data(w, data, B);
        progress_update(pr, i + 1, NULL);
    }
    batch_perm_free(&cy);
    free(groups), free(items), free(cls), free(img), free(query);
}

int main(int argc, char **argv)
{
    util_start(argc, argv, usage);
    options o = parse_options(argc, argv);
    stdout_not_terminal();

    stream_reader *in = stream_open_path(o.input);
    batch_pool pool;
    read_pool(in, &pool);
    check_mode(&o, &pool);

    stream_header *h = make_header(&o, in->header, argc, argv);
    FILE *out = open_pipe_out();
    stream_writer *w = stream_create(out, h);
    progress pr;
    progress_start(&pr, o.mode == MODE_EPISODES ? "episodes" : "batches", o.limit);
    if (o.mode == MODE_PAIRS)
        write_pairs(&o, &pool, w, &pr);
    else if (o.mode == MODE_PK)
        write_pk(&o, &pool, w, &pr);
    else
        write_episodes(&o, &pool, w, &pr);
    progress_end(&pr, stream_written(w));
    stream_finish(w);
    if (fclose(out) != 0)
        die("cannot write standard output: %s", strerror(errno));

    header_free(h);
    stream_close(in);
    batch_pool_free(&pool);
    close_stdout();
    return 0;
}
