#!/bin/sh
# knn: tie rules on hand-placed points, pass-through fields, leave-one-out versus gallery, threads,
# -d expected, determinism, and bad input. Fixtures: tests/unit/test_evalfix.c.
. "$(dirname "$0")/../lib.sh"
FIX=$BIN/../tests/test_evalfix
[ -x "$FIX" ] || fail "$FIX is not built"

# --- ties, by hand (k = 4, leave-one-out). Points (id: x y class):
#   100: 0 0 c0   101: 1 0 c1   102: 0 1 c1   103: -1 0 c2   104: 0 -1 c2
#   105: 10 10 c3   106: 10 11 c3   107: 11 10 c3
# query 100: 101..104 all at distance 1 -> neighbours 101 102 103 104 (index order); votes 2-2 with
#   equal sums (2 and 2) -> the best-ranked neighbour's class, 1. Wrong; recall 0 0 0 0.
# query 101: 100 (1), 102 and 104 (sqrt 2, index order), 103 (2): classes 0 1 2 2 -> class 2
#   wins 2-1-1; recall 0 1 1 1; nn_dist 1.
# query 105: 106 and 107 (1), then 101 and 102 (both sqrt 181, index order): classes 3 3 1 1,
#   2-2, sums 2 < 2 sqrt 181 -> class 3, correct; recall 1 1 1 1.
cat >"$T/tie.txt" <<'EOF'
0 0 0 100 0.0 0 0
1 0 1 101 0.1 0 0
0 1 1 102 0.2 0 1
-1 0 2 103 0.3 1 0
0 -1 2 104 0.4 0 0
10 10 3 105 0.5 0 0
10 11 3 106 0.6 0 0
11 10 3 107 0.7 1 1
EOF
"$FIX" table eta mu:float32:1x2 class:int32 id:int64 eta:float32 occluded:uint8:2 \
    -m match_a=2.0 -m match_b=1.0 <"$T/tie.txt" >"$T/tie" || fail "tie fixture"
"$BIN/knn" -k 4 --json "$T/json" "$T/tie" >"$T/k" || fail "knn exited $?"
"$FIX" cols id class predicted correct recall neighbors nn_dist eta occluded <"$T/k" >"$T/c" || fail "knn fields"
head -n 1 "$T/c" | grep -qx 'kind knn' || fail "kind"
sed -n 2p "$T/c" | grep -qx '100 0 1 0 0 0 0 0 101 102 103 104 1 0 0 0' || fail "query 100: $(sed -n 2p "$T/c")"
sed -n 3p "$T/c" | grep -qx '101 1 2 0 0 1 1 1 100 102 104 103 1 0.100000001 0 0' || fail "query 101: $(sed -n 3p "$T/c")"
sed -n 7p "$T/c" | grep -qx '105 3 3 1 1 1 1 1 106 107 101 102 1 0.5 0 0' || fail "query 105: $(sed -n 7p "$T/c")"
sed -n 9p "$T/c" | grep -qx '107 3 3 1 1 1 1 1 105 106 101 102 1 0.699999988 1 1' || fail "query 107: $(sed -n 9p "$T/c")"
grep -q '"n": 8, "k": 4, ' "$T/json" || fail "json: $(cat "$T/json")"
# --summary reads the knn stream back: the same line as --json
"$BIN/knn" --summary <"$T/k" | cmp -s - "$T/json" || fail "--summary: $("$BIN/knn" --summary <"$T/k")"
# k = 7 is the most leave-one-out allows with 8 items
"$BIN/knn" -k 7 "$T/tie" >/dev/null || fail "k = 7"
expect_fail 1 'needs at least 9' "$BIN/knn" -k 8 "$T/tie"

# --- the synthetic fixture: 1500 images, 10 well separated classes
"$FIX" emb -n 1500 >"$T/e" || fail "fixture"
"$BIN/knn" --json "$T/json" "$T/e" >"$T/k1" || fail "knn exited $?"
awk '{ match($0, /"accuracy": [0-9.]+/); a = substr($0, RSTART + 12, RLENGTH - 12); exit !(a > 0.8) }' "$T/json" ||
    fail "accuracy: $(cat "$T/json")"
