#!/bin/sh
# knn, retrieve and evaluate --distance csd, kl, bhattacharyya (issue 47 item 5: the distances of
# two Gaussians as a ranking, exact over the whole gallery; lib/numerics/mls.h). Against a numpy
# brute force in double of each distance's definition (docs/metric.md): knn's 5 neighbours and
# nn_dist, retrieve's AP and first rank, leave-one-out and with a gallery (--exclude-id); -t 1 and
# -t 2 the same records; shards put back together equal the whole run; evaluate's knn, map_r and
# AP equal knn's, retrieve's and pairscore | apcurve's; hedge.evaluate the CLI's; elk is mls; the
# refusals, one line each. Needs Debian's python3 with numpy.
set -u
. "$(dirname "$0")/../lib.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)
PY=/usr/bin/python3
export PYTHONPATH="$root/python"
FIX=$BIN/../tests/test_evalfix
cd "$T" || fail "cd $T"

$PY - <<'EOF' || fail "fixtures"
import numpy as np, hedge_stream as hs
def gauss(n, seed):
    g = np.random.default_rng(seed)
    y = g.integers(0, 7, n).astype(np.int32)
    mu = (np.random.default_rng(1).normal(size=(7, 8))[y] + g.normal(scale=1.2, size=(n, 8))).astype(np.float32)
    var = np.exp(g.uniform(-3, 2, size=(n, 8))).astype(np.float32)
    return mu[:, None, :], var[:, None, :], y
mu, var, y = gauss(300, 2)
hs.write("q.hs", "embeddings", {"mu": mu, "var": var, "class": y, "id": np.arange(300) + 1000})
gm, gv, gy = gauss(250, 3)
hs.write("g.hs", "embeddings", {"mu": gm, "var": gv, "class": gy, "id": np.arange(250) + 1250})
np.savez("q.npz", mu=mu[:, 0], var=var[:, 0], labels=y)
hs.write("point.hs", "embeddings", {"mu": mu, "class": y})
for name, bad in (("zero", 0.0), ("nan", np.nan), ("neg", -1.0)):
    v = var.copy(); v[7, 0, 3] = bad
    hs.write(name + ".hs", "embeddings", {"mu": mu, "var": v, "class": y})
EOF

cat > ref.py <<'EOF'
import sys, numpy as np, hedge_stream as hs
kind = sys.argv[1]
_, Q = hs.read(sys.argv[2])
G = Q if sys.argv[3] == "-" else hs.read(sys.argv[3])[1]
qm, qv = Q["mu"][:, 0].astype(np.float64), Q["var"][:, 0].astype(np.float64)
gm, gv = G["mu"][:, 0].astype(np.float64), G["var"][:, 0].astype(np.float64)
qid, gid = Q["id"], G["id"]
def dist(m1, v1, m2, v2):  # the definitions (docs/metric.md), every gallery item at once
    d2 = (m1 - m2) ** 2
    if kind == "csd":   # E|z1 - z2|^2, z1, z2 independent draws
        return (d2 + v1 + v2).sum(1)
    if kind == "kl":    # (KL(1||2) + KL(2||1)) / 2
        kl12 = 0.5 * (v1 / v2 + d2 / v2 - 1 + np.log(v2 / v1)).sum(1)
        kl21 = 0.5 * (v2 / v1 + d2 / v1 - 1 + np.log(v1 / v2)).sum(1)
        return (kl12 + kl21) / 2
    v = (v1 + v2) / 2   # Bhattacharyya
    return (d2 / (8 * v) + 0.5 * np.log(v / np.sqrt(v1 * v2))).sum(1)
knn, ret = open(sys.argv[4] + ".knn", "w"), open(sys.argv[4] + ".ret", "w")
for i in range(len(qm)):
    d = dist(qm[i], qv[i], gm, gv)
    keep = np.arange(len(gm)) != i if sys.argv[3] == "-" else gid != qid[i]
    idx = np.arange(len(gm))[keep]
    order = idx[np.lexsort((idx, d[idx]))]
    knn.write("%d %s %.9g\n" % (qid[i], " ".join(str(gid[j]) for j in order[:5]), d[order[0]]))
    pos = G["class"][order] == Q["class"][i]
    if pos.any():
        ranks = np.nonzero(pos)[0] + 1
        # a near-tie (within the float kernel's rounding, 2e-6 relative) between a positive and the
        # negative beside it may fall either way: flagged, its AP not compared
        ds, p = d[order], pos.astype(int)
        tie = np.any((np.abs(np.diff(ds)) <= 2e-6 * np.abs(ds[1:])) & (np.diff(p) != 0))
        ret.write("%d %.9g %d %d\n" % (qid[i], (np.arange(1, len(ranks) + 1) / ranks).mean(), ranks[0], tie))
