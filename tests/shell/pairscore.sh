#!/bin/sh
# pairscore: closed form on hand-placed points, Monte Carlo on the synthetic fixture of
# tests/unit/test_evalfix.c, pair invariants, --self, determinism, and bad input.
. "$(dirname "$0")/../lib.sh"
FIX=$BIN/../tests/test_evalfix
[ -x "$FIX" ] || fail "$FIX is not built"

# --- closed form. Points (0,0) id 10 class 0, (3,4) id 11 class 0, (0,1) id 12 class 1; a 2, b 1:
# p(10,11) = sigmoid(-2*5 + 1) = 1.2339458e-4, p(10,12) = sigmoid(-1) = 0.26894142,
# p(11,11) = sigmoid(1) = 0.73105858; eta = 1 - sigmoid(1) = 0.26894142 for every point.
printf '0 0 0 10\n3 4 0 11\n0 1 1 12\n' |
    "$FIX" table embeddings mu:float32:1x2 class:int32 id:int64 -m match_a=2.0 -m match_b=1.0 >"$T/pts"
printf '# id id\n10 11\n10 12   # a comment\n\n11 11\n' >"$T/pairs"
"$BIN/pairscore" --pairs "$T/pairs" "$T/pts" >"$T/ps" || fail "pairscore --pairs exited $?"
"$FIX" cols i j id1 id2 class1 class2 match p eta1 eta2 eta <"$T/ps" >"$T/c" || fail "cols"
awk 'NR == 1 { if ($0 != "kind pairscores") exit 1; next }
     function off(x, y) { return (x - y > 1e-7 || y - x > 1e-7) }
     { want = NR == 2 ? 1.2339458e-4 : NR == 3 ? 0.26894142 : 0.73105858
       if (off($8, want) || off($9, 0.26894142) || off($11, 0.26894142)) exit 1 }
     END { if (NR != 4) exit 1 }' "$T/c" || fail "closed form: $(cat "$T/c")"
awk 'NR == 3 && !($1 == 0 && $2 == 2 && $3 == 10 && $4 == 12 && $7 == 0) { exit 1 }' "$T/c" ||
    fail "pair 2 fields: $(sed -n 3p "$T/c")"

# --- --score l2 and cosine: minus the Euclidean distance, and the cosine, of the means (no a, b:
# the header's are not read). Points (3,4) id 10 class 0, (6,8) 11 class 0, (8,-6) 12 class 1,
# (-6,-7) 13 class 1, with a variance (ignored). Pairs, by hand:
#   10 11 match     d = |(3,4)| = 5                neg_l2 -5           cos 1
#   10 12 no        d = |(5,-10)| = sqrt 125        neg_l2 -11.1803399  cos (24 - 24) / 50 = 0
#   10 13 no        d = |(9,11)| = sqrt 202         neg_l2 -14.2126704  cos (-18 - 28) / (5 sqrt 85) = -0.9978801
#   12 13 match     d = |(14,1)| = sqrt 197         neg_l2 -14.0356688  cos (-48 + 42) / (10 sqrt 85) = -0.0650791
# Both rank match, no, match, no: AP = (1 + 2/3) / 2 = 0.833333. Points (1,0) id 20 class 2,
# (10,0) 21 class 2, (0,1) 22 class 3: the match 20 21 is far (d 9) but aligned (cos 1), the
# non-match 20 22 near (d sqrt 2) but orthogonal (cos 0): AP 1/2 by L2, 1 by cosine.
printf '3 4 1 1 0 10\n6 8 1 1 0 11\n8 -6 1 1 1 12\n-6 -7 1 1 1 13\n1 0 1 1 2 20\n10 0 1 1 2 21\n0 1 1 1 3 22\n0 0 1 1 4 40\n' |
    "$FIX" table embeddings mu:float32:1x2 var:float32:1x2 class:int32 id:int64 >"$T/sc" || fail "score fixture"
