#!/bin/sh
# fromnpz and tonpz: numpy's .npz and .npy in, streams that the evaluators take (knn, pairscore,
# retrieve, ktau) out, and back: fromnpz | tonpz gives the arrays again (float64 as float32,
# [n, D] as [n, 1, D]), numpy loading them with allow_pickle=False, the header and its lineage as
# JSON. Float images scaled or rounded with a note; every refusal names the array, its dtype and
# shape (exit 1, nothing on stdout); misuse exits 2. Needs Debian's python3 with numpy.
set -u
. "$(dirname "$0")/../lib.sh"
PY=/usr/bin/python3
cd "$T" || fail "cd $T"

# --- the inputs, made by numpy: two well-separated groups of 3 classes, so that knn is exact
$PY - <<'EOF' || fail "python3 could not write the .npz files"
import numpy as np
r = np.random.default_rng(5)
n = 60
labels = np.arange(n) % 3
centres = np.array([[10.0, 0, 0, 0], [0, 10.0, 0, 0], [0, 0, 10.0, 0]])
mu = centres[labels] + r.normal(scale=0.1, size=(n, 4))          # float64 [n, D]
var = r.uniform(0.01, 0.5, size=(n, 4))
np.savez("emb.npz", mu=mu, var=var, labels=labels.astype(np.int16), attr=(np.arange(n) * 7) % 5,
         flag=(np.arange(n) % 2 == 0), score=np.linspace(0, 1, n), big=np.arange(n) * 2**40,
         note=np.arange(3))
mix = np.stack([mu, mu + 0.05], axis=1).astype(">f8")           # [n, C, D], big-endian float64
np.savez_compressed("mix.npz", mu=mix, var=np.stack([var, var * 2], axis=1), cls=labels,
                    id=np.arange(n, dtype=np.uint32) + 1000, eta=np.linspace(0.9, 0.1, n))
np.save("mu.npy", mu.astype(np.float32))
img = r.integers(0, 256, size=(12, 6, 5), dtype=np.uint8)
np.savez("img.npz", image=img, labels=np.arange(12) % 4)
np.savez("img01.npz", image=r.random((8, 3, 4, 4)), labels=np.arange(8) % 2)     # float [0, 1]
np.savez("img255.npz", image=r.integers(0, 255, size=(8, 4, 4)).astype(np.float32) + 0.25)
np.savez("img16.npz", image=r.integers(0, 256, size=(5, 4, 4), dtype=np.int16))
EOF

# --- help and misuse
fromnpz -h > out || fail "fromnpz -h failed"
grep -q '^usage: fromnpz' out || fail "fromnpz -h: no usage on stdout"
fromnpz --help | grep -q '^usage: fromnpz' || fail "fromnpz --help: no usage"
tonpz --help | grep -q '^usage: tonpz' || fail "tonpz --help: no usage"
# the examples that -h once printed are in man/fromnpz.1.scd and man/tonpz.1.scd: tests/shell/manexamples.sh runs them
expect_exit 2 "fromnpz --bogus" fromnpz --bogus emb.npz
[ "$(wc -l < "$T/expect.err")" = 2 ] && grep -q "^Try 'fromnpz --help' for help.$" "$T/expect.err" ||
    fail "misuse is not one line and the Try line: $(cat "$T/expect.err")"
expect_exit 2 "fromnpz without a file" fromnpz
expect_exit 2 "fromnpz -k bad" fromnpz -k points emb.npz
expect_exit 2 "fromnpz --range 7" fromnpz -k images --range 7 img.npz
expect_exit 2 "fromnpz --match-a alone" fromnpz --match-a 1 emb.npz
expect_exit 2 "fromnpz -k images --mu" fromnpz -k images --mu x img.npz
expect_exit 2 "tonpz --bogus" tonpz --bogus

# --- embeddings: [n, D] float64 with var, class from 'labels', extras
fromnpz --class labels --match-a 2 --match-b 3 emb.npz > emb.hs 2> err || fail "fromnpz emb.npz: $(cat err)"
grep -q "note: emb.npz: array 'note' int64 (3,) has not one row per item of 'mu' (60): left out" err ||
    fail "no note on the array left out: $(cat err)"
tshow -H emb.hs > h.json || fail "tshow -H"
for want in '"kind": "embeddings"' '{"name": "mu", "dtype": "float32", "shape": [1, 4]}' \
    '{"name": "var", "dtype": "float32", "shape": [1, 4]}' '{"name": "class", "dtype": "int32", "shape": []}' \
    '{"name": "id", "dtype": "int64", "shape": []}' '{"name": "attr", "dtype": "int32", "shape": []}' \
    '{"name": "flag", "dtype": "uint8", "shape": []}' '{"name": "score", "dtype": "float32", "shape": []}' \
    '{"name": "big", "dtype": "int64", "shape": []}' '"model": "mog", "C": 1, "D": 4' '"match_a": 2, "match_b": 3' \
    '"values": [0, 1, 2]' '"program": "fromnpz"'; do
    grep -qF "$want" h.json || fail "the header lacks $want: $(cat h.json)"
