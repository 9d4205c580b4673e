/* util: error exits, checked allocation, atomic file output, option parsing, progress line.
 *
 * Every hedge program sets `util_prog` (via util_init) first thing in main; messages then read
 * "prog: what went wrong". die() exits 1 (bad data, I/O); usage_die() exits 2 (misuse).
 * Allocation failures die. Nothing here allocates behind the caller's back except emalloc & co,
 * whose results the caller owns and frees.
 *
 *   int main(int argc, char **argv) {
 *       util_init(argv[0]);
 *       long n = parse_long("-n", optarg, 1, 1000000);   // usage_die on nonsense
 *       FILE *f = atomic_open("out.ckpt");                 // writes out.ckpt.tmp.XXXXXXXX
 *       ... ; atomic_commit(f);                            // fflush+fsync+rename, or die
 *   }
 */
#ifndef HEDGE_UTIL_H
#define HEDGE_UTIL_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

extern const char *util_prog;
/* the synopsis printed by -h and --help (usage_help): a few lines, the manual holds the rest.
 * Misuse (usage_die) prints only the message and "Try 'prog --help' for help." as
 * GNU tools and sbase do. docs/cli.md states the whole convention. */
extern const char *util_usage;
/* "VERSION" or "VERSION-gCOMMIT[-dirty]", from build/version.c (the Makefile: the VERSION file
 * and, in a git checkout, git's commit) */
extern const char util_version[]; /* "0.1.0-gCOMMIT" (build/version.c), hedge_version() to a library caller */

void util_init(const char *argv0);
/* every program's first call: util_init, util_usage = usage, getopt's own messages off
 * (opterr = 0: ours is the one line), and --help / --version answered wherever they stand
 * before a "--" (as netpbm's pm_proginit does), exit 0 */
void util_start(int argc, char **argv, const char *usage);
/* getopt's '?' (an unknown option or a missing value): the one line and the "Try" line, exit 2 */
__attribute__((noreturn)) void usage_bad_option(char **argv);
/* a program about to write a binary stream on stdout refuses a terminal, as gzip does: one
 * line, exit 2 */
void stdout_not_terminal(void);
/* --json FILE: "-" is stdout, where the JSON then takes the place of the program's text; else
 * atomic_open(path). A program whose stdout carries a stream passes stdout_busy = 1 and refuses
 * "-" (misuse). json_commit: atomic_commit, or nothing for stdout (close_stdout ends it). */
FILE *json_open(const char *path, int stdout_busy);
void json_commit(FILE *f);
/* called once by die() before it exits (e.g. train saves its last consistent state) */
extern void (*util_die_hook)(void);
__attribute__((noreturn, format(printf, 1, 2))) void die(const char *fmt, ...);
__attribute__((noreturn, format(printf, 1, 2))) void usage_die(const char *fmt, ...);
__attribute__((format(printf, 1, 2))) void warn(const char *fmt, ...);
/* the message of a failure a library function returns instead of dying: formatted into one
 * static buffer, valid until the next call (the arguments may be an earlier such message) */
__attribute__((format(printf, 1, 2))) const char *errmsg(const char *fmt, ...);
/* prints util_usage and where the manual is to stdout and exits 0 (for -h, --help) */
__attribute__((noreturn)) void usage_help(void);

void *emalloc(size_t n);
void *ecalloc(size_t n, size_t size);
void *erealloc(void *p, size_t n);
char *estrdup(const char *s);
/* 64-byte aligned, zeroed; free with free() */
void *ealloc_aligned(size_t n);

/* qsort comparators, ascending, of int32_t and int64_t */
int util_cmp_i32(const void *a, const void *b);
int util_cmp_i64(const void *a, const void *b);
/* the first position in ascending a[0 .. n) whose value is >= x (n when none) */
int64_t util_lower_bound_i32(const int32_t *a, int64_t n, int32_t x);
int64_t util_lower_bound_i64(const int64_t *a, int64_t n, int64_t x);

/* option values: usage_die (exit 2) unless the whole string is a number in [lo, hi] */
long parse_long(const char *opt, const char *s, long lo, long hi);
double parse_double(const char *opt, const char *s, double lo, double hi);
uint64_t parse_u64(const char *opt, const char *s);

