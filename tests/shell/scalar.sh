#!/bin/sh
# The portable build (lib/base/simd.h; docs/build.md, "Portable"):
#   - `make SIMD=none ARCH=-march=x86-64` builds, into a folder of its own, objects with no ymm
#     or zmm register (objdump), and neither build calls glibc's libmvec (no _ZGV symbol);
#   - its unit tests pass (the same hand-derived values and tolerances as the native build's);
#   - its data programs write the native build's bytes (mkdigits | occlude | batcher: no BLAS,
#     and the random numbers, normals too, are hedge's own: lib/base/rng.c);
#   - evaluate writes the native build's JSON to the byte from the same embeddings (Euclidean
#     and MLS: the scalar paths of the distance and ranking code compute the same numbers);
#   - 30 training steps from the same batches embed within 1e-3 of the embeddings' scale of the
#     native build's (measured 2.6e-6 for the MoG head, 3.4e-5 for C = 1: without FMA a sum
#     rounds twice where the native build's rounds once, and training carries that along).
# Skipped without SIMDe (Debian's libsimde-dev, which make test installs as root).
set -u
. "$(dirname "$0")/../lib.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)
skip() { echo "SKIP: $*"; exit 0; }
[ -f /usr/include/simde/x86/avx2.h ] || skip "no SIMDe (apt-get install libsimde-dev)"
T=$(cd "$T" && pwd -P)
P="$T/portable"
# the portable build: a make of its own (its -j2 and checks), whatever make runs the tests
(cd "$root" && env -u MAKEFLAGS -u MFLAGS MAKELEVEL=0 make -s BUILD="$P" SIMD=none ARCH=-march=x86-64 SANFLAGS= OPT=-O2 CC=cc \
    DATA="${DATA:-$root/data}" all) > "$T/build.log" 2>&1 || fail "make SIMD=none: $(tail -n 5 "$T/build.log")"
n=0
for o in $(find "$P/obj" -name '*.o'); do
    objdump -d --no-show-raw-insn "$o" | grep -qE '%[yz]mm[0-9]' && { echo "$o" >> "$T/wide"; n=$((n + 1)); }
done
[ "$n" = 0 ] || fail "$n objects of the portable build use ymm/zmm registers: $(head -n 3 "$T/wide")"
[ "$(find "$P/obj" -name '*.o' | wc -l)" -gt 50 ] || fail "the portable build has too few objects to check"
for lib in "$P/libhedge.a" "$BIN/../libhedge.a"; do
    nm "$lib" 2> /dev/null | grep -q '_ZGV' && fail "$lib calls glibc's libmvec: $(nm "$lib" | grep _ZGV | head -n 2)"
done
nm "$BIN/../libhedge.a" | grep -q ' T rng_normals' || fail "no rng_normals in the native build's library"

# the unit tests, in the portable build
for t in "$P"/tests/test_*; do
    "$t" > "$T/unit.log" 2>&1 || fail "portable build: ${t##*/} failed: $(grep -m 3 'CHECK failed' "$T/unit.log")"
done

# data: the same bytes
cd "$T"
data() { "$1/mkdigits" -N 2 -s train -n 2000 | "$1/occlude" -p 0.2 | "$1/batcher" -m pairs -b 64 -S 5 -n 30; }
data "$P/bin" > data.p 2> /dev/null || fail "portable: mkdigits | occlude | batcher"
data "$BIN" > data.n 2> /dev/null || fail "native: mkdigits | occlude | batcher"
cmp -s data.p data.n || fail "the data programs of the two builds wrote different bytes"
mkdigits -N 2 -s test-seen -n 1000 2> /dev/null | occlude -p 0 > test.hs 2> /dev/null || fail "mkdigits test"

# training, then the evaluation of the same embeddings
PY=$(command -v /usr/bin/python3 || command -v python3)
for C in 2 1; do
    for b in p n; do
        [ $b = p ] && d="$P/bin" || d="$BIN"
        "$d/train" -o m$C$b.ckpt --head mog -C $C -D 3 -n 30 -S 3 -t 1 < data.n 2> train.err || fail "train ($b): $(tail -n 1 train.err)"
        "$d/embed" -m m$C$b.ckpt < test.hs > e$C$b.hs 2> /dev/null || fail "embed ($b)"
    done
    worst=$(PYTHONPATH="$root/python" "$PY" -B - e${C}p.hs e${C}n.hs <<'EOF'
import sys
import numpy as np
from hedge import stream
a, b = (stream.read(p)[1] for p in sys.argv[1:3])
worst = 0.0
for k in ("mu", "var"):
    x, y = np.asarray(a[k], dtype=np.float64), np.asarray(b[k], dtype=np.float64)
    worst = max(worst, float(np.max(np.abs(x - y)) / np.max(np.abs(y))))
print(f"{worst:.3g}")
EOF
    ) || fail "reading the embeddings"
    echo "C = $C: the portable build's embeddings within $worst of the native build's scale"
    check_lt "$worst" 1e-3 "C = $C: the portable build's embeddings differ by $worst of their scale (at most 1e-3)"
done
for d in euclidean mls; do
    "$P/bin/evaluate" --distance $d --json p.json e1n.hs > /dev/null 2> ev.err || fail "portable evaluate --distance $d: $(cat ev.err)"
    evaluate --distance $d --json n.json e1n.hs > /dev/null 2> ev.err || fail "native evaluate --distance $d: $(cat ev.err)"
    cmp -s p.json n.json || fail "evaluate --distance $d: the builds' JSON differ: $(diff p.json n.json | head -n 4)"
done
pass