done
# stdin, and --skip
fromnpz --class labels - < emb.npz 2> /dev/null | totsv > stdin.tsv || fail "fromnpz - < emb.npz"
totsv emb.hs | cmp -s - stdin.tsv || fail "fromnpz - < emb.npz gives other records than fromnpz emb.npz"
fromnpz --skip attr,flag,big emb.npz 2> /dev/null | tshow -H > skip.json || fail "--skip"
grep -q '"attr"\|"flag"\|"big"' skip.json && fail "--skip attr,flag,big left them in: $(cat skip.json)"
grep -q '"score"' skip.json || fail "--skip dropped score too"
# the evaluators take it: groups 10 apart with noise 0.1, so every neighbour has the item's class
knn --json knn.json emb.hs > knn.hs || fail "knn on fromnpz's stream"
[ "$(json_get accuracy < knn.json)" = 1 ] || fail "knn accuracy $(cat knn.json), expected 1"
retrieve --json ret.json emb.hs > /dev/null || fail "retrieve on fromnpz's stream"
[ "$(json_get map_r < ret.json)" = 1 ] || fail "retrieve MAP@R $(cat ret.json), expected 1"
pairscore -n 200 emb.hs | apcurve > ap.txt || fail "pairscore | apcurve on fromnpz's stream"
grep -q '^ap 1.000000$' ap.txt || fail "verification AP: $(cat ap.txt), expected 1"
pairscore --self emb.hs | knn | ktau > tau.txt || fail "pairscore --self | knn | ktau"
grep -q 'tau' tau.txt || fail "ktau printed no tau: $(cat tau.txt)"
ktau knn.hs > /dev/null || fail "ktau on knn of fromnpz's stream"
# pairscore refuses embeddings without a and b, saying so
fromnpz --class labels emb.npz > noab.hs 2> /dev/null || fail "fromnpz without --match-a"
expect_fail 1 "no match_a / match_b" pairscore -n 10 noab.hs

# --- any numeric dtype of mu, var and eta to float32, exactly where float32 holds the value: float16
# (0x3555 = 0.333251953125, -2, 65504, the largest half, 2^-24, the smallest), int16 means, uint8
# variances, a big-endian float16 eta; then checked finite as any other
$PY - <<'EOF' || fail "python3 could not write the dtype files"
import numpy as np
h = np.array([[0.333251953125, -2.0], [65504.0, 2.0 ** -24]], np.float16)
np.savez("f16.npz", mu=h, var=np.array([[1, 2], [3, 250]], np.uint8), eta=np.array([0.5, 0.25], ">f2"),
         labels=np.array([0, 1], np.uint8))
np.savez("i16.npz", mu=np.array([[-7, 3], [5, 32767]], np.int16), labels=np.array([0, 1]))
EOF
fromnpz f16.npz | totsv -f mu,var,eta > f16.tsv || fail "fromnpz of float16 means"
printf 'mu[0]\tmu[1]\tvar[0]\tvar[1]\teta\n0.333251953\t-2\t1\t2\t0.5\n65504\t5.96046448e-08\t3\t250\t0.25\n' | cmp -s - f16.tsv ||
    fail "float16 means, uint8 variances, a big-endian float16 eta: $(cat f16.tsv)"
fromnpz i16.npz | totsv -f mu > i16.tsv || fail "fromnpz of int16 means"
printf 'mu[0]\tmu[1]\n-7\t3\n5\t32767\n' | cmp -s - i16.tsv || fail "int16 means: $(cat i16.tsv)"

# --- labels that are names (identities): meta class_names, the names ascending by their bytes
# (Python's sorted), each item's class the index of its name; '<U' (either byte order) and '|S'
# (bytes: bin); numpy's trailing NULs are not part of a name. ids.npz: n000350 n000002 n000107
# n000350 "" n000002 U+00E9 "a": sorted "" < "a" < "n000002" < "n000107" < "n000350" < U+00E9,
# so the classes are 4 2 3 4 0 2 5 1
$PY - <<'EOF' || fail "python3 could not write the named sets"
import numpy as np
y = ["n000350", "n000002", "n000107", "n000350", "", "n000002", "\u00e9", "a"]
mu = np.arange(16, dtype=np.float32).reshape(8, 2)
np.savez("ids.npz", mu=mu, labels=np.array(y))
np.savez("idsbe.npz", mu=mu, labels=np.array(y, ">U7"))
np.savez("idsb.npz", mu=mu, labels=np.array([s.encode() for s in y]))
EOF
fromnpz ids.npz > ids.hs || fail "fromnpz of '<U' labels"
tshow -H ids.hs | grep -qF '"classes": {"dtype": "int32", "shape": [6], "count": 6, "values": [0, 1, 2, 3, 4, 5]}, "class_names": ["", "a", "n000002", "n000107", "n000350", "'"$(printf '\303\251')"'"]' ||
    fail "'<U' labels: $(tshow -H ids.hs)"
