#!/bin/sh
# hib-data.sh N OUTDIR: the N-digit data of one experiment, made once:
#   OUTDIR/train.hs         training composites, each digit occluded with p = 0.2
#   OUTDIR/test.hs          seen-class test composites (the paper's test set)
#   OUTDIR/test-clean.hs    twin of test.hs, never occluded
#   OUTDIR/test-corrupt.hs  twin of test.hs, every digit occluded
#   OUTDIR/unseen-clean.hs, unseen-corrupt.hs   the unseen-class twins
#   with HOLDOUT=K (default 0: none), train.hs leaves the last K MNIST training digits out and
#   OUTDIR/val-clean.hs, val-corrupt.hs are validation twins made of them (seen classes), for
#   choosing a recipe without the test set (mkdigits --holdout)
# Environment: MKDIGITS_ARGS (e.g. "--mnist /usr/share/datasets/fashion-mnist"), SEED, HOLDOUT.
set -eu
. "$(dirname "$0")/common.sh"
N=$1 out=$2 seed=${SEED:-714}
mkdir -p "$out"
hold=""
[ "${HOLDOUT:-0}" != 0 ] && hold="--holdout $HOLDOUT"
make_file "$out/train.hs" sh -c "mkdigits -N $N -s train -S $seed $hold ${MKDIGITS_ARGS:-} | occlude -p 0.2 -S $seed"
if [ -n "$hold" ]; then
    make_file "$out/val.hs" mkdigits -N "$N" -s val -S "$seed" $hold ${MKDIGITS_ARGS:-}
    make_file "$out/val-clean.hs" occlude -p 0 -S "$seed" < "$out/val.hs"
    make_file "$out/val-corrupt.hs" occlude -p 1 -S "$seed" < "$out/val.hs"
fi
make_file "$out/test.hs" mkdigits -N "$N" -s test-seen -S "$seed" ${MKDIGITS_ARGS:-}
make_file "$out/test-clean.hs" occlude -p 0 -S "$seed" < "$out/test.hs"
make_file "$out/test-corrupt.hs" occlude -p 1 -S "$seed" < "$out/test.hs"
make_file "$out/unseen.hs" mkdigits -N "$N" -s test-unseen -S "$seed" ${MKDIGITS_ARGS:-}
make_file "$out/unseen-clean.hs" occlude -p 0 -S "$seed" < "$out/unseen.hs"
make_file "$out/unseen-corrupt.hs" occlude -p 1 -S "$seed" < "$out/unseen.hs"
