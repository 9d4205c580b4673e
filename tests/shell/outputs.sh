#!/bin/sh
# outputs: the output files of lib/base/util.h's atomic_open when several writers meet. Four `train -o
# m.ckpt` into one path at once (a save at every step): each exits 0, and m.ckpt is then one run's
# whole checkpoint, byte for byte the one that run's seed gives alone (they shared one temp name,
# m.ckpt.tmp: three of four failed "cannot rename", and one could exit 0 over another's model);
# no temp file is left. The temp file of a writer killed with -9 (nobody holds its lock) goes at
# the next write of that path, a live writer's (locked) and other files stay. --json /dev/stderr
# (or a link to it) writes where stderr stands: a log given as `2> log` or `2>> log` keeps what
# was in it (it was opened again with O_TRUNC: the log was lost).
. "$(dirname "$0")/../lib.sh"
cd "$T" || fail "cd $T"
mkdigits -N 2 -s test-seen -n 2000 > a.hs || fail "mkdigits"
batcher -m pairs -b 16 -n 40 < a.hs > b.hs || fail "batcher"
TR="--head point -D 2 -n 30 -t 1 --save-every 1"

# --- four runs of train into one path at once, two rounds
for round in 1 2; do
    rm -f m.ckpt
    for s in 1 2 3 4; do
        { train -o m.ckpt $TR -S $s < b.hs > /dev/null 2> run$s.err; echo $? > run$s.rc; } &
    done
    wait
    for s in 1 2 3 4; do
        [ "$(cat run$s.rc)" = 0 ] || fail "round $round: train -S $s into the shared m.ckpt exited $(cat run$s.rc): $(cat run$s.err)"
    done
    seed=$(tshow -H m.ckpt | /usr/bin/python3 -c 'import json, sys; print(json.load(sys.stdin)["provenance"]["seed"])')
    case $seed in 1 | 2 | 3 | 4) ;; *) fail "round $round: m.ckpt holds seed '$seed', none of the four runs'" ;; esac
    mkdir -p alone$seed
    [ -s alone$seed/m.ckpt ] || (cd alone$seed && train -o m.ckpt $TR -S $seed < ../b.hs > /dev/null 2> err) ||
        fail "train -S $seed alone: $(cat alone$seed/err)"
    cmp -s m.ckpt alone$seed/m.ckpt || fail "round $round: m.ckpt is not the whole checkpoint of seed $seed's run"
    left=$(ls -A | grep '^m\.ckpt\.')
    [ -z "$left" ] || fail "round $round: the runs left $left"
done

# --- what a writer killed with -9 left goes at the next write; a live writer's temp file stays
printf 'half a checkpoint' > k.ckpt.tmp.dead0001
printf 'half of another' > k.ckpt.tmp.dead0002
: > k.ckpt.tmp.fresh001  # empty and new: a writer between making its temp file and locking it
printf 'a shell temp' > k.ckpt.tmp.12345 # "$f.tmp.$$": not hedge's
printf x > k.ckpt.tmp.live0001
(exec 8< k.ckpt.tmp.live0001 && flock 8 && echo locked > held && exec sleep 60) &
holder=$!
i=0
while [ ! -s held ] && [ $i -lt 200 ]; do sleep 0.1; i=$((i + 1)); done
[ -s held ] || fail "flock never held k.ckpt.tmp.live0001"
train -o k.ckpt $TR -S 1 < b.hs > /dev/null 2> k.err || fail "train -o k.ckpt beside leftovers: $(cat k.err)"
for f in dead0001 dead0002; do [ -e k.ckpt.tmp.$f ] && fail "k.ckpt.tmp.$f (nobody's lock) is still there"; done
for f in fresh001 12345 live0001; do [ -e k.ckpt.tmp.$f ] || fail "train removed k.ckpt.tmp.$f"; done
kill "$holder" 2> /dev/null
wait "$holder" 2> /dev/null
embed -m k.ckpt < a.hs > /dev/null || fail "the checkpoint saved beside leftovers is broken"

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

# --- a FIFO stays open for its one reader while knn executes itself again (blas_init, for
# another OpenBLAS kernel, where this machine needs one): closed on exec, the reader saw its end
# and the new image's open of the FIFO waited for a reader for ever
mkfifo j.fifo || fail "mkfifo"
cat j.fifo > fifo.out &
reader=$!
knn --json j.fifo e.hs > /dev/null 2> fifo.err &
writer=$!
i=0
while kill -0 $writer 2> /dev/null && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
if kill -0 $writer 2> /dev/null; then
    kill $writer $reader 2> /dev/null
    fail "knn --json FIFO still runs after 30 s (waiting for a reader?)"
fi
wait $writer || fail "knn --json FIFO: $(cat fifo.err)"
wait $reader
grep -q '"accuracy": 1' fifo.out || fail "knn --json FIFO: the reader got $(head -c 200 fifo.out)"
pass
