#!/bin/sh
# ktau: binning, per-bin accuracy and AP, tau against hand-derived values, the generic -u / -m
# mode, the whole chain from the synthetic fixture, and bad input. Fixtures: tests/unit/test_evalfix.c.
. "$(dirname "$0")/../lib.sh"
FIX=$BIN/../tests/test_evalfix
[ -x "$FIX" ] || fail "$FIX is not built"
knn_table() { "$FIX" table knn eta:float32 correct:uint8; }

# --- accuracy by hand: 40 items with eta = 0..39, written in a scrambled order (7i mod 40);
# wrong: 15, 25 and 30..34. Four bins of 10 by eta: accuracy 1, .9, .9, .5. Kendall pairs of
# (bin, accuracy): (0,1) (0,2) (0,3) (1,3) (2,3) discordant, (1,2) tied in accuracy:
# tau-b = -5 / sqrt(6 * 5), reported inverted: 0.912871
awk 'BEGIN { for (i = 0; i < 40; i++) { e = (7 * i) % 40; print e, !(e == 15 || e == 25 || (e >= 30 && e <= 34)) } }' |
    knn_table >"$T/acc" || fail "fixture"
"$BIN/ktau" -b 4 -o "$T/acc.tsv" "$T/acc" >"$T/txt" || fail "ktau exited $?"
grep -qx 'tau 0.912871' "$T/txt" || fail "tau: $(cat "$T/txt")"
grep -qx 'n 40' "$T/txt" || fail "n"
head -n 1 "$T/txt" | grep -q '^bin .* n .* mean_eta .* accuracy$' || fail "table header: $(head -n 1 "$T/txt")"
grep -Eq '^1 +10 +14.500000 +0.900000$' "$T/txt" || fail "bin 1: $(cat "$T/txt")"
grep -Eq '^3 +10 +34.500000 +0.500000$' "$T/txt" || fail "bin 3"
printf '# bin\tn\tmean_eta\taccuracy\n0\t10\t4.5\t1\n1\t10\t14.5\t0.9\n2\t10\t24.5\t0.9\n3\t10\t34.5\t0.5\n' |
    cmp -s - "$T/acc.tsv" || fail "tsv: $(cat "$T/acc.tsv")"
"$BIN/ktau" -b 4 --json "$T/acc" >"$T/json" || fail "--json"
grep -q '^{"program": "ktau", "tau": 0.912870929' "$T/json" || fail "json: $(cat "$T/json")"
grep -q '{"bin": 3, "n": 10, "mean_u": 34.5, "perf": 0.5}' "$T/json" || fail "json bins: $(cat "$T/json")"
[ "$(wc -l <"$T/json")" -eq 1 ] || fail "json is not one line"
grep -q '}], "n": 40}$' "$T/json" || fail "json: the total n must come last"

# --- 47 items in 20 bins: bins 0..6 hold 3, bins 7..19 hold 2
awk 'BEGIN { for (i = 0; i < 47; i++) print i / 100, 1 }' | knn_table >"$T/47"
"$BIN/ktau" --json "$T/47" >"$T/json" || fail "ktau 47"
grep -q '{"bin": 6, "n": 3, ' "$T/json" && grep -q '{"bin": 7, "n": 2, ' "$T/json" &&
    grep -q '{"bin": 19, "n": 2, ' "$T/json" || fail "47 in 20 bins: $(cat "$T/json")"
grep -q '"tau": null' "$T/json" || fail "constant accuracy must give tau null"
"$BIN/ktau" "$T/47" | grep -qx 'tau nan' || fail "constant accuracy must give tau nan"

# --- equal uncertainties keep their stream order: 10 right then 10 wrong, 2 bins: 1.0 then 0.0
awk 'BEGIN { for (i = 0; i < 20; i++) print 0.5, i < 10 }' | knn_table | "$BIN/ktau" -b 2 >"$T/txt" || fail "ties"
grep -qx 'tau 1.000000' "$T/txt" && grep -Eq '^1 +10 +0.500000 +0.000000$' "$T/txt" || fail "ties: $(cat "$T/txt")"

