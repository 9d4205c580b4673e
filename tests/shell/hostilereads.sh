#!/bin/sh
# Regression tests from the audit of issue 34 (the readers): a field of the right dtype but another
# item shape (a scalar of shape [0] was read 4 bytes past the record: ASan's heap-buffer-overflow,
# and in the normal build a wrong summary with exit 0), embeddings of different component counts
# pooled, a directory as input, corrupt msgpack after a header, a fewshot header with 2^62
# episodes, tonpz on a batch of 0 items (UBSan), and seedstat: 200,000 groups, '0.5' with a NUL
# after it, '0x10', a carriage return echoed raw.
# Streams are crafted with Debian's python3 and its msgpack (python3-msgpack, installed by setup-deps).
set -u
. "$(dirname "$0")/../lib.sh"
FIX=$BIN/../tests/test_evalfix
[ -x "$FIX" ] || fail "$FIX is not built"
cd "$T"

# reshape SRC DST FIELD SHAPE: FIELD declared with item shape SHAPE (a JSON list) in the header and
# in every record, its data cut or repeated to fit: the dtype stays, the shape is what changes
reshape() {
    /usr/bin/python3 - "$@" <<'EOF' || fail "python3 could not reshape $3"
import json, sys, msgpack
src, dst, field, shape = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
objs = list(msgpack.Unpacker(open(src, "rb"), raw=False))
head = objs[0]
for f in head["fields"]:
    if f["name"] == field:
        f["shape"] = shape
size = {"uint8": 1, "int32": 4, "int64": 8, "float32": 4, "float64": 8}
n = 1
for s in shape:
    n *= s
for r in objs[1:-1]:
    t = r[field]
    lead = t["shape"][:1] if head["batched"] else []
    items = lead[0] if lead else 1
    t["shape"] = lead + shape
    need = items * n * size[t["dtype"]]
    t["data"] = (t["data"] * (need // max(len(t["data"]), 1) + 1))[:need]
with open(dst, "wb") as f:
    for o in objs:
        f.write(msgpack.packb(o, use_bin_type=True))
EOF
}

# --- retrieve --summary: every field it reads checked for its dtype and its shape. 60 embeddings,
# -k 1,2; its map is 0.8357 (before: ap [0] gave map 0 and exit 0, map_r [0] map_r 0)
"$FIX" emb -n 60 > e60 || fail "fixture"
retrieve -k 1,2 e60 > r60 2> /dev/null || fail "retrieve on 60"
retrieve --summary r60 | grep -q '"map": 0.8357178465' || fail "retrieve --summary on a good stream: $(retrieve --summary r60)"
for f in ap:float32 rprec:float32 map_r:float32 p1:uint8 npos:int32 class:int32 first_rank:int32 eta:float32; do
    name=${f%%:*} dtype=${f#*:}
    reshape r60 z.hs "$name" '[0]'
    expect_fail 1 "z.hs: field '$name' is $dtype [0], expected $dtype [] (one value per record)" retrieve --summary z.hs
    [ "$(wc -l < "$T/err")" = 1 ] || fail "retrieve --summary, $name [0]: not one line: $(cat "$T/err")"
    reshape r60 z.hs "$name" '[2]'
    expect_fail 1 "z.hs: field '$name' is $dtype [2], expected $dtype []" retrieve --summary z.hs
done
reshape r60 z.hs recall '[0]'
expect_fail 1 "z.hs: field 'recall' is uint8 [0], expected uint8 [n] (n >= 1)" retrieve --summary z.hs
reshape r60 z.hs recall '[2, 1]'
expect_fail 1 "z.hs: field 'recall' is uint8 [2, 1], expected uint8 [n] (n >= 1)" retrieve --summary z.hs
reshape r60 z.hs recall '[17]'
expect_fail 1 "z.hs: field 'recall' holds 17 values, expected 1 to 16" retrieve --summary z.hs

# --- knn --summary: correct and recall
knn -k 2 e60 > k60 2> /dev/null || fail "knn on 60"
knn --summary k60 > /dev/null || fail "knn --summary on a good stream"
reshape k60 z.hs correct '[0]'
expect_fail 1 "z.hs: field 'correct' is uint8 [0], expected uint8 [] (one value per record)" knn --summary z.hs
reshape k60 z.hs recall '[0]'
expect_fail 1 "z.hs: field 'recall' is uint8 [0], expected uint8 [n] (n >= 1)" knn --summary z.hs

# --- fewshot --summary: episode and correct; and a header whose episode count cannot be held
# (2^62: "out of memory" before)
printf '0 1 0 100\n4 1 1 101\n' | "$FIX" table embeddings mu:float32:1x1 var:float32:1x1 class:int32 id:int64 > sup.hs
printf '1 1 0 200\n2.5 1 1 201\n' | "$FIX" table embeddings mu:float32:1x1 var:float32:1x1 class:int32 id:int64 > qry.hs
fewshot -s sup.hs -k 1 -q 1 -R 4 qry.hs > fs.hs || fail "fewshot"
fewshot --summary fs.hs > /dev/null || fail "fewshot --summary on a good stream"
reshape fs.hs z.hs episode '[0]'
expect_fail 1 "z.hs: field 'episode' is int32 [0], expected int32 [] (one value per record)" fewshot --summary z.hs
reshape fs.hs z.hs correct '[0]'
expect_fail 1 "z.hs: field 'correct' is uint8 [0], expected uint8 [] (one value per record)" fewshot --summary z.hs
/usr/bin/python3 - <<'EOF' || fail "python3 could not craft the fewshot headers"
import msgpack
objs = list(msgpack.Unpacker(open("fs.hs", "rb"), raw=False))
for name, key, value in (("ep62.hs", "episodes", 1 << 62), ("ep0.hs", "episodes", 0), ("ways.hs", "ways", 1 << 40)):
    h = dict(objs[0], meta=dict(objs[0]["meta"], **{key: value}))
    with open(name, "wb") as f:
        for o in [h] + objs[1:]:
            f.write(msgpack.packb(o, use_bin_type=True))
EOF
expect_fail 1 "ep62.hs: the header's episodes is 4611686018427387904, expected 1 to 1000000" fewshot --summary ep62.hs
expect_fail 1 "ep0.hs: the header's episodes is 0, expected 1 to 1000000" fewshot --summary ep0.hs
expect_fail 1 "ways.hs: the header's ways is 1099511627776, expected 1 to 2147483647" fewshot --summary ways.hs

# --- the embedding readers (lib/evaluation/match.c) and the other programs that take a field by its type
reshape e60 z.hs class '[0]'
for p in "knn -k 1" "retrieve -k 1" cluster centroids; do
    expect_fail 1 "z.hs: field 'class' is int32 [0], expected int32 [] (one value per record)" $p z.hs
done
reshape e60 z.hs id '[1]'
expect_fail 1 "z.hs: field 'id' is int64 [1], expected int64 [] (one value per record)" knn -k 1 z.hs
reshape e60 z.hs occluded '[0]'
expect_fail 1 "z.hs: field 'occluded' is uint8 [0], expected uint8 [n] (n >= 1)" knn -k 1 z.hs
pairscore --self e60 > eta60 2> /dev/null || fail "pairscore --self"
reshape eta60 z.hs eta '[0]'
expect_fail 1 "z.hs: field 'eta' is float32 [0], expected float32 [] (one value per record)" knn -k 1 z.hs
expect_fail 1 "z.hs: field 'eta' is float32 [0], expected float32 [] (one value per record)" pairscore --self z.hs
mkdigits -N 2 -s test-seen -n 100 > a.hs 2> /dev/null || fail "mkdigits"
reshape a.hs z.hs class '[0]'
expect_fail 1 "z.hs: field 'class' is int32 [0], expected int32 [] (one value per record)" batcher -m pairs -n 1 z.hs
reshape a.hs z.hs id '[0]'
expect_fail 1 "z.hs: field 'id' is int64 [0], expected int64 [] (one value per record)" occlude -p 1 z.hs

# --- embeddings of different component counts are not pooled (C = 2 with C = 1)
"$FIX" emb -n 60 -C 2 > c2.hs || fail "fixture"
expect_fail 1 "c2.hs: embeddings of 2 components (mu [2, 2]), the first input e60 had 1 (mu [1, 2])" centroids e60 c2.hs
expect_fail 1 "the support embeddings have 2 components (c2.hs: mu [2, 2]), the queries 1 (e60: mu [1, 2])" \
    fewshot -s c2.hs -k 1 -q 1 -R 2 e60
expect_fail 1 "the support embeddings have 1 component (e60: mu [1, 2]), the queries 2 (c2.hs: mu [2, 2])" \
    fewshot -s e60 -k 1 -q 1 -R 2 c2.hs
centroids c2.hs c2.hs > /dev/null || fail "centroids on two inputs of the same C"

# --- a directory is said to be one (before: "read error: Is a directory")
mkdir dir
for p in tshow centroids "retrieve --summary" "fewshot --summary" totsv seedstat; do
    expect_fail 1 "dir: it is a directory, expected" $p dir
done
expect_fail 1 "stdin: it is a directory, expected a hedge stream" sh -c 'tshow < dir'
# --- two inputs both stdin: said so (evaluate -g - - said "stdin: empty input")
for p in evaluate knn; do
    expect_fail 1 "$p: stdin: standard input is already read as another input of this command: give a file for all but one of them" \
        sh -c "$p -g - - < e60"
    [ "$(wc -l < "$T/err")" = 1 ] || fail "$p -g - -: not one line: $(cat "$T/err")"
done
expect_fail 1 "dir: it is a directory, expected a pairs file" pairscore --pairs dir e60

# --- corrupt msgpack after the header, found before msgpack-c allocates anything for it: an array
# claiming 2^32 - 1 elements (before: "out of memory while reading the stream", at 4.6 MB; under
# ASan the allocation of 128 GiB aborted), a map claiming 2^20 pairs (before: "truncated"), arrays
# nested 40 deep (msgpack-c nests 32), the byte 0xc1 that msgpack never uses
/usr/bin/python3 - <<'EOF' || fail "python3 could not craft the corrupt streams"
import msgpack
objs = list(msgpack.Unpacker(open("e60", "rb"), raw=False))
good = msgpack.packb(objs[0], use_bin_type=True) + msgpack.packb(objs[1], use_bin_type=True)
for name, bad in (("huge.hs", b"\xdd\xff\xff\xff\xff" + bytes(100)), ("map.hs", b"\xdf\x00\x10\x00\x00" + bytes(100)),
                  ("deep.hs", b"\x91" * 40 + b"\x00"), ("xc1.hs", b"\xc1" + bytes(10))):
    with open(name, "wb") as f:
        f.write(good + bad)
EOF
# (tshow prints the header before it meets the record, so its stdout is dropped here)
expect_fail 1 "huge.hs: corrupt stream: record 2 is not valid msgpack (an array or map in it claims 4294967295 elements" \
    sh -c 'tshow -q huge.hs > /dev/null'
expect_fail 1 "huge.hs: corrupt stream: record 2 is not valid msgpack" centroids huge.hs
expect_fail 1 "map.hs: corrupt stream: record 2 is not valid msgpack (an array or map in it claims 1048576 elements" \
    centroids map.hs
expect_fail 1 "deep.hs: corrupt stream: record 2 is not valid msgpack (containers nested over 16 deep" centroids deep.hs
expect_fail 1 "xc1.hs: corrupt stream: record 2 is not valid msgpack" centroids xc1.hs

# --- tonpz: a batch of 0 items (UBSan: NULL to memcpy) is an array of 0 rows
/usr/bin/python3 - <<'EOF' || fail "python3 could not craft the empty batch"
import msgpack
h = {"format": "hedge-stream", "version": 1, "kind": "pairbatch", "batched": True,
     "fields": [{"name": "x", "dtype": "float32", "shape": [2]}, {"name": "c", "dtype": "int32", "shape": []}],
     "meta": {}, "provenance": {"program": "craft", "args": [], "input": []}}
with open("b0.hs", "wb") as f:
    f.write(msgpack.packb(h, use_bin_type=True))
    f.write(msgpack.packb({"x": {"dtype": "float32", "shape": [0, 2], "data": b""},
                           "c": {"dtype": "int32", "shape": [0], "data": b""}}, use_bin_type=True))
    f.write(msgpack.packb({"end": 1}, use_bin_type=True))
EOF
for z in "" -z; do
    tonpz $z -o b0.npz b0.hs 2> err || fail "tonpz $z on a batch of 0 items: $(cat err)"
    /usr/bin/python3 -c 'import numpy as np; z = np.load("b0.npz"); assert z["x"].shape == (0, 2) and z["c"].shape == (0,), (z["x"].shape, z["c"].shape)' ||
        fail "tonpz $z: the arrays of a batch of 0 items"
done

# --- seedstat: decimal numbers only, control characters escaped, linear in groups
for bad in '0x10' '0X1p3' ' 5' '5 ' '+' '.' 'e5' '1e' '1e+' 'infinity' '1e999' '--1' '0.5.1'; do
    printf 'a\tclean\tap\t%s\n' "$bad" > bad.tsv
    expect_fail 1 "line 1: value '$bad' of a clean ap is not a finite decimal number or '-'" seedstat bad.tsv
done
printf 'a\tclean\tap\t0.5\0\n' > nul.tsv
expect_fail 1 "line 1: a NUL byte after 'a\\tclean\\tap\\t0.5', expected text" seedstat nul.tsv
printf 'a\tclean\tap\t0.5\r\nb\tclean\tap\t1\n' > cr.tsv
expect_fail 1 "line 1: value '0.5\\r' of a clean ap is not a finite decimal number" seedstat cr.tsv
tr -d '\n' < "$T/err" | grep -q "$(printf '\r')" && fail "seedstat echoed a raw carriage return: $(cat -A "$T/err")"
# bytes that are not UTF-8 (and not printable) are escaped, UTF-8 is kept: they were echoed raw
printf 'r\377\376\303\251\tclean\tap\tx\n' > hi.tsv
expect_fail 1 "line 1: value 'x' of r\\xff\\xfe$(printf '\303\251') clean ap is not a finite decimal number" seedstat hi.tsv
LC_ALL=C grep -q "$(printf '\377')" "$T/err" && fail "seedstat echoed a raw 0xff byte: $(cat -A "$T/err")"
printf 'a\r\n' > cr1.tsv
expect_fail 1 "line 1: expected RUN, SET, METRIC and VALUE separated by tabs, got 'a\\r'" seedstat cr1.tsv
# what is a number: 5, -.5, +1., 1E-3, 2e+2 (mean of the five: (5 - 0.5 + 1 + 0.001 + 200) / 5 = 41.1002)
printf 'a\tc\tm\t5\na\tc\tm\t-.5\na\tc\tm\t+1.\na\tc\tm\t1E-3\na\tc\tm\t2e+2\n' | seedstat | sed -n 2p | cut -f4,7 > n.out
[ "$(cat n.out)" = "$(printf '41.1002\t5')" ] || fail "seedstat on decimal numbers: $(cat n.out)"
# 200,000 groups of one line each plus a second line for the first: one group per line, in the
# order of first appearance (the search of every group took > 20 s)
awk 'BEGIN { for (i = 0; i < 200000; i++) printf "r%d\tclean\tap\t%d\n", i, i % 7; print "r0.s715\tclean\tap\t2" }' > many.tsv
timeout 20 seedstat many.tsv > many.out || fail "seedstat on 200,000 groups: exit $? (timeout: 124)"
[ "$(wc -l < many.out)" = 200001 ] || fail "seedstat on 200,000 groups: $(wc -l < many.out) lines"
[ "$(sed -n 2p many.out)" = "$(printf 'r0\tclean\tap\t1\t\t1.414213562\t2')" ] || fail "group r0: $(sed -n 2p many.out)"
[ "$(tail -n 1 many.out)" = "$(printf 'r199999\tclean\tap\t2\t\t\t1')" ] || fail "the last group: $(tail -n 1 many.out)"
pass
