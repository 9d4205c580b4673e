#!/bin/sh
# knn and retrieve --queries FROM:TO (issue 21 item 4): shards of uneven sizes, not multiples of
# 32, given out of order, put back together by --summary and --merge equal the unsharded run to
# the bit (every record field, the meta, the JSON line): leave-one-out, against a gallery with
# --exclude-id whose coordinates are coarser than the queries' (the centre's rounding), under
# --distance cosine, on random float32 points; retrieve --at-r the same (and its metrics against
# the definitions on a ranking in double); a shard whose queries have no positive; the
# refusals (a gap, an overlap, a whole output among shards, shards of another run, a range past
# the input, --queries with --global); evaluate.sh --shards N equal to evaluate.sh, locally
# (through the loopback sshd: tests/shell/grid.sh), on sets too small for knn or retrieve too. Needs Debian's python3 with numpy.
set -u
. "$(dirname "$0")/../lib.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)
PY=/usr/bin/python3
export PYTHONPATH="$root/python"
FIX=$BIN/../tests/test_evalfix
cd "$T" || fail "cd $T"

# 700 random points in D = 16, 11 classes of unequal sizes (class 10 one item: no positive), a
# variance (eta), ids 1000..; the gallery: 400 more with coordinates rounded to 1/8
$PY - <<'EOF' || fail "fixtures"
import numpy as np, hedge_stream as hs
r = np.random.default_rng(4)
n = 700
y = np.minimum(r.geometric(0.25, n) - 1, 9); y[400] = 10
mu = (r.normal(size=(n, 16)) + 0.7 * y[:, None] * np.sin(np.arange(16))).astype(np.float32)
var = np.exp(r.normal(size=(n, 16))).astype(np.float32)
hs.write("q.hs", "embeddings", {"mu": mu, "var": var, "class": y, "id": np.arange(n) + 1000})
g = np.round(8 * (r.normal(size=(400, 16)) + 0.7 * (np.arange(400) % 10)[:, None] * np.sin(np.arange(16)))) / 8
hs.write("g.hs", "embeddings", {"mu": g.astype(np.float32), "class": np.arange(400) % 10, "id": np.arange(400) + 5000})
EOF
KCOLS='id class predicted correct recall nn_dist neighbors eta'
RCOLS='id class ap rprec map_r p1 recall npos first_rank eta'
# meta FILE: the stream's own header without its provenance
meta() { tshow -H "$1" | sed -n 2p | sed 's/, "provenance".*//'; }
# same PROG COLS WHOLE MERGED: every record field and the meta equal
same() {
    "$FIX" cols $2 < "$3" > "$T/w.c" && "$FIX" cols $2 < "$4" > "$T/m.c" || fail "$1: cols"
    cmp -s "$T/w.c" "$T/m.c" || fail "$1: the merged records differ: $(diff "$T/w.c" "$T/m.c" | head -n 4)"
    [ "$(meta "$3")" = "$(meta "$4")" ] || fail "$1: the merged meta differs: $(meta "$4")"
}
# check NAME PROG ARGS...: PROG ARGS on all of q.hs against shards 0:97 97:130 130:400 400:401
# 401:700 (given out of order): --summary and --merge equal the whole run's
check() {
    c_name=$1 c_prog=$2
    shift 2
    "$c_prog" "$@" --json "$c_name.json" q.hs > "$c_name.hs" 2> /dev/null || fail "$c_name: the whole run"
    c_shards=""
    for r in 401:700 0:97 130:400 97:130 400:401; do
        "$c_prog" "$@" --queries "$r" q.hs > "$c_name-$r.hs" 2> "$c_name-$r.err" || fail "$c_name --queries $r: $(cat "$c_name-$r.err")"
        c_shards="$c_shards $c_name-$r.hs"
    done
    "$c_prog" --summary $c_shards > "$c_name.sum" || fail "$c_name: --summary of the shards"
    cmp -s "$c_name.sum" "$c_name.json" || fail "$c_name: --summary of the shards: $(cat "$c_name.sum") against $(cat "$c_name.json")"
    "$c_prog" --merge $c_shards > "$c_name.merged" || fail "$c_name: --merge"
    "$c_prog" --summary "$c_name.merged" | cmp -s - "$c_name.json" || fail "$c_name: --summary of the merged stream"
    case $c_prog in knn) same "$c_name" "$KCOLS" "$c_name.hs" "$c_name.merged" ;;
    *) same "$c_name" "$RCOLS" "$c_name.hs" "$c_name.merged" ;; esac
}
check knn-loo knn -k 5
check knn-gal knn -k 4 -g q.hs --exclude-id
check knn-cos knn -k 3 --distance cosine -g g.hs
check ret-loo retrieve -k 1,2,4
check ret-gal retrieve -k 1,8 -g g.hs
check ret-excl retrieve -g q.hs -g g.hs --exclude-id
check ret-cos retrieve --distance cosine
check ret-atr retrieve -k 1,2,4 --at-r
check ret-atr-excl retrieve --at-r -g q.hs -g g.hs --exclude-id
check ret-atr-cos retrieve --at-r --distance cosine
# --at-r against the definitions on a ranking in double (numpy; the exact distances knn re-ranks
# by, equal ones by gallery index): rprec, map_r, p1, recall to float32, first_rank where within
# the depth (0 beyond it), ap NaN; leave-one-out and a gallery of two streams with --exclude-id.
# (The full ranking orders float32 distances: here it swaps one near-tie, 4e-5 apart at 43.)
$PY - ret-atr.hs ret-atr-excl.hs <<'EOF' || fail "--at-r against the definitions in double"
import sys
import numpy as np, hedge_stream as hs
_, q = hs.read("q.hs")
_, g = hs.read("g.hs")
ks = {"ret-atr.hs": [1, 2, 4], "ret-atr-excl.hs": [1, 2, 4, 8]}
for path in sys.argv[1:]:
    h, r = hs.read(path)
    Q = q["mu"].reshape(len(q["id"]), -1).astype(np.float64)
    if path == "ret-atr.hs":
        G, gc, gid = Q, q["class"], q["id"]
    else:
        G = np.concatenate([Q, g["mu"].reshape(len(g["id"]), -1).astype(np.float64)])
        gc, gid = np.concatenate([q["class"], g["class"]]), np.concatenate([q["id"], g["id"]])
    depth, bad = h["meta"]["retrieval_depth"], 0
    row = {int(i): n for n, i in enumerate(r["id"])}
    for x, c, i in zip(Q, q["class"], q["id"]):
        d = ((G - x) ** 2).sum(1)
        keep = gid != i
        order = np.nonzero(keep)[0][np.argsort(d[keep], kind="stable")]
        pos = gc[order] == c
        R = int(pos.sum())
        if not R:
            bad += int(i) in row
            continue
        ranks = np.nonzero(pos)[0] + 1
        top = ranks[ranks <= R]
        want = [len(top) / R, (np.arange(1, len(top) + 1) / top).sum() / R, ranks[0] == 1] + [ranks[0] <= k for k in ks[path]]
        m = row[int(i)]
        got = [r["rprec"][m], r["map_r"][m], r["p1"][m]] + list(r["recall"][m])
        bad += not np.allclose(np.array(got, float), np.array(want, float), rtol=0, atol=1e-6)
        bad += r["npos"][m] != R or not np.isnan(r["ap"][m])
        bad += r["first_rank"][m] != (ranks[0] if ranks[0] <= depth else 0)
    if bad:
        sys.exit("%s: %d values differ from the definitions (depth %d)" % (path, bad, depth))
