#!/bin/sh
# settings: each loss setting is declared once, in its loss's table (lib/base/setting.h,
# lib/training/loss.h), and what shows it comes from the tables: `train --settings` lists them,
# `train --help` names every option, man/train.1.scd's block between "; settings:" and
# "; end of settings" is exactly what the tables make (written again with
# `sh tests/shell/settings.sh --write`), train takes each option for the losses that have it and
# refuses it, naming them, for the others, and the checkpoint keeps each setting with a key.
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
write=0
[ "${1:-}" = --write ] && write=1 BIN=${BIN:-$ROOT/build/bin}
. "$(dirname "$0")/../lib.sh"
MAN=$ROOT/man/train.1.scd

train --settings > "$T/all.tsv" || fail "train --settings"
[ "$(head -n 1 "$T/all.tsv")" = "$(printf 'loss\toption\tvalue\tkey\ttype\trange\tdefault\thelp')" ] ||
    fail "train --settings: header $(head -n 1 "$T/all.tsv")"
# the man page's block: one entry per option, in the order of first appearance; the losses that
# have it (every loss: "*"), its help, default, range and key
awk -F '\t' 'NR > 1 && $2 != "-" {
        if (!($2 in seen)) { seen[$2] = ++n; opt[n] = $2; arg[n] = $3; help[n] = $8; def[n] = $7
                             range[n] = $6; key[n] = $4; who[n] = "" }
        k = seen[$2]
        if ($1 != "*") who[k] = who[k] (who[k] == "" ? "" : ", ") $1
    }
    END {
        for (k = 1; k <= n; k++) {
            printf "*%s* _%s_\n\t%s%s (default %s; %s; %s)\n\n", opt[k], arg[k],
                who[k] == "" ? "" : who[k] ": ", help[k], def[k], range[k],
                key[k] == "-" ? "not stored" : "checkpoint key " key[k]
        }
    }' "$T/all.tsv" > "$T/block"
if [ "$write" = 1 ]; then
    awk -v block="$T/block" '
        /^; end of settings/ { skip = 0 }
        !skip { print }
        /^; settings:/ { while ((getline l < block) > 0) print l; skip = 1 }' "$MAN" > "$T/man" &&
        cat "$T/man" > "$MAN" && echo "settings: wrote $MAN" && exit 0
    fail "--write"
fi
awk '/^; end of settings/ { on = 0 } on { print } /^; settings:/ { on = 1 }' "$MAN" > "$T/man-block"
[ -s "$T/man-block" ] || fail "$MAN has no block between '; settings:' and '; end of settings'"
diff "$T/block" "$T/man-block" > "$T/diff" ||
    fail "man/train.1.scd's settings differ from the tables (sh tests/shell/settings.sh --write): $(head -c 600 "$T/diff")"
nopt=$(grep -c '^\*' "$T/block")
[ "$nopt" -ge 13 ] || fail "only $nopt setting options"

# --help names every option; one loss's listing has the five every loss takes with its defaults
train --help > "$T/help" 2>&1 || fail "train --help"
awk -F '\t' 'NR > 1 && $2 != "-" { print $2 }' "$T/all.tsv" | sort -u > "$T/opts"
while read -r o; do
    grep -q -- " $o[;]*\( \|$\)" "$T/help" || fail "train --help does not name $o"
done < "$T/opts"
train --loss spe --settings > "$T/spe.tsv" || fail "train --loss spe --settings"
awk -F '\t' '$1 == "spe" && $2 == "-K" && $7 == 1 { k = 1 } $1 == "spe" && $4 == "gamma0" { g = 1 }
    END { exit !(k && g) }' "$T/spe.tsv" || fail "spe's listing: $(cat "$T/spe.tsv")"
expect_exit 2 "--settings of no loss" train --loss nonsense --settings

# every option for a loss that has it is taken, and refused (exit 2, naming the owners) for one
# that has not; each stored setting given is in the checkpoint with its value
mkdigits -N 2 -s train -n 400 -S 1 > "$T/img.hs" 2>/dev/null || fail mkdigits
for m in "pairs -b 16" "pk -P 4 -K 4" "episodes -c 4 -s 2 -q 2"; do
    batcher -m $m -S 2 < "$T/img.hs" 2>/dev/null | head -c 400000 > "$T/${m%% *}.hs" || true
done
batches() { # the batch stream a loss takes
    case $1 in
    softcon | contrastive | vib) echo pairs ;; proto | spe) echo episodes ;; *) echo pk ;;
    esac
}
# a value of each option its loss takes: the default's neighbour in range, the other choice
value() { # value TYPE RANGE DEFAULT
    case $1 in
    choice) echo "$2" | awk -F ' [|] ' -v d="$3" '{ for (i = NF; i >= 1; i--) if ($i != d) { print $i; exit } }' ;;
    int) echo "$2" | awk -F '[.][.]' '{ print ($1 + 1 <= $2) ? $1 + 1 : $1 }' ;;
    *) echo "$2" | awk -F '[.][.]' '{ v = ($1 > 0 ? $1 : 0) + 0.25; print (v <= $2 + 0) ? v : $2 }' ;;
    esac
}
checked=0
awk -F '\t' 'NR > 1 && $1 != "*" && $2 != "-"' "$T/all.tsv" > "$T/own.tsv"
while IFS="$(printf '\t')" read -r loss opt arg key type range def help; do
    v=$(value "$type" "$range" "$def")
    [ "$opt" = --fstat-dims ] && v=2
    head=""
    case $loss in spe) head="--head mog -C 1" ;; hetriplet) head="--head iso" ;; esac
    train -o "$T/s.ckpt" --loss "$loss" $head -D 4 "$opt" "$v" -n 1 -t 1 < "$T/$(batches "$loss").hs" 2> "$T/err" ||
        fail "train --loss $loss $opt $v: $(cat "$T/err")"
    if [ "$key" != - ]; then
        got=$(tshow -H "$T/s.ckpt" 2>/dev/null | jq -r --arg k "$key" '.meta[$k]')
        awk -v a="$got" -v b="$v" 'BEGIN { exit !(a == b || a + 0 == b + 0 && a != "" && a != "null") }' ||
            fail "$loss $opt $v: the checkpoint's $key is $got"
    fi
    other=softcon
    [ "$loss" = softcon ] && other=contrastive
    expect_exit 2 "$opt with $other" train -o "$T/x.ckpt" --loss "$other" "$opt" "$v" -n 1 < /dev/null
    grep -q "is an option of the .*$loss" "$T/expect.err" || fail "$opt with $other: $(cat "$T/expect.err")"
    checked=$((checked + 1))
done < "$T/own.tsv"
[ "$checked" -ge 10 ] || fail "only $checked own settings checked"
echo "settings: $nopt options in man/train.1.scd as the tables make them; $checked own settings taken, stored and refused elsewhere"
pass
