#!/bin/sh
# trainstat and the progress `make demo` shows (pipelines/common.sh grid_progress): on run
# folders made by hand, every line to the character (rates and times left derived by hand); bad
# logs and misuse; then a real tiny training watched by grid_progress, as plain lines when stderr
# is not a terminal and rewritten in place on one (a pty from script(1)), cleared at its end.
set -u
. "$(dirname "$0")/../lib.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)
HEDGE_ROOT=$root BUILD=$(dirname "$BIN")
export HEDGE_ROOT BUILD
cd "$T"
header=$(printf 'step\tloss\tnll\tkl\ta\tb\tmean_var\timages_per_s\tseconds\tlr\tacc\tse2')
# log RUN STEP SECONDS...: RUN/train.log with train's header and a line per STEP SECONDS pair
log() {
    lg_run=$1; shift
    mkdir -p "$lg_run"
    { echo "$header"; printf '%s\t0\t0\t0\t0\t0\t0\t0\t%s\t0\t0\t0\n' "$@"; } > "$lg_run/train.log"
}

# five runs of 1,000 steps:
#   a: finished (results.tsv)
#   b: (150, 30 s), (300, 60 s): no line 60 s before the last, so from the start: 300 / 60 = 5
#      steps/s, 700 steps left: 140 s
#   c: no folder: waiting
#   d: logged its last step: evaluating
#   e: resumed at step 200 (the seconds start again): (250, 5 s), (300, 15 s), from step 200 at
#      0 s: 100 / 15 = 6.67 steps/s, 700 left: 105 s
#   all: 700 + 1000 + 700 = 2400 steps at 5 + 6.667 steps/s: 205.7 s, 3:26
mkdir -p runs/a && printf 'a\tclean\tap\t0.9\n' > runs/a/results.tsv
log runs/b 150 30 300 60
log runs/d 950 190 1000 200
log runs/e 100 20 200 40 250 5 300 15
trainstat -n 1000 runs/a runs/b/ runs/c runs/d runs/e > got 2> err || fail "trainstat: exit $? ($(cat err))"
cat > want <<'EOF'
a  done
b  step 300/1000 (30.0%), 5.0 steps/s, 2:20 left
c  waiting
d  trained (1000 steps), evaluating
e  step 300/1000 (30.0%), 6.7 steps/s, 1:45 left
runs done 1 of 5, training 3:26 left (11.7 steps/s in all)
EOF
cmp -s got want || fail "trainstat printed
$(cat got)
expected
$(cat want)"
# a log whose last line is being written: left out; nothing trained yet; everything finished
printf '350\t0' >> runs/b/train.log
trainstat -n 1000 runs/b | grep -qx 'b  step 300/1000 (30.0%), 5.0 steps/s, 2:20 left' ||
    fail "a line without its newline was read: $(trainstat -n 1000 runs/b)"
mkdir -p runs/f && echo "$header" > runs/f/train.log
trainstat -n 1000 runs/c runs/f | tail -n 1 | grep -qx 'runs done 0 of 2, training time left not known yet' ||
    fail "runs that have not started: $(trainstat -n 1000 runs/c runs/f)"
trainstat -n 1000 runs/a runs/d | tail -n 1 | grep -qx 'runs done 1 of 2, training finished' ||
    fail "runs trained: $(trainstat -n 1000 runs/a runs/d)"
# an hour and more: H:MM:SS (1,000,000 - 300 steps at 5 a second: 199,940 s)
trainstat -n 1000000 runs/b | grep -qx 'b  step 300/1000000 (0.0%), 5.0 steps/s, 55:32:20 left' ||
    fail "a long time left: $(trainstat -n 1000000 runs/b)"

