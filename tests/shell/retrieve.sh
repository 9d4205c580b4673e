#!/bin/sh
# retrieve: the metrics on hand-placed points with ties, pass-through fields, agreement with knn's
# recall, leave-one-out versus gallery, threads, cleaning (same seed same bytes), --summary, ktau on
# per-query AP, global precision-recall against apcurve on every pair, several galleries
# (distractors), and bad input. Fixtures: tests/unit/test_evalfix.c.
. "$(dirname "$0")/../lib.sh"
FIX=$BIN/../tests/test_evalfix
[ -x "$FIX" ] || fail "$FIX is not built"
COLS='id class ap rprec map_r p1 recall npos eta occluded'

# --- by hand (leave-one-out, -k 1,2,4). Points (id: x y class), squared distances:
#   100: 0 0 c0   101: 1 0 c1   102: 0 1 c1   103: -1 0 c2   104: 0 -1 c2
#   105: 10 10 c3   106: 10 11 c3   107: 11 10 c3
# 100: the only one of class 0: no positive, not in the stream (no_positive 1).
# 101: 100 (1), 102 (2, +), 104 (2), 103 (4), ...: ties by index; R = 1 at rank 2:
#      ap 1/2, rprec 0, map_r 0, p1 0, recall 0 1 1. 102: 100 (1), 101 (2, +), 103 (2): the same.
# 103: 100 (1), 102 (2), 104 (2, +), 101 (4): rank 3: ap 1/3, recall 0 0 1. 104: 100 (1),
#      101 (2), 103 (2, +): the same.
# 105, 106, 107: their two positives at ranks 1 and 2: everything 1, npos 2.
# Means over the 7: p1 = rprec = map_r = recall@1 = 3/7, recall@2 = 5/7, recall@4 = 1,
# map = (1/2 + 1/2 + 1/3 + 1/3 + 3) / 7 = 2/3: 0.6666666695 with ap in float32 (1/3: 0.333333343).
# first_rank 2 2 3 3 1 1 1: mrr = (1/2 + 1/2 + 1/3 + 1/3 + 3) / 7 = 2/3 (in double).
# Per class (avg_of_avgs; classes 1, 2, 3 with 2, 2, 3 queries): p1, rprec, map_r 0, 0, 1 -> 1/3
# (the plain means 3/7); rr means 1/2, 1/3, 1 -> mrr_avg_of_avgs (1/2 + 1/3 + 1) / 3 = 11/18.
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
"$FIX" table eta mu:float32:1x2 class:int32 id:int64 eta:float32 occluded:uint8:2 <"$T/tie.txt" >"$T/tie" ||
    fail "tie fixture"
"$BIN/retrieve" -k 1,2,4 --json "$T/json" "$T/tie" >"$T/r" 2>"$T/err" || fail "retrieve exited $?: $(cat "$T/err")"
grep -q '1 of 8 queries have no positive' "$T/err" || fail "no warning for the query without positive: $(cat "$T/err")"
"$FIX" cols $COLS <"$T/r" >"$T/c" || fail "retrieve fields"
cat >"$T/want" <<'EOF'
kind retrieval
101 1 0.5 0 0 0 0 1 1 1 0.100000001 0 0
102 1 0.5 0 0 0 0 1 1 1 0.200000003 0 1
103 2 0.333333343 0 0 0 0 0 1 1 0.300000012 1 0
104 2 0.333333343 0 0 0 0 0 1 1 0.400000006 0 0
105 3 1 1 1 1 1 1 1 2 0.5 0 0
106 3 1 1 1 1 1 1 1 2 0.600000024 0 0
107 3 1 1 1 1 1 1 1 2 0.699999988 1 1
EOF
cmp -s "$T/c" "$T/want" || fail "records: $(diff "$T/want" "$T/c")"
{
    printf '{"program": "retrieve", "queries": 7, "no_positive": 1, "gallery": 8, "mode": "leave-one-out", '
    printf '"distance": "euclidean", "ranking": "full", "recall_at": [1, 2, 4], "recall": [0.4285714286, 0.7142857143, 1], "p1": 0.4285714286, '
    # eta_ap_pearson: eta 0.1 .. 0.7 (float32) against ap 1/2 1/2 1/3 1/3 1 1 1 (numpy corrcoef:
    # 0.765531817966393)
    printf '"rprec": 0.4285714286, "map_r": 0.4285714286, "map": 0.6666666695, "mrr": 0.6666666667, '
    printf '"query_classes": 3, "p1_avg_of_avgs": 0.3333333333, "rprec_avg_of_avgs": 0.3333333333, '
    printf '"map_r_avg_of_avgs": 0.3333333333, "mrr_avg_of_avgs": 0.6111111111, "eta_ap_pearson": 0.765531818}\n'
} | cmp -s - "$T/json" || fail "json: $(cat "$T/json")"
"$BIN/tshow" -q "$T/r" | grep -q '"no_positive": 1' || fail "meta no_positive"
"$FIX" cols first_rank <"$T/r" | sed 1d | tr '\n' ' ' | grep -qx '2 2 3 3 1 1 1 ' || fail "first_rank: $("$FIX" cols first_rank <"$T/r")"
"$BIN/tshow" -q "$T/r" | grep -q '"mrr": 0.6666666[0-9]*, "query_classes": 3, "p1_avg_of_avgs": 0.3333333[0-9]*, ' ||
    fail "meta mrr, avg_of_avgs: $("$BIN/tshow" -q "$T/r")"
