#!/bin/sh
# The CLI readers as wide as the README and hedge.evaluate (issue 44 item 8): evaluate and
# evaluate.sh take arrays under other names (--mu, --var, --eta, --labels, --id, fromnpz's reader),
# any numeric dtype of mu and var (float16, float64, integers), and labels that are names
# (identities, '<U' or '|S'), a query file and a gallery file matched by name as hedge.evaluate
# does (python/hedge/_evaluate.py, _named_classes). Checked: the numbers of evaluate -g on two
# named archives are hedge.evaluate's on the same arrays (libhedge through ctypes); the integer
# labels numbered by the sorted names give the same table byte for byte, through evaluate,
# evaluate.sh and its --shards (knn -g's output carries the names); named streams through fromnpz, tonpz and back; and the hostile inputs of
# the new paths refused in one line each (exit 1, nothing on stdout; misuse exit 2).
set -u
. "$(dirname "$0")/../lib.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)
PY=/usr/bin/python3
EV="$root/pipelines/evaluate.sh"
cd "$T"

# the sets: 14 identities n000..., queries of 12 of them, a gallery of 13 (one the queries lack,
# one only the queries have) written in another order of names, float16 means under the name
# `embeddings` (PML's), float64 variances under `sigma2`, labels under `ids`
$PY - <<'EOF' || fail "making the sets"
import numpy as np
r = np.random.default_rng(44)
names = np.array(["n%06d" % v for v in r.choice(1000000, 14, replace=False)])
C = r.normal(size=(14, 8)) * 1.5
def mk(n, classes):
    y = r.choice(classes, n)
    return (C[y] + r.normal(size=(n, 8))).astype(np.float16), r.uniform(0.2, 2.0, (n, 8)), y
mq, vq, yq = mk(300, np.arange(12))
mg, vg, yg = mk(200, np.arange(1, 14))
np.savez("q.npz", embeddings=mq, sigma2=vq, ids=names[yq])
np.savez("g.npz", embeddings=mg, sigma2=vg, ids=names[yg])
np.savez("gb.npz", embeddings=mg, sigma2=vg, ids=np.array([s.encode() for s in names[yg]]))
# the same labels as integers: each name's place among the sorted names of both sets
order = {s: i for i, s in enumerate(sorted(set(names[yq]) | set(names[yg])))}
np.savez("qi.npz", embeddings=mq, sigma2=vq, ids=np.array([order[s] for s in names[yq]]))
np.savez("gi.npz", embeddings=mg, sigma2=vg, ids=np.array([order[s] for s in names[yg]]))
EOF
R="--mu embeddings --var sigma2 --labels ids"

# --- evaluate -g on the named archives against hedge.evaluate on the same arrays
evaluate $R --json ev.json -g g.npz q.npz > ev.md 2> ev.err || fail "evaluate -g named: $(cat ev.err)"
[ -s ev.err ] && fail "evaluate wrote on stderr: $(cat ev.err)"
# (under make sanitize the library is built with ASan, whose runtime must come first in python3,
# which is not: preloaded, without the leak check of python's own allocations, as install.sh does)
asan=""
if ldd "$BIN/../lib/libhedge.so" 2> /dev/null | grep -q libasan; then
    asan="LD_PRELOAD=$(${CC:-cc} -print-file-name=libasan.so) ASAN_OPTIONS=detect_leaks=0"
fi
env $asan PYTHONPATH="$root/python" HEDGE_LIB="$BIN/../lib/libhedge.so" $PY - <<'EOF' || fail "evaluate and hedge.evaluate differ (above)"
import json, math, numpy as np, hedge
q, g = np.load("q.npz"), np.load("g.npz")
m = hedge.evaluate(q["embeddings"], q["ids"], var=q["sigma2"], gallery=g["embeddings"], gallery_labels=g["ids"],
                   gallery_var=g["sigma2"])
c = json.load(open("ev.json"))["input"]
keys = ["ap", "knn", "p1", "rprec", "map_r", "map", "mrr", "p1_avg_of_avgs", "rprec_avg_of_avgs",
        "map_r_avg_of_avgs", "mrr_avg_of_avgs", "nmi", "ami", "tau", "auroc", "aurc", "eaurc"]
worst = 0
for k in keys:
    a, b = c[k], m[k]
    assert a is not None and not math.isnan(b), (k, a, b)
    worst = max(worst, abs(a - b) / max(abs(b), 1e-300))
for a, b in zip(c["recall"], m["recall"]):
    worst = max(worst, abs(a - b))
