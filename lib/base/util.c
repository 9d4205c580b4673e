#include "util.h"
#include "guard.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Large blocks on transparent huge pages. Debian's kernel hands huge pages only to memory that
 * asks for them (transparent_hugepage "madvise"), and on these virtual machines a page fault costs
 * microseconds: knn and retrieve on 20,000 x 128 (10 MB per copy of the embeddings, a few copies
 * from the stream to the centred floats) spent a tenth of their time in faults. So a block of at
 * least UTIL_HUGE bytes is advised MADV_HUGEPAGE before it is first touched (the kernel puts the
 * 2 MB-aligned part of it on huge pages): 12,100 faults became 7,600, knn -k 5 went from 0.65 to
 * 0.59 s and retrieve from 1.54 to 1.34 s (means of 5 interleaved runs, 2 threads, idle), and
 * batcher, which holds every composite of its input, from 1.41-1.45 s to 0.70-1.31 s on the
 * benchmark's 186 MB (3 runs each). A hint only: the bytes are the same, and where the kernel has
 * no huge page it faults as before. */
#define UTIL_HUGE ((size_t)4 << 20)
#define UTIL_PAGE ((uintptr_t)4096)
const char *util_prog = "hedge";
const char *util_usage = "";
int progress_force = 0;
void (*util_die_hook)(void) = NULL;

static void atomic_take_over(void);

void util_init(const char *argv0)
{
    const char *s = strrchr(argv0, '/');
    util_prog = s ? s + 1 : argv0;
    if (getenv("HEDGE_PROGRESS") && *getenv("HEDGE_PROGRESS") == '1')
        progress_force = 1;
    atomic_take_over();
}

void util_start(int argc, char **argv, const char *usage)
{
    util_init(argv[0]);
    util_usage = usage;
    opterr = 0;
    for (int i = 1; i < argc && strcmp(argv[i], "--"); i++) {
        if (!strcmp(argv[i], "--help"))
            usage_help();
        if (!strcmp(argv[i], "--version")) {
            printf("%s (hedge) %s\n", util_prog, util_version);
            close_stdout();
            exit(0);
        }
    }
}

void usage_bad_option(char **argv)
{
    /* a long option (unknown, or its value missing) is the word before optind; a short one is
     * optopt, which getopt_long sets to a long option's val too, so the word decides */
    const char *w = optind > 0 ? argv[optind - 1] : NULL;
    if (w && !strncmp(w, "--", 2))
        usage_die("%.*s: unknown option or missing value", (int)strcspn(w, "="), w);
    if (optopt > ' ' && optopt < 127)
        usage_die("-%c: unknown option or missing value", optopt);
    usage_die("%s: unknown option or missing value", w ? w : "?");
}

void stdout_not_terminal(void)
{
    if (isatty(STDOUT_FILENO)) {
        fprintf(stderr, "%s: will not write a binary stream to a terminal (redirect stdout to a file or a pipe)\n",
                util_prog);
        exit(2);
    }
}

FILE *json_open(const char *path, int stdout_busy)
{
    if (strcmp(path, "-"))
        return atomic_open(path);
    if (stdout_busy)
        usage_die("--json -: stdout carries the stream; give a file (e.g. /dev/stderr)");
    return stdout;
}

void json_commit(FILE *f)
{
    if (f && f != stdout)
        atomic_commit(f);
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
    if (guard_current()) { /* a library call's: back to its start with the message (lib/base/guard.h) */
        char msg[400];
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        guard_throw(GUARD_ERROR, msg);
    }
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
    fprintf(stderr, "Try '%s --help' for help.\n", util_prog);
    exit(2);
}

void warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vmsg(fmt, ap);
    va_end(ap);
}

const char *errmsg(const char *fmt, ...)
{
    static char msg[400];
    char tmp[sizeof msg]; /* the arguments may point into msg */
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    memcpy(msg, tmp, sizeof msg);
    return msg;
}

void usage_help(void)
{
    fputs(util_usage, stdout);
    printf("Options, details and examples: man hedge-%s (installed: hedge help %s)\n", util_prog, util_prog);
    close_stdout();
    exit(0);
}

