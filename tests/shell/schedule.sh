#!/bin/sh
# train --lr-steps and --wd (issue 47 item 1: PFE's step schedule and weight decay): the rate the
# log shows falls tenfold at each step given, both are in the checkpoint and a resumed run keeps
# them (its bytes are the uninterrupted run's), a weight decay shrinks the weights against the same
# run without it, a run without them keeps the bytes of before (no keys), and misuse is refused.
set -u
. "$(dirname "$0")/../lib.sh"
cd "$T"
mkdigits -N 1 -s train -n 4000 > train.hs 2>/dev/null || fail "mkdigits"
pairs() { batcher -m pairs -b 16 -S 2 < "$T/train.hs" 2>/dev/null; }
tr() { pairs | train --head point -D 4 -S 3 -t 1 "$@" 2>/dev/null; }

# the rate: 1e-3 to step 39, 1e-4 from 40, 1e-5 from 90; the log's lr column at steps 50 and 100
tr -o s.ckpt -n 100 --lr-steps 40,90 --log s.log || fail "train --lr-steps"
[ "$(awk -F '\t' '$1 == 50 { print $10 }' s.log)" = 0.0001 ] || fail "rate at step 50: $(cat s.log)"
[ "$(awk -F '\t' '$1 == 100 { print $10 }' s.log)" = 1e-05 ] || fail "rate at step 100: $(cat s.log)"
[ "$(tshow -H s.ckpt | jq -c '[.meta.decay, .meta.lr_steps]')" = '["steps","40,90"]' ] ||
    fail "schedule in the checkpoint: $(tshow -H s.ckpt | jq -c .meta)"

# resumed: the same bytes as straight through, with both
tr -o a.ckpt -n 60 --lr-steps 30 --wd 5e-4 || fail "train a"
tr -o r.ckpt -n 30 --lr-steps 30 --wd 5e-4 || fail "train r"
pairs | train --resume r.ckpt -n 60 -t 1 2>/dev/null || fail "resume"
totsv a.ckpt > a.tsv && totsv r.ckpt > r.tsv || fail "totsv"
cmp -s a.tsv r.tsv || fail "a resumed run with --lr-steps and --wd differs from the uninterrupted one"
[ "$(tshow -H r.ckpt | jq -c '[.meta.wd, .meta.lr_steps]')" = '[0.0005,"30"]' ] || fail "wd after resume"

# a strong weight decay shrinks the weights (the sum of squares of param.*.w)
tr -o w0.ckpt -n 200 --lr 3e-3 || fail "train wd 0"
tr -o w1.ckpt -n 200 --lr 3e-3 --wd 0.05 || fail "train wd 0.05"
norm() { totsv "$1" | awk -F '\t' 'NR == 1 { for (i = 1; i <= NF; i++) if ($i ~ /^param\..*\.w/) c[i] = 1; next }
    { for (i in c) s += $i * $i } END { printf "%.6g\n", s }'; }
n0=$(norm w0.ckpt) n1=$(norm w1.ckpt)
echo "schedule: sum of squared weights after 200 steps: $n0 without weight decay, $n1 with --wd 0.05"
check_lt "$n1" "$n0" "--wd 0.05 did not shrink the weights ($n1 against $n0)"
tshow -H w0.ckpt | jq -e '.meta | has("wd") or has("lr_steps") | not' > /dev/null || fail "a run without them writes their keys"

expect_exit 2 "--lr-steps 20,10" sh -c 'train -o x.ckpt --head point --lr-steps 20,10 < /dev/null'
expect_exit 2 "--decay steps alone" sh -c 'train -o x.ckpt --head point --decay steps < /dev/null'
expect_exit 2 "--wd -1" sh -c 'train -o x.ckpt --head point --wd -1 < /dev/null'
pass