fromnpz idsbe.npz > idsbe.hs || fail "fromnpz of '>U' labels"
fromnpz --labels labels idsb.npz > idsb.hs || fail "fromnpz --labels of '|S' labels"
tshow -H idsb.hs | grep -qF '"class_names": ["<0 bytes>", "<1 bytes>", "<7 bytes>", "<7 bytes>", "<7 bytes>", "<2 bytes>"]' ||
    fail "'|S' labels: $(tshow -H idsb.hs)"
PYTHONPATH="$BIN/../../python" $PY - <<'EOF' || fail "the classes and names of the three (above)"
import hedge.stream as hs
y = ["n000350", "n000002", "n000107", "n000350", "", "n000002", "\u00e9", "a"]
for path, names in (("ids.hs", ["", "a", "n000002", "n000107", "n000350", "\u00e9"]),
                    ("idsbe.hs", ["", "a", "n000002", "n000107", "n000350", "\u00e9"]),
                    ("idsb.hs", [s.encode() for s in ["", "a", "n000002", "n000107", "n000350", "\u00e9"]])):
    h, d = hs.read(path)
    assert h["meta"]["class_names"] == names, (path, h["meta"])
    assert d["class"].tolist() == [4, 2, 3, 4, 0, 2, 5, 1], (path, d["class"])
    assert [names[c] for c in d["class"]] == [s.encode() if path == "idsb.hs" else s for s in y], path
EOF
# totsv shows the names (escaped: a tab in a name is \t)
[ "$(totsv -f class ids.hs | tail -n +2 | tr '\n' ' ')" = "n000350 n000002 n000107 n000350  n000002 $(printf '\303\251') a " ] ||
    fail "totsv of named classes: $(totsv -f class ids.hs)"

# --- back to numpy: tonpz, stored and deflated; numpy loads it without pickles
tonpz -o emb2.npz emb.hs || fail "tonpz -o"
fromnpz -k embeddings --id id --class cls mix.npz 2> /dev/null | tonpz -z > mix2.npz || fail "fromnpz mix | tonpz -z"
fromnpz mu.npy | tonpz > mu2.npz || fail "fromnpz mu.npy | tonpz"
fromnpz -k images --class labels img.npz | tonpz > img2.npz || fail "images round trip"
fromnpz -k images --class labels img01.npz 2> note01 | tonpz > img01b.npz || fail "float images [0, 1]"
grep -q "note: img01.npz: array 'image' is float64 in \[.*\]: scaled by 255 and rounded to uint8" note01 ||
    fail "no note on the scaling: $(cat note01)"
fromnpz -k images img255.npz 2> note255 | tonpz > img255b.npz || fail "float images [0, 255]"
grep -q "array 'image' is float32 in \[.*\]: rounded to uint8" note255 || fail "no note on the rounding: $(cat note255)"
fromnpz -k images --range 255 img01.npz 2> note | tonpz > img01c.npz || fail "--range 255"
[ -s note ] && fail "--range gave a note: $(cat note)"
fromnpz -k images img16.npz | tonpz > img16b.npz || fail "int16 images"
knn emb.hs | tonpz > knn.npz || fail "knn | tonpz"
$PY - <<'EOF' || fail "the round trips differ (above)"
import json, numpy as np
def load(p):
    return np.load(p, allow_pickle=False)
def same(a, b, what):
    assert a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b), \
        "%s: %s %s vs %s %s" % (what, a.dtype, a.shape, b.dtype, b.shape)