printf '10 11\n10 12\n10 13\n12 13\n' >"$T/sc.pairs"
printf '20 21\n20 22\n' >"$T/sc.ap"
for sc in l2 cosine; do
    f=neg_l2
    [ $sc = cosine ] && f=cos
    "$BIN/pairscore" --score $sc --pairs "$T/sc.pairs" --json "$T/sc.json" "$T/sc" >"$T/sc.$sc" || fail "--score $sc exited $?"
    "$FIX" cols id1 id2 match $f <"$T/sc.$sc" | sed 1d >"$T/sc.$sc.c" || fail "cols $sc"
    [ "$("$FIX" cols p <"$T/sc.$sc" 2>/dev/null)" ] && fail "--score $sc wrote a p field"
    tshow -H "$T/sc.$sc" | grep -q "\"scorer\": \"$sc\"" || fail "--score $sc: no meta scorer $sc"
    grep -q "\"scorer\": \"$sc\"" "$T/sc.json" && grep -q "\"mean_${f}_match\"" "$T/sc.json" || fail "--score $sc json: $(cat "$T/sc.json")"
    "$BIN/apcurve" --json - "$T/sc.$sc" >"$T/sc.apj" || fail "apcurve of --score $sc"
    grep -q "\"ap\": 0.8333333333" "$T/sc.apj" && grep -q "\"score\": \"$f\"" "$T/sc.apj" || fail "apcurve --score $sc: $(cat "$T/sc.apj")"
done
awk 'function off(x, y) { return x - y > 1e-6 || y - x > 1e-6 }
     { want = NR == 1 ? -5 : NR == 2 ? -11.1803399 : NR == 3 ? -14.2126704 : -14.0356688
       if (off($4, want) || $3 != (NR == 1 || NR == 4)) exit 1 } END { if (NR != 4) exit 1 }' "$T/sc.l2.c" ||
    fail "--score l2 by hand: $(cat "$T/sc.l2.c")"
awk 'function off(x, y) { return x - y > 1e-6 || y - x > 1e-6 }
     { want = NR == 1 ? 1 : NR == 2 ? 0 : NR == 3 ? -0.9978801 : -0.0650791
       if (off($4, want)) exit 1 } END { if (NR != 4) exit 1 }' "$T/sc.cosine.c" ||
    fail "--score cosine by hand: $(cat "$T/sc.cosine.c")"
"$BIN/pairscore" --score l2 --pairs "$T/sc.ap" "$T/sc" | "$BIN/apcurve" | grep -qx 'ap 0.500000' || fail "AP by L2 of the far match"
"$BIN/pairscore" --score cosine --pairs "$T/sc.ap" "$T/sc" | "$BIN/apcurve" | grep -qx 'ap 1.000000' || fail "AP by cosine of the far match"
# a mixture's mean is the average of its components (knn -d mean): (1,0), (3,0) is (2,0) and
# (0,1), (0,3) is (0,2): d = sqrt 8 = 2.8284271, cos 0
printf '1 0 3 0 0 50\n0 1 0 3 1 51\n' | "$FIX" table embeddings mu:float32:2x2 class:int32 id:int64 >"$T/scm"
"$BIN/pairscore" --score l2 --pairs "$T/sc.ap" "$T/scm" 2>/dev/null && fail "--pairs of ids the set lacks"
printf '50 51\n' >"$T/scm.pairs"
"$BIN/pairscore" --score l2 --pairs "$T/scm.pairs" "$T/scm" | "$FIX" cols neg_l2 | sed 1d |
    awk '{ exit !($1 + 2.8284271 < 1e-6 && $1 + 2.8284271 > -1e-6) }' || fail "--score l2 of mixtures"
"$BIN/pairscore" --score cosine --pairs "$T/scm.pairs" "$T/scm" | "$FIX" cols cos | sed 1d |
    awk '{ exit !($1 < 1e-7 && $1 > -1e-7) }' || fail "--score cosine of mixtures"
