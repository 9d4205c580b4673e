/* batcher: unit tests of lib/data/batch.c, and the helpers of tests/shell/batcher.sh.
 *
 *   test_batcher                          unit tests of the pool, epochs, pairs, pk and episode
 *                                         draws
 *   test_batcher --fixture C M            a synthetic `images` stream on stdout: C classes, M
 *                                         images each, except one class of 1 and one of 2
 *                                         images; every image distinct
 *   test_batcher --check-pairs IN         checks the pairbatch stream on stdin against the
 *                                         images in IN (see check_pairs)
 *   test_batcher --check-epochs IN E B    ... that it is E epochs of batches of B pairs, each
 *                                         epoch every input image exactly once as image1
 *   test_batcher --check-pk IN P K        checks the groupbatch stream on stdin
 *   test_batcher --check-episodes IN n S Q E   checks the episodes stream on stdin: n classes
 *                                         (0: all of IN's) x (S support + Q query); E > 0: it
 *                                         is E epochs long (see check_episodes)
 *
 * The checkers identify each batch image with the input image of the same pixels (and class),
 * so they work on any images stream (mkdigits' as well as the fixture). They print what they
 * checked and exit 1 on the first class of failure (every failure is printed).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "batch.h"
#include "check.h"
#include "rng.h"
#include "stream.h"
#include "util.h"

/* ------------------------------------------------------------------ unit tests */

/* classes 5 (1 item), 7 (2 items), 11 (3 items), 13 .. with `per` items; item i's pixels: i */
static void make_pool(batch_pool *p, int nclass, int per)
{
    batch_pool_init(p, 4);
    int32_t i = 0;
    for (int c = 0; c < nclass; c++) {
        int m = c == 0 ? 1 : c == 1 ? 2 : c == 2 ? 3 : per;
        for (int k = 0; k < m; k++, i++) {
            int32_t cls = 5 + 2 * ((c * 7) % nclass); /* classes not in input order */
            batch_pool_add(p, &i, cls);
        }
    }
    batch_pool_index(p);
}

static void test_pool(void)
{
    batch_pool p;
    make_pool(&p, 10, 20);
    CHECK(p.n == 1 + 2 + 3 + 7 * 20);
    CHECK(p.ngroups == 10);
    for (int g = 0; g < p.ngroups; g++) {
        if (g)
            CHECK(p.group_class[g] > p.group_class[g - 1]);
        for (int64_t k = p.group_start[g]; k < p.group_start[g + 1]; k++) {
            int32_t it = p.by_group[k];
            CHECK(p.cls[it] == p.group_class[g]);
            CHECK(p.item_group[it] == g);
            CHECK(p.item_rank[it] == k - p.group_start[g]);
            if (k > p.group_start[g])
                CHECK(it > p.by_group[k - 1]);
            int32_t v;
            memcpy(&v, batch_item(&p, it), 4);
            CHECK(v == it);
        }
    }
    batch_pool_free(&p);
}

static void test_perm(void)
{
    batch_perm a, b;
    batch_perm_init(&a, 50, 714, BATCH_TAG_EPOCH);
    batch_perm_init(&b, 50, 714, BATCH_TAG_EPOCH);
    int differ = 0;
    for (int e = 0; e < 4; e++) {
        int seen[50] = {0};
        for (int i = 0; i < 50; i++) {
            int32_t x = batch_perm_at(&a, e * 50 + i);
            CHECK(x >= 0 && x < 50);
            seen[x]++;
            differ += e > 0 && x != batch_perm_at(&b, i); /* epoch 0 again, out of order */
        }
        for (int i = 0; i < 50; i++)
            CHECK(seen[i] == 1);
    }
    CHECK(differ > 100); /* each epoch has its own shuffle */
    CHECK(batch_perm_at(&a, 123) == batch_perm_at(&b, 123));
    batch_perm_free(&a);
    batch_perm_free(&b);
}

