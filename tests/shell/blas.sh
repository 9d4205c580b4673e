#!/bin/sh
# The OpenBLAS kernel policy (lib/numerics/blas.h): SkylakeX on every AVX-512 CPU, whatever OpenBLAS
# detects and whatever OPENBLAS_CORETYPE the environment sets; HEDGE_BLAS_CORE asks for another
# kernel, HEDGE_BLAS_KEEP=1 keeps OpenBLAS's choice; the checkpoint records the kernel, and the
# same seed gives the same bytes under the same kernel only.
set -u
. "$(dirname "$0")/../lib.sh"
cd "$T"
grep -q avx512f /proc/cpuinfo && grep -q avx512vl /proc/cpuinfo && grep -q avx512bw /proc/cpuinfo ||
    { echo "blas: skipped, this CPU has no AVX-512 (the policy then keeps OpenBLAS's choice unless it is Prescott)"; pass; }
# (12 batches: the runs train 10, the resume 2 more; a run that trains none writes nothing)
mkdigits -N 2 -s train -n 400 2>/dev/null | batcher -m pairs -b 16 -n 12 > b.hs || fail "data"
core() { tshow -H "$1" | sed -n 's/.*"blas_core": "\([^"]*\)".*/\1/p'; }
OPENBLAS_CORETYPE=Haswell train -o a.ckpt -n 10 -t 1 < b.hs 2>/dev/null || fail "train"
[ "$(core a.ckpt)" = SkylakeX ] || fail "an inherited OPENBLAS_CORETYPE=Haswell was kept: $(core a.ckpt)"
env -u OPENBLAS_CORETYPE train -o b.ckpt -n 10 -t 1 < b.hs 2>/dev/null || fail "train"
[ "$(core b.ckpt)" = SkylakeX ] || fail "OpenBLAS's own choice was kept: $(core b.ckpt)"
totsv a.ckpt > a.tsv && totsv b.ckpt > b.tsv && cmp -s a.tsv b.tsv || fail "the same kernel gave other weights"
OPENBLAS_CORETYPE=Haswell HEDGE_BLAS_KEEP=1 train -o c.ckpt -n 10 -t 1 < b.hs 2>/dev/null || fail "train"
[ "$(core c.ckpt)" = Haswell ] || fail "HEDGE_BLAS_KEEP=1 did not keep OPENBLAS_CORETYPE: $(core c.ckpt)"
HEDGE_BLAS_CORE=Haswell train -o d.ckpt -n 10 -t 1 < b.hs 2>/dev/null || fail "train"
[ "$(core d.ckpt)" = Haswell ] || fail "HEDGE_BLAS_CORE=Haswell was not honoured: $(core d.ckpt)"
# the re-executed program keeps its name (the kernel's comm, what ps, pgrep and pkill match),
# in every thread, and its arguments; train waits on a FIFO so that $! is its pid
mkfifo name.fifo
OPENBLAS_CORETYPE=Haswell OPENBLAS_NUM_THREADS=2 train -o n.ckpt -n 10 -t 2 < name.fifo 2>/dev/null &
pid=$!
exec 3> name.fifo
i=0
until grep -q "HEDGE_BLAS_REEXEC\|OPENBLAS_CORETYPE=SkylakeX" /proc/$pid/environ 2>/dev/null; do
    i=$((i + 1))
    [ $i -lt 100 ] || { exec 3>&-; kill $pid; fail "train was not re-executed with OPENBLAS_CORETYPE=SkylakeX"; }
    sleep 0.1
done
sleep 0.5
comm=$(cat /proc/$pid/comm) threads=$(cat /proc/$pid/task/*/comm | sort -u | tr '\n' ' ')
args=$(tr '\0' ' ' < /proc/$pid/cmdline)
exec 3>&-
wait $pid
[ "$comm" = train ] || fail "the re-executed train is named '$comm'"
[ "$threads" = "train " ] || fail "the threads of the re-executed train are named: $threads"
[ "$args" = "train -o n.ckpt -n 10 -t 2 " ] || fail "the re-executed train has the arguments '$args'"
# resuming under another kernel warns and records both
HEDGE_BLAS_CORE=Haswell train --resume a.ckpt -o e.ckpt -n 12 -t 1 < b.hs 2> e.err || fail "resume"
grep -q "may differ in the last bits" e.err || fail "no warning on a resume under another kernel: $(cat e.err)"
[ "$(core e.ckpt)" = "SkylakeX,Haswell" ] || fail "the kernels of a mixed run are not recorded: $(core e.ckpt)"
pass