# --summary reads the stream back: the same line as --json
"$BIN/retrieve" --summary <"$T/r" | cmp -s - "$T/json" || fail "--summary: $("$BIN/retrieve" --summary <"$T/r")"
# recall equals knn's (same distance, same tie rule), query by query
"$BIN/knn" -k 4 "$T/tie" | "$FIX" cols id recall | awk 'NR > 1 && $1 != 100 { print $1, $2, $3, $5 }' >"$T/kr"
"$FIX" cols id recall <"$T/r" | sed 1d | cmp -s - "$T/kr" || fail "recall differs from knn's: $(cat "$T/kr")"
# Recall@7 is the most leave-one-out allows with 8 items
"$BIN/retrieve" -k 7 "$T/tie" >/dev/null 2>&1 || fail "k = 7"
expect_fail 1 'Recall@8 needs at least 9' "$BIN/retrieve" -k 1,8 "$T/tie"

# --- the synthetic fixture: 1500 embeddings, 10 classes, occluded ones uncertain (var 2.25)
"$FIX" emb -n 1500 >"$T/e" || fail "fixture"
"$BIN/retrieve" --json "$T/json" "$T/e" >"$T/r1" || fail "retrieve exited $?"
"$FIX" cols $COLS <"$T/r1" >"$T/c1" || fail "cols"
[ "$(wc -l <"$T/c1")" -eq 1501 ] || fail "not one record per query"
# invariants: recall rises with k, p1 = recall@1, R-precision and MAP@R <= AP-bounded values in
# [0, 1], npos = 149; eta = mean var: 0.0225 clean, 2.25 occluded
awk 'NR > 1 && ($6 != $7 || $7 > $8 || $8 > $9 || $9 > $10 || $3 <= 0 || $3 > 1 || $5 > $4 || $11 != 149 ||
    ($13 == 1 && $12 != 2.25) || ($13 == 0 && $12 != 0.0225000009)) { print; exit 1 }' "$T/c1" ||
    fail "invariants: $(awk 'NR > 1 && ($6 != $7 || $7 > $8 || $8 > $9 || $9 > $10) { print; exit }' "$T/c1")"
# the same recall as knn -k 8 at ranks 1, 2, 4, 8, for every query
"$BIN/knn" -k 8 "$T/e" | "$FIX" cols id recall | awk 'NR > 1 { print $1, $2, $3, $5, $9 }' >"$T/kr"
"$FIX" cols id recall <"$T/r1" | sed 1d | cmp -s - "$T/kr" || fail "recall differs from knn's"
# the mean of ap is map
map=$(json_get map <"$T/json")
awk -v m="$map" 'NR > 1 { s += $3; n++ } END { exit !(n == 1500 && (s / n - m) ^ 2 < 1e-16) }' "$T/c1" ||
    fail "map $map is not the mean of ap"
# same bytes again; 2 threads give the same records and numbers
"$BIN/retrieve" --json "$T/json" "$T/e" | cmp -s - "$T/r1" || fail "same input gave different bytes"
"$BIN/retrieve" -t 2 --json "$T/json2" "$T/e" | "$FIX" cols $COLS | cmp -s - "$T/c1" || fail "-t 2 differs from -t 1"
cmp -s "$T/json" "$T/json2" || fail "-t 2 json differs"
# a gallery that is the input itself, the query's own id excluded: the same as leave-one-out
"$BIN/retrieve" -g "$T/e" --exclude-id <"$T/e" | "$FIX" cols $COLS | cmp -s - "$T/c1" ||
    fail "-g self --exclude-id differs from leave-one-out"
# without exclusion every query finds itself first, and counts itself as a positive
"$BIN/retrieve" -g "$T/e" "$T/e" | "$FIX" cols p1 npos | awk 'NR > 1 && ($1 != 1 || $2 != 150) { exit 1 }' ||
    fail "gallery containing the queries"
# a gallery of other embeddings: clean queries against the first 600
"$FIX" emb -n 600 -S 9 >"$T/g"
"$BIN/retrieve" -g "$T/g" --json "$T/jg" "$T/e" >/dev/null || fail "-g"
grep -q '"queries": 1500, "no_positive": 0, "gallery": 600, "mode": "gallery"' "$T/jg" ||
    fail "gallery json: $(cat "$T/jg")"
