#!/bin/sh
# The mutual likelihood score (PFE) as the score of the evaluators: pairscore --score mls | apcurve,
# knn and retrieve --distance mls. By hand: a near neighbour with a huge variance ranked below a
# farther one with a small variance (knn's neighbours, nn_dist, retrieve's ranks and AP, the
# global curve's threshold), and verification AP by MLS against AP by the Euclidean distance of
# the means on four crafted pairs; against a numpy brute force in double on random Gaussians
# (leave-one-out and a gallery with --exclude-id); -t 1 and -t 2 the same records; shards
# (--queries) put back together equal to the whole run; the refusals, one line each (no var, a
# mixture, a zero, NaN or infinite variance, misuse). Needs Debian's python3 with numpy.
set -u
. "$(dirname "$0")/../lib.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)
PY=/usr/bin/python3
export PYTHONPATH="$root/python"
FIX=$BIN/../tests/test_evalfix
cd "$T" || fail "cd $T"

# -MLS(x, y) = 1/2 sum_l [ d_l^2 / v_l + log v_l ] + D/2 log(2 pi), v = var_x + var_y, with
# 1/2 log(2 pi) = 0.9189385. Every set below has D = 1.
#
# hand.hs, three items: 0 (mean 0, var 1, class 0), 1 (0.5, var 100, class 1), 2 (1, var 1, class 0).
#   -MLS(0, 1) = 1/2 (0.25 / 101 + log 101) + 0.9189385 = 1/2 (0.0024752 + 4.6151205) + 0.9189385
#              = 3.2277364;  -MLS(1, 2) the same (|d| = 0.5, v = 101)
#   -MLS(0, 2) = 1/2 (1 / 2 + log 2) + 0.9189385 = 0.5965736 + 0.9189385 = 1.5155121
# So item 0's nearest is 2 by MLS (right class) and 1 by the Euclidean distance (0.5 < 1, wrong);
# item 2's nearest is 0 either way; item 1's: 0 and 2 tie at 3.2277364 (and at 0.5): the lower
# index, 0. knn -k 1 accuracy: MLS 2/3, Euclidean 1/3 (item 0 wrong; item 1's class has no other).
# retrieve leave-one-out: queries 0 and 2 (class 0) have one positive each, query 1 none (no
# record). MLS: each finds its positive first (AP 1, first_rank 1, map 1); Euclidean: query 0 sees
# 1 (0.5) before 2 (1): first_rank 2, AP 1/2; query 2 sees 1 (0.5) before 0 (1): AP 1/2: map 1/2.
# --global over the 6 ordered pairs: the 2 positives (0, 2), (2, 0) at 1.5155121, the 4 negatives
# at 3.2277364: global AP 1, the curve's first point recall 1, precision 1, at a threshold of
# -MLS 1.5155121 (its bin's upper end: 2^-14 of -MLS - floor above at most; the floor is the
# gallery's 1/2 log(min var) + 0.9189385 = 0.9189385).
#
# pairs.hs, four pairs of ids (match = same class), their -MLS and Euclidean distance:
#   P1 10, 11 (0 var 4, 2 var 4): 1/2 (4 / 8 + log 8) + 0.9189385 = 1.2897208 + 0.9189385 = 2.2086593, d 2
#   N1 20, 21 (0 var .01, .5 var .01): 1/2 (.25 / .02 + log .02) + 0.9189385 = 1/2 (12.5 - 3.9120230)
#             + 0.9189385 = 5.2129270, d 0.5
#   P2 30, 31 (0 var 1, .2 var 1): 1/2 (.04 / 2 + log 2) + 0.9189385 = 0.3565736 + 0.9189385 = 1.2755121, d 0.2
#   N2 40, 41 (0 var 1, 3 var 1): 1/2 (9 / 2 + log 2) + 0.9189385 = 2.5965736 + 0.9189385 = 3.5155121, d 3
# MLS (descending: -MLS ascending) ranks P2 P1 N2 N1: AP = (1/1 + 2/2) / 2 = 1. The Euclidean
# distance (pairscore --means with a = 1, b = 0: p = sigmoid(-d)) ranks P2 N1 P1 N2:
# AP = (1/1 + 2/3) / 2 = 0.833333.
$PY - <<'EOF' || fail "fixtures"
import numpy as np, hedge_stream as hs
f = lambda x: np.array(x, np.float32).reshape(-1, 1, 1)
hs.write("hand.hs", "embeddings", {"mu": f([0, 0.5, 1]), "var": f([1, 100, 1]), "class": np.array([0, 1, 0], np.int32)},
         meta={"match_a": 1.0, "match_b": 0.0})
