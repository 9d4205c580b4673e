#!/bin/sh
# uncertainty-run.sh OUT NAME METHOD: one run of pipelines/uncertainty.sh. A head is trained on
# the frozen features OUT/data/train.hs (`features` streams of fromnpz), embeds OUT/data/test.hs,
# and evaluate's battery judges the embeddings leave-one-out, with the free baselines and the
# paired bootstrap intervals of every learned uncertainty against the best of them.
#   METHOD       what trains on the features (body: BODY, default mlp:256; D = DIM, default 64;
#                every run STEPS steps of 128 features)
#   triplet      point head, triplet loss (soft margin, semi-hard mining), P x K batches
#   ms, arcface, proxy-anchor   point head, Multi-Similarity / ArcFace / Proxy-Anchor, P x K
#   hib          HIB's head: MoG-1, VIB (beta 1e-4), 64 pairs; its uncertainty: the
#                self-mismatch eta (pairscore --self) and the variance
#   pfe          PFE's uncertainty module: the mean is the feature itself, L2-normalised (D = F),
#                the variance learned by the mutual likelihood score (--loss mls), P x K; with
#                uncertainty.sh --mu, the module reads the features and its mean is the --mu array
#   hetriplet    the heteroscedastic triplet loss: iso head, one learned variance per item, P x K
#   spe          Stochastic Prototype Embeddings: MoG-1, episodes of up to 16 classes, 5 + 3 each
#   dul-cls      DUL_cls: ArcFace on z = mu + sigma eps from MoG-1, plus 0.01 KL to N(0, I), P x K
#   dul-rgs      DUL_rgs: ArcFace on MoG-1's means, each item's Gaussian regressing its class centre
#   losspred     loss prediction: ArcFace on the iso head's means, its variance ranking each item's
#                own ArcFace loss, P x K
#   scf          SCF: ArcFace on the iso head's means, its vMF confidence kappa = 1 / var learning
#                the KL to a spike at the item's class centre, P x K
#   vmf-fl       vMF-FL: a normalised softmax on the iso head's means, each item's vMF
#                concentration kappa = 1 / var learning the temperature that fits its cosines, P x K
#   ensemble     a deep ensemble: 5 triplet point heads on the body (train --ensemble 5), its
#                uncertainty the variance of their means
#   mcdropout    MC dropout: triplet's point head on the body with dropout p = 0.1 (train
#                --dropout); its uncertainty the variance of 20 forwards with dropout on (embed --mc)
#   P x K: P = min(16, the training classes) classes, K = 128 / P items each.
# Writes OUT/runs/NAME/: model.ckpt, train.log, seconds-train (the training's wall-clock seconds
# from its last start: a resumed run counts from the resume), emb.hs, eta.hs (hib), eval.json, seconds-eval, and
# results.tsv: lines `NAME test METRIC VALUE [NOTE]`: ap, knn (5-NN accuracy), r1, map_r, map,
# nmi, the times (train_s, eval_s), and the uncertainty section (common.sh's uncertainty_lines).
# Re-running continues where it stopped (train --resume; files that exist are kept).
# Environment: THREADS (train threads, 1), SEED (714; NAME.sS trains with seed S), STEPS (2000),
# DIM (64), BODY (mlp:256), BOOTSTRAP (1000), TRAIN_ARGS.
set -eu
. "$(dirname "$0")/common.sh"
out=$1 name=$2 method=$3
seed=${SEED:-714} tseed=$(train_seed "$name") threads=${THREADS:-1}
steps=${STEPS:-2000} D=${DIM:-64} body=${BODY:-mlp:256}
data=$out/data run=$out/runs/$name
mkdir -p "$run"
run_restored "$run" && { say "uncertainty-run: $name: kept, restored from $(cat "$run/restored") (--restore)"; exit 0; }
for v in "STEPS $steps" "DIM $D"; do
    case ${v#* } in '' | *[!0-9]* | 0) say "uncertainty-run: ${v%% *}: not a positive number: '${v#* }'"; exit 2 ;; esac
done
[ -s "$data/train.hs" ] && [ -s "$data/test.hs" ] && [ -s "$data/classes" ] ||
    { say "uncertainty-run: no $data/train.hs, test.hs and classes (pipelines/uncertainty.sh makes them)"; exit 1; }
ncls=$(cat "$data/classes")
P=$((ncls < 16 ? ncls : 16))
K=$((128 / P))
pk="-m pk -P $P -K $K"
lr=3e-3 unc="" embed_args="" train_in=$data/train.hs test_in=$data/test.hs
case $method in
triplet) batches=$pk net="--head point --loss triplet --mining semihard" lr=1e-3 ;;
ms | arcface | proxy-anchor) batches=$pk net="--head point --loss $method" ;;
hib) batches="-m pairs -b 64" net="--head mog -C 1 --loss vib --beta 1e-4" unc=eta ;;
pfe) batches=$pk net="--head pfe --loss mls" D=$(cat "$data/features")
    if [ -s "$data/mean_dims" ]; then # (uncertainty.sh --mu: the layer before the embedding in, its mean out)
        D=$(cat "$data/mean_dims") train_in=$data/train-mu.hs test_in=$data/test-mu.hs
    fi ;;