static void *huge_advise(void *p, size_t n)
{
    if (n >= UTIL_HUGE) {
        /* the whole pages of the block, not only its 2 MB-aligned part: advising part of a mapping
         * splits it, and glibc's realloc can then no longer mremap it (EFAULT: it copies) */
        uintptr_t a = (uintptr_t)p & ~(UTIL_PAGE - 1), e = ((uintptr_t)p + n + UTIL_PAGE - 1) & ~(UTIL_PAGE - 1);
        madvise((void *)a, e - a, MADV_HUGEPAGE);
    }
    return p;
}

/* an allocation failed: a library call's way out as GUARD_NOMEM (lib/base/guard.h), else die */
__attribute__((noreturn, format(printf, 1, 2))) static void out_of_memory(const char *fmt, ...)
{
    char msg[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    guard_throw(GUARD_NOMEM, msg);
    die("%s", msg);
}

/* every block e*alloc makes is in the active guard's ledger (none outside a guard) */
static void *made(void *p, size_t n)
{
    guard_track(p);
    return huge_advise(p, n);
}

void *emalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        out_of_memory("out of memory (%zu bytes)", n);
    return made(p, n);
}

void *ecalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p)
        out_of_memory("out of memory (%zu x %zu bytes)", n, size);
    return made(p, n * size);
}

void *erealloc(void *p, size_t n)
{
    /* out of the ledger before realloc frees it (another thread may get its address at once) */
    guard_untrack(p);
    void *q = realloc(p, n ? n : 1);
    if (!q) {
        guard_track(p); /* still ours */
        out_of_memory("out of memory (%zu bytes)", n);
    }
    return made(q, n);
}

int util_cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

int util_cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

