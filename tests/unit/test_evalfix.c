/* test_evalfix: fixture streams for the evaluation programs' shell tests (pairscore, knn, ktau,
 * apcurve), written with lib/streams/stream.h. Run without arguments (as tests/run does) it checks itself.
 *
 *   test_evalfix emb [-n N] [-k CLASSES] [-C C] [-D D] [-p] [-S SEED] [-a A] [-b B]
 *       N synthetic embeddings (default 200, 10 classes, C = 1, D = 2, a = 2, b = 1): class c has
 *       its centre on a circle of radius 4 (first two dimensions); image i has class i mod CLASSES,
 *       id 1000 + i, and is "occluded" (both digits) when i mod 4 == 3. Its spread s is 0.15
 *       (clean) or 1.5 (occluded): every component mean is centre + s * N(0, I), var = s^2
 *       (omitted with -p: point embeddings). So errors and eta both concentrate on occluded images.
 *   test_evalfix table KIND FIELD... [-m KEY=VALUE]...
 *       one record per non-empty stdin line (# starts a comment), values in field order, each field
 *       flattened row-major. FIELD is name:dtype[:shape], shape like 1x2 (none: a scalar).
 *       A meta VALUE is an int, a float (has '.' or 'e') or a string.
 *   test_evalfix cols FIELD... < STREAM
 *       prints the kind, then per record one line with the values of the fields (every element,
 *       %.9g, space-separated), so shell tests can compare numbers without a stream parser.
 */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "rng.h"
#include "stream.h"
#include "util.h"

static void write_emb(FILE *f, int argc, char **argv, long n, int classes, int C, int D, int point,
                      uint64_t seed, double a, double b)
{
    stream_header *h = header_new("embeddings", 0);
    header_provenance(h, argc, argv);
    header_set_seed(h, seed);
    int64_t cd[2] = {C, D}, two[1] = {2};
    header_add_field(h, "mu", DT_F32, 2, cd);
    if (!point)
        header_add_field(h, "var", DT_F32, 2, cd);
    header_add_field(h, "class", DT_I32, 0, NULL);
    header_add_field(h, "id", DT_I64, 0, NULL);
    header_add_field(h, "occluded", DT_U8, 1, two);
    header_set_int(h, "digits", 2);
    header_set_str(h, "model", point ? "point" : "mog");
    header_set_int(h, "C", C);
    header_set_int(h, "D", D);
    header_set_float(h, "match_a", a);
    header_set_float(h, "match_b", b);
    stream_writer *w = stream_create(f, h);
    float *mu = emalloc((size_t)C * D * sizeof *mu), *var = emalloc((size_t)C * D * sizeof *var);
    for (long i = 0; i < n; i++) {
        rng r;
        rng_init(&r, seed, RNG_STREAM('f', 'i', 'x', 0) ^ (uint64_t)i);
        int32_t cls = (int32_t)(i % classes);
        int64_t id = 1000 + i;
        uint8_t occ[2] = {i % 4 == 3, i % 4 == 3};
        double s = occ[0] ? 1.5 : 0.15, ang = 2 * M_PI * cls / classes;
        for (int c = 0; c < C; c++)
            for (int d = 0; d < D; d++) {
                double centre = d == 0 ? 4 * cos(ang) : d == 1 ? 4 * sin(ang) : 0;
                mu[c * D + d] = (float)(centre + s * rng_normal(&r));
                var[c * D + d] = (float)(s * s);
            }
        void *data[5];
        int k = 0;
        data[k++] = mu;
        if (!point)
            data[k++] = var;
        data[k++] = &cls;
        data[k++] = &id;
        data[k++] = occ;
        stream_write_data(w, data, 0);
    }
    stream_finish(w);
    free(mu);
    free(var);
    header_free(h);
}

static int table(int argc, char **argv)
{
    if (argc < 3)
        usage_die("table KIND FIELD...");
    stream_header *h = header_new(argv[2], 0);
    header_provenance(h, argc, argv);
    int nf = 0;
    int64_t numel[STREAM_MAXFIELDS];
    for (int i = 3; i < argc; i++) {
        if (!strcmp(argv[i], "-m") && i + 1 < argc) {
            char *kv = estrdup(argv[++i]), *eq = strchr(kv, '=');
            if (!eq)
                usage_die("-m KEY=VALUE");
            *eq = 0;
            char *v = eq + 1, *end;
            long long iv = strtoll(v, &end, 10);
            if (*v && !*end)
                header_set_int(h, kv, iv);
            else {
                double dv = strtod(v, &end);
                if (*v && !*end)
                    header_set_float(h, kv, dv);
                else
                    header_set_str(h, kv, v);
            }
            free(kv);
            continue;
        }
        char *spec = estrdup(argv[i]), *name = strtok(spec, ":"), *dt = strtok(NULL, ":"),
             *shp = strtok(NULL, ":");
        int dtype = dt ? dtype_parse(dt) : -1;
        if (!name || dtype < 0)
            usage_die("bad field spec %s", argv[i]);
        int64_t shape[TENSOR_MAXDIM];
        int ndim = 0;
        for (char *s = shp ? strtok(shp, "x") : NULL; s; s = strtok(NULL, "x"))
            shape[ndim++] = atoll(s);
        header_add_field(h, name, dtype, ndim, shape);
        numel[nf++] = shape_numel(ndim, shape);
        free(spec);
    }
    stream_writer *w = stream_create(stdout, h);
    stream_record rec = {0};
    rec.n = nf;
    for (int f = 0; f < nf; f++) {
        const stream_field *fd = &h->fields[f];
        rec.t[f].dtype = fd->dtype;
        rec.t[f].ndim = fd->ndim;
        memcpy(rec.t[f].shape, fd->shape, sizeof fd->shape);
        rec.t[f].data = ealloc_aligned((size_t)numel[f] * dtype_size(fd->dtype) + 8);
        rec.t[f].owns = 1;
    }
    char line[8192];
    long lineno = 0;
    while (fgets(line, sizeof line, stdin)) {
        lineno++;
        char *hash = strchr(line, '#');
        if (hash)
            *hash = 0;
        char *p = line;
        while (isspace((unsigned char)*p))
            p++;
        if (!*p)
            continue;
        for (int f = 0; f < nf; f++)
            for (int64_t e = 0; e < numel[f]; e++) {
                char *end;
                double v = strtod(p, &end);
                if (end == p)
                    die("stdin line %ld: too few values", lineno);
                p = end;
                void *d = rec.t[f].data;
                switch (rec.t[f].dtype) {
                case DT_U8: ((uint8_t *)d)[e] = (uint8_t)v; break;
                case DT_I32: ((int32_t *)d)[e] = (int32_t)v; break;
                case DT_I64: ((int64_t *)d)[e] = (int64_t)v; break;
                case DT_F32: ((float *)d)[e] = (float)v; break;
                case DT_F64: ((double *)d)[e] = v; break;
                }
            }
        stream_write_record(w, &rec);
    }
    stream_finish(w);
    record_free(&rec);
    header_free(h);
    close_stdout();
    return 0;
}