# mixtures (C = 2) and point embeddings (no eta field then)
"$FIX" emb -n 300 -C 2 | "$BIN/retrieve" >/dev/null || fail "C = 2"
"$FIX" emb -n 300 -p | "$BIN/retrieve" | "$FIX" cols eta >/dev/null 2>&1 && fail "eta without var or eta"
# eta passes through from pairscore --self (kind eta)
"$BIN/pairscore" --self "$T/e" >"$T/eta" || fail "pairscore --self"
"$FIX" cols id eta <"$T/eta" | sed 1d >"$T/ce"
"$BIN/retrieve" "$T/eta" | "$FIX" cols id eta | sed 1d | cmp -s - "$T/ce" || fail "eta not passed through"
# ktau bins per-query AP by eta (mean var: 0.0225 clean, 2.25 for the occluded quarter, whose
# AP is far lower: the last of 4 bins)
"$BIN/ktau" -b 4 -u eta -m accuracy:ap -o "$T/kt.tsv" "$T/r1" >/dev/null || fail "ktau on retrieval"
awk -F '\t' '$1 == 0 { a = $4 } $1 == 3 { b = $4; u = $3 }
    END { exit !(a > 0.9 && b < 0.7 && u == 2.25) }' "$T/kt.tsv" ||
    fail "ktau bins: $(cat "$T/kt.tsv")"
# the same by default for kind retrieval
"$BIN/ktau" -b 4 -o "$T/kt2.tsv" "$T/r1" >/dev/null && cmp -s "$T/kt.tsv" "$T/kt2.tsv" ||
    fail "ktau's defaults for a retrieval stream are not -u eta -m accuracy:ap"

# --- cleaning: dropping the 20 % most uncertain (the occluded quarter) beats dropping 20 % at random
"$BIN/retrieve" --clean 20 --json "$T/jc" "$T/e" >"$T/rc" || fail "--clean exited $?"
for k in clean_percent clean_dropped clean_draws clean_uncertain_map clean_random_map clean_random_map_sd; do
    grep -q "\"$k\": [0-9]" "$T/jc" || fail "json has no $k: $(cat "$T/jc")"
done
grep -q '"clean_dropped": 300, "clean_draws": 5, "clean_uncertainty": "var"' "$T/jc" ||
    fail "clean json: $(cat "$T/jc")"
um=$(json_get clean_uncertain_map <"$T/jc") rm=$(json_get clean_random_map <"$T/jc")
sd=$(json_get clean_random_map_sd <"$T/jc")
check_lt "$rm" "$um" "cleaning by uncertainty ($um) does not beat random cleaning ($rm)"
check_lt 0 "$sd" "random cleaning sd $sd"
# the records and the full-gallery numbers do not change
"$FIX" cols $COLS <"$T/rc" | cmp -s - "$T/c1" || fail "--clean changed the records"
[ "$(json_get map <"$T/jc")" = "$map" ] || fail "--clean changed map"
"$BIN/retrieve" --summary "$T/rc" | cmp -s - "$T/jc" ||
    fail "--summary with cleaning: $("$BIN/retrieve" --summary "$T/rc")"
# same seed, same bytes (and threads do not matter); another seed, other random draws
"$BIN/retrieve" --clean 20 --json "$T/jc" "$T/e" | cmp -s - "$T/rc" || fail "--clean: same seed gave different bytes"
"$BIN/retrieve" --clean 20 -t 2 --json "$T/jc2" "$T/e" >/dev/null && cmp -s "$T/jc" "$T/jc2" || fail "--clean -t 2"
"$BIN/retrieve" --clean 20 -S 715 --json "$T/jc3" "$T/e" >/dev/null || fail "-S 715"
[ "$(json_get clean_random_map <"$T/jc3")" != "$rm" ] || fail "-S 715 gave the same random draws"
"$BIN/retrieve" --clean 20 --clean-draws 2 --json "$T/jc4" "$T/e" >/dev/null || fail "--clean-draws 2"
grep -q '"clean_draws": 2' "$T/jc4" || fail "--clean-draws"
# eta is the uncertainty when there is one; without ties in it the seed changes only the random
# draws (the fixture's var ties: 300 of its 375 occluded items at 2.25 are dropped, chosen by seed)
"$BIN/retrieve" --clean 20 --json "$T/jc5" "$T/eta" >/dev/null || fail "--clean on eta"
grep -q '"clean_uncertainty": "eta"' "$T/jc5" || fail "eta as the uncertainty: $(cat "$T/jc5")"
"$BIN/retrieve" --clean 20 -S 715 --json "$T/jc6" "$T/eta" >/dev/null || fail "--clean -S 715 on eta"
[ "$(json_get clean_uncertain_map <"$T/jc5")" = "$(json_get clean_uncertain_map <"$T/jc6")" ] ||
    fail "the uncertain cut depends on the seed without ties"
