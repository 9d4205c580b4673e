#!/bin/sh
# What a checkpoint carries across a resume and what a reader refuses in it (issue 19):
# non-finite parameters are refused by name (13); the lineage keeps the original command and
# records each resume apart, and every option that shapes the run is stored (14); the --log of
# a run killed with -9 and resumed equals that of an uninterrupted run (10). A run that trains no
# step writes nothing, and a resumed run never moves a checkpoint back (issue 34).
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

# --- 14: a resumed checkpoint keeps the command that started the run as its provenance, each
# resume on a line of its own (meta resumed), and the options that shape the run
batches | train -o p.ckpt --head mog -D 2 -n 20 -S 3 -t 1 --save-every 7 --snapshot-every 10 2>/dev/null || fail "train p"
orig=$(args p.ckpt)
[ "$orig" = '"-o", "p.ckpt", "--head", "mog", "-D", "2", "-n", "20", "-S", "3", "-t", "1", "--save-every", "7", "--snapshot-every", "10"' ] ||
    fail "provenance args of a fresh run: $orig"
[ "$(meta p.ckpt save_every)" = 7 ] && [ "$(meta p.ckpt snapshot_every)" = 10 ] || fail "--save-every, --snapshot-every not stored"
batches | train --resume p.ckpt -n 40 -t 1 2>/dev/null || fail "resume p"
[ "$(args p.ckpt)" = "$orig" ] || fail "a resume replaced the original command in the provenance: $(args p.ckpt)"
[ "$(meta p.ckpt resumed)" = '"step 20: --resume p.ckpt -n 40 -t 1"' ] || fail "meta resumed: $(meta p.ckpt resumed)"
[ "$(meta p.ckpt save_every)" = 7 ] && [ "$(meta p.ckpt snapshot_every)" = 10 ] || fail "the resumed run lost --save-every, --snapshot-every"
for st in 10 20 30 40; do
    [ -s p.step0000000$st.ckpt ] || fail "the resumed run kept no snapshot at step $st"
done
[ "$(args p.step000000030.ckpt)" = "$orig" ] || fail "a snapshot of the resumed run: $(args p.step000000030.ckpt)"
# a second resume adds its line; an option given on resume overrides the stored one
batches | train --resume p.ckpt -n 50 -t 1 --save-every 9 --log "it's.log" 2>/dev/null || fail "second resume"
[ "$(meta p.ckpt resumed)" = '"step 20: --resume p.ckpt -n 40 -t 1\u000astep 40: --resume p.ckpt -n 50 -t 1 --save-every 9 --log '"'it'\\\\''s.log'"'"' ] ||
    fail "meta resumed after two resumes: $(meta p.ckpt resumed)"
[ "$(meta p.ckpt save_every)" = 9 ] || fail "--save-every on resume did not override"
# the same training as one uninterrupted run (parameters and optimizer state)
batches | train -o q.ckpt --head mog -D 2 -n 50 -S 3 -t 1 2>/dev/null || fail "train q"
totsv p.ckpt > p.tsv && totsv q.ckpt > q.tsv && cmp -s p.tsv q.tsv || fail "20 + 20 + 10 steps differ from 50"
# defaults are not written (a run with the defaults keeps the checkpoint bytes of before)
[ -z "$(meta q.ckpt save_every)$(meta q.ckpt snapshot_every)$(meta q.ckpt resumed)" ] || fail "defaults written"

# --- 10: the log of a run killed with -9 after a checkpoint and resumed equals that of an
# uninterrupted run (but for its timings: images_per_s and seconds), header and all; the
# resumed run keeps --save-every: killed again after its next checkpoint, it resumes too
batcher -m pairs -b 16 -S 5 -n 200 < d.hs > all.hs || fail "batcher"
train -o u.ckpt --head mog -D 2 -n 200 -S 3 -t 1 --save-every 40 --log u.log < all.hs 2>/dev/null || fail "train u"
# firstN.hs: the first N batches of all.hs and no end, so that train waits for more
/usr/bin/python3 - <<'EOF' || fail "python3 could not cut all.hs"
import msgpack
objs = list(msgpack.Unpacker(open("all.hs", "rb"), raw=False, strict_map_key=False))
for n in (90, 130):
    with open("first%d.hs" % n, "wb") as f:
        for o in objs[:n + 1]:
            f.write(msgpack.packb(o, use_bin_type=True))
