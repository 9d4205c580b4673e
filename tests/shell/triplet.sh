#!/bin/sh
# train on P x K batches (batcher -m pk) with the triplet loss: learning, determinism, exact
# resume, the form and mining in the checkpoint, the loss refusing the batch kinds it does not
# take, and its options refused for other losses.
set -u
. "$(dirname "$0")/../lib.sh"
cd "$T"
mkdigits -N 2 -s train -n 20000 | occlude -p 0.2 > train.hs || fail "mkdigits train"
mkdigits -N 2 -s test-seen | occlude -p 0 > test.hs || fail "mkdigits test"
pk() { batcher -m pk -P 16 -K 4 "$@" < "$T/train.hs"; }

# learning: 300 steps of 16 classes x 4 images (soft margin, semihard by default); the loss
# falls and the test classes separate far above chance (1/70)
pk | train -o t.ckpt --head point --loss triplet -D 2 -n 300 -t 1 --lr 3e-3 --log t.log 2>/dev/null ||
    fail "train triplet"
first=$(sed -n 2p t.log | cut -f2) last=$(tail -n 1 t.log | cut -f2)
check_lt "$last" "$first" "final loss $last is not below the first logged $first"
embed -m t.ckpt < test.hs > e.hs || fail "embed"
acc=$(knn e.hs | knn --summary | json_get accuracy) # (no match probability: no pairscore --self)
echo "triplet: loss $first -> $last, 5-NN accuracy $acc (chance 1/70)"
check_lt 0.2 "$acc" "5-NN accuracy $acc is not far above chance (1/70)"
bacc=$(tail -n 1 t.log | cut -f11)
check_lt 0.2 "$bacc" "batch nearest-neighbour accuracy $bacc of the last logged step"

# same seed, same bytes (the same command in two folders); 20 + 20 steps equal 40 straight (the hinge and all-triplet settings
# come back from the checkpoint)
tr() { pk | train --head point --loss triplet -D 2 -S 3 -t 1 --triplet hinge --margin 0.5 --mining all "$@" 2>/dev/null; }
mkdir a b
(cd a && tr -o m.ckpt -n 40) || fail "train a"
(cd b && tr -o m.ckpt -n 40) || fail "train b"
cmp -s a/m.ckpt b/m.ckpt || fail "same seed gave different checkpoints"
cp a/m.ckpt a.ckpt
tr -o r.ckpt -n 20 || fail "train r"
pk | train --resume r.ckpt -n 40 -t 1 2>/dev/null || fail "resume"
totsv a.ckpt > a.tsv && totsv r.ckpt > r.tsv || fail "totsv"
cmp -s a.tsv r.tsv || fail "a resumed triplet run differs from the uninterrupted one"
tshow -H a.ckpt > a.json || fail "tshow a"
grep -q '"triplet": "hinge"' a.json || fail "form not recorded: $(grep -o '"triplet": [^,]*' a.json)"
grep -q '"mining": "all"' a.json || fail "mining not recorded"
grep -q '"margin": 0.5[,}]' a.json || fail "margin not recorded"
tshow -H t.ckpt > t.json || fail "tshow t"
grep -q '"triplet": "soft"' t.json && grep -q '"mining": "semihard"' t.json || fail "defaults not recorded"
pk -n 3 | train -o h.ckpt --head point --loss triplet --mining hard -n 3 -t 1 2>/dev/null || fail "--mining hard"
tshow -H h.ckpt | grep -q '"mining": "hard"' || fail "hard mining not recorded"
batcher -m pairs -b 8 -n 2 < train.hs | train -o p.ckpt --head point -n 2 -t 1 2>/dev/null || fail "train softcon"
tshow -H p.ckpt | grep -q '"mining"' && fail "a softcon checkpoint records triplet settings"

# the loss takes only P x K batches; its options are refused for other losses
expect_fail 1 "does not take pairbatch batches; feed it \`batcher -m pk\`" \
    sh -c 'batcher -m pairs -n 2 < train.hs | train -o x.ckpt --head point --loss triplet -n 1'
expect_fail 1 "does not take episodes batches; feed it \`batcher -m pk\`" \
    sh -c 'batcher -m episodes -c 20 -n 2 < train.hs | train -o x.ckpt --head point --loss triplet -n 1'
expect_exit 2 "triplet on a stochastic head" sh -c 'train -o x.ckpt --head mog --loss triplet < /dev/null'
expect_exit 2 "--triplet without the triplet loss" sh -c 'train -o x.ckpt --head point --triplet hinge < /dev/null'
expect_exit 2 "--mining without the triplet loss" sh -c 'train -o x.ckpt --head point --loss proto --mining all < /dev/null'
expect_exit 2 "--mining with spe" sh -c 'train -o x.ckpt --head mog --loss spe --mining hard < /dev/null'
expect_exit 2 "--triplet nonsense" sh -c 'train -o x.ckpt --head point --loss triplet --triplet square < /dev/null'
expect_exit 2 "--mining nonsense" sh -c 'train -o x.ckpt --head point --loss triplet --mining easy < /dev/null'
[ ! -e x.ckpt ] || fail "a refused train left x.ckpt behind"
pass
