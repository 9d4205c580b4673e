#!/bin/sh
# pairscore --score w2, csd, kl, bhatt (issue 47 item 5: distances between Gaussians, negated,
# lib/evaluation/match.h; docs/metric.md): one pair by hand for each, and 300 random pairs of random
# diagonal Gaussians against numpy's formulas in double (float32 output: relative error 1e-6);
# elk is mls; the scores rank pairs for apcurve; point embeddings and a mixture are refused. Needs
# Debian's python3 with numpy.
set -u
. "$(dirname "$0")/../lib.sh"
PY=/usr/bin/python3
cd "$T" || fail "cd"
$PY - <<'PYEOF' || fail "numpy set-up"
import numpy as np
r = np.random.default_rng(5)
n, D = 60, 7
mu = r.normal(size=(n, D)).astype(np.float32)
var = r.uniform(0.05, 3, size=(n, D)).astype(np.float32)
np.savez("g.npz", mu=mu, var=var, labels=r.integers(0, 4, n).astype(np.int32), ids=np.arange(n).astype(np.int64))
p = r.integers(0, n, size=(300, 2))
np.savetxt("pairs.txt", p, fmt="%d")
m1, v1, m2, v2 = (a.astype(np.float64) for a in (mu[p[:, 0]], var[p[:, 0]], mu[p[:, 1]], var[p[:, 1]]))
d2 = ((m1 - m2) ** 2).sum(1)
v = (v1 + v2) / 2
want = {
    "w2": np.sqrt(d2 + ((np.sqrt(v1) - np.sqrt(v2)) ** 2).sum(1)),
    "csd": d2 + (v1 + v2).sum(1),
    "kl": ((v1 / v2 + v2 / v1 - 2 + (m1 - m2) ** 2 * (1 / v1 + 1 / v2)) / 4).sum(1),
    "bhatt": ((m1 - m2) ** 2 / (8 * v)).sum(1) + 0.5 * (np.log(v) - 0.5 * (np.log(v1) + np.log(v2))).sum(1),
}
for k, w in want.items():
    np.savetxt("want-" + k + ".txt", -w, fmt="%.17g")
# one pair by hand: D = 1, N(0, 1) and N(1, 4)
np.savez("h.npz", mu=np.array([[0], [1]], np.float32), var=np.array([[1], [4]], np.float32),
         labels=np.array([0, 0], np.int32), ids=np.array([0, 1], np.int64))
PYEOF
fromnpz g.npz > g.hs 2>/dev/null && fromnpz h.npz > h.hs 2>/dev/null || fail "fromnpz"
echo "0 1" > hp.txt
# by hand: w2 = sqrt(1 + (1 - 2)^2) = sqrt 2; csd = 1 + 1 + 4 = 6; kl = (1/4 + 4 - 2 + 1 (1 + 1/4)) / 4 =
# 0.875; bhatt = 1 / (8 x 2.5) + 1/2 (log 2.5 - 1/2 log 4) = 0.05 + 0.1115718 = 0.1615718
for w in "w2 1.41421356" "csd 6" "kl 0.875" "bhatt 0.16157178"; do
    set -- $w
    pairscore --score "$1" --pairs hp.txt h.hs > h-$1.hs || fail "pairscore --score $1 (by hand)"
    got=$(totsv h-$1.hs | awk -F '\t' -v f="neg_$1" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == f) c = i; next } { print $c }')
    awk -v g="$got" -v w="$2" 'BEGIN { exit !(g != "" && (g + w < 1e-6 * w && -(g + w) < 1e-6 * w)) }' ||
        fail "--score $1 of N(0, 1), N(1, 4): $got, expected -$2"
done
worst=0
for s in w2 csd kl bhatt; do
    pairscore --score "$s" --pairs pairs.txt g.hs > p-$s.hs || fail "pairscore --score $s"
    [ "$(tshow -H p-$s.hs | jq -r .meta.scorer)" = "$s" ] || fail "--score $s: the scorer meta"
    totsv p-$s.hs | awk -F '\t' -v f="neg_$s" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == f) c = i; next } { print $c }' > got-$s.txt
    [ "$(wc -l < got-$s.txt)" = 300 ] || fail "--score $s: $(wc -l < got-$s.txt) pairs"
    e=$(paste got-$s.txt want-$s.txt | awk '{ d = $1 - $2; if (d < 0) d = -d; a = $2 < 0 ? -$2 : $2; r = d / (a > 1e-30 ? a : 1e-30); if (r > m) m = r } END { printf "%.3g", m }')
    check_lt "$e" 1e-6 "--score $s: largest relative error $e against numpy"
    apcurve p-$s.hs > /dev/null || fail "apcurve of --score $s"
    worst=$(awk -v a="$worst" -v b="$e" 'BEGIN { print (b > a) ? b : a }')
done
pairscore --score elk --pairs pairs.txt g.hs > p-elk.hs && pairscore --score mls --pairs pairs.txt g.hs > p-mls.hs ||
    fail "--score elk, mls"
totsv p-elk.hs > elk.tsv && totsv p-mls.hs > mls.tsv && cmp -s elk.tsv mls.tsv || fail "--score elk is not --score mls"
pairscore --score bhattacharyya --pairs pairs.txt g.hs | totsv > bh.tsv && totsv p-bhatt.hs > b.tsv && cmp -s bh.tsv b.tsv ||
    fail "--score bhattacharyya is not --score bhatt"
echo "distscores: w2, csd, kl, bhatt by hand and on 300 pairs against numpy (largest relative error $worst)"
$PY -c "
import numpy as np; np.savez('pt.npz', mu=np.zeros((3, 2), np.float32), labels=np.array([0, 1, 0], np.int32))" || fail "pt"
fromnpz pt.npz > pt.hs 2>/dev/null || fail "fromnpz pt"
expect_fail 1 "--score w2 needs" pairscore --score w2 -n 3 pt.hs
expect_exit 2 "--score w3" pairscore --score w3 g.hs
pass
