#!/bin/sh
# torch.sh: `train` against the same network and losses in PyTorch (Debian python3-torch 1.13,
# tests/bench/torch_train.py), images per second side by side, in one run (a benchmark, not part
# of `make test`).
#
#   BUILD=build sh tests/bench/torch.sh [ROUNDS [HEDGE_STEPS [TORCH_STEPS]]]   (defaults 3, 300, 20)
#
# Data: 2-digit MNIST composites (mkdigits -N 2 -s train | occlude -p 0.2), batches of 128 pairs
# (256 images of 28 x 56) from batcher -m pairs -b 128; heads point (softcon), MoG-1 and MoG-2
# (VIB, K = 8), D = 2: train.sh's set-up.
#   hedge  batcher -m pairs -b 128 | train -t 2 ...: the rate train reports (its steps, the data
#          made by batcher on the same cores meanwhile)
#   torch  torch_train.py on 40 of the same batches, already in memory, cycled: the rate over
#          TORCH_STEPS steps after 5 warm-up steps; torch.set_num_threads(2) (OMP_NUM_THREADS=2),
#          set_num_interop_threads(1); its fc layers' sgemm in OpenBLAS with
#          OPENBLAS_NUM_THREADS=2 and OPENBLAS_CORETYPE = the kernel hedge runs (`probe core`);
#          OMP_WAIT_POLICY=PASSIVE: on a loaded machine OpenMP threads spinning at the barriers
#          of every operator lose their time slices (load 12 on 2 cores: 146 to 190 images/s
#          spinning, 1,141 passive, 570 on one thread)
# Then the mlp body (train --body mlp:512,256, tests/bench/torch_mlp.py) on the same batches, each
# image's 1,568 pixels / 255 as its feature vector, heads point and MoG-1, the same way.
# Then the issue's two heads on features (issue 35), on random N(0, 1) feature vectors of 100
# classes (numpy; fromnpz -k features), 256 pairs per batch (batcher -m pairs -b 256 | train -t 2,
# against torch_mlp.py on 40 of the same batches), heads point and MoG-1:
#   feat-wide    512 features, --body mlp:512, D = 128 (512 -> 512 -> 128, MoG-1 -> 256 outputs):
#                the matrix products dominate. Also its GFLOP/s as a fraction of the sgemm probe
#                on 2 threads (tests/bench/probe.c, 2048^3), the probe run beside it in each round:
#                the matrix products of a step per item, 2 (F W + W HO) forward, 2 (F W + W HO)
#                for the weight gradients, 2 W HO for the gradient of the hidden layer (none for
#                the input's: nothing reads it), so 1.44 Mflop (point), 1.84 (MoG-1); train's
#                images/s is the whole program's (batcher on the same cores, the loss, Adam)
#   feat-small   64 features, --body mlp:64, D = 8 (64 -> 64 -> 8): per-step overhead dominates;
#                10 times the steps of the others on both sides
# Interleaved (for each head: hedge then torch, the order reversed every other round) so that the
# machine's other load hits both alike; ratio = hedge's images/s over torch's, the median over the
# rounds of each round's ratio. ROWS="feat-wide-point ..." runs only those rows.
set -eu
BUILD=${BUILD:-build}
BIN=$(cd "$BUILD/bin" && pwd)
PATH="$BIN:$PATH"
PY=${PY:-/usr/bin/python3} # Debian's, where python3-faiss and python3-torch install
rounds=${1:-3} hsteps=${2:-300} tsteps=${3:-20}
. tests/bench/lib.sh
bench_peer torch torch python3-torch
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
bench_probe "$T"
core=$(bench_core "$T")
tversion=$($PY -c 'import torch; print(torch.__version__)')
ALL="point mog1 mog2 mlp-point mlp-mog1 feat-wide-point feat-wide-mog1 feat-small-point feat-small-mog1"
ROWS=${ROWS:-$ALL}
bench_mnist
mkdigits -N 2 -s train | occlude -p 0.2 > "$T/train.hs"
batcher -m pairs -b 128 -n 40 < "$T/train.hs" | tonpz -o "$T/batches.npz"
$PY - "$T" <<'EOF'
import sys
import numpy as np
r = np.random.default_rng(714)
for name, F in (("wide", 512), ("small", 64)):
    np.savez("%s/feat-%s.npz" % (sys.argv[1], name), features=r.standard_normal((20000, F)).astype(np.float32),
             labels=r.integers(0, 100, 20000).astype(np.int16))
EOF
for size in wide small; do
    fromnpz -k features --class labels "$T/feat-$size.npz" > "$T/feat-$size.hs"
    batcher -m pairs -b 256 -n 40 < "$T/feat-$size.hs" | tonpz -o "$T/batches-$size.npz"
