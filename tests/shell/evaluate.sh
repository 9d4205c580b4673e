#!/bin/sh
# pipelines/evaluate.sh (bin/evaluate, or with -o DIR the programs) on hand-made .npz sets with known metrics: three well-separated classes
# (every metric 1), the same with one item of class 0 placed beside class 1 (each number derived
# by hand below), the same with a variance largest on that item (tau, AUROC, AURC, E-AURC by
# hand), runs at once on one -o DIR, a twin column, a gallery, sets too small for some numbers
# (1, 2, 4 items, singletons, one class, galleries with and without the queries' classes: "-"
# and the reason), refusals in one line, and the README's recipe as written.
set -u
. "$(dirname "$0")/../lib.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)
PY=/usr/bin/python3
EV="$root/pipelines/evaluate.sh"
cd "$T"
# classes 0, 1, 2 at x = 0, 10, 20, ten items each at y = 0, 0.1, ..., 0.9 (ids 0..29); in
# wrong.npz item 9 (class 0) sits at (11, 0), one unit beyond class 1's items
$PY - <<'EOF' || fail "making the sets"
import numpy as np
c = np.repeat(np.arange(3), 10)
mu = np.stack([10.0 * c, 0.1 * np.tile(np.arange(10), 3)], 1)
np.savez("sep.npz", mu=mu, labels=c)
mu[9] = [11, 0]
np.savez("wrong.npz", mu=mu, labels=c)
np.save("wrong-mu.npy", mu)
var = np.repeat(0.01 * (np.arange(30) + 1.0)[:, None], 2, 1)
var[9] = 1
np.savez("unc.npz", mu=mu, var=var, labels=c)
EOF

# close NAME GOT WANT: |GOT - WANT| < 1e-6
close() {
    awk -v g="$2" -v w="$3" 'BEGIN { d = g - w; exit !(g != "" && g != "-" && d < 1e-6 && d > -1e-6) }' ||
        fail "$1 = '$2', expected $3"
}
# row FILE METRIC: the values of METRIC's row of a markdown table, space-separated
row() { grep "^| $2 |" "$1" | sed "s/^| $2 | //; s/ |\$//; s/ | / /g"; }

# --- three well-separated classes: every number 1; no uncertainty, no match probability
sh "$EV" --json sep.json sep.npz > sep.md 2> sep.err || fail "sep.npz: $(cat sep.err)"
[ -s sep.err ] && fail "sep.npz: messages on stderr: $(cat sep.err)"
for m in ap 'knn (k = 5)' R@1 R@2 R@4 R@8 p1 rprec map_r map mrr 'p1 (class avg)' 'rprec (class avg)' \
    'map_r (class avg)' 'mrr (class avg)' nmi ami; do
    [ "$(row sep.md "$m")" = 1 ] || fail "sep.npz: $m is '$(row sep.md "$m")', expected 1: $(cat sep.md)"
done
for m in ece tau auroc aurc eaurc; do
    [ "$(row sep.md $m)" = - ] || fail "sep.npz: $m is '$(row sep.md $m)', expected -"
done
grep -q '^- ap (input): the embeddings have no match_a/match_b' sep.md || fail "sep.npz: no note on ap/ece: $(cat sep.md)"
grep -q '^- tau, auroc, aurc, eaurc (input): the embeddings have no uncertainty' sep.md || fail "sep.npz: no note on tau"
for m in ap knn p1 rprec map_r map mrr p1_avg_of_avgs rprec_avg_of_avgs map_r_avg_of_avgs mrr_avg_of_avgs nmi ami; do
    [ "$(json_get $m < sep.json)" = 1 ] || fail "sep.json: $m: $(cat sep.json)"
done
for m in ece tau auroc aurc eaurc; do
    [ "$(json_get $m < sep.json)" = null ] || fail "sep.json: $m is not null: $(cat sep.json)"
done
grep -q '"recall_at": \[1, 2, 4, 8\], "recall": \[1, 1, 1, 1\]' sep.json || fail "sep.json: recall: $(cat sep.json)"
$PY -c 'import json, sys; d = json.load(open("sep.json")); assert len(d["notes"]) == 2, d' || fail "sep.json is not JSON"