e, z = load("emb.npz"), load("emb2.npz")
same(z["mu"], e["mu"].astype(np.float32)[:, None, :], "mu [n, D] float64")
same(z["var"], e["var"].astype(np.float32)[:, None, :], "var")
same(z["class"], e["labels"].astype(np.int32), "class from labels")
same(z["id"], np.arange(60, dtype=np.int64), "id")
same(z["attr"], e["attr"].astype(np.int32), "attr")
same(z["flag"], e["flag"].astype(np.uint8), "flag")
same(z["score"], e["score"].astype(np.float32), "score")
same(z["big"], e["big"], "big (int64: beyond int32)")
assert "note" not in z.files, z.files
same(z["meta/classes"], np.arange(3, dtype=np.int32), "meta classes")
h = json.loads(str(z["header"]))
assert h["kind"] == "embeddings" and h["meta"]["match_a"] == 2 and h["provenance"]["program"] == "fromnpz", h
assert h["provenance"]["args"] == ["--class", "labels", "--match-a", "2", "--match-b", "3", "emb.npz"], h
m, z = load("mix.npz"), load("mix2.npz")
same(z["mu"], m["mu"].astype(np.float32), "mu [n, C, D] big-endian float64")
same(z["var"], m["var"].astype(np.float32), "var [n, C, D]")
same(z["eta"], m["eta"].astype(np.float32), "eta")
same(z["id"], m["id"].astype(np.int64), "id from uint32")
same(z["class"], m["cls"].astype(np.int32), "class from --class cls")
same(load("mu2.npz")["mu"], np.load("mu.npy")[:, None, :], "a bare .npy")
i, z = load("img.npz"), load("img2.npz")
same(z["image"], i["image"], "uint8 images [n, H, W]")
same(z["class"], i["labels"].astype(np.int32), "image classes")
h = json.loads(str(z["header"]))
assert h["kind"] == "images" and h["meta"]["height"] == 6 and h["meta"]["width"] == 5 and "channels" not in h["meta"], h
f = load("img01.npz")["image"]
same(load("img01b.npz")["image"], np.rint(f * 255).astype(np.uint8), "float images in [0, 1]")
assert json.loads(str(load("img01b.npz")["header"]))["meta"]["channels"] == 3
same(load("img01c.npz")["image"], np.rint(f).astype(np.uint8), "--range 255")
same(load("img255b.npz")["image"], np.rint(load("img255.npz")["image"]).astype(np.uint8), "float images in [0, 255]")
same(load("img16b.npz")["image"], load("img16.npz")["image"].astype(np.uint8), "int16 images")
# the lineage: knn's header holds fromnpz's
k = load("knn.npz")
h = json.loads(str(k["header"]))
assert h["kind"] == "knn" and h["provenance"]["program"] == "knn", h
assert h["provenance"]["input"][0]["provenance"]["program"] == "fromnpz", h["provenance"]
assert k["correct"].dtype == np.uint8 and k["correct"].shape == (60,) and k["correct"].all()
assert k["recall"].shape == (60, 5) and k["neighbors"].shape == (60, 5)
EOF

# tonpz's archive goes back through fromnpz: its header (a string) and meta/classes (not one row
# per item) are left out with a note each, the fields come back the same
fromnpz mix2.npz > mix3.hs 2> notes || fail "fromnpz on tonpz's archive: $(cat notes)"
grep -q "note: mix2.npz: array 'header' is '<U[0-9]*' (): strings, and of the strings only the labels (--class) are read: left out" notes || fail "header note: $(cat notes)"
grep -q "note: mix2.npz: array 'meta/classes' int32 (3,) has not one row per item" notes || fail "meta note: $(cat notes)"
[ "$(wc -l < notes)" = 2 ] || fail "not two notes: $(cat notes)"
tonpz mix3.hs > mix3.npz || fail "tonpz mix3.hs"
$PY - <<'EOF' || fail "tonpz | fromnpz | tonpz changed the arrays"
import numpy as np
a, b = np.load("mix2.npz"), np.load("mix3.npz")
for k in ["mu", "var", "eta", "id", "class"]:
    assert a[k].dtype == b[k].dtype and np.array_equal(a[k], b[k]), k
EOF

# --- several inputs: their records stacked in order, as np.concatenate (the clean and the corrupt
# twins as one mixed set); the header is tonpz's own, with every input in its lineage and the
# first's kind, fields and meta; another kind or other fields: one line naming the input, exit 1,
# no file
tonpz -o cat.npz emb.hs mix3.hs emb.hs 2> err && fail "tonpz stacked streams of other fields"
grep -qx "tonpz: mix3.hs: field 0 is 'mu' float32 \[2, 4\], expected 'mu' float32 \[1, 4\] as in the first input" err ||
    fail "other fields: $(cat err)"
[ -e cat.npz ] && fail "a file despite the refusal"
expect_exit 1 "tonpz of a knn and an embeddings stream" tonpz -o cat.npz emb.hs knn.hs
grep -qx "tonpz: knn.hs: a stream of kind 'knn', expected 'embeddings' as the first input: tonpz stacks streams of one kind" \
    "$T/expect.err" || fail "another kind: $(cat "$T/expect.err")"
expect_exit 2 "tonpz - -" tonpz - -
tonpz -o cat.npz emb.hs emb.hs || fail "tonpz emb.hs emb.hs"
tonpz < emb.hs | cmp -s - emb2.npz || fail "tonpz of one input on stdin: not tonpz -o's archive"
$PY - <<'EOF2' || fail "tonpz emb.hs emb.hs: not the two stacked (above)"
import json, numpy as np
a, c = np.load("emb2.npz"), np.load("cat.npz")
for k in ["mu", "var", "class", "id", "attr", "flag"]:
    assert c[k].dtype == a[k].dtype and np.array_equal(c[k], np.concatenate([a[k], a[k]])), k
