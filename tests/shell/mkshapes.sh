#!/bin/sh
# mkshapes: usage; same seed same bytes, other seeds and splits other bytes, image id independent
# of -n; per-class statistics of what the stream says (class frequencies, circular means and sds of
# orientation and hue) and a Monte Carlo Bayes accuracy against --bayes; --bayes against the
# closed form; with python3's msgpack and numpy: the header, every image re-rendered independently
# from its record (mask and colour), what --hue-noise and --short-legs change and what they keep,
# and tshow -i drawing the RGB images into a colour PNG (and refusing PGM); bad options (exit 2,
# nothing on stdout) and a failed write (exit 1).
set -u
. "$(dirname "$0")/../lib.sh"
PY=/usr/bin/python3
cd "$T"

mkshapes -h > out 2> err || fail "-h exits non-zero"
grep -q '^usage: mkshapes' out && [ ! -s err ] || fail "-h prints no usage on stdout"

# --- seeds and splits
mkshapes -n 60 > a.hs || fail "mkshapes -n 60"
mkshapes -n 60 > b.hs || fail "mkshapes -n 60 (2nd run)"
cmp -s a.hs b.hs || fail "the same seed gave different bytes"
mkshapes -n 60 -S 715 > c.hs || fail "mkshapes -S 715"
cmp -s a.hs c.hs && fail "seeds 714 and 715 gave the same bytes"
fields=class,id,orientation,hue,leg,hue_noise
totsv -f $fields a.hs > a.tsv && totsv -f $fields c.hs > c.tsv || fail "totsv"
[ "$(cut -f 3 a.tsv | sort | uniq -d | wc -l)" = 0 ] || fail "repeated orientations"
paste a.tsv c.tsv | awk 'NR > 1 && $3 == $9 { n++ } END { exit n > 0 }' || fail "seeds 714 and 715 share an orientation"
mkshapes -n 60 -s test > t.hs || fail "mkshapes -s test"
totsv -f $fields t.hs > t.tsv || fail "totsv"
paste a.tsv t.tsv | awk 'NR > 1 && $3 == $9 { n++ } END { exit n > 0 }' || fail "train and test share an orientation"
mkshapes -n 20 > p.hs || fail "mkshapes -n 20"
head -n 21 a.tsv > a21.tsv
totsv -f $fields p.hs | cmp -s - a21.tsv || fail "the 20 images of -n 20 are not the first 20 of -n 60"
# the split's default --noisy (0.15 train, 0 test), whatever the order of the options
mkshapes -n 60 --noisy 0.15 -s train | totsv -f $fields | cmp -s - a.tsv || fail "-s train's default --noisy is not 0.15"
awk 'NR > 1 && $7 != 0 { exit 1 }' t.tsv || fail "-s test has noisy images"
mkshapes -n 60 --noisy 0.5 -s test | totsv -f $fields > e.tsv || fail "mkshapes --noisy 0.5 -s test"
mkshapes -n 60 -s test --noisy 0.5 | totsv -f $fields | cmp -s - e.tsv || fail "--noisy depends on its place before -s"
awk 'NR > 1 && $7 != 0 { n++ } END { exit !(n > 15) }' e.tsv || fail "--noisy 0.5 -s test: too few noisy images"

