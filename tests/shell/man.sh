#!/bin/sh
# man: every man page, man/*.scd, rendered as a reader sees it (scdoc, then `man -l` at
# MANWIDTH=80) keeps the layout its source shows:
#   SYNOPSIS  each line of the .scd's synopsis is a line of its own in the page (a long one may
#             wrap, but never runs into the next; scdoc needs `++` at the end of a line for that)
#   OPTIONS   each entry (a line of the .scd that opens with *) is only the option and its
#             arguments (at most 4 words), rendered as that line alone, and the next line of the
#             page is its indented text (not the entry's text run onto the entry's line)
#   text      no sentence runs into the next without its full stop (a lower-case word, then a
#             capitalised opener such as "Either" or "The": the .scd outside code blocks)
# Text is compared without spaces, scdoc's markup (* _ \) and groff's hyphens, so that wrapping
# at any width passes and only the line breaks the source asks for count.
. "$(dirname "$0")/../lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
command -v scdoc > /dev/null || fail "scdoc is missing (make man installs it: pipelines/setup-deps.sh man)"
if ! command -v man > /dev/null; then
    echo "man: the command man (Debian package man-db) is missing: the pages are not rendered, the checks are skipped"
    pass
fi

# plain TEXT: a line of .scd or of the rendered page without spaces, markup and hyphenation
plain='function plain(x) { gsub(/\\\\/, "\001", x); gsub(/\\/, "", x); gsub(/[*_]/, "", x); gsub(/\001/, "\\", x)
                          gsub(/‐/, "", x); gsub(/[ \t]/, "", x); sub(/\+\+$/, "", x); return x }'
# problem MESSAGE: noted, and the test goes on to show every page's problems
: > "$T/problems"
problem() { printf '%s\n' "$*" >> "$T/problems"; }
n=0 nsyn=0 nopt=0
for src in "$ROOT"/man/*.scd; do
    name=$(basename "$src" .scd)
    scdoc < "$src" > "$T/$name.roff" 2> "$T/scdoc.err" || fail "scdoc $name.scd: $(cat "$T/scdoc.err")"
    n=$((n + 1))

    # --- SYNOPSIS: the source's lines, each consumed by whole lines of the page, at 80 columns
    # and at 120 (where a line that only wrapped at the right place at 80 runs into the next)
    awk '/^# /{ s = ($0 == "# SYNOPSIS"); next } s && NF' "$src" > "$T/syn.scd"
    for width in 80 120; do
        MANWIDTH=$width man --nh --nj -l "$T/$name.roff" > "$T/$name.txt" 2> "$T/man.err" ||
            fail "man -l $name: $(cat "$T/man.err")"
        [ -s "$T/$name.txt" ] || fail "man -l $name printed nothing"
        [ -s "$T/syn.scd" ] || continue
        awk '/^SYNOPSIS$/{ s = 1; next } /^[^ ]/{ s = 0 } s && NF' "$T/$name.txt" > "$T/syn.txt"
        awk -v page="$name" -v width=$width "
            $plain
            FNR == NR { want[++n] = plain(\$0); line[n] = \$0; next }
            {
                got = got plain(\$0)
                if (got == want[i + 1]) { i++; got = \"\"; next }
                if (index(want[i + 1], got) != 1) {
                    printf \"%s at %d columns: synopsis line %d of the .scd (%s) runs into the next: %s\\n\", page, width, i + 1, line[i + 1], \$0
                    bad = 1; exit
                }
            }
            END { if (!bad && (i != n || got != \"\")) { printf \"%s: the page has %d of the .scd's %d synopsis lines\\n\", page, i, n; bad = 1 }
                  exit bad }" "$T/syn.scd" "$T/syn.txt" > "$T/syn.err" || problem "$(cat "$T/syn.err")"
    done
    nsyn=$((nsyn + $(wc -l < "$T/syn.scd")))

    # --- OPTIONS (the page at 80 columns): each entry alone on its line, its text indented on
    # the next; a ++ at the end of an entry is scdoc's line break, eaten (--init kmeans++)
    MANWIDTH=80 man --nh --nj -l "$T/$name.roff" > "$T/$name.txt" 2> "$T/man.err" || fail "man -l $name: $(cat "$T/man.err")"
    awk '/^# /{ s = ($0 == "# OPTIONS"); next } /^```/{ c = !c } s && !c && /^\*/' "$src" > "$T/opt.scd"
    awk '/^OPTIONS$/{ s = 1; next } /^[^ ]/{ s = 0 } s' "$T/$name.txt" > "$T/opt.txt"
    while IFS= read -r entry; do
        case $entry in *++) problem "$name: the option entry '$entry' ends in ++, which scdoc reads as a line break: write \\+\\+" ;; esac
        words=$(printf '%s\n' "$entry" | wc -w)
        [ "$words" -le 4 ] || problem "$name: the option entry '$entry' has $words words: only the option and its arguments go on that line, its text on the next, indented by a tab"
        want=$(printf '%s\n' "$entry" | awk "$plain { print plain(\$0) }")
        awk -v want="$want" -v entry="$entry" -v page="$name" "
            $plain
            { cur = \$0; s = plain(cur) }
            found && !done { done = 1; if (cur !~ /^           [ ]*[^ ]/) { printf \"%s: the option entry %s is not followed by its indented text but by: %s\\n\", page, entry, cur; exit 1 } }
            !found && cur ~ /^       [^ ]/ && s == want { found = 1 }
            END { if (!found) { printf \"%s: the option entry %s is not a line of its own in the page\\n\", page, entry; exit 1 }
                  if (!done) { printf \"%s: the option entry %s has no text after it\\n\", page, entry; exit 1 } }" \
            "$T/opt.txt" > "$T/opt.err" || problem "$(cat "$T/opt.err")"
        nopt=$((nopt + 1))
    done < "$T/opt.scd"

    # --- text: no sentence runs into the next
    awk '/^```/{ c = !c; next } !c' "$src" |
        grep -nE '[a-z] (Either|The|Each|Every|When|With|Without|Both|Any|It|This|Only|All|If|Its|Then|Equal|Ties) ' |
        cut -c1-160 > "$T/runon"
    [ -s "$T/runon" ] && problem "$name.scd: a sentence runs into the next (no full stop): $(cat "$T/runon")"
done
[ -s "$T/problems" ] && fail "$(wc -l < "$T/problems") problems in the rendered man pages:
$(cat "$T/problems")"
[ "$n" -ge 24 ] || fail "only $n man pages in $ROOT/man"
[ "$nsyn" -ge 40 ] && [ "$nopt" -ge 200 ] || fail "only $nsyn synopsis lines and $nopt option entries checked"
echo "man: $n pages rendered at 80 columns; $nsyn synopsis lines on lines of their own, $nopt option entries each followed by its text"
pass
