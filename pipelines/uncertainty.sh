#!/bin/sh
# uncertainty.sh [-j JOBS] [-t THREADS] [-s STEPS] [--seeds K|S1,...] [--only PATTERN]
#                [--features NAME] [--labels NAME] [--split NAME] [--restore RESULTS]... [--report]
#                [remote options: see docs/grids.md] FEATURES.npz OUT
# Does a learned uncertainty know more than the free signals, on your own backbone's features?
# Every probabilistic head hedge has, and the point losses beside them, trained on the same frozen
# features (a numpy .npz: an array of feature vectors [n, F] and one of integer or string labels
# [n]), three training seeds each, each run's embeddings of the held-out items judged by
# evaluate's whole battery leave-one-out: verification AP, 5-NN accuracy, R@1, MAP@R, mAP, NMI,
# and for every learned uncertainty (the variance, HIB's self-mismatch eta) its AUROC for the
# wrong R@1 and 5-NN answers, its AURC and AUGRC, beside the free baselines every model has
# (the nearest distance, the ratio of the two nearest, the votes' entropy, the norm), with the
# paired 95 % bootstrap interval of the learned minus the best free baseline, per seed.
#   Methods (pipelines/uncertainty-run.sh): triplet, ms, arcface, proxy-anchor (point heads: the
#   free baselines alone), hib, pfe, hetriplet, spe, dul-cls, dul-rgs, losspred, scf, vmf-fl, ensemble, mcdropout
#   (each with its learned uncertainty); METHODS="..." (environment) names others or fewer.
#   Split: the items whose integer array NAME (--split NAME, or an array called split when the
#   file has one) is 0 train the heads and those where it is 1 are judged; without one, the
#   field's protocol (CUB, Cars, SOP): the first half of the classes (ascending, rounded up)
#   train, the other half is judged (fromnpz --where). --features NAME: the feature array
#   (default features); --labels NAME: the labels (default class, labels or label). --mu NAME:
#   the backbone's embedding beside its layer before it (PFE's protocol, docs/pfe.md): every head
#   trains on the features array (that layer), and pfe's module reads it too while its mean is
#   NAME, normalised (fromnpz --features F --mu NAME; its D is NAME's dimensions).
#   -s STEPS: training steps of 128 features per run (default 2000); -j JOBS: runs in parallel
#   (default 2, one core each); -t THREADS: training threads per run. --seeds: default 3 (714,
#   715, 716; pipelines/common.sh "Seeds"). --only PATTERN: only the runs whose name matches.
#   --restore, --report, --sshlogin, --sshloginfile, --transfer, --retries: as compare.sh.
# Environment: DIM (the heads' embedding dimensions, 64; pfe's is F), BODY (the head's body, a
# train --body spec, mlp:256), BOOTSTRAP (replicates, 1000), SEED, TRAIN_ARGS, PROGRESS_EVERY.
# Writes OUT/data (train.hs, test.hs: the two parts as features streams; source: what they were
# made from, checked on a rerun), OUT/runs/NAME (NAME.sSEED for the second and third seeds),
# OUT/results-uncertainty.tsv (every number: run config seed set metric value note) and
# OUT/report.md, the page printed on stdout: the methods' battery (mean ± sd over seeds, with
# each run's training and evaluation seconds), the ranking of the learned uncertainties by how
# much they add over the best free baseline (R@1 AUROC), and pipelines/finding.sh's tables.
# Re-running the same command resumes: finished runs are kept, a stopped one resumes its training.
# Exit status 0 when every run finished; else the report of those that did, and 1.
set -eu
. "$(dirname "$0")/common.sh"
usage() { pipeline_help "$HEDGE_ROOT/pipelines/uncertainty.sh" >&2; exit 2; }
# this pipeline's own options and FEATURES.npz (the word before OUT) out of the arguments
fname=features lname="" sname="" mname="" npz="" rest=""
while [ $# -gt 0 ]; do
    case $1 in
    --features | --labels | --split | --mu)
        [ $# -ge 2 ] || usage
        case $1 in --features) fname=$2 ;; --labels) lname=$2 ;; --split) sname=$2 ;; --mu) mname=$2 ;; esac
        shift 2; continue ;;
    esac
    if [ $# = 2 ] && [ -z "$npz" ]; then
        case $1 in -h | --help) ;; *) npz=$1; shift; continue ;; esac
    fi
    rest="$rest $(grid_quote "$1")"
    shift
