#!/bin/sh
# hib-data.sh N OUTDIR: the N-digit data of one experiment, made once:
#   OUTDIR/train.hs         training composites: TRAIN_OCCLUSION per-use (the default) leaves them
#                           clean (the runners occlude them afresh at every use, batcher | occlude
#                           | train: pipelines/common.sh train_batches); fixed occludes each digit
#                           with p = 0.2 once, here
#   OUTDIR/test.hs          seen-class test composites (the paper's test set)
#   OUTDIR/test-clean.hs    twin of test.hs, never occluded
#   OUTDIR/test-corrupt.hs  twin of test.hs, every digit occluded
#   OUTDIR/unseen-clean.hs, unseen-corrupt.hs   the unseen-class twins
#   with HOLDOUT=K (default 0: none), train.hs leaves the last K MNIST training digits out and
#   OUTDIR/val-clean.hs, val-corrupt.hs are validation twins made of them (seen classes), for
#   choosing a recipe without the test set (mkdigits --holdout)
# Environment: DATASET (mnist, the default: the official MNIST; fashion: Fashion-MNIST from the
# Debian package dataset-fashion-mnist, installed on first use as the other packages are: N-item
# composites, "digit" meaning item class 0-9), MKDIGITS_ARGS (more mkdigits options), SEED, HOLDOUT.
# OUTDIR/dataset records which data set the directory holds; asking it for another is an error.
# Occlusion: OCCLUDE_SHAPE (rect, the default, or square) for every occluded file, and
# TRAIN_OCCLUSION (per-use or fixed) (pipelines/common.sh); OUTDIR/occlusion records both
# ("shape=rect train=per-use") and asking the folder for another is an error too.
set -eu
. "$(dirname "$0")/common.sh"
N=$1 out=$2 seed=${SEED:-714} dataset=${DATASET:-mnist}
case $dataset in
mnist) ;;
fashion)
    sh "$HEDGE_ROOT/pipelines/setup-deps.sh" fashion || exit 1
    MKDIGITS_ARGS="--mnist /usr/share/datasets/fashion-mnist --dataset-name fashion-mnist ${MKDIGITS_ARGS:-}" ;;
*) say "hib-data: unknown data set '$dataset' (mnist or fashion)"; exit 2 ;;
esac
occlusion_valid || exit 2
mkdir -p "$out"
occlusion_check "$out" || exit 1
if [ -s "$out/dataset" ]; then
    [ "$(cat "$out/dataset")" = "$dataset" ] ||
        { say "hib-data: $out holds $(cat "$out/dataset") data, not $dataset: give another OUT"; exit 1; }
elif [ -s "$out/train.hs" ] && [ "$dataset" != mnist ]; then
    say "hib-data: $out holds data made before data sets were recorded (mnist), not $dataset: give another OUT"; exit 1
else
    echo "$dataset" > "$out/dataset"
fi
hold=""
[ "${HOLDOUT:-0}" != 0 ] && hold="--holdout $HOLDOUT"
shape="--shape $OCCLUDE_SHAPE"
if [ "$TRAIN_OCCLUSION" = fixed ]; then
    make_file "$out/train.hs" sh -c "mkdigits -N $N -s train -S $seed $hold ${MKDIGITS_ARGS:-} | occlude -p 0.2 $shape -S $seed"
else
    make_file "$out/train.hs" mkdigits -N "$N" -s train -S "$seed" $hold ${MKDIGITS_ARGS:-}
fi
if [ -n "$hold" ]; then
    make_file "$out/val.hs" mkdigits -N "$N" -s val -S "$seed" $hold ${MKDIGITS_ARGS:-}
    make_file "$out/val-clean.hs" occlude -p 0 $shape -S "$seed" < "$out/val.hs"
    make_file "$out/val-corrupt.hs" occlude -p 1 $shape -S "$seed" < "$out/val.hs"
fi
make_file "$out/test.hs" mkdigits -N "$N" -s test-seen -S "$seed" ${MKDIGITS_ARGS:-}
make_file "$out/test-clean.hs" occlude -p 0 $shape -S "$seed" < "$out/test.hs"
make_file "$out/test-corrupt.hs" occlude -p 1 $shape -S "$seed" < "$out/test.hs"
make_file "$out/unseen.hs" mkdigits -N "$N" -s test-unseen -S "$seed" ${MKDIGITS_ARGS:-}
make_file "$out/unseen-clean.hs" occlude -p 0 $shape -S "$seed" < "$out/unseen.hs"
make_file "$out/unseen-corrupt.hs" occlude -p 1 $shape -S "$seed" < "$out/unseen.hs"
