#!/bin/sh
# compare-run.sh OUT NAME METHOD D IMAGES: trains one method of pipelines/compare.sh on the 2-digit
# data in OUT/data/N2 for IMAGES training images (each method's own batch shape; the steps are
# IMAGES / images per step, rounded up) and evaluates it with the comparison's battery.
#   METHOD    loss, head and batches (as the method's own pipeline trains it)
#   point     softcon, point head, 128 pairs (256 images) per step             (hib.sh)
#   hib       vib, one Gaussian (MoG-1), beta 1e-4, 128 pairs per step          (hib.sh)
#   pn        proto, point head, episodes of 70 classes x (50 + 5) images       (spe.sh)
#   spe       spe, one Gaussian, the same episodes                              (spe.sh)
#   triplet   soft-margin triplet, semi-hard mining, 16 x 8 images              (hetriplet.sh)
#   hetriplet heteroscedastic triplet, iso head, semi-hard, 16 x 8              (hetriplet.sh)
#   fstat     F-statistic loss (d = 2), 16 x 8                                  (fstat.sh)
#   cesoftmax Cross-Example Softmax, two towers, 64 x 2 images                  (cesoftmax.sh)
#   the field's losses (docs/losses.md), each on 16 x 8 images, point head unless said:
#   ms        Multi-Similarity; cosface, arcface: a weight vector per class; proxynca,
#   proxy-anchor: a proxy per class; dul-cls: DUL_cls, ArcFace on samples of a MoG-1 head, its
#             variance the uncertainty
# The battery, on four sets (seen and unseen test classes, clean and corrupt twins), through the
# same filters for every method:
#   ap      verification AP of 10,000 random test pairs (pairscore | apcurve): the model's match
#           probability where it has one (point: exact; hib: Monte Carlo, K = 8), else the
#           distance between the means (pairscore --score l2: a ranking, not a probability; such
#           a model's embeddings carry no match_a/match_b, formats/stream.md)
#   knn     5-NN accuracy, leave-one-out, distance between the means (knn -d mean)
#   r1, map_r, pr_auc   Recall@1, MAP@R and global PR-AUC of leave-one-out retrieval (retrieve)
#   fewshot 5-shot accuracy over every class of the set, 15 queries per class, REPEATS episodes
#           (fewshot; SPE's own closed-form scorer for spe, the nearest prototype for the others)
#   for a method with an uncertainty (hib: self-mismatch eta; spe, hetriplet: the mean variance),
#   judged on the KNN answers (ktau): tau (Kendall's tau over 20 bins, as HIB), auroc (of the
#   uncertainty at telling wrong answers from right ones), aurc and aurc_oracle (area under the
#   error-versus-reject curve, and the oracle's); for a method with a match probability (point,
#   hib): ece (expected calibration error of p over the 10,000 pairs, 15 equal-width bins).
# A number a method cannot have is written as "-" with the reason (results.tsv's fifth column).
# Writes OUT/runs/NAME/: model.ckpt, train.log, per SET: emb-SET.hs, pairs-SET.hs, knn-SET.hs,
# ret-SET.json, fs-SET.json, ap-SET.json, tau-SET.json, reject-SET.tsv; and results.tsv: lines
# `NAME SET METRIC VALUE [REASON]`. Re-running continues where it stopped.
# Environment: THREADS (train threads, 1), SEED (714; a run named NAME.sS trains with seed S, pipelines/common.sh "Seeds"), RECIPE (fast: Adam, 3e-3 peak (1e-3 for
# triplet and hetriplet, as hetriplet.sh), warm-up over 5 % of the steps, cosine decay to 1 %;
# paper: Adam 1e-3 constant), REPEATS (few-shot episodes, 1000), TRAIN_ARGS, OCCLUDE_SHAPE and
# TRAIN_OCCLUSION (pipelines/common.sh).
set -eu
. "$(dirname "$0")/common.sh"
out=$1 name=$2 method=$3 D=$4 images=$5
seed=${SEED:-714} tseed=$(train_seed "$name") threads=${THREADS:-1} R=${REPEATS:-1000}
data=$out/data/N2 run=$out/runs/$name
mkdir -p "$run"
run_restored "$run" && { say "compare-run: $name: kept, restored from $(cat "$run/restored") (--restore)"; exit 0; }
lr=3e-3 unc=none prob=0 score=pn
case $method in
point) per=256 batches="-m pairs -b 128" net="--head point --loss softcon" prob=1 ;;
hib) per=256 batches="-m pairs -b 128" net="--head mog -C 1 --loss vib --beta 1e-4" prob=1 unc=eta ;;
pn) per=3850 batches="-m episodes -s 50 -q 5" net="--head point --loss proto" ;;
spe) per=3850 batches="-m episodes -s 50 -q 5" net="--head mog -C 1 --loss spe" unc=var score=spe-closed ;;
triplet) per=128 batches="-m pk -P 16 -K 8" net="--loss triplet --mining semihard" lr=1e-3 ;;
hetriplet) per=128 batches="-m pk -P 16 -K 8" net="--loss hetriplet --mining semihard" lr=1e-3 unc=var ;;
fstat) per=128 batches="-m pk -P 16 -K 8" net="--loss fstat" ;;
cesoftmax) per=128 batches="-m pk -P 64 -K 2" net="--loss cesoftmax" ;;
ms | cosface | arcface | proxynca | proxy-anchor) per=128 batches="-m pk -P 16 -K 8" net="--head point --loss $method" ;;
dul-cls) per=128 batches="-m pk -P 16 -K 8" net="--head mog -C 1 --loss dul-cls" unc=var ;;
*) say "compare-run: unknown method '$method' (point hib pn spe triplet hetriplet fstat cesoftmax ms cosface arcface proxynca proxy-anchor dul-cls)"; exit 2 ;;
esac
steps=$(( (images + per - 1) / per ))
loss=$(echo "$net" | sed 's/.*--loss \([a-z_]*\).*/\1/')
case ${RECIPE:-fast} in
fast) recipe="--recipe fast --lr $lr" ;; # (train --recipe: lib/training/optim.h)
paper) recipe="" ;;
*) say "compare-run: unknown recipe '$RECIPE' (fast or paper)"; exit 2 ;;
esac
[ -s "$data/unseen-clean.hs" ] || sh "$HEDGE_ROOT/pipelines/hib-data.sh" 2 "$data"
occlusion_check "$data" || exit 1
run_occlusion "$run" || exit 1