EOF
# killed CKPT STEP FEED ARGS...: train ARGS on a FIFO fed FEED (and then nothing, held open),
# killed with -9 once CKPT has reached STEP
killed() {
    ck=$1 want=$2 feed=$3; shift 3
    rm -f k.fifo && mkfifo k.fifo
    train "$@" < k.fifo 2> k.err &
    pid=$!
    { cat "$feed"; sleep 120; } > k.fifo &
    feeder=$!
    i=0
    while [ "$(meta "$ck" step 2>/dev/null)" != "$want" ]; do
        i=$((i + 1))
        [ $i -lt 600 ] || { kill $pid $feeder; fail "$ck never reached step $want: $(cat k.err)"; }
        sleep 0.1
    done
    kill -9 $pid
    wait $pid
    kill $feeder 2>/dev/null
    wait $feeder 2>/dev/null
    return 0
}
killed k.ckpt 80 first90.hs -o k.ckpt --head mog -D 2 -n 200 -S 3 -t 1 --save-every 40 --log k.log
[ "$(head -n 1 k.log)" = "$(head -n 1 u.log)" ] || fail "the log of a run killed after its checkpoint lost its header: $(cat k.log)"
grep -q '^50	' k.log || fail "the log of a run killed after its checkpoint at step 80 lost the line of step 50: $(cat k.log)"
killed k.ckpt 120 first130.hs --resume k.ckpt -t 1 --log k.log
train --resume k.ckpt -t 1 --log k.log < all.hs 2>/dev/null || fail "resume k"
cut -f 1-7,10- u.log > u.cols && cut -f 1-7,10- k.log > k.cols
cmp -s u.cols k.cols || fail "the log of a killed and resumed run differs from an uninterrupted run's: $(diff u.cols k.cols | head -n 8)"
[ "$(wc -l < k.log)" = 5 ] || fail "the log has $(wc -l < k.log) lines, expected 5: $(cat k.log)"
totsv u.ckpt > u.tsv && totsv k.ckpt > k.tsv && cmp -s u.tsv k.tsv || fail "killed and resumed twice: other weights"
# a log that ran ahead of the checkpoint (resumed from an earlier snapshot) is cut back to it
train -o v.ckpt --head mog -D 2 -n 200 -S 3 -t 1 --snapshot-every 60 --log v.log < all.hs 2>/dev/null || fail "train v"
printf '170\t0.5' >> v.log   # and a line cut short by a kill
train --resume v.step000000060.ckpt -o w.ckpt -t 1 --log v.log < all.hs 2>/dev/null || fail "resume from a snapshot"
cut -f 1-7,10- v.log > v.cols
cmp -s u.cols v.cols || fail "a log resumed from an earlier step was not cut back: $(diff u.cols v.cols | head -n 8)"

