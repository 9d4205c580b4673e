#include "nn.h"

#include "simd.h"
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "blas.h"
#include "util.h"

/* ---------------------------------------------------------------- reference layers (NCHW) */

/* col (Cin*25, H*W): row ci*25 + ky*5 + kx, column y*W + x, holds in[ci][y+ky-2][x+kx-2] or 0 */
static void im2col(float *col, const float *in, int Cin, int H, int W)
{
    for (int ci = 0; ci < Cin; ci++)
        for (int ky = 0; ky < 5; ky++)
            for (int kx = 0; kx < 5; kx++) {
                float *row = col + (size_t)((ci * 5 + ky) * 5 + kx) * H * W;
                for (int y = 0; y < H; y++) {
                    int sy = y + ky - 2;
                    for (int x = 0; x < W; x++) {
                        int sx = x + kx - 2;
                        row[y * W + x] = sy >= 0 && sy < H && sx >= 0 && sx < W
                                             ? in[((size_t)ci * H + sy) * W + sx]
                                             : 0.0f;
                    }
                }
            }
}

/* the adjoint of im2col: din += the columns summed back onto the pixels they came from */
static void col2im_add(float *din, const float *col, int Cin, int H, int W)
{
    for (int ci = 0; ci < Cin; ci++)
        for (int ky = 0; ky < 5; ky++)
            for (int kx = 0; kx < 5; kx++) {
                const float *row = col + (size_t)((ci * 5 + ky) * 5 + kx) * H * W;
                for (int y = 0; y < H; y++) {
                    int sy = y + ky - 2;
                    if (sy < 0 || sy >= H)
                        continue;
                    for (int x = 0; x < W; x++) {
                        int sx = x + kx - 2;
                        if (sx >= 0 && sx < W)
                            din[((size_t)ci * H + sy) * W + sx] += row[y * W + x];
                    }
                }
            }
}

void nn_conv_forward(float *out, const float *in, const float *w, const float *b, int B, int Cin,
                     int H, int W, int Cout)
{
    int HW = H * W, K = Cin * 25;
    float *col = emalloc((size_t)K * HW * sizeof(float));
    for (int i = 0; i < B; i++) {
        // col is (K, HW); out_i (Cout, HW) = w (Cout, K) col
        im2col(col, in + (size_t)i * Cin * HW, Cin, H, W);
        float *o = out + (size_t)i * Cout * HW;
        blas_sgemm(0, 0, Cout, HW, K, 1.0f, w, K, col, HW, 0.0f, o, HW);
        for (int c = 0; c < Cout; c++)
            for (int p = 0; p < HW; p++)
                o[(size_t)c * HW + p] += b[c];
    }
    free(col);
}

void nn_conv_backward(float *din, float *dw, float *db, const float *dout, const float *in,
                      const float *w, int B, int Cin, int H, int W, int Cout)
{
    int HW = H * W, K = Cin * 25;
    float *col = emalloc((size_t)K * HW * sizeof(float));
    for (int i = 0; i < B; i++) {
        const float *d = dout + (size_t)i * Cout * HW;
        im2col(col, in + (size_t)i * Cin * HW, Cin, H, W);
        // dw (Cout, K) += dout_i (Cout, HW) col^T
        blas_sgemm(0, 1, Cout, K, HW, 1.0f, d, HW, col, HW, 1.0f, dw, K);
        for (int c = 0; c < Cout; c++) {
            float s = 0;
            for (int p = 0; p < HW; p++)
                s += d[(size_t)c * HW + p];
            db[c] += s;
        }
        if (din) {
            // dcol (K, HW) = w^T (K, Cout) dout_i (Cout, HW), then back onto the pixels
            blas_sgemm(1, 0, K, HW, Cout, 1.0f, w, K, d, HW, 0.0f, col, HW);
            col2im_add(din + (size_t)i * Cin * HW, col, Cin, H, W);
        }
    }
    free(col);
}

void nn_relu_forward(float *out, const float *in, size_t n)
{
    for (size_t i = 0; i < n; i++)
        out[i] = in[i] > 0 ? in[i] : 0.0f;
}

void nn_relu_backward(float *din, const float *dout, const float *in, size_t n)
{
    for (size_t i = 0; i < n; i++)
        din[i] += in[i] > 0 ? dout[i] : 0.0f;
}

/* index (dy*2 + dx) of the first maximum of a 2x2 window at p with row stride W */
static inline int window_argmax(const float *p, int W)
{
    float v[4] = {p[0], p[1], p[W], p[W + 1]};
    int best = 0;
    for (int k = 1; k < 4; k++)
        if (v[k] > v[best])
            best = k;
    return best;
}

void nn_maxpool_forward(float *out, const float *in, int B, int C, int H, int W)
{
    int H2 = H / 2, W2 = W / 2;
    for (size_t bc = 0; bc < (size_t)B * C; bc++) {
        const float *src = in + bc * H * W;
        float *dst = out + bc * H2 * W2;
        for (int y = 0; y < H2; y++)
            for (int x = 0; x < W2; x++) {
                const float *p = src + (size_t)(2 * y) * W + 2 * x;
                int a = window_argmax(p, W);
                dst[y * W2 + x] = p[(a >> 1) * W + (a & 1)];
            }
    }
}

