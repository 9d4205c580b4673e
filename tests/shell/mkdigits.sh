#!/bin/sh
# mkdigits: default counts per class, the 70/30 seen/unseen split, class = digits, train and test
# composites made of disjoint MNIST digits (compared as 28x28 bitmaps), draws without replacement,
# seeds, Fashion-MNIST (gzipped idx), and bad input (exit 2 for misuse, 1 for a bad idx file,
# nothing on stdout either way); --image-ids on hand-made files of the public generator's format
# (.npy by printf; .npz, stored and deflated, by numpy). The stream checks need /usr/bin/python3
# with msgpack and numpy.
set -u
BIN=${BIN:-$(pwd)/build/bin}
DATA=${DATA:-$(pwd)/data}
M=$BIN/mkdigits
MN=$DATA/mnist
FASHION=/usr/share/datasets/fashion-mnist
PY=/usr/bin/python3
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# --- usage and determinism (no python needed)
"$M" -h >"$t/out" 2>"$t/err" || fail "-h exits non-zero"
grep -q '^usage: mkdigits' "$t/out" || fail "-h prints no usage on stdout"
"$M" -N 2 -s test-seen -n 300 >"$t/a" || fail "mkdigits -n 300 failed"
"$M" -N 2 -s test-seen -n 300 >"$t/b" || fail "mkdigits -n 300 failed (2nd run)"
cmp -s "$t/a" "$t/b" || fail "the same seed gave different bytes"
"$M" -N 2 -s test-seen -n 300 -S 715 >"$t/c" || fail "mkdigits -S 715 failed"
cmp -s "$t/a" "$t/c" && fail "seeds 714 and 715 gave the same bytes"
"$M" -N 2 -s test-seen -n 300 --class-seed 9 >"$t/c" || fail "mkdigits --class-seed 9 failed"
cmp -s "$t/a" "$t/c" && fail "class seeds 714 and 9 gave the same bytes"

# --- misuse: exit 2, nothing on stdout
misuse() {
    "$M" "$@" >"$t/out" 2>"$t/err"
    rc=$?
    [ $rc -eq 2 ] || fail "mkdigits $* exited $rc, expected 2"
    [ -s "$t/out" ] && fail "mkdigits $* wrote to stdout"
    grep -q '^mkdigits: ' "$t/err" || fail "mkdigits $*: no 'mkdigits: ...' message"
}
misuse -N 7
misuse -N 0
misuse -n abc
misuse -n 0
misuse -n 50                 # fewer than one class of 100
misuse -n 10 --per-class 11
misuse --per-class -3
misuse -s validation
misuse -S -1
misuse --bogus
misuse stray-argument
misuse --mnist "$t/no-such-dir"
(HEDGE_MNIST=$t/no-such-dir && export HEDGE_MNIST && misuse -n 100) || exit 1

# --- bad idx files: exit 1 with a message naming the file, nothing on stdout
baddata() { # baddata DIR WHAT
    "$M" -s test-seen -n 100 --mnist "$1" >"$t/out" 2>"$t/err"
    rc=$?
    [ $rc -eq 1 ] || fail "$2: exit $rc, expected 1"
    [ -s "$t/out" ] && fail "$2: wrote to stdout"
    grep -q "^mkdigits: .*t10k" "$t/err" || fail "$2: message does not name the file: $(cat "$t/err")"
}
mkdir "$t/trunc" "$t/magic" "$t/count"
cp "$MN/t10k-labels-idx1-ubyte" "$t/trunc/"
head -c 50000 "$MN/t10k-images-idx3-ubyte" >"$t/trunc/t10k-images-idx3-ubyte"
baddata "$t/trunc" "truncated idx"
cp "$MN/t10k-labels-idx1-ubyte" "$t/magic/"
printf 'this is not an idx file at all' >"$t/magic/t10k-images-idx3-ubyte"
baddata "$t/magic" "bad magic"
cp "$MN/t10k-images-idx3-ubyte" "$t/count/"
head -c 1000 "$MN/t10k-labels-idx1-ubyte" >"$t/count/t10k-labels-idx1-ubyte"
baddata "$t/count" "truncated labels"
grep -q truncated "$t/err" || fail "truncated labels: message does not say so"

# --- Fashion-MNIST (gzipped idx) through --mnist
if [ -d "$FASHION" ]; then
    "$M" --mnist "$FASHION" -s test-unseen -n 300 >"$t/fashion" 2>"$t/err" ||
        fail "Fashion-MNIST: $(cat "$t/err")"
    [ -s "$t/fashion" ] || fail "Fashion-MNIST: empty output"
