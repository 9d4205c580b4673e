#!/bin/sh
# ensemble: deep ensembles (train --ensemble M, issue 47 item 4): M point heads on one body, each
# trained by the loss on its own means; embed gives each item's mean over the members and their
# unbiased variance (model mog, C = 1, meta ensemble M). On a linear body the members are the
# head's M row blocks: numpy computes them from the checkpoint's tensors and checks embed's mean
# and variance (1e-5). A run gives the same parameters twice and resumed (check_repeat_resume),
# and the same records at 1 and 2 threads; the members learn (5-NN accuracy above the untrained
# ensemble's) and differ (variances above the floor); evaluate judges the variance as a learned
# source. Refusals, one line each: a loss with parameters of its own (arcface's class weights,
# softcon's a and b), a stochastic head, --ensemble 1 and 17, embed --mc of an ensemble, and a
# checkpoint whose C is not its ensemble's. The data: 8 classes of 24-d vectors made by numpy.
set -u
. "$(dirname "$0")/../lib.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)
PY=/usr/bin/python3
export PYTHONPATH="$root/python"
cd "$T" || fail "cd $T"
$PY - <<'PYEOF' || fail "python3 could not write feat.npz"
import numpy as np
r = np.random.default_rng(5)
n, F, k = 600, 24, 8
y = np.arange(n) % k
x = r.normal(size=(k, F))[y] + r.normal(size=(n, F)) * (0.5 + r.random(n))[:, None]
np.savez("feat.npz", features=x.astype(np.float32), labels=y)
PYEOF
fromnpz -k features feat.npz > feat.hs 2> err || fail "fromnpz: $(cat err)"
feed() { batcher -m pk -P 8 -K 8 -S 3 "$T/feat.hs"; }
check_repeat_resume feed --body mlp:32 --loss triplet --ensemble 3 -D 6 -S 5 -t 2
feed | train -o e.ckpt --body mlp:32 --loss triplet --ensemble 4 -D 6 -n 200 -S 5 -t 1 2> err || fail "train --ensemble: $(cat err)"
feed | train -o u.ckpt --body mlp:32 --loss triplet --ensemble 4 -D 6 -n 1 --lr 1e-12 -S 5 -t 1 2> err || fail "train (untrained)"
[ "$(tshow -m ensemble e.ckpt) $(tshow -m C e.ckpt) $(tshow -m head e.ckpt)" = "4 4 point" ] ||
    fail "the checkpoint: ensemble $(tshow -m ensemble e.ckpt 2>&1), C $(tshow -m C e.ckpt 2>&1)"
embed -m e.ckpt < feat.hs > e.hs 2> err || fail "embed of an ensemble: $(cat err)"
[ "$(tshow -H e.hs | jq -c '[.meta.model, .meta.ensemble, .meta.C, [.fields[] | .name]]')" = '["mog",4,1,["mu","var","class","id"]]' ] ||
    fail "the embeddings' header: $(tshow -H e.hs | jq -c '[.meta, .fields]')"
embed -m e.ckpt -t 2 -b 7 < feat.hs | totsv > e2.tsv && totsv e.hs > e1.tsv && cmp -s e1.tsv e2.tsv || fail "embed -t 2 -b 7 differs"
acc() { embed -m "$1" < feat.hs | knn | knn --summary | json_get accuracy; }
a=$(acc e.ckpt) u=$(acc u.ckpt)
check_lt "$u" "$a" "the ensemble's 5-NN accuracy $a is not above the untrained one's $u"
# on a linear body: the members by numpy from the checkpoint's head, their mean and variance
feed | train -o l.ckpt --body linear --loss triplet --ensemble 3 -D 4 -n 60 -S 2 -t 1 2> err || fail "train linear: $(cat err)"
embed -m l.ckpt < feat.hs > l.hs 2> err || fail "embed linear: $(cat err)"
$PY - <<'PYEOF' || fail "embed's mean and variance are not the members'"
import numpy as np, hedge_stream as hs
_, C = hs.read("l.ckpt")
_, E = hs.read("l.hs")
x = np.load("feat.npz")["features"].astype(np.float64)
W, b = C["param.head.w"][0].astype(np.float64), C["param.head.b"][0].astype(np.float64)
m = (x @ W.T + b).reshape(len(x), 3, 4)
mu, var = m.mean(1), np.maximum(m.var(1, ddof=1), 1e-6)
em, ev = E["mu"][:, 0], E["var"][:, 0]
assert np.abs(em - mu).max() < 1e-5 * (1 + np.abs(mu).max()), np.abs(em - mu).max()
assert np.abs(ev - var).max() < 1e-5 * (1 + var.max()), np.abs(ev - var).max()
assert (ev > 1e-5).mean() > 0.9, "the members barely differ"
print("ensemble: embed's mean and variance are the three members' (numpy), max |d| %.2g, %.2g" %
      (np.abs(em - mu).max(), np.abs(ev - var).max()))
PYEOF
evaluate --json ev.json e.hs > ev.md 2> err || fail "evaluate of an ensemble: $(cat err)"
grep -q '^- var - best free baseline' ev.md || fail "evaluate does not judge the ensemble's var: $(cat ev.md)"

# refusals: one line each
refuse() {
    r_code=$1 r_msg=$2
    shift 2
    expect_fail "$r_code" "$r_msg" env ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" "$@"
    [ "$(grep -vc "^Try" "$T/err")" = 1 ] || fail "$*: more than one line: $(cat "$T/err")"
}
refuse 2 "--ensemble 3: M point heads (--head point) for a loss that learns no parameters of its own (its members would share them), not arcface" \
    sh -c 'train -o x.ckpt --loss arcface --ensemble 3 < /dev/null'
refuse 2 "not softcon" sh -c 'train -o x.ckpt --loss softcon --ensemble 3 < /dev/null'
refuse 2 "not hetriplet" sh -c 'train -o x.ckpt --loss hetriplet --ensemble 3 < /dev/null'
refuse 2 "--ensemble" sh -c 'train -o x.ckpt --loss triplet --ensemble 1 < /dev/null'
refuse 2 "--ensemble" sh -c 'train -o x.ckpt --loss triplet --ensemble 17 < /dev/null'
refuse 2 "--mc: e.ckpt is an ensemble of 4" sh -c 'embed -m e.ckpt --mc 5 < feat.hs'
$PY - <<'PYEOF' || fail "a checkpoint of another C"
import hedge_stream as hs
h, C = hs.read("l.ckpt")
h["meta"]["ensemble"] = 4
hs.write("bad.ckpt", "checkpoint", C, meta=h["meta"])
PYEOF
refuse 1 "bad.ckpt: a point model with C = 3 components, not the ensemble's" sh -c 'embed -m bad.ckpt < feat.hs'
echo "ensemble: 5-NN accuracy $a (untrained $u); same bytes twice, resumed and at 2 threads"
