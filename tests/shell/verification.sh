#!/bin/sh
# The verification section of the battery (issue 46): every number against a computation of its
# own here, in numpy, from the definitions (lib/measures/verify.h, docs/metric.md), never from
# hedge's code. The pairs are ap's, drawn again here by pairs_random's documented scheme (pair p
# from hedge's generator rng_init(seed, 'pair' ^ p), ported below; even pairs genuine, odd ones
# impostor) and scored as the engine scores them without a match probability (sigmoid(-d) of the
# means, in float32): TAR@FAR by PFE's find_thresholds_by_FAR (k = np.round(N f), the k-th largest
# impostor, above the largest for k = 0, accept s >= T), the FAR reached, FNMR = 1 - TAR, the ROC
# AUC as scikit-learn's roc_auc_score (midranks). Open set: DIR@FAR against a gallery missing half
# the classes from brute-force nearest distances. Then the CLI's JSON against the dict, and each
# '-' with its reason: too few impostor pairs, no gallery, no absent class, too few non-mated probes.
set -u
. "$(dirname "$0")/../lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
PY=/usr/bin/python3
plain_libhedge "$ROOT"
cd "$T" || fail "no temp dir"
PYTHONPATH="$ROOT/python" HEDGE_LIB="$LIBSO" $PY - "$BIN" "$ROOT" <<'PYEOF' || fail "see above"
import json, math, subprocess, sys
import numpy as np
import hedge

BIN, ROOT = sys.argv[1], sys.argv[2]
sys.path.insert(0, ROOT + "/tests")
from hedge_rng import Rng, mix, stream as STREAM, tie_key  # hedge's generator (lib/base/rng.c)

PAIR = (ord("p") << 56) | (ord("a") << 48) | (ord("i") << 40) | (ord("r") << 32)

def pairs_random(y, npairs, seed):
    """lib/evaluation/pairs.h: items ordered by (class, index); pair p even: i from the items whose
    class has two, j another of its class; odd: i any item, j any outside its class"""
    n = len(y)
    order = np.lexsort((np.arange(n), y))
    pos = np.empty(n, dtype=int); pos[order] = np.arange(n)
    ys = y[order]
    cs = np.searchsorted(ys, y, "left"); ce = np.searchsorted(ys, y, "right")
    elig = [i for i in range(n) if ce[i] - cs[i] >= 2]
    out = []
    for p in range(npairs):
        r = Rng(seed, PAIR ^ p)
        if p % 2 == 0:
            i = elig[r.below(len(elig))]
            t = int(cs[i]) + r.below(int(ce[i] - cs[i]) - 1)
            if t >= pos[i]:
                t += 1
        else:
            i = r.below(n)
            t = r.below(n - int(ce[i] - cs[i]))
            if t >= cs[i]:
                t += int(ce[i] - cs[i])
        out.append((i, int(order[t])))
    return np.array(out)

def at_far(pos, neg, far):
    """PFE's find_thresholds_by_FAR and TAR: (rate, far reached)"""
    neg = np.sort(neg)[::-1]
    k = int(np.round(len(neg) * far))
    T = neg[k - 1] if k else np.nextafter(neg[0], np.inf)
    return float(np.mean(pos >= T)), float(np.mean(neg >= T))

def auc(pos, neg):  # roc_auc_score: midranks
    s = np.concatenate([pos, neg]); lab = np.r_[np.ones(len(pos)), np.zeros(len(neg))]
    order = np.argsort(s, kind="stable"); ranks = np.empty(len(s)); ranks[order] = np.arange(1, len(s) + 1)
    for v in np.unique(s):
        m = s == v
        if m.sum() > 1:
            ranks[m] = ranks[m].mean()
    npos = len(pos)
    return (ranks[lab == 1].sum() - npos * (npos + 1) / 2) / (npos * len(neg))

FARS = [1e-1, 1e-2, 1e-3, 1e-4]
LAB = ["1e-1", "1e-2", "1e-3", "1e-4"]
r = np.random.default_rng(46)
n, D, NC = 2400, 4, 12
y = r.integers(0, NC, n).astype(np.int32)
centres = r.normal(size=(NC, D)) * 1.5
x = (centres[y] + r.normal(size=(n, D))).astype(np.float32)

# ---- pairs: enough for every FAR (100000 impostors for 1e-4)
NP, seed = 200000, 714
d = hedge.evaluate(x, y, pairs=NP, seed=seed, bootstrap=0)
v = d["verification"]
P = pairs_random(y, NP, seed)
dist = np.sqrt(((x[P[:, 0]].astype(np.float64) - x[P[:, 1]]) ** 2).sum(1))
s = (np.exp(-dist) / (1 + np.exp(-dist))).astype(np.float32).astype(np.float64)  # match_sigmoid(-d), float32
gen = y[P[:, 0]] == y[P[:, 1]]
assert gen[0::2].all() and not gen[1::2].any(), "the pairs drawn here are not genuine / impostor by parity"
assert v["genuine"] == NP // 2 and v["impostor"] == NP // 2, v
worst = 0.0
for i, f in enumerate(FARS):
    tar, reached = at_far(s[gen], s[~gen], f)
    assert v["tar_at_far"][i] == tar, ("TAR@FAR", f, v["tar_at_far"][i], tar)
    assert v["far_reached"][i] == reached, ("FAR reached", f, v["far_reached"][i], reached)
    assert abs(v["fnmr_at_fmr"][i] - (1 - tar)) < 1e-15, ("FNMR", f)
