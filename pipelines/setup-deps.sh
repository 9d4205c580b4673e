#!/bin/sh
# setup-deps.sh [fuzz] [fashion] [ssh] [transfer] [sshd] [man] [tests] [bench]: makes sure the Debian packages hedge
# needs are installed; as root it installs the missing ones, otherwise it prints the exact
# command and fails. Each word adds what one use needs:
#   fuzz      `make fuzz`: clang with its libFuzzer runtime
#   fashion   DATASET=fashion (pipelines/hib-data.sh): dataset-fashion-mnist
#   ssh       a grid with --sshlogin (docs/grids.md): the ssh client
#   transfer  a grid with --transfer: the ssh client and rsync (GNU parallel's --basefile,
#             --transferfile and --return use it, on both sides)
#   sshd      tests/shell/grid.sh runs a grid through an OpenSSH server on 127.0.0.1:
#             openssh-server, the ssh client and rsync. Installing openssh-server never starts
#             the system's own sshd: while apt-get runs, /usr/sbin/policy-rc.d (when there is
#             none) refuses every service start, and is removed afterwards.
#   man       `make man` (and install, test): scdoc, which turns man/*.scd into man pages
#   tests     `make test`: what sshd and fashion need, but optional: installed as root;
#             otherwise named, and the tests that need them skip those checks (exit 0)
#   bench     `make bench`: the peers it measures hedge against, faiss and PyTorch (python3-faiss,
#             python3-torch), optional as for tests: the benchmarks of a missing one say so and
#             skip it; never a dependency of `make test`
#
# A library counts as present only when dpkg says its package is installed: a file at the
# usual path proves nothing (Debian's reference BLAS, libblas-dev, puts its own cblas.h exactly
# where OpenBLAS's would go). A command-line tool counts as present when the command runs,
# whoever installed it (Node.js's npm often comes from elsewhere).
missing="" optional=""
installed() { [ "$(dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null)" = installed ]; }
need_pkg() { for p; do installed "$p" || missing="$missing $p"; done; }
need_cmd() { command -v "$2" >/dev/null 2>&1 || missing="$missing $1"; } # need_cmd PACKAGE COMMAND

need_pkg libopenblas-dev libmsgpack-dev zlib1g-dev libpng-dev pkgconf python3-msgpack python3-numpy
need_cmd parallel parallel
need_cmd gnuplot-nox gnuplot
need_cmd npm npm
for use; do
    case $use in
    fuzz) need_pkg clang libclang-rt-dev ;;
    fashion) need_pkg dataset-fashion-mnist ;;
    ssh) need_cmd openssh-client ssh ;;
    transfer) need_cmd openssh-client ssh; need_cmd rsync rsync ;;
    sshd) need_pkg openssh-server; need_cmd openssh-client ssh; need_cmd rsync rsync ;;
    man) need_cmd scdoc scdoc ;;
    tests)
        base=$missing missing=""
        need_pkg openssh-server dataset-fashion-mnist; need_cmd openssh-client ssh; need_cmd rsync rsync
        optional="$optional$missing" missing=$base ;;
    bench)
        base=$missing missing=""
        need_pkg python3-faiss python3-torch
        optional="$optional$missing" missing=$base ;;
    *) echo "setup-deps.sh: unknown use '$use' (fuzz, fashion, ssh, transfer, sshd, man, tests, bench)" >&2; exit 2 ;;
    esac
done
# optional packages: installed with the others as root; otherwise only named
if [ -n "$optional" ] && [ "$(id -u)" != 0 ] && [ -z "$missing" ]; then
    echo "hedge: not root: the tests that need$optional skip those checks (as root: apt-get install$optional)" >&2
    exit 0
fi
missing="$missing$optional"
# each package once (two uses may ask for the same one)
missing=$(printf '%s\n' $missing | awk 'NF && !seen[$0]++' | tr '\n' ' ' | sed 's/^/ /; s/ $//')
if [ -z "$missing" ]; then
    exit 0
fi
if [ "$(id -u)" = 0 ]; then
    echo "hedge: installing missing Debian packages:$missing" >&2
    apt-get update -qq >&2 || echo "hedge: apt-get update failed; trying the install anyway" >&2
    # a server package must not start its service here (openssh-server would listen on port 22):
    # Debian's invoke-rc.d asks /usr/sbin/policy-rc.d, and 101 means "not allowed". Only a
    # policy we wrote ourselves is removed again.
    policy=""
    case " $missing " in
    *" openssh-server "*)
        if [ ! -e /usr/sbin/policy-rc.d ]; then
            policy=/usr/sbin/policy-rc.d
            trap 'rm -f /usr/sbin/policy-rc.d' EXIT
            trap 'exit 1' INT TERM HUP
            printf '#!/bin/sh\n# hedge setup-deps.sh: no service starts while it installs packages\nexit 101\n' > "$policy"
            chmod 755 "$policy"
        fi ;;
    esac
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >&2 || {
        echo "hedge: apt-get install$missing failed" >&2
        exit 1
    }
    [ -n "$policy" ] && rm -f "$policy"
    # an install that "succeeded" but left a package missing is still a failure
    for p in $missing; do
        case $p in parallel | gnuplot-nox | npm | openssh-client | rsync | scdoc) continue ;; esac
        installed "$p" || { echo "hedge: package $p is still not installed" >&2; exit 1; }
    done
else
    echo "hedge: missing Debian packages. Run as root:" >&2
    echo "  apt-get install$missing" >&2
    exit 1
fi
