#!/bin/sh
# spe-run.sh OUT NAME N D MODEL STEPS: trains one configuration of the SPE paper's N-digit MNIST
# comparison (its Table 2) and evaluates it by few-shot classification.
#   MODEL: pn    Prototypical Networks: point embeddings, loss proto, on episodes
#          spe   Stochastic Prototype Embeddings: one Gaussian per image, loss spe (intersection
#                sampler, one sample per query), on episodes
#          hib   HIB: one Gaussian per image, loss vib, on pairs (128 per batch)
#          point point embeddings, loss softcon, on pairs (the paper's "contrastive" row)
#   Episodes as the paper trains them: N = 2: all 70 training classes x 50 support; N = 3: 100
#   classes (cycling through the 700) x 20 support; QUERIES (default 5; the paper does not say for
#   N-digit MNIST, its Omniglot episodes have 5) queries per class. STEPS counts episodes; the
#   pair models train on as many images: STEPS x episode images / 256 steps of 128 pairs.
# Evaluation (the paper's protocol): R random test episodes (REPEATS, default 1000) of every class
# of the split, 50 support images per class and 15 queries (fewshot -k 50 -q 15), on the seen and
# unseen test classes, with clean support and clean query (cc), corrupt support and clean query
# (xc), clean support and corrupt query (cx); twins never meet in an episode. The scorer: spe's
# naive sampler (200 samples, the paper's evaluation) for spe, the nearest prototype of the means
# for the others.
# Every model is also scored as Oh et al. score HIB, which is what the paper's point and HIB
# columns are (docs/spe.md): KNN accuracy (k = 5; hib-eval.sh) over the split's test images,
# leave-one-out among the clean ones (cc), clean queries against the corrupt ones as gallery
# (xc), corrupt queries against the clean ones (cx), each query's twin excluded.
# Writes OUT/runs/NAME/: model.ckpt, train.log, emb-{seen,unseen}-{clean,corrupt}.hs,
# fs-SPLIT-COND.json, knn/ (hib-eval.sh's files), and results.tsv: lines `NAME SPLIT-COND METRIC
# VALUE` (METRIC: acc, ci95, and acc_pn, acc_spe_naive, acc_spe_closed for every scorer that
# applies; knn).
# Re-running continues where it stopped. Environment: THREADS (train threads, 1), SEED (714; a run named NAME.sS trains with seed S, pipelines/common.sh "Seeds"),
# RECIPE (fast, the default: Adam 3e-3 peak, warm-up over the first 5 % of this model's steps,
# cosine decay to 1 %; paper: Adam 1e-3 constant), TRAIN_ARGS (more train options), QUERIES,
# REPEATS, OCCLUDE_SHAPE and TRAIN_OCCLUSION (pipelines/common.sh).
set -eu
. "$(dirname "$0")/common.sh"
out=$1 name=$2 N=$3 D=$4 model=$5 steps=$6
seed=${SEED:-714} tseed=$(train_seed "$name") threads=${THREADS:-1} Q=${QUERIES:-5} R=${REPEATS:-1000}
data=$out/data/N$N run=$out/runs/$name
mkdir -p "$run"
run_restored "$run" && { say "spe-run: $name: kept, restored from $(cat "$run/restored") (--restore)"; exit 0; }
case $N in
2) ep="-s 50 -q $Q" ep_images=$((70 * (50 + Q))) ;;
3) ep="-c 100 -s 20 -q $Q" ep_images=$((100 * (20 + Q))) ;;
*) say "spe-run: N = $N: the SPE paper has N = 2 and 3"; exit 2 ;;
esac
pair_steps=$(( (steps * ep_images + 255) / 256 ))
case $model in
pn) batches="-m episodes $ep" net="--head point --loss proto" n=$steps score=pn ;;
spe) batches="-m episodes $ep" net="--head mog -C 1 --loss spe" n=$steps score=spe-naive ;;
hib) batches="-m pairs -b 128" net="--head mog -C 1 --loss vib" n=$pair_steps score=pn ;;
point) batches="-m pairs -b 128" net="--head point --loss softcon" n=$pair_steps score=pn ;;
*) say "spe-run: unknown model '$model' (pn, spe, hib, point)"; exit 2 ;;
esac
case ${RECIPE:-fast} in
fast) recipe="--recipe fast" ;; # (train --recipe: lib/training/optim.h)
paper) recipe="" ;;
*) say "spe-run: unknown recipe '$RECIPE' (fast or paper)"; exit 2 ;;
esac
[ -s "$data/train.hs" ] || sh "$HEDGE_ROOT/pipelines/hib-data.sh" "$N" "$data"
occlusion_check "$data" || exit 1
run_occlusion "$run" || exit 1