void nn_maxpool_backward(float *din, const float *dout, const float *in, int B, int C, int H, int W)
{
    int H2 = H / 2, W2 = W / 2;
    for (size_t bc = 0; bc < (size_t)B * C; bc++) {
        const float *src = in + bc * H * W;
        float *dst = din + bc * H * W;
        const float *d = dout + bc * H2 * W2;
        for (int y = 0; y < H2; y++)
            for (int x = 0; x < W2; x++) {
                size_t o = (size_t)(2 * y) * W + 2 * x;
                int a = window_argmax(src + o, W);
                dst[o + (a >> 1) * W + (a & 1)] += d[y * W2 + x];
            }
    }
}

void nn_fc_forward(float *out, const float *in, const float *w, const float *b, int B, int IN, int OUT)
{
    if (B <= 0)
        return;
    // out (B, OUT) = in (B, IN) w^T (IN, OUT)
    blas_sgemm(0, 1, B, OUT, IN, 1.0f, in, IN, w, IN, 0.0f, out, OUT);
    for (int i = 0; i < B; i++)
        for (int o = 0; o < OUT; o++)
            out[(size_t)i * OUT + o] += b[o];
}

void nn_fc_backward(float *din, float *dw, float *db, const float *dout, const float *in,
                    const float *w, int B, int IN, int OUT)
{
    if (B <= 0)
        return;
    // dw (OUT, IN) += dout^T (OUT, B) in (B, IN)
    blas_sgemm(1, 0, OUT, IN, B, 1.0f, dout, OUT, in, IN, 1.0f, dw, IN);
    for (int i = 0; i < B; i++)
        for (int o = 0; o < OUT; o++)
            db[o] += dout[(size_t)i * OUT + o];
    // din (B, IN) += dout (B, OUT) w (OUT, IN)
    if (din)
        blas_sgemm(0, 0, B, IN, OUT, 1.0f, dout, OUT, w, IN, 1.0f, din, IN);
}

/* ---------------------------------------------------------------- fused conv + ReLU + pool */

int nn_plane_stride(int W) { return (W + 7) / 8 * 8 + 8; }
size_t nn_planes_size(int Cin, int H, int W) { return (size_t)Cin * 5 * (H + 4) * nn_plane_stride(W); }

void nn_planes_fill(float *planes, const uint8_t *img, int Cin, int H, int W, float scale, int nplanes)
{
    int XS = nn_plane_stride(W);
    size_t PS = (size_t)(H + 4) * XS;
    float row[W + 8];
    __m256 s8 = _mm256_set1_ps(scale);
    for (int ci = 0; ci < Cin; ci++) {
        float *cp = planes + (size_t)ci * 5 * PS;
        for (int y = 0; y < H; y++) {
            const uint8_t *s = img + ((size_t)ci * H + y) * W;
            int x = 0;
            for (; x + 8 <= W; x += 8) {
                __m256i v = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(s + x)));
                _mm256_storeu_ps(row + x, _mm256_mul_ps(_mm256_cvtepi32_ps(v), s8));
            }
            for (; x < W; x++)
                row[x] = s[x] * scale;
            // image column x is padded column x + 2, which lands at column x + 2 - kx of plane kx
            for (int kx = 0; kx < nplanes; kx++) {
                int x0 = kx > 2 ? kx - 2 : 0;
                memcpy(cp + kx * PS + (size_t)(y + 2) * XS + x0 + 2 - kx, row + x0, (W - x0) * sizeof(float));
            }
        }
    }
}

/* Pool a 2x2 window given as four 4-lane vectors (a: top-left ... d: bottom-right):
 * max and the index of the first maximum, ties to the earlier one. */
static inline __m128 pool4(__m128 a, __m128 b, __m128 c, __m128 d, __m128i *idx)
{
    __m128 m01 = _mm_max_ps(a, b), m23 = _mm_max_ps(c, d);
    __m128i i01 = _mm_and_si128(_mm_castps_si128(_mm_cmpgt_ps(b, a)), _mm_set1_epi32(1));
    __m128i i23 = _mm_add_epi32(_mm_set1_epi32(2),
                                _mm_and_si128(_mm_castps_si128(_mm_cmpgt_ps(d, c)), _mm_set1_epi32(1)));
    __m128 lower = _mm_cmpgt_ps(m23, m01);
    *idx = _mm_castps_si128(_mm_blendv_ps(_mm_castsi128_ps(i01), _mm_castsi128_ps(i23), lower));
    return _mm_max_ps(m01, m23);
}

static inline __m256 pool8(__m256 a, __m256 b, __m256 c, __m256 d, __m256i *idx)
{
    __m256 m01 = _mm256_max_ps(a, b), m23 = _mm256_max_ps(c, d);
    __m256i one = _mm256_set1_epi32(1);
    __m256i i01 = _mm256_and_si256(_mm256_castps_si256(_mm256_cmp_ps(b, a, _CMP_GT_OQ)), one);
    __m256i i23 = _mm256_add_epi32(_mm256_set1_epi32(2),
                                   _mm256_and_si256(_mm256_castps_si256(_mm256_cmp_ps(d, c, _CMP_GT_OQ)), one));
    __m256 lower = _mm256_cmp_ps(m23, m01, _CMP_GT_OQ);
    *idx = _mm256_castps_si256(
        _mm256_blendv_ps(_mm256_castsi256_ps(i01), _mm256_castsi256_ps(i23), lower));
    return _mm256_max_ps(m01, m23);
}

/* keep v in a register: stops the compiler from folding one load into several FMAs (which
 * doubles the loads of a load-bound loop) */
#if HEDGE_SIMD_AVX2
#define NN_OPAQUE(v) __asm__("" : "+x"(v))
#else
#define NN_OPAQUE(v) ((void)0)
#endif

/* AVX-512 (runtime check; HEDGE_NO_AVX512=1 forces the AVX2 code): every kernel with an
 * AVX-512 variant gives the same bytes as its AVX2 one (same operations in the same order). */
