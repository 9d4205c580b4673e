#!/bin/sh
# centroids: class centroids and the appendix D ordering statistics, on a hand-made 1-D set.
. "$(dirname "$0")/../lib.sh"
FIX=$BIN/../tests/test_evalfix
# 1-D means, two components each (a centroid is the mean over images of the component mean):
# class -> centroid: 12 -> 0, 13 -> 1, 23 -> 2, 45 -> 3, 46 -> 4, 99 -> 5 (input order scrambled)
cat > "$T/in.txt" <<'X'
45 2.5 3.5
12 -1 0
99 5 5
13 1 1
12 0.5 0.5
23 2 2
46 4 4
X
"$FIX" table embeddings class:int32 mu:float32:2x1 -m digits=2 < "$T/in.txt" > "$T/e.hs" || fail "fixture"
centroids "$T/e.hs" > "$T/c.tsv" || fail "centroids"
grep -q '^12	2	0$' "$T/c.tsv" || fail "class 12 centroid: $(grep '^12' "$T/c.tsv")"
grep -q '^45	1	3$' "$T/c.tsv" || fail "class 45 centroid"
# sorted: 12 13 23 45 46 99. Adjacent pairs sharing a digit at the same position:
# (12,13) tens 1, (13,23) ones 3, (45,46) tens 4 -> 3 of 5; runs [12 13 23] and [45 46] -> 2 runs,
# mean run 5 / 2 = 2.5 classes
centroids --order "$T/e.hs" > "$T/o.txt" || fail "centroids --order"
grep -qx 'order 12 13 23 45 46 99' "$T/o.txt" || fail "order: $(head -1 "$T/o.txt")"
grep -q '^shared_pairs 3 ' "$T/o.txt" || fail "shared pairs: $(cat "$T/o.txt")"
grep -qx 'runs 2' "$T/o.txt" || fail "runs"
grep -qx 'mean_run 2.50' "$T/o.txt" || fail "mean run"
centroids --order --json - "$T/e.hs" "$T/e.hs" | grep -q '"classes": 6, "shared_pairs": 3, "runs": 2, "mean_run": 2.5000' || fail "json of two files"
# --var: per class and dimension, the mean over images of the variance (a mixture's by its
# moments: mean component variance + variance of the component means). Class 7, two images of
# 2 components in 2-D: image 1 means (0, 0) and (2, 0), variances 1 and 3 in dim 0, 0.5 and 0.5 in
# dim 1 -> v = (2 + 1, 0.5 + 0) = (3, 0.5); image 2 means equal, variances (1, 1) and (1, 1) ->
# (1, 1). Class 7: var = (2, 0.75). Class 8, one image: (0.25, 4) -> (0.25, 4).
cat > "$T/v.txt" <<'X'
7 0 0 2 0 1 0.5 3 0.5
7 1 1 1 1 1 1 1 1
8 5 5 5 5 0.25 4 0.25 4
X
"$FIX" table embeddings class:int32 mu:float32:2x2 var:float32:2x2 -m digits=2 < "$T/v.txt" > "$T/v.hs" || fail "fixture var"
centroids --var "$T/v.hs" > "$T/v.tsv" || fail "centroids --var"
grep -q '^class	n	centroid\[0\]	centroid\[1\]	var\[0\]	var\[1\]$' "$T/v.tsv" || fail "--var header: $(head -1 "$T/v.tsv")"
grep -q '^7	2	1	0.5	2	0.75$' "$T/v.tsv" || fail "class 7 with --var: $(grep '^7' "$T/v.tsv")"
grep -q '^8	1	5	5	0.25	4$' "$T/v.tsv" || fail "class 8 with --var: $(grep '^8' "$T/v.tsv")"
expect_exit 1 "--var on point embeddings" centroids --var "$T/e.hs"
expect_exit 2 "--var with --order" centroids --var --order "$T/v.hs"
expect_exit 2 "nonsense option" centroids --bogus
# --json is the JSON form of --order: alone it would be silently ignored
expect_exit 2 "--json without --order" centroids --json - "$T/e.hs"
expect_exit 1 "wrong kind" sh -c "mkdigits -N 2 -s test-seen -n 200 | centroids"
head -c 100 "$T/e.hs" > "$T/cut.hs"
expect_exit 1 "truncated stream" centroids "$T/cut.hs"
# the shape of mu and var (issue 19, defect 5: [0, D], [C, 0] and 1-D printed zeros, exit 0): the
# one check of lib/evaluation/match.h (match_check_header) names what it found; and class must be a scalar
shape() { printf '7 0.5 0.5 0.5 0.5\n8 0.5 0.5 0.5 0.5\n' | "$FIX" table embeddings class:int32 "$@" -m digits=2; }
shape mu:float32:0x4 >"$T/c0.hs"
shape mu:float32:2x0 >"$T/d0.hs"
shape mu:float32:4 >"$T/m1.hs"
shape mu:float32:1x2 var:float32:2x1 >"$T/vbad.hs"
expect_fail 1 "c0.hs: field 'mu' is float32 [0, 4], expected float32 [C, D] with C >= 1 and D >= 1" centroids "$T/c0.hs"
expect_fail 1 "d0.hs: field 'mu' is float32 [2, 0], expected float32 [C, D]" centroids "$T/d0.hs"
expect_fail 1 "m1.hs: field 'mu' is float32 [4], expected float32 [C, D]" centroids --order "$T/m1.hs"
expect_fail 1 "vbad.hs: field 'var' is float32 [2, 1], expected float32 [1, 2] (the shape of 'mu')" centroids --var "$T/vbad.hs"
expect_fail 1 "m1.hs: field 'mu' is float32 [4]" centroids "$T/e.hs" "$T/m1.hs"
printf '7 7 0.5 0.5\n' | "$FIX" table embeddings class:int32:2 mu:float32:1x2 >"$T/cls2.hs"
expect_fail 1 "cls2.hs: field 'class' is int32 [2], expected int32 [] (one value per record)" centroids "$T/cls2.hs"
pass
