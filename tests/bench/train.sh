#!/bin/sh
# train.sh: training and embedding speed of the real programs, with the sgemm probe, in one run
# (a benchmark, not part of `make test`). For each head (point, MoG-1, MoG-2; N = 2, D = 2,
# batches of 128 pairs = 256 images, K = 8): `batcher | train -t 2` images per second; then
# `embed` images per second over the 100,000 training images (1 and 2 threads); the episode
# losses (PN: proto, point head; SPE: spe, one Gaussian) on `batcher -m episodes` of the SPE
# paper's 2-digit shape (all 70 classes x 50 support + 5 queries = 3,850 images per step, STEPS
# / 20 steps, about as many images as the pair runs) with 2 threads; the P x K losses (triplet,
# hetriplet, fstat: `batcher -m pk -P 16 -K 8`, 128 images per step, STEPS x 2 steps; cesoftmax,
# its query tower included, on 64 x 2) with 2 threads; then the OpenBLAS sgemm
# probe's GFLOPS; then the ratios. The network costs about 8 MFLOP per 2-digit image for forward + backward and 2.7 for
# forward, so effective GFLOPS = images/s x MFLOP / 1000.
#   BUILD=build sh tests/bench/train.sh [STEPS]
set -eu
BUILD=${BUILD:-build}
BIN=$(cd "$BUILD/bin" && pwd)
PATH="$BIN:$PATH"
steps=${1:-600}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. tests/bench/lib.sh
bench_probe "$T"
bench_mnist
mkdigits -N 2 -s train | occlude -p 0.2 > "$T/train.hs"
mkdigits -N 2 -s test-seen > "$T/test.hs"
now() { date +%s.%N; }
rate() { awk -v n="$1" -v a="$2" -v b="$3" 'BEGIN { printf "%.0f", n / (b - a) }'; }
echo "# hedge training and embedding speed ($(nproc) cores, $steps steps per head)"
for head in point mog1 mog2; do
    case $head in point) h="--head point" ;; mog1) h="--head mog -C 1" ;; mog2) h="--head mog -C 2" ;; esac
    # the rate train reports covers its steps only (not start-up or reading the data)
    batcher -m pairs -b 128 < "$T/train.hs" | train -o "$T/$head.ckpt" $h -D 2 -n "$steps" -t 2 2> "$T/$head.err"
    r=$(sed -n 's/.*(\([0-9]*\) images\/s).*/\1/p' "$T/$head.err")
    echo "train_$head images_per_s $r"
    eval "train_$head=$r"
done
for loss in proto spe; do
    case $loss in proto) h="--head point" ;; spe) h="--head mog -C 1" ;; esac
    batcher -m episodes -s 50 -q 5 < "$T/train.hs" |
        train -o "$T/$loss.ckpt" $h --loss $loss -D 2 -n $((steps / 20 > 0 ? steps / 20 : 1)) -t 2 2> "$T/$loss.err"
    r=$(sed -n 's/.*(\([0-9]*\) images\/s).*/\1/p' "$T/$loss.err")
    echo "train_episodes_$loss images_per_s $r"
    eval "train_episodes_$loss=$r"
done
for loss in triplet hetriplet fstat; do
    batcher -m pk -P 16 -K 8 < "$T/train.hs" |
        train -o "$T/$loss.ckpt" --loss $loss -D 8 -n $((steps * 2)) -t 2 2> "$T/$loss.err"
    r=$(sed -n 's/.*(\([0-9]*\) images\/s).*/\1/p' "$T/$loss.err")
    echo "train_pk_$loss images_per_s $r"
    eval "train_pk_$loss=$r"
done
# the two-tower Cross-Example Softmax (64 x 2 pairs of a class string and an image, D = 16)
batcher -m pk -P 64 -K 2 < "$T/train.hs" |
    train -o "$T/ce.ckpt" --loss cesoftmax -D 16 -n $((steps * 2)) -t 2 2> "$T/ce.err"
train_pk_cesoftmax=$(sed -n 's/.*(\([0-9]*\) images\/s).*/\1/p' "$T/ce.err")
echo "train_pk_cesoftmax images_per_s $train_pk_cesoftmax"
for t in 1 2; do
    a=$(now); embed -m "$T/mog2.ckpt" -t $t < "$T/train.hs" > /dev/null; b=$(now)
    n=$(tshow -q "$T/train.hs" | tail -n 1 | sed 's/# \([0-9]*\) records.*/\1/')
    r=$(rate "$n" "$a" "$b")
    echo "embed_mog2_t$t images_per_s $r (whole program: start-up, reading and writing included)"
    eval "embed_t$t=$r"
done
# retrieval over the 2-digit test set (9,940 x 9,940 leave-one-out), one thread, whole program
embed -m "$T/triplet.ckpt" < "$T/test.hs" > "$T/emb.hs"
a=$(now); retrieve -t 1 "$T/emb.hs" > /dev/null; b=$(now)
retrieve_s=$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f", b - a }')
echo "retrieve_9940x9940_t1 seconds $retrieve_s (target: 10,000 x 10,000 under 2 s: $(awk -v s="$retrieve_s" 'BEGIN { print (s < 2 ? "met" : "NOT met") }'))"
"$T/probe" > "$T/probe.txt"
cat "$T/probe.txt" | sed 's/^/sgemm_/'
g2=$(sed -n 's/gflops2 //p' "$T/probe.txt")
echo "# ratios: effective GFLOPS (8 MFLOP/image train, 2.7 embed) / sgemm probe with 2 threads ($g2 GFLOPS)"
for head in point mog1 mog2 episodes_proto episodes_spe pk_triplet pk_hetriplet pk_fstat pk_cesoftmax; do
    eval "r=\$train_$head"
    awk -v r="$r" -v g="$g2" -v h="$head" 'BEGIN { printf "train_%s %.1f GFLOPS = %.2f of the probe; target 15000 images/s: %s\n", h, r * 8e-3, r * 8e-3 / g, (r >= 15000 ? "met" : "NOT met") }'
done
awk -v r="$embed_t2" -v g="$g2" 'BEGIN { printf "embed (2 threads) %.1f GFLOPS = %.2f of the probe; target 50000 images/s: %s\n", r * 2.7e-3, r * 2.7e-3 / g, (r >= 50000 ? "met" : "NOT met") }'
