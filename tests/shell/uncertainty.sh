#!/bin/sh
# The uncertainty section of the battery (issue 46): every number of it against a computation of
# its own here, in numpy, from the definitions (lib/measures/selective.h, docs/metric.md), never
# from hedge's code: the per-query losses from brute-force distances (R@1, kNN's vote by
# lib/measures/knn_vote.h's rule, AP, MAP@R), the free baselines (nearest distance, Lowe's ratio,
# the vote's entropy, minus the norm), the measures by their formulas with the tie rule (a run of
# equal uncertainty is one step: the expected loss over its orders), AUROC as scikit-learn's
# roc_auc_score (midranks), tau-b and Pearson over bins; the bootstrap's intervals from the
# replicates drawn here by the documented scheme (hedge's generator, xoshiro256** seeded through
# splitmix64, ported below) and numpy's percentiles; the paired differences. Then the CLI's JSON
# against the Python dict, and what cannot be had: a constant source, one query, no error at all,
# every query wrong, a NaN user uncertainty (refused).
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

# ---- the per-query values from brute-force distances (leave-one-out, euclidean, k = 5)
def per_query(x, y, k=5):
    d2 = ((x[:, None, :].astype(np.float64) - x[None, :, :]) ** 2).sum(-1)
    n = len(y)
    out = {k2: np.full(n, np.nan) for k2 in ("r1", "knn", "ap", "map_r", "top1_dist", "ratio", "vote_entropy")}
    for q in range(n):
        others = np.array([j for j in range(n) if j != q])
        order = others[np.lexsort((others, d2[q, others]))]
        pos = y[order] == y[q]
        nb = order[:k]
        dist = np.sqrt(d2[q, nb])
        counts = {}
        for c, dd, r in zip(y[nb], dist, range(k)):
            counts.setdefault(c, [0, 0.0, r])
            counts[c][0] += 1; counts[c][1] += dd
        vote = min(counts, key=lambda c: (-counts[c][0], counts[c][1], counts[c][2]))
        out["knn"][q] = float(vote != y[q])
        p = np.array([v[0] for v in counts.values()]) / k
        out["vote_entropy"][q] = max(0.0, float(-(p * np.log(p)).sum()))
        out["top1_dist"][q] = dist[0]
        out["ratio"][q] = dist[0] / dist[1] if dist[1] > 0 else 1.0
        R = pos.sum()
        if R:
            ranks = np.nonzero(pos)[0] + 1
            prec = np.arange(1, R + 1) / ranks
            out["r1"][q] = 1.0 - float(ranks[0] == 1)
            out["ap"][q] = 1 - float(np.float32(prec.mean()))  # a query's AP and MAP@R are float32 (retrieval.h)
            out["map_r"][q] = 1 - float(np.float32(prec[ranks <= R].sum() / R))
    return out

# ---- the measures on items with counts c (c = 1: the point values), by their definitions
def measures(u, loss, binary, tie, c):
    ok = ~np.isnan(loss)
    u, loss, tie, c = u[ok], loss[ok], tie[ok], c[ok]
    keep = c > 0
    u, loss, tie, c = u[keep], loss[keep], tie[keep], c[keep]
    order = sorted(range(len(u)), key=lambda i: (u[i], tie[i], i))
    U = np.repeat(u[order], c[order]); L = np.repeat(loss[order], c[order])
    N = len(U)
    cum = np.empty(N)  # the expected cumulative loss at each position, runs of equal u averaged
    a, acc = 0, 0.0
    while a < N:
        b = a
        while b < N and U[b] == U[a]:
            b += 1
        mean = L[a:b].mean()
        cum[a:b] = acc + mean * np.arange(1, b - a + 1)
        acc += L[a:b].sum(); a = b
    k = np.arange(1, N + 1)
    aurc = (cum / k).mean()
    ocum = np.cumsum(np.sort(L))
    out = {"aurc": aurc, "eaurc": aurc - (ocum / k).mean(), "augrc": cum.mean() / N}
    if binary and 0 < L.sum() < N:  # roc_auc_score(wrong, u): midranks
        from numpy import argsort
        ranks = np.empty(N); srt = argsort(U, kind="stable"); ranks[srt] = np.arange(1, N + 1)
        for val in np.unique(U):
            m = U == val; ranks[m] = ranks[m].mean()
        w = L == 1
        out["auroc"] = (ranks[w].sum() - w.sum() * (w.sum() + 1) / 2) / (w.sum() * (N - w.sum()))
    else:
        out["auroc"] = math.nan
    perf = 1 - L
    if N >= 20:
        bins = np.array([b.mean() for b in np.array_split(perf, 20)])
        out["tau"] = -tau_b(np.arange(20.0), bins)
    else:
        out["tau"] = math.nan
    if N >= 10:
        sz = N // 10
        pb = np.array([perf[i * sz:(i + 1) * sz].mean() for i in range(10)])
        out["pearson_bins"] = np.corrcoef(np.arange(10), pb)[0, 1] if pb.std() > 0 else math.nan
    else:
        out["pearson_bins"] = math.nan
    return out

