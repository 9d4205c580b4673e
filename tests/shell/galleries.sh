#!/bin/sh
# galleries: evaluate -g A -g B and hedge.evaluate(gallery=[A, B]), several galleries in one call
# (pytorch-metric-learning #252): the queries read once, one table and one JSON entry per gallery,
# each equal to the call with that gallery alone (to the bit: the JSON's text); Python's list of
# dicts equal to the CLI's; what cannot take several galleries (shards, -o) refused; a bad
# gallery named, nothing on stdout.
. "$(dirname "$0")/../lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
PY=/usr/bin/python3
plain_libhedge "$ROOT"
cd "$T" || fail "cd"
$PY - <<'PYEOF' || fail "making the sets"
import numpy as np
rng = np.random.default_rng(52)
c = rng.normal(size=(12, 6))
def draw(n, s, k):
    y = rng.integers(0, k, n).astype(np.int32)
    return (c[y] + s * rng.normal(size=(n, 6))).astype(np.float32), y
x, y = draw(400, 1.0, 12)
np.savez("q.npz", mu=x, labels=y, var=np.abs(rng.normal(size=(400, 6))).astype(np.float32) + 0.1)
for name, (s, k, n) in {"a": (0.5, 12, 300), "b": (1.5, 9, 350), "c": (1.0, 12, 200)}.items():
    g, l = draw(n, s, k)
    np.savez(name + ".npz", mu=g, labels=l)
np.savez("bad.npz", mu=rng.normal(size=(50, 5)).astype(np.float32), labels=np.zeros(50, np.int32))
PYEOF
evaluate --bootstrap 200 -g a.npz -g b.npz -g c.npz --json many.json q.npz > many.md 2> err || fail "three galleries: $(cat err)"
for g in a b c; do
    evaluate --bootstrap 200 -g $g.npz --json $g.json q.npz > $g.md 2> err || fail "gallery $g alone: $(cat err)"
done
[ "$(grep -c '^Gallery [123]: [abc].npz$' many.md)" = 3 ] || fail "the tables' headings: $(grep -n Gallery many.md)"
[ "$(grep -c '^| R@1 |' many.md)" = 3 ] || fail "not three tables"
i=0
for g in a b c; do
    jq -S --argjson i $i '.galleries[$i] | del(.gallery)' many.json > m.$g || fail "jq"
    jq -S 'del(.program)' $g.json > o.$g || fail "jq"
    cmp -s m.$g o.$g || fail "gallery $g: its entry differs from the call with it alone: $(diff m.$g o.$g | head -n 5)"
    [ "$(jq -r --argjson i $i '.galleries[$i].gallery' many.json)" = $g.npz ] || fail "gallery $i's name"
    # the table of each gallery is the table of the call with it alone
    awk -v h="Gallery $((i + 1)): $g.npz" '$0 == h { on = 1; getline; next } /^Gallery / { on = 0 } on' many.md |
        sed '${/^$/d;}' > t.$g
    cmp -s t.$g $g.md || fail "gallery $g: its table differs: $(diff t.$g $g.md | head -n 5)"
    i=$((i + 1))
done
[ "$(jq -r '.galleries[0].input.recall[0] != .galleries[1].input.recall[0]' many.json)" = true ] || fail "the galleries gave one R@1"

# refused: shards and -o take one gallery; a bad gallery is named, nothing on stdout
expect_exit 2 "--shard with two galleries" evaluate --shard 0/2 -g a.npz -g b.npz q.npz
expect_exit 2 "--merge with two galleries" evaluate --merge -g a.npz -g b.npz q.npz q.npz
expect_exit 2 "-o with two galleries" evaluate -o dir -g a.npz -g b.npz q.npz
[ ! -e dir ] || fail "-o made its folder before refusing"
evaluate -g a.npz -g bad.npz q.npz > out 2> err && fail "a gallery of 5 dimensions accepted"
[ ! -s out ] || fail "a refused gallery left a table: $(head -c 200 out)"
grep -q "bad.npz" err || fail "the bad gallery not named: $(cat err)"

# Python: gallery=[...] gives the list of the dicts of each gallery alone, equal to the CLI's JSON
PYTHONPATH="$ROOT/python" HEDGE_LIB="$LIBSO" $PY - <<'PYEOF' || fail "python"
import json, math
import numpy as np
import hedge
q = np.load("q.npz")
gs = [np.load(g + ".npz") for g in "abc"]
many = hedge.evaluate(q["mu"], q["labels"], var=q["var"], gallery=[g["mu"] for g in gs],
                      gallery_labels=[g["labels"] for g in gs], bootstrap=200)
assert isinstance(many, list) and len(many) == 3, type(many)
for g, d in zip(gs, many):
    one = hedge.evaluate(q["mu"], q["labels"], var=q["var"], gallery=g["mu"], gallery_labels=g["labels"], bootstrap=200)
    assert json.dumps(one, sort_keys=True, default=str) == json.dumps(d, sort_keys=True, default=str)
j = json.load(open("many.json"))["galleries"]
for d, e in zip(many, j):
    for k in ("knn", "map_r", "ap"):
        assert float("%.10g" % d[k]) == e["input"][k], (k, d[k], e["input"][k])
    assert float("%.10g" % d["uncertainty"]["var"]["r1"]["auroc"]) == e["input"]["uncertainty"]["var"]["r1"]["auroc"]
    assert float("%.10g" % d["ci"]["map_r"][0]) == e["input"]["ci"]["map_r"][0]
for bad, want in ((dict(gallery_labels=gs[0]["labels"]), "gallery_labels: with 3 galleries"),
                  (dict(gallery_labels=[g["labels"] for g in gs[:2]]), "expected a list of 3"),
                  (dict(gallery_labels=[g["labels"] for g in gs], shard=(0, 2)), "one gallery at a time")):
    try:
        hedge.evaluate(q["mu"], q["labels"], gallery=[g["mu"] for g in gs], **bad)
    except ValueError as e:
        assert want in str(e), str(e)
    else:
        raise AssertionError("accepted %s" % bad)
try:
    hedge.evaluate(q["mu"], q["labels"], gallery=[gs[0]["mu"], gs[0]["mu"][:, :5]], gallery_labels=[gs[0]["labels"]] * 2)
except ValueError as e:
    assert str(e).startswith("gallery 1 of 2: "), str(e)
else:
    raise AssertionError("a gallery of 5 dimensions accepted")
PYEOF
pass
