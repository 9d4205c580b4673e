#!/bin/sh
# setup-deps.sh [fuzz]: makes sure the Debian packages hedge needs are installed; as root it
# installs the missing ones, otherwise it prints the exact command and fails. `fuzz` adds what
# `make fuzz` needs (clang with its libFuzzer runtime).
#
# A library counts as present only when dpkg says its package is installed: a file at the
# usual path proves nothing (Debian's reference BLAS, libblas-dev, puts its own cblas.h exactly
# where OpenBLAS's would go). A command-line tool counts as present when the command runs,
# whoever installed it (Node.js's npm often comes from outside Debian).
missing=""
installed() { [ "$(dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null)" = installed ]; }
need_pkg() { for p; do installed "$p" || missing="$missing $p"; done; }
need_cmd() { command -v "$2" >/dev/null 2>&1 || missing="$missing $1"; } # need_cmd PACKAGE COMMAND

need_pkg libopenblas-dev libmsgpack-dev zlib1g-dev libpng-dev pkgconf python3-msgpack python3-numpy
need_cmd parallel parallel
need_cmd gnuplot-nox gnuplot
need_cmd npm npm
if [ "${1:-}" = fuzz ]; then
    need_pkg clang libclang-rt-dev
fi
if [ -z "$missing" ]; then
    exit 0
fi
if [ "$(id -u)" = 0 ]; then
    echo "hedge: installing missing Debian packages:$missing" >&2
    apt-get update -qq >&2 || echo "hedge: apt-get update failed; trying the install anyway" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >&2 || {
        echo "hedge: apt-get install$missing failed" >&2
        exit 1
    }
    # an install that "succeeded" but left a package missing is still a failure
    for p in $missing; do
        case $p in parallel | gnuplot-nox | npm) continue ;; esac
        installed "$p" || { echo "hedge: package $p is still not installed" >&2; exit 1; }
    done
else
    echo "hedge: missing Debian packages. Run as root:" >&2
    echo "  apt-get install$missing" >&2
    exit 1
fi