static void test_pairs(void)
{
    batch_pool p;
    make_pool(&p, 10, 20);
    batch_perm ep, ep2;
    batch_perm_init(&ep, p.n, 714, BATCH_TAG_EPOCH);
    batch_perm_init(&ep2, p.n, 714, BATCH_TAG_EPOCH);
    enum { B = 64, NB = 400 };
    int32_t a[B], b[B], a2[B], b2[B];
    long matches = 0, total = 0;
    for (int i = 0; i < NB; i++) {
        batch_pairs(&p, &ep, 714, i, (int64_t)i * B, B, a, b);
        for (int k = 0; k < B; k++) {
            int64_t m = batch_group_size(&p, p.item_group[a[k]]);
            CHECK(a[k] == batch_perm_at(&ep, (int64_t)i * B + k));
            CHECK(b[k] != a[k] || m == 1); /* never the same image, unless alone in its class */
            matches += p.cls[a[k]] == p.cls[b[k]];
            total++;
        }
    }
    /* expected: 1/2 (class stream) + 1/2 * P(a random other image shares the class) */
    double q = 0;
    for (int g = 0; g < p.ngroups; g++) {
        double m = (double)batch_group_size(&p, g);
        q += m * (m - 1) / ((double)p.n * (p.n - 1));
    }
    double want = 0.5 + 0.5 * q, sigma = sqrt(want * (1 - want) / total);
    CHECK_CLOSE((double)matches / total, want, 5 * sigma);
    /* batch i is a function of (seed, i) alone: recompute batch 7 after batch 300 */
    batch_pairs(&p, &ep2, 714, 300, 300 * B, B, a2, b2);
    batch_pairs(&p, &ep2, 714, 7, 7 * B, B, a2, b2);
    batch_pairs(&p, &ep, 714, 7, 7 * B, B, a, b);
    CHECK(!memcmp(a, a2, sizeof a) && !memcmp(b, b2, sizeof b));
    batch_pairs(&p, &ep2, 715, 7, 7 * B, B, a2, b2);
    CHECK(memcmp(b, b2, sizeof b) != 0);
    batch_perm_free(&ep);
    batch_perm_free(&ep2);
    batch_pool_free(&p);
}

static void test_pk(void)
{
    batch_pool p;
    make_pool(&p, 10, 20);
    batch_perm cy;
    batch_perm_init(&cy, p.ngroups, 714, BATCH_TAG_CYCLE);
    enum { P = 4, K = 5 };
    CHECK(batch_per_cycle(&p, P) == 3);
    int32_t items[P * K];
    for (int c = 0; c < 5; c++) {
        int cover[10] = {0};
        for (int j = 0; j < 3; j++) {
            int i = c * 3 + j;
            batch_pk(&p, &cy, 714, i, P, K, items);
            for (int g = 0; g < P; g++) {
                int32_t gr = p.item_group[items[g * K]];
                int64_t m = batch_group_size(&p, gr);
                cover[gr]++;
                int seen[20] = {0};
                for (int k = 0; k < K; k++) {
                    int32_t it = items[g * K + k];
                    CHECK(p.item_group[it] == gr); /* class-major */
                    seen[p.item_rank[it]]++;
                }
                for (int r = 0; r < m && r < 20; r++) /* distinct; all of a small class */
                    CHECK(m >= K ? seen[r] <= 1 : seen[r] >= 1);
                for (int h = 0; h < g; h++)
                    CHECK(p.item_group[items[h * K]] != gr);
            }
        }
        for (int g = 0; g < 10; g++)
            CHECK(cover[g] >= 1); /* every class at least once per cycle */
    }
    batch_perm_free(&cy);
    batch_pool_free(&p);
}

/* the checks every episode must pass: groups[j] is the class of support[j*S ..] and
 * query[j*Q ..]; the n groups are distinct; the S + Q items of a class are distinct when it has
 * at least S + Q items, and otherwise hold every item of the class (batch_pick) */
