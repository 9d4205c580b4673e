#!/bin/sh
# train and embed end to end on the default data: learning, determinism, exact resume,
# checkpoint on SIGINT, NaN handling, bad input.
set -u
. "$(dirname "$0")/../lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$T"
mkdigits -N 2 -s train -n 20000 | occlude -p 0.2 > train.hs || fail "mkdigits train"
mkdigits -N 2 -s test-seen | occlude -p 0 > test.hs || fail "mkdigits test"
batches() { batcher -m pairs -b 64 -S 5 < "$T/train.hs"; }

# same seed, data and threads: byte-identical checkpoints (same command, run in two folders)
mkdir a b c
(cd a && batches | train -o m.ckpt --head mog -C 2 -D 2 -n 40 -S 3 -t 1 2>/dev/null) || fail "train a"
(cd b && batches | train -o m.ckpt --head mog -C 2 -D 2 -n 40 -S 3 -t 1 2>/dev/null) || fail "train b"
cmp -s a/m.ckpt b/m.ckpt || fail "same seed gave different checkpoints"
(cd c && batches | train -o m.ckpt --head mog -C 2 -D 2 -n 40 -S 4 -t 1 2>/dev/null) || fail "train c"
cmp -s a/m.ckpt c/m.ckpt && fail "a different seed gave the same checkpoint"
cp a/m.ckpt a.ckpt
# other thread counts give the same parameters and optimizer state too
(cd c && batches | train -o t2.ckpt --head mog -C 2 -D 2 -n 40 -S 3 -t 2 2>/dev/null) || fail "train -t 2"
totsv a.ckpt > a1.tsv && totsv c/t2.ckpt > a2.tsv || fail "totsv"
cmp -s a1.tsv a2.tsv || fail "2 threads gave other parameters than 1 thread"

# --recipe fast: its schedule (lr 3e-3, warm-up over a 20th of -n, cosine to 1/100), the options
# given besides winning over it in any order (the same parameters and state as written out)
(cd c && batches | train -o rf.ckpt --head mog -C 2 -D 2 -n 40 -S 3 -t 1 --recipe fast 2>/dev/null &&
    batches | train -o rl.ckpt --head mog -C 2 -D 2 -n 40 -S 3 -t 1 --lr 3e-3 --warmup 2 --decay cosine --lr-end 0.01 2>/dev/null &&
    batches | train -o ro.ckpt --head mog -C 2 -D 2 -n 40 -S 3 -t 1 --lr 1e-3 --recipe fast 2>/dev/null &&
    batches | train -o rm.ckpt --head mog -C 2 -D 2 -n 40 -S 3 -t 1 --lr 1e-3 --warmup 2 --decay cosine --lr-end 0.01 2>/dev/null) ||
    fail "train --recipe"
for p in rf:rl ro:rm; do
    totsv "c/${p%:*}.ckpt" > r1.tsv && totsv "c/${p#*:}.ckpt" > r2.tsv && cmp -s r1.tsv r2.tsv || fail "--recipe fast: $p differ"
done
totsv c/rf.ckpt | cmp -s - a1.tsv && fail "--recipe fast trained as the defaults do"
expect_exit 2 "--recipe nosuch" train -o x.ckpt --recipe nosuch

# resume: 20 + 20 steps equal 40 straight (parameters and optimizer state, to the bit)
batches | train -o r.ckpt --head mog -C 2 -D 2 -n 20 -S 3 -t 1 2>/dev/null || fail "train r"
batches | train --resume r.ckpt -n 40 -t 1 2>/dev/null || fail "resume r"
totsv a.ckpt > a.tsv && totsv r.ckpt > r.tsv || fail "totsv"
cmp -s a.tsv r.tsv || fail "resumed run differs from the uninterrupted one"

# the same with a learning-rate schedule (warm-up, cosine decay to the 40th step): it is a
# function of the step, so 20 + 20 equal 40; snapshots are kept every 10 steps
batches | train -o s40.ckpt --head mog -D 2 -n 40 -S 3 -t 1 --lr 3e-3 --warmup 10 --decay cosine --lr-end 0.1 \
    --snapshot-every 10 --log s40.log 2>/dev/null || fail "train with a schedule"
batches | train -o s20.ckpt --head mog -D 2 -n 20 -S 3 -t 1 --lr 3e-3 --warmup 10 --decay cosine --lr-end 0.1 2>/dev/null ||
    fail "train s20"
# the first 20 steps of a 40-step cosine are not those of a 20-step one: resume from a snapshot
batches | train --resume s40.step000000020.ckpt -o s2.ckpt -t 1 2>/dev/null || fail "resume from a snapshot"
totsv s40.ckpt > s40.tsv && totsv s2.ckpt > s2.tsv || fail "totsv"
cmp -s s40.tsv s2.tsv || fail "a scheduled run resumed from its snapshot differs from the uninterrupted one"
totsv s20.ckpt > s20.tsv && cmp -s s20.tsv s40.tsv && fail "-n changed nothing in a decayed schedule"
for st in 10 20 30 40; do
    [ -s s40.step0000000$st.ckpt ] || fail "no snapshot at step $st"
done
awk -F'\t' 'NR > 1 && $1 == 40 { exit !($10 > 2.9e-4 && $10 < 3.1e-4) }' s40.log || fail "the last step's rate is not lr x 0.1: $(tail -n 1 s40.log)"

