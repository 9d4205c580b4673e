#!/bin/sh
# demo.sh [OUT]: the main job (`make demo`), into OUT (default: out/demo in the current folder;
# `make demo`: the tree's). On the default data (the official MNIST), trains
# point, MoG-1 and MoG-2 embeddings of 2-digit MNIST in 2-D with the fast recipe, evaluates them
# on the clean and corrupt test twins, prints the Table 1 and Table 2 comparison with the
# paper's numbers beside ours, and draws the figures. Three runs share the two cores (one
# training thread each, three at a time). STEPS (default 30000) sets the training length,
# RECIPE (fast) the recipe (pipelines/common.sh). While it trains, stderr shows each run's step,
# steps per second and time left and the runs done of three with the training time left
# (grid_progress, pipelines/common.sh: in place on a terminal, else every PROGRESS_EVERY seconds,
# default 300); the grid's own messages go to OUT/log.
set -eu
. "$(dirname "$0")/common.sh"
case ${1:-} in -*) say "demo: unknown option '$1' (demo.sh [OUT]; -h: the help)"; exit 2 ;; esac
[ $# -le 1 ] || { say "demo: one OUT at most, got $# arguments (demo.sh [OUT]; -h: the help)"; exit 2; }
# the current folder's, never the tree's or the install's (PREFIX/lib/hedge) unless given
out=${1:-out/demo}
steps=${STEPS:-30000}
recipe=${RECIPE:-fast}
start=$(date +%s)
mkdir -p "$out"
say "demo: output in $out ($steps steps per model; the paper trained 500,000); the whole log in $out/log"
status=0
grid_progress demo "$out" "$out/configs-demo.txt" "$steps" $$ &
progress=$!
sh "$HEDGE_ROOT/pipelines/hib.sh" demo -s "$steps" -j 3 --recipe "$recipe" "$out" > "$out/table.md.tmp" 2>"$out/log" || status=$?
kill "$progress" 2> /dev/null || true
wait "$progress" || true
mv "$out/table.md.tmp" "$out/table.md"
echo
echo "## HIB on 2-digit MNIST, D = 2 (measured / paper; paper: Tables 1 and 2, 500k steps)"
echo
cat "$out/table.md"
echo
echo "Training: $steps steps of 128 pairs per model (the paper: 500,000), recipe $recipe ($(recipe_args "$recipe" | sed 's/^$/the paper'"'"'s/')). Data: the official MNIST (60,000 training digits)."
if [ "$status" != 0 ]; then
    # hib.sh names each failed run with the end of its log; if it stopped before that, the log's end
    if grep -q '^hib: FAILED' "$out/log"; then
        sed -n '/^hib: FAILED/,$p' "$out/log" >&2
    else
        tail -n 20 "$out/log" >&2
    fi
    say "demo: FAILED after $(( $(date +%s) - start )) s (exit $status); the whole log is $out/log"
    exit 1
fi
if ! sh "$HEDGE_ROOT/pipelines/figures.sh" "$out" > "$out/figures.txt" 2>>"$out/log"; then
    tail -n 10 "$out/log" >&2
    say "demo: FAILED: the figures could not be drawn (see $out/log)"
    exit 1
fi
echo
echo "Figures:"
sed 's/^/  /' "$out/figures.txt"
echo
echo "Every stream, checkpoint and log is in $out/runs/NAME; look inside with tshow."
echo "demo: finished in $(( $(date +%s) - start )) s"
