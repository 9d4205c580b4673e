#!/bin/sh
# fewshot: hand-worked episodes (PN, SPE closed form, the naive sampler against an integral), the
# s_e^2 sources, mixtures entering as their moments, twins kept out of their own query's support,
# well-separated classes, then real embeddings (mkdigits | occlude, a short training, embed): the
# record invariants, the same bytes for the same seed and any thread count, --summary, ktau on
# the output, point models; and every kind of bad input. Crafted streams: tests/unit/test_evalfix.c.
. "$(dirname "$0")/../lib.sh"
FIX=$BIN/../tests/test_evalfix
[ -x "$FIX" ] || fail "$FIX is not built"
cd "$T"
emb1() { "$FIX" table embeddings mu:float32:1x1 var:float32:1x1 class:int32 id:int64 "$@"; }
emb2() { "$FIX" table embeddings mu:float32:1x2 var:float32:1x2 class:int32 id:int64 "$@"; }
cols() { "$FIX" cols episode id class predicted correct eta < "$1"; }
# within TOL: awk-checked |A - B| <= TOL
near() { awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= t) }' || fail "$4: $1, expected $2 +- $3"; }

# --- by hand, 1-D, one shot, one query per class: every episode is the same. s_e^2 = 1 from the
# support's header. Support: class 0 mu 0, class 1 mu 4, variances 1: S_y^2 = 1 + 1 = 2,
# V_y = 2 + 1 = 3. Queries: class 0 at N(1, 1), class 1 at N(2.5, 1).
#   closed: var + V = 4 for both classes, so score_0 - score_1 = ((x-4)^2 - x^2) / 8:
#     x = 1: 1, eta = 1 / (1 + e) = 0.268941421;  x = 2.5: -0.5, eta = 1 / (1 + e^0.5) = 0.377540669
#   pn: scores -x^2, -(x-4)^2: x = 1: -1 and -9, eta = 1 / (1 + e^8) = 3.35350130e-4;
#     x = 2.5: -6.25 and -2.25, eta = 1 / (1 + e^4) = 0.0179862100
#   naive: p(y|x,S) = E_{z ~ N(x, 1)} sigmoid(+-(16 - 8z)/6) (V equal): by Simpson's rule
#     eta = 0.267916503 (x = 1) and 0.377953945 (x = 2.5); K = 100000 samples in [0, 1] put the
#     estimate within 4 / (2 sqrt K) = 0.0063 of it (but with probability 6e-5)
printf '0 1 0 100\n4 1 1 101\n' | emb1 -m spe_se2=1.0 > sup.hs || fail "fixture"
printf '1 1 0 200\n2.5 1 1 201\n' | emb1 > qry.hs || fail "fixture"
fewshot -s sup.hs -k 1 -q 1 -R 4 --json hand.json qry.hs > hand.hs || fail "fewshot exited $?"
cols hand.hs > hand.txt || fail "not a whole fewshot stream"
head -n 1 hand.txt | grep -qx 'kind fewshot' || fail "kind: $(head -n 1 hand.txt)"
[ "$(wc -l < hand.txt)" = 9 ] || fail "4 episodes x 2 classes x 1 query: $(wc -l < hand.txt) lines"
awk 'NR > 1 && ($1 != int((NR - 2) / 2) || $2 != 200 + (NR % 2) || $3 != $4 || $5 != 1) { exit 1 }' hand.txt ||
    fail "episode, id, class, predicted, correct: $(cat hand.txt)"
near "$(sed -n 2p hand.txt | cut -d' ' -f6)" 0.268941421 1e-7 "closed eta, class 0"
near "$(sed -n 3p hand.txt | cut -d' ' -f6)" 0.377540669 1e-7 "closed eta, class 1"
grep -q '"episodes": 4, "ways": 2, "shots": 1, "queries": 1, "score": "spe-closed", "samples": 200, "pn": {"accuracy": 1, "ci95": 0}, "spe_naive": {"accuracy": 1, "ci95": 0}, "spe_closed": {"accuracy": 1, "ci95": 0}, "se2": 1, "se2_from": "support stream header spe_se2", "seed": 714}' hand.json ||
    fail "json: $(cat hand.json)"