# -g: every cross pair scored from its two records' means
"$BIN/pairscore" --score l2 -n 200 -S 3 -g "$T/sc" "$T/sc" | "$FIX" cols i j neg_l2 | sed 1d >"$T/scg" || fail "--score l2 -g"
awk 'NR == FNR { x[NR - 1] = $1; y[NR - 1] = $2; next }
     { d = sqrt((x[$1] - x[$2]) ^ 2 + (y[$1] - y[$2]) ^ 2); if ($3 + d > 1e-5 || $3 + d < -1e-5) exit 1; n++ }
     END { exit n != 200 }' - "$T/scg" <<'EOF2' || fail "--score l2 -g: a pair's score is not its means' distance"
3 4
6 8
8 -6
-6 -7
1 0
10 0
0 1
0 0
EOF2
# a zero mean has no direction: one line naming the record (the L2 distance takes it)
"$BIN/pairscore" --score l2 -n 50 "$T/sc" >/dev/null || fail "--score l2 of a zero mean"
expect_fail 1 "record 7: its mean is zero: --score cosine needs a direction" "$BIN/pairscore" --score cosine -n 50 "$T/sc"
expect_fail 2 "--score cosine scores pairs exactly, with nothing to sample: drop --self" "$BIN/pairscore" --score cosine --self "$T/sc"
expect_fail 2 "--score l2 scores pairs exactly, with nothing to sample: drop -K" "$BIN/pairscore" --score l2 -K 4 "$T/sc"
expect_fail 2 "--score: 'hamming' is none of p, mls (elk), l2, cosine, w2, csd, kl, bhatt" "$BIN/pairscore" --score hamming "$T/sc"

# --- Monte Carlo on the fixture (200 images, 10 classes, var 0.0225 or 2.25)
"$FIX" emb -n 200 >"$T/e" || fail "fixture"
"$BIN/pairscore" -n 600 --json "$T/json" "$T/e" >"$T/p1" || fail "pairscore exited $?"
"$FIX" cols i j id1 id2 class1 class2 match p eta1 eta2 eta <"$T/p1" >"$T/c1"
# invariants: 600 pairs, even pair numbers match, match = (class1 == class2), i != j, id = 1000 + i,
# 0 <= p <= 1, eta = mean of eta1 and eta2, eta1 >= 1 - sigmoid(1) - MC noise
awk 'NR == 1 { next }
     { n++; k = NR - 2
       if ($7 != (k % 2 == 0) || $7 != ($5 == $6) || $1 == $2 || $3 != 1000 + $1 || $4 != 1000 + $2) exit 1
       if ($8 < 0 || $8 > 1 || ($11 - ($9 + $10) / 2) ^ 2 > 1e-12 || $9 < 0.2) exit 1 }
     END { if (n != 600) exit 1 }' "$T/c1" || fail "pair invariants"
grep -q '"n": 600, "positives": 300' "$T/json" || fail "json summary: $(cat "$T/json")"
grep -q '"scorer": "monte-carlo", "K": 8' "$T/json" || fail "json scorer: $(cat "$T/json")"
# matching pairs score higher than non-matching ones on these well separated clusters
awk '/^kind/ { next } { s[$7] += $8; n[$7]++ } END { exit !(s[1] / n[1] > 0.3 && s[0] / n[0] < 0.05) }' "$T/c1" ||
    fail "match probabilities do not separate"
# same seed, same bytes; another seed, other pairs
"$BIN/pairscore" -n 600 --json "$T/json" "$T/e" | cmp -s - "$T/p1" || fail "same seed gave different bytes"
"$BIN/pairscore" -n 600 -S 715 <"$T/e" | "$FIX" cols i j p | cmp -s - "$T/c1" && fail "-S 715 changed nothing"
# --self: every input field plus eta, one record per image; eta of image i is the eta1 of pairs
# with i first (same seed, same index, same samples)
"$BIN/pairscore" --self "$T/e" >"$T/s" || fail "--self exited $?"
"$FIX" cols mu var class id occluded eta <"$T/s" >"$T/cs" || fail "--self lacks a field"
head -n 1 "$T/cs" | grep -qx 'kind eta' || fail "--self kind"
[ "$(wc -l <"$T/cs")" -eq 201 ] || fail "--self: not 200 records"
awk 'FNR == 1 { next } NR == FNR { eta[FNR - 2] = $NF; next } { if (($9 - eta[$1]) ^ 2 > 1e-14) exit 1 }' \
    "$T/cs" "$T/c1" || fail "--self eta differs from the pairs' eta1"
