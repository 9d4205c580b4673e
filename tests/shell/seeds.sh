#!/bin/sh
# Seeds (issue 20 item 4): seedstat's mean and sample standard deviation over a configuration's
# runs (values derived by hand), the "-" numbers and bad values; the pipelines' seed helpers
# (pipelines/common.sh "Seeds": the seed list, the configurations once per seed with the first
# seed's kept as they were, --only, the training seed from a run's name); the tables' "mean ±
# sd" cells; and a real hib.sh grid grown from one seed to two: the first run kept, the second
# trained on other batches but evaluated on the same test pairs, results-demo.tsv with its
# header and seed column; --restore from one and from two files, --report on a grid half done.
set -u
. "$(dirname "$0")/../lib.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)

# seedstat: a (0.5, 0.7, 0.9): mean 0.7, deviations -0.2, 0, 0.2, sum of squares 0.08, over
# n - 1 = 2: 0.04, sd 0.2; b: one number (no sd); c: no number at all (its note kept); the header
# and comment lines skipped; the order of first appearance
printf 'run\tset\tmetric\tvalue\tnote\n# a comment\na\tclean\tap\t0.5\nc\tx\tm\t-\tno eta\na.s715\tclean\tap\t0.7\nb.s3\tclean\tap\t0.25\na.s716\tclean\tap\t0.9\nc.s9\tx\tm\t-\tno eta either\nb\tclean\tap\t-\tskipped\n' |
    "$BIN/seedstat" > "$T/ss" || fail "seedstat failed"
printf 'config\tset\tmetric\tmean\tnote\tsd\tn\na\tclean\tap\t0.7\t\t0.2\t3\nc\tx\tm\t-\tno eta\t\t0\nb\tclean\tap\t0.25\t\t\t1\n' > "$T/ss.want"
cmp -s "$T/ss" "$T/ss.want" || fail "seedstat: got $(cat -A "$T/ss"), expected $(cat -A "$T/ss.want")"
# a name ending in .s without digits, or .sx, is its own configuration
printf 'a.s\tc\tm\t1\na.sx\tc\tm\t2\na\tc\tm\t3\n' | "$BIN/seedstat" | tail -n +2 | cut -f1 | tr '\n' ' ' > "$T/names"
[ "$(cat "$T/names")" = "a.s a.sx a " ] || fail "seedstat folded names that are not NAME.sDIGITS: $(cat "$T/names")"
for bad in abc nan inf 0.5x ""; do
    printf 'a\tclean\tap\t%s\n' "$bad" | "$BIN/seedstat" > "$T/o" 2> "$T/e"
    rc=$?
    [ "$rc" = 1 ] || fail "seedstat took the value '$bad' (exit $rc)"
    [ "$(wc -l < "$T/e")" = 1 ] && grep -q "^seedstat: .*line 1" "$T/e" || fail "seedstat on '$bad': $(cat "$T/e")"
done

# the helpers of pipelines/common.sh
HEDGE_ROOT=$root BUILD=$(dirname "$BIN")
. "$root/pipelines/common.sh"
usage() { echo usage; }
[ "$(seed_list 3 | tr '\n' ' ')" = "714 715 716 " ] || fail "seed_list 3: $(seed_list 3 | tr '\n' ' ')"
[ "$(SEED=5 seed_list 2 | tr '\n' ' ')" = "5 6 " ] || fail "seed_list with SEED=5"
[ "$(seed_list 9,714,3 | tr '\n' ' ')" = "9 714 3 " ] || fail "seed_list of a list"
for bad in 0 x 1, ,2 "1,,2" ""; do seed_list "$bad" > /dev/null 2>&1 && fail "seed_list took '$bad'"; done
[ "$(train_seed N2-D2-point-b1e-4)" = 714 ] && [ "$(train_seed N2-D2-point-b1e-4.s715)" = 715 ] &&
    [ "$(SEED=9 train_seed hib)" = 9 ] && [ "$(train_seed hib.sx)" = 714 ] || fail "train_seed"