# SIGINT: checkpoint written, exit 130, and it resumes. train reads a FIFO so that $! is its
# own pid (no pgrep: other trainings may run on the machine).
mkfifo int.fifo
batches > int.fifo 2>/dev/null &
train -o int.ckpt --head point -D 2 -n 100000 -t 1 --save-every 100000 --snapshot-every 1 < int.fifo 2>int.err &
pid=$!
wait_caught $pid 2 || { kill $pid 2>/dev/null; fail "train never caught SIGINT"; }
# a run that has trained no step writes nothing (issue 34): wait for its first step's snapshot
_i=0
while [ ! -s int.step000000001.ckpt ] && [ $_i -lt 1200 ]; do sleep 0.1; _i=$((_i + 1)); done
[ -s int.step000000001.ckpt ] || { kill $pid 2>/dev/null; fail "train made no step in 120 s"; }
kill -INT $pid
wait $pid
rc=$?
[ "$rc" = 130 ] || { kill $pid 2>/dev/null; fail "train after SIGINT exited $rc, expected 130"; }
[ -s int.ckpt ] || fail "no checkpoint after SIGINT"
embed -m int.ckpt < test.hs > /dev/null || fail "checkpoint saved on SIGINT is not usable"
grep -q "resume" int.err || fail "no resume hint after SIGINT"

# a loss that explodes: stop with a message, keep the last good checkpoint
batches | train -o nan.ckpt --head mog -D 2 -n 200 --lr 1e9 --save-every 1 -t 1 2>nan.err
rc=$?
if [ "$rc" != 0 ]; then
    [ "$rc" = 1 ] || fail "exploding loss exited $rc"
    grep -q "last good checkpoint" nan.err || fail "no message about the last good checkpoint"
    [ -s nan.ckpt ] && embed -m nan.ckpt < test.hs > /dev/null || fail "last good checkpoint unusable"
fi

# learning: loss falls and test classes separate far above chance (1/70) after 300 steps
batcher -m pairs -b 128 < train.hs | train -o p.ckpt --head point -D 2 -n 300 -t 2 --log p.log 2>/dev/null || fail "train point"
batcher -m pairs -b 128 < train.hs | train -o g.ckpt --head mog -C 1 -D 2 -n 300 -t 2 --log g.log 2>/dev/null || fail "train mog"
for m in p g; do
    first=$(sed -n 2p $m.log | cut -f2) last=$(tail -n 1 $m.log | cut -f2)
    check_lt "$last" "$first" "$m: final loss $last is not below the first logged $first"
    embed -m $m.ckpt < test.hs > e.hs || fail "embed $m"
    acc=$(pairscore --self e.hs | knn | knn --summary | json_get accuracy)
    check_lt 0.08 "$acc" "$m: 5-NN accuracy $acc is not far above chance (1/70)"
done

# embed: fields and meta of the embeddings kind
embed -m g.ckpt < test.hs | tshow -H > h.json || fail "embed | tshow"
for key in '"kind": "embeddings"' '"name": "mu"' '"name": "var"' '"match_a"' '"name": "occluded"'; do
    grep -q "$key" h.json || fail "embedding header lacks $key"
done

# bad input
expect_exit 1 "train on embeddings" sh -c 'embed -m g.ckpt < test.hs | train -o x.ckpt -n 5'
mkdigits -N 3 -s test-seen -n 1000 > n3.hs
expect_exit 1 "embed 3-digit images with a 2-digit model" sh -c 'embed -m g.ckpt < n3.hs'
head -c 3000 g.ckpt > trunc.ckpt
expect_exit 1 "embed with a truncated checkpoint" sh -c 'embed -m trunc.ckpt < test.hs'
expect_exit 1 "embed with a non-checkpoint" sh -c 'embed -m test.hs < test.hs'
expect_exit 2 "train with nonsense options" sh -c 'train -o x.ckpt -D zero < /dev/null'
expect_exit 2 "train without -o" sh -c 'train < /dev/null'
expect_exit 2 "train -K not a multiple of -C" sh -c 'train -o x.ckpt --head mog -C 3 -K 8 < train.hs'
expect_exit 2 "embed without -m" sh -c 'embed < test.hs'
[ ! -e x.ckpt ] || fail "a failed train left x.ckpt behind"
# -h lists every loss of the registry (the names `--loss` knows), each with its line of help
# (an unknown loss is misuse like any other: the message, then the Try line; issue 34)
expect_fail 2 "--loss: unknown loss 'no-such-loss'; known: " train -o x.ckpt --loss no-such-loss < /dev/null
[ "$(wc -l < "$T/err")" = 2 ] && sed -n 2p "$T/err" | grep -qx "Try 'train --help' for help." ||
    fail "train --loss no-such-loss: not the message and the Try line: $(cat "$T/err")"
known=$(sed -n '1s/.*known: *//p' "$T/err")
[ -n "$known" ] || fail "train --loss no-such-loss does not list the known losses"
train -h > h.txt || fail "train -h"
for l in $(echo "$known" | tr -d ,); do
    grep -q "^    $l  *[^ ]" "$ROOT/man/train.1.scd" || fail "man/train.1.scd does not describe the loss $l"
    grep -q "[ ,]$l\(,\|$\)" h.txt || fail "train -h does not name the loss $l"
done
pass