# --- one item of class 0 beside class 1
# knn: the intruder's five neighbours are class 1 (distance 1..1.35; the others' own classes are
# within 0.9 of them): 29/30. Retrieval, R = 9 positives each: class 0's other queries rank their
# 8 neighbours 1..8, class 1 (10 items at <= 10.05) 9..18, the intruder 19: rprec = map_r = 8/9,
# ap = (8 + 9/19)/9; classes 1 and 2: 1; the intruder: class 1 and class 2 (<= 9.05) first,
# its positives (>= 11) at ranks 21..29: p1 = rprec = map_r = 0, recall 0, ap = sum i/(20+i) / 9.
# The first positive is at rank 1 for all but the intruder (21): mrr = (29 + 1/21) / 30. The
# classes are balanced (10 queries each), so the class averages equal the plain means.
sh "$EV" --json wrong.json wrong.npz > wrong.md 2> wrong.err || fail "wrong.npz: $(cat wrong.err)"
s9=$(awk 'BEGIN { for (i = 1; i <= 9; i++) s += i / (20 + i); print s / 9 }')
close knn "$(row wrong.md 'knn (k = 5)')" "$(awk 'BEGIN { print 29 / 30 }')"
for m in R@1 R@2 R@4 R@8 p1; do close "$m" "$(row wrong.md $m)" "$(awk 'BEGIN { print 29 / 30 }')"; done
for m in rprec map_r; do close "$m" "$(row wrong.md $m)" "$(awk 'BEGIN { print (9 * 8 / 9 + 20) / 30 }')"; done
close map "$(row wrong.md map)" "$(awk -v s="$s9" 'BEGIN { print ((8 + 9 / 19) + 20 + s) / 30 }')"
close map.json "$(json_get map < wrong.json)" "$(row wrong.md map)"
close mrr "$(row wrong.md mrr)" "$(awk 'BEGIN { print (29 + 1 / 21) / 30 }')"
close mrr.json "$(json_get mrr < wrong.json)" "$(awk 'BEGIN { print (29 + 1 / 21) / 30 }')"
close "mrr (class avg)" "$(row wrong.md 'mrr (class avg)')" "$(awk 'BEGIN { print (29 + 1 / 21) / 30 }')"
close "p1 (class avg)" "$(row wrong.md 'p1 (class avg)')" "$(awk 'BEGIN { print 29 / 30 }')"
close map_r_avg_of_avgs.json "$(json_get map_r_avg_of_avgs < wrong.json)" "$(awk 'BEGIN { print (9 * 8 / 9 + 20) / 30 }')"
# NMI and AMI of the partition k-means must find ({0..8}, {9, class 1}, {class 2}), from their
# definitions (sklearn's: arithmetic-mean normalisation; AMI with the hypergeometric expectation)
$PY - "$(row wrong.md nmi)" "$(row wrong.md ami)" <<'EOF' || fail "wrong.npz: nmi, ami (above)"
import sys
from math import log, lgamma, exp
y = [0] * 10 + [1] * 10 + [2] * 10
k = [0] * 9 + [1] + [1] * 10 + [2] * 10
n = len(y)
def H(v): return -sum(v.count(a) / n * log(v.count(a) / n) for a in set(v))
a = [y.count(c) for c in set(y)]; b = [k.count(c) for c in set(k)]
nij = {}
for u, v in zip(y, k): nij[u, v] = nij.get((u, v), 0) + 1
mi = sum(m / n * log(n * m / (y.count(u) * k.count(v))) for (u, v), m in nij.items())
nmi = mi / ((H(y) + H(k)) / 2)
emi = 0.0
for ai in a:
    for bj in b:
        for m in range(max(1, ai + bj - n), min(ai, bj) + 1):
            lp = (lgamma(ai + 1) + lgamma(bj + 1) + lgamma(n - ai + 1) + lgamma(n - bj + 1) - lgamma(n + 1)
                  - lgamma(m + 1) - lgamma(ai - m + 1) - lgamma(bj - m + 1) - lgamma(n - ai - bj + m + 1))
            emi += m / n * log(n * m / (ai * bj)) * exp(lp)
ami = (mi - emi) / ((H(y) + H(k)) / 2 - emi)
got = [float(x) for x in sys.argv[1:]]
assert abs(got[0] - nmi) < 1e-6 and abs(got[1] - ami) < 1e-6, (got, nmi, ami)
EOF
# AP of the sampled pairs ranked by the distance of their means, from the definition: with x in
# units and y in tenths, d^2 = (100 dx^2 + dy^2) / 100 with dy <= 9, so two pairs are equally far
# exactly when their integers 100 dx^2 + dy^2 are equal; a block of equal distances gives each of
# its positives the precision at the block's end (apcurve's rule; the sample repeats pairs)
# (the pairs evaluate samples: pairscore's, tests/shell/evaluate-engine.sh)
fromnpz --match-a 1 --match-b 0 wrong.npz 2> /dev/null | pairscore --means -n 10000 -S 714 > pairs-input.hs ||
    fail "pairscore of wrong.npz"
