#!/bin/sh
# occlude on `images` streams: the rate and the patch sizes of the papers (5 sigma bands), for
# rectangles (the default) and squares, the zeroed rectangle exactly where `patch` says, p = 0
# and p = 1, clean/corrupt twins, independence from the stream order, seeds, --shape square
# giving the bytes of occlude before --shape (a checksum made with that code), and bad input
# (misuse exits 2, a bad stream exits 1, nothing on stdout either way). Batch streams:
# tests/shell/occludebatch.sh.
# The stream checks need /usr/bin/python3 with msgpack and numpy.
set -u
BIN=${BIN:-$(pwd)/build/bin}
M=$BIN/mkdigits
O=$BIN/occlude
PY=/usr/bin/python3
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# 70 classes x 150 = 10,500 two-digit images: 21,000 digits
"$M" -N 2 --per-class 150 >"$t/in" || fail "mkdigits failed"
"$O" -h >"$t/out" 2>"$t/err" || fail "-h exits non-zero"
grep -q '^usage: occlude' "$t/out" || fail "-h prints no usage on stdout"
"$O" <"$t/in" >"$t/p02" || fail "occlude failed"
"$O" -p 0 <"$t/in" >"$t/p0" || fail "occlude -p 0 failed"
"$O" -p corrupt "$t/in" >"$t/p1" || fail "occlude -p corrupt failed"
"$O" --shape square <"$t/in" >"$t/sq02" || fail "occlude --shape square failed"
"$O" --shape square -p 1 <"$t/in" >"$t/sq1" || fail "occlude --shape square -p 1 failed"

# --- seeds: the same bytes for the same seed, others for another
"$O" <"$t/in" >"$t/again" || fail "occlude failed (2nd run)"
cmp -s "$t/p02" "$t/again" || fail "the same seed gave different bytes"
"$O" -S 715 <"$t/in" >"$t/s715" || fail "occlude -S 715 failed"
cmp -s "$t/p02" "$t/s715" && fail "seeds 714 and 715 gave the same bytes"

# --- misuse: exit 2, nothing on stdout
misuse() {
    "$O" "$@" <"$t/in" >"$t/out" 2>"$t/err"
    rc=$?
    [ $rc -eq 2 ] || fail "occlude $* exited $rc, expected 2"
    [ -s "$t/out" ] && fail "occlude $* wrote to stdout"
    grep -q '^occlude: ' "$t/err" || fail "occlude $*: no 'occlude: ...' message"
}
misuse -p 2
misuse -p -0.1
misuse -p abc
misuse -p nan
misuse -S x
misuse --shape circle
misuse --shape
misuse --bogus
misuse "$t/in" "$t/in"

# --- bad streams: exit 1 with "occlude: ...". Nothing on stdout when the header is bad; a stream
# cut short is noticed only at its end, so what occlude wrote until then must lack the trailer too.
bad() { # bad WHAT PATTERN < input
    "$O" >"$t/out" 2>"$t/err"
    rc=$?
    [ $rc -eq 1 ] || fail "$1: exit $rc, expected 1"
    grep -q "^occlude: .*$2" "$t/err" || fail "$1: message is not 'occlude: ...$2...': $(cat "$t/err")"
    if [ -s "$t/out" ] && tail -c 16 "$t/out" | LC_ALL=C grep -aq "$(printf '\201\243end')"; then
        fail "$1: the partial output ends with a trailer {\"end\": n}"
    fi
}
nothing_out() { [ -s "$t/out" ] && fail "$1: wrote to stdout"; :; }
head -c 100000 "$t/in" | bad "truncated stream" "truncated" || exit 1
size=$(wc -c <"$t/in")
head -c $((size - 3)) "$t/in" | bad "stream without its trailer" "truncated" || exit 1
printf '\201\246format\301' | bad "corrupt msgpack" "corrupt" || exit 1
nothing_out "corrupt msgpack"
printf 'hello, world\n' | bad "text" "stream" || exit 1
nothing_out "text"
bad "empty input" "empty" </dev/null
nothing_out "empty input"
bad "already occluded" "already occluded" <"$t/p02"
nothing_out "already occluded"
LC_ALL=C sed 's/\xa6images/\xa6pixels/' "$t/in" | bad "kind pixels" "images, pairbatch, groupbatch or episodes, got 'pixels'" || exit 1
nothing_out "kind pixels"
"$O" "$t/no-such-file" >"$t/out" 2>"$t/err"
[ $? -eq 1 ] && [ ! -s "$t/out" ] || fail "a missing input file should exit 1 with nothing on stdout"