[ "$(json_get clean_random_map <"$T/jc5")" != "$(json_get clean_random_map <"$T/jc6")" ] ||
    fail "-S 715 gave the same random draws on eta"
# the uncertain cut by hand: the gallery without its 300 highest eta, in record order, searched
# with -g (the query's own id excluded), gives clean_uncertain_map
"$FIX" cols mu class id eta <"$T/eta" | sed 1d | sort -g -k5,5 | head -n 1200 | sort -n -k4,4 |
    "$FIX" table embeddings mu:float32:1x2 class:int32 id:int64 eta:float32 >"$T/cut" || fail "cut fixture"
"$BIN/retrieve" -g "$T/cut" --exclude-id --json "$T/jcut" "$T/eta" >/dev/null || fail "-g cut"
awk -v a="$(json_get map <"$T/jcut")" -v b="$(json_get clean_uncertain_map <"$T/jc5")" \
    'BEGIN { exit !(a != "" && (a - b) ^ 2 < 1e-12) }' || fail "map without the 300 most uncertain: $(cat "$T/jcut")"
# neither eta nor var
"$FIX" emb -n 300 -p >"$T/p"
expect_fail 1 'retrieve: --clean needs an uncertainty: the gallery has neither eta nor var' \
    "$BIN/retrieve" --clean 20 "$T/p"
expect_fail 1 'drops no item' "$BIN/retrieve" -k 1 --clean 10 "$T/tie"
# --clean-random: the random draws alone, no uncertainty needed; the same draws as --clean's
"$BIN/retrieve" --clean-random 20 --json "$T/jr" "$T/p" >"$T/rr" || fail "--clean-random on point embeddings"
grep -q '"clean_uncertainty": "none"' "$T/jr" && ! grep -q clean_uncertain_map "$T/jr" || fail "--clean-random json: $(cat "$T/jr")"
"$BIN/retrieve" --summary "$T/rr" | cmp -s - "$T/jr" || fail "--summary with --clean-random: $("$BIN/retrieve" --summary "$T/rr")"
"$BIN/retrieve" --clean-random 20 --json "$T/jr2" "$T/e" >/dev/null || fail "--clean-random"
[ "$(json_get clean_random_map <"$T/jr2")" = "$rm" ] || fail "--clean-random drew otherwise than --clean"
expect_fail 2 "give one" "$BIN/retrieve" --clean 20 --clean-random 20 "$T/e"
# eta_ap_pearson: the Pearson correlation of the records' eta and ap, computed here from the columns
r=$(json_get eta_ap_pearson <"$T/json")
awk -v r="$r" 'NR > 1 { n++; x[n] = $12; y[n] = $3; mx += $12; my += $3 }
    END { mx /= n; my /= n; for (i = 1; i <= n; i++) { a += (x[i] - mx) * (y[i] - my); b += (x[i] - mx) ^ 2; c += (y[i] - my) ^ 2 }
          p = a / sqrt(b * c); print "eta_ap_pearson " r ", by awk " p; exit !(r != "" && r < -0.5 && (p - r) ^ 2 < 1e-12) }' "$T/c1" ||
    fail "eta_ap_pearson $r differs from the columns' correlation"
"$FIX" emb -n 300 -p | "$BIN/retrieve" --json "$T/jp" >/dev/null && ! grep -q eta_ap_pearson "$T/jp" ||
    fail "eta_ap_pearson without an eta: $(cat "$T/jp")"