else
    echo "SKIP: no Fashion-MNIST at $FASHION"
fi

# --- --image-ids, without python: .npy files written byte by byte. npy FILE DESCR SHAPE DATA
# (DATA: printf escapes). t10k labels 0..9: 7 2 1 0 4 1 4 9 5 9
npy() {
    h="{'descr': '$2', 'fortran_order': False, 'shape': $3, }"
    { printf '\223NUMPY\001\000'
      printf "\\$(printf %03o $((${#h} % 256)))\\$(printf %03o $((${#h} / 256)))"
      printf '%s' "$h"
      printf "$4"; } >"$1"
}
I=$t/ids
mkdir "$I"
npy "$I/hand_test.npy" '|u1' '(3, 2)' '\000\001\002\003\004\005'
"$M" --image-ids "$I/hand_test.npy" >"$t/out" 2>"$t/err" || fail "--image-ids hand_test.npy: $(cat "$t/err")"
"$BIN/totsv" -f class,digits,source,id "$t/out" >"$t/got"
printf 'class\tdigits[0]\tdigits[1]\tsource[0]\tsource[1]\tid\n72\t7\t2\t0\t1\t0\n10\t1\t0\t2\t3\t1\n41\t4\t1\t4\t5\t2\n' >"$t/want"
cmp -s "$t/got" "$t/want" || fail "--image-ids hand_test.npy: records $(cat "$t/got")"
# the same ids as [1, 3, 2] little-endian int64 (the generator's '<i8'), and as '>i2' in a file
# whose name says no split (-s test given): the same records
npy "$I/hand8_test.npy" '<i8' '(1, 3, 2)' "$(for i in 0 1 2 3 4 5; do printf '\\%03o\\000\\000\\000\\000\\000\\000\\000' $i; done)"
"$M" --image-ids "$I/hand8_test.npy" -N 2 | "$BIN/totsv" -f class,digits,source,id >"$t/got" || fail "--image-ids '<i8'"
cmp -s "$t/got" "$t/want" || fail "--image-ids '<i8' [1, 3, 2]: records $(cat "$t/got")"
npy "$I/be.npy" '>i2' '(3, 2)' '\000\000\000\001\000\002\000\003\000\004\000\005'
"$M" --image-ids "$I/be.npy" -s test | "$BIN/totsv" -f class,digits,source,id >"$t/got" || fail "--image-ids '>i2'"
cmp -s "$t/got" "$t/want" || fail "--image-ids '>i2': records $(cat "$t/got")"
# with -s train the same ids name MNIST training digits: other labels, other classes
"$M" --image-ids "$I/hand_test.npy" -s train >"$t/out" || fail "--image-ids -s train"
[ "$("$BIN/totsv" -f class "$t/out" | tail -n +2 | tr '\n' ' ')" = "50 41 92 " ] ||
    fail "-s train: classes $("$BIN/totsv" -f class "$t/out" | tail -n +2 | tr '\n' ' '), expected 50 41 92"
"$BIN/tshow" -H "$t/out" 2>&1 | grep -q '"split": "train"' || fail "-s train: meta split is not train"

