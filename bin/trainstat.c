/* trainstat: where the training runs of a grid stand, read from their logs: per run its step,
 * steps per second and time left, then how many runs finished and the training time left for all
 * of them. `make demo` shows it while it trains (pipelines/common.sh grid_progress).
 *
 * A RUN is a pipeline's run folder (OUT/runs/NAME): RUN/train.log is its train --log (the steps
 * and their seconds: lib/training/trainlog.h trainlog_read), a non-empty RUN/results.tsv says it finished
 * (trained and evaluated). The time left for all is the steps not yet trained, every run's to -n,
 * over the steps per second of the runs training now: those that wait take their places.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "trainlog.h"
#include "util.h"

static const char *usage =
    "usage: trainstat -n STEPS RUN...\n"
    "  Where training runs stand (RUN: a pipeline's run folder, OUT/runs/NAME), from RUN/train.log.\n";

/* RUN's name: its last path component */
static const char *run_name(char *run)
{
    size_t n = strlen(run);
    while (n > 1 && run[n - 1] == '/')
        run[--n] = 0;
    const char *s = strrchr(run, '/');
    return s && s[1] ? s + 1 : run;
}

int main(int argc, char **argv)
{
    util_start(argc, argv, usage);
    long steps = 0;
    int c;
    static const struct option longs[] = {{"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    while ((c = getopt_long(argc, argv, "hn:", longs, NULL)) != -1) {
        switch (c) {
        case 'n': steps = parse_long("-n", optarg, 1, 1000000000L); break;
        case 'h': usage_help();
        default: usage_bad_option(argv);
        }
    }
    if (!steps)
        usage_die("-n STEPS is required (the steps each run trains)");
    if (optind == argc)
        usage_die("no RUN folder");
    int width = 0;
    for (int i = optind; i < argc; i++) {
        int w = (int)strlen(run_name(argv[i]));
        width = w > width ? w : width;
    }
    /* every log read before a line is printed: a bad one leaves nothing on stdout */
    int runs = argc - optind;
    trainlog_state *st = ecalloc((size_t)runs, sizeof *st);
    int *finished = ecalloc((size_t)runs, sizeof *finished);
    for (int r = 0; r < runs; r++) {
        char path[4096];
        struct stat sb;
        if (snprintf(path, sizeof path, "%s/results.tsv", argv[optind + r]) >= (int)sizeof path)
            die("%s: the folder's name is too long", argv[optind + r]);
        finished[r] = stat(path, &sb) == 0 && sb.st_size > 0;
        snprintf(path, sizeof path, "%s/train.log", argv[optind + r]);
        if (!finished[r])
            trainlog_read(path, &st[r]);
    }
    long long left = 0; /* steps not yet trained, over every run */
    double rate = 0;    /* steps per second, over the runs training now */
    int done = 0;
    for (int r = 0; r < runs; r++) {
        const char *name = run_name(argv[optind + r]);
        const trainlog_state *s = &st[r];
        if (finished[r]) {
            printf("%-*s  done\n", width, name);
            done++;
        } else if (!s->lines) {
            printf("%-*s  waiting\n", width, name);
            left += steps;
        } else if (s->step >= steps) {
            printf("%-*s  trained (%lld steps), evaluating\n", width, name, (long long)s->step);
        } else {
            left += steps - s->step;
            printf("%-*s  step %lld/%ld (%.1f%%)", width, name, (long long)s->step, steps, 100.0 * s->step / steps);
            if (s->rate > 0) {
                char d[32];
                format_duration(d, sizeof d, (steps - s->step) / s->rate);
                printf(", %.1f steps/s, %s left", s->rate, d);
                rate += s->rate;
            }
            printf("\n");
        }
    }
    printf("runs done %d of %d", done, runs);
    if (!left) {
        printf(", training finished\n");
    } else if (rate > 0) {
        char d[32];
        format_duration(d, sizeof d, left / rate);
        printf(", training %s left (%.1f steps/s in all)\n", d, rate);
    } else {
        printf(", training time left not known yet\n");
    }
    free(st);
    free(finished);
    close_stdout();
    return 0;
}
