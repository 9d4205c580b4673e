#!/bin/sh
# nn.sh: throughput of the network (embed = forward, train = forward + backward + Adam) against
# an OpenBLAS sgemm probe, 1 and 2 threads, point / MoG-1 / MoG-2 heads (a benchmark, not part
# of `make test`). Builds tests/bench/nn.c against $BUILD/libhedge.a into $BUILD/bench/nn.
#
#   BUILD=build sh tests/bench/nn.sh [-r REPS] [-b BATCH] [-N DIGITS] [-t MAXTHREADS]
set -eu
BUILD=${BUILD:-build}
[ -f "$BUILD/libhedge.a" ] || { echo "nn.sh: $BUILD/libhedge.a is not built (make BUILD=$BUILD)" >&2; exit 1; }
mkdir -p "$BUILD/bench"
${CC:-cc} -O2 -march=x86-64-v3 -g -std=c11 -D_GNU_SOURCE -Wall -Wextra -Ilib -o "$BUILD/bench/nn" \
    tests/bench/nn.c "$BUILD/libhedge.a" ${LDLIBS:-$(pkg-config --libs openblas) -lmsgpackc -lpng -lz -lm -lpthread}
exec "$BUILD/bench/nn" "$@"