# --- AP per bin on pairscores: low-eta bin ranks both matches first (AP 1); the high-eta bin
# ranks them last, AP = (1/3 + 2/4) / 2 = 5/12 = 0.416667; tau 1
cat >"$T/ps.txt" <<'EOF'
0.9 1 0.1
0.8 1 0.2
0.7 0 0.3
0.6 0 0.4
0.9 0 0.5
0.8 0 0.6
0.7 1 0.7
0.6 1 0.8
EOF
"$FIX" table pairscores p:float32 match:uint8 eta:float32 <"$T/ps.txt" >"$T/ps"
"$BIN/ktau" -b 2 "$T/ps" >"$T/txt" || fail "ktau pairscores"
grep -Eq '^0 +4 +0.250000 +1.000000$' "$T/txt" && grep -Eq '^1 +4 +0.650000 +0.416667$' "$T/txt" &&
    grep -qx 'tau 1.000000' "$T/txt" || fail "AP bins: $(cat "$T/txt")"
# 4 bins: two have no positive (AP undefined): nan, a warning, left out of tau
"$BIN/ktau" -b 4 "$T/ps" >"$T/txt" 2>"$T/err" || fail "ktau -b 4"
[ "$(grep -c '^[0-9].* nan$' "$T/txt")" -eq 2 ] && grep -q 'no defined performance' "$T/err" || fail "undefined AP bins"

# --- generic fields
awk 'BEGIN { for (i = 0; i < 30; i++) print i, i < 20, 1 - i / 30, i % 2 }' |
    "$FIX" table rows u:float64 ok:uint8 s:float64 y:uint8 >"$T/g"
expect_fail 1 'give -u and -m' "$BIN/ktau" "$T/g"
"$BIN/ktau" -b 3 -u u -m accuracy:ok "$T/g" | grep -qx 'tau 0.816497' || fail "generic accuracy"
"$BIN/ktau" -b 3 -u u -m ap:s:y --json "$T/g" | grep -q '"performance": "ap:s:y"' || fail "generic ap"
expect_fail 1 "no field 'nope'" "$BIN/ktau" -u nope -m accuracy:ok "$T/g"

# --- the chain: fixture -> eta -> knn -> ktau, and fixture -> pairs -> ktau: performance falls
"$FIX" emb -n 2000 >"$T/e"
"$BIN/pairscore" --self "$T/e" | "$BIN/knn" | "$BIN/ktau" --json >"$T/json" || fail "knn chain"
awk '{ match($0, /"tau": [-0-9.]+/); t = substr($0, RSTART + 7, RLENGTH - 7); exit !(t > 0.3) }' "$T/json" ||
    fail "knn chain tau: $(cat "$T/json")"
"$BIN/pairscore" -n 4000 "$T/e" | "$BIN/ktau" --json >"$T/json" || fail "pairs chain"
awk '{ match($0, /"tau": [-0-9.]+/); t = substr($0, RSTART + 7, RLENGTH - 7); exit !(t > 0.3) }' "$T/json" ||
    fail "pairs chain tau: $(cat "$T/json")"

# --- bad input
awk 'BEGIN { for (i = 0; i < 12; i++) print i, 1 }' | knn_table >"$T/12"
expect_fail 1 'ktau: 12 items cannot fill 20 bins' "$BIN/ktau" "$T/12"
knn_table </dev/null >"$T/empty"
expect_fail 1 'no records' "$BIN/ktau" "$T/empty"
head -c $(($(wc -c <"$T/acc") - 12)) "$T/acc" >"$T/trunc"
expect_fail 1 'truncated' "$BIN/ktau" "$T/trunc"
expect_fail 1 "no field 'correct'" "$BIN/ktau" -m accuracy:correct "$T/ps"
awk 'BEGIN { for (i = 0; i < 30; i++) print i % 2 }' | "$FIX" table knn correct:uint8 >"$T/noeta"
expect_fail 1 "no field 'eta'" "$BIN/ktau" "$T/noeta"
# --- misuse
expect_fail 2 'usage' "$BIN/ktau" -b 0 "$T/acc"
expect_fail 2 'usage' "$BIN/ktau" -m precision:p "$T/acc"
expect_fail 2 'usage' "$BIN/ktau" -m ap:p "$T/acc"
expect_fail 2 'usage' "$BIN/ktau" -m accuracy: "$T/acc"
expect_fail 2 'usage' "$BIN/ktau" --bogus "$T/acc"
expect_fail 2 'usage' "$BIN/ktau" "$T/acc" "$T/acc"
"$BIN/ktau" -h | grep -q '^usage: ktau' || fail "-h"
echo "ktau: ok"
