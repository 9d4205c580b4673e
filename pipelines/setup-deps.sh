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
#             openssh-server, the ssh client and rsync (the test starts a server of its own;
#             the system's sshd is never started nor enabled, see below)
#   man       `make man` (and install, test): scdoc, which turns man/*.scd into man pages
#   tests     `make test`: what sshd and fashion need, and python3-venv (tests/shell/pypackage.sh
#             installs the Python package in a venv), but optional: installed as root;
#             otherwise named, and the tests that need them skip those checks (exit 0)
#   bench     `make bench`: the peers it measures hedge against, faiss, PyTorch and sklearn
#             (python3-faiss, python3-torch, python3-sklearn), optional as for tests: the benchmarks of a missing one say so and
#             skip it; never a dependency of `make test`
#
# A library counts as present only when dpkg says its package is installed: a file at the
# usual path proves nothing (Debian's reference BLAS, libblas-dev, puts its own cblas.h exactly
# where OpenBLAS's would go). A command-line tool counts as present when the command runs,
# whoever installed it (Node.js's npm often comes from elsewhere).
#
# The install leaves the system as it was but for the packages:
#   - only what the packages depend on (--no-install-recommends): apt's default also brings the
#     packages they recommend, for `make test` on a fresh Debian 12 249 more (715 packages
#     instead of 466: ImageMagick, Mesa, X11 utilities, systemd and dbus, 35 more node-*
#     packages), 1,021 MiB installed instead of 616, for nothing hedge uses;
#   - no service starts: while apt-get runs, /usr/sbin/policy-rc.d (when there is none) refuses
#     every start (Debian's invoke-rc.d and deb-systemd-invoke ask it; 101 means "not
#     allowed"), and is removed afterwards;
#   - no service is enabled at boot that was not before (openssh-server enables sshd, parallel's
#     sysstat its timers): what starts at boot is read before and after (services_enabled),
#     whether or not systemd runs or is installed, and what the install added is disabled
#     again (services_restore), each named on stderr.
# SETUP_DEPS_ROOT (for tests/shell/setupdeps.sh only): a folder read and written in place of /
# for policy-rc.d and the links above.
case ${1:-} in -h | --help) sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p;}' "$0" || exit 1; exit 0 ;; esac
missing="" optional="" sysroot=${SETUP_DEPS_ROOT:-}
# installed for this machine's architecture (or for all): with a second architecture (dpkg
# --add-architecture arm64, as tests/shell/aarch64.sh wants) dpkg-query prints a line for each
native_arch=$(dpkg --print-architecture 2>/dev/null)
installed() {
    dpkg-query -W -f='${db:Status-Status} ${Architecture}\n' "$1" 2>/dev/null |
        grep -qx "installed \($native_arch\|all\)"
}
need_pkg() { for p; do installed "$p" || missing="$missing $p"; done; }
need_cmd() { command -v "$2" >/dev/null 2>&1 || missing="$missing $1"; } # need_cmd PACKAGE COMMAND

# services_enabled: what starts at boot, one line each, sorted: "systemd LINK" for each link
# /etc/systemd/system/LINK to a unit (enabling a unit links it into a TARGET.wants or .requires
# folder and links its aliases beside them; a link to /dev/null masks, it enables nothing),
# "sysv NAME" for each /etc/rc?.d/S??NAME
services_enabled() {
    (
        cd "$sysroot/etc/systemd/system" 2> /dev/null &&
            for l in * */*; do
                [ -L "$l" ] && [ "$(readlink "$l")" != /dev/null ] && echo "systemd $l"
            done
        for l in "$sysroot"/etc/rc[0-6S].d/S[0-9][0-9]*; do
            [ -L "$l" ] || [ -e "$l" ] && l=${l##*/} && echo "sysv ${l#S[0-9][0-9]}"
        done
    ) | sort -u
}
# services_restore BEFORE: disables what starts at boot now and did not in the file BEFORE (a
# list of services_enabled), naming each: with systemctl (which works whether or not systemd
# runs) each unit newly linked into a .wants or .requires folder, without it (no systemd
# installed: deb-systemd-helper linked the units, and only dpkg may call it) the new links are
# removed; then update-rc.d NAME disable for each new S link still there. Fails naming the
# command when one cannot be disabled.
services_restore() {
    services_enabled | comm -13 "$1" - > "$1.new"
    sr_rc=0
    if command -v systemctl > /dev/null 2>&1; then
        for sr_u in $(sed -n 's,^systemd [^/]*\.\(wants\|requires\)/,,p' "$1.new" | sort -u); do
            if systemctl --quiet disable "$sr_u" >&2; then
                echo "hedge: the install enabled $sr_u at boot; disabled it again (systemctl disable $sr_u)" >&2
            else
                echo "hedge: the install enabled $sr_u at boot and it could not be disabled: run systemctl disable $sr_u" >&2
                sr_rc=1
            fi
        done
    else
        for sr_l in $(sed -n 's/^systemd //p' "$1.new"); do
            if rm -f "$sysroot/etc/systemd/system/$sr_l"; then
                echo "hedge: the install enabled ${sr_l##*/} at boot; removed the link /etc/systemd/system/$sr_l again" >&2
            else
                echo "hedge: the install enabled ${sr_l##*/} at boot and its link could not be removed: run rm /etc/systemd/system/$sr_l" >&2
                sr_rc=1
            fi
        done
    fi
    # System V: an S link that disabling the systemd unit (systemd-sysv-install) did not turn off
    for sr_n in $(sed -n 's/^sysv //p' "$1.new"); do
        ls "$sysroot"/etc/rc[0-6S].d/S[0-9][0-9]"$sr_n" > /dev/null 2>&1 || continue
        if update-rc.d "$sr_n" disable >&2; then
            echo "hedge: the install enabled the System V service $sr_n at boot; disabled it again (update-rc.d $sr_n disable)" >&2
        else
            echo "hedge: the install enabled the System V service $sr_n at boot and it could not be disabled: run update-rc.d $sr_n disable" >&2
            sr_rc=1
        fi
    done
    return $sr_rc
}

