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
json_get() { sed -n "s/.*\"$1\": *\([^,}]*\).*/\1/p" | head -n 1; }
