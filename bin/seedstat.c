/* seedstat: the mean and standard deviation over training seeds of the pipelines' result lines
 * (pipelines/common.sh, "Seeds"). A run trained with another seed than the configuration's
 * first is named CONFIG.sSEED; its lines are grouped with those of CONFIG.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"

static const char *usage =
    "usage: seedstat [FILE]\n"
    "  The mean and sample standard deviation over training seeds of pipeline result lines.\n";

typedef struct {
    char *config, *set, *metric, *note;
    double *v;
    size_t n, cap;
} group;

/* the field after *p up to a tab or the end of the line, NUL-terminated; *p moves past it */
static char *field(char **p)
{
    char *s = *p, *t = s + strcspn(s, "\t");
    *p = *t ? t + 1 : t;
    *t = 0;
    return s;
}

int main(int argc, char **argv)
{
    util_start(argc, argv, usage);
    int c;
    static const struct option longs[] = {{"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    while ((c = getopt_long(argc, argv, "h", longs, NULL)) != -1) {
        switch (c) {
        case 'h': usage_help();
        default: usage_bad_option(argv);
        }
    }
    if (argc - optind > 1)
        usage_die("at most one input file");
    const char *path = optind < argc ? argv[optind] : "-";
    FILE *f = strcmp(path, "-") ? fopen(path, "r") : stdin;
    if (!f)
        die("%s: %s", path, strerror(errno));
    group *g = NULL;
    size_t ng = 0, capg = 0, len = 0;
    char *line = NULL;
    long lineno = 0;
    ssize_t r;
    while ((r = getline(&line, &len, f)) != -1) {
        lineno++;
        if (r && line[r - 1] == '\n')
            line[--r] = 0;
        if (!r || line[0] == '#' || !strncmp(line, "run\t", 4))
            continue;
        char *p = line, *run = field(&p), *set = field(&p), *metric = field(&p), *value = field(&p);
        char *note = field(&p);
        if (!*run || !*set || !*metric || !*value)
            die("%s: line %ld: expected RUN, SET, METRIC and VALUE separated by tabs, got '%s'", path,
                lineno, run);
        /* CONFIG: RUN without .sDIGITS at its end */
        char *dot = strrchr(run, '.');
        if (dot && dot[1] == 's' && dot[2] && strspn(dot + 2, "0123456789") == strlen(dot + 2))
            *dot = 0;
        double x = 0;
        int num = strcmp(value, "-") != 0;
        if (num) {
            char *end;
            x = strtod(value, &end);
            if (*end || end == value || !isfinite(x))
                die("%s: line %ld: value '%s' of %s %s %s is not a finite number or '-'", path, lineno,
                    value, run, set, metric);
        }
        size_t i = 0;
        while (i < ng && (strcmp(g[i].config, run) || strcmp(g[i].set, set) || strcmp(g[i].metric, metric)))
            i++;
        if (i == ng) {
            if (ng == capg)
                g = erealloc(g, (capg = capg ? 2 * capg : 64) * sizeof *g);
            g[ng++] = (group){estrdup(run), estrdup(set), estrdup(metric), estrdup(note), NULL, 0, 0};
        }
        if (num) {
            if (g[i].n == g[i].cap)
                g[i].v = erealloc(g[i].v, (g[i].cap = g[i].cap ? 2 * g[i].cap : 4) * sizeof *g[i].v);
            g[i].v[g[i].n++] = x;
        }
    }
    if (ferror(f))
        die("%s: read error: %s", path, strerror(errno));
    printf("config\tset\tmetric\tmean\tnote\tsd\tn\n"); /* the one plain header line of every TSV */
    for (size_t i = 0; i < ng; i++) {
        printf("%s\t%s\t%s\t", g[i].config, g[i].set, g[i].metric);
        if (!g[i].n) {
            printf("-\t%s\t\t0\n", g[i].note);
            continue;
        }
        /* two passes: the mean, then the squares about it */
        double s = 0, ss = 0;
        for (size_t k = 0; k < g[i].n; k++)
            s += g[i].v[k];
        double mean = s / (double)g[i].n;
        for (size_t k = 0; k < g[i].n; k++)
            ss += (g[i].v[k] - mean) * (g[i].v[k] - mean);
        printf("%.10g\t%s\t", mean, g[i].note);
        if (g[i].n > 1)
            printf("%.10g", sqrt(ss / (double)(g[i].n - 1)));
        printf("\t%zu\n", g[i].n);
    }
    for (size_t i = 0; i < ng; i++) {
        free(g[i].config), free(g[i].set), free(g[i].metric), free(g[i].note);
        free(g[i].v);
    }
    free(g);
    free(line);
    if (f != stdin)
        fclose(f);
    close_stdout();
    return 0;
}