PYTHONPATH="$root/python" $PY - "$(row wrong.md ap)" <<'EOF2' || fail "wrong.npz: pair AP (above)"
import sys, numpy as np, hedge_stream as hs
mu = np.load("wrong.npz")["mu"]
xy = np.stack([np.rint(mu[:, 0]), np.rint(10 * mu[:, 1])], 1).astype(np.int64)
h, p = hs.read("pairs-input.hs")
dd = xy[p["id1"]] - xy[p["id2"]]
key = 100 * dd[:, 0] ** 2 + dd[:, 1] ** 2
m = p["match"].astype(bool)
assert len(key) == 10000 and 0 < (m & (key > 10000)).sum() < m.sum(), "the sample has no far positive"
ap, seen, rank = 0.0, 0, 0
for k in np.unique(key):
    blk = m[key == k]
    seen += blk.sum(); rank += len(blk)
    ap += blk.sum() * seen / rank
ap /= m.sum()
got = float(sys.argv[1])
assert ap < 0.99 and abs(got - ap) < 1e-6, (got, ap)
EOF2
# an .npy of means alone has no class: refused in one line
expect_exit 1 ".npy without classes" sh "$EV" wrong-mu.npy
grep -qx "evaluate: wrong-mu.npy: no class labels (a stream needs a 'class' field; an .npz an array class, labels or label)" "$T/expect.err" ||
    fail ".npy: $(cat "$T/expect.err")"

# --- a variance, largest on the wrong item; a match probability (a = 1, b = 0): ECE
# 30 items, 20 bins: bins 0..9 hold 2 items, 10..19 one; the intruder alone in bin 19 (accuracy
# 0, the others 1): tau-b of (bin, accuracy) = -19 / sqrt(190 * 19), inverted 1/sqrt(10);
# AUROC 1; risk(k) = 0 until the last item, 1/30 then: AURC = 1/900 = the oracle's, E-AURC 0.
sh "$EV" -o uout --match-a 1 --match-b 0 --json unc.json unc.npz > unc.md 2> unc.err || fail "unc.npz: $(cat unc.err)"
close tau "$(row unc.md tau)" "$(awk 'BEGIN { print 1 / sqrt(10) }')"
close auroc "$(row unc.md auroc)" 1
close aurc "$(row unc.md aurc)" "$(awk 'BEGIN { print 1 / 900 }')"
close eaurc "$(row unc.md eaurc)" 0
close tau.json "$(json_get tau < unc.json)" "$(awk 'BEGIN { print 1 / sqrt(10) }')"
close eaurc.json "$(json_get eaurc < unc.json)" 0
e=$(row unc.md ece)
fromnpz --match-a 1 --match-b 0 unc.npz 2> /dev/null | pairscore -n 10000 -S 714 > unc-pairs.hs || fail "pairscore of unc.npz"
close "ece (reference: apcurve --ece 15 on pairscore's pairs)" "$e" "$(apcurve --ece 15 unc-pairs.hs | sed -n 's/^ece //p')"
check_lt 0 "$e" "ece $e is not positive"
grep -q 'no match_a' unc.md && fail "unc.npz: a note on match_a although it was given: $(cat unc.md)"
[ "$(tail -n +2 uout/reject-input.tsv | wc -l)" = 100 ] && head -n 1 uout/reject-input.tsv | grep -qx 'rejected	risk	oracle_risk' || fail "no error-versus-reject curve: $(head -n 3 uout/reject-input.tsv)"
grep -q "^- error-versus-reject curve (input): uout/reject-input.tsv" unc.md || fail "unc.npz: the reject curve is not named"
grep -q '"reject_tsv": "uout/reject-input.tsv"' unc.json || fail "unc.json: no reject_tsv"

