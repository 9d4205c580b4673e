#!/bin/sh
# occlude on batch streams (occlusion drawn at every use, between batcher and train):
#  - on batches of all-white images (every image the same, so a patch is exactly the zeros it
#    leaves): every record and every slot gets its own patches (an image used at two steps is
#    occluded differently), each a rectangle inside its cell where the flags say, at the rate
#    p; the same command gives the same bytes, another seed others;
#  - pairbatch (occluded1, occluded2), groupbatch and episodes (occluded) carry the flags, OR-ed
#    into flags already there;
#  - `batcher | occlude | train` stopped (-n, and SIGINT at any step) and resumed gives the
#    parameters of an uninterrupted run to the bit; resumed through another seed it does not;
#  - what occlude refuses: images that are not 28 x 28N digits (the L-shapes), flags of the
#    wrong shape, a batched stream of another kind.
# The stream checks need /usr/bin/python3 with msgpack and numpy.
set -u
. "$(dirname "$0")/../lib.sh"
cd "$T"
PY=/usr/bin/python3
"$PY" -c 'import msgpack, numpy' 2>/dev/null || { echo "SKIP: $PY has no msgpack or numpy"; pass; }

# white batches: pairbatch of B = 8 pairs, groupbatch of 16 with an occluded field (flags 1 on
# digit 0 of the first image), 50 records each
cat > white.py <<'EOF'
import sys, msgpack
kind, n, path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
N, B = 2, 8 if sys.argv[1] == "pairbatch" else 16
def f(name, dtype, shape): return {"name": name, "dtype": dtype, "shape": shape}
def t(dtype, shape, data): return {"dtype": dtype, "shape": shape, "data": data}
img = t("uint8", [B, 28, 28 * N], b"\xff" * (B * 28 * 28 * N))
if kind == "pairbatch":
    fields = [f("image1", "uint8", [28, 56]), f("image2", "uint8", [28, 56]), f("class1", "int32", []),
              f("class2", "int32", []), f("match", "uint8", [])]
    rec = {"image1": img, "image2": img, "class1": t("int32", [B], bytes(4 * B)),
           "class2": t("int32", [B], bytes(4 * B)), "match": t("uint8", [B], b"\x01" * B)}
    meta = {"digits": N, "batch": B}
else:
    fields = [f("image", "uint8", [28, 56]), f("class", "int32", []), f("occluded", "uint8", [N])]
    rec = {"image": img, "class": t("int32", [B], bytes(4 * B)),
           "occluded": t("uint8", [B, N], b"\x01" + bytes(B * N - 1))}
    meta = {"digits": N, "P": 4, "K": 4}
with open(path, "wb") as o:
    o.write(msgpack.packb({"format": "hedge-stream", "version": 1, "kind": kind, "batched": True, "fields": fields,
                           "meta": meta, "provenance": {"program": "white.py", "args": [], "input": []}}))
    for _ in range(n):
        o.write(msgpack.packb(rec))
    o.write(msgpack.packb({"end": n}))
EOF
"$PY" white.py pairbatch 50 pairs.hs && "$PY" white.py groupbatch 50 groups.hs || fail "white.py"
occlude -p 1 < pairs.hs > p1.hs || fail "occlude -p 1 of pairbatch"
occlude -p 1 < pairs.hs > p1b.hs || fail "occlude -p 1 of pairbatch (again)"
cmp -s p1.hs p1b.hs || fail "the same command gave different bytes"
occlude -p 1 -S 715 < pairs.hs > p1s.hs || fail "occlude -S 715"
cmp -s p1.hs p1s.hs && fail "seeds 714 and 715 gave the same bytes"
occlude -p 0.2 < pairs.hs > p02.hs || fail "occlude -p 0.2 of pairbatch"
occlude -p 0.3 --shape square < groups.hs > g03.hs || fail "occlude of groupbatch"
cat > check.py <<'EOF'
import sys, msgpack, numpy as np
def fail(m): sys.exit("FAIL: " + m)
def read(path):
    with open(path, "rb") as f:
        u = msgpack.Unpacker(f, raw=False, max_buffer_size=1 << 30)
        h = next(u)
        recs = [{k: np.frombuffer(t["data"], np.dtype(t["dtype"]).newbyteorder("<")).reshape(t["shape"]) for k, t in o.items()}
                for o in u if "end" not in o]
    return h, recs
