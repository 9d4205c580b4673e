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
grep -q "note: mix2.npz: array 'header' is '<U[0-9]*' (): expected numbers .*: left out" notes || fail "header note: $(cat notes)"
grep -q "note: mix2.npz: array 'meta/classes' int32 (3,) has not one row per item" notes || fail "meta note: $(cat notes)"
[ "$(wc -l < notes)" = 2 ] || fail "not two notes: $(cat notes)"
tonpz mix3.hs > mix3.npz || fail "tonpz mix3.hs"
$PY - <<'EOF' || fail "tonpz | fromnpz | tonpz changed the arrays"
import numpy as np
a, b = np.load("mix2.npz"), np.load("mix3.npz")
for k in ["mu", "var", "eta", "id", "class"]:
    assert a[k].dtype == b[k].dtype and np.array_equal(a[k], b[k]), k
EOF

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
np.save("b_f16.npy", np.zeros((n, 3), np.float16))
EOF
refuse() { msg=$1; shift; expect_fail 1 "$msg" fromnpz "$@"; [ "$(wc -l < "$T/err")" = 1 ] || fail "fromnpz $*: not one line: $(cat "$T/err")"; }
refuse "fromnpz: b_rank.npz: array 'mu' is float64 (4,): expected the means, [n, D] or [n, C, D]" b_rank.npz
refuse "array 'var' is float64 (4, 2): expected the shape of 'mu' (4, 3)" b_var.npz
refuse "array 'var' is float64 (4, 3): element 0 is -1: a variance must be >= 0" b_negvar.npz
refuse "array 'mu' is float64 (4, 3): element 0 is nan: expected finite values" b_nan.npz
refuse "array 'mu' is float64 (4, 3): element 0 is 1e+300 (beyond float32): expected finite values" b_huge.npz
refuse "array 'labels' is float64 (4,): expected integers (int32 classes)" b_cls.npz
refuse "array 'labels' is int64 (5,): expected one class per item of 'mu', [4]" b_clsn.npz
refuse "array 'labels' is int64 (4,): element 0 is 1099511627776: expected int32 classes" b_clsbig.npz
refuse "fromnpz: b_str.npz: array 'mu' is '<U1' (2,): expected numbers (integers i1..i8, u1..u8, floats f4, f8 or bool)" b_str.npz
refuse "fromnpz: b_str.npz: array 'mu' is '<U1' (2,): expected numbers" --mu mu b_str.npz
refuse "array 'image' is float64 (4, 5): expected images, [n, H, W] or [n, C, H, W]" -k images b_img.npz
refuse "array 'image' is int32 (4, 2, 2): element 0 is 300: expected pixel values 0..255" -k images b_px.npz
refuse "array 'image' is float64 (4, 2, 2): values from 300 to 300: expected pixel values in [0, 1] or [0, 255]" -k images b_fpx.npz
refuse "array 'image' is float64 (4, 2, 2): values from 2.5 to 2.5: expected pixel values in [0, 1] (--range)" -k images --range 1 b_r1.npz
refuse "array 'image' is uint8 (4, 8, 8, 3): expected channels first, [n, C, H, W]" -k images b_last.npz
refuse "array 'mu' is float64 (0, 3): expected at least one item" b_empty.npz
refuse "array 'end' is float64 (4,): not a field name" b_end.npz
refuse "b_f16.npy: array 'mu' is '<f2' (4, 3): expected numbers" b_f16.npy
refuse "no array 'nope' (--class); the file holds 'mu', 'var', 'labels', 'attr'" --class nope emb.npz
refuse "no array 'mu' (name the embedding means with --mu)" -k embeddings img.npz
refuse "neither an .npz (zip) nor an .npy file" h.json
refuse "missing.npz: No such file or directory" missing.npz
head -c 300 emb.npz > cut.npz
refuse "cut.npz: a truncated or corrupt zip archive" cut.npz

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