def tau_b(x, y):
    n = len(x); nc = nd = tx = ty = 0
    for i in range(n):
        for j in range(i + 1, n):
            sx, sy = np.sign(x[j] - x[i]), np.sign(y[j] - y[i])
            tx += sx == 0; ty += sy == 0
            if sx and sy:
                nc += sx == sy; nd += sx != sy
    n0 = n * (n - 1) / 2
    den = math.sqrt((n0 - tx) * (n0 - ty))
    return (nc - nd) / den if den else math.nan

def close(a, b, tol, what):
    if (a is None or (isinstance(a, float) and math.isnan(a))) and (b is None or (isinstance(b, float) and math.isnan(b))):
        return
    assert a is not None and b is not None and abs(a - b) <= tol, "%s: hedge %r, here %r" % (what, a, b)

# ---- a set with an informative uncertainty: the further a query from its class centre, the more
# often wrong, and var says so (with noise); ties in eta (rounded to a coarse grid)
r = np.random.default_rng(46)
n, D = 240, 4
y = r.integers(0, 6, n)
centres = r.normal(size=(6, D)) * 2.2
spread = r.uniform(0.3, 1.6, n)
x = (centres[y] + r.normal(size=(n, D)) * spread[:, None]).astype(np.float32)
pq = per_query(x, y)
# var knows R@1's errors (the loss itself through noise: a learned uncertainty that knows more
# than the free signals, so that the verdict has something to find); eta the spread, on a grid
var = np.repeat(np.exp(np.nan_to_num(pq["r1"]) + r.normal(size=n) * 0.4)[:, None], D, 1).astype(np.float32)
eta = np.round(spread * 2).astype(np.float32) / 2
mine = r.uniform(size=n).astype(np.float32)
B, seed = 60, 714
d = hedge.evaluate(x, y, var=var, eta=eta, uncertainty={"mine": mine}, bootstrap=B, seed=seed)
src = {"top1_dist": pq["top1_dist"], "ratio": pq["ratio"], "vote_entropy": pq["vote_entropy"],
       "norm": -np.sqrt((x.astype(np.float64) ** 2).sum(1)), "var": var.astype(np.float64).mean(1),
       "eta": eta.astype(np.float64), "mine": mine.astype(np.float64)}
tgt = {"r1": (pq["r1"], 1), "knn": (pq["knn"], 1), "ap": (pq["ap"], 0), "map_r": (pq["map_r"], 0)}
tie = np.array([tie_key(seed, i) for i in range(n)], dtype=object)
MEAS = ("auroc", "aurc", "eaurc", "augrc", "tau", "pearson_bins")
ones = np.ones(n, dtype=int)
point = {s: {t: measures(src[s].astype(np.float32).astype(np.float64) if s in ("top1_dist", "ratio", "vote_entropy") else src[s],
                         tgt[t][0], tgt[t][1], tie, ones) for t in tgt} for s in src}
