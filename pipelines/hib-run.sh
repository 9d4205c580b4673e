#!/bin/sh
# hib-run.sh OUT NAME N D MODEL STEPS [BETA [LOSS [MARGIN]]]
# Trains one configuration and evaluates it on the clean and corrupt test twins.
#   MODEL: point | mog1 | mog2 | mog4      LOSS: default softcon (point) or vib (mog)
# Writes OUT/runs/NAME/: model.ckpt, train.log, and per condition (clean, corrupt, and the one-sided
# corrupt protocols of hib-eval.sh, clean-corrupt and corrupt-clean):
#   emb-C.hs (embeddings), pairs-C.hs (10,000 scored test pairs), knn-C.hs (5-NN results),
#   ap-C.json, knn-C.json, tau-ap-C.json, tau-knn-C.json, bins-ap-C.tsv, bins-knn-C.tsv, pr-C.tsv
# and results.tsv: one line per number: name condition metric value (no line for a number that
# is undefined, such as tau when eta is constant).
# Re-running continues where it stopped (train --resume, finished files are kept).
# Environment: THREADS (train threads, default 1), SEED (714; a run named NAME.sS trains with seed S, pipelines/common.sh "Seeds"), BATCH (pairs per batch, 128),
# TRAIN_ARGS (more train options: the recipe, e.g. "--lr 3e-3 --warmup 500 --decay cosine"),
# OCCLUDE_SHAPE and TRAIN_OCCLUSION (pipelines/common.sh; recorded in OUT/runs/NAME/occlusion).
set -eu
. "$(dirname "$0")/common.sh"
out=$1 name=$2 N=$3 D=$4 model=$5 steps=$6 beta=${7:-1e-4} loss=${8:-} margin=${9:-1}
seed=${SEED:-714} tseed=$(train_seed "$name") threads=${THREADS:-1} batch=${BATCH:-128}
data=$out/data/N$N run=$out/runs/$name
mkdir -p "$run"
run_restored "$run" && { say "hib-run: $name: kept, restored from $(cat "$run/restored") (--restore)"; exit 0; }
case $model in
point) head="--head point" ;;
mog*) head="--head mog -C ${model#mog}" ;;
*) say "hib-run: unknown model '$model'"; exit 2 ;;
esac
[ -n "$loss" ] && head="$head --loss $loss"
[ -s "$data/train.hs" ] || sh "$HEDGE_ROOT/pipelines/hib-data.sh" "$N" "$data"
occlusion_check "$data" || exit 1
run_occlusion "$run" || exit 1

if [ ! -e "$run/trained" ]; then
    resume=""
    [ -s "$run/model.ckpt" ] && resume="--resume $run/model.ckpt"
    say "hib-run: $name: training $steps steps, occlusion $(occlusion_id)"
    train_batches "$data" "$tseed" -m pairs -b "$batch" |
        train -o "$run/model.ckpt" $resume $head -D "$D" --beta "$beta" --margin "$margin" \
            -n "$steps" -S "$tseed" -t "$threads" --log "$run/train.log" ${TRAIN_ARGS:-}
    touch "$run/trained"
fi

sh "$HEDGE_ROOT/pipelines/hib-eval.sh" "$name" "$run/model.ckpt" "$data" "$run" clean corrupt clean-corrupt corrupt-clean > "$run/results.tsv.tmp"
mv "$run/results.tsv.tmp" "$run/results.tsv"
say "hib-run: $name done"