def patches(imgs, flags, path, shape):
    """imgs (B, 28, 56) white but for the patches: each cell's zeros must be one rectangle, flagged"""
    out = []
    for b in range(len(imgs)):
        for k in range(2):
            z = imgs[b, :, 28 * k:28 * k + 28] == 0
            if not z.any():
                out.append((0, 0, 0, 0) if flags[b, k] else None)   # a side 0, or not occluded
                continue
            if not flags[b, k]:
                fail(f"{path}: zeros in a cell not flagged occluded")
            rows, cols = np.where(z)
            y0, y1, x0, x1 = rows.min(), rows.max() + 1, cols.min(), cols.max() + 1
            if z.sum() != (y1 - y0) * (x1 - x0):
                fail(f"{path}: the zeros of a cell are not a rectangle")
            if shape == "square" and y1 - y0 != x1 - x0:
                fail(f"{path}: --shape square left a patch that is not a square")
            if ((imgs[b, :, 28 * k:28 * k + 28] != 0) & (imgs[b, :, 28 * k:28 * k + 28] != 255)).any():
                fail(f"{path}: a pixel is neither the input's nor 0")
            out.append((x0, y0, x1 - x0, y1 - y0))
    return out

h, recs = read(sys.argv[1])
names = [f["name"] for f in h["fields"]]
if names[-2:] != ["occluded1", "occluded2"] or h["meta"]["occlusion_p"] != 1 or h["meta"]["occlusion_shape"] != "rect" \
        or h["kind"] != "pairbatch" or not h["batched"]:
    fail(f"pairbatch: fields {names}, meta {h['meta']}")
slots = []   # per record: the patches of its 32 digits
for r in recs:
    if not (r["occluded1"] == 1).all() or not (r["occluded2"] == 1).all():
        fail("p = 1: a digit not flagged")
    slots.append(patches(r["image1"], r["occluded1"], "p1", "rect") + patches(r["image2"], r["occluded2"], "p1", "rect"))
# every record draws afresh: the same slot across records, and the slots of one record, differ
# (a patch with a side 0 is (0, 0, 0, 0) wherever it falls: those are left out)
same_slot = sum(slots[i][j] == slots[i + 1][j] and slots[i][j][2] > 0 for i in range(len(slots) - 1) for j in range(32))
same_rec = sum(len(set(q for q in s if q[2])) < len([q for q in s if q[2]]) - 2 for s in slots)
if same_slot > 3 or same_rec:
    fail(f"patches repeat: {same_slot} of {49 * 32} slot pairs equal from one record to the next, {same_rec} records with few distinct")
w = np.array([p[2] for s in slots for p in s if p[2] and p[3]])
hh = np.array([p[3] for s in slots for p in s if p[2] and p[3]])
m = len(w)
# a side uniform on 0..28 given both sides > 0: uniform on 1..28, mean 14.5, variance (28^2 - 1) / 12
sd = np.sqrt((28 ** 2 - 1) / 12 / m)
if abs(w.mean() - 14.5) > 5 * sd or abs(hh.mean() - 14.5) > 5 * sd or (w == hh).mean() > 0.2:
    fail(f"rectangles: mean w {w.mean():.2f}, h {hh.mean():.2f} (14.5 +/- {5 * sd:.2f}), w = h in {(w == hh).mean():.3f}")
print(f"pairbatch p=1: {len(recs)} records x 32 digits, each record its own patches ({same_slot} repeats of a slot); "
      f"mean w {w.mean():.2f}, h {hh.mean():.2f} (14.5 +/- {5 * sd:.2f})")

h, recs = read(sys.argv[2])
occ = np.concatenate([np.concatenate([r["occluded1"], r["occluded2"]]) for r in recs])
for r in recs:
    patches(r["image1"], r["occluded1"], "p02", "rect"); patches(r["image2"], r["occluded2"], "p02", "rect")
sig = np.sqrt(0.2 * 0.8 / occ.size)
if abs(occ.mean() - 0.2) > 5 * sig:
    fail(f"p = 0.2: {occ.mean():.3f} of the digits flagged, expected 0.2 +/- {5 * sig:.3f}")
print(f"pairbatch p=0.2: {occ.mean():.3f} of {occ.size} digits occluded")

h, recs = read(sys.argv[3])
names = [f["name"] for f in h["fields"]]
if names != ["image", "class", "occluded"] or h["meta"]["occlusion_shape"] != "square":
    fail(f"groupbatch: fields {names} (the flags must be OR-ed into the input's, not added)")
occ = np.stack([r["occluded"] for r in recs])            # (records, 16, 2)
if not (occ[:, 0, 0] == 1).all():
    fail("groupbatch: a flag of the input was lost (not OR-ed)")
