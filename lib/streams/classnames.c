/* classnames: class labels that are names (lib/streams/classnames.h) */
#include "classnames.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

/* the names' order: by their bytes, a prefix before what it begins (Python's for bytes, and for
 * str through UTF-8, which keeps the order of code points) */
static int name_cmp(const char *a, size_t na, const char *b, size_t nb)
{
    int c = memcmp(a, b, na < nb ? na : nb);
    return c ? c : (na > nb) - (na < nb);
}

const char *classnames_show(const classnames *N, int64_t i, char *buf, size_t size)
{
    const unsigned char *s = (const unsigned char *)N->s[i];
    size_t n = N->len[i], m = n > 40 ? 40 : n, k = 0;
    k += (size_t)snprintf(buf + k, size - k, "'");
    for (size_t j = 0, l; j < m && k + 8 < size; j += l ? l : 1) {
        l = utf8_len(s + j, m - j);
        if (l && !(l == 1 && (s[j] < 0x20 || s[j] == 0x7f || s[j] == '\\' || s[j] == '\''))) {
            memcpy(buf + k, s + j, l);
            k += l;
        } else {
            k += (size_t)snprintf(buf + k, size - k, "\\x%02x", s[j]);
        }
    }
    snprintf(buf + k, size - k, "%s'", n > m ? "..." : "");
    return buf;
}

void classnames_free(classnames *N)
{
    for (int64_t i = 0; i < N->n; i++)
        free(N->s[i]);
    free(N->s);
    free(N->len);
    memset(N, 0, sizeof *N);
}

/* N with room for n names, none set yet */
static void alloc_names(classnames *N, int64_t n, int bytes)
{
    memset(N, 0, sizeof *N);
    N->present = 1;
    N->bytes = bytes;
    N->s = ecalloc((size_t)(n ? n : 1), sizeof *N->s);
    N->len = ecalloc((size_t)(n ? n : 1), sizeof *N->len);
}

static void put_name(classnames *N, const char *s, size_t len)
{
    char *c = emalloc(len + 1);
    if (len)
        memcpy(c, s, len);
    c[len] = 0;
    N->s[N->n] = c;
    N->len[N->n++] = len;
}

void classnames_copy(classnames *dst, const classnames *src)
{
    if (!src->present) {
        memset(dst, 0, sizeof *dst);
        return;
    }
    alloc_names(dst, src->n, src->bytes);
    for (int64_t i = 0; i < src->n; i++)
        put_name(dst, src->s[i], src->len[i]);
}

int classnames_equal(const classnames *a, const classnames *b)
{
    if (a->present != b->present || (a->present && (a->bytes != b->bytes || a->n != b->n)))
        return 0;
    for (int64_t i = 0; a->present && i < a->n; i++)
        if (name_cmp(a->s[i], a->len[i], b->s[i], b->len[i]))
            return 0;
    return 1;
}

void classnames_read(classnames *N, const char *src, const stream_header *h)
{
    memset(N, 0, sizeof *N);
    const stream_meta *m = header_meta(h, CLASSNAMES_KEY);
    if (!m)
        return;
    int64_t n;
    char **s;
    size_t *len;
    int bytes;
    const char *err = stream_meta_strings(m, &n, &s, &len, &bytes);
    if (err)
        die("%s: meta " CLASSNAMES_KEY "%s%s", src, strncmp(err, "is ", 3) ? ": " : " ", err);
    *N = (classnames){.present = 1, .bytes = bytes, .n = n, .s = s, .len = len};
    char a[200], b[200];
    if (n > INT32_MAX)
        die("%s: meta " CLASSNAMES_KEY " holds %lld names: expected at most %d (classes are int32)", src, (long long)n,
            INT32_MAX);
    long long total = 0;
    for (int64_t i = 0; i < n; i++) {
        total += (long long)len[i];
        if (memchr(s[i], 0, len[i]))
            die("%s: meta " CLASSNAMES_KEY ": name %lld %s holds a NUL byte: expected names without one", src,
                (long long)i, classnames_show(N, i, a, sizeof a));
        for (size_t j = 0, l; !bytes && j < len[i]; j += l)
            if (!(l = utf8_len((const unsigned char *)s[i] + j, len[i] - j)))
                die("%s: meta " CLASSNAMES_KEY ": name %lld %s is a str that is not UTF-8 (byte %zu): expected text, "
                    "or bin for names that are bytes", src, (long long)i, classnames_show(N, i, a, sizeof a), j);
        if (i && name_cmp(s[i - 1], len[i - 1], s[i], len[i]) >= 0)
            die("%s: meta " CLASSNAMES_KEY ": name %lld %s is not after name %lld %s: expected the names ascending "
                "by their bytes, each once", src, (long long)i, classnames_show(N, i, a, sizeof a), (long long)(i - 1),
                classnames_show(N, i - 1, b, sizeof b));
    }
    if (total > CLASSNAMES_MAX_BYTES)
        die("%s: meta " CLASSNAMES_KEY ": its %lld names come to %lld bytes: expected at most %lld (16 MiB)", src,
            (long long)n, total, (long long)CLASSNAMES_MAX_BYTES);
}