assert c["ece"] is None and math.isnan(m["ece"]), (c["ece"], m["ece"])
assert worst < 1e-9, worst  # evaluate prints %.10g
# the numbers are not trivial: the classes overlap
assert 0.3 < c["map_r"] < 0.95 and 0.3 < c["knn"] < 0.99, c
print("evaluate -g vs hedge.evaluate: %d numbers, largest relative difference %.2g; map_r %.4f knn %.4f"
      % (len(keys) + len(c["recall"]), worst, c["map_r"], c["knn"]))
EOF
# the integer labels numbered by the sorted names: the same table, byte for byte
evaluate $R -g gi.npz qi.npz > evi.md 2> /dev/null || fail "evaluate -g integers"
cmp -s ev.md evi.md || fail "named and integer labels give other tables: $(diff ev.md evi.md)"

# --- evaluate.sh: its evaluate and its --shards: the same table
sh "$EV" $R -g g.npz q.npz > sh.md 2> sh.err || fail "evaluate.sh -g named: $(cat sh.err)"
cmp -s sh.md ev.md || fail "evaluate.sh: $(diff sh.md ev.md)"
sh "$EV" $R --shards 2 -j 1 -g g.npz q.npz > s.md 2> s.err || fail "evaluate.sh --shards 2 named: $(cat s.err)"
cmp -s s.md ev.md || fail "evaluate.sh --shards 2: $(diff s.md ev.md)"
# a stream and an archive matched by name alike; a float16 mu converted as fromnpz converts it
fromnpz $R g.npz > g.hs 2> /dev/null || fail "fromnpz $R g.npz"
evaluate $R -g g.hs q.npz | cmp -s - ev.md || fail "a named stream as the gallery gives another table"
fromnpz $R q.npz 2> /dev/null | knn -g g.hs > knn.hs 2> /dev/null || fail "knn -g, named"
tshow -H knn.hs | grep -q '"class_names": \["n' || fail "knn -g's output does not carry the names"
evaluate --labels ids --mu embeddings q.npz > one.md 2> /dev/null || fail "evaluate, one named set"
evaluate --labels ids --mu embeddings qi.npz | cmp -s - one.md || fail "one set: names and integers differ"

# --- the programs with a gallery (knn -g, retrieve -g, pairscore -g, fewshot -s): named and
# integer sets give the same numbers
for f in q g qi gi; do fromnpz $R $f.npz > $f.hs 2> /dev/null || fail "fromnpz $f.npz"; done
knn --json kn.json -g g.hs q.hs > kn.hs && knn --json ki.json -g gi.hs qi.hs > ki.hs || fail "knn -g"
cmp -s kn.json ki.json || fail "knn -g: $(cat kn.json ki.json)"
retrieve --json rn.json -g g.hs q.hs > /dev/null && retrieve --json ri.json -g gi.hs qi.hs > /dev/null || fail "retrieve -g"
cmp -s rn.json ri.json || fail "retrieve -g: $(cat rn.json ri.json)"
pairscore --score l2 -n 500 -g g.hs q.hs | apcurve > pn.txt && pairscore --score l2 -n 500 -g gi.hs qi.hs | apcurve > pi.txt ||
    fail "pairscore -g"
cmp -s pn.txt pi.txt || fail "pairscore -g: $(cat pn.txt pi.txt)"
fewshot -s g.hs -k 3 -q 2 -R 20 --json fn.json q.hs > /dev/null 2>&1 && fewshot -s gi.hs -k 3 -q 2 -R 20 --json fi.json qi.hs > /dev/null 2>&1 ||
    fail "fewshot -s"
cmp -s fn.json fi.json || fail "fewshot -s: $(cat fn.json fi.json)"
# tonpz writes the names back as strings, and several inputs of other names stack by name
tonpz -o back.npz q.hs g.hs || fail "tonpz q.hs g.hs"
$PY -c 'import numpy as np; b, q, g = np.load("back.npz"), np.load("q.npz"), np.load("g.npz")
assert b["class"].dtype.kind == "U" and b["class"].tolist() == q["ids"].tolist() + g["ids"].tolist()' ||
    fail "tonpz of named streams: not the names back"