worst = 0
for s in src:
    for t in tgt:
        for m in MEAS:
            h = d["uncertainty"][s][t][m]
            # graded losses: a query's AP and MAP@R are float32, summed here in another order (an
            # ulp of float32 apart now and then); binary ones are exact
            close(h, point[s][t][m], 1e-9 if tgt[t][1] else 1e-6, "%s %s %s" % (s, t, m))
            if not math.isnan(h):
                worst = max(worst, abs(h - point[s][t][m]))
print("uncertainty: %d sources x 4 targets x 6 measures equal their definitions here (largest difference %.1e)" % (len(src), worst))
# the replicates: counts from rng_init(seed, 'boot' ^ b), n draws of rng_below(n)
counts = []
for b in range(B):
    g = Rng(seed, STREAM("b", "o", "o", "t") ^ b)
    c = np.zeros(n, dtype=int)
    for _ in range(n):
        c[g.below(n)] += 1
    counts.append(c)
def interval(vals):
    v = np.array([x for x in vals if not math.isnan(x)])
    return None if len(v) == 0 or 2 * len(v) < len(vals) else list(np.percentile(v, [2.5, 97.5]))
for s, t, m in [("var", "r1", "auroc"), ("var", "ap", "aurc"), ("eta", "knn", "augrc"), ("top1_dist", "map_r", "eaurc"),
                ("vote_entropy", "r1", "tau"), ("norm", "ap", "pearson_bins"), ("mine", "knn", "auroc")]:
    sv = src[s].astype(np.float32).astype(np.float64) if s in ("top1_dist", "ratio", "vote_entropy") else src[s]
    reps = [measures(sv, tgt[t][0], tgt[t][1], tie, c)[m] for c in counts]
    want, got = interval(reps), d["ci"].get(s, {}).get(t, {}).get(m)
    assert (want is None) == (got is None), (s, t, m, want, got)
    tol = 1e-9 if tgt[t][1] else 1e-6
    if want:
        close(got[0], want[0], tol, "ci %s %s %s lo" % (s, t, m)); close(got[1], want[1], tol, "ci %s %s %s hi" % (s, t, m))
    if s in ("var", "eta", "mine"):  # the paired difference from the best free baseline
        v = d["verdict"][s][t][m]
        b = v["baseline"]
        free = [f for f in ("top1_dist", "ratio", "vote_entropy", "norm") if not math.isnan(point[f][t][m])]
        best = (max if m in ("auroc", "tau") else min)(free, key=lambda f: point[f][t][m])
        assert b == best, (s, t, m, b, best)
        bv = src[b].astype(np.float32).astype(np.float64) if b in ("top1_dist", "ratio", "vote_entropy") else src[b]
        diffs = [measures(sv, tgt[t][0], tgt[t][1], tie, c)[m] - measures(bv, tgt[t][0], tgt[t][1], tie, c)[m]
                 for c in counts]
        w = interval(diffs)
        close(v["difference"], point[s][t][m] - point[b][t][m], tol, "verdict %s %s %s" % (s, t, m))
        close(v["ci"][0], w[0], tol, "verdict ci lo"); close(v["ci"][1], w[1], tol, "verdict ci hi")
# a retrieval metric's interval: the weighted mean over the replicates
for name in ("map_r", "p1", "knn"):
    per = 1 - (pq["map_r"] if name == "map_r" else pq["r1"] if name == "p1" else pq["knn"])
    reps = [float((c * np.nan_to_num(per)).sum() / (c * ~np.isnan(per)).sum()) for c in counts]
    want = interval(reps)
    close(d["ci"][name][0], want[0], 1e-6, "ci " + name); close(d["ci"][name][1], want[1], 1e-6, "ci " + name)
print("uncertainty: intervals and paired differences equal %d replicates drawn here by the documented scheme" % B)
assert d["verdict"]["var"]["r1"]["auroc"]["ci"][0] > 0, d["verdict"]["var"]["r1"]  # it knows more here
assert d["verdict"]["mine"]["r1"]["auroc"]["difference"] < 0  # noise does not