# --- the classes of 20,000 test images, from the stream: frequencies 1/4 (binomial), circular
# means on the centres and circular sds of 30 degrees (tolerances: 5 standard errors, as in
# tests/unit/test_shapes.c), and the Bayes rule (nearer centre on each circle, right for this
# 2 x 2 grid of equal sds) right as often as --bayes says, within 5 sqrt(a (1 - a) / n)
bayes=$(mkshapes --bayes) || fail "mkshapes --bayes"
mkshapes -n 20000 -s test | totsv -f class,orientation,hue > mc.tsv || fail "mkshapes -n 20000 | totsv"
awk -v bayes="$bayes" -F '\t' '
function cdist(a, b,  d) { d = (a - b) % 360; if (d < 0) d += 360; return d > 180 ? 360 - d : d }
function sdiff(a, b,  d) { d = (a - b) % 360; if (d < 0) d += 360; return d > 180 ? d - 360 : d }
NR > 1 {
    c = $1; n++; cnt[c]++
    co[c] += cos($2 * r); so[c] += sin($2 * r); ch[c] += cos($3 * r); sh[c] += sin($3 * r)
    oi = cdist($2, 90) <= cdist($2, 180) ? 0 : 1; hi = cdist($3, 90) <= cdist($3, 180) ? 0 : 1
    right += (2 * hi + oi == c)
}
BEGIN { r = atan2(0, -1) / 180; s = 30 * r; r1 = exp(-s * s / 2); r2 = exp(-2 * s * s) }
END {
    bad = 0
    for (c = 0; c < 4; c++) {
        m = cnt[c]
        if ((m / n - 0.25) ^ 2 > 25 * 0.25 * 0.75 / n) { print "class " c " frequency " m / n; bad = 1 }
        se_mean = sqrt((1 - r2) / (2 * m * r1 * r1)) / r; se_sd = sqrt((1 + r2 - 2 * r1 * r1) / (2 * m)) / (r1 * s) / r
        mo = atan2(so[c], co[c]) / r; mh = atan2(sh[c], ch[c]) / r
        sdo = sqrt(-2 * log(sqrt(so[c] ^ 2 + co[c] ^ 2) / m)) / r; sdh = sqrt(-2 * log(sqrt(sh[c] ^ 2 + ch[c] ^ 2) / m)) / r
        wo = c % 2 ? 180 : 90; wh = c >= 2 ? 180 : 90
        if (sdiff(mo, wo) ^ 2 > 25 * se_mean ^ 2 || sdiff(mh, wh) ^ 2 > 25 * se_mean ^ 2) {
            printf "class %d: circular means %.2f %.2f, expected %d %d +/- %.2f\n", c, mo, mh, wo, wh, 5 * se_mean; bad = 1 }
        if ((sdo - 30) ^ 2 > 25 * se_sd ^ 2 || (sdh - 30) ^ 2 > 25 * se_sd ^ 2) {
            printf "class %d: circular sds %.2f %.2f, expected 30 +/- %.2f\n", c, sdo, sdh, 5 * se_sd; bad = 1 }
    }
    a = right / n; tol = 5 * sqrt(bayes * (1 - bayes) / n)
    if ((a - bayes) ^ 2 > tol ^ 2) { printf "Bayes rule right on %.4f of %d, --bayes says %s +/- %.4f\n", a, n, bayes, tol; bad = 1 }
    else printf "Bayes rule right on %.4f of %d images; --bayes %s (+/- %.4f)\n", a, n, bayes, tol
    exit bad
}' mc.tsv || fail "class statistics of the stream"

# --- --bayes against the closed form: the 2 x 2 grid factorises into two 1-D problems, each
# right on the arc of offsets (-(180 - d/2), d/2) from its centre, a wrapped-normal mass by the CDF
closed() { # closed SD D_ORIENT D_HUE
    "$PY" -c '
import math, sys
sd, do, dh = map(float, sys.argv[1:])
Phi = lambda x: 0.5 * math.erfc(-x / math.sqrt(2))
one = lambda d: sum(Phi((d / 2 + 360 * k) / sd) - Phi((d / 2 - 180 + 360 * k) / sd) for k in range(-10, 11))
print("%.6f" % (one(do) * one(dh)))' "$@"
}
check_bayes() { # check_bayes WANT mkshapes-args...
    want=$1; shift
    got=$(mkshapes --bayes "$@") || fail "mkshapes --bayes $*"
    awk -v a="$got" -v b="$want" 'BEGIN { exit !((a - b) ^ 2 <= 1.01e-12) }' || fail "--bayes $*: $got, closed form $want"
}
check_bayes "$(closed 30 90 90)" --sd 30
[ "$bayes" = 0.870842 ] || fail "--bayes at the paper's parameters: $bayes, expected 0.870842"
check_bayes "$(closed 60 90 90)" --sd 60
check_bayes "$(closed 90 90 90)" --sd 90
check_bayes "$(closed 30 80 160)" --orientations 30,110 --hues 0,200
check_bayes "$(closed 30 0 90)" --orientations 90,90   # 1-D: orientation tells nothing, the arc (-180, 0) is 1/2
check_bayes 1.000000 --sd 0

