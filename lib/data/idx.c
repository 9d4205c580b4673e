#include "idx.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "util.h"

static void gz_need(gzFile g, void *buf, size_t n, const char *path, const char *what)
{
    size_t got = 0;
    while (got < n) {
        unsigned chunk = n - got > (1u << 30) ? (1u << 30) : (unsigned)(n - got);
        int r = gzread(g, (char *)buf + got, chunk);
        if (r <= 0) {
            int err;
            const char *msg = gzerror(g, &err);
            if (r < 0 || err)
                die("%s: cannot read %s: %s", path, what, msg);
            die("%s: truncated idx file (%s ends early: %zu of %zu bytes)", path, what, got, n);
        }
        got += r;
    }
}

uint8_t *idx_read(const char *path, int *ndim, int64_t dims[4])
{
    struct stat st;
    char *p = NULL;
    if (stat(path, &st) != 0) {
        size_t n = strlen(path) + 4;
        p = emalloc(n);
        snprintf(p, n, "%s.gz", path);
        if (stat(p, &st) != 0)
            die("cannot open %s (nor %s): %s", path, p, strerror(ENOENT));
        path = p;
    }
    gzFile g = gzopen(path, "rb");
    if (!g)
        die("cannot open %s: %s", path, strerror(errno));
    gzbuffer(g, 1 << 18);
    unsigned char magic[4];
    gz_need(g, magic, 4, path, "the magic number");
    if (magic[0] || magic[1])
        die("%s: not an idx file (bad magic number)", path);
    if (magic[2] != 0x08)
        die("%s: idx element type 0x%02x is not supported (only unsigned bytes, 0x08)", path, magic[2]);
    if (magic[3] < 1 || magic[3] > 4)
        die("%s: idx file with %d dimensions is not supported", path, magic[3]);
    *ndim = magic[3];
    int64_t total = 1;
    for (int i = 0; i < *ndim; i++) {
        unsigned char b[4];
        gz_need(g, b, 4, path, "the header");
        dims[i] = ((int64_t)b[0] << 24) | (b[1] << 16) | (b[2] << 8) | b[3];
        if (dims[i] <= 0 || dims[i] > 100000000)
            die("%s: implausible idx dimension %lld", path, (long long)dims[i]);
        total *= dims[i]; /* total <= 2^34 and dims[i] < 2^27 here: no overflow */
        if (total > (int64_t)1 << 34)
            die("%s: idx file too large", path);
    }
    /* the buffer grows as data arrives (64 MiB at a time): a 16-byte header that declares
     * 16 GiB costs a read error, not 16 GiB */
    size_t cap = total < (1 << 26) ? (size_t)total : (size_t)1 << 26, got = 0;
    uint8_t *data = emalloc(cap);
    while (got < (size_t)total) {
        if (got == cap) {
            cap = (size_t)total - cap < cap ? (size_t)total : 2 * cap;
            data = erealloc(data, cap);
        }
        size_t want = cap - got;
        gz_need(g, data + got, want, path, "the data");
        got += want;
    }
    char extra;
    if (gzread(g, &extra, 1) > 0)
        die("%s: idx file has trailing bytes after its data", path);
    gzclose(g);
    free(p);
    return data;
}

void idx_load_split(idx_set *s, const char *dir, const char *split)
{
    const char *pre = !strcmp(split, "train") ? "train" : !strcmp(split, "test") ? "t10k" : NULL;
    if (!pre)
        die("internal error: idx split '%s'", split);
    size_t n = strlen(dir) + 64;
    char *ip = emalloc(n), *lp = emalloc(n);
    snprintf(ip, n, "%s/%s-images-idx3-ubyte", dir, pre);
    snprintf(lp, n, "%s/%s-labels-idx1-ubyte", dir, pre);
    int ind, lnd;
    int64_t idim[4], ldim[4];
    s->images = idx_read(ip, &ind, idim);
    s->labels = idx_read(lp, &lnd, ldim);
    if (ind != 3)
        die("%s: expected a 3-dimensional idx file of images, got %d dimensions", ip, ind);
    if (lnd != 1)
        die("%s: expected a 1-dimensional idx file of labels, got %d dimensions", lp, lnd);
    if (idim[0] != ldim[0])
        die("%s has %lld images but %s has %lld labels", ip, (long long)idim[0], lp, (long long)ldim[0]);
    if (idim[1] != 28 || idim[2] != 28)
        die("%s: images are %lldx%lld, expected 28x28", ip, (long long)idim[1], (long long)idim[2]);
    s->n = idim[0];
    s->rows = 28;
    s->cols = 28;
    for (int64_t i = 0; i < s->n; i++)
        if (s->labels[i] > 9)
            die("%s: label %d at %lld is not in 0..9", lp, s->labels[i], (long long)i);
    free(ip);
    free(lp);
}

void idx_set_free(idx_set *s)
{
    free(s->images);
    free(s->labels);
    memset(s, 0, sizeof *s);
}

void idx_write(const char *path, int ndim, const int64_t *dims, const uint8_t *data)
{
    FILE *f = atomic_open(path);
    unsigned char magic[4] = {0, 0, 0x08, (unsigned char)ndim};
    fwrite(magic, 1, 4, f);
    int64_t total = 1;
    for (int i = 0; i < ndim; i++) {
        unsigned char b[4] = {dims[i] >> 24, dims[i] >> 16, dims[i] >> 8, dims[i]};
        fwrite(b, 1, 4, f);
        total *= dims[i];
    }
    fwrite(data, 1, total, f);
    atomic_commit(f);
}
