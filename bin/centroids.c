/* centroids: class centroids of an embedding stream, and the appendix D ordering statistics.
 *
 * A class's centroid is the mean over its images of the mean of their component means.
 * --var adds, per dimension, the mean over the class's images of their variance (a mixture's by
 * its moments, lib/proto.h proto_gaussian): how uncertain the embeddings of that class are along
 * each axis (the SPE paper's Figure 3 reads it per noise level).
 * --order (HIB appendix D, 1-D embeddings of N-digit numbers): sort the classes by the first
 * dimension of their centroids and count the adjacent class pairs that share a digit at the
 * same position (ones or tens for N = 2; the best possible is classes - 1), and the mean length
 * of a run, a maximal series of consecutive classes in which every adjacent pair shares a digit
 * (a run has at least two classes; a class sharing with neither neighbour is in no run).
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "match.h"
#include "proto.h"
#include "stream.h"
#include "util.h"

static const char *usage =
    "usage: centroids [--var | --order [--json FILE]] [FILE...]\n"
    "  Class centroids of embedding streams as TSV, or the appendix D ordering statistics.\n";

typedef struct {
    int cls;
    long n;
    double *sum;
    double *vsum;  /* --var: sum of the variances per dimension */
} centroid;

static int by_first(const void *a, const void *b)
{
    const centroid *x = a, *y = b;
    double u = x->sum[0] / x->n, v = y->sum[0] / y->n;
    return u < v ? -1 : u > v ? 1 : x->cls - y->cls;
}

static int share_digit(int a, int b, int digits)
{
    for (int i = 0; i < digits; i++, a /= 10, b /= 10)
        if (a % 10 == b % 10)
            return 1;
    return 0;
}

