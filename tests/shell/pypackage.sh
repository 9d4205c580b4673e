#!/bin/sh
# pypackage: the Python package hedge (python/) as a new user gets it. A venv without the system's
# site packages that has only numpy (Debian's, through a .pth to a folder with links to it: no
# network, no msgpack); `pip install --no-index ./python` in it (the in-tree build backend runs
# `make lib`); then, from outside the tree: the ctypes structures against lib/engine/hedge.h's (offsets
# and sizes compiled with cc); hedge.evaluate on hand-made sets with known metrics: a four-item
# line (every number derived by hand below), two far groups (every number 1), and the hand case
# of pytorch-metric-learning's tests/utils/test_calculate_accuracies.py (query labels and the
# labels of each query's five nearest, built as embeddings) with PML's names and k=5 against
# PML's expected values, plain, avg_of_avgs and return_per_class, and with its classes absent
# from the gallery (every retrieval number NaN); its numbers equal to evaluate.sh's JSON on the
# same .npz (bin/evaluate's; leave-one-out and against a gallery); float32 arrays taken without a copy; the library exporting hedge_* only
# alone; bad inputs (NaN, shapes, labels of another
# length, no items, an empty gallery, wrong dtypes, unknown metric names) raising ValueError
# naming the array; two evaluations in two threads at once (ctypes releases the GIL: both threads
# inside the library together) giving the numbers of one at a time; the stream reader without
# msgpack raising ImportError that says how to install it; pip uninstall leaving nothing. The
# same again with the pyenv python (3.11) when it is there; labels that are names (strings); an editable install (pip install -e)
# evaluating too; an sdist, which holds no tree: a wheel from it refused with a clear line, or
# built with HEDGE_LIB. Shards (shard=(i, n), pickled, then shards=[...]) equal the whole call.
# pip install in a fresh clone (no build/) leaves it as it was: no build/, no __pycache__.
set -u
. "$(dirname "$0")/../lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
PY=/usr/bin/python3
EV="$ROOT/pipelines/evaluate.sh"
cd "$T" || fail "cd $T"
if ! $PY -c 'import venv, ensurepip' 2> /dev/null; then
    echo "pypackage: skipped: python3 -m venv is absent (Debian: apt install python3-venv)"
    pass
fi
# pip's own settings of this machine (a wheel folder, an index) are not a new user's
export PIP_CONFIG_FILE=/dev/null PIP_DISABLE_PIP_VERSION_CHECK=1
unset PIP_FIND_LINKS PIP_INDEX_URL PIP_EXTRA_INDEX_URL 2> /dev/null || true

# Debian's numpy, alone, for any venv of the same Python version
npdir=$($PY -c 'import numpy, os; print(os.path.dirname(os.path.dirname(numpy.__file__)))') || fail "no numpy in $PY"
mkdir np && ln -s "$npdir/numpy" np/numpy && for m in "$npdir"/numpy-*-info; do ln -s "$m" np/; done || fail "np links"
npver=$($PY -c 'import sys; print(sys.version_info[:2])')

# --- the sets, and evaluate.sh's JSON on them
$PY - <<'EOF' || fail "making the sets"
import numpy as np
r = np.random.default_rng(5)
y = np.arange(240) % 6
mu = (r.normal(size=(240, 8)) + 1.5 * np.eye(8)[y]).astype(np.float32)
var = r.uniform(0.1, 1, (240, 8)).astype(np.float32)
np.savez("set.npz", mu=mu, var=var, labels=y)
np.savez("query.npz", mu=mu[:80], var=var[:80], labels=y[:80])
np.savez("gallery.npz", mu=mu[80:], var=var[80:], labels=y[80:])
EOF
# evaluate.sh runs bin/evaluate (the engine, as Python does; the separate programs' numbers are
# bin/evaluate's: tests/shell/evaluate-engine.sh)
sh "$EV" --json loo.json set.npz > loo.md 2> loo.err || fail "evaluate.sh set.npz: $(cat loo.err)"
sh "$EV" --json gal.json -g gallery.npz query.npz > gal.md 2> gal.err || fail "evaluate.sh -g: $(cat gal.err)"

