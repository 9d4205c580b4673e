#!/bin/sh
# the two-tower losses end to end: train builds the query tower (checkpoint `query` 1 and its
# settings), embed writes unit-length images, qembed embeds digit strings and a split's classes,
# and retrieve ranks images for strings the towers never saw (unseen numbers) far above chance;
# exact resume; refusals of train and qembed.
set -u
. "$(dirname "$0")/../lib.sh"
cd "$T"
mkdigits -N 2 -s train -n 20000 | occlude -p 0.2 > train.hs || fail "mkdigits train"
mkdigits -N 2 -s test-unseen -n 3000 | occlude -p 0 > unseen.hs || fail "mkdigits unseen"
pk() { batcher -m pk -P 32 -K 2 "$@" < "$T/train.hs"; }

pk | train -o c.ckpt --loss cesoftmax -D 8 -n 300 -t 1 --lr 3e-3 --log c.log 2>/dev/null || fail "train cesoftmax"
tshow -H c.ckpt > c.json || fail "tshow"
for kv in '"query": 1' '"head": "point"' '"ce_scale0": 10' '"ce_frac": 0.5'; do
    grep -q "$kv" c.json || fail "checkpoint lacks $kv"
done
grep -q '"name": "param.query.emb", "dtype": "float32", "shape": \[2, 10, 16\]' c.json ||
    fail "no query.emb [2, 10, 16] tensor"
first=$(sed -n 2p c.log | cut -f2) last=$(tail -n 1 c.log | cut -f2)
check_lt "$last" "$first" "final loss $last is not below the first logged $first"
# the images: unit length
embed -m c.ckpt < unseen.hs > e.hs || fail "embed"
tshow -H e.hs | grep -q '"normalized": 1' || fail "embed: no meta normalized"
totsv e.hs | awk -F'\t' 'NR > 1 { s = 0; for (i = 1; i <= 8; i++) s += $i * $i; if ((s - 1) ^ 2 > 1e-10) { print s; exit 1 } }' ||
    fail "an image embedding is not of unit length"
# the queries: every unseen class, in increasing order; strings give the same vectors
qembed -m c.ckpt --classes unseen.hs > q.hs || fail "qembed --classes"
nq=$(tshow -q q.hs | tail -n 1 | sed 's/# \([0-9]*\) records.*/\1/')
[ "$nq" = 30 ] || fail "qembed --classes gave $nq queries, not the 30 unseen classes"
c1=$(totsv q.hs | awk -F'\t' 'NR == 2 { print $9 }')
s1=$(printf '%02d' "$c1")
qembed -m c.ckpt "$s1" > q1.hs || fail "qembed $s1"
totsv q.hs | sed -n 2p | cut -f1-8 > a.tsv && totsv q1.hs | sed -n 2p | cut -f1-8 > b.tsv && cmp -s a.tsv b.tsv ||
    fail "the string $s1 and the class $c1 embed differently"
# zero-shot: the unseen strings find their images (chance mAP about 1/30)
retrieve -g e.hs --global --json r.json q.hs > /dev/null || fail "retrieve"
map=$(json_get map < r.json) pr=$(json_get global_pr_auc < r.json)
echo "cesoftmax, 300 steps: unseen numbers, mAP $map, global PR-AUC $pr (chance about 0.03)"
check_lt 0.3 "$map" "zero-shot mAP $map is not far above chance"
check_lt 0.2 "$pr" "zero-shot PR-AUC $pr is not far above chance"

# every loss trains a few steps; 20 + 20 steps equal 40 straight
for L in sampled_softmax snm cenm cemargin; do
    pk -n 5 | train -o $L.ckpt --loss $L -D 4 -n 5 -t 1 2>/dev/null || fail "train $L"
done
tshow -H cemargin.ckpt | grep -q '"margin": 2[,}]' || fail "cemargin's default margin is not 2"
tr() { pk | train --loss snm --ce-topk 8 -D 4 -S 3 -t 1 "$@" 2>/dev/null; }
tr -o a.ckpt -n 40 || fail "train a"
tr -o r.ckpt -n 20 || fail "train r"
pk | train --resume r.ckpt -n 40 -t 1 2>/dev/null || fail "resume"
totsv a.ckpt > a.tsv && totsv r.ckpt > r.tsv && cmp -s a.tsv r.tsv || fail "a resumed snm run differs from the uninterrupted one"
tshow -H a.ckpt | grep -q '"ce_topk": 8' || fail "ce_topk not recorded"

# refusals
expect_exit 2 "--ce-topk with cesoftmax" sh -c 'train -o x.ckpt --loss cesoftmax --ce-topk 3 < /dev/null'
expect_exit 2 "--ce-frac with snm" sh -c 'train -o x.ckpt --loss snm --ce-frac 0.3 < /dev/null'
expect_exit 2 "--ce-scale0 with triplet" sh -c 'train -o x.ckpt --loss triplet --ce-scale0 5 < /dev/null'
expect_exit 2 "cemargin --margin 1.5" sh -c 'train -o x.ckpt --loss cemargin --margin 1.5 < /dev/null'
expect_exit 2 "cesoftmax on a mog head" sh -c 'train -o x.ckpt --loss cesoftmax --head mog < /dev/null'
mkshapes -n 64 > shapes.hs || fail "mkshapes"
expect_fail 1 "needs N-digit MNIST batches" \
    sh -c 'batcher -m pk -P 4 -K 2 -n 1 < shapes.hs | train -o x.ckpt --loss cesoftmax -n 1'
[ ! -e x.ckpt ] || fail "a refused train left x.ckpt behind"
expect_fail 1 "not a string of 2 digits" qembed -m c.ckpt 123
expect_fail 1 "not a string of 2 digits" qembed -m c.ckpt 4x
pk -n 2 | train -o t.ckpt --loss triplet -n 2 -t 1 2>/dev/null || fail "train triplet"
expect_fail 1 "has no query tower" qembed -m t.ckpt 12
expect_exit 2 "qembed without strings" qembed -m c.ckpt
pass
