#include "util.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

const char *util_prog = "hedge";
const char *util_usage = "";
int progress_force = 0;
void (*util_die_hook)(void) = NULL;

void util_init(const char *argv0)
{
    const char *s = strrchr(argv0, '/');
    util_prog = s ? s + 1 : argv0;
    if (getenv("HEDGE_PROGRESS") && *getenv("HEDGE_PROGRESS") == '1')
        progress_force = 1;
}

static void vmsg(const char *fmt, va_list ap)
{
    fflush(stdout);
    fprintf(stderr, "%s: ", util_prog);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vmsg(fmt, ap);
    va_end(ap);
    if (util_die_hook) {
        void (*hook)(void) = util_die_hook;
        util_die_hook = NULL;
        hook();
    }
    exit(1);
}

void usage_die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vmsg(fmt, ap);
    va_end(ap);
    fputs(util_usage, stderr);
    exit(2);
}

void warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vmsg(fmt, ap);
    va_end(ap);
}

void usage_help(void)
{
    fputs(util_usage, stdout);
    exit(0);
}

void *emalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        die("out of memory (%zu bytes)", n);
    return p;
}

void *ecalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p)
        die("out of memory (%zu x %zu bytes)", n, size);
    return p;
}

void *erealloc(void *p, size_t n)
{
    p = realloc(p, n ? n : 1);
    if (!p)
        die("out of memory (%zu bytes)", n);
    return p;
}

char *estrdup(const char *s)
{
    char *d = strdup(s);
    if (!d)
        die("out of memory");
    return d;
}

void *ealloc_aligned(size_t n)
{
    size_t sz = (n + 63) & ~(size_t)63;
    void *p = aligned_alloc(64, sz ? sz : 64);
    if (!p)
        die("out of memory (%zu bytes)", n);
    memset(p, 0, sz ? sz : 64);
    return p;
}

long parse_long(const char *opt, const char *s, long lo, long hi)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end)
        usage_die("%s: '%s' is not a whole number", opt, s);
    if (v < lo || v > hi)
        usage_die("%s: %ld is out of range [%ld, %ld]", opt, v, lo, hi);
    return v;
}

double parse_double(const char *opt, const char *s, double lo, double hi)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || isnan(v))
        usage_die("%s: '%s' is not a number", opt, s);
    if (v < lo || v > hi)
        usage_die("%s: %g is out of range [%g, %g]", opt, v, lo, hi);
    return v;
}

uint64_t parse_u64(const char *opt, const char *s)
{
    char *end;
    errno = 0;
    if (*s == '-')
        usage_die("%s: '%s' must not be negative", opt, s);
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || *end)
        usage_die("%s: '%s' is not a whole number", opt, s);
    return v;
}

/* --- atomic output: at most a few open at once --- */
#define MAX_ATOMIC 8
static struct {
    FILE *f;
    char *path, *tmp;
} atomics[MAX_ATOMIC];
static int atexit_set;

static void atomic_cleanup(void)
{
    for (int i = 0; i < MAX_ATOMIC; i++)
        if (atomics[i].f) {
            unlink(atomics[i].tmp);
            atomics[i].f = NULL;
        }
}

FILE *atomic_open(const char *path)
{
    int slot = -1;
    for (int i = 0; i < MAX_ATOMIC; i++)
        if (!atomics[i].f) {
            slot = i;
            break;
        }
    if (slot < 0)
        die("too many files open for atomic writing");
    if (!atexit_set) {
        atexit(atomic_cleanup);
        atexit_set = 1;
    }
    size_t n = strlen(path) + 32;
    char *tmp = emalloc(n);
    snprintf(tmp, n, "%s.tmp.%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "wb");
    if (!f)
        die("cannot write %s: %s", tmp, strerror(errno));
    atomics[slot].f = f;
    atomics[slot].path = estrdup(path);
    atomics[slot].tmp = tmp;
    return f;
}

static int atomic_find(FILE *f)
{
    for (int i = 0; i < MAX_ATOMIC; i++)
        if (atomics[i].f == f)
            return i;
    die("internal error: file was not opened with atomic_open");
}

void atomic_commit(FILE *f)
{
    int i = atomic_find(f);
    int bad = fflush(f) != 0 || ferror(f) || fsync(fileno(f)) != 0;
    bad |= fclose(f) != 0;
    atomics[i].f = NULL;
    if (bad) {
        unlink(atomics[i].tmp);
        die("cannot write %s: %s", atomics[i].path, strerror(errno));
    }
    if (rename(atomics[i].tmp, atomics[i].path) != 0) {
        int e = errno;
        unlink(atomics[i].tmp);
        die("cannot rename %s to %s: %s", atomics[i].tmp, atomics[i].path, strerror(e));
    }
    free(atomics[i].path);
    free(atomics[i].tmp);
}

void atomic_abort(FILE *f)
{
    int i = atomic_find(f);
    fclose(f);
    unlink(atomics[i].tmp);
    atomics[i].f = NULL;
    free(atomics[i].path);
    free(atomics[i].tmp);
}

void close_stdout(void)
{
    if (fflush(stdout) != 0 || ferror(stdout))
        die("cannot write standard output: %s", strerror(errno));
    if (fclose(stdout) != 0)
        die("cannot write standard output: %s", strerror(errno));
}

double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

void progress_start(progress *p, const char *what, long long total)
{
    p->what = what;
    p->start = p->last = now_seconds();
    p->total = total;
    p->shown = progress_force || isatty(2);
}

static void fmt_dur(char *buf, size_t n, double s)
{
    if (!isfinite(s) || s < 0)
        s = 0;
    long t = (long)(s + 0.5);
    if (t >= 3600)
        snprintf(buf, n, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
    else
        snprintf(buf, n, "%ld:%02ld", t / 60, t % 60);
}

static void progress_print(progress *p, long long done, const char *extra, int final)
{
    double t = now_seconds(), el = t - p->start;
    double rate = el > 0 ? done / el : 0;
    char eta[32] = "";
    if (p->total > 0 && !final && rate > 0) {
        char d[24];
        fmt_dur(d, sizeof d, (p->total - done) / rate);
        snprintf(eta, sizeof eta, " ETA %s", d);
    }
    if (p->total > 0)
        fprintf(stderr, "\r%s: %s %lld/%lld (%.1f%%) %.0f/s%s%s%s\033[K", util_prog, p->what, done,
                p->total, 100.0 * done / p->total, rate, eta, extra ? " " : "", extra ? extra : "");
    else
        fprintf(stderr, "\r%s: %s %lld %.0f/s%s%s\033[K", util_prog, p->what, done, rate,
                extra ? " " : "", extra ? extra : "");
    if (final)
        fputc('\n', stderr);
    fflush(stderr);
}

void progress_update(progress *p, long long done, const char *extra)
{
    if (!p->shown)
        return;
    double t = now_seconds();
    if (t - p->last < 0.25)
        return;
    p->last = t;
    progress_print(p, done, extra, 0);
}

void progress_end(progress *p, long long done)
{
    if (p->shown)
        progress_print(p, done, NULL, 1);
}