# the struct offsets of lib/engine/hedge.h, as the compiler lays them out
cat > layout.c <<'EOF'
#include <stddef.h>
#include <stdio.h>
#include "hedge.h"
#define F(s, f) printf("%s %s %zu %zu\n", #s, #f, offsetof(s, f), sizeof(((s *)0)->f));
int main(void) {
    F(hedge_set, n) F(hedge_set, C) F(hedge_set, D) F(hedge_set, mu) F(hedge_set, var) F(hedge_set, eta)
    F(hedge_set, labels) F(hedge_set, ids)
    F(hedge_options, abi) F(hedge_options, distance) F(hedge_options, knn_k) F(hedge_options, ks)
    F(hedge_options, nk) F(hedge_options, pairs) F(hedge_options, seed) F(hedge_options, has_match)
    F(hedge_options, match_a) F(hedge_options, match_b) F(hedge_options, exclude_id) F(hedge_options, at_k)
    F(hedge_options, avg_of_avgs) F(hedge_options, per_class) F(hedge_options, include) F(hedge_options, q0)
    F(hedge_options, q1) F(hedge_options, threads) F(hedge_options, stop)
    F(hedge_result, nmetrics) F(hedge_result, value) F(hedge_result, why) F(hedge_result, notes)
    F(hedge_result, nnotes) F(hedge_result, nclasses) F(hedge_result, classes) F(hedge_result, per_class)
    F(hedge_result, knn_correct) F(hedge_result, knn_eta) F(hedge_result, nq)
    printf("hedge_set - %zu\nhedge_options - %zu\nhedge_result - %zu\nHEDGE_ABI - %d\n", sizeof(hedge_set),
           sizeof(hedge_options), sizeof(hedge_result), HEDGE_ABI);
    return 0;
}
EOF
cc $(for d in "$ROOT"/lib/*/; do printf -- "-I%s " "$d"; done) -o layout layout.c && ./layout > layout.txt || fail "lib/engine/hedge.h's layout"

# --- the checks, run by each interpreter's venv from $T (outside the tree)
cat > checks.py <<'EOF'
import ctypes, json, math, os, sys, threading, time
import numpy as np
import hedge, hedge._lib as L, hedge._evaluate as E
venv = sys.argv[1]
assert hedge.__file__.startswith(venv), "hedge from %s, not the venv" % hedge.__file__
lib = L.load()
assert lib.path == os.path.join(os.path.dirname(hedge.__file__), "libhedge.so"), lib.path
# hedge.__version__ is the library's, as the programs print it (evaluate --version: VERSION, then
# -gCOMMIT and -dirty from git when built in a checkout)
import re
assert re.fullmatch(re.escape(os.environ["HEDGE_WANT_VERSION"]) + r"(-g[0-9a-f]+(-dirty)?)?", hedge.__version__), \
    (hedge.__version__, os.environ["HEDGE_WANT_VERSION"])
try:
    import msgpack
    raise AssertionError("msgpack is importable in the venv: the test needs it absent")
except ImportError:
    pass

def close(name, got, want, tol=1e-7):
    if isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), (name, got, want)
        for g, w in zip(got, want):
            close(name, g, w, tol)
        return
    ok = (math.isnan(got) and math.isnan(want)) if (isinstance(want, float) and math.isnan(want)) else abs(got - want) <= tol
    assert ok, "%s = %r, expected %r" % (name, got, want)

# the structures: each field's offset and size, and each size, as cc lays them out
for line in open("layout.txt"):
    s, f, *nums = line.split()
    cls = {"hedge_set": L.Set, "hedge_options": L.Options, "hedge_result": L.Result}.get(s)
    if s == "HEDGE_ABI":
        assert int(nums[0]) == L.HEDGE_ABI, ("HEDGE_ABI", nums, L.HEDGE_ABI)
    elif f == "-":
        assert ctypes.sizeof(cls) == int(nums[0]), (s, ctypes.sizeof(cls), nums)
    else:
        d = getattr(cls, f)
        assert (d.offset, d.size) == (int(nums[0]), int(nums[1])), (s, f, d.offset, d.size, nums)

# --- four items on a line, two classes: x = 0, 1 (class 0), 3, 7 (class 1). Leave-one-out, the
# neighbours of each: 0: 1 3 7; 1: 0 3 7; 3: 1 0 7; 7: 3 1 0 (classes 0 1 1, 0 1 1, 0 0 1, 1 0 0).
# P@1 = R-precision = MAP@R = 3/4 (item 3 alone misses); its first positive is third: AP 1/3,
# so mAP = MRR = (1 + 1 + 1/3 + 1) / 4 = 5/6; PML's k = 2 sees no positive for it: 3/4.
# kNN with k = 1: 3/4; Recall@1 = Recall@2 = 3/4 (item 3's two nearest are class 0), @3 = 1.
# Class averages: class 0 (1, 1), class 1 (1/3 or 0, 1): P@1 (1 + 1/2) / 2 = 3/4,
# mAP (1 + 2/3) / 2 = 5/6.
x = np.array([[0.0], [1.0], [3.0], [7.0]], dtype=np.float32)
yl = np.array([0, 0, 1, 1])
m = hedge.evaluate(x, yl, knn_k=1, recall_at=(1, 2, 3, 4))
for name, want in [("p1", 0.75), ("rprec", 0.75), ("map_r", 0.75), ("map", 5 / 6), ("mrr", 5 / 6), ("knn", 0.75),
                   ("recall", [0.75, 0.75, 1.0, float("nan")]), ("p1_avg_of_avgs", 0.75), ("map_avg_of_avgs", 5 / 6),
                   ("mrr_avg_of_avgs", 5 / 6)]:
    close("line: " + name, m[name], want)
assert m["knn_k"] == 1 and m["recall_at"] == [1, 2, 3, 4], m
assert "recall@4" in m["why"], m["why"]
m = hedge.evaluate(x, yl, pml=True, k=2, knn_k=1)
for name, want in [("precision_at_1", 0.75), ("r_precision", 0.75), ("mean_average_precision_at_r", 0.75),
                   ("mean_average_precision", 0.75), ("mean_reciprocal_rank", 0.75), ("knn", 0.75)]:
    close("line, PML k=2: " + name, m[name], want)
assert "p1" not in m and "map_avg_of_avgs" not in m, sorted(m)
# a k past every rank (and past C's int) is the whole ranking by the truncated formulas: 5/6
m = hedge.evaluate(x, yl, pml=True, k=10**12, knn_k=1)
assert repr(m) == repr(hedge.evaluate(x, yl, pml=True, k=3, knn_k=1)), m
# k="max_bin_count" with a gallery that holds the queries (exclude_id, PML's ref_includes_query):
# PML's determine_k takes the largest class count less one; hedge took one more (issue 44, defect
# 7): on this set the one positive of each query is at rank 2, so PML's mAP at k = 1 is 0, not 0.25
xs, ls = np.array([[0], [1], [2], [3]], np.float32), [0, 1, 0, 1]
mb = hedge.evaluate(xs, ls, gallery=xs, gallery_labels=ls, ids=np.arange(4), gallery_ids=np.arange(4),
                    exclude_id=True, pml=True, k="max_bin_count")
assert mb["mean_average_precision"] == 0.0 and mb["mean_reciprocal_rank"] == 0.0, mb
mb = hedge.evaluate(xs, ls, pml=True, k="max_bin_count")
assert mb["mean_average_precision"] == 0.0, mb
close("line, PML k=10^12: mAP", m["mean_average_precision"], 5 / 6)
m = hedge.evaluate(x, yl, pml=True, return_per_class=True, include=("precision_at_1", "mean_average_precision"))
assert sorted(m) == ["classes", "mean_average_precision", "notes", "precision_at_1", "why"], sorted(m)
assert m["classes"] == [0, 1], m
close("line per class: P@1", m["precision_at_1"], [1.0, 0.5])
close("line per class: mAP", m["mean_average_precision"], [1.0, 2 / 3])

# --- two far groups: every ranking, kNN and clustering number 1
y2 = np.arange(40) % 2
m = hedge.evaluate(np.eye(2, dtype=np.float32)[y2] * 10 + 0.01 * np.arange(40)[:, None], y2)
for name in ["knn", "p1", "rprec", "map_r", "map", "mrr", "nmi", "ami"]:
    close("groups: " + name, m[name], 1.0)

# --- pytorch-metric-learning's hand case (test_calculate_accuracies.py, test_accuracy_calculator,
# ref_includes_query False): query labels and the labels of each query's 5 nearest in a gallery
# whose query classes 0..4 have 2, 3, 5, 4, 5 items (and one item of class 5). Gallery item j is
# the basis vector e_j; a query is sum_j w_j e_j with w 10, 9, 8, 7, 6 on the items it must rank
# first (the next unused item of each label of its row) and smaller, decreasing weights on the
# others in gallery order, so |q - e_j|^2 = |q|^2 + 1 - 2 w_j ranks them all.
ql = [1, 1, 2, 3, 4, 0]
rows = [[0, 1, 1, 2, 2], [1, 0, 1, 1, 3], [4, 4, 4, 4, 2], [3, 1, 3, 1, 3], [0, 0, 4, 2, 2], [1, 2, 3, 4, 5]]
gl = [0] * 2 + [1] * 3 + [2] * 5 + [3] * 4 + [4] * 5 + [5]
G = np.eye(len(gl), dtype=np.float32)
Q = np.zeros((6, len(gl)), dtype=np.float32)
order = []
for i, row in enumerate(rows):
    free = list(range(len(gl)))
    first = []
    for lab in row:
        j = next(j for j in free if gl[j] == lab)
        free.remove(j)
        first.append(j)
    Q[i, first] = [10, 9, 8, 7, 6]
    Q[i, free] = 5 - 0.2 * np.arange(len(free))
    order.append([gl[j] for j in first + free])
# PML's expected values per query (its test's acc0 .. acc5, ref_includes_query False; P@1 from its
# per-class values 0, 0.5, 0, 1, 0 and its mean 2/6)
acc = {"precision_at_1": [0, 1, 0, 1, 0, 0],
       "r_precision": [2 / 3, 2 / 3, 1 / 5, 2 / 4, 1 / 5, 0],
       "mean_average_precision_at_r": [(1 / 2 + 2 / 3) / 3, (1 + 2 / 3) / 3, (1 / 5) / 5, (1 + 2 / 3) / 4, (1 / 3) / 5, 0],
       "mean_average_precision": [(1 / 2 + 2 / 3) / 3, (1 + 2 / 3 + 3 / 4) / 3, (1 / 5) / 5, (1 + 2 / 3 + 3 / 5) / 4, (1 / 3) / 5, 0],
       "mean_reciprocal_rank": [1 / 2, 1, 1 / 5, 1, 1 / 3, 0]}
def per_class(a):   # PML: [acc5, (acc0 + acc1) / 2, acc2, acc3, acc4], classes 0..4
    return [a[5], (a[0] + a[1]) / 2, a[2], a[3], a[4]]
gal = dict(gallery=G, gallery_labels=gl)
m = hedge.evaluate(Q, ql, pml=True, k=5, exclude=("NMI", "AMI"), **gal)
assert "NMI" not in m and "AMI" not in m
mavg = hedge.evaluate(Q, ql, pml=True, k=5, avg_of_avgs=True, **gal)
mper = hedge.evaluate(Q, ql, pml=True, k=5, return_per_class=True, **gal)
assert mper["classes"] == [0, 1, 2, 3, 4], mper["classes"]
for name, a in acc.items():
    close("PML hand case: " + name, m[name], float(np.mean(a)), 1e-7)
    close("PML hand case, avg_of_avgs: " + name, mavg[name], float(np.mean(per_class(a))), 1e-7)
    close("PML hand case, return_per_class: " + name, mper[name], [float(v) for v in per_class(a)], 1e-7)
close("PML hand case: P@1 is PML's 2/6", m["precision_at_1"], 2 / 6)
# hedge's default (k=None: the whole gallery ranked): P@1, R-precision and MAP@R as PML's (R <= 5);
# mAP and MRR over the whole ranking, from the ranks the construction fixes
def ap(labels, c):
    hits = np.flatnonzero(np.array(labels) == c) + 1
    return float(np.mean(np.arange(1, len(hits) + 1) / hits))
def rr(labels, c):
    return 1.0 / (1 + list(labels).index(c))
h = hedge.evaluate(Q, ql, **gal)
close("hand case, hedge: p1", h["p1"], float(np.mean(acc["precision_at_1"])), 1e-7)
close("hand case, hedge: rprec", h["rprec"], float(np.mean(acc["r_precision"])), 1e-7)
close("hand case, hedge: map_r", h["map_r"], float(np.mean(acc["mean_average_precision_at_r"])), 1e-7)
close("hand case, hedge: map", h["map"], float(np.mean([ap(o, c) for o, c in zip(order, ql)])), 1e-7)
close("hand case, hedge: mrr", h["mrr"], float(np.mean([rr(o, c) for o, c in zip(order, ql)])), 1e-7)
assert h["mrr"] > m["mean_reciprocal_rank"] + 0.01, (h["mrr"], m["mean_reciprocal_rank"])
# the same with its classes 5..10 in the gallery: no query has a positive, every retrieval number NaN
m = hedge.evaluate(Q, ql, pml=True, k=5, gallery=G, gallery_labels=np.array(gl) + 5)
for name in acc:
    assert math.isnan(m[name]) and name in m["why"], (name, m[name], m["why"])

# --- the same numbers as evaluate.sh's JSON (bin/evaluate's)
def same(which, got):
    want = json.load(open(which + ".json"))
    assert got["knn_k"] == want["knn_k"], (which, got["knn_k"], want["knn_k"])
    worst = 0.0
    for name, w in want["input"].items():
        if name == "reject_tsv" or isinstance(w, dict) or name in ("bootstrap", "ci_why"):
            continue  # (the uncertainty section and the intervals: uncertainty.sh compares them)
        g = got[name] if isinstance(w, list) else [got[name]]
        w = w if isinstance(w, list) else [w]
        assert len(g) == len(w), (which, name, g, w)
        for gv, wv in zip(g, w):
            if wv is None:
                assert math.isnan(gv), (which, name, gv)
            else:
                worst = max(worst, abs(gv - wv))
                assert abs(gv - wv) <= 1e-6, "%s: %s = %r, evaluate.sh %r" % (which, name, gv, wv)
    print("pypackage: %s: every number of evaluate.sh's JSON, largest difference %.3g" % (which, worst))
z = np.load("set.npz")
loo = hedge.evaluate(z["mu"], z["labels"], var=z["var"])
gal = hedge.evaluate(z["mu"][:80], z["labels"][:80], var=z["var"][:80],
                     gallery=z["mu"][80:], gallery_labels=z["labels"][80:], gallery_var=z["var"][80:])
for which, got in [("loo", loo), ("gal", gal)]:
    same(which, got)

# --- float32 (int32 labels) C-contiguous: used in place; float64 converted once
keep = []
mu32 = np.ascontiguousarray(z["mu"], dtype=np.float32)
lab32 = z["labels"].astype(np.int32)
s, _, _ = E._set("", mu32, lab32, None, None, None, keep)
addr = lambda p: ctypes.cast(p, ctypes.c_void_p).value
assert addr(s.mu) == mu32.ctypes.data and addr(s.labels) == lab32.ctypes.data, "float32 input was copied"
s, mu64c, _ = E._set("", z["mu"].astype(np.float64), lab32, None, None, None, keep)
assert addr(s.mu) != z["mu"].ctypes.data and mu64c.dtype == np.float32 and addr(s.mu) == mu64c.ctypes.data

# --- bad input: ValueError naming the array
mu, y = z["mu"], z["labels"]
nan_mu = mu.copy(); nan_mu[7, 3] = np.nan
nan_var = z["var"].copy(); nan_var[5, 0] = np.nan
eta = np.ones(len(y), dtype=np.float32); eta[9] = np.inf
for what, kwargs, name in [
        ("NaN in mu", dict(mu=nan_mu, labels=y), "mu"),
        ("NaN in var", dict(mu=mu, labels=y, var=nan_var), "var"),
        ("inf in eta", dict(mu=mu, labels=y, eta=eta), "eta"),
        ("mu of one axis", dict(mu=mu[:, 0], labels=y), "mu"),
        ("labels of another length", dict(mu=mu, labels=y[:-1]), "labels"),
        ("no items", dict(mu=mu[:0], labels=y[:0]), "mu"),
        ("integer mu", dict(mu=mu.astype(np.int64), labels=y), "mu"),
        ("float labels", dict(mu=mu, labels=y.astype(np.float64)), "labels"),
        ("var of another shape", dict(mu=mu, labels=y, var=z["var"][:, :4]), "var"),
        ("an empty gallery", dict(mu=mu, labels=y, gallery=mu[:0], gallery_labels=y[:0]), "gallery"),
        ("gallery of other dimensions", dict(mu=mu, labels=y, gallery=mu[:, :4], gallery_labels=y), "gallery"),
        ("gallery labels of another length", dict(mu=mu, labels=y, gallery=mu, gallery_labels=y[:3]), "gallery_labels"),
        ("unknown metric", dict(mu=mu, labels=y, include=("nope",)), "include"),
        ("PML name without pml=True", dict(mu=mu, labels=y, include=("precision_at_1",)), "include"),
        ("unknown distance", dict(mu=mu, labels=y, distance="l1"), "distance")]:
    try:
        hedge.evaluate(**kwargs)
    except ValueError as e:
        assert str(e).startswith(name + ":"), "%s: %r does not begin with %s:" % (what, str(e), name)
        assert "\n" not in str(e), (what, str(e))
    else:
        raise AssertionError(what + ": no ValueError")

# --- two evaluations in two threads: both inside the library at once (ctypes releases the GIL)
big = np.random.default_rng(2).normal(size=(4000, 32)).astype(np.float32)
bigy = np.arange(4000) % 40
def run(seed):
    return hedge.evaluate(big, bigy, seed=seed)
real = lib.hedge_evaluate
inside = [0]
lock = threading.Lock()
def counted(*a):
    with lock:
        inside[0] += 1
    try:
        return real(*a)
    finally:
        with lock:
            inside[0] -= 1
t0 = time.time()
alone = [run(1), run(2)]
t_alone = time.time() - t0
lib.hedge_evaluate = counted
try:
    out = [None, None]
    th = [threading.Thread(target=lambda i=i: out.__setitem__(i, run(i + 1))) for i in range(2)]
    t0 = time.time()
    for t in th:
        t.start()
    both = 0
    while any(t.is_alive() for t in th):
        both += inside[0] == 2
        time.sleep(0.001)
    for t in th:
        t.join()
    t_threads = time.time() - t0
finally:
    lib.hedge_evaluate = real
assert both >= 5, "the two threads were never inside libhedge together (%d samples): is the GIL held?" % both
for a, b in zip(alone, out):
    for name in a:
        if isinstance(a[name], dict):  # the sections: the same doubles
            assert repr(b[name]) == repr(a[name]), ("threads", name)
        elif name not in ("why", "notes"):
            close("threads: " + name, b[name], a[name], 0)
print("pypackage: two evaluations of 4,000 x 32, one after the other %.2f s, in two threads %.2f s "
      "(both inside libhedge at %d samples of 1 ms)" % (t_alone, t_threads, both))

# --- streams without msgpack: a clear ImportError; hedge_stream is hedge.stream
import hedge_stream
assert hedge_stream is hedge.stream
for f in (lambda: hedge.stream.read("set.npz"), lambda: hedge.stream.write("x.hs", "embeddings", {"mu": mu})):
    try:
        f()
    except ImportError as e:
        assert "pip install msgpack" in str(e) and "python3-msgpack" in str(e), str(e)
    else:
        raise AssertionError("hedge.stream worked without msgpack")
assert not os.path.exists("x.hs")
# --- shards: shard=(i, n) in any order (pickled, as another process would send them back), one
# empty (more shards than... a 3-item set in 5), put together by shards=[...]: the whole call's
# dict, to the bit (repr of every value), leave-one-out, PML's names with k and per-class values,
# mls, a gallery with exclude_id; then the refusals
import pickle
r = np.random.default_rng(3)
ys = r.integers(0, 20, 900)
ms = (r.normal(size=(20, 16))[ys] + r.normal(size=(900, 16))).astype(np.float32)
vs = r.uniform(0.1, 1, (900, 16)).astype(np.float32)
for kw in [dict(), dict(var=vs, pml=True, k=10, return_per_class=True), dict(var=vs, distance="mls"),
           dict(gallery=ms[:300], gallery_labels=ys[:300], ids=np.arange(900), gallery_ids=np.arange(300),
                exclude_id=True, threads=2)]:
    whole = hedge.evaluate(ms, ys, **kw)
    parts = [pickle.loads(pickle.dumps(hedge.evaluate(ms, ys, shard=(i, 7), **kw))) for i in (3, 0, 6, 1, 5, 2, 4)]
    assert [p.queries for p in parts[:2]] == [(385, 514), (0, 128)], parts
    merged = hedge.evaluate(ms, ys, shards=parts, **kw)
    assert repr(merged) == repr(whole), (kw.keys(), merged, whole)
small = [hedge.evaluate(ms[:3], ys[:3], shard=(i, 5)) for i in range(5)]
assert [p.queries for p in small] == [(0, 0), (0, 1), (1, 1), (1, 2), (2, 3)], small
assert repr(hedge.evaluate(ms[:3], ys[:3], shards=small)) == repr(hedge.evaluate(ms[:3], ys[:3]))
parts = [hedge.evaluate(ms, ys, shard=(i, 3)) for i in range(3)]
for bad, kw, want in [("other data", dict(mu=ms + 1), "shard 0: set0_hash "),
                      ("other labels", dict(labels=(ys + 1) % 20), "but the queries here has"),
                      ("another knn_k", dict(knn_k=3), "shard 0: knn_k 5, but kNN votes with k = 3 here"),
                      ("other recall_at", dict(recall_at=(1, 2)), "shard 0: ks 1,2,4,8, but -k 1,2 here"),
                      ("a gap", dict(shards=parts[::2]), "queries 300:600 are in no shard"),
                      ("an overlap", dict(shards=parts + parts[:1]), "shard 3 (queries 0:300) overlaps shard 0"),
                      ("no shards", dict(shards=[]), "shards: expected a list of hedge.Shard"),
                      ("not shards", dict(shards=[{}]), "shards: expected a list of hedge.Shard"),
                      ("both", dict(shard=(0, 2)), "shard, shards: give one"),
                      ("a bad shard", dict(shards=None, shard=(3, 3)), "shard: (3, 3), expected (i, n)"),
                      ("a bad shard", dict(shards=None, shard=5), "shard: 5, expected (i, n)")]:
    args = dict(mu=ms, labels=ys, shards=parts)
    args.update(kw)
    try:
        hedge.evaluate(**args)
        raise AssertionError("%s: accepted" % bad)
    except ValueError as e:
        assert want in str(e), (bad, str(e))
print("pypackage: shards equal the whole call, and bad ones refused")
# a Shard is opaque bytes (issue 45: Python mirrors no C struct): damaged bytes are refused or, where
# the damage changes nothing the answers depend on (the lineage's text), give the whole call's numbers;
# never other numbers (the engine's checks of each value: tests/fuzz/shardfuzz.py, the same reader).
# 300 single-byte changes of the middle shard, and shards cut short
whole = hedge.evaluate(ms, ys, var=vs)
parts = [hedge.evaluate(ms, ys, var=vs, shard=(i, 3)) for i in range(3)]
rr = np.random.default_rng(45)
refused = same = 0
for t in range(300):
    b = bytearray(parts[1].data)
    j = int(rr.integers(len(b)))
    b[j] = (b[j] + int(rr.integers(1, 256))) % 256
    try:
        got = hedge.evaluate(ms, ys, var=vs, shards=[parts[0], hedge.Shard(bytes(b), parts[1].queries, 900), parts[2]])
    except ValueError:
        refused += 1
        continue
    assert repr(got) == repr(whole), ("byte %d of shard 1 changed, other numbers" % j)
    same += 1
for cut in (0, 10, len(parts[1].data) // 2, len(parts[1].data) - 1):
    try:
        hedge.evaluate(ms, ys, var=vs, shards=[parts[0], hedge.Shard(parts[1].data[:cut], parts[1].queries, 900), parts[2]])
        raise AssertionError("a shard cut to %d bytes accepted" % cut)
    except ValueError as e:
        assert "shard 1" in str(e), (cut, str(e))
print("pypackage: 300 damaged shards: %d refused, %d the same numbers, none other numbers; cut ones refused"
      % (refused, same))
# the bytes are the stream bin/evaluate --queries writes: written to files, evaluate --merge makes
# the whole set's JSON from them, and hedge.Shard.read takes them back (ids as the CLI numbers them)
import subprocess
ids = np.arange(900)
np.savez("cli.npz", mu=ms, labels=ys, var=vs)
for i in range(3):
    hedge.evaluate(ms, ys, var=vs, ids=ids, shard=(i, 3)).write("part%d.hs" % i)
subprocess.run(["evaluate", "--json", "merged.json", "--merge", "cli.npz", "part2.hs", "part0.hs", "part1.hs"], check=True,
               stdout=subprocess.DEVNULL)
subprocess.run(["evaluate", "--json", "whole.json", "cli.npz"], check=True, stdout=subprocess.DEVNULL)
assert open("merged.json").read() == open("whole.json").read()
back = [hedge.Shard.read("part%d.hs" % i) for i in range(3)]
assert [s.queries for s in back] == [(0, 300), (300, 600), (600, 900)], back
assert repr(hedge.evaluate(ms, ys, var=vs, ids=ids, shards=back)) == repr(hedge.evaluate(ms, ys, var=vs, ids=ids))
print("pypackage: Python's shards are evaluate --merge's, and back")
# integer options beyond their C fields (ctypes cut them: knn_k=2^32+3 ran k = 3): refused by name
for kw, want in [(dict(knn_k=2**32 + 3), "knn_k: 4294967299, expected an integer from 1 to 2147483647"),
                 (dict(knn_k=2**31), "knn_k: 2147483648"),
                 (dict(pairs=2**64 + 10), "pairs: 18446744073709551626, expected an integer from 1 to"),
                 (dict(recall_at=(2**32 + 1,)), "recall_at: (4294967297,), expected 1 to 16"),
                 (dict(recall_at=4), "recall_at: 4, expected"),
                 (dict(threads=2**32 + 1), "threads: 4294967297"),
                 (dict(include=5), "include: 5, expected a list or tuple of metric names"),
                 (dict(distance=["cosine"]), "distance: ['cosine'], expected one of"),
                 (dict(mu=[[1, 2], [3]], labels=[0, 1]), "mu: not an array"),
                 (dict(ids=np.arange(900, dtype=np.uint64) + 2**63, gallery=ms, gallery_labels=ys,
                       gallery_ids=np.arange(900), exclude_id=True), "ids: values from 9223372036854775808"),
                 (dict(mu=np.vstack([np.zeros((1, 16), np.float32), ms[1:]]), distance="cosine"),
                  "mu: item 0: its mean is the zero vector")]:
    args = dict(mu=ms, labels=ys)
    args.update(kw)
    try:
        hedge.evaluate(**args)
        raise AssertionError("accepted: %s" % want)
    except ValueError as e:
        assert want in str(e), (want, str(e))
print("pypackage: integer options beyond C's refused by name")
# out of memory and Ctrl-C (issue 44, defects 5 and 1): the engine ended the Python process on a
# failed allocation ("hedge: out of memory (...)", exit 1: no MemoryError, no finally), and a call
# could not be interrupted. Now MemoryError naming the size, KeyboardInterrupt within a block of
# the work, and the process and the engine go on (the same dict again)
import resource, signal, subprocess, textwrap
script = textwrap.dedent("""
    import os, resource, signal, sys, threading, time
    import numpy as np
    import hedge
    r = np.random.default_rng(5)
    x = r.normal(size=(3000, 16)).astype(np.float32); y = r.integers(0, 10, 3000)
    first = repr(hedge.evaluate(x, y))
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    resource.setrlimit(resource.RLIMIT_AS, (8 << 30, hard))
    done = False
    try:
        hedge.evaluate(x, y, pairs=10**9)
    except MemoryError as e:
        assert "out of memory (16000000000 bytes)" in str(e), str(e)
        print("memory error:", e)
    finally:
        done = True
    resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
    assert done and repr(hedge.evaluate(x, y)) == first
    big = r.normal(size=(40000, 64)).astype(np.float32); by = r.integers(0, 100, 40000)
    threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
    t0 = time.time()
    try:
        hedge.evaluate(big, by, threads=2)
        raise AssertionError("not interrupted")
    except KeyboardInterrupt:
        took = time.time() - t0
    print("interrupted after %.2f s" % took)
    assert took < 3, took
    assert repr(hedge.evaluate(x, y)) == first
    print("going on")
""")
p = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
assert p.returncode == 0 and "going on" in p.stdout, (p.returncode, p.stdout, p.stderr)
print("pypackage: out of memory is a MemoryError, Ctrl-C a KeyboardInterrupt (%s), the process goes on"
      % p.stdout.split("interrupted after ")[1].split("\n")[0])

# labels that are names: the classes of their sorted order, the same numbers as integer labels
# (one call, a gallery whose names the queries share in part, shards), result["classes"] the names
zoo = np.array(["ant", "bee", "cow", "doe", "elk", "fly", "gar", "hog", "ibis", "jay", "kid", "lynx",
                "mole", "newt", "owl", "pug", "quail", "ram", "seal", "tit"])
ns = zoo[ys]
assert repr(hedge.evaluate(ms, ns)) == repr(hedge.evaluate(ms, ys))
a = hedge.evaluate(ms, list(ns), pml=True, return_per_class=True, include=("precision_at_1",))
b = hedge.evaluate(ms, ys, pml=True, return_per_class=True, include=("precision_at_1",))
assert a["classes"] == list(zoo[b["classes"]]) and a["precision_at_1"] == b["precision_at_1"], (a, b)
gal = dict(gallery=ms[200:], gallery_labels=ns[200:].astype("O"))
assert repr(hedge.evaluate(ms[:200], ns[:200], **gal)) == \
    repr(hedge.evaluate(ms[:200], ys[:200], gallery=ms[200:], gallery_labels=ys[200:]))
named = [hedge.evaluate(ms, ns, shard=(i, 2)) for i in range(2)]
assert repr(hedge.evaluate(ms, ns, shards=named)) == repr(hedge.evaluate(ms, ys))
for bad, kw, want in [("names and integers", dict(labels=ns, gallery=ms, gallery_labels=ys), "expected both names"),
                      ("a number among names", dict(labels=np.array(list(ns[:-1]) + [7], dtype=object)),
                       "labels: object array holding 7 (int)"),
                      ("str and bytes", dict(labels=np.array([b"x", "y"] * (len(ys) // 2), dtype=object)),
                       "names of mixed types"),
                      ("floats", dict(labels=ys + 0.5), "labels: float64 array, expected integers")]:
    try:
        hedge.evaluate(ms, **kw)
        raise AssertionError("%s: accepted" % bad)
    except ValueError as e:
        assert want in str(e), (bad, str(e))
print("pypackage: labels that are names")
print("pypackage: ok with %s" % sys.version.split()[0])
EOF

# check_venv NAME PYTHON: a venv of PYTHON with only numpy, hedge installed by pip, the checks
check_venv() {
    v=$T/$1
    "$2" -m venv "$v" > "$1.log" 2>&1 || fail "$2 -m venv: $(tail -n 3 "$1.log")"
    site=$("$v/bin/python" -c 'import sysconfig; print(sysconfig.get_path("purelib"))')
    echo "$T/np" > "$site/debian-numpy.pth"
    "$v/bin/python" -c 'import numpy' || fail "$1: numpy is not importable through $site/debian-numpy.pth"
    (cd "$ROOT" && "$v/bin/pip" install --no-index ./python) >> "$1.log" 2>&1 ||
        fail "$1: pip install --no-index ./python: $(tail -n 5 "$1.log")"
    HEDGE_WANT_VERSION=$(cat "$ROOT/VERSION") "$v/bin/python" checks.py "$v" || fail "$1: the checks failed (above)"
    # the installed library exports the engine's interface alone (lib/libhedge.map): any other
    # name could be bound to libc's (warn) or another loaded library's function of that name
    so=$(ls "$site"/hedge/libhedge.so) || fail "$1: no hedge/libhedge.so in $site"
    other=$(nm -D --defined-only "$so" | awk '{sub(/@.*/, "", $3); print $3}' | grep -v -e '^hedge_' -e '^HEDGE$' | tr '\n' ' ')
    [ -z "$other" ] || fail "$1: libhedge.so exports more than hedge_*: $other"
    nm -D --defined-only "$so" | grep -q ' hedge_evaluate@' || fail "$1: libhedge.so does not export hedge_evaluate"
    "$v/bin/pip" uninstall -y hedge >> "$1.log" 2>&1 || fail "$1: pip uninstall: $(tail -n 3 "$1.log")"
    left=$(ls "$site" | grep -i hedge)
    [ -z "$left" ] || fail "$1: pip uninstall left $left in $site"
}
check_venv venv $PY
# a fresh clone (the tree's sources, no build/), installed as a user does it, Python caching
# bytecode: pip install leaves the clone as it was (it left build/ and python/__pycache__), the
# temporary build folder removed, and the package works
mkdir clone tmp && tar -C "$ROOT" --exclude=./build --exclude='./build-*' --exclude=./data --exclude=./.git \
    --exclude=./out --exclude=./results --exclude=./tests -cf - . | tar -xf - -C clone || fail "copying the tree"
