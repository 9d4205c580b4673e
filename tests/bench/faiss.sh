#!/bin/sh
# faiss.sh: `knn` and `retrieve` against faiss's exact search (IndexFlatL2, CPU; Debian
# python3-faiss 1.7.3) on the same embeddings, in one run (a benchmark, not part of `make test`).
#
#   BUILD=build sh tests/bench/faiss.sh [ROUNDS [N ...]]      (defaults: 3 rounds, N = 20000 100000)
#
# Data: N x 128 float32 drawn from N(0, 1) (numpy, seed 714), classes of 50 (item i in class
# i mod N/50), leave-one-out. No class structure: almost every negative lies before a query's
# last positive, the most work for retrieve's ranking.
# The six runs per N (all with 2 threads):
#   hedge knn       knn -k 5 -t 2 (the whole program: reading the stream, writing kind knn)
#   faiss knn       IndexFlatL2, search with k = 6, the item itself dropped
#   hedge retrieve  retrieve -t 2 (every positive's rank in the whole gallery: MAP@R, AP,
#                   R-precision, Recall@k; the whole program)
#   faiss retrieve  search with k = 50: the largest class (49 positives and the item itself),
#                   all that MAP@R (and R-precision, P@1) needs; not AP over the whole gallery
#   hedge at-r      retrieve --at-r -t 2: MAP@R, R-precision, P@1, Recall@k from each query's 49
#                   nearest (the same search as faiss's, no AP), the whole program: the line
#                   faiss_retrieve_at_r_N, the peer of faiss k = 50 that the target 2 is for (the
#                   full ranking's line, faiss_retrieve_N, does more: every positive's rank)
#   hedge knn50     knn -k 50 -t 2: the same 50 nearest (of which the item itself is left out),
#                   the search a MAP@R from the R nearest would start from (the line
#                   faiss_knn50_N; no target of its own)
# faiss is timed inside Python around index.add and index.search only (no import, no loading),
# hedge's programs whole (/usr/bin/time); wall time for the ratio, CPU time (all threads) beside it
# as a check less sensitive to the machine's other load;
# its threads: faiss.omp_set_num_threads(2) (and OMP_NUM_THREADS=2), OPENBLAS_NUM_THREADS=1 for
# the sgemm inside IndexFlatL2, and OPENBLAS_CORETYPE set to the kernel hedge's programs run
# (`probe core`), so both multiply with the same OpenBLAS kernel; OMP_WAIT_POLICY=PASSIVE: on a
# loaded machine OpenMP threads spinning at a barrier lose their time slices (faiss k = 50 on
# 20,000 items, load 12 on 2 cores: 13.5 s spinning, 9.8 s passive). The runs are interleaved
# (hedge, faiss, hedge, faiss; the order reversed every other round) so that the machine's other
# load hits both alike; the ratio is faiss's time over hedge's, the median over the rounds of
# each round's ratio. The first round's outputs are compared: the same 5 neighbours (ties
# aside: a differing list must have the same distances within 1e-6), and the same MAP@R per query.
set -eu
BUILD=${BUILD:-build}
BIN=$(cd "$BUILD/bin" && pwd)
PY=${PY:-/usr/bin/python3} # Debian's, where python3-faiss and python3-torch install
rounds=${1:-3}
[ $# -gt 0 ] && shift
sizes=${*:-20000 100000}
. tests/bench/lib.sh
bench_peer faiss faiss python3-faiss
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
bench_probe "$T"
core=$(bench_core "$T")
fversion=$($PY -c 'import faiss; print(faiss.__version__)')
faiss_run() { # faiss_run K THREADS [NEIGHBORS.npy]: prints faiss's wall and CPU seconds
    OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=2 OMP_WAIT_POLICY=PASSIVE OPENBLAS_CORETYPE=$core \
        $PY tests/bench/faiss_search.py "$T/x.npz" "$@" | sed -n 's/^seconds \([^ ]*\) cpu \([^ ]*\)$/\1 \2/p'
}
hedge_run() { # hedge_run OUT PROGRAM ARGS...: prints the whole program's wall and CPU seconds
    out=$1
    shift
    /usr/bin/time -f '%e %U %S' -o "$T/time" "$@" "$T/x.hs" > "$out"
    awk '{ printf "%.3f %.3f\n", $1, $2 + $3 }' "$T/time"
}
median() { sort -g | awk '{ v[NR] = $1 } END { print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "# hedge against faiss $fversion IndexFlatL2 (exact, CPU): N x 128 random float32, classes of 50, leave-one-out"
echo "# 2 threads each: hedge -t 2; faiss omp_set_num_threads(2), OMP_WAIT_POLICY=PASSIVE, OPENBLAS_NUM_THREADS=1, OPENBLAS_CORETYPE=$core (hedge's kernel)"
echo "# $rounds interleaved rounds; ratio = faiss seconds / hedge seconds, median of the rounds (target: 2); load: $(uptime | sed 's/.*load average: //')"
for n in $sizes; do
    $PY - "$T/x.npz" "$n" << 'EOF'
import sys
import numpy as np
n = int(sys.argv[2])
mu = np.random.default_rng(714).standard_normal((n, 128), dtype=np.float32)
np.savez(sys.argv[1], mu=mu, **{"class": (np.arange(n) % (n // 50)).astype(np.int32)})
EOF
    "$BIN/fromnpz" "$T/x.npz" > "$T/x.hs"
    : > "$T/times"
    r=1
    while [ "$r" -le "$rounds" ]; do
        save_k="" save_r=""
        [ "$r" = 1 ] && save_k="$T/faiss_knn.npy" save_r="$T/faiss_ret.npy"
        if [ $((r % 2)) = 1 ]; then
            hk=$(hedge_run "$T/knn.hs" "$BIN/knn" -k 5 -t 2)
            fk=$(faiss_run 6 2 $save_k)
            hr=$(hedge_run "$T/ret.hs" "$BIN/retrieve" -t 2)
            fr=$(faiss_run 50 2 $save_r)
            h50=$(hedge_run "$T/knn50.hs" "$BIN/knn" -k 50 -t 2)
            ha=$(hedge_run "$T/atr.hs" "$BIN/retrieve" --at-r -t 2)
        else
            ha=$(hedge_run "$T/atr.hs" "$BIN/retrieve" --at-r -t 2)
            h50=$(hedge_run "$T/knn50.hs" "$BIN/knn" -k 50 -t 2)
            fr=$(faiss_run 50 2)
            hr=$(hedge_run "$T/ret.hs" "$BIN/retrieve" -t 2)
            fk=$(faiss_run 6 2)
            hk=$(hedge_run "$T/knn.hs" "$BIN/knn" -k 5 -t 2)
        fi
        echo "$hk $fk $hr $fr $h50 $ha" >> "$T/times"
        echo "# round $r, N = $n, seconds (wall cpu): hedge knn $hk, faiss k=6 $fk, hedge retrieve $hr, faiss k=50 $fr, hedge knn -k 50 $h50, hedge retrieve --at-r $ha; load $(uptime | sed 's/.*load average: //')" >&2
        [ "$r" = 1 ] && cp "$T/knn.hs" "$T/knn1.hs" && cp "$T/ret.hs" "$T/ret1.hs" && cp "$T/atr.hs" "$T/atr1.hs"
        r=$((r + 1))
    done
    # columns: hedge knn wall, cpu; faiss knn wall, cpu; hedge retrieve wall, cpu; faiss retrieve
    # wall, cpu; hedge knn -k 50 wall, cpu; hedge retrieve --at-r wall, cpu
    for what in knn retrieve retrieve_at_r knn50; do
        case $what in knn) h=1 f=3 k=6 ;; retrieve) h=5 f=7 k=50 ;; knn50) h=9 f=7 k=50 ;; retrieve_at_r) h=11 f=7 k=50 ;; esac
        hs=$(awk -v c=$h '{ print $c }' "$T/times" | median)
        fs=$(awk -v c=$f '{ print $c }' "$T/times" | median)
        ratio=$(awk -v h=$h -v f=$f '{ printf "%.4f\n", $f / $h }' "$T/times" | median)
        cratio=$(awk -v h=$((h + 1)) -v f=$((f + 1)) '{ printf "%.4f\n", $f / $h }' "$T/times" | median)
        awk -v w="$what" -v n="$n" -v hs="$hs" -v fs="$fs" -v r="$ratio" -v c="$cratio" -v k="$k" 'BEGIN {
            printf "faiss_%s_%d ratio %.2f (hedge %.2f s, faiss k=%d %.2f s: medians of wall time; CPU time ratio %.2f%s)\n",
                w, n, r, hs, k, fs, c, (w == "knn50" || w == "retrieve" ? "" : r >= 2 ? "; target 2: met" : "; target 2: NOT met") }'
    done
    # the same answers: neighbours and MAP@R per query
    "$BIN/tonpz" -o "$T/knn.npz" "$T/knn1.hs"
    "$BIN/tonpz" -o "$T/ret.npz" "$T/ret1.hs"
    "$BIN/tonpz" -o "$T/atr.npz" "$T/atr1.hs"
    $PY - "$T" "$n" << 'EOF'
import sys
import numpy as np
T, n = sys.argv[1], int(sys.argv[2])
x = np.load(T + "/x.npz")
mu, cls = x["mu"].astype(np.float64), x["class"]
hk = np.load(T + "/knn.npz")
hn = hk["neighbors"][np.argsort(hk["id"])]
def drop_self(lab, keep):
    out = np.empty((len(lab), keep), np.int64)
    for q, row in enumerate(lab):
        row = row[row != q]
        out[q] = row[:keep]
    return out
fn = drop_self(np.load(T + "/faiss_knn.npy"), 5)
differ = np.nonzero((hn != fn).any(axis=1))[0]
ties = 0
for q in differ:
    dh = np.sort(((mu[hn[q]] - mu[q]) ** 2).sum(1))
    df = np.sort(((mu[fn[q]] - mu[q]) ** 2).sum(1))
    ties += np.allclose(dh, df, rtol=1e-6, atol=0)
# MAP@R from faiss's 49 nearest others: R = 49 positives for every item
R = n // (n // 50) - 1
fl = drop_self(np.load(T + "/faiss_ret.npy"), R)
pos = cls[fl] == cls[:, None]
prec = np.cumsum(pos, axis=1) / np.arange(1, R + 1)
fmap = (prec * pos).sum(1) / R
hr, ha = np.load(T + "/ret.npz"), np.load(T + "/atr.npz")
hmap, amap = np.empty(n), np.empty(n)
hmap[hr["id"]] = hr["map_r"]
amap[ha["id"]] = ha["map_r"]
print("faiss_check_%d knn: %d of %d queries with the same 5 neighbours, %d differ by near-equal distances only, "
      "%d otherwise; MAP@R hedge %.6f (--at-r %.6f), faiss %.6f, largest per-query difference %.2g (--at-r %.2g)"
      % (n, n - len(differ), n, ties, len(differ) - ties, hmap.mean(), amap.mean(), fmap.mean(),
         np.abs(hmap - fmap).max(), np.abs(amap - fmap).max()))
EOF
done
echo "# load after: $(uptime | sed 's/.*load average: //')"