# --- misuse: exit 2, nothing on stdout; a failed write: exit 1
expect_fail 2 "-n: 0 is out of range" mkshapes -n 0
expect_fail 2 "-n: 'x' is not a whole number" mkshapes -n x
expect_fail 2 "-s: 'val' is not train or test" mkshapes -s val
expect_fail 2 "--sd: 200 is out of range" mkshapes --sd 200
expect_fail 2 "--sd: -1 is out of range" mkshapes --sd -1
expect_fail 2 "--legs: '0.5' is not two numbers" mkshapes --legs 0.5
expect_fail 2 "--legs: 'a' is not a number" mkshapes --legs a,b
expect_fail 2 "--legs: 1.5 is out of range" mkshapes --legs 0.1,1.5
expect_fail 2 "the leg fraction range is empty" mkshapes --legs 0.9,0.1
expect_fail 2 "--orientations: '1,2,3' is not two numbers" mkshapes --orientations 1,2,3
expect_fail 2 "--leg-noise: 'some' is not all or noisy" mkshapes --leg-noise some
expect_fail 2 "--noisy: 2 is out of range" mkshapes --noisy 2
expect_fail 2 "--hue-noise: -1 is out of range" mkshapes --hue-noise -1
expect_fail 2 "--short-legs: 1.5 is out of range" mkshapes --short-legs 1.5
expect_fail 2 "the L does not fit" mkshapes --stroke 10 --arm 40
expect_fail 2 "unexpected argument 'x'" mkshapes x
expect_exit 2 "unknown option" mkshapes --bogus
expect_fail 2 "--sd: 200 is out of range" mkshapes --bayes --sd 200
expect_fail 2 "--bayes depends on --sd, --orientations and --hues only" mkshapes --bayes -n 10
expect_fail 2 "--bayes depends on --sd, --orientations and --hues only" mkshapes --short-legs 0.5 --bayes
expect_fail 1 "mkshapes:" sh -c 'mkshapes -n 500 > /dev/full'
expect_fail 1 "mkshapes:" sh -c 'mkshapes --bayes > /dev/full'

# --- tshow -i refuses PGM for colour, with nothing on stdout and no file left
expect_fail 1 "PGM holds grey images only" tshow -q -i x.pgm a.hs
[ -e x.pgm ] && fail "a refused PGM left a file"

# --- the stream checks
if ! "$PY" -c 'import msgpack, numpy' 2>/dev/null; then
    echo "SKIP: $PY has no msgpack or numpy: header, pixels, OOD options and the colour sheet not checked"
    pass
fi
mkshapes -n 300 > tr.hs || fail "mkshapes -n 300"
mkshapes -n 100 -s test > base.hs || fail "mkshapes -s test"
mkshapes -n 100 -s test --hue-noise 30 > hn.hs || fail "mkshapes --hue-noise 30"
mkshapes -n 100 -s test --short-legs 0.3 > sl.hs || fail "mkshapes --short-legs 0.3"
mkshapes -n 100 -s test --sd 0 --legs 1,1 --stroke 6 --arm 30 --saturation 0.5 --value 0.75 > other.hs ||
    fail "mkshapes with other geometry and colour"
tshow -q -i sheet.png tr.hs > /dev/null || fail "tshow -i of RGB images"
tshow -q -n 3 -i three.png tr.hs > /dev/null || fail "tshow -n 3 -i of RGB images"
cat > check.py <<'EOF'
import colorsys, struct, sys, zlib
import msgpack, numpy as np

def fail(msg):
    sys.exit("FAIL: " + msg)

def read(path):
    with open(path, "rb") as f:
        u = msgpack.Unpacker(f, raw=False, max_buffer_size=1 << 30)
        h = next(u)
        spec = {fl["name"]: fl for fl in h["fields"]}
        parts = {k: [] for k in spec}
        for o in u:
            if "end" in o:
                n = len(parts["id"])
                return h, {k: np.frombuffer(b"".join(v), np.dtype(spec[k]["dtype"]).newbyteorder("<"))
                           .reshape([n] + spec[k]["shape"]) for k, v in parts.items()}
            for k in spec:
                parts[k].append(o[k]["data"])
    fail(path + ": no trailer")