static void check_episode(const batch_pool *p, int n, int S, int Q, const int32_t *groups,
                          const int32_t *support, const int32_t *query)
{
    int *seen = calloc(p->n, sizeof *seen);
    for (int j = 0; j < n; j++) {
        int32_t g = groups[j];
        CHECK(g >= 0 && g < p->ngroups);
        for (int h = 0; h < j; h++)
            CHECK(groups[h] != g);
        for (int k = 0; k < S + Q; k++) {
            int32_t it = k < S ? support[j * S + k] : query[j * Q + k - S];
            CHECK(it >= 0 && it < p->n);
            CHECK(p->item_group[it] == g);
            seen[it]++;
        }
        int64_t m = batch_group_size(p, g);
        for (int64_t r = 0; r < m; r++) {
            int c = seen[p->by_group[p->group_start[g] + r]];
            CHECK(m >= S + Q ? c <= 1 : c >= 1);
        }
    }
    free(seen);
}

static void test_episodes(void)
{
    batch_pool p;
    make_pool(&p, 10, 20); /* classes of 1, 2, 3 and seven of 20 items */
    enum { S = 3, Q = 4, NE = 30, M = 10 };
    int32_t g[M], sup[M * S], qry[M * Q], g2[M], sup2[M * S], qry2[M * Q];

    /* n = all classes: every group in increasing class order; cy is not needed */
    int32_t allg[NE][M], alls[NE][M * S], allq[NE][M * Q];
    for (int i = 0; i < NE; i++) {
        batch_episode(&p, NULL, 714, i, M, S, Q, allg[i], alls[i], allq[i]);
        for (int j = 0; j < M; j++)
            CHECK(allg[i][j] == j);
        check_episode(&p, M, S, Q, allg[i], alls[i], allq[i]);
    }
    /* episode i alone (after others, out of order) equals the sequential one */
    batch_episode(&p, NULL, 714, 29, M, S, Q, g, sup, qry);
    batch_episode(&p, NULL, 714, 11, M, S, Q, g, sup, qry);
    CHECK(!memcmp(sup, alls[11], sizeof sup) && !memcmp(qry, allq[11], sizeof qry));
    /* episodes differ from one another, and with the seed */
    CHECK(memcmp(alls[11], alls[12], sizeof sup) != 0);
    batch_episode(&p, NULL, 715, 11, M, S, Q, g, sup, qry);
    CHECK(memcmp(sup, alls[11], sizeof sup) != 0);

    /* n < all: n distinct classes, cycling (ceil(10 / 4) = 3 episodes a cycle, every class in
     * each); episode i alone equals the sequential one, whatever cy cached */
    enum { N = 4 };
    batch_perm cy, cy2;
    batch_perm_init(&cy, p.ngroups, 714, BATCH_TAG_CYCLE);
    batch_perm_init(&cy2, p.ngroups, 714, BATCH_TAG_CYCLE);
    CHECK(batch_per_cycle(&p, N) == 3);
    int32_t seqg[NE][N], seqs[NE][N * S], seqq[NE][N * Q];
    for (int c = 0; c < NE / 3; c++) {
        int cover[M] = {0};
        for (int j = 0; j < 3; j++) {
            int i = c * 3 + j;
            batch_episode(&p, &cy, 714, i, N, S, Q, seqg[i], seqs[i], seqq[i]);
            check_episode(&p, N, S, Q, seqg[i], seqs[i], seqq[i]);
            for (int k = 0; k < N; k++)
                cover[seqg[i][k]]++;
        }
        for (int k = 0; k < M; k++)
            CHECK(cover[k] >= 1);
    }
    batch_episode(&p, &cy2, 714, 25, N, S, Q, g2, sup2, qry2);
    batch_episode(&p, &cy2, 714, 4, N, S, Q, g2, sup2, qry2);
    CHECK(!memcmp(g2, seqg[4], N * sizeof *g2));
    CHECK(!memcmp(sup2, seqs[4], N * S * sizeof *sup2) && !memcmp(qry2, seqq[4], N * Q * sizeof *qry2));
    /* the classes are those of pk's cycles (batch_classes on the episode's generator) */
    rng r;
    rng_init(&r, 714, BATCH_TAG_EPISODE ^ 4);
    batch_classes(&p, &cy2, 4, N, &r, g2);
    CHECK(!memcmp(g2, seqg[4], N * sizeof *g2));

    /* S + Q = 20, the size of the big classes: each is drawn whole, every item once, so
     * support and query are disjoint (check_episode); group 0, the class of one item, gives
     * that item 20 times: it is then its own query */
    int32_t bs[M * 10], bq[M * 10];
    batch_episode(&p, NULL, 714, 3, M, 10, 10, g, bs, bq);
    check_episode(&p, M, 10, 10, g, bs, bq);
    CHECK(batch_group_size(&p, 0) == 1);
    for (int k = 0; k < 10; k++)
        CHECK(bs[k] == p.by_group[0] && bq[k] == p.by_group[0]);
    batch_perm_free(&cy);
    batch_perm_free(&cy2);
    batch_pool_free(&p);
}