# occluded images (i mod 4 == 3) are the uncertain ones
awk 'FNR == 1 { next } { o = (FNR - 2) % 4 == 3; s[o] += $NF; n[o]++ }
     END { exit !(s[1] / n[1] > s[0] / n[0] + 0.2) }' "$T/cs" || fail "eta does not rise with variance"
# --self on an eta stream replaces eta (same numbers again)
"$FIX" cols eta <"$T/s" >"$T/ce"
"$BIN/pairscore" --self "$T/s" | "$FIX" cols eta | cmp -s - "$T/ce" || fail "--self on an eta stream"
# --means scores the means exactly: eta = 1 - sigmoid(1) everywhere
"$BIN/pairscore" --self --means "$T/e" | "$FIX" cols eta | awk 'NR > 1 && ($1 - 0.26894142) ^ 2 > 1e-14 { exit 1 }' ||
    fail "--means"
# mixtures: C = 2 needs K a multiple of 2
"$FIX" emb -n 40 -C 2 >"$T/e2"
"$BIN/pairscore" -n 20 -K 4 "$T/e2" >/dev/null || fail "C = 2, K = 4"
expect_fail 1 'not a multiple' "$BIN/pairscore" -n 20 -K 7 "$T/e2"

# --means on a mixture (issue 19, defect 12: the help said eta = 1 - sigmoid(b) for every image):
# eta = 1 - the mean over the C x C component pairs. C = 2, D = 1, means 0 and 1, a = 1, b = 0:
# pairs (0,0) (1,1) at distance 0, (0,1) (1,0) at 1: p = (2 sigmoid(0) + 2 sigmoid(-1)) / 4 =
# 0.3844707, eta 0.6155293; a mixture with equal means: 1 - sigmoid(0) = 0.5
printf '0 1 1 1 1 1\n0.5 0.5 1 1 2 2\n' |
    "$FIX" table embeddings mu:float32:2x1 var:float32:2x1 class:int32 id:int64 -m match_a=1.0 -m match_b=0 >"$T/mix"
"$BIN/pairscore" --self --means "$T/mix" | "$FIX" cols eta >"$T/mix.eta" || fail "--self --means on a mixture"
awk 'NR == 2 { a = $1 } NR == 3 { b = $1 } END { s = 1 / (1 + exp(1)); e = 1 - (1 + 2 * s) / 4
    exit !((a - e) ^ 2 < 1e-13 && (b - 0.5) ^ 2 < 1e-13) }' "$T/mix.eta" || fail "--means mixture eta: $(cat "$T/mix.eta")"
# and the manual says so, instead of "1 - sigmoid(b) for every image"
cp "$(dirname "$0")/../../man/pairscore.1.scd" "$T/help" || fail "no man/pairscore.1.scd"
grep -q "1 - sigmoid(b) for every image\.\?$" "$T/help" && fail "the manual still says eta = 1 - sigmoid(b) for every image"
tr '\n' ' ' <"$T/help" | tr -s ' ' | grep -q "any embeddings with --means: p exact, the mean over the C1 x C2 component pairs .* eta = 1 - the mean over the image's own C x C component pairs, so 1 - sigmoid(b) for every image only when C = 1" ||
    fail "the manual does not say what --means gives a mixture"

