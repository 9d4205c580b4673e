/* digits.c: see digits.h. */
#include "digits.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

static const char *split_names[] = {"train", "test-seen", "test-unseen", "val"};

const char *digits_split_name(int split) { return split_names[split]; }

int digits_split_parse(const char *s)
{
    for (int i = 0; i < (int)(sizeof split_names / sizeof split_names[0]); i++)
        if (!strcmp(s, split_names[i]))
            return i;
    return -1;
}

int64_t digits_nclasses(int N)
{
    int64_t n = 1;
    for (int i = 0; i < N; i++)
        n *= 10;
    return n;
}

int digits_digit(int32_t c, int N, int k)
{
    for (int i = N - 1; i > k; i--)
        c /= 10;
    return c % 10;
}

int64_t digits_class_order(int N, uint64_t class_seed, int32_t *order)
{
    int64_t n = digits_nclasses(N);
    for (int64_t i = 0; i < n; i++)
        order[i] = (int32_t)i;
    rng r;
    rng_init(&r, class_seed, RNG_STREAM('c', 'l', 's', N));
    rng_shuffle_i32(&r, order, n);
    return n * 7 / 10;
}

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

static int32_t *sorted_copy(const int32_t *a, int64_t n)
{
    int32_t *c = emalloc(n * sizeof *c);
    memcpy(c, a, n * sizeof *c);
    qsort(c, n, sizeof *c, cmp_i32);
    return c;
}

const char *digits_plan_make(digits_plan *p, int N, int split, int64_t total, int64_t per_class,
                             uint64_t class_seed)
{
    static char msg[160];
    memset(p, 0, sizeof *p);
    p->N = N;
    p->split = split;
    int64_t n10 = digits_nclasses(N);
    int32_t *order = emalloc(n10 * sizeof *order);
    p->nseen = digits_class_order(N, class_seed, order);
    p->seen = sorted_copy(order, p->nseen);
    /* the split's classes, in the class-seed order */
    const int32_t *cls = split == DIGITS_TEST_UNSEEN ? order + p->nseen : order;
    int64_t ncls = split == DIGITS_TEST_UNSEEN ? n10 - p->nseen : p->nseen;

    if (per_class > 0 && total <= 0)
        total = per_class * ncls;
    if (total <= 0)
        total = split == DIGITS_TRAIN ? DIGITS_TRAIN_TOTAL : DIGITS_TEST_TOTAL;
    if (per_class <= 0) {
        per_class = total / ncls;
        if (per_class < DIGITS_MIN_PER_CLASS)
            per_class = DIGITS_MIN_PER_CLASS;
    }
    int64_t m = total / per_class;
    if (m > ncls)
        m = ncls;
    if (m < 1) {
        snprintf(msg, sizeof msg,
                 "%lld images are fewer than one class of %lld (lower --per-class or raise -n)",
                 (long long)total, (long long)per_class);
        free(order);
        digits_plan_free(p);
        return msg;
    }
    p->per_class = per_class;
    p->nclasses = m;
    p->classes = sorted_copy(cls, m);
    free(order);
    return NULL;
}

void digits_plan_free(digits_plan *p)
{
    free(p->classes);
    free(p->seen);
    memset(p, 0, sizeof *p);
}

const char *digits_draw_sources(const digits_plan *p, const uint8_t *labels, int64_t nlabels,
                                uint64_t seed, int32_t *src)
{
    static char msg[96];
    /* the indices of each label's digits, in file order */
    int64_t count[10] = {0};
    for (int64_t i = 0; i < nlabels; i++)
        count[labels[i]]++;
    int32_t *byl[10], *work = emalloc((nlabels ? nlabels : 1) * sizeof *work);
    int64_t fill[10] = {0};
    for (int d = 0; d < 10; d++)
        byl[d] = emalloc((count[d] ? count[d] : 1) * sizeof *byl[d]);
    for (int64_t i = 0; i < nlabels; i++)
        byl[labels[i]][fill[labels[i]]++] = (int32_t)i;

    const char *err = NULL;
    const int N = p->N;
    for (int64_t c = 0; c < p->nclasses && !err; c++)
        for (int k = 0; k < N; k++) {
            int d = digits_digit(p->classes[c], N, k);
            int64_t n = count[d];
            if (n == 0) {
                snprintf(msg, sizeof msg, "no digit with label %d in the MNIST data", d);
                err = msg;
                break;
            }
            /* a forward Fisher-Yates, one step per draw: work[0..i) are the draws so far of the
             * current permutation; a used-up permutation starts afresh */
            memcpy(work, byl[d], n * sizeof *work);
            rng r;
            rng_init(&r, seed, RNG_STREAM('s', 'r', 'c', k) ^ (uint64_t)p->classes[c]);
            int64_t i = 0;
            int32_t *out = src + c * p->per_class * N + k;
            for (int64_t j = 0; j < p->per_class; j++) {
                if (i == n)
                    i = 0;
                int64_t t = i + (int64_t)rng_below(&r, (uint64_t)(n - i));
                int32_t v = work[t];
                work[t] = work[i];
                work[i++] = v;
                out[j * N] = v;
            }
        }
    for (int d = 0; d < 10; d++)
        free(byl[d]);
    free(work);
    return err;
}

void digits_compose(uint8_t *image, int N, const uint8_t *const *cells)
{
    const int W = DIGITS_SIDE * N;
    for (int row = 0; row < DIGITS_SIDE; row++)
        for (int k = 0; k < N; k++)
            memcpy(image + row * W + k * DIGITS_SIDE, cells[k] + row * DIGITS_SIDE, DIGITS_SIDE);
}

void digits_occlusion_draw(rng *r, double p, int N, digits_patch *patch)
{
    for (int k = 0; k < N; k++) {
        double u = rng_uniform(r);
        int L = (int)rng_below(r, DIGITS_SIDE + 1);
        int x = (int)rng_below(r, DIGITS_SIDE + 1 - L);
        int y = (int)rng_below(r, DIGITS_SIDE + 1 - L);
        patch[k].occluded = u < p;
        patch[k].x = patch[k].occluded ? x : 0;
        patch[k].y = patch[k].occluded ? y : 0;
        patch[k].L = patch[k].occluded ? L : 0;
    }
}

void digits_occlude(uint8_t *image, int N, int k, const digits_patch *patch)
{
    const int W = DIGITS_SIDE * N;
    for (int row = patch->y; row < patch->y + patch->L; row++)
        memset(image + row * W + k * DIGITS_SIDE + patch->x, 0, patch->L);
}
