#!/bin/sh
# cesoftmax-run.sh OUT NAME N D LOSS STEPS: trains one two-tower model of the Cross-Example Softmax
# comparison on N-digit MNIST (queries: the digit strings of the classes, documents: the images)
# and evaluates text-to-image retrieval and global calibration.
#   LOSS: sampled_softmax | snm | cesoftmax | cenm | cemargin (lib/training/loss_ce.c)
#   Batches: batcher -m pk, P = 64 classes x K = 2 images (128 images per step; K = 2 puts
#   same-class pairs off the diagonal, which the losses mask out of the negatives).
# Evaluation (`qembed` for the queries, `embed` for the images, `retrieve --global`): each query
# is a class's digit string, its relevant images are the test images of that class; clean
# images are easy (Recall@1 is 1 within minutes), so most sets use the corrupt twins (every digit
# occluded), where the hard cases are.
#   seen, seenx the seen test classes' strings against the seen test images, clean / corrupt
#   distractx   the same queries against the corrupt seen test images plus every corrupt
#               unseen-class test image as a distractor (the paper's Table 1 right adds 3.3M
#               training images; ours are of the training classes, relevant, so the unseen
#               images serve)
#   unseen, unseenx  the unseen classes' strings against the unseen test images, clean /
#               corrupt: numbers the query tower never saw (zero-shot)
# Numbers per set: global PR-AUC (all (query, image) pairs sorted by score: the calibration the
# paper measures), global AP, Recall@1,5,10,100, MAP@R, mAP.
# Writes OUT/runs/NAME/: model.ckpt, train.log, emb-*.hs, q-*.hs, ret-SET.json, results.tsv.
# Environment: THREADS (1), SEED (714; a run named NAME.sS trains with seed S, pipelines/common.sh "Seeds"), RECIPE (fast: Adam 3e-3 peak, 5 % warm-up, cosine decay
# to 1 %; paper: Adam 1e-3 constant), TRAIN_ARGS, OCCLUDE_SHAPE and TRAIN_OCCLUSION
# (pipelines/common.sh).
set -eu
. "$(dirname "$0")/common.sh"
out=$1 name=$2 N=$3 D=$4 loss=$5 steps=$6
seed=${SEED:-714} tseed=$(train_seed "$name") threads=${THREADS:-1}
data=$out/data/N$N run=$out/runs/$name
mkdir -p "$run"
run_restored "$run" && { say "cesoftmax-run: $name: kept, restored from $(cat "$run/restored") (--restore)"; exit 0; }
case $loss in
sampled_softmax | cesoftmax | cenm | cemargin) net="--loss $loss" ;;
snm) net="--loss snm --ce-topk 63" ;; # the paper: the top 50 % of each query's negatives, 126 in a 64 x 2 batch
*) say "cesoftmax-run: unknown loss '$loss'"; exit 2 ;;
esac
case ${RECIPE:-fast} in
fast) recipe="--recipe fast" ;; # (train --recipe: lib/training/optim.h)
paper) recipe="" ;;
*) say "cesoftmax-run: unknown recipe '$RECIPE' (fast or paper)"; exit 2 ;;
esac
[ -s "$data/unseen-clean.hs" ] || sh "$HEDGE_ROOT/pipelines/hib-data.sh" "$N" "$data"
occlusion_check "$data" || exit 1
run_occlusion "$run" || exit 1

if [ ! -e "$run/trained" ]; then
    resume=""
    [ -s "$run/model.ckpt" ] && resume="--resume $run/model.ckpt"
    say "cesoftmax-run: $name: training $steps steps of 64 x 2"
    train_batches "$data" "$tseed" -m pk -P 64 -K 2 |
        train -o "$run/model.ckpt" $resume $net -D "$D" -n "$steps" -S "$tseed" -t "$threads" \
            --log "$run/train.log" $recipe ${TRAIN_ARGS:-}
    touch "$run/trained"
fi

for c in clean corrupt; do
    make_file "$run/emb-seen-$c.hs" embed -m "$run/model.ckpt" < "$data/test-$c.hs"
    make_file "$run/emb-unseen-$c.hs" embed -m "$run/model.ckpt" < "$data/unseen-$c.hs"
done
make_file "$run/q-seen.hs" qembed -m "$run/model.ckpt" --classes "$data/test-clean.hs"
make_file "$run/q-unseen.hs" qembed -m "$run/model.ckpt" --classes "$data/unseen-clean.hs"
: > "$run/results.tsv.tmp"
res() { printf '%s\t%s\t%s\t%s\n' "$name" "$1" "$2" "$3" >> "$run/results.tsv.tmp"; }
for set in seen seenx distractx unseen unseenx; do
    case $set in
    seen) q=$run/q-seen.hs g="-g $run/emb-seen-clean.hs" ;;
    seenx) q=$run/q-seen.hs g="-g $run/emb-seen-corrupt.hs" ;;
    distractx) q=$run/q-seen.hs g="-g $run/emb-seen-corrupt.hs -g $run/emb-unseen-corrupt.hs" ;;
    unseen) q=$run/q-unseen.hs g="-g $run/emb-unseen-clean.hs" ;;
    unseenx) q=$run/q-unseen.hs g="-g $run/emb-unseen-corrupt.hs" ;;
    esac
    j=$run/ret-$set.json
    if [ ! -s "$j" ]; then
        retrieve -k 1,5,10,100 $g --global --json "$j.tmp" "$q" > /dev/null
        mv "$j.tmp" "$j"
    fi
    for k in global_pr_auc global_ap map map_r; do
        v=$(json_get "$k" < "$j")
        [ -n "$v" ] && [ "$v" != null ] && res "$set" "$k" "$v"
    done
    set -- $(jq -r '.recall | map(tostring) | join(" ")' "$j")
    for k in 1 5 10 100; do res "$set" "r$k" "$1"; shift; done
done
mv "$run/results.tsv.tmp" "$run/results.tsv"
say "cesoftmax-run: $name done"