# bad files: exit 1, a message, nothing on stdout
badids() { # badids WHAT-THE-MESSAGE-SAYS (grep pattern) MKDIGITS-ARGS...
    want=$1
    shift
    "$M" "$@" >"$t/out" 2>"$t/err"
    rc=$?
    [ $rc -eq 1 ] || fail "mkdigits $*: exit $rc, expected 1 ($(cat "$t/err"))"
    [ -s "$t/out" ] && fail "mkdigits $*: wrote to stdout"
    grep -q "^mkdigits: .*$want" "$t/err" || fail "mkdigits $*: message '$(cat "$t/err")' lacks '$want'"
}
npy "$I/f8_test.npy" '<f8' '(1, 1)' '\000\000\000\000\000\000\360\077'
badids "dtype '<f8' is not an integer type" --image-ids "$I/f8_test.npy"
npy "$I/range_test.npy" '<i2' '(2, 1)' '\001\000\020\047'   # 1, 10000
badids 'image_ids\[1, 0\] = 10000: out of range (the MNIST t10k split has 10000 digits' --image-ids "$I/range_test.npy"
npy "$I/neg_test.npy" '<i2' '(1, 2)' '\001\000\377\377'     # 1, -1
badids 'image_ids\[0, 1\] = -1: negative' --image-ids "$I/neg_test.npy"
npy "$I/trunc_test.npy" '<i2' '(2, 2)' '\001\000\002\000\003\000'
badids 'truncated: 6 bytes of data, but shape (2, 2)' --image-ids "$I/trunc_test.npy"
npy "$I/shape_test.npy" '|u1' '(6,)' '\000\001\002\003\004\005'
badids 'shape (6,): image ids are \[K, S, N\]' --image-ids "$I/shape_test.npy"
badids 'holds 2-digit composites, not 3-digit' --image-ids "$I/hand_test.npy" -N 3
printf 'not numpy' >"$I/text_test.npy"
badids 'neither an .npz (zip) nor an .npy file' --image-ids "$I/text_test.npy"
badids "none_test.npz: No such file" --image-ids "$I/none_test.npz"
# misuse: exit 2
misuse --image-ids "$I/hand_test.npy" -n 100
misuse --image-ids "$I/hand_test.npy" -S 3
misuse --image-ids "$I/hand_test.npy" --per-class 3
misuse --image-ids "$I/hand_test.npy" --holdout 100
misuse --image-ids "$I/hand_test.npy" -s val
misuse --image-ids "$I/be.npy"              # no split in the name, no -s
misuse --seen-from "$I/hand_test.npy"
misuse --image-ids "$I/hand_test.npy" --mnist "$t/no-such-dir"

# --- stream contents
if ! "$PY" -c 'import msgpack, numpy' 2>/dev/null; then
    echo "SKIP: $PY has no msgpack or numpy: counts, classes and bitmap checks not run"
    echo "mkdigits: ok (partial)"
    exit 0
fi
cat >"$t/check.py" <<'EOF'
import collections, gzip, os, sys
import msgpack, numpy as np

def fail(msg):
    sys.exit("FAIL: " + msg)

def tensor(t):
    return np.frombuffer(t["data"], dtype=np.dtype(t["dtype"]).newbyteorder("<")).reshape(t["shape"])

def read(path, fields=None, header_only=False):
    """the header and, per field, one array of all records (records first); checks the trailer"""
    with open(path, "rb") as f:
        u = msgpack.Unpacker(f, raw=False, max_buffer_size=1 << 30)
        h = next(u)
        if header_only:
            return h, None
        names = fields or [fl["name"] for fl in h["fields"]]
        spec = {fl["name"]: fl for fl in h["fields"]}
        parts = {k: [] for k in names}
        for o in u:
            if "end" in o:
                n = len(parts[names[0]])
                if o["end"] != n:
                    fail(f"{path}: trailer says {o['end']}, read {n}")
                cols = {}
                for k in names:
                    dt = np.dtype(spec[k]["dtype"]).newbyteorder("<")
                    cols[k] = np.frombuffer(b"".join(parts[k]), dt).reshape([n] + spec[k]["shape"])
                return h, cols
            for k in names:
                parts[k].append(o[k]["data"])
    fail(f"{path}: no trailer")

def idx(d, name):
    p = os.path.join(d, name)
    raw = open(p, "rb").read() if os.path.exists(p) else gzip.open(p + ".gz").read()
    nd = raw[3]
    dims = [int.from_bytes(raw[4 + 4 * i: 8 + 4 * i], "big") for i in range(nd)]
    return np.frombuffer(raw[4 + 4 * nd:], np.uint8).reshape(dims)

def header_ok(path, h, N, split):
    fields = [(f["name"], f["dtype"], f["shape"]) for f in h["fields"]]
    want = [("image", "uint8", [28, 28 * N]), ("class", "int32", []), ("digits", "uint8", [N]),
            ("source", "int32", [N]), ("id", "int64", [])]
    if h["kind"] != "images" or h["batched"] or fields != want:
        fail(f"{path}: header kind/fields {h['kind']} {fields}")
    m = h["meta"]
    for k, v in (("digits", N), ("height", 28), ("width", 28 * N), ("split", split)):
        if m.get(k) != v:
            fail(f"{path}: meta {k} = {m.get(k)}, expected {v}")
    if h["provenance"]["program"] != "mkdigits" or "seed" not in h["provenance"]:
        fail(f"{path}: provenance {h['provenance']}")
    return tensor(m["classes"]), tensor(m["seen_classes"])