# --- huge means and variances: the means' and the noises' differences are kept apart (lib/evaluation/match.h),
# so a mean of 1e20 or 3e38 (float spacing 8.8e12 and 2e31) does not swallow a variance of 0.5:
# every eta equals that of the same embeddings at the origin; a variance of 3e38 gives eta ~ 1
# (the samples used to collapse onto the mean: eta = 1 - sigmoid(b) for all of them)
emb_table() { "$FIX" table embeddings mu:float32:1x2 var:float32:1x2 class:int32 id:int64 -m match_a=2.0 -m match_b=1.0; }
awk 'BEGIN { for (i = 0; i < 20; i++) print 0, 0, 0.5, 0.5, i % 2, 100 + i }' | emb_table >"$T/o0"
awk 'BEGIN { for (i = 0; i < 20; i++) print (i < 10 ? 1e20 : 3e38), -1e20, 0.5, 0.5, i % 2, 100 + i }' | emb_table >"$T/o20"
"$BIN/pairscore" --self "$T/o0" | "$FIX" cols eta >"$T/eta0" || fail "--self at the origin"
"$BIN/pairscore" --self "$T/o20" | "$FIX" cols eta >"$T/eta20" || fail "--self on huge means exited $?"
cmp -s "$T/eta0" "$T/eta20" || fail "huge means changed eta: $(paste "$T/eta0" "$T/eta20" | head -n 4)"
awk 'NR > 1 && !($1 > 0.4) { exit 1 }' "$T/eta20" || fail "huge means: eta collapsed to 1 - sigmoid(b)"
"$BIN/pairscore" -n 40 "$T/o0" | "$FIX" cols match p >"$T/p0"
"$BIN/pairscore" -n 40 "$T/o20" | "$FIX" cols match p >"$T/p20" || fail "pairs on huge means exited $?"
awk 'NR > 1 && !($2 >= 0 && $2 <= 1) { exit 1 }' "$T/p20" || fail "huge means: p out of [0, 1]"
awk 'BEGIN { for (i = 0; i < 20; i++) print 3e38, -3e38, 3e38, 3e38, i % 2, 100 + i }' | emb_table >"$T/v38"
"$BIN/pairscore" --self --json "$T/v38.json" "$T/v38" | "$FIX" cols eta >"$T/etav" || fail "--self on variances 3e38 exited $?"
awk 'NR > 1 && !($1 > 0.999 && $1 <= 1) { exit 1 }' "$T/etav" || fail "variance 3e38: eta $(sed -n 2p "$T/etav"), expected ~1"
check_lt 0.999 "$(json_get min_eta <"$T/v38.json")" "variance 3e38: json $(cat "$T/v38.json")"
"$BIN/pairscore" -n 40 "$T/v38" | "$FIX" cols p eta | awk 'NR > 1 && !($1 >= 0 && $1 <= 1 && $2 > 0.999) { exit 1 }' ||
    fail "variance 3e38: pairs"
# means and variances that are not finite are errors naming the record (--self reads records itself)
awk 'BEGIN { for (i = 0; i < 20; i++) print (i == 7 ? "nan" : 0), 0, 0.5, 0.5, i % 2, 100 + i }' | emb_table >"$T/nanm"
expect_fail 1 'record 7: mean nan is not finite' sh -c '"$BIN/pairscore" --self "$1" > /dev/null' sh "$T/nanm"
expect_fail 1 'record 7: mean nan is not finite' "$BIN/pairscore" -n 10 "$T/nanm"
awk 'BEGIN { for (i = 0; i < 20; i++) print 0, 0, 0.5, (i == 3 ? "inf" : 0.5), i % 2, 100 + i }' | emb_table >"$T/infv"
expect_fail 1 'record 3: variance inf is not a finite number' sh -c '"$BIN/pairscore" --self "$1" > /dev/null' sh "$T/infv"
expect_fail 1 'record 3: variance inf is not a finite number' "$BIN/pairscore" -n 10 "$T/infv"