# --- the stream checks
if ! "$PY" -c 'import msgpack, numpy' 2>/dev/null; then
    echo "SKIP: $PY has no msgpack or numpy: rates, patches and twins not checked"
    echo "occlude: ok (partial)"
    exit 0
fi
cat >"$t/check.py" <<'EOF'
import sys
import msgpack, numpy as np

def fail(msg):
    sys.exit("FAIL: " + msg)

def read(path):
    """header and one array per field over all records"""
    with open(path, "rb") as f:
        u = msgpack.Unpacker(f, raw=False, max_buffer_size=1 << 30)
        h = next(u)
        spec = {fl["name"]: fl for fl in h["fields"]}
        parts = {k: [] for k in spec}
        for o in u:
            if "end" in o:
                n = len(parts["id"])
                if o["end"] != n:
                    fail(f"{path}: trailer says {o['end']}, read {n}")
                return h, {k: np.frombuffer(b"".join(v), np.dtype(spec[k]["dtype"]).newbyteorder("<"))
                           .reshape([n] + spec[k]["shape"]) for k, v in parts.items()}
            for k in spec:
                parts[k].append(o[k]["data"])
    fail(f"{path}: no trailer")

def write_reversed(src, dst):
    """the same records in the opposite order, ids kept: a stream occlude has not seen"""
    with open(src, "rb") as f:
        objs = list(msgpack.Unpacker(f, raw=False, max_buffer_size=1 << 30))
    recs = objs[1:-1][::-1]
    with open(dst, "wb") as f:
        f.write(msgpack.packb(objs[0]))
        for r in recs:
            f.write(msgpack.packb(r))
        f.write(msgpack.packb({"end": len(recs)}))

def cells(image, N):
    return image.reshape(len(image), 28, N, 28).transpose(0, 2, 1, 3)   # (n, N, 28, 28)

def check_occluded(path, h, r, h0, r0, p, shape):
    """fields and meta; every zeroed rectangle exactly where patch says; every other pixel as input"""
    N = h0["meta"]["digits"]
    want = [(f["name"], f["dtype"], f["shape"]) for f in h0["fields"]] + \
        [("occluded", "uint8", [N]), ("patch", "int32", [N, 4])]
    if [(f["name"], f["dtype"], f["shape"]) for f in h["fields"]] != want or h["kind"] != "images":
        fail(f"{path}: fields {h['fields']}")
    if h["meta"].get("occlusion_p") != p or h["meta"]["classes"] != h0["meta"]["classes"] or \
            h["meta"].get("occlusion_shape") != shape:
        fail(f"{path}: meta occlusion_p {h['meta'].get('occlusion_p')}, occlusion_shape or classes not right")
    if h["provenance"]["program"] != "occlude" or h["provenance"]["input"][0]["provenance"]["program"] != "mkdigits":
        fail(f"{path}: provenance does not hold the input's header")
    for k in ("id", "class", "digits", "source"):
        if not np.array_equal(r[k], r0[k]):
            fail(f"{path}: field {k} differs from the input")
    x, y, w, hh, occ = r["patch"][..., 0], r["patch"][..., 1], r["patch"][..., 2], r["patch"][..., 3], r["occluded"]
    if occ.max() > 1 or w.min() < 0 or hh.min() < 0 or w.max() > 28 or hh.max() > 28 or x.min() < 0 or y.min() < 0 or \
            (x + w).max() > 28 or (y + hh).max() > 28 or (r["patch"][occ == 0] != 0).any():
        fail(f"{path}: a patch is outside its cell, or set on a digit not occluded")
    if shape == "square" and (w != hh).any():
        fail(f"{path}: --shape square made a patch that is not square")
    rows = np.arange(28)
    inside = ((rows[None, None, :, None] >= y[..., None, None]) & (rows[None, None, :, None] < (y + hh)[..., None, None]) &
              (rows[None, None, None, :] >= x[..., None, None]) & (rows[None, None, None, :] < (x + w)[..., None, None]) &
              (occ[..., None, None] == 1))                                 # (n, N, 28, 28)
    c, c0 = cells(r["image"], N), cells(r0["image"], N)
    if (c[inside] != 0).any():
        fail(f"{path}: a pixel inside a patch is not 0")
    if (c[~inside] != c0[~inside]).any():
        fail(f"{path}: a pixel outside the patches changed")
    return occ, w, hh

