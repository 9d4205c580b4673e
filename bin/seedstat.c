/* seedstat: the mean and standard deviation over training seeds of the pipelines' result lines
 * (pipelines/common.sh, "Seeds"). A run trained with another seed than the configuration's
 * first is named CONFIG.sSEED; its lines are grouped with those of CONFIG.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdint.h>
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

/* the groups by (config, set, metric) in an open-addressed table of indices into g: one lookup
 * per line whatever the number of groups (200,000 groups took 20 s with a search of every group) */
typedef struct {
    group *g;
    size_t ng, capg;
    size_t *slot;   /* index + 1 into g, 0: empty; a power of two, at most half full */
    size_t nslot;
} groups;

static uint64_t key_hash(const char *config, const char *set, const char *metric)
{
    uint64_t h = 1469598103934665603u; /* FNV-1a over the three fields and a separator */
    const char *part[3] = {config, set, metric};
    for (int k = 0; k < 3; k++) {
        for (const unsigned char *c = (const unsigned char *)part[k]; *c; c++)
            h = (h ^ *c) * 1099511628211u;
        h = (h ^ '\t') * 1099511628211u;
    }
    return h;
}

static void table_put(groups *G, size_t i)
{
    size_t m = G->nslot - 1, s = (size_t)key_hash(G->g[i].config, G->g[i].set, G->g[i].metric) & m;
    while (G->slot[s])
        s = (s + 1) & m;
    G->slot[s] = i + 1;
}

/* the group of (config, set, metric), a new one (with this note) if there is none */
static group *group_of(groups *G, const char *config, const char *set, const char *metric, const char *note)
{
    size_t m = G->nslot - 1, s = (size_t)key_hash(config, set, metric) & m;
    for (; G->slot[s]; s = (s + 1) & m) {
        group *x = &G->g[G->slot[s] - 1];
        if (!strcmp(x->config, config) && !strcmp(x->set, set) && !strcmp(x->metric, metric))
            return x;
    }
    if (G->ng == G->capg)
        G->g = erealloc(G->g, (G->capg = G->capg ? 2 * G->capg : 64) * sizeof *G->g);
    G->g[G->ng] = (group){estrdup(config), estrdup(set), estrdup(metric), estrdup(note), NULL, 0, 0};
    G->ng++;
    if (2 * G->ng > G->nslot) { /* grow, and place every group again */
        free(G->slot);
        G->nslot *= 2;
        G->slot = ecalloc(G->nslot, sizeof *G->slot);
        for (size_t i = 0; i < G->ng; i++)
            table_put(G, i);
    } else
        G->slot[s] = G->ng;
    return &G->g[G->ng - 1];
}

/* the field after *p up to a tab or the end of the line, NUL-terminated; *p moves past it */
static char *field(char **p)
{
    char *s = *p, *t = s + strcspn(s, "\t");
    *p = *t ? t + 1 : t;
    *t = 0;
    return s;
}

/* a decimal number as results.tsv holds them: [+-] digits [. digits] [e [+-] digits], at least one
 * digit before the exponent; no hexadecimal, inf, nan, spaces or anything after it */
static int decimal(const char *s)
{
    s += *s == '+' || *s == '-';
    size_t a = strspn(s, "0123456789");
    s += a;
    size_t b = 0;
    if (*s == '.') {
        b = strspn(s + 1, "0123456789");
        s += 1 + b;
    }
    if (!a && !b)
        return 0;
    if (*s == 'e' || *s == 'E') {
        s++;
        s += *s == '+' || *s == '-';
        size_t e = strspn(s, "0123456789");
        if (!e)
            return 0;
        s += e;
    }
    return !*s;
}

/* s as a message shows it (util_shown: what is not printable UTF-8 escaped, at most 64 bytes);
 * malloc'd (for messages that end the program) */
static char *quoted(const char *s)
{
    char *q = emalloc(UTIL_SHOWN);
    util_shown(q, s, strlen(s));
    return q;
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
    input_not_directory(f, path, "result lines (text)");
    groups G = {.nslot = 256};
    G.slot = ecalloc(G.nslot, sizeof *G.slot);
    size_t len = 0;
    char *line = NULL;
    long lineno = 0;
    ssize_t r;
    while ((r = getline(&line, &len, f)) != -1) {
        lineno++;
        if (r && line[r - 1] == '\n')
            line[--r] = 0;
        if (strlen(line) != (size_t)r)
            die("%s: line %ld: a NUL byte after '%s', expected text", path, lineno, quoted(line));
        if (!r || line[0] == '#' || !strncmp(line, "run\t", 4))
            continue;
        char *p = line, *run = field(&p), *set = field(&p), *metric = field(&p), *value = field(&p);
        char *note = field(&p);
        if (!*run || !*set || !*metric || !*value)
            die("%s: line %ld: expected RUN, SET, METRIC and VALUE separated by tabs, got '%s'", path,
                lineno, quoted(run));
        /* CONFIG: RUN without .sDIGITS at its end */
        char *dot = strrchr(run, '.');
        if (dot && dot[1] == 's' && dot[2] && strspn(dot + 2, "0123456789") == strlen(dot + 2))
            *dot = 0;
        double x = 0;
        int num = strcmp(value, "-") != 0;
        if (num) {
            x = decimal(value) ? strtod(value, NULL) : NAN;
            if (!isfinite(x))
                die("%s: line %ld: value '%s' of %s %s %s is not a finite decimal number or '-'", path, lineno,
                    quoted(value), quoted(run), quoted(set), quoted(metric));
        }
        group *gi = group_of(&G, run, set, metric, note);
        if (num) {
            if (gi->n == gi->cap)
                gi->v = erealloc(gi->v, (gi->cap = gi->cap ? 2 * gi->cap : 4) * sizeof *gi->v);
            gi->v[gi->n++] = x;
        }
    }
    if (ferror(f))
        die("%s: read error: %s", path, strerror(errno));
    printf("config\tset\tmetric\tmean\tnote\tsd\tn\n"); /* the one plain header line of every TSV */
    group *g = G.g;
    for (size_t i = 0; i < G.ng; i++) {
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
    for (size_t i = 0; i < G.ng; i++) {
        free(g[i].config), free(g[i].set), free(g[i].metric), free(g[i].note);
        free(g[i].v);
    }
    free(g);
    free(G.slot);
    free(line);
    if (f != stdin)
        fclose(f);
    close_stdout();
    return 0;
}
