#include "blas.h"

#include <cblas.h>
#include <stdlib.h>
#include <string.h>
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

/* the kernel this project uses on this CPU (lib/blas.h), NULL for "whatever OpenBLAS chose" */
static const char *wanted_core(const char *core)
{
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512cd") &&
        __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
        __builtin_cpu_supports("avx512vl"))
        return "SkylakeX";
    if (__builtin_cpu_supports("avx2") && !strcasecmp(core, "Prescott"))
        return "Haswell";
    return NULL;
}

void blas_init(char **argv, int threads)
{
    const char *core = openblas_get_corename();
    int again = getenv("HEDGE_BLAS_REEXEC") != NULL; /* we are the re-executed program */
    unsetenv("HEDGE_BLAS_REEXEC");
    const char *want = getenv("HEDGE_BLAS_CORE");
    if (!want || !*want)
        want = core ? wanted_core(core) : NULL;
    if (argv && core && want && !getenv("HEDGE_BLAS_KEEP") && strcasecmp(core, want)) {
        if (again) {
            warn("OpenBLAS runs its %s kernel although %s was asked for", core, want);
        } else {
            setenv("OPENBLAS_CORETYPE", want, 1);
            setenv("HEDGE_BLAS_REEXEC", "1", 1);
            fflush(NULL);
            execv("/proc/self/exe", argv);
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
