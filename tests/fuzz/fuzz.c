/* fuzz.c: die() as a jump back to the harness, and the release of what a rejected input left
 * behind (see fuzz.h). Single-threaded: only the thread that called fuzz_run is tracked. */
#include "fuzz.h"

#include <pthread.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>

#include "util.h"

/* the sanitizer allocator's hooks (ASan of clang and of gcc): run on every malloc and free */
int __sanitizer_install_malloc_and_free_hooks(void (*malloc_hook)(const volatile void *, size_t),
                                              void (*free_hook)(const volatile void *));

/* ------------------------------------------------------------------ allocations */

/* The blocks allocated since fuzz_run began and not freed yet: an open-addressing set of
 * addresses (0 empty, 1 a deleted entry). `used` lists the slots taken, so clearing the set
 * costs what the input allocated, not the table's size. Past 3/4 of the slots taken we stop
 * adding (what is not tracked is leaked, nothing worse). */
#define SLOTS (1u << 20)
#define TOMB ((uintptr_t)1)
static uintptr_t slot[SLOTS];
static uint32_t used[SLOTS];
static uint32_t nused;
static int tracking;
static pthread_t owner;

static uint32_t slot_of(uintptr_t p) { return (uint32_t)(((p >> 4) * 0x9E3779B97F4A7C15ull) >> 44) & (SLOTS - 1); }

static void on_malloc(const volatile void *ptr, size_t n)
{
    if (!tracking || !ptr || !pthread_equal(pthread_self(), owner) || nused >= SLOTS / 4 * 3)
        return;
    uintptr_t p = (uintptr_t)ptr;
    uint32_t i = slot_of(p), reuse = UINT32_MAX;
    for (; slot[i]; i = (i + 1) & (SLOTS - 1))
        if (slot[i] == TOMB && reuse == UINT32_MAX)
            reuse = i;
    if (reuse != UINT32_MAX)
        i = reuse;
    else
        used[nused++] = i;
    slot[i] = p;
}

static void on_free(const volatile void *ptr)
{
    if (!tracking || !ptr || !pthread_equal(pthread_self(), owner))
        return;
    uintptr_t p = (uintptr_t)ptr;
    for (uint32_t i = slot_of(p); slot[i]; i = (i + 1) & (SLOTS - 1))
        if (slot[i] == p) {
            slot[i] = TOMB;
            return;
        }
}

/* ------------------------------------------------------------------ files */

/* FILEs and gzFiles opened while a body runs. Their memory is tracked too, but freeing a FILE
 * that stdio still lists would corrupt stdio: they are closed first, properly. */
#define MAXFILES 64
static void *files[MAXFILES];
static int isgz[MAXFILES];
static int nfiles;

static void file_add(void *f, int gz)
{
    if (!f || !tracking || !pthread_equal(pthread_self(), owner))
        return;
    if (nfiles == MAXFILES) {
        fprintf(stdout, "fuzz: more than %d files open in one input\n", MAXFILES);
        abort();
    }
    isgz[nfiles] = gz;
    files[nfiles++] = f;
}

static void file_remove(void *f)
{
    for (int i = 0; i < nfiles; i++)
        if (files[i] == f) {
            files[i] = files[--nfiles];
            isgz[i] = isgz[nfiles];
            return;
        }
}

/* the link wraps these (-Wl,--wrap=fopen,...): the library's calls come here */
FILE *__real_fopen(const char *path, const char *mode);
int __real_fclose(FILE *f);
gzFile __real_gzopen(const char *path, const char *mode);
int __real_gzclose(gzFile g);

FILE *__wrap_fopen(const char *path, const char *mode)
{
    FILE *f = __real_fopen(path, mode);
    file_add(f, 0);
    return f;
}

int __wrap_fclose(FILE *f)
{
    file_remove(f);
    return __real_fclose(f);
}

gzFile __wrap_gzopen(const char *path, const char *mode)
{
    gzFile g = __real_gzopen(path, mode);
    file_add(g, 1);
    return g;
}

int __wrap_gzclose(gzFile g)
{
    file_remove(g);
    return __real_gzclose(g);
}

FILE *fuzz_fmemopen(const uint8_t *data, size_t size)
{
    /* fmemopen refuses a zero-sized buffer: an empty input reads /dev/null instead */
    FILE *f = size ? fmemopen((void *)data, size, "rb") : __real_fopen("/dev/null", "rb");
    if (!f) {
        perror("fuzz: fmemopen");
        abort();
    }
    file_add(f, 0);
    return f;
}

const char *fuzz_memfd_path(const uint8_t *data, size_t size)
{
    static int fd = -1;
    static char path[64];
    if (fd < 0) {
        fd = memfd_create("hedge-fuzz", 0);
        if (fd < 0) {
            perror("fuzz: memfd_create");
            abort();
        }
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    }
    size_t off = 0;
    if (ftruncate(fd, 0) != 0)
        abort();
    while (off < size) {
        ssize_t n = pwrite(fd, data + off, size - off, off);
        if (n <= 0) {
            perror("fuzz: pwrite");
            abort();
        }
        off += n;
    }
    return path;
}

/* ------------------------------------------------------------------ running one input */

long fuzz_accepted;
static sigjmp_buf back;
static void on_die(void) { siglongjmp(back, 1); }

static void setup(void)
{
    static int done;
    if (done)
        return;
    done = 1;
    util_prog = "fuzz";
    if (!getenv("HEDGE_FUZZ_VERBOSE") || strcmp(getenv("HEDGE_FUZZ_VERBOSE"), "1")) {
        /* die()'s messages to /dev/null, through a static buffer: a buffer stdio allocated
         * while an input runs would be freed with that input's leftovers */
        static char buf[4096];
        FILE *null = __real_fopen("/dev/null", "w");
        if (null && !setvbuf(null, buf, _IOFBF, sizeof buf))
            stderr = null;
    }
    if (!__sanitizer_install_malloc_and_free_hooks(on_malloc, on_free)) {
        fputs("fuzz: cannot install the allocator hooks (built without ASan?)\n", stdout);
        abort();
    }
}

int fuzz_run(void (*body)(void *), void *arg)
{
    setup();
    owner = pthread_self();
    nused = 0;
    nfiles = 0;
    tracking = 1;
    util_die_hook = on_die;
    volatile int ok = 0;
    if (!sigsetjmp(back, 0)) {
        body(arg);
        ok = 1;
    }
    util_die_hook = NULL;
    fuzz_accepted += ok;
    if (ok && nfiles) {
        fprintf(stdout, "fuzz: the input was accepted but %d file(s) were left open\n", nfiles);
        abort();
    }
    /* closed while still tracking, so that the FILE's own memory leaves the set */
    while (nfiles > 0) {
        void *f = files[nfiles - 1];
        if (isgz[nfiles - 1])
            __wrap_gzclose(f);
        else
            __wrap_fclose(f);
    }
    tracking = 0;
    for (uint32_t k = 0; k < nused; k++) {
        uint32_t i = used[k];
        if (!ok && slot[i] > TOMB)
            free((void *)slot[i]);
        slot[i] = 0;
    }
    nused = 0;
    return ok;
}
