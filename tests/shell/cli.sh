#!/bin/sh
# cli: the command-line convention of docs/cli.md, held over every program in build/bin:
# -h and --help print a short synopsis naming the man page (exit 0); --version prints
# "PROG (hedge) VERSION" (exit 0); misuse is one line and the "Try" line (exit 2, nothing on
# stdout, no getopt line); a program that writes a binary stream refuses a terminal (exit 2, one
# line); --json takes a FILE (- for stdout); TSV outputs have one plain header line. The command
# hedge of a source tree shows the man pages before `make man` has made them.
# A new program fails here until it is listed in the tables below and follows the convention.
. "$(dirname "$0")/../lib.sh"
FIX=$BIN/../tests/test_evalfix
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
version=$(cat "$ROOT/VERSION") || fail "no VERSION file"

# what each program writes on stdout: stream (the arguments that would make it write one, with
# files that need not exist: the refusal comes before any input is opened) or text
stream_args() {
    case $1 in
    batcher) echo "-n 1 $T/none.hs" ;;
    disentangle) echo "$T/none.hs" ;;
    embed) echo "-m $T/none.ckpt" ;;
    fewshot) echo "-s $T/none.hs $T/none.hs" ;;
    fromnpz) echo "$T/none.npz" ;;
    knn) echo "$T/none.hs" ;;
    mkdigits) echo "-N 1 -s test-seen -n 10" ;;
    mkshapes) echo "-n 4" ;;
    occlude) echo "$T/none.hs" ;;
    pairscore) echo "$T/none.hs" ;;
    qembed) echo "-m $T/none.ckpt 07" ;;
    retrieve) echo "$T/none.hs" ;;
    tonpz) echo "$T/none.hs" ;;
    tshow) echo "-p $T/none.hs" ;;
    apcurve | centroids | cluster | evaluate | ktau | mnistjson | seedstat | totsv | train | trainstat) echo text ;;
    *) echo unknown ;;
    esac
}

# on_tty CMD: runs CMD (a shell command line) with stdout on a terminal (a pty from script(1))
# and stdin from /dev/null; the pty's text goes to $T/tty.out, the exit code is returned
on_tty() { timeout 60 script -qec "$1 < /dev/null" /dev/null > "$T/tty.out" 2>&1; }

