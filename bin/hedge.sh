#!/bin/sh
# hedge: runs hedge's programs and pipelines as git runs its subcommands, so that their short
# names (train, embed, knn) never clash with other tools on PATH:
#   hedge PROGRAM [ARGS...]      a program, e.g. hedge mkdigits -N 2 | hedge occlude -p 1
#   hedge PIPELINE [ARGS...]     a pipeline script, e.g. hedge hib-data 2 data/N2 (or hib-data.sh)
#   hedge help [NAME]            the programs and the user's pipelines, or NAME's man page (with
#                                man, else mandoc or nroff, else as plain text: man-db is not on
#                                every machine); hedge help stream, hedge help hedge: those pages
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

# out TEXT: TEXT and a newline on stdout, or one line and exit 1 when stdout cannot take it (a
# full disk, /dev/full): what hedge prints itself fails as the programs do
out() {
    printf '%s\n' "$1" 2> /dev/null || { echo "hedge: cannot write standard output" >&2; exit 1; }
}

# roff_text FILE: the man page FILE (roff as scdoc writes it) as plain text, for a machine with
# neither man nor a roff formatter: headings flush left, text indented and filled to 78 columns,
# .RS/.RE nesting, .nf/.fi blocks as they are, font changes and escapes dropped
roff_text() {
    awk '
    function clean(s) {
        gsub(/\\f[BIRP]/, "", s); gsub(/\\f\(..|\\f\[[^]]*\]/, "", s); gsub(/\\&/, "", s)
        gsub(/\\\(aq|\\\*\(Aq/, "'"'"'", s); gsub(/\\\(em/, "--", s); gsub(/\\\(en|\\-/, "-", s)
        gsub(/\\\(dq/, "\"", s); gsub(/\\ /, " ", s); gsub(/\\e/, "\\", s)
        return s
    }
    function pad(n,   s) { s = ""; while (n-- > 0) s = s " "; return s }
    function emit(line) { if (line == "" && (blank || head)) return; blank = line == ""; head = 0; print line }
    function flush(   n, i, w, line) {
        if (para == "") return
        n = split(para, w, /[ \t]+/); line = ""
        for (i = 1; i <= n; i++) {
            if (w[i] == "") continue
            if (line != "" && ind + length(line) + 1 + length(w[i]) > 78) { emit(pad(ind) line); line = w[i] }
            else line = line (line == "" ? "" : " ") w[i]
        }
        if (line != "") emit(pad(ind) line)
        para = ""
    }
    BEGIN { ind = 7; depth = 0; fill = 1; blank = 1 }
    /^\.\\"/ || /^\.(ie|el|nh|ad|ds|hy|na)([ \t]|$)/ { next }
    /^\.TH / { n = split($0, f, "\""); emit(f[2] "(" f[4] ")" pad(8) f[10]); emit(""); next }
    /^\.SH / { flush(); sub(/^\.SH +/, ""); gsub(/"/, ""); emit(""); emit(clean($0)); head = 1; ind = 7; depth = 0; next }
    /^\.SS / { flush(); sub(/^\.SS +/, ""); gsub(/"/, ""); emit(""); emit(pad(3) clean($0)); head = 1; next }
    /^\.(P|PP|LP|IP|sp)([ \t]|$)/ { flush(); emit(""); next }
    /^\.br([ \t]|$)/ { flush(); next }
    /^\.RS/ { flush(); step[++depth] = ($2 == "" ? 7 : $2 + 0); ind += step[depth]; next }
    /^\.RE/ { flush(); if (depth > 0) ind -= step[depth--]; next }
    /^\.nf/ { flush(); fill = 0; next }
    /^\.fi/ { fill = 1; next }
    /^\./ { next }
    { if (fill) para = para " " clean($0); else emit(pad(ind) clean($0)) }
    END { flush() }' "$1"
}

# show_page FILE: the man page in FILE, through man (man-db's man -l) when there is one, else
# formatted by mandoc or groff's nroff, else as plain text (roff_text) with one line on stderr
# saying how to get man; through a pager on a terminal. Exits with its status.
show_page() {
    if command -v man > /dev/null 2>&1; then exec man -l "$1"; fi
    sp_bs=$(printf '\b')
    if command -v mandoc > /dev/null 2>&1; then
        sp_text=$(mandoc -T utf8 "$1" | sed "s/.$sp_bs//g" | cat -s)
    elif command -v nroff > /dev/null 2>&1; then
        sp_text=$(GROFF_NO_SGR=1 nroff -man -Tutf8 "$1" 2> /dev/null | sed "s/.$sp_bs//g" | cat -s)
    else
        echo "hedge: man is not installed (apt-get install man-db): the page as plain text" >&2
        sp_text=$(roff_text "$1")
    fi
    [ -n "$sp_text" ] || { echo "hedge: cannot format $1" >&2; exit 1; }
    if [ -t 1 ] && command -v "${PAGER:-less}" > /dev/null 2>&1; then
        printf '%s\n' "$sp_text" | ${PAGER:-less}
        exit 0
    fi
    out "$sp_text"
    exit 0
}

# page SECTION NAME: shows the man page hedge-NAME(SECTION) (hedge(1) for NAME hedge): the
# installed or built page, else, in a source tree where `make man` has not run, the page scdoc
# makes from man/NAME.SECTION.scd; returns 1 when there is neither
page() {
    if [ "$2" = hedge ]; then pg_base=hedge.$1 pg_src=hedge.$1; else pg_base=hedge-$2.$1 pg_src=$2.$1; fi
    pg_file=$man/man$1/$pg_base
    [ -f "$pg_file" ] || pg_file=$man/$pg_base
    [ -f "$pg_file" ] && show_page "$pg_file"
    if [ -f "$top/man/$pg_src.scd" ] && command -v scdoc > /dev/null 2>&1; then
        pg_tmp=$(mktemp) || return 1
        trap 'rm -f "$pg_tmp"' EXIT
        trap 'exit 1' INT TERM HUP
        scdoc < "$top/man/$pg_src.scd" > "$pg_tmp" || return 1
        (show_page "$pg_tmp")
        exit
    fi
    return 1
}

# the listing of `hedge help`
listing() {
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
    echo "The stream format: hedge help stream; this command: hedge help hedge. Python: import hedge (PYTHONPATH=\$(hedge --python-path))."
    [ -n "${HEDGE_MNIST:-}" ] && echo "The MNIST: $HEDGE_MNIST (hedge fetch-mnist fetches it there, about 11 MB)."
    return 0
}

help() {
    if [ $# = 0 ]; then
        out "$(listing)"
        return 0
    fi
    not_a_name "$1"
    name=${1%.sh}
    if [ -x "$bin/$name" ] && [ -f "$bin/$name" ]; then
        page 1 "$name"
        command -v man > /dev/null 2>&1 && man -w "hedge-$name" > /dev/null 2>&1 && exec man "hedge-$name"
        # no page anywhere (a source tree without scdoc): the synopsis, and where the manual is
        out "$("$bin/$name" --help | grep -v '^Options, details and examples: ')"
        echo "hedge: the manual of $name is not built here (make man, which needs scdoc; it is man/$name.1.scd)" >&2
        return 0
    elif [ -f "$root/pipelines/$name.sh" ]; then
        out "$(sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p;}' "$root/pipelines/$name.sh")"
    elif [ "$name" = stream ] || [ "$name" = hedge ]; then
        if [ "$name" = stream ]; then page 5 stream; else page 1 hedge; fi
        # no man page to show: the format's specification itself, in a source tree
        [ "$name" = stream ] && [ -f "$top/formats/stream.md" ] && out "$(cat "$top/formats/stream.md")" && return 0
        echo "hedge: no page hedge-$name here (make man, which needs scdoc)" >&2
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
--version) v=$("$bin/tshow" --version) || exit 1; out "hedge ${v#tshow (hedge) }" ;;
--python-path) out "$root/python" ;;
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