# --- global precision-recall (--global): every (query, gallery item) pair ranked by its d2's key.
# Integer coordinates with d2 below 2^15 have exact float32 d2 and one key per d2, so the numbers
# must be apcurve's on every pair's score -d2 (written by awk; same class = match).
# pairs_ap QUERIES GALLERY EXCL: the pairs of the "x y class id" files as a stream for apcurve;
# EXCL: loo (skip the same line), id (skip the same id), none
pairs_ap() {
    awk -v mode="$3" 'FNR == 1 { f++ } f == 1 { qx[FNR] = $1; qy[FNR] = $2; qc[FNR] = $3; qi[FNR] = $4; nq = FNR }
        f == 2 { gx[FNR] = $1; gy[FNR] = $2; gc[FNR] = $3; gi[FNR] = $4; ng = FNR }
        END { for (q = 1; q <= nq; q++) for (g = 1; g <= ng; g++) {
                  if ((mode == "loo" && q == g) || (mode == "id" && qi[q] == gi[g])) continue
                  printf "%d %d\n", -((qx[q] - gx[g]) ^ 2 + (qy[q] - gy[g]) ^ 2), qc[q] == gc[g] } }' "$1" "$2" |
        "$FIX" table pairs score:float64 match:uint8 | "$BIN/apcurve" -s score -l match --json -
}
# same_global JSON_RETRIEVE JSON_APCURVE WHAT
same_global() {
    for k in ap pr_auc; do
        [ "$(json_get "global_$k" <"$1")" = "$(json_get "$k" <"$2")" ] || fail "$3: global_$k differs from apcurve's $k: $(cat "$1") / $(cat "$2")"
    done
    [ "$(json_get global_pairs <"$1")" = "$(json_get n <"$2")" ] || fail "$3: global_pairs: $(cat "$1") / $(cat "$2")"
    [ "$(json_get global_positives <"$1")" = "$(json_get positives <"$2")" ] || fail "$3: global_positives"
    echo "$3: global_ap $(json_get global_ap <"$1"), global_pr_auc $(json_get global_pr_auc <"$1"): apcurve's"
}
mkxy() { "$FIX" table embeddings mu:float32:1x2 class:int32 id:int64; }
# the hand-placed points: 8 x 7 ordered pairs, 2 + 2 + 6 positives (query 100 has none: 7 negatives)
awk '{ print $1, $2, $3, $4 }' "$T/tie.txt" >"$T/tie.xy"
"$BIN/retrieve" -k 1 --global --json "$T/jg1" "$T/tie" >"$T/rg1" 2>/dev/null || fail "--global exited $?"
pairs_ap "$T/tie.xy" "$T/tie.xy" loo >"$T/ja1" || fail "apcurve on the pairs"
grep -q '"global_pairs": 56, "global_positives": 10' "$T/jg1" || fail "global pairs: $(cat "$T/jg1")"
same_global "$T/jg1" "$T/ja1" "leave-one-out, hand-placed"
# 90 random points (x, y in 0..40, 6 classes; some d2 tie): leave-one-out, then a gallery of two
# streams (the first 50 and the last 40) with --exclude-id: the same pairs, the same numbers
awk 'BEGIN { srand(11); for (i = 0; i < 90; i++) printf "%d %d %d %d\n", int(rand() * 41), int(rand() * 41), int(rand() * 6), 500 + i }' >"$T/r.xy"
mkxy <"$T/r.xy" >"$T/r90"
head -n 50 "$T/r.xy" | mkxy >"$T/r90a"
tail -n 40 "$T/r.xy" | mkxy >"$T/r90b"
"$BIN/retrieve" --global --json "$T/jg2" "$T/r90" >"$T/rg2" || fail "--global on 90 points"
pairs_ap "$T/r.xy" "$T/r.xy" loo >"$T/ja2"
same_global "$T/jg2" "$T/ja2" "leave-one-out, 90 points"
"$BIN/retrieve" --global -g "$T/r90a" -g "$T/r90b" --exclude-id --json "$T/jg3" "$T/r90" >"$T/rg3" ||
    fail "two galleries --exclude-id"
sed 's/"mode": "gallery"/"mode": "leave-one-out"/' "$T/jg3" | cmp -s - "$T/jg2" ||
    fail "two galleries with --exclude-id differ from leave-one-out: $(cat "$T/jg3") / $(cat "$T/jg2")"
"$FIX" cols $COLS <"$T/rg2" >"$T/c2" 2>/dev/null
"$FIX" cols $COLS <"$T/rg3" 2>/dev/null | cmp -s - "$T/c2" || fail "two galleries: other records than leave-one-out"
"$BIN/tshow" -q "$T/rg3" | grep -q "\"retrieval_gallery\": \"$T/r90a,$T/r90b\", \"gallery_n\": 90, \"gallery_part_n\": {\"dtype\": \"int64\", \"shape\": \[2\], \"count\": 2, \"values\": \[50, 40\]}" ||
    fail "meta of two galleries: $("$BIN/tshow" -q "$T/rg3" | grep -o '"retrieval_gallery[^}]*}')"
"$BIN/tshow" -q "$T/r1" | grep -q gallery_part_n && fail "gallery_part_n without a gallery"
# a few queries against the 90 plus 20 distractors of a class no query has (a third stream)
awk 'BEGIN { srand(12); for (i = 0; i < 20; i++) printf "%d %d 9 %d\n", int(rand() * 41), int(rand() * 41), 900 + i }' >"$T/d.xy"
mkxy <"$T/d.xy" >"$T/d20"
head -n 7 "$T/r.xy" | awk '{ print $2, $1, $3, $4 + 1000 }' >"$T/q.xy"
mkxy <"$T/q.xy" >"$T/q7"
cat "$T/r.xy" "$T/d.xy" >"$T/rd.xy"
"$BIN/retrieve" -k 1 --global -g "$T/r90a" -g "$T/r90b" -g "$T/d20" --json "$T/jg4" "$T/q7" >/dev/null ||
    fail "three galleries"
