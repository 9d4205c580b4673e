#!/bin/sh
# run.sh TARGET...: fuzzes each target (stream, ckpt, idx, npy) for FUZZ_SECONDS seconds, one after
# the other, with the libFuzzer binaries in FUZZ_BUILD/fuzz (make fuzz builds them). Each starts
# from its saved corpus tests/fuzz/corpus/TARGET and the regressions, writes what it finds to
# FUZZ_BUILD/work/TARGET, and at the end the saved corpus is replaced by the minimized union of
# both (-merge=1). A crash leaves its input in FUZZ_BUILD/artifacts/TARGET/ and fails the run.
# The corpus files whose names have a dot are the hand-made seeds (tests/fuzz/mkseeds.sh): the
# merge keeps them as they are and adds the found inputs (named by their SHA-1) that reach
# something new, up to 64 KB each (so the mutants of the 1.17 MB checkpoint stay out).
#
# Leak detection is off (-detect_leaks=0): a rejected input leaves allocations behind by design
# (die() exits in the programs); the harnesses free them, and the replay checks the rest.
# FUZZ_JOBS=N runs N fuzzing processes per target (default 1). Extra libFuzzer flags: FUZZ_FLAGS.
# One input again: FUZZ_BUILD/fuzz/fuzz_TARGET FILE, or build-replay/fuzz/fuzz_TARGET FILE (make
# fuzz-replay builds it); HEDGE_FUZZ_VERBOSE=1 shows hedge's own messages.
set -eu
cd "$(dirname "$0")/../.."
B=${FUZZ_BUILD:-build-fuzz}
S=${FUZZ_SECONDS:-60}
J=${FUZZ_JOBS:-1}
# as make fuzz-replay (see FUZZ_ASAN in the Makefile): allocations over 64 MB return NULL
export ASAN_OPTIONS=${ASAN_OPTIONS:-allocator_may_return_null=1:max_allocation_size_mb=64}:detect_leaks=0
status=0
for t in "$@"; do
    case $t in
    stream) opts="-dict=tests/fuzz/stream.dict -max_len=16384" ;;
    ckpt) opts="-dict=tests/fuzz/stream.dict -max_len=1200000" ;; # a real checkpoint is 1.17 MB
    idx) opts="-dict=tests/fuzz/idx.dict -max_len=8192" ;;
    npy) opts="-max_len=8192" ;;
    *) echo "run.sh: unknown target $t" >&2; exit 2 ;;
    esac
    saved=tests/fuzz/corpus/$t
    mkdir -p "$saved" "$B/work/$t" "$B/artifacts/$t" tests/fuzz/regressions/$t
    log=$B/fuzz-$t.log
    echo "fuzz: $t for $S s ($J process(es)); log in $log" >&2
    if [ "$J" -gt 1 ]; then par="-jobs=$J -workers=$J"; else par=; fi
    if ! "$B/fuzz/fuzz_$t" $opts $par -max_total_time="$S" -timeout=25 -rss_limit_mb=2048 \
        -detect_leaks=0 -print_final_stats=1 \
        -artifact_prefix="$B/artifacts/$t/" ${FUZZ_FLAGS:-} \
        "$B/work/$t" "$saved" tests/fuzz/regressions/$t > "$log" 2>&1; then
        status=1
        echo "fuzz: $t FAILED (a crash or a sanitizer report): see $log and $B/artifacts/$t/" >&2
        tail -n 40 "$log" >&2
        continue
    fi
    # with -jobs libFuzzer also writes each job's output to ./fuzz-N.log, and copies it into $log
    if [ "$J" -gt 1 ]; then i=0; while [ $i -lt "$J" ]; do rm -f fuzz-$i.log; i=$((i + 1)); done; fi
    grep -h 'stat::number_of_executed_units\|stat::new_units_added' "$log" | sed "s/^/fuzz: $t: /" >&2
    # the saved corpus becomes its seeds plus what else reaches new code, minimized
    rm -rf "$B/merged/$t" "$B/found/$t"
    mkdir -p "$B/merged/$t" "$B/found/$t"
    find "$saved" -type f -name '*.*' -exec cp {} "$B/merged/$t/" \;
    find "$saved" "$B/work/$t" -type f ! -name '*.*' -size -65537c -exec cp {} "$B/found/$t/" \;
    "$B/fuzz/fuzz_$t" $opts -merge=1 -detect_leaks=0 "$B/merged/$t" "$B/found/$t" \
        > "$B/merge-$t.log" 2>&1 || { status=1; echo "fuzz: merging $t failed: see $B/merge-$t.log" >&2; continue; }
    rm -f "$saved"/*
    cp "$B/merged/$t"/* "$saved"/
    echo "fuzz: $t: corpus $(ls "$saved" | wc -l) files, $(cat "$saved"/* | wc -c) bytes" >&2
done
exit $status
