#!/bin/sh
# bin/evaluate (lib/engine/hedge.h's one call) against the separate programs (knn, retrieve, cluster,
# pairscore | apcurve, ktau, run here: the same numbers, each printed %.10g) and against its shards
# (evaluate --shard I/N ... --merge, as evaluate.sh --shards runs them: the same table and JSON,
# byte for byte), on random sets with and without var, a match probability, a gallery with and
# without --exclude-id and with classes the queries lack, cosine, mls, a twin column, -k/-n/-S,
# a stream with match_a in its header, and the small sets whose numbers are "-" (1 item, 2 items
# of one class, 3 singletons, 4 items, one class); then hostile inputs refused in one line.
set -u
. "$(dirname "$0")/../lib.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)
PY=/usr/bin/python3
EV="$root/pipelines/evaluate.sh"
cd "$T"
$PY - <<'PYEOF' || fail "making the sets"
import numpy as np
rng = np.random.default_rng(36)
C = rng.normal(size=(14, 16))
def mk(name, n, ncls, extra=0.0, var=True, seed=0):
    r = np.random.default_rng(seed)
    y = r.integers(0, ncls, n).astype(np.int32)
    mu = (C[y] + 0.8 * r.normal(size=(n, 16))).astype(np.float32)
    d = dict(mu=mu, labels=y)
    if var:
        d["var"] = (0.5 * np.exp(0.3 * r.normal(size=(n, 16)))).astype(np.float32)
    np.savez(name, **d)
mk("rnd.npz", 300, 12, seed=1)
mk("pts.npz", 200, 6, var=False, seed=2)
mk("gal.npz", 150, 14, seed=3)
mk("galfew.npz", 150, 5, seed=4)
mk("twin.npz", 300, 12, seed=5)
for name, y in [("one.npz", [0]), ("two.npz", [3, 3]), ("single.npz", [0, 1, 2]), ("four.npz", [0, 0, 1, 1]),
                ("oneclass.npz", [2] * 25)]:
    y = np.array(y, np.int32)
    np.savez(name, mu=(C[y, :4] + 0.5 * rng.normal(size=(len(y), 4))).astype(np.float32),
             var=np.full((len(y), 4), 0.3, np.float32), labels=y)
PYEOF
fromnpz --match-a 2 --match-b 1 rnd.npz > rnd-ab.hs 2> /dev/null || fail "fromnpz"