def mask(h, r, i):
    """the L of record i by the documented geometry: pixel centres inside the stem or the foot"""
    m = h["meta"]
    T, A, P = m["stroke"], m["arm"], (m["stroke"] + m["arm"]) / 2
    th = np.radians(float(r["orientation"][i]))
    rows, cols = np.mgrid[0:64, 0:64]
    x, y = cols + 0.5 - 32, 32 - (rows + 0.5)
    qx = np.cos(th) * x + np.sin(th) * y + P
    qy = -np.sin(th) * x + np.cos(th) * y + P
    stem, foot = T + float(r["leg"][i][0]) * A, T + float(r["leg"][i][1]) * A
    return (qx >= 0) & (qy >= 0) & (((qx < T) & (qy < stem)) | ((qy < T) & (qx < foot)))

def hsv8(hue, s, v):
    return np.array([int(c * 255 + 0.5) for c in colorsys.hsv_to_rgb(hue / 360 % 1, s, v)])

def check_pixels(path):
    h, r = read(path)
    m = h["meta"]
    for i in range(len(r["id"])):
        img = r["image"][i]                      # [3, 64, 64]
        on = img.any(axis=0)
        want = mask(h, r, i)
        if not np.array_equal(on, want):
            fail(f"{path} image {i}: {int((on != want).sum())} pixels off the documented L")
        if r["hue_noise"][i] == 0:
            px = img[:, on].T
            if not (px == hsv8(float(r["hue"][i]), m["saturation"], m["value"])).all():
                fail(f"{path} image {i}: a pixel of the L is not the colour of its hue")
    return h, r

h, r = check_pixels("tr.hs")
want = [("image", "uint8", [3, 64, 64]), ("class", "int32", []), ("id", "int64", []), ("orientation", "float32", []),
        ("hue", "float32", []), ("leg", "float32", [2]), ("hue_noise", "float32", [])]
if [(f["name"], f["dtype"], f["shape"]) for f in h["fields"]] != want or h["kind"] != "images" or h["batched"]:
    fail(f"fields {h['fields']}")
m = h["meta"]
if (m["channels"], m["height"], m["width"], m["dataset"], m["split"], m["angle_unit"]) != (3, 64, 64, "lshapes", "train", "degrees"):
    fail(f"meta {m}")
def values(t):
    return np.frombuffer(t["data"], np.dtype(t["dtype"]).newbyteorder("<")).tolist()
if m["sd"] != 30 or m["noisy"] != 0.15 or values(m["classes"]) != [0, 1, 2, 3] \
        or values(m["orientation_centres"]) != [90, 180, 90, 180] or values(m["hue_centres"]) != [90, 90, 180, 180]:
    fail(f"meta {m}")
if not (np.array_equal(r["id"], np.arange(300)) and ((r["hue_noise"] == 0) | ((r["hue_noise"] >= 18) & (r["hue_noise"] <= 54))).all()):
    fail("ids or hue_noise")
print(f"300 train images re-rendered from their records ({int((r['hue_noise'] > 0).sum())} with pixel hue noise)")
check_pixels("other.hs")
h, _ = read("other.hs")
if h["meta"]["stroke"] != 6 or h["meta"]["saturation"] != 0.5:
    fail("other.hs meta")

# the OOD options: what they change and nothing else
hb, b = read("base.hs")
hh, n = read("hn.hs")
hs, s = read("sl.hs")
check_pixels("sl.hs")
same = ("class", "id", "orientation", "hue")
for k in same + ("leg",):
    if not np.array_equal(b[k], n[k]):
        fail(f"--hue-noise changed {k}")
for k in same + ("hue_noise",):
    if not np.array_equal(b[k], s[k]):
        fail(f"--short-legs changed {k}")
if not (n["hue_noise"] == 30).all() or (b["hue_noise"] != 0).any() or hh["meta"]["hue_noise"] != 30 or "hue_noise" in hb["meta"]:
    fail("hue_noise fields or meta")
if np.abs(s["leg"] - 0.3 * b["leg"]).max() > 1e-6 or hs["meta"]["short_legs"] != 0.3:
    fail("--short-legs 0.3: the legs are not 0.3 times the others")
