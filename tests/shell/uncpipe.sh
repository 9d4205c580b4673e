#!/bin/sh
# uncpipe: pipelines/uncertainty.sh, every method on a user's frozen features (issue 47 item 6).
# The data is made by numpy here: 12 classes of 32-d vectors, 30 % of them noisier. Checks: the
# split by class (fromnpz --where: classes 0..5 train, 6..11 judged) and by a split array; three
# methods x two seeds give the report (the battery's table with a row per method and its seeds,
# each run's seconds, the ranking of the learned sources, finding.sh's table) and the results
# file, a run per method and seed; a rerun trains nothing and prints the same page; a grid killed
# in training resumes its checkpoint when run again, and a run whose folder was removed is run
# again; fromnpz --where's refusals; the pipeline's
# refusals, one line each (no labels, too few classes, other features into the same OUT, no
# features file). Needs Debian's python3 with numpy.
set -u
. "$(dirname "$0")/../lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
PY=/usr/bin/python3
export PYTHONPATH="$ROOT/python"
cd "$T" || fail "cd $T"
$PY - <<'EOF' || fail "python3 could not write the .npz files"
import numpy as np
r = np.random.default_rng(3)
n, F, k = 1200, 32, 12
y = np.arange(n) % k
bad = r.random(n) < 0.3
x = r.normal(size=(k, F))[y] + r.normal(size=(n, F)) * np.where(bad, 2.5, 0.8)[:, None]
np.savez("f.npz", features=x.astype(np.float32), labels=y, corrupt=bad.astype(np.int8))
np.savez("split.npz", emb=x, y=y, split=(np.arange(n) % 4 == 0).astype(np.int8))
np.savez("nolab.npz", features=x)
np.savez("three.npz", features=x, labels=y % 3)
np.savez("many.npz", features=x, labels=3 * (np.arange(n) % 40) + 1)   # 40 classes 1, 4, ..., 118
EOF
U=$ROOT/pipelines/uncertainty.sh
export BOOTSTRAP=100 PROGRESS_EVERY=1

# --- fromnpz --where: the parts, and its refusals
fromnpz -k features --where labels=0..5 f.npz > a.hs 2> err || fail "fromnpz --where labels=0..5: $(cat err)"
[ "$(tshow -H a.hs | tail -n 1 | jq -c '.meta.classes.values')" = '[0,1,2,3,4,5]' ] || fail "--where: meta classes $(tshow -H a.hs | tail -n 1 | jq -c .meta.classes)"
tshow -q a.hs | grep -q '"records": 600' || fail "--where labels=0..5: not 600 items"
fromnpz -k features --where class=7 f.npz | tshow -q | grep -q '"records": 100' || fail "--where class=7: not 100 items"
for bad in "labels=9..3" "labels=x" "=1" "labels=1.." "labels"; do
    expect_exit 2 "fromnpz --where $bad" fromnpz -k features --where "$bad" f.npz
done
expect_exit 1 "fromnpz --where on no such field" fromnpz -k features --where nosuch=1 f.npz
expect_exit 1 "fromnpz --where on the features" fromnpz -k features --where features=1 f.npz
expect_exit 1 "fromnpz --where keeping nothing" fromnpz -k features --where labels=20..30 f.npz
fromnpz -k features --where labels=20..30 f.npz 2>&1 > /dev/null | grep -qx "fromnpz: f.npz: --where labels=20..30: none of the 1200 items has it" ||
    fail "--where keeping nothing: $(fromnpz -k features --where labels=20..30 f.npz 2>&1 > /dev/null)"

# --- three methods, two seeds
METHODS="triplet hib pfe" sh "$U" -s 150 --seeds 2 -j 2 f.npz out > page 2> err || fail "uncertainty.sh exited $?: $(tail -n 20 err)"
grep -q "^Frozen features, split by class: the 6 classes 0..5 train, the 6 classes 6..11 are judged" page ||
    fail "no split by class in the page: $(head -n 5 page)"
grep -q "^uncertainty.sh: split by class: .* ([0-9][0-9]* and [0-9][0-9]* items)$" err ||
    fail "stderr does not count the two parts: $(grep '^uncertainty.sh: split' err)"
for m in triplet hib pfe; do
    grep -q "^| $m | 2 | [0-9.]* ± [0-9.]* | " page || fail "no row of $m with 2 seeds: $(head -n 12 page)"
