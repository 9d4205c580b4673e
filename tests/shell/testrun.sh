#!/bin/sh
# testrun: tests/run, the runner of `make test`, on a tree of three stand-in tests (one passes at
# once, one fails, one takes 3 s): while they run, stderr says every PROGRESS_EVERY seconds how
# long the run has taken, how many are done and which run, for how long (make test was silent
# for minutes while pipeline.sh ran, since parallel -k holds back the lines after it); stdout
# is as other tools read it: the lines "ok   NAME (Ns)" and "FAIL NAME (exit N, Ns)" in the
# order of the list, the "failed:" line and "N passed, M failed", and nothing else; the exit
# status says a test failed; the run ends when the tests do (no progress line holds it).
. "$(dirname "$0")/../lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$T/tree/tests/shell" "$T/tree/build/bin" "$T/tree/build/tests" || fail "mkdir"
cp "$ROOT/tests/run" "$T/tree/tests/run" || fail "cp tests/run"
printf '#!/bin/sh\nexit 0\n' > "$T/tree/tests/shell/a-quick.sh"
printf '#!/bin/sh\necho "it broke"\nexit 3\n' > "$T/tree/tests/shell/b-bad.sh"
printf '#!/bin/sh\nsleep 3\n' > "$T/tree/tests/shell/c-slow.sh"
cd "$T/tree" || fail "cd"
t0=$(date +%s)
env -u ONLY PROGRESS_EVERY=1 JOBS=2 BUILD=build sh tests/run > out 2> err
rc=$?
took=$(($(date +%s) - t0))
[ $rc != 0 ] || fail "tests/run exited 0 with a failing test"
[ "$took" -le 8 ] || fail "tests/run took $took s for tests of 3 s"
cat > want <<'EOF'
ok   a-quick.sh (0s)
FAIL b-bad.sh (exit 3, 0s)
     | it broke
ok   c-slow.sh (3s)

failed: b-bad.sh
2 passed, 1 failed
EOF
# (the slow test's own second may read 3 or 4 on a loaded machine)
sed 's/^ok   c-slow.sh ([34]s)$/ok   c-slow.sh (3s)/' out | cmp -s - want || fail "tests/run's stdout: $(cat out)"
grep -q '^tests: 0:0[1-9] elapsed, [0-2] of 3 done; running: \(.*, \)\{0,1\}c-slow.sh 0:0[0-3]' err ||
    fail "no progress line naming the slow test: $(cat err)"
grep -v '^tests: [0-9]*:[0-9][0-9] elapsed, [0-3] of 3 done' err | grep -q . && fail "tests/run wrote on stderr: $(cat err)"
pass
