#!/bin/sh
# hedge: runs hedge's programs and pipelines as git runs its subcommands, so that their short
# names (train, embed, knn) never clash with other tools on PATH:
#   hedge PROGRAM [ARGS...]      a program, e.g. hedge mkdigits -N 2 | hedge occlude -p 1
#   hedge PIPELINE [ARGS...]     a pipeline script, e.g. hedge hib-data 2 data/N2 (or hib-data.sh)
#   hedge help [NAME]            the programs and the user's pipelines, or NAME's man page
#   hedge --version
#   hedge --python-path          where the Python package hedge is: PYTHONPATH=$(hedge --python-path)
# `make install` puts this script in PREFIX/bin/hedge, the programs in PREFIX/lib/hedge/bin, the
# pipelines in PREFIX/lib/hedge/pipelines, the Python package in PREFIX/lib/hedge/python and the
# man pages in PREFIX/share/man; everything is found from where this script is, so a tree
# installed into a DESTDIR works as it is. In the source tree (bin/hedge.sh) it runs build/bin.
# A NAME is a name, never a path: one with a / or .. is refused, so that hedge runs nothing but
# its own programs and pipelines.
#
# The data: the programs were built with the source tree's data/ in them (mkdigits's default
# MNIST), which an installed hedge must not depend on (the clone may be gone). Installed, the
# MNIST lives in the user's XDG data folder, ${XDG_DATA_HOME:-$HOME/.local/share}/hedge/mnist,
# where `hedge fetch-mnist` puts it: hedge hands that folder to the programs and pipelines as
# HEDGE_MNIST (unless HEDGE_MNIST is set), as pipelines/common.sh does for a pipeline run alone.
# In the source tree nothing changes: the data is its data/ (`make data`).
set -u
self=$(readlink -f "$0" 2>/dev/null || echo "$0")
top=$(cd "$(dirname "$self")/.." && pwd)
if [ -d "$top/lib/hedge/bin" ]; then
    root=$top/lib/hedge bin=$top/lib/hedge/bin man=$top/share/man
    if [ -z "${HEDGE_MNIST:-}" ]; then
        case ${XDG_DATA_HOME:-} in
        /*) HEDGE_MNIST=$XDG_DATA_HOME/hedge/mnist ;;
        *) HEDGE_MNIST=${HOME:-}/.local/share/hedge/mnist ;;
        esac
        export HEDGE_MNIST
    fi
else
    root=$top bin=$top/${BUILD:-build}/bin man=$top/${BUILD:-build}/man
    case ${BUILD:-} in /*) bin=$BUILD/bin man=$BUILD/man ;; esac
fi

usage() {
    echo "usage: hedge PROGRAM|PIPELINE [ARGS...]"
    echo "       hedge help [PROGRAM|PIPELINE]"
    echo "       hedge --version | --python-path"
}

programs() { for p in "$bin"/*; do [ -f "$p" ] && [ -x "$p" ] && basename "$p"; done; }
# the pipelines a user runs; the others are their parts (a run of one configuration, its tables or
# figure, one shard, the data of an experiment, the shared code, the package check), which still
# run as `hedge NAME` but are not listed
pipelines() {
    for p in "$root"/pipelines/*.sh; do
        [ -f "$p" ] || continue
        name=$(basename "$p" .sh)
        case $name in
        *-run | *-tables | *-figure | *-shard | *-eval | *-data | common | setup-deps) ;;
        *) echo "$name" ;;
        esac
    done
}

# not_a_name NAME: exits 2 when NAME is a path (a /, or ..) rather than the name of a program or
# pipeline: `hedge ../x` must not run ../x
not_a_name() {
    case $1 in
    */* | *..*)
        echo "hedge: '$1' is a path, not the name of a hedge program or pipeline (hedge help lists them)" >&2
        echo "Try 'hedge help' for help." >&2
        exit 2 ;;
    esac
}

