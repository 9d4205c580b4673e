#!/bin/sh
# --distance cosine on knn and retrieve against a numpy brute force (cosine similarity of the
# means in double, ranked descending, equal values by gallery index; the textbook metrics), on
# points whose norms vary tenfold so that the cosine and Euclidean rankings differ; scale
# invariance; a mixture [n, C, D] ranked by its mean of components, normalised; a zero mean
# refused by name (queries and gallery); misuse. Needs Debian's python3 with msgpack and numpy.
set -u
. "$(dirname "$0")/../lib.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)
PY=/usr/bin/python3
export PYTHONPATH="$root/python"
FIX=$BIN/../tests/test_evalfix
cd "$T" || fail "cd $T"

# 300 points in D = 6 around 6 class directions, norms from 0.2 to 2 (a point's norm says
# nothing of its class), the first 4 coordinates of the means offset so that the origin matters;
# a gallery of 250 more; a C = 2 mixture whose components average to the points
$PY - <<'EOF' || fail "fixtures"
import numpy as np, hedge_stream as hs
r = np.random.default_rng(21)
def points(n, seed):
    g = np.random.default_rng(seed)
    y = g.integers(0, 6, n)
    dirs = np.random.default_rng(5).normal(size=(6, 6))
    x = dirs[y] + g.normal(scale=0.8, size=(n, 6))
    x *= g.uniform(0.2, 2.0, size=(n, 1)) / np.linalg.norm(x, axis=1, keepdims=True)
    return x.astype(np.float32), y
q, y = points(300, 1)
g, gy = points(250, 2)
hs.write("q.hs", "embeddings", {"mu": q, "class": y, "id": np.arange(300) + 1000})
hs.write("g.hs", "embeddings", {"mu": g, "class": gy, "id": np.arange(250) + 5000})
hs.write("q7.hs", "embeddings", {"mu": q * np.float32(7), "class": y, "id": np.arange(300) + 1000})
# components m +- e: their mean in double, rounded to float32, is what the C = 1 stream holds
e = r.normal(scale=0.3, size=q.shape).astype(np.float32)
mix = np.stack([q + e, q - e], axis=1)
mean = ((mix[:, 0].astype(np.float64) + mix[:, 1]) / 2).astype(np.float32)
hs.write("mix.hs", "embeddings", {"mu": mix, "var": np.full(mix.shape, 0.1, np.float32), "class": y})
hs.write("mixmean.hs", "embeddings", {"mu": mean[:, None, :], "class": y})
z = q.copy(); z[3] = 0
hs.write("zero.hs", "embeddings", {"mu": z, "class": y, "id": np.arange(300) + 1000})
EOF

# ref.py Q G|- OUT: the brute force for queries Q against gallery G (- : leave-one-out): per query
# id ap rprec map_r p1 r1 (rank of the first positive), and knn's 5 neighbours' ids with 1 - cos
cat > ref.py <<'EOF'
import sys, numpy as np, hedge_stream as hs
_, Q = hs.read(sys.argv[1])
G = Q if sys.argv[2] == "-" else hs.read(sys.argv[2])[1]
qm = Q["mu"].astype(np.float64).mean(axis=1); gm = G["mu"].astype(np.float64).mean(axis=1)
qm /= np.linalg.norm(qm, axis=1, keepdims=True); gm /= np.linalg.norm(gm, axis=1, keepdims=True)
qid = Q["id"] if "id" in Q else np.arange(len(qm))
gid = G["id"] if "id" in G else np.arange(len(gm))
ret, knn = open(sys.argv[3] + ".ret", "w"), open(sys.argv[3] + ".knn", "w")
rows = []
for i in range(len(qm)):
    d = 1 - gm @ qm[i]
    keep = np.arange(len(gm)) != i if sys.argv[2] == "-" else np.ones(len(gm), bool)
    idx = np.arange(len(gm))[keep]
    order = idx[np.lexsort((idx, d[idx]))]
    knn.write("%d %s %s\n" % (qid[i], " ".join(str(gid[j]) for j in order[:5]), repr(d[order[0]])))
    pos = G["class"][order] == Q["class"][i]
    R = pos.sum()
    if R == 0:
        continue
    ranks = np.nonzero(pos)[0] + 1
    prec = np.arange(1, R + 1) / ranks
    row = (Q["class"][i], ranks[0] == 1, (ranks <= R).sum() / R, prec[ranks <= R].sum() / R, 1 / ranks[0])
    rows.append(row)
    ret.write("%d %.9g %.9g %.9g %d %d\n" % (qid[i], prec.mean(), row[2], row[3], row[1], ranks[0]))