# --- --shards with -o DIR shared by several runs at once (issue 34 item 3: they shared DIR's files,
# and one exited 0 with a table of NUL bytes): each run either prints the lone run's table or fails
# with one line; DIR then holds a whole run's files, and a failed run leaves them as they were
U="--shards 2 -j 1 -o shared --match-a 1 --match-b 0 --json"
sh "$EV" $U lone.json unc.npz > lone.md 2> lone.err || fail "-o shared, alone: $(cat lone.err)"
cp -P -r shared lone-files || fail "copying shared"
for round in 1 2 3; do
    for i in 1 2 3 4; do
        { sh "$EV" $U par$i.json unc.npz > par$i.md 2> par$i.err; echo $? > par$i.rc; } &
    done
    wait
    won=0
    for i in 1 2 3 4; do
        case $(cat par$i.rc) in
        0) cmp -s par$i.md lone.md || fail "round $round, run $i: exit 0 with another table: $(cat -v par$i.md | head -n 8)"
            cmp -s par$i.json lone.json || fail "round $round, run $i: exit 0 with another JSON: $(cat -v par$i.json)"
            [ -s par$i.err ] && fail "round $round, run $i: exit 0 with messages: $(cat par$i.err)"
            won=$((won + 1)) ;;
        1) [ -s par$i.md ] && fail "round $round, run $i: exit 1 after a table on stdout: $(head -c 300 par$i.md)"
            [ "$(wc -l < par$i.err)" = 1 ] && grep -qx 'evaluate: shared is in use by another evaluate.sh (-o DIR): wait for it, or give another DIR' par$i.err ||
                fail "round $round, run $i: exit 1 saying: $(cat par$i.err)" ;;
        *) fail "round $round, run $i: exit $(cat par$i.rc): $(cat par$i.err)" ;;
        esac
    done
    [ "$won" -ge 1 ] || fail "round $round: no run of four succeeded"
done
for f in runs/part-0000/part.hs runs/part-0001/part.hs reject-input.tsv table.out; do
    cmp -s "shared/$f" "lone-files/$f" || fail "after the runs at once, shared/$f is not the lone run's"
done
[ -e shared/.evaluate.work ] && fail "the runs left their work folder: $(ls -A shared/.evaluate.work)"
expect_exit 1 "a failing run in a kept DIR" sh "$EV" --shards 2 -o shared --match-a 1 --match-b 0 -k 0 unc.npz
for f in runs/part-0000/part.hs table.out; do
    cmp -s "shared/$f" "lone-files/$f" || fail "a failed run changed shared/$f"
done

