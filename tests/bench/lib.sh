# Sourced by the peer benchmarks (faiss.sh, kmeans.sh, torch.sh, train.sh): the checks and the
# probe they share. BUILD is set by the caller.
# bench_peer NAME MODULE PACKAGE: exits 0 with one line when Debian's python3 lacks MODULE
bench_peer() {
    if ! ${PY:-/usr/bin/python3} -c "import $2, numpy" 2> /dev/null; then
        echo "$1: skipped: Debian's $3 is not installed (as root: apt-get install $3)"
        exit 0
    fi
}
# bench_probe DIR: builds the sgemm probe into DIR/probe (tests/bench/probe.c)
bench_probe() {
    ${CC:-cc} -O2 -march=x86-64-v3 -std=c11 -D_GNU_SOURCE -Ilib -o "$1/probe" tests/bench/probe.c "$BUILD/libhedge.a" \
        ${LDLIBS:-$(pkg-config --libs openblas) -lmsgpackc -lpng -lz -lm -lpthread}
}
# bench_core DIR: the OpenBLAS kernel hedge runs (the probe's `core`), for OPENBLAS_CORETYPE
bench_core() { "$1/probe" core | sed -n 's/^core //p'; }