/* ------------------------------------------------------------------ the fixture */

static int write_fixture(int nclass, int per)
{
    int64_t shape[2] = {28, 56}, two[1] = {2};
    stream_header *h = header_new("images", 0);
    char *argv[] = {"test_batcher", "--fixture"};
    header_provenance(h, 2, argv);
    header_set_seed(h, 714);
    header_add_field(h, "image", DT_U8, 2, shape);
    header_add_field(h, "class", DT_I32, 0, NULL);
    header_add_field(h, "digits", DT_U8, 1, two);
    header_add_field(h, "source", DT_I32, 1, two);
    header_add_field(h, "id", DT_I64, 0, NULL);
    header_set_int(h, "digits", 2);
    header_set_int(h, "height", 28);
    header_set_int(h, "width", 56);
    header_set_str(h, "split", "train");
    stream_writer *w = stream_create(stdout, h);
    uint8_t img[28 * 56];
    int64_t id = 0;
    for (int c = 0; c < nclass; c++) {
        int32_t cls = (c * 37 + 11) % 100;
        int m = c == 0 ? 1 : c == 1 ? 2 : per;
        for (int k = 0; k < m; k++, id++) {
            rng r;
            rng_init(&r, 714, RNG_STREAM('f', 'i', 'x', 0) ^ (uint64_t)id);
            for (int i = 0; i < 28 * 56; i++)
                img[i] = (uint8_t)(rng_u64(&r) >> 56);
            memcpy(img, &id, sizeof id); /* distinct pixels */
            uint8_t digits[2] = {(uint8_t)(cls / 10), (uint8_t)(cls % 10)};
            int32_t source[2] = {(int32_t)id, (int32_t)id};
            void *d[] = {img, &cls, digits, source, &id};
            stream_write_data(w, d, 0);
        }
    }
    stream_finish(w);
    header_free(h);
    close_stdout();
    return 0;
}

/* ------------------------------------------------------------------ the checkers */

/* the input images, found again by their pixels (open-addressing hash table) */
typedef struct {
    batch_pool pool;
    int64_t cap;
    int32_t *slot; /* -1 empty, else item index */
} image_set;