assert np.array_equal(c["meta/classes"], a["meta/classes"])
h = json.loads(str(c["header"]))
assert h["kind"] == "embeddings" and h["meta"]["match_a"] == 2, h["meta"]
assert h["provenance"]["program"] == "tonpz" and h["provenance"]["args"] == ["-o", "cat.npz", "emb.hs", "emb.hs"], h["provenance"]
assert [i["provenance"]["program"] for i in h["provenance"]["input"]] == ["fromnpz", "fromnpz"], h["provenance"]
assert [f["name"] for f in h["fields"]] == [f["name"] for f in json.loads(str(a["header"]))["fields"]]
EOF2

# --- refusals: one line naming the array, its dtype and shape and what was expected; exit 1
$PY - <<'EOF' || fail "python3 could not write the bad files"
import numpy as np
n = 4
good = np.zeros((n, 3))
np.savez("b_rank.npz", mu=np.zeros(n))
np.savez("b_var.npz", mu=good, var=np.zeros((n, 2)))
np.savez("b_negvar.npz", mu=good, var=-np.ones((n, 3)))
np.savez("b_nan.npz", mu=np.full((n, 3), np.nan))
np.savez("b_huge.npz", mu=np.full((n, 3), 1e300))
np.savez("b_cls.npz", mu=good, labels=np.zeros(n) + 0.5)
np.savez("b_clsnul.npz", mu=good, labels=np.array(["a", "b", "c\0d", "e"]))
np.savez("b_cls2d.npz", mu=good, labels=np.array([["a", "b"]] * n))
np.savez("b_clssur.npz", mu=good, labels=np.array(["a", "\ud800", "b", "c"]))
np.savez("b_clsbnul.npz", mu=good, labels=np.array([b"a", b"b", b"c", b"\0d"]))
np.savez("b_clsempty.npz", mu=good, labels=np.array([], "<U1"))
np.savez("b_clsn.npz", mu=good, labels=np.zeros(n + 1, np.int64))
np.savez("b_clsbig.npz", mu=good, labels=np.full(n, 2**40))
np.savez("b_str.npz", mu=np.array(["a", "b"]))
np.savez("b_img.npz", image=np.zeros((n, 5)))
np.savez("b_px.npz", image=np.full((n, 2, 2), 300, np.int32))
np.savez("b_fpx.npz", image=np.full((n, 2, 2), 300.0))
np.savez("b_r1.npz", image=np.full((n, 2, 2), 2.5))
np.savez("b_last.npz", image=np.zeros((n, 8, 8, 3), np.uint8))
np.savez("b_empty.npz", mu=np.zeros((0, 3)))
np.savez("b_end.npz", mu=good, end=np.zeros(n))
np.savez("b_cplx.npz", mu=np.zeros((n, 3), np.complex128))
v16 = np.ones((n, 3), np.float16); v16[1, 2] = np.inf
np.savez("b_f16inf.npz", mu=good, var=v16)
np.savez("b_idstr.npz", mu=good, id=np.array([b"a", b"b", b"c", b"d"]))
np.savez("b_dim9.npz", mu=np.zeros((1, 1, 1, 1, 1, 1, 1, 1, 2), np.float32), labels=np.zeros(1, int))
EOF
refuse() { msg=$1; shift; expect_fail 1 "$msg" fromnpz "$@"; [ "$(wc -l < "$T/err")" = 1 ] || fail "fromnpz $*: not one line: $(cat "$T/err")"; }
refuse "fromnpz: b_rank.npz: array 'mu' is float64 (4,): expected the means, [n, D] or [n, C, D]" b_rank.npz
refuse "array 'var' is float64 (4, 2): expected the shape of 'mu' (4, 3)" b_var.npz
refuse "array 'var' is float64 (4, 3): element 0 is -1: a variance must be >= 0" b_negvar.npz
refuse "array 'mu' is float64 (4, 3): element 0 is nan: expected finite values" b_nan.npz
refuse "array 'mu' is float64 (4, 3): element 0 is 1e+300 (beyond float32): expected finite values" b_huge.npz
refuse "array 'labels' is float64 (4,): expected the classes as integers (any width) or as names (strings: '<U' or '|S'); a float is no class" b_cls.npz
refuse "array 'labels' is '<U3' (4,): element 2 holds a NUL character inside: expected names without one" b_clsnul.npz
refuse "array 'labels' is '<U1' (4, 2): expected one class per item of 'mu', [4]" b_cls2d.npz
refuse "array 'labels' is '<U1' (4,): element 1 holds U+D800, which is no Unicode character (a surrogate or beyond U+10FFFF)" b_clssur.npz
refuse "array 'labels' is '|S2' (4,): element 3 holds a NUL byte inside: expected names without one" b_clsbnul.npz
refuse "array 'labels' is '<U1' (0,): expected one class per item of 'mu', [4]" b_clsempty.npz
refuse "array 'labels' is int64 (5,): expected one class per item of 'mu', [4]" b_clsn.npz
refuse "array 'labels' is int64 (4,): element 0 is 1099511627776: expected int32 classes" b_clsbig.npz
refuse "fromnpz: b_str.npz: array 'mu' is '<U1' (2,): expected numbers (integers, floats or bool): of the arrays only the labels (--class) may be names" b_str.npz
refuse "fromnpz: b_str.npz: array 'mu' is '<U1' (2,): expected numbers" --mu mu b_str.npz
refuse "fromnpz: b_cplx.npz: array 'mu' is '<c16' (4, 3): expected integers (i1..i8, u1..u8), floats (f2, f4, f8), bool or strings (U, S)" b_cplx.npz
refuse "fromnpz: b_f16inf.npz: array 'var' is float16 (4, 3): element 5 is inf: expected finite values" b_f16inf.npz
refuse "fromnpz: b_idstr.npz: array 'id' is '|S1' (4,): expected numbers" b_idstr.npz
refuse "array 'image' is float64 (4, 5): expected images, [n, H, W] or [n, C, H, W]" -k images b_img.npz
refuse "array 'image' is int32 (4, 2, 2): element 0 is 300: expected pixel values 0..255" -k images b_px.npz
refuse "array 'image' is float64 (4, 2, 2): values from 300 to 300: expected pixel values in [0, 1] or [0, 255]" -k images b_fpx.npz
refuse "array 'image' is float64 (4, 2, 2): values from 2.5 to 2.5: expected pixel values in [0, 1] (--range)" -k images --range 1 b_r1.npz
refuse "array 'image' is uint8 (4, 8, 8, 3): expected channels first, [n, C, H, W]" -k images b_last.npz
refuse "array 'mu' is float64 (0, 3): expected at least one item" b_empty.npz
refuse "array 'end' is float64 (4,): its name is not a field name" b_end.npz
refuse "no array 'nope' (--class); the file holds 'mu', 'var', 'labels', 'attr'" --class nope emb.npz
refuse "no array 'mu' (name the embedding means with --mu)" -k embeddings img.npz
refuse "neither an .npz (zip) nor an .npy file" h.json
refuse "missing.npz: No such file or directory" missing.npz
# nine dimensions (it said "unreadable shape"; in an .npz: a bare .npy refused in its header
# leaks under LeakSanitizer, lib/data/npzimport.c's load), a directory (it said "read error"), on the
# file and on stdin
refuse "b_dim9.npz: array 'mu': a shape of 9 dimensions in the .npy header, expected at most 8" b_dim9.npz
mkdir -p adir
refuse "fromnpz: adir: it is a directory, expected an .npz or .npy file" adir
expect_fail 1 "fromnpz: stdin: it is a directory, expected an .npz or .npy file" sh -c 'fromnpz - < adir'
head -c 300 emb.npz > cut.npz
refuse "cut.npz: a truncated or corrupt zip archive" cut.npz

