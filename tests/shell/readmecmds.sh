#!/bin/sh
# readmecmds: every command shown in README.md works as written. The README's code blocks are
# read by their tag:
#   ```sh, ```python   run, in the order of the README, as one script (sh -e; a python block
#                      through python3), in a tree like hedge's (build/bin, python/, pipelines/)
#                      with nothing else on PATH, on the small data they make themselves;
#   ```                commands too long to run here (the quick start, the pipelines: minutes
#                      to hours): each line is checked, not run, and named with the reason:
#                      `make T` needs a target T in the Makefile; `sh pipelines/X.sh ARGS OUT`
#                      needs the script, its syntax (sh -n), and every option of ARGS and its
#                      experiment among the words of its usage;
#   ```text            pictures and output, not commands.
# Any other tag, or a line of a ``` block of another form, fails: a new command is either run
# or checked. README=FILE checks another copy (to see the test fail on a broken command).
. "$(dirname "$0")/../lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
README=${README:-$ROOT/README.md}
export HEDGE_MNIST=${HEDGE_MNIST:-$DATA/mnist}
[ -s "$README" ] || fail "no $README"

# the blocks: "tag<TAB>S" at each block's start, "tag<TAB>L" and the line for each line in it
# (tag "-" for none)
awk '/^```/ { if (!code) { code = 1; tag = substr($0, 4); if (tag == "") tag = "-"; print tag "\tS"; next }
              code = 0; next }
     code { print tag "\tL" $0 }
     END { if (code) print "unclosed\tS" }' "$README" > "$T/blocks"
grep -q '^unclosed	' "$T/blocks" && fail "$README: a code block is never closed"
bad=$(cut -f1 "$T/blocks" | sort -u | grep -vx -e sh -e python -e text -e - | head -n 3)
[ -z "$bad" ] && [ -s "$T/blocks" ] || fail "$README: blocks tagged '$bad' (sh, python, text or none) or no blocks"

# --- sh and python: one script, in order
awk -F '\t' '
    $2 == "S" { if (open) print "PYEOF"; open = 0 }
    $2 == "S" && $1 == "python" { print "/usr/bin/python3 - <<'"'"'PYEOF'"'"'"; open = 1 }
    ($1 == "sh" || $1 == "python") && $2 != "S" { sub(/^[^\t]*\tL/, ""); print }
    END { if (open) print "PYEOF" }' "$T/blocks" > "$T/run.sh"
nsh=$(grep -c '^sh	L.' "$T/blocks")
npy=$(grep -c '^python	L.' "$T/blocks")
[ "$nsh" -ge 10 ] && [ "$npy" -ge 3 ] || fail "$README: only $nsh sh and $npy python lines to run"
sh -n "$T/run.sh" || fail "$README: the sh blocks are not valid sh"
mkdir -p "$T/tree/build" && ln -s "$BIN" "$T/tree/build/bin" && ln -s "$ROOT/python" "$T/tree/python" &&
    ln -s "$ROOT/pipelines" "$T/tree/pipelines" || fail "tree"
(cd "$T/tree" && env -u BUILD PATH=/usr/bin:/bin timeout 600 sh -e "$T/run.sh" > out 2> err) ||
    fail "a README command failed: $(tail -n 5 "$T/tree/err")"
echo "readmecmds: ran $nsh sh lines and $npy python lines of the README, in order"

# --- the ``` blocks: checked, not run
grep '^-	L' "$T/blocks" | cut -f2- | sed 's/^L//' | sed 's/[[:space:]]*#.*$//' | grep -v '^[[:space:]]*$' > "$T/checked"
[ -s "$T/checked" ] || fail "$README: no quick-start commands (a \`\`\` block)"
while IFS= read -r line; do
    set -f; set -- $line; set +f
    case "$1 ${2:-}" in
    "make "*)
        shift
        [ $# -ge 1 ] || fail "README: a bare make"
        for t; do
            case $t in *=*) continue ;; esac
            grep -q "^$t:" "$ROOT/Makefile" || fail "README: make $t: no target $t in the Makefile"
        done
        echo "readmecmds: not run (the quick start: installs packages, trains for minutes; make test runs this test): $line; its targets exist"
        ;;
    "sh pipelines/"*)
        script=$2; shift 2
        [ -f "$ROOT/$script" ] || fail "README: $script: no such script"
        sh -n "$ROOT/$script" || fail "README: $script is not valid sh"
        # the usage: what the script prints when called without arguments (on stderr, exit 2)
        (cd "$T" && env -u BUILD sh "$ROOT/$script" > /dev/null 2> "$T/usage")
        grep -q -- '--quick' "$T/usage" || fail "README: $script printed no usage: $(head -c 300 "$T/usage")"
        n=$#
        first=1
        for w; do
            n=$((n - 1))
            case $w in
            -*) grep -qw -- "$w" "$T/usage" || fail "README: $script: option $w is not in its usage: $line" ;;
            *) if [ "$first" = 1 ] && [ "$n" -gt 0 ]; then   # the experiment
                   grep -qw -- "$w" "$T/usage" || fail "README: $script: experiment $w is not in its usage: $line"
               fi ;;
            esac
            first=0
        done
        echo "readmecmds: not run (minutes to hours of training): $line; its options are in its usage"
        ;;
    *) fail "README: a command in a \`\`\` block that this test can neither run nor check: $line" ;;
    esac
done < "$T/checked"
pass
