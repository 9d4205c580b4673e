#!/bin/sh
# knn: tie rules on hand-placed points, pass-through fields, eta from var (eta_source), leave-one-out
# versus gallery, threads, -d expected, determinism, and bad input. Fixtures: tests/unit/test_evalfix.c.
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

# --- a query's corrupt flag (fromnpz, occlude --corrupt) goes along, as occluded does: the tie
# points again, the ids 101, 103 and 107 flagged; with -g the flag is the query's, never the
# gallery's; retrieve the same (its records: the queries with a positive); knn's shards put back
# together keep it
awk '{ print $1, $2, $3, $4, $5, ($4 == 101 || $4 == 103 || $4 == 107) }' "$T/tie.txt" |
    "$FIX" table eta mu:float32:1x2 class:int32 id:int64 eta:float32 corrupt:uint8 >"$T/tiec" || fail "corrupt fixture"
"$BIN/knn" -k 4 "$T/tiec" >"$T/kc" || fail "knn with corrupt exited $?"
"$FIX" cols id corrupt <"$T/kc" | sed 1d | tr '\n' ' ' | grep -qx '100 0 101 1 102 0 103 1 104 0 105 0 106 0 107 1 ' ||
    fail "knn's corrupt: $("$FIX" cols id corrupt <"$T/kc")"
"$FIX" cols id class predicted correct recall neighbors nn_dist <"$T/kc" >"$T/kc.c" &&
    "$FIX" cols id class predicted correct recall neighbors nn_dist <"$T/k" | cmp -s - "$T/kc.c" || fail "the flag changed knn's answers"
awk '{ print $1, $2, $3, $4, $5, 0 }' "$T/tie.txt" | "$FIX" table eta mu:float32:1x2 class:int32 id:int64 eta:float32 corrupt:uint8 >"$T/tie0"
"$BIN/knn" -k 3 -g "$T/tie0" --exclude-id "$T/tiec" | "$FIX" cols id corrupt | sed 1d | tr '\n' ' ' |
    grep -qx '100 0 101 1 102 0 103 1 104 0 105 0 106 0 107 1 ' || fail "knn -g: not the query's corrupt"
"$BIN/knn" -k 3 -g "$T/tiec" --exclude-id "$T/tie0" | "$FIX" cols corrupt | sed 1d | sort -u | grep -qx 0 || fail "knn -g: the gallery's corrupt"
"$BIN/retrieve" -k 1 "$T/tiec" | "$FIX" cols id corrupt | sed 1d | tr '\n' ' ' |
    grep -qx '101 1 102 0 103 1 104 0 105 0 106 0 107 1 ' || fail "retrieve's corrupt: $("$BIN/retrieve" -k 1 "$T/tiec" | "$FIX" cols id corrupt)"
"$BIN/knn" -k 4 --queries 0:4 "$T/tiec" >"$T/kc0" && "$BIN/knn" -k 4 --queries 4:8 "$T/tiec" >"$T/kc1" || fail "knn --queries"
"$FIX" cols id corrupt <"$T/kc" >"$T/kc.ic" || fail "cols"
"$BIN/knn" --merge "$T/kc1" "$T/kc0" | "$FIX" cols id corrupt | cmp -s - "$T/kc.ic" || fail "knn --merge lost the corrupt flag"
printf '0 0 0 1 0.5 2\n' | "$FIX" table eta mu:float32:1x2 class:int32 id:int64 eta:float32 corrupt:int32 >"$T/tieb"
expect_fail 1 "field 'corrupt' is int32 [], expected uint8 []" "$BIN/knn" -k 1 -g "$T/tiec" "$T/tieb"

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

# --- eta: the input's eta; else, with var (stochastic embeddings), the mean of var over C x D;
# none for points. meta eta_source says which. By hand, C = 1, D = 2 (id: var -> eta):
#   100: .1 .3 -> .2 (float32 0.200000003)   101: .5 .5 -> .5   102: 1 3 -> 2   103: .25 .25 -> .25
#   104: 2 4 -> 3
eta_source() { "$BIN/tshow" -H "$1" | sed -n 's/.*"eta_source": "\([^"]*\)".*/\1/p'; }
cat >"$T/var.txt" <<'EOF2'
0 0 0 100 0.1 0.3 0.9
1 0 1 101 0.5 0.5 0.8
0 1 1 102 1 3 0.7
-1 0 0 103 0.25 0.25 0.6
0 -1 1 104 2 4 0.5
EOF2
cut -d' ' -f1-6 "$T/var.txt" | "$FIX" table embeddings mu:float32:1x2 class:int32 id:int64 var:float32:1x2 >"$T/var" ||
    fail "var fixture"
