#!/bin/sh
# spe.sh EXPERIMENT [--quick | --full] [-j JOBS] [-t THREADS] [-s STEPS] [--recipe R] [--data D]
#        [--shape rect|square] [--train-occlusion per-use|fixed] [--seeds K|S1,...] [--only PATTERN] [--restore RESULTS]... [--report] [--sshlogin S]... [--sshloginfile F] [--transfer] [--retries N] OUT
# The Stochastic Prototype Embeddings paper (Scott et al. 2019) on N-digit MNIST: PN and SPE
# trained on episodes, HIB and point embeddings on pairs with as many images, all evaluated by
# few-shot classification (fewshot) on the seen and unseen test classes with clean and corrupt
# support and query, and by KNN accuracy as Oh et al. (whose numbers the paper's point and HIB
# columns are); the paper's Table 2 beside ours (pipelines/spe-tables.sh).
#   EXPERIMENT: table2 (N in {2, 3} x D in {2, 3} x {point, hib, pn, spe}: the paper's Table 2),
#               demo (N = 2, D = 2: the four models)
#   --quick: 300 episodes per model, 100 test episodes (minutes); --full: 12,000 episodes per
#   model (N = 2: 46 million images, as many as hib.sh --full's 180,000 pair steps), 1,000 test
#   episodes as the paper. -s sets any other number of episodes (REPEATS the test episodes).
#   -j JOBS: configurations in parallel (default 2, one core each); -t THREADS: training threads.
#   --recipe fast (default) | paper: fast = Adam 3e-3 peak, warm-up over the first 5 % of each
#   model's steps, cosine decay to 1 %; paper = Adam 1e-3 constant (the paper halves it every 50 epochs
#   and stops early on a validation split: not done here). TRAIN_ARGS adds train options.
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
# Runs land in OUT/runs/NAME (spe-run.sh), the job log in OUT/joblog-spe-EXPERIMENT, the data in
# OUT/data/N* (shared with hib.sh: the same OUT can hold both). Re-running the same command
# resumes: finished runs are kept, an interrupted training continues from its checkpoint.
# Prints the tables (markdown) on stdout; exits 1, naming each failed run with the end of its
# log, when a run did not finish.
set -eu
. "$(dirname "$0")/common.sh"
usage() { sed -n '2,43p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
[ $# -ge 2 ] || usage
exp=$1; shift
grid_options 300 12000 "$@"
repeats=100
[ "$preset" = full ] && repeats=1000
repeats=${REPEATS:-$repeats}
mkdir -p "$out"
RECIPE=$recipe REPEATS=$repeats
export RECIPE REPEATS
configs=$(grid_file "$out" "configs-spe-$exp" txt)
: > "$configs.tmp"
case $exp in
table2) for N in 2 3; do for D in 2 3; do for m in point hib pn spe; do
        echo "N$N-D$D-$m $N $D $m" >> "$configs.tmp"; done; done; done ;;
demo) for m in point hib pn spe; do echo "N2-D2-$m 2 2 $m" >> "$configs.tmp"; done ;;
*) say "spe.sh: unknown experiment '$exp'"; usage ;;
esac
mv "$configs.tmp" "$configs"
seed_configs "$configs" || usage

grid_data spe "$configs" || exit 1
[ "$report" = 1 ] || say "spe: $exp: $(wc -l < "$configs") configurations, $steps episodes each (pair models: as many images), $repeats test episodes, $jobs at a time with $threads threads, recipe $recipe (more train options:${TRAIN_ARGS:- none}) (log: $out/joblog-spe-$exp)"
grid_parallel "$out/joblog-spe-$exp" "$configs" \
    'mkdir -p '"$out"'/runs/{1}; THREADS='"$threads"' sh '"$HEDGE_ROOT"'/pipelines/spe-run.sh '"$out"' {1} {2} {3} {4} '"$steps"' > '"$out"'/runs/{1}/run.log 2>&1; rc=$?; cat '"$out"'/runs/{1}/run.log >&2; exit $rc'
# which runs finished is read from their results below
echo "## SPE paper, Table 2: few-shot accuracy on N-digit MNIST (ours / paper)"
echo
echo "Ours: $steps training episodes per model (pair models: as many images), recipe $recipe; $repeats random test episodes of every class of the split, 50 support and 15 query images per class; SPE scored by its naive sampler (200 samples), the others by the nearest prototype of their means; every model also by KNN accuracy (k = 5) over the test images with the corrupt ones on one side only (the corrupt images as gallery for corrupt support, as queries for a corrupt query; twins excluded), which is what the paper's point and HIB columns are (Oh et al.'s numbers: docs/spe.md). The paper: appendix D.2, its own N-digit MNIST data (same generator, other draws), trained to early stopping."
echo
occlusion_note
sh "$HEDGE_ROOT/pipelines/spe-tables.sh" "$out" "$configs"
echo
seeds_note "$configs"
runs_note "$out" "$configs"
write_results "$out" "$configs" "$(grid_file "$out" "results-spe-$exp" tsv)"
check_runs spe "$out" "$configs" "$out/joblog-spe-$exp" || exit 1
