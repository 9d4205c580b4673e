/* mkshapes: the synthetic colour-orientation L-shapes of the SPE paper (section 4.1, appendix
 * A.2) as an `images` stream (formats/stream.md): uint8 [3, 64, 64] RGB images, channels first,
 * with the generative coordinates of each (class, orientation, hue, leg fractions, per-pixel hue
 * noise). The model, and every choice made where the paper is silent, is in lib/data/shapes.h; the
 * usage below says the same for the user. --bayes prints the Bayes-optimal accuracy of the
 * chosen parameters instead (the paper: about 87%).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>

#include "rng.h"
#include "shapes.h"
#include "stream.h"
#include "util.h"

#define DEFAULT_IMAGES 10000
#define MAX_IMAGES 10000000L

static const char *usage =
    "usage: mkshapes [-n N] [-s SPLIT] [-S SEED] [--sd DEG] [--orientations A,B] [--hues A,B]\n"
    "                [--legs LO,HI] [--leg-noise all|noisy] [--noisy P] [--noise-sd LO,HI]\n"
    "                [--hue-noise DEG] [--short-legs F] [--stroke PX] [--arm PX]\n"
    "                [--saturation S] [--value V] [--progress] > images\n"
    "       mkshapes --bayes [--sd DEG] [--orientations A,B] [--hues A,B]\n"
    "  Synthetic L-shapes (orientation and hue classes) as an images stream.\n";

typedef struct {
    long n;
    int split, bayes;
    uint64_t seed;
    shapes_params p;
    int have_hue_noise, have_short_legs;
} options;

/* "A,B" into two numbers in [lo, hi] */
static void parse_pair(const char *opt, const char *s, double lo, double hi, double out[2])
{
    const char *comma = strchr(s, ',');
    if (!comma || strchr(comma + 1, ','))
        usage_die("%s: '%s' is not two numbers A,B", opt, s);
    char first[64];
    size_t len = (size_t)(comma - s);
    if (len >= sizeof first)
        usage_die("%s: '%s' is not two numbers A,B", opt, s);
    memcpy(first, s, len);
    first[len] = '\0';
    out[0] = parse_double(opt, first, lo, hi);
    out[1] = parse_double(opt, comma + 1, lo, hi);
}