printf 'N2-D2-point 2 2 point\nN3-D2-point 3 2 point\n' > "$T/conf"
seeds=$(seed_list 2) only="" seed_configs "$T/conf"
printf 'N2-D2-point 2 2 point\nN3-D2-point 3 2 point\nN2-D2-point.s715 2 2 point\nN3-D2-point.s715 3 2 point\n' > "$T/conf.want"
cmp -s "$T/conf" "$T/conf.want" || fail "seed_configs: $(cat "$T/conf")"
printf 'N2-D2-point 2 2 point\nN3-D2-point 3 2 point\n' > "$T/conf"
seeds="1 714" only='^N3-' seed_configs "$T/conf"
[ "$(cat "$T/conf")" = "N3-D2-point.s1 3 2 point
N3-D2-point 3 2 point" ] || fail "seed_configs with --only: $(cat "$T/conf")"
seeds=714 only='^N4' seed_configs "$T/conf" 2> "$T/e" && fail "an --only matching nothing was taken"
grep -q "matches none" "$T/e" || fail "--only matching nothing: $(cat "$T/e")"

# tables: a configuration with three seeds gets "mean ± sd", one with one seed a plain number
O=$T/out
r() { mkdir -p "$O/runs/$1"; printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" >> "$O/runs/$1/results.tsv"; }
r N2-D2-mog1-b1e-4 corrupt ap 0.5; r N2-D2-mog1-b1e-4.s715 corrupt ap 0.7; r N2-D2-mog1-b1e-4.s716 corrupt ap 0.9
r N2-D2-point-b1e-4 corrupt ap 0.75
r N2-D2-mog2-b1e-4.s716 corrupt ap 0.6   # not configured: left out
printf 'N2-D2-point-b1e-4 2 2 point 1e-4 - 1\nN2-D2-mog1-b1e-4 2 2 mog1 1e-4 - 1\nN2-D2-mog1-b1e-4.s715 2 2 mog1 1e-4 - 1\nN2-D2-mog1-b1e-4.s716 2 2 mog1 1e-4 - 1\n' > "$O/configs-demo.txt"
sh "$root/pipelines/tables.sh" demo "$O" > "$T/t" || fail "tables.sh demo failed"
grep -q "| verification AP, corrupt | 0.750 / 0.880 | 0.700 ± 0.200 / 0.907 |$" "$T/t" || fail "tables with seeds: $(cat "$T/t")"
seeds_note "$O/configs-demo.txt" > "$T/note"
grep -q "^Training seeds: 1 (714) for 1 configuration; 3 (714, 715, 716) for 1 configuration; " "$T/note" || fail "seeds_note: $(cat "$T/note")"
write_results "$O" "$O/configs-demo.txt" "$T/res.tsv"
printf 'run\tconfig\tseed\tset\tmetric\tvalue\tnote\nN2-D2-point-b1e-4\tN2-D2-point-b1e-4\t714\tcorrupt\tap\t0.75\t\n' > "$T/res.want"
printf 'N2-D2-mog1-b1e-4.s716\tN2-D2-mog1-b1e-4\t716\tcorrupt\tap\t0.9\t\n' >> "$T/res.want"
[ "$(head -n 2 "$T/res.tsv")" = "$(head -n 2 "$T/res.want")" ] || fail "write_results: $(cat "$T/res.tsv")"
[ "$(tail -n 1 "$T/res.tsv")" = "$(tail -n 1 "$T/res.want")" ] || fail "write_results, last line: $(tail -n 1 "$T/res.tsv")"
[ "$(wc -l < "$T/res.tsv")" = 5 ] || fail "write_results: $(wc -l < "$T/res.tsv") lines, expected 5"

# a real grid: one MoG-1 run, then --seeds 2 adds a run of seed 715 and keeps the first
B=$(dirname "$BIN")
BUILD=$B sh "$root/pipelines/hib.sh" demo -s 20 -j 1 --only mog1 "$T/hib" > "$T/t1" 2> "$T/e1" ||
    fail "hib.sh --only mog1: $(tail -n 20 "$T/e1")"
before=$(ls -l --time-style=+%s.%N "$T/hib/runs/N2-D2-mog1-b1e-4/model.ckpt")
BUILD=$B sh "$root/pipelines/hib.sh" demo -s 20 -j 1 --only mog1 --seeds 2 "$T/hib" > "$T/t2" 2> "$T/e2" ||
    fail "hib.sh --seeds 2: $(tail -n 20 "$T/e2")"
[ "$before" = "$(ls -l --time-style=+%s.%N "$T/hib/runs/N2-D2-mog1-b1e-4/model.ckpt")" ] || fail "--seeds 2 redid the first seed's run"
[ -d "$T/hib/runs/N2-D2-mog1-b1e-4.s715" ] || fail "no run of seed 715: $(ls "$T/hib/runs")"
[ -d "$T/hib/runs/N2-D2-point-b1e-4" ] && fail "--only mog1 ran the point model"
cmp -s "$T/hib/runs/N2-D2-mog1-b1e-4/train.log" "$T/hib/runs/N2-D2-mog1-b1e-4.s715/train.log" && fail "the two seeds trained alike"
"$BIN/totsv" -f id1,id2 "$T/hib/runs/N2-D2-mog1-b1e-4/pairs-corrupt.hs" > "$T/p1"
"$BIN/totsv" -f id1,id2 "$T/hib/runs/N2-D2-mog1-b1e-4.s715/pairs-corrupt.hs" > "$T/p2"
cmp -s "$T/p1" "$T/p2" || fail "the two seeds were evaluated on different test pairs"
grep -q "MoG-1 |" "$T/t2" && grep -q "± " "$T/t2" || fail "the table of two seeds has no ±: $(cat "$T/t2")"
grep -q "^Training seeds: 2 (714, 715) for 1 configuration" "$T/t2" || fail "no seeds note: $(cat "$T/t2")"
head -n 1 "$T/hib/results-demo.tsv" | grep -qx "run	config	seed	set	metric	value	note" || fail "results-demo.tsv header"
awk -F'\t' 'NR > 1 && $3 == 715' "$T/hib/results-demo.tsv" | grep -q "N2-D2-mog1-b1e-4.s715	N2-D2-mog1-b1e-4	715	corrupt	ap	" ||
    fail "results-demo.tsv has no seed-715 line: $(head "$T/hib/results-demo.tsv")"

# --restore: a new OUT given the two runs back from results-demo.tsv trains nothing, prints the
# same table and writes the same results file; with --seeds 3 only the third seed trains
cp "$T/hib/results-demo.tsv" "$T/kept.tsv"
BUILD=$B sh "$root/pipelines/hib.sh" demo -s 20 -j 1 --only mog1 --seeds 2 --restore "$T/kept.tsv" "$T/hib2" > "$T/t3" 2> "$T/e3" ||
    fail "hib.sh --restore: $(tail -n 20 "$T/e3")"
ls "$T/hib2/runs/"*/model.ckpt > /dev/null 2>&1 && fail "--restore trained a restored run: $(ls "$T/hib2/runs/"*)"
cmp -s "$T/t2" "$T/t3" || fail "the restored grid's table differs: $(diff "$T/t2" "$T/t3")"
cmp -s "$T/kept.tsv" "$T/hib2/results-demo.tsv" || fail "the restored grid's results file differs: $(diff "$T/kept.tsv" "$T/hib2/results-demo.tsv")"
grep -q "N2-D2-mog1-b1e-4.s715 restored from $T/kept.tsv" "$T/e3" || fail "--restore did not say what it restored: $(cat "$T/e3")"
BUILD=$B sh "$root/pipelines/hib.sh" demo -s 20 -j 1 --only mog1 --seeds 3 --restore "$T/kept.tsv" "$T/hib2" > "$T/t4" 2> "$T/e4" ||
    fail "hib.sh --restore --seeds 3: $(tail -n 20 "$T/e4")"
[ "$(cd "$T/hib2/runs" && ls */model.ckpt)" = "N2-D2-mog1-b1e-4.s716/model.ckpt" ] || fail "--restore --seeds 3 trained: $(cd "$T/hib2/runs" && ls */model.ckpt)"
grep -q "^Training seeds: 3 (714, 715, 716) for 1 configuration" "$T/t4" || fail "no three-seed note: $(cat "$T/t4")"
# --restore twice: a run is taken from the first file that holds it, so a grid whose runs are
# committed in two files (seed 714's in one, 715's in the other) comes back whole
head -n 1 "$T/kept.tsv" > "$T/k714.tsv"; cp "$T/k714.tsv" "$T/k715.tsv"
awk -F'\t' 'NR > 1 && $3 == 714' "$T/kept.tsv" >> "$T/k714.tsv"
awk -F'\t' 'NR > 1 && $3 == 715' "$T/kept.tsv" >> "$T/k715.tsv"
BUILD=$B sh "$root/pipelines/hib.sh" demo -s 20 -j 1 --only mog1 --seeds 2 --restore "$T/k714.tsv" --restore "$T/k715.tsv" "$T/hib5" > "$T/t5" 2> "$T/e5" ||
    fail "hib.sh with two --restore: $(tail -n 20 "$T/e5")"
ls "$T/hib5/runs/"*/model.ckpt > /dev/null 2>&1 && fail "two --restore files: a run was trained"
cmp -s "$T/t2" "$T/t5" || fail "two --restore files: the table differs: $(diff "$T/t2" "$T/t5")"
[ "$(cat "$T/hib5/runs/N2-D2-mog1-b1e-4/restored")" = "$T/k714.tsv" ] &&
    [ "$(cat "$T/hib5/runs/N2-D2-mog1-b1e-4.s715/restored")" = "$T/k715.tsv" ] || fail "two --restore files: wrong markers"

# --report: the tables of what OUT holds, with the count, and nothing made or trained, nor the
# configurations that a grid running in OUT reads at its end changed; exit 0
conf_before=$(cat "$T/hib/configs-demo.txt") res_before=$(cat "$T/hib/results-demo.tsv")
BUILD=$B sh "$root/pipelines/hib.sh" demo -s 20 -j 1 --only mog1 --seeds 3 --report "$T/hib" > "$T/t6" 2> "$T/e6" ||
    fail "hib.sh --report: $(tail -n 20 "$T/e6")"
[ -d "$T/hib/runs/N2-D2-mog1-b1e-4.s716" ] && fail "--report started the third seed's run"
[ "$(cat "$T/hib/configs-demo.txt")" = "$conf_before" ] || fail "--report with --seeds 3 changed the grid's configurations"
[ "$(cat "$T/hib/results-demo.tsv")" = "$res_before" ] || fail "--report changed the grid's results file"
cmp -s "$T/hib/results-demo.report.tsv" "$T/kept.tsv" || fail "--report's results file: $(cat "$T/hib/results-demo.report.tsv")"
grep -q "^Runs finished: 2 of 3 (" "$T/t6" || fail "--report: no count of the finished runs: $(cat "$T/t6")"
grep -q "^Training seeds: 3 (714, 715, 716) for 1 configuration" "$T/t6" && grep -q "± " "$T/t6" ||
    fail "--report: the table of the finished seeds: $(cat "$T/t6")"
grep -q -- "--report: 2 of 3 runs finished; not yet: N2-D2-mog1-b1e-4.s716" "$T/e6" || fail "--report's stderr: $(cat "$T/e6")"
grep -q "^Runs finished" "$T/t2" && fail "a finished grid's table says some runs are missing"
expect_exit 1 "--report on a folder where nothing ran" sh "$root/pipelines/hib.sh" demo --report "$T/nothing"
grep -q "no output folder" "$T/expect.err" || fail "--report on a missing OUT: $(cat "$T/expect.err")"
[ -e "$T/nothing" ] && fail "--report made the OUT it was asked about"

# the tables refuse to print dashes for numbers they cannot find: no paper file, no programs
expect_exit 1 "tables.sh without the paper's numbers" env HEDGE_ROOT="$T/nowhere" BUILD="$B" sh "$root/pipelines/tables.sh" demo "$O"
grep -q "cannot read the paper's numbers" "$T/expect.err" || fail "tables.sh without the paper file: $(cat "$T/expect.err")"
expect_exit 1 "tables.sh without the programs" env PATH=/usr/bin:/bin BUILD="$T/nobuild" sh "$root/pipelines/tables.sh" demo "$O"
grep -q "no program 'seedstat'" "$T/expect.err" || fail "tables.sh without seedstat: $(cat "$T/expect.err")"

printf 'run\tconfig\n' > "$T/bad.tsv"
expect_exit 2 "--restore of a file that is not a results file" sh "$root/pipelines/hib.sh" demo -s 20 --restore "$T/bad.tsv" "$T/hib3"
grep -q "is not a pipeline's results file" "$T/expect.err" || fail "--restore of a bad file: $(cat "$T/expect.err")"
expect_exit 2 "--restore of a missing file" sh "$root/pipelines/hib.sh" demo -s 20 --restore "$T/none.tsv" "$T/hib3"
grep -q "cannot read" "$T/expect.err" || fail "--restore of a missing file: $(cat "$T/expect.err")"
pass