if [ ! -e "$run/trained" ]; then
    resume=""
    [ -s "$run/model.ckpt" ] && resume="--resume $run/model.ckpt"
    say "spe-run: $name: training $n steps (batcher $batches, occlusion $(occlusion_id))"
    train_batches "$data" "$tseed" $batches |
        train -o "$run/model.ckpt" $resume $net -D "$D" -n "$n" -S "$tseed" -t "$threads" \
            --log "$run/train.log" $recipe ${TRAIN_ARGS:-}
    touch "$run/trained"
fi

for split in seen unseen; do
    for c in clean corrupt; do
        src=$data/test-$c.hs
        [ $split = unseen ] && src=$data/unseen-$c.hs
        make_file "$run/emb-$split-$c.hs" embed -m "$run/model.ckpt" < "$src"
    done
done
: > "$run/results.tsv.tmp"
for split in seen unseen; do
    for cond in cc xc cx; do
        case $cond in
        cc) s=clean q=clean ;;
        xc) s=corrupt q=clean ;;
        cx) s=clean q=corrupt ;;
        esac
        j=$run/fs-$split-$cond.json
        # a score of another number of episodes (an earlier call's REPEATS) is not this call's
        if [ -s "$j" ] && [ "$(json_get episodes < "$j")" != "$R" ]; then
            say "spe-run: $name: $j was scored on $(json_get episodes < "$j") episodes, not $R: scored again"
            rm -f "$j"
        fi
        if [ ! -s "$j" ]; then
            fewshot -s "$run/emb-$split-$s.hs" -k 50 -q 15 -R "$R" -S "$seed" --score "$score" --json "$j.tmp" \
                "$run/emb-$split-$q.hs" > /dev/null
            mv "$j.tmp" "$j"
        fi
        # the chosen scorer's accuracy and interval, then every scorer's accuracy
        key=$(echo "$score" | tr - _)
        for m in pn spe_naive spe_closed; do
            v=$(jq -r --arg m "$m" '.[$m] // empty | "\(.accuracy) \(.ci95)"' "$j")
            [ -n "$v" ] || continue
            set -- $v
            printf '%s\t%s-%s\tacc_%s\t%s\n' "$name" "$split" "$cond" "$m" "$1" >> "$run/results.tsv.tmp"
            if [ "$m" = "$key" ]; then
                printf '%s\t%s-%s\tacc\t%s\n' "$name" "$split" "$cond" "$1" >> "$run/results.tsv.tmp"
                printf '%s\t%s-%s\tci95\t%s\n' "$name" "$split" "$cond" "$2" >> "$run/results.tsv.tmp"
            fi
        done
    done
done
# Oh et al.'s reading, which the paper's point and HIB columns are (docs/spe.md): KNN accuracy
# (k = 5, hib-eval.sh), leave-one-out among the clean images (cc), clean queries against the
# corrupt images as gallery (xc), corrupt queries against the clean gallery (cx), twins excluded
for split in seen unseen; do
    c=clean x=corrupt
    [ $split = unseen ] && c=unseen-clean x=unseen-corrupt
    TAU=0 SEED=$seed sh "$HEDGE_ROOT/pipelines/hib-eval.sh" "$name" "$run/model.ckpt" "$data" "$run/knn" \
        "$c" "$c-$x" "$x-$c" > "$run/knn.tsv.tmp"
    awk -F'\t' -v OFS='\t' -v s=$split -v c=$c -v x=$x '$3 == "knn" {
        print $1, s "-" ($2 == c ? "cc" : $2 == c "-" x ? "xc" : "cx"), "knn", $4 }' "$run/knn.tsv.tmp" >> "$run/results.tsv.tmp"
done
rm -f "$run/knn.tsv.tmp"
mv "$run/results.tsv.tmp" "$run/results.tsv"
say "spe-run: $name done"