pairs_ap "$T/q.xy" "$T/rd.xy" none >"$T/ja4"
same_global "$T/jg4" "$T/ja4" "7 queries x (90 + 20 distractors)"
grep -q '"gallery": 110' "$T/jg4" || fail "three galleries: $(cat "$T/jg4")"
"$BIN/retrieve" -k 1 --global -g "$T/r90a" -g "$T/r90b" --json "$T/jg5" "$T/q7" >/dev/null
check_lt "$(json_get global_pr_auc <"$T/jg4")" "$(json_get global_pr_auc <"$T/jg5")" "distractors did not lower the PR-AUC"
# the key's truncation (lib/measures/retrieval.h): a query at the origin, d2 65535 (class 1), 65536 (class 0)
# and 65538 (class 1) in one bin [65536, 65540), 65540 (class 0) in the next: blocks E | A B | C,
# global_ap (1/3 + 2/4) / 2 = 5/12, PR-AUC 1/2 (0 + 1/3) / 2 + 1/2 (1/3 + 1/2) / 2 = 7/24, while
# the exact d2 (apcurve) rank A alone: ap (1/2 + 2/4) / 2 = 0.5
m4() { "$FIX" table embeddings mu:float32:1x4 class:int32 id:int64; }
echo '0 0 0 0 0 1' | m4 >"$T/o"
printf '255 22 5 1 1 11\n256 0 0 0 0 12\n256 1 1 0 1 13\n256 2 0 0 0 14\n' | m4 >"$T/ABC"
"$BIN/retrieve" -k 1 --global --global-tsv "$T/trunc.tsv" -g "$T/ABC" --json "$T/jt" "$T/o" >/dev/null || fail "truncation case"
grep -q '"map": 0.5, "mrr": [^}]*"global_pr_auc": 0.2916666667, "global_ap": 0.4166666667, "global_pairs": 4, "global_positives": 2' "$T/jt" ||
    fail "truncation: $(cat "$T/jt")"
printf 'recall\tprecision\tthreshold\n0\t0\t65535.9961\n0.5\t0.333333333\t65539.9922\n1\t0.5\t65543.9922\n' |
    cmp -s - "$T/trunc.tsv" || fail "truncation tsv: $(cat "$T/trunc.tsv")"
# the curve of a long run: at most 1000 points plus the header, from the first to recall 1; its
# trapezoids near the PR-AUC
"$BIN/retrieve" --global-tsv "$T/g.tsv" --json "$T/jg6" "$T/e" >"$T/rg6" || fail "--global-tsv"
n=$(wc -l <"$T/g.tsv")
[ "$n" -gt 500 ] && [ "$n" -le 1001 ] || fail "--global-tsv: $n lines"
auc=$(json_get global_pr_auc <"$T/jg6")
awk -v a="$auc" 'NR == 2 { r0 = 0; p0 = $2 } NR > 1 { s += ($1 - r0) * ($2 + p0) / 2; r0 = $1; p0 = $2 }
    END { exit !(r0 == 1 && (s - a) ^ 2 < 1e-6 && a > 0.5) }' "$T/g.tsv" || fail "--global-tsv curve against $auc"
grep -q '"global_pairs": 2248500, "global_positives": 223500' "$T/jg6" || fail "1500 x 1499 pairs: $(cat "$T/jg6")"
# the records and the other numbers do not change; --summary gives the line back; threads, bytes
"$FIX" cols $COLS <"$T/rg6" | cmp -s - "$T/c1" || fail "--global changed the records"
[ "$(json_get map <"$T/jg6")" = "$map" ] || fail "--global changed map"
"$BIN/retrieve" --summary "$T/rg6" | cmp -s - "$T/jg6" || fail "--summary with --global: $("$BIN/retrieve" --summary "$T/rg6")"
cp "$T/g.tsv" "$T/g.tsv1"
cp "$T/jg6" "$T/jg6a"
"$BIN/retrieve" --global-tsv "$T/g.tsv" --json "$T/jg6" "$T/e" | cmp -s - "$T/rg6" || fail "--global: same input, other bytes"
cmp -s "$T/g.tsv" "$T/g.tsv1" && cmp -s "$T/jg6" "$T/jg6a" || fail "--global: same input, other files"
"$BIN/retrieve" -t 2 --global-tsv "$T/g.tsv2" --json "$T/jg6b" "$T/e" >/dev/null || fail "--global -t 2"
cmp -s "$T/jg6" "$T/jg6b" && cmp -s "$T/g.tsv" "$T/g.tsv2" || fail "--global -t 2 differs"
"$BIN/retrieve" --clean 20 --global --json "$T/jg7" "$T/e" >/dev/null || fail "--global --clean"
[ "$(json_get global_pr_auc <"$T/jg7")" = "$auc" ] || fail "--clean changed the global numbers"
CF_SUFFIX=.tsv check_out_file "$BIN/retrieve" -k 1 --global-tsv @FILE@ "$T/tie"

