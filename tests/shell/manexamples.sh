#!/bin/sh
# manexamples: every program in build/bin has a man page, man/PROG.1.scd, with an EXAMPLES
# section, and its examples work as written (as jq runs its manual's examples): the code blocks of
# EXAMPLES, in order, run with sh -e in a fresh directory per page, the programs on PATH, on small
# data they make themselves. A page's later blocks may use the files of its earlier ones.
. "$(dirname "$0")/../lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
export HEDGE_MNIST=${HEDGE_MNIST:-$DATA/mnist}
# the code blocks (``` ... ```) of the section EXAMPLES of an scdoc page, as one script
examples() {
    awk '!code && /^# / { ex = ($0 == "# EXAMPLES") } ex && /^```/ { code = !code; next } ex && code' "$1"
}
for p in "$BIN"/*; do
    [ -x "$p" ] && [ -f "$p" ] || continue
    prog=$(basename "$p")
    [ -f "$ROOT/man/$prog.1.scd" ] || fail "$prog has no man page man/$prog.1.scd"
done
for page in "$ROOT"/man/hedge.1.scd "$ROOT"/man/stream.5.scd; do
    [ -f "$page" ] || fail "no $page"
done
# the command hedge (bin/hedge.sh) for hedge(1), running this build's programs
mkdir "$T/hbin" && ln -s "$ROOT/bin/hedge.sh" "$T/hbin/hedge" || fail "hedge on PATH"
export BUILD
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
n=0
for page in "$ROOT"/man/*.scd; do
    name=$(basename "$page" .scd)
    examples "$page" > "$T/$name.sh"
    [ -s "$T/$name.sh" ] || fail "$name: no examples (a code block under # EXAMPLES)"
    mkdir "$T/$name"
    (cd "$T/$name" && PATH="$BIN:$T/hbin:/usr/bin:/bin" timeout 300 sh -e "$T/$name.sh" > out 2> err) ||
        fail "the examples of man/$name.scd fail: $(tail -n 5 "$T/$name/err")"
    n=$((n + 1))
done
echo "$n pages, their examples run"
pass
