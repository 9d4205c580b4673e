#!/bin/sh
# The HIB paper's qualitative findings, asserted on a small run where they are robust
# (`make findings`; CI runs it; about 4 minutes on two cores): 2-digit MNIST, D = 2, point and
# MoG-1 embeddings trained for STEPS (default 6000) steps on the default data, evaluated on the
# corrupt test twin. Asserted: HIB's verification AP on corrupt images beats the point
# embedding's, and eta correlates with performance on corrupt images (Kendall's tau of both AP
# and KNN accuracy against the uncertainty bins above 0.5).
# Reported, not asserted: KNN accuracy on corrupt images, where our short runs do not show the
# paper's advantage for HIB (see docs/hib.md, "Reproduction").
# Occlusion: squares drawn once into the training set (OCCLUDE_SHAPE=square TRAIN_OCCLUSION=fixed),
# the configuration these checks were made robust on. With the pipelines' new default
# (rectangles drawn afresh at every use) a 6,000-step run does not show HIB ahead on corrupt AP:
# measured once (commit 76a734a, seed 714) point 0.854 against MoG-1 0.833, while tau(AP) 0.83 and
# tau(KNN) 0.95 on corrupt images held; see docs/hib.md "Reproduction" for the 30,000-step numbers.
set -u
OCCLUDE_SHAPE=square TRAIN_OCCLUSION=fixed
export OCCLUDE_SHAPE TRAIN_OCCLUSION
BIN=${BIN:-$(pwd)/build/bin}
. "$(dirname "$0")/lib.sh"
steps=${STEPS:-6000}
out=$T/findings
sh "$(dirname "$0")/../pipelines/hib-data.sh" 2 "$out/data/N2" || fail "data"
for m in point mog1; do
    BUILD=$(dirname "$BIN") THREADS=1 sh "$(dirname "$0")/../pipelines/hib-run.sh" "$out" "N2-D2-$m-b1e-4" 2 2 $m "$steps" 2>"$T/$m.err" &
done
wait
get() { awk -F'\t' -v c="$2" -v m="$3" '$2 == c && $3 == m { print $4 }' "$out/runs/N2-D2-$1-b1e-4/results.tsv"; }
for m in point mog1; do
    [ -s "$out/runs/N2-D2-$m-b1e-4/results.tsv" ] || { cat "$T/$m.err" >&2; fail "run $m failed"; }
done
cat "$out"/runs/*/results.tsv
check_lt "$(get point corrupt ap)" "$(get mog1 corrupt ap)" "HIB corrupt AP $(get mog1 corrupt ap) does not beat point $(get point corrupt ap)"
check_lt 0.5 "$(get mog1 corrupt tau_ap)" "tau(AP) on corrupt images $(get mog1 corrupt tau_ap) is not above 0.5"
check_lt 0.5 "$(get mog1 corrupt tau_knn)" "tau(KNN) on corrupt images $(get mog1 corrupt tau_knn) is not above 0.5"
echo "reported: KNN accuracy on corrupt images: point $(get point corrupt knn), MoG-1 $(get mog1 corrupt knn)"
pass