int64_t util_lower_bound_i32(const int32_t *a, int64_t n, int32_t x)
{
    int64_t lo = 0, hi = n;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (a[mid] < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

int64_t util_lower_bound_i64(const int64_t *a, int64_t n, int64_t x)
{
    int64_t lo = 0, hi = n;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (a[mid] < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

char *estrdup(const char *s)
{
    char *d = strdup(s);
    if (!d)
        out_of_memory("out of memory (%zu bytes)", strlen(s) + 1);
    guard_track(d);
    return d;
}

void *ealloc_aligned(size_t n)
{
    size_t sz = (n + 63) & ~(size_t)63;
    void *p = aligned_alloc(64, sz ? sz : 64);
    if (!p)
        out_of_memory("out of memory (%zu bytes)", n);
    made(p, sz);
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
typedef struct {
    FILE *f;
    char *path, *tmp; /* tmp NULL: written directly (not a regular file) */
    int synced;
    int fd;
    int err; /* errno of the first failed write(), 0 if none */
} atomic_file;
static atomic_file atomics[MAX_ATOMIC];
/* for the signal handler: the temp paths, set before a temp file exists and cleared after it
 * is gone (a handler may only read them) */
static char *volatile atomic_tmps[MAX_ATOMIC];
static int cleanup_set;

static void atomic_cleanup(void)
{
    for (int i = 0; i < MAX_ATOMIC; i++)
        if (atomic_tmps[i])
            unlink(atomic_tmps[i]);
}

static void atomic_on_signal(int sig)
{
    atomic_cleanup();
    signal(sig, SIG_DFL);
    raise(sig);
}

static void cleanup_install(void)
{
    if (cleanup_set)
        return;
    cleanup_set = 1;
    atexit(atomic_cleanup);
    const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        struct sigaction old;
        if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_DFL) {
            struct sigaction sa = {0};
            sa.sa_handler = atomic_on_signal;
            sigemptyset(&sa.sa_mask);
            sigaction(sigs[i], &sa, NULL);
        }
    }
}

/* the descriptor a name stands for: /dev/stdin, /dev/stdout, /dev/stderr, /dev/fd/N and
 * /proc/self/fd/N name one that is already open; else -1 */
static int descriptor_name(const char *path)
{
    static const char *const std[] = {"/dev/stdin", "/dev/stdout", "/dev/stderr"};
    for (int i = 0; i < 3; i++)
        if (!strcmp(path, std[i]))
            return i;
    const char *p = !strncmp(path, "/dev/fd/", 8) ? path + 8 : !strncmp(path, "/proc/self/fd/", 14) ? path + 14 : NULL;
    if (!p || !*p || strlen(p) > 9 || strspn(p, "0123456789") != strlen(p))
        return -1;
    return atoi(p);
}

/* the descriptor path stands for, itself or through a chain of symbolic links (a link to
 * /dev/stderr), or -1 */
static int descriptor_of(const char *path)
{
    char name[4096], link[4096];
    snprintf(name, sizeof name, "%s", path);
    for (int hop = 0; hop < 16; hop++) {
        int fd = descriptor_name(name);
        if (fd >= 0)
            return fd;
        ssize_t k = readlink(name, link, sizeof link - 1);
        if (k <= 0)
            return -1;
        link[k] = 0;
        if (link[0] == '/') {
            snprintf(name, sizeof name, "%s", link);
        } else { /* relative to the link's folder */
            char *slash = strrchr(name, '/');
            size_t keep = slash ? (size_t)(slash - name) + 1 : 0;
            if (keep + strlen(link) >= sizeof name)
                return -1;
            memmove(name + keep, link, strlen(link) + 1);
        }
    }
    return -1;
}

/* the file to replace: path itself, or the target of the symbolic link path is. *direct: written
 * in place (not a regular file); *fd: the open descriptor path names (/dev/stderr), or -1 */
static char *atomic_target(const char *path, int *direct, int *fd)
{
    struct stat st;
    *direct = 0;
    /* /dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N name a descriptor that is already
     * open (a pipe, or a log file other output goes to): write to that descriptor, where it
     * stands, never rename over it nor open it again (a new open of a file would start at its
     * beginning, and O_TRUNC would empty a log that `2>> log` appends to) */
    if ((*fd = descriptor_of(path)) >= 0) {
        *direct = 1;
        return estrdup(path);
    }
    if (!strncmp(path, "/dev/", 5) || !strncmp(path, "/proc/", 6)) {
        *direct = 1;
        return estrdup(path);
    }
    if (lstat(path, &st) != 0)
        return estrdup(path); /* does not exist yet (or unreadable: fopen will say) */
    if (S_ISLNK(st.st_mode)) {
        char *real = realpath(path, NULL);
        if (!real) { /* a dangling link: write through it (fopen creates its target) */
            *direct = 1;
            return estrdup(path);
        }
        if (stat(real, &st) == 0 && !S_ISREG(st.st_mode))
            *direct = 1;
        return real;
    }
    if (S_ISDIR(st.st_mode))
        die("cannot write %s: it is a directory", path);
    if (!S_ISREG(st.st_mode))
        *direct = 1;
    return estrdup(path);
}

/* The temp file of an output: TARGET.tmp.XXXXXXXX beside it (a letter, then seven letters or
 * digits: never a shell's "$f.tmp.$$"), a new name for every open, so that writers of one
 * target never share a temp file (several `train -o m.ckpt` at once: each renames its own
 * whole file, the last rename wins). Each writer holds a flock on its temp file while it
 * exists; that is how the next writer of the target tells the temp file of a writer killed
 * with -9 (nobody holds its lock) from a live one, and removes it (atomic_sweep). */
#define TEMP_SUFFIX 8
static int temp_suffix(const char *s)
{
    if (strlen(s) != TEMP_SUFFIX || !(*s >= 'a' && *s <= 'z'))
        return 0;
    return strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789") == TEMP_SUFFIX;
}

static void temp_name(char *tmp, size_t n, const char *target)
{
    static const char chars[] = "abcdefghijklmnopqrstuvwxyz0123456789";
    unsigned char r[TEMP_SUFFIX];
    if (getrandom(r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r) { /* no entropy yet: time and pid */
        uint64_t x = (uint64_t)getpid() * 0x9e3779b97f4a7c15u ^ (uint64_t)(now_seconds() * 1e9);
        for (size_t i = 0; i < sizeof r; i++, x = x * 6364136223846793005u + 1442695040888963407u)
            r[i] = (unsigned char)(x >> 56);
    }
    char suffix[TEMP_SUFFIX + 1];
    suffix[0] = chars[r[0] % 26];
    for (int i = 1; i < TEMP_SUFFIX; i++)
        suffix[i] = chars[r[i] % 36];
    suffix[TEMP_SUFFIX] = 0;
    snprintf(tmp, n, "%s.tmp.%s", target, suffix);
}

/* Removes what writers of target killed with -9 left beside it: each TARGET.tmp.XXXXXXXX (and
 * TARGET.tmp, the fixed name earlier versions gave a checkpoint's temp file) whose lock nobody
 * holds, unless it is empty and less than a minute old (a writer between creating its temp file
 * and locking it). A file it cannot open or lock is left alone. */
static void atomic_sweep(const char *target)
{
    char dir[4096];
    const char *slash = strrchr(target, '/'), *base = slash ? slash + 1 : target;
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else if (slash == target)
        snprintf(dir, sizeof dir, "/");
    else
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - target), target);
    size_t nb = strlen(base);
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        const char *name = e->d_name, *rest = name + nb + 4;
        if (strncmp(name, base, nb) || strncmp(name + nb, ".tmp", 4) || (*rest && !(*rest == '.' && temp_suffix(rest + 1))))
            continue;
        char path[8192];
        snprintf(path, sizeof path, "%s/%s", dir, name);
        int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0)
            continue;
        struct stat st;
        if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && flock(fd, LOCK_EX | LOCK_NB) == 0 &&
            (st.st_size > 0 || time(NULL) - st.st_mtime > 60))
            unlink(path);
        close(fd);
    }
    closedir(d);
}

