#!/bin/sh
# readmecmds: every command shown in README.md works as written, for a new user. The README's
# code blocks are read by their tag:
#   ```sh, ```python   run in the order of the README, each block in a shell of its own as a new
#                      user's terminal would run it: a fresh environment (env -i, HOME a new
#                      folder, PATH=/usr/bin:/bin: a block that needs hedge's programs on PATH
#                      says so itself), stdout on a terminal (a pty from script(1): a program
#                      that refuses to write a stream to a terminal fails here as it would
#                      there), sh -e (a python block: python3), in a tree like hedge's (build/bin,
#                      build/lib from make lib, python/, pipelines/, .gitignore) on the small
#                      data the blocks make themselves; the files a block made stay for the
#                      later ones. Afterwards `git status` in that tree shows nothing new: what
#                      the commands leave at the top of hedge's tree is git-ignored;
#   ```                commands too long to run here (the quick start, the pipelines: minutes
#                      to hours): each line is checked, not run, and named with the reason:
#                      `make T` needs a target T in the Makefile; `sh pipelines/X.sh ARGS OUT`
#                      needs the script, its syntax (sh -n), and every option of ARGS and its
#                      experiment among the words of its usage;
#   ```text            pictures and output, not commands.
# Any other tag, or a line of a ``` block of another form, fails: a new command is either run
# or checked. A command in the running text (`PROG ARGS`, PROG one of hedge's programs, ARGS
# naming a file the blocks made: `knn mine.hs`) is run too, on a terminal, with the programs on
# PATH as the section that made its file put them. README=FILE checks another copy (to see the
# test fail on a broken command).
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

# --- sh and python: each block in a fresh shell, stdout on a terminal, in order
awk -F '\t' '
    $2 == "S" { n++; if ($1 == "sh" || $1 == "python") print n "\t" $1 }' "$T/blocks" > "$T/runblocks"
awk -F '\t' -v dir="$T" '
    $2 == "S" { n++; f = ""; if ($1 == "sh") f = dir "/block" n ".sh"; if ($1 == "python") f = dir "/block" n ".py"; next }
    f != "" { sub(/^[^\t]*\tL/, ""); print > f }' "$T/blocks"
nsh=$(grep -c '^sh	L.' "$T/blocks")
npy=$(grep -c '^python	L.' "$T/blocks")
[ "$nsh" -ge 10 ] && [ "$npy" -ge 3 ] || fail "$README: only $nsh sh and $npy python lines to run"
tree=$T/tree
# libhedge for the Python blocks (hedge.evaluate): the plain build's, whatever build runs the tests
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u BUILD -u SANFLAGS make -s -C "$ROOT" lib > "$T/lib.log" 2>&1 ||
    fail "make lib: $(tail -n 3 "$T/lib.log")"
mkdir -p "$tree/build" "$T/home" && ln -s "$BIN" "$tree/build/bin" && ln -s "$ROOT/build/lib" "$tree/build/lib" &&
    cp -R "$ROOT/python" "$tree/python" &&
    ln -s "$ROOT/pipelines" "$tree/pipelines" && cp "$ROOT/.gitignore" "$tree/.gitignore" || fail "tree"
rm -rf "$tree/python/__pycache__"
git -C "$tree" init -q && git -C "$tree" add -A || fail "git init in $tree"
# fresh CMD...: CMD in a new user's environment
fresh() { env -i HOME="$T/home" PATH=/usr/bin:/bin "$@"; }
while IFS='	' read -r k tag; do
    case $tag in
    sh) sh -n "$T/block$k.sh" || fail "$README: sh block $k is not valid sh"
        cmd="sh -e $T/block$k.sh" ;;
    *) cmd="/usr/bin/python3 $T/block$k.py" ;;
    esac
    fresh sh -c 'cd "$1" && timeout 600 script -qec "$2 < /dev/null" /dev/null > "$3" 2>&1 < /dev/null' sh "$tree" "$cmd" "$T/tty.out" ||
        fail "the README's $tag block $k, in a new shell with stdout on a terminal, failed:
$(sed 's/^/    | /' "$T/block$k".*)
$(tr -d '\r' < "$T/tty.out" | tail -n 5)"
done < "$T/runblocks"
echo "readmecmds: ran $nsh sh lines and $npy python lines of the README, each block in a new shell on a terminal"

# the commands in the running text: `PROG ARGS` with ARGS naming a file the blocks made
awk '/^```/ { code = !code; next } !code' "$README" | grep -o '`[^`]*`' | tr -d '`' | sort -u > "$T/spans"
ninline=0
while IFS= read -r span; do
    set -f; set -- $span; set +f
    [ $# -ge 2 ] && [ -x "$BIN/$1" ] || continue
    file=0
    for w; do [ -f "$tree/$w" ] && file=1; done
    [ $file = 1 ] || continue
    fresh sh -c 'cd "$1" && PATH=$1/build/bin:$PATH timeout 600 script -qec "$2 < /dev/null" /dev/null > "$3" 2>&1 < /dev/null' sh "$tree" "$span" "$T/tty.out" ||
        fail "the README's command \`$span\`, on a terminal, failed: $(tr -d '\r' < "$T/tty.out" | tail -n 3)"
    ninline=$((ninline + 1))
done < "$T/spans"
[ "$ninline" -ge 1 ] || fail "$README: no command in the running text on a file its blocks made (\`knn mine.hs\`)"
echo "readmecmds: ran $ninline command(s) of the running text on a terminal"

# nothing left in the tree that git would see
git -C "$tree" status --porcelain --untracked-files=all | grep '^??' | head -n 5 > "$T/left"
[ -s "$T/left" ] && fail "the README's commands leave files at the top of hedge's tree that .gitignore does not name: $(tr '\n' ' ' < "$T/left")"

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
        grep -q -- "^${script##*/} " "$T/usage" || fail "README: $script printed no usage: $(head -c 300 "$T/usage")"
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