# --- archives read lazily: the central directory first, then the .npy header of each array looked
# at, then only the arrays used, each inflated no further than its header declares, all of them
# together at most 2 GiB. The archives are written by hand (zipfile cannot lie about sizes).
$PY - <<'EOF' || fail "python3 could not write the crafted archives"
import io, struct, zlib
import numpy as np
def npy(a):
    f = io.BytesIO()
    np.save(f, a)
    return f.getvalue()
def head(descr, shape):  # an .npy header alone, as np.save pads it
    d = "{'descr': '%s', 'fortran_order': False, 'shape': %r, }" % (descr, tuple(shape))
    n = (10 + len(d) + 1 + 63) // 64 * 64
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", n - 10) + (d.ljust(n - 11) + "\n").encode()
def rawzip(path, members, zip64_end=False):
    """members: (name, bytes, deflate?, the size the directory declares (None: the true one))"""
    out, cd = bytearray(), bytearray()
    for name, payload, deflate, usize in members:
        z = zlib.compressobj(9, zlib.DEFLATED, -15) if deflate else None
        data = z.compress(payload) + z.flush() if z else payload
        u = len(payload) if usize is None else usize
        crc, m = zlib.crc32(payload), 8 if deflate else 0
        off = len(out)
        out += struct.pack("<IHHHHHIIIHH", 0x04034b50, 20, 0, m, 0, 0x21, crc, len(data), u, len(name), 0)
        out += name + data
        cd += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014b50, 20, 20, 0, m, 0, 0x21, crc, len(data), u,
                          len(name), 0, 0, 0, 0, 0, off) + name
    cdoff, n = len(out), len(members)
    out += cd
    if zip64_end:  # the zip64 end record, its locator, and the end record deferring to them
        z64 = len(out)
        out += struct.pack("<IQHHIIQQQQ", 0x06064b50, 44, 45, 45, 0, 0, n, n, len(cd), cdoff)
        out += struct.pack("<IIQI", 0x07064b50, 0, z64, 1)
        out += struct.pack("<IHHHHIIH", 0x06054b50, 0, 0, 0xffff, 0xffff, 0xffffffff, 0xffffffff, 0)
    else:
        out += struct.pack("<IHHHHIIH", 0x06054b50, 0, 0, n, n, len(cd), cdoff, 0)
    open(path, "wb").write(out)