/* The FILE of an atomic output writes through these, so that the errno of a failed write()
 * is kept: a writer that fwrites a big block and looks at nothing until atomic_sync would
 * otherwise learn only that the stream has its error flag set, and report a full disk as an
 * "Input/output error". */
static ssize_t atomic_write(void *cookie, const char *buf, size_t n)
{
    atomic_file *a = cookie;
    size_t done = 0;
    while (done < n) {
        ssize_t k = write(a->fd, buf + done, n - done);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            if (!a->err)
                a->err = k < 0 ? errno : ENOSPC;
            return done; /* short: stdio sets the error flag */
        }
        done += k;
    }
    return done;
}

static int atomic_seek(void *cookie, off64_t *pos, int whence)
{
    atomic_file *a = cookie;
    off64_t r = lseek(a->fd, *pos, whence);
    if (r < 0)
        return -1;
    *pos = r;
    return 0;
}

static int atomic_close(void *cookie)
{
    atomic_file *a = cookie;
    int r = close(a->fd);
    a->fd = -1;
    return r;
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
    cleanup_install();
    int direct, given;
    char *target = atomic_target(path, &direct, &given), *tmp = NULL;
    int fd;
    if (given >= 0) {
        fd = fcntl(given, F_DUPFD_CLOEXEC, 3);
        if (fd < 0)
            die("cannot write %s: %s", path, strerror(errno));
    } else if (direct) {
        /* (not closed on exec: a program that executes itself again, blas_init, opens it again,
         * and a FIFO must not see its writer go in between, or its reader ends) */
        fd = open(target, O_WRONLY | O_CREAT | O_TRUNC, 0666);
        if (fd < 0)
            die("cannot write %s: %s", path, strerror(errno));
    } else {
        atomic_sweep(target);
        size_t n = strlen(target) + TEMP_SUFFIX + 8;
        tmp = emalloc(n);
        /* the temp file and the name the signal handler removes appear together */
        sigset_t block, old;
        sigemptyset(&block);
        sigaddset(&block, SIGINT), sigaddset(&block, SIGTERM), sigaddset(&block, SIGHUP), sigaddset(&block, SIGPIPE);
        sigprocmask(SIG_BLOCK, &block, &old);
        int tries = 0;
        do {
            temp_name(tmp, n, target);
            fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        } while (fd < 0 && errno == EEXIST && ++tries < 100);
        int e = errno;
        if (fd >= 0)
            atomic_tmps[slot] = tmp;
        sigprocmask(SIG_SETMASK, &old, NULL);
        if (fd < 0)
            die("cannot write %s: %s", path, strerror(e));
        flock(fd, LOCK_EX); /* (a file system without locks: no sweep can take it either) */
    }
    atomics[slot].fd = fd;
    atomics[slot].err = 0;
    static const cookie_io_functions_t io = {NULL, atomic_write, atomic_seek, atomic_close};
    FILE *f = fopencookie(&atomics[slot], "wb", io);
    if (!f)
        die("cannot write %s: %s", path, strerror(errno));
    atomics[slot].f = f;
    atomics[slot].path = target;
    atomics[slot].tmp = tmp;
    atomics[slot].synced = 0;
    return f;
}

