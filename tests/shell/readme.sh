#!/bin/sh
# The README's tables are the result files': every table row of each results/ table the README
# quotes appears in README.md verbatim, so a result file rewritten by a new run without the
# README (or a README number typed by hand) fails here.
set -u
. "$(dirname "$0")/../lib.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
n=0
for f in results/demo/table.md results/tables/table1.md results/tables/table2.md \
    results/compare/mnist-quick.md results/compare/fashion-quick.md results/spe-demo/table.md \
    results/metric/cesoftmax.md results/metric/fstat.md results/metric/hetriplet.md \
    $(ls results/tables/table4.md results/tables/table5.md results/tables/appb.md \
        results/tables/appd.md 2> /dev/null); do
    [ -s "$f" ] || fail "$f is missing"
    grep '^|' "$f" > "$T/rows"
    [ -s "$T/rows" ] || fail "$f has no table"
    missing=$(grep -vxFf README.md "$T/rows" | head -n 3)
    [ -z "$missing" ] || fail "README.md does not quote $f as it is; first rows missing: $missing"
    n=$((n + 1))
done
echo "readme: the tables of $n result files are in README.md"
pass
