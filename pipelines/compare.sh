#!/bin/sh
# compare.sh [--quick | --full] [-j JOBS] [-t THREADS] [-s IMAGES] [--recipe R] [--data mnist|fashion]
#            [--shape rect|square] [--train-occlusion per-use|fixed] [--seeds K|S1,...] [--only PATTERN]
#            [--restore RESULTS]... [--report] [remote options: see docs/grids.md] OUT
# Every method hedge has, side by side: trained on the same 2-digit data (MNIST, or Fashion-MNIST
# composites with --data fashion) for the same number of training IMAGES (not steps: batch
# shapes differ), evaluated with the same battery through the same filters on the seen and
# unseen test classes, clean and corrupt (pipelines/compare-run.sh): verification AP, 5-NN
# accuracy, Recall@1, MAP@R, 5-shot accuracy, global PR-AUC; and for every method with an
# uncertainty, whether it knows when a KNN answer is wrong: Kendall's tau over 20 bins, the AUROC
# of the uncertainty for wrong answers, the area under the error-versus-reject curve against the
# oracle's; the calibration (ECE) of the match probability where a method has one.
#   Methods: point, hib (MoG-1), pn, spe, triplet, hetriplet, fstat, cesoftmax; D = 8 (DIM).
#   METHODS="..." (environment) names others or more: the field's losses ms, cosface, arcface,
#   proxynca, proxy-anchor, dul-cls (pipelines/compare-run.sh, docs/losses.md).
#   --quick: 1,536,000 images per method (6,000 steps of 128 pairs; 2 x hib.sh --quick), 100 few-shot
#   episodes; --full: 46,080,000 (hib.sh --full's 180,000 steps), 1,000 episodes. -s: IMAGES.
#   -j JOBS: methods in parallel (default 2, one core each); -t THREADS: training threads.
#   --recipe fast (default) | paper (compare-run.sh); TRAIN_ARGS adds train options.
#   --body SPEC: every method on that body (train --body): mlp:W1,W2,... or linear on the
#   images' pixels (the composite's 784 N values / 255) in place of the HIB network (conv).
#   --shape rect (default) | square: the occlusion patches, rectangles (the SPE paper's appendix E)
#   or squares (the HIB paper's appendix A); --train-occlusion per-use (default) | fixed: training
#   digits occluded afresh at every use, or once into the data (pipelines/common.sh, README
#   "Data"). The data folder records both and refuses another: give each its own OUT.
#   --seeds K | S1,S2,...: each configuration trained K times, with the training seeds SEED (714)
#   and the next K - 1, or with those listed (same data and test pairs); the tables print the
#   mean and "± sd" over the seeds; run NAME.sSEED (pipelines/common.sh "Seeds"). --only PATTERN:
#   only the configurations whose name matches (grep -E), e.g. --only '^N2-'. --restore RESULTS:
#   the runs that a results file of this pipeline (OUT/results-*.tsv, results/*/results.tsv) holds
#   are taken from it, not trained again: a grid carried over to a new machine; again for more
#   files, a run from the first that holds it (pipelines/common.sh "Restoring runs").
#   --report: trains nothing; prints the tables of the runs OUT holds so far and how many
#   finished (a grid still running or stopped; give it the grid's options to get its tables),
#   its results in OUT/results-*.report.tsv.
# Runs land in OUT/runs/METHOD, the job log in OUT/joblog-compare, the data in OUT/data/N2. Re-running
# the same command resumes. Prints the table (markdown) on stdout, then each learned uncertainty
# beside the best free baseline (pipelines/finding.sh), and draws OUT/reject.png (the
# error-versus-reject curves, gnuplot); exits 1, naming each failed run, when a run did not finish.
set -eu
. "$(dirname "$0")/common.sh"
usage() { sed -n '2,39p' "$HEDGE_ROOT/pipelines/compare.sh" | sed 's/^# \{0,1\}//' >&2; exit 2; }
grid_options 1536000 46080000 "$@"
repeats=1000
[ "$preset" = quick ] && repeats=100
[ "$steps" = 1536000 ] && repeats=100
REPEATS=${REPEATS:-$repeats} RECIPE=$recipe
export REPEATS RECIPE
dim=${DIM:-8}
mkdir -p "$out"
configs=$(grid_file "$out" "configs-compare" txt)
for m in ${METHODS:-point hib pn spe triplet hetriplet fstat cesoftmax}; do echo "$m $m $dim"; done > "$configs.tmp"
mv "$configs.tmp" "$configs"
seed_configs "$configs" || usage
grid_data compare "$configs" || exit 1
[ "$report" = 1 ] || say "compare: $(wc -l < "$configs") methods, $steps training images each, D = $dim, $jobs at a time with $threads threads, recipe $recipe, $REPEATS few-shot episodes (log: $out/joblog-compare)"
grid_parallel "$out/joblog-compare" "$configs" \
    'mkdir -p '"$out"'/runs/{1}; THREADS='"$threads"' sh '"$HEDGE_ROOT"'/pipelines/compare-run.sh '"$out"' {1} {2} {3} '"$steps"' > '"$out"'/runs/{1}/run.log 2>&1; rc=$?; cat '"$out"'/runs/{1}/run.log >&2; exit $rc'
BODY_SPEC=$body sh "$HEDGE_ROOT/pipelines/compare-tables.sh" "$out" "$configs" "$steps" "$recipe" "$dataset"
echo
if grep -q '	d:' "$out"/runs/*/results.tsv 2> /dev/null; then
    echo "### Does a learned uncertainty know more than the free signals? (pipelines/finding.sh)"
    echo
    sh "$HEDGE_ROOT/pipelines/finding.sh" "$dataset${body:+ $body}=$out"
    echo
fi
occlusion_note
seeds_note "$configs"
runs_note "$out" "$configs"
write_results "$out" "$configs" "$(grid_file "$out" "results-compare" tsv)"
sh "$HEDGE_ROOT/pipelines/compare-figure.sh" "$out" "$configs" "$dataset" >&2 ||
    say "compare: the figure could not be drawn (the table above stands)"
check_runs compare "$out" "$configs" "$out/joblog-compare" || exit 1
