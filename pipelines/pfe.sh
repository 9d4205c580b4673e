#!/bin/sh
# pfe.sh [--quick | --full] [-j JOBS] [-t THREADS] [-s STEPS] [--recipe R] [--data mnist|fashion]
#        [--shape rect|square] [--seeds K|S1,...] [--only PATTERN]
#        [--restore RESULTS]... [--report] [remote options: see docs/grids.md] OUT
# PFE's protocol on a frozen backbone (Shi & Jain 2019; issue 35, docs/pfe.md), on the 2-digit
# data: hedge's point model (conv body, triplet loss, D = DIM, 16) is trained, frozen, and its
# embeddings of the training set (occluded once per digit with p = 0.2, two draws, each item
# flagged `corrupt` when a digit is occluded) and of the test twins become `features` streams
# (embed | tonpz | fromnpz -k features); PFE's uncertainty module (pfe: the mean is the frozen
# embedding, L2-normalised, the variance learned by the mutual likelihood score) and HIB's head
# (hibhead: MoG-1, VIB) train on those features; HIB MoG-1 trained end to end (hib) on the
# backbone's images and steps stands beside them (pipelines/pfe-run.sh). Each is evaluated on the
# seen and unseen test twins (pipelines/pfe-eval.sh): verification AP on clean, corrupt and mixed
# (clean x corrupt) pairs by the L2 distance and the cosine of the means, by MLS and by the
# model's own match probability; 5-NN accuracy by the same rankings; on the mixed set, whether the
# variance tells the corrupt images from the clean ones (AUROC, tau) and knows KNN's errors (tau,
# AURC); every set through evaluate's uncertainty section, each learned variance beside the best
# free baseline (pipelines/finding.sh). Prints the tables (markdown) on stdout.
#   --quick: 3,000 steps (minutes); --full: 30,000 steps of 128 images for the backbone and hib
#   (the fast recipe reaches HIB's numbers at 180,000 steps of 256 images; a D = 16 triplet
#   backbone is good well before: docs/pfe.md); -s STEPS overrides. The heads train HEAD_STEPS
#   steps of 128 features: 100,000 with --full (PFE's head needs them on these features: its
#   variances start near 1e8 and take 20,000 to 40,000 steps to come down, docs/pfe.md), else
#   10,000.
#   -j JOBS: runs in parallel (default 2, one core each); -t THREADS: training threads per run.
#   The backbone and hib train first, then the two heads on the backbone of their seed (two
#   grids: OUT/joblog-pfe-1, OUT/joblog-pfe-2).
#   --recipe fast (default) | paper: Adam at 3e-3 (the triplet backbone 1e-3) with warm-up over 5 %
#   of the steps and cosine decay to 1 %, or Adam 1e-3 constant; TRAIN_ARGS adds train options.
#   --data mnist (default) | fashion: the composites' data set (pipelines/hib-data.sh).
#   --shape rect (default) | square: the occlusion's patches (pipelines/common.sh); the data folder
#   records it and refuses another: give each its own OUT. The training images are occluded
#   afresh at every use (--train-occlusion per-use; fixed is refused: the frozen features draw
#   their own occlusion of the clean training set).
#   --seeds K | S1,S2,...: each model trained K times, with the training seeds SEED (714) and the
#   next K - 1, or those listed; a head of seed S trains on the backbone of seed S; the tables
#   print the mean and "± sd" over the seeds; run NAME.sSEED (pipelines/common.sh "Seeds").
#   --only PATTERN: only the runs whose name matches (grep -E), e.g. --only '^(backbone|pfe)'
#   (a head needs its backbone's features in OUT). --restore RESULTS: the runs that a results file
#   of this pipeline holds are taken from it, not trained again (pipelines/common.sh "Restoring
#   runs"; a restored backbone has no features: its heads must be restored too). --report: trains
#   nothing; prints the tables of the runs OUT holds so far and how many finished.
#   --sshlogin S, --sshloginfile F, --transfer, --retries N: run the jobs elsewhere (docs/grids.md).
# Environment: DIM (the embedding's dimensions, 16; the protocol's range 16 to 64; give each its
# own OUT: run names do not say D), HEAD_STEPS (give each its own OUT too), SEED, TRAIN_ARGS.
# Runs land in OUT/runs/NAME (backbone, pfe, hibhead, hib; NAME.sSEED for other seeds) with their
# logs in OUT/runs/NAME/run.log, the data in OUT/data/N2 (the test twins flagged `corrupt` in
# OUT/data/N2/flagged), every number in OUT/results-pfe.tsv. Re-running the same command resumes.
# Exit status: 0 only when every run finished; otherwise the tables of those that did, each
# failed run named on stderr with the last lines of its log, and 1.
set -eu
. "$(dirname "$0")/common.sh"
usage() { sed -n '2,50p' "$HEDGE_ROOT/pipelines/pfe.sh" | sed 's/^# \{0,1\}//' >&2; exit 2; }
grid_options 3000 30000 "$@"
[ -z "$body" ] || { say "pfe.sh: --body: the protocol fixes its bodies (the conv backbone, mlp:64 heads)"; usage; }
[ "$TRAIN_OCCLUSION" = per-use ] ||
    { say "pfe.sh: --train-occlusion $TRAIN_OCCLUSION: the protocol occludes the clean training set itself (per-use for the backbone, two fixed draws for the features)"; usage; }