onb, onn, ons = b["image"].any(axis=1), n["image"].any(axis=1), s["image"].any(axis=1)
if not np.array_equal(onb, onn):
    fail("--hue-noise moved pixels of the L")
if (ons & ~onb).any() or not (ons.sum() < 0.6 * onb.sum()):
    fail("--short-legs: the short L is not inside the long one, or not shorter")
if not (s["image"].transpose(0, 2, 3, 1)[ons] == b["image"].transpose(0, 2, 3, 1)[ons]).all():
    fail("--short-legs changed the colour of a pixel")
# the hue of each noisy pixel about its image's hue: circular sd 30 (within 5 30 / sqrt(2 m) + 0.5)
px = n["image"].transpose(0, 2, 3, 1).astype(float) / 255
hue = np.array([colorsys.rgb_to_hsv(*p)[0] * 360 for p in px[onn]])
dev = np.radians(hue - np.repeat(n["hue"], onn.reshape(len(onn), -1).sum(axis=1)))
sd = np.degrees(np.sqrt(-2 * np.log(np.hypot(np.cos(dev).mean(), np.sin(dev).mean()))))
if abs(sd - 30) > 5 * 30 / np.sqrt(2 * len(dev)) + 0.5:
    fail(f"--hue-noise 30: the pixel hues have a circular sd of {sd:.2f}")
print(f"--hue-noise 30: only the colours inside the L changed, circular sd of {len(dev)} pixel hues {sd:.2f}; "
      f"--short-legs 0.3: {ons.sum()} of {onb.sum()} pixels left, colours kept")

# tshow -i: an 8-bit RGB PNG, 8 cells of 64 x 64 per row with 1-pixel grey (128) lines, each
# cell the stream's image with its planes interleaved
def png(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        fail(path + ": no PNG signature")
    pos, idat = 8, b""
    while pos < len(data):
        ln, = struct.unpack(">I", data[pos:pos + 4])
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + ln]
        if kind == b"IHDR":
            w, hh_, depth, ctype = struct.unpack(">IIBB", body[:10])
        idat += body if kind == b"IDAT" else b""
        pos += 12 + ln
    if (depth, ctype) != (8, 2):
        fail(f"{path}: bit depth {depth}, colour type {ctype}: not 8-bit RGB")
    raw, bpp, stride = zlib.decompress(idat), 3, 3 * w
    out, prev = np.zeros((hh_, stride), np.int64), np.zeros(stride, np.int64)
    for y in range(hh_):
        f, line = raw[y * (stride + 1)], np.frombuffer(raw, np.uint8, stride, y * (stride + 1) + 1).astype(np.int64)
        cur = np.zeros(stride, np.int64)
        for x in range(stride):
            a = cur[x - bpp] if x >= bpp else 0
            b_, c = prev[x], prev[x - bpp] if x >= bpp else 0
            if f == 0: p = 0
            elif f == 1: p = a
            elif f == 2: p = b_
            elif f == 3: p = (a + b_) // 2
            else:
                pa, pb, pc = abs(b_ - c), abs(a - c), abs(a + b_ - 2 * c)
                p = a if pa <= pb and pa <= pc else b_ if pb <= pc else c
            cur[x] = (line[x] + p) & 255
        out[y], prev = cur, cur
    return out.reshape(hh_, w, 3)

_, t = read("tr.hs")
for path, cells in (("sheet.png", 64), ("three.png", 3)):
    im = png(path)
    cols = min(cells, 8)
    if im.shape != (((cells + 7) // 8) * 65 + 1, cols * 65 + 1, 3):
        fail(f"{path}: size {im.shape}")
    for k in range(cells):
        y0, x0 = 1 + (k // 8) * 65, 1 + (k % 8) * 65
        if not np.array_equal(im[y0:y0 + 64, x0:x0 + 64], t["image"][k].transpose(1, 2, 0)):
            fail(f"{path}: cell {k} is not image {k}")
    if (im[0] != 128).any() or (im[:, 0] != 128).any():
        fail(f"{path}: the grid lines are not grey 128")
print("tshow -i: RGB sheets of 64 and 3 images hold the stream's pixels")
EOF
"$PY" check.py || fail "stream checks"
pass