n = 4
mu = npy(np.arange(n * 3, dtype=np.float32).reshape(n, 3))
# a deflate bomb: 128 MiB of zeros in 130 KB, a valid uint8 (2^27,) that is not one row per item
bomb = head("|u1", (1 << 27,)) + bytes(1 << 27)
rawzip("bomb.npz", [(b"mu.npy", mu, True, None), (b"junk.npy", bomb, True, None)])
# junk declares uint8 (4,), 132 bytes, and so does the directory, but it inflates to 128 MiB
small = head("|u1", (n,))
rawzip("liar.npz", [(b"mu.npy", mu, True, None), (b"junk.npy", small + bytes(1 << 27), True, len(small) + n)])
# the same with the directory telling the truth: refused before inflating
rawzip("long.npz", [(b"mu.npy", mu, True, None), (b"junk.npy", small + bytes(1 << 27), True, None)])
# mu and var declare 1 GiB each (float64 [2^26, 2]), the directory agrees, the data is not there
g = head("<f8", (1 << 26, 2))
rawzip("total.npz", [(b"mu.npy", g, True, len(g) + (1 << 30)), (b"var.npy", g, True, len(g) + (1 << 30))])
# C = 2^21 components of D = 1, declared only
c = head("<f4", (n, 1 << 21, 1))
rawzip("c21.npz", [(b"mu.npy", c, True, len(c) + (n * 4 << 21))])
# what no reader could take, and names that cannot be field names
rawzip("zero62.npz", [(b"mu.npy", mu, False, None), (b"e.npy", head("<f4", (n, 0, 1 << 62)), False, None)])
np.savez("img_w0.npz", image=np.zeros((n, 28, 0), np.uint8))
np.savez("img_c0.npz", image=np.zeros((n, 0, 28, 28), np.uint8))
np.savez("nl.npz", **{"mu": np.zeros((n, 3)), "a\nb": np.arange(n)})
rawzip("utf.npz", [(b"mu.npy", mu, False, None), (b"\xffx.npy", npy(np.arange(n)), False, None)])
np.savez("c64.npz", mu=np.zeros((n, 3)), h=np.zeros(n, np.complex64))
np.savez("u64.npz", mu=np.zeros((n, 3)), u=np.array([1, 2, 2**63 + 5, 3], np.uint64))
np.savez("u64max.npz", mu=np.zeros((n, 3)), u=np.array([1, 2, 2**63 - 1, 3], np.uint64))
np.savez("rec.npz", mu=np.zeros((n, 3)), r=np.zeros(n, dtype=[("a", "<f4"), ("b", "<i4")]))
np.savez("recmu.npz", mu=np.zeros(n, dtype=[("a", "<f4"), ("b", "<i4")]))
rawzip("z64.npz", [(b"mu.npy", mu, False, None)], zip64_end=True)
rawzip("nul.npz", [(b"mu.npy\0x", mu, False, None)])
EOF
# fromnpz's exit status, peak memory (MB) and time: the bomb's 128 MiB are never inflated, so it
# stays far below them (the reader that inflated every member in full took 128 MB more)
peak() {
    $PY -c 'import resource, subprocess, sys, time
t = time.time()
r = subprocess.run(sys.argv[1:], stdout=open("out", "wb"), stderr=open("err", "wb"))
print(r.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024, "%.2f" % (time.time() - t))' "$@"
}
set -- $(peak fromnpz bomb.npz)
[ "$1" = 0 ] || fail "fromnpz bomb.npz exited $1: $(cat err)"
check_lt "$2" 64 "fromnpz bomb.npz took $2 MB (in $3 s): the unused member was inflated"
grep -qx "fromnpz: note: bomb.npz: array 'junk' uint8 (134217728,) has not one row per item of 'mu' (4): left out" err ||
    fail "no note on the unused member: $(cat err)"
