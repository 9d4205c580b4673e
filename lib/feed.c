/* feed: batch records to loss inputs (lib/feed.h) */
#include "feed.h"

#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "util.h"

enum { PER_IMAGE, IMAGE }; /* what a field holds for each image: one number, or the image */

/* The index of field name, checked for its whole type, since feed_next copies B items of the
 * size this type implies from each record: a label, match or query flag is a scalar (item shape
 * [], as batcher writes it); an image is uint8 [H, W] or [C, H, W] (its size: image_geometry).
 * The stream reader has checked every record against these types. */
static int need_field(const stream_header *h, const char *name, int dtype, int what)
{
    if (what == PER_IMAGE)
        return stream_field_need(NULL, h, name, dtype, 0, NULL);
    int fi = stream_field_need(NULL, h, name, dtype, FIELD_ANY, NULL);
    const stream_field *sf = &h->fields[fi];
    if (sf->ndim != 2 && sf->ndim != 3) {
        char got[160];
        die("input: field '%s' is %s, expected uint8 images, [H, W] or [C, H, W]", name,
            stream_field_describe(sf, got, sizeof got));
    }
    return fi;
}

/* the geometry of image field fi (need_field checked it is uint8 [H, W] or [C, H, W]): one
 * the network takes */
static void image_geometry(feed *f, const stream_header *h, int fi)
{
    const stream_field *sf = &h->fields[fi];
    int64_t C = sf->ndim == 3 ? sf->shape[0] : 1, H = sf->shape[sf->ndim - 2], W = sf->shape[sf->ndim - 1];
    /* (sizes beyond any bound before they are cut to int) */
    const char *bad = C > 1 << 20 || H > 1 << 20 || W > 1 << 20 ? "far too large for the network"
                                                              : model_check_input((int)C, (int)H, (int)W);
    if (bad)
        die("input images are %lldx%lldx%lld: %s", (long long)C, (long long)H, (long long)W, bad);
    f->channels = (int)C;
    f->height = (int)H;
    f->width = (int)W;
}

static int64_t need_meta(const stream_header *h, const char *key, int64_t lo, int64_t hi)
{
    int64_t v = header_int(h, key, -1);
    if (v < lo || v > hi)
        die("input header: %s stream without a plausible '%s' (%lld)", h->kind, key, (long long)v);
    return v;
}

void feed_open(feed *f, const stream_header *h)
{
    memset(f, 0, sizeof *f);
    f->f_img2 = f->f_cls2 = f->f_match = f->f_query = -1;
    if (!strcmp(h->kind, "pairbatch")) {
        f->kind = LOSS_PAIRS;
        f->f_img = need_field(h, "image1", DT_U8, IMAGE);
        f->f_img2 = need_field(h, "image2", DT_U8, IMAGE);
        f->f_cls = need_field(h, "class1", DT_I32, PER_IMAGE);
        f->f_cls2 = need_field(h, "class2", DT_I32, PER_IMAGE);
        f->f_match = need_field(h, "match", DT_U8, PER_IMAGE);
        image_geometry(f, h, f->f_img2);
        int c2 = f->channels, h2 = f->height, w2 = f->width;
        image_geometry(f, h, f->f_img);
        if (c2 != f->channels || h2 != f->height || w2 != f->width)
            die("input image1 and image2 differ in size");
        int64_t B = header_int(h, "batch", 128);
        if (B < 1 || B > 65536)
            die("input header has an implausible batch size %lld", (long long)B);
        f->maxbatch = (int)(2 * B);
    } else if (!strcmp(h->kind, "groupbatch")) {
        f->kind = LOSS_GROUPS;
        f->f_img = need_field(h, "image", DT_U8, IMAGE);
        f->f_cls = need_field(h, "class", DT_I32, PER_IMAGE);
        int64_t P = need_meta(h, "P", 1, 65536), K = need_meta(h, "K", 1, 65536);
        if (P * K > 131072)
            die("input header: P x K = %lld images per batch, more than 131072", (long long)(P * K));
        f->maxbatch = (int)(P * K);
    } else if (!strcmp(h->kind, "episodes")) {
        f->kind = LOSS_EPISODES;
        f->f_img = need_field(h, "image", DT_U8, IMAGE);
        f->f_cls = need_field(h, "class", DT_I32, PER_IMAGE);
        f->f_query = need_field(h, "query", DT_U8, PER_IMAGE);
        f->ways = (int)need_meta(h, "ways", 2, 65536);
        f->shots = (int)need_meta(h, "shots", 1, 65536);
        f->queries = (int)need_meta(h, "queries", 1, 65536);
        int64_t n = (int64_t)f->ways * (f->shots + f->queries);
        if (n > 131072)
            die("input header: episodes of %lld images, more than 131072", (long long)n);
        f->maxbatch = (int)n;
    } else {
        die("expected a batch stream (kind pairbatch, groupbatch or episodes, from `batcher`), got '%s' (from %s)",
            h->kind, h->program);
    }
    image_geometry(f, h, f->f_img);
    f->digits = f->channels == 1 && f->height == 28 && f->width % 28 == 0 ? f->width / 28 : 0;
    f->image_bytes = (size_t)f->channels * f->height * f->width;
    size_t nb = (size_t)f->maxbatch;
    f->images = ealloc_aligned(nb * f->image_bytes);
    f->cls = ealloc_aligned(nb * sizeof(int32_t));
    f->pa = ealloc_aligned(nb * sizeof(int32_t));
    f->pb = ealloc_aligned(nb * sizeof(int32_t));
    f->match = ealloc_aligned(nb);
    f->query = ealloc_aligned(nb);
}

int feed_next(feed *f, const stream_record *rec, loss_input *li)
{
    size_t img = f->image_bytes;
    int64_t B = record_batch(rec);
    int64_t n = f->kind == LOSS_PAIRS ? 2 * B : B;
    if (n < 1 || n > f->maxbatch)
        die("a batch of %lld images; the header announced at most %d", (long long)n, f->maxbatch);
    memset(li, 0, sizeof *li);
    li->n = (int)n;
    li->cls = f->cls;
    memcpy(f->images, rec->t[f->f_img].data, B * img);
    memcpy(f->cls, rec->t[f->f_cls].data, B * sizeof(int32_t));
    if (f->kind == LOSS_PAIRS) {
        memcpy(f->images + B * img, rec->t[f->f_img2].data, B * img);
        memcpy(f->cls + B, rec->t[f->f_cls2].data, B * sizeof(int32_t));
        memcpy(f->match, rec->t[f->f_match].data, B);
        for (int64_t k = 0; k < B; k++) {
            f->pa[k] = (int32_t)k;
            f->pb[k] = (int32_t)(B + k);
        }
        li->npairs = (int)B;
        li->pair_a = f->pa;
        li->pair_b = f->pb;
        li->match = f->match;
    } else if (f->kind == LOSS_EPISODES) {
        memcpy(f->query, rec->t[f->f_query].data, B);
        li->query = f->query;
    }
    return (int)n;
}

void feed_free(feed *f)
{
    free(f->images);
    free(f->cls);
    free(f->pa);
    free(f->pb);
    free(f->match);
    free(f->query);
    memset(f, 0, sizeof *f);
}

const char *feed_batcher_mode(int kinds)
{
    if (kinds & LOSS_PAIRS)
        return "batcher -m pairs";
    if (kinds & LOSS_EPISODES)
        return "batcher -m episodes";
    return "batcher -m pk";
}