# --- the summary and the stream, all or nothing
check_out_file "$BIN/retrieve" -k 1,2 --json @FILE@ "$T/tie"
"$BIN/retrieve" --json /dev/full "$T/e" >"$T/full.hs" 2>"$T/err" && fail "retrieve --json /dev/full succeeded"
grep -q 'cannot write /dev/full' "$T/err" || fail "--json /dev/full: $(cat "$T/err")"
"$BIN/tshow" -q "$T/full.hs" >/dev/null 2>&1 && fail "--json /dev/full left a whole stream on stdout"

# --- bad input
"$FIX" table embeddings mu:float32:1x2 class:int32 id:int64 </dev/null >"$T/empty"
expect_fail 1 'no records' "$BIN/retrieve" "$T/empty"
expect_fail 1 'no records' "$BIN/retrieve" -g "$T/empty" "$T/e"
head -c 5000 "$T/e" >"$T/trunc"
expect_fail 1 'truncated' "$BIN/retrieve" "$T/trunc"
expect_fail 1 "expected a stream of kind 'embeddings'" "$BIN/retrieve" "$T/r1"
"$FIX" emb -n 30 -D 3 >"$T/d3"
expect_fail 1 'the gallery has 3 dimensions, the queries 2' "$BIN/retrieve" -g "$T/d3" "$T/e"
printf '0 0 5\n1 1 6\n' | "$FIX" table embeddings mu:float32:1x2 id:int64 >"$T/nocls"
expect_fail 1 "no 'class' field" "$BIN/retrieve" -k 1 -g "$T/nocls" "$T/tie"
expect_fail 1 "no 'class' field" "$BIN/retrieve" -k 1 "$T/nocls"
printf '0 0 0 1\n1 1 1 2\n' | "$FIX" table embeddings mu:float32:1x2 class:int32 id:int64 >"$T/single"
expect_fail 1 'Recall@8 needs at least 8 gallery items, the gallery has 2' "$BIN/retrieve" -g "$T/single" "$T/e"
expect_fail 1 'no query has a positive' "$BIN/retrieve" -k 1 "$T/single"
awk 'BEGIN { for (i = 0; i < 20; i++) printf "%d %d %d %d\n", i % 5, i % 3, i % 2, 1000 + i }' >"$T/ok.txt"
mk() { "$FIX" table embeddings mu:float32:1x2 class:int32 id:int64; }
{ cat "$T/ok.txt"; echo 'inf 0 0 1020'; } | mk >"$T/inf"
expect_fail 1 'record 20: mean inf is not finite' "$BIN/retrieve" "$T/inf"
{ cat "$T/ok.txt"; echo 'nan 0 0 1020'; } | mk >"$T/nan"
expect_fail 1 'record 20: mean nan is not finite' "$BIN/retrieve" -g "$T/nan" "$T/tie"
{ cat "$T/ok.txt"; echo '1e20 0 0 1020'; } | mk >"$T/huge"
expect_fail 1 'query 20: squared norm 1e+40 is too large for float32 distances' "$BIN/retrieve" "$T/huge"
{ cat "$T/ok.txt"; echo '0 0 0 1000'; } | mk >"$T/dup"
expect_fail 1 'id 1000 appears twice' "$BIN/retrieve" -g "$T/dup" --exclude-id "$T/e"

# bad input over several galleries: the culprit is named; nothing on stdout
expect_fail 1 "$T/d3: the gallery has 3 dimensions, the queries 2" "$BIN/retrieve" -g "$T/e" -g "$T/d3" "$T/e"
expect_fail 1 "$T/nocls: no 'class' field" "$BIN/retrieve" -k 1 --global -g "$T/r90a" -g "$T/nocls" "$T/tie"
printf '0 0 5\n1 1 6\n' | "$FIX" table embeddings mu:float32:1x2 class:int32 >"$T/noid"
expect_fail 1 "$T/noid: no 'id' field" "$BIN/retrieve" -k 1 --exclude-id -g "$T/r90a" -g "$T/noid" "$T/tie"
expect_fail 1 'id 500 appears twice' "$BIN/retrieve" -k 1 --exclude-id -g "$T/r90a" -g "$T/r90" "$T/tie"
expect_fail 1 "no 'eta' field" "$BIN/retrieve" --clean 20 -g "$T/eta" -g "$T/e" "$T/e"
# an eta that is not finite (issue 19: it gave a NaN eta_ap_pearson): an error naming the record
{ cat "$T/ok.txt"; echo '0 0 0 1020 nan'; } | sed '1,20s/$/ 0.5/' |
    "$FIX" table eta mu:float32:1x2 class:int32 id:int64 eta:float32 >"$T/naneta" || fail "fixture"
expect_fail 1 'record 20: eta nan is not finite' "$BIN/retrieve" -k 1 "$T/naneta"
expect_fail 1 'record 20: eta nan is not finite' "$BIN/retrieve" -k 1 -g "$T/naneta" "$T/tie"