# --- the summary and the stream, all or nothing: --json is opened before any work, synced before
# the stream's end marker and renamed into place after it
check_out_file "$BIN/pairscore" -n 50 --json @FILE@ "$T/e"
check_out_file "$BIN/pairscore" --self --json @FILE@ "$T/e"
for self in "" --self; do
    "$BIN/pairscore" $self --json /dev/full "$T/e" >"$T/full.hs" 2>"$T/err" && fail "pairscore $self --json /dev/full succeeded"
    grep -q 'cannot write /dev/full' "$T/err" || fail "pairscore $self --json /dev/full: $(cat "$T/err")"
    "$BIN/tshow" -q "$T/full.hs" >/dev/null 2>&1 && fail "pairscore $self --json /dev/full left a whole stream on stdout"
done

# --- -g OTHER: cross pairs, the first image from INPUT, the second from OTHER (issue 20, item 3).
# INPUT: id 10 (0,0) class 0, id 11 (3,4) class 0, id 12 (0,1) class 1; OTHER, their twins: id 10
# (0,0.5), id 11 (3,4), id 12 (0,2); a 2, b 1. Matching pairs never pair twins, so they are (10, 11)
# or (11, 10) and 12 never comes first (its class has no other id in OTHER); non-matching ones
# pair 10 or 11 with 12, or 12 with 10 or 11. p = sigmoid(-2 ||x_i - y_j|| + 1), e.g.
# p(12, 10') = sigmoid(-2 * 0.5 + 1) = 0.5; eta = 1 - sigmoid(1) for every point.
printf '0 0.5 0 10\n3 4 0 11\n0 2 1 12\n' |
    "$FIX" table embeddings mu:float32:1x2 class:int32 id:int64 -m match_a=2.0 -m match_b=1.0 >"$T/twin"
"$BIN/pairscore" -n 200 -g "$T/twin" --json "$T/gjson" "$T/pts" >"$T/g" || fail "pairscore -g exited $?"
"$FIX" cols i j id1 id2 class1 class2 match p eta1 eta2 eta <"$T/g" >"$T/cg" || fail "cols of -g"
awk 'BEGIN { split("0 3 0", x1); split("0 4 1", x2); split("0 3 0", y1); split("0.5 4 2", y2) }
     NR == 1 { if ($0 != "kind pairscores") exit 1; next }
     function off(u, v) { return (u - v > 1e-6 || v - u > 1e-6) }
     { k = NR - 2; i = $1 + 1; j = $2 + 1
       if ($7 != (k % 2 == 0) || $7 != ($5 == $6) || $3 != 10 + $1 || $4 != 10 + $2) exit 1
       if ($7 && $3 == $4) exit 1
       d = sqrt((x1[i] - y1[j]) ^ 2 + (x2[i] - y2[j]) ^ 2)
       if (off($8, 1 / (1 + exp(2 * d - 1))) || off($9, 0.26894142) || off($10, 0.26894142) || off($11, 0.26894142)) exit 1
       seen[$7 " " $3 " " $4]++ }
     END { if (NR != 201 || seen["1 12 12"] || seen["1 10 10"] || seen["1 11 11"]) exit 1
           # every allowed pair turns up in 200 draws
           if (!seen["1 10 11"] || !seen["1 11 10"] || !seen["0 10 12"] || !seen["0 11 12"] || !seen["0 12 10"] || !seen["0 12 11"]) exit 1 }' \
    "$T/cg" || fail "-g pairs: $(head -n 6 "$T/cg")"