if [ ! -e "$run/trained" ]; then
    resume=""
    [ -s "$run/model.ckpt" ] && resume="--resume $run/model.ckpt"
    say "compare-run: $name: training $steps steps of $per images (batcher $batches, occlusion $(occlusion_id))"
    train_batches "$data" "$tseed" $batches |
        train -o "$run/model.ckpt" $resume $net -D "$D" -n "$steps" -S "$tseed" -t "$threads" \
            --log "$run/train.log" $recipe ${TRAIN_ARGS:-}
    touch "$run/trained"
fi

: > "$run/results.tsv.tmp"
res() { printf '%s\t%s\t%s\t%s\n' "$name" "$1" "$2" "$3" >> "$run/results.tsv.tmp"; }
# resj SET METRIC KEY FILE: the JSON number KEY of FILE; null is "-" with the file's note
resj() {
    v=$(json_get "$3" < "$4")
    case $v in
    "" | null) printf '%s\t%s\t%s\t-\t%s\n' "$name" "$1" "$2" "undefined (see $(basename "$4"))" >> "$run/results.tsv.tmp" ;;
    *) res "$1" "$2" "$v" ;;
    esac
}
none() { printf '%s\t%s\t%s\t-\t%s\n' "$name" "$1" "$2" "$3" >> "$run/results.tsv.tmp"; }
for set in seen-clean seen-corrupt unseen-clean unseen-corrupt; do
    src=$(test_set "$data" "$set")
    emb=$run/emb-$set.hs
    make_file "$emb" embed -m "$run/model.ckpt" < "$src"
    # verification: the match probability, or the distance of the means
    if [ "$prob" = 1 ]; then
        make_file "$run/pairs-$set.hs" pairscore -S "$seed" < "$emb"
        make_file "$run/ap-$set.json" apcurve --json - --ece 15 < "$run/pairs-$set.hs"
    else
        make_file "$run/pairs-$set.hs" pairscore --score l2 -S "$seed" < "$emb"
        make_file "$run/ap-$set.json" apcurve --json - < "$run/pairs-$set.hs"
    fi
    resj "$set" ap ap "$run/ap-$set.json"
    if [ "$prob" = 1 ]; then resj "$set" ece ece "$run/ap-$set.json"
    else none "$set" ece "no match probability (loss $loss learns none)"; fi
    # KNN answers, with the uncertainty on each (hib: eta from pairscore --self)
    if [ "$unc" = eta ]; then
        make_file "$run/eta-$set.hs" pairscore --self -S "$seed" < "$emb"
        make_file "$run/knn-$set.hs" knn -k 5 -d mean < "$run/eta-$set.hs"
    else
        make_file "$run/knn-$set.hs" knn -k 5 -d mean < "$emb"
    fi
    make_file "$run/knn-$set.json" knn --summary < "$run/knn-$set.hs"
    resj "$set" knn accuracy "$run/knn-$set.json"
    if [ "$unc" != none ]; then
        if [ ! -s "$run/tau-$set.json" ]; then
            ktau -b 20 -u eta -m accuracy:correct -S "$seed" --json - --reject-tsv "$run/reject-$set.tsv" \
                < "$run/knn-$set.hs" > "$run/tau-$set.json.tmp"
            mv "$run/tau-$set.json.tmp" "$run/tau-$set.json"
        fi
        for k in tau auroc aurc aurc_oracle; do resj "$set" "$k" "$k" "$run/tau-$set.json"; done
    else
        for k in tau auroc aurc aurc_oracle; do none "$set" "$k" "no uncertainty (point embeddings)"; done
    fi
    # retrieval and global calibration
    j=$run/ret-$set.json
    if [ ! -s "$j" ]; then
        retrieve -k 1 --global --json "$j.tmp" "$emb" > /dev/null
        mv "$j.tmp" "$j"
    fi
    resj "$set" map_r map_r "$j"
    resj "$set" pr_auc global_pr_auc "$j"
    res "$set" r1 "$(jq -r '.recall[0]' "$j")"
    # few-shot, 5-shot over every class of the set
    j=$run/fs-$set.json
    if [ ! -s "$j" ]; then
        fewshot -s "$emb" -k 5 -q 15 -R "$R" -S "$seed" --score "$score" --json "$j.tmp" "$emb" > /dev/null
        mv "$j.tmp" "$j"
    fi
    key=$(echo "$score" | tr - _)
    res "$set" fewshot "$(jq -r --arg k "$key" '.[$k].accuracy' "$j")"
    # the uncertainty battery (evaluate): every source, the free baselines' and the learned ones,
    # against each per-query loss, and each learned source's paired-bootstrap difference from the
    # best free baseline (the note names it); a source the set cannot judge is left out
    j=$run/eval-$set.json
    unc_in=$emb
    [ "$unc" = eta ] && unc_in=$run/eta-$set.hs
    if [ ! -s "$j" ]; then
        evaluate -S "$seed" --bootstrap "${BOOTSTRAP:-1000}" --json "$j.tmp" "$unc_in" > /dev/null
        mv "$j.tmp" "$j"
    fi
    uncertainty_lines "$name" "$set" "$j" >> "$run/results.tsv.tmp"
done
# every value a number or "-" with a reason: a missing one is a bug, not a blank cell
awk -F'\t' '($4 == "-" && $5 == "") || ($4 != "-" && $4 !~ /^-?[0-9.]+([eE][-+]?[0-9]+)?$/) { print "compare-run: bad result line: " $0 > "/dev/stderr"; bad = 1 } END { exit bad }' "$run/results.tsv.tmp"
mv "$run/results.tsv.tmp" "$run/results.tsv"
say "compare-run: $name done"
