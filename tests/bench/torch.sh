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
# Interleaved (for each head: hedge then torch, the order reversed every other round) so that the
# machine's other load hits both alike; ratio = hedge's images/s over torch's, the median over the
# rounds of each round's ratio.
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
mkdigits -N 2 -s train | occlude -p 0.2 > "$T/train.hs"
batcher -m pairs -b 128 -n 40 < "$T/train.hs" | tonpz -o "$T/batches.npz"
median() { sort -g | awk '{ v[NR] = $1 } END { print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
MLP=512,256
hedge_rate() { # hedge_rate HEAD
    case $1 in
    point) h="--head point" ;; mog1) h="--head mog -C 1" ;; mog2) h="--head mog -C 2" ;;
    mlp-point) h="--head point --body mlp:$MLP" ;; mlp-mog1) h="--head mog -C 1 --body mlp:$MLP" ;;
    esac
    batcher -m pairs -b 128 < "$T/train.hs" | train -o "$T/$1.ckpt" $h -D 2 -n "$hsteps" -t 2 2> "$T/err" ||
        { cat "$T/err" >&2; exit 1; }
    sed -n 's/.*(\([0-9]*\) images\/s).*/\1/p' "$T/err"
}
torch_rate() { # torch_rate HEAD
    case $1 in
    mlp-*) OMP_NUM_THREADS=2 OMP_WAIT_POLICY=PASSIVE OPENBLAS_NUM_THREADS=2 OPENBLAS_CORETYPE=$core \
        $PY tests/bench/torch_mlp.py "$T/batches.npz" "${1#mlp-}" "$((tsteps * 5))" 2 $MLP | sed -n 's/^images_per_s //p' ;;
    *) OMP_NUM_THREADS=2 OMP_WAIT_POLICY=PASSIVE OPENBLAS_NUM_THREADS=2 OPENBLAS_CORETYPE=$core \
        $PY tests/bench/torch_train.py "$T/batches.npz" "$1" "$tsteps" 2 | sed -n 's/^images_per_s //p' ;;
    esac
}

echo "# hedge train against PyTorch $tversion, same network and loss, 128 pairs per step, D = 2, 2 threads each"
echo "# hedge: train -t 2, $hsteps steps; torch: set_num_threads(2), set_num_interop_threads(1), OMP_WAIT_POLICY=PASSIVE, OpenBLAS 2 threads, OPENBLAS_CORETYPE=$core, $tsteps steps"
echo "# $rounds interleaved rounds; ratio = hedge images/s / torch images/s, median of the rounds; load: $(uptime | sed 's/.*load average: //')"
: > "$T/rates"
r=1
while [ "$r" -le "$rounds" ]; do
    for head in point mog1 mog2 mlp-point mlp-mog1; do
        if [ $((r % 2)) = 1 ]; then
            h=$(hedge_rate $head)
            t=$(torch_rate $head)
        else
            t=$(torch_rate $head)
            h=$(hedge_rate $head)
        fi
        echo "$head $h $t" >> "$T/rates"
        echo "# round $r, $head: hedge $h images/s, torch $t images/s; load $(uptime | sed 's/.*load average: //')" >&2
    done
    r=$((r + 1))
done
for head in point mog1 mog2 mlp-point mlp-mog1; do
    hm=$(awk -v w=$head '$1 == w { print $2 }' "$T/rates" | median)
    tm=$(awk -v w=$head '$1 == w { print $3 }' "$T/rates" | median)
    ratio=$(awk -v w=$head '$1 == w { printf "%.4f\n", $2 / $3 }' "$T/rates" | median)
    awk -v w=$head -v h="$hm" -v t="$tm" -v r="$ratio" 'BEGIN {
        printf "torch_train_%s ratio %.1f (hedge %.0f images/s, torch %.0f images/s: medians)\n", w, r, h, t }'
done
echo "# load after: $(uptime | sed 's/.*load average: //')"