# --- hostile inputs of the new paths: one line, exit 1 (misuse: 2), nothing on stdout
PYTHONPATH="$root/python" $PY - <<'EOF' || fail "making the hostile sets"
import numpy as np, hedge.stream as hs
mu = np.zeros((6, 2), np.float32); mu[:, 0] = np.arange(6)
y = np.array([0, 1, 2, 0, 1, 2], np.int32)
hs.write("beyond.hs", "embeddings", {"mu": mu, "class": y + 1}, meta={"class_names": ["a", "b", "c"]})
hs.write("mixed.hs", "embeddings", {"mu": mu, "class": y}, meta={"class_names": ["a", b"b", "c"]})
hs.write("unsorted.hs", "embeddings", {"mu": mu, "class": y}, meta={"class_names": ["b", "a", "c"]})
hs.write("strmeta.hs", "embeddings", {"mu": mu, "class": y}, meta={"class_names": "a,b,c"})
hs.write("named.hs", "embeddings", {"mu": mu, "class": y}, meta={"class_names": ["a", "b", "c"]})
hs.write("plain.hs", "embeddings", {"mu": mu, "class": y})
h = mu.astype(np.float16); h[4, 1] = np.nan
np.savez("nan16.npz", embeddings=h, ids=np.array(list("abcabc")))
np.savez("shape.npz", embeddings=mu, ids=np.array(list("abcabc")).reshape(3, 2))
np.savez("empty.npz", embeddings=np.zeros((0, 2), np.float16), ids=np.array([], "<U1"))
np.savez("floatids.npz", embeddings=mu, ids=np.arange(6) * 0.5)
np.savez("noids.npz", embeddings=mu)
EOF
one() { [ "$(wc -l < "$T/err")" = 1 ] || fail "$1: not one line: $(cat "$T/err")"; }
expect_fail 1 "evaluate: beyond.hs: record 2: class 3, but meta class_names holds 3 names (classes 0 to 2)" evaluate beyond.hs
one "a class beyond the names"
expect_fail 1 "evaluate: mixed.hs: meta class_names: name 1 is bin (bytes), name 0 str: expected all str (text) or all bin (bytes)" \
    evaluate mixed.hs
one "names of mixed str and bytes"
expect_fail 1 "evaluate: unsorted.hs: meta class_names: name 1 'a' is not after name 0 'b': expected the names ascending" \
    evaluate unsorted.hs
one "unsorted names"
expect_fail 1 "evaluate: strmeta.hs: meta class_names is a str: expected an array of names (str or bin)" evaluate strmeta.hs
expect_fail 1 "evaluate: gb.npz: its class names are bytes (bin), those of q.npz str: expected both str (text) or both bytes (bin)" \
    evaluate $R -g gb.npz q.npz
one "str queries, a bytes gallery"
expect_fail 1 "evaluate: gi.npz: its labels are integers, but those of q.npz are names: expected names in both or in neither" \
    evaluate $R -g gi.npz q.npz
expect_fail 1 "knn: plain.hs: its labels are integers, but those of named.hs are names" knn -g named.hs plain.hs
expect_fail 1 "retrieve: plain.hs: its labels are integers, but those of named.hs are names" retrieve -g plain.hs named.hs
expect_fail 1 "evaluate: nan16.npz: array 'embeddings' is float16 (6, 2): element 9 is nan: expected finite values" \
    evaluate --mu embeddings --labels ids nan16.npz
one "a NaN in float16 means"
expect_fail 1 "evaluate: shape.npz: array 'ids' is '<U1' (3, 2): expected one class per item of 'embeddings', [6]" \
    evaluate --mu embeddings --labels ids shape.npz
expect_fail 1 "evaluate: empty.npz: array 'embeddings' is float16 (0, 2): expected at least one item" \
    evaluate --mu embeddings --labels ids empty.npz
expect_fail 1 "evaluate: floatids.npz: array 'ids' is float64 (6,): expected the classes as integers (any width) or as names (strings: '<U' or '|S'); a float is no class" \
    evaluate --mu embeddings --labels ids floatids.npz
expect_fail 1 "evaluate: noids.npz: no array 'nope' (--class); the file holds 'embeddings'" evaluate --mu embeddings --labels nope noids.npz
expect_fail 1 "evaluate: noids.npz: no array 'mu' (name the embedding means with --mu)" evaluate noids.npz
expect_fail 2 "evaluate: --mu names an array of an .npz or .npy input, and none is one" evaluate --mu x named.hs
expect_fail 1 "evaluate: beyond.hs: record 2: class 3, but meta class_names" sh "$EV" beyond.hs
expect_fail 1 "tonpz: beyond.hs: record 2: class 3, but meta class_names holds 3 names" tonpz beyond.hs
pass
