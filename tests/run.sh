#!/bin/sh
# Runs every unit test (build/tests/test_*) and every shell test (tests/*.sh), prints one line
# per test and the closing "N passed, M failed". Exits non-zero if any test failed.
# Environment: BUILD (build dir), DATA (data dir); ONLY=pattern runs the tests matching it.
BUILD=${BUILD:-build}
DATA=${DATA:-$(pwd)/data}
BIN=$(cd "$BUILD/bin" && pwd)
export BUILD DATA BIN
export OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-1}
pass=0
fail=0
failed=""
log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT
for t in "$BUILD"/tests/test_* tests/*.sh; do
    [ -e "$t" ] || continue
    name=$(basename "$t")
    case "$name" in *.d|*.o) continue ;; esac
    if [ -n "${ONLY:-}" ]; then case "$name" in *$ONLY*) ;; *) continue ;; esac; fi
    start=$(date +%s)
    case "$t" in
    *.sh) sh "$t" >"$log/$name" 2>&1 ;;
    *) "$t" >"$log/$name" 2>&1 ;;
    esac
    rc=$?
    secs=$(( $(date +%s) - start ))
    if [ $rc -eq 0 ]; then
        pass=$((pass + 1))
        echo "ok   $name (${secs}s)"
    else
        fail=$((fail + 1))
        failed="$failed $name"
        echo "FAIL $name (exit $rc, ${secs}s)"
        sed 's/^/     | /' "$log/$name" | tail -n 40
    fi
done
echo
[ $fail -gt 0 ] && echo "failed:$failed"
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
