#!/bin/sh
# tshow: lineage and header, record lines, -H, -n (stops without reading the rest), -q, -p
# (byte-identical pass-through), -i (a valid PNG / PGM of the right size), bad input.
# Input: mkdigits | occlude when they are built, else the synthetic fixture of test_batcher.
set -u
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

if [ -x "$BIN/mkdigits" ]; then
    if [ -x "$BIN/occlude" ]; then
        "$BIN/mkdigits" -N 2 -n 300 -s train | "$BIN/occlude" -p 0.2 >"$T/in" || fail "mkdigits | occlude"
        origin="mkdigits .* -> occlude .* -> batcher -n 5 -b 100"
    else
        "$BIN/mkdigits" -N 2 -n 300 -s train >"$T/in" || fail "mkdigits"
        origin="mkdigits .* -> batcher -n 5 -b 100"
    fi
else
    "$BIN/../tests/test_batcher" --fixture 10 30 >"$T/in" || fail "fixture"
    origin="test_batcher --fixture (seed 714) -> batcher -n 5 -b 100 (seed 714)"
fi
"$BIN/batcher" -n 5 -b 100 <"$T/in" >"$T/p" || fail "batcher"

# default: lineage, header, one line per record, "# N records"
"$BIN/tshow" "$T/p" >"$T/out" || fail "tshow exited $?"
[ "$(wc -l <"$T/out")" -eq 8 ] || fail "expected 8 lines, got: $(cat "$T/out")"
sed -n 1p "$T/out" | grep -q "^# $origin" || fail "lineage line: $(sed -n 1p "$T/out")"
sed -n 2p "$T/out" | grep -q '^{"format": "hedge-stream", "version": 1, "kind": "pairbatch", "batched": true' ||
    fail "header line: $(sed -n 2p "$T/out")"
sed -n 2p "$T/out" | grep -q '"input"' && fail "the short header shows the inputs"
sed -n 2p "$T/out" | grep -q '"batch": 100' || fail "header meta"
sed -n 3p "$T/out" | grep -q '^{"record": 0, "fields": {"image1": {"dtype": "uint8", "shape": \[100, 28, 56\], "min": 0, "max": 255, "mean": [0-9.]*, "first": \[[0-9, ]*\]}' ||
    fail "record line: $(sed -n 3p "$T/out")"
sed -n 3p "$T/out" | grep -q '"match": {"dtype": "uint8", "shape": \[100\], "min": 0, "max": 1, "mean": 0\.[0-9]*, "first": \[[01], [01], [01], [01], [01], [01], [01], [01]\]}}}$' ||
    fail "match field: $(sed -n 3p "$T/out")"
sed -n 8p "$T/out" | grep -qx '# 5 records' || fail "summary line: $(sed -n 8p "$T/out")"

# -H: the whole lineage as JSON, and nothing else
"$BIN/tshow" -H "$T/p" >"$T/out" || fail "tshow -H"
[ "$(wc -l <"$T/out")" -eq 1 ] || fail "-H printed more than one line"
v=$("$BIN/tshow" --version | sed 's/^tshow (hedge) //')
grep -qF '"program": "batcher", "args": ["-n", "5", "-b", "100"], "seed": 714, "hedge": "'"$v"'", "input": [{"format": "hedge-stream", "version": 1, "kind": "images"' "$T/out" ||
    fail "-H lineage: $(cat "$T/out")"
grep -q '"input": \[\]' "$T/out" || fail "-H does not reach the origin"

# -n: stops after N records without reading the rest (an endless writer ends), exit 0
( "$BIN/batcher" "$T/in"; echo $? >"$T/rc" ) | timeout 20 "$BIN/tshow" -n 3 >"$T/out" 2>"$T/err"
rc=$?
[ $rc = 0 ] && [ ! -s "$T/err" ] || fail "batcher | tshow -n 3: exit $rc $(cat "$T/err")"
[ "$(cat "$T/rc")" = 0 ] || fail "batcher upstream of tshow -n 3 exited $(cat "$T/rc")"
tail -n 1 "$T/out" | grep -qx '# 3 records (stopped by -n)' || fail "-n 3: $(tail -n 1 "$T/out")"
head -c 400000 "$T/p" | "$BIN/tshow" -n 1 >/dev/null 2>"$T/err" && [ ! -s "$T/err" ] ||
    fail "-n 1 on a stream cut after its first record complained: $(cat "$T/err")"

