#!/bin/sh
# layers: lib/ is the README's picture ("How it is built"): one folder per layer, from the bottom
# base, streams, numerics, data, network, training, measures, evaluation, engine, and a module
# uses only those of its folder and the folders below it (issues 36 and 45). Reads every
# `#include "..."` of lib/*/*.[ch] and the picture, and fails naming the file when a module
# includes one of a higher folder or one that lib/ does not have, when a file of lib/ is in no
# layer's folder, when the picture's rows are not those folders in that order, or when a module
# stands in another row of the picture than its folder (or in none, or the picture lists one lib/
# does not have). Then the checker is run on breaches planted in a copy of the tree, and must
# name each, so that it is seen to fail.
#
# The picture: the lines of the code block under "## How it is built" after the one ending in
# "lib/"; a row starts with its name at the second column, indented lines continue it. A module
# is a word outside parentheses, or one of the comma-separated single words of a "(+ a, b, ...)"
# (any other parenthesised text, and any item of more than one word, describes). The module of a
# file is its name without .c or .h (lib/network/body_conv.c is body_conv).
. "$(dirname "$0")/../lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
ORDER="base streams numerics data network training measures evaluation engine"

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
            print "R", name[r], r
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
                        print "M", item[i], name[r]
                }
            }
            k = split(t, w, " ")
            for (i = 1; i <= k; i++)
                print (w[i] ~ /^[a-z0-9_]+$/ ? "M" : "W"), w[i], name[r]
        }
    }' "$1/README.md" > "$T/picture"
    (cd "$1" && ls lib/*.c lib/*.h lib/*/*.c lib/*/*.h 2>/dev/null) | sed 's/^/F /' > "$T/files"
    (cd "$1" && grep -H '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' lib/*/*.c lib/*/*.h) |
        sed 's/^\([^:]*\):[^"]*"\([^"]*\)".*/I \1 \2/' > "$T/includes"
    { echo "O $ORDER"; cat "$T/picture" "$T/files" "$T/includes"; } | awk '
    function module(f) { sub(/.*\//, "", f); sub(/\.[ch]$/, "", f); return f }
    function folder(f) { n = split(f, p, "/"); return n == 3 ? p[2] : "" }
    $1 == "O" { for (i = 2; i <= NF; i++) { rank[$i] = i - 1; nf = i - 1; top[nf] = $i }; next }
    $1 == "R" { rows[$3] = $2; nrows = $3; next }
    $1 == "W" { print "README.md: the picture'"'"'s row " $3 " has \"" $2 "\", not a module name"; next }
    $1 == "M" { if ($2 in prow) print "README.md: the picture lists " $2 " twice"
                prow[$2] = $3; next }
    $1 == "F" { f = $2; m = module(f); L = folder(f)
                if (!(L in rank)) { print f ": not in the folder of a layer (" order_text() ")"; next }
                if (m in where && where[m] != L) print f ": module " m " is in two folders, lib/" where[m] "/ and lib/" L "/"
                where[m] = L
                if (!(m in prow)) { if (!(m in told)) print f ": module " m " is not in the README'"'"'s picture of lib/"; told[m] = 1 }
                else if (prow[m] != L && !(m in told)) { print f ": module " m " is in lib/" L "/ but in the row " prow[m] " of the README'"'"'s picture"; told[m] = 1 }
                next }
    $1 == "I" { m = module($2); inc = $3; u = inc; sub(/\.h$/, "", u)
                if (!(u in where) || u ~ /[.\/]/) { print $2 ": #include \"" inc "\": " u " is not a module of lib/"; next }
                if (rank[where[u]] > rank[where[m]])
                    print $2 ": #include \"" inc "\": " u " (lib/" where[u] "/) is above " m " (lib/" where[m] \
                          "/); a module uses only its folder and the folders below" }
    function order_text(   i, s) { s = top[1]; for (i = 2; i <= nf; i++) s = s ", " top[i]; return s }
    END {
        want = ""; got = ""
        for (i = nf; i >= 1; i--) want = want (want ? " " : "") top[i]
        for (r = 1; r <= nrows; r++) got = got (got ? " " : "") rows[r]
        if (got != want) print "README.md: the picture'"'"'s rows are \"" got "\", expected the folders of lib/ from the top: \"" want "\""
        for (m in prow) if (!(m in where)) print "README.md: the picture lists " m ", which has no file in lib/" prow[m] "/"
    }'
}

# --- the tree
layers "$ROOT" > "$T/tree" 2>&1
[ -s "$T/tree" ] && fail "$(cat "$T/tree")"
nm=$(grep -c '^M' "$T/picture")
nf=$(ls -d "$ROOT"/lib/*/ | wc -l)
ni=$(wc -l < "$T/includes")
[ "$nm" -ge 60 ] && [ "$nf" -eq 9 ] && [ "$ni" -ge 150 ] || fail "too little read: $nm modules in $nf folders, $ni includes"

# --- breaches planted in a copy of the tree (which has none), each named
P="$T/planted"
mkdir -p "$P"
cp -r "$ROOT/lib" "$P/lib" || fail "copying the tree"
echo '#include "knn_eval.h"' >> "$P/lib/measures/ap.c"     # measures -> evaluation: up a folder
echo '#include "nosuch.h"' >> "$P/lib/measures/tau.h"      # a module lib/ does not have
echo '#include "../bin/x.h"' >> "$P/lib/base/util.c"       # not a module at all
echo '/* new */' > "$P/lib/measures/fresh.c"               # a module missing from the picture
echo '/* loose */' > "$P/lib/loose.c"                      # a file in no layer's folder
mv "$P/lib/measures/auc.c" "$P/lib/evaluation/auc.c"       # a module split across two folders
mv "$P/lib/numerics/betainc.c" "$P/lib/data/betainc.c" && mv "$P/lib/numerics/betainc.h" "$P/lib/data/betainc.h" # another row's
rm "$P/lib/measures/ece.c" "$P/lib/measures/ece.h"         # the picture lists what is gone
sed 's/^ data         digits  shapes/ data         digits  digits  shapes/; s/  npzimport  imgout/  npzimport  Pixels  imgout/; s/^ streams /  streams /' \
    "$ROOT/README.md" > "$P/README.md"                     # a module twice, a word that is no name, a row gone
layers "$P" > "$T/planted.out" 2>&1
for want in 'lib/measures/ap.c: #include "knn_eval.h": knn_eval (lib/evaluation/) is above ap (lib/measures/); a module uses only its folder and the folders below' \
            'lib/measures/tau.h: #include "nosuch.h": nosuch is not a module of lib/' \
            'lib/base/util.c: #include "../bin/x.h": ../bin/x is not a module of lib/' \
            'lib/measures/fresh.c: module fresh is not in the README'"'"'s picture of lib/' \
            'lib/loose.c: not in the folder of a layer (base, streams, numerics, data, network, training, measures, evaluation, engine)' \
            'lib/measures/auc.h: module auc is in two folders, lib/evaluation/ and lib/measures/' \
            'lib/data/betainc.c: module betainc is in lib/data/ but in the row numerics of the README'"'"'s picture' \
            'README.md: the picture lists ece, which has no file in lib/measures/' \
            'README.md: the picture lists digits twice' \
            'README.md: the picture'"'"'s row data has "Pixels", not a module name'; do
    grep -qxF "$want" "$T/planted.out" || fail "planted breach not named: '$want'; got: $(cat "$T/planted.out")"
done
grep -q '^README.md: the picture.s rows are ".*", expected the folders of lib/ from the top: "engine evaluation measures training network data numerics streams base"$' "$T/planted.out" ||
    fail "the missing row not named; got: $(cat "$T/planted.out")"

echo "layers: $nm modules in $nf folders, $ni includes of lib/, each of its folder or below"
pass
