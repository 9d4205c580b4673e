#!/bin/sh
# `make bench`: every benchmark, one after the other (the machine should be otherwise idle).
set -eu
BUILD=${BUILD:-build}
export BUILD
echo "== data half: mkdigits | occlude | batcher against cat"
sh tests/bench/data.sh
echo "== network: forward and forward+backward against the sgemm probe"
sh tests/bench/nn.sh
echo "== programs: train per head, embed"
sh tests/bench/train.sh