# ---- the CLI's JSON equals the dict
np.savez("set.npz", mu=x, var=var, eta=eta, labels=y, mine=mine)
p = subprocess.run([BIN + "/evaluate", "--uncertainty", "mine", "--bootstrap", str(B), "--json", "set.json", "set.npz"],
                   capture_output=True, text=True)
assert p.returncode == 0, p.stderr
j = json.load(open("set.json"))["input"]
def same(a, b, path):
    if isinstance(b, dict):
        assert isinstance(a, dict) and set(a) == set(b), (path, a if not isinstance(a, dict) else set(a) ^ set(b))
        for k in b:
            same(a[k], b[k], path + "/" + k)
    elif isinstance(b, list):
        assert len(a) == len(b), path
        for i, (p_, q_) in enumerate(zip(a, b)):
            same(p_, q_, "%s[%d]" % (path, i))
    elif b is None:
        assert a is None or (isinstance(a, float) and math.isnan(a)), (path, a)
    elif isinstance(b, (int, float)) and not isinstance(b, bool):
        assert float("%.10g" % a) == b, (path, a, b)
    else:
        assert a == b, (path, a, b)
for k in ("ci", "bootstrap", "uncertainty", "uncertainty_why", "verdict", "risk"):
    same(d[k], j[k], k)
assert "- var - best free baseline (" in p.stdout and "r1 AUROC:" in p.stdout, p.stdout[-2000:]
print("uncertainty: evaluate's JSON equals the dict; its table leads the section with the verdict")

# ---- the anchors' own numbers, each by its published code's formula (docs/metric.md's table), on
# a set without ties in u (their sorts break ties arbitrarily), against hedge's by the mapping
ta = d  # var's numbers: var is continuous, so no ties
u, l1 = src["var"], pq["r1"]
ok = ~np.isnan(l1)
uu, ee = u[ok], l1[ok]
nq = len(uu)
conf = -uu
# URL (validate.py): binary_auroc(-u, correct), torchmetrics' exact ROC (trapezoid over distinct scores)
def torch_binary_auroc(score, target):
    o = np.argsort(-score, kind="stable"); s_, t_ = score[o], target[o]
    distinct = np.r_[np.nonzero(np.diff(s_))[0], len(s_) - 1]
    tps = np.cumsum(t_)[distinct]; fps = (1 + distinct) - tps
    tpr = np.r_[0, tps / tps[-1]]; fpr = np.r_[0, fps / fps[-1]]
    return np.trapz(tpr, fpr)
close(torch_binary_auroc(conf, 1 - ee), ta["uncertainty"]["var"]["r1"]["auroc"], 1e-12, "URL R-AUROC = [var][r1][auroc]")
# tinkoff (metrics/nearest.py, ERCRecallK): mean over k of cumsum(errors by confidence descending)[k] / k
o = np.argsort(-conf, kind="stable")
erc = (np.cumsum(ee[o]) / np.arange(1, nq + 1)).mean()
close(erc, ta["uncertainty"]["var"]["r1"]["aurc"], 1e-12, "tinkoff ERC-R@1 = [var][r1][aurc]")
lm = pq["map_r"][ok]
close((np.cumsum(lm[o]) / np.arange(1, nq + 1)).mean(), ta["uncertainty"]["var"]["map_r"]["aurc"], 1e-6,
      "tinkoff ERC-MAP@R = [var][map_r][aurc]")
# torch-uncertainty (risk_coverage.py): AURC = trapz(k/n, r_k) / (1 - 1/n); AUGRC likewise with r_k k/n
r = np.cumsum(ee[o]) / np.arange(1, nq + 1); cov = np.arange(1, nq + 1) / nq
tu_aurc = np.trapz(r, cov) / (1 - 1 / nq)
close(tu_aurc, (nq * ta["uncertainty"]["var"]["r1"]["aurc"] - (r[0] + r[-1]) / 2) / (nq - 1), 1e-12,
      "torch-uncertainty AURC = (n aurc - (r_1 + r_n)/2) / (n - 1)")
