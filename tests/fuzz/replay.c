/* replay: runs a harness's LLVMFuzzerTestOneInput over saved inputs, without libFuzzer. CI
 * replays the corpus and the regressions this way under ASan + UBSan (make fuzz-replay).
 *
 *   replay FILE|DIR...     a directory stands for every regular file in it, recursively
 *
 * Each input is read into a buffer of exactly its size, so that a read past its end is caught.
 * The inputs run in one child process; the parent names the input the child died on, whatever
 * killed it (ASan, UBSan, a signal, an exit() in the library, more than 10 s on one input;
 * LeakSanitizer's report comes after the last input). Prints "NAME: N inputs (A accepted, R rejected)" and exits 0, or 1. */
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fuzz.h"

#define TIMEOUT 10 /* seconds per input; the slowest saved input takes a few milliseconds */

static struct {
    char current[4096]; /* the input running now */
    long inputs, accepted;
    int done;
} *shared; /* written by the child, read by the parent */

static FILE *err; /* the real stderr: the harness sends stderr to /dev/null (fuzz.h) */

static void fail(const char *path)
{
    fprintf(err, "replay: cannot read %s\n", path);
    exit(1);
}

static void run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    struct stat st;
    if (!f || fstat(fileno(f), &st) != 0)
        fail(path);
    size_t n = st.st_size;
    uint8_t *buf = malloc(n ? n : 1);
    if (!buf || fread(buf, 1, n, f) != n)
        fail(path);
    fclose(f);
    snprintf(shared->current, sizeof shared->current, "%s", path);
    alarm(TIMEOUT); /* SIGALRM ends the child: a slow input is a failure, as under libFuzzer */
    LLVMFuzzerTestOneInput(buf, n);
    alarm(0);
    free(buf);
    shared->inputs++;
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static void run_path(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0)
        fail(path);
    if (!S_ISDIR(st.st_mode)) {
        run_file(path);
        return;
    }
    DIR *d = opendir(path);
    if (!d)
        fail(path);
    char **names = NULL;
    size_t n = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue;
        names = realloc(names, (n + 1) * sizeof *names);
        size_t len = strlen(path) + strlen(e->d_name) + 2;
        if (!names || !(names[n] = malloc(len)))
            abort();
        snprintf(names[n++], len, "%s/%s", path, e->d_name);
    }
    closedir(d);
    if (n > 1)
        qsort(names, n, sizeof *names, by_name);
    for (size_t i = 0; i < n; i++) {
        run_path(names[i]);
        free(names[i]);
    }
    free(names);
}

int main(int argc, char **argv)
{
    const char *prog = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
    if (argc < 2) {
        fprintf(stderr, "usage: %s FILE|DIR...\n", prog);
        return 2;
    }
    err = stderr;
    shared = mmap(NULL, sizeof *shared, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (shared == MAP_FAILED) {
        perror("replay: mmap");
        return 1;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        perror("replay: fork");
        return 1;
    }
    if (pid == 0) {
        for (int i = 1; i < argc; i++)
            run_path(argv[i]);
        shared->accepted = fuzz_accepted;
        shared->done = 1;
        return 0; /* LeakSanitizer runs now */
    }
    int status;
    if (waitpid(pid, &status, 0) != pid) {
        perror("replay: waitpid");
        return 1;
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !shared->done) {
        char how[64];
        if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
            snprintf(how, sizeof how, "more than %d s", TIMEOUT);
        else if (WIFSIGNALED(status))
            snprintf(how, sizeof how, "killed by signal %d", WTERMSIG(status));
        else
            snprintf(how, sizeof how, "exit status %d", WEXITSTATUS(status));
        if (shared->done)
            fprintf(stderr, "%s: FAILED after its %ld inputs (%s: a leak?)\n", prog, shared->inputs, how);
        else
            fprintf(stderr, "%s: FAILED on input %s (%s)\n", prog, shared->current, how);
        return 1;
    }
    printf("%s: %ld inputs (%ld accepted, %ld rejected)\n", prog, shared->inputs, shared->accepted,
           shared->inputs - shared->accepted);
    return 0;
}