fewshot -s sup.hs -k 1 -q 1 -R 4 --score pn qry.hs | cols /dev/stdin > pn.txt || fail "--score pn"
near "$(sed -n 2p pn.txt | cut -d' ' -f6)" 3.35350130e-4 1e-11 "pn eta, class 0"
near "$(sed -n 3p pn.txt | cut -d' ' -f6)" 0.0179862100 1e-9 "pn eta, class 1"
fewshot -s sup.hs -k 1 -q 1 -R 4 -K 100000 --score spe-naive qry.hs | cols /dev/stdin > naive.txt || fail "--score spe-naive"
near "$(sed -n 2p naive.txt | cut -d' ' -f6)" 0.267916503 0.0063 "naive eta, class 0"
near "$(sed -n 3p naive.txt | cut -d' ' -f6)" 0.377953945 0.0063 "naive eta, class 1"
# an image's samples are the same in every episode: the same eta in every episode
[ "$(awk 'NR > 1 { print $2, $6 }' naive.txt | sort -u | wc -l)" = 2 ] || fail "an image's naive eta changed between episodes"
# --summary reads the stream back: the same line as --json
fewshot --summary hand.hs | cmp -s - hand.json || fail "--summary: $(fewshot --summary hand.hs)"
# the header meta
tshow -H hand.hs | grep -q '"score": "spe-closed"' || fail "meta score"
tshow -H hand.hs | grep -q '"spe_closed_accuracy": 1' || fail "meta spe_closed_accuracy"

# --- s_e^2: the option over the header; the query's header when the support has none; else 0.
# --se2 0: V_y = 1, var + V = 2: score_0 - score_1 = ((x-4)^2 - x^2) / 4 = 2 at x = 1
fewshot -s sup.hs -k 1 -q 1 -R 1 --se2 0 --json se2.json qry.hs | cols /dev/stdin > se2.txt || fail "--se2 0"
near "$(sed -n 2p se2.txt | cut -d' ' -f6)" 0.119202922 1e-7 "--se2 0: eta = 1 / (1 + e^2)"
grep -q '"se2": 0, "se2_from": "option --se2"' se2.json || fail "--se2: $(cat se2.json)"
printf '0 1 0 100\n4 1 1 101\n' | emb1 > sup0.hs
printf '1 1 0 200\n2.5 1 1 201\n' | emb1 -m spe_se2=0.5 > qry5.hs
fewshot -s sup0.hs -k 1 -q 1 -R 1 --json q5.json qry5.hs > /dev/null || fail "spe_se2 in the query"
grep -q '"se2": 0.5, "se2_from": "query stream header spe_se2"' q5.json || fail "query header: $(cat q5.json)"
fewshot -s sup0.hs -k 1 -q 1 -R 1 --json d.json qry.hs > /dev/null || fail "no spe_se2"
grep -q '"se2": 0, "se2_from": "default 0 (no spe_se2 in either header)"' d.json || fail "default: $(cat d.json)"

# --- a mixture enters as its moments: components 0 and 2 without variance are N(1, 1), 1.5 and
# 3.5 are N(2.5, 1); in the support, -1 and 1 are N(0, 1), 3 and 5 N(4, 1): every scorer gives
# the records of the one-component streams above. (Support and queries of different C are
# embeddings of different models: refused, with the bad input below.)
printf '0 2 0 0 0 200\n1.5 3.5 0 0 1 201\n' | "$FIX" table embeddings mu:float32:2x1 var:float32:2x1 class:int32 id:int64 > mix.hs
printf '%s\n' '-1 1 0 0 0 100' '3 5 0 0 1 101' |
    "$FIX" table embeddings mu:float32:2x1 var:float32:2x1 class:int32 id:int64 -m spe_se2=1.0 > supmix.hs