hs.write("pairs.hs", "embeddings", {"mu": f([0, 2, 0, 0.5, 0, 0.2, 0, 3]), "var": f([4, 4, 0.01, 0.01, 1, 1, 1, 1]),
         "class": np.array([0, 0, 1, 2, 3, 3, 4, 5], np.int32), "id": np.array([10, 11, 20, 21, 30, 31, 40, 41])},
         meta={"match_a": 1.0, "match_b": 0.0})
open("pairs.txt", "w").write("10 11\n20 21\n30 31\n40 41\n")
# random Gaussians: 300 queries and a gallery of 250 (the last 50 of its ids are queries' twins),
# variances over three orders of magnitude (so that MLS and the Euclidean ranking differ)
r = np.random.default_rng(35)
def gauss(n, seed):
    g = np.random.default_rng(seed)
    y = g.integers(0, 7, n).astype(np.int32)
    mu = (np.random.default_rng(1).normal(size=(7, 8))[y] + g.normal(scale=1.2, size=(n, 8))).astype(np.float32)
    var = np.exp(g.uniform(-3, 3, size=(n, 8))).astype(np.float32)
    return mu[:, None, :], var[:, None, :], y
mu, var, y = gauss(300, 2)
hs.write("q.hs", "embeddings", {"mu": mu, "var": var, "class": y, "id": np.arange(300) + 1000})
gm, gv, gy = gauss(250, 3)
hs.write("g.hs", "embeddings", {"mu": gm, "var": gv, "class": gy, "id": np.arange(250) + 1250})
# refusals: no var, a mixture, a zero / NaN / infinite variance
hs.write("point.hs", "embeddings", {"mu": mu, "class": y})
hs.write("mix.hs", "embeddings", {"mu": np.repeat(mu, 2, axis=1), "var": np.repeat(var, 2, axis=1), "class": y})
for name, bad in (("zero", 0.0), ("nan", np.nan), ("inf", np.inf)):
    v = var.copy(); v[7, 0, 3] = bad
    hs.write(name + ".hs", "embeddings", {"mu": mu, "var": v, "class": y})
EOF

# near: within 1e-6
near() { awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; exit !(d < 1e-6 && d > -1e-6) }' || fail "$3: $1, expected $2"; }

# ---- knn by hand
knn -k 1 --distance mls --json knn.json hand.hs > knn.hs || fail "knn --distance mls"
"$FIX" cols id neighbors nn_dist correct < knn.hs | sed 1d > knn.c || fail "cols"
[ "$(cut -d' ' -f1,2,4 knn.c | tr '\n' ' ')" = "0 2 1 1 0 0 2 0 1 " ] || fail "knn mls neighbours: $(cat knn.c)"
near "$(sed -n 1p knn.c | cut -d' ' -f3)" 1.5155121 "nn_dist of item 0"
near "$(sed -n 2p knn.c | cut -d' ' -f3)" 3.2277364 "nn_dist of item 1"
[ "$(json_get distance < knn.json)" = '"mls"' ] || fail "knn JSON distance: $(cat knn.json)"
near "$(json_get accuracy < knn.json)" 0.6666667 "knn mls accuracy"
tshow -H knn.hs | grep -q '"knn_distance": "mls"' || fail "knn meta: no knn_distance mls"
knn -k 1 hand.hs | "$FIX" cols id neighbors | sed -n 2p | grep -qx '0 1' || fail "knn euclidean: item 0's nearest is not 1"

# ---- retrieve by hand
retrieve -k 1 --distance mls --global --global-tsv g.tsv --json ret.json hand.hs > ret.hs || fail "retrieve --distance mls"
"$FIX" cols id ap first_rank < ret.hs | sed 1d | tr '\n' ' ' > ret.c
[ "$(cat ret.c)" = "0 1 1 2 1 1 " ] || fail "retrieve mls records: $(cat ret.c)"
near "$(json_get map < ret.json)" 1 "retrieve mls map"
near "$(json_get global_ap < ret.json)" 1 "retrieve mls global_ap"
[ "$(json_get distance < ret.json)" = '"mls"' ] || fail "retrieve JSON distance: $(cat ret.json)"
tshow -H ret.hs | grep -q '"retrieval_distance": "mls"' || fail "retrieve meta: no retrieval_distance mls"
sed -n 2p g.tsv | awk -F '\t' '$1 == 1 && $2 == 1 && $3 >= 1.5155121 - 1e-6 && $3 <= 1.5155121 + 1e-4 { ok = 1 } END { exit !ok }' ||
    fail "global TSV's first point: $(sed -n 2p g.tsv), expected recall 1, precision 1 at 1.5155121"
