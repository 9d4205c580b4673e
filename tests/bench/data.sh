#!/bin/sh
# data.sh: throughput of the data pipeline (a benchmark, not part of `make test`).
#
#   BUILD=build sh tests/bench/data.sh        (N=100000 images, R=3 repetitions by default)
#
# In one run, best of R repetitions each:
#   pipeline  mkdigits -N 2 -n N -s train | occlude -p 0.2 | batcher -m pairs -b 128 -n NB > /dev/null
#             with NB = ceil(N / 128): one epoch, every composite once as image1
#   cat       the pipeline's output bytes (saved once to a file) through `cat FILE | cat > /dev/null`
#   stages    mkdigits alone, mkdigits | occlude, and batcher alone on the saved occlude output:
#             from a file, from a pipe (cat images | batcher), into a pipe (batcher < images |
#             cat) and both (cat images | batcher | cat, compared with the file read into the
#             same output pipe: what reading from a pipe costs)
# and prints composites per second (N / time), batch images per second (2 per pair), output
# bytes per second, and the ratio to cat. The machine is shared: the best of R is the figure
# least disturbed by other work. Timing only in awk over `date +%s.%N`; the output is checked
# with tshow (a failed stage would leave fewer records).
set -eu
BUILD=${BUILD:-build}
BIN=$(cd "$BUILD/bin" && pwd)
. tests/bench/lib.sh
bench_mnist
N=${N:-100000}
R=${R:-3}
B=128
NB=${NB:-$(((N + B - 1) / B))}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
for p in mkdigits occlude batcher tshow; do
    [ -x "$BIN/$p" ] || { echo "data.sh: $BIN/$p is not built (make BUILD=$BUILD)" >&2; exit 1; }
done

now() { date +%s.%N; }
# best "COMMAND": runs it R times with sh -c, prints the shortest wall time in seconds
best() {
    b=""
    i=0
    while [ $i -lt "$R" ]; do
        t0=$(now)
        sh -c "$1"
        t1=$(now)
        b=$(awk -v a="$t0" -v z="$t1" -v b="$b" 'BEGIN { t = z - a; if (b == "" || t < b) b = t; printf "%.4f", b }')
        i=$((i + 1))
    done
    echo "$b"
}

MK="'$BIN/mkdigits' -N 2 -n $N -s train"
OC="'$BIN/occlude' -p 0.2"
BA="'$BIN/batcher' -m pairs -b $B -n $NB"

# once, untimed: the inputs of the stage timings and the byte count, checked
sh -c "$MK | $OC > '$T/images'"
sh -c "$BA < '$T/images' > '$T/batches'"
# mkdigits makes whole classes: 70 x 1428 = 99960 of a budget of 100000
images=$("$BIN/tshow" -q "$T/images" | sed -n 's/^# \([0-9]*\) records$/\1/p')
[ -n "$images" ] || { echo "data.sh: mkdigits | occlude failed" >&2; exit 1; }
"$BIN/tshow" -q "$T/batches" | grep -q "^# $NB records" || { echo "data.sh: batcher did not give $NB batches" >&2; exit 1; }
bytes=$(wc -c <"$T/batches")
inbytes=$(wc -c <"$T/images")

t_pipe=$(best "$MK | $OC | $BA > /dev/null")
t_cat=$(best "cat '$T/batches' | cat > /dev/null")
t_mk=$(best "$MK > /dev/null")
t_mkoc=$(best "$MK | $OC > /dev/null")
t_ba=$(best "$BA < '$T/images' > /dev/null")
t_ba_pin=$(best "cat '$T/images' | $BA > /dev/null")
t_ba_pout=$(best "$BA < '$T/images' | cat > /dev/null")
t_ba_pipe=$(best "cat '$T/images' | $BA | cat > /dev/null")

awk -v budget="$N" -v n="$images" -v nb="$NB" -v b="$B" -v bytes="$bytes" -v inbytes="$inbytes" -v r="$R" \
    -v tp="$t_pipe" -v tc="$t_cat" -v tm="$t_mk" -v tmo="$t_mkoc" -v tb="$t_ba" -v tbp="$t_ba_pipe" -v tbi="$t_ba_pin" -v tbo="$t_ba_pout" '
BEGIN {
    pairs = nb * b   # without -e every batch is full
    printf "pipeline: mkdigits -N 2 -n %d -s train | occlude -p 0.2 | batcher -m pairs -b %d -n %d > /dev/null\n", budget, b, nb
    printf "  %d composites in, %d batches of %d pairs out\n", n, nb, b
    printf "  %.3f s (best of %d): %.0f composites/s, %.0f batch images/s, %.1f MB/s out (%.1f MB)\n",
        tp, r, n / tp, 2 * pairs / tp, bytes / tp / 1e6, bytes / 1e6
    printf "cat: cat FILE | cat > /dev/null, the same %.1f MB\n", bytes / 1e6
    printf "  %.3f s (best of %d): %.1f MB/s\n", tc, r, bytes / tc / 1e6
    printf "ratio: the pipeline moves its output bytes %.1f times slower than cat\n", tp / tc
    printf "stages (best of %d):\n", r
    printf "  mkdigits > /dev/null                %.3f s  %8.0f composites/s\n", tm, n / tm
    printf "  mkdigits | occlude > /dev/null      %.3f s  %8.0f composites/s\n", tmo, n / tmo
    printf "  batcher < images > /dev/null        %.3f s  %8.0f composites/s in, %.0f MB/s in\n", tb, n / tb, inbytes / tb / 1e6
    printf "  cat images | batcher > /dev/null    %.3f s  %8.0f composites/s in: %.2f x the time from a file\n", tbi, n / tbi, tbi / tb
    printf "  batcher < images | cat              %.3f s  %8.0f composites/s in: %.2f x (the output through a pipe, %.0f MB)\n", tbo, n / tbo, tbo / tb, bytes / 1e6
    printf "  cat images | batcher | cat          %.3f s  %8.0f composites/s in: %.2f x the time from a file with the same output pipe\n", tbp, n / tbp, tbp / tbo
    printf "target: >= 200000 images/s through the pipeline: composites %s, batch images %s\n",
        (n / tp >= 200000 ? "met" : "NOT met"), (2 * pairs / tp >= 200000 ? "met" : "NOT met")
}'