# -q: no record lines, the summary of every field
"$BIN/tshow" -q "$T/p" >"$T/out" || fail "tshow -q"
[ "$(wc -l <"$T/out")" -eq 4 ] || fail "-q: expected 4 lines, got $(cat "$T/out")"
sed -n 3p "$T/out" | grep -q '^{"records": 5, "fields": {"image1": {"dtype": "uint8", "shape": \[28, 56\], "count": 784000, "min": 0, "max": 255, "mean": ' ||
    fail "-q summary: $(sed -n 3p "$T/out")"
sed -n 3p "$T/out" | grep -q '"match": {"dtype": "uint8", "shape": \[\], "count": 500, "min": 0, "max": 1, "mean": 0\.' ||
    fail "-q summary of match: $(sed -n 3p "$T/out")"

# -p: the stream passes unchanged (images and batches), the report goes to stderr
for s in in p; do
    "$BIN/tshow" -p "$T/$s" >"$T/copy" 2>"$T/err" || fail "tshow -p $s"
    cmp "$T/$s" "$T/copy" || fail "tshow -p changed the stream $s"
    grep -q '^# .*records$' "$T/err" || fail "tshow -p: no report on stderr"
done
"$BIN/batcher" -n 3 "$T/in" | "$BIN/tshow" -p -q 2>/dev/null | "$BIN/tshow" -q | grep -qx '# 3 records' ||
    fail "tshow -p in the middle of a pipe"
"$BIN/tshow" -p -n 2 "$T/p" 2>/dev/null | "$BIN/tshow" -q | grep -qx '# 2 records' || fail "tshow -p -n 2"

# -i: PNG signature, IHDR size, and (python3's zlib at hand) chunk CRCs and the pixel rows
png_size() { # width and height from the IHDR chunk
    od -An -tu1 -j16 -N8 "$1" | awk '{ print $1*16777216 + $2*65536 + $3*256 + $4, $5*16777216 + $6*65536 + $7*256 + $8 }'
}
check_png() { # check_png FILE W H
    [ "$(od -An -tx1 -N8 "$1" | tr -d ' ')" = 89504e470d0a1a0a ] || fail "$1: no PNG signature"
    [ "$(png_size "$1")" = "$2 $3" ] || fail "$1: size $(png_size "$1"), expected $2 $3"
    if command -v python3 >/dev/null 2>&1; then
        python3 - "$1" "$2" "$3" <<'EOF' || fail "$1: not a valid PNG"
import struct, sys, zlib
data = open(sys.argv[1], "rb").read()
w, h = int(sys.argv[2]), int(sys.argv[3])
pos, idat, types = 8, b"", []
while pos < len(data):
    n, = struct.unpack(">I", data[pos:pos + 4])
    kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + n]
    crc, = struct.unpack(">I", data[pos + 8 + n:pos + 12 + n])
    assert zlib.crc32(kind + body) == crc, "bad CRC"
    types.append(kind)
    idat += body if kind == b"IDAT" else b""
    pos += 12 + n
assert types[0] == b"IHDR" and types[-1] == b"IEND", types
assert struct.unpack(">IIBB", data[16:26]) == (w, h, 8, 0), "not 8-bit grey"
assert len(zlib.decompress(idat)) == h * (w + 1), "wrong pixel data size"
EOF
    fi
}
"$BIN/tshow" -q -i "$T/sheet.png" "$T/in" >/dev/null || fail "tshow -i"
check_png "$T/sheet.png" 457 233    # 64 images 28 x 56, 8 per row, 1-pixel lines: 8*57+1, 8*29+1
"$BIN/tshow" -q -i "$T/pairs.png" -f image2 "$T/p" >/dev/null || fail "tshow -i -f image2"
check_png "$T/pairs.png" 457 233
"$BIN/tshow" -n 3 -i "$T/three.png" "$T/in" >/dev/null || fail "tshow -n 3 -i"
check_png "$T/three.png" 172 30     # 3 images in one row: 3*57+1, 29+1
"$BIN/tshow" -n 10 -i "$T/ten.pgm" "$T/in" >/dev/null || fail "tshow -i .pgm"
printf 'P5\n457 59\n255\n' >"$T/pgmhead"
head -c 14 "$T/ten.pgm" | cmp -s - "$T/pgmhead" || fail "PGM header"
[ "$(wc -c <"$T/ten.pgm")" -eq $((14 + 457 * 59)) ] || fail "PGM size"
# the sheet and stdout, all or nothing: -i is opened before any work, committed last
# (check_out_file is in tests/lib.sh, sourced in a subshell: it brings its own T and fail)
in=$T/in
( . "$(dirname "$0")/../lib.sh"
  CF_SUFFIX=.png check_out_file "$BIN/tshow" -q -n 3 -i @FILE@ "$in"
  CF_SUFFIX=.pgm check_out_file "$BIN/tshow" -p -q -n 3 -i @FILE@ "$in" ) || fail "tshow -i with stdout"