#if HEDGE_SIMD_AVX512_KERNELS
static int have_avx512(void)
{
    static atomic_int have = -1; /* decided at the first call; threads may race to the same value */
    int h = atomic_load_explicit(&have, memory_order_relaxed);
    if (h < 0) {
        __builtin_cpu_init();
        const char *e = getenv("HEDGE_NO_AVX512");
        h = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") && !(e && *e && *e != '0');
        atomic_store_explicit(&have, h, memory_order_relaxed);
    }
    return h;
}
#else
static int have_avx512(void) { return 0; } /* the portable build has AVX2's kernels through simd.h */
#endif

const char *nn_code_path(void) { return have_avx512() ? "avx512" : HEDGE_SIMD_NAME; }

/* The first layer works on blocks: CB output channels from c0, NR conv rows from 2*py (NR = 2 or
 * 4: NR/2 pooled rows), conv columns xb..xb+7 -> pooled columns xb/2..xb/2+3 (those < W2 are
 * stored). acc[c][r] are the CB*NR accumulators, taps summed in order (ci, ky, kx). The kernels
 * take CIN, the input channels, as a constant: CIN = 1 (N-digit MNIST) compiles to the
 * single-channel code with nothing of the channel loop left; CIN = 0 means a->Cin channels. */
typedef struct {
    float *out;
    uint8_t *argmax;
    const float *in, *w, *b;
    int H, XS, W2, Cout, Cin;
    size_t CS; /* floats between the planes of two input channels: 5 (H+4) XS */
} convpool1_args;

/* bias, ReLU, pool and store one block's accumulators */
static inline __attribute__((always_inline)) void convpool1_store(const convpool1_args *a, __m256 acc[6][4],
                                                                  int c0, int py, int xb, const int CB, const int NR)
{
    const __m256i evens_odds = _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7);
    int px0 = xb / 2, W2 = a->W2, Wp = W2 + 4, Cout = a->Cout, nj = W2 - px0 < 4 ? W2 - px0 : 4;
#pragma GCC unroll 2
    for (int r = 0; r < NR; r += 2) {
        __m128 m[6];
        __m128i ix[6];
#pragma GCC unroll 6
        for (int c = 0; c < CB; c++) {
            __m256 e0 = _mm256_permutevar8x32_ps(acc[c][r], evens_odds);
            __m256 e1 = _mm256_permutevar8x32_ps(acc[c][r + 1], evens_odds);
            m[c] = pool4(_mm256_castps256_ps128(e0), _mm256_extractf128_ps(e0, 1),
                         _mm256_castps256_ps128(e1), _mm256_extractf128_ps(e1, 1), &ix[c]);
            m[c] = _mm_max_ps(_mm_add_ps(m[c], _mm_set1_ps(a->b[c0 + c])), _mm_setzero_ps());
        }
        int y = py + r / 2;
        float *o = a->out + ((size_t)(y + 2) * Wp + px0 + 2) * Cout + c0;
        uint8_t *am = a->argmax + ((size_t)y * W2 + px0) * Cout + c0;
        if (CB % 2 == 0 && nj == 4) {
            // pixel j gets the adjacent pairs (m[c][j], m[c+1][j]): 8-byte stores; argmax as 16 bits
#pragma GCC unroll 3
            for (int c = 0; c < CB; c += 2) {
                __m128 lo = _mm_unpacklo_ps(m[c], m[c + 1]), hi = _mm_unpackhi_ps(m[c], m[c + 1]);
                _mm_storel_pi((__m64 *)(o + c), lo);
                _mm_storeh_pi((__m64 *)(o + Cout + c), lo);
                _mm_storel_pi((__m64 *)(o + 2 * Cout + c), hi);
                _mm_storeh_pi((__m64 *)(o + 3 * Cout + c), hi);
                __m128i pr = _mm_or_si128(ix[c], _mm_slli_epi32(ix[c + 1], 8));
                uint16_t p16[8];
                _mm_storeu_si128((__m128i *)p16, pr);
                memcpy(am + c, &p16[0], 2);
                memcpy(am + Cout + c, &p16[2], 2);
                memcpy(am + 2 * Cout + c, &p16[4], 2);
                memcpy(am + 3 * Cout + c, &p16[6], 2);
            }
        } else {
            float val[6][4];
            int32_t idx[6][4];
            for (int c = 0; c < CB; c++) {
                _mm_storeu_ps(val[c], m[c]);
                _mm_storeu_si128((__m128i *)idx[c], ix[c]);
            }
            for (int j = 0; j < nj; j++)
                for (int c = 0; c < CB; c++) {
                    o[j * Cout + c] = val[c][j];
                    am[j * Cout + c] = (uint8_t)idx[c][j];
                }
        }
    }
}

/* Which input channels are all zero under a block (padded rows 2py .. 2py+NR+3, columns xb ..
 * xb+11: plane 0 and plane 4 at xb), bit ci for channel ci: the background of digit images
 * (about half the blocks of 2-digit MNIST), and of the L-shapes, whose colour often leaves one
 * channel empty. Then every product of that channel is w * +0 and the sums stay exactly what
 * they were: skipping it changes no bit. */