hdef=10000
[ "$preset" = full ] && hdef=100000
dim=${DIM:-16} hsteps=${HEAD_STEPS:-$hdef}
for v in "DIM $dim" "HEAD_STEPS $hsteps"; do
    case ${v#* } in '' | *[!0-9]* | 0) say "pfe.sh: ${v%% *}: not a positive number: '${v#* }'"; usage ;; esac
done
RECIPE=$recipe
export RECIPE
mkdir -p "$out"
configs=$(grid_file "$out" "configs-pfe" txt)
for m in backbone pfe hibhead hib pfebn; do echo "$m $m"; done > "$configs.tmp"
mv "$configs.tmp" "$configs"
seed_configs "$configs" || usage
grid_data pfe "$configs" || exit 1
# the test twins again, each item flagged `corrupt` (the same images: patches depend on SEED and
# the id only), for the evaluations to split by
fl=$out/data/N2/flagged
if [ "$report" = 0 ]; then
    mkdir -p "$fl"
    for s in seen:test unseen:unseen; do
        make_file "$fl/${s%%:*}-clean.hs" occlude -p 0 --corrupt --shape "$OCCLUDE_SHAPE" -S "${SEED:-714}" < "$out/data/N2/${s#*:}.hs"
        make_file "$fl/${s%%:*}-corrupt.hs" occlude -p 1 --corrupt --shape "$OCCLUDE_SHAPE" -S "${SEED:-714}" < "$out/data/N2/${s#*:}.hs"
    done
    say "pfe: $(wc -l < "$configs") runs, $steps steps each (heads $hsteps), D = $dim, $jobs at a time with $threads threads, recipe $recipe, occlusion $(occlusion_id) (logs: $out/joblog-pfe-1, -2)"
fi
# first the backbones and HIB, then the heads on the backbone of their seed
for phase in 1 2; do
    pc=$(grid_file "$out" "configs-pfe-$phase" txt)
    if [ $phase = 1 ]; then awk '$2 == "backbone" || $2 == "hib"' "$configs"; else awk '$2 == "pfe" || $2 == "hibhead" || $2 == "pfebn"'  "$configs"; fi > "$pc.tmp"
    mv "$pc.tmp" "$pc"
    [ -s "$pc" ] || continue
    grid_parallel "$out/joblog-pfe-$phase" "$pc" \
        'mkdir -p '"$out"'/runs/{1}; THREADS='"$threads"' DIM='"$dim"' HEAD_STEPS='"$hsteps"' RECIPE='"$recipe"' sh '"$HEDGE_ROOT"'/pipelines/pfe-run.sh '"$out"' {1} {2} '"$steps"' > '"$out"'/runs/{1}/run.log 2>&1; rc=$?; cat '"$out"'/runs/{1}/run.log >&2; exit $rc'
done
sh "$HEDGE_ROOT/pipelines/pfe-tables.sh" "$out" "$configs" "$steps" "$hsteps" "$dim" "$recipe" "$dataset"
echo
if grep -q '	d:' "$out"/runs/*/results.tsv 2> /dev/null; then
    echo "### Does a learned uncertainty know more than the free signals? (pipelines/finding.sh)"
    echo
    sh "$HEDGE_ROOT/pipelines/finding.sh" "pfe $dataset=$out"
    echo
fi
occlusion_note
seeds_note "$configs"
runs_note "$out" "$configs"
write_results "$out" "$configs" "$(grid_file "$out" "results-pfe" tsv)"
check_runs pfe "$out" "$configs" "$out/joblog-pfe-1 and -2" || exit 1