# progs NAME ARGS... INPUT: the battery's numbers by the separate programs, as the pipeline of
# knn, retrieve, cluster, pairscore | apcurve and ktau computes them (the evaluate.sh of before
# issue 45 ran them), against bin/evaluate's JSON of the same ARGS, number by number (both print
# %.10g): every number evaluate gives (not null) is the program's. SET is input, or corrupt for
# --corrupt's twin.
n=0 p_count=0
p_num() { jq -r "$1" "$2"; }
progs() {
    p_name=$1 p_dist=euclidean p_g="" p_x="" p_k=1,2,4,8 p_n=10000 p_S=714 p_ab="" p_twin=""
    shift
    p_args="$*"
    while [ $# -gt 1 ]; do
        case $1 in
        --distance) p_dist=$2; shift ;; -g) p_g=$2; shift ;; --exclude-id) p_x=--exclude-id ;;
        -k) p_k=$2; shift ;; -n) p_n=$2; shift ;; -S) p_S=$2; shift ;; --corrupt) p_twin=$2; shift ;;
        --match-a) p_ab="--match-a $2 --match-b $4"; shift 3 ;; --text) ;;
        esac
        shift
    done
    p_in=$1
    evaluate --json "$p_name.c.json" $p_args > "$p_name.c.md" 2> "$p_name.c.err" || fail "$p_name: evaluate: $(cat "$p_name.c.err")"
    [ -s "$p_name.c.err" ] && fail "$p_name: evaluate wrote on stderr: $(cat "$p_name.c.err")"
    # the sets as streams, as fromnpz reads them (a match probability only where given)
    p_hs() { case $1 in *.npz) fromnpz $p_ab "$1" ;; *) cat "$1" ;; esac; }
    p_hs "$p_in" > "$p_name.in.hs" && { [ -z "$p_twin" ] || p_hs "$p_twin" > "$p_name.corrupt.hs"; } &&
        { [ -z "$p_g" ] || p_hs "$p_g" > "$p_name.g.hs"; } || fail "$p_name: fromnpz"
    p_gal=${p_g:+-g $p_name.g.hs $p_x}
    p_kk=$(p_num '.knn_k' "$p_name.c.json")
    for p_set in input ${p_twin:+corrupt}; do
        p_f=$p_name.in.hs
        [ $p_set = corrupt ] && p_f=$p_name.corrupt.hs
        p_j=$p_name.c.json p_o=$p_name.$p_set
        p_has() { [ "$(p_num ".$p_set.$1" "$p_j")" != null ]; }
        p_eq() { # KEY VALUE: evaluate's number of KEY is VALUE
            [ "$(p_num ".$p_set.$1" "$p_j")" = "$2" ] || fail "$p_name ($p_set): $1 $(p_num ".$p_set.$1" "$p_j"), the programs' $2 ($p_args)"
            p_count=$((p_count + 1))
        }
        if p_has ap; then
            if [ "$p_dist" = mls ]; then
                pairscore --score mls -n "$p_n" -S "$p_S" "$p_f" > "$p_o.pairs"
            elif tshow -H "$p_f" | sed 's/"provenance".*//' | grep -q '"match_a"'; then
                pairscore -n "$p_n" -S "$p_S" "$p_f" > "$p_o.pairs"
            else
                tonpz "$p_f" | fromnpz --match-a 1 --match-b 0 - | pairscore --means -n "$p_n" -S "$p_S" > "$p_o.pairs"
            fi || fail "$p_name: pairscore"
            p_ece=""
            p_has ece && p_ece="--ece 15"
            apcurve --json "$p_o.ap.json" $p_ece "$p_o.pairs" > /dev/null 2>&1 || fail "$p_name: apcurve"
            p_eq ap "$(p_num .ap "$p_o.ap.json")"
            ! p_has ece || p_eq ece "$(p_num .ece "$p_o.ap.json")"
        fi
        if p_has knn; then
            knn -k "$p_kk" --distance "$p_dist" $p_gal "$p_f" > "$p_o.knn" 2> /dev/null || fail "$p_name: knn"
            p_eq knn "$(knn --summary "$p_o.knn" | jq -r .accuracy)"
            if p_has tau; then
                ktau --json "$p_o.ktau.json" -b 20 -S "$p_S" -m accuracy:correct "$p_o.knn" > /dev/null 2>&1 || fail "$p_name: ktau"
                for p_m in tau auroc aurc eaurc; do ! p_has $p_m || p_eq $p_m "$(p_num .$p_m "$p_o.ktau.json")"; done
            fi
        fi
        if p_has p1; then # retrieve with the k evaluate could give (its R@k of a larger k is null)
            p_ks=$(jq -r ".$p_set as \$s | [range(0; \$s.recall | length) | select(\$s.recall[.] != null) | \$s.recall_at[.]] | join(\",\")" "$p_j")
            retrieve -k "${p_ks:-1}" --distance "$p_dist" $p_gal --json "$p_o.ret.json" "$p_f" > /dev/null 2>&1 || fail "$p_name: retrieve"
            for p_m in p1 rprec map_r map mrr p1_avg_of_avgs rprec_avg_of_avgs map_r_avg_of_avgs mrr_avg_of_avgs; do
                p_eq $p_m "$(p_num .$p_m "$p_o.ret.json")"
            done
            [ -z "$p_ks" ] || [ "$(jq -c "[.$p_set.recall[] | select(. != null)]" "$p_j")" = "$(jq -c .recall "$p_o.ret.json")" ] ||
                fail "$p_name ($p_set): R@k $(jq -c ".$p_set.recall" "$p_j"), retrieve's $(jq -c .recall "$p_o.ret.json")"
        fi
        cluster -S "$p_S" --json "$p_o.cl.json" "$p_f" > /dev/null 2>&1 || fail "$p_name: cluster"
        p_eq nmi "$(p_num .nmi "$p_o.cl.json")"
        p_eq ami "$(p_num .ami "$p_o.cl.json")"
    done
    n=$((n + 1))
}
# same NAME ARGS...: the programs' numbers (progs), and evaluate.sh --shards 3 (evaluate --shard I/3,
# then --merge; a set of fewer than 3 items leaves shards empty) prints bin/evaluate's table and
# JSON, each with -o DIR (the reject curves named alike)
same() {
    s_name=$1
    shift
    progs "$s_name" "$@"
    [ -n "${noshard:-}" ] && return 0
    evaluate -o "$s_name.o" --json "$s_name.c.json" "$@" > "$s_name.c.md" 2> /dev/null || fail "$s_name: evaluate -o"
    sh "$EV" --shards 3 -j 2 -o "$s_name.o" --json "$s_name.s.json" "$@" > "$s_name.s.md" 2> "$s_name.s.err" ||
        fail "$s_name: evaluate.sh --shards 3: $(cat "$s_name.s.err")"
    cmp -s "$s_name.s.md" "$s_name.c.md" || fail "$s_name: --shards 3: the tables differ: $(diff "$s_name.s.md" "$s_name.c.md")"
    cmp -s "$s_name.s.json" "$s_name.c.json" || fail "$s_name: --shards 3: the JSON differs: $(diff "$s_name.s.json" "$s_name.c.json")"
}
same rnd rnd.npz
same pts pts.npz
same ab --match-a 1 --match-b 0 rnd.npz
same abhs rnd-ab.hs
same gal -g gal.npz rnd.npz
same galx -g gal.npz --exclude-id rnd.npz
same galfew -g galfew.npz rnd.npz
same cos --distance cosine rnd.npz
same coshs --distance cosine -g gal.npz rnd-ab.hs
same mls --distance mls rnd.npz
same mlsg --distance mls -g gal.npz rnd.npz
same twin --text --corrupt twin.npz rnd.npz
same opts -k 1,3,50 -n 500 -S 3 rnd.npz
for s in one two single four oneclass; do same "$s" "$s.npz"; done
noshard=1 same fewtwin --corrupt four.npz rnd.npz # (a "twin" of other size: its shards would be other ranges)
expect_fail 1 "evaluate: four.npz: 4 items, but rnd.npz has 300: the shards' records hold both sets' answers to" \
    evaluate --shard 0/2 --corrupt four.npz rnd.npz