"$BIN/knn" -k 2 "$T/var" >"$T/kvar" || fail "knn on var exited $?"
"$FIX" cols id eta <"$T/kvar" | tail -n +2 | tr '\n' ' ' >"$T/cvar"
[ "$(cat "$T/cvar")" = "100 0.200000003 101 0.5 102 2 103 0.25 104 3 " ] || fail "eta from var: $(cat "$T/cvar")"
[ "$(eta_source "$T/kvar")" = var ] || fail "eta_source from var: '$(eta_source "$T/kvar")'"
# an eta in the input wins over var
"$FIX" table eta mu:float32:1x2 class:int32 id:int64 var:float32:1x2 eta:float32 <"$T/var.txt" >"$T/vareta" || fail "fixture"
"$BIN/knn" -k 2 "$T/vareta" >"$T/kve" || fail "knn on var + eta"
"$FIX" cols id eta <"$T/kve" | tail -n +2 | tr '\n' ' ' >"$T/cve"
[ "$(cat "$T/cve")" = "100 0.899999976 101 0.800000012 102 0.699999988 103 0.600000024 104 0.5 " ] ||
    fail "eta over var: $(cat "$T/cve")"
[ "$(eta_source "$T/kve")" = eta ] || fail "eta_source with an eta: '$(eta_source "$T/kve")'"
# mixtures: the mean over C x D = 2 x 2 (variances 1 2 3 6 -> 3; 0 0 0 2 -> 0.5)
printf '0 0 1 1 0 100 1 2 3 6\n1 1 2 2 1 101 0 0 0 2\n5 5 5 5 0 102 1 1 1 1\n' |
    "$FIX" table embeddings mu:float32:2x2 class:int32 id:int64 var:float32:2x2 | "$BIN/knn" -k 1 |
    "$FIX" cols eta | tail -n +2 | tr '\n' ' ' >"$T/cmix"
[ "$(cat "$T/cmix")" = "3 0.5 1 " ] || fail "eta of mixtures: $(cat "$T/cmix")"
# point embeddings: no eta, no eta_source; pairscore --self gives them one (eta_source eta)
"$BIN/knn" "$T/p" >"$T/kp" || fail "knn on points"
"$FIX" cols eta <"$T/kp" >/dev/null 2>&1 && fail "point embeddings got an eta"
[ -z "$(eta_source "$T/kp")" ] || fail "point embeddings got an eta_source"
"$BIN/pairscore" --self "$T/p" | "$BIN/knn" >"$T/kpe" || fail "knn on points with eta"
[ "$(eta_source "$T/kpe")" = eta ] || fail "eta_source from pairscore --self"
# the mean var reaches ktau directly (no pairscore --self): the uncertain (occluded) items are wrong more often
"$BIN/ktau" --json - "$T/k1" >"$T/kt.json" || fail "ktau on knn of var: exit $?"
awk '{ match($0, /"auroc": [0-9.]+/); a = substr($0, RSTART + 9, RLENGTH - 9); exit !(a > 0.5) }' "$T/kt.json" ||
    fail "ktau on knn of var: $(cat "$T/kt.json")"
[ "$(eta_source "$T/k1")" = var ] || fail "eta_source of the fixture"