EOF
grep -q '"ranking": "at_r", "depth": ' ret-atr.json && grep -q '"map": null' ret-atr.json ||
    fail "--at-r JSON: $(cat ret-atr.json)"
expect_fail 1 'ret-loo-97:130.hs: meta retrieval_ranking differs from ret-atr-0:97.hs' retrieve --summary ret-atr-0:97.hs ret-loo-97:130.hs ret-loo-130:400.hs ret-loo-400:401.hs ret-loo-401:700.hs
expect_fail 2 '--at-r: --global and --clean need every pair' retrieve --at-r --clean 10 q.hs
expect_fail 2 '--at-r: --global and --clean need every pair' retrieve --at-r --global q.hs
# the shards hold what they say: ids kept, 97:130 is records 97..129 (ids 1097..1129)
"$FIX" cols id < knn-loo-97:130.hs | sed -n '2p;$p' | tr '\n' ' ' | grep -qx '1097 1129 ' ||
    fail "knn shard 97:130 ids: $("$FIX" cols id < knn-loo-97:130.hs | sed -n '2p;$p')"
tshow -q knn-loo-97:130.hs | grep -q '"queries_from": 97, "queries_to": 130, "queries_total": 700' ||
    fail "shard meta: $(tshow -q knn-loo-97:130.hs)"
