#!/bin/sh
# layers: the README's picture of lib/ ("How it is built": rows of modules, "a module uses only
# those of its row and the rows below it") stays true (issue 36). Reads the picture from README.md
# and every `#include "..."` of lib/*.c and lib/*.h, and fails naming the file and the include
# when a module includes one of a higher row or one the picture does not list; also when a module
# of lib/ is missing from the picture or the picture lists one lib/ does not have. Then the checker
# is run on breaches planted in a copy of the tree (a bad include, an unlisted module, ...) and
# must name each, so that it is seen to fail.
#
# The picture: the lines of the code block under "## How it is built" after the one ending in
# "lib/"; a row starts with its name at the second column, indented lines continue it. A module
# is a word outside parentheses, or one of the comma-separated single words of a "(+ a, b, ...)"
# (any other parenthesised text, and any item of more than one word, describes). The module of a
# file is its name without .c or .h (lib/body_conv.c is body_conv).
. "$(dirname "$0")/../lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)

# layers DIR: one line per breach in DIR (README.md, lib/), nothing when there is none
layers() {
    awk '
    /^## How it is built/ { sec = 1; next }
    sec && /^```/ { if (blk) exit; blk = 1; next }
    blk && / lib\/$/ { lib = 1; next }
    lib && /^ [a-z]/ { n++; name[n] = $1; line = $0; sub(/^ [a-z]+/, "", line); text[n] = line; next }
    lib && /^  / { text[n] = text[n] " " $0 }
    END {
        if (!n) { print "README.md: no picture of lib/ in \"How it is built\""; exit }
        for (r = 1; r <= n; r++) {
            t = text[r]
            while (match(t, /\([^)]*\)/)) {
                in_ = substr(t, RSTART + 1, RLENGTH - 2)
                t = substr(t, 1, RSTART - 1) " " substr(t, RSTART + RLENGTH)
                if (in_ !~ /^\+/)
                    continue
                k = split(substr(in_, 2), item, ",")
                for (i = 1; i <= k; i++) {
                    gsub(/^ +| +$/, "", item[i])
                    if (item[i] ~ /^[a-z0-9_]+$/)
                        print "M", item[i], r, name[r]
                }
            }
            k = split(t, w, " ")
            for (i = 1; i <= k; i++)
                print (w[i] ~ /^[a-z0-9_]+$/ ? "M" : "W"), w[i], r, name[r]
        }
    }' "$1/README.md" > "$T/picture"
    ls "$1"/lib/*.c "$1"/lib/*.h | sed 's|.*/lib/|F lib/|' > "$T/files"
    (cd "$1" && grep -H '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' lib/*.c lib/*.h) |
        sed 's/^\([^:]*\):[^"]*"\([^"]*\)".*/I \1 \2/' > "$T/includes"
    cat "$T/picture" "$T/files" "$T/includes" | awk '
    function module(f) { sub(/.*\//, "", f); sub(/\.[ch]$/, "", f); return f }
    $1 == "W" { print "README.md: the picture'"'"'s row " $4 " has \"" $2 "\", not a module name"; next }
    $1 == "M" { if ($2 in row) print "README.md: the picture lists " $2 " twice"
                row[$2] = $3; rname[$2] = $4; next }
    $1 == "F" { m = module($2); if (!(m in row) && !(m in told)) print $2 ": module " m " is not in the README'"'"'s picture of lib/"
                told[m] = 1; have[m] = 1; next }
    $1 == "I" { m = module($2); inc = $3; u = inc; sub(/\.h$/, "", u)
                if (!(u in row) || u ~ /[.\/]/) { print $2 ": #include \"" inc "\": " u " is not in the README'"'"'s picture of lib/"; next }
                if ((m in row) && row[u] < row[m])
                    print $2 ": #include \"" inc "\": " u " (row " rname[u] ") is above " m " (row " rname[m] \
                          "); a module uses only its row and the rows below" }
    END { for (m in row) if (!(m in have)) print "README.md: the picture lists " m ", which has no lib/" m ".c or lib/" m ".h" }'
}

# --- the tree
layers "$ROOT" > "$T/tree" 2>&1
[ -s "$T/tree" ] && fail "$(cat "$T/tree")"
nm=$(grep -c '^M' "$T/picture")
nr=$(awk '$1 == "M" { print $3 }' "$T/picture" | sort -u | wc -l)
ni=$(wc -l < "$T/includes")
[ "$nm" -ge 60 ] && [ "$nr" -ge 7 ] && [ "$ni" -ge 150 ] || fail "too little read: $nm modules in $nr rows, $ni includes"

# --- breaches planted in a copy of the tree (which has none), each named
P="$T/planted"
mkdir -p "$P/lib"
cp "$ROOT"/lib/*.c "$ROOT"/lib/*.h "$P/lib/" || fail "copying the tree"
echo '#include "knn_eval.h"' >> "$P/lib/ap.c"           # measures -> evaluation: up a row
echo '#include "nosuch.h"' >> "$P/lib/tau.h"            # a module the picture does not list
echo '#include "../bin/x.h"' >> "$P/lib/util.c"         # not a module at all
echo '/* new */' > "$P/lib/fresh.c"                     # a module missing from the picture
rm "$P/lib/ece.c" "$P/lib/ece.h"                        # the picture lists what is gone
sed 's/^ data         digits  shapes/ data         digits  digits  shapes/; s/  npzimport  imgout$/  npzimport  imgout  Pixels/' \
    "$ROOT/README.md" > "$P/README.md"                  # a module twice, a word that is no name
layers "$P" > "$T/planted.out" 2>&1
for want in 'lib/ap.c: #include "knn_eval.h": knn_eval (row evaluation) is above ap (row measures); a module uses only its row and the rows below' \
            'lib/tau.h: #include "nosuch.h": nosuch is not in the README'"'"'s picture of lib/' \
            'lib/util.c: #include "../bin/x.h": ../bin/x is not in the README'"'"'s picture of lib/' \
            'lib/fresh.c: module fresh is not in the README'"'"'s picture of lib/' \
            'README.md: the picture lists ece, which has no lib/ece.c or lib/ece.h' \
            'README.md: the picture lists digits twice' \
            'README.md: the picture'"'"'s row data has "Pixels", not a module name'; do
    grep -qxF "$want" "$T/planted.out" || fail "planted breach not named: '$want'; got: $(cat "$T/planted.out")"
done
[ "$(wc -l < "$T/planted.out")" -eq 7 ] || fail "7 planted breaches, $(wc -l < "$T/planted.out") lines: $(cat "$T/planted.out")"

echo "layers: $nm modules in $nr rows, $ni includes of lib/, each of its row or below"
pass
