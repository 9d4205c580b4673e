/* fromnpz: numpy arrays in, a stream out. Reads an .npz (np.savez) or one .npy and writes an
 * `embeddings` stream (mu, var, class, id, eta and any other per-item arrays) or an `images`
 * stream, one record per item as embed and mkdigits write them, so that every evaluator (knn,
 * pairscore, retrieve, fewshot, ...) reads a model trained elsewhere. Every array is checked and
 * converted before the header is written: a refusal leaves stdout empty.
 */
#include <getopt.h>
#include <string.h>

#include "npzimport.h"
#include "stream.h"
#include "util.h"

static const char *usage =
    "usage: fromnpz [-k embeddings|images] [--mu NAME] [--var NAME] [--class NAME] [--id NAME]\n"
    "               [--eta NAME] [--image NAME] [--skip NAME,...] [--match-a A --match-b B]\n"
    "               [--range 1|255] [--dataset NAME] FILE.npz|FILE.npy|- > stream\n"
    "  A NumPy .npz or .npy as a hedge stream of embeddings or images.\n";

int main(int argc, char **argv)
{
    util_start(argc, argv, usage);
    npzimport_options o = {0};
    enum { O_MU = 256, O_VAR, O_ETA, O_IMAGE, O_CLASS, O_ID, O_SKIP, O_A, O_B, O_RANGE, O_DATASET };
    static const struct option lopts[] = {
        {"mu", 1, 0, O_MU},       {"var", 1, 0, O_VAR},         {"eta", 1, 0, O_ETA},
        {"image", 1, 0, O_IMAGE}, {"class", 1, 0, O_CLASS},     {"id", 1, 0, O_ID},
        {"skip", 1, 0, O_SKIP},   {"match-a", 1, 0, O_A},       {"match-b", 1, 0, O_B},
        {"range", 1, 0, O_RANGE}, {"dataset", 1, 0, O_DATASET}, {"help", 0, 0, 'h'},
        {0, 0, 0, 0}};
    int c;
    while ((c = getopt_long(argc, argv, "k:h", lopts, NULL)) != -1) {
        switch (c) {
        case 'k':
            if (strcmp(optarg, "embeddings") && strcmp(optarg, "images"))
                usage_die("-k: '%s' is neither embeddings nor images", optarg);
            o.images = !strcmp(optarg, "images");
            break;
        case O_MU: case O_VAR: case O_ETA: case O_IMAGE: case O_CLASS: case O_ID:
            o.name[c - O_MU] = optarg;
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
        case 'h': usage_help();
        default: usage_bad_option(argv);
        }
    }
    if (argc - optind != 1)
        usage_die(argc == optind ? "which file? (an .npz or .npy, or - for stdin)" : "one input file only");
    o.input = argv[optind];
    if (o.has_a != o.has_b)
        usage_die("--match-a and --match-b go together");
    if (o.images && (o.name[NPZIMPORT_MU] || o.name[NPZIMPORT_VAR] || o.name[NPZIMPORT_ETA] || o.has_a))
        usage_die("-k images takes no --mu, --var, --eta or --match-a/-b");
    if (!o.images && (o.name[NPZIMPORT_IMAGE] || o.range))
        usage_die("--image and --range are for -k images");
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