h0, r0 = read(sys.argv[1])
n = r0["digits"].size
for shape, i02, i1 in (("rect", 2, 4), ("square", 6, 7)):
    h, r = read(sys.argv[i02])
    occ, w, hh = check_occluded(sys.argv[i02], h, r, h0, r0, 0.2, shape)
    # p = 0.2: the occluded fraction, sigma = sqrt(p (1 - p) / n); a side uniform on 0..28 has mean
    # 14 and variance (29^2 - 1) / 12 = 70, so the mean of m sides has sigma sqrt(70 / m)
    rate, sigma = occ.mean(), np.sqrt(0.2 * 0.8 / n)
    if abs(rate - 0.2) > 5 * sigma:
        fail(f"{shape} p=0.2: occluded fraction {rate:.4f} over {n} digits, expected 0.2 +/- {5 * sigma:.4f} (5 sigma)")
    m = int(occ.sum())
    for side, v in (("w", w), ("h", hh)):
        mean = v[occ == 1].mean()
        if abs(mean - 14) > 5 * np.sqrt(70 / m):
            fail(f"{shape} p=0.2: mean {side} {mean:.3f} over {m} patches, expected 14 +/- {5 * np.sqrt(70 / m):.3f}")
    print(f"{shape} p=0.2: {rate:.4f} of {n} digits occluded (0.2 +/- {5 * sigma:.4f}); mean w {w[occ == 1].mean():.2f}, "
          f"h {hh[occ == 1].mean():.2f} over {m} (14 +/- {5 * np.sqrt(70 / m):.2f})")
    hx, rx = read(sys.argv[i1])
    occ1, w1, h1 = check_occluded(sys.argv[i1], hx, rx, h0, r0, 1.0, shape)
    if not occ1.all():
        fail(f"{shape} p=1: a digit was not occluded")
    if abs(w1.mean() - 14) > 5 * np.sqrt(70 / n) or abs(h1.mean() - 14) > 5 * np.sqrt(70 / n):
        fail(f"{shape} p=1: mean w {w1.mean():.3f}, h {h1.mean():.3f} over {n}, expected 14 +/- {5 * np.sqrt(70 / n):.3f}")
    # rectangles: w and h independent, so w = h in about 1/29 of the digits (sigma sqrt(q (1 - q) / n))
    same = (w1 == h1).mean()
    if shape == "rect" and abs(same - 1 / 29) > 5 * np.sqrt((1 / 29) * (28 / 29) / n):
        fail(f"rect p=1: w = h in {same:.4f} of the digits, expected 1/29 = {1 / 29:.4f}")
    # twins: clean and corrupt hold the same composites; the patches do not depend on p
    both = (occ == 1) & (occ1 == 1)
    if not np.array_equal(r["patch"][both], rx["patch"][both]):
        fail(f"{shape}: a digit occluded at p=0.2 and at p=1 got different patches")
    print(f"{shape} p=1: all {n} occluded (mean w {w1.mean():.2f}, h {h1.mean():.2f}, w = h in {same:.4f}); twins share ids, classes and pixels outside the patches")

hc, rc = read(sys.argv[3])
occ0, _, _ = check_occluded(sys.argv[3], hc, rc, h0, r0, 0.0, "rect")
if occ0.any() or not np.array_equal(rc["image"], r0["image"]):
    fail("p=0: a digit was occluded or a pixel changed")

# order: the patches of an image depend on its id, not on its place in the stream
write_reversed(sys.argv[1], sys.argv[5])
EOF
"$PY" "$t/check.py" "$t/in" "$t/p02" "$t/p0" "$t/p1" "$t/rev" "$t/sq02" "$t/sq1" || fail "stream checks"
"$O" <"$t/rev" >"$t/rev02" || fail "occlude of the reversed stream failed"
cat >"$t/order.py" <<'EOF'
import sys
import msgpack
def patches(path):
    with open(path, "rb") as f:
        u = msgpack.Unpacker(f, raw=False, max_buffer_size=1 << 30)
        next(u)
        return {o["id"]["data"]: (o["patch"]["data"], o["image"]["data"]) for o in u if "end" not in o}
a, b = patches(sys.argv[1]), patches(sys.argv[2])
if a != b or len(a) < 1000:
    sys.exit("FAIL: occluding the reversed stream gave other squares for the same ids")
print(f"the same {len(a)} squares and images by id, whatever the order")
EOF
"$PY" "$t/order.py" "$t/p02" "$t/rev02" || fail "order check"

