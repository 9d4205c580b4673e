#!/bin/sh
# apcurve: AP and PR-AUC with tied scores against hand-derived values, the PR curve TSV, order
# independence, --ece against hand values and its errors, -s / -l, the chain from the synthetic
# fixture, and bad input.
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
printf 'recall\tprecision\tthreshold\n0.333333333\t1\t0.899999976\n0.666666667\t0.666666667\t0.800000012\n1\t0.75\t0.100000001\n' |
    cmp -s - "$T/pr.tsv" || fail "curve: $(cat "$T/pr.tsv")"
# the order of the input does not matter, not even inside a block of ties
printf '0.1 1\n0.8 1\n0.8 0\n0.9 1\n' | ps_table | "$BIN/apcurve" | cmp -s - "$T/txt" || fail "order matters"
"$BIN/apcurve" --json - "$T/a" >"$T/json" || fail "--json"
grep -qx '{"program": "apcurve", "n": 4, "positives": 3, "ap": 0.8055555556, "pr_auc": 0.8472222222, "thresholds": 3, "score": "p", "label": "match"}' \
    "$T/json" || fail "json: $(cat "$T/json")"
# perfect and reversed rankings: 1 and (1/3 + 2/4) / 2 = 5/12
printf '4 1\n3 1\n2 0\n1 0\n' | ps_table | "$BIN/apcurve" | grep -qx 'ap 1.000000' || fail "perfect ranking"
printf '4 0\n3 0\n2 1\n1 1\n' | ps_table | "$BIN/apcurve" | grep -qx 'ap 0.416667' || fail "reversed ranking"

# --ece B: the score as a probability, B equal-width bins (derivation in tests/unit/test_metrics.c):
# p (match) 0 (0), .125 (1) | bin 1 empty | .5 (1), .5 (0) | .875 (1), 1 (1), 1 (0), with B = 4:
# (|1 - .125| + |1 - 1| + |2 - 2.875|) / 7 = 0.25
printf '0 0\n0.125 1\n0.5 1\n0.5 0\n0.875 1\n1 1\n1 0\n' | ps_table >"$T/cal"
"$BIN/apcurve" --ece 4 "$T/cal" >"$T/ece.txt" || fail "--ece exited $?"
tail -n 2 "$T/ece.txt" | tr '\n' ' ' | grep -qx 'ece 0.250000 ece_bins 4 ' || fail "--ece text: $(cat "$T/ece.txt")"
"$BIN/apcurve" --ece 4 --json - "$T/cal" | grep -q '"pr_auc": 0.5875, "ece": 0.25, "ece_bins": 4, "thresholds": 5, ' ||
    fail "--ece json: $("$BIN/apcurve" --ece 4 --json - "$T/cal")"
# one bin: |4/7 - 4/7| = 0; Guo et al.'s 15 bins: 0 and .125 in bin 0 and 1 (|0 - 0| + |1 - .125|),
# .5 and .5 in bin 7 (0), .875 in bin 13 (|1 - .875|), 1 and 1 in bin 14 (|1 - 2|): 2 / 7 = 0.285714
"$BIN/apcurve" --ece 1 "$T/cal" | grep -qx 'ece 0.000000' || fail "--ece 1"
"$BIN/apcurve" --ece 15 "$T/cal" | grep -qx 'ece 0.285714' || fail "--ece 15: $("$BIN/apcurve" --ece 15 "$T/cal")"
# bins are (lo, hi], a score of 0 in the first (issue 19, defect 12: they were [lo, hi)). B = 4,
# p (match): 0 (0), 0.25 (0) | 0.3 (0), 0.5 (1) | - | 1 (1): (|0 - 0.25| + |1 - 0.8| + 0) / 5 = 0.09
# (float32 0.3 is 0.300000012: 0.0899999976); [lo, hi) put 0.25 with 0.3 and 0.5 alone: 0.21
printf '0 0\n0.25 0\n0.3 0\n0.5 1\n1 1\n' | ps_table >"$T/edges"
"$BIN/apcurve" --ece 4 "$T/edges" | grep -qx 'ece 0.090000' || fail "--ece at bin edges: $("$BIN/apcurve" --ece 4 "$T/edges")"
"$BIN/apcurve" --ece 4 --json - "$T/edges" | grep -q '"ece": 0.08999999762, ' || fail "--ece at bin edges, json"
# against sklearn's calibration_curve rule, written out in awk: edges numpy.linspace(0, 1, B + 1), bin =
# np.searchsorted(edges[1:-1], p) (the inner edges k x (1/B) strictly below p); 3000 float32 scores,
# a third of them on edges k/8 and k/10
awk 'BEGIN { srand(7); for (i = 0; i < 3000; i++) { r = rand(); p = r < 0.2 ? int(rand() * 9) / 8 : r < 0.35 ? int(rand() * 11) / 10 : rand()
    print p, rand() < p } }' | ps_table >"$T/many"
