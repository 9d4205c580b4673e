#!/bin/sh
# hib-data.sh N OUTDIR: the N-digit data of one experiment, made once:
#   OUTDIR/train.hs         training composites, each digit occluded with p = 0.2
#   OUTDIR/test.hs          seen-class test composites (the paper's test set)
#   OUTDIR/test-clean.hs    twin of test.hs, never occluded
#   OUTDIR/test-corrupt.hs  twin of test.hs, every digit occluded
#   OUTDIR/unseen-clean.hs, unseen-corrupt.hs   the unseen-class twins
# Environment: MKDIGITS_ARGS (e.g. "--mnist /usr/share/datasets/fashion-mnist"), SEED.
set -eu
. "$(dirname "$0")/common.sh"
N=$1 out=$2 seed=${SEED:-714}
mkdir -p "$out"
make_file "$out/train.hs" sh -c "mkdigits -N $N -s train -S $seed ${MKDIGITS_ARGS:-} | occlude -p 0.2 -S $seed"
make_file "$out/test.hs" mkdigits -N "$N" -s test-seen -S "$seed" ${MKDIGITS_ARGS:-}
make_file "$out/test-clean.hs" occlude -p 0 -S "$seed" < "$out/test.hs"
make_file "$out/test-corrupt.hs" occlude -p 1 -S "$seed" < "$out/test.hs"
make_file "$out/unseen.hs" mkdigits -N "$N" -s test-unseen -S "$seed" ${MKDIGITS_ARGS:-}
make_file "$out/unseen-clean.hs" occlude -p 0 -S "$seed" < "$out/unseen.hs"
make_file "$out/unseen-corrupt.hs" occlude -p 1 -S "$seed" < "$out/unseen.hs"
