#!/bin/sh
# report: evaluate --report FILE.html (and hedge.evaluate(report=...)), the evaluation as one
# self-contained page, checked by parsing it: the table's numbers are the JSON's; every source
# the JSON measures has its risk-coverage curve on each target, whose last point (everything
# answered) is the mean loss the JSON gives (1 - R@1, 1 - knn, 1 - mAP, 1 - MAP@R) and whose mean
# is the AURC within the sampling of its 50 points; the oracle's curve; tau's bins give the
# JSON's tau again (-tau_b of bin against performance); the reliability diagram's ECE and the
# ROC's TAR at FAR 1e-1 are the JSON's; nothing is fetched from a network; Python's page has the
# CLI's curves. Misuse refused. With Debian's chromium installed (optional, as sshd for grid.sh),
# the page is rendered headless and the screenshot must not be blank.
. "$(dirname "$0")/../lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
PY=/usr/bin/python3
plain_libhedge "$ROOT"
cd "$T" || fail "cd"
$PY - <<'PYEOF' || fail "making the sets"
import numpy as np
rng = np.random.default_rng(61)
n, D = 1500, 6
y = rng.integers(0, 15, n).astype(np.int32)
c = rng.normal(size=(15, D)) * 1.2
noise = rng.uniform(0.3, 2.0, n)                     # a variance that knows something
mu = (c[y] + noise[:, None] * rng.normal(size=(n, D))).astype(np.float32)
var = np.repeat((noise ** 2)[:, None], D, 1).astype(np.float32)
np.savez("s.npz", mu=mu, var=var, labels=y)
PYEOF
evaluate --bootstrap 50 --match-a 1 --match-b 0 --report page.html --json s.json s.npz > table.md 2> err ||
    fail "evaluate --report: $(cat err)"
[ -s page.html ] || fail "no page"
$PY - <<'PYEOF' || fail "the page (above)"
import json, math
from html.parser import HTMLParser
import numpy as np
j = json.load(open("s.json"))["input"]
class P(HTMLParser):
    def __init__(self):
        super().__init__(); self.curves = []; self.figs = []; self.cells = []; self.cell = None; self.ext = []
    def handle_starttag(self, tag, a):
        a = dict(a)
        for k in ("src", "href"):
            if k in a and "://" in a[k]:
                self.ext.append(a[k])
        if tag == "svg":
            self.figs.append(a.get("data-title"))
        if tag in ("polyline", "g") and "data-source" in a:
            x = [float(v) for v in a["data-x"].split()]
            yv = [float(v) for v in a["data-y"].split()]
            self.curves.append((self.figs[-1], a["data-source"], a.get("data-target"), np.array(x), np.array(yv)))
        if tag in ("td", "th"):
            self.cell = ""
    def handle_data(self, d):
        if self.cell is not None:
            self.cell += d
    def handle_endtag(self, tag):
        if tag in ("td", "th") and self.cell is not None:
            self.cells.append(self.cell); self.cell = None
p = P(); p.feed(open("page.html").read())
assert not p.ext, "the page fetches: %s" % p.ext
assert "script" not in open("page.html").read(), "a script in the page"
# the table: its numbers are the JSON's
cells = p.cells
def row(name):
    i = cells.index(name); return cells[i + 1]
assert float(row("knn (k = 5)")) == j["knn"] and float(row("map_r")) == j["map_r"] and float(row("ece")) == j["ece"]
# risk-coverage curves: every measured source, every target
mean_loss = {"r1": 1 - j["recall"][0], "knn": 1 - j["knn"], "ap": 1 - j["map"], "map_r": 1 - j["map_r"]}
curves = {(s, t): (x, yv) for f, s, t, x, yv in p.curves if f.startswith("risk-coverage")}
n = 0
for src, per in j["uncertainty"].items():
    for t, m in per.items():
        if m["aurc"] is None:
            assert (src, t) not in curves, (src, t)
            continue
        x, yv = curves[(src, t)]
        assert len(x) == 50 and abs(x[-1] - 1) < 1e-12 and abs(x[0] - 0.02) < 1e-12, x[:3]
        assert abs(yv[-1] - mean_loss[t]) < 1e-9, (src, t, yv[-1], mean_loss[t])
        assert abs(yv.mean() - m["aurc"]) < 0.03, (src, t, yv.mean(), m["aurc"])
        n += 1
assert n >= 16, n
for t in mean_loss:
    x, yv = curves[("oracle", t)]
    assert abs(yv[-1] - mean_loss[t]) < 1e-9 and np.all(np.diff(yv) >= -1e-12), t   # the oracle's risk only rises
    assert yv.mean() <= min(m[t]["aurc"] for m in j["uncertainty"].values() if m[t]["aurc"] is not None) + 1e-9
