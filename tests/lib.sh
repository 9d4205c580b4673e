# Sourced by the shell tests in tests/shell/: a temp dir, the programs on PATH, and checks that
# fail loudly. BIN is set by tests/run.
set -u
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
PATH="$BIN:$PATH"
export OPENBLAS_NUM_THREADS=1
NAME=$(basename "$0" .sh)
fail() { echo "FAIL $NAME: $*" >&2; exit 1; }
pass() { echo "ok $NAME"; exit 0; }
# check_lt A B MESSAGE: A < B as numbers
check_lt() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a + 0 < b + 0 && a != "" && b != "") }' || fail "$3"; }
# expect_exit CODE WHAT cmd...: the command exits CODE and prints nothing on stdout for misuse
expect_exit() {
    want=$1 what=$2; shift 2
    "$@" > "$T/expect.out" 2> "$T/expect.err"
    got=$?
    [ "$got" = "$want" ] || fail "$what: exit $got, expected $want ($(head -c 300 "$T/expect.err"))"
    [ -s "$T/expect.err" ] || fail "$what: no message on stderr"
    if [ "$want" = 2 ] && [ -s "$T/expect.out" ]; then fail "$what: misuse wrote to stdout"; fi
    return 0
}
# expect_fail CODE MESSAGE cmd...: exits CODE, writes nothing on stdout, says MESSAGE on stderr
expect_fail() {
    code=$1 msg=$2
    shift 2
    "$@" >"$T/out" 2>"$T/err"
    rc=$?
    [ $rc -eq "$code" ] || fail "$* exited $rc, expected $code"
    [ -s "$T/out" ] && fail "$* wrote to stdout"
    grep -qF -- "$msg" "$T/err" || fail "$*: no '$msg' in: $(cat "$T/err")"
    return 0
}
# json_get KEY: the value of the first KEY, at any depth, in document order, as JSON text (jq:
# a JSON object nests the same key in its sections, e.g. evaluate's "ap" metric and its "ap" target)
json_get() { jq -c --arg k "$1" 'first(.. | objects | select(has($k)) | .[$k])' | head -n 1; }
# with_file PATH cmd...: runs cmd with every argument that is the word @FILE@ replaced by PATH
with_file() {
    wf_path=$1; shift
    wf_n=$#
    while [ "$wf_n" -gt 0 ]; do
        wf_a=$1; shift
        [ "$wf_a" = @FILE@ ] && wf_a=$wf_path
        set -- "$@" "$wf_a"
        wf_n=$((wf_n - 1))
    done
    "$@"
}
# check_out_file cmd...: cmd writes an output file where the word @FILE@ stands (-o, --json, -i)
# besides its stdout; file and stdout are all or nothing (util.h atomic_open):
#   a path in a missing directory fails (exit 1) before anything reaches stdout;
#   stdout on /dev/full fails (exit 1) and leaves neither the file nor a temp file;
#   a FIFO and a link to /dev/null are written through, not replaced.
# CF_SUFFIX (e.g. .png) ends every file name used.
check_out_file() {
    cf_name=$(basename "$1") cf_sfx=${CF_SUFFIX:-}
    expect_fail 1 "cannot write $T/no-such-dir/" with_file "$T/no-such-dir/out$cf_sfx" "$@"
    rm -f "$T/cf-out"*
    with_file "$T/cf-out$cf_sfx" "$@" > /dev/full 2> "$T/cf-err"
    cf_rc=$?
    [ "$cf_rc" = 1 ] || fail "$cf_name, stdout on /dev/full: exit $cf_rc, expected 1 ($(cat "$T/cf-err"))"
    ls "$T/cf-out"* > /dev/null 2>&1 && fail "$cf_name, stdout on /dev/full: left $(ls "$T/cf-out"*)"
    rm -f "$T/cf-fifo$cf_sfx" "$T/cf-fifo.out"
    mkfifo "$T/cf-fifo$cf_sfx" || fail "mkfifo"
    timeout 60 cat "$T/cf-fifo$cf_sfx" > "$T/cf-fifo.out" &
    cf_pid=$!
    with_file "$T/cf-fifo$cf_sfx" "$@" > /dev/null 2> "$T/cf-err" || fail "$cf_name into a FIFO: $(cat "$T/cf-err")"
    wait $cf_pid || fail "$cf_name into a FIFO: the reader failed"
    [ -p "$T/cf-fifo$cf_sfx" ] || fail "$cf_name replaced the FIFO"
    [ -s "$T/cf-fifo.out" ] || fail "$cf_name wrote nothing into the FIFO"
    rm -f "$T/cf-null$cf_sfx"
    ln -s /dev/null "$T/cf-null$cf_sfx"
    with_file "$T/cf-null$cf_sfx" "$@" > /dev/null 2> "$T/cf-err" || fail "$cf_name into a link to /dev/null: $(cat "$T/cf-err")"
    [ -c /dev/null ] && [ -L "$T/cf-null$cf_sfx" ] || fail "$cf_name replaced /dev/null or the link to it"
    return 0
}

