#!/bin/sh
# outputs: the output files of lib/util.h's atomic_open when several writers meet. --json
# /dev/stderr (or a link to it) writes where stderr stands: a log given as `2> log` or `2>> log`
# keeps what was in it (it was opened again with O_TRUNC: the log was lost).
. "$(dirname "$0")/../lib.sh"
cd "$T" || fail "cd $T"

# --- --json /dev/stderr into a log: what the log held stays
/usr/bin/python3 -c 'import numpy as np; y = np.arange(40) % 2; np.savez("e.npz", mu=np.eye(2)[y] * 10 + 0.01 * np.arange(40)[:, None], labels=y)' ||
    fail "e.npz"
fromnpz e.npz > e.hs || fail "fromnpz e.npz"
ln -s /dev/stderr link.json
for how in '2>' '2>>' 'link'; do
    rm -f log
    case $how in
    '2>') { echo before >&2; knn --json /dev/stderr e.hs > /dev/null; } 2> log ;;
    '2>>') echo before > log; knn --json /dev/stderr e.hs > /dev/null 2>> log ;;
    link) { echo before >&2; knn --json link.json e.hs > /dev/null; } 2> log ;;
    esac || fail "knn --json /dev/stderr ($how log): $(cat log)"
    [ "$(head -n 1 log)" = before ] || fail "knn --json /dev/stderr ($how log) lost what the log held: $(head -c 300 log)"
    grep -q '"accuracy": 1' log || fail "knn --json /dev/stderr ($how log): no JSON in the log: $(head -c 300 log)"
done
[ -L link.json ] || fail "the link to /dev/stderr was replaced"
pass