# --- huge values: squares that overflow float32 (the float screen found no candidate for them:
# a crash, or silently the previous query's neighbours). 60 ordinary points in 3 classes, then
# 1060 (1e20, 0), 1061 (1e20, 1e15), 1062 (1e20, 3e15): exact distances in double.
awk 'BEGIN { for (i = 0; i < 60; i++) { c = i % 3; printf "%d %.3f %d %d 0.01 0.01\n", 10 * c + (i % 7) * 0.1, (i % 5) * 0.1, c, 1000 + i } }' >"$T/norm.txt"
huge_table() { "$FIX" table embeddings mu:float32:1x2 class:int32 id:int64 var:float32:1x2; }
huge_table <"$T/norm.txt" >"$T/norm" || fail "fixture"
{ cat "$T/norm.txt"; printf '1e20 0 0 1060 0 0\n1e20 1e15 0 1061 0 0\n1e20 3e15 1 1062 0 0\n'; } | huge_table >"$T/huge" || fail "fixture"
"$BIN/knn" -k 3 "$T/huge" >"$T/kh" || fail "knn on huge means exited $?"
"$FIX" cols id neighbors nn_dist <"$T/kh" >"$T/ch" || fail "knn on huge means: not a whole stream"
# (float32 1e15 is 999999986991104; the third neighbour is at (1e20)^2 from all the ordinary
# points alike in double, so the lowest record index)
grep -qx '1060 1061 1062 1000 9.99999987e+14' "$T/ch" || fail "query 1060: $(grep '^1060' "$T/ch")"
grep -qx '1061 1060 1062 1000 9.99999987e+14' "$T/ch" || fail "query 1061: $(grep '^1061' "$T/ch")"
grep -qx '1062 1061 1060 1000 2.00000011e+15' "$T/ch" || fail "query 1062: $(grep '^1062' "$T/ch")"
# the ordinary points keep the neighbours they have without the huge ones
"$BIN/knn" -k 3 "$T/norm" | "$FIX" cols id neighbors nn_dist predicted >"$T/cn"
"$FIX" cols id neighbors nn_dist predicted <"$T/kh" | head -n 61 | cmp -s - "$T/cn" || fail "huge means changed the others' neighbours"
# -d expected with a total variance beyond float32 (3e38 + 3e38): exact in double; every distance
# from it is 6e38 + a little, equal in double: the lowest indices; nobody else picks it
{ cat "$T/norm.txt"; printf '0 0 2 1060 3e38 3e38\n'; } | huge_table >"$T/hugevar" || fail "fixture"
"$BIN/knn" -k 3 -d expected "$T/hugevar" >"$T/kv" || fail "knn -d expected on a huge variance exited $?"
"$FIX" cols id neighbors nn_dist <"$T/kv" >"$T/cv" || fail "knn -d expected on a huge variance: not a whole stream"
grep -qx '1060 1000 1001 1002 2.44948981e+19' "$T/cv" || fail "query 1060 (variance 3e38): $(grep '^1060' "$T/cv")"
"$BIN/knn" -k 3 -d expected "$T/norm" | "$FIX" cols id neighbors nn_dist predicted >"$T/cn"
"$FIX" cols id neighbors nn_dist predicted <"$T/kv" | head -n 61 | cmp -s - "$T/cn" || fail "a huge variance changed the others' neighbours"
# a nearest-neighbour distance beyond float32 cannot be stored in nn_dist: an error naming the record
{ cat "$T/norm.txt"; printf '3e38 3e38 0 1060 0 0\n'; } | huge_table >"$T/far" || fail "fixture"
expect_fail 1 'record 60: the distance to its nearest neighbour' "$BIN/knn" -k 3 "$T/far"
# means or variances that are not finite: an error naming the record
{ cat "$T/norm.txt"; printf 'inf 0 0 1060 0 0\n'; } | huge_table >"$T/inf" || fail "fixture"
expect_fail 1 'record 60: mean inf is not finite' "$BIN/knn" "$T/inf"
{ cat "$T/norm.txt"; printf '0 0 0 1060 nan 0\n'; } | huge_table >"$T/nanv" || fail "fixture"
expect_fail 1 'record 60: variance nan is not a finite number' "$BIN/knn" -d expected "$T/nanv"
# an eta that is not finite (issue 19: knn wrote it on): an error naming the record
printf '0 0 0 100 0.1\n1 0 0 101 0.2\n0 1 1 102 nan\n' |
    "$FIX" table eta mu:float32:1x2 class:int32 id:int64 eta:float32 >"$T/naneta" || fail "fixture"
expect_fail 1 'record 2: eta nan is not finite' "$BIN/knn" -k 1 "$T/naneta"
printf '0 0 0 100 0.1\n1 0 0 101 inf\n0 1 1 102 0.3\n' |
    "$FIX" table eta mu:float32:1x2 class:int32 id:int64 eta:float32 >"$T/infeta" || fail "fixture"
expect_fail 1 'record 1: eta inf is not finite' "$BIN/knn" -k 1 "$T/infeta"

# --- the summary and the stream, all or nothing: --json is opened before any work, synced before
# the stream's end marker and renamed into place after it
check_out_file "$BIN/knn" --json @FILE@ "$T/tie"
"$BIN/knn" --json /dev/full "$T/tie" >"$T/full.hs" 2>"$T/err" && fail "knn --json /dev/full succeeded"
grep -q 'cannot write /dev/full' "$T/err" || fail "knn --json /dev/full: $(cat "$T/err")"
"$BIN/tshow" -q "$T/full.hs" >/dev/null 2>&1 && fail "knn --json /dev/full left a whole stream on stdout"

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
expect_fail 2 "for help" "$BIN/knn" -k 0 "$T/e"
expect_fail 2 "for help" "$BIN/knn" -d median "$T/e"
expect_fail 2 "for help" "$BIN/knn" --exclude-id "$T/e"
expect_fail 2 "for help" "$BIN/knn" -t 0 "$T/e"
expect_fail 2 "for help" "$BIN/knn" --bogus "$T/e"
expect_fail 2 "for help" "$BIN/knn" "$T/e" "$T/e"
expect_fail 2 "for help" "$BIN/knn" --summary -g "$T/e" "$T/k1"
# options --summary would ignore
expect_fail 2 "for help" "$BIN/knn" --summary -k 3 "$T/k1"
expect_fail 2 "for help" "$BIN/knn" --summary -d expected "$T/k1"
expect_fail 2 "for help" "$BIN/knn" --summary -t 2 "$T/k1"
expect_fail 1 "expected a stream of kind 'knn'" "$BIN/knn" --summary "$T/e"
"$BIN/knn" -h | grep -q '^usage: knn' || fail "-h"
echo "knn: ok"
