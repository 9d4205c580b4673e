/* atomic output (util.h): a full disk is reported as "No space left on device", whichever way the
 * writer put its bytes (big fwrite blocks, fprintf, a stream), never as "Input/output error";
 * and the temp file is gone. /dev/full (every write fails with ENOSPC) is written directly; a
 * 64 KiB tmpfs, when this process may mount one (root), checks the temp-file path too. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "idx.h"
#include "stream.h"
#include "util.h"

static const char *target;

static void write_idx(void)
{
    int64_t dims[1] = {1 << 20}; /* 1 MiB: written by fwrite in one block, past stdio's buffer */
    uint8_t *data = calloc(dims[0], 1);
    idx_write(target, 1, dims, data);
    free(data);
}

static void write_text(void)
{
    FILE *f = atomic_open(target);
    for (int i = 0; i < 100000; i++)
        fprintf(f, "line %d of a text that does not fit\n", i);
    atomic_commit(f);
}

static void write_stream(void)
{
    FILE *f = atomic_open(target);
    stream_header *h = header_new("x", 0);
    int64_t shape[1] = {1 << 18};
    header_add_field(h, "v", DT_F32, 1, shape);
    stream_writer *w = stream_create_named(f, h, target);
    float *v = calloc(shape[0], sizeof *v);
    void *d[1] = {v};
    for (int i = 0; i < 4; i++)
        stream_write_data(w, d, 0);
    stream_finish(w);
    atomic_commit(f);
    free(v);
    header_free(h);
}

/* runs fn in a child with its stderr in a pipe; returns its exit status, its message in msg */
static int run(void (*fn)(void), char *msg, size_t cap)
{
    int p[2];
    if (pipe(p) != 0)
        return -1;
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(p[1], 2);
        close(p[0]);
        fn();
        _exit(0);
    }
    close(p[1]);
    size_t n = 0;
    ssize_t k;
    while (n + 1 < cap && (k = read(p[0], msg + n, cap - 1 - n)) > 0)
        n += k;
    msg[n] = 0;
    close(p[0]);
    int st;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

static void check_full(const char *path, const char *dir)
{
    void (*fns[3])(void) = {write_idx, write_text, write_stream};
    const char *names[3] = {"idx_write", "fprintf", "stream"};
    target = path;
    for (int i = 0; i < 3; i++) {
        char msg[1024];
        int st = run(fns[i], msg, sizeof msg);
        int ok = st == 1 && strstr(msg, "No space left on device") && !strstr(msg, "Input/output");
        if (!ok)
            fprintf(stderr, "%s to %s: exit %d, message: %s", names[i], path, st, msg);
        CHECK(ok);
        if (dir) { /* nothing left behind: neither the file nor a temp file */
            char cmd[512];
            snprintf(cmd, sizeof cmd, "test -z \"$(ls -A %s)\"", dir);
            CHECK(system(cmd) == 0);
        }
    }
}

int main(void)
{
    util_init("test_atomic");
    check_full("/dev/full", NULL);

    char dir[] = "/tmp/test_atomic.XXXXXX";
    if (!mkdtemp(dir))
        return 1;
    if (mount("tmpfs", dir, "tmpfs", 0, "size=64k") != 0) {
        printf("test_atomic: a tmpfs cannot be mounted here (%s): only /dev/full was tested\n",
               strerror(errno));
    } else {
        char path[256];
        snprintf(path, sizeof path, "%s/out", dir);
        check_full(path, dir);
        umount(dir);
    }
    rmdir(dir);
    return check_done("test_atomic");
}