for s in pn spe-naive spe-closed; do
    fewshot -s supmix.hs -k 1 -q 1 -R 4 --score $s mix.hs | cols /dev/stdin > mix.txt || fail "mixture, $s"
    fewshot -s sup.hs -k 1 -q 1 -R 4 --score $s qry.hs | cols /dev/stdin | cmp -s - mix.txt || fail "mixture, $s: $(cat mix.txt)"
done

# --- twins never meet: 1 shot, 1 query, the support stream is the query stream (every image is
# its own twin). Class 0: ids 1 (0,0) and 2 (10,0); class 1: ids 3 (5,1) and 4 (5,-1). A class-0
# query is 10 from the other class-0 image and 5.1 from either class-1 image: always wrong; a
# class-1 query is 2 from its class's other image: always right. Accuracy 0.5 in every episode,
# by every scorer; a query meeting its own twin (distance 0) would be right.
printf '0 0 .01 .01 0 1\n10 0 .01 .01 0 2\n5 1 .01 .01 1 3\n5 -1 .01 .01 1 4\n' | emb2 > trap.hs
fewshot -s trap.hs -k 1 -q 1 -R 50 --json trap.json trap.hs | cols /dev/stdin > trap.txt || fail "twins"
grep -q '"pn": {"accuracy": 0.5, "ci95": 0}, "spe_naive": {"accuracy": 0.5, "ci95": 0}, "spe_closed": {"accuracy": 0.5, "ci95": 0}' trap.json ||
    fail "a query met its twin: $(cat trap.json)"
awk 'NR > 1 && $5 != ($3 == 1) { exit 1 }' trap.txt || fail "twins: $(cat trap.txt)"
for id in 1 2 3 4; do awk -v id=$id 'NR > 1 && $2 == id { f = 1 } END { exit !f }' trap.txt || fail "image $id never a query"; done
# the corrupt twins (other variances, the same ids): the same
printf '0 0 .5 .5 0 1\n10 0 .5 .5 0 2\n5 1 .5 .5 1 3\n5 -1 .5 .5 1 4\n' | emb2 > trapq.hs
fewshot -s trap.hs -k 1 -q 1 -R 50 --json trapq.json trapq.hs > /dev/null || fail "twin streams"
grep -q '"pn": {"accuracy": 0.5, "ci95": 0}' trapq.json || fail "twin streams: $(cat trapq.json)"
# other ids at the same places are no twins: a class-0 query then meets its double (same place)
# in the support in about half the episodes, and is right there
printf '0 0 .5 .5 0 11\n10 0 .5 .5 0 12\n5 1 .5 .5 1 13\n5 -1 .5 .5 1 14\n' | emb2 > other.hs
fewshot -s trap.hs -k 1 -q 1 -R 50 other.hs | cols /dev/stdin > other.txt || fail "other ids"
awk 'NR > 1 && $3 == 0 && $5 == 1 { n++ } END { exit !(n >= 10 && n <= 40) }' other.txt ||
    fail "distinct ids: class 0 right in $(awk 'NR > 1 && $3 == 0 && $5 == 1' other.txt | wc -l) of 50 episodes"

# --- well separated: 6 classes 100 apart, 12 images each, support = query: accuracy 1 for every
# scorer, tiny uncertainty; -n 3 draws 3 of the 6 classes per episode
awk 'BEGIN { for (i = 0; i < 72; i++) { c = i % 6; printf "%g %g 0.01 0.02 %d %d\n", 100 * c + (i % 5) * 0.1, (i % 7) * 0.1, c, 500 + i } }' | emb2 > sep.hs
fewshot -s sep.hs -k 4 -q 8 -R 30 --json sep.json sep.hs | cols /dev/stdin > sep.txt || fail "separated"
grep -q '"ways": 6, .*"pn": {"accuracy": 1, "ci95": 0}, "spe_naive": {"accuracy": 1, "ci95": 0}, "spe_closed": {"accuracy": 1, "ci95": 0}' sep.json ||
    fail "separated: $(cat sep.json)"