static options parse_options(int argc, char **argv)
{
    options o = {.n = DEFAULT_IMAGES, .split = SHAPES_TRAIN, .seed = SHAPES_SEED};
    enum {
        OPT_SD = 256, OPT_ORIENT, OPT_HUES, OPT_LEGS, OPT_LEG_NOISE, OPT_NOISY, OPT_NOISE_SD,
        OPT_HUE_NOISE, OPT_SHORT_LEGS, OPT_STROKE, OPT_ARM, OPT_SAT, OPT_VALUE, OPT_BAYES, OPT_PROGRESS,
    };
    static const struct option longs[] = {
        {"sd", required_argument, 0, OPT_SD},
        {"orientations", required_argument, 0, OPT_ORIENT},
        {"hues", required_argument, 0, OPT_HUES},
        {"legs", required_argument, 0, OPT_LEGS},
        {"leg-noise", required_argument, 0, OPT_LEG_NOISE},
        {"noisy", required_argument, 0, OPT_NOISY},
        {"noise-sd", required_argument, 0, OPT_NOISE_SD},
        {"hue-noise", required_argument, 0, OPT_HUE_NOISE},
        {"short-legs", required_argument, 0, OPT_SHORT_LEGS},
        {"stroke", required_argument, 0, OPT_STROKE},
        {"arm", required_argument, 0, OPT_ARM},
        {"saturation", required_argument, 0, OPT_SAT},
        {"value", required_argument, 0, OPT_VALUE},
        {"bayes", no_argument, 0, OPT_BAYES},
        {"progress", no_argument, 0, OPT_PROGRESS},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    shapes_defaults(&o.p, SHAPES_TRAIN);
    int c, have_noisy = 0, stream_options = 0;
    while ((c = getopt_long(argc, argv, "n:s:S:h", longs, NULL)) != -1) {
        stream_options += c != OPT_SD && c != OPT_ORIENT && c != OPT_HUES && c != OPT_BAYES;
        switch (c) {
        case 'n': o.n = parse_long("-n", optarg, 1, MAX_IMAGES); break;
        case 's':
            if ((o.split = shapes_split_parse(optarg)) < 0)
                usage_die("-s: '%s' is not train or test", optarg);
            break;
        case 'S': o.seed = parse_u64("-S", optarg); break;
        case OPT_SD: o.p.sd = parse_double("--sd", optarg, 0, 180); break;
        case OPT_ORIENT: parse_pair("--orientations", optarg, -360, 360, o.p.orient); break;
        case OPT_HUES: parse_pair("--hues", optarg, -360, 360, o.p.hue); break;
        case OPT_LEGS: {
            double r[2];
            parse_pair("--legs", optarg, 0, 1, r);
            o.p.leg_lo = r[0], o.p.leg_hi = r[1];
            break;
        }
        case OPT_LEG_NOISE:
            if (!strcmp(optarg, "all"))
                o.p.leg_noise = SHAPES_LEGS_ALL;
            else if (!strcmp(optarg, "noisy"))
                o.p.leg_noise = SHAPES_LEGS_NOISY;
            else
                usage_die("--leg-noise: '%s' is not all or noisy", optarg);
            break;
        case OPT_NOISY: o.p.noisy_frac = parse_double("--noisy", optarg, 0, 1), have_noisy = 1; break;
        case OPT_NOISE_SD: {
            double r[2];
            parse_pair("--noise-sd", optarg, 0, 360, r);
            o.p.noise_lo = r[0], o.p.noise_hi = r[1];
            break;
        }
        case OPT_HUE_NOISE:
            o.p.hue_noise = parse_double("--hue-noise", optarg, 0, 360);
            o.have_hue_noise = 1;
            break;
        case OPT_SHORT_LEGS:
            o.p.short_legs = parse_double("--short-legs", optarg, 0, 1);
            o.have_short_legs = 1;
            break;
        case OPT_STROKE: o.p.stroke = parse_double("--stroke", optarg, 1, SHAPES_SIDE); break;
        case OPT_ARM: o.p.arm = parse_double("--arm", optarg, 0, SHAPES_SIDE); break;
        case OPT_SAT: o.p.saturation = parse_double("--saturation", optarg, 0, 1); break;
        case OPT_VALUE: o.p.value = parse_double("--value", optarg, 0, 1); break;
        case OPT_BAYES: o.bayes = 1; break;
        case OPT_PROGRESS: progress_force = 1; break;
        case 'h': usage_help();
        default: usage_bad_option(argv);
        }
    }
    if (optind < argc)
        usage_die("unexpected argument '%s'", argv[optind]);
    if (o.bayes && stream_options)
        usage_die("--bayes depends on --sd, --orientations and --hues only; it takes no other option");
    if (!have_noisy) { /* the split's default, whatever the order of -s and the rest */
        shapes_params d;
        shapes_defaults(&d, o.split);
        o.p.noisy_frac = d.noisy_frac;
    }
    const char *err = shapes_check(&o.p);
    if (err)
        usage_die("%s", err);
    return o;
}

static void set_f32s(stream_header *h, const char *key, const float *v, int64_t n)
{
    tensor *t = tensor_view(DT_F32, 1, &n, (void *)v);
    header_set_tensor(h, key, t);
    tensor_free(t);
}

static stream_header *make_header(const options *o, int argc, char **argv)
{
    const shapes_params *p = &o->p;
    stream_header *h = header_new("images", 0);
    header_provenance(h, argc, argv);
    header_set_seed(h, o->seed);
    /* scalars get a non-NULL shape too: header_add_field memcpy's ndim entries from it */
    int64_t ishape[3] = {SHAPES_CHANNELS, SHAPES_SIDE, SHAPES_SIDE}, two[1] = {2}, scalar[1] = {0};
    header_add_field(h, "image", DT_U8, 3, ishape);
    header_add_field(h, "class", DT_I32, 0, scalar);
    header_add_field(h, "id", DT_I64, 0, scalar);
    header_add_field(h, "orientation", DT_F32, 0, scalar);
    header_add_field(h, "hue", DT_F32, 0, scalar);
    header_add_field(h, "leg", DT_F32, 1, two);
    header_add_field(h, "hue_noise", DT_F32, 0, scalar);
    header_set_int(h, "channels", SHAPES_CHANNELS);
    header_set_int(h, "height", SHAPES_SIDE);
    header_set_int(h, "width", SHAPES_SIDE);
    header_set_str(h, "dataset", "lshapes");
    header_set_str(h, "split", shapes_split_name(o->split));
    int32_t classes[SHAPES_CLASSES];
    float oc[SHAPES_CLASSES], hc[SHAPES_CLASSES];
    for (int c = 0; c < SHAPES_CLASSES; c++) {
        classes[c] = c;
        oc[c] = (float)p->orient[c & 1];
        hc[c] = (float)p->hue[c >> 1];
    }
    int64_t nc = SHAPES_CLASSES;
    tensor *t = tensor_view(DT_I32, 1, &nc, classes);
    header_set_tensor(h, "classes", t);
    tensor_free(t);
    set_f32s(h, "orientation_centres", oc, SHAPES_CLASSES);
    set_f32s(h, "hue_centres", hc, SHAPES_CLASSES);
    header_set_str(h, "angle_unit", "degrees");
    header_set_float(h, "sd", p->sd);
    header_set_float(h, "legs_lo", p->leg_lo);
    header_set_float(h, "legs_hi", p->leg_hi);
    header_set_str(h, "leg_noise", p->leg_noise == SHAPES_LEGS_ALL ? "all" : "noisy");
    header_set_float(h, "noisy", p->noisy_frac);
    header_set_float(h, "noise_sd_lo", p->noise_lo);
    header_set_float(h, "noise_sd_hi", p->noise_hi);
    if (o->have_hue_noise)
        header_set_float(h, "hue_noise", p->hue_noise);
    if (o->have_short_legs)
        header_set_float(h, "short_legs", p->short_legs);
    header_set_float(h, "stroke", p->stroke);
    header_set_float(h, "arm", p->arm);
    header_set_float(h, "saturation", p->saturation);
    header_set_float(h, "value", p->value);
    return h;
}

int main(int argc, char **argv)
{
    util_start(argc, argv, usage);
    options o = parse_options(argc, argv);
    if (o.bayes) {
        printf("%.6f\n", shapes_bayes(&o.p));
        close_stdout();
        return 0;
    }
    stdout_not_terminal();

    stream_header *h = make_header(&o, argc, argv);
    static char obuf[1 << 20];
    setvbuf(stdout, obuf, _IOFBF, sizeof obuf);
    __fsetlocking(stdout, FSETLOCKING_BYCALLER); /* one thread: the writer's many small fwrites skip the lock */
    stream_writer *w = stream_create(stdout, h);
    static uint8_t image[SHAPES_CHANNELS * SHAPES_SIDE * SHAPES_SIDE];
    shapes_item it;
    int64_t id;
    void *data[] = {image, &it.cls, &id, &it.orientation, &it.hue, it.leg, &it.hue_noise};
    progress pr;
    progress_start(&pr, "images", o.n);
    for (id = 0; id < o.n; id++) {
        shapes_sample(&o.p, o.seed, o.split, id, &it);
        shapes_render(&o.p, &it, o.seed, o.split, id, image);
        stream_write_data(w, data, 0);
        if ((id & 1023) == 0)
            progress_update(&pr, id, NULL);
    }
    progress_end(&pr, o.n);
    stream_finish(w);
    close_stdout();
    header_free(h);
    return 0;
}