# bad data: exit 1, the file named, nothing on stdout (not even the runs before it)
mkdir -p runs/x && printf 'step\tloss\n50\t1\n' > runs/x/train.log
expect_fail 1 "runs/x/train.log: not a train log" trainstat -n 1000 runs/b runs/x
log runs/y 50 10
printf '100\t0.5\n' >> runs/y/train.log
expect_fail 1 "runs/y/train.log: line 3 is not a step and its seconds" trainstat -n 1000 runs/b runs/y
# misuse: exit 2
expect_fail 2 "-n STEPS is required" trainstat runs/b
expect_fail 2 "no RUN folder" trainstat -n 10
expect_exit 2 "-n 0" trainstat -n 0 runs/b

# a real run watched: grid_progress PREFIX OUT CONFIGS STEPS PID while train trains run a of a
# grid of two (b never starts); stderr not a terminal: plain lines every PROGRESS_EVERY seconds
mkdigits -N 2 -s train -n 2000 > train.hs || fail "mkdigits"
printf 'a 2 2\nb 2 2\n' > configs
mkdir -p grid/runs/a
start_train() {
    batcher -m pairs -b 16 -S 1 < train.hs 2> /dev/null |
        train -o grid/runs/a/m.ckpt -D 2 -n 1000000 -t 1 --log grid/runs/a/train.log 2> /dev/null &
}
start_train
pid=$!
(. "$root/pipelines/common.sh" && PROGRESS_EVERY=1 grid_progress t grid configs 1000000 "$pid") 2> progress &
watcher=$!
i=0
until grep -q '^t: a  step [0-9]*/1000000 ' progress 2> /dev/null || ! kill -0 "$pid" 2> /dev/null || [ $i -ge 240 ]; do sleep 0.5; i=$((i + 1)); done
kill "$pid" 2> /dev/null
wait "$pid"
wait "$watcher" || fail "grid_progress did not end by itself when its process ended"
grep -Eq '^t: a  step [0-9]+/1000000 \(0\.[0-9]%\), [0-9.]+ steps/s, [0-9:]+ left$' progress ||
    fail "no step line for the run in training: $(tail -n 3 progress)"
grep -qx 't: b  waiting' progress || fail "no line for the run that waits: $(tail -n 3 progress)"
grep -Eq '^t: runs done 0 of 2, training [0-9:]+ left \([0-9.]+ steps/s in all\)$' progress ||
    fail "no line for the whole grid: $(tail -n 3 progress)"
grep -q "$(printf '\033')" progress && fail "escape sequences where stderr is not a terminal"

# on a terminal: the three lines rewritten in place (cursor up 3, erase below) and cleared when
# the watcher is ended
cat > tty.sh <<EOF
. "$root/pipelines/common.sh"
cd "$T"
rm -f grid/runs/a/train.log grid/runs/a/m.ckpt
batcher -m pairs -b 16 -S 1 < train.hs 2> /dev/null |
    train -o grid/runs/a/m.ckpt -D 2 -n 1000000 -t 1 --log grid/runs/a/train.log 2> /dev/null &
pid=\$!
grid_progress t grid configs 1000000 "\$pid" &
watcher=\$!
i=0
until [ "\$(grep -c . grid/runs/a/train.log 2> /dev/null)" -ge 3 ] || [ \$i -ge 240 ]; do sleep 0.5; i=\$((i + 1)); done
sleep 5
kill "\$watcher"
wait "\$watcher"
kill "\$pid"
wait "\$pid" # train ends on TERM with 143, having saved its checkpoint
exit 0
EOF
timeout 300 script -qec "sh tty.sh < /dev/null" /dev/null > tty.out 2>&1 || fail "the terminal run failed: $(tail -n 3 tty.out)"
esc=$(printf '\033')
grep -q "^${esc}\[3A.${esc}\[Jt: a  step [0-9]*/1000000 " tty.out ||
    fail "the lines are not rewritten in place on a terminal: $(tail -n 5 tty.out | od -c | head -n 10)"
[ "$(tail -n 1 tty.out | tr -d '\r')" = "${esc}[3A${esc}[J" ] ||
    fail "something follows the clearing: $(tail -n 2 tty.out | od -c | tail -n 4)"
pass