def counts(path, N, split, nclasses, per_class, nseen):
    """header, class split and per-class counts; class = digits; id = position; shuffled order"""
    h, r = read(path, ("class", "digits", "id"))
    classes, seen = header_ok(path, h, N, split)
    if len(seen) != nseen or len(set(seen.tolist())) != nseen or seen.min() < 0 or seen.max() >= 10 ** N:
        fail(f"{path}: {len(seen)} seen classes, expected {nseen} distinct")
    cls, seen = set(classes.tolist()), set(seen.tolist())
    if split == "test-unseen" and cls & seen or split != "test-unseen" and not cls <= seen:
        fail(f"{path}: the {split} classes are not {'outside' if split == 'test-unseen' else 'among'} the seen ones")
    if not np.array_equal(r["id"], np.arange(len(r["id"]))):
        fail(f"{path}: ids are not 0, 1, 2, ...")
    number = (r["digits"].astype(np.int64) * 10 ** np.arange(N - 1, -1, -1)).sum(axis=1)
    if not np.array_equal(number, r["class"]):
        i = int(np.argmax(number != r["class"]))
        fail(f"{path}: record {i}: class {r['class'][i]} but digits {r['digits'][i]}")
    n = collections.Counter(r["class"].tolist())
    if set(n) != cls or len(cls) != nclasses or set(n.values()) != {per_class}:
        fail(f"{path}: {len(n)} classes x {sorted(set(n.values()))}, expected {nclasses} x {per_class}")
    if np.all(np.diff(r["class"][:200]) >= 0):
        fail(f"{path}: records are sorted by class")
    print(f"{path}: {split} N={N}: {nclasses} x {per_class}, {nseen} seen classes")

def trailer(path, N, split, nclasses, total):
    """a big stream: its header and its trailer only"""
    h, _ = read(path, header_only=True)
    classes, seen = header_ok(path, h, N, split)
    with open(path, "rb") as f:
        f.seek(-32, 2)
        tail = f.read()
    end = msgpack.unpackb(tail[tail.rindex(b"\x81\xa3end"):])["end"]
    if len(classes) != nclasses or end != total:
        fail(f"{path}: {len(classes)} classes and {end} images, expected {nclasses} and {total}")
    print(f"{path}: {split} N={N}: {nclasses} classes, {total} images")

def split_70_30(N, seen_path, unseen_all_path):
    h, _ = read(seen_path, header_only=True)
    seen = set(tensor(h["meta"]["seen_classes"]).tolist())
    h, _ = read(unseen_all_path, header_only=True)
    unseen = set(tensor(h["meta"]["classes"]).tolist())
    if len(seen) != 7 * 10 ** N // 10 or len(unseen) != 10 ** N - len(seen) or seen & unseen or \
            seen | unseen != set(range(10 ** N)):
        fail(f"N={N}: {len(seen)} seen and {len(unseen)} unseen classes do not split 0..{10 ** N - 1}")
    print(f"N={N}: {len(seen)} seen / {len(unseen)} unseen, disjoint, covering every number")

def cells(path, mnist, prefix):
    """every cell is the MNIST digit its source names, with the right label; draws without
    replacement: within a (class, position) each digit of the label is used floor or ceil times"""
    h, r = read(path)
    N, n = h["meta"]["digits"], len(r["id"])
    imgs, labels = idx(mnist, prefix + "-images-idx3-ubyte"), idx(mnist, prefix + "-labels-idx1-ubyte")
    src = r["source"]
    if src.min() < 0 or src.max() >= len(labels):
        fail(f"{path}: source index out of range")
    cell = r["image"].reshape(n, 28, N, 28).transpose(0, 2, 1, 3)     # (n, N, 28, 28)
    if not np.array_equal(labels[src], r["digits"]):
        fail(f"{path}: a source digit's {prefix} label differs from the record's digits")
    bad = np.nonzero((cell != imgs[src]).any(axis=(2, 3)))
    if len(bad[0]):
        i, k = bad[0][0], bad[1][0]
        fail(f"{path}: record {i} digit {k}: the cell is not {prefix} digit {src[i, k]}")
    pool = collections.Counter(labels.tolist())
    per_class = collections.Counter(r["class"].tolist())
    use = collections.defaultdict(collections.Counter)
    for c, s in zip(r["class"].tolist(), src.tolist()):
        for k in range(N):
            use[(c, k)][s[k]] += 1
    for (c, k), u in use.items():
        m, d = per_class[c], int(str(c).zfill(N)[k])
        lo, hi = m // pool[d], -(-m // pool[d])
        full = m >= pool[d]
        if max(u.values()) > hi or (full and min(u.values()) < lo) or (full and len(u) != pool[d]):
            fail(f"{path}: class {c} position {k}: {m} draws from {pool[d]} digits used "
                 f"{min(u.values())}..{max(u.values())} times each, expected {lo}..{hi}")
    bitmaps = set(map(bytes, cell.reshape(n * N, 784)))
    print(f"{path}: {n} composites, {len(bitmaps)} distinct cells, all {prefix} digits")
    return bitmaps