# page SECTION NAME: shows the man page hedge-NAME(SECTION): the installed or built page, else, in
# a source tree where `make man` has not run, the page scdoc makes from man/NAME.SECTION.scd;
# returns 1 when there is neither, or no man to show it
page() {
    command -v man > /dev/null 2>&1 || return 1
    pg_file=$man/man$1/hedge-$2.$1
    [ -f "$pg_file" ] || pg_file=$man/hedge-$2.$1
    [ -f "$pg_file" ] && exec man -l "$pg_file"
    if [ -f "$top/man/$2.$1.scd" ] && command -v scdoc > /dev/null 2>&1; then
        pg_tmp=$(mktemp) || return 1
        trap 'rm -f "$pg_tmp"' EXIT
        trap 'exit 1' INT TERM HUP
        scdoc < "$top/man/$2.$1.scd" > "$pg_tmp" || return 1
        man -l "$pg_tmp"
        exit
    fi
    return 1
}

help() {
    if [ $# = 0 ]; then
        usage
        echo
        echo "Programs (hedge help PROGRAM: its manual; hedge PROGRAM --help: its synopsis):"
        for p in $(programs); do
            printf '  %-12s %s\n' "$p" "$("$bin/$p" --help | sed -n '/^  [^ ]/{s/^  //p;q;}')"
        done
        echo
        echo "Pipelines (hedge help PIPELINE: its opening comment):"
        pipelines | tr '\n' ' ' | fold -s -w 76 | sed 's/^/  /'
        echo
        echo
        echo "The stream format: hedge help stream. Python: import hedge (PYTHONPATH=\$(hedge --python-path))."
        [ -n "${HEDGE_MNIST:-}" ] && echo "The MNIST: $HEDGE_MNIST (hedge fetch-mnist fetches it there, about 11 MB)."
        return 0
    fi
    not_a_name "$1"
    name=${1%.sh}
    if [ -x "$bin/$name" ] && [ -f "$bin/$name" ]; then
        page 1 "$name"
        command -v man > /dev/null 2>&1 && man -w "hedge-$name" > /dev/null 2>&1 && exec man "hedge-$name"
        exec "$bin/$name" --help
    elif [ -f "$root/pipelines/$name.sh" ]; then
        sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p;}' "$root/pipelines/$name.sh"
    elif [ "$name" = stream ]; then
        page 5 stream
        # no man page to show: the format's specification itself, in a source tree
        [ -f "$top/formats/stream.md" ] && exec cat "$top/formats/stream.md"
        echo "hedge: cannot show hedge-stream(5): no man (apt-get install man-db) or no page" >&2
        exit 1
    else
        echo "hedge: '$1' is neither a hedge program nor a pipeline (hedge help lists them)" >&2
        exit 2
    fi
}

[ $# -gt 0 ] || { usage >&2; echo "Try 'hedge help' for help." >&2; exit 2; }
cmd=$1
shift
case $cmd in
help | --help | -h) help "$@" ;;
--version) v=$("$bin/tshow" --version) || exit 1; echo "hedge ${v#tshow (hedge) }" ;;
--python-path) echo "$root/python" ;;
-*) echo "hedge: $cmd: unknown option" >&2; echo "Try 'hedge help' for help." >&2; exit 2 ;;
*)
    not_a_name "$cmd"
    name=${cmd%.sh}
    if [ "$name" = "$cmd" ] && [ -x "$bin/$name" ] && [ -f "$bin/$name" ]; then
        exec "$bin/$name" "$@"
    elif [ -f "$root/pipelines/$name.sh" ] && [ "$name" != common ]; then
        # the pipelines find the programs through HEDGE_ROOT and BUILD (pipelines/common.sh)
        HEDGE_ROOT=$root
        if [ "$root" = "$top/lib/hedge" ]; then BUILD=$root; else BUILD=${BUILD:-build}; fi
        PYTHONPATH=$root/python${PYTHONPATH:+:$PYTHONPATH}
        export HEDGE_ROOT BUILD PYTHONPATH
        exec sh "$root/pipelines/$name.sh" "$@"
    else
        echo "hedge: '$cmd' is neither a hedge program nor a pipeline (hedge help lists them)" >&2
        echo "Try 'hedge help' for help." >&2
        exit 2
    fi ;;
esac