# --- issue 34: a run that trains no step writes nothing, and a resumed run never moves a
# checkpoint back. An input that fails before the first step (the header, then a cut record: an
# upstream batcher that died) or ends without a batch leaves the checkpoint and its log as they
# were and exits 1; so does a resumed run whose input fails right after the batches it skips.
train -o c.ckpt --head mog -D 2 -n 20 -S 3 -t 1 --snapshot-every 10 --log c.log < all.hs 2>/dev/null || fail "train c"
cp c.ckpt c20.ckpt && cp c.log c20.log
# cutN.hs: the header, N batches and 100 bytes of the next; none.hs: the header and the end
# marker; prints the header's length
hlen=$(/usr/bin/python3 -c '
import msgpack
data = open("all.hs", "rb").read()
u = msgpack.Unpacker(raw=False, strict_map_key=False, max_buffer_size=len(data) + 1)
u.feed(data)
ends = []
for o in u:
    ends.append(u.tell())
for n in (5, 20):
    open("cut%d.hs" % n, "wb").write(data[:ends[n] + 100])
open("none.hs", "wb").write(data[:ends[0]] + msgpack.packb({"end": 0}))
print(ends[0])') || fail "python3 could not cut all.hs"
unchanged() { cmp -s c.ckpt c20.ckpt && cmp -s c.log c20.log || fail "$1: c.ckpt or c.log was changed"; }
expect_fail 1 "no step trained: c.ckpt left as it was" \
    sh -c "head -c $((hlen + 100)) all.hs | train -o c.ckpt --head mog -D 2 -n 20 -S 3 -t 1 --log c.log"
grep -q "truncated stream" "$T/err" && ! grep -q "saved the state" "$T/err" || fail "a cut input: $(cat "$T/err")"
unchanged "a new run on a cut input"
expect_fail 1 "no step trained: c.ckpt left as it was" train -o c.ckpt --head mog -D 2 -n 20 -S 3 -t 1 --log c.log < none.hs
grep -q "input ended before the first step" "$T/err" || fail "an input without a batch: $(cat "$T/err")"
unchanged "a new run on an input without a batch"
expect_fail 1 "no step trained" sh -c "head -c $((hlen + 100)) all.hs | train -o new.ckpt --head mog -D 2 -n 20 -t 1"
[ -e new.ckpt ] && fail "a run that trained no step wrote new.ckpt"
expect_fail 1 "no step trained: c.ckpt left as it was" train --resume c.ckpt -n 40 -t 1 --log c.log < cut20.hs
unchanged "a resumed run whose input fails after the batches it skips"
# a resumed run at its last step has nothing to train: exit 0, nothing written
expect_fail 0 "nothing to train" train --resume c.ckpt -t 1 --log c.log < all.hs
unchanged "a resumed run with nothing to train"
# a new run of no steps is misuse
expect_fail 2 "a new run trains at least one step" train -o c.ckpt --head mog -D 2 -n 0 -t 1 < all.hs
unchanged "train -n 0"
# a run that failed after 5 steps saves them
expect_fail 1 "saved the state after step 5 to five.ckpt" train -o five.ckpt --head mog -D 2 -n 20 -S 3 -t 1 < cut5.hs
[ "$(meta five.ckpt step)" = 5 ] || fail "the state saved after 5 steps is at step $(meta five.ckpt step)"
# resumed from an earlier snapshot, a run does not write over a checkpoint at a later step: it
# is refused before any work; into a checkpoint at its step or before, or a new file, it goes on
expect_fail 1 "c.ckpt is at step 20, past step 10" train --resume c.step000000010.ckpt -o c.ckpt -t 1 --log c.log < all.hs
unchanged "resumed from step 10 into c.ckpt at step 20"
cp c.step000000010.ckpt ten.ckpt
train --resume c.step000000010.ckpt -o ten.ckpt -n 12 -t 1 < all.hs 2>/dev/null || fail "resume into a checkpoint at its step"
[ "$(meta ten.ckpt step)" = 12 ] || fail "resumed into ten.ckpt: step $(meta ten.ckpt step)"
# a file at -o that is not a stream is refused (and kept); a link to /dev/null is only written
echo 'not a checkpoint' > junk.ckpt && cp junk.ckpt junk.orig
expect_fail 1 "junk.ckpt: not a hedge stream" train --resume c.step000000010.ckpt -o junk.ckpt -n 12 -t 1 < all.hs
cmp -s junk.ckpt junk.orig || fail "a resumed run changed junk.ckpt"
ln -s /dev/null null.ckpt
train --resume c.step000000010.ckpt -o null.ckpt -n 12 -t 1 < all.hs 2>/dev/null || fail "resume into a link to /dev/null"
[ -c /dev/null ] && [ -L null.ckpt ] || fail "/dev/null or the link to it was replaced"
pass
