/* simd.h: the one door to vector instructions. Every file that writes SIMD code includes this
 * header, never <immintrin.h>, and writes Intel's AVX2/FMA (and, behind a run-time check, AVX-512)
 * intrinsics; this header decides what they become:
 *
 *   native (default on x86-64-v3): <immintrin.h> itself; HEDGE_SIMD_AVX2 is 1.
 *   portable (`make SIMD=none`, or any build without AVX2 and FMA: x86-64 baseline, aarch64):
 *     SIMDe (Debian's libsimde-dev, header only) implements the same intrinsics in C; with
 *     HEDGE_SIMD_NONE it is told to use no native instructions at all (SIMDE_NO_NATIVE), so with
 *     ARCH=-march=x86-64 hedge's objects hold no ymm or zmm register (tests/shell/scalar.sh checks
 *     with objdump); on aarch64 without HEDGE_SIMD_NONE SIMDe maps them to NEON.
 *     HEDGE_SIMD_AVX2 is 0.
 *
 * Files with a cheaper scalar formulation of their own test HEDGE_SIMD_AVX2 (knnpass.c,
 * knn_search.c, retrieval.c, mls.c). The AVX-512 kernels (nn.c) exist only in the native build
 * (HEDGE_SIMD_AVX512_KERNELS). The portable build computes a*b + c as two roundings where FMA
 * has one, so its numbers differ from the native build's in the last bits (docs/build.md gives
 * the tolerances tests/shell/scalar.sh holds it to); each build alone keeps the same seed, same
 * bytes contract at any thread count. */
#ifndef HEDGE_SIMD_H
#define HEDGE_SIMD_H

#if defined(__AVX2__) && defined(__FMA__) && !defined(HEDGE_SIMD_NONE)
#include <immintrin.h>
#define HEDGE_SIMD_AVX2 1
#define HEDGE_SIMD_AVX512_KERNELS 1
#define HEDGE_SIMD_NAME "avx2"
#else
#define SIMDE_ENABLE_NATIVE_ALIASES
#ifdef HEDGE_SIMD_NONE
#define SIMDE_NO_NATIVE
#define HEDGE_SIMD_NAME "none"
#else
#define HEDGE_SIMD_NAME "simde"
#endif
#include <simde/x86/avx2.h>
#include <simde/x86/fma.h>
#define HEDGE_SIMD_AVX2 0
#define HEDGE_SIMD_AVX512_KERNELS 0
#endif

#endif
