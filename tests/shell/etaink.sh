#!/bin/sh
# tests/bench/eta-ink.py (the README's visible ink against eta) on crafted streams with values
# derived by hand: 40 images, image i keeps i of its 40 ink pixels (visible ink i/40), its eta
# falls with i (1 - i/40 + 0.001), its mean variance rises with i, and KNN gets images 30..39
# right. Then Spearman's rho(ink, eta) = -1, rho(ink, variance) = +1; the least-ink tenth (ink
# below the 10 % quantile 3.9/40: images 0..3) has median eta 1 - 1.5/40 + 0.001 = 0.96350; the
# top band (ink at or above the 75 % quantile 29.25/40: images 30..39) has KNN accuracy 1.
# Needs Debian's python3 with msgpack and numpy (installed by setup-deps).
set -u
. "$(dirname "$0")/../lib.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)
PY=/usr/bin/python3
mkdir -p "$T/data" "$T/run"
$PY - "$T" <<'EOF' || fail "python3 could not craft the streams"
import sys, msgpack, numpy as np
t = sys.argv[1]
def tensor(a):
    a = np.ascontiguousarray(a)
    return {"dtype": a.dtype.name, "shape": list(a.shape), "data": a.astype(a.dtype.newbyteorder("<")).tobytes()}
def write(path, kind, recs):
    with open(path, "wb") as f:
        f.write(msgpack.packb({"format": "hedge-stream", "version": 1, "kind": kind, "batched": False,
                               "fields": [], "meta": {}, "provenance": []}))
        for r in recs:
            f.write(msgpack.packb({k: tensor(v) for k, v in r.items()}))
        f.write(msgpack.packb({"end": len(recs)}))
n = 40
clean, corrupt, eta, knn = [], [], [], []
for i in range(n):
    img = np.ones((1, 40), np.uint8)
    clean.append({"image": img, "id": np.array(i, np.int64)})
    c = np.zeros((1, 40), np.uint8); c[0, :i] = 1
    corrupt.append({"image": c, "id": np.array(i, np.int64)})
    eta.append({"eta": np.array(1 - i / 40 + 0.001, np.float32), "id": np.array(i, np.int64),
                "var": np.full((1, 2), 0.01 * (i + 1), np.float32)})
    knn.append({"id": np.array(i, np.int64), "correct": np.array(1 if i >= 30 else 0, np.uint8)})
# records in another order than the ids: the script joins by id
write(t + "/data/test-clean.hs", "images", clean[::-1])
write(t + "/data/test-corrupt.hs", "images", corrupt)
write(t + "/run/eta-corrupt.hs", "eta", eta[::2] + eta[1::2])
write(t + "/run/knn-corrupt.hs", "knn", knn)
EOF

line=$($PY "$root/tests/bench/eta-ink.py" --tsv "$T/data" "$T/run") || fail "eta-ink.py --tsv failed"
[ "$line" = "$(printf 'run\t40\t-1.000\t1.000\t0.96350')" ] || fail "--tsv: got '$line'"
$PY "$root/tests/bench/eta-ink.py" "$T/data" "$T/run" > "$T/out" || fail "eta-ink.py failed"
grep -q '^run: 40 images, Spearman(ink, eta) -1.000, Spearman(ink, mean variance) 1.000$' "$T/out" ||
    fail "the summary line: $(cat "$T/out")"
grep -q '^  ink 0.00-0.10      4 images  median eta 0.96350  KNN accuracy 0.000$' "$T/out" ||
    fail "the least-ink band: $(cat "$T/out")"
grep -q '^  ink 0.73-0.97     10 images  median eta 0.13850  KNN accuracy 1.000$' "$T/out" ||
    fail "the top band: $(cat "$T/out")"
[ "$(grep -c '^  ink' "$T/out")" = 5 ] || fail "not five bands: $(cat "$T/out")"
# a constant eta (a point model) has no rank correlation
$PY - "$T" <<'EOF' || fail "python3 could not rewrite the eta stream"
import sys, msgpack
t = sys.argv[1]
u = msgpack.Unpacker(open(t + "/run/eta-corrupt.hs", "rb"), raw=False)
objs = list(u)
for o in objs[1:-1]:
    o["eta"]["data"] = b"\x00\x00\x80\x3b"   # 2^-8
    del o["var"]
with open(t + "/run/eta-corrupt.hs", "wb") as f:
    for o in objs:
        f.write(msgpack.packb(o))
EOF
line=$($PY "$root/tests/bench/eta-ink.py" --tsv "$T/data" "$T/run") || fail "eta-ink.py --tsv (constant eta) failed"
[ "$line" = "$(printf 'run\t40\t-\t-\t0.00391')" ] || fail "--tsv, constant eta: got '$line'"
pass