# --shape square: the images, flags and corners of occlude before --shape existed (commit
# 588bbb1: the patch was x, y, L). The checksum is over every record's image, occluded and
# patch[:, :3] bytes, made with that code from the stream below.
"$M" -N 2 --per-class 20 -S 9 >"$t/small" || fail "mkdigits (small)"
cat >"$t/sum.py" <<'EOF'
import sys, hashlib, msgpack, numpy as np
h = hashlib.sha256()
with open(sys.argv[1], "rb") as f:
    u = msgpack.Unpacker(f, raw=False, max_buffer_size=1 << 30)
    next(u)
    for o in u:
        if "end" in o:
            break
        p = np.frombuffer(o["patch"]["data"], "<i4").reshape(o["patch"]["shape"])
        h.update(o["image"]["data"]); h.update(o["occluded"]["data"]); h.update(p[:, :3].astype("<i4").tobytes())
print(h.hexdigest())
EOF
for pw in "0.3 cabedb6c5457eec8b43b1dfb27d1d1eac2e623c3747defd5646abccadad34b52" \
    "1 0e5c507a306824078433b05ef3544b80df8d0ab492303fc3f67ce278d85b1694"; do
    set -- $pw
    got=$("$O" --shape square -p "$1" -S 11 <"$t/small" | "$PY" "$t/sum.py" /dev/stdin) || fail "checksum of --shape square -p $1"
    [ "$got" = "$2" ] || fail "--shape square -p $1 changed the bytes of the old occlude: checksum $got, expected $2"
    got=$("$O" -p "$1" -S 11 <"$t/small" | "$PY" "$t/sum.py" /dev/stdin) || fail "checksum of --shape rect -p $1"
    [ "$got" = "$2" ] && fail "--shape rect -p $1 gave the squares' bytes"
done
echo "--shape square: the old occlude's bytes (p 0.3 and 1)"
# --- --corrupt: one flag per image, corrupt = 1 when any of its digits is occluded (p 0.2: about
# 36 % of the 2-digit images), the images and patches those of occlude without it; p 0 and p 1:
# all 0, all 1; batch streams carry per-image flags already: refused in one line, nothing out
"$O" --corrupt <"$t/in" >"$t/c02" || fail "occlude --corrupt failed"
"$BIN/totsv" -f occluded,corrupt "$t/c02" | awk -F'\t' 'NR > 1 { n++; if ($3 != ($1 || $2)) bad++; c += $3 }
    END { exit !(n == 10500 && !bad && c > 0.33 * n && c < 0.39 * n) }' || fail "--corrupt is not 'any digit occluded'"
"$BIN/tonpz" -o "$t/c02.npz" "$t/c02" && "$BIN/tonpz" -o "$t/p02.npz" "$t/p02" || fail "tonpz of the occluded images"
"$PY" - "$t/c02.npz" "$t/p02.npz" <<'PYEOF' || fail "--corrupt changed the images or the patches"
import sys, numpy as np
a, b = np.load(sys.argv[1]), np.load(sys.argv[2])
for k in ["image", "occluded", "patch", "id", "class"]:
    assert np.array_equal(a[k], b[k]), k
assert a["corrupt"].dtype == np.uint8 and a["corrupt"].shape == (10500,)
assert np.array_equal(a["corrupt"], b["occluded"].any(axis=1).astype(np.uint8))
PYEOF
"$O" -p 0 --corrupt <"$t/in" | "$BIN/totsv" -f corrupt | sort | uniq -c | grep -q '^ *10500 0$' || fail "-p 0 --corrupt: not all 0"
"$O" -p 1 --corrupt <"$t/in" | "$BIN/totsv" -f corrupt | sort | uniq -c | grep -q '^ *10500 1$' || fail "-p 1 --corrupt: not all 1"
"$BIN/batcher" -m pk -P 4 -K 2 -n 2 "$t/in" >"$t/pk" || fail "batches"
"$O" --corrupt <"$t/pk" >"$t/out" 2>"$t/err"
[ $? -eq 1 ] && [ ! -s "$t/out" ] || fail "--corrupt on batches: exit 1 and nothing on stdout expected"
grep -qx "occlude: stdin: --corrupt flags images (kind images, from mkdigits); a groupbatch stream carries its flags in occluded" "$t/err" ||
    fail "--corrupt on batches: $(cat "$t/err")"
bad "a corrupt field already" "already occluded" <"$t/c02"

echo "occlude: ok"
