#!/bin/sh
# train on P x K batches with the Multi-Similarity loss (lib/training/loss_ms.c): it learns (the
# loss falls, the test classes separate far above chance, better than the untrained network),
# the same seed gives the same bytes, a resumed run is the uninterrupted one, its four settings
# are in the checkpoint and come back on resume, and it refuses pair batches.
set -u
. "$(dirname "$0")/../lib.sh"
cd "$T"
mkdigits -N 2 -s train -n 20000 | occlude -p 0.2 > train.hs || fail "mkdigits train"
mkdigits -N 2 -s test-seen | occlude -p 0 > test.hs || fail "mkdigits test"
pk() { batcher -m pk -P 16 -K 4 "$@" < "$T/train.hs"; }

# learning: 300 steps of 16 classes x 4 images at the paper's settings, D = 8
pk | train -o m.ckpt --head point --loss ms -D 8 -n 300 -t 1 --lr 3e-3 --log m.log 2>/dev/null || fail "train ms"
pk | train -o u.ckpt --head point --loss ms -D 8 -n 1 -t 1 --lr 1e-12 2>/dev/null || fail "train ms, untrained"
first=$(sed -n 2p m.log | cut -f2) last=$(tail -n 1 m.log | cut -f2)
check_lt "$last" "$first" "final loss $last is not below the first logged $first"
acc() { embed -m "$1" < test.hs | knn | knn --summary | json_get accuracy; }
a=$(acc m.ckpt) u=$(acc u.ckpt)
echo "ms: loss $first -> $last, 5-NN accuracy $a (untrained $u, chance 1/70)"
check_lt 0.3 "$a" "5-NN accuracy $a is not far above chance (1/70)"
check_lt "$u" "$a" "5-NN accuracy $a is not above the untrained network's $u"

# same seed, same bytes; 20 + 20 steps equal 40 straight, with settings of their own
check_repeat_resume pk --head point --loss ms -D 4 -S 3 -t 1 --ms-alpha 1.5 --ms-beta 20 --ms-lambda 0.5 --ms-epsilon 0.2
[ "$(tshow -H "$T/resumed.ckpt" | jq -c '[.meta.ms_alpha, .meta.ms_beta, .meta.ms_lambda, .meta.ms_epsilon]')" = '[1.5,20,0.5,0.2]' ] ||
    fail "settings in the checkpoint: $(tshow -H "$T/resumed.ckpt" | jq -c .meta)"
[ "$(tshow -H m.ckpt | jq -c '[.meta.ms_alpha, .meta.ms_beta, .meta.ms_lambda, .meta.ms_epsilon]')" = '[2,50,1,0.1]' ] ||
    fail "the paper's settings in the checkpoint: $(tshow -H m.ckpt | jq -c .meta)"

expect_fail 1 "does not take pairbatch batches; feed it \`batcher -m pk\`" \
    sh -c 'batcher -m pairs -n 2 < train.hs | train -o x.ckpt --head point --loss ms -n 1'
expect_exit 2 "ms on a stochastic head" sh -c 'train -o x.ckpt --head mog --loss ms < /dev/null'
expect_exit 2 "--ms-beta with triplet" sh -c 'train -o x.ckpt --head point --loss triplet --ms-beta 3 < /dev/null'
expect_exit 2 "--ms-lambda 2" sh -c 'train -o x.ckpt --head point --loss ms --ms-lambda 2 < /dev/null'
pass