# path_without CMD...: prints a folder that holds a link to every command of /usr/bin and /bin
# but the CMDs, for a PATH on which they are missing (a machine without man-db, say)
path_without() {
    pw_d=$T/path-without-$(echo "$*" | tr ' ' '-')
    mkdir -p "$pw_d" || return 1
    for pw_f in /usr/bin/* /bin/*; do
        pw_n=${pw_f##*/}
        case " $* " in *" $pw_n "*) continue ;; esac
        [ -e "$pw_d/$pw_n" ] || ln -s "$pw_f" "$pw_d/$pw_n" 2> /dev/null
    done
    echo "$pw_d"
}

# wait_caught PID SIGNUM: waits (up to 120 s) until process PID has its handler for signal SIGNUM
# in place (bit SIGNUM - 1 of SigCgt in /proc/PID/status). A command started with & by a
# non-interactive sh begins with SIGINT ignored, so a signal sent before the program installs its
# handler is lost, and the test would wait forever: under load a fixed sleep is not enough.
wait_caught() {
    _i=0
    while [ $_i -lt 1200 ]; do
        # the bit, from the hex mask's digit (SIGNUM - 1) / 4 places from the right (mawk: no and())
        _b=$(awk -v s="$2" '/^SigCgt:/ {
            d = index("0123456789abcdef", substr($2, length($2) - int((s - 1) / 4), 1)) - 1
            print int(d / 2 ^ ((s - 1) % 4)) % 2 }' "/proc/$1/status" 2>/dev/null) || return 1
        [ -n "$_b" ] || return 1
        [ "$_b" = 1 ] && return 0
        sleep 0.1
        _i=$((_i + 1))
    done
    return 1
}
# plain_libhedge ROOT: the tree's plain libhedge.so made (build/lib, as pip's build makes it: make
# sanitize's, built with ASan, cannot be loaded into python3), its path in LIBSO
plain_libhedge() {
    env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u MAKEOVERRIDES -u BUILD -u SANFLAGS make -s -C "$1" lib > "$T/make.log" 2>&1 ||
        fail "make lib: $(tail -n 3 "$T/make.log")"
    LIBSO=$1/build/lib/libhedge.so
}
# check_repeat_resume FEED ARGS...: `FEED | train ARGS -n 40` in two folders gives the same bytes
# (same seed, same bytes), and 20 steps then `train --resume` to 40 the same parameters as the
# run straight through; the resumed checkpoint is left at $T/resumed.ckpt. FEED is a command (a
# shell function) that writes the batches; ARGS name no -o or -n.
check_repeat_resume() {
    crr_feed=$1
    shift
    mkdir -p "$T/repeat.a" "$T/repeat.b"
    (cd "$T/repeat.a" && $crr_feed | train -o m.ckpt -n 40 "$@" 2>/dev/null) || fail "train $* (a)"
    (cd "$T/repeat.b" && $crr_feed | train -o m.ckpt -n 40 "$@" 2>/dev/null) || fail "train $* (b)"
    cmp -s "$T/repeat.a/m.ckpt" "$T/repeat.b/m.ckpt" || fail "train $*: the same seed gave different checkpoints"
    $crr_feed | train -o "$T/resumed.ckpt" -n 20 "$@" 2>/dev/null || fail "train $* -n 20"
    $crr_feed | train --resume "$T/resumed.ckpt" -n 40 -t 1 2>/dev/null || fail "train --resume (of $*)"
    totsv "$T/repeat.a/m.ckpt" > "$T/repeat.a.tsv" && totsv "$T/resumed.ckpt" > "$T/resumed.tsv" || fail "totsv"
    cmp -s "$T/repeat.a.tsv" "$T/resumed.tsv" || fail "train $*: a resumed run differs from the uninterrupted one"
}