hetriplet) batches=$pk net="--head iso --loss hetriplet --mining semihard" lr=1e-3 ;;
spe) batches="-m episodes -c $P -s 5 -q 3" net="--head mog -C 1 --loss spe" ;;
dul-cls | dul-rgs) batches=$pk net="--head mog -C 1 --loss $method" ;;
losspred | scf | vmf-fl) batches=$pk net="--head iso --loss $method" ;;
ensemble) batches=$pk net="--head point --loss triplet --mining semihard --ensemble 5" lr=1e-3 ;;
mcdropout) batches=$pk net="--head point --loss triplet --mining semihard --dropout 0.1" lr=1e-3 embed_args="--mc 20 -S $seed" ;;
*) say "uncertainty-run: unknown method '$method' (triplet ms arcface proxy-anchor hib pfe hetriplet spe dul-cls dul-rgs losspred scf vmf-fl ensemble mcdropout)"; exit 2 ;;
esac

if [ ! -e "$run/trained" ]; then
    resume=""
    [ -s "$run/model.ckpt" ] && resume="--resume $run/model.ckpt"
    say "uncertainty-run: $name: training $method on the features, $steps steps (batcher $batches, body $body, D = $D)"
    t0=$(date +%s)
    batcher $batches -S "$tseed" "$train_in" |
        train -o "$run/model.ckpt" $resume --body "$body" $net -D "$D" -n "$steps" -S "$tseed" -t "$threads" \
            --log "$run/train.log" --recipe fast --lr "$lr" ${TRAIN_ARGS:-}
    t1=$(date +%s)
    echo $((t1 - t0)) > "$run/seconds-train"
    touch "$run/trained"
fi

make_file "$run/emb.hs" embed -m "$run/model.ckpt" $embed_args < "$test_in"
judged=$run/emb.hs
if [ "$unc" = eta ]; then
    make_file "$run/eta.hs" pairscore --self -S "$seed" < "$run/emb.hs"
    judged=$run/eta.hs
fi
if [ ! -s "$run/eval.json" ]; then
    t0=$(date +%s)
    evaluate -S "$seed" --bootstrap "${BOOTSTRAP:-1000}" --json "$run/eval.json.tmp" "$judged" > /dev/null
    mv "$run/eval.json.tmp" "$run/eval.json"
    echo $(( $(date +%s) - t0 )) > "$run/seconds-eval"
fi

j=$run/eval.json
{
    jq -r --arg n "$name" '.input as $r
        | (["ap", $r.ap], ["knn", $r.knn], ["r1", $r.recall[0]], ["map_r", $r.map_r], ["map", $r.map],
           ["nmi", $r.nmi])
        | if .[1] == null then [$n, "test", .[0], "-", "undefined (see eval.json)"] else [$n, "test", .[0], .[1]] end
        | @tsv' "$j"
    printf '%s\ttest\ttrain_s\t%s\n' "$name" "$(cat "$run/seconds-train" 2> /dev/null || echo 0)"
    printf '%s\ttest\teval_s\t%s\n' "$name" "$(cat "$run/seconds-eval" 2> /dev/null || echo 0)"
    uncertainty_lines "$name" test "$j"
} > "$run/results.tsv.tmp"
awk -F'\t' '($4 == "-" && $5 == "") || ($4 != "-" && $4 !~ /^-?[0-9.]+([eE][-+]?[0-9]+)?$/) { print "uncertainty-run: bad result line: " $0 > "/dev/stderr"; bad = 1 } END { exit bad }' "$run/results.tsv.tmp"
mv "$run/results.tsv.tmp" "$run/results.tsv"
say "uncertainty-run: $name done"