retrieve -k 1 --json rete.json hand.hs > /dev/null || fail "retrieve"
near "$(json_get map < rete.json)" 0.5 "retrieve euclidean map"
retrieve -k 1 --distance mls --at-r --json retr.json hand.hs > /dev/null || fail "retrieve --at-r --distance mls"
near "$(json_get map_r < retr.json)" 1 "retrieve --at-r mls map_r"

# ---- verification AP: MLS against the Euclidean distance
pairscore --score mls --pairs pairs.txt --json ps.json pairs.hs > ps.hs || fail "pairscore --score mls"
"$FIX" cols id1 id2 match mls < ps.hs | sed 1d > ps.c
for w in "10 2.2086593" "20 5.2129270" "30 1.2755121" "40 3.5155121"; do
    set -- $w
    near "$(awk -v i="$1" '$1 == i { printf "%.9g", -$4 }' ps.c)" "$2" "-MLS of the pair of id $1"
done
apcurve --json - ps.hs > ap.json || fail "apcurve of pairscore --score mls"
near "$(json_get ap < ap.json)" 1 "AP by MLS"
[ "$(json_get score < ap.json)" = '"mls"' ] || fail "apcurve did not read the mls field: $(cat ap.json)"
pairscore --means --pairs pairs.txt pairs.hs | apcurve --json - > ape.json || fail "pairscore --means"
near "$(json_get ap < ape.json)" 0.833333 "AP by the Euclidean distance"
tshow -H ps.hs | grep -q '"scorer": "mls"' || fail "pairscores meta: no scorer mls"
[ "$(json_get scorer < ps.json)" = '"mls"' ] || fail "pairscore JSON: $(cat ps.json)"
# random pairs, and -g: any model's Gaussians (no match_a / match_b needed)
pairscore --score mls -n 400 q.hs | apcurve > /dev/null || fail "pairscore --score mls, random pairs"
pairscore --score mls -n 400 -g g.hs q.hs > /dev/null || fail "pairscore --score mls -g"

# ---- a numpy brute force in double: knn's 5 neighbours and nn_dist, retrieve's records
cat > ref.py <<'EOF'
import sys, numpy as np, hedge_stream as hs
_, Q = hs.read(sys.argv[1])
G = Q if sys.argv[2] == "-" else hs.read(sys.argv[2])[1]
qm, qv = Q["mu"][:, 0].astype(np.float64), Q["var"][:, 0].astype(np.float64)
gm, gv = G["mu"][:, 0].astype(np.float64), G["var"][:, 0].astype(np.float64)
qid, gid = Q["id"], G["id"]
knn, ret = open(sys.argv[3] + ".knn", "w"), open(sys.argv[3] + ".ret", "w")
for i in range(len(qm)):
    v = qv[i] + gv
    d = 0.5 * ((qm[i] - gm) ** 2 / v + np.log(v)).sum(axis=1) + 0.5 * qm.shape[1] * np.log(2 * np.pi)
    keep = np.arange(len(gm)) != i if sys.argv[2] == "-" else gid != qid[i]
    idx = np.arange(len(gm))[keep]
    order = idx[np.lexsort((idx, d[idx]))]
    knn.write("%d %s %.9g\n" % (qid[i], " ".join(str(gid[j]) for j in order[:5]), d[order[0]]))
    pos = G["class"][order] == Q["class"][i]
    if pos.any():
        ranks = np.nonzero(pos)[0] + 1
        ret.write("%d %.9g %d\n" % (qid[i], (np.arange(1, len(ranks) + 1) / ranks).mean(), ranks[0]))
