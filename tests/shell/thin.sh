#!/bin/sh
# thin: the programs stay thin (issue 22, STYLE.md "A program is thin"): no main over 150 lines,
# no bin/*.c over 400; one parallel-for (threads are made in lib/base/par.c only, and in embed's
# read-ahead); one JSON writer (no program or lib file prints JSON by hand: lib/base/json.c does).
. "$(dirname "$0")/../lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || fail "no tree"
n=0
for f in bin/*.c; do
    n=$((n + 1))
    lines=$(wc -l < "$f")
    [ "$lines" -le 400 ] || fail "$f is $lines lines (at most 400: move what is reusable to lib/)"
    # main: from "int main(" to the first line that is only "}"
    m=$(awk '/^int main\(/ { s = NR } s && /^}/ { print NR - s + 1; exit }' "$f")
    [ -n "$m" ] || fail "$f: no 'int main(' at the start of a line"
    [ "$m" -le 150 ] || fail "$f: main is $m lines (at most 150: options, open, loop over the library, close)"
done
[ "$n" -ge 21 ] || fail "only $n programs in bin/"
t=$(grep -l 'pthread_create' bin/*.c lib/*/*.c | grep -vx 'lib/base/par.c\|bin/embed.c')
[ -z "$t" ] || fail "threads made outside lib/base/par.c (use par_run/par_for): $t"
j=$(grep -ln 'printf([^;]*\\"[a-z_0-9]*\\": \|metrics_json_num' bin/*.c lib/*/*.c | grep -vx 'lib/base/json.c')
[ -z "$j" ] || fail "JSON printed by hand (use lib/base/json.h): $j"
echo "thin: $n programs, every main <= 150 lines, every file <= 400"
pass