# the summary: mrr, then pytorch-metric-learning's avg_of_avgs of p1 rprec map_r mrr (the mean
# within each query class, then over the classes)
a = np.array(rows, dtype=np.float64)
cls = np.unique(a[:, 0])
per = np.array([a[a[:, 0] == c, 1:].mean(axis=0) for c in cls]).mean(axis=0)
plain = a[:, 1:].mean(axis=0)
open(sys.argv[3] + ".sum", "w").write("mrr %r\nquery_classes %d\np1_avg_of_avgs %r\nrprec_avg_of_avgs %r\n"
    "map_r_avg_of_avgs %r\nmrr_avg_of_avgs %r\nplain_p1 %r\n" % (plain[3], len(cls), *per, plain[0]))
EOF
# cmpret OUT REF: retrieve's records (id ap rprec map_r p1 first_rank) against the brute force, to 1e-6
cmpret() {
    "$FIX" cols id ap rprec map_r p1 first_rank < "$1" | sed 1d > "$1.c" || fail "cols of $1"
    awk 'NR == FNR { a[$1] = $0; next } !($1 in a) { print "missing", $1; exit 1 }
        { split(a[$1], w); for (i = 2; i <= 6; i++) if ((w[i] - $i) ^ 2 > 1e-12) { print $0, "vs", a[$1]; exit 1 } n++ }
        END { if (n != FNR) exit 1 }' "$2" "$1.c" > cmp.out || fail "$1 against the brute force: $(cat cmp.out)"
}
# cmpknn OUT REF: knn's neighbours equal, nn_dist = 1 - cos to 1e-6
cmpknn() {
    "$FIX" cols id neighbors nn_dist < "$1" | sed 1d > "$1.c" || fail "cols of $1"
    awk 'NR == FNR { a[$1] = $0; next } { split(a[$1], w)
        for (i = 2; i <= 6; i++) if (w[i] != $i) { print $0, "vs", a[$1]; exit 1 }
        if (($7 - w[7]) ^ 2 > 1e-12) { print "nn_dist", $0, "vs", a[$1]; exit 1 } }' "$2" "$1.c" > cmp.out ||
        fail "$1 against the brute force: $(cat cmp.out)"
}

# --- leave-one-out and against a gallery
$PY ref.py q.hs - loo || fail "brute force (leave-one-out)"
$PY ref.py q.hs g.hs gal || fail "brute force (gallery)"
retrieve --distance cosine --json r.json q.hs > r.hs || fail "retrieve --distance cosine"
cmpret r.hs loo.ret
grep -q '"mode": "leave-one-out", "distance": "cosine"' r.json || fail "json distance: $(cat r.json)"
tshow -q r.hs | grep -q '"retrieval_distance": "cosine"' || fail "meta retrieval_distance"
retrieve --summary r.hs | cmp -s - r.json || fail "--summary: $(retrieve --summary r.hs)"
# MRR and the class averages: unbalanced classes, so avg_of_avgs is not the plain mean here
[ "$(wc -l < loo.sum)" = 7 ] || fail "brute force summary: $(cat loo.sum)"
while read -r k want; do
    [ "$k" = plain_p1 ] && continue
    got=$(json_get "$k" < r.json)
    awk -v g="$got" -v w="$want" 'BEGIN { exit !(g != "" && (g - w) ^ 2 < 1e-12) }' || fail "$k = '$got', brute force $want"
done < loo.sum
awk '$1 == "p1_avg_of_avgs" { a = $2 } $1 == "plain_p1" { p = $2 } END { exit !((a - p) ^ 2 > 1e-6) }' loo.sum ||
    fail "the classes are balanced enough that avg_of_avgs is the plain mean: $(cat loo.sum)"
