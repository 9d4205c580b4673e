/* blas: the one module that calls OpenBLAS.
 *
 * Kernel selection policy (see docs/speed.md): one OpenBLAS kernel on every machine that can
 * run it, so that the same seed gives the same bytes on all of them. OpenBLAS 0.3.21 picks its
 * kernel at load time from the CPU model, and machines of this project's kind differ: it says
 * SkylakeX on one, Cooperlake on another, Haswell on an AVX-512 AMD EPYC (it predates Zen 4)
 * and Prescott where a hypervisor hides the model. The four kernels round differently (four
 * different checkpoints from the same run, measured), and Haswell and Prescott are slower on
 * AVX-512 hardware (sgemm 2048^3, one thread, on the EPYC: Haswell 123 GFLOPS, SkylakeX 237;
 * training 22,000 against 24,000 images/s). So blas_init() wants SkylakeX whenever the CPU has
 * AVX-512 (F, CD, BW, DQ, VL: what the SkylakeX kernels use), else Haswell when it has AVX2 and
 * OpenBLAS fell back to Prescott. If another kernel runs, it re-executes the program once with
 * OPENBLAS_CORETYPE set to the one it wants (through its own file, with the same argv, so that
 * it keeps its name for ps, pgrep and pkill). This overrides an OPENBLAS_CORETYPE inherited from
 * the environment (some machines of this kind set it to Haswell for every process), because
 * the same bytes everywhere need one kernel everywhere. HEDGE_BLAS_CORE=NAME asks for another
 * kernel; HEDGE_BLAS_KEEP=1 keeps whatever OpenBLAS (or OPENBLAS_CORETYPE) chose. Call it first
 * in main, before reading any input. blas_corename() says which kernel runs; train records it
 * in the checkpoint.
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
/* the same kernel for a library in a process hedge did not start (libhedge.so in Python, a C
 * program that links libhedge): the first call switches the process's OpenBLAS, in place, to the
 * kernel blas_init would re-execute for (OpenBLAS's gotoblas_dynamic_quit and _init with
 * OPENBLAS_CORETYPE set for that call, the environment restored after), so that the engine gives
 * the programs' bytes. Once a process (later calls return at once); thread-safe; HEDGE_BLAS_CORE
 * and HEDGE_BLAS_KEEP as for blas_init. Every user of that OpenBLAS in the process (numpy's BLAS
 * is the same library on Debian) runs that kernel from then on. Returns the kernel's name. */
const char *blas_choose(void);
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
