#include "blas.h"

#include <cblas.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

static int nthreads = 1;

void blas_set_threads(int threads)
{
    if (threads < 1)
        threads = 1;
    nthreads = threads;
    openblas_set_num_threads(threads);
}

int blas_threads(void) { return nthreads; }
const char *blas_corename(void) { return openblas_get_corename(); }

/* the kernel this project uses on this CPU (lib/numerics/blas.h), NULL for "whatever OpenBLAS chose" */
static const char *wanted_core(const char *core)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512cd") &&
        __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
        __builtin_cpu_supports("avx512vl"))
        return "SkylakeX";
    if (__builtin_cpu_supports("avx2") && !strcasecmp(core, "Prescott"))
        return "Haswell";
#endif
    (void)core; /* elsewhere (aarch64) OpenBLAS's own choice */
    return NULL;
}

/* Re-executes this program with argv (returns only if it could not). Through the path of its
 * file, not /proc/self/exe: the kernel names a process (its comm, what ps, pgrep and pkill match)
 * after the file it executes, and "exe" would hide every program. The path is used only while it
 * is still the file this process runs (same device and inode), else /proc/self/exe. The name the
 * process had goes along in HEDGE_BLAS_REEXEC, for the re-executed program to take it back
 * (prctl) if the path gave another one (a program started through a link of another name). */
static void reexec(char **argv)
{
    char name[16] = "", path[PATH_MAX];
    prctl(PR_GET_NAME, name, 0, 0, 0);
    setenv("HEDGE_BLAS_REEXEC", name[0] ? name : "1", 1);
    ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
    struct stat a, b;
    if (n > 0) {
        path[n] = 0;
        if (stat(path, &a) == 0 && stat("/proc/self/exe", &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino)
            execv(path, argv);
    }
    execv("/proc/self/exe", argv);
}

void blas_init(char **argv, int threads)
{
    const char *core = openblas_get_corename();
    const char *name = getenv("HEDGE_BLAS_REEXEC"); /* set: we are the re-executed program */
    int again = name != NULL;
    if (again && strcmp(name, "1")) {
        char now[16] = "";
        prctl(PR_GET_NAME, now, 0, 0, 0);
        if (strcmp(now, name))
            prctl(PR_SET_NAME, name, 0, 0, 0);
    }
    unsetenv("HEDGE_BLAS_REEXEC");
    const char *want = getenv("HEDGE_BLAS_CORE");
    if (!want || !*want)
        want = core ? wanted_core(core) : NULL;
    if (argv && core && want && !getenv("HEDGE_BLAS_KEEP") && strcasecmp(core, want)) {
        if (again) {
            warn("OpenBLAS runs its %s kernel although %s was asked for", core, want);
        } else {
            setenv("OPENBLAS_CORETYPE", want, 1);
            fflush(NULL);
            atomic_exec_handover(1); /* the new image removes the temp files this one opened */
            reexec(argv);
            atomic_exec_handover(0);
            unsetenv("HEDGE_BLAS_REEXEC");
            warn("could not re-execute with OPENBLAS_CORETYPE=%s; using the %s kernel", want, core);
        }
    }
    if (threads <= 0) {
        const char *e = getenv("OPENBLAS_NUM_THREADS");
        threads = e && atoi(e) > 0 ? atoi(e) : 1;
    }
    blas_set_threads(threads);
}

/* OpenBLAS's DYNAMIC_ARCH entry points, which cblas.h does not declare: weak, so that a BLAS
 * without them (a build for one CPU, the reference BLAS) still links, and blas_choose leaves
 * the kernel as it is there */
extern void gotoblas_dynamic_init(void) __attribute__((weak));
extern void gotoblas_dynamic_quit(void) __attribute__((weak));

static const char *choose_result;

/* blas_choose's work, once a process */
static void choose(void)
{
    const char *core = openblas_get_corename();
    const char *want = getenv("HEDGE_BLAS_CORE");
    if (!want || !*want)
        want = core ? wanted_core(core) : NULL;
    choose_result = core;
    if (!core || !want || getenv("HEDGE_BLAS_KEEP") || !strcasecmp(core, want))
        return;
    if (!gotoblas_dynamic_init || !gotoblas_dynamic_quit) {
        warn("OpenBLAS runs its %s kernel and has no way to change it in this process (not DYNAMIC_ARCH); "
             "hedge's programs use %s", core, want);
        return;
    }
    /* OpenBLAS picks its kernel in gotoblas_dynamic_init from OPENBLAS_CORETYPE: set it for that
     * call only, then give the process its environment back */
    const char *was = getenv("OPENBLAS_CORETYPE");
    char *saved = was ? estrdup(was) : NULL;
    setenv("OPENBLAS_CORETYPE", want, 1);
    gotoblas_dynamic_quit();
    gotoblas_dynamic_init();
    if (saved)
        setenv("OPENBLAS_CORETYPE", saved, 1);
    else
        unsetenv("OPENBLAS_CORETYPE");
    free(saved);
    choose_result = openblas_get_corename();
    if (strcasecmp(choose_result, want))
        warn("OpenBLAS runs its %s kernel although %s was asked for", choose_result, want);
}

const char *blas_choose(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, choose);
    return choose_result;
}

void blas_sgemm(int trans_a, int trans_b, int M, int N, int K, float alpha, const float *A, int lda,
                const float *B, int ldb, float beta, float *C, int ldc)
{
    cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans, M,
                N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

void blas_sgemv(int trans_a, int M, int N, float alpha, const float *A, int lda, const float *x,
                float beta, float *y)
{
    cblas_sgemv(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans, M, N, alpha, A, lda, x, 1, beta, y, 1);
}

double blas_probe_gflops(int n, int reps)
{
    float *a = ealloc_aligned((size_t)n * n * 4), *b = ealloc_aligned((size_t)n * n * 4),
          *c = ealloc_aligned((size_t)n * n * 4);
    for (long i = 0; i < (long)n * n; i++) {
        a[i] = 1e-3f * (i % 7);
        b[i] = 1e-3f * (i % 5);
    }
    blas_sgemm(0, 0, n, n, n, 1, a, n, b, n, 0, c, n); /* warm up */
    double best = 1e30;
    for (int r = 0; r < reps; r++) {
        double t = now_seconds();
        blas_sgemm(0, 0, n, n, n, 1, a, n, b, n, 0, c, n);
        t = now_seconds() - t;
        if (t < best)
            best = t;
    }
    free(a);
    free(b);
    free(c);
    return 2.0 * n * n * n / best / 1e9;
}