static inline __attribute__((always_inline)) unsigned convpool1_zero(const convpool1_args *a, int py, int xb,
                                                                     const int NR, const int CIN)
{
    const int cin = CIN ? CIN : a->Cin;
    int XS = a->XS;
    unsigned zero = 0;
    for (int ci = 0; ci < cin; ci++) {
        const float *p0 = a->in + ci * a->CS + (size_t)(2 * py) * XS + xb, *p4 = p0 + 4 * (size_t)(a->H + 4) * XS;
        __m256i any = _mm256_setzero_si256();
#pragma GCC unroll 8
        for (int r = 0; r < NR + 4; r++)
            any = _mm256_or_si256(any, _mm256_or_si256(_mm256_load_si256((const __m256i *)(p0 + r * XS)),
                                                       _mm256_load_si256((const __m256i *)(p4 + r * XS))));
        zero |= (unsigned)_mm256_testz_si256(any, any) << ci;
    }
    return zero;
}

/* AVX2 block, CB <= 2 (8 accumulators: no spills in 16 registers). ky stays a loop: unrolled,
 * the compiler keeps the loads shared by (ky, r) pairs alive across iterations and spills. */
static inline __attribute__((always_inline)) void convpool1_block(const convpool1_args *a, int c0, int py, int xb,
                                                                  unsigned zero, const int CB, const int NR,
                                                                  const int CIN)
{
    const int cin = CIN ? CIN : a->Cin;
    __m256 acc[6][4];
#pragma GCC unroll 2
    for (int c = 0; c < CB; c++)
#pragma GCC unroll 4
        for (int r = 0; r < NR; r++)
            acc[c][r] = _mm256_setzero_ps();
    if (zero == (1u << cin) - 1) {
        convpool1_store(a, acc, c0, py, xb, CB, NR);
        return;
    }
    int XS = a->XS;
    size_t PS = (size_t)(a->H + 4) * XS;
    for (int ci = 0; ci < cin; ci++) {
        if (CIN != 1 && zero >> ci & 1)
            continue;
        const float *src = a->in + ci * a->CS + (size_t)(2 * py) * XS + xb;
        const float *w0 = a->w + (c0 * cin + ci) * 25;
#pragma GCC unroll 1
        for (int ky = 0; ky < 5; ky++, src += XS, w0 += 5)
#pragma GCC unroll 5
            for (int kx = 0; kx < 5; kx++) {
                __m256 wv0 = _mm256_broadcast_ss(w0 + kx);
                __m256 wv1 = CB > 1 ? _mm256_broadcast_ss(w0 + 25 * cin + kx) : wv0;
#pragma GCC unroll 4
                for (int r = 0; r < NR; r++) {
                    __m256 v = _mm256_load_ps(src + kx * PS + r * XS);
                    NN_OPAQUE(v);
                    acc[0][r] = _mm256_fmadd_ps(wv0, v, acc[0][r]);
                    if (CB > 1)
                        acc[1][r] = _mm256_fmadd_ps(wv1, v, acc[1][r]);
                }
            }
    }
    convpool1_store(a, acc, c0, py, xb, CB, NR);
}

/* AVX-512VL block, CB <= 6: 24 accumulators in the 32 vector registers; one tap per iteration,
 * not unrolled (unrolled, the compiler keeps dozens of addresses alive and spills). Same sums
 * in the same order as convpool1_block. */
static inline __attribute__((always_inline)) void convpool1_block_wide(const convpool1_args *a, int c0, int py,
                                                                       int xb, unsigned zero, const int CB,
                                                                       const int NR, const int CIN)
{
    const int cin = CIN ? CIN : a->Cin;
    __m256 acc[6][4];
#pragma GCC unroll 6
    for (int c = 0; c < CB; c++)
#pragma GCC unroll 4
        for (int r = 0; r < NR; r++)
            acc[c][r] = _mm256_setzero_ps();
    if (zero == (1u << cin) - 1) {
        convpool1_store(a, acc, c0, py, xb, CB, NR);
        return;
    }
    int XS = a->XS;
    size_t PS = (size_t)(a->H + 4) * XS;
    for (int ci = 0; ci < cin; ci++) {
        if (CIN != 1 && zero >> ci & 1)
            continue;
        const float *src = a->in + ci * a->CS + (size_t)(2 * py) * XS + xb;
        const float *w0 = a->w + (c0 * cin + ci) * 25;
#pragma GCC unroll 1
        for (int t = 0; t < 25; t++) {
            const float *p = src + (t % 5) * PS + (t / 5) * XS;
            __m256 v[4];
#pragma GCC unroll 4
            for (int r = 0; r < NR; r++)
                v[r] = _mm256_load_ps(p + r * XS);
#pragma GCC unroll 6
            for (int c = 0; c < CB; c++) {
                __m256 wv = _mm256_broadcast_ss(w0 + c * 25 * cin + t);
#pragma GCC unroll 4
                for (int r = 0; r < NR; r++)
                    acc[c][r] = _mm256_fmadd_ps(wv, v[r], acc[c][r]);
            }
        }
    }
    convpool1_store(a, acc, c0, py, xb, CB, NR);
}

/* the blocks of one image: CB channels per block where possible, then single channels */
#define CONVPOOL1_IMAGE(a, H, W, BLOCK, CB, CIN)                                                         \
    for (int py = 0; py < (H) / 2; py += 2)                                                              \
        for (int xb = 0; xb < (W); xb += 8) {                                                            \
            int c0 = 0, full = py + 1 < (H) / 2;                                                         \
            unsigned zero = full ? convpool1_zero(a, py, xb, 4, CIN) : convpool1_zero(a, py, xb, 2, CIN); \
            for (; c0 + (CB) <= (a)->Cout; c0 += (CB))                                                   \
                full ? BLOCK(a, c0, py, xb, zero, CB, 4, CIN) : BLOCK(a, c0, py, xb, zero, CB, 2, CIN);  \
            for (; c0 < (a)->Cout; c0++)                                                                 \
                full ? BLOCK(a, c0, py, xb, zero, 1, 4, CIN) : BLOCK(a, c0, py, xb, zero, 1, 2, CIN);    \
        }