same galone -g one.npz --exclude-id four.npz
# -o DIR: the error-versus-reject curve, ktau --reject-tsv's bytes, named under the table
evaluate -o od --corrupt twin.npz rnd.npz > od.md 2> od.err || fail "evaluate -o: $(cat od.err)"
fromnpz rnd.npz | knn -k 5 | ktau -b 20 -m accuracy:correct --reject-tsv reject-input.tsv > /dev/null 2>&1 &&
    fromnpz twin.npz | knn -k 5 | ktau -b 20 -m accuracy:correct --reject-tsv reject-corrupt.tsv > /dev/null 2>&1 || fail "knn | ktau"
for s in input corrupt; do
    cmp -s "reject-$s.tsv" "od/reject-$s.tsv" || fail "-o: reject-$s.tsv differs from ktau's"
done
grep -q '^- error-versus-reject curve (corrupt): od/reject-corrupt.tsv$' od.md || fail "-o: the curve is not named: $(cat od.md)"
# the same bytes whatever the thread count (the shared pass's kNN included)
evaluate -t 3 -o rnd.o rnd.npz > rnd.t3.md 2> /dev/null && cmp -s rnd.t3.md rnd.c.md || fail "-t 3 differs from -t 1: $(diff rnd.t3.md rnd.c.md)"
evaluate -t 2 -o galx.o -g gal.npz --exclude-id rnd.npz > galx.t2.md 2> /dev/null && cmp -s galx.t2.md galx.c.md ||
    fail "-t 2 -g differs from -t 1: $(diff galx.t2.md galx.c.md)"
grep -q '^| knn (k = 3) |' fewtwin.c.md || fail "fewtwin: knn's k is not the four items' 3: $(cat fewtwin.c.md)"
grep -q '^| map_r | -' one.c.md || fail "one.npz: map_r is not '-': $(cat one.c.md)"
grep -q '"tau": -\{0,1\}0\.[0-9]' rnd.c.json || fail "rnd.npz: no tau: $(cat rnd.c.json)"
grep -q '"ece": 0\.[0-9]' ab.c.json || fail "ab: no ece: $(cat ab.c.json)"

