/* fromnpz: numpy arrays in, a stream out. Reads an .npz (np.savez) or one .npy and writes an
 * `embeddings` stream (mu, var, class, id, eta and any other per-item arrays), an `images`
 * stream or a `features` stream (a backbone's feature vectors), one record per item as embed and
 * mkdigits write them, so that every evaluator (knn, pairscore, retrieve, fewshot, ...) reads a
 * model trained elsewhere and train learns a head on its features. Every array is checked and
 * converted before the header is written: a refusal leaves stdout empty.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "npzimport.h"
#include "stream.h"
#include "util.h"

static const char *usage =
    "usage: fromnpz [-k embeddings|images|features] [--mu NAME] [--var NAME] [--eta NAME]\n"
    "               [--image NAME] [--features NAME] [--class|--labels NAME] [--id NAME] [--corrupt NAME]\n"
    "               [--skip NAME,...] [--where NAME=LO[..HI]] [--match-a A --match-b B] [--range 1|255]\n"
    "               [--dataset NAME]\n"
    "               FILE.npz|FILE.npy|- > stream\n"
    "  A NumPy .npz or .npy as a hedge stream of embeddings, images or features.\n";

/* --where NAME=LO or NAME=LO..HI (integers, LO <= HI) into o (o->where: a copy of NAME) */
static void where(npzimport_options *o, const char *spec)
{
    static char name[256];
    const char *eq = strchr(spec, '='), *dots;
    char *end;
    if (!eq || eq == spec || eq - spec >= (long)sizeof name)
        usage_die("--where: '%s' is not NAME=LO or NAME=LO..HI (NAME of 1 to 255 bytes)", spec);
    memcpy(name, spec, (size_t)(eq - spec));
    name[eq - spec] = 0;
    o->where = name;
    dots = strstr(eq + 1, "..");
    errno = 0;
    o->where_lo = strtoll(eq + 1, &end, 10);
    int ok = end != eq + 1 && end == (dots ? dots : eq + 1 + strlen(eq + 1)) && !errno;
    o->where_hi = o->where_lo;
    if (ok && dots) {
        o->where_hi = strtoll(dots + 2, &end, 10);
        ok = end != dots + 2 && !*end && !errno;
    }
    if (!ok || o->where_lo > o->where_hi)
        usage_die("--where %s: '%s' is not LO or LO..HI (integers, LO <= HI)", name, eq + 1);
}

int main(int argc, char **argv)
{
    util_start(argc, argv, usage);
    npzimport_options o = {0};
    /* the role options --mu ... --corrupt in the order of the roles (lib/data/npzimport.h) */
    enum { O_ROLE = 256, O_SKIP = O_ROLE + NPZIMPORT_NROLES, O_A, O_B, O_RANGE, O_DATASET, O_WHERE };
    static const struct option lopts[] = {
        {"mu", 1, 0, O_ROLE + NPZIMPORT_MU},       {"var", 1, 0, O_ROLE + NPZIMPORT_VAR},
        {"eta", 1, 0, O_ROLE + NPZIMPORT_ETA},     {"image", 1, 0, O_ROLE + NPZIMPORT_IMAGE},
        {"features", 1, 0, O_ROLE + NPZIMPORT_FEATURES}, {"class", 1, 0, O_ROLE + NPZIMPORT_CLASS},
        {"id", 1, 0, O_ROLE + NPZIMPORT_ID},       {"corrupt", 1, 0, O_ROLE + NPZIMPORT_CORRUPT},
        {"labels", 1, 0, O_ROLE + NPZIMPORT_CLASS}, /* evaluate's name, hedge.evaluate's */
        {"skip", 1, 0, O_SKIP},                    {"match-a", 1, 0, O_A},
        {"match-b", 1, 0, O_B},                    {"range", 1, 0, O_RANGE},
        {"dataset", 1, 0, O_DATASET},              {"where", 1, 0, O_WHERE},
        {"help", 0, 0, 'h'},
        {0, 0, 0, 0}};
    int c;
    while ((c = getopt_long(argc, argv, "k:h", lopts, NULL)) != -1) {
        if (c >= O_ROLE && c < O_ROLE + NPZIMPORT_NROLES) {
            o.name[c - O_ROLE] = optarg;
            continue;
        }
        switch (c) {
        case 'k':
            for (o.kind = 0; o.kind < NPZIMPORT_NKINDS && strcmp(optarg, npzimport_kind_names[o.kind]); o.kind++)
                ;
            if (o.kind == NPZIMPORT_NKINDS)
                usage_die("-k: '%s' is none of embeddings, images, features", optarg);
            break;
        case O_SKIP: o.skip = optarg; break;
        case O_A: o.match_a = parse_double("--match-a", optarg, 1e-300, 1e300), o.has_a = 1; break;
        case O_B: o.match_b = parse_double("--match-b", optarg, -1e300, 1e300), o.has_b = 1; break;
        case O_RANGE:
            o.range = (int)parse_long("--range", optarg, 1, 255);
            if (o.range != 1 && o.range != 255)
                usage_die("--range: %s is neither 1 nor 255", optarg);
            break;
        case O_DATASET: o.dataset = optarg; break;
        case O_WHERE: where(&o, optarg); break;
        case 'h': usage_help();
        default: usage_bad_option(argv);
        }
    }
    if (argc - optind != 1)
        usage_die(argc == optind ? "which file? (an .npz or .npy, or - for stdin)" : "one input file only");
    o.input = argv[optind];
    if (o.has_a != o.has_b)
        usage_die("--match-a and --match-b go together");
    for (int r = 0; r < NPZIMPORT_NROLES; r++)
        if (o.name[r] && !npzimport_takes(o.kind, r))
            usage_die("--%s is not for -k %s", npzimport_role_names[r], npzimport_kind_names[o.kind]);
    if (o.has_a && o.kind != NPZIMPORT_TO_EMBEDDINGS)
        usage_die("--match-a/-b are for -k embeddings");
    if (o.range && o.kind != NPZIMPORT_TO_IMAGES)
        usage_die("--range is for -k images");
    stdout_not_terminal();

    npzimport im;
    npzimport_read(&im, &o);
    stream_header *h = npzimport_header(&im, &o, argc, argv);
    stream_writer *w = stream_create(stdout, h);
    npzimport_write(&im, w);
    stream_finish(w);
    close_stdout();
    npzimport_free(&im);
    header_free(h);
    return 0;
}