rest = occ.reshape(len(recs), -1)[:, 1:]
sig = np.sqrt(0.3 * 0.7 / rest.size)
if abs(rest.mean() - 0.3) > 5 * sig:
    fail(f"groupbatch p = 0.3: {rest.mean():.3f} flagged, expected 0.3 +/- {5 * sig:.3f}")
for r in recs:
    patches(r["image"], np.maximum(r["occluded"], 0), "g03", "square")
print(f"groupbatch p=0.3 squares: flags OR-ed into the input's, {rest.mean():.3f} occluded")
EOF
"$PY" check.py p1.hs p02.hs g03.hs || fail "stream checks"

# real batches of every kind go through, their flags on, and train takes them
mkdigits -N 2 -s train -n 20000 > train.hs || fail "mkdigits"
batcher -m episodes -c 5 -s 2 -q 3 -n 2 < train.hs | occlude | tshow -H | grep -q '"occluded"' ||
    fail "episodes: no occluded field"
batcher -m pk -P 4 -K 4 -n 2 < train.hs | occlude | tshow -H | grep -q '"occluded"' || fail "pk: no occluded field"

# refused: images that are not digits, flags of another shape, an unbatched batch kind
mkshapes -n 20 | batcher -m pk -P 2 -K 2 -n 1 > shapes.hs 2>/dev/null || fail "mkshapes"
expect_fail 1 "not an N-digit MNIST image" occlude shapes.hs

"$PY" - <<'EOF' || fail "bad flags fixture"
import msgpack
with open("groups.hs", "rb") as f:
    objs = list(msgpack.Unpacker(f, raw=False))
objs[0]["fields"][2]["shape"] = [3]
for o in objs[1:-1]:
    o["occluded"] = {"dtype": "uint8", "shape": [16, 3], "data": bytes(48)}
with open("badflags.hs", "wb") as f:
    for o in objs:
        f.write(msgpack.packb(o))
EOF
expect_fail 1 "field 'occluded' is uint8 [3], expected uint8 [2]" occlude badflags.hs

# train --resume through occlude: 20 + 20 steps equal 40 straight, to the bit
batches() { batcher -m pairs -b 32 -S 5 < "$T/train.hs" | occlude -p 0.2 -S "${1:-5}"; }
net="--head mog -C 1 -D 2 -S 3 -t 1"
batches | train -o a.ckpt $net -n 40 2>/dev/null || fail "train 40"
batches | train -o r.ckpt $net -n 20 2>/dev/null || fail "train 20"
batches | train --resume r.ckpt -n 40 -t 1 2>/dev/null || fail "resume to 40"
totsv a.ckpt > a.tsv && totsv r.ckpt > r.tsv || fail "totsv"
cmp -s a.tsv r.tsv || fail "batcher | occlude | train resumed differs from the uninterrupted run"
# the check sees the occlusion: resumed through another seed's patches, the parameters differ
batches | train -o x.ckpt $net -n 20 2>/dev/null || fail "train 20 (x)"
batches 6 | train --resume x.ckpt -n 40 -t 1 2>/dev/null || fail "resume to 40 (x)"
totsv x.ckpt > x.tsv || fail "totsv x"
cmp -s a.tsv x.tsv && fail "resuming through other patches gave the same parameters: the check is blind"

# stopped by SIGINT at whatever step, then resumed: the uninterrupted run's parameters. train
# reads a FIFO so that $! is its own pid.
batches | train -o b.ckpt $net -n 300 2>/dev/null || fail "train 300"
mkfifo int.fifo
batches > int.fifo 2>/dev/null &
train -o i.ckpt $net -n 300 --save-every 100000 < int.fifo 2> int.err &
pid=$!
sleep 2
kill -INT $pid 2>/dev/null
wait $pid
rc=$?
[ "$rc" = 130 ] || [ "$rc" = 0 ] || fail "train after SIGINT exited $rc"
batches | train --resume i.ckpt -n 300 -t 1 2>/dev/null || fail "resume after SIGINT"
totsv b.ckpt > b.tsv && totsv i.ckpt > i.tsv || fail "totsv b"
cmp -s b.tsv i.tsv || fail "interrupted at $(sed -n 's/^train: \([0-9]*\) steps.*/\1/p' int.err) and resumed through occlude: other parameters"
echo "resume through occlude: exact (stopped after step $(sed -n 's/^train: \([0-9]*\) steps.*/\1/p' int.err | head -n 1) of 300, exit $rc)"
pass