ln -s /dev/full "$T/full.png"
"$BIN/tshow" -p -q -n 3 -i "$T/full.png" "$T/in" >"$T/full.hs" 2>"$T/err" && fail "tshow -p -i (a link to) /dev/full succeeded"
grep -q 'cannot write /dev/full' "$T/err" || fail "tshow -i /dev/full: $(cat "$T/err")"
"$BIN/tshow" -q "$T/full.hs" >/dev/null 2>&1 && fail "tshow -p -i /dev/full left a whole stream on stdout"

# bad input: exit 1 with "tshow:"; misuse: exit 2, nothing on stdout
bad() { # bad STATUS WHAT COMMAND... (stdin from $T/stdin)
    want=$1 what=$2
    shift 2
    "$@" <"$T/stdin" >"$T/out" 2>"$T/err"
    rc=$?
    [ $rc = "$want" ] || fail "$what: exit $rc, expected $want"
    grep -q '^tshow: ' "$T/err" || fail "$what: message does not start with 'tshow:': $(cat "$T/err")"
    if [ "$want" = 2 ]; then [ -s "$T/out" ] && fail "$what: wrote to stdout"; fi
    return 0
}
echo "hello" >"$T/stdin"
bad 1 "not a stream" "$BIN/tshow"
head -c 300000 "$T/p" >"$T/stdin"
bad 1 "truncated stream" "$BIN/tshow" -q
grep -q 'truncated' "$T/err" || fail "truncated stream: $(cat "$T/err")"
bad 1 "truncated stream with -p" "$BIN/tshow" -p
cp "$T/p" "$T/stdin"
bad 1 "-i of a missing field" "$BIN/tshow" -i "$T/x.png" -f nosuch
bad 1 "-i of scalars" "$BIN/tshow" -i "$T/x.png" -f match
bad 2 "-i x.jpg" "$BIN/tshow" -i "$T/x.jpg"
bad 2 "-f without -i" "$BIN/tshow" -f image1
bad 2 "-n 0" "$BIN/tshow" -n 0
bad 2 "-H with -p" "$BIN/tshow" -H -p
bad 2 "unknown option" "$BIN/tshow" -Z
bad 2 "-m with -H" "$BIN/tshow" -m classes -H
# -m: one meta value; a tensor's every value (-H shows 16), one per line
if [ -x "$BIN/mkdigits" ]; then
    "$BIN/mkdigits" -N 2 -n 140 --per-class 2 -s train > "$T/m.hs" 2>/dev/null || fail "mkdigits for -m"
    "$BIN/tshow" -m classes "$T/m.hs" > "$T/mc" || fail "-m classes"
    [ "$(wc -l < "$T/mc")" = 70 ] && [ "$(sort -n "$T/mc" | uniq | wc -l)" = 70 ] || fail "-m classes: not the 70 seen classes: $(wc -l < "$T/mc") lines"
    [ "$("$BIN/tshow" -m classes "$T/m.hs" | head -n 16 | tr '\n' ,)" = "$("$BIN/tshow" -H "$T/m.hs" | jq -r '.meta.classes.values | map(tostring) | join(",")')," ] || fail "-m: not -H's first values"
    [ "$("$BIN/tshow" -m digits < "$T/m.hs")" = 2 ] || fail "-m digits: $("$BIN/tshow" -m digits < "$T/m.hs")"
    [ "$("$BIN/tshow" -m split < "$T/m.hs")" = train ] || fail "-m split"
    bad 1 "-m of no such key" "$BIN/tshow" -m nosuch "$T/m.hs"
fi
[ -e "$T/x.png" ] && fail "a failed -i left a file"
"$BIN/tshow" -h >"$T/out" 2>"$T/err" && grep -q '^usage: tshow' "$T/out" && [ ! -s "$T/err" ] || fail "-h"
echo "tshow: all checks passed"
