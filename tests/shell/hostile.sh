#!/bin/sh
# Regression tests from the bad-input audit (issue 7): cut and concatenated streams, headers
# whose shapes overflow, -H as valid JSON whatever the names hold, checkpoints whose tensors do
# not fit the model, train's output checked before any work and saved without leftovers,
# mnistjson on a directory and on nan, outputs that are devices.
# Streams are crafted with Debian's python3 and its msgpack (python3-msgpack, installed by setup-deps).
set -u
. "$(dirname "$0")/../lib.sh"
cd "$T"
mkdigits -N 2 -s test-seen -n 100 > a.hs || fail "mkdigits"

# --- cut streams say "truncated", at the header and inside a record
head -c 40 a.hs > cut-header.hs
# (tshow prints the header it read before it meets the cut, so its stdout is dropped here)
expect_fail 1 "truncated stream: input ends inside the header" tshow -q cut-header.hs
grep -q "empty input" "$T/err" && fail "a cut header is reported as empty input"
head -c 5000 a.hs > cut-record.hs
expect_fail 1 "truncated stream: input ends inside record" sh -c 'tshow -q cut-record.hs > /dev/null'
expect_fail 1 "empty input" tshow -q /dev/null

# --- one stream per input: bytes after the trailer are an error (formats/stream.md)
cat a.hs a.hs > twice.hs
expect_fail 1 "data after the end marker" sh -c 'tshow -q twice.hs > /dev/null'
expect_fail 1 "data after the end marker" sh -c 'cat a.hs a.hs | occlude -p 1 > /dev/null'
cp a.hs extra.hs && printf x >> extra.hs
expect_fail 1 "data after the end marker" sh -c 'tshow -q extra.hs > /dev/null'
tshow -q a.hs > /dev/null || fail "a whole stream is rejected"

# --- crafted streams
/usr/bin/python3 - <<'EOF' || fail "python3 could not craft the test streams"
import msgpack
def stream(path, fields, records, meta=None, kind="images", batched=False, end=None):
    h = {"format": "hedge-stream", "version": 1, "kind": kind, "batched": batched,
         "fields": [{"name": n, "dtype": d, "shape": s} for n, d, s in fields],
         "meta": meta or {}, "provenance": {"program": "craft", "args": [], "input": []}}
    with open(path, "wb") as f:
        # the string "QQ" becomes two bytes that are not UTF-8
        f.write(msgpack.packb(h, use_bin_type=True).replace(b"\xa2QQ", b"\xa2\xff\xfe"))
        for r in records:
            f.write(msgpack.packb(r, use_bin_type=True))
        f.write(msgpack.packb({"end": len(records) if end is None else end}, use_bin_type=True))
def t(dtype, shape, data):
    return {"dtype": dtype, "shape": shape, "data": data}
big = 1 << 31
# header shapes whose element count overflows int64 (and any record's 4 GiB limit)
stream("huge.hs", [("image", "uint8", [big, big, big]), ("class", "int32", [])], [])
stream("huge0.hs", [("image", "uint8", [big, big, 0]), ("class", "int32", [])], [])
# a record tensor with a zero dimension and huge others (numel 0, product of the rest overflows)
stream("rec0.hs", [("x", "float32", [0, big, big])], [{"x": t("float32", [0, big, big], b"")}])
# names and strings that need escaping, a long meta tensor, bytes that are not UTF-8
import struct
stream("names.hs", [('a"b\\c\n', "uint8", [2])], [{'a"b\\c\n': t("uint8", [2], b"\x01\x02")}],
       meta={"long": t("float32", [100], struct.pack("<100f", *range(100))),
             "bad": "QQ", "raw": {1: [1, 2], "x": None}})
# an embedding whose mean is NaN, and 3-digit embeddings to mix with 2-digit ones
nan = struct.pack("<2f", float("nan"), 0.0)
stream("nan-emb.hs", [("mu", "float32", [1, 2]), ("class", "int32", [])],
       [{"mu": t("float32", [1, 2], nan), "class": t("int32", [], struct.pack("<i", 3))}],
       kind="embeddings", meta={"digits": 2})