#if HEDGE_SIMD_AVX512_KERNELS
__attribute__((target("avx512f,avx512vl"))) static void convpool1_forward_avx512(const convpool1_args *a, int H,
                                                                                 int W)
{
    CONVPOOL1_IMAGE(a, H, W, convpool1_block_wide, 6, 1)
}
__attribute__((target("avx512f,avx512vl"))) static void convpool1_forward_avx512_multi(const convpool1_args *a,
                                                                                       int H, int W)
{
    CONVPOOL1_IMAGE(a, H, W, convpool1_block_wide, 6, 0)
}
#endif
static void convpool1_forward_avx2(const convpool1_args *a, int H, int W) { CONVPOOL1_IMAGE(a, H, W, convpool1_block, 2, 1) }
static void convpool1_forward_avx2_multi(const convpool1_args *a, int H, int W)
{
    CONVPOOL1_IMAGE(a, H, W, convpool1_block, 2, 0)
}

void nn_convpool1_forward(float *out, uint8_t *argmax, const float *in, const float *w,
                          const float *b, int Cin, int H, int W, int Cout)
{
    if (Cin < 1 || Cin > NN_CONVPOOL1_MAXCIN)
        die("nn_convpool1_forward: %d input channels (1 to %d)", Cin, NN_CONVPOOL1_MAXCIN);
    int XS = nn_plane_stride(W);
    convpool1_args a = {out, argmax, in, w, b, H, XS, W / 2, Cout, Cin, (size_t)5 * (H + 4) * XS};
#if HEDGE_SIMD_AVX512_KERNELS
    if (have_avx512())
        (Cin == 1 ? convpool1_forward_avx512 : convpool1_forward_avx512_multi)(&a, H, W);
    else
#endif
        (Cin == 1 ? convpool1_forward_avx2 : convpool1_forward_avx2_multi)(&a, H, W);
}

void nn_convpool1_backward(float *dw, float *db, const float *dout, const float *out,
                           const uint8_t *argmax, const float *in, int Cin, int H, int W, int Cout)
{
    int XS = nn_plane_stride(W), H2 = H / 2, W2 = W / 2, Wp = W2 + 4;
    size_t CS = (size_t)5 * (H + 4) * XS;
    for (int c = 0; c < Cout; c++)
        for (int ci = 0; ci < Cin; ci++) {
            // dw[c][ci] (5 rows of 8 lanes, lanes 5..7 junk) += g * the input patch under the argmax
            // (measured: this plain loop beats branch-free and two-accumulator-set variants)
            const float *inc = in + ci * CS;
            __m256 acc[5];
            for (int r = 0; r < 5; r++)
                acc[r] = _mm256_setzero_ps();
            float gsum = 0;
            for (int py = 0; py < H2; py++)
                for (int px = 0; px < W2; px++) {
                    size_t k = ((size_t)(py + 2) * Wp + px + 2) * Cout + c;
                    if (!(out[k] > 0))
                        continue;
                    float g = dout[k];
                    int a = argmax[((size_t)py * W2 + px) * Cout + c];
                    const float *p = inc + (size_t)(2 * py + (a >> 1)) * XS + 2 * px + (a & 1);
                    __m256 gv = _mm256_set1_ps(g);
                    gsum += g;
#pragma GCC unroll 5
                    for (int r = 0; r < 5; r++)
                        acc[r] = _mm256_fmadd_ps(gv, _mm256_loadu_ps(p + r * XS), acc[r]);
                }
            if (ci == 0)
                db[c] += gsum;
            float t[8];
            for (int r = 0; r < 5; r++) {
                _mm256_storeu_ps(t, acc[r]);
                for (int kx = 0; kx < 5; kx++)
                    dw[(c * Cin + ci) * 25 + r * 5 + kx] += t[kx];
            }
        }
}

void nn_convpool_pack(float *wk, float *wr, const float *w, int Cin)
{
    const int Cout = NN_CONVPOOL_COUT;
    if (Cin < 1 || Cin > NN_CONVPOOL_MAXCIN)
        die("nn_convpool_pack: %d input channels (1 to %d)", Cin, NN_CONVPOOL_MAXCIN);
    memset(wr, 0, NN_WR_SIZE * sizeof(float));
    for (int co = 0; co < Cout; co++)
        for (int ci = 0; ci < Cin; ci++)
            for (int ky = 0; ky < 5; ky++)
                for (int kx = 0; kx < 5; kx++) {
                    float v = w[((co * Cin + ci) * 5 + ky) * 5 + kx];
                    wk[((ky * 5 + kx) * Cin + ci) * Cout + co] = v;
                    wr[(co * 5 + ky) * NN_WR_ROW + kx * Cin + ci] = v;
                }
}

void nn_convpool_unpack_add(float *dw, const float *dwr, int Cin)
{
    for (int co = 0; co < NN_CONVPOOL_COUT; co++)
        for (int ci = 0; ci < Cin; ci++)
            for (int ky = 0; ky < 5; ky++)
                for (int kx = 0; kx < 5; kx++)
                    dw[((co * Cin + ci) * 5 + ky) * 5 + kx] += dwr[(co * 5 + ky) * NN_DWR_ROW + kx * Cin + ci];
}

/* One pooled output (all 16 channels) of the NHWC layer: the 2x2 conv pixels under it, two
 * 8-channel halves each, are 8 accumulators; each tap is 2 weight loads + 4 broadcasts. */