meta knn-loo.hs | grep -q queries_from && fail "a whole run has queries_from"
# 400:401 is the item of class 10: no positive, no record, counted
grep -q '"no_positive": 1' ret-loo.json || fail "the fixture has no query without a positive: $(cat ret-loo.json)"
[ "$("$FIX" cols id < ret-loo-400:401.hs | wc -l)" = 1 ] && tshow -q ret-loo-400:401.hs | grep -q '"no_positive": 1' ||
    fail "the shard without a positive: $(tshow -q ret-loo-400:401.hs)"
# the default is the whole input, as before
knn -k 5 --queries 0:700 q.hs | "$FIX" cols $KCOLS | cmp -s - "$("$FIX" cols $KCOLS < knn-loo.hs > k.c; echo k.c)" ||
    fail "--queries 0:700 differs from the whole run"

# --- refusals
expect_fail 1 'queries 97:130 are in no shard' knn --summary knn-loo-0:97.hs knn-loo-130:400.hs knn-loo-400:401.hs knn-loo-401:700.hs
expect_fail 1 'queries 0:97 are in no shard' retrieve --merge ret-loo-97:130.hs ret-loo-130:400.hs ret-loo-400:401.hs ret-loo-401:700.hs
expect_fail 1 'queries 401:700 are in no shard' knn --merge knn-loo-0:97.hs knn-loo-97:130.hs knn-loo-130:400.hs knn-loo-400:401.hs
knn -k 5 --queries 90:140 q.hs > over.hs || fail "--queries 90:140"
expect_fail 1 'overlaps' knn --summary knn-loo-0:97.hs over.hs knn-loo-130:400.hs knn-loo-400:401.hs knn-loo-401:700.hs
expect_fail 1 'knn-loo-0:97.hs is a shard (queries_from) but knn-loo.hs is not' knn --summary knn-loo.hs knn-loo-0:97.hs
expect_fail 1 'knn-loo.hs is a whole output (no queries_from)' knn --summary knn-loo.hs knn-gal.hs
expect_fail 1 'other fields than' knn --summary knn-gal-0:97.hs knn-loo-97:130.hs knn-loo-130:400.hs knn-loo-400:401.hs knn-loo-401:700.hs
knn -k 5 -g q.hs --exclude-id --queries 0:97 q.hs > other.hs || fail "knn -g --queries 0:97"
expect_fail 1 'knn-loo-97:130.hs: meta knn_gallery differs from other.hs' knn --summary knn-loo-97:130.hs other.hs knn-loo-130:400.hs knn-loo-400:401.hs knn-loo-401:700.hs
retrieve -k 1,2,4 -g g.hs --queries 0:97 q.hs > other-r.hs || fail "retrieve -g --queries 0:97"
expect_fail 1 'ret-loo-97:130.hs: meta retrieval_gallery differs from other-r.hs' retrieve --summary other-r.hs ret-loo-97:130.hs ret-loo-130:400.hs ret-loo-400:401.hs ret-loo-401:700.hs
expect_fail 1 'not a shard' retrieve --merge ret-loo.hs
expect_fail 1 'q.hs: --queries 600:701 reaches past its 700 records' knn --queries 600:701 q.hs
expect_fail 1 'q.hs: --queries 600:701 reaches past its 700 records' retrieve --queries 600:701 q.hs
for bad in 5:5 7:3 :9 3: 3 a:b -1:4; do
    expect_fail 2 '--queries' knn --queries "$bad" q.hs
    expect_fail 2 '--queries' retrieve --queries "$bad" q.hs
