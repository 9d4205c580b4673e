/* centroids: class centroids of an embedding stream, and the appendix D ordering statistics.
 *
 * A class's centroid is the mean over its images of the mean of their component means.
 * --var adds, per dimension, the mean over the class's images of their variance (a mixture's by
 * its moments, lib/measures/proto.h proto_gaussian): how uncertain the embeddings of that class are along
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

#include "centroids.h"
#include "classnames.h"
#include "json.h"
#include "match.h"
#include "stream.h"
#include "util.h"

static const char *usage =
    "usage: centroids [--var | --order [--json FILE]] [FILE...]\n"
    "  Class centroids of embedding streams as TSV, or the appendix D ordering statistics.\n";

/* the items of one input into s (D fixed by the first input), their values checked */
static void read_input(centroid_set *s, stream_reader *in, int fm, int fc, int fv, int C, const classnames *N,
                       stream_record *rec)
{
    int D = s->D;
    while (stream_read(in, rec)) {
        int cl = ((int32_t *)rec->t[fc].data)[0];
        if (cl < 0 || cl > CENTROID_MAXCLASS)
            die("%s: record %lld has class %d", in->name, in->count, cl);
        classnames_check(N, in->name, &cl, 1); /* (names: an index into them) */
        const float *mu = rec->t[fm].data, *var = NULL;
        for (int k = 0; k < C * D; k++)
            if (!isfinite(mu[k]))
                die("%s: record %lld has a mean that is not finite (%g)", in->name, in->count, mu[k]);
        if (fv >= 0) {
            var = rec->t[fv].data;
            if (D > CENTROID_MAXD)
                die("--var: at most %d dimensions, the embeddings have %d", CENTROID_MAXD, D);
            for (int k = 0; k < C * D; k++)
                if (!isfinite(var[k]) || var[k] < 0)
                    die("%s: record %lld has a variance that is not a finite number >= 0 (%g)", in->name, in->count,
                        var[k]);
        }
        centroid_add(s, cl, mu, var, C);
    }
}

/* the centroid table as TSV on stdout: class, n, centroid[d]..., var[d]... */
static void print_table(const centroid_set *s, int wvar)
{
    int D = s->D;
    printf("class\tn");
    for (int d = 0; d < D; d++)
        printf("\tcentroid[%d]", d);
    for (int d = 0; wvar && d < D; d++)
        printf("\tvar[%d]", d);
    putchar('\n');
    for (int i = 0; i < s->n; i++) {
        const centroid *c = &s->c[i];
        printf("%d\t%ld", c->cls, c->n);
        for (int d = 0; d < D; d++)
            printf("\t%.7g", c->sum[d] / c->n);
        for (int d = 0; wvar && d < D; d++)
            printf("\t%.7g", c->vsum[d] / c->n);
        putchar('\n');
    }
}

static void write_order_json(FILE *f, const centroid_set *s, const centroid_order_stats *st)
{
    json_writer w;
    json_report(&w, f, "centroids");
    json_key_int(&w, "classes", s->n);
    json_key_int(&w, "shared_pairs", st->shared);
    json_key_int(&w, "runs", st->runs);
    json_key(&w, "mean_run");
    json_numf(&w, "%.4f", st->mean_run);
    json_key(&w, "order");
    json_arr(&w);
    for (int i = 0; i < s->n; i++)
        json_int(&w, s->c[i].cls);
    json_end(&w);
    json_end(&w);
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
    int nfiles = argc - optind, digits = 2, C = 0;
    const char *first = NULL;
    centroid_set s;
    centroid_set_init(&s, -1);
    classnames names0 = {0}; /* the first input's class names: every input's, as classes pool by number */
    stream_record rec = {0};
    for (int fi = 0; fi < (nfiles ? nfiles : 1); fi++) {
        stream_reader *in = stream_open_path(nfiles ? argv[optind + fi] : "-");
        const stream_header *h = in->header;
        match_layout L = match_check_header(in->name, h); /* kind, mu [C, D], var of its shape */
        int fc = stream_field_need(in->name, h, "class", DT_I32, 0, NULL);
        int fv = wvar ? L.var : -1;
        if (wvar && fv < 0)
            die("%s: --var needs stochastic embeddings (a `var` field); these are points", in->name);
        if (s.D >= 0 && s.D != L.D)
            die("%s: embeddings of %d dimensions, the first input had %d", in->name, L.D, s.D);
        s.D = L.D;
        /* a mixture's centroid is its component means' mean whatever C, but embeddings of
         * different C come from different models: their centroids do not share a space */
        if (C && L.C != C)
            die("%s: embeddings of %d component%s (mu [%d, %d]), the first input %s had %d (mu [%d, %d]): expected "
                "one model's embeddings, the same C",
                in->name, L.C, L.C == 1 ? "" : "s", L.C, L.D, first, C, C, L.D);
        C = L.C;
        first = first ? first : in->name;
        int dg = (int)header_int(h, "digits", 2);
        if (fi > 0 && dg != digits)
            die("%s: %d-digit classes, the first input had %d digits", in->name, dg, digits);
        digits = dg;
        classnames cn;
        classnames_read(&cn, in->name, h);
        if (fi == 0)
            names0 = cn;
        else if (!classnames_equal(&cn, &names0))
            die("%s: its classes are named otherwise than those of %s (meta class_names): centroids pools the inputs' "
                "classes by number; expected the same names in every input", in->name, first);
        record_free(&rec);
        read_input(&s, in, L.mu, fc, fv, L.C, &cn, &rec);
        if (fi > 0)
            classnames_free(&cn);
        stream_close(in);
    }
    if (s.n == 0)
        die("no records");
    if (!order)
        print_table(&s, wvar);
    else {
        centroid_order_stats st;
        centroid_order(&s, digits, &st);
        if (jf) {
            write_order_json(jf, &s, &st);
            if (jf != stdout)
                atomic_sync(jf);
        }
        if (jf != stdout) { /* --json -: the JSON in the text's place */
            printf("order");
            for (int i = 0; i < s.n; i++)
                printf(" %0*d", digits, s.c[i].cls);
            printf("\nclasses %d\nshared_pairs %d (of %d adjacent pairs)\nruns %d\nmean_run %.2f\n", s.n, st.shared,
                   s.n - 1, st.runs, st.mean_run);
        }
    }
    close_stdout();
    json_commit(jf);
    centroid_set_free(&s);
    classnames_free(&names0);
    record_free(&rec);
    return 0;
}
