#!/bin/sh
# The tables of the README and of docs/ are the result files': every table row of each results/
# table appears verbatim in the document that holds its experiment (docs/hib.md, spe.md,
# metric.md, cesoftmax.md, compare.md, pfe.md), and every table row of README.md, if it has any,
# is a row of one of those result files (excerpts: whole rows, never retyped). So a result file
# rewritten by a new run without its document, or a number typed by hand, fails here.
set -u
. "$(dirname "$0")/../lib.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
README=${README:-README.md}
n=0
# quoted DOC FILE...: every table row of each FILE is a line of DOC
quoted() {
    doc=$1; shift
    [ -s "$doc" ] || fail "$doc is missing"
    for f; do
        [ -s "$f" ] || fail "$f is missing"
        grep '^|' "$f" > "$T/rows"
        [ -s "$T/rows" ] || fail "$f has no table"
        missing=$(grep -vxFf "$doc" "$T/rows" | head -n 3)
        [ -z "$missing" ] || fail "$doc does not quote $f as it is; first rows missing: $missing"
        cat "$T/rows" >> "$T/all-rows"
        n=$((n + 1))
    done
}
: > "$T/all-rows"
quoted docs/hib.md results/demo/table.md results/tables/table1.md results/tables/table2.md \
    $(ls results/tables/table4.md results/tables/table5.md results/tables/appb.md \
        results/tables/appd.md 2> /dev/null)
quoted docs/spe.md results/spe-demo/table.md results/spe-table2/table.md results/spe-full/table.md
quoted docs/metric.md results/metric/hetriplet.md results/metric/fstat.md
quoted docs/cesoftmax.md results/metric/cesoftmax.md
quoted docs/compare.md results/compare/mnist-quick.md results/compare/fashion-quick.md results/finding/summary.md
quoted docs/pfe.md results/pfe/table.md

# the README: no table row that is not a result file's row
grep '^|' "$README" > "$T/readme-rows"
bad=$(grep -vxFf "$T/all-rows" "$T/readme-rows" | head -n 3)
[ -z "$bad" ] || fail "$README has table rows that are in no result file: $bad"
# (its numbers are the documents': the README says what each experiment found and links its
# document, where the tables are; issue 45's README as a guide)
echo "readme: the tables of $n result files are in docs/, and $(wc -l < "$T/readme-rows") README rows are theirs"
pass
