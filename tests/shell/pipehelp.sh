#!/bin/sh
# pipehelp: every pipeline (pipelines/*.sh, and through bin/hedge.sh) answers -h and --help as
# its first word with its opening comment on stdout, exit 0, nothing on stderr, and makes
# nothing: not in the current folder, not in the tree (demo.sh ran `mkdir -h`, and with
# --help made a folder named --help and started the demo in it). The grids take -h among their
# options too. demo.sh without OUT works in the current folder's out/demo, never in the tree
# (installed: PREFIX/lib/hedge/out/demo), and refuses an option it does not know (exit 2).
. "$(dirname "$0")/../lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# a copy of the tree's scripts, whose folder must stay as it is, and an empty current folder
mkdir -p "$T/root/pipelines" "$T/root/bin" "$T/cwd" || fail "mkdir"
cp -r "$ROOT"/pipelines/* "$T/root/pipelines/" && cp "$ROOT/bin/hedge.sh" "$T/root/bin/" || fail "cp"
ls -R "$T/root" > "$T/root.before"
cd "$T/cwd" || fail "cd"
export HEDGE_ROOT="$T/root" BUILD="$BIN/.."
n=0
for p in "$T"/root/pipelines/*.sh; do
    name=$(basename "$p" .sh)
    [ "$name" = common ] && continue # sourced, not run
    want=$(sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p;}' "$p")
    [ -n "$want" ] || fail "$name.sh has no opening comment"
    for h in -h --help; do
        for how in sh hedge; do
            if [ $how = sh ]; then sh "$p" $h > out 2> err < /dev/null; else sh "$T/root/bin/hedge.sh" "$name.sh" $h > out 2> err < /dev/null; fi
            rc=$?
            [ $rc = 0 ] || fail "$how $name $h: exit $rc ($(head -c 300 err))"
            [ -s err ] && fail "$how $name $h: wrote on stderr: $(head -c 300 err)"
            # (fetch-mnist.sh puts its usage line first)
            [ "$(tail -n "$(printf '%s\n' "$want" | wc -l)" out)" = "$want" ] ||
                fail "$how $name $h: not its opening comment: $(head -n 3 out)"
            rm -f out err
            [ -z "$(ls -A)" ] || fail "$how $name $h made $(ls -A) in the current folder"
            n=$((n + 1))
        done
    done
done
[ "$n" -ge 100 ] || fail "only $n pipeline helps checked"
# -h among a grid's options
for g in "hib.sh demo -s 5 -h" "metric.sh fstat demo --quick --help" "evaluate.sh -o x -h"; do
    sh "$T/root/pipelines/"$g > out 2> err < /dev/null || fail "$g: exit $? ($(head -c 300 err))"
    [ -s out ] && [ ! -s err ] || fail "$g: no help on stdout, or messages: $(head -c 300 err)"
    rm -f out err
    [ -z "$(ls -A)" ] || fail "$g made $(ls -A) in the current folder"
done
ls -R "$T/root" > "$T/root.after"
cmp -s "$T/root.before" "$T/root.after" || fail "the helps changed the tree: $(diff "$T/root.before" "$T/root.after")"

# demo.sh: an unknown option or two folders are misuse; without OUT it works in ./out/demo (its
# grid, pipelines/hib.sh, replaced by one that fails at once)
for bad in "-x" "a b"; do
    sh "$T/root/pipelines/demo.sh" $bad > out 2> err
    rc=$?
    [ $rc = 2 ] && [ ! -s out ] && grep -q '^demo: ' err || fail "demo.sh $bad: exit $rc, expected 2 ($(cat out err))"
    rm -f out err
    [ -z "$(ls -A)" ] || fail "demo.sh $bad made $(ls -A)"
done
printf '#!/bin/sh\necho "hib: FAILED: a stand-in" >&2\nexit 1\n' > "$T/root/pipelines/hib.sh"
PROGRESS_EVERY=1 sh "$T/root/pipelines/demo.sh" > "$T/demo.out" 2> "$T/demo.err" && fail "demo.sh with a failing grid exited 0"
[ -f out/demo/log ] || fail "demo.sh without OUT did not work in ./out/demo: $(ls -R) $(cat "$T/demo.err")"
[ -e "$T/root/out" ] && fail "demo.sh without OUT wrote in the tree: $(ls -R "$T/root/out")"
pass