ok = struct.pack("<2f", 1.0, 0.0)
for d in (2, 3):
    stream("emb%d.hs" % d, [("mu", "float32", [1, 2]), ("class", "int32", [])],
           [{"mu": t("float32", [1, 2], ok), "class": t("int32", [], struct.pack("<i", 3))}],
           kind="embeddings", meta={"digits": d})
EOF
expect_fail 1 "not finite" centroids nan-emb.hs
expect_fail 1 "the first input had 2 digits" centroids emb2.hs emb3.hs
expect_fail 1 "too large" tshow -q huge.hs
expect_fail 1 "too large" batcher -m pairs -n 1 huge.hs
expect_fail 1 "too large" tshow -q huge0.hs
expect_fail 1 "too large" tshow -q rec0.hs
tshow -H names.hs > names.json || fail "tshow -H on odd names"
expect_fail 2 "does not go with" tshow -H -n 1 names.hs
expect_fail 2 "does not go with" tshow -H -q names.hs
/usr/bin/python3 -c 'import json, sys; h = json.load(open(sys.argv[1])); assert h["fields"][0]["name"] == "a\"b\\c\n"; assert h["meta"]["long"]["count"] == 100' names.json ||
    fail "tshow -H is not valid JSON or lost the names: $(cat names.json)"
tshow names.hs | sed -n '2,$p' | grep -v '^#' | /usr/bin/python3 -c 'import json, sys; [json.loads(l) for l in sys.stdin]' ||
    fail "tshow's record lines are not valid JSON"

# --- checkpoints: every tensor checked against the model it describes
mkdigits -N 2 -s train -n 400 > tr.hs
batcher -m pairs -b 8 -n 40 < tr.hs > b.hs
train -o m.ckpt --head mog -D 2 -n 2 -t 1 < b.hs 2> train.err || fail "train: $(cat train.err)"
ls m.ckpt.tmp* > /dev/null 2>&1 && fail "train left a temp file behind"
/usr/bin/python3 - <<'EOF' || fail "python3 could not craft the checkpoints"
import msgpack
def load(path):
    u = msgpack.Unpacker(open(path, "rb"), raw=False, strict_map_key=False)
    return list(u)
def save(path, objs):
    with open(path, "wb") as f:
        for o in objs:
            f.write(msgpack.packb(o, use_bin_type=True))
h, rec, end = load("m.ckpt")
def variant(path, fh=None, fr=None):
    import copy
    H, R = copy.deepcopy(h), copy.deepcopy(rec)
    if fh: fh(H)
    if fr: fr(H, R)
    save(path, [H, R, end])
def u8_moments(H, R):  # the moments as uint8 with the same byte count (the audit's heap over-read)
    for f in H["fields"]:
        if f["name"] == "optim.m":
            n = f["shape"][0]
            f["dtype"] = "uint8"; f["shape"] = [4 * n]
    m = R["optim.m"]; m["dtype"] = "uint8"; m["shape"] = [4 * m["shape"][0]]
variant("u8.ckpt", fr=u8_moments)
variant("negstep.ckpt", fh=lambda H: H["meta"].__setitem__("step", -5))
def transpose(H, R):  # same count, other shape
    for f in H["fields"]:
        if f["name"] == "param.fc1.w":
            f["shape"] = f["shape"][::-1]
    R["param.fc1.w"]["shape"] = R["param.fc1.w"]["shape"][::-1]
variant("transposed.ckpt", fr=transpose)
def extra(H, R):
    H["fields"].append({"name": "param.extra", "dtype": "float32", "shape": [1]})
    R["param.extra"] = {"dtype": "float32", "shape": [1], "data": b"\0\0\0\0"}