grep -q '"n": 200, "positives": 100' "$T/gjson" || fail "-g json summary: $(cat "$T/gjson")"
"$BIN/pairscore" -n 200 -g "$T/twin" --json "$T/gjson" "$T/pts" | cmp -s - "$T/g" || fail "-g: same seed gave different bytes"
"$BIN/pairscore" -n 200 -g "$T/twin" -S 715 "$T/pts" | cmp -s - "$T/g" && fail "-g: -S 715 changed nothing"
# the stream is a pairscores stream like any other: apcurve and ktau read it
"$BIN/apcurve" --json - <"$T/g" >"$T/gap" || fail "apcurve on -g pairs"
# Monte Carlo: the fixture against itself as its own twin set, never a pair of equal ids; OTHER's
# images sample streams of their own, so eta2 of a first image's twin is another estimate of it
"$BIN/pairscore" -n 400 -g "$T/e" "$T/e" >"$T/ge" || fail "-g on stochastic embeddings"
"$FIX" cols match id1 id2 eta1 eta2 <"$T/ge" | awk 'NR > 1 && $1 == 1 && $2 == $3 { exit 1 }' || fail "-g paired twins"
"$BIN/ktau" --json - <"$T/ge" >/dev/null || fail "ktau on -g pairs"
# refusals, one line each: another D, var against none, another a, no a/b, -g with --self / --pairs
printf '0 0 0 0 10\n' | "$FIX" table embeddings mu:float32:1x3 class:int32 id:int64 -m match_a=2.0 -m match_b=1.0 >"$T/d3"
expect_fail 1 'C = 1, D = 3 without var, expected C = 1, D = 2 without var' "$BIN/pairscore" -g "$T/d3" "$T/pts"
expect_fail 1 'D = 2 with var, expected C = 1, D = 2 without var' "$BIN/pairscore" -g "$T/e" "$T/pts"
printf '0 0 0 10\n1 1 1 11\n' | "$FIX" table embeddings mu:float32:1x2 class:int32 id:int64 -m match_a=3.0 -m match_b=1.0 >"$T/a3"
expect_fail 1 'match_a = 3, match_b = 1, expected 2, 1' "$BIN/pairscore" -g "$T/a3" "$T/pts"
printf '0 0 0 10\n1 1 1 11\n' | "$FIX" table embeddings mu:float32:1x2 class:int32 id:int64 >"$T/noab2"
expect_fail 1 'noab2: no match_a / match_b' "$BIN/pairscore" -g "$T/noab2" "$T/pts"
printf '0 0 0 10\n1 1 0 11\n' | "$FIX" table embeddings mu:float32:1x2 class:int32 id:int64 -m match_a=2.0 -m match_b=1.0 >"$T/cls0"
printf '0 0 1 10\n1 1 1 11\n' | "$FIX" table embeddings mu:float32:1x2 class:int32 id:int64 -m match_a=2.0 -m match_b=1.0 >"$T/cls1"
expect_fail 1 'no matching pair' "$BIN/pairscore" -g "$T/cls1" "$T/cls0"
expect_fail 1 'no non-matching pair' "$BIN/pairscore" -g "$T/cls0" "$T/cls0"
expect_fail 2 "for help" "$BIN/pairscore" --self -g "$T/twin" "$T/pts"
expect_fail 2 "for help" "$BIN/pairscore" --pairs "$T/pairs" -g "$T/twin" "$T/pts"
expect_fail 2 "for help" "$BIN/pairscore" -g - </dev/null