EOF
# cmp_ref NAME OUT.knn OUT.ret REF: ids and neighbours equal, nn_dist within 1e-5, AP within 1e-6
# but where the brute force has a near-tie across a positive (at most 1 query in 20)
cmp_ref() {
    "$FIX" cols id neighbors nn_dist < "$2" | sed 1d > "$1.k" || fail "$1: knn cols"
    "$FIX" cols id ap first_rank < "$3" | sed 1d > "$1.r" || fail "$1: retrieve cols"
    paste -d' ' "$1.k" "$4.knn" | awk '{ for (i = 1; i <= 6; i++) if ($i != $(i + 7)) exit 1; d = $7 - $14
        if (d > 1e-5 * (1 + $14) || -d > 1e-5 * (1 + $14)) exit 1 }' ||
        fail "$1: knn against the brute force: $(paste -d' ' "$1.k" "$4.knn" | head -n 3)"
    [ "$(wc -l < "$1.r")" = "$(wc -l < "$4.ret")" ] || fail "$1: $(wc -l < "$1.r") retrieval records, expected $(wc -l < "$4.ret")"
    paste -d' ' "$1.r" "$4.ret" | awk '{ d = $2 - $5; if ($1 != $4 || (!$7 && ($3 != $6 || d > 1e-6 || -d > 1e-6))) exit 1
        ties += $7 } END { exit ties > NR / 20 }' ||
        fail "$1: retrieve against the brute force: $(paste -d" " "$1.r" "$4.ret" | awk "{ d = \$2 - \$5; if (\$1 != \$4 || (!\$7 && (\$3 != \$6 || d > 1e-6 || -d > 1e-6))) print }" | head -n 3)"
}
meta() { tshow -H "$1" | sed -n 2p | sed 's/, "provenance".*//'; }
KCOLS='id class predicted correct recall nn_dist neighbors eta'
RCOLS='id class ap rprec map_r p1 recall npos first_rank eta'
knn q.hs | "$FIX" cols id neighbors | sed 1d | cut -d' ' -f1,2 > eu.k || fail "knn euclidean"
for d in csd kl bhattacharyya; do
    $PY ref.py $d q.hs - $d-loo || fail "ref.py $d leave-one-out"
    knn --distance $d --json $d-k.json q.hs > $d-loo.knn.hs && retrieve --distance $d --json $d-r.json q.hs > $d-loo.ret.hs ||
        fail "$d: leave-one-out runs"
    cmp_ref $d-loo $d-loo.knn.hs $d-loo.ret.hs $d-loo
    $PY ref.py $d q.hs g.hs $d-gal || fail "ref.py $d gallery"
    knn --distance $d -g g.hs --exclude-id q.hs > $d-gal.knn.hs &&
        retrieve --distance $d -g g.hs --exclude-id q.hs > $d-gal.ret.hs || fail "$d: gallery runs"
    cmp_ref $d-gal $d-gal.knn.hs $d-gal.ret.hs $d-gal
    [ "$(json_get distance < $d-k.json)" = "\"$d\"" ] && [ "$(json_get distance < $d-r.json)" = "\"$d\"" ] ||
        fail "$d: the JSON's distance: $(cat $d-k.json)"
    tshow -H $d-loo.knn.hs | grep -q "\"knn_distance\": \"$d\"" || fail "$d: knn meta"
    # the threads
    knn --distance $d -t 2 q.hs > t2.knn.hs && retrieve --distance $d -t 2 q.hs > t2.ret.hs || fail "$d -t 2"
    "$FIX" cols $KCOLS < $d-loo.knn.hs > a.c && "$FIX" cols $KCOLS < t2.knn.hs > b.c && cmp -s a.c b.c || fail "$d: knn -t 1 and -t 2 differ"
    "$FIX" cols $RCOLS < $d-loo.ret.hs > a.c && "$FIX" cols $RCOLS < t2.ret.hs > b.c && cmp -s a.c b.c || fail "$d: retrieve -t 1 and -t 2 differ"
    # shards
    for prog in knn retrieve; do
        l=""
        for r in 200:300 0:33 33:200; do
            $prog --distance $d --queries $r q.hs > s-$r.hs || fail "$d: $prog --queries $r"
            l="$l s-$r.hs"
        done
        $prog --merge $l > merged.hs || fail "$d: $prog --merge"
        case $prog in knn) c=$KCOLS w=$d-loo.knn.hs ;; *) c=$RCOLS w=$d-loo.ret.hs ;; esac
        "$FIX" cols $c < $w > a.c && "$FIX" cols $c < merged.hs > b.c && cmp -s a.c b.c || fail "$d: $prog's merged shards differ"
        [ "$(meta $w)" = "$(meta merged.hs)" ] || fail "$d: $prog's merged meta differs"
    done
    # evaluate: knn's, retrieve's and pairscore | apcurve's numbers; hedge.evaluate the same
    evaluate --distance $d -k 1 -n 3000 --json $d-e.json q.hs > $d-e.md 2> err || fail "evaluate --distance $d: $(cat err)"
    knn --distance $d --json kk.json q.hs > /dev/null && retrieve --distance $d -k 1 --json rr.json q.hs > /dev/null || fail "$d: knn, retrieve"
    [ "$(json_get knn < $d-e.json)" = "$(json_get accuracy < kk.json)" ] || fail "$d: evaluate's knn $(json_get knn < $d-e.json), knn's $(json_get accuracy < kk.json)"
    [ "$(json_get map_r < $d-e.json)" = "$(json_get map_r < rr.json)" ] || fail "$d: evaluate's map_r is not retrieve's"
    case $d in bhattacharyya) s=bhatt ;; *) s=$d ;; esac
    pairscore --score $s -n 3000 -S 714 q.hs | apcurve --json ap.json > /dev/null || fail "$d: pairscore | apcurve"
    grep -q "knn, retrieval and ap by .* of the Gaussians" $d-e.md || fail "$d: evaluate's note on the distance: $(cat $d-e.md)"
    $PY - $d <<'EOF' || fail "$d: hedge.evaluate"
