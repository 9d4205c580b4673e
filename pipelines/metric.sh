#!/bin/sh
# metric.sh PAPER EXPERIMENT [--quick | --full] [-j JOBS] [-t THREADS] [-s STEPS] [--recipe R]
#           [--data D] [--shape rect|square] [--train-occlusion per-use|fixed] [--seeds K|S1,...] [--only PATTERN] [--restore RESULTS]... [--report] [--sshlogin S]... [--sshloginfile F] [--transfer] [--retries N] OUT
# The metric-learning papers on N-digit MNIST, P x K batches (pipelines/metric-run.sh or
# cesoftmax-run.sh for one run): called as pipelines/hetriplet.sh, fstat.sh and cesoftmax.sh,
# which pass PAPER.
#   PAPER hetriplet (Taha et al. 2019): triplet vs heteroscedastic triplet, retrieval on noisy
#         sets (half the digits occluded), gallery cleaning by uncertainty vs at random, the
#         uncertainty-AP correlation.
#   PAPER fstat (Ridgeway & Mozer 2018): triplet (all triplets) vs F-statistic loss, Recall@1..8
#         on held-out classes and disentanglement (per digit position, the best single dimension).
#   PAPER cesoftmax (Veit et al. 2020): two towers (digit strings, images), sampled softmax, SNM,
#         Cross-Example Softmax, Cross-Example Negative Mining and a margin baseline; text-to-image
#         Recall@k and global PR-AUC, with unseen-class distractors, and zero-shot on unseen numbers.
#   EXPERIMENT: table (N in {2, 3} x D in {8, 22} x the two models; cesoftmax: N in {2, 3}, D = 16,
#   five losses), demo (N = 2, D = 8; cesoftmax: D = 16)
#   --quick: 500 steps of 128 images per model (16 x 8; cesoftmax 64 x 2) (minutes in all);
#   --full: 20,000 steps (2.56 million images per model). -s sets any other number of steps.
#   -j JOBS: configurations in parallel (default 2, one core each); -t THREADS: training threads.
#   --recipe fast (default) | paper (see metric-run.sh). TRAIN_ARGS adds train options.
#   --data mnist (default) | fashion: the data set the digits come from (DATASET,
#   pipelines/hib-data.sh).
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
#   --sshlogin S (again for more), --sshloginfile F: run the jobs on other machines through ssh
#   (GNU parallel's own options; ':' is this machine; -j is per machine), which see OUT and the
#   hedge tree at the same paths, or, with --transfer, get what each job needs sent and its run
#   returned; --retries N: tries per job (default 2 with ssh logins, a failed job going to
#   another machine). docs/grids.md.
# Runs land in OUT/runs/NAME, the job log in OUT/joblog-PAPER-EXPERIMENT, the data in OUT/data/N*
# (shared with hib.sh and spe.sh). Re-running the same command resumes. Prints the table
# (markdown) on stdout; exits 1, naming each failed run with the end of its log, when a run did
# not finish.
set -eu
. "$(dirname "$0")/common.sh"
usage() { sed -n '2,45p' "$HEDGE_ROOT/pipelines/metric.sh" | sed 's/^# \{0,1\}//' >&2; exit 2; }
[ $# -ge 3 ] || usage
paper=$1 exp=$2; shift 2
grid_options 500 20000 "$@"
runner=metric-run.sh dims="8 22" demo_d=8
case $paper in
hetriplet) models="triplet hetriplet" ;;
fstat) models="triplet-all fstat" ;;
cesoftmax) models="sampled_softmax snm cesoftmax cenm cemargin" runner=cesoftmax-run.sh dims=16 demo_d=16 ;;
*) say "metric.sh: unknown paper '$paper' (hetriplet, fstat, cesoftmax)"; usage ;;
esac
mkdir -p "$out"
RECIPE=$recipe
export RECIPE
configs=$(grid_file "$out" "configs-$paper-$exp" txt)
: > "$configs.tmp"
case $exp in
table) for N in 2 3; do for D in $dims; do for m in $models; do
        echo "N$N-D$D-$m $N $D $m" >> "$configs.tmp"; done; done; done ;;
demo) for m in $models; do echo "N2-D$demo_d-$m 2 $demo_d $m" >> "$configs.tmp"; done ;;
*) say "$paper.sh: unknown experiment '$exp'"; usage ;;
esac
mv "$configs.tmp" "$configs"
seed_configs "$configs" || usage

grid_data $paper "$configs" || exit 1
[ "$report" = 1 ] || say "$paper: $exp: $(wc -l < "$configs") configurations, $steps steps of 128 images each, $jobs at a time with $threads threads, recipe $recipe (more train options:${TRAIN_ARGS:- none}) (log: $out/joblog-$paper-$exp)"
grid_parallel "$out/joblog-$paper-$exp" "$configs" \
    'mkdir -p '"$out"'/runs/{1}; THREADS='"$threads"' sh '"$HEDGE_ROOT/pipelines/$runner"' '"$out"' {1} {2} {3} {4} '"$steps"' > '"$out"'/runs/{1}/run.log 2>&1; rc=$?; cat '"$out"'/runs/{1}/run.log >&2; exit $rc'
# which runs finished is read from their results below
sh "$HEDGE_ROOT/pipelines/metric-tables.sh" "$paper" "$out" "$configs" "$steps" "$recipe"
echo
occlusion_note
seeds_note "$configs"
runs_note "$out" "$configs"
write_results "$out" "$configs" "$(grid_file "$out" "results-$paper-$exp" tsv)"
check_runs "$paper" "$out" "$configs" "$out/joblog-$paper-$exp" || exit 1