"$FIX" cols p match <"$T/many" | tail -n +2 >"$T/many.txt"
for B in 1 2 4 8 10 15 16; do
    got=$("$BIN/apcurve" --ece $B --json - "$T/many" | json_get ece)
    awk -v B=$B -v got="$got" '{ b = 0; for (k = 1; k < B; k++) if (k * (1 / B) < $1) b++; n[b]++; sp[b] += $1; sy[b] += $2 }
        END { for (b = 0; b < B; b++) e += (sy[b] > sp[b] ? sy[b] - sp[b] : sp[b] - sy[b]); e /= NR
            d = got - e; exit !(got != "" && d * d < 1e-18) }' "$T/many.txt" || fail "--ece $B: $got, sklearn's rule gives another"
done
# without --ece: no ece
"$BIN/apcurve" --json - "$T/cal" | grep -q '"ece"' && fail "ece without --ece"
# a score that is no probability: an error naming it and its record, nothing on stdout
printf '0.5 1\n0.25 0\n1.5 1\n' | ps_table >"$T/big"
expect_fail 1 'apcurve: --ece: score 1.5 of record 2 is not a probability' "$BIN/apcurve" --ece 15 "$T/big"
printf '0.5 1\n-0.25 0\n' | ps_table >"$T/negp"
expect_fail 1 'apcurve: --ece: score -0.25 of record 1 is not a probability' "$BIN/apcurve" --ece 15 --json - "$T/negp"
printf '0.5 1\nnan 0\n' | ps_table >"$T/nanp"
expect_fail 1 'apcurve: --ece: score nan of record 1 is not a probability' "$BIN/apcurve" --ece 15 "$T/nanp"
"$BIN/apcurve" "$T/big" >/dev/null || fail "a score above 1 without --ece"
expect_fail 2 "for help" "$BIN/apcurve" --ece 0 "$T/cal"
expect_fail 2 "for help" "$BIN/apcurve" --ece x "$T/cal"
expect_fail 2 "for help" "$BIN/apcurve" "$T/cal" --ece

# -s / -l on any kind
printf '0.9 1\n0.8 0\n0.8 1\n0.1 1\n' | "$FIX" table rows score:float64 y:int32 >"$T/g"
expect_fail 1 "expected a stream of kind 'pairscores'" "$BIN/apcurve" "$T/g"
"$BIN/apcurve" -s score -l y "$T/g" | cmp -s - "$T/txt" || fail "-s -l"

# the chain: fixture -> pairscore -> apcurve: well separated clusters give a high AP
"$FIX" emb -n 500 >"$T/e"
"$BIN/pairscore" -n 2000 "$T/e" | "$BIN/apcurve" --json - >"$T/json" || fail "chain"
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
check_out_file "$BIN/apcurve" --json - -o @FILE@ "$T/a"
expect_fail 1 'cannot write /dev/full' "$BIN/apcurve" -o /dev/full "$T/a"
# --- misuse
expect_fail 2 "for help" "$BIN/apcurve" -x "$T/a"
expect_fail 2 "for help" "$BIN/apcurve" -s
expect_fail 2 "for help" "$BIN/apcurve" "$T/a" "$T/a"
"$BIN/apcurve" -h | grep -q '^usage: apcurve' || fail "-h"
echo "apcurve: ok"
