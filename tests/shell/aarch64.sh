#!/bin/sh
# The aarch64 build (docs/build.md, "Portable"): hedge cross-built with Debian's gcc-aarch64-linux-gnu
# against the arm64 libraries (multiarch: OpenBLAS, msgpack-c, libpng, zlib), its vector code
# through SIMDe (lib/base/simd.h, NEON), and its unit tests run under qemu-user: the same
# hand-derived values and tolerances as on x86-64, and test_rng's three pinned normals the same
# bits (hedge's own log and cos: the same on every libc, CPU and build).
# Under qemu-user 7.2 on this project's kernel a new process or thread never runs (a five-line
# program that forks, or starts one pthread, hangs), so the tests run with HEDGE_TEST_NO_FORK=1
# (check.h: the checks that need a child are skipped, and counted) and OPENBLAS_NUM_THREADS=1, and
# only those that start no thread of their own: the others (test_par, test_hedge, test_metrics,
# test_model, ... with -t 2, and the ones whose helpers fork) are left out, named below.
# Optional, as grid.sh's sshd: skipped (SKIP: what to install) without the cross compiler, qemu-user
# and the arm64 libraries, which make test does not install (they add an architecture to dpkg).
set -u
. "$(dirname "$0")/../lib.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)
skip() { echo "SKIP: $*"; exit 0; }
PC=/usr/lib/aarch64-linux-gnu/pkgconfig
need="dpkg --add-architecture arm64 && apt-get update && apt-get install gcc-aarch64-linux-gnu qemu-user libsimde-dev libopenblas-dev:arm64 libmsgpack-dev:arm64 libpng-dev:arm64 zlib1g-dev:arm64"
command -v aarch64-linux-gnu-gcc > /dev/null 2>&1 && command -v qemu-aarch64 > /dev/null 2>&1 &&
    [ -f "$PC/openblas.pc" ] && [ -f "$PC/msgpack.pc" ] && [ -f /usr/include/simde/x86/avx2.h ] ||
    skip "no aarch64 cross-build here (as root: $need)"
# the tests that start no thread and fork only through check.h (the rest: above)
UNITS="test_rng test_batcher test_ce test_centroids test_digits test_disentangle test_evalfix test_fewshot
       test_fstat test_gallery test_json test_match test_nn test_npy test_optim test_pairs test_proto test_query
       test_riskctl test_shapes test_trainlog test_triplet test_verify"
T=$(cd "$T" && pwd -P)
A="$T/arm"
targets=""
for u in $UNITS; do targets="$targets $A/tests/$u"; done
# (the make that runs the tests exports its command line's variables, ARCH, SANFLAGS ...: set here)
(cd "$root" && env -u MAKEFLAGS -u MFLAGS MAKELEVEL=0 PKG_CONFIG_LIBDIR="$PC" make -s BUILD="$A" CC=aarch64-linux-gnu-gcc ARCH= SIMD=native SANFLAGS= OPT=-O2 \
    DATA="${DATA:-$root/data}" $targets) > "$T/build.log" 2>&1 || fail "the aarch64 build: $(tail -n 5 "$T/build.log")"
file "$A/tests/test_rng" | grep -q 'ARM aarch64' || fail "test_rng is not an aarch64 program: $(file "$A/tests/test_rng")"
export QEMU_LD_PREFIX=/usr/aarch64-linux-gnu OPENBLAS_NUM_THREADS=1 HEDGE_TEST_NO_FORK=1
skipped=0
for u in $UNITS; do
    timeout 300 qemu-aarch64 "$A/tests/$u" > "$T/$u.log" 2>&1 ||
        fail "aarch64 (qemu): $u failed (exit $?): $(grep -m 3 'CHECK failed\|expected' "$T/$u.log" | head -n 3)"
    s=$(sed -n 's/.*: \([0-9]*\) of them skipped.*/\1/p' "$T/$u.log")
    skipped=$((skipped + ${s:-0}))
done
grep -q 'seed 714 stream 1 normals: -0x1.326d212c556b1p-1 -0x1.304fe63a68056p+0 0x1.84e2065a6df1fp-1' "$T/test_rng.log" ||
    fail "aarch64: other normals than x86-64's: $(grep normals "$T/test_rng.log")"
echo "aarch64: $(echo $UNITS | wc -w) unit tests passed under qemu ($skipped checks that need a child skipped); the normals x86-64's bits"
pass
