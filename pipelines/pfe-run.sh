#!/bin/sh
# pfe-run.sh OUT NAME MODEL STEPS: one run of pipelines/pfe.sh (PFE's protocol on a frozen
# backbone), trained on the 2-digit data in OUT/data/N2 and evaluated by pipelines/pfe-eval.sh on
# the flagged test twins OUT/data/N2/flagged/{seen,unseen}-{clean,corrupt}.hs (pfe.sh makes them).
#   MODEL     what it trains (D = DIM, 16 unless the environment says; 128 items a step)
#   backbone  hedge's point model, conv body, triplet loss (soft margin, semi-hard mining) on P x K
#             batches of 16 x 8 images, occluded afresh at every use (train_batches); then frozen:
#             its embeddings of the training set, occluded once per digit with p = 0.2 in two
#             fixed draws (occlude -S SEED1, -S SEED2: each image twice, about 36 % of each draw
#             with an occluded digit, flagged `corrupt`), and of the test twins become `features`
#             streams the way a user would make them: embed | tonpz, then fromnpz -k features
#             --features mu (feat-train.hs, feat-{seen,unseen}-{clean,corrupt}.hs)
#   hib       HIB end to end: conv body, MoG-1 head, VIB loss (beta 1e-4) on 64 pairs a step (the
#             backbone's 128 images), occluded afresh at every use, the backbone's steps
#   pfe       PFE's uncertainty module on the frozen backbone: batcher -m pk (16 x 8) of
#             feat-train.hs | train --body mlp:64 --head pfe --loss mls (the mean is the backbone's
#             embedding, L2-normalised; only the log-variances learn)
#   hibhead   HIB's head on the same frozen features: batcher -m pairs (64 pairs) of feat-train.hs
#             | train --body mlp:64 --head mog -C 1 -D DIM --loss vib (beta 1e-4)
#   pfebn     PFE's module as its authors built it (docs/pfe.md "The authors' module"): batcher -m
#             pk (64 x 4) of feat-h-train.hs, the backbone's 120 features before the embedding
#             beside its frozen mean | train --body mlp-bn:DIM --head pfe-bn --loss mls, SGD,
#             PFEBN_STEPS steps (12,000, the authors') with the rate down tenfold at 2/3
#   pfe, hibhead and pfebn read the features of the backbone run of their seed (OUT/runs/backbone, or
#   backbone.sS for NAME.sS) and train HEAD_STEPS steps (default: STEPS; pfe.sh says how many).
# Recipe (RECIPE, default fast): Adam, peak 3e-3 (1e-3 for the triplet backbone, as compare.sh
# trains triplets), warm-up over 5 % of the steps, cosine decay to 1 %; paper: Adam 1e-3, constant.
# Writes OUT/runs/NAME/: model.ckpt, train.log, occlusion (conv runs), trained, emb-SET.hs for SET
# in {seen,unseen}-{clean,corrupt} (the model's embeddings of the flagged twins), the files of
# pfe-eval.sh, and results.tsv (lines `NAME SET METRIC VALUE [REASON]`). Re-running continues
# where it stopped (train --resume; files that exist are kept).
# Environment: THREADS (train threads, 1), SEED (714; a run named NAME.sS trains with seed S,
# pipelines/common.sh "Seeds"), DIM, HEAD_STEPS, RECIPE, TRAIN_ARGS (more train options for every
# run), OCCLUDE_SHAPE and TRAIN_OCCLUSION (pipelines/common.sh).
set -eu
. "$(dirname "$0")/common.sh"
out=$1 name=$2 model=$3 steps=$4
tseed=$(train_seed "$name") threads=${THREADS:-1} D=${DIM:-16} hsteps=${HEAD_STEPS:-$4}
PFEBN_STEPS=${PFEBN_STEPS:-12000}
data=$out/data/N2 run=$out/runs/$name flagged=$out/data/N2/flagged
mkdir -p "$run"
run_restored "$run" && { say "pfe-run: $name: kept, restored from $(cat "$run/restored") (--restore)"; exit 0; }
case $D in '' | *[!0-9]*) say "pfe-run: DIM: not a number: '$D'"; exit 2 ;; esac
# the backbone run of this seed, whose features the heads read
case $name in *.s[0-9]*) bb=$out/runs/backbone.s${name##*.s} ;; *) bb=$out/runs/backbone ;; esac
# recipe LR STEPS: the train options of the recipe for a peak rate LR (train --recipe fast takes
# its warm-up, a 20th of the STEPS, from -n)
case ${RECIPE:-fast} in fast | paper) ;; *) say "pfe-run: unknown recipe '$RECIPE' (fast or paper)"; exit 2 ;; esac
recipe() {
    if [ "${RECIPE:-fast}" = fast ]; then echo "--recipe fast --lr $1"; fi
}
for s in seen-clean seen-corrupt unseen-clean unseen-corrupt; do
    [ -s "$flagged/$s.hs" ] || { say "pfe-run: no $flagged/$s.hs (pipelines/pfe.sh makes the flagged test twins)"; exit 1; }
