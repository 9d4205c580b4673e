#!/bin/sh
# hib-run.sh OUT NAME N D MODEL STEPS [BETA [LOSS [MARGIN]]]
# Trains one configuration and evaluates it on the clean and corrupt test twins.
#   MODEL: point | mog1 | mog2 | mog4      LOSS: default softcon (point) or vib (mog)
# Writes OUT/runs/NAME/: model.ckpt, train.log, and per condition (clean, corrupt):
#   emb-C.hs (embeddings), pairs-C.hs (10,000 scored test pairs), knn-C.hs (5-NN results),
#   ap-C.json, knn-C.json, tau-ap-C.json, tau-knn-C.json, bins-ap-C.tsv, bins-knn-C.tsv, pr-C.tsv
# and results.tsv: one line per number: name condition metric value (no line for a number that
# is undefined, such as tau when eta is constant).
# Re-running continues where it stopped (train --resume, finished files are kept).
# Environment: THREADS (train threads, default 1), SEED (714), BATCH (pairs per batch, 128).
set -eu
. "$(dirname "$0")/common.sh"
out=$1 name=$2 N=$3 D=$4 model=$5 steps=$6 beta=${7:-1e-4} loss=${8:-} margin=${9:-1}
seed=${SEED:-714} threads=${THREADS:-1} batch=${BATCH:-128}
data=$out/data/N$N run=$out/runs/$name
mkdir -p "$run"
case $model in
point) head="--head point" ;;
mog*) head="--head mog -C ${model#mog}" ;;
*) say "hib-run: unknown model '$model'"; exit 2 ;;
esac
[ -n "$loss" ] && head="$head --loss $loss"
[ -s "$data/train.hs" ] || sh "$HEDGE_ROOT/pipelines/hib-data.sh" "$N" "$data"

if [ ! -e "$run/trained" ]; then
    resume=""
    [ -s "$run/model.ckpt" ] && resume="--resume $run/model.ckpt"
    say "hib-run: $name: training $steps steps"
    batcher -m pairs -b "$batch" -S "$seed" < "$data/train.hs" |
        train -o "$run/model.ckpt" $resume $head -D "$D" --beta "$beta" --margin "$margin" \
            -n "$steps" -S "$seed" -t "$threads" --log "$run/train.log"
    touch "$run/trained"
fi

# result CONDITION METRIC VALUE: one line of results.tsv; a number, or nothing when undefined
result() {
    case $3 in
    null) ;;
    "" | *[!0-9.eE+-]*) say "hib-run: $name: $1 $2 is not a number: '$3'"; exit 1 ;;
    *) printf '%s\t%s\t%s\t%s\n' "$name" "$1" "$2" "$3" >> "$run/results.tsv.tmp" ;;
    esac
}
: > "$run/results.tsv.tmp"
for cond in clean corrupt; do
    make_file "$run/emb-$cond.hs" embed -m "$run/model.ckpt" < "$data/test-$cond.hs"
    make_file "$run/pairs-$cond.hs" pairscore -S "$seed" < "$run/emb-$cond.hs"
    make_file "$run/eta-$cond.hs" pairscore --self -S "$seed" < "$run/emb-$cond.hs"
    # KNN between distributions: sqrt(E||z1 - z2||^2) (for points the plain distance); README
    make_file "$run/knn-$cond.hs" knn -k 5 -d expected < "$run/eta-$cond.hs"
    make_file "$run/ap-$cond.json" apcurve --json -o "$run/pr-$cond.tsv" < "$run/pairs-$cond.hs"
    make_file "$run/knn-$cond.json" knn --summary < "$run/knn-$cond.hs"
    make_file "$run/tau-ap-$cond.json" ktau --json -o "$run/bins-ap-$cond.tsv" < "$run/pairs-$cond.hs"
    make_file "$run/tau-knn-$cond.json" ktau --json -o "$run/bins-knn-$cond.tsv" < "$run/knn-$cond.hs"
    result "$cond" ap "$(json_get ap < "$run/ap-$cond.json")"
    result "$cond" knn "$(json_get accuracy < "$run/knn-$cond.json")"
    # tau is undefined (null) when eta is constant, as for a point model: then no line at all
    result "$cond" tau_ap "$(json_get tau < "$run/tau-ap-$cond.json")"
    result "$cond" tau_knn "$(json_get tau < "$run/tau-knn-$cond.json")"
done
mv "$run/results.tsv.tmp" "$run/results.tsv"
say "hib-run: $name done"
