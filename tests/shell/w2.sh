#!/bin/sh
# evaluate --distance w2 (issue 47 item 5: ranking by the 2-Wasserstein distance of the Gaussians
# at Euclidean speed): its JSON is, number for number, the Euclidean battery's on the vectors (mu,
# sqrt var) with the variances (var, var), made by numpy, leave-one-out and with a gallery (the
# Euclidean distance of those vectors is the W2 distance: numpy checks it on every pair);
# hedge.evaluate gives the CLI's numbers; a point set is refused. Needs Debian's python3 with numpy.
set -u
. "$(dirname "$0")/../lib.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)
PY=/usr/bin/python3
cd "$T" || fail "cd"
$PY - <<'PYEOF' || fail "numpy set-up"
import numpy as np
r = np.random.default_rng(3)
for name, n in (("q", 300), ("g", 200)):
    y = r.integers(0, 12, n).astype(np.int32)
    mu = (r.normal(size=(12, 6))[y] + r.normal(size=(n, 6))).astype(np.float32)
    var = r.uniform(0.05, 2, size=(n, 6)).astype(np.float32)
    np.savez(name + ".npz", mu=mu, var=var, labels=y)
    np.savez(name + "-aug.npz", mu=np.concatenate([mu, np.sqrt(var)], 1).astype(np.float32),
             var=np.concatenate([var, var], 1), labels=y)
    if name == "q": # W2 of every pair by its definition against the vectors' Euclidean distance
        m, v = mu.astype(np.float64), var.astype(np.float64)
        w2 = np.sqrt(((m[:, None] - m[None]) ** 2).sum(2) + ((np.sqrt(v)[:, None] - np.sqrt(v)[None]) ** 2).sum(2))
        a = np.concatenate([m, np.sqrt(v)], 1)
        e = np.sqrt(((a[:, None] - a[None]) ** 2).sum(2))
        assert np.max(np.abs(w2 - e)) < 1e-12
PYEOF
for f in q g q-aug g-aug; do fromnpz $f.npz > $f.hs 2>/dev/null || fail "fromnpz $f"; done
# (the distance's name and its note aside)
strip() { jq -S 'del(.. | .distance?) | del(.. | .lineage?) | del(.. | .input?) | (.. | arrays) |= map(select(type != "string" or (startswith("distance (") | not)))' "$1"; }
evaluate --distance w2 --json w.json q.hs > /dev/null 2>&1 || fail "evaluate --distance w2"
evaluate --json e.json q-aug.hs > /dev/null 2>&1 || fail "evaluate (the vectors)"
[ "$(jq -r '.. | .distance? // empty' w.json | head -n 1)" = w2 ] || fail "the JSON's distance is not w2"
strip w.json > w.s && strip e.json > e.s || fail "jq"
diff w.s e.s > d.txt || fail "--distance w2 differs from the Euclidean battery of (mu, sqrt var): $(head -c 600 d.txt)"
evaluate --distance w2 -g g.hs --json wg.json q.hs > /dev/null 2>&1 || fail "evaluate --distance w2 -g"
evaluate -g g-aug.hs --json eg.json q-aug.hs > /dev/null 2>&1 || fail "evaluate -g (the vectors)"
strip wg.json > wg.s && strip eg.json > eg.s && diff wg.s eg.s > d.txt || fail "-g: $(head -c 600 d.txt)"
# knn and retrieve --distance w2: the records and the summaries of the Euclidean runs on the
# vectors, leave-one-out and with a gallery (the distance's name aside)
knn --distance w2 --json kw.json q.hs > kw.hs 2> err || fail "knn --distance w2: $(cat err)"
knn --json ke.json q-aug.hs > ke.hs 2> err || fail "knn (the vectors): $(cat err)"
totsv kw.hs > kw.tsv && totsv ke.hs > ke.tsv && cmp -s kw.tsv ke.tsv || fail "knn --distance w2: other records than the vectors' Euclidean kNN"
[ "$(jq -c 'del(.distance)' kw.json)" = "$(jq -c 'del(.distance)' ke.json)" ] && [ "$(jq -r .distance kw.json)" = w2 ] ||
    fail "knn --distance w2's summary: $(cat kw.json) against $(cat ke.json)"
knn --distance w2 -g g.hs q.hs | totsv > kgw.tsv && knn -g g-aug.hs q-aug.hs | totsv > kge.tsv && cmp -s kgw.tsv kge.tsv ||
    fail "knn --distance w2 -g"
retrieve --distance w2 --json rw.json q.hs | totsv > rw.tsv && retrieve --json re.json q-aug.hs | totsv > re.tsv &&
    cmp -s rw.tsv re.tsv || fail "retrieve --distance w2: other records"
[ "$(jq -c 'del(.distance)' rw.json)" = "$(jq -c 'del(.distance)' re.json)" ] || fail "retrieve --distance w2's summary"
retrieve --distance w2 -g g.hs --json rgw.json q.hs > /dev/null && retrieve -g g-aug.hs --json rge.json q-aug.hs > /dev/null &&
    [ "$(jq -c 'del(.distance)' rgw.json)" = "$(jq -c 'del(.distance)' rge.json)" ] || fail "retrieve --distance w2 -g"
$PY -c 'import numpy as np; z = np.load("q.npz"); np.savez("qp.npz", mu=z["mu"], labels=z["labels"])' || fail "qp.npz"
fromnpz qp.npz > point.hs 2>/dev/null || fail "fromnpz of the means alone"
expect_exit 1 "knn --distance w2 of point embeddings" knn --distance w2 point.hs
expect_exit 2 "knn --distance w2 -d expected" knn --distance w2 -d expected q.hs

# hedge.evaluate: the CLI's numbers
PYTHONPATH="$root/python" $PY - <<'PYEOF' || fail "hedge.evaluate distance w2"
import json, numpy as np, hedge
z = np.load("q.npz")
r = hedge.evaluate(z["mu"], z["labels"], var=z["var"], distance="w2")
cli = json.load(open("w.json"))
def find(o, k):
    if isinstance(o, dict):
        if k in o and not isinstance(o[k], dict):
            return o[k]
        for v in o.values():
            x = find(v, k)
            if x is not None:
                return x
    return None
for k in ("map_r", "knn", "ap"):
    assert abs(find(r, k) - find(cli, k)) < 1e-9, (k, find(r, k), find(cli, k))  # (the JSON: %.10g)
print("w2: the battery of (mu, sqrt var), number for number; hedge.evaluate = evaluate")
PYEOF
$PY -c "
import numpy as np; np.savez('pt.npz', mu=np.zeros((4, 2), np.float32), labels=np.array([0, 1, 0, 1], np.int32))" || fail "pt"
fromnpz pt.npz > pt.hs 2>/dev/null || fail "fromnpz pt"
expect_fail 1 "distance w2 needs var" evaluate --distance w2 pt.hs
expect_exit 2 "--distance w3" evaluate --distance w3 q.hs
pass