find clone | sort > clone.before
(cd clone && env -u PYTHONDONTWRITEBYTECODE TMPDIR="$T/tmp" "$T/venv/bin/pip" install --no-index ./python) > clone.log 2>&1 ||
    fail "pip install ./python in a fresh clone: $(tail -n 5 clone.log)"
find clone | sort > clone.after
cmp -s clone.before clone.after || fail "pip install ./python changed the clone: $(diff clone.before clone.after | head -n 20)"
[ -z "$(ls -A tmp)" ] || fail "pip install ./python left in TMPDIR: $(ls -A tmp)"
"$T/venv/bin/python" -c '
import numpy as np, hedge
y = np.arange(40) % 2
assert hedge.evaluate(np.eye(2, dtype=np.float32)[y] * 10, y)["map"] == 1' || fail "hedge from the fresh clone's wheel"
"$T/venv/bin/pip" uninstall -y hedge >> clone.log 2>&1 || fail "pip uninstall: $(tail -n 3 clone.log)"
# editable: the sources stay in python/, the library in the tree's build/lib
(cd "$ROOT" && "$T/venv/bin/pip" install --no-index -e ./python) >> venv.log 2>&1 || fail "pip install -e: $(tail -n 3 venv.log)"
"$T/venv/bin/python" -c '
import sys, os, numpy as np, hedge, hedge._lib as L
assert hedge.__file__ == os.path.join(sys.argv[1], "python", "hedge", "__init__.py"), hedge.__file__
assert L.load().path == os.path.join(sys.argv[1], "build", "lib", "libhedge.so"), L.load().path
y = np.arange(40) % 2
assert hedge.evaluate(np.eye(2, dtype=np.float32)[y] * 10, y)["map"] == 1' "$ROOT" || fail "the editable install"
"$T/venv/bin/pip" uninstall -y hedge >> venv.log 2>&1 || fail "pip uninstall of the editable install"
py2=/root/.pyenv/shims/python3
if [ -x $py2 ] && py2=$($py2 -c 'import sys; print(sys.executable)' 2> /dev/null) && [ -n "$py2" ]; then
    if [ "$($py2 -c 'import sys; print(sys.version_info[:2])')" = "$npver" ]; then
        check_venv venv2 "$py2"
    else
        echo "pypackage: $py2 is not Python $npver, Debian's numpy's: not tried"
    fi
