#!/bin/sh
# batcher: HIB pair batches (match fraction, match field, images from the input), epochs, P x K
# batches, episodes (n classes x S support + Q queries), determinism, -n, the endless mode stopped
# by its reader, and bad input.
# Input: mkdigits | occlude when they are built, else the synthetic fixture of test_batcher.
# The pixel-level checks are done by build/tests/test_batcher --check-* (tests/unit/test_batcher.c).
set -u
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
CHECK=$BIN/../tests/test_batcher
fail() { echo "FAIL: $*" >&2; exit 1; }
[ -x "$CHECK" ] || fail "$CHECK is not built"

if [ -x "$BIN/mkdigits" ]; then
    if [ -x "$BIN/occlude" ]; then
        "$BIN/mkdigits" -N 2 -n 3000 -s train | "$BIN/occlude" -p 0.2 >"$T/in" || fail "mkdigits | occlude"
    else
        "$BIN/mkdigits" -N 2 -n 3000 -s train >"$T/in" || fail "mkdigits"
    fi
    echo "input: mkdigits"
    big_classes=1 # every class has at least 10 images (the default S + Q)
else
    "$CHECK" --fixture 20 30 >"$T/in" || fail "fixture"
    echo "input: synthetic fixture (mkdigits is not built)"
    big_classes=0
fi

# pairs: >= 50 batches, every image from the input, match == (class1 == class2), match fraction
"$BIN/batcher" -n 60 "$T/in" >"$T/p1" || fail "batcher -n 60 exited $?"
"$CHECK" --check-pairs "$T/in" <"$T/p1" || fail "pair batches"

# -n N gives exactly N batches and a trailer
"$BIN/tshow" -q "$T/p1" | grep -qx '# 60 records' || fail "-n 60 did not give 60 batches"
"$BIN/batcher" -n 1 -b 7 <"$T/in" | "$BIN/tshow" | grep -q '"shape": \[7, 28, ' || fail "-b 7"

# same seed, same bytes; another seed, other bytes
"$BIN/batcher" -n 60 "$T/in" | cmp -s - "$T/p1" || fail "same seed gave different bytes"
"$BIN/batcher" -n 60 -S 715 "$T/in" >"$T/p2" || fail "batcher -S 715"
# (the records, not just the header that records -S)
"$BIN/tshow" "$T/p1" | grep '^{"record"' >"$T/r1"
"$BIN/tshow" "$T/p2" | grep '^{"record"' >"$T/r2"
[ -s "$T/r1" ] || fail "tshow printed no records"
cmp -s "$T/r1" "$T/r2" && fail "seeds 714 and 715 gave the same batches"
"$BIN/batcher" -m pk -n 5 "$T/in" >"$T/k1" && "$BIN/batcher" -m pk -n 5 "$T/in" | cmp -s - "$T/k1" ||
    fail "pk: same seed gave different bytes"

# epochs: each input image exactly once as image1 per epoch, the last batch short
"$BIN/batcher" -e 2 -b 100 "$T/in" >"$T/e" || fail "batcher -e 2"
"$CHECK" --check-epochs "$T/in" 2 100 <"$T/e" || fail "epochs"

# P x K: exactly P distinct classes x K images; each class once per cycle
"$BIN/batcher" -m pk -P 6 -K 4 -e 3 "$T/in" | "$CHECK" --check-pk "$T/in" 6 4 || fail "pk 6 x 4"
"$BIN/batcher" -m pk -n 12 "$T/in" | "$CHECK" --check-pk "$T/in" 12 4 || fail "pk 12 x 4 (default)"
"$BIN/batcher" -m pk -P 3 -K 40 -n 4 "$T/in" | "$CHECK" --check-pk "$T/in" 3 40 || fail "pk 3 x 40"

