#!/bin/sh
# metric-run.sh OUT NAME N D MODEL STEPS: trains one metric-learning configuration on P x K
# batches of N-digit MNIST and evaluates it by retrieval and disentanglement (the evaluations of
# the heteroscedastic-triplet and F-statistic papers; pipelines/hetriplet.sh and fstat.sh).
#   MODEL: triplet      soft-margin triplet loss, semi-hard mining (Taha et al.'s baseline)
#          hetriplet    the heteroscedastic triplet loss on the iso head (Taha et al.)
#          triplet-all  soft-margin triplet loss over all triplets of the batch (the F-statistic
#                       paper's triplet baseline)
#          fstat        the F-statistic loss, d = 2 (the paper's Figure 3)
#   Batches: batcher -m pk, P = 16 classes x K = 8 images (128 images per step; the papers use
#   12-18 classes x 4-10 images). STEPS steps.
# Evaluation, leave-one-out retrieval (`retrieve`, Recall@1,2,4,8, P@1, R-precision, MAP@R, mAP)
# on four sets: the seen and unseen test classes, clean (no digit occluded) and noisy (each digit
# occluded with p = 0.5: the corrupt images are the "noisy data"). On the noisy sets, gallery
# cleaning: the 20 % most uncertain gallery items dropped (models with an uncertainty) against
# 20 % at random (5 draws); and, for models with an uncertainty, Kendall's tau between the
# uncertainty (20 bins) and per-query AP (`ktau`) and the Pearson correlation of the two.
# Disentanglement (`disentangle`) on the clean seen and unseen sets: per digit position, the mean
# over digit values of the AUC of the best single embedding dimension.
# Writes OUT/runs/NAME/: model.ckpt, train.log, emb-SET.hs, ret-SET.hs, ret-SET.json,
# tau-SET.json, dis-SET.json, and results.tsv: lines `NAME SET METRIC VALUE`.
# Re-running continues where it stopped. Environment: THREADS (train threads, 1), SEED (714; a run named NAME.sS trains with seed S, pipelines/common.sh "Seeds"),
# RECIPE (fast, the default: Adam 3e-3 peak (1e-3 for triplet and hetriplet), warm-up over the
# first 5 % of the steps, cosine decay to 1 %; paper: Adam 1e-3 constant), TRAIN_ARGS,
# OCCLUDE_SHAPE and TRAIN_OCCLUSION (pipelines/common.sh).
set -eu
. "$(dirname "$0")/common.sh"
out=$1 name=$2 N=$3 D=$4 model=$5 steps=$6
seed=${SEED:-714} tseed=$(train_seed "$name") threads=${THREADS:-1}
data=$out/data/N$N run=$out/runs/$name
mkdir -p "$run"
run_restored "$run" && { say "metric-run: $name: kept, restored from $(cat "$run/restored") (--restore)"; exit 0; }
case $model in
triplet) net="--loss triplet --mining semihard" ;;
hetriplet) net="--loss hetriplet --mining semihard" ;;
triplet-all) net="--loss triplet --mining all" ;;
fstat) net="--loss fstat" ;;
*) say "metric-run: unknown model '$model' (triplet, hetriplet, triplet-all, fstat)"; exit 2 ;;
esac
# the peak rate of the fast recipe: 3e-3, but 1e-3 for the heteroscedastic comparison (both of
# its models): at 3e-3 the log-variance head of hetriplet is thrown to its bound within a few
# hundred steps on 3-digit MNIST (every image's s at +20, the network dead; at 1e-3 it trains)
lr=3e-3
case $model in triplet | hetriplet) lr=1e-3 ;; esac
case ${RECIPE:-fast} in
fast) recipe="--recipe fast --lr $lr" ;; # (train --recipe: lib/training/optim.h)
paper) recipe="" ;;
*) say "metric-run: unknown recipe '$RECIPE' (fast or paper)"; exit 2 ;;
esac
[ -s "$data/unseen-clean.hs" ] || sh "$HEDGE_ROOT/pipelines/hib-data.sh" "$N" "$data"
occlusion_check "$data" || exit 1
run_occlusion "$run" || exit 1
make_file "$data/test-noisy.hs" occlude -p 0.5 --shape "$OCCLUDE_SHAPE" -S "$seed" < "$data/test.hs"
make_file "$data/unseen-noisy.hs" occlude -p 0.5 --shape "$OCCLUDE_SHAPE" -S "$seed" < "$data/unseen.hs"

if [ ! -e "$run/trained" ]; then
    resume=""
    [ -s "$run/model.ckpt" ] && resume="--resume $run/model.ckpt"
    say "metric-run: $name: training $steps steps of 16 x 8"
    train_batches "$data" "$tseed" -m pk -P 16 -K 8 |
        train -o "$run/model.ckpt" $resume $net -D "$D" -n "$steps" -S "$tseed" -t "$threads" \
            --log "$run/train.log" $recipe ${TRAIN_ARGS:-}
    touch "$run/trained"
fi

stoch=0
[ "$model" = hetriplet ] && stoch=1
: > "$run/results.tsv.tmp"
res() { printf '%s\t%s\t%s\t%s\n' "$name" "$1" "$2" "$3" >> "$run/results.tsv.tmp"; }
for set in seen-clean seen-noisy unseen-clean unseen-noisy; do
    src=$(test_set "$data" "$set")
    make_file "$run/emb-$set.hs" embed -m "$run/model.ckpt" < "$src"
    clean=""
    case $set in
    *-noisy) if [ $stoch = 1 ]; then clean="--clean 20 -S $seed"; else clean="--clean-random 20 -S $seed"; fi ;;
    esac
    j=$run/ret-$set.json
    if [ ! -s "$j" ]; then
        retrieve -k 1,2,4,8 $clean --json "$j.tmp" "$run/emb-$set.hs" > "$run/ret-$set.hs.tmp"
        mv "$run/ret-$set.hs.tmp" "$run/ret-$set.hs"
        mv "$j.tmp" "$j"
    fi
    for k in map map_r rprec p1 clean_uncertain_map clean_random_map clean_random_map_sd eta_ap_pearson; do
        v=$(json_get "$k" < "$j")
        [ -n "$v" ] && [ "$v" != null ] && res "$set" "$k" "$v"
    done
    set -- $(jq -r '.recall | map(tostring) | join(" ")' "$j")
    for k in 1 2 4 8; do res "$set" "r$k" "$1"; shift; done
    if [ $stoch = 1 ]; then
        make_file "$run/tau-$set.json" ktau -u eta -m accuracy:ap --json - "$run/ret-$set.hs"
        v=$(json_get tau < "$run/tau-$set.json")
        [ -n "$v" ] && [ "$v" != null ] && res "$set" tau_ap "$v"
    fi
    case $set in
    *-clean)
        if [ ! -s "$run/dis-$set.json" ]; then
            disentangle --json "$run/dis-$set.json.tmp" "$run/emb-$set.hs" > /dev/null
            mv "$run/dis-$set.json.tmp" "$run/dis-$set.json"
        fi
        v=$(json_get mean < "$run/dis-$set.json")
        [ -n "$v" ] && [ "$v" != null ] && res "$set" auc_mean "$v"
        for a in $(seq 1 "$N"); do
            v=$(jq -r --arg a "digit$a" '.attributes[] | select(.name == $a) | .auc' "$run/dis-$set.json")
            [ -n "$v" ] && [ "$v" != null ] && res "$set" "auc_digit$a" "$v"
        done ;;
    esac
done
mv "$run/results.tsv.tmp" "$run/results.tsv"
say "metric-run: $name done"