def pick(labels, classes, S, start):
    """[K, S, 2] ids: composite s of class c takes the (start + s)-th digits of its labels"""
    by = [np.nonzero(labels == k)[0] for k in range(10)]
    return np.array([[[by[c // 10][start + s], by[c % 10][start + s + 1]] for s in range(S)] for c in classes])

def ids_make(mnist, d):
    """a number-split data set in the generator's format (np.savez: stored; savez_compressed:
    deflated), of MNIST ids picked by label, and bad files"""
    import zipfile
    name = os.path.join(d, "dataset_mnist_2_hand_%s.npz")
    tr, te = idx(mnist, "train-labels-idx1-ubyte"), idx(mnist, "t10k-labels-idx1-ubyte")
    np.savez(name % "train", sample_per_number=3, chosen_numbers=np.array([35, 70, 7]),
             image_ids=pick(tr, [35, 70, 7], 3, 5000))
    ids = pick(te, [70, 35], 4, 0)
    ids[0, 3, 0] = np.nonzero(te == 7)[0][-1]   # the last test 7 (9999 in the official MNIST)
    np.savez(name % "test_seen", sample_per_number=4, chosen_numbers=np.array([70, 35]), image_ids=ids)
    np.save(os.path.join(d, "bare_test_seen.npy"), ids)
    np.savez_compressed(name % "test_unseen", sample_per_number=2, chosen_numbers=np.array([99, 1]),
                        image_ids=pick(te, [99, 1], 2, 100).astype("<i4"))
    np.savez(os.path.join(d, "chosen_test.npz"), chosen_numbers=np.array([70, 36]), image_ids=ids)
    np.savez(os.path.join(d, "spn_test.npz"), sample_per_number=5, image_ids=ids)
    np.savez(os.path.join(d, "noids_test.npz"), ids=ids)
    np.savez(os.path.join(d, "fortran_test.npz"), image_ids=np.asfortranarray(ids.transpose(2, 1, 0)))
    np.savez(os.path.join(d, "float_test.npz"), image_ids=ids.astype(float))
    np.savez(os.path.join(d, "train_ids_test.npz"), image_ids=pick(tr, [12], 2, 5900))
    raw = bytearray(open(name % "test_seen", "rb").read())
    open(os.path.join(d, "trunc_test.npz"), "wb").write(raw[:len(raw) // 2])
    off = zipfile.ZipFile(name % "test_seen").getinfo("image_ids.npy").header_offset
    raw[off + 200] ^= 1   # inside image_ids.npy's data
    open(os.path.join(d, "crc_test.npz"), "wb").write(raw)
    print(f"{d}: .npz files made")

def ids_check(mnist, split, path, npz, seen_npz=None):
    """the stream of `mkdigits --image-ids npz`: the idx digits side by side, in file order"""
    z = np.load(npz)
    ids, chosen = z["image_ids"], z["chosen_numbers"]
    K, S, N = ids.shape
    h, r = read(path)
    m = h["meta"]
    pre = "train" if split == "train" else "t10k"
    imgs, labels = idx(mnist, pre + "-images-idx3-ubyte"), idx(mnist, pre + "-labels-idx1-ubyte")
    flat = ids.reshape(K * S, N)
    want = np.concatenate([imgs[flat[:, k]] for k in range(N)], axis=2)   # (K S, 28, 28 N)
    if r["image"].shape != want.shape or not np.array_equal(r["image"], want):
        i = int(np.nonzero((r["image"] != want).any(axis=(1, 2)))[0][0]) if r["image"].shape == want.shape else -1
        fail(f"{path}: composite {i} is not MNIST {pre} digits {flat[i]} side by side")
    if not np.array_equal(r["class"], np.repeat(chosen, S)):
        fail(f"{path}: classes {r['class'][:12]}..., expected chosen_numbers {chosen} x {S}, in file order")
    if not np.array_equal(r["source"], flat) or not np.array_equal(r["digits"], labels[flat]):
        fail(f"{path}: source or digits differ from the ids and their labels")
    if not np.array_equal(r["id"], np.arange(K * S)):
        fail(f"{path}: ids are not 0, 1, 2, ...")
    if (m["split"], m["digits"], m["image_ids"]) != (split, N, npz):
        fail(f"{path}: meta split {m['split']}, digits {m['digits']}, image_ids {m['image_ids']}")
    if tensor(m["classes"]).tolist() != sorted(set(chosen.tolist())):
        fail(f"{path}: meta classes {tensor(m['classes'])}")
    seen = sorted((np.load(seen_npz)["chosen_numbers"] if seen_npz else chosen).tolist())
    if tensor(m["seen_classes"]).tolist() != seen or (seen_npz and m["seen_from"] != seen_npz):
        fail(f"{path}: meta seen_classes {tensor(m['seen_classes'])} from {m.get('seen_from')}, expected {seen}")
    if "seed" in h["provenance"]:
        fail(f"{path}: a seed in the provenance, but nothing was drawn")
    print(f"{path}: {K} x {S} composites of {N} MNIST {pre} digits, as {npz} says")

def run(cmd, *a):
    if cmd == "idsmake":
        ids_make(*a)
    elif cmd == "ids":
        ids_check(*a)
    elif cmd == "counts":
        counts(a[0], int(a[1]), a[2], *map(int, a[3:6]))
    elif cmd == "trailer":
        trailer(a[0], int(a[1]), a[2], int(a[3]), int(a[4]))
    elif cmd == "split":
        split_70_30(int(a[0]), a[1], a[2])
    elif cmd == "disjoint":
        tr = cells(a[1], a[0], "train")
        te = set()
        for p in a[2:]:
            te |= cells(p, a[0], "t10k")
        if len(tr) < 5000 or len(te) < 1000:
            fail(f"too few distinct cells to compare ({len(tr)} train, {len(te)} test)")
        if tr & te:
            fail(f"{len(tr & te)} digit bitmaps appear in both train and test composites")
        print(f"train and test composites share no digit bitmap ({len(tr)} and {len(te)} distinct)")
    elif cmd == "fashion":
        cells(a[1], a[0], "t10k")

# one check per line of the file argv[1] (one python start for all of them)
for line in open(sys.argv[1]):
    run(*line.split())
EOF
: >"$t/checks"
check() { echo "$*" >>"$t/checks"; }
gen() { # gen NAME ARGS...: $t/NAME from mkdigits ARGS
    out=$1
    shift
    "$M" "$@" >"$t/$out" || fail "mkdigits $* failed"
}

# default counts (the public generator's): N=2 train 70 x 1428 (header and trailer only: the
# per-class counting is the same code as for the test splits), test-seen 70 x 142, test-unseen
# 30 x 333; N=3 test splits 100 x 100; N=1 test-unseen 3 x 3333; N=4 100 x 100
gen tr2 -N 2
check trailer "$t/tr2" 2 train 70 99960
gen ts2 -N 2 -s test-seen
check counts "$t/ts2" 2 test-seen 70 142 70
gen tu2 -N 2 -s test-unseen
check counts "$t/tu2" 2 test-unseen 30 333 70
gen ts3 -N 3 -s test-seen
check counts "$t/ts3" 3 test-seen 100 100 700
gen tu3 -N 3 -s test-unseen
check counts "$t/tu3" 3 test-unseen 100 100 700
gen tu1 -N 1 -s test-unseen
check counts "$t/tu1" 1 test-unseen 3 3333 7
gen tu4 -N 4 -s test-unseen
check counts "$t/tu4" 4 test-unseen 100 100 7000

# 70/30 (700/300, 7/3): every unseen class, one image each
for N in 1 2 3; do
    gen all$N -N $N -s test-unseen --per-class 1
done
check split 1 "$t/tu1" "$t/all1"
check split 2 "$t/ts2" "$t/all2"
check split 3 "$t/ts3" "$t/all3"

# train composites (70 x 200) against both test splits, as bitmaps; sources and labels checked
gen tr -N 2 --per-class 200
check disjoint "$MN" "$t/tr" "$t/ts2" "$t/tu2"
[ -s "$t/fashion" ] && check fashion "$FASHION" "$t/fashion"
# --holdout: val is made of the held-out training digits only, train of the others; val has
# exactly the seen classes (those of test-seen)
"$BIN/mkdigits" -N 2 -s val --holdout 10000 > "$t/val" || fail "mkdigits -s val"
"$BIN/totsv" -f source "$t/val" | awk 'NR > 1 && ($1 < 50000 || $2 < 50000) { bad = 1 } END { exit bad }' ||
    fail "val uses digits that are not held out"
"$BIN/mkdigits" -N 2 --holdout 10000 --per-class 300 | "$BIN/totsv" -f source |
    awk 'NR > 1 && ($1 >= 50000 || $2 >= 50000) { bad = 1 } END { exit bad }' || fail "train --holdout uses held-out digits"
[ "$("$BIN/totsv" -f class "$t/val" | tail -n +2 | sort -u)" = "$("$BIN/totsv" -f class "$t/ts2" | tail -n +2 | sort -u)" ] ||
    fail "val's classes are not the seen classes"
"$BIN/mkdigits" -s val > /dev/null 2>&1 && fail "-s val without --holdout was accepted"
# a hold-out of the whole training set (or more) is misuse of --holdout: exit 2, like its range
misuse -N 2 -s val --holdout 70000
grep -q "only has\|has only" "$t/err" || fail "--holdout 70000: $(cat "$t/err")"

# --image-ids on .npz files of the generator's format made by numpy (ids_make in check.py): the
# streams are checked with the others below
echo "idsmake $MN $I" >"$t/idsmake"
"$PY" "$t/check.py" "$t/idsmake" || fail "making the .npz files"
for s in train test_seen test_unseen; do
    "$M" --image-ids "$I/dataset_mnist_2_hand_$s.npz" >"$I/$s.hs" 2>"$t/err" || fail "--image-ids $s: $(cat "$t/err")"
done
check ids "$MN" train "$I/train.hs" "$I/dataset_mnist_2_hand_train.npz"
check ids "$MN" test-seen "$I/test_seen.hs" "$I/dataset_mnist_2_hand_test_seen.npz" "$I/dataset_mnist_2_hand_train.npz"
check ids "$MN" test-unseen "$I/test_unseen.hs" "$I/dataset_mnist_2_hand_test_unseen.npz" "$I/dataset_mnist_2_hand_train.npz"
# the bare .npy of the same ids: the same records
"$M" --image-ids "$I/bare_test_seen.npy" >"$t/out" || fail "--image-ids bare .npy"
"$BIN/totsv" -f class,digits,source,id "$t/out" >"$t/a"
"$BIN/totsv" -f class,digits,source,id "$I/test_seen.hs" >"$t/b"
cmp -s "$t/a" "$t/b" || fail "the bare .npy gave other records than the .npz"
# no train file beside it: no seen_classes; --seen-from gives them
"$BIN/tshow" -H "$t/out" 2>&1 | grep -q '"seen_classes"' && fail "seen_classes without a train file"
"$M" --image-ids "$I/bare_test_seen.npy" --seen-from "$I/dataset_mnist_2_hand_train.npz" >"$t/out" ||
    fail "--seen-from"
"$BIN/tshow" -H "$t/out" 2>&1 | grep -q '"seen_classes"' || fail "--seen-from: no seen_classes"
badids 'image_ids\[1, 0, 1\] = .*its class 36 (chosen_numbers) needs a 6' --image-ids "$I/chosen_test.npz"
badids 'sample_per_number.npy says 5, but image_ids.npy has 4' --image-ids "$I/spn_test.npz"
badids 'without image_ids.npy' --image-ids "$I/noids_test.npz"
badids 'fortran_order is True' --image-ids "$I/fortran_test.npz"
badids "dtype '<f8' is not an integer type" --image-ids "$I/float_test.npz"
badids 'out of range (the MNIST t10k split has' --image-ids "$I/train_ids_test.npz"
badids 'truncated or corrupt zip' --image-ids "$I/trunc_test.npz"
badids 'CRC mismatch' --image-ids "$I/crc_test.npz"
badids 'crc_test.npz: image_ids.npy: CRC' --image-ids "$I/bare_test_seen.npy" --seen-from "$I/crc_test.npz"
"$PY" "$t/check.py" "$t/checks" || fail "stream checks"
echo "mkdigits: ok"
