#!/bin/sh
# Checks that the Debian packages hedge needs are installed; as root, installs the missing ones,
# otherwise prints the exact command and fails.
missing=""
need() { # need PACKAGE TEST-FILE-OR-COMMAND
    case "$2" in
    /*) [ -e "$2" ] || missing="$missing $1" ;;
    *) command -v "$2" >/dev/null 2>&1 || missing="$missing $1" ;;
    esac
}
need libopenblas-dev /usr/include/x86_64-linux-gnu/cblas.h
need libmsgpack-dev /usr/include/msgpack.h
need zlib1g-dev /usr/include/zlib.h
need libpng-dev /usr/include/png.h
need parallel parallel
need gnuplot-nox gnuplot
need npm npm
need python3-msgpack /usr/lib/python3/dist-packages/msgpack/__init__.py
need python3-numpy /usr/lib/python3/dist-packages/numpy/__init__.py
[ -z "$missing" ] && exit 0
if [ "$(id -u)" = 0 ]; then
    echo "hedge: installing missing Debian packages:$missing" >&2
    apt-get update -qq >&2 || true
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >&2 || {
        echo "hedge: apt-get install failed" >&2; exit 1; }
else
    echo "hedge: missing Debian packages. Run as root:" >&2
    echo "  apt-get install$missing" >&2
    exit 1
fi
