/* blas: the one module that calls OpenBLAS.
 *
 * Kernel selection policy (see README "Speed"): OpenBLAS 0.3.21 picks its kernel at load time
 * from the CPU model. Under hypervisors that hide the model it falls back to the Prescott
 * kernel (about 30 GFLOPS instead of about 100 per core). blas_init() checks
 * openblas_get_corename(); if it is "Prescott" while the CPU has AVX-512 (or AVX2), and the user
 * has not set OPENBLAS_CORETYPE, it re-executes the program once with OPENBLAS_CORETYPE=SkylakeX
 * (or Haswell). Set HEDGE_BLAS_KEEP=1 to keep whatever OpenBLAS chose. Call it first in main,
 * before reading any input.
 *
 * Threads: every program sets its thread count on purpose: blas_init(argv, threads) with
 * threads from its -t option; 0 means OPENBLAS_NUM_THREADS if set, else 1 (pipelines run several
 * programs on 2 cores).
 *
 *   blas_init(argv, opt.threads);
 *   blas_sgemm(0, 1, M, N, K, 1.0f, A, K, B, K, 0.0f, C, N);   // C = A B^T, row-major
 */
#ifndef HEDGE_BLAS_H
#define HEDGE_BLAS_H

void blas_init(char **argv, int threads);
void blas_set_threads(int threads);
int blas_threads(void);
const char *blas_corename(void);
/* row-major C = alpha op(A) op(B) + beta C; op(X) = X^T when trans_x is 1.
 * op(A) is M x K, op(B) is K x N, C is M x N. */
void blas_sgemm(int trans_a, int trans_b, int M, int N, int K, float alpha, const float *A, int lda,
                const float *B, int ldb, float beta, float *C, int ldc);
/* y = alpha op(A) x + beta y, A row-major M x N */
void blas_sgemv(int trans_a, int M, int N, float alpha, const float *A, int lda, const float *x,
                float beta, float *y);
/* GFLOPS of an n x n x n sgemm, best of reps, with the current threads */
double blas_probe_gflops(int n, int reps);

#endif