# --- a run killed with -9 leaves DIR's lock with it: its shard (an evaluate that sleeps) runs on,
# and the next run into DIR goes ahead at once (the shards' jobs never hold the lock: 9>&-)
mkdir -p fake/bin || fail "mkdir fake/bin"
for p in "$BIN"/*; do ln -s "$p" fake/bin/ || fail "ln $p"; done
rm fake/bin/evaluate
printf '#!/bin/sh\necho $$ > "%s/evaluate.pid"\nexec sleep 300\n' "$T" > fake/bin/evaluate && chmod 755 fake/bin/evaluate ||
    fail "the slow evaluate"
BUILD=$T/fake PATH="$T/fake/bin:$PATH" sh "$EV" --shards 1 -o slow unc.npz > /dev/null 2>&1 &
ev=$!
i=0
while [ ! -s evaluate.pid ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
[ -s evaluate.pid ] || fail "the slow evaluate never started"
rp=$(cat evaluate.pid)
trap 'kill $rp 2> /dev/null; rm -rf "$T"' EXIT
kill -9 $ev
wait $ev 2> /dev/null
sh "$EV" --shards 1 -o slow unc.npz > slow.md 2> slow.err || { kill $rp 2> /dev/null; fail "a run into slow after one killed with -9: $(cat slow.err)"; }
grep -q "^| map_r | 0.9" slow.md || fail "the run after the killed one: its table: $(cat slow.md)"
kill $rp 2> /dev/null

# --- --json into a link to /dev/stderr with -o DIR: the JSON goes into the log stderr is (it was
# written beside the link and renamed over it: the link became a file, the log got nothing)
ln -s /dev/stderr err.json || fail "ln err.json"
{ echo before >&2; sh "$EV" -o jdir --json err.json unc.npz > /dev/null; } 2> jlog || fail "--json err.json: $(cat jlog)"
[ -L err.json ] || fail "--json err.json (a link to /dev/stderr) replaced the link with a file: $(head -c 200 err.json)"
[ "$(head -n 1 jlog)" = before ] && grep -q '^{"program": "evaluate"' jlog || fail "--json err.json: the log: $(head -c 300 jlog)"

# --- a twin column, the aligned text table, and a gallery (the set itself, its own item excluded)
sh "$EV" --text --corrupt wrong.npz --json twin.json sep.npz > twin.txt 2> twin.err || fail "--corrupt: $(cat twin.err)"
grep -q '^metric  *input  *corrupt$' twin.txt || fail "--corrupt: no two columns: $(cat twin.txt)"
grep -q '^map_r  *1  *0.933333' twin.txt || fail "--corrupt: map_r: $(cat twin.txt)"
$PY -c 'import json; d = json.load(open("twin.json")); assert d["input"]["map_r"] == 1 and abs(d["corrupt"]["map_r"] - 28 / 30) < 1e-6, d' ||
    fail "twin.json: $(cat twin.json)"
fromnpz sep.npz > sep.hs 2> /dev/null || fail "fromnpz sep.npz"
sh "$EV" -g sep.hs --exclude-id sep.hs > gal.md 2> gal.err || fail "-g: $(cat gal.err)"
for m in 'knn (k = 5)' p1 map_r map; do [ "$(row gal.md "$m")" = 1 ] || fail "-g: $m: $(cat gal.md)"; done

# --- --distance cosine: knn and retrieval as the programs give them; a note for ap, nmi, ami.
# rays.npz: class c at angle 40c degrees, radius 1 + i (ten items), so the Euclidean neighbours
# of a far item are other classes' far items, the cosine ones its own class: every cosine metric 1
$PY -c 'import numpy as np; c = np.repeat(np.arange(3), 10); r = 1.0 + np.tile(np.arange(10), 3)
a = np.radians(40.0 * c + 0.5 * np.tile(np.arange(10), 3))
np.savez("rays.npz", mu=np.stack([r * np.cos(a), r * np.sin(a)], 1), labels=c)' || fail "rays.npz"
sh "$EV" --distance cosine --json rays.json rays.npz > rays.md 2> rays.err || fail "--distance cosine: $(cat rays.err)"
for m in 'knn (k = 5)' R@1 p1 rprec map_r map; do
    [ "$(row rays.md "$m")" = 1 ] || fail "--distance cosine: $m is '$(row rays.md "$m")', expected 1: $(cat rays.md)"
done
grep -q '^- distance (input): knn and retrieval rank by cosine similarity' rays.md || fail "no cosine note: $(cat rays.md)"
grep -q '"program": "evaluate", "distance": "cosine"' rays.json || fail "rays.json: $(cat rays.json)"
fromnpz rays.npz > rays.hs 2> /dev/null && retrieve --distance cosine --json rays-r.json rays.hs > /dev/null || fail "retrieve on rays"
[ "$(json_get map_r < rays-r.json)" = 1 ] || fail "retrieve --distance cosine on rays: $(cat rays-r.json)"
sh "$EV" rays.npz > raye.md 2> /dev/null || fail "rays.npz, euclidean"
check_lt "$(row raye.md map_r)" 1 "rays.npz: euclidean map_r is 1 too: the test tells nothing"
expect_exit 2 "--distance l2" sh "$EV" --distance l2 sep.npz

# --- pairs farther apart than float32's sigmoid(-d) can tell (classes 100 apart): a note
$PY -c 'import numpy as np; c = np.repeat(np.arange(3), 10)
np.savez("far.npz", mu=np.stack([100.0 * c, np.tile(np.arange(10), 3)], 1), labels=c)' || fail "far.npz"
sh "$EV" far.npz > far.md 2> far.err || fail "far.npz: $(cat far.err)"
grep -q '^- ap (input): some pairs are so far apart' far.md || fail "far.npz: no note on tied far pairs: $(cat far.md)"
grep -q 'so far apart' sep.md && fail "sep.npz: a note on far pairs: $(cat sep.md)"

# --- small sets (issue 34 item 8: knn -k 5 and retrieve -k 8 ended the battery on 4 items, and
# pairscore on singletons): every number that can be had, "-" with its reason for the rest, exit 0.
# The sets (.npz), on the line y = 0 unless said: one (1 item); two (2, one class: x = 0, 1); four
# (classes 0, 0, 1, 1 at (0, 0), (0, 1), (10, 0), (10, 1)); single (x = 0..7, classes 0..7); flat
# (x = 0..7, all class 0); gal (class 0 at (0, y), class 1 at (10, y), y = -0.5, 0.5, 1.5, and a
# class the queries lack, 2, at (5, 0)); other (class 2 only, at (5, 0), (5, 1), (5, 2))
$PY - <<'EOF3' || fail "making the small sets"
import numpy as np
def save(name, mu, y, **kw):
    np.savez(name + ".npz", mu=np.asarray(mu, float), labels=np.asarray(y), **kw)
line = lambda n: np.stack([np.arange(n), np.zeros(n)], 1)
save("one", [[0, 0]], [0])
save("two", line(2), [0, 0])
save("four", [[0, 0], [0, 1], [10, 0], [10, 1]], [0, 0, 1, 1], var=np.ones((4, 2)))
save("single", line(8), np.arange(8))
save("flat", line(8), np.zeros(8, int))
save("gal", [[0, -0.5], [0, 0.5], [0, 1.5], [10, -0.5], [10, 0.5], [10, 1.5], [5, 0]], [0, 0, 0, 1, 1, 1, 2])
save("other", [[5, 0], [5, 1], [5, 2]], [2, 2, 2])
EOF3
for f in one two four single flat gal other; do fromnpz $f.npz > $f.hs 2> /dev/null || fail "fromnpz $f.npz"; done
# rows FILE METRIC=VALUE...: each row of FILE's table is VALUE ("-" exactly, numbers within 1e-6)
rows() {
    r_file=$1
    shift
    for r_spec; do
        r_m=${r_spec%=*} r_want=${r_spec##*=}
        r_got=$(row "$r_file" "$r_m")
        if [ "$r_want" = - ]; then
            [ "$r_got" = - ] || fail "$r_file: $r_m is '$r_got', expected -: $(cat "$r_file")"
        else
            close "$r_file: $r_m" "$r_got" "$r_want"
        fi
    done
}
# small NAME ARGS...: evaluate.sh ARGS into NAME.md and NAME.json, exit 0 and nothing on stderr
small() {
    sm_name=$1
    shift
    sh "$EV" --json "$sm_name.json" "$@" > "$sm_name.md" 2> "$sm_name.err" || fail "$sm_name: exit $?: $(cat "$sm_name.err")"
    [ -s "$sm_name.err" ] && fail "$sm_name: messages on stderr: $(cat "$sm_name.err")"
    $PY -c 'import json, sys; json.load(open(sys.argv[1]))' "$sm_name.json" || fail "$sm_name.json is not JSON: $(cat "$sm_name.json")"
}
# has NAME LINE...: NAME.md has each LINE under its table, whole
has() {
    h_name=$1
    shift
    for h_l; do grep -qxF -- "- $h_l" "$h_name.md" || fail "$h_name: no note '$h_l': $(sed -n '/^$/,$p' "$h_name.md")"; done
}
RET='R@1 R@2 R@4 R@8 p1 rprec map_r map mrr'
avg_dashes() { rows "$1" 'p1 (class avg)=-' 'rprec (class avg)=-' 'map_r (class avg)=-' 'mrr (class avg)=-'; }
dashes() { for d_m; do printf '%s=- ' "$d_m"; done; }
# nmi and ami are k-means': the ones cluster itself gives (k-means may split four's pairs wrongly)
clus() { cluster -S 714 "$1.hs" | sed -n "s/^$2 //p"; }
# one item: no pair, no neighbour, no positive; one class, one cluster: NMI = AMI = 1 (sklearn's
# convention for a single class and cluster)
small one one.npz
rows one.md ap=- ece=- 'knn (k = 5)=-' $(dashes $RET) nmi=1 ami=1 tau=-
avg_dashes one.md
has one 'ap, ece (input): no class has two items: no matching pair to draw' \
    'knn (input): no neighbour: 1 item, leave-one-out' \
    'R@k, p1, rprec, map_r, map, mrr and their class averages (input): no query has a positive (another item of its class)' \
    'nmi, ami (input): one class, one cluster: 1 by convention (sklearn), nothing measured'
grep -q '"knn": null, "recall_at": \[1, 2, 4, 8\], "recall": \[null, null, null, null\], "p1": null' one.json || fail "one.json: $(cat one.json)"
# two items of one class: each the other's neighbour and only positive (k = 1: everything 1)
small two two.npz
rows two.md ap=- ece=- 'knn (k = 1)=1' R@1=1 R@2=- R@4=- R@8=- p1=1 rprec=1 map_r=1 map=1 mrr=1 'p1 (class avg)=1' nmi=1 ami=1
has two 'ap, ece (input): one class only: no non-matching pair to draw' \
    'knn: k = 1, not 5: a query of input has 1 neighbour (2 items, leave-one-out)' \
    'R@2, R@4, R@8 (input): more than the 1 neighbour a query has (2 items, leave-one-out)'
# four items, two classes of two: pairs at distance 1 match, the others are 10 or more apart: AP
# 1; k = 3: each query's 3 neighbours are its pair and the other class's two: KNN accuracy 0; its
# one positive is its nearest: R@1 = R@2 = P@1 = RP = MAP@R = mAP = MRR = 1
small four four.npz
rows four.md ap=1 ece=- 'knn (k = 3)=0' R@1=1 R@2=1 R@4=- R@8=- p1=1 rprec=1 map_r=1 map=1 mrr=1 'mrr (class avg)=1' \
    nmi="$(clus four nmi)" ami="$(clus four ami)" tau=- auroc=-
has four 'knn: k = 3, not 5: a query of input has 3 neighbours (4 items, leave-one-out)' \
    'R@4, R@8 (input): more than the 3 neighbours a query has (4 items, leave-one-out)' \
    'tau, auroc, aurc, eaurc (input): 4 queries cannot fill 20 bins'
grep -q '"knn": 0, "recall_at": \[1, 2, 4, 8\], "recall": \[1, 1, null, null\], "p1": 1,' four.json || fail "four.json: $(cat four.json)"
grep -q '"knn_k": 3' four.json || fail "four.json: no knn_k 3: $(cat four.json)"
# the gallery four itself, each query's own id excluded: the same neighbours as leave-one-out
small four-twin -g four.hs --exclude-id four.hs
rows four-twin.md 'knn (k = 3)=0' R@1=1 R@2=1 R@4=- R@8=- map_r=1
has four-twin 'knn: k = 3, not 5: a query of input has 3 neighbours (a gallery of 4 items, less the query'"'"'s own id)'
# every class one item: no pair, no positive; KNN is defined (every vote wrong: 0)
small single single.npz
rows single.md ap=- 'knn (k = 5)=0' $(dashes $RET) nmi="$(clus single nmi)" ami="$(clus single ami)"
avg_dashes single.md
has single 'ap, ece (input): no class has two items: no matching pair to draw' \
    'R@k, p1, rprec, map_r, map, mrr and their class averages (input): no query has a positive (another item of its class)'
# one class of eight: every neighbour a positive; R@8 needs 8 neighbours, a query has 7
small flat flat.npz
rows flat.md ap=- 'knn (k = 5)=1' R@1=1 R@2=1 R@4=1 R@8=- p1=1 rprec=1 map_r=1 map=1 mrr=1 nmi=1 ami=1
has flat 'ap, ece (input): one class only: no non-matching pair to draw' \
    'R@8 (input): more than the 7 neighbours a query has (8 items, leave-one-out)'
# a gallery with a class the queries lack (2, at (5, 0)): a query's 3 positives are its nearest
# (0.5, 0.5 and 1.5 away), class 2 is 5 or 5.1 away, the other class 10: every number 1, R@8 beyond
# the gallery's 7
small fourgal -g gal.hs four.hs
rows fourgal.md ap=1 'knn (k = 5)=1' R@1=1 R@2=1 R@4=1 R@8=- p1=1 rprec=1 map_r=1 map=1 mrr=1 'map_r (class avg)=1'
has fourgal 'R@8 (input): more than the 7 neighbours a query has (a gallery of 7 items)'
grep -q 'no positive' fourgal.md && fail "fourgal: a note on queries without a positive: $(cat fourgal.md)"
# a gallery without the queries' classes: every KNN vote wrong, no positive anywhere
small fourother -g other.hs four.hs
rows fourother.md 'knn (k = 3)=0' $(dashes $RET)
avg_dashes fourother.md
has fourother 'R@k, p1, rprec, map_r, map, mrr and their class averages (input): no query has a positive (an item of its class in the gallery)'
# a twin column smaller than the input: one k for the row, the smaller set's (sep.npz: k = 3 still
# finds its own class, 1; four: 0)
sh "$EV" --corrupt four.npz sep.npz > mixed.md 2> mixed.err || fail "--corrupt four.npz: $(cat mixed.err)"
[ "$(row mixed.md 'knn (k = 3)')" = "1 0" ] && [ "$(row mixed.md R@4)" = "1 -" ] && [ "$(row mixed.md map_r)" = "1 1" ] ||
    fail "--corrupt four.npz: $(cat mixed.md)"
has mixed 'knn: k = 3, not 5: a query of corrupt has 3 neighbours (4 items, leave-one-out)'
# -k K1,... beyond a small set: R@k as far as it goes (-k 4,8 on four: none; the rest stays)
small fourk -k 1,3,8 four.npz
rows fourk.md R@1=1 R@3=1 R@8=- map_r=1
sh "$EV" -k 4,8 four.npz > fourk48.md 2> fourk48.err || fail "-k 4,8 on four: $(cat fourk48.err)"
rows fourk48.md R@4=- R@8=- map_r=1 p1=1

# --- refusals: one line, exit 1; misuse: usage, exit 2
sh "$EV" -h > help.out 2>&1 && grep -q "^evaluate.sh \[evaluate's options\] \[--shards N" help.out || fail "-h: $(head -n 3 help.out)"
expect_exit 1 "a missing file" sh "$EV" nosuch.npz
grep -qx 'evaluate: nosuch.npz: No such file or directory' "$T/expect.err" || fail "missing file: $(cat "$T/expect.err")"
echo "not a stream" > bad.hs
expect_exit 1 "a text file" sh "$EV" bad.hs
[ "$(wc -l < "$T/expect.err")" = 1 ] || fail "text file: not one line: $(cat "$T/expect.err")"
grep -q '^evaluate: bad.hs: not a hedge stream' "$T/expect.err" || fail "text file: $(cat "$T/expect.err")"
expect_exit 1 "a text file, --shards" sh "$EV" --shards 2 -o badout bad.hs
grep -q '^evaluate: shard part-0000 (--shard 0/2 of bad.hs) failed: evaluate-shard: --shard 0/2 failed: evaluate: .*input.hs: not a hedge stream' "$T/expect.err" ||
    fail "text file, --shards: $(cat "$T/expect.err")"
$PY -c 'import numpy as np; np.savez("img.npz", image=np.zeros((4, 5, 5), np.uint8), labels=np.arange(4))' &&
    fromnpz -k images img.npz > digits.hs 2> /dev/null || fail "making an images stream"
expect_exit 1 "images" sh "$EV" digits.hs
grep -qx "evaluate: digits.hs: expected a stream of kind 'embeddings' (or 'eta'), got 'images' (from fromnpz)" "$T/expect.err" ||
    fail "images: $(cat "$T/expect.err")"
expect_exit 2 "--match-a -1" sh "$EV" --match-a -1 --match-b 0 sep.npz
grep -qx 'evaluate: --match-a: -1 is out of range \[1e-300, 1e+300\]' "$T/expect.err" || fail "--match-a -1: $(cat "$T/expect.err")"
expect_exit 1 "a shard failing" sh "$EV" --shards 2 -o failout --match-a -1 --match-b 0 sep.npz
grep -q '^evaluate: shard part-0000 (--shard 0/2 of sep.npz) failed: .*--match-a: -1 is out of range \[1e-300, 1e+300\] (this run' "$T/expect.err" ||
    fail "--shards, --match-a -1: $(cat "$T/expect.err")"
expect_exit 2 "-k decreasing" sh "$EV" -k 4,2 sep.npz
expect_exit 2 "-k 0" sh "$EV" -k 0,1 sep.npz
expect_exit 2 "-k not numbers" sh "$EV" -k 1,x sep.npz
PYTHONPATH="$root/python" $PY -c 'import numpy as np, hedge_stream as hs
hs.write("empty.hs", "embeddings", {"mu": np.zeros((0, 1, 2), np.float32), "class": np.zeros(0, np.int64)})' || fail "empty.hs"
expect_exit 1 "no items" sh "$EV" empty.hs
grep -qx 'evaluate: empty.hs: the stream has no records (nothing to evaluate)' "$T/expect.err" || fail "no items: $(cat "$T/expect.err")"
expect_exit 2 "no input" sh "$EV"
expect_exit 2 "--match-a alone" sh "$EV" --match-a 1 sep.npz

# --- the README's recipe ("Use hedge on your own data", the block that runs evaluate.sh), as written
awk '/^## Use hedge on your own data$/ { on = 1; next } on && /^## / { exit } on' "$root/README.md" > section
awk '/^```sh$/ { b = 1; blk = ""; next } /^```$/ { if (b && blk ~ /evaluate\.sh/) printf "%s", blk; b = 0 } b { blk = blk $0 "\n" }' section > recipe.sh
grep -q 'pipelines/evaluate.sh' recipe.sh || fail "README.md: no evaluate.sh recipe in 'Use hedge on your own data'"
mkdir -p tree/build && ln -s "$BIN" tree/build/bin && ln -s "$root/pipelines" tree/pipelines || fail "tree"
(cd tree && env -u BUILD PATH=/usr/bin:/bin sh -e ../recipe.sh > out 2> err) || fail "the README's recipe failed: $(tail -n 5 tree/err)"
grep -q '^| map_r | 0\.[0-9]* |$' tree/out || fail "README recipe: no MAP@R row: $(cat tree/out)"
grep -q '^| tau | 0\.[0-9]* |$' tree/out || fail "README recipe: no tau row: $(cat tree/out)"
pass