variant("extra.ckpt", fr=extra)
variant("nanlr.ckpt", fh=lambda H: H["meta"].__setitem__("lr", float("nan")))
variant("huge.ckpt", fh=lambda H: (H["meta"].__setitem__("C", 64), H["meta"].__setitem__("D", 4096)))
variant("digits0.ckpt", fh=lambda H: H["meta"].__setitem__("digits", 0))
EOF
expect_fail 1 "optim.m" sh -c 'train --resume u8.ckpt -n 4 -t 1 < b.hs'
expect_fail 1 "'step' is -5" sh -c 'train --resume negstep.ckpt -n 4 -t 1 < b.hs'
expect_fail 1 "param.fc1.w" sh -c 'embed -m transposed.ckpt < a.hs'
expect_fail 1 "tensors" sh -c 'embed -m extra.ckpt < a.hs'
expect_fail 1 "'lr'" sh -c 'train --resume nanlr.ckpt -n 4 -t 1 < b.hs'
# a header that would make the model cost gigabytes before its tensors can be checked
expect_fail 1 "more than 4096" sh -c 'embed -m huge.ckpt < a.hs'
# digits 0 (absent is how a model of other images says it has no digits): refused, one line
expect_fail 1 "digits0.ckpt: checkpoint header 'digits' is 0" sh -c 'embed -m digits0.ckpt < a.hs'
[ "$(wc -l < "$T/err")" = 1 ] || fail "embed -m digits0.ckpt: not one line: $(cat "$T/err")"
expect_fail 1 "digits0.ckpt: checkpoint header 'digits' is 0" sh -c 'train --resume digits0.ckpt -o r.ckpt -n 4 -t 1 < b.hs'
embed -m m.ckpt < a.hs > /dev/null || fail "the untouched checkpoint is rejected"

# the kernel and code path that computed it are in the checkpoint
tshow -H m.ckpt | /usr/bin/python3 -c 'import json, sys; m = json.load(sys.stdin)["meta"]; assert m["blas_core"] and m["code_path"] in ("avx2", "avx512", "none", "simde"), m' ||
    fail "the checkpoint does not record the BLAS kernel and code path"

# --- train's output: checked before any work, one message naming the file
expect_fail 1 "cannot write nodir/m.ckpt" sh -c 'train -o nodir/m.ckpt -n 5 -t 1 < b.hs'
[ "$(grep -c "cannot write" "$T/err")" = 1 ] || fail "the message was printed more than once: $(cat "$T/err")"
grep -q "steps" "$T/err" && fail "train trained before finding its output unwritable"
expect_fail 1 "it is a directory" sh -c 'mkdir -p dir.ckpt && train -o dir.ckpt -n 5 -t 1 < b.hs'
expect_fail 1 "cannot write /dev/full" sh -c 'train -o /dev/full -n 2 -t 1 < b.hs'
[ "$(grep -c "cannot write" "$T/err")" = 1 ] || fail "/dev/full: more than one message: $(cat "$T/err")"
# a save of an earlier version killed with -9 left m.ckpt.tmp: the next save removes it
printf 'half a checkpoint' > k.ckpt.tmp
train -o k.ckpt --head point -D 2 -n 2 -t 1 < b.hs 2>/dev/null || fail "train over a leftover k.ckpt.tmp"
[ -e k.ckpt.tmp ] && fail "k.ckpt.tmp is still there after a save"
embed -m k.ckpt < a.hs > /dev/null || fail "the checkpoint saved over a leftover temp file is broken"
# a device is written, not replaced (as root, renaming over /dev/null would replace the node)
ln -s /dev/null null.ckpt
train -o null.ckpt --head point -D 2 -n 2 -t 1 < b.hs 2>/dev/null || fail "train -o (a link to) /dev/null"
[ -c /dev/null ] && [ -L null.ckpt ] || fail "/dev/null or the link to it was replaced"

# --- mnistjson: a directory and a nan pixel are errors
mkdir js
for i in 0 1 2 3 4 5 6 7 8 9; do
    /usr/bin/python3 -c 'print("{\"data\": [" + ",".join(["0.5"] * 784) + "]}")' > js/$i.json
done
mkdir jo
mnistjson -o jo js/0.json js/1.json js/2.json js/3.json js/4.json js/5.json js/6.json js/7.json js/8.json js/9.json 2>/dev/null ||
    fail "mnistjson on good files"
sed 's/0.5,0.5/nan,0.5/' js/3.json > js3 && mv js3 js/3.json
expect_fail 1 "js/3.json: bad value" mnistjson -o jo js/0.json js/1.json js/2.json js/3.json js/4.json js/5.json js/6.json js/7.json js/8.json js/9.json
sed 's/nan,0.5/0.5,0.5/' js/3.json > js3 && mv js3 js/3.json
rm js/4.json && mkdir js/4.json
expect_fail 1 "js/4.json is not a regular file" mnistjson -o jo js/0.json js/1.json js/2.json js/3.json js/4.json js/5.json js/6.json js/7.json js/8.json js/9.json
pass