done
grep -q "^| 1 | \(hib\|pfe\) | \(var\|eta\) | " page || fail "no ranking: $(sed -n '/Ranking/,$p' page | head)"
[ "$(grep -c '^| [0-9] | \(hib\|pfe\) | \(var\|eta\) | ' page)" = 3 ] || fail "the ranking: not hib's var and eta and pfe's var: $(sed -n '/Ranking/,$p' page | head)"
grep -q "free baselines alone): triplet\." page || fail "triplet not named as without an uncertainty of its own"
grep -q "^| f | test | pfe | var | r1 AUROC | " page || fail "no finding.sh table"
cmp -s page out/report.md || fail "the page differs from out/report.md"
[ "$(cut -f1 out/results-uncertainty.tsv | sort -u | grep -vc '^run$')" = 6 ] || fail "results: not 6 runs: $(cut -f1 out/results-uncertainty.tsv | sort -u)"
grep -q "^hib.s715	hib	715	test	u:eta:r1:auroc	0\.[0-9]*	$" out/results-uncertainty.tsv || fail "results: no hib.s715 eta line"
grep -q "^pfe	pfe	714	test	train_s	[0-9]*	$" out/results-uncertainty.tsv || fail "results: no pfe training time"
[ "$(tshow -H out/data/train.hs | tail -n 1 | jq .meta.classes.count)" = 6 ] || fail "train.hs: not 6 classes"
grep -q "^uncertainty: " err || fail "no progress line on stderr: $(head -n 5 err)"
# a rerun trains nothing and prints the same page
touch -d '2000-01-01' out/runs/*/model.ckpt
METHODS="triplet hib pfe" sh "$U" -s 150 --seeds 2 -j 2 f.npz out > page2 2> err || fail "rerun: $(tail -n 5 err)"
cmp -s page page2 || fail "the rerun's page differs: $(diff page page2 | head)"
[ -z "$(find out/runs -name model.ckpt -newer f.npz)" ] || fail "the rerun trained again"
# a run's folder removed: the rerun trains it again (GNU parallel's log had its job as done)
rm -rf out/runs/hib.s715
METHODS="triplet hib pfe" sh "$U" -s 150 --seeds 2 -j 2 f.npz out > page2b 2> err || fail "rerun without hib.s715: $(tail -n 5 err)"
[ -s out/runs/hib.s715/results.tsv ] || fail "a removed run was not run again: $(grep hib.s715 err | head -n 3)"

# --- a split array, and a grid killed in training that resumes
setsid env METHODS=hib TRAIN_ARGS="--save-every 100" sh "$U" -s 4000 --seeds 1 -j 1 --features emb --labels y split.npz out2 > /dev/null 2> err2 &
pid=$!
i=0
while [ ! -s out2/runs/hib/model.ckpt ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
[ -s out2/runs/hib/model.ckpt ] || { kill -TERM -$pid 2>/dev/null; fail "no checkpoint within 30 s: $(tail -n 5 err2)"; }
ps -o pid,pgid,cmd -g $pid > ps.txt; kill -TERM -$pid || fail "kill: $(cat ps.txt)"
wait $pid 2>/dev/null
[ -s out2/runs/hib/results.tsv ] && fail "the run finished before it was killed: give it more steps ($(tail -n 3 out2/runs/hib/run.log; ps -o pid,pgid,cmd -g $pid))"
METHODS=hib TRAIN_ARGS="--save-every 100" sh "$U" -s 4000 --seeds 1 -j 1 --features emb --labels y split.npz out2 > page3 2> err3 ||
    fail "rerun after the kill: $(tail -n 10 err3)"
grep -q "train: resuming .*model.ckpt at step [1-9][0-9]* of 4000" out2/runs/hib/run.log || fail "the rerun did not resume: $(head -n 5 out2/runs/hib/run.log)"
grep -q "^Frozen features, split by the array split: 0 trains, 1 is judged" page3 || fail "no split by the array: $(head -n 5 page3)"
tshow -q out2/data/test.hs | grep -q '"records": 300' || fail "split=1: not 300 items"

# --- more classes than tshow -H lists (16): the split takes them all (tshow -m classes)
METHODS=triplet sh "$U" -s 20 --seeds 1 many.npz out4 > page4 2> err4 || fail "40 classes: $(tail -n 5 err4)"
grep -q "split by class: the 20 classes 1..58 train, the 20 classes 61..118 are judged" page4 || fail "40 classes: $(sed -n 3p page4)"

# --- --mu: PFE's protocol, the layer before the embedding in and the frozen embedding as the mean
# (the arrays named as make-features.sh names them: the embedding is the array features):
# pfe's embeddings keep that mean (normalised, 8 dimensions), the point heads train on the layer
$PY -c '
import numpy as np
z = np.load("f.npz"); x = z["features"]
np.savez("mu.npz", hidden=x, features=(x[:, :8] * 3 + 1).astype(np.float32), labels=z["labels"])' || fail "mu.npz"
METHODS="triplet pfe" sh "$U" -s 60 --seeds 1 --features hidden --mu features mu.npz out5 > page5 2> err5 ||
    fail "--mu: $(tail -n 5 err5)"
$PY - <<'EOF' || fail "--mu: pfe's mean is not the embedding's"
import numpy as np, hedge_stream as hs
z = np.load("mu.npz"); y = z["labels"]
_, E = hs.read("out5/runs/pfe/emb.hs")
m = z["features"][(y >= 6)].astype(np.float64)
m /= np.linalg.norm(m, axis=1, keepdims=True)
assert E["mu"].shape[1:] == (1, 8) and np.abs(E["mu"][:, 0] - m).max() < 1e-6, np.abs(E["mu"][:, 0] - m).max()
_, T = hs.read("out5/runs/triplet/emb.hs")
assert T["mu"].shape[1:] == (1, 64), T["mu"].shape
EOF
[ "$(cat out5/data/mean_dims)" = 8 ] || fail "--mu: mean_dims $(cat out5/data/mean_dims)"

# --- refusals, one line each
expect_exit 1 "features without labels" sh "$U" -s 10 --seeds 1 nolab.npz o3
sh "$U" -s 10 --seeds 1 nolab.npz o3 2>&1 | grep -q "^uncertainty.sh: .*nolab.npz: no labels" || fail "no labels: $(sh "$U" -s 10 nolab.npz o3 2>&1)"
expect_exit 1 "three classes" sh "$U" -s 10 --seeds 1 three.npz o4
sh "$U" -s 10 three.npz o4 2>&1 | grep -q "3 classes; a split by class needs at least 4" || fail "three classes: $(sh "$U" -s 10 three.npz o4 2>&1)"
expect_exit 1 "other features into out" sh "$U" -s 150 --seeds 2 split.npz out
sh "$U" -s 150 split.npz out 2>&1 | grep -q "holds the parts of other features" || fail "other features into out: $(sh "$U" -s 150 split.npz out 2>&1 | tail -n 2)"
expect_exit 2 "no features file" sh "$U" -s 10 out
expect_exit 2 "an option of compare.sh" sh "$U" --data fashion f.npz o5
pass