grep -q '"recall": \[' "$T/json" || fail "json recall"
"$FIX" cols id class predicted correct recall neighbors nn_dist occluded <"$T/k1" >"$T/c1" || fail "cols"
[ "$(wc -l <"$T/c1")" -eq 1501 ] || fail "not one record per image"
# correct = (predicted == class); recall rises with the rank
awk 'NR > 1 && ($4 != ($3 == $2) || $5 > $6 || $6 > $7 || $7 > $8 || $8 > $9) { exit 1 }' "$T/c1" ||
    fail "correct / recall invariants"
# same bytes again; 2 threads give the same records
"$BIN/knn" --json "$T/json" "$T/e" | cmp -s - "$T/k1" || fail "same input gave different bytes"
"$BIN/knn" -t 2 "$T/e" | "$FIX" cols id class predicted correct recall neighbors nn_dist occluded |
    cmp -s - "$T/c1" || fail "-t 2 differs from -t 1"
# a gallery that is the input itself, the query's own id excluded: the same as leave-one-out
"$BIN/knn" -g "$T/e" --exclude-id <"$T/e" | "$FIX" cols id class predicted correct recall neighbors nn_dist occluded |
    cmp -s - "$T/c1" || fail "-g self --exclude-id differs from leave-one-out"
# without exclusion every query finds itself first, at distance 0
"$BIN/knn" -g "$T/e" "$T/e" | "$FIX" cols recall nn_dist | awk 'NR > 1 && ($1 != 1 || $6 != 0) { exit 1 }' ||
    fail "gallery containing the queries"
# -d expected: the uncertain (occluded) gallery items move away, so the results change
"$BIN/knn" -d expected "$T/e" >"$T/kx" || fail "-d expected"
"$FIX" cols id class predicted correct recall neighbors nn_dist occluded <"$T/kx" | cmp -s - "$T/c1" &&
    fail "-d expected changed nothing"
# on point embeddings it is the plain distance
"$FIX" emb -n 300 -p >"$T/p"
"$BIN/knn" "$T/p" | "$FIX" cols neighbors >"$T/pn"
"$BIN/knn" -d expected "$T/p" | "$FIX" cols neighbors | cmp -s - "$T/pn" || fail "-d expected on points"
# mixtures: C = 2
"$FIX" emb -n 300 -C 2 | "$BIN/knn" -k 3 >/dev/null || fail "C = 2"
# eta passes through from pairscore --self
"$BIN/pairscore" --self "$T/e" | "$BIN/knn" | "$FIX" cols eta >/dev/null || fail "eta not passed through"

# --- bad input
"$FIX" table embeddings mu:float32:1x2 class:int32 id:int64 </dev/null >"$T/empty"
expect_fail 1 'no records' "$BIN/knn" "$T/empty"
head -c 5000 "$T/e" >"$T/trunc"
expect_fail 1 'truncated' "$BIN/knn" "$T/trunc"
expect_fail 1 "expected a stream of kind 'embeddings'" "$BIN/knn" "$T/k1"
"$FIX" emb -n 30 -D 3 >"$T/d3"
expect_fail 1 'dimensions' "$BIN/knn" -g "$T/d3" "$T/e"
printf '0 0 5\n1 1 6\n' | "$FIX" table embeddings mu:float32:1x2 id:int64 >"$T/nocls"
expect_fail 1 "no 'class' field" "$BIN/knn" -k 1 "$T/nocls"
# --- misuse
expect_fail 2 'usage' "$BIN/knn" -k 0 "$T/e"
expect_fail 2 'usage' "$BIN/knn" -d median "$T/e"
expect_fail 2 'usage' "$BIN/knn" --exclude-id "$T/e"
expect_fail 2 'usage' "$BIN/knn" -t 0 "$T/e"
expect_fail 2 'usage' "$BIN/knn" --bogus "$T/e"
expect_fail 2 'usage' "$BIN/knn" "$T/e" "$T/e"
expect_fail 2 'usage' "$BIN/knn" --summary -g "$T/e" "$T/k1"
expect_fail 1 "expected a stream of kind 'knn'" "$BIN/knn" --summary "$T/e"
"$BIN/knn" -h | grep -q '^usage: knn' || fail "-h"
echo "knn: ok"