# classes of 1 and 2 images (the fixture): image2 is image1 only for the class of 1; pk repeats
# images only in classes smaller than K
"$CHECK" --fixture 12 20 >"$T/fix" || fail "fixture"
"$BIN/batcher" -n 50 -b 64 "$T/fix" 2>"$T/err" | "$CHECK" --check-pairs "$T/fix" || fail "pairs with tiny classes"
# one warning each, before the batches: the class of 1 pairs with itself; classes below K repeat
[ "$(wc -l <"$T/err")" = 1 ] && grep -q '^batcher: 1 of 12 classes have fewer than 2 images (class [0-9]* has 1): their matching pairs are an image with itself' "$T/err" ||
    fail "pairs with a class of 1: not one warning: $(cat "$T/err")"
"$BIN/batcher" -m pk -P 5 -K 6 -e 4 "$T/fix" 2>"$T/err" | "$CHECK" --check-pk "$T/fix" 5 6 || fail "pk with tiny classes"
[ "$(wc -l <"$T/err")" = 1 ] && grep -q '^batcher: 2 of 12 classes have fewer than K = 6 images (class [0-9]* has 1): their groups repeat' "$T/err" ||
    fail "pk with classes below K: not one warning: $(cat "$T/err")"
"$BIN/batcher" -m pk -P 12 -K 25 -n 2 "$T/fix" | "$CHECK" --check-pk "$T/fix" 12 25 || fail "pk, every class < K"

# episodes: kind, fields and meta; one record per episode of n x (S + Q) images
"$BIN/batcher" -m episodes -c 4 -s 2 -q 3 -n 3 "$T/in" >"$T/ep1" 2>"$T/err" || fail "batcher -m episodes"
"$BIN/tshow" "$T/ep1" >"$T/eps" || fail "tshow of an episodes stream"
grep -q '"kind": "episodes", "batched": true' "$T/eps" || fail "episodes: kind, batched: $(head -c 300 "$T/eps")"
grep -qF '"fields": [{"name": "image", "dtype": "uint8", "shape": [28, 56]}, {"name": "class", "dtype": "int32", "shape": []}, {"name": "query", "dtype": "uint8", "shape": []}]' "$T/eps" ||
    fail "episodes: fields"
grep -q '"meta": {"digits": 2, .*"ways": 4, "shots": 2, "queries": 3}' "$T/eps" || fail "episodes: meta"
[ "$(grep -c '^{"record": .*"image": {"dtype": "uint8", "shape": \[20, 28, 56\]' "$T/eps")" = 3 ] ||
    fail "episodes: not 3 records of 4 x (2 + 3) = 20 images"
grep -qx '# 3 records' "$T/eps" || fail "episodes: -n 3 did not give 3 episodes and a trailer"
[ $big_classes = 1 ] && [ -s "$T/err" ] && fail "episodes: a warning with no small class: $(cat "$T/err")"
# the layout, classes and repeats (test_batcher --check-episodes); all classes by default, in
# class order; -e: epochs of ceil(images / (n (S + Q))) episodes with all classes, else cycles
"$BIN/batcher" -m episodes -n 4 "$T/in" 2>/dev/null | "$CHECK" --check-episodes "$T/in" 0 5 5 0 ||
    fail "episodes of all classes"
"$BIN/batcher" -m episodes -e 2 "$T/in" 2>/dev/null | "$CHECK" --check-episodes "$T/in" 0 5 5 2 ||
    fail "episodes of all classes, -e 2"
"$BIN/batcher" -m episodes -c 6 -s 2 -q 3 -e 3 "$T/in" 2>/dev/null | "$CHECK" --check-episodes "$T/in" 6 2 3 3 ||
    fail "episodes 6 x (2 + 3), -e 3"
"$BIN/batcher" -m episodes -c 2 -s 1 -q 1 -n 25 "$T/in" 2>/dev/null | "$CHECK" --check-episodes "$T/in" 2 1 1 0 ||
    fail "episodes 2 x (1 + 1)"
# same seed, same bytes; another seed, other episodes
"$BIN/batcher" -m episodes -c 4 -s 2 -q 3 -n 3 "$T/in" 2>/dev/null | cmp -s - "$T/ep1" ||
    fail "episodes: same seed gave different bytes"
