#!/bin/sh
# the heteroscedastic triplet loss end to end: the iso head by default (D means and one
# log-variance per image), its variance in the embeddings stream (the same in every dimension),
# learning, the variance rising with occlusion, determinism and exact resume, and misuse.
set -u
. "$(dirname "$0")/../lib.sh"
cd "$T"
mkdigits -N 2 -s train -n 20000 | occlude -p 0.2 > train.hs || fail "mkdigits train"
mkdigits -N 2 -s test-seen | occlude -p 0.5 > test.hs || fail "mkdigits test"
pk() { batcher -m pk -P 16 -K 4 "$@" < "$T/train.hs"; }

# 600 steps (soft margin, semihard): no --head needed, the loss brings its iso head
pk | train -o h.ckpt --loss hetriplet -D 2 -n 600 -t 1 --lr 3e-3 --log h.log 2>/dev/null || fail "train hetriplet"
tshow -H h.ckpt > h.json || fail "tshow"
grep -q '"head": "iso"' h.json || fail "head not iso: $(grep -o '"head": [^,]*' h.json)"
grep -q '"mining": "semihard"' h.json || fail "mining not recorded"
first=$(sed -n 2p h.log | cut -f2) last=$(tail -n 1 h.log | cut -f2)
check_lt "$last" "$first" "final loss $last is not below the first logged $first"
embed -m h.ckpt < test.hs > e.hs || fail "embed"
tshow -H e.hs | grep -q '"model": "iso"' || fail "embeddings meta model is not iso"
acc=$(knn e.hs | knn --summary | json_get accuracy) # (no match probability: no pairscore --self)
check_lt 0.1 "$acc" "5-NN accuracy $acc is not far above chance (1/70)"
# one variance per image, in both dimensions; mean variance by number of occluded digits
totsv e.hs > e.tsv || fail "totsv"
awk -F'\t' 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i
                      if (!c["var[0]"] || !c["var[1]"] || !c["occluded[0]"] || !c["occluded[1]"]) { print "nocolumns"; exit } next }
    $c["var[0]"] != $c["var[1]"] { bad++ }
    { k = $c["occluded[0]"] + $c["occluded[1]"]; s[k] += $c["var[0]"]; n[k]++ }
    END { if (bad) { print "unequal"; exit } printf "%.6f %.6f %.6f\n", s[0] / n[0], s[1] / n[1], s[2] / n[2] }' \
    e.tsv > v.txt || fail "awk"
read v0 v1 v2 < v.txt
[ "$v0" != nocolumns ] || fail "totsv has no var[0], var[1], occluded[0], occluded[1] columns"
[ "$v0" != unequal ] || fail "an image's variance differs between dimensions"
check_lt 0 "$v0" "mean variance $v0 is not positive"
echo "hetriplet: 5-NN accuracy $acc; mean variance with 0, 1, 2 digits occluded: $v0 $v1 $v2"
check_lt "$v0" "$v1" "variance with one digit occluded ($v1) not above that of clean images ($v0)"
check_lt "$v1" "$v2" "variance with both digits occluded ($v2) not above one ($v1)"

# same seed, same bytes; 20 + 20 steps equal 40 straight
tr() { pk | train --loss hetriplet -D 3 -S 5 -t 1 --mining hard "$@" 2>/dev/null; }
mkdir a b
(cd a && tr -o m.ckpt -n 40) || fail "train a"
(cd b && tr -o m.ckpt -n 40) || fail "train b"
cmp -s a/m.ckpt b/m.ckpt || fail "same seed gave different checkpoints: $(cmp a/m.ckpt b/m.ckpt 2>&1; tshow -H a/m.ckpt > a.h; tshow -H b/m.ckpt > b.h; cmp a.h b.h 2>&1 || diff a.h b.h | head -c 600)"
tr -o r.ckpt -n 20 || fail "train r"
pk | train --resume r.ckpt -n 40 -t 1 2>/dev/null || fail "resume"
totsv a/m.ckpt > a.tsv && totsv r.ckpt > r.tsv || fail "totsv"
cmp -s a.tsv r.tsv || fail "a resumed hetriplet run differs from the uninterrupted one"

expect_exit 2 "hetriplet on a point head" sh -c 'train -o x.ckpt --head point --loss hetriplet < /dev/null'
expect_exit 2 "hetriplet with two components" sh -c 'train -o x.ckpt --head iso -C 2 --loss hetriplet < /dev/null'
expect_exit 2 "triplet on the iso head" sh -c 'train -o x.ckpt --head iso --loss triplet < /dev/null'
expect_exit 2 "--head nonsense" sh -c 'train -o x.ckpt --head gauss --loss hetriplet < /dev/null'
expect_fail 1 "does not take pairbatch batches" \
    sh -c 'batcher -m pairs -n 2 < train.hs | train -o x.ckpt --loss hetriplet -n 1'
[ ! -e x.ckpt ] || fail "a refused train left x.ckpt behind"
pass