need_pkg libopenblas-dev libmsgpack-dev zlib1g-dev libpng-dev pkgconf python3-msgpack python3-numpy
need_cmd parallel parallel
need_cmd gnuplot-nox gnuplot
need_cmd npm npm
need_cmd jq jq
for use; do
    case $use in
    fuzz) need_pkg clang libclang-rt-dev ;;
    fashion) need_pkg dataset-fashion-mnist ;;
    ssh) need_cmd openssh-client ssh ;;
    transfer) need_cmd openssh-client ssh; need_cmd rsync rsync ;;
    sshd) need_pkg openssh-server; need_cmd openssh-client ssh; need_cmd rsync rsync ;;
    man) need_cmd scdoc scdoc ;;
    simd) need_pkg libsimde-dev ;;
    tests)
        base=$missing missing=""
        need_pkg openssh-server dataset-fashion-mnist python3-venv libsimde-dev; need_cmd openssh-client ssh; need_cmd rsync rsync
        optional="$optional$missing" missing=$base ;;
    bench)
        base=$missing missing=""
        need_pkg python3-faiss python3-torch python3-sklearn
        optional="$optional$missing" missing=$base ;;
    *) echo "setup-deps.sh: unknown use '$use' (fuzz, fashion, ssh, transfer, sshd, man, simd, tests, bench)" >&2; exit 2 ;;
    esac
done
# optional packages: installed with the others as root; otherwise only named
if [ -n "$optional" ] && [ "$(id -u)" != 0 ] && [ -z "$missing" ]; then
    echo "hedge: not root: the tests that need$optional skip those checks (as root: apt-get install --no-install-recommends$optional)" >&2
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
    # no service starts while apt-get runs (only a policy we wrote ourselves is removed again),
    # and what the install enabled at boot is disabled again, whatever way it ends
    tmp=$(mktemp -d) policy=$sysroot/usr/sbin/policy-rc.d own_policy=0 restore=0
    finish() {
        fi_rc=0
        if [ "$restore" = 1 ]; then restore=0; services_restore "$tmp/before" || fi_rc=1; fi
        if [ "$own_policy" = 1 ]; then own_policy=0; rm -f "$policy"; fi
        rm -rf "$tmp"
        return $fi_rc
    }
    trap finish EXIT
    trap 'exit 1' INT TERM HUP
    if [ ! -e "$policy" ] && [ ! -L "$policy" ]; then
        own_policy=1
        printf '#!/bin/sh\n# hedge setup-deps.sh: no service starts while it installs packages\nexit 101\n' > "$policy"
        chmod 755 "$policy"
    fi
    services_enabled > "$tmp/before"
    restore=1
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >&2 || {
        echo "hedge: apt-get install --no-install-recommends$missing failed" >&2
        exit 1
    }
    finish || exit 1
    # an install that "succeeded" but left a package missing is still a failure
    for p in $missing; do
        case $p in parallel | gnuplot-nox | npm | openssh-client | rsync | scdoc) continue ;; esac
        installed "$p" || { echo "hedge: package $p is still not installed" >&2; exit 1; }
    done
else
    echo "hedge: missing Debian packages. Run as root:" >&2
    echo "  apt-get install --no-install-recommends$missing" >&2
    exit 1
fi