static uint64_t hash_bytes(const uint8_t *p, int64_t n)
{
    uint64_t h = 0x9e3779b97f4a7c15ULL;
    for (int64_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 0x100000001b3ULL;
    return rng_mix(h);
}

static void load_images(image_set *s, const char *path)
{
    stream_reader *in = stream_open_path(path);
    stream_expect_kind(in, "images");
    int fi = stream_field_need(NULL, in->header, "image", DT_U8, FIELD_ANY, NULL),
        fc = stream_field_need(NULL, in->header, "class", DT_I32, 0, NULL);
    batch_pool_init(&s->pool, shape_numel(in->header->fields[fi].ndim, in->header->fields[fi].shape));
    stream_record rec = {0};
    while (stream_read(in, &rec))
        batch_pool_add(&s->pool, rec.t[fi].data, *(int32_t *)rec.t[fc].data);
    record_free(&rec);
    stream_close(in);
    batch_pool_index(&s->pool);
    s->cap = 1;
    while (s->cap < 2 * s->pool.n)
        s->cap *= 2;
    s->slot = malloc(s->cap * sizeof *s->slot);
    memset(s->slot, 0xff, s->cap * sizeof *s->slot);
    for (int32_t i = 0; i < s->pool.n; i++) {
        uint64_t h = hash_bytes(batch_item(&s->pool, i), s->pool.item_bytes) & (s->cap - 1);
        while (s->slot[h] >= 0)
            h = (h + 1) & (s->cap - 1);
        s->slot[h] = i;
    }
}

static void free_images(image_set *s)
{
    batch_pool_free(&s->pool);
    free(s->slot);
}

/* index of an input image with these pixels and this class; -1 if there is none. Several
 * identical input images: the first one found (the caller only relies on pixels + class). */
static int32_t find_image(const image_set *s, const uint8_t *px, int32_t cls)
{
    uint64_t h = hash_bytes(px, s->pool.item_bytes) & (s->cap - 1);
    for (; s->slot[h] >= 0; h = (h + 1) & (s->cap - 1)) {
        int32_t i = s->slot[h];
        if (s->pool.cls[i] == cls && !memcmp(batch_item(&s->pool, i), px, s->pool.item_bytes))
            return i;
    }
    return -1;
}

static int64_t image_multiplicity(const image_set *s, int32_t idx)
{
    int64_t n = 0;
    uint64_t h = hash_bytes(batch_item(&s->pool, idx), s->pool.item_bytes) & (s->cap - 1);
    for (; s->slot[h] >= 0; h = (h + 1) & (s->cap - 1))
        n += s->pool.cls[s->slot[h]] == s->pool.cls[idx] &&
             !memcmp(batch_item(&s->pool, s->slot[h]), batch_item(&s->pool, idx), s->pool.item_bytes);
    return n;
}

static stream_reader *open_batches(const char *kind)
{
    stream_reader *r = stream_open(stdin, "stdin");
    stream_expect_kind(r, kind);
    CHECK(r->header->batched);
    CHECK(r->header->ninputs == 1 && !strcmp(r->header->inputs[0]->kind, "images"));
    return r;
}

/* every image1/image2 is an input image of that class; match == (class1 == class2); image2 is
 * never image1 itself unless that class has one image; the match fraction is within 5 sigma of
 * 1/2 + 1/2 * P(two random distinct images share a class) (and that of 1/2 when there are
 * many classes) */
static int check_pairs(const char *input)
{
    image_set s;
    load_images(&s, input);
    stream_reader *r = open_batches("pairbatch");
    const stream_header *h = r->header;
    int i1 = stream_field_need(NULL, h, "image1", DT_U8, FIELD_ANY, NULL),
        i2 = stream_field_need(NULL, h, "image2", DT_U8, FIELD_ANY, NULL);
    int c1 = stream_field_need(NULL, h, "class1", DT_I32, 0, NULL),
        c2 = stream_field_need(NULL, h, "class2", DT_I32, 0, NULL);
    int mt = stream_field_need(NULL, h, "match", DT_U8, 0, NULL);
    CHECK(header_int(h, "batch", -1) > 0);
    CHECK(header_int(h, "digits", -1) == header_int(h->inputs[0], "digits", -2)); /* meta copied */
    stream_record rec = {0};
    long pairs = 0, matches = 0, not_found = 0, bad_match = 0, self = 0;
    int64_t ib = s.pool.item_bytes;
    while (stream_read(r, &rec)) {
        int64_t B = record_batch(&rec);
        const uint8_t *x1 = rec.t[i1].data, *x2 = rec.t[i2].data, *m = rec.t[mt].data;
        const int32_t *y1 = rec.t[c1].data, *y2 = rec.t[c2].data;
        for (int64_t k = 0; k < B; k++) {
            int32_t a = find_image(&s, x1 + k * ib, y1[k]), b = find_image(&s, x2 + k * ib, y2[k]);
            not_found += a < 0 || b < 0;
            bad_match += m[k] != (y1[k] == y2[k]);
            if (a >= 0 && a == b && batch_group_size(&s.pool, s.pool.item_group[a]) > 1 &&
                image_multiplicity(&s, a) == 1)
                self++;
            matches += m[k];
            pairs++;
        }
    }
    double q = 0, n = (double)s.pool.n;
    for (int g = 0; g < s.pool.ngroups; g++) {
        double c = (double)batch_group_size(&s.pool, g);
        q += n > 1 ? c * (c - 1) / (n * (n - 1)) : 1;
    }
    double want = 0.5 + 0.5 * q, frac = pairs ? (double)matches / pairs : 0;
    double sigma = sqrt(0.25 / (pairs ? pairs : 1));
    printf("check-pairs: %lld batches, %ld pairs, match fraction %.4f (expected %.4f, 5 sigma %.4f)\n",
           r->count, pairs, frac, want, 5 * sigma);
    CHECK(pairs > 0);
    CHECK(not_found == 0);
    CHECK(bad_match == 0);
    CHECK(self == 0);
    CHECK_CLOSE(frac, want, 5 * sigma);
    if (q < 0.05) /* many classes: the fraction is about 1/2 */
        CHECK_CLOSE(frac, 0.5, 5 * sigma + 0.5 * q);
    record_free(&rec);
    stream_close(r);
    free_images(&s);
    return check_done("check-pairs");
}

/* E epochs of ceil(n / B) batches, the last of each epoch n mod B (or B) long; within each
 * epoch every input image appears exactly (its multiplicity) times as image1 */
static int check_epochs(const char *input, long E, long B)
{
    image_set s;
    load_images(&s, input);
    stream_reader *r = open_batches("pairbatch");
    int i1 = stream_field_need(NULL, r->header, "image1", DT_U8, FIELD_ANY, NULL),
        c1 = stream_field_need(NULL, r->header, "class1", DT_I32, 0, NULL);
    int64_t n = s.pool.n, per = (n + B - 1) / B, ib = s.pool.item_bytes;
    int64_t *seen = calloc(n, sizeof *seen);
    stream_record rec = {0};
    long bad_size = 0, not_found = 0, bad_cover = 0;
    while (stream_read(r, &rec)) {
        int64_t j = (r->count - 1) % per, size = record_batch(&rec);
        bad_size += size != (j == per - 1 ? n - j * B : B);
        for (int64_t k = 0; k < size; k++) {
            int32_t a = find_image(&s, (const uint8_t *)rec.t[i1].data + k * ib, ((int32_t *)rec.t[c1].data)[k]);
            if (a < 0)
                not_found++;
            else
                seen[a]++;
        }
        if (j == per - 1) { /* end of an epoch */
            for (int32_t i = 0; i < n; i++)
                if (seen[i] && seen[i] != image_multiplicity(&s, i))
                    bad_cover++;
                else if (!seen[i] && find_image(&s, batch_item(&s.pool, i), s.pool.cls[i]) == i)
                    bad_cover++; /* a first-found image never drawn */
            memset(seen, 0, n * sizeof *seen);
        }
    }
    printf("check-epochs: %lld batches = %ld epochs of %lld over %lld images\n", r->count, E,
           (long long)per, (long long)n);
    CHECK(r->count == E * per);
    CHECK(bad_size == 0);
    CHECK(not_found == 0);
    CHECK(bad_cover == 0);
    free(seen);
    record_free(&rec);
    stream_close(r);
    free_images(&s);
    return check_done("check-epochs");
}

/* P * K images per batch, class-major: exactly P distinct classes x K each, every image an
 * input image of its class, distinct within its class when the class has K or more images;
 * every complete cycle of ceil(classes / P) batches shows every class */
static int check_pk(const char *input, long P, long K)
{
    image_set s;
    load_images(&s, input);
    stream_reader *r = open_batches("groupbatch");
    const stream_header *h = r->header;
    int fi = stream_field_need(NULL, h, "image", DT_U8, FIELD_ANY, NULL),
        fc = stream_field_need(NULL, h, "class", DT_I32, 0, NULL);
    CHECK(header_int(h, "P", -1) == P && header_int(h, "K", -1) == K);
    int64_t ib = s.pool.item_bytes, per = batch_per_cycle(&s.pool, (int)P);
    int *cover = calloc(s.pool.ngroups, sizeof *cover);
    int32_t *idx = malloc(K * sizeof *idx);
    stream_record rec = {0};
    long bad_size = 0, not_found = 0, bad_group = 0, repeats = 0, bad_cover = 0, small_batches = 0;
    while (stream_read(r, &rec)) {
        bad_size += record_batch(&rec) != P * K;
        if (record_batch(&rec) != P * K)
            continue;
        const int32_t *y = rec.t[fc].data;
        for (long j = 0; j < P; j++) {
            long dup = 0;
            for (long k = 0; k < K; k++) {
                bad_group += y[j * K + k] != y[j * K];
                idx[k] = find_image(&s, (const uint8_t *)rec.t[fi].data + (j * K + k) * ib, y[j * K + k]);
                not_found += idx[k] < 0;
                for (long l = 0; l < k; l++)
                    dup += idx[k] >= 0 && idx[k] == idx[l];
            }
            for (long l = 0; l < j; l++)
                bad_group += y[l * K] == y[j * K];
            if (idx[0] >= 0) {
                int32_t g = s.pool.item_group[idx[0]];
                cover[g]++;
                if (batch_group_size(&s.pool, g) >= K)
                    repeats += dup; /* a class with K or more images: no repeats */
                else
                    small_batches += dup > 0;
            }
        }
        if (r->count % per == 0) { /* a cycle is complete */
            for (int g = 0; g < s.pool.ngroups; g++)
                bad_cover += cover[g] == 0;
            memset(cover, 0, s.pool.ngroups * sizeof *cover);
        }
    }
    long small = 0;
    for (int g = 0; g < s.pool.ngroups; g++)
        small += batch_group_size(&s.pool, g) < K;
    printf("check-pk: %lld batches of %ld x %ld, %d classes (%ld smaller than K, repeated in %ld "
           "groups)\n", r->count, P, K, s.pool.ngroups, small, small_batches);
    CHECK(r->count > 0);
    CHECK(bad_size == 0);
    CHECK(not_found == 0);
    CHECK(bad_group == 0);
    CHECK(repeats == 0);
    CHECK(bad_cover == 0);
    free(cover);
    free(idx);
    record_free(&rec);
    stream_close(r);
    free_images(&s);
    return check_done("check-pk");
}

/* n (0: every class of the input) classes x (S + Q) images per record: field query 0 for the
 * n*S first (the support, class-major), 1 for the n*Q last (the queries, class-major in the same
 * class order); n distinct classes, every image an input image of its class; the S + Q images
 * of a class distinct when it has that many; with every class, the classes in increasing order,
 * else every complete cycle of ceil(classes / n) episodes shows every class; meta ways, shots,
 * queries and the input's; E > 0: E epochs, of one cycle, or with every class of
 * ceil(images / (n (S + Q))) episodes */
static int check_episodes(const char *input, long n, long S, long Q, long E)
{
    image_set s;
    load_images(&s, input);
    if (!n)
        n = s.pool.ngroups;
    stream_reader *r = open_batches("episodes");
    const stream_header *h = r->header, *inh = h->inputs[0];
    int fi = stream_field_need(NULL, h, "image", DT_U8, FIELD_ANY, NULL),
        fc = stream_field_need(NULL, h, "class", DT_I32, 0, NULL);
    int fq = stream_field_need(NULL, h, "query", DT_U8, 0, NULL);
    CHECK(h->fields[fc].ndim == 0 && h->fields[fq].ndim == 0);
    const stream_field *inimg = &inh->fields[header_field_find(inh, "image")];
    CHECK(h->fields[fi].ndim == inimg->ndim);
    for (int d = 0; d < inimg->ndim && d < h->fields[fi].ndim; d++)
        CHECK(h->fields[fi].shape[d] == inimg->shape[d]);
    CHECK(header_int(h, "ways", -1) == n && header_int(h, "shots", -1) == S &&
          header_int(h, "queries", -1) == Q);
    CHECK(header_int(h, "height", -1) == header_int(inh, "height", -2)); /* meta copied */
    int all = n == s.pool.ngroups;
    int64_t ib = s.pool.item_bytes, B = n * (S + Q), nS = n * S;
    int64_t per = all ? (s.pool.n + B - 1) / B : batch_per_cycle(&s.pool, (int)n);
    int *cover = calloc(s.pool.ngroups, sizeof *cover);
    int32_t *idx = malloc((S + Q) * sizeof *idx);
    stream_record rec = {0};
    long bad_size = 0, bad_flag = 0, not_found = 0, bad_group = 0, bad_order = 0, repeats = 0,
         bad_cover = 0, small_episodes = 0;
    while (stream_read(r, &rec)) {
        bad_size += record_batch(&rec) != B;
        if (record_batch(&rec) != B)
            continue;
        const int32_t *y = rec.t[fc].data;
        const uint8_t *x = rec.t[fi].data, *q = rec.t[fq].data;
        for (int64_t k = 0; k < B; k++)
            bad_flag += q[k] != (k >= nS);
        for (long j = 0; j < n; j++) {
            int32_t cls = y[j * S];
            long dup = 0;
            for (long k = 0; k < S + Q; k++) {
                int64_t at = k < S ? j * S + k : nS + j * Q + (k - S); /* record position */
                bad_group += y[at] != cls;
                idx[k] = find_image(&s, x + at * ib, y[at]);
                not_found += idx[k] < 0;
                for (long l = 0; l < k; l++)
                    dup += idx[k] >= 0 && idx[k] == idx[l];
            }
            for (long l = 0; l < j; l++)
                bad_group += y[l * S] == cls;
            if (idx[0] < 0)
                continue;
            int32_t g = s.pool.item_group[idx[0]];
            bad_order += all && g != j;
            cover[g]++;
            if (batch_group_size(&s.pool, g) >= S + Q)
                repeats += dup; /* a class with S + Q or more images: no repeats */
            else
                small_episodes += dup > 0;
        }
        if (r->count % per == 0 && !all) { /* a cycle is complete */
            for (int g = 0; g < s.pool.ngroups; g++)
                bad_cover += cover[g] == 0;
            memset(cover, 0, s.pool.ngroups * sizeof *cover);
        }
    }
    long small = 0;
    for (int g = 0; g < s.pool.ngroups; g++)
        small += batch_group_size(&s.pool, g) < S + Q;
    printf("check-episodes: %lld episodes of %ld x (%ld + %ld), %d classes (%ld smaller than S + Q, "
           "repeats in %ld class draws), %lld episodes an epoch\n", r->count, n, S, Q, s.pool.ngroups,
           small, small_episodes, (long long)per);
    CHECK(r->count > 0);
    if (E > 0)
        CHECK(r->count == E * per);
    CHECK(bad_size == 0);
    CHECK(bad_flag == 0);
    CHECK(not_found == 0);
    CHECK(bad_group == 0);
    CHECK(bad_order == 0);
    CHECK(repeats == 0);
    CHECK(bad_cover == 0);
    free(cover);
    free(idx);
    record_free(&rec);
    stream_close(r);
    free_images(&s);
    return check_done("check-episodes");
}

int main(int argc, char **argv)
{
    util_init(argv[0]);
    if (argc == 4 && !strcmp(argv[1], "--fixture"))
        return write_fixture(atoi(argv[2]), atoi(argv[3]));
    if (argc == 3 && !strcmp(argv[1], "--check-pairs"))
        return check_pairs(argv[2]);
    if (argc == 5 && !strcmp(argv[1], "--check-epochs"))
        return check_epochs(argv[2], atol(argv[3]), atol(argv[4]));
    if (argc == 5 && !strcmp(argv[1], "--check-pk"))
        return check_pk(argv[2], atol(argv[3]), atol(argv[4]));
    if (argc == 7 && !strcmp(argv[1], "--check-episodes"))
        return check_episodes(argv[2], atol(argv[3]), atol(argv[4]), atol(argv[5]), atol(argv[6]));
    if (argc != 1) {
        fprintf(stderr, "usage: test_batcher [--fixture C M | --check-pairs IN | "
                        "--check-epochs IN E B | --check-pk IN P K | --check-episodes IN n S Q E] "
                        "(see the source)\n");
        return 2;
    }
    test_pool();
    test_perm();
    test_pairs();
    test_pk();
    test_episodes();
    return check_done("test_batcher");
}
