/* nn: the layers of the embedding network as forward/backward pairs (llm.c style).
 *
 * Two families live here.
 *
 * 1. Reference layers, any sizes, NCHW float tensors, batch B. Plain and general; the tests use
 *    them as the reference for the fused kernels and for finite-difference checks.
 *      nn_conv_forward / nn_conv_backward   5x5 convolution, padding 2, stride 1 (im2col + sgemm)
 *      nn_relu_forward / nn_relu_backward
 *      nn_maxpool_forward / nn_maxpool_backward   2x2, stride 2 (H, W even)
 *      nn_fc_forward / nn_fc_backward       out = in w^T + b, w is (OUT, IN)
 *
 * 2. Fused kernels used by model.c, one image at a time: conv 5x5 + bias + ReLU + 2x2 max pool
 *    in one pass (the full-resolution conv output never reaches memory), AVX2/FMA; the two
 *    forward kernels also have AVX-512 variants, chosen at run time, that give the same bytes
 *    (HEDGE_NO_AVX512=1 forces AVX2). Their backward passes use that after pooling only one
 *    input of each 2x2 window gets a gradient: they scatter from the pooled positions (4x fewer
 *    multiply-adds than a dense backward) and skip positions whose ReLU is off. Layouts
 *    (row-major, "padded" = 2 zero rows/columns on each side, which the caller keeps zero):
 *      planes  the first layer's input, each channel as 5 padded planes,
 *              (Cin, 5, H+4, nn_plane_stride(W)): plane kx is the padded channel shifted left by
 *              kx columns, so that every vector load of the convolution is aligned (unaligned
 *              loads crossing cache lines made that loop ~1.5x slower); 64-byte aligned;
 *              nn_planes_fill writes it from channel-major bytes (Cin, H, W)
 *      nhwc    (H+4, W+4, C) padded, or (H, W, C) unpadded where said
 *      argmax  (H/2, W/2, C) bytes: which input of the 2x2 window won, dy*2 + dx
 *
 * Max-pool ties: the first maximum in the order (0,0), (0,1), (1,0), (1,1) wins and alone gets
 * the gradient (all layers here agree). ReLU'(0) = 0. ReLU then max pool equals max pool then
 * ReLU, and the fused kernels do the latter; the gradient reaches the window's argmax only when
 * the pooled output is > 0.
 *
 * Gradients ACCUMULATE (+=) into din, dw, db everywhere: the caller zeroes them. din may be NULL
 * where said (the first layer). Nothing here allocates except the reference conv (its im2col
 * buffer, freed before returning). All results are deterministic: fixed summation orders.
 *
 *   nn_conv_forward(out, in, w, b, B, Cin, H, W, Cout);       // in (B,Cin,H,W) -> out (B,Cout,H,W)
 *   nn_conv_backward(din, dw, db, dout, in, w, B, Cin, H, W, Cout);
 */
#ifndef HEDGE_NN_H
#define HEDGE_NN_H
#include <stddef.h>
#include <stdint.h>

/* ---- reference layers (NCHW) ---- */

/* in (B,Cin,H,W), w (Cout,Cin,5,5), b (Cout) -> out (B,Cout,H,W) */
void nn_conv_forward(float *out, const float *in, const float *w, const float *b, int B, int Cin,
                     int H, int W, int Cout);
/* dout (B,Cout,H,W); += into din (B,Cin,H,W) (may be NULL), dw (Cout,Cin,5,5), db (Cout) */
void nn_conv_backward(float *din, float *dw, float *db, const float *dout, const float *in,
                      const float *w, int B, int Cin, int H, int W, int Cout);
/* n elements */
void nn_relu_forward(float *out, const float *in, size_t n);
/* din += dout where in > 0 */
void nn_relu_backward(float *din, const float *dout, const float *in, size_t n);
/* in (B,C,H,W) -> out (B,C,H/2,W/2) */
void nn_maxpool_forward(float *out, const float *in, int B, int C, int H, int W);
/* din (B,C,H,W) += dout at each window's argmax (recomputed from in, ties as above) */
void nn_maxpool_backward(float *din, const float *dout, const float *in, int B, int C, int H, int W);
/* in (B,IN), w (OUT,IN), b (OUT) -> out (B,OUT) */
void nn_fc_forward(float *out, const float *in, const float *w, const float *b, int B, int IN, int OUT);
/* dout (B,OUT); += into din (B,IN) (may be NULL), dw (OUT,IN), db (OUT) */
void nn_fc_backward(float *din, float *dw, float *db, const float *dout, const float *in,
                    const float *w, int B, int IN, int OUT);

/* ---- fused conv + ReLU + max pool, one image (H, W even) ---- */

/* row stride in floats of a padded input plane for width W (room for whole-vector reads) */
int nn_plane_stride(int W);
/* floats of the planes of Cin channels */
size_t nn_planes_size(int Cin, int H, int W);
/* the image's pixels, img (Cin, H, W) bytes, times scale, into the first nplanes planes of
 * each channel (5, or 1 for the backward, which reads plane 0 only); writes only the pixels'
 * places, so the borders of a buffer zeroed once stay zero */
