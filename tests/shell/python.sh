#!/bin/sh
# python/hedge_stream.py against the C programs: what Python writes, knn, tshow and tonpz read
# (knn exact on well-separated groups); what mkdigits, occlude, batcher (batched), fromnpz and knn
# write, Python reads equal to tonpz's arrays, header included; records() one at a time; a
# stream cut short or with data after its end is refused. Then every command of the README's
# "Use hedge on your own data", run as written. Needs Debian's python3 with msgpack and numpy;
# to_dataframe's check is skipped when pandas is absent.
set -u
. "$(dirname "$0")/../lib.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)
PY=/usr/bin/python3
export PYTHONPATH="$root/python"
cd "$T" || fail "cd $T"

# --- Python writes, C reads
$PY - <<'EOF' || fail "hedge_stream.write failed"
import numpy as np, hedge_stream as hs
r = np.random.default_rng(3)
y = np.arange(40) % 4
mu = np.eye(4)[y] * 10 + r.normal(scale=0.1, size=(40, 4))        # float64 [n, D]
hs.write("py-emb.hs", "embeddings", {"mu": mu, "var": np.full((40, 4), 0.5), "class": y, "attr": y * 3},
         {"dataset": "py", "match_a": 1.5, "match_b": 0.5, "classes": np.arange(4, dtype=np.int32)})
img = r.integers(0, 256, size=(6, 3, 5, 7), dtype=np.uint8)
hs.write("py-img.hs", "images", {"image": img, "class": np.arange(6) % 2, "big": np.arange(6) * 2**40})
np.save("py-img.npy", img)
EOF
knn --json knn.json py-emb.hs > knn.hs || fail "knn on Python's stream"
[ "$(json_get accuracy < knn.json)" = 1 ] || fail "knn accuracy on Python's stream: $(cat knn.json), expected 1"
pairscore -n 100 py-emb.hs > /dev/null || fail "pairscore on Python's stream (match_a, match_b from meta)"
tshow -H py-emb.hs > h.json || fail "tshow -H on Python's stream"
grep -qF '{"name": "mu", "dtype": "float32", "shape": [1, 4]}' h.json || fail "mu is not float32 [1, 4]: $(cat h.json)"
grep -qF '"classes": {"dtype": "int32", "shape": [4], "count": 4, "values": [0, 1, 2, 3]}' h.json ||
    fail "meta classes: $(cat h.json)"
totsv -f class,attr py-emb.hs | sed -n 4p | grep -q "^2	6$" || fail "totsv: record 2 is not class 2, attr 6"
tonpz -o py-img.npz py-img.hs || fail "tonpz on Python's images"

# --- C writes, Python reads what tonpz reads
mkdigits -N 2 -s test-seen -n 30 --per-class 10 | occlude -p 1 > digits.hs || fail "mkdigits | occlude"
batcher -m pairs -b 16 -n 3 < digits.hs > pairs.hs || fail "batcher"
for s in digits pairs knn py-emb; do
    tonpz -o "$s.npz" "$s.hs" || fail "tonpz $s.hs"
done
$PY - <<'EOF' || fail "Python and tonpz disagree (above)"
import json, numpy as np, hedge_stream as hs
for s in ["digits", "pairs", "knn", "py-emb"]:
    header, a = hs.read(s + ".hs")
    z = np.load(s + ".npz", allow_pickle=False)
    assert sorted(a) == sorted(f for f in z.files if f != "header" and not f.startswith("meta/")), (s, sorted(a), z.files)
    for k, v in a.items():
        assert v.dtype == z[k].dtype and v.shape == z[k].shape and np.array_equal(v, z[k]), (s, k, v.dtype, v.shape, z[k].shape)
    j = json.loads(str(z["header"]))
    for key in ["kind", "batched", "fields"]:
        assert header[key] == j[key], (s, key, header[key], j[key])
    assert header["provenance"]["program"] == j["provenance"]["program"], s
    assert sorted(header["meta"]) == sorted(j["meta"]), (s, sorted(header["meta"]), sorted(j["meta"]))
    for k in j["meta"]:
        if "meta/" + k in z.files:   # a tensor: hs gives its map, tonpz its array
            t = header["meta"][k]
            assert np.array_equal(np.frombuffer(t["data"], dtype=np.dtype(t["dtype"]).newbyteorder("<")).reshape(t["shape"]), z["meta/" + k]), (s, k)