# hostile inputs: one line each, exit 1, nothing on stdout
$PY - <<'PYEOF' || fail "making the hostile sets"
import numpy as np
mu = np.zeros((10, 3), np.float32); mu[:, 0] = np.arange(10); y = np.arange(10) % 2
m = mu.copy(); m[7, 1] = np.nan
np.savez("nan.npz", mu=m, labels=y)
np.savez("short.npz", mu=mu, labels=y[:9])
np.savez("empty.npz", mu=np.zeros((0, 3), np.float32), labels=np.zeros(0, np.int32))
np.savez("g7.npz", mu=np.zeros((5, 7), np.float32), labels=np.arange(5))
PYEOF
expect_fail 1 "evaluate: nan.npz: array 'mu' is float32 (10, 3): element 22 is nan: expected finite values" evaluate nan.npz
[ "$(wc -l < "$T/err")" = 1 ] || fail "NaN: more than one line: $(cat "$T/err")"
expect_fail 1 "evaluate: short.npz: array 'labels' is int64 (9,): expected one class per item of 'mu', [10]" evaluate short.npz
[ "$(wc -l < "$T/err")" = 1 ] || fail "labels of another length: more than one line: $(cat "$T/err")"
expect_fail 1 "evaluate: empty.npz: array 'mu' is float32 (0, 3): expected at least one item" evaluate empty.npz
expect_fail 1 "evaluate: empty.npz: array 'mu' is float32 (0, 3): expected at least one item" evaluate -g empty.npz four.npz
expect_fail 1 "evaluate: four.npz: gallery: 7 dimensions, expected 4 (the queries')" evaluate -g g7.npz four.npz
expect_fail 2 "evaluate: --exclude-id needs -g GALLERY" evaluate --exclude-id four.npz
expect_fail 2 "evaluate: --distance: 'l1' is none of euclidean, cosine, mls (elk), w2, csd, kl, bhattacharyya" evaluate --distance l1 four.npz
expect_fail 1 "evaluate: pts.npz: queries: distance mls needs var and one component (C = 1), got no var and C = 1" \
    evaluate --distance mls pts.npz
# shards refused: a gap, an overlap, another run's options or data, a truncated shard
evaluate --shard 0/3 rnd.npz > p0.hs && evaluate --shard 1/3 rnd.npz > p1.hs && evaluate --shard 2/3 rnd.npz > p2.hs ||
    fail "evaluate --shard"
evaluate -k 1,2 --shard 1/3 rnd.npz > k1.hs && evaluate --shard 1/3 twin.npz > t1.hs || fail "evaluate --shard (others)"
head -c 300 p1.hs > cut.hs
expect_fail 1 "evaluate: queries 100:200 are in no shard (p2.hs starts at 200)" evaluate --merge rnd.npz p0.hs p2.hs
expect_fail 1 "evaluate: p0.hs (queries 0:100) overlaps p0.hs (up to 100)" evaluate --merge rnd.npz p0.hs p0.hs p1.hs p2.hs
expect_fail 1 "evaluate: k1.hs: other fields than p0.hs: not shards of one run" evaluate --merge rnd.npz p0.hs k1.hs p2.hs
expect_fail 1 "evaluate: p0.hs: ks 1,2,4,8, but -k 1,2 here: the answers of another run" evaluate -k 1,2 --merge rnd.npz p0.hs p1.hs p2.hs
expect_fail 1 "evaluate: t1.hs: meta set0_hash differs from p0.hs's: not shards of one run" evaluate --merge rnd.npz p0.hs t1.hs p2.hs
expect_fail 1 "but twin.npz here has" evaluate --merge twin.npz p0.hs p1.hs p2.hs
expect_fail 1 "evaluate: p0.hs: gallery_items 0, but a gallery of 150 items here" evaluate -g gal.npz --merge rnd.npz p0.hs p1.hs p2.hs
expect_fail 1 "evaluate: cut.hs: truncated stream" evaluate --merge rnd.npz p0.hs cut.hs p2.hs
expect_fail 1 "evaluate: rnd-ab.hs: expected a stream of kind 'evaluate', got 'embeddings'" evaluate --merge rnd.npz rnd-ab.hs
expect_fail 2 "evaluate: --merge: give INPUT, then the outputs of evaluate --queries" evaluate --merge rnd.npz
expect_fail 2 "evaluate: --shard: expected I/N with 0 <= I < N" evaluate --shard 3/3 rnd.npz
expect_fail 2 "evaluate: --shard writes the queries' answers as a stream to stdout: no --json" evaluate --shard 0/2 --json x rnd.npz
expect_fail 2 "evaluate: --queries and --merge: give one" evaluate --queries 0:5 --merge rnd.npz p0.hs
echo "evaluate-engine: $n sets, $p_count numbers the programs' (none of them null), evaluate.sh's shards the same"
[ "$p_count" -gt 300 ] || fail "only $p_count numbers compared with the programs'"
pass