[ "$(wc -l < sep.txt)" = $((30 * 6 * 8 + 1)) ] || fail "separated: record count"
awk 'NR > 1 && !($6 < 1e-6) { exit 1 }' sep.txt || fail "separated: eta not tiny"
fewshot -s sep.hs -k 4 -q 8 -R 30 -n 3 --json sep3.json sep.hs | cols /dev/stdin > sep3.txt || fail "-n 3"
grep -q '"ways": 3, ' sep3.json || fail "-n 3: $(cat sep3.json)"
awk 'NR > 1 { k = $1 " " $3; if (!(k in n)) m[$1]++; n[k]++ } END { for (e in m) if (m[e] != 3) exit 1; for (k in n) if (n[k] != 8) exit 1 }' sep3.txt ||
    fail "-n 3: not 3 classes x 8 queries per episode"
[ "$(awk 'NR > 1 { print $3 }' sep3.txt | sort -u | wc -l)" = 6 ] || fail "-n 3 never drew some class"

# --- real embeddings: clean support, corrupt queries (twins), a 200-step MoG model
mkdigits -N 2 -s test-seen 2> /dev/null | occlude -p 0 > clean.hs || fail "mkdigits | occlude -p 0"
mkdigits -N 2 -s test-seen 2> /dev/null | occlude -p 1 > corrupt.hs || fail "mkdigits | occlude -p 1"
mkdigits -N 2 -s train -n 3000 2> /dev/null | batcher -m pairs -b 32 -n 200 |
    train --head mog -D 2 -n 200 -t 1 -o m.ckpt 2> train.err || fail "train: $(cat train.err)"
embed -m m.ckpt < clean.hs > eclean.hs || fail "embed clean"
embed -m m.ckpt < corrupt.hs > ecorrupt.hs || fail "embed corrupt"
fewshot -s eclean.hs -R 20 --json real.json ecorrupt.hs > real.hs || fail "fewshot on real embeddings"
cols real.hs > real.txt || fail "cols"
# 20 episodes x 70 classes x 15 queries, correct = (predicted == class), 0 <= eta <= 1 - 1/70
[ "$(wc -l < real.txt)" = 21001 ] || fail "real: $(wc -l < real.txt) lines"
awk 'NR > 1 && ($5 != ($3 == $4) || $6 < 0 || $6 > 1 - 1 / 70 + 1e-6 || $1 != int((NR - 2) / 1050)) { exit 1 }' real.txt ||
    fail "real: record invariants"
for k in pn spe_naive spe_closed; do
    a=$(sed -n "s/.*\"$k\": {\"accuracy\": \([0-9.e-]*\), .*/\1/p" real.json)
    awk -v a="$a" 'BEGIN { exit !(a > 1 / 70 && a <= 1) }' || fail "real: $k accuracy '$a': $(cat real.json)"
done
# a query image is never in its episode's support: with every image both support and query (the
# same stream) and 141 of a class's 142 images as support, the one query is the one left out
fewshot -s eclean.hs -k 141 -q 1 -R 3 eclean.hs | cols /dev/stdin > left.txt || fail "-k 141"
[ "$(wc -l < left.txt)" = 211 ] || fail "-k 141: $(wc -l < left.txt) lines"
expect_fail 1 "has 142 query images in eclean.hs, 141 of them twins (same id) of its support images: 1 left" fewshot -s eclean.hs -k 141 -q 2 eclean.hs
# the same command gives the same bytes; any thread count the same records and summary (the
# header differs by its arguments only); another seed other episodes
fewshot -s eclean.hs -R 20 --json real.json ecorrupt.hs | cmp -s - real.hs || fail "the same seed gave other bytes"
fewshot -s eclean.hs -R 20 -t 2 ecorrupt.hs | cols /dev/stdin | cmp -s - real.txt || fail "-t 2 gave other records"
fewshot -s eclean.hs -R 20 -t 3 --json real3.json ecorrupt.hs | cols /dev/stdin | cmp -s - real.txt ||
    fail "-t 3 gave other records"
