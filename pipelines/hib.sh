#!/bin/sh
# hib.sh EXPERIMENT [--quick | --full] [-j JOBS] [-t THREADS] [-s STEPS] [--recipe R] [--data D]
#        [--shape rect|square] [--train-occlusion per-use|fixed] [--seeds K|S1,...] [--only PATTERN] [--restore RESULTS]... [--report] [--sshlogin S]... [--sshloginfile F] [--transfer] [--retries N] OUT
# Runs one of the HIB paper's experiments end to end with GNU parallel over its configurations
# and prints its table, measured beside the paper's numbers.
#   EXPERIMENT: table1 (N in {2,3} x D in {2,3} x {point, MoG-1, MoG-2}, clean and corrupt),
#               table2 (Kendall's tau of the same runs), table4 (N=3, D=4), table5 (beta 0
#               against 1e-4), appb (soft against hard-margin contrastive over a range of M),
#               appd (1-D embeddings of 2-digit numbers: adjacent class pairs sharing a digit
#               and mean run length, over the 100 classes of the seen and unseen test sets),
#               demo (N=2, D=2: point, MoG-1, MoG-2; the main job)
#   --quick: 3,000 steps per model (minutes); --full: 180,000 steps, the length at which the
#   fast recipe reaches the paper's clean numbers (docs/hib.md "Time to accuracy": 15 to 19 minutes
#   per 2-digit model on both cores; the paper ran 500,000). -s overrides.
#   -j JOBS: configurations in parallel (default 2: one core each); -t THREADS: training
#   threads per run (default 1; -j 1 -t 2 gives each run both cores).
#   --recipe fast (default) | paper: the training recipe (pipelines/common.sh, docs/hib.md "Recipes");
#   TRAIN_ARGS adds train options after the recipe's. HOLDOUT=K trains without the last K MNIST
#   training digits (for choosing a recipe on the validation twins).
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
# Every run lands in OUT/runs/NAME (see hib-run.sh) with its log in OUT/runs/NAME/run.log; GNU
# parallel's job log is OUT/joblog-EXPERIMENT and a second call resumes: finished runs are kept,
# interrupted trainings continue from their checkpoints.
# Exit status: 0 only when every run finished. Otherwise the table of the runs that did is still
# printed, each failed run is named on stderr with the last lines of its log, and the exit
# status is 1.
set -eu
. "$(dirname "$0")/common.sh"
usage() { sed -n '2,46p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
[ $# -ge 2 ] || usage
exp=$1; shift
grid_options 3000 180000 "$@"
mkdir -p "$out"
rargs=$(recipe_args "$recipe") || usage
TRAIN_ARGS="$rargs ${TRAIN_ARGS:-}"
export TRAIN_ARGS
configs=$(grid_file "$out" "configs-$exp" txt)
: > "$configs.tmp"
add() { echo "$*" >> "$configs.tmp"; } # add NAME N D MODEL BETA LOSS MARGIN
case $exp in
table1 | table2)
    for N in 2 3; do for D in 2 3; do for m in point mog1 mog2; do
        add "N$N-D$D-$m-b1e-4 $N $D $m 1e-4 - 1"; done; done; done ;;
table4) for m in point mog1 mog2; do add "N3-D4-$m-b1e-4 3 4 $m 1e-4 - 1"; done ;;
table5)
    for nd in "2 2" "3 3"; do set -- $nd
        for b in 0 1e-4; do add "N$1-D$2-mog1-b$b $1 $2 mog1 $b - 1"; done; done ;;
appb)
    add "N2-D2-point-b1e-4 2 2 point 1e-4 - 1"
    for M in 0.5 1 2 4 8; do add "N2-D2-hardM$M-b1e-4 2 2 point 1e-4 contrastive $M"; done ;;
appd) for m in point mog1; do add "N2-D1-$m-b1e-4 2 1 $m 1e-4 - 1"; done ;;
demo) for m in point mog1 mog2; do add "N2-D2-$m-b1e-4 2 2 $m 1e-4 - 1"; done ;;
*) say "hib.sh: unknown experiment '$exp'"; usage ;;
esac
mv "$configs.tmp" "$configs"
seed_configs "$configs" || usage

# the data first, once per N (the runs then share it)
grid_data hib "$configs" || exit 1
[ "$report" = 1 ] || say "hib: $exp: $(wc -l < "$configs") configurations, $steps steps each, $jobs at a time with $threads threads, recipe $recipe (train options:$TRAIN_ARGS), occlusion $(occlusion_id) (log: $out/joblog-$exp)"
# each job: hib-run.sh OUT NAME N D MODEL STEPS BETA LOSS MARGIN ("-" loss = the model's default),
# its output kept in runs/NAME/run.log and passed on (GNU parallel prints it when the job ends)
grid_parallel "$out/joblog-$exp" "$configs" \
    'l={6}; [ "$l" = - ] && l=""; mkdir -p '"$out"'/runs/{1}; THREADS='"$threads"' sh '"$HEDGE_ROOT"'/pipelines/hib-run.sh '"$out"' {1} {2} {3} {4} '"$steps"' {5} "$l" {7} > '"$out"'/runs/{1}/run.log 2>&1; rc=$?; cat '"$out"'/runs/{1}/run.log >&2; exit $rc'
# which runs finished is read from their results below, not from parallel's status
case $exp in
appb) sh "$HEDGE_ROOT/pipelines/tables.sh" appb "$out" "$configs" ;;
appd)
    echo "| run (1-D) | adjacent class pairs sharing a digit (of 99) | runs | mean run (classes) |"
    echo "|---|---|---|---|"
    for name in $(cut -d' ' -f1 "$configs"); do
        run=$out/runs/$name
        [ -s "$run/model.ckpt" ] || continue
        make_file "$run/emb-unseen-clean.hs" embed -m "$run/model.ckpt" < "$out/data/N2/unseen-clean.hs"
        make_file "$run/appd.json" centroids --order --json - "$run/emb-clean.hs" "$run/emb-unseen-clean.hs"
        j=$(cat "$run/appd.json")
        echo "| $(basename "$run") | $(echo "$j" | json_get shared_pairs) | $(echo "$j" | json_get runs) | $(echo "$j" | json_get mean_run) |"
    done
    echo "| paper (4 trials): hedged | 76 to 80 | | 4.6 |"
    echo "| paper (4 trials): point | 42 to 74 | | 3.0 |" ;;
*) sh "$HEDGE_ROOT/pipelines/tables.sh" "$exp" "$out" "$configs" ;;
esac
echo
occlusion_note
seeds_note "$configs"
runs_note "$out" "$configs"
write_results "$out" "$configs" "$(grid_file "$out" "results-$exp" tsv)"

check_runs hib "$out" "$configs" "$out/joblog-$exp" || exit 1