done
expect_fail 2 '--global and --clean take every query' retrieve --global --queries 0:9 q.hs
expect_fail 2 '--global and --clean take every query' retrieve --clean 10 --queries 0:9 q.hs
expect_fail 2 'no -k' knn --summary --queries 0:9 knn-loo.hs
expect_fail 2 'at most one input' knn q.hs q.hs
expect_fail 2 'give each shard as a file' retrieve --summary - ret-loo-0:97.hs

# --- evaluate.sh --shards N locally (evaluate --shard I/N, then --merge): the same table and JSON
EV="$root/pipelines/evaluate.sh"
sh "$EV" -g q.hs --exclude-id --distance cosine --json whole.json q.hs > whole.md 2> whole.err || fail "evaluate.sh: $(cat whole.err)"
sh "$EV" -g q.hs --exclude-id --distance cosine --shards 3 -j 2 -o ev3 --json ev3.json q.hs > ev3.md 2> ev3.err ||
    fail "evaluate.sh --shards 3: $(cat ev3.err)"
[ -s ev3.err ] && fail "evaluate.sh --shards 3 said something: $(cat ev3.err)"
grep -v 'error-versus-reject curve' ev3.md | cmp -s - whole.md || fail "--shards 3: another table: $(diff whole.md ev3.md)"
sed 's/, "reject_tsv": "[^"]*"//' ev3.json | cmp -s - whole.json || fail "--shards 3: another JSON: $(cat ev3.json)"
[ "$(cat ev3/shards.txt | tr '\n' ' ')" = "part-0000 0/3 part-0001 1/3 part-0002 2/3 " ] ||
    fail "the shards: $(cat ev3/shards.txt)"
# each shard's queries: 700 / 3 by evaluate --shard I/N (n I / N .. n (I + 1) / N)
for i in 0 1 2; do
    tshow -H "ev3/runs/part-000$i/part.hs" | tr ',' '\n' | grep '"queries_' | tr -d ' "}\n'
    echo
done > ev3.ranges
[ "$(tr '\n' ' ' < ev3.ranges)" = "queries_from:0queries_to:233queries_total:700 queries_from:233queries_to:466queries_total:700 queries_from:466queries_to:700queries_total:700 " ] ||
    fail "the shards' queries: $(cat ev3.ranges)"
grep -q 'knn (k = 5)' ev3.md || fail "no knn row: $(cat ev3.md)"
# sets too small for a program (issue 34 item 8): the shards leave it out as evaluate.sh does
# alone (40 items each its own class: no retrieval, 2 shards of knn; 1 item: neither)
$PY -c 'import numpy as np, hedge_stream as hs
hs.write("lone40.hs", "embeddings", {"mu": np.arange(80, dtype=np.float32).reshape(40, 1, 2), "class": np.arange(40)})
hs.write("lone1.hs", "embeddings", {"mu": np.zeros((1, 1, 2), np.float32), "class": np.zeros(1, np.int64)})' || fail "the small sets"
for x in lone40 lone1; do
    sh "$EV" --json "$x.json" "$x.hs" > "$x.md" 2> "$x.err" || fail "evaluate.sh $x.hs: $(cat "$x.err")"
    sh "$EV" --shards 2 --json "$x-s.json" "$x.hs" > "$x-s.md" 2> "$x-s.err" || fail "evaluate.sh --shards 2 $x.hs: $(cat "$x-s.err")"
    cmp -s "$x.md" "$x-s.md" && cmp -s "$x.json" "$x-s.json" || fail "--shards 2 on $x.hs: another table: $(diff "$x.md" "$x-s.md")"
done
[ "$(awk '/^(Uncertainty|Verification) \(/ { exit } { print }' lone40.md | grep -c ' | - |$')" = 19 ] ||
    fail "lone40: not 19 numbers '-' in the battery's table: $(cat lone40.md)"
expect_exit 2 "--shards 0" sh "$EV" --shards 0 q.hs
expect_exit 2 "--sshlogin without --shards" sh "$EV" --sshlogin : q.hs
pass