done

# train_run TRAIN-OPTIONS... < batches: trains RUN/model.ckpt, resuming from it when it exists
train_run() {
    tr_resume=""
    [ -s "$run/model.ckpt" ] && tr_resume="--resume $run/model.ckpt"
    train -o "$run/model.ckpt" $tr_resume -S "$tseed" -t "$threads" --log "$run/train.log" "$@" ${TRAIN_ARGS:-}
    touch "$run/trained"
}

case $model in
backbone | hib)
    occlusion_check "$data" || exit 1
    run_occlusion "$run" || exit 1
    if [ ! -e "$run/trained" ]; then
        if [ "$model" = backbone ]; then
            say "pfe-run: $name: training the backbone, $steps steps of 16 x 8 images, D = $D (triplet), occlusion $(occlusion_id)"
            train_batches "$data" "$tseed" -m pk -P 16 -K 8 |
                train_run --head point --loss triplet --mining semihard -D "$D" -n "$steps" $(recipe 1e-3 "$steps")
        else
            say "pfe-run: $name: training HIB end to end, $steps steps of 64 pairs, D = $D (MoG-1, vib), occlusion $(occlusion_id)"
            train_batches "$data" "$tseed" -m pairs -b 64 |
                train_run --head mog -C 1 --loss vib --beta 1e-4 -D "$D" -n "$steps" $(recipe 3e-3 "$steps")
        fi
    fi
    for s in seen-clean seen-corrupt unseen-clean unseen-corrupt; do
        make_file "$run/emb-$s.hs" embed -m "$run/model.ckpt" < "$flagged/$s.hs"
    done
    if [ "$model" = backbone ]; then
        # frozen: the features of the training set (two fixed draws of the occlusion, flagged) and
        # of the test twins, through numpy's format as a user's backbone would hand them over
        # (embed --hidden: also the body's layer before the embedding, the 120 features that
        # PFE's own module reads: feat-h-*.hs carry them beside the frozen mean, for pfebn)
        for k in 1 2; do
            make_file "$run/emb-train$k.hs" sh -c 'occlude -p 0.2 --shape "$1" --corrupt -S "$2" < "$3" | embed --hidden -m "$4"' \
                sh "$OCCLUDE_SHAPE" "$tseed$k" "$data/train.hs" "$run/model.ckpt"
        done
        make_file "$run/feat-train.hs" sh -c 'tonpz "$1" "$2" | fromnpz -k features --features mu --skip hidden -' \
            sh "$run/emb-train1.hs" "$run/emb-train2.hs"
        make_file "$run/feat-h-train.hs" sh -c 'tonpz "$1" "$2" | fromnpz -k features --features hidden --mu mu -' \
            sh "$run/emb-train1.hs" "$run/emb-train2.hs"
        for s in seen-clean seen-corrupt unseen-clean unseen-corrupt; do
            make_file "$run/feat-$s.hs" sh -c 'tonpz "$1" | fromnpz -k features --features mu -' sh "$run/emb-$s.hs"
            make_file "$run/feat-h-$s.hs" sh -c 'embed --hidden -m "$1" < "$2" | tonpz | fromnpz -k features --features hidden --mu mu -' \
                sh "$run/model.ckpt" "$flagged/$s.hs"
        done
    fi ;;
