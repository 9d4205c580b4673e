#!/bin/sh
# make-features.sh mnist|fashion|digits|synth512 OUT.npz: the frozen features results/uncertainty/ judges.
#   mnist, fashion  a backbone hedge trains: the HIB network (conv body, point head, D = 128,
#                   triplet loss, semi-hard mining, 6,000 steps of 16 x 8 images occluded afresh at
#                   every use, seed 714) on the 2-digit composites' 70 seen classes
#                   (pipelines/hib-data.sh; fashion: Fashion-MNIST's items), frozen; its embeddings
#                   of the training composites and of the 30 unseen classes' test composites, each
#                   digit occluded once with p = 0.2 (occlude --corrupt flags them), become the
#                   features, with split = 0 for the training items (the heads train on them) and
#                   1 for the unseen ones (judged): 100,000 + 10,000 items of 128 floats; and the
#                   array hidden, the backbone's layer before the embedding (embed --hidden: the
#                   conv body's 120 features), PFE's head input (uncertainty.sh --features hidden
#                   --mu features)
#   synth512        the time target's set (issue 47 item 6): 50,000 vectors of 512 floats, 100
#                   classes (uniform), class centres N(0, 9/512 I), each item's noise N(0, (3.5 q)^2/512 I)
#                   with its own q ~ Gamma(2, 0.5), numpy's default_rng(5)
#   digits          sklearn's 8 x 8 digits (Debian's python3-sklearn), the 64 pixel values as they
#                   are: 1,797 items, 10 classes (uncertainty.sh splits them by class: 0-4 train)
# Run from the source tree with the build made (make); needs python3 with numpy.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
HEDGE_ROOT=$root
export HEDGE_ROOT
. "$root/pipelines/common.sh"
what=$1 out=$2
case $out in /*) ;; *) out=$PWD/$out ;; esac
work=$out.work
mkdir -p "$work"
case $what in
synth512)
    /usr/bin/python3 -c 'import sys, numpy as np
r = np.random.default_rng(5); n, F, k = 50000, 512, 100
y = r.integers(0, k, n); q = r.gamma(2.0, 0.5, n); c = r.normal(size=(k, F)) / np.sqrt(F) * 3
x = c[y] + r.normal(size=(n, F)) / np.sqrt(F) * q[:, None] * 3.5
np.savez(sys.argv[1], features=x.astype(np.float32), labels=y)' "$out" ;;
digits)
    /usr/bin/python3 -c 'import sys, numpy as np; from sklearn.datasets import load_digits
d = load_digits(); np.savez(sys.argv[1], features=d.data.astype(np.float32), labels=d.target)' "$out" ;;
mnist | fashion)
    DATASET=$what
    export DATASET
    sh "$HEDGE_ROOT/pipelines/hib-data.sh" 2 "$work/N2"
    if [ ! -e "$work/trained" ]; then
        resume=""
        [ -s "$work/backbone.ckpt" ] && resume="--resume $work/backbone.ckpt"
        train_batches "$work/N2" 714 -m pk -P 16 -K 8 |
            train -o "$work/backbone.ckpt" $resume --head point --loss triplet --mining semihard -D 128 -n 6000 \
                -S 714 -t 1 --recipe fast --lr 1e-3 --log "$work/backbone.log"
        touch "$work/trained"
    fi
    make_file "$work/emb-train.hs" sh -c 'occlude -p 0.2 --shape "$1" --corrupt -S 7141 < "$2" | embed --hidden -m "$3"' \
        sh "$OCCLUDE_SHAPE" "$work/N2/train.hs" "$work/backbone.ckpt"
    make_file "$work/emb-test.hs" sh -c 'occlude -p 0.2 --shape "$1" --corrupt -S 7142 < "$2" | embed --hidden -m "$3"' \
        sh "$OCCLUDE_SHAPE" "$work/N2/unseen.hs" "$work/backbone.ckpt"
    tonpz "$work/emb-train.hs" > "$work/train.npz"
    tonpz "$work/emb-test.hs" > "$work/test.npz"
    /usr/bin/python3 -c 'import sys, numpy as np
a, b = np.load(sys.argv[1]), np.load(sys.argv[2])
f = lambda z: z["mu"].reshape(len(z["mu"]), -1)
np.savez(sys.argv[3], features=np.concatenate([f(a), f(b)]), labels=np.concatenate([a["class"], b["class"]]),
         hidden=np.concatenate([a["hidden"], b["hidden"]]),
         corrupt=np.concatenate([a["corrupt"], b["corrupt"]]),
         split=np.concatenate([np.zeros(len(a["class"]), np.int8), np.ones(len(b["class"]), np.int8)]))' \
        "$work/train.npz" "$work/test.npz" "$out" ;;
*) echo "make-features.sh: mnist, fashion, digits or synth512, not '$what'" >&2; exit 2 ;;
esac
echo "make-features.sh: $out" >&2
