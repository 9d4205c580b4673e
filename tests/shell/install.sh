#!/bin/sh
# install: `make install PREFIX=/usr/local DESTDIR=$T/dest` puts the command hedge, the programs,
# the pipelines, the Python module and the man pages in place; the installed tree runs on its own
# (no build tree, no programs on PATH): hedge runs the programs as subcommands, a pipeline stage
# (the demo's first: hib-data.sh, the data) finds the installed programs, hedge help and
# --version answer; `make uninstall` then leaves no file behind.
. "$(dirname "$0")/../lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
D=$T/dest P=/usr/local
# the same build (BUILD, DATA and, under make, the same flags through MAKEFLAGS): nothing rebuilt
make -s -C "$ROOT" install BUILD="$BUILD" DATA="$DATA" PREFIX=$P DESTDIR="$D" > "$T/make.log" 2>&1 ||
    fail "make install: $(tail -n 5 "$T/make.log")"
H=$D$P/bin/hedge
[ -x "$H" ] || fail "no $P/bin/hedge"
for p in "$BIN"/*; do
    prog=$(basename "$p")
    [ -x "$D$P/lib/hedge/bin/$prog" ] || fail "$prog not installed in $P/lib/hedge/bin"
    [ -f "$D$P/share/man/man1/hedge-$prog.1" ] || fail "no man page hedge-$prog.1"
    [ -e "$D$P/bin/$prog" ] && fail "$prog installed on PATH: it would clash"
done
for f in share/man/man1/hedge.1 share/man/man5/hedge-stream.5 lib/hedge/python/hedge_stream.py \
    lib/hedge/pipelines/common.sh lib/hedge/pipelines/hib-data.sh; do
    [ -f "$D$P/$f" ] || fail "$P/$f not installed"
done

# the installed tree alone: a PATH without the build, no BUILD or HEDGE_ROOT
cd "$T" || fail "cd"
run() { env -u BUILD -u HEDGE_ROOT PATH=/usr/bin:/bin "$@"; }
run "$H" --version | grep -qx "hedge $(cat "$ROOT/VERSION").*" || fail "hedge --version: $(run "$H" --version 2>&1)"
run "$H" mkdigits -N 2 -s test-seen -n 200 | run "$H" occlude -p 1 > corrupt.hs || fail "hedge mkdigits | hedge occlude"
run "$H" tshow -q corrupt.hs | grep -q '"occluded"' || fail "the installed occlude wrote no occluded field"
run "$H" occlude --version | grep -q '^occlude (hedge) ' || fail "hedge occlude --version"
run "$H" help > help.txt || fail "hedge help"
grep -q '^  knn  *k-nearest' help.txt && grep -q 'hib-data' help.txt || fail "hedge help lists no programs or pipelines: $(head -n 20 help.txt)"
run "$H" no-such-program > out 2> err
[ $? = 2 ] && [ ! -s out ] && grep -q "^hedge: 'no-such-program' is neither" err || fail "hedge no-such-program: $(cat err)"
if command -v man > /dev/null; then
    MANPAGER=cat run "$H" help knn 2>&1 | grep -q 'leave-one-out' || fail "hedge help knn shows no man page"
fi
# one pipeline stage from the installed tree: the data of the demo, small
MKDIGITS_ARGS="-n 200" run "$H" hib-data 2 "$T/data" 2> "$T/hib.err" || fail "hedge hib-data: $(tail -n 5 "$T/hib.err")"
for f in train.hs test-clean.hs test-corrupt.hs unseen-corrupt.hs; do
    [ -s "$T/data/$f" ] || fail "hib-data from the installed tree made no $f"
done
run "$H" tshow -H "$T/data/test-corrupt.hs" | grep -q "\"program\": \"occlude\"" || fail "test-corrupt.hs not from occlude"
# the Python module from its installed place
if /usr/bin/python3 -c 'import msgpack, numpy' 2> /dev/null; then
    PYTHONPATH=$(run "$H" --python-path) /usr/bin/python3 -c '
import hedge_stream
h, f = hedge_stream.read("corrupt.hs")
assert h["kind"] == "images" and f["image"].shape[0] == 200' || fail "hedge_stream.py from $P/lib/hedge/python"
fi

make -s -C "$ROOT" uninstall BUILD="$BUILD" DATA="$DATA" PREFIX=$P DESTDIR="$D" > "$T/make.log" 2>&1 ||
    fail "make uninstall: $(tail -n 5 "$T/make.log")"
left=$(find "$D" ! -type d)
[ -z "$left" ] || fail "make uninstall left: $left"
[ -e "$D$P/lib/hedge" ] && fail "make uninstall left $P/lib/hedge"
pass