static inline __attribute__((always_inline)) void convpool_pixel(
    float *out, uint8_t *argmax, const float *in, const float *wk, const float *b, int rs, int Cin,
    const int CIN)
{
    const int cin = CIN ? CIN : Cin, K = 5 * cin;
    __m256 s00a = _mm256_setzero_ps(), s00b = s00a, s01a = s00a, s01b = s00a, s10a = s00a,
           s10b = s00a, s11a = s00a, s11b = s00a;
    for (int ky = 0; ky < 5; ky++) {
        /* four separate pointers, opaque to the compiler: otherwise it notices that pixel
         * (0,1) at tap j is pixel (0,0) at tap j + cin, keeps those loads alive and spills */
        const float *i00 = in + ky * rs, *i01 = i00 + cin, *i10 = i00 + rs, *i11 = i10 + cin;
        __asm__("" : "+r"(i00), "+r"(i01), "+r"(i10), "+r"(i11));
        const float *wr = wk + ky * K * 16;
#pragma GCC unroll 30
        for (int j = 0; j < K; j++) {
            __m256 wa = _mm256_loadu_ps(wr + j * 16), wb = _mm256_loadu_ps(wr + j * 16 + 8);
            __m256 x = _mm256_broadcast_ss(i00 + j);
            s00a = _mm256_fmadd_ps(x, wa, s00a);
            s00b = _mm256_fmadd_ps(x, wb, s00b);
            x = _mm256_broadcast_ss(i01 + j);
            s01a = _mm256_fmadd_ps(x, wa, s01a);
            s01b = _mm256_fmadd_ps(x, wb, s01b);
            x = _mm256_broadcast_ss(i10 + j);
            s10a = _mm256_fmadd_ps(x, wa, s10a);
            s10b = _mm256_fmadd_ps(x, wb, s10b);
            x = _mm256_broadcast_ss(i11 + j);
            s11a = _mm256_fmadd_ps(x, wa, s11a);
            s11b = _mm256_fmadd_ps(x, wb, s11b);
        }
    }
    __m256i ia, ib;
    __m256 ma = pool8(s00a, s01a, s10a, s11a, &ia), mb = pool8(s00b, s01b, s10b, s11b, &ib);
    ma = _mm256_max_ps(_mm256_add_ps(ma, _mm256_loadu_ps(b)), _mm256_setzero_ps());
    mb = _mm256_max_ps(_mm256_add_ps(mb, _mm256_loadu_ps(b + 8)), _mm256_setzero_ps());
    _mm256_storeu_ps(out, ma);
    _mm256_storeu_ps(out + 8, mb);
    // 16 int32 indices (0..3) -> 16 bytes
    __m256i p16 = _mm256_permute4x64_epi64(_mm256_packs_epi32(ia, ib), 0xD8);
    __m128i p8 = _mm_packs_epi16(_mm256_castsi256_si128(p16), _mm256_extracti128_si256(p16, 1));
    _mm_storeu_si128((__m128i *)argmax, p8);
}

#if HEDGE_SIMD_AVX512_KERNELS
/* AVX-512 variant: 16 channels = one zmm; two pooled outputs (8 conv pixels) = 8 accumulators,
 * each tap one weight load and 8 FMAs with broadcast memory operands. Same sums in the same
 * order as convpool_pixel. */
__attribute__((target("avx512f,avx512vl"))) static void convpool_forward_avx512(
    float *out, uint8_t *argmax, const float *in, const float *wk, const float *b, int H, int W, int Cin)
{
    int H2 = H / 2, W2 = W / 2, rs = (W + 4) * Cin, K = 5 * Cin;
    __m512 bias = _mm512_loadu_ps(b), zero = _mm512_setzero_ps();
    for (int py = 0; py < H2; py++)
        for (int px = 0; px < W2; px += 2) {
            const float *src = in + (size_t)(2 * py) * rs + 2 * px * Cin;
            __m512 s[8]; /* conv pixel (dy, dx), dx = 0..3 across the two windows: s[dy*4 + dx] */
            for (int q = 0; q < 8; q++)
                s[q] = _mm512_setzero_ps();
            for (int ky = 0; ky < 5; ky++) {
                const float *p0 = src + ky * rs, *p1 = p0 + Cin, *p2 = p0 + 2 * Cin, *p3 = p0 + 3 * Cin;
                const float *p4 = p0 + rs, *p5 = p4 + Cin, *p6 = p4 + 2 * Cin, *p7 = p4 + 3 * Cin;
                __asm__("" : "+r"(p0), "+r"(p1), "+r"(p2), "+r"(p3), "+r"(p4), "+r"(p5), "+r"(p6), "+r"(p7));
                const float *wr = wk + ky * K * 16;
#pragma GCC unroll 30
                for (int j = 0; j < K; j++) {
                    __m512 w = _mm512_loadu_ps(wr + j * 16);
                    s[0] = _mm512_fmadd_ps(_mm512_set1_ps(p0[j]), w, s[0]);
                    s[1] = _mm512_fmadd_ps(_mm512_set1_ps(p1[j]), w, s[1]);
                    s[2] = _mm512_fmadd_ps(_mm512_set1_ps(p2[j]), w, s[2]);
                    s[3] = _mm512_fmadd_ps(_mm512_set1_ps(p3[j]), w, s[3]);
                    s[4] = _mm512_fmadd_ps(_mm512_set1_ps(p4[j]), w, s[4]);
                    s[5] = _mm512_fmadd_ps(_mm512_set1_ps(p5[j]), w, s[5]);
                    s[6] = _mm512_fmadd_ps(_mm512_set1_ps(p6[j]), w, s[6]);
                    s[7] = _mm512_fmadd_ps(_mm512_set1_ps(p7[j]), w, s[7]);
                }
            }
            for (int h = 0; h < 2 && px + h < W2; h++) {
                /* the window of pooled px+h: pixels (0, 2h), (0, 2h+1), (1, 2h), (1, 2h+1) */
                __m512 a = s[2 * h], bb = s[2 * h + 1], c = s[4 + 2 * h], d = s[5 + 2 * h];
                __mmask16 gab = _mm512_cmp_ps_mask(bb, a, _CMP_GT_OQ), gcd = _mm512_cmp_ps_mask(d, c, _CMP_GT_OQ);
                __m512 m01 = _mm512_max_ps(a, bb), m23 = _mm512_max_ps(c, d);
                __mmask16 low = _mm512_cmp_ps_mask(m23, m01, _CMP_GT_OQ);
                __m512i i01 = _mm512_maskz_mov_epi32(gab, _mm512_set1_epi32(1));
                __m512i i23 = _mm512_mask_mov_epi32(_mm512_set1_epi32(2), gcd, _mm512_set1_epi32(3));
                __m512i idx = _mm512_mask_mov_epi32(i01, low, i23);
                __m512 m = _mm512_max_ps(_mm512_add_ps(_mm512_max_ps(m01, m23), bias), zero);
                size_t o = ((size_t)py * W2 + px + h) * 16;
                _mm512_storeu_ps(out + o, m);
                _mm_storeu_si128((__m128i *)(argmax + o), _mm512_cvtepi32_epi8(idx));
            }
        }
}

