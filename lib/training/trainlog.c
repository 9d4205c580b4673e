/* trainlog: train's log and step bookkeeping (lib/training/trainlog.h) */
#include "trainlog.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

/* cuts the log at path back to step (trainlog.h); returns the bytes kept (0: the log is missing,
 * empty or not a regular file) */
static long cut_log(const char *path, int64_t step)
{
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) /* missing, or a device or a pipe: not cut */
        return 0;
    FILE *f = fopen(path, "r+");
    if (!f)
        die("cannot write %s: %s", path, strerror(errno));
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    long keep = 0;
    for (int first = 1; (n = getline(&line, &cap, f)) > 0; first = 0) {
        char *end;
        long long s = strtoll(line, &end, 10);
        int header = first && !strncmp(line, "step\t", 5);
        if (line[n - 1] != '\n' || (!header && (end == line || *end != '\t' || s > step)))
            break;
        keep += n;
    }
    free(line);
    if (ferror(f) || ftruncate(fileno(f), keep) != 0 || fclose(f) != 0)
        die("cannot write %s: %s", path, strerror(errno));
    return keep;
}

/* the log made ready for the run's lines: cut back (resumed) or emptied, the header written
 * afresh unless a cut log kept it */
static void begin(trainlog *g)
{
    g->begun = 1;
    if (!g->f)
        return;
    struct stat st;
    int regular = fstat(fileno(g->f), &st) == 0 && S_ISREG(st.st_mode);
    long kept = g->resumed ? cut_log(g->path, g->step) : 0;
    if (!kept && regular && ftruncate(fileno(g->f), 0) != 0)
        die("cannot write %s: %s", g->path, strerror(errno));
    if (!kept)
        fputs(TRAINLOG_HEADER, g->f);
}

void trainlog_open(trainlog *g, const char *path, int resumed, int64_t step)
{
    memset(g, 0, sizeof *g);
    g->path = path;
    g->resumed = resumed;
    g->step = step;
    if (!path)
        return;
    /* opened now (an unwritable log fails before any work), appending: the writes go to the end
     * of what begin() keeps */
    g->f = fopen(path, "a");
    if (!g->f)
        die("cannot write %s: %s", path, strerror(errno));
    /* a log with lines in it is changed only by a run that trains a step (begin at the first):
     * a run that trains none leaves it as it was, beside the checkpoint it goes with */
    struct stat st;
    if (fstat(fileno(g->f), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size == 0)
        begin(g);
}

void trainlog_start(trainlog *g) { g->t0 = g->tlast = now_seconds(); }

void trainlog_step(trainlog *g, int64_t step, int64_t steps, int n, double loss, const loss_stats *st, double lr)
{
    if (!g->begun)
        begin(g);
    g->images += n;
    g->now = now_seconds();
    if (g->f && (step % TRAINLOG_EVERY == 0 || step == steps)) {
        double rate = (g->images - g->images_last) / (g->now - g->tlast > 0 ? g->now - g->tlast : 1e-9);
        fprintf(g->f, "%lld\t%.6g\t%.6g\t%.6g\t%.6g\t%.6g\t%.6g\t%.0f\t%.2f\t%.6g\t%.6g\t%.6g\n", (long long)step,
                loss, st->nll, st->kl, st->a, st->b, st->mean_var, rate, g->now - g->t0, lr, st->acc, st->se2);
        fflush(g->f); /* a reader sees the line now; an error stays on f for trainlog_sync */
        g->tlast = g->now;
        g->images_last = g->images;
    }
}

void trainlog_progress(const trainlog *g, int pairs, double loss, const loss_stats *st, char *buf, size_t size)
{
    double rate = g->images / (g->now - g->t0 > 0 ? g->now - g->t0 : 1e-9);
    if (!pairs) /* episodes: query accuracy; groups (triplet): batch 1-NN accuracy */
        snprintf(buf, size, "loss %.4f acc %.3f se2 %.3g var %.3g %.0f img/s", loss, st->acc, st->se2,
                 st->mean_var, rate);
    else
        snprintf(buf, size, "loss %.4f a %.3f b %.3f var %.3g %.0f img/s", loss, st->a, st->b, st->mean_var,
                 rate);
}

void trainlog_sync(trainlog *g)
{
    if (!g->begun) /* (a checkpoint after a step: the log is cut back before it) */
        begin(g);
    if (!g->f)
        return;
    /* (fsync fails with EINVAL on a pipe or a terminal: nothing to sync then) */
    if (fflush(g->f) != 0 || (fsync(fileno(g->f)) != 0 && errno != EINVAL))
        die("cannot write the log: %s", strerror(errno));
}

void trainlog_close(trainlog *g)
{
    FILE *f = g->f;
    g->f = NULL;
    if (f && fclose(f) != 0)
        die("cannot write %s", g->path);
}

/* the column of the seconds in TRAINLOG_HEADER, counted from 0 */
static int seconds_column(void)
{
    const char *h = TRAINLOG_HEADER, *at = strstr(h, "\tseconds\t");
    int col = 0;
    for (const char *p = h; p <= at; p++)
        col += *p == '\t';
    return col;
}

int trainlog_read(const char *path, trainlog_state *s)
{
    memset(s, 0, sizeof *s);
    FILE *f = fopen(path, "r");
    if (!f) {
        if (errno == ENOENT)
            return 0;
        die("cannot read %s: %s", path, strerror(errno));
    }
    int scol = seconds_column();
    int64_t *step = NULL;
    double *sec = NULL;
    size_t n = 0, cap = 0, len = 0;
    char *line = NULL;
    ssize_t r;
    for (long lineno = 1; (r = getline(&line, &len, f)) > 0 && line[r - 1] == '\n'; lineno++) {
        if (lineno == 1) {
            if (strcmp(line, TRAINLOG_HEADER))
                die("%s: not a train log (its first line is not train's header 'step\tloss\t...')", path);
            continue;
        }
        char *p = line, *end;
        long long st = strtoll(p, &end, 10);
        int ok = end != p && *end == '\t' && st >= 0;
        for (int c = 0; ok && c < scol; c++) {
            p = strchr(p, '\t');
            ok = p != NULL;
            p += ok;
        }
        double t = ok ? strtod(p, &end) : 0;
        if (!ok || end == p || (*end != '\t' && *end != '\n') || !isfinite(t) || t < 0)
            die("%s: line %ld is not a step and its seconds ('%.*s')", path, lineno, (int)strcspn(line, "\n"), line);
        if (n == cap) {
            cap = cap ? 2 * cap : 256;
            step = erealloc(step, cap * sizeof *step);
            sec = erealloc(sec, cap * sizeof *sec);
        }
        step[n] = st, sec[n] = t, n++;
    }
    if (ferror(f))
        die("cannot read %s: %s", path, strerror(errno));
    fclose(f);
    free(line);
    s->lines = (long long)n;
    if (n) {
        size_t b = n - 1, last = n - 1; /* b: the first line of the last session */
        while (b > 0 && sec[b - 1] <= sec[b])
            b--;
        int64_t s0 = b ? step[b - 1] : 0; /* where the session started, at its second 0 */
        double t0 = 0;
        for (size_t j = last; j-- > b;)
            if (sec[last] - sec[j] >= TRAINLOG_RATE_WINDOW) {
                s0 = step[j], t0 = sec[j];
                break;
            }
        s->step = step[last];
        if (sec[last] > t0 && step[last] > s0)
            s->rate = (double)(step[last] - s0) / (sec[last] - t0);
    }
    free(step);
    free(sec);
    return 1;
}
