#!/bin/sh
# tta.sh OUT: time to accuracy, a benchmark (not a test): how verification AP and KNN accuracy
# grow with training minutes on this machine's two cores. Trains N=2, D=2 point, MoG-1 and MoG-2
# embeddings on the full MNIST one after the other, each with both cores, keeping a checkpoint
# every SNAP steps; then evaluates every snapshot as the paper does (pipelines/hib-eval.sh) and
# writes
#   OUT/tta.tsv   model step minutes condition metric value
#                 (minutes: training wall-clock at that snapshot, read from train.log; the time
#                 spent evaluating is not counted)
#   OUT/tta.png   AP and KNN accuracy against minutes, clean and corrupt test images, the
#                 paper's numbers (Table 1, 500,000 steps) as dashed lines
# Calling it again continues: trainings resume, evaluated snapshots are kept.
# Environment:
#   MODELS      "point mog1 mog2"
#   STEPS       training steps per model (default 20000)
#   SNAP        steps between snapshots (default STEPS / 10, a multiple of 50)
#   BATCH       pairs per batch (128, the paper's)
#   TRAIN_ARGS  the recipe: more train options ("--lr 3e-3 --warmup 1000 --decay cosine")
#   THREADS     train threads (2)
#   HOLDOUT     K > 0: train without the last K MNIST training digits and evaluate on the
#               validation twins made of them too (val-clean, val-corrupt), for choosing a
#               recipe without looking at the test set
#   CONDS       conditions to evaluate (default "clean corrupt", plus the val twins)
#   OCCLUDE_SHAPE, TRAIN_OCCLUSION  the occlusion (pipelines/common.sh: rect, per-use)
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
HEDGE_ROOT=$root
. "$root/pipelines/common.sh"
out=${1:?usage: tta.sh OUT}
mkdir -p "$out"
out=$(cd "$out" && pwd)
models=${MODELS:-point mog1 mog2}
steps=${STEPS:-20000}
snap=${SNAP:-$((steps / 10 / 50 * 50))}
[ "$snap" -ge 50 ] || snap=50
batch=${BATCH:-128} threads=${THREADS:-2} seed=${SEED:-714}
conds=${CONDS:-clean corrupt}
[ "${HOLDOUT:-0}" != 0 ] && [ -z "${CONDS:-}" ] && conds="$conds val-clean val-corrupt"
data=$out/data
say "tta: $models, $steps steps of $batch pairs each, a snapshot every $snap, $threads threads; recipe: ${TRAIN_ARGS:-the paper's (Adam 1e-3, constant)}"
sh "$root/pipelines/hib-data.sh" 2 "$data"

for m in $models; do
    run=$out/$m
    mkdir -p "$run"
    case $m in
    point) head="--head point" ;;
    mog*) head="--head mog -C ${m#mog}" ;;
    *) say "tta: unknown model '$m'"; exit 2 ;;
    esac
    if [ ! -e "$run/trained" ]; then
        resume=""
        [ -s "$run/model.ckpt" ] && resume="--resume $run/model.ckpt"
        say "tta: training $m"
        train_batches "$data" "$seed" -m pairs -b "$batch" |
            train -o "$run/model.ckpt" $resume $head -D 2 -n "$steps" -S "$seed" -t "$threads" \
                --snapshot-every "$snap" --log "$run/train.log" ${TRAIN_ARGS:-}
        touch "$run/trained"
    fi
    # minutes of training at each logged step; a resumed run's clock starts again at 0, so the
    # segments are added up
    awk -F'\t' 'NR > 1 { if ($9 + 0 < last) off += last; last = $9 + 0; printf "%d\t%.4f\n", $1, (off + $9) / 60 }' \
        "$run/train.log" > "$run/minutes.tsv"
    for ck in "$run"/model.step*.ckpt; do
        [ -e "$ck" ] || continue
        s=$(basename "$ck" .ckpt)
        s=${s#model.step}
        s=$(echo "$s" | sed 's/^0*//')
        [ -s "$run/eval-$s/results.tsv" ] && continue
        say "tta: evaluating $m at step $s"
        mkdir -p "$run/eval-$s"
        TAU=0 SEED=$seed sh "$root/pipelines/hib-eval.sh" "$m $s" "$ck" "$data" "$run/eval-$s" $conds \
            > "$run/eval-$s/results.tsv.tmp"
        mv "$run/eval-$s/results.tsv.tmp" "$run/eval-$s/results.tsv"
        # the evaluation's streams are large and not needed again: keep the numbers
        rm -f "$run/eval-$s"/*.hs
    done
done

# the table: model step minutes condition metric value
{
    printf 'model\tstep\tminutes\tcondition\tmetric\tvalue\n'
    for m in $models; do
        cat "$out/$m"/eval-*/results.tsv 2>/dev/null | awk -F'\t' -v mf="$out/$m/minutes.tsv" '
            BEGIN { while ((getline l < mf) > 0) { split(l, f, "\t"); t[f[1]] = f[2] } }
            { split($1, ms, " "); printf "%s\t%s\t%s\t%s\t%s\t%s\n", ms[1], ms[2], t[ms[2]], $2, $3, $4 }'
    done | sort -t"$(printf '\t')" -k1,1 -k2,2n
} > "$out/tta.tsv.tmp"
mv "$out/tta.tsv.tmp" "$out/tta.tsv"

# the figure: AP and KNN accuracy, clean and corrupt, against minutes; the paper's as lines
command -v gnuplot > /dev/null || { say "tta: no gnuplot: only $out/tta.tsv"; exit 0; }
paper=$root/pipelines/paper/hib.tsv
pv() { awk -F'\t' -v m="$1" -v c="$2" -v k="$3" '$1 == "table1" && $2 == "N2-D2-" m "-b1e-4" && $3 == c && $4 == k { print $5 }' "$paper"; }
plots=""
for metric in ap knn; do
    for cond in clean corrupt; do
        p=""
        i=1
        for m in $models; do
            awk -F'\t' -v m="$m" -v c="$cond" -v k="$metric" '$1 == m && $4 == c && $5 == k { print $3, $6 }' "$out/tta.tsv" > "$out/plot-$m-$cond-$metric.dat"
            p="$p '$out/plot-$m-$cond-$metric.dat' using 1:2 with linespoints lc $i pt 7 ps 0.6 title '$m',"
            v=$(pv "$m" "$cond" "$metric")
            [ -n "$v" ] && p="$p $v with lines lc $i dt 2 title '$m paper',"
            i=$((i + 1))
        done
        label=$([ $metric = ap ] && echo "verification AP" || echo "KNN accuracy")
        key=$([ $cond = clean ] && echo "bottom right" || echo "center right")
        plots="$plots
set key $key
set title '$label, $cond test images'
set ylabel '$label'
plot ${p%,}"
    done
done
gnuplot <<GP
set terminal pngcairo size 1200,900 font ",10"
set output '$out/tta.png'
set multiplot layout 2,2 title 'Time to accuracy: N=2, D=2 on the full MNIST, two cores (recipe: ${TRAIN_ARGS:-paper})'
set xlabel 'training minutes (both cores)'
set xrange [0:*]
set grid
$plots
unset multiplot
GP
say "tta: $out/tta.tsv and $out/tta.png"