static int cols(int argc, char **argv)
{
    stream_reader *r = stream_open(stdin, "stdin");
    int idx[STREAM_MAXFIELDS], nf = 0;
    for (int i = 2; i < argc && nf < STREAM_MAXFIELDS; i++)
        idx[nf++] = stream_field_index(r->header, argv[i]);
    printf("kind %s\n", r->header->kind);
    stream_record rec = {0};
    while (stream_read(r, &rec)) {
        const char *sep = "";
        for (int f = 0; f < nf; f++)
            for (int64_t e = 0; e < tensor_numel(&rec.t[idx[f]]); e++) {
                printf("%s%.9g", sep, tensor_get(&rec.t[idx[f]], e));
                sep = " ";
            }
        putchar('\n');
    }
    record_free(&rec);
    stream_close(r);
    close_stdout();
    return 0;
}

static int emb(int argc, char **argv)
{
    long n = 200;
    int classes = 10, C = 1, D = 2, point = 0;
    uint64_t seed = 714;
    double a = 2, b = 1;
    for (int i = 2; i < argc; i++) {
        const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : "";
        if (!strcmp(o, "-p")) {
            point = 1;
            continue;
        }
        i++;
        if (!strcmp(o, "-n"))
            n = parse_long(o, v, 0, 10000000);
        else if (!strcmp(o, "-k"))
            classes = (int)parse_long(o, v, 1, 1000000);
        else if (!strcmp(o, "-C"))
            C = (int)parse_long(o, v, 1, 64);
        else if (!strcmp(o, "-D"))
            D = (int)parse_long(o, v, 1, 1024);
        else if (!strcmp(o, "-S"))
            seed = parse_u64(o, v);
        else if (!strcmp(o, "-a"))
            a = parse_double(o, v, 0, 1e6);
        else if (!strcmp(o, "-b"))
            b = parse_double(o, v, -1e6, 1e6);
        else
            usage_die("unknown option %s", o);
    }
    write_emb(stdout, argc - 1, argv + 1, n, classes, C, D, point, seed, a, b);
    close_stdout();
    return 0;
}

int main(int argc, char **argv)
{
    util_init(argv[0]);
    util_usage = "usage: test_evalfix [emb OPTIONS | table KIND FIELD... [-m KEY=VALUE]... | cols FIELD...]\n";
    if (argc > 1 && !strcmp(argv[1], "emb"))
        return emb(argc, argv);
    if (argc > 1 && !strcmp(argv[1], "table"))
        return table(argc, argv);
    if (argc > 1 && !strcmp(argv[1], "cols"))
        return cols(argc, argv);
    if (argc > 1)
        usage_die("unknown mode %s", argv[1]);
    /* self-check: a stochastic fixture reads back with the documented layout */
    char *buf = NULL;
    size_t len;
    FILE *f = open_memstream(&buf, &len);
    write_emb(f, 1, argv, 12, 3, 2, 3, 0, 714, 2, 1);
    fclose(f);
    f = fmemopen(buf, len, "rb");
    stream_reader *r = stream_open(f, "mem");
    CHECK(!strcmp(r->header->kind, "embeddings"));
    int mi = stream_field_index(r->header, "mu"), vi = stream_field_index(r->header, "var"),
        ci = stream_field_index(r->header, "class"), oi = stream_field_index(r->header, "occluded");
    CHECK_CLOSE(header_float(r->header, "match_a", 0), 2, 0);
    stream_record rec = {0};
    long i = 0;
    while (stream_read(r, &rec)) {
        CHECK(((int32_t *)rec.t[ci].data)[0] == i % 3);
        CHECK(((uint8_t *)rec.t[oi].data)[1] == (i % 4 == 3));
        CHECK(rec.t[mi].shape[0] == 2 && rec.t[mi].shape[1] == 3);
        CHECK_CLOSE(((float *)rec.t[vi].data)[5], i % 4 == 3 ? 2.25 : 0.0225, 1e-6);
        i++;
    }
    CHECK(i == 12);
    record_free(&rec);
    stream_close(r);
    fclose(f);
    free(buf);
    return check_done("test_evalfix");
}