a = auc(s[gen], s[~gen])
worst = abs(v["roc_auc"] - a)
assert worst < 1e-12, ("ROC AUC", v["roc_auc"], a)
assert v["why"] == {"DIR@FAR %s" % l: v["why"]["DIR@FAR %s" % l] for l in LAB}, v["why"]
assert all("no gallery" in w for w in v["why"].values()), v["why"]
print("verification: TAR@FAR 1e-1 .. 1e-4 (%s), the FAR reached, FNMR and the ROC AUC of %d pairs drawn here "
      "equal numpy's (AUC difference %.1e)" % (", ".join("%.4f" % t for t in v["tar_at_far"]), NP, worst))

# ---- the default pairs: 5000 impostors, too few for 1e-3 and 1e-4
d0 = hedge.evaluate(x, y, bootstrap=0)["verification"]
assert not math.isnan(d0["tar_at_far"][1]) and all(math.isnan(t) for t in d0["tar_at_far"][2:]), d0
assert "5000 impostor pairs, fewer than the 10000 (10 / FAR)" in d0["why"]["TAR@FAR 1e-3"], d0["why"]
assert "fewer than the 100000" in d0["why"]["TAR@FAR 1e-4"], d0["why"]

# ---- open set: the gallery holds classes 0 .. 5 (other items), the queries of 6 .. 11 are non-mated
g = r.integers(0, NC // 2, 600).astype(np.int32)
gx = (centres[g] + r.normal(size=(len(g), D))).astype(np.float32)
o = hedge.evaluate(x, y, gallery=gx, gallery_labels=g, bootstrap=0)
ov = o["verification"]
d2 = ((x[:, None, :].astype(np.float64) - gx[None, :, :]) ** 2).sum(-1)
nn = d2.argmin(1)
score = -np.sqrt(d2.min(1))
mated = np.isin(y, g)
hit = g[nn] == y
assert ov["mated"] == mated.sum() and ov["non_mated"] == (~mated).sum(), (ov["mated"], ov["non_mated"], mated.sum())
for i, f in enumerate(FARS):
    if (~mated).sum() * f < 10:
        assert math.isnan(ov["dir_at_far"][i]) and "probes of absent classes, fewer than" in ov["why"]["DIR@FAR " + LAB[i]]
        continue
    want, _ = at_far(np.where(hit[mated], score[mated], -np.inf), score[~mated], f)
    assert ov["dir_at_far"][i] == want, ("DIR@FAR", f, ov["dir_at_far"][i], want)
assert not math.isnan(ov["dir_at_far"][1]), ov  # about 1200 non-mated probes: 1e-1 and 1e-2
print("verification: DIR@FAR (%s) of %d mated and %d non-mated probes equals numpy's"
      % (", ".join("-" if math.isnan(t) else "%.4f" % t for t in ov["dir_at_far"]), ov["mated"], ov["non_mated"]))

# ---- the CLI's JSON equals the dict
np.savez("q.npz", mu=x, labels=y)
np.savez("g.npz", mu=gx, labels=g)
p = subprocess.run([BIN + "/evaluate", "-g", "g.npz", "--bootstrap", "0", "--json", "set.json", "q.npz"],
                   capture_output=True, text=True)
assert p.returncode == 0, p.stderr
j = json.load(open("set.json"))["input"]["verification"]
def same(a, b, path):
    if isinstance(b, dict):
        assert isinstance(a, dict) and set(a) == set(b), (path, a if not isinstance(a, dict) else set(a) ^ set(b))
        for k in b:
            same(a[k], b[k], path + "/" + k)
    elif isinstance(b, list):
        assert len(a) == len(b), path
        for i, (p_, q_) in enumerate(zip(a, b)):
            same(p_, q_, "%s[%d]" % (path, i))
    elif isinstance(b, float) and math.isnan(b):
        assert a is None, (path, a)
    elif isinstance(b, (int, float)) and not isinstance(b, bool):
        assert float("%.10g" % b) == a, (path, a, b)
    else:
        assert a == b, (path, a, b)
same(j, ov, "verification")
out = p.stdout
assert "\nVerification (input): 5000 genuine and 5000 impostor pairs" in out, out[-1500:]
assert "| TAR@FAR 1e-2 | %.4f (FAR " % ov["tar_at_far"][1] in out, out[-1500:]
assert "| DIR@FAR 1e-1 | %.4f |" % ov["dir_at_far"][0] in out, out[-1500:]
assert "- TAR@FAR 1e-3: 5000 impostor pairs" in out and "- DIR@FAR 1e-3: %d probes of absent classes" % ov["non_mated"] in out, out[-1500:]
print("verification: evaluate's JSON equals the dict; its table has the rows and each '-' with its reason")

# ---- what cannot be had: no absent class, no pair to draw
full = hedge.evaluate(x, y, gallery=x[:1200], gallery_labels=y[:1200], bootstrap=0)["verification"]
assert full["non_mated"] == 0 and all(math.isnan(t) for t in full["dir_at_far"])
assert "no probe of an absent class" in full["why"]["DIR@FAR 1e-1"], full["why"]
lone = hedge.evaluate(x[:50], np.arange(50), bootstrap=0)["verification"]  # one item a class: no genuine pair
assert all(math.isnan(t) for t in lone["tar_at_far"]) and math.isnan(lone["roc_auc"])
assert "no class has two items" in lone["why"]["ROC AUC"], lone["why"]
assert "verification" not in hedge.evaluate(x, y, include=["ap"], bootstrap=0)
print("verification: no absent class, no genuine pair: '-' with the reason; none with include")
PYEOF
pass
