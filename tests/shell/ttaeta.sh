#!/bin/sh
# tests/bench/tta-eta.sh on a tiny time-to-accuracy run (point and MoG-1, 100 steps, a snapshot
# every 50, 12 images per class): one row per mixture snapshot, in step order; its AP and KNN
# accuracy are those tta.sh measured for the same snapshot; the rank correlations lie in
# [-1, 1]; a second call evaluates nothing again and writes the same file; an OUT without a tta
# run is refused.
set -u
. "$(dirname "$0")/../lib.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)
export BUILD=$(dirname "$BIN")
MKDIGITS_ARGS="--per-class 12" MODELS="point mog1" STEPS=100 SNAP=50 THREADS=1 \
    sh "$root/tests/bench/tta.sh" "$T/o" > "$T/tta.out" 2> "$T/tta.err" || fail "tta.sh failed: $(tail -n 5 "$T/tta.err")"
sh "$root/tests/bench/tta-eta.sh" "$T/o" 2> "$T/eta.err" || fail "tta-eta.sh failed: $(tail -n 5 "$T/eta.err")"
tsv=$T/o/eta-steps.tsv
[ "$(head -n 1 "$tsv")" = "$(printf 'model\tstep\tap\tknn\ttau_ap\ttau_knn\trho_eta\trho_var\teta_least_ink')" ] ||
    fail "header: $(head -n 1 "$tsv")"
[ "$(tail -n +2 "$tsv" | cut -f1,2 | tr '\t\n' ' ')" = "mog1 50 mog1 100 " ] || fail "rows: $(cat "$tsv")"
for s in 50 100; do
    for k in ap knn; do
        want=$(awk -F'\t' -v s=$s -v k=$k '$1 == "mog1" && $2 == s && $4 == "corrupt" && $5 == k { print $6 }' "$T/o/tta.tsv")
        col=$([ $k = ap ] && echo 3 || echo 4)
        got=$(awk -F'\t' -v s=$s -v c=$col '$1 == "mog1" && $2 == s { print $c }' "$tsv")
        [ -n "$want" ] && [ "$got" = "$want" ] || fail "step $s $k: $got, tta.tsv has '$want'"
    done
done
awk -F'\t' 'NR > 1 { for (c = 5; c <= 8; c++) if ($c !~ /^-?[0-9.]+$/ || $c < -1 || $c > 1) bad = bad " " NR ":" c;
                     if ($9 !~ /^[0-9.]+$/ || $9 < 0 || $9 > 1) bad = bad " " NR ":9" }
           END { if (bad) { print bad; exit 1 } }' "$tsv" > "$T/bad" || fail "values out of range at$(cat "$T/bad"): $(cat "$tsv")"
if command -v gnuplot > /dev/null; then
    [ -s "$T/o/eta-steps.png" ] || fail "gnuplot is here but there is no eta-steps.png"
    grep -q 'PNG' "$T/o/eta-steps.png" || fail "eta-steps.png is not a PNG"
fi
cp "$tsv" "$T/first.tsv"
sh "$root/tests/bench/tta-eta.sh" "$T/o" 2> "$T/eta2.err" || fail "tta-eta.sh again failed: $(tail -n 5 "$T/eta2.err")"
grep -q evaluating "$T/eta2.err" && fail "the second call evaluated again: $(cat "$T/eta2.err")"
cmp -s "$tsv" "$T/first.tsv" || fail "the second call wrote another table"
mkdir "$T/empty"
sh "$root/tests/bench/tta-eta.sh" "$T/empty" 2> "$T/empty.err" && fail "an OUT without a tta run was accepted"
grep -q "tta-eta: no .*test-corrupt.hs: run tests/bench/tta.sh" "$T/empty.err" || fail "message: $(cat "$T/empty.err")"
pass