done
median() { sort -g | awk '{ v[NR] = $1 } END { print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
MLP=512,256
# feat_shape ROW: the features file, width, D and steps factor of a feat-* row
feat_shape() {
    case $1 in
    feat-wide-*) echo "wide 512 128 1" ;;
    feat-small-*) echo "small 64 8 10" ;;
    esac
}
hedge_rate() { # hedge_rate HEAD
    case $1 in
    point) h="--head point" ;; mog1) h="--head mog -C 1" ;; mog2) h="--head mog -C 2" ;;
    mlp-point) h="--head point --body mlp:$MLP" ;; mlp-mog1) h="--head mog -C 1 --body mlp:$MLP" ;;
    *-point) h="--head point" ;; *-mog1) h="--head mog -C 1" ;;
    esac
    case $1 in
    feat-*)
        set -- $1 $(feat_shape $1)
        batcher -m pairs -b 256 < "$T/feat-$2.hs" |
            train -o "$T/$1.ckpt" $h --body mlp:$3 -D $4 -n "$((hsteps * $5))" -t 2 2> "$T/err" ||
            { cat "$T/err" >&2; exit 1; } ;;
    *)
        batcher -m pairs -b 128 < "$T/train.hs" | train -o "$T/$1.ckpt" $h -D 2 -n "$hsteps" -t 2 2> "$T/err" ||
            { cat "$T/err" >&2; exit 1; } ;;
    esac
    sed -n 's/.*(\([0-9]*\) images\/s).*/\1/p' "$T/err"
}
torch_rate() { # torch_rate HEAD
    case $1 in
    feat-*) set -- $1 $(feat_shape $1)
        OMP_NUM_THREADS=2 OMP_WAIT_POLICY=PASSIVE OPENBLAS_NUM_THREADS=2 OPENBLAS_CORETYPE=$core \
        $PY tests/bench/torch_mlp.py "$T/batches-$2.npz" "${1##*-}" "$((tsteps * 5 * $5))" 2 $3 256 $4 |
            sed -n 's/^images_per_s //p' ;;
    mlp-*) OMP_NUM_THREADS=2 OMP_WAIT_POLICY=PASSIVE OPENBLAS_NUM_THREADS=2 OPENBLAS_CORETYPE=$core \
        $PY tests/bench/torch_mlp.py "$T/batches.npz" "${1#mlp-}" "$((tsteps * 5))" 2 $MLP | sed -n 's/^images_per_s //p' ;;
    *) OMP_NUM_THREADS=2 OMP_WAIT_POLICY=PASSIVE OPENBLAS_NUM_THREADS=2 OPENBLAS_CORETYPE=$core \
        $PY tests/bench/torch_train.py "$T/batches.npz" "$1" "$tsteps" 2 | sed -n 's/^images_per_s //p' ;;
    esac
}
# flops ROW: the matrix products of a training step per item (the feat-wide rows), as above
flops() {
    case $1 in
    feat-wide-point) echo $((2 * (2 * 512 * 512 + 3 * 512 * 128))) ;;
    feat-wide-mog1) echo $((2 * (2 * 512 * 512 + 3 * 512 * 256))) ;;
    esac
}

echo "# hedge train against PyTorch $tversion, same network and loss, 128 pairs per step, D = 2, 2 threads each"
echo "# hedge: train -t 2, $hsteps steps; torch: set_num_threads(2), set_num_interop_threads(1), OMP_WAIT_POLICY=PASSIVE, OpenBLAS 2 threads, OPENBLAS_CORETYPE=$core, $tsteps steps"
echo "# feat-* rows: 256 pairs per step, random features; feat-wide 512 -> 512 -> 128 (D = 128), feat-small 64 -> 64 -> 8 (D = 8)"
echo "# $rounds interleaved rounds; ratio = hedge images/s / torch images/s, median of the rounds; load: $(uptime | sed 's/.*load average: //')"
: > "$T/rates"
r=1
while [ "$r" -le "$rounds" ]; do
    for head in $ROWS; do
        p=0 # the probe's GFLOP/s on 2 threads, beside the wide rows
        case $head in feat-wide-*) p=$("$T/probe" | sed -n 's/^gflops2 //p') ;; esac
        if [ $((r % 2)) = 1 ]; then
            h=$(hedge_rate $head)
            t=$(torch_rate $head)
        else
            t=$(torch_rate $head)
            h=$(hedge_rate $head)
        fi
        echo "$head $h $t $p" >> "$T/rates"
        probe=
        [ "$p" = 0 ] || probe=", probe $p GFLOP/s"
        echo "# round $r, $head: hedge $h images/s, torch $t images/s$probe; load $(uptime | sed 's/.*load average: //')" >&2
    done
    r=$((r + 1))
done
for head in $ROWS; do
    hm=$(awk -v w=$head '$1 == w { print $2 }' "$T/rates" | median)
    tm=$(awk -v w=$head '$1 == w { print $3 }' "$T/rates" | median)
    ratio=$(awk -v w=$head '$1 == w { printf "%.4f\n", $2 / $3 }' "$T/rates" | median)
    awk -v w=$head -v h="$hm" -v t="$tm" -v r="$ratio" 'BEGIN {
        printf "torch_train_%s ratio %.2f (hedge %.0f images/s, torch %.0f images/s: medians)\n", w, r, h, t }'
    case $head in
    feat-wide-*)
        f=$(flops $head)
        pm=$(awk -v w=$head '$1 == w { print $4 }' "$T/rates" | median)
        share=$(awk -v w=$head -v f="$f" '$1 == w { printf "%.4f\n", $2 * f / 1e9 / $4 }' "$T/rates" | median)
        awk -v w=$head -v h="$hm" -v f="$f" -v p="$pm" -v s="$share" 'BEGIN {
            printf "train_%s probe %.2f (%.1f GFLOP/s, %.2f Mflop an item, against the probe at %.1f on 2 threads: medians)\n",
                w, s, h * f / 1e9, f / 1e6, p }' ;;
    esac
done
echo "# load after: $(uptime | sed 's/.*load average: //')"
