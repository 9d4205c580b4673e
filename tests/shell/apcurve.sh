#!/bin/sh
# apcurve: AP and PR-AUC with tied scores against hand-derived values, the PR curve TSV, order
# independence, -s / -l, the chain from the synthetic fixture, and bad input.
. "$(dirname "$0")/../lib.sh"
FIX=$BIN/../tests/test_evalfix
[ -x "$FIX" ] || fail "$FIX is not built"
ps_table() { "$FIX" table pairscores p:float32 match:uint8; }

# scores .9 .8 .8 .1, labels 1 0 1 1 (derivation in tests/unit/test_metrics.c):
# AP = (1 + 2/3 + 3/4) / 3 = 29/36 = 0.805556; PR-AUC (trapezoids from (0, 1)) = 61/72 = 0.847222
printf '0.9 1\n0.8 0\n0.8 1\n0.1 1\n' | ps_table >"$T/a"
"$BIN/apcurve" -o "$T/pr.tsv" "$T/a" >"$T/txt" || fail "apcurve exited $?"
printf 'n 4\npositives 3\nap 0.805556\npr_auc 0.847222\n' | cmp -s - "$T/txt" || fail "summary: $(cat "$T/txt")"
# the curve: recall, precision, threshold (float32 scores) per distinct score, highest first
printf '# recall\tprecision\tthreshold\n0.333333333\t1\t0.899999976\n0.666666667\t0.666666667\t0.800000012\n1\t0.75\t0.100000001\n' |
    cmp -s - "$T/pr.tsv" || fail "curve: $(cat "$T/pr.tsv")"
# the order of the input does not matter, not even inside a block of ties
printf '0.1 1\n0.8 1\n0.8 0\n0.9 1\n' | ps_table | "$BIN/apcurve" | cmp -s - "$T/txt" || fail "order matters"
"$BIN/apcurve" --json "$T/a" >"$T/json" || fail "--json"
grep -qx '{"program": "apcurve", "n": 4, "positives": 3, "ap": 0.8055555556, "pr_auc": 0.8472222222, "thresholds": 3, "score": "p", "label": "match"}' \
    "$T/json" || fail "json: $(cat "$T/json")"
# perfect and reversed rankings: 1 and (1/3 + 2/4) / 2 = 5/12
printf '4 1\n3 1\n2 0\n1 0\n' | ps_table | "$BIN/apcurve" | grep -qx 'ap 1.000000' || fail "perfect ranking"
printf '4 0\n3 0\n2 1\n1 1\n' | ps_table | "$BIN/apcurve" | grep -qx 'ap 0.416667' || fail "reversed ranking"

# -s / -l on any kind
printf '0.9 1\n0.8 0\n0.8 1\n0.1 1\n' | "$FIX" table rows score:float64 y:int32 >"$T/g"
expect_fail 1 "expected a stream of kind 'pairscores'" "$BIN/apcurve" "$T/g"
"$BIN/apcurve" -s score -l y "$T/g" | cmp -s - "$T/txt" || fail "-s -l"

# the chain: fixture -> pairscore -> apcurve: well separated clusters give a high AP
"$FIX" emb -n 500 >"$T/e"
"$BIN/pairscore" -n 2000 "$T/e" | "$BIN/apcurve" --json >"$T/json" || fail "chain"
awk '{ match($0, /"ap": [0-9.]+/); a = substr($0, RSTART + 6, RLENGTH - 6); exit !(a > 0.9) }' "$T/json" ||
    fail "chain AP: $(cat "$T/json")"
grep -q '"n": 2000, "positives": 1000' "$T/json" || fail "chain counts: $(cat "$T/json")"

# --- bad input
printf '0.9 0\n0.8 0\n' | ps_table >"$T/neg"
expect_fail 1 'no positive items' "$BIN/apcurve" "$T/neg"
ps_table </dev/null >"$T/empty"
expect_fail 1 'no records' "$BIN/apcurve" "$T/empty"
head -c $(($(wc -c <"$T/a") - 12)) "$T/a" >"$T/trunc"
expect_fail 1 'truncated' "$BIN/apcurve" "$T/trunc"
expect_fail 1 "no field 'q'" "$BIN/apcurve" -s q "$T/a"
printf 'nan 1\n0.5 0\n' | ps_table >"$T/nan"
expect_fail 1 'not finite' "$BIN/apcurve" "$T/nan"
# --- the curve and stdout, all or nothing: the TSV is opened before any work, committed last
check_out_file "$BIN/apcurve" -o @FILE@ "$T/a"
check_out_file "$BIN/apcurve" --json -o @FILE@ "$T/a"
expect_fail 1 'cannot write /dev/full' "$BIN/apcurve" -o /dev/full "$T/a"
# --- misuse
expect_fail 2 "for help" "$BIN/apcurve" -x "$T/a"
expect_fail 2 "for help" "$BIN/apcurve" -s
expect_fail 2 "for help" "$BIN/apcurve" "$T/a" "$T/a"
"$BIN/apcurve" -h | grep -q '^usage: apcurve' || fail "-h"
echo "apcurve: ok"