"$BIN/batcher" -m episodes -n 2 "$T/in" >"$T/ea" 2>/dev/null && "$BIN/batcher" -m episodes -n 2 "$T/in" 2>/dev/null |
    cmp -s - "$T/ea" || fail "episodes of all classes: same seed gave different bytes"
"$BIN/batcher" -m episodes -c 4 -s 2 -q 3 -n 3 -S 715 "$T/in" 2>/dev/null | "$BIN/tshow" | grep '^{"record"' >"$T/r2"
grep '^{"record"' "$T/eps" >"$T/r1"
cmp -s "$T/r1" "$T/r2" && fail "episodes: seeds 714 and 715 gave the same episodes"
# classes smaller than S + Q (the fixture's of 1 and 2 images): repeats, and one warning
"$BIN/batcher" -m episodes -c 5 -s 4 -q 6 -e 4 "$T/fix" 2>"$T/err" | "$CHECK" --check-episodes "$T/fix" 5 4 6 4 ||
    fail "episodes with tiny classes"
[ "$(wc -l <"$T/err")" = 1 ] && grep -q '^batcher: 2 of 12 classes have fewer than S + Q = 10 images' "$T/err" ||
    fail "episodes with tiny classes: not one warning: $(cat "$T/err")"
"$BIN/batcher" -m episodes -s 20 -q 20 -n 2 "$T/fix" 2>/dev/null | "$CHECK" --check-episodes "$T/fix" 0 20 20 0 ||
    fail "episodes, every class < S + Q"
# other image shapes: mkshapes' [3, 64, 64] colour images
if [ -x "$BIN/mkshapes" ]; then
    "$BIN/mkshapes" -n 200 >"$T/shapes" || fail "mkshapes"
    "$BIN/batcher" -m episodes -s 3 -q 2 -n 2 "$T/shapes" >"$T/eshapes" || fail "episodes of mkshapes images"
    "$BIN/tshow" "$T/eshapes" | grep -q '"image": {"dtype": "uint8", "shape": \[20, 3, 64, 64\]' ||
        fail "episodes of mkshapes images: not 4 x (3 + 2) images [3, 64, 64]"
    "$CHECK" --check-episodes "$T/shapes" 0 3 2 0 <"$T/eshapes" || fail "episodes of mkshapes images"
fi

# endless: stops when the reader goes away, exit 0 and not a word
( "$BIN/batcher" "$T/in" 2>"$T/err"; echo $? >"$T/rc" ) | head -c 100000 >/dev/null
[ "$(cat "$T/rc")" = 0 ] || fail "endless batcher | head exited $(cat "$T/rc")"
[ -s "$T/err" ] && fail "endless batcher | head wrote: $(cat "$T/err")"
( "$BIN/batcher" -m pk "$T/in" 2>"$T/err"; echo $? >"$T/rc" ) | "$BIN/tshow" -n 3 >/dev/null
[ "$(cat "$T/rc")" = 0 ] && [ ! -s "$T/err" ] || fail "endless pk batcher | tshow -n 3"
( timeout 120 "$BIN/batcher" -m episodes -c 3 "$T/in" 2>"$T/err"; echo $? >"$T/rc" ) | "$BIN/tshow" -n 3 >/dev/null
[ "$(cat "$T/rc")" = 0 ] && { [ $big_classes = 0 ] || [ ! -s "$T/err" ]; } || fail "endless episodes batcher | tshow -n 3"