retrieve --distance cosine -g g.hs q.hs > rg.hs || fail "retrieve -g --distance cosine"
cmpret rg.hs gal.ret
knn --distance cosine --json k.json q.hs > k.hs || fail "knn --distance cosine"
cmpknn k.hs loo.knn
grep -q '"distance": "cosine"' k.json || fail "knn json distance: $(cat k.json)"
knn --distance cosine -g g.hs q.hs > kg.hs || fail "knn -g --distance cosine"
cmpknn kg.hs gal.knn
# the option does something here: the Euclidean ranking differs (and is the default's)
retrieve q.hs > re.hs && retrieve --distance euclidean q.hs > re2.hs || fail "retrieve euclidean"
"$FIX" cols id ap rprec map_r p1 < re.hs > re.c && "$FIX" cols id ap rprec map_r p1 < re2.hs | cmp -s - re.c ||
    fail "--distance euclidean differs from the default"
"$FIX" cols id ap rprec map_r p1 < r.hs | cmp -s - re.c && fail "cosine ranks as euclidean on points of varied norms"
tshow -q re.hs | grep -q '"retrieval_distance": "mean"' || fail "the default's meta retrieval_distance is not mean"
knn q.hs | "$FIX" cols neighbors | cmp -s - "$(knn --distance cosine q.hs | "$FIX" cols neighbors > kc.c; echo kc.c)" &&
    fail "knn: cosine neighbours equal the euclidean ones"
# scale invariance: every mean times 7, the same records (nn_dist to float rounding)
retrieve --distance cosine q7.hs | "$FIX" cols id ap rprec map_r p1 npos | cmp -s - "$("$FIX" cols id ap rprec map_r p1 npos < r.hs > r.c; echo r.c)" ||
    fail "retrieve --distance cosine is not scale invariant"
knn --distance cosine q7.hs | "$FIX" cols id neighbors predicted | cmp -s - "$("$FIX" cols id neighbors predicted < k.hs > k.c; echo k.c)" ||
    fail "knn --distance cosine is not scale invariant"

# --- a mixture [n, 2, D]: the mean of its components, normalised (= the C = 1 stream of those means)
retrieve --distance cosine mix.hs | "$FIX" cols id ap rprec map_r p1 recall npos > mix.c || fail "retrieve on the mixture"
retrieve --distance cosine mixmean.hs | "$FIX" cols id ap rprec map_r p1 recall npos | cmp -s - mix.c ||
    fail "retrieve: the mixture does not rank as its normalised mean of components"
knn --distance cosine mix.hs | "$FIX" cols id neighbors nn_dist > kmix.c || fail "knn on the mixture"
knn --distance cosine mixmean.hs | "$FIX" cols id neighbors nn_dist | cmp -s - kmix.c ||
    fail "knn: the mixture does not rank as its normalised mean of components"

# --- a zero mean is refused by name; misuse
expect_fail 1 'zero.hs: record 3 (id 1003): its mean is the zero vector' retrieve --distance cosine zero.hs
expect_fail 1 'zero.hs: record 3 (id 1003): its mean is the zero vector' retrieve --distance cosine -g zero.hs q.hs
expect_fail 1 'zero.hs: record 3 (id 1003): its mean is the zero vector' knn --distance cosine zero.hs
expect_fail 1 'zero.hs: record 3 (id 1003): its mean is the zero vector' knn --distance cosine -g zero.hs q.hs
retrieve zero.hs > /dev/null 2>&1 || fail "a zero mean is refused under the Euclidean distance"
expect_fail 2 "none of euclidean, cosine, mls" retrieve --distance manhattan q.hs
expect_fail 2 "none of euclidean, cosine, mls" knn --distance l1 q.hs
expect_fail 2 "not with -d expected" knn --distance cosine -d expected q.hs
expect_fail 2 "--summary reads" retrieve --summary --distance cosine r.hs
expect_fail 2 "--summary reads" knn --summary --distance cosine k.hs
pass
