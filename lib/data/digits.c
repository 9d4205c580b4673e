/* digits.c: see digits.h. */
#include "digits.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npy.h"
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

static int32_t *sorted_copy(const int32_t *a, int64_t n)
{
    int32_t *c = emalloc(n * sizeof *c);
    memcpy(c, a, n * sizeof *c);
    qsort(c, n, sizeof *c, util_cmp_i32);
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
            /* a forward Fisher-Yates, one step per draw; a used-up permutation starts afresh
             * from the order the last one left */
            memcpy(work, byl[d], n * sizeof *work);
            rng r;
            rng_init(&r, seed, RNG_STREAM('s', 'r', 'c', k) ^ (uint64_t)p->classes[c]);
            int32_t *out = src + c * p->per_class * N + k;
            for (int64_t j = 0; j < p->per_class;) {
                int64_t m = p->per_class - j < n ? p->per_class - j : n;
                rng_shuffle_partial(&r, work, sizeof *work, n, m);
                for (int64_t i = 0; i < m; i++, j++)
                    out[j * N] = work[i];
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

const char *digits_shape_name(int shape)
{
    return shape == DIGITS_SQUARE ? "square" : shape == DIGITS_RECT ? "rect" : "?";
}

int digits_shape_parse(const char *s)
{
    return !strcmp(s, "square") ? DIGITS_SQUARE : !strcmp(s, "rect") ? DIGITS_RECT : -1;
}

void digits_occlusion_draw(rng *r, double p, int shape, int N, digits_patch *patch)
{
    for (int k = 0; k < N; k++) {
        double u = rng_uniform(r);
        int w, h;
        if (shape == DIGITS_SQUARE) {
            w = h = (int)rng_below(r, DIGITS_SIDE + 1);
        } else {
            w = (int)rng_below(r, DIGITS_SIDE + 1);
            h = (int)rng_below(r, DIGITS_SIDE + 1);
        }
        int x = (int)rng_below(r, DIGITS_SIDE + 1 - w);
        int y = (int)rng_below(r, DIGITS_SIDE + 1 - h);
        int on = u < p;
        patch[k] = on ? (digits_patch){1, x, y, w, h} : (digits_patch){0, 0, 0, 0, 0};
    }
}

void digits_occlude(uint8_t *image, int N, int k, const digits_patch *patch)
{
    const int W = DIGITS_SIDE * N;
    for (int row = patch->y; row < patch->y + patch->h; row++)
        memset(image + row * W + k * DIGITS_SIDE + patch->x, 0, patch->w);
}

void digits_occlusion_rng(rng *r, uint64_t seed, uint64_t record, uint64_t slot)
{
    rng_init(r, seed, RNG_STREAM('o', 'c', 'b', 0) ^ rng_mix(record ^ rng_mix(slot)));
}

void digits_occlusion_rng_id(rng *r, uint64_t seed, int64_t id)
{
    rng_init(r, seed, RNG_STREAM('o', 'c', 'c', 0) ^ (uint64_t)id);
}

/* --- the generator's image ids (the .npy and .npz reading: lib/data/npy.c) ---------------------- */

#define IDS_MAX_COMPOSITES 20000000LL /* mkdigits' own limit */

static const char *ids_from_array(digits_ids *d, const npy_array *a, const char *name)
{
    char sh[96];
    npy_shape_str(a, sh, sizeof sh);
    if (a->ndim != 2 && a->ndim != 3)
        return errmsg("%s: shape %s: image ids are [K, S, N] (the generator's) or [M, N]", name, sh);
    int64_t N = a->shape[a->ndim - 1];
    if (N < 1 || N > DIGITS_MAXN)
        return errmsg("%s: shape %s: composites of %lld digits (mkdigits makes 1 to %d)", name, sh,
                        (long long)N, DIGITS_MAXN);
    d->N = (int)N;
    d->ndim = a->ndim;
    d->rows = a->shape[0];
    d->per_row = a->ndim == 3 ? a->shape[1] : 1;
    d->n = d->rows * d->per_row;
    if (d->n == 0)
        return errmsg("%s: shape %s holds no composite", name, sh);
    if (d->n > IDS_MAX_COMPOSITES)
        return errmsg("%s: shape %s: more than %lld composites", name, sh, IDS_MAX_COMPOSITES);
    d->ids = emalloc(a->count * sizeof *d->ids);
    for (int64_t i = 0; i < a->count; i++)
        d->ids[i] = npy_get(a, i);
    return NULL;
}

static const char *ids_parse_npz(digits_ids *d, const uint8_t *buf, size_t len)
{
    uint8_t *m = NULL;
    size_t mn;
    npy_array a;
    const char *err = npy_zip_member(buf, len, "image_ids.npy", &m, &mn);
    if (!err && !m)
        err = errmsg("a zip archive without image_ids.npy (not one of the generator's .npz files?)");
    if (!err)
        err = npy_parse(m, mn, "image_ids.npy", &a);
    if (!err)
        err = ids_from_array(d, &a, "image_ids.npy");
    free(m);
    m = NULL;
    if (!err && !(err = npy_zip_member(buf, len, "chosen_numbers.npy", &m, &mn)) && m &&
        !(err = npy_parse(m, mn, "chosen_numbers.npy", &a))) {
        char sh[96];
        npy_shape_str(&a, sh, sizeof sh);
        if (a.ndim != 1 || a.shape[0] != d->rows)
            err = errmsg("chosen_numbers.npy: shape %s, but image_ids.npy has %lld rows", sh,
                           (long long)d->rows);
        else {
            d->chosen = emalloc(d->rows * sizeof *d->chosen);
            for (int64_t i = 0; i < d->rows; i++)
                d->chosen[i] = npy_get(&a, i);
        }
    }
    free(m);
    m = NULL;
    if (!err && !(err = npy_zip_member(buf, len, "sample_per_number.npy", &m, &mn)) && m &&
        !(err = npy_parse(m, mn, "sample_per_number.npy", &a))) {
        if (a.count != 1 || a.ndim > 1)
            err = errmsg("sample_per_number.npy: not a single number");
        else if (npy_get(&a, 0) != d->per_row)
            err = errmsg("sample_per_number.npy says %lld, but image_ids.npy has %lld composites per class",
                           (long long)npy_get(&a, 0), (long long)d->per_row);
    }
    free(m);
    return err;
}

const char *digits_ids_parse(digits_ids *d, const uint8_t *buf, size_t len)
{
    memset(d, 0, sizeof *d);
    const char *err;
    if (len >= 6 && !memcmp(buf, "\x93NUMPY", 6)) {
        npy_array a;
        err = npy_parse(buf, len, "the .npy file", &a);
        if (!err)
            err = ids_from_array(d, &a, "the .npy file");
    } else if (npy_is_zip(buf, len)) {
        err = ids_parse_npz(d, buf, len);
    } else {
        err = errmsg("neither an .npz (zip) nor an .npy file");
    }
    if (err)
        digits_ids_free(d);
    return err;
}

const char *digits_ids_load(digits_ids *d, const char *path)
{
    memset(d, 0, sizeof *d);
    uint8_t *buf;
    size_t n;
    const char *lerr = npy_load_file(path, &buf, &n);
    if (lerr)
        return lerr;
    const char *err = digits_ids_parse(d, buf, n);
    free(buf);
    return err ? errmsg("%s: %s", path, err) : NULL;
}

void digits_ids_free(digits_ids *d)
{
    free(d->ids);
    free(d->chosen);
    memset(d, 0, sizeof *d);
}

/* "image_ids[k, s, j]" or "image_ids[i, j]" for composite i, position j */
static void ids_where(const digits_ids *d, int64_t i, int j, char *out, size_t size)
{
    if (d->ndim == 3)
        snprintf(out, size, "image_ids[%lld, %lld, %d]", (long long)(i / d->per_row),
                 (long long)(i % d->per_row), j);
    else
        snprintf(out, size, "image_ids[%lld, %d]", (long long)i, j);
}

const char *digits_ids_check(const digits_ids *d, const uint8_t *labels, int64_t nlabels,
                             const char *mnist, int32_t *cls)
{
    const int N = d->N;
    const int64_t n10 = digits_nclasses(N);
    char where[80];
    for (int64_t r = 0; d->chosen && r < d->rows; r++)
        if (d->chosen[r] < 0 || d->chosen[r] >= n10)
            return errmsg("chosen_numbers[%lld] = %lld is not a %d-digit number", (long long)r,
                            (long long)d->chosen[r], N);
    for (int64_t i = 0; i < d->n; i++) {
        int64_t c = 0;
        for (int j = 0; j < N; j++) {
            int64_t id = d->ids[i * N + j];
            if (id < 0 || id >= nlabels) {
                ids_where(d, i, j, where, sizeof where);
                return errmsg("%s = %lld: %s (the MNIST %s split has %lld digits: 0 to %lld)", where,
                                (long long)id, id < 0 ? "negative" : "out of range", mnist,
                                (long long)nlabels, (long long)nlabels - 1);
            }
            c = c * 10 + labels[id];
        }
        if (d->chosen && c != d->chosen[i / d->per_row]) {
            int64_t want = d->chosen[i / d->per_row];
            int j = 0;
            while (digits_digit((int32_t)c, N, j) == digits_digit((int32_t)want, N, j))
                j++;
            ids_where(d, i, j, where, sizeof where);
            return errmsg("%s = %lld: MNIST %s digit %lld is a %d, but its class %0*lld "
                            "(chosen_numbers) needs a %d: not the MNIST the ids were drawn from, "
                            "or the wrong split", where, (long long)d->ids[i * N + j], mnist,
                            (long long)d->ids[i * N + j], digits_digit((int32_t)c, N, j), N,
                            (long long)want, digits_digit((int32_t)want, N, j));
        }
        cls[i] = (int32_t)c;
    }
    return NULL;
}

/* the generator's split names, as the last part of dataset_mnist_<N>_<gap>_<split>.npz */
static const struct {
    const char *suffix, *split;
} ids_names[] = {
    {"_train", "train"}, {"_test", "test"}, {"_test_seen", "test-seen"}, {"_test_unseen", "test-unseen"},
};

/* the index into ids_names of path's suffix, or -1; *stem receives the length before it */
static int ids_name_index(const char *path, size_t *stem)
{
    size_t n = strlen(path);
    if (n < 4 || (strcmp(path + n - 4, ".npz") && strcmp(path + n - 4, ".npy")))
        return -1;
    n -= 4;
    for (int i = 0; i < (int)(sizeof ids_names / sizeof ids_names[0]); i++) {
        size_t k = strlen(ids_names[i].suffix);
        if (n >= k && !memcmp(path + n - k, ids_names[i].suffix, k)) {
            *stem = n - k;
            return i;
        }
    }
    return -1;
}

const char *digits_ids_split_of_name(const char *path)
{
    size_t stem;
    int i = ids_name_index(path, &stem);
    return i < 0 ? NULL : ids_names[i].split;
}

int digits_ids_train_name(const char *path, char *out, size_t size)
{
    size_t stem;
    int i = ids_name_index(path, &stem);
    if (i <= 0)   /* not of the convention, or a train file itself */
        return 0;
    int w = snprintf(out, size, "%.*s_train%s", (int)stem, path, path + strlen(path) - 4);
    return w > 0 && (size_t)w < size;
}
