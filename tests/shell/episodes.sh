#!/bin/sh
# train on episodes (batcher -m episodes) with the proto (PN) and spe (SPE) losses: learning,
# determinism, exact resume, the loss refusing batch kinds it does not take, the SPE settings
# in the checkpoint, embed's spe_se2 and fewshot reading it.
set -u
. "$(dirname "$0")/../lib.sh"
cd "$T"
mkdigits -N 2 -s train -n 20000 | occlude -p 0.2 > train.hs || fail "mkdigits train"
mkdigits -N 2 -s test-seen | occlude -p 0 > test.hs || fail "mkdigits test"
eps() { batcher -m episodes -c 20 -s 5 -q 5 -S 5 "$@" < "$T/train.hs"; }

# same seed, same bytes; 20 + 20 steps equal 40 straight (spe: its gamma and the samples too)
eps | train -o a.ckpt --head mog -C 1 -D 2 --loss spe -n 40 -S 3 -t 1 2>/dev/null || fail "train spe a"
eps | train -o b.ckpt --head mog -C 1 -D 2 --loss spe -n 40 -S 3 -t 1 2>/dev/null || fail "train spe b"
totsv a.ckpt > a.tsv && totsv b.ckpt > b.tsv || fail "totsv"
cmp -s a.tsv b.tsv || fail "same seed gave different spe checkpoints"
eps | train -o r.ckpt --head mog -C 1 -D 2 --loss spe -n 20 -S 3 -t 1 2>/dev/null || fail "train spe r"
eps | train --resume r.ckpt -n 40 -t 1 2>/dev/null || fail "resume spe"
totsv r.ckpt > r.tsv || fail "totsv r"
cmp -s a.tsv r.tsv || fail "a resumed spe run differs from the uninterrupted one"
grep -q 'spe.gamma' a.tsv || fail "no spe.gamma parameter in the checkpoint"

# the checkpoint keeps the SPE settings: gamma0 = shots x D x 0.01 = 0.1 by default
tshow -H a.ckpt > a.json || fail "tshow checkpoint"
grep -q '"gamma0": 0.1[,}]' a.json || fail "gamma0 is not 5 x 2 x 0.01: $(grep -o '"gamma0": [^,]*' a.json)"
grep -q '"sampler": "intersection"' a.json || fail "sampler not recorded"
eps -n 5 | train -o n.ckpt --head mog -C 1 -D 2 --loss spe --sampler naive -K 4 --se2-0 0.5 -n 5 -t 1 2>/dev/null ||
    fail "train spe --sampler naive"
tshow -H n.ckpt | grep -q '"sampler": "naive"' || fail "naive sampler not recorded"

# learning: PN and SPE, 150 episodes of 20 classes; 10-way 5-shot accuracy on the test classes
# far above chance (0.1)
eps | train -o pn.ckpt --head point -D 2 --loss proto -n 150 -t 2 --lr 3e-3 --log pn.log 2>/dev/null || fail "train proto"
eps | train -o spe.ckpt --head mog -C 1 -D 2 --loss spe -n 150 -t 2 --lr 3e-3 --log spe.log 2>/dev/null || fail "train spe"
for m in pn spe; do
    first=$(sed -n 2p $m.log | cut -f2) last=$(tail -n 1 $m.log | cut -f2)
    check_lt "$last" "$first" "$m: final loss $last is not below the first logged $first"
    acc=$(tail -n 1 $m.log | cut -f11)
    check_lt 0.2 "$acc" "$m: query accuracy $acc of the last training episode"
    embed -m $m.ckpt < test.hs > e-$m.hs || fail "embed $m"
    fewshot -s e-$m.hs -n 10 -k 5 -q 5 -R 100 --json fs-$m.json e-$m.hs > /dev/null || fail "fewshot $m"
    acc=$(sed 's/.*"pn": {"accuracy": \([^,]*\).*/\1/' fs-$m.json)
    check_lt 0.4 "$acc" "$m: 10-way 5-shot accuracy $acc is not far above chance"
done
tshow -H e-spe.hs | grep -q '"spe_se2"' || fail "embed wrote no spe_se2 for an SPE model"
grep -q '"se2_from": "support stream header spe_se2"' fs-spe.json || fail "fewshot did not take the model's s_e^2"
tshow -H e-pn.hs | grep -q '"spe_se2"' && fail "embed wrote spe_se2 for a PN model"

# each loss takes only its batch kinds; options of another loss are refused
expect_fail 1 "does not take episodes batches; feed it \`batcher -m pairs\`" \
    sh -c 'batcher -m episodes -c 20 -n 2 < train.hs | train -o x.ckpt --head mog -n 1'
expect_fail 1 "does not take pairbatch batches; feed it \`batcher -m episodes\`" \
    sh -c 'batcher -m pairs -n 2 < train.hs | train -o x.ckpt --head point --loss proto -n 1'
expect_fail 1 "does not take groupbatch batches" \
    sh -c 'batcher -m pk -n 2 < train.hs | train -o x.ckpt --head mog --loss spe -n 1'
expect_exit 2 "spe with two components" sh -c 'train -o x.ckpt --head mog -C 2 --loss spe < /dev/null'
expect_exit 2 "proto on a stochastic head" sh -c 'train -o x.ckpt --head mog --loss proto < /dev/null'
expect_exit 2 "--se2-0 without spe" sh -c 'train -o x.ckpt --head mog --se2-0 1 < /dev/null'
expect_exit 2 "--sampler nonsense" sh -c 'train -o x.ckpt --head mog --loss spe --sampler some < /dev/null'
[ ! -e x.ckpt ] || fail "a refused train left x.ckpt behind"
pass