pfe | hibhead | pfebn)
    fp=feat
    [ "$model" = pfebn ] && fp=feat-h
    for f in train seen-clean seen-corrupt unseen-clean unseen-corrupt; do
        f=$fp-$f
        [ -s "$bb/$f.hs" ] ||
            { say "pfe-run: $name: no $bb/$f.hs: the backbone run of this seed has not made its features (run it first: pfe.sh does)"; exit 1; }
    done
    echo "$bb" > "$run/backbone"
    if [ ! -e "$run/trained" ]; then
        if [ "$model" = pfe ]; then
            say "pfe-run: $name: training PFE's uncertainty module on $bb's features, $hsteps steps of 16 x 8"
            batcher -m pk -P 16 -K 8 -S "$tseed" < "$bb/feat-train.hs" |
                train_run --body mlp:64 --head pfe --loss mls -n "$hsteps" $(recipe 3e-3 "$hsteps")
        elif [ "$model" = pfebn ]; then
            # the authors' module and recipe (seasonSH/Probabilistic-Face-Embeddings: config/
            # sphere64_msarcface.py, models/uncertainty_module.py): fc D + batch norm + ReLU, fc D
            # + batch norm, one scale and shift; SGD, momentum 0.9, 1e-3, tenfold down at 2/3 of
            # the steps (their 8,000 of 12,000), weight decay 5e-4, 256 items of 64 classes a step.
            # Their loss is twice hedge's mls (the sum without the 1/2), so hedge's 2e-3 and 2.5e-4
            # make their very updates
            ps=$(( PFEBN_STEPS * 2 / 3 )) P=$(tshow -m classes "$bb/feat-h-train.hs" | wc -l)
            [ "$P" -gt 64 ] && P=64   # (fewer when the data has fewer classes, as the tests' do)
            say "pfe-run: $name: training PFE's module as its authors built it on $bb's layer before the embedding, $PFEBN_STEPS steps of $P x 4"
            batcher -m pk -P "$P" -K 4 -S "$tseed" < "$bb/feat-h-train.hs" |
                train_run --body mlp-bn:$D --head pfe-bn --loss mls -n "$PFEBN_STEPS" --optim sgd --lr 2e-3 \
                    --lr-steps "$ps" --wd 2.5e-4
        else
            say "pfe-run: $name: training HIB's head on $bb's features, $hsteps steps of 64 pairs, D = $D"
            batcher -m pairs -b 64 -S "$tseed" < "$bb/feat-train.hs" |
                train_run --body mlp:64 --head mog -C 1 --loss vib --beta 1e-4 -D "$D" -n "$hsteps" $(recipe 3e-3 "$hsteps")
        fi
    fi
    for s in seen-clean seen-corrupt unseen-clean unseen-corrupt; do
        make_file "$run/emb-$s.hs" embed -m "$run/model.ckpt" < "$bb/$fp-$s.hs"
    done ;;
*) say "pfe-run: unknown model '$model' (backbone, hib, pfe, hibhead, pfebn)"; exit 2 ;;
esac

sh "$HEDGE_ROOT/pipelines/pfe-eval.sh" "$name" "$model" "$run" > "$run/results.tsv.tmp"
mv "$run/results.tsv.tmp" "$run/results.tsv"
say "pfe-run: $name done"
