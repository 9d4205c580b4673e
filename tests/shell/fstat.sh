#!/bin/sh
# train with the F-statistic loss (fstat) on P x K batches (batcher -m pk): learning, determinism,
# exact resume, d (--fstat-dims) in the checkpoint, and the refusals (pair batches, a mixture
# head, --fstat-dims with another loss or above -D).
set -u
. "$(dirname "$0")/../lib.sh"
cd "$T"
mkdigits -N 2 -s train -n 20000 | occlude -p 0.2 > train.hs || fail "mkdigits train"
mkdigits -N 2 -s test-seen | occlude -p 0 > test.hs || fail "mkdigits test"
pk() { batcher -m pk -P 8 -K 8 "$@" < "$T/train.hs"; }

# same seed, same bytes; 10 + 10 steps equal 20 straight
# (the checkpoint records the command line: the same one, run in two folders)
mkdir a b
(cd a && pk | train -o m.ckpt --head point -D 4 --loss fstat --fstat-dims 2 -n 20 -S 3 -t 1 2>/dev/null) || fail "train a"
(cd b && pk | train -o m.ckpt --head point -D 4 --loss fstat --fstat-dims 2 -n 20 -S 3 -t 1 2>/dev/null) || fail "train b"
cmp -s a/m.ckpt b/m.ckpt || fail "same seed gave different fstat checkpoints"
cp a/m.ckpt a.ckpt
pk | train -o r.ckpt --head point -D 4 --loss fstat --fstat-dims 2 -n 10 -S 3 -t 1 2>/dev/null || fail "train r"
pk | train --resume r.ckpt -n 20 -t 1 2>/dev/null || fail "resume r"
totsv a.ckpt > a.tsv && totsv r.ckpt > r.tsv || fail "totsv"
cmp -s a.tsv r.tsv || fail "a resumed fstat run differs from the uninterrupted one"

# d is in the checkpoint (0 = all D by default) and survives the resume
tshow -H r.ckpt | grep -q '"fstat_dims": 2[,}]' || fail "fstat_dims 2 not recorded: $(tshow -H r.ckpt | grep -o '"fstat_dims": [^,]*')"

# learning: the loss of the first batch under the initial weights (a one-step run) against the
# last logged of 300 steps, and the test classes separate far above chance (1/70), both with
# the default d = 2 (the paper's setting of its Figure 3) and with d = D
pk | train -o f1.ckpt --head point -D 4 --loss fstat --fstat-dims 2 -n 1 -t 1 --log f1.log 2>/dev/null || fail "train 1 step"
pk | train -o f.ckpt --head point -D 4 --loss fstat -n 300 -t 1 --lr 3e-3 --log f.log 2>/dev/null ||
    fail "train fstat (default d)"
tshow -H f.ckpt | grep -q '"fstat_dims": 2[,}]' || fail "the default fstat_dims not recorded as 2"
pk | train -o g.ckpt --head point -D 4 --loss fstat --fstat-dims 4 -n 300 -t 1 --lr 3e-3 --log g.log 2>/dev/null ||
    fail "train fstat d = D"
pk -n 1 | train -o one.ckpt --head point -D 1 --loss fstat -n 1 -t 1 2>/dev/null || fail "train fstat -D 1"
tshow -H one.ckpt | grep -q '"fstat_dims": 1[,}]' || fail "the default fstat_dims with -D 1 not recorded as 1"
first=$(tail -n 1 f1.log | cut -f2) last=$(tail -n 1 f.log | cut -f2)
check_lt "$last" "$first" "final loss $last is not below the initial $first"
for m in f g; do
    embed -m $m.ckpt < test.hs > e.hs || fail "embed $m"
    acc=$(knn e.hs | knn --summary | json_get accuracy) # (fstat learns no match probability)
    echo "$m: loss at step 300 $(tail -n 1 $m.log | cut -f2), 5-NN accuracy $acc (d = 2: initial loss $first)"
    check_lt 0.08 "$acc" "$m: 5-NN accuracy $acc is not far above chance (1/70)"
done

# refusals: pair batches (exit 1, naming the batcher mode), a mixture head, --fstat-dims
# elsewhere or above -D (exit 2)
batcher -m pairs -b 16 < train.hs 2>/dev/null | head -c 200000 > pairs.hs
expect_fail 1 "batcher -m pk" train -o p.ckpt --head point -D 4 --loss fstat -n 5 -t 1 < pairs.hs
expect_exit 2 "fstat on a mog head" train -o p.ckpt --head mog -D 4 --loss fstat -n 5 < /dev/null
expect_exit 2 "--fstat-dims with proto" train -o p.ckpt --head point -D 4 --loss proto --fstat-dims 2 -n 5 < /dev/null
expect_exit 2 "--fstat-dims 5 with -D 4" train -o p.ckpt --head point -D 4 --loss fstat --fstat-dims 5 -n 5 < /dev/null
expect_exit 2 "--fstat-dims 0" train -o p.ckpt --head point -D 4 --loss fstat --fstat-dims 0 -n 5 < /dev/null
[ -e p.ckpt ] && fail "a refused run wrote a checkpoint"
pass
