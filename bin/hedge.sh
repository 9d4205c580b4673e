#!/bin/sh
# hedge: runs hedge's programs and pipelines as git runs its subcommands, so that their short
# names (train, embed, knn) never clash with other tools on PATH:
#   hedge PROGRAM [ARGS...]      a program, e.g. hedge mkdigits -N 2 | hedge occlude -p 1
#   hedge PIPELINE [ARGS...]     a pipeline script, e.g. hedge hib-data 2 data/N2 (or hib-data.sh)
#   hedge help [NAME]            the programs and pipelines, or NAME's man page
#   hedge --version
#   hedge --python-path          where hedge_stream.py is: PYTHONPATH=$(hedge --python-path)
# `make install` puts this script in PREFIX/bin/hedge, the programs in PREFIX/lib/hedge/bin, the
# pipelines in PREFIX/lib/hedge/pipelines, the Python module in PREFIX/lib/hedge/python and the
# man pages in PREFIX/share/man; everything is found from where this script is, so a tree
# installed into a DESTDIR works as it is. In the source tree (bin/hedge.sh) it runs build/bin.
set -u
self=$(readlink -f "$0" 2>/dev/null || echo "$0")
top=$(cd "$(dirname "$self")/.." && pwd)
if [ -d "$top/lib/hedge/bin" ]; then
    root=$top/lib/hedge bin=$top/lib/hedge/bin man=$top/share/man
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
pipelines() { for p in "$root"/pipelines/*.sh; do [ -f "$p" ] && basename "$p" .sh; done | grep -v '^common$'; }

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
        echo "The stream format: hedge help stream. Python: PYTHONPATH=\$(hedge --python-path), import hedge_stream."
        return 0
    fi
    name=${1%.sh}
    if [ -x "$bin/$name" ]; then
        page=$man/man1/hedge-$name.1
        [ -f "$page" ] || page=$man/hedge-$name.1
        if [ -f "$page" ] && command -v man > /dev/null 2>&1; then
            exec man -l "$page"
        fi
        command -v man > /dev/null 2>&1 && man -w "hedge-$name" > /dev/null 2>&1 && exec man "hedge-$name"
        exec "$bin/$name" --help
    elif [ -f "$root/pipelines/$name.sh" ]; then
        sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p;}' "$root/pipelines/$name.sh"
    elif [ "$name" = stream ]; then
        page=$man/man5/hedge-stream.5
        [ -f "$page" ] || page=$man/hedge-stream.5
        exec man -l "$page"
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