h, a = hs.read("pairs.hs")
assert h["batched"] and a["image1"].shape == (48, 28, 56) and a["match"].shape == (48,), a["image1"].shape
h, a = hs.read("digits.hs")
assert h["kind"] == "images" and a["image"].shape == (30, 28, 56) and a["occluded"].shape == (30, 2)
assert h["provenance"]["input"][0]["provenance"]["program"] == "mkdigits"
# Python's images, through tonpz, are what was written
assert np.array_equal(np.load("py-img.npz")["image"], np.load("py-img.npy"))
assert np.load("py-img.npz")["big"].dtype == np.int64
# records(): one at a time, the header first
r = hs.records("digits.hs")
assert r.header["kind"] == "images"
n = 0
for rec in r:
    assert rec["image"].shape == (28, 56) and rec["class"].shape == ()
    n += 1
assert n == 30 and r.count == 30
# a file object, and '-' is stdin (not tried here)
with open("knn.hs", "rb") as f:
    assert hs.read(f)[0]["kind"] == "knn"
# cut short, or data after the end: refused, never part of it
data = open("digits.hs", "rb").read()
open("cut.hs", "wb").write(data[:len(data) // 2])
open("extra.hs", "wb").write(data + data[:40])
# corrupt: bytes that are not msgpack text, a header field without its dtype, a record whose
# map has an integer key, a tensor whose shape is a map, header fields that are a map or missing
# (the C reader refuses both): each a ValueError that names the file
# (not msgpack's own exception, a KeyError or a TypeError)
import msgpack
u = msgpack.Unpacker(open("digits.hs", "rb"), raw=False)
head = next(u)
hlen = u.tell()
rec0 = next(u)
rlen = u.tell()
name = data.index(b"\xa5image")                              # the header's first field name
open("badutf.hs", "wb").write(data[:name + 1] + b"\xff" + data[name + 2:])
h2 = dict(head, fields=[dict(f) for f in head["fields"]])
del h2["fields"][0]["dtype"]
open("nodtype.hs", "wb").write(msgpack.packb(h2) + data[hlen:])
open("fieldmap.hs", "wb").write(msgpack.packb(dict(head, fields=head["fields"][0])) + data[hlen:])
open("nofields.hs", "wb").write(msgpack.packb({k: v for k, v in head.items() if k != "fields"}) + data[hlen:])
key = data.index(b"\xa5image", hlen)                         # the first record's first key
open("intkey.hs", "wb").write(data[:key] + b"\x07" + data[key + 6:])
r2 = dict(rec0, image=dict(rec0["image"], shape={}))
open("shapemap.hs", "wb").write(data[:hlen] + msgpack.packb(r2, use_bin_type=True) + data[rlen:])
# an array of 2^32 - 1 elements declared where the header or a record begins (a bare MemoryError
# from msgpack before: it allocated the list); tshow says "truncated stream" for the first
open("five.hs", "wb").write(b"\xdd\xff\xff\xff\xff")
open("rec5.hs", "wb").write(data[:hlen] + b"\xdd\xff\xff\xff\xff")
for bad, msg in [("five.hs", "five.hs: truncated stream: input ends inside the header"),
                 ("rec5.hs", "rec5.hs: corrupt stream: record 0 is not valid msgpack"),
                 ("cut.hs", "truncated stream"), ("extra.hs", "data after the end marker"),
                 ("badutf.hs", "badutf.hs: not a hedge stream (the header is not valid msgpack"),
                 ("nodtype.hs", "nodtype.hs: corrupt stream header: field 0"),
                 ("fieldmap.hs", "fieldmap.hs: corrupt stream header: fields is {"),
                 ("nofields.hs", "nofields.hs: corrupt stream header: fields is None"),
                 ("intkey.hs", "intkey.hs: corrupt stream: record 0 is not valid msgpack"),
                 ("shapemap.hs", "shapemap.hs: record 0, field")]:
    try:
        hs.read(bad)
    except ValueError as e:
        assert msg in str(e), (bad, str(e))
    else:
        raise AssertionError(bad + " was read")
for arrays, msg in [({"mu": np.zeros((3, 2)), "class": np.zeros(4, int)}, "different numbers of rows"),
                    ({1: np.zeros((3, 2))}, "array name 1: expected a non-empty string")]:
    try:
        hs.write("bad.hs", "embeddings", arrays)
    except ValueError as e:
        assert msg in str(e), str(e)
    else:
        raise AssertionError("%s was written" % msg)
# an embedding's mu and var of integers or lists are floats, as fromnpz takes them
hs.write("int-emb.hs", "embeddings", {"mu": np.arange(12).reshape(3, 4), "var": [[1] * 4] * 3, "class": [0, 1, 0]})
h, a = hs.read("int-emb.hs")
assert a["mu"].dtype == np.float32 and a["mu"].shape == (3, 1, 4) and a["mu"][2, 0, 3] == 11, a["mu"]
assert a["var"].dtype == np.float32 and a["var"].shape == (3, 1, 4), a["var"].shape
EOF
# the same five bytes through a pipe (no size to compare with): a ValueError still
printf '\335\377\377\377\377' | $PY -c '
import sys
import hedge_stream as hs
try:
    hs.read("-")
except ValueError as e:
    assert "truncated stream: input ends inside the header" in str(e), str(e)
else:
    raise AssertionError("five bytes were read")' || fail "hedge.stream on five bytes from a pipe"
expect_fail 1 "five.hs: truncated stream" tshow five.hs
# what Python wrote cut short: the C reader refuses it too
head -c 300 py-emb.hs > cut-py.hs
expect_fail 1 "truncated stream" knn cut-py.hs
# header fields that are a map or missing: the C reader refuses them as Python does
expect_fail 1 "stream header has no fields" tshow -q fieldmap.hs
expect_fail 1 "stream header has no fields" tshow -q nofields.hs

if $PY -c 'import pandas' 2> /dev/null; then
    $PY - <<'EOF' || fail "to_dataframe"
import hedge_stream as hs
df = hs.to_dataframe("digits.hs")
assert len(df) == 30 and "class" in df and "digits[1]" in df and "image" not in df, list(df)
EOF
else
    # without pandas, a stand-in whose DataFrame is the dict of columns checks what is passed
    echo "python: pandas is absent (python3-pandas): to_dataframe checked with a stand-in"
    mkdir stub && echo 'def DataFrame(cols): return cols' > stub/pandas.py
    PYTHONPATH="$T/stub:$PYTHONPATH" $PY - <<'EOF' || fail "to_dataframe (stand-in pandas)"
import numpy as np, hedge_stream as hs
cols = hs.to_dataframe("digits.hs")
assert list(cols) == ["class", "digits[0]", "digits[1]", "source[0]", "source[1]", "id", "occluded[0]",
                      "occluded[1]"] + ["patch[%d]" % i for i in range(8)], list(cols)
assert all(len(v) == 30 for v in cols.values())
z = np.load("digits.npz")
assert np.array_equal(cols["patch[5]"], z["patch"][:, 1, 1]) and np.array_equal(cols["class"], z["class"])
EOF
fi

# --- the README's "Use hedge on your own data": every command, as written, from a tree like hedge's
mkdir -p readme/build && ln -s "$BIN" readme/build/bin && ln -s "$root/python" readme/python && ln -s "$root/pipelines" readme/pipelines || fail "readme tree"
awk '/^## Use hedge on your own data$/ { on = 1; next } on && /^## / { exit } on' "$root/README.md" > section
[ -s section ] || fail "README.md has no section 'Use hedge on your own data'"
awk '/^```sh$/ { b = 1; next } /^```$/ { b = 0 } b' section > readme/run.sh
awk '/^```python$/ { b = 1; next } /^```$/ { b = 0 } b' section > readme/run.py
[ "$(grep -c . readme/run.sh)" -ge 6 ] && [ "$(grep -c . readme/run.py)" = 5 ] ||
    fail "the section's sh and python blocks are not there: $(cat section)"
(cd readme && env -u BUILD PATH=/usr/bin:/bin sh -e run.sh > out 2> err) || fail "the README's commands failed: $(tail -n 5 readme/err)"
grep -q '^ap 0\.[0-9]*$' readme/out || fail "README: no verification AP: $(cat readme/out)"
grep -q '^tau ' readme/out || fail "README: ktau printed no tau: $(cat readme/out)"
(cd readme && $PY run.py > pyout) || fail "the README's Python failed"
(cd readme && knn --json mine.json mine.hs > /dev/null) || fail "README: knn mine.hs"
$PY - <<'EOF' || fail "the README's outputs do not agree (above)"
import numpy as np, hedge_stream as hs
z = np.load("readme/my-knn.npz", allow_pickle=False)
h, a = hs.read("readme/my-knn.hs")
acc = h["meta"]["accuracy"]
assert abs(z["correct"].mean() - acc) < 1e-12, (z["correct"].mean(), acc)
words = open("readme/pyout").read().split()
assert abs(float(words[0]) - acc) < 1e-12 and abs(float(words[1]) - acc) < 1e-12, words
assert len(hs.read("readme/mine.hs")[1]["mu"]) == 500
EOF
grep -q '"n": 500' readme/mine.json || fail "knn mine.hs: $(cat readme/mine.json)"
pass