cmp -s real.json real3.json || fail "-t 3 gave another summary"
fewshot -s eclean.hs -R 20 -S 5 ecorrupt.hs | cols /dev/stdin | cmp -s - real.txt && fail "-S 5 gave the same records"
fewshot --summary real.hs | cmp -s - real.json || fail "--summary of real"
# ktau bins it as a knn stream: -u eta -m accuracy:correct by default
ktau --json - real.hs > tau.json || fail "ktau on a fewshot stream"
grep -q '"uncertainty": "eta", "performance": "accuracy:correct"' tau.json || fail "ktau: $(cat tau.json)"
grep -q '"n": 21000}$' tau.json || fail "ktau n: $(cat tau.json)"
# point embeddings: PN only (spe null, se2 null); --score spe-* is an error
"$FIX" emb -n 300 -p > point.hs
fewshot -s point.hs -k 3 -q 5 -R 10 --json point.json point.hs > point.out || fail "point"
grep -q '"score": "pn", .*"spe_naive": null, "spe_closed": null, "se2": null, "se2_from": "none (no variances: PN only)"' point.json ||
    fail "point: $(cat point.json)"
fewshot --summary point.out | cmp -s - point.json || fail "--summary of a point run"
# mixtures of 2 (HIB's MoG-2): PN on the mean of the means, SPE on the moments
"$FIX" emb -n 300 -C 2 > mog2.hs
fewshot -s mog2.hs -k 3 -q 5 -R 10 --json mog2.json mog2.hs > /dev/null || fail "C = 2"
grep -q '"spe_closed": {"accuracy": ' mog2.json || fail "C = 2: $(cat mog2.json)"

# --- all or nothing: --json is opened before any work and committed after the stream's end
check_out_file fewshot --json @FILE@ -s sup.hs -k 1 -q 1 -R 2 qry.hs

