#!/bin/sh
# occlude: the rate and the patch sizes of the paper (5 sigma bands), the zeroed square exactly
# where `patch` says, p = 0 and p = 1, clean/corrupt twins, independence from the stream order,
# seeds, and bad input (misuse exits 2, a bad stream exits 1, nothing on stdout either way).
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
LC_ALL=C sed 's/\xa6images/\xa6pixels/' "$t/in" | bad "kind pixels" "kind 'images', got 'pixels'" || exit 1
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

def check_occluded(path, h, r, h0, r0, p):
    """fields and meta; every zeroed square exactly where patch says; every other pixel as input"""
    N = h0["meta"]["digits"]
    want = [(f["name"], f["dtype"], f["shape"]) for f in h0["fields"]] + \
        [("occluded", "uint8", [N]), ("patch", "int32", [N, 3])]
    if [(f["name"], f["dtype"], f["shape"]) for f in h["fields"]] != want or h["kind"] != "images":
        fail(f"{path}: fields {h['fields']}")
    if h["meta"].get("occlusion_p") != p or h["meta"]["classes"] != h0["meta"]["classes"]:
        fail(f"{path}: meta occlusion_p {h['meta'].get('occlusion_p')} or classes not passed on")
    if h["provenance"]["program"] != "occlude" or h["provenance"]["input"][0]["provenance"]["program"] != "mkdigits":
        fail(f"{path}: provenance does not hold the input's header")
    for k in ("id", "class", "digits", "source"):
        if not np.array_equal(r[k], r0[k]):
            fail(f"{path}: field {k} differs from the input")
    x, y, L, occ = r["patch"][..., 0], r["patch"][..., 1], r["patch"][..., 2], r["occluded"]
    if occ.max() > 1 or L.min() < 0 or L.max() > 28 or x.min() < 0 or y.min() < 0 or \
            (x + L).max() > 28 or (y + L).max() > 28 or (r["patch"][occ == 0] != 0).any():
        fail(f"{path}: a patch is outside its cell, or set on a digit not occluded")
    rows = np.arange(28)
    inside = ((rows[None, None, :, None] >= y[..., None, None]) & (rows[None, None, :, None] < (y + L)[..., None, None]) &
              (rows[None, None, None, :] >= x[..., None, None]) & (rows[None, None, None, :] < (x + L)[..., None, None]) &
              (occ[..., None, None] == 1))                                 # (n, N, 28, 28)
    c, c0 = cells(r["image"], N), cells(r0["image"], N)
    if (c[inside] != 0).any():
        fail(f"{path}: a pixel inside a patch is not 0")
    if (c[~inside] != c0[~inside]).any():
        fail(f"{path}: a pixel outside the patches changed")
    return occ, L

h0, r0 = read(sys.argv[1])
n = r0["digits"].size
h, r = read(sys.argv[2])
occ, L = check_occluded(sys.argv[2], h, r, h0, r0, 0.2)
# p = 0.2: the occluded fraction, sigma = sqrt(p (1 - p) / n); L uniform on 0..28 has mean 14
# and variance (29^2 - 1) / 12 = 70, so the mean of m patches has sigma sqrt(70 / m)
rate, sigma = occ.mean(), np.sqrt(0.2 * 0.8 / n)
if abs(rate - 0.2) > 5 * sigma:
    fail(f"p=0.2: occluded fraction {rate:.4f} over {n} digits, expected 0.2 +/- {5 * sigma:.4f} (5 sigma)")
m = int(occ.sum())
meanL = L[occ == 1].mean()
if abs(meanL - 14) > 5 * np.sqrt(70 / m):
    fail(f"p=0.2: mean L {meanL:.3f} over {m} patches, expected 14 +/- {5 * np.sqrt(70 / m):.3f}")
print(f"p=0.2: {rate:.4f} of {n} digits occluded (0.2 +/- {5 * sigma:.4f}); mean L {meanL:.2f} over {m} (14 +/- {5 * np.sqrt(70 / m):.2f})")

hc, rc = read(sys.argv[3])
occ0, _ = check_occluded(sys.argv[3], hc, rc, h0, r0, 0.0)
if occ0.any() or not np.array_equal(rc["image"], r0["image"]):
    fail("p=0: a digit was occluded or a pixel changed")
hx, rx = read(sys.argv[4])
occ1, L1 = check_occluded(sys.argv[4], hx, rx, h0, r0, 1.0)
if not occ1.all():
    fail("p=1: a digit was not occluded")
if abs(L1.mean() - 14) > 5 * np.sqrt(70 / n):
    fail(f"p=1: mean L {L1.mean():.3f} over {n}, expected 14 +/- {5 * np.sqrt(70 / n):.3f}")
# twins: clean and corrupt hold the same composites; the squares do not depend on p
both = (occ == 1) & (occ1 == 1)
if not np.array_equal(r["patch"][both], rx["patch"][both]):
    fail("a digit occluded at p=0.2 and at p=1 got different squares")
print(f"p=0 clean, p=1 all {n} occluded (mean L {L1.mean():.2f}); twins share ids, classes and pixels outside the patches")

# order: the squares of an image depend on its id, not on its place in the stream
write_reversed(sys.argv[1], sys.argv[5])
EOF
"$PY" "$t/check.py" "$t/in" "$t/p02" "$t/p0" "$t/p1" "$t/rev" || fail "stream checks"
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
echo "occlude: ok"