done
eval "set -- --seeds 3 $rest"
grid_options 2000 2000 "$@"
[ -n "$npz" ] || { say "uncertainty.sh: which features? (FEATURES.npz OUT)"; usage; }
[ -z "$body" ] || { say "uncertainty.sh: --body: the heads' body is BODY in the environment (default mlp:256)"; usage; }
[ "$recipe" = fast ] && [ "$dataset" = mnist ] ||
    { say "uncertainty.sh: --recipe and --data are not this pipeline's (it reads FEATURES.npz)"; usage; }
case $npz in /*) ;; *) npz=$PWD/$npz ;; esac
mkdir -p "$out/data"
data=$out/data

# the two parts, made once: the split by an array, or by the classes
if [ "$report" = 0 ]; then
    [ -r "$npz" ] || { say "uncertainty.sh: cannot read '$npz'"; exit 1; }
    need_programs fromnpz tshow jq parallel || exit 1
    src="$(ls -l "$npz" | awk '{ print $5 }') $npz features=$fname labels=${lname:-default} split=${sname:-auto}${mname:+ mu=$mname}"
    if [ -s "$data/source" ] && [ "$(cat "$data/source")" != "$src" ]; then
        say "uncertainty.sh: $out holds the parts of other features ($(cat "$data/source")), not of $src: give each its own OUT"
        exit 1
    fi
    if [ ! -s "$data/test.hs" ]; then
        set -- -k features --features "$fname"
        [ -n "$lname" ] && set -- "$@" --class "$lname"
        [ -n "$mname" ] && set -- "$@" --skip "$mname" # (pfe's alone take it, below)
        fromnpz "$@" "$npz" | tshow -H | tail -n 1 > "$data/header.json"
        [ -s "$data/header.json" ] || exit 1
        jq -e '[.fields[].name] | index("class") != null' "$data/header.json" > /dev/null ||
            { say "uncertainty.sh: $npz: no labels (an array class, labels or label, or --labels NAME): the battery needs the classes"; exit 1; }
        [ -z "$sname" ] && jq -e '[.fields[].name] | index("split") != null' "$data/header.json" > /dev/null && sname=split
        if [ -n "$sname" ]; then
            tr_where="$sname=0" te_where="$sname=1" how="by the array $sname: 0 trains, 1 is judged"
        else
            fromnpz "$@" "$npz" | tshow -m classes > "$data/classes-all"
            set -- $(cat "$data/classes-all")
            [ $# -ge 4 ] || { say "uncertainty.sh: $npz: $# classes; a split by class needs at least 4 (or give --split NAME)"; exit 1; }
            half=$((($# + 1) / 2)) lo=$1 i=1
            for c; do
                [ "$i" = "$half" ] && a=$c
                [ "$i" = $((half + 1)) ] && b=$c
                hi=$c i=$((i + 1))
            done
            tr_where="class=$lo..$a" te_where="class=$b..$hi"
            how="by class: the $half classes $lo..$a train, the $(($# - half)) classes $b..$hi are judged"
        fi
        set -- -k features --features "$fname"
        [ -n "$lname" ] && set -- "$@" --class "$lname"
        [ -n "$mname" ] && set -- "$@" --skip "$mname"
        make_file "$data/train.hs" fromnpz "$@" --where "${tr_where%%=*}=${tr_where#*=}" "$npz" || exit 1
        make_file "$data/test.hs.part" fromnpz "$@" --where "${te_where%%=*}=${te_where#*=}" "$npz" || exit 1
        if [ -n "$mname" ]; then # pfe's parts: the layer, then the frozen mean (meta mean_dims)
            set -- -k features --features "$fname"
            [ -n "$lname" ] && set -- "$@" --class "$lname"
            make_file "$data/train-mu.hs" fromnpz "$@" --mu "$mname" --where "${tr_where%%=*}=${tr_where#*=}" "$npz" || exit 1
            make_file "$data/test-mu.hs" fromnpz "$@" --mu "$mname" --where "${te_where%%=*}=${te_where#*=}" "$npz" || exit 1
            tshow -m mean_dims "$data/train-mu.hs" > "$data/mean_dims"
        fi
        tshow -H "$data/train.hs" | tail -n 1 | jq -r '.meta.classes.count' > "$data/classes"
        jq -r '.meta.features' "$data/header.json" > "$data/features"
        echo "$how" > "$data/split"
        echo "$src" > "$data/source"
        mv "$data/test.hs.part" "$data/test.hs"
        say "uncertainty.sh: split $how ($(tshow -q "$data/train.hs" | sed -n "/^{\"records\"/p" | jq .records) and $(tshow -q "$data/test.hs" | sed -n "/^{\"records\"/p" | jq .records) items)"
    fi
fi

mkdir -p "$out"
configs=$(grid_file "$out" "configs-uncertainty" txt)
for m in ${METHODS:-triplet ms arcface proxy-anchor hib pfe hetriplet spe dul-cls dul-rgs losspred scf vmf-fl ensemble mcdropout}; do echo "$m $m"; done > "$configs.tmp"
mv "$configs.tmp" "$configs"
seed_configs "$configs" || usage
STEPS=$steps
export STEPS
if [ "$report" = 0 ]; then
    say "uncertainty: $(wc -l < "$configs") runs ($(awk '{ print $2 }' "$configs" | sort -u | wc -l) methods), $steps steps each, $jobs at a time with $threads threads (log: $out/joblog-uncertainty; progress every ${PROGRESS_EVERY:-300} s)"
    grid_progress uncertainty "$out" "$configs" "$steps" $$ &
    prog=$!
fi
grid_parallel "$out/joblog-uncertainty" "$configs" \
    'mkdir -p '"$out"'/runs/{1}; THREADS='"$threads"' sh '"$HEDGE_ROOT"'/pipelines/uncertainty-run.sh '"$out"' {1} {2} > '"$out"'/runs/{1}/run.log 2>&1; rc=$?; tail -n 3 '"$out"'/runs/{1}/run.log >&2; exit $rc'
[ "$report" = 0 ] && { kill "$prog" 2> /dev/null || true; wait "$prog" 2> /dev/null || true; }
results=$(grid_file "$out" "results-uncertainty" tsv)
write_results "$out" "$configs" "$results"
report_md=$(grid_file "$out" report md)
{
    echo "## The uncertainty of every method on $(basename "$npz")"
    echo
    echo "Frozen features, split $(cat "$data/split" 2> /dev/null || echo "(not made)"); $steps steps of 128 features per run; the held-out items judged leave-one-out."
    echo
    awk -F'\t' -f "$HEDGE_ROOT/pipelines/uncertainty.awk" "$results"
    echo
    if grep -q '	d:' "$results"; then
        echo "### Each learned source beside the best free baseline (pipelines/finding.sh)"
        echo
        sh "$HEDGE_ROOT/pipelines/finding.sh" "$(basename "$npz" .npz)=$results"
        echo
    fi
    seeds_note "$configs"
    runs_note "$out" "$configs"
} > "$report_md.tmp"
mv "$report_md.tmp" "$report_md"
cat "$report_md"
check_runs uncertainty "$out" "$configs" "$out/joblog-uncertainty" || exit 1