# --- bad input: exit 1, nothing on stdout, no --json file
bad() { # bad MESSAGE ARGS...: fails with MESSAGE and leaves no bad.json
    msg=$1; shift
    rm -f bad.json
    expect_fail 1 "$msg" fewshot --json bad.json "$@"
    [ -e bad.json ] && fail "fewshot $*: left a --json file"
    ls bad.json.tmp* > /dev/null 2>&1 && fail "fewshot $*: left a temp file"
    return 0
}
bad "--score spe-closed needs variances: the support stream point.hs has no field 'var'" -s point.hs --score spe-closed -k 3 -q 5 sep.hs
[ "$(wc -l < "$T/err")" = 1 ] || fail "two streams, one with variances, --score spe-closed: not one line: $(cat "$T/err")"
bad "--score spe-naive needs variances: the query stream point.hs has no field 'var'" -s sep.hs --score spe-naive -k 1 -q 1 point.hs
fewshot -s point.hs -k 3 -q 5 -R 2 --json mixed.json sep.hs > /dev/null 2> mixed.err || fail "support without var"
grep -q "only the query stream carries variances" mixed.err || fail "no warning: $(cat mixed.err)"
grep -q '"spe_closed": null' mixed.json || fail "support without var ran SPE"
bad "class 0 has 1 support image in sup.hs, fewer than the 2 shots (-k)" -s sup.hs -k 2 -q 1 qry.hs
bad "class 0 has 1 query image in qry.hs, fewer than the 2 queries (-q)" -s sup.hs -k 1 -q 2 qry.hs
bad "class 0 has 2 query images in trap.hs, 1 of them twins (same id) of its support images: 1 left" -s trap.hs -k 1 -q 2 trap.hs
bad "class 0 has 12 query images in sep.hs, 6 of them twins" -s sep.hs -k 6 -q 7 sep.hs
printf '0 1 7 100\n4 1 8 101\n' | emb1 > sup78.hs
bad "no class is present in both the support stream sup78.hs (2 classes, e.g. 7) and the query stream qry.hs (2 classes, e.g. 0)" -s sup78.hs -k 1 -q 1 qry.hs
printf '0 1 0 100\n4 1 8 101\n' | emb1 > sup08.hs
bad "only one class (0) is present in both streams" -s sup08.hs -k 1 -q 1 qry.hs
bad "-n 3 classes per episode, but only 2 classes are present in both streams" -s sup.hs -n 3 -k 1 -q 1 qry.hs
printf 'nan 1 0 100\n4 1 1 101\n' | emb1 > supnan.hs
bad "supnan.hs: record 0: mean nan is not finite" -s supnan.hs -k 1 -q 1 qry.hs
printf '1 1 0 200\n2.5 inf 1 201\n' | emb1 > qryinf.hs
bad "qryinf.hs: record 1: variance inf is not a finite number" -s sup.hs -k 1 -q 1 qryinf.hs
printf 'inf 1 0 200\n2.5 1 1 201\n' | emb1 > qryinfm.hs
bad "qryinfm.hs: record 0: mean inf is not finite" -s sup.hs -k 1 -q 1 qryinfm.hs
printf '0 0 0 100\n4 1 1 101\n' | emb1 > supvar0.hs
bad "supvar0.hs: record 0 (id 100, class 0): variance 0 in dimension 0 and s_e^2 = 0" -s supvar0.hs -k 1 -q 1 qry.hs
fewshot -s supvar0.hs -k 1 -q 1 -R 1 --se2 0.1 qry.hs > /dev/null || fail "a zero variance with --se2 0.1"
printf '0 1 0 100\n4 1 1 101\n' | emb1 -m spe_se2=-1.0 > supneg.hs
bad "the support stream's header meta spe_se2 = -1 is not a finite number >= 0" -s supneg.hs -k 1 -q 1 qry.hs
bad "the support embeddings have 2 dimensions, the queries 1" -s trap.hs -k 1 -q 1 qry.hs
bad "the support embeddings have 1 component (sup.hs: mu [1, 1]), the queries 2 (mix.hs: mu [2, 1])" -s sup.hs -k 1 -q 1 mix.hs
printf '0 1 0\n4 1 1\n' | "$FIX" table embeddings mu:float32:1x1 var:float32:1x1 class:int32 > noid.hs
bad "noid.hs: no 'id' field" -s noid.hs -k 1 -q 1 qry.hs
printf '0 1 100\n4 1 101\n' | "$FIX" table embeddings mu:float32:1x1 var:float32:1x1 id:int64 > nocls.hs
bad "nocls.hs: no 'class' field" -s sup.hs -k 1 -q 1 nocls.hs
emb1 < /dev/null > empty.hs
bad "no records" -s empty.hs -k 1 -q 1 qry.hs
head -c 300 real.hs > trunc.hs
bad "truncated" -s sup.hs -k 1 -q 1 trunc.hs
bad "expected a stream of kind 'embeddings'" -s sup.hs -k 1 -q 1 clean.hs
expect_fail 1 "expected a stream of kind 'fewshot'" fewshot --summary sup.hs
expect_fail 1 "truncated" fewshot --summary trunc.hs

# --- misuse: exit 2, nothing on stdout
expect_fail 2 "no support stream" fewshot qry.hs
expect_fail 2 "for help" fewshot -s sup.hs -n 1 qry.hs
expect_fail 2 "for help" fewshot -s sup.hs -k 0 qry.hs
expect_fail 2 "for help" fewshot -s sup.hs -q 0 qry.hs
expect_fail 2 "for help" fewshot -s sup.hs -R 0 qry.hs
expect_fail 2 "for help" fewshot -s sup.hs -K 0 qry.hs
expect_fail 2 "for help" fewshot -s sup.hs -t 0 qry.hs
expect_fail 2 "for help" fewshot -s sup.hs --se2 -1 qry.hs
expect_fail 2 "for help" fewshot -s sup.hs --se2 nan qry.hs
expect_fail 2 "none of pn, spe-naive, spe-closed" fewshot -s sup.hs --score spe qry.hs
expect_fail 2 "for help" fewshot -s sup.hs --bogus qry.hs
expect_fail 2 "at most one input" fewshot -s sup.hs qry.hs qry.hs
expect_fail 2 "--summary reads a fewshot stream" fewshot --summary -R 5 hand.hs
expect_fail 2 "--summary reads a fewshot stream" fewshot --summary -s sup.hs hand.hs
fewshot -h | grep -q '^usage: fewshot' || fail "-h"
pass
