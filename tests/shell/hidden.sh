#!/bin/sh
# embed --hidden: the body's output, the head's input (field hidden [F]), the layer before the
# embedding that PFE's uncertainty module reads (issue 47 item 1). On a linear body it is the input
# features themselves; on an mlp body numpy's relu(x W1^T + b1) from the checkpoint (1e-5); the same
# records at any -b and -t; mu and var are the plain embed's. Refused, one line: --hidden with --mc.
set -u
. "$(dirname "$0")/../lib.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)
PY=/usr/bin/python3
export PYTHONPATH="$root/python"
cd "$T" || fail "cd $T"
$PY -c '
import numpy as np
r = np.random.default_rng(7); y = np.arange(400) % 8
x = r.normal(size=(8, 20))[y] + r.normal(size=(400, 20))
np.savez("f.npz", features=x.astype(np.float32), labels=y)' || fail "numpy"
fromnpz -k features f.npz > f.hs 2> err || fail "fromnpz: $(cat err)"
batcher -m pk -P 8 -K 8 -n 40 f.hs > b.hs || fail "batcher"
train -o l.ckpt --body linear --loss triplet -D 4 -n 20 -t 1 < b.hs 2> err || fail "train linear: $(cat err)"
train -o m.ckpt --body mlp:16 --head iso --loss hetriplet -D 4 -n 20 -t 1 < b.hs 2> err || fail "train mlp: $(cat err)"
for c in l m; do
    embed -m $c.ckpt --hidden < f.hs > $c.hs 2> err || fail "embed --hidden ($c): $(cat err)"
    embed -m $c.ckpt --hidden -b 7 -t 2 < f.hs | totsv > $c.b7.tsv && totsv $c.hs > $c.tsv && cmp -s $c.tsv $c.b7.tsv ||
        fail "embed --hidden -b 7 -t 2 differs ($c)"
    embed -m $c.ckpt < f.hs > $c.plain.hs || fail "embed ($c)"
done
$PY - <<'EOF' || fail "the hidden field"
import numpy as np, hedge_stream as hs
x = np.load("f.npz")["features"].astype(np.float64)
_, L = hs.read("l.hs")
assert L["hidden"].shape == (400, 20) and np.array_equal(L["hidden"], x.astype(np.float32)), "linear: not the input"
_, M = hs.read("m.hs")
_, C = hs.read("m.ckpt")
h = np.maximum(x @ C["param.fc1.w"][0].astype(np.float64).T + C["param.fc1.b"][0], 0)
assert M["hidden"].shape == (400, 16) and np.abs(M["hidden"] - h).max() < 1e-5, np.abs(M["hidden"] - h).max()
_, P = hs.read("m.plain.hs")
assert np.array_equal(P["mu"], M["mu"]) and np.array_equal(P["var"], M["var"]), "--hidden changed mu or var"
print("hidden: the linear body's input, the mlp body's relu(x W1^T + b1) within %.2g" % np.abs(M["hidden"] - h).max())
EOF
train -o d.ckpt --body mlp:16 --loss triplet --dropout 0.2 -D 4 -n 20 -t 1 < b.hs 2> err || fail "train --dropout: $(cat err)"
expect_fail 2 "embed: --hidden with --mc: the body's output differs in every pass" sh -c 'embed -m d.ckpt --hidden --mc 4 < f.hs'