#endif

void nn_convpool_forward(float *out, uint8_t *argmax, const float *in, const float *wk,
                         const float *b, int H, int W, int Cin)
{
    const int Cout = NN_CONVPOOL_COUT;
#if HEDGE_SIMD_AVX512_KERNELS
    if (have_avx512()) {
        convpool_forward_avx512(out, argmax, in, wk, b, H, W, Cin);
        return;
    }
#endif
    int H2 = H / 2, W2 = W / 2, rs = (W + 4) * Cin;
    for (int py = 0; py < H2; py++)
        for (int px = 0; px < W2; px++) {
            const float *src = in + (size_t)(2 * py) * rs + 2 * px * Cin;
            size_t o = ((size_t)py * W2 + px) * Cout;
            if (Cin == 6)
                convpool_pixel(out + o, argmax + o, src, wk, b, rs, Cin, 6);
            else
                convpool_pixel(out + o, argmax + o, src, wk, b, rs, Cin, 0);
        }
}

size_t nn_convpool_scratch(int H, int W)
{
    return (size_t)NN_CONVPOOL_COUT * (H / 2) * (W / 2) * (sizeof(int32_t) + sizeof(float));
}

void nn_convpool_backward(float *din, float *dwr, float *db, const float *dout, const float *out,
                          const uint8_t *argmax, const float *in, const float *wr, int H, int W,
                          int Cin, void *scratch)
{
    const int Cout = NN_CONVPOOL_COUT;
    int H2 = H / 2, W2 = W / 2, P = H2 * W2, rs = (W + 4) * Cin;
    /* Per channel, the pooled positions whose ReLU is on, as (offset in `in` of the 5x5 patch
     * under the argmax, gradient). Order: px = phase mod 4, so that consecutive patches never
     * overlap (an overlapping read-modify-write of din would stall on store forwarding).
     * Built branch-free, all 16 channels of a position at once. */
    int32_t *offs = scratch;
    float *gls = (float *)(offs + (size_t)Cout * P);
    int cnt[NN_CONVPOOL_COUT] = {0};
    __m256 gsum[2] = {_mm256_setzero_ps(), _mm256_setzero_ps()};
    const __m256i step_y = _mm256_set1_epi32(rs), step_x = _mm256_set1_epi32(Cin), one = _mm256_set1_epi32(1);
    for (int phase = 0; phase < 4; phase++)
        for (int py = 0; py < H2; py++)
            for (int px = phase; px < W2; px += 4) {
                size_t k = ((size_t)py * W2 + px) * Cout;
                __m256i base = _mm256_set1_epi32(2 * py * rs + 2 * px * Cin);
                int32_t o[16];
                float g[16];
                for (int h = 0; h < 16; h += 8) {
                    __m256 on = _mm256_cmp_ps(_mm256_loadu_ps(out + k + h), _mm256_setzero_ps(), _CMP_GT_OQ);
                    __m256 gv = _mm256_and_ps(on, _mm256_loadu_ps(dout + k + h));
                    _mm256_storeu_ps(g + h, gv);
                    gsum[h / 8] = _mm256_add_ps(gsum[h / 8], gv);
                    __m256i a = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(argmax + k + h)));
                    __m256i dy = _mm256_srli_epi32(a, 1), dx = _mm256_and_si256(a, one);
                    __m256i v = _mm256_add_epi32(base, _mm256_add_epi32(_mm256_mullo_epi32(dy, step_y),
                                                                        _mm256_mullo_epi32(dx, step_x)));
                    _mm256_storeu_si256((__m256i *)(o + h), v);
                }
                for (int co = 0; co < Cout; co++) {
                    offs[co * P + cnt[co]] = o[co];
                    gls[co * P + cnt[co]] = g[co];
                    cnt[co] += g[co] != 0;
                }
            }
    float gs[16];
    _mm256_storeu_ps(gs, gsum[0]);
    _mm256_storeu_ps(gs + 8, gsum[1]);
    for (int co = 0; co < Cout; co++) {
        db[co] += gs[co];
        int n = cnt[co];
        const int32_t *off = offs + (size_t)co * P;
        const float *gl = gls + (size_t)co * P;

        // dwr[co] (5 rows of 32) += g * patch rows; rows 0-2 then rows 3-4 in registers
        float *dw = dwr + co * 5 * NN_DWR_ROW;
        for (int r0 = 0; r0 < 5; r0 += 3) {
            int nr = r0 == 0 ? 3 : 2;
            __m256 acc[12];
#pragma GCC unroll 12
            for (int v = 0; v < 12; v++)
                acc[v] = v < nr * 4 ? _mm256_loadu_ps(dw + r0 * NN_DWR_ROW + v * 8) : _mm256_setzero_ps();
            if (nr == 3)
                for (int k = 0; k < n; k++) {
                    __m256 g = _mm256_broadcast_ss(gl + k);
                    const float *p = in + off[k] + r0 * rs;
#pragma GCC unroll 3
                    for (int r = 0; r < 3; r++)
#pragma GCC unroll 4
                        for (int v = 0; v < 4; v++)
                            acc[r * 4 + v] = _mm256_fmadd_ps(g, _mm256_loadu_ps(p + r * rs + v * 8), acc[r * 4 + v]);
                }
            else
                for (int k = 0; k < n; k++) {
                    __m256 g = _mm256_broadcast_ss(gl + k);
                    const float *p = in + off[k] + r0 * rs;
#pragma GCC unroll 2
                    for (int r = 0; r < 2; r++)
#pragma GCC unroll 4
                        for (int v = 0; v < 4; v++)
                            acc[r * 4 + v] = _mm256_fmadd_ps(g, _mm256_loadu_ps(p + r * rs + v * 8), acc[r * 4 + v]);
                }
#pragma GCC unroll 12
            for (int v = 0; v < 12; v++)
                if (v < nr * 4)
                    _mm256_storeu_ps(dw + r0 * NN_DWR_ROW + v * 8, acc[v]);
        }

        if (!din)
            continue;
        // din patch rows += g * wr[co] rows; the weight rows stay in registers (rows 0-2, 3-4)
        const float *w = wr + co * 5 * NN_WR_ROW;
        for (int r0 = 0; r0 < 5; r0 += 3) {
            int nr = r0 == 0 ? 3 : 2;
            __m256 wv[12];
#pragma GCC unroll 12
            for (int v = 0; v < 12; v++)
                wv[v] = v < nr * 4 ? _mm256_loadu_ps(w + (r0 + v / 4) * NN_WR_ROW + v % 4 * 8) : _mm256_setzero_ps();
            if (nr == 3)
                for (int k = 0; k < n; k++) {
                    __m256 g = _mm256_broadcast_ss(gl + k);
                    float *p = din + off[k] + r0 * rs;
#pragma GCC unroll 3
                    for (int r = 0; r < 3; r++)
#pragma GCC unroll 4
                        for (int v = 0; v < 4; v++) {
                            float *q = p + r * rs + v * 8;
                            _mm256_storeu_ps(q, _mm256_fmadd_ps(g, wv[r * 4 + v], _mm256_loadu_ps(q)));
                        }
                }
            else
                for (int k = 0; k < n; k++) {
                    __m256 g = _mm256_broadcast_ss(gl + k);
                    float *p = din + off[k] + r0 * rs;
#pragma GCC unroll 2
                    for (int r = 0; r < 2; r++)
#pragma GCC unroll 4
                        for (int v = 0; v < 4; v++) {
                            float *q = p + r * rs + v * 8;
                            _mm256_storeu_ps(q, _mm256_fmadd_ps(g, wv[r * 4 + v], _mm256_loadu_ps(q)));
                        }
                }
        }
    }
}