void classnames_check(const classnames *N, const char *src, const int32_t *cls, int64_t n)
{
    if (!N->present)
        return;
    for (int64_t i = 0; i < n; i++)
        if (cls[i] < 0 || cls[i] >= N->n) {
            if (!N->n)
                die("%s: record %lld: class %d, but meta " CLASSNAMES_KEY " holds no names", src, (long long)i, cls[i]);
            die("%s: record %lld: class %d, but meta " CLASSNAMES_KEY " holds %lld name%s (classes 0 to %lld)", src,
                (long long)i, cls[i], (long long)N->n, N->n == 1 ? "" : "s", (long long)(N->n - 1));
        }
}

/* a name among several sets' or strings': its bytes and where it came from */
typedef struct {
    const char *s;
    size_t len;
    int64_t at;
} entry;

static int entry_cmp(const void *x, const void *y)
{
    const entry *a = x, *b = y;
    int c = name_cmp(a->s, a->len, b->s, b->len);
    return c ? c : (a->at > b->at) - (a->at < b->at);
}

void classnames_from(classnames *N, const char *src, const char *what, int64_t n, char *const *s, const size_t *len,
                     int bytes, int32_t *codes)
{
    entry *e = emalloc((size_t)(n ? n : 1) * sizeof *e);
    for (int64_t i = 0; i < n; i++)
        e[i] = (entry){s[i], len[i], i};
    qsort(e, (size_t)n, sizeof *e, entry_cmp);
    int64_t k = 0;
    long long total = 0;
    for (int64_t i = 0; i < n; i++) {
        if (!i || name_cmp(e[i - 1].s, e[i - 1].len, e[i].s, e[i].len))
            k++, total += (long long)e[i].len;
        codes[e[i].at] = (int32_t)(k - 1);
    }
    if (total > CLASSNAMES_MAX_BYTES) {
        free(e);
        die("%s: %s: its %lld distinct names come to %lld bytes: expected at most %lld (16 MiB: a header holds them)",
            src, what, (long long)k, total, (long long)CLASSNAMES_MAX_BYTES);
    }
    alloc_names(N, k, bytes);
    for (int64_t i = 0; i < n; i++)
        if (!i || name_cmp(e[i - 1].s, e[i - 1].len, e[i].s, e[i].len))
            put_name(N, e[i].s, e[i].len);
    free(e);
}

/* the index of name (s, len) in the sorted names of U (it is there) */
static int64_t find_name(const classnames *U, const char *s, size_t len)
{
    int64_t lo = 0, hi = U->n;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (name_cmp(U->s[mid], U->len[mid], s, len) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

void classnames_unify(classnames *U, const classnames_part *p, int np)
{
    memset(U, 0, sizeof *U);
    int named = -1, plain = -1;
    for (int i = 0; i < np; i++) {
        if (p[i].names->present && named < 0)
            named = i;
        if (!p[i].names->present && plain < 0)
            plain = i;
    }
    if (named < 0)
        return;
    if (plain >= 0)
        die("%s: its labels are integers, but those of %s are names: expected names in both or in neither",
            p[plain].src, p[named].src);
    for (int i = 0; i < np; i++)
        if (p[i].names->bytes != p[named].names->bytes)
            die("%s: its class names are %s, those of %s %s: expected both str (text) or both bytes (bin)", p[i].src,
                p[i].names->bytes ? "bytes (bin)" : "str (text)", p[named].src, p[named].names->bytes ? "bytes" : "str");
    int64_t total = 0;
    for (int i = 0; i < np; i++)
        total += p[i].names->n;
    entry *e = emalloc((size_t)(total ? total : 1) * sizeof *e);
    int64_t k = 0;
    for (int i = 0; i < np; i++)
        for (int64_t j = 0; j < p[i].names->n; j++, k++)
            e[k] = (entry){p[i].names->s[j], p[i].names->len[j], k};
    qsort(e, (size_t)total, sizeof *e, entry_cmp);
    int64_t distinct = 0;
    for (int64_t i = 0; i < total; i++)
        distinct += !i || name_cmp(e[i - 1].s, e[i - 1].len, e[i].s, e[i].len);
    alloc_names(U, distinct, p[named].names->bytes);
    for (int64_t i = 0; i < total; i++)
        if (!i || name_cmp(e[i - 1].s, e[i - 1].len, e[i].s, e[i].len))
            put_name(U, e[i].s, e[i].len);
    free(e);
    for (int i = 0; i < np; i++) {
        const classnames *N = p[i].names;
        classnames_check(N, p[i].src, p[i].cls, p[i].n);
        int32_t *to = emalloc((size_t)(N->n ? N->n : 1) * sizeof *to);
        for (int64_t j = 0; j < N->n; j++)
            to[j] = (int32_t)find_name(U, N->s[j], N->len[j]);
        for (int64_t j = 0; j < p[i].n; j++)
            p[i].cls[j] = to[p[i].cls[j]];
        free(to);
    }
}

void classnames_set(stream_header *h, const classnames *N)
{
    if (!N->present)
        header_del_meta(h, CLASSNAMES_KEY);
    else
        stream_set_strings(h, CLASSNAMES_KEY, N->n, N->s, N->len, N->bytes);
}
