#!/bin/sh
# Deep lineages: msgpack-c's parser nests at most 32 containers, 3 per lineage level, so a stream
# 11 levels deep could not be read ("out of memory while reading the stream"), yet chained
# programs write such streams. Now: a chain of 12 `pairscore --self --means` reads at every step
# and its written lineage stays at 8 levels (the newest 6, a marker "..." of kind `elided`, the
# origin); a stream whose lineage is 40 levels deep (as an older hedge or another writer makes)
# is read whole; one over 64 levels is refused with one line naming the limit.
# Streams are crafted with Debian's python3 and its msgpack (installed by setup-deps).
set -u
. "$(dirname "$0")/../lib.sh"
PY=/usr/bin/python3
cd "$T"
$PY - <<'PYEOF' || fail "python3 could not craft the streams"
import msgpack, struct
def tensor(dt, shape, data):
    return {"dtype": dt, "shape": shape, "data": data}
def header(kind, fields, meta, program, inputs):
    return {"format": "hedge-stream", "version": 1, "kind": kind, "batched": False, "fields": fields,
            "meta": meta, "provenance": {"program": program, "args": [], "input": inputs}}
fields = [{"name": "mu", "dtype": "float32", "shape": [1, 2]}, {"name": "class", "dtype": "int32", "shape": []},
          {"name": "id", "dtype": "int64", "shape": []}]
meta = {"model": "point", "C": 1, "D": 2, "match_a": 1.0, "match_b": 0.5}
def write(path, h):
    with open(path, "wb") as f:
        f.write(msgpack.packb(h))
        for i in range(4):
            f.write(msgpack.packb({"mu": tensor("float32", [1, 2], struct.pack("<2f", i, -i)),
                                   "class": tensor("int32", [], struct.pack("<i", i % 2)),
                                   "id": tensor("int64", [], struct.pack("<q", i))}))
        f.write(msgpack.packb({"end": 4}))
write("emb.hs", header("embeddings", fields, meta, "craft", []))
def deep(n):
    h = header("embeddings", fields, meta, "origin", [])
    for i in range(1, n):
        h = header("embeddings", fields, meta, "step%d" % i, [h])
    return h
write("deep40.hs", deep(40))
write("deep70.hs", deep(70))
PYEOF
depth() { tshow -H "$1" | $PY -c '
import json, sys
def d(h): return 1 + max([d(i) for i in h["provenance"]["input"]] or [0])
print(d(json.load(sys.stdin)))'; }
cp emb.hs cur.hs
i=1
while [ $i -le 12 ]; do
    pairscore --self --means cur.hs > next.hs 2> err || fail "pairscore --self --means, step $i: $(cat err)"
    mv next.hs cur.hs
    i=$((i + 1))
done
d=$(depth cur.hs) || fail "tshow -H of the chain of 12"
[ "$d" = 8 ] || fail "the chain of 13 headers is written $d levels deep, expected 8"
tshow -H cur.hs | $PY -c '
import json, sys
h = json.load(sys.stdin)
for k in range(6):
    assert h["provenance"]["program"] == "pairscore", h["provenance"]["program"]
    h = h["provenance"]["input"][0]
assert h["kind"] == "elided" and h["provenance"]["program"] == "...", h
m = h["meta"]
assert (m["elided_levels"], m["elided_headers"], m["elided_programs"]) == (6, 6, "pairscore"), m
o = h["provenance"]["input"]
assert len(o) == 1 and o[0]["provenance"]["program"] == "craft" and o[0]["provenance"]["input"] == [], o
' || fail "the bounded lineage: $(tshow -H cur.hs | head -c 600)"
tshow cur.hs | head -n 1 | grep -q '^# craft -> \.\.\. -> pairscore' || fail "lineage line: $(tshow cur.hs | head -n 1)"
# read whole, 40 levels deep; written by pairscore, bounded
d=$(depth deep40.hs) || fail "tshow -H of a lineage 40 levels deep"
[ "$d" = 40 ] || fail "a lineage 40 levels deep read as $d levels"
pairscore --self --means deep40.hs > out.hs 2> err || fail "pairscore on a lineage 40 deep: $(cat err)"
[ "$(depth out.hs)" = 8 ] || fail "pairscore wrote a lineage $(depth out.hs) levels deep"
# every header records the hedge that wrote it (issue 22), as --version prints it; a header
# read without one (the crafted origin, streams of older builds) stays without one
v=$(tshow --version | sed 's/^tshow (hedge) //')
pairscore --self --means emb.hs > v.hs 2> err || fail "pairscore: $(cat err)"
tshow -H v.hs | $PY -c '
import json, sys
h = json.load(sys.stdin)
p = h["provenance"]
assert p["program"] == "pairscore" and p["hedge"] == sys.argv[1], p
o = p["input"][0]["provenance"]
assert o["program"] == "craft" and "hedge" not in o, o
' "$v" || fail "the version in the provenance: $(tshow -H v.hs | head -c 400)"
expect_fail 1 "lineage is more than 64 levels deep" tshow deep70.hs
[ "$(wc -l < "$T/err")" = 1 ] || fail "more than one line: $(cat "$T/err")"
pass