/* A program that executes itself again (blas_init, for another OpenBLAS kernel) leaves the temp
 * files it opened before: their descriptors close on exec, and the new image opens its own. It
 * names them in HEDGE_ATOMIC_LEFT (one per line), and the new image removes them first thing
 * (util_init): only names of hedge's temp files (PATH.tmp.XXXXXXXX) are taken. */
#define ATOMIC_LEFT "HEDGE_ATOMIC_LEFT"
void atomic_exec_handover(int before)
{
    if (!before) { /* the exec failed: the temp files are still this image's */
        unsetenv(ATOMIC_LEFT);
        return;
    }
    size_t n = 1;
    for (int i = 0; i < MAX_ATOMIC; i++)
        if (atomics[i].f && atomics[i].tmp)
            n += strlen(atomics[i].tmp) + 1;
    char *list = ecalloc(n, 1);
    for (int i = 0; i < MAX_ATOMIC; i++)
        if (atomics[i].f && atomics[i].tmp)
            strcat(strcat(list, atomics[i].tmp), "\n");
    if (*list)
        setenv(ATOMIC_LEFT, list, 1);
    free(list);
}

static void atomic_take_over(void)
{
    const char *left = getenv(ATOMIC_LEFT);
    if (!left)
        return;
    char *list = estrdup(left);
    unsetenv(ATOMIC_LEFT);
    for (char *p = list, *e; *p; p = e + (*e != 0)) {
        e = p + strcspn(p, "\n");
        char c = *e;
        *e = 0;
        const char *t = strstr(p, ".tmp.");
        while (t && strstr(t + 1, ".tmp."))
            t = strstr(t + 1, ".tmp.");
        if (t && temp_suffix(t + 5))
            unlink(p);
        *e = c;
    }
    free(list);
}

static int atomic_find(FILE *f)
{
    for (int i = 0; i < MAX_ATOMIC; i++)
        if (atomics[i].f == f)
            return i;
    die("internal error: file was not opened with atomic_open");
}

static void atomic_release(int i)
{
    if (atomics[i].tmp) {
        atomic_tmps[i] = NULL;
        unlink(atomics[i].tmp);
    }
    atomics[i].f = NULL;
    free(atomics[i].path);
    free(atomics[i].tmp);
    atomics[i].path = atomics[i].tmp = NULL;
}

static void atomic_fail(int i, int e, const char *what)
{
    char *path = atomics[i].path;
    atomics[i].path = NULL;
    fclose(atomics[i].f);
    atomic_release(i);
    die("cannot %s %s: %s", what, path, strerror(e));
}

void atomic_sync(FILE *f)
{
    int i = atomic_find(f);
    if (atomics[i].synced)
        return;
    errno = 0;
    if (fflush(f) != 0 || ferror(f))
        atomic_fail(i, atomics[i].err ? atomics[i].err : errno ? errno : EIO, "write");
    /* fsync fails with EINVAL on what cannot be synced (a pipe, /dev/null): nothing to lose */
    if (atomics[i].tmp && fsync(atomics[i].fd) != 0 && errno != EINVAL)
        atomic_fail(i, errno, "write");
    atomics[i].synced = 1;
}

static void fsync_dir(const char *path)
{
    char *d = estrdup(path), *slash = strrchr(d, '/');
    if (!slash)
        strcpy(d, ".");
    else if (slash == d)
        d[1] = 0;
    else
        *slash = 0;
    int fd = open(d, O_RDONLY | O_DIRECTORY);
    if (fd >= 0) {
        fsync(fd); /* best effort: some file systems cannot sync a directory */
        close(fd);
    }
    free(d);
}