fi

# --- an sdist has no tree to build the library in: a wheel from it says so (or takes HEDGE_LIB)
mkdir sdist && (cd "$ROOT/python" && $PY -c 'import sys, hedge_build; print(hedge_build.build_sdist(sys.argv[1]))' "$T/sdist") > sdist.name ||
    fail "build_sdist"
tar -xzf "sdist/$(cat sdist.name)" -C sdist || fail "the sdist does not unpack"
src=$(ls -d sdist/hedge-*/) && [ -f "$src/hedge/stream.py" ] && [ -f "$src/PKG-INFO" ] || fail "the sdist: $(ls -R sdist)"
mkdir whl
(cd "$src" && env -u HEDGE_LIB $PY -c 'import hedge_build; hedge_build.build_wheel("../../whl")') > sdist.out 2> sdist.err &&
    fail "a wheel was built from the sdist without a tree"
grep -q "the hedge tree is not at .*set HEDGE_LIB" sdist.err || fail "the sdist's refusal: $(tail -n 2 sdist.err)"
(cd "$src" && HEDGE_LIB="$ROOT/build/lib/libhedge.so" $PY -c 'import hedge_build; hedge_build.build_wheel("../../whl")') 2> sdist.err ||
    fail "build_wheel from the sdist with HEDGE_LIB: $(tail -n 2 sdist.err)"
$PY -m zipfile -l whl/*.whl > whl.list && grep -q 'hedge/libhedge.so' whl.list || fail "the wheel has no hedge/libhedge.so"
pass