n=0
for p in "$BIN"/*; do
    [ -x "$p" ] && [ -f "$p" ] || continue
    prog=$(basename "$p")
    n=$((n + 1))
    # -h and --help: the same short synopsis, naming the man page, nothing on stderr
    "$p" --help > "$T/help" 2> "$T/help.err" || fail "$prog --help: exit $?"
    [ -s "$T/help.err" ] && fail "$prog --help wrote on stderr: $(cat "$T/help.err")"
    head -n 1 "$T/help" | grep -q "^usage: $prog" || fail "$prog --help does not begin with 'usage: $prog'"
    grep -qF "man hedge-$prog" "$T/help" || fail "$prog --help does not name the man page hedge-$prog"
    lines=$(wc -l < "$T/help")
    [ "$lines" -le 12 ] || fail "$prog --help is $lines lines: the synopsis is at most 12, the rest belongs in man/$prog.1.scd"
    "$p" -h > "$T/h" 2>&1 || fail "$prog -h: exit $?"
    cmp -s "$T/h" "$T/help" || fail "$prog -h differs from --help"
    # --version, also after other options
    "$p" --version > "$T/v" 2>&1 || fail "$prog --version: exit $?"
    grep -qx "$prog (hedge) $version\(-g[0-9a-f]*\(-dirty\)\{0,1\}\)\{0,1\}" "$T/v" ||
        fail "$prog --version: '$(cat "$T/v")', expected '$prog (hedge) $version[-gCOMMIT]'"
    [ "$(wc -l < "$T/v")" = 1 ] || fail "$prog --version: more than one line"
    "$p" -S 1 --version > "$T/v2" 2>&1 && cmp -s "$T/v" "$T/v2" || fail "$prog -S 1 --version differs from --version"
    # misuse, an unknown long and short option: exactly the message and the Try line
    for bad in --no-such-option -@; do
        "$p" $bad > "$T/m.out" 2> "$T/m.err"
        rc=$?
        [ $rc = 2 ] || fail "$prog $bad: exit $rc, expected 2"
        [ -s "$T/m.out" ] && fail "$prog $bad wrote on stdout"
        [ "$(wc -l < "$T/m.err")" = 2 ] || fail "$prog $bad: expected 2 lines on stderr, got: $(cat "$T/m.err")"
        head -n 1 "$T/m.err" | grep -q "^$prog: .*$bad" || fail "$prog $bad: first line '$(head -n 1 "$T/m.err")'"
        sed -n 2p "$T/m.err" | grep -qx "Try '$prog --help' for help." || fail "$prog $bad: second line '$(sed -n 2p "$T/m.err")'"
    done
    # a binary stream is never written to a terminal
    a=$(stream_args "$prog")
    case $a in
    unknown) fail "$prog is not in tests/shell/cli.sh's table: does it write a stream on stdout?" ;;
    text) ;;
    *)
        on_tty "$p $a"
        rc=$?
        [ $rc = 2 ] || fail "$prog $a with stdout on a terminal: exit $rc, expected 2 ($(head -c 200 "$T/tty.out" | tr -cd '[:print:]\n'))"
        [ "$(tr -d '\r' < "$T/tty.out" | wc -l)" = 1 ] || fail "$prog on a terminal: not one line: $(head -c 300 "$T/tty.out")"
        grep -q "^$prog: will not write a binary stream to a terminal" "$T/tty.out" ||
            fail "$prog on a terminal: $(head -c 300 "$T/tty.out")" ;;
    esac
done
[ $n -ge 21 ] || fail "only $n programs in $BIN"
# the same program refused on a terminal writes to a pipe as before
on_tty "$BIN/mkshapes -n 4 | wc -c" || fail "mkshapes into a pipe under a terminal: $(cat "$T/tty.out")"

# --json FILE everywhere, - for stdout: there the JSON takes the place of the text; a program
# whose stdout carries a stream refuses -
printf '0.9 1\n0.8 0\n0.8 1\n0.1 1\n' | "$FIX" table pairscores p:float32 match:uint8 > "$T/ps.hs" || fail "fixture"
apcurve --json - "$T/ps.hs" > "$T/a.json" || fail "apcurve --json -"
grep -q '^{"program": "apcurve", "n": 4,' "$T/a.json" && [ "$(wc -l < "$T/a.json")" = 1 ] || fail "apcurve --json -: $(cat "$T/a.json")"
apcurve --json "$T/a2.json" "$T/ps.hs" > "$T/a.txt" || fail "apcurve --json FILE"
cmp -s "$T/a.json" "$T/a2.json" || fail "apcurve --json FILE differs from --json -"
grep -qx 'ap 0.805556' "$T/a.txt" || fail "apcurve --json FILE: the text on stdout is gone"
expect_exit 2 "apcurve --json without FILE" apcurve "$T/ps.hs" --json
printf '12 0\n13 1\n12 1\n' | "$FIX" table embeddings class:int32 mu:float32:1x1 -m digits=2 > "$T/e.hs" || fail "fixture"
centroids --order --json - "$T/e.hs" | grep -q '^{"program": "centroids", "classes": 2,' || fail "centroids --order --json -"
centroids --order --json "$T/c.json" "$T/e.hs" > "$T/c.txt" && grep -q '"classes": 2' "$T/c.json" && [ -s "$T/c.txt" ] ||
    fail "centroids --order --json FILE"
for p in disentangle "fewshot -s $T/e.hs" knn pairscore retrieve; do
    expect_fail 2 "--json -: stdout carries the stream" $p --json - "$T/e.hs"
done

# TSV: exactly one plain header line (no '#'), then the rows
apcurve -o "$T/pr.tsv" "$T/ps.hs" > /dev/null || fail "apcurve -o"
centroids "$T/e.hs" > "$T/c.tsv" || fail "centroids"
totsv "$T/e.hs" > "$T/t.tsv" || fail "totsv"
for f in pr c t; do
    head -n 1 "$T/$f.tsv" | grep -q '^[a-z]' || fail "$f.tsv: the header '$(head -n 1 "$T/$f.tsv")' is not one plain line"
    [ "$(grep -c '^#' "$T/$f.tsv")" = 0 ] || fail "$f.tsv has a # line"
done
expect_exit 2 "totsv -H (no header is no longer an option)" totsv -H "$T/e.hs"

# the command hedge in a source tree where `make man` has not run (bin/hedge.sh, a build without
# man/): hedge help shows the pages made from man/*.scd, the stream format's too
mkdir -p "$T/noman" && ln -s "$BIN" "$T/noman/bin" || fail "a build without man pages"
if command -v man > /dev/null; then
    BUILD=$T/noman MANPAGER=cat sh "$ROOT/bin/hedge.sh" help stream > "$T/hs" 2>&1 && grep -q 'THE TRAILER' "$T/hs" ||
        fail "hedge help stream without make man: $(head -c 300 "$T/hs")"
    BUILD=$T/noman MANPAGER=cat sh "$ROOT/bin/hedge.sh" help knn > "$T/hk" 2>&1 && grep -q 'EXIT STATUS' "$T/hk" ||
        fail "hedge help knn without make man: $(head -c 300 "$T/hk")"
fi
# without man-db (a fresh Debian): hedge help shows the page through nroff, or with no formatter
# as plain text, and says how to get man; never the synopsis that points back at hedge help
# (before: `PROG --help`, 'installed: hedge help PROG'); the same for the stream format and hedge
H="$ROOT/bin/hedge.sh"
for gone in "man mandoc" "man mandoc nroff groff troff"; do
    # (the nroff case only where there is one: a fresh Debian has no groff-base)
    case $gone in *nroff*) ;; *) command -v nroff > /dev/null 2>&1 || continue ;; esac
    P=$(path_without $gone) || fail "path_without $gone"
    for what in "knn:EXIT STATUS" "stream:THE TRAILER" "hedge:hedge help PROGRAM"; do
        page=${what%%:*} want=${what#*:}
        PATH=$P sh "$H" help $page > "$T/hp" 2> "$T/hp.err" || fail "hedge help $page without $gone: exit $? ($(cat "$T/hp.err"))"
        grep -q "$want" "$T/hp" || fail "hedge help $page without $gone: no '$want' in: $(head -c 300 "$T/hp")"
        grep -q "installed: hedge help" "$T/hp" && fail "hedge help $page without $gone points to itself: $(head -c 300 "$T/hp")"
        case $gone in
        *nroff*) grep -q 'apt-get install man-db' "$T/hp.err" || fail "hedge help $page without a formatter: no hint on stderr: $(cat "$T/hp.err")" ;;
        *) [ -s "$T/hp.err" ] && fail "hedge help $page with nroff: $(cat "$T/hp.err")" ;;
        esac
    done
done
# what hedge prints itself fails on a full disk, in one line (hedge help > /dev/full exited 0)
for a in help "help hib" --version --python-path; do
    sh "$H" $a > /dev/full 2> "$T/full.err"
    rc=$?
    [ $rc = 1 ] && [ "$(cat "$T/full.err")" = "hedge: cannot write standard output" ] ||
        fail "hedge $a > /dev/full: exit $rc, $(cat "$T/full.err")"
done
pass