/* Output files, all or nothing. A regular file (or a path that does not exist yet) is written
 * to a temp file beside it, "path.tmp.XXXXXXXX" (a name of its own for every open: writers of one
 * path at once never share it), and renamed over path on commit, so that path holds one
 * writer's whole file, the last to commit. Anything else that exists (/dev/null, a FIFO, a
 * terminal) is written directly, because renaming over it would replace the device node; so
 * is any path under /dev/ or /proc/. A name of an open descriptor (/dev/stdout, /dev/stderr,
 * /dev/fd/N, /proc/self/fd/N, or a link to one) is written to that descriptor where it stands,
 * never opened again: `--json /dev/stderr 2>> log` adds to the log, it does not empty it. Any
 * other symbolic link is followed: its target is replaced.
 *   atomic_open   creates the temp file at once (dies if it cannot: a program fails before any
 *                 work, not after it), first removing the temp files that writers of the same
 *                 path killed with -9 left (each writer holds a flock on its own while it lives)
 *   atomic_sync   flushes and fsyncs the data (dies on a full disk, naming the file); after it
 *                 only the rename is left, which needs no space
 *   atomic_commit atomic_sync if not done, rename, fsync the directory, close
 *   atomic_abort  removes the temp file
 * A program that dies or is killed by SIGINT, SIGTERM, SIGHUP or SIGPIPE leaves the old file
 * intact and no temp file (atexit and signal handlers remove it; a handler a program installed
 * itself is left alone). Only kill -9 leaves a temp file behind, until the next write of path.
 * A program that writes a stream (or text) on stdout and a file commits neither when either
 * fails, in this order:
 *   atomic_sync(f);            // the file's data is safe: a full disk stops us here
 *   stream_finish(w); close_stdout();   // the stream is whole: a broken pipe stops us here
 *   atomic_commit(f);          // only the rename is left */
FILE *atomic_open(const char *path);
void atomic_sync(FILE *f);
void atomic_commit(FILE *f);
void atomic_abort(FILE *f);
/* before a program executes itself again (1: blas_init), and when that failed (0): the new image
 * removes the temp files this one opened, which it cannot know (their descriptors close on
 * exec) */
void atomic_exec_handover(int before);
/* dies unless path could be written by atomic_open (creates and removes the temp file) */
void atomic_check(const char *path);

/* length of the valid UTF-8 sequence at s (n >= 1 bytes there), 0 if it is not one (a stray or
 * overlong byte, a surrogate, beyond U+10FFFF) */
size_t utf8_len(const unsigned char *s, size_t n);
/* s (n bytes, a NUL among them perhaps) as a message shows it, into out: printable UTF-8 as it
 * is; backslashes, quotes, \n, \t and \r escaped; any other byte (a control character, one that
 * is not UTF-8) as \xNN; the first 64 bytes, then "..." when there are more. Returns out. */
/* the length of the printable character at s (n >= 1 bytes there): 0 for a control character
 * (C0, DEL, C1) or a byte that is not UTF-8 */
size_t util_text_len(const unsigned char *s, size_t n);
enum { UTIL_SHOWN = 4 * 64 + 4 };
const char *util_shown(char out[UTIL_SHOWN], const char *s, size_t n);
/* s (n bytes) as a JSON string: quotes, backslashes and control characters escaped, bytes that
 * are not valid UTF-8 replaced by U+FFFD, so the output is valid JSON whatever s holds */
void json_string(FILE *f, const char *s, size_t n);

/* dies "NAME: it is a directory, expected WHAT" when input f is one (open() takes a directory,
 * and the first read() fails with EISDIR, which would say only "read error") */
void input_not_directory(FILE *f, const char *name, const char *what);

/* flush and close stdout, die if the write failed (broken pipe, full disk) */
void close_stdout(void);

double now_seconds(void);
/* a duration of s seconds as "M:SS", or "H:MM:SS" from an hour on (a negative or not finite s: 0) */
void format_duration(char *buf, size_t n, double s);

/* Progress line on stderr, "prog: what 1234/5678 (21.7%) 5432/s ETA 0:12".
 * Shown only when stderr is a terminal or progress_force is set (--progress), at most 4 times
 * a second. total <= 0 means unknown (no percentage, no ETA). */
typedef struct {
    const char *what;
    double start, last;
    long long total;
    int shown;
} progress;
extern int progress_force;
void progress_start(progress *p, const char *what, long long total);
/* extra: optional text appended (e.g. "loss 0.31"), may be NULL */
void progress_update(progress *p, long long done, const char *extra);
void progress_end(progress *p, long long done);

#endif