gr = r * cov
tu_augrc = np.trapz(gr, cov) / (1 - 1 / nq)
close(tu_augrc, (nq * ta["uncertainty"]["var"]["r1"]["augrc"] - (gr[0] + gr[-1]) / 2) / (nq - 1), 1e-12,
      "torch-uncertainty AUGRC = (n augrc - (GR_1 + GR_n)/2) / (n - 1)")
# fd-shifts (rc_stats.py, generalized_risk_stats): from the least confident, the remaining loss / n at
# each change of confidence, the trapezoid over coverage (x 1000)
oa = np.argsort(conf, kind="stable")  # ascending confidence: removed first
cov_pts, risk_pts = [1.0], [ee.sum() / nq]
rem = ee.sum()
for i in range(nq):
    rem -= ee[oa[i]]
    cov_pts.append((nq - i - 1) / nq); risk_pts.append(rem / nq)
fd_augrc = -np.trapz(risk_pts, cov_pts) * 1000
close(fd_augrc, 1000 * (ta["uncertainty"]["var"]["r1"]["augrc"] - ee.mean() / (2 * nq)), 1e-9,
      "fd-shifts augrc = 1000 (augrc - mean(l) / 2n)")
# PCME++ (evaluation.py, eval_uncertainty): 10 equal bins by u ascending (the rest dropped), the
# Pearson r of the bin index with the bins' R@1
ou = np.argsort(uu, kind="stable"); bs = nq // 10
r1b = [1 - ee[ou[b * bs:(b + 1) * bs]].mean() for b in range(10)]
close(np.corrcoef(np.arange(10), r1b)[0, 1], ta["uncertainty"]["var"]["r1"]["pearson_bins"], 1e-9,
      "PCME++ unc_linear = [var][r1][pearson_bins]")
print("uncertainty: URL's R-AUROC, tinkoff's ERC, torch-uncertainty's AURC and AUGRC, fd-shifts' AUGRC and PCME++'s "
      "unc_linear recomputed by their own formulas map onto hedge's as docs/metric.md says")

# ---- what cannot be had: '-' and a reason, never a crash
w = hedge.evaluate(x, y, uncertainty={"flat": np.ones(n, np.float32)}, bootstrap=20)
assert all(math.isnan(v) for t in w["uncertainty"]["flat"].values() for v in t.values())
assert "the same for every query" in w["uncertainty_why"]["flat"]["r1"]["aurc"], w["uncertainty_why"]["flat"]
assert "no var" in w["uncertainty_why"]["var"]["r1"]["auroc"]
one = hedge.evaluate(x[:1], y[:1], uncertainty=mine[:1])
assert one["ci"] == {} and "no neighbour" in one.get("ci_why", ""), (one["ci"], one.get("ci_why"))
twins = np.concatenate([np.arange(n), np.arange(n)])
for off, loss in ((1e-3, 0.0), (100.0, 1.0)):  # each item's nearest its twin: every R@1 right; far: every one wrong
    e = hedge.evaluate(np.concatenate([x, x + off]).astype(np.float32), twins, uncertainty=np.concatenate([mine, mine]),
                       bootstrap=20)
    assert math.isnan(e["uncertainty"]["user"]["r1"]["auroc"]), e["uncertainty"]["user"]["r1"]
    assert "every query is right, or every one wrong" in e["uncertainty_why"]["user"]["r1"]["auroc"]
    assert e["uncertainty"]["user"]["r1"]["aurc"] == loss and e["uncertainty"]["user"]["r1"]["eaurc"] == 0.0
wrong = hedge.evaluate(x, np.arange(n), uncertainty=mine, bootstrap=20)  # one item a class: no positive
assert "no retrieval answers" in wrong["uncertainty_why"]["user"]["r1"]["aurc"], wrong["uncertainty_why"]["user"]["r1"]
bad = mine.copy(); bad[3] = np.nan
try:
    hedge.evaluate(x, y, uncertainty={"mine": bad})
    raise AssertionError("a NaN uncertainty accepted")
except ValueError as e:
    assert "mine: nan at item 3" in str(e), str(e)
print("uncertainty: constant, missing, one query, no error, every one wrong, no positive: '-' with the reason; NaN refused")
PYEOF
pass