# tau's bins: -tau_b(bin, performance) is the JSON's tau
def tau_b(a, b):
    n_ = len(a); c = d = ta = tb = 0
    for i in range(n_):
        for k in range(i + 1, n_):
            s = np.sign(a[i] - a[k]) * np.sign(b[i] - b[k])
            if a[i] == a[k] and b[i] == b[k]: continue
            if a[i] == a[k]: ta += 1
            elif b[i] == b[k]: tb += 1
            elif s > 0: c += 1
            else: d += 1
    return (c - d) / math.sqrt((c + d + ta) * (c + d + tb))
bins = [(s, t, yv) for f, s, t, x, yv in p.curves if f.startswith("tau's bins")]
assert len(bins) == 4, len(bins)
for fig, s, t, x, yv in p.curves:
    if fig.startswith("tau's bins"):
        src = fig.split(": ")[1]
        assert abs(-tau_b(np.arange(20), yv) - j["uncertainty"][src][t]["tau"]) < 1e-9, (src, t)
# the reliability diagram and the ROC
rel = [f for f in p.figs if f.startswith("reliability")]
assert rel and ("ECE %.4f" % j["ece"]) in rel[0], rel
roc = [(x, yv) for f, s, t, x, yv in p.curves if f.startswith("verification ROC")]
x, yv = roc[0]
i = int(np.argmin(abs(x - 0.1)))
assert abs(x[i] - 0.1) < 1e-12 and yv[i] == j["verification"]["tar_at_far"][0], (x[i], yv[i], j["verification"]["tar_at_far"])
print("report: %d curves, %d figures, the JSON's numbers" % (len(p.curves), len(p.figs)))
PYEOF

# Python writes the same page's curves
PYTHONPATH="$ROOT/python" HEDGE_LIB="$LIBSO" $PY - <<'PYEOF' || fail "hedge.evaluate(report=)"
import re
import numpy as np
import hedge
a = np.load("s.npz")
d = hedge.evaluate(a["mu"], a["labels"], var=a["var"], match=(1, 0), bootstrap=50, report="py.html")
curves = lambda f: re.findall(r'<polyline[^>]*data-source="[^"]*"[^>]*data-y="[^"]*"', open(f).read())
assert curves("py.html") == curves("page.html") and len(curves("py.html")) > 20
# hedge.report(result, path) later, from the dict returned (and from its pickle): the same page
import pickle
hedge.report(d, "later.html")
hedge.report(pickle.loads(pickle.dumps(d)), "pickled.html")
assert open("later.html").read() == open("py.html").read() == open("pickled.html").read()
# threads draw pages side by side (the GIL released): every page whole, the same
import threading
def draw(i):
    for _ in range(10):
        hedge.report(d, "thread%d.html" % i)
ts = [threading.Thread(target=draw, args=(i,)) for i in range(4)]
errors = []
import sys
threading.excepthook = lambda a: errors.append(a.exc_value)
[t.start() for t in ts]
[t.join() for t in ts]
assert not errors, errors
assert all(open("thread%d.html" % i).read() == open("later.html").read() for i in range(4))
try:
    hedge.report(dict(d), "plain.html")
except ValueError as e:
    assert "expected the dict hedge.evaluate returned" in str(e), str(e)
else:
    raise AssertionError("a plain dict drew a page")
for bad, want in (({"report": 5}, "report: 5"), ({"report": "x.html", "shard": (0, 2)}, "a shard has no page")):
    try:
        hedge.evaluate(a["mu"], a["labels"], **bad)
    except ValueError as e:
        assert want in str(e), str(e)
    else:
        raise AssertionError(bad)
PYEOF

expect_exit 2 "--report with --shard" evaluate --shard 0/2 --report x.html s.npz
expect_exit 2 "--report -" evaluate --report - s.npz
expect_exit 2 "--report with two galleries" evaluate --report x.html -g s.npz -g s.npz s.npz
[ ! -e x.html ] || fail "a refused --report left its file"
evaluate --report no/such/dir/p.html s.npz > out 2> err && fail "a page into a missing folder"
[ ! -s out ] || fail "the failed --report printed a table"

# a real browser (Debian's chromium, optional): the page renders, not blank
if command -v chromium > /dev/null 2>&1; then
    timeout 120 chromium --headless --no-sandbox --disable-gpu --window-size=1400,2400 --screenshot="$T/shot.png" \
        "file://$T/page.html" > chromium.log 2>&1 || fail "chromium: $(tail -n 3 chromium.log)"
    $PY - "$T/shot.png" <<'PYEOF' || fail "the screenshot (above)"
import sys, zlib, struct
b = open(sys.argv[1], "rb").read()
assert b[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
w, h = struct.unpack(">II", b[16:24])
data, i = b"", 8
while i < len(b):
    n, kind = struct.unpack(">I4s", b[i:i + 8]); data += b[i + 8:i + 8 + n] if kind == b"IDAT" else b""; i += 12 + n
raw = zlib.decompress(data)
distinct = len(set(raw[::97]))
assert w == 1400 and distinct > 20, (w, h, distinct)   # a blank page is one colour
print("report: the screenshot %dx%d has %d distinct sampled bytes" % (w, h, distinct))
PYEOF
else
    echo "report: no chromium (Debian's chromium): the browser check skipped" >&2
fi
pass