fromnpz --skip junk bomb.npz 2> err | totsv > skip.tsv || fail "fromnpz --skip junk bomb.npz: $(cat err)"
[ -s err ] && fail "--skip junk still looked at it: $(cat err)"
totsv out | cmp -s - skip.tsv || fail "--skip junk changed the records"
set -- $(peak fromnpz liar.npz)
[ "$1" = 1 ] || fail "fromnpz liar.npz exited $1, expected 1: $(cat err)"
check_lt "$2" 64 "fromnpz liar.npz took $2 MB (in $3 s): inflating went on past the declared size"
grep -qx "fromnpz: liar.npz: array 'junk': inflates to more than the 132 bytes its zip entry declares: a corrupt archive" err ||
    fail "liar.npz: $(cat err)"
[ -s out ] && fail "liar.npz: something on stdout"
refuse "long.npz: array 'junk' is uint8 (4,): its zip entry inflates to 134217856 bytes, but its .npy header declares 132 (128 of header, 4 x 1 of data): a corrupt archive" long.npz
refuse "total.npz: array 'var' is float64 (67108864, 2): with it the arrays used come to 2147483904 bytes: expected at most 2147483648 (2 GiB) in all" total.npz
refuse "c21.npz: array 'mu' is float32 (4, 2097152, 1): expected C components of D dimensions, each from 1 to 1048576" c21.npz
# refused at the door, naming the array: nothing a reader cannot take is written
refuse "zero62.npz: array 'e': shape (4, 0, 4611686018427387904) is too large: expected each dimension, and the product of the non-zero ones, at most 134217728: --skip it" zero62.npz
fromnpz --skip e zero62.npz > /dev/null || fail "fromnpz --skip e zero62.npz"
refuse "img_w0.npz: array 'image' is uint8 (4, 28, 0): expected images of at least 1 x 1 pixel" -k images img_w0.npz
refuse "img_c0.npz: array 'image' is uint8 (4, 0, 28, 28): expected images of at least 1 x 1 pixel and 1 channel" -k images img_c0.npz
refuse "nl.npz: array 'a\\nb' is int64 (4,): its name is not a field name (1 to 31 bytes of UTF-8 text without control characters, not 'end'): --skip it" nl.npz
fromnpz --skip "$(printf 'a\nb')" nl.npz | totsv | head -n 1 > nl.tsv || fail "fromnpz --skip a<newline>b"
[ "$(cat nl.tsv)" = "$(printf 'mu[0]\tmu[1]\tmu[2]\tid')" ] || fail "--skip a<newline>b: $(cat nl.tsv)"
refuse "utf.npz: array '\\xffx' is int64 (4,): its name is not a field name" utf.npz
refuse "c64.npz: array 'h' is '<c8' (4,): expected integers (i1..i8, u1..u8), floats (f2, f4, f8), bool or strings (U, S): --skip it" c64.npz
fromnpz --skip h c64.npz > /dev/null || fail "fromnpz --skip h c64.npz"
refuse "u64.npz: array 'u' is uint64 (4,): element 2 is 9223372036854775813: expected int64 values" u64.npz
fromnpz u64max.npz | tonpz > u64max2.npz || fail "fromnpz u64max.npz | tonpz"
$PY -c 'import numpy as np; u = np.load("u64max2.npz")["u"]
assert u.dtype == np.int64 and u.tolist() == [1, 2, 2**63 - 1, 3], u' || fail "uint64 2^63 - 1 (the largest int64) did not come through"
fromnpz rec.npz > /dev/null 2> err || fail "fromnpz rec.npz (a structured extra): $(cat err)"
grep -qx "fromnpz: note: rec.npz: array 'r': a structured dtype (a list of fields), which is not supported: expected one plain dtype, integers (i1..i8, u1..u8), floats (f2, f4, f8), bool or strings (U, S): left out" err ||
    fail "no note on the structured extra: $(cat err)"
refuse "recmu.npz: array 'mu': a structured dtype (a list of fields), which is not supported: expected one plain dtype" recmu.npz
refuse "z64.npz: a zip64 archive (its end record is zip64's), which is not read: expected a plain zip archive, as np.savez writes one for up to 65535 arrays and 4 GiB" z64.npz
refuse "nul.npz: member 1's name 'mu.npy\\x00x' holds a NUL byte: expected a file name such as 'mu.npy'" nul.npz

# --- tonpz: a stream cut short leaves no file and exits 1; a field called 'header' is refused
head -c 2000 emb.hs > cut.hs
expect_fail 1 "truncated stream" tonpz -o cut.npz.out cut.hs
[ -e cut.npz.out ] && fail "tonpz left a file from a stream cut short"
ls cut.npz.out.tmp* > /dev/null 2>&1 && fail "tonpz left a temp file"
$PY - <<'EOF' || fail "python3 could not write header.npz"
import numpy as np
np.savez("hdr.npz", mu=np.zeros((2, 2)), header=np.arange(2))
EOF
fromnpz hdr.npz > hdr.hs || fail "fromnpz hdr.npz"
expect_fail 1 "a field is called 'header'" tonpz hdr.hs
pass