void atomic_commit(FILE *f)
{
    int i = atomic_find(f);
    atomic_sync(f);
    /* renamed while it is still open, and so locked: once closed, another writer's sweep could
     * take the finished file for one a killed writer left */
    if (atomics[i].tmp) {
        if (rename(atomics[i].tmp, atomics[i].path) != 0) {
            int e = errno;
            char *path = atomics[i].path;
            atomics[i].path = NULL;
            fclose(f);
            atomic_release(i);
            die("cannot rename the finished %s into place: %s", path, strerror(e));
        }
        atomic_tmps[i] = NULL;
        free(atomics[i].tmp);
        atomics[i].tmp = NULL;
        fsync_dir(atomics[i].path);
    }
    if (fclose(f) != 0) {
        int e = errno;
        char *path = atomics[i].path;
        atomics[i].path = NULL;
        atomic_release(i);
        die("cannot write %s: %s", path, strerror(e));
    }
    atomic_release(i);
}

void atomic_abort(FILE *f)
{
    int i = atomic_find(f);
    fclose(f);
    atomic_release(i);
}

void atomic_check(const char *path)
{
    atomic_abort(atomic_open(path));
}

size_t utf8_len(const unsigned char *s, size_t n)
{
    size_t len;
    uint32_t cp;
    if (s[0] < 0x80)
        return 1;
    if ((s[0] & 0xe0) == 0xc0)
        len = 2, cp = s[0] & 0x1f;
    else if ((s[0] & 0xf0) == 0xe0)
        len = 3, cp = s[0] & 0x0f;
    else if ((s[0] & 0xf8) == 0xf0)
        len = 4, cp = s[0] & 0x07;
    else
        return 0;
    if (len > n)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = cp << 6 | (s[i] & 0x3f);
    }
    static const uint32_t min[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < min[len] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        return 0; /* overlong, out of range or a surrogate */
    return len;
}

/* the length of the printable character at s (n >= 1 bytes there): 0 for a control character
 * (C0, DEL, C1) or a byte that is not UTF-8 */
size_t util_text_len(const unsigned char *s, size_t n)
{
    size_t k = utf8_len(s, n);
    if ((k == 1 && (s[0] < 0x20 || s[0] == 0x7f)) || (k == 2 && s[0] == 0xc2 && s[1] < 0xa0))
        return 0;
    return k;
}

const char *util_shown(char out[UTIL_SHOWN], const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t m = n > 64 ? 64 : n;
    char *o = out;
    for (size_t i = 0, k; i < m; i += k ? k : 1) {
        k = util_text_len(u + i, m - i);
        if (k && u[i] != '\\' && u[i] != '\'')
            memcpy(o, u + i, k), o += k;
        else if (u[i] == '\\' || u[i] == '\'' || u[i] == '\n' || u[i] == '\t' || u[i] == '\r')
            o += sprintf(o, "\\%c", u[i] == '\n' ? 'n' : u[i] == '\t' ? 't' : u[i] == '\r' ? 'r' : u[i]);
        else
            o += sprintf(o, "\\x%02x", u[i]);
    }
    strcpy(o, n > m ? "..." : "");
    return out;
}

void json_string(FILE *f, const char *str, size_t n)
{
    const unsigned char *s = (const unsigned char *)str;
    fputc('"', f);
    for (size_t i = 0; i < n;) {
        unsigned char c = s[i];
        if (c == '"' || c == '\\') {
            fputc('\\', f);
            fputc(c, f);
            i++;
        } else if (c < 0x20 || c == 0x7f) {
            fprintf(f, "\\u%04x", c);
            i++;
        } else {
            size_t len = utf8_len(s + i, n - i);
            if (len) {
                fwrite(s + i, 1, len, f);
                i += len;
            } else {
                fputs("\\ufffd", f);
                i++;
            }
        }
    }
    fputc('"', f);
}

void input_not_directory(FILE *f, const char *name, const char *what)
{
    struct stat st;
    int fd = fileno(f);
    if (fd >= 0 && fstat(fd, &st) == 0 && S_ISDIR(st.st_mode))
        die("%s: it is a directory, expected %s", name, what);
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

void format_duration(char *buf, size_t n, double s)
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
        format_duration(d, sizeof d, (p->total - done) / rate);
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
