#!/bin/sh
# bin/evaluate (lib/hedge.h's one call) against pipelines/evaluate.sh's programs (knn, retrieve,
# cluster, pairscore | apcurve, ktau; its --shards 1 path runs them as before): the same table and
# the same JSON, byte for byte (the numbers come from the same library functions and are printed
# %.10g by both), on random sets with and without var, a match probability, a gallery with and
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

# same NAME ARGS...: evaluate.sh --shards 1 (the programs) and bin/evaluate print the same
n=0
same() {
    s_name=$1
    shift
    sh "$EV" --shards 1 -j 1 --json "$s_name.sh.json" "$@" > "$s_name.sh.md" 2> "$s_name.sh.err" ||
        fail "$s_name: evaluate.sh: $(cat "$s_name.sh.err")"
    evaluate --json "$s_name.c.json" "$@" > "$s_name.c.md" 2> "$s_name.c.err" || fail "$s_name: evaluate: $(cat "$s_name.c.err")"
    [ -s "$s_name.c.err" ] && fail "$s_name: evaluate wrote on stderr: $(cat "$s_name.c.err")"
    cmp -s "$s_name.sh.md" "$s_name.c.md" || fail "$s_name: the tables differ: $(diff "$s_name.sh.md" "$s_name.c.md")"
    cmp -s "$s_name.sh.json" "$s_name.c.json" || fail "$s_name: the JSON differs: $(diff "$s_name.sh.json" "$s_name.c.json")"
    n=$((n + 1))
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
same fewtwin --corrupt four.npz rnd.npz
same galone -g one.npz --exclude-id four.npz
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
expect_fail 2 "evaluate: --distance: 'l1' is not euclidean, cosine or mls" evaluate --distance l1 four.npz
expect_fail 1 "evaluate: pts.npz: queries: distance mls needs var and one component (C = 1), got no var and C = 1" \
    evaluate --distance mls pts.npz
echo "evaluate-engine: $n sets the same as evaluate.sh's programs"
pass