# --- --summary checks what it averages (issue 19): each metric a finite number in [0, 1], p1 and
# recall 0 or 1, eta finite; a bad value is named with its record. r60: 60 embeddings, -k 1,2.
"$FIX" emb -n 60 >"$T/e60" || fail "fixture"
"$BIN/retrieve" -k 1,2 "$T/e60" >"$T/r60" 2>/dev/null || fail "retrieve on 60"
"$BIN/retrieve" --summary "$T/r60" >/dev/null || fail "--summary on a good stream"
# spoil FIELD VALUE: record 3's FIELD (every element of it) set to VALUE, into $T/bad
spoil() {
    /usr/bin/python3 - "$T/r60" "$T/bad" "$1" "$2" <<'EOF' || fail "python3 could not spoil the stream"
import sys, msgpack, numpy as np
src, dst, field, value = sys.argv[1:5]
with open(src, "rb") as f:
    objs = list(msgpack.Unpacker(f, raw=False))
t = objs[1 + 3][field]
a = np.frombuffer(t["data"], dtype=np.dtype(t["dtype"]).newbyteorder("<")).copy()
a[...] = float(value)
t["data"] = a.tobytes()
with open(dst, "wb") as f:
    for o in objs:
        f.write(msgpack.packb(o))
EOF
}
for case in 'ap 2' 'ap -0.5' 'ap nan' 'rprec -3' 'rprec inf' 'map_r nan' 'map_r 1.5' 'p1 9' 'p1 2' 'recall 3' 'eta nan' 'eta -inf'; do
    set -- $case
    spoil "$1" "$2"
    expect_fail 1 "record 3: $1 " "$BIN/retrieve" --summary "$T/bad"
    grep -qF -- "$2" "$T/err" || fail "--summary on $1 $2: the value is not named: $(cat "$T/err")"
    [ "$(wc -l <"$T/err")" = 1 ] || fail "--summary on $1 $2: not one line: $(cat "$T/err")"
done
# the bounds themselves are fine
spoil ap 0 && "$BIN/retrieve" --summary "$T/bad" >/dev/null || fail "--summary refused ap 0"
spoil rprec 1 && "$BIN/retrieve" --summary "$T/bad" >/dev/null || fail "--summary refused rprec 1"

# --- misuse
expect_fail 2 "for help" "$BIN/retrieve" -k 0 "$T/e"
expect_fail 2 "for help" "$BIN/retrieve" -k 2,1 "$T/e"
expect_fail 2 "for help" "$BIN/retrieve" -k 1,,x "$T/e"
# a k list with an empty element (issue 19: '1,' was read as 1), a non-number, zero, a repeat
for k in 1, ,1 1,,2 , '' 1,2, 1,x 1,0 1,1 1,2,2 '1 ,2'; do
    expect_fail 2 "for help" "$BIN/retrieve" -k "$k" "$T/e"
    [ "$(grep -vc 'for help' "$T/err")" = 1 ] || fail "-k '$k': not one line and the hint: $(cat "$T/err")"
done
expect_fail 2 "for help" "$BIN/retrieve" -k 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17 "$T/e"
expect_fail 2 "for help" "$BIN/retrieve" --clean 0 "$T/e"
expect_fail 2 "for help" "$BIN/retrieve" --clean 100 "$T/e"
expect_fail 2 "for help" "$BIN/retrieve" --clean 20 --clean-draws 0 "$T/e"
expect_fail 2 "for help" "$BIN/retrieve" --clean 20 --clean-draws 31 "$T/e"
expect_fail 2 "for help" "$BIN/retrieve" --clean-draws 3 "$T/e"
expect_fail 2 "for help" "$BIN/retrieve" -S 3 "$T/e"
expect_fail 2 "for help" "$BIN/retrieve" --exclude-id "$T/e"
expect_fail 2 "for help" "$BIN/retrieve" -t 0 "$T/e"
expect_fail 2 "for help" "$BIN/retrieve" --bogus "$T/e"
expect_fail 2 "for help" "$BIN/retrieve" "$T/e" "$T/e"
expect_fail 2 "for help" "$BIN/retrieve" --summary -k 1 "$T/r1"
expect_fail 2 "for help" "$BIN/retrieve" --summary --clean 20 "$T/r1"
expect_fail 2 "for help" "$BIN/retrieve" --summary -g "$T/e" "$T/r1"
expect_fail 2 "for help" "$BIN/retrieve" --summary --global "$T/r1"
expect_fail 2 "for help" "$BIN/retrieve" --summary --global-tsv "$T/x.tsv" "$T/r1"
expect_fail 1 "expected a stream of kind 'retrieval'" "$BIN/retrieve" --summary "$T/e"
"$BIN/retrieve" -h | grep -q '^usage: retrieve' || fail "-h"
echo "retrieve: ok"
