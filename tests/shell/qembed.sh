#!/bin/sh
# qembed --classes trusts only a whole stream of the model's N-digit numbers (issue 19, defect 7:
# a stream cut after its header, a stream of another kind, the classes of a 1-digit set or of the
# L-shapes were embedded as 2-digit strings, exit 0). The good path is in cesoftmax.sh.
set -u
. "$(dirname "$0")/../lib.sh"
cd "$T"
mkdigits -N 2 -s train -n 2000 > train.hs || fail "mkdigits train"
batcher -m pk -P 8 -K 2 -n 3 < train.hs | train -o c.ckpt --loss cesoftmax -D 4 -n 3 -t 1 2>/dev/null ||
    fail "train cesoftmax"
mkdigits -N 2 -s test-unseen -n 300 > unseen.hs || fail "mkdigits unseen"
qembed -m c.ckpt --classes unseen.hs > q.hs || fail "qembed --classes"
[ "$(tshow -q q.hs | tail -n 1)" = "# 3 records" ] || fail "qembed --classes: $(tshow -q q.hs | tail -n 1), not the 3 classes"
# an embeddings stream of the split, and stdin, give the same queries
embed -m c.ckpt < unseen.hs > e.hs || fail "embed"
totsv q.hs > q.tsv || fail "totsv"
qembed -m c.ckpt --classes e.hs | totsv | cmp -s - q.tsv || fail "--classes from the embeddings: other queries"
qembed -m c.ckpt --classes < unseen.hs | totsv | cmp -s - q.tsv || fail "--classes from stdin: other queries"

# cut short: right after its header (30 and 60 records of one size: the header is 2 x 30 - 60
# records' bytes minus the trailer {"end": n}, 6 bytes), and in the middle of a record: refused
mkdigits -N 2 -s test-unseen --per-class 1 -n 30 > u30.hs || fail "mkdigits 30"
mkdigits -N 2 -s test-unseen --per-class 2 -n 60 > u60.hs || fail "mkdigits 60"
s30=$(wc -c < u30.hs) s60=$(wc -c < u60.hs)
head -c $((2 * s30 - s60 - 6)) u30.hs > header-only.hs
tshow -H header-only.hs > ho.json && tshow -H u30.hs | cmp -s - ho.json || fail "header-only.hs is not its whole header"
tshow -q header-only.hs > /dev/null 2> tshow.err && fail "tshow reads header-only.hs as whole"
grep -q 'no end marker after 0 records' tshow.err || fail "header-only.hs: $(cat tshow.err)"
expect_fail 1 "qembed: header-only.hs: truncated stream" qembed -m c.ckpt --classes header-only.hs
head -c $((s30 - 100)) u30.hs > cut.hs
expect_fail 1 "qembed: cut.hs: truncated stream" qembed -m c.ckpt --classes cut.hs
expect_fail 1 "qembed: stdin: truncated stream" sh -c 'qembed -m c.ckpt --classes < header-only.hs'
# another kind, whose meta still lists the classes (knn passes the input's meta on)
knn -k 1 < e.hs > k.hs || fail "knn"
tshow -H k.hs | grep -q '"classes"' || fail "knn's header lost the classes"
expect_fail 1 "k.hs: expected a stream of kind 'images', 'embeddings' or 'eta' (a split of N-digit MNIST), got 'knn'" \
    qembed -m c.ckpt --classes k.hs
# the classes of a 1-digit set (0..9, which would pass as 00..09) and of the L-shapes
mkdigits -N 1 -s test-seen -n 1000 > one.hs || fail "mkdigits -N 1"
expect_fail 1 "one.hs: a set of 1-digit numbers (meta digits), the model c.ckpt embeds 2-digit numbers" \
    qembed -m c.ckpt --classes one.hs
mkshapes -n 64 > shapes.hs || fail "mkshapes"
expect_fail 1 "shapes.hs: no meta 'digits' (dataset lshapes): its classes are not N-digit numbers" \
    qembed -m c.ckpt --classes shapes.hs
pass