int main(int argc, char **argv)
{
    util_start(argc, argv, usage);
    const char *json = NULL;
    int order = 0, wvar = 0, c;
    static const struct option lo[] = {{"order", 0, 0, 'o'}, {"json", 1, 0, 'j'}, {"var", 0, 0, 'v'},
                                       {"help", 0, 0, 'h'}, {0, 0, 0, 0}};
    while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
        switch (c) {
        case 'o': order = 1; break;
        case 'j': json = optarg; break;
        case 'v': wvar = 1; break;
        case 'h': usage_help();
        default: usage_bad_option(argv);
        }
    }
    if (json && !order)
        usage_die("--json is the JSON form of --order's statistics: give --order too");
    /* the file exists (as a temp file) before any work: an unwritable path fails now */
    FILE *jf = json ? json_open(json, 0) : NULL;
    if (wvar && order)
        usage_die("--var adds columns to the centroid table, which --order replaces");
    int nfiles = argc - optind;
    int ncls = 0, cap = 0, D = -1, digits = 2;
    centroid *cs = NULL;
    int *slot = NULL, slotcap = 0; /* class -> index in cs */
    stream_record rec = {0};
    for (int fi = 0; fi < (nfiles ? nfiles : 1); fi++) {
    stream_reader *in = stream_open_path(nfiles ? argv[optind + fi] : "-");
    const stream_header *h = in->header;
    match_layout L = match_check_header(in->name, h); /* kind, mu [C, D], var of its shape */
    int fm = L.mu, fc = stream_field_typed(h, "class", DT_I32);
    if (h->fields[fc].ndim != 0)
        die("%s: field 'class' has %d dimensions, expected a scalar (shape [])", in->name, h->fields[fc].ndim);
    int C = L.C;
    int fv = wvar ? L.var : -1;
    if (wvar && fv < 0)
        die("%s: --var needs stochastic embeddings (a `var` field); these are points", in->name);
    if (D >= 0 && D != L.D)
        die("%s: embeddings of %d dimensions, the first input had %d", in->name, L.D, D);
    D = L.D;
    int dg = (int)header_int(h, "digits", 2);
    if (fi > 0 && dg != digits)
        die("%s: %d-digit classes, the first input had %d digits", in->name, dg, digits);
    digits = dg;
    record_free(&rec);
    while (stream_read(in, &rec)) {
        int cl = ((int32_t *)rec.t[fc].data)[0];
        if (cl < 0 || cl > 100000000)
            die("%s: record %lld has class %d", in->name, in->count, cl);
        if (cl >= slotcap) {
            int nc = cl + 1024;
            slot = erealloc(slot, nc * sizeof *slot);
            for (int i = slotcap; i < nc; i++)
                slot[i] = -1;
            slotcap = nc;
        }
        if (slot[cl] < 0) {
            if (ncls == cap) {
                cap = cap ? 2 * cap : 128;
                cs = erealloc(cs, cap * sizeof *cs);
            }
            cs[ncls] = (centroid){.cls = cl, .n = 0, .sum = ecalloc(D, sizeof(double)),
                                  .vsum = ecalloc(D, sizeof(double))};
            slot[cl] = ncls++;
        }
        centroid *ct = &cs[slot[cl]];
        const float *mu = rec.t[fm].data;
        for (int k = 0; k < C * D; k++)
            if (!isfinite(mu[k]))
                die("%s: record %lld has a mean that is not finite (%g)", in->name, in->count, mu[k]);
        for (int k = 0; k < C; k++)
            for (int d = 0; d < D; d++)
                ct->sum[d] += mu[k * D + d] / C;
        if (wvar) {
            const float *var = rec.t[fv].data;
            double mean[64], v[64];
            if (D > 64)
                die("--var: at most 64 dimensions, the embeddings have %d", D);
            for (int k = 0; k < C * D; k++)
                if (!isfinite(var[k]) || var[k] < 0)
                    die("%s: record %lld has a variance that is not a finite number >= 0 (%g)", in->name, in->count,
                        var[k]);
            proto_gaussian(mu, var, C, D, mean, v);
            for (int d = 0; d < D; d++)
                ct->vsum[d] += v[d];
        }
        ct->n++;
    }
    stream_close(in);
    }
    if (ncls == 0)
        die("no records");
    if (!order) {
        printf("class\tn");
        for (int d = 0; d < D; d++)
            printf("\tcentroid[%d]", d);
        for (int d = 0; wvar && d < D; d++)
            printf("\tvar[%d]", d);
        putchar('\n');
        for (int i = 0; i < ncls; i++) {
            printf("%d\t%ld", cs[i].cls, cs[i].n);
            for (int d = 0; d < D; d++)
                printf("\t%.7g", cs[i].sum[d] / cs[i].n);
            for (int d = 0; wvar && d < D; d++)
                printf("\t%.7g", cs[i].vsum[d] / cs[i].n);
            putchar('\n');
        }
    } else {
        qsort(cs, ncls, sizeof *cs, by_first);
        int shared = 0, runs = 0, inrun = 0, runclasses = 0;
        for (int i = 0; i + 1 < ncls; i++) {
            if (share_digit(cs[i].cls, cs[i + 1].cls, digits)) {
                shared++;
                if (!inrun) {
                    runs++;
                    runclasses += 2;
                    inrun = 1;
                } else
                    runclasses++;
            } else
                inrun = 0;
        }
        double mean_run = runs ? (double)runclasses / runs : 0;
        if (jf) {
            fprintf(jf, "{\"program\": \"centroids\", \"classes\": %d, \"shared_pairs\": %d, \"runs\": %d, \"mean_run\": %.4f, \"order\": [",
                    ncls, shared, runs, mean_run);
            for (int i = 0; i < ncls; i++)
                fprintf(jf, i ? ", %d" : "%d", cs[i].cls);
            fprintf(jf, "]}\n");
            if (jf != stdout)
                atomic_sync(jf);
        }
        if (jf != stdout) { /* --json -: the JSON in the text's place */
            printf("order");
            for (int i = 0; i < ncls; i++)
                printf(" %0*d", digits, cs[i].cls);
            printf("\nclasses %d\nshared_pairs %d (of %d adjacent pairs)\nruns %d\nmean_run %.2f\n", ncls, shared,
                   ncls - 1, runs, mean_run);
        }
    }
    close_stdout();
    json_commit(jf);
    for (int i = 0; i < ncls; i++) {
        free(cs[i].sum);
        free(cs[i].vsum);
    }
    free(cs);
    free(slot);
    record_free(&rec);
    return 0;
}