# bad data: exit 1, a message starting with "batcher:", nothing but what was written before
expect_fail() { # expect_fail STATUS WHAT COMMAND...: runs COMMAND (stdin from $T/stdin)
    want=$1 what=$2
    shift 2
    "$@" <"$T/stdin" >"$T/out" 2>"$T/err"
    rc=$?
    [ $rc = "$want" ] || fail "$what: exit $rc, expected $want ($(cat "$T/err"))"
    grep -q '^batcher: ' "$T/err" || fail "$what: message does not start with 'batcher:': $(cat "$T/err")"
    if [ "$want" = 2 ]; then [ -s "$T/out" ] && fail "$what: wrote to stdout"; fi
    return 0
}
cp "$T/p1" "$T/stdin"
expect_fail 1 "wrong kind" "$BIN/batcher" -n 1
grep -q "expected a stream of kind 'images'" "$T/err" || fail "wrong kind: $(cat "$T/err")"
head -c 50000 "$T/in" >"$T/stdin"
expect_fail 1 "truncated input" "$BIN/batcher" -n 1
grep -q "truncated" "$T/err" || fail "truncated input: $(cat "$T/err")"
echo "not a stream" >"$T/stdin"
expect_fail 1 "garbage input" "$BIN/batcher" -n 1
: >"$T/stdin"
expect_fail 1 "empty input" "$BIN/batcher" -n 1
expect_fail 1 "missing file" "$BIN/batcher" -n 1 "$T/nonexistent"
cp "$T/in" "$T/stdin"
expect_fail 1 "-P larger than the number of classes" "$BIN/batcher" -m pk -P 1000 -n 1
[ -s "$T/out" ] && fail "-P 1000: wrote a stream header before refusing"
expect_fail 2 "unknown mode" "$BIN/batcher" -m triples
expect_fail 2 "-b 0" "$BIN/batcher" -b 0
expect_fail 2 "-b x" "$BIN/batcher" -b x
expect_fail 2 "-n -3" "$BIN/batcher" -n -3
expect_fail 2 "-S -1" "$BIN/batcher" -S -1
expect_fail 2 "unknown option" "$BIN/batcher" -Z
expect_fail 2 "two inputs" "$BIN/batcher" "$T/in" "$T/in"
# an option of the other mode would be silently ignored
expect_fail 2 "-P with -m pairs" "$BIN/batcher" -P 4 -n 1
expect_fail 2 "-K with -m pairs" "$BIN/batcher" -m pairs -K 2 -n 1
expect_fail 2 "-b with -m pk" "$BIN/batcher" -b 64 -m pk -n 1
expect_fail 2 "-b with -m episodes" "$BIN/batcher" -m episodes -b 64 -n 1
expect_fail 2 "-P with -m episodes" "$BIN/batcher" -m episodes -P 4 -n 1
expect_fail 2 "-K with -m episodes" "$BIN/batcher" -K 4 -m episodes -n 1
expect_fail 2 "-c with -m pairs" "$BIN/batcher" -c 4 -n 1
expect_fail 2 "-s with -m pk" "$BIN/batcher" -m pk -s 3 -n 1
expect_fail 2 "-q with -m pairs" "$BIN/batcher" -m pairs -q 3 -n 1
expect_fail 2 "-c 1" "$BIN/batcher" -m episodes -c 1 -n 1
expect_fail 2 "-s 0" "$BIN/batcher" -m episodes -s 0 -n 1
expect_fail 2 "-q x" "$BIN/batcher" -m episodes -q x -n 1
expect_fail 1 "-c larger than the number of classes" "$BIN/batcher" -m episodes -c 1000 -n 1
grep -q 'classes, -c 1000 needs at least that many' "$T/err" || fail "-c 1000: $(cat "$T/err")"
"$CHECK" --fixture 1 5 >"$T/stdin" || fail "fixture of one class"
expect_fail 1 "episodes of an input of one class" "$BIN/batcher" -m episodes -n 1
grep -q 'an episode needs at least 2' "$T/err" || fail "one class: $(cat "$T/err")"
expect_fail 1 "pairs of an input of one class" "$BIN/batcher" -n 1
grep -q 'the input has 1 class; pairs need at least 2 (every pair would match)' "$T/err" &&
    [ ! -s "$T/out" ] || fail "pairs of one class: $(cat "$T/err"), $(wc -c <"$T/out") bytes out"
expect_fail 1 "pk of an input of one class" "$BIN/batcher" -m pk -P 2 -n 1
grep -q 'the input has 1 class, -P 2 needs' "$T/err" || fail "pk of one class: $(cat "$T/err")"
"$BIN/batcher" -h >"$T/out" 2>"$T/err" && grep -q '^usage: batcher' "$T/out" && [ ! -s "$T/err" ] ||
    fail "-h"
echo "batcher: all checks passed"