EOF
# cmp_ref NAME OUT.knn OUT.ret REF: ids and neighbours equal, nn_dist and ap within 1e-5
cmp_ref() {
    "$FIX" cols id neighbors nn_dist < "$2" | sed 1d > "$1.k" || fail "$1: knn cols"
    "$FIX" cols id ap first_rank < "$3" | sed 1d > "$1.r" || fail "$1: retrieve cols"
    paste -d' ' "$1.k" "$4.knn" | awk '{ for (i = 1; i <= 6; i++) if ($i != $(i + 7)) exit 1; d = $7 - $14
        if (d > 1e-5 * (1 + ($14 > 0 ? $14 : -$14)) || -d > 1e-5 * (1 + ($14 > 0 ? $14 : -$14))) exit 1 }' ||
        fail "$1: knn against the brute force: $(paste -d' ' "$1.k" "$4.knn" | head -n 3)"
    [ "$(wc -l < "$1.r")" = "$(wc -l < "$4.ret")" ] || fail "$1: $(wc -l < "$1.r") retrieval records, expected $(wc -l < "$4.ret")"
    paste -d' ' "$1.r" "$4.ret" | awk '{ d = $2 - $5; if ($1 != $4 || $3 != $6 || d > 1e-6 || -d > 1e-6) exit 1 }' ||
        fail "$1: retrieve against the brute force: $(paste -d' ' "$1.r" "$4.ret" | head -n 3)"
}
$PY ref.py q.hs - loo || fail "ref.py leave-one-out"
knn --distance mls q.hs > loo.knn.hs && retrieve --distance mls q.hs > loo.ret.hs || fail "leave-one-out runs"
cmp_ref loo loo.knn.hs loo.ret.hs loo
$PY ref.py q.hs g.hs gal || fail "ref.py gallery"
# the gallery's ids 1250 .. 1299 are the queries 250 .. 299's: --exclude-id leaves them out
knn --distance mls -g g.hs --exclude-id q.hs > gal.knn.hs && retrieve --distance mls -g g.hs --exclude-id q.hs > gal.ret.hs ||
    fail "gallery runs"
cmp_ref gal gal.knn.hs gal.ret.hs gal
# the MLS ranking is not the Euclidean one here
knn q.hs | "$FIX" cols id neighbors | sed 1d | cut -d' ' -f1,2 > eu.k
[ "$(cut -d' ' -f1,2 loo.k | cmp - eu.k > /dev/null 2>&1; echo $?)" = 1 ] || fail "knn: MLS and Euclidean nearest the same on every query"

# ---- threads: -t 1 and -t 2 write the same records and meta
meta() { tshow -H "$1" | sed -n 2p | sed 's/, "provenance".*//'; }
KCOLS='id class predicted correct recall nn_dist neighbors eta'
RCOLS='id class ap rprec map_r p1 recall npos first_rank eta'
for t in 1 2; do
    knn --distance mls -t $t q.hs > knn-t$t.hs && retrieve --distance mls --global -t $t q.hs > ret-t$t.hs || fail "-t $t"
done
"$FIX" cols $KCOLS < knn-t1.hs | cmp -s - "$("$FIX" cols $KCOLS < knn-t2.hs > k2.c; echo k2.c)" || fail "knn -t 1 and -t 2 differ"
"$FIX" cols $RCOLS < ret-t1.hs | cmp -s - "$("$FIX" cols $RCOLS < ret-t2.hs > r2.c; echo r2.c)" || fail "retrieve -t 1 and -t 2 differ"
[ "$(meta knn-t1.hs)" = "$(meta knn-t2.hs)" ] && [ "$(meta ret-t1.hs)" = "$(meta ret-t2.hs)" ] || fail "-t 1 and -t 2: other meta"

# ---- shards: --queries given out of order, --summary and --merge equal the whole run
# shards NAME PROG ARGS...
shards() {
    s_name=$1 s_prog=$2
    shift 2
    "$s_prog" "$@" --json "$s_name.json" q.hs > "$s_name.hs" || fail "$s_name: the whole run"
    s_list=""
    for r in 200:300 0:33 33:200; do
        "$s_prog" "$@" --queries "$r" q.hs > "$s_name-$r.hs" || fail "$s_name --queries $r"
        s_list="$s_list $s_name-$r.hs"
    done
    "$s_prog" --summary $s_list | cmp -s - "$s_name.json" || fail "$s_name: --summary of the shards"
    "$s_prog" --merge $s_list > "$s_name.merged" || fail "$s_name: --merge"
    case $s_prog in knn) c=$KCOLS ;; *) c=$RCOLS ;; esac
    "$FIX" cols $c < "$s_name.hs" > w.c && "$FIX" cols $c < "$s_name.merged" > m.c || fail "$s_name: cols"
    cmp -s w.c m.c || fail "$s_name: the merged records differ: $(diff w.c m.c | head -n 4)"
    [ "$(meta "$s_name.hs")" = "$(meta "$s_name.merged")" ] || fail "$s_name: the merged meta differs"
}
shards knn-loo knn -k 5 --distance mls
shards knn-gal knn -k 3 --distance mls -g g.hs --exclude-id
shards ret-loo retrieve --distance mls
shards ret-atr retrieve --distance mls --at-r
shards ret-gal retrieve --distance mls -g g.hs --exclude-id

