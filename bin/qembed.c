/* qembed: the query side of a two-tower model (Cross-Example Softmax and kin): embeds digit
 * strings with the checkpoint's query tower (lib/network/model.h) and writes them as an `embeddings`
 * stream, one record per query, so that `retrieve -g IMAGES QUERIES` ranks the images of each
 * number for its string, seen or never seen in training.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blas.h"
#include "ckpt.h"
#include "model.h"
#include "model_query.h"
#include "stream.h"
#include "util.h"

static const char *usage =
    "usage: qembed -m MODEL.ckpt STRING...\n"
    "       qembed -m MODEL.ckpt --classes [INPUT]\n"
    "  Embeds digit strings with the query tower of a two-tower checkpoint.\n";

int main(int argc, char **argv)
{
    util_start(argc, argv, usage);
    const char *ckpt = NULL;
    int from_classes = 0, c;
    enum { OPT_CLASSES = 256 };
    static const struct option lo[] = {{"classes", 0, 0, OPT_CLASSES}, {"help", 0, 0, 'h'}, {0, 0, 0, 0}};
    while ((c = getopt_long(argc, argv, "m:h", lo, NULL)) != -1) {
        switch (c) {
        case 'm': ckpt = optarg; break;
        case OPT_CLASSES: from_classes = 1; break;
        case 'h': usage_help();
        default: usage_bad_option(argv);
        }
    }
    if (!ckpt)
        usage_die("-m MODEL.ckpt is required");
    if (from_classes && argc - optind > 1)
        usage_die("--classes reads one stream");
    if (!from_classes && optind == argc)
        usage_die("give the digit strings to embed, or --classes");
    stdout_not_terminal();
    blas_init(argv, 1);

    ckpt_info ci;
    stream_header *ch;
    /* the strings are checked before the checkpoint is read, against its digits below */
    int nq = 0;
    int32_t *cls = NULL;
    stream_reader *in = NULL;
    if (from_classes) {
        in = stream_open_path(optind < argc ? argv[optind] : "-");
        const stream_header *ih = in->header;
        if (strcmp(ih->kind, "images") && strcmp(ih->kind, "embeddings") && strcmp(ih->kind, "eta"))
            die("%s: expected a stream of kind 'images', 'embeddings' or 'eta' (a split of N-digit MNIST), got '%s' "
                "(from %s)",
                in->name, ih->kind, ih->program);
        const tensor *t = header_tensor(in->header, "classes");
        if (!t)
            die("%s: the header has no meta 'classes' (an images or embeddings stream of one split has)", in->name);
        nq = (int)tensor_numel(t);
        if (nq < 1)
            die("%s: meta 'classes' is empty", in->name);
        cls = emalloc((size_t)nq * sizeof *cls);
        for (int i = 0; i < nq; i++) {
            double v = tensor_get(t, i);
            if (v != (int32_t)v || v < 0)
                die("%s: meta 'classes' holds %g, not a number's class", in->name, v);
            cls[i] = (int32_t)v;
        }
        /* the whole stream, to its trailer: a stream cut short is refused, not trusted */
        stream_record rec = {0};
        while (stream_read(in, &rec))
            ;
        record_free(&rec);
    }
    model *m = ckpt_load(ckpt, &ci, NULL, 1, &ch);
    int N = ci.mc.digits, D = ci.mc.D;
    if (!ci.mc.query)
        die("%s has no query tower (loss %s): qembed embeds the queries of a two-tower model", ckpt, ci.loss);
    if (from_classes) { /* the classes must be numbers of the model's N digits, not of another set */
        const stream_meta *dm = header_meta(in->header, "dataset");
        const char *ds = dm && dm->type == META_STR ? dm->s : "unknown";
        if (!header_meta(in->header, "digits"))
            die("%s: no meta 'digits' (dataset %s): its classes are not N-digit numbers (the model %s embeds "
                "%d-digit numbers)",
                in->name, ds, ckpt, N);
        int64_t dg = header_int(in->header, "digits", -1);
        if (dg != N)
            die("%s: a set of %lld-digit numbers (meta digits), the model %s embeds %d-digit numbers", in->name,
                (long long)dg, ckpt, N);
    }
    int64_t top = 1;
    for (int p = 0; p < N; p++)
        top *= 10;
    if (!from_classes) {
        nq = argc - optind;
        cls = emalloc((size_t)nq * sizeof *cls);
        for (int i = 0; i < nq; i++) {
            const char *s = argv[optind + i];
            if ((int)strlen(s) != N || strspn(s, "0123456789") != (size_t)N)
                die("'%s' is not a string of %d digits (the model %s embeds %d-digit numbers)", s, N, ckpt, N);
            cls[i] = (int32_t)strtol(s, NULL, 10);
        }
    }
    for (int i = 0; i < nq; i++)
        if (cls[i] >= top)
            die("class %d is not a %d-digit number (the model %s embeds %d-digit numbers)", (int)cls[i], N, ckpt, N);

    stream_header *h = header_new("embeddings", 0);
    header_provenance(h, argc, argv);
    if (in)
        header_add_input(h, in->header);
    header_add_input(h, ch);
    header_set_str(h, "model", "query");
    header_set_int(h, "C", 1);
    header_set_int(h, "D", D);
    header_set_int(h, "digits", N);
    header_set_int(h, "normalized", 1);
    header_set_str(h, "checkpoint", ckpt);
    header_set_str(h, "loss", ci.loss);
    int64_t cd[2] = {1, D}, nd[1] = {N};
    header_add_field(h, "mu", DT_F32, 2, cd);
    header_add_field(h, "class", DT_I32, 0, NULL);
    header_add_field(h, "digits", DT_U8, 1, nd);
    header_add_field(h, "id", DT_I64, 0, NULL);
    stream_writer *out = stream_create(stdout, h);
    float *q = emalloc((size_t)D * sizeof *q);
    uint8_t *dg = emalloc((size_t)N);
    for (int i = 0; i < nq; i++) {
        model_query_digits(N, cls[i], dg);
        model_query_forward(m, dg, 1, q);
        model_unit_length(q, D);
        int64_t id = i;
        void *d[4] = {q, &cls[i], dg, &id};
        stream_write_data(out, d, 0);
    }
    stream_finish(out);
    close_stdout();
    free(q);
    free(dg);
    free(cls);
    header_free(h);
    header_free(ch);
    model_free(m);
    if (in)
        stream_close(in);
    return 0;
}