void nn_bn_forward(int n, int w, float *z, float *rm, float *rv, float *istd, int train)
{
    for (int k = 0; k < w; k++) {
        double m = rm[k], v = rv[k];
        if (train && n > 0) {
            double a = 0, q = 0;
            for (int i = 0; i < n; i++)
                a += z[(size_t)i * w + k];
            a /= n;
            for (int i = 0; i < n; i++) {
                double d = z[(size_t)i * w + k] - a;
                q += d * d;
            }
            m = a, v = q / n;
            rm[k] = (float)(NN_BN_KEEP * rm[k] + (1 - NN_BN_KEEP) * m);
            if (n > 1)
                rv[k] = (float)(NN_BN_KEEP * rv[k] + (1 - NN_BN_KEEP) * q / (n - 1));
        }
        double is = 1 / sqrt(v + NN_BN_EPS);
        istd[k] = (float)is;
        for (int i = 0; i < n; i++)
            z[(size_t)i * w + k] = (float)((z[(size_t)i * w + k] - m) * is);
    }
}

void nn_bn_backward(int n, int w, float *dxh, const float *xh, const float *istd, int train)
{
    for (int k = 0; k < w; k++) {
        double g = 0, gx = 0;
        if (train && n > 0) {
            for (int i = 0; i < n; i++) {
                g += dxh[(size_t)i * w + k];
                gx += (double)dxh[(size_t)i * w + k] * xh[(size_t)i * w + k];
            }
            g /= n, gx /= n;
        }
        for (int i = 0; i < n; i++) {
            size_t e = (size_t)i * w + k;
            dxh[e] = (float)(istd[k] * (dxh[e] - (train ? g + xh[e] * gx : 0)));
        }
    }
}