# ---- refusals: one line, exit 1 for the data, 2 for misuse
# refuse MESSAGE cmd...: exit 1, nothing on stdout, MESSAGE as the one line on stderr (under
# make sanitize without LeakSanitizer's report: a program that dies leaves what it read unfreed)
refuse() {
    r_msg=$1
    shift
    expect_fail 1 "$r_msg" env ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" "$@"
    [ "$(wc -l < "$T/err")" = 1 ] || fail "$*: more than one line: $(cat "$T/err")"
}
refuse "knn: point.hs: --distance mls needs Gaussian embeddings, but the input has no 'var' field" knn --distance mls point.hs
refuse "retrieve: point.hs: --distance mls needs Gaussian embeddings" retrieve --distance mls point.hs
refuse "retrieve: point.hs: --distance mls needs Gaussian embeddings" retrieve --distance mls -g point.hs q.hs
refuse "knn: point.hs: --distance mls needs Gaussian embeddings" knn --distance mls -g point.hs q.hs
refuse "pairscore: point.hs: --score mls needs Gaussian embeddings" pairscore --score mls point.hs
refuse "mix.hs: --distance mls compares single Gaussians (C = 1), but the input has C = 2 components" knn --distance mls mix.hs
refuse "mix.hs: --score mls compares single Gaussians (C = 1)" pairscore --score mls mix.hs
refuse "zero.hs: record 7: variance 0 (dimension 3) is below 1.17549e-38: --distance mls takes the log" knn --distance mls zero.hs
refuse "zero.hs: record 7: variance 0 (dimension 3) is below" retrieve --distance mls zero.hs
refuse "zero.hs: record 7: variance 0 (dimension 3) is below" pairscore --score mls zero.hs
refuse "zero.hs: record 7: variance 0 (dimension 3) is below" retrieve --distance mls -g zero.hs q.hs
refuse "nan.hs: record 7: variance nan is not a finite number >= 0" knn --distance mls nan.hs
refuse "inf.hs: record 7: variance inf is not a finite number >= 0" retrieve --distance mls inf.hs
expect_fail 2 "--distance: 'mahalanobis' is none of euclidean, cosine, mls" knn --distance mahalanobis q.hs
expect_fail 2 "--distance mls ranks by the mutual likelihood score of the Gaussians, not by -d" knn --distance mls -d expected q.hs
expect_fail 2 "--score mls scores pairs exactly, with nothing to sample: drop --self" pairscore --score mls --self q.hs
expect_fail 2 "--score mls scores pairs exactly, with nothing to sample: drop -K" pairscore --score mls -K 4 q.hs
expect_fail 2 "--score: 'hamming' is none of p, mls (elk), l2, cosine, w2, csd, kl, bhatt" pairscore --score hamming q.hs

# ---- evaluate.sh --distance mls: the battery's ap, knn and retrieval are those of the programs
# with MLS (the same pairs: -n 2000 -S 714), no ece, a note each
sh "$root/pipelines/evaluate.sh" --distance mls -n 2000 --json ev.json q.hs > ev.md 2> ev.err || fail "evaluate.sh --distance mls: $(cat ev.err)"
pairscore --score mls -n 2000 -S 714 q.hs | apcurve --json - > ap.json || fail "pairscore | apcurve"
[ "$(json_get ap < ev.json)" = "$(json_get ap < ap.json)" ] || fail "evaluate.sh's ap $(json_get ap < ev.json) is not pairscore --score mls | apcurve's $(json_get ap < ap.json)"
knn --distance mls --json kn.json q.hs > /dev/null || fail "knn"
[ "$(json_get knn < ev.json)" = "$(json_get accuracy < kn.json)" ] || fail "evaluate.sh's knn $(json_get knn < ev.json) is not knn --distance mls's $(json_get accuracy < kn.json)"
retrieve --distance mls --json rt.json q.hs > /dev/null || fail "retrieve"
[ "$(json_get map_r < ev.json)" = "$(json_get map_r < rt.json)" ] || fail "evaluate.sh's map_r is not retrieve --distance mls's"
grep -q '^| ece | - |' ev.md || fail "evaluate.sh --distance mls shows an ece: $(cat ev.md)"
grep -q "MLS is no probability" ev.md || fail "no note on ece"
pass