void nn_planes_fill(float *planes, const uint8_t *img, int Cin, int H, int W, float scale, int nplanes);
/* The first layer: 1 <= Cin <= NN_CONVPOOL1_MAXCIN input channels, any Cout. The one-channel
 * case (N-digit MNIST) has code of its own, compiled without the channel loop.
 * in: planes (Cin, 5, H+4, nn_plane_stride(W)); w (Cout,Cin,5,5); b (Cout)
 * -> out: nhwc padded (H/2+4, W/2+4, Cout), interior only written; argmax (H/2, W/2, Cout) */
#define NN_CONVPOOL1_MAXCIN 16
void nn_convpool1_forward(float *out, uint8_t *argmax, const float *in, const float *w,
                          const float *b, int Cin, int H, int W, int Cout);
/* dout: gradient of out, same padded layout (interior read); out, argmax, in from the forward.
 * += into dw (Cout,Cin,5,5), db (Cout). No input gradient (the input is data). */
void nn_convpool1_backward(float *dw, float *db, const float *dout, const float *out,
                           const uint8_t *argmax, const float *in, int Cin, int H, int W, int Cout);

/* Multi-channel NHWC layer, Cout = NN_CONVPOOL_COUT, 1 <= Cin <= NN_CONVPOOL_MAXCIN.
 * Its weights are repacked once per step from the (Cout,Cin,5,5) parameters:
 *   wk  (5, 5, Cin, Cout)     for the forward, NN_WK_SIZE floats
 *   wr  (Cout, 5, 32)         for the backward: rows (kx, ci) padded with zeros to 32
 * and its weight gradient is accumulated as
 *   dwr (Cout, 5, 32)         rows (kx, ci), lanes past 5*Cin junk */
#define NN_CONVPOOL_COUT 16
#define NN_CONVPOOL_MAXCIN 6
#define NN_WK_SIZE(Cin) (25 * (Cin) * NN_CONVPOOL_COUT)
#define NN_WR_ROW 32
#define NN_WR_SIZE (NN_CONVPOOL_COUT * 5 * NN_WR_ROW)
#define NN_DWR_ROW 32
#define NN_DWR_SIZE (NN_CONVPOOL_COUT * 5 * NN_DWR_ROW)
void nn_convpool_pack(float *wk, float *wr, const float *w, int Cin);
/* in: nhwc padded (H+4, W+4, Cin) -> out: nhwc unpadded (H/2, W/2, 16); argmax (H/2, W/2, 16) */
void nn_convpool_forward(float *out, uint8_t *argmax, const float *in, const float *wk,
                         const float *b, int H, int W, int Cin);
/* dout (H/2, W/2, 16). in (the forward input) must have NN_DIN_SLACK readable floats after it.
 * += into din: nhwc padded (H+4, W+4, Cin) plus NN_DIN_SLACK floats of
 * scratch after it (may be NULL); its border receives junk, only the interior is the gradient.
 * += into dwr (16, 5, 32) (unpack with nn_convpool_unpack_add), db (16).
 * scratch: nn_convpool_scratch(H, W) bytes. */
#define NN_DIN_SLACK 32
size_t nn_convpool_scratch(int H, int W);
void nn_convpool_backward(float *din, float *dwr, float *db, const float *dout, const float *out,
                          const uint8_t *argmax, const float *in, const float *wr, int H, int W,
                          int Cin, void *scratch);
/* dw (16,Cin,5,5) += dwr (16,5,32) */
void nn_convpool_unpack_add(float *dw, const float *dwr, int Cin);

/* which forward kernels run: "avx512" or "avx2" (recorded in checkpoints; the bytes are the
 * same either way) */
const char *nn_code_path(void);

/* Batch normalisation (Ioffe & Szegedy 2015) of z (n, w), column by column, in place: z becomes
 * xh = (z - m) istd, istd = 1 / sqrt(v + eps), written to istd (w). train: m and v are the batch's
 * mean and (biased) variance, in double in row order, and the running averages move towards them,
 * rm = keep rm + (1 - keep) m, rv = keep rv + (1 - keep) v n / (n - 1) (the unbiased variance, as
 * PyTorch and TensorFlow's fused batch norm keep it; n = 1 leaves rv); else m = rm, v = rv. The
 * learned scale and shift are the caller's. */
#define NN_BN_EPS 1e-3   /* the PFE authors' (TensorFlow slim's default) */
#define NN_BN_KEEP 0.995 /* their decay: PyTorch's momentum 0.005 */
void nn_bn_forward(int n, int w, float *z, float *rm, float *rv, float *istd, int train);
/* dL/dxh (n, w) -> dL/dz in place, xh and istd as the forward left them: train, through the
 * batch's statistics, dz = istd (dxh - mean(dxh) - xh mean(dxh xh)); else dz = istd dxh */
void nn_bn_backward(int n, int w, float *dxh, const float *xh, const float *istd, int train);

#endif
