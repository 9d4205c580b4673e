#!/bin/sh
# train reads a batch stream's fields by their whole type (lib/training/feed.c): dtype and item shape.
# Streams from batcher with one field's item shape changed (records consistent with it, so the
# stream reader accepts them) are refused with one line naming the field, exit 1, and no
# checkpoint: class [0] read past the record (heap over-read), class [3] trained on wrong labels
# with exit 0. Streams are rewritten with Debian's python3 and its msgpack.
set -u
. "$(dirname "$0")/../lib.sh"
cd "$T"
mkdigits -N 2 -s train -n 400 2>/dev/null > d.hs || fail "mkdigits"
batcher -m pairs -b 8 -n 4 < d.hs > pairs.hs || fail "batcher pairs"
batcher -m pk -P 4 -K 2 -n 4 < d.hs > pk.hs || fail "batcher pk"
batcher -m episodes -c 3 -s 1 -q 1 -n 4 < d.hs > ep.hs || fail "batcher episodes"
# the streams as batcher wrote them train
train -o ok.ckpt --loss softcon -n 2 -t 1 < pairs.hs 2>/dev/null || fail "pairs as written"
train -o ok.ckpt --loss triplet -n 2 -t 1 < pk.hs 2>/dev/null || fail "pk as written"
train -o ok.ckpt --loss proto -n 2 -t 1 < ep.hs 2>/dev/null || fail "episodes as written"

# reshape IN OUT FIELD SHAPE: FIELD's item shape becomes SHAPE ([] [0] [3] [1, 1]); the
# records' tensors follow (the item's first element repeated, or nothing)
reshape() {
    /usr/bin/python3 - "$@" <<'EOF' || fail "python3 could not rewrite $1"
import json, sys, msgpack
src, dst, name, shape = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
objs = list(msgpack.Unpacker(open(src, "rb"), raw=False, strict_map_key=False))
h, recs, end = objs[0], objs[1:-1], objs[-1]
n = 1
for d in shape:
    n *= d
for f in h["fields"]:
    if f["name"] == name:
        f["shape"] = shape
for r in recs:
    t = r[name]
    B = t["shape"][0]
    size = len(t["data"]) // B  # bytes of one item as written (a scalar)
    t["data"] = b"".join(t["data"][i * size:(i + 1) * size] * n for i in range(B))
    t["shape"] = [B] + shape
with open(dst, "wb") as f:
    for o in [h] + recs + [end]:
        f.write(msgpack.packb(o, use_bin_type=True))
EOF
}
# refused IN LOSS FIELD SHAPE
refused() {
    rm -f x.ckpt
    reshape "$1" bad.hs "$3" "$4"
    expect_fail 1 "'$3'" train -o x.ckpt --loss "$2" -n 2 -t 1 < bad.hs
    [ "$(wc -l < "$T/err")" = 1 ] || fail "$3 $4: not one line: $(cat "$T/err")"
    grep -q "expected int32 \[\]\|expected uint8 \[\]" "$T/err" || fail "$3 $4: the expected type is not named: $(cat "$T/err")"
    [ -e x.ckpt ] && fail "$3 $4: a checkpoint was written"
    return 0
}
# an unchanged reshape is accepted (the rewriting itself is sound)
reshape pairs.hs same.hs class1 '[]'
train -o ok.ckpt --loss softcon -n 2 -t 1 < same.hs 2>/dev/null || fail "a stream rewritten unchanged is refused"
for shape in '[0]' '[3]' '[1]'; do
    refused pairs.hs softcon class1 "$shape"
    refused pairs.hs softcon class2 "$shape"
    refused pairs.hs softcon match "$shape"
    refused pk.hs triplet class "$shape"
    refused ep.hs proto class "$shape"
    refused ep.hs proto query "$shape"
done
pass