# --- bad input: exit 1 with a message, nothing on stdout
"$FIX" emb -n 50 -p >"$T/pt"
expect_fail 1 '--mc needs stochastic embeddings' "$BIN/pairscore" --mc "$T/pt"
expect_fail 1 '-K needs stochastic embeddings' "$BIN/pairscore" -K 16 "$T/pt"
printf '1000 1001\n1002 99\n' >"$T/bad"
expect_fail 1 'pairs file line 2 names unknown id 99' "$BIN/pairscore" --pairs "$T/bad" "$T/pt"
printf '1000 x\n' >"$T/bad"
expect_fail 1 'pairs file line 1: expected two ids' "$BIN/pairscore" --pairs "$T/bad" "$T/pt"
"$FIX" table embeddings mu:float32:1x2 class:int32 id:int64 -m match_a=2.0 -m match_b=1.0 </dev/null >"$T/empty"
expect_fail 1 'no records' "$BIN/pairscore" "$T/empty"
expect_fail 1 'no records' "$BIN/pairscore" --self "$T/empty"
head -c 3000 "$T/e" >"$T/trunc"
expect_fail 1 'truncated' "$BIN/pairscore" "$T/trunc"
expect_fail 1 "expected a stream of kind 'embeddings'" "$BIN/pairscore" "$T/p1"
printf '0 0 0\n1 1 1\n' | "$FIX" table embeddings mu:float32:1x2 class:int32 >"$T/noab"
expect_fail 1 'match_a' "$BIN/pairscore" "$T/noab"
printf '0 0 0\n1 1 0\n' | "$FIX" table embeddings mu:float32:1x2 class:int32 -m match_a=1.0 -m match_b=0 >"$T/one"
expect_fail 1 'no non-matching pair' "$BIN/pairscore" "$T/one"
# --- the shape of the embeddings (issue 19, defect 5: C = 0 with var died of SIGFPE in match_prob,
# K / C): one check for every reader (lib/evaluation/match.h match_check_header), naming what it found
shape() { # SPEC...: two records of class 1 and 2, every value 0.5
    printf '0.5 0.5 0.5 0.5 1\n0.5 0.5 0.5 0.5 2\n' |
        "$FIX" table embeddings "$@" class:int32 -m match_a=1.0 -m match_b=0
}
shape mu:float32:0x8 var:float32:0x8 >"$T/c0v"
shape mu:float32:0x8 >"$T/c0"
shape mu:float32:2x0 >"$T/d0"
shape mu:float32:4 >"$T/m1"
shape mu:float32:1x2 var:float32:2x1 >"$T/vbad"
shape mu:float64:1x2 >"$T/m64"
for args in --self "" --means "--self --means"; do
    expect_fail 1 "c0v: field 'mu' is float32 [0, 8], expected float32 [C, D] with C >= 1 and D >= 1" "$BIN/pairscore" $args "$T/c0v"
    expect_fail 1 "c0: field 'mu' is float32 [0, 8], expected float32 [C, D] with C >= 1" "$BIN/pairscore" $args "$T/c0"
    expect_fail 1 "d0: field 'mu' is float32 [2, 0], expected float32 [C, D]" "$BIN/pairscore" $args "$T/d0"
    expect_fail 1 "m1: field 'mu' is float32 [4], expected float32 [C, D]" "$BIN/pairscore" $args "$T/m1"
    expect_fail 1 "vbad: field 'var' is float32 [2, 1], expected float32 [1, 2] (the shape of 'mu')" "$BIN/pairscore" $args "$T/vbad"
    expect_fail 1 "m64: field 'mu' is float64 [1, 2], expected float32 [C, D]" "$BIN/pairscore" $args "$T/m64"
done
# knn reads embeddings through the same check (match_set_read)
expect_fail 1 "c0v: field 'mu' is float32 [0, 8], expected float32 [C, D]" "$BIN/knn" "$T/c0v"
# --- misuse: exit 2, nothing on stdout
expect_fail 2 "for help" "$BIN/pairscore" -x "$T/e"
expect_fail 2 "for help" "$BIN/pairscore" -n 0 "$T/e"
expect_fail 2 "for help" "$BIN/pairscore" -K lots "$T/e"
expect_fail 2 "for help" "$BIN/pairscore" --mc --means "$T/e"
expect_fail 2 "for help" "$BIN/pairscore" --self --pairs "$T/pairs" "$T/e"
expect_fail 2 "for help" "$BIN/pairscore" "$T/e" "$T/e"
# options that would be silently ignored
expect_fail 2 "for help" "$BIN/pairscore" --self -n 5 "$T/e"
expect_fail 2 "for help" "$BIN/pairscore" --pairs "$T/pairs" -n 5 "$T/pts"
expect_fail 2 "for help" "$BIN/pairscore" --means -K 16 "$T/e"
"$BIN/pairscore" -h | grep -q '^usage: pairscore' || fail "-h"
echo "pairscore: ok"