import sys, json, numpy as np, hedge
z, d = np.load("q.npz"), sys.argv[1]
r = hedge.evaluate(z["mu"], z["labels"], var=z["var"], distance=d, recall_at=[1], pairs=3000)
cli = json.load(open(d + "-e.json"))
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
    assert abs(find(r, k) - find(cli, k)) < 1e-9, (k, find(r, k), find(cli, k))
EOF
done
# the three rank otherwise than the Euclidean distance of the means, and otherwise than each other
for d in csd kl bhattacharyya; do
    cut -d' ' -f1,2 $d-loo.k > $d.top
    cmp -s $d.top eu.k && fail "$d: the nearest of every query is the Euclidean one"
done
cmp -s csd.top kl.top && cmp -s kl.top bhattacharyya.top && fail "csd, kl and bhattacharyya: the same nearest everywhere"
# elk is mls (the expected likelihood kernel's log is MLS)
knn --distance elk q.hs | "$FIX" cols $KCOLS > a.c && knn --distance mls q.hs | "$FIX" cols $KCOLS > b.c && cmp -s a.c b.c ||
    fail "--distance elk is not mls"

# ---- refusals: one line, exit 1 for the data, 2 for misuse
refuse() {
    r_msg=$1
    shift
    expect_fail 1 "$r_msg" env ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" "$@"
    [ "$(wc -l < "$T/err")" = 1 ] || fail "$*: more than one line: $(cat "$T/err")"
}
refuse "knn: point.hs: --distance csd needs Gaussian embeddings, but the input has no 'var' field" knn --distance csd point.hs
refuse "retrieve: point.hs: --distance kl needs Gaussian embeddings" retrieve --distance kl point.hs
refuse "zero.hs: record 7: variance 0 (dimension 3) is below 1.17549e-38: --distance kl takes the log" knn --distance kl zero.hs
refuse "zero.hs: record 7: variance 0 (dimension 3) is below" retrieve --distance bhattacharyya zero.hs
refuse "knn: neg.hs: record 7: variance -1 is not a finite number >= 0" knn --distance csd neg.hs
refuse "retrieve: nan.hs: record 7: variance nan is not a finite number >= 0" retrieve --distance csd nan.hs
refuse "evaluate: zero.hs: queries: var: 0 at item 7, expected at least 1.17549e-38 for distance kl (it divides by them)" evaluate --distance kl zero.hs
# csd takes a zero variance: the point's own term is 0
knn --distance csd zero.hs > /dev/null 2> err || fail "knn --distance csd of a zero variance: $(cat err)"
expect_exit 2 "knn --distance bhattacharyya -d mean" knn --distance bhattacharyya -d mean q.hs
expect_exit 2 "knn --distance chi2" knn --distance chi2 q.hs
echo "gaussrank: csd, kl and bhattacharyya: knn and retrieve equal numpy's brute force (leave-one-out, gallery), -t 1 = -t 2, shards = the whole run, evaluate and hedge.evaluate agree"
