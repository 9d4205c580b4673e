#!/bin/sh
# pipelines/compare.sh end to end on small data (a few training steps per method, 20 test
# images per class): every method trains and is evaluated, the table has a row per (set,
# method) with numbers where a method has the output and "-" with the reason where it has not,
# the error-versus-reject figure is drawn, a second call redoes nothing; hib-data.sh's --data
# fashion and its refusal to mix data sets in one OUT.
set -u
. "$(dirname "$0")/../lib.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(dirname "$BIN")
d=$T/c/data/N2
mkdir -p "$d"
echo mnist > "$d/dataset"
# the default occlusion: rectangles, the training images occluded at every use (train.hs clean)
echo "shape=rect train=per-use" > "$d/occlusion"
mkdigits -N 2 -s train -n 20000 -S 3 > "$d/train.hs" || fail "mkdigits train"
mkdigits -N 2 -s test-seen -n 1400 --per-class 20 -S 3 > "$d/test.hs" || fail "mkdigits test"
mkdigits -N 2 -s test-unseen -n 600 --per-class 20 -S 3 > "$d/unseen.hs" || fail "mkdigits unseen"
for s in test unseen; do
    occlude -p 0 -S 3 < "$d/$s.hs" > "$d/$s-clean.hs" && occlude -p 1 -S 3 < "$d/$s.hs" > "$d/$s-corrupt.hs" || fail "occlude"
done

# 7,700 images: two episodes of PN and SPE, 31 steps of 128 pairs, 61 of 128 P x K images (rounded up)
REPEATS=5 BUILD=$build sh "$root/pipelines/compare.sh" -s 7700 -j 2 "$T/c" > "$T/table" 2> "$T/err" ||
    fail "compare.sh exited $?: $(tail -n 30 "$T/err")"
for s in seen-clean seen-corrupt unseen-clean unseen-corrupt; do
    for m in point hib pn spe triplet hetriplet fstat cesoftmax; do
        [ "$(grep -c "^| $s | $m |" "$T/table")" = 1 ] || fail "no row $s $m: $(cat "$T/table")"
    done
    grep -q "^| $s | \*\*best\*\* |" "$T/table" || fail "no best row for $s"
done
num='[0-9][.][0-9][0-9][0-9]'
# columns: AP KNN R@1 MAP@R 5-shot PR-AUC tau AUROC AURC(oracle) ECE
grep -q "^| seen-corrupt | hib | $num | $num | $num | $num | $num | $num | -*$num | $num | $num ($num) | $num |$" "$T/table" ||
    fail "hib lacks a number: $(grep '| hib |' "$T/table")"
grep -q "^| seen-corrupt | point | $num | $num | $num | $num | $num | $num | - | - | - | $num |$" "$T/table" ||
    fail "point's row: $(grep '| point |' "$T/table")"
for m in spe hetriplet; do
    grep -q "^| unseen-clean | $m | .* | -*$num | $num | $num ($num) | - |$" "$T/table" ||
        fail "$m's uncertainty columns: $(grep "| $m |" "$T/table")"
done
grep -q "^| seen-clean | triplet | .* | - | - | - | - |$" "$T/table" || fail "triplet's row: $(grep '| triplet |' "$T/table")"
grep -q "^- point (tau, auroc, aurc, aurc_oracle): no uncertainty (point embeddings)" "$T/table" || fail "point's reason: $(tail -n 12 "$T/table")"
grep -q "^- triplet (ece): no match probability (loss triplet learns none)" "$T/table" || fail "triplet's reason: $(tail -n 12 "$T/table")"
grep -q "spe_closed" "$T/c/runs/spe/fs-seen-clean.json" || fail "SPE's few-shot was not scored by its own scorer"
# the uncertainty battery's lines: every model the free baselines, a learned source its difference
# from the best of them with the paired interval (the note names that baseline)
r=$T/c/runs
for m in point hib spe hetriplet triplet; do
    grep -q "^$m	seen-corrupt	u:vote_entropy:r1:auroc	[-0-9.]" "$r/$m/results.tsv" || fail "$m has no vote_entropy: $(grep u: "$r/$m/results.tsv" | head -n 3)"
done
for mv in hib:eta hib:var spe:var hetriplet:var; do
    m=${mv%%:*} u=${mv#*:}
    for k in "d:$u:r1:auroc	[-0-9.e]*	\(top1_dist\|ratio\|vote_entropy\|norm\)$" "d:$u:map_r:aurc	" "d:$u:r1:auroc:lo	[-0-9.e]*$" "d:$u:r1:auroc:hi	[-0-9.e]*$"; do
        grep -q "^$m	unseen-corrupt	$k" "$r/$m/results.tsv" || fail "$m: no line $k: $(grep "d:$u" "$r/$m/results.tsv" | head -n 4)"
    done
done
grep -q "	d:" "$r/point/results.tsv" "$r/triplet/results.tsv" && fail "a point model has a learned source: $(grep -h '	d:' "$r/point/results.tsv" | head -n 2)"
# finding.sh: the learned sources beside the best free baseline, from these runs
sh "$root/pipelines/finding.sh" "mnist=$T/c" > "$T/finding" 2> "$T/err" || fail "finding.sh exited $?: $(cat "$T/err")"
for mv in hib:eta hib:var spe:var hetriplet:var; do
    grep -q "^| mnist | unseen-corrupt | ${mv%%:*} | ${mv#*:} | r1 AUROC | $num | $num [a-z_]* | [-+]$num | [01] / [01] / [01] |$" "$T/finding" ||
        fail "finding: no row for $mv: $(head -n 4 "$T/finding")"
done
grep -q "^| mnist | seen-clean | hib | eta | r1 AUROC |" "$T/table" || fail "compare.sh's table lacks the finding: $(tail -n 5 "$T/table")"
[ "$(grep -c '| point |' "$T/finding")" = 0 ] || fail "finding: a row for point"
# the grid's results file gives the same rows as its runs
sh "$root/pipelines/finding.sh" "mnist=$T/c/results-compare.tsv" > "$T/finding2" || fail "finding.sh on the results file"
[ "$(sort "$T/finding")" = "$(sort "$T/finding2")" ] || fail "finding.sh: the results file's rows differ from the runs'"
sh "$root/pipelines/finding.sh" "x=$T/table" > "$T/out" 2> "$T/err" && fail "finding.sh took a table for a results file"
[ -s "$T/out" ] && fail "finding.sh printed rows for a bad input"
grep -q "not a results file" "$T/err" || fail "finding.sh's message: $(cat "$T/err")"
sh "$root/pipelines/finding.sh" --summary "mnist=$T/c" > "$T/summary" || fail "finding.sh --summary"
grep -q "^| mnist | hib | eta | 28 | [0-9]* | [0-9]* | [0-9]* | " "$T/summary" || fail "finding's summary: $(cat "$T/summary")"
# by hand: two seeds of one source, one better (the interval above 0), one undecided; an AURC
# better below 0
mkdir -p "$T/h/runs/a" "$T/h/runs/b"
printf 'hib\tseen-clean\tu:eta:r1:auroc\t0.8\nhib\tseen-clean\td:eta:r1:auroc\t0.1\tratio\nhib\tseen-clean\td:eta:r1:auroc:lo\t0.05\nhib\tseen-clean\td:eta:r1:auroc:hi\t0.15\nhib\tseen-clean\tu:eta:ap:aurc\t0.2\nhib\tseen-clean\td:eta:ap:aurc\t-0.1\tnorm\nhib\tseen-clean\td:eta:ap:aurc:lo\t-0.2\nhib\tseen-clean\td:eta:ap:aurc:hi\t-0.01\n' > "$T/h/runs/a/results.tsv"
printf 'hib.s715\tseen-clean\tu:eta:r1:auroc\t0.6\nhib.s715\tseen-clean\td:eta:r1:auroc\t0.0\tnorm\nhib.s715\tseen-clean\td:eta:r1:auroc:lo\t-0.05\nhib.s715\tseen-clean\td:eta:r1:auroc:hi\t0.05\n' > "$T/h/runs/b/results.tsv"
sh "$root/pipelines/finding.sh" "x=$T/h" > "$T/hand" || fail "finding.sh on the hand-made runs"
# learned 0.8, 0.6: 0.700 ± 0.141; best free 0.7, 0.6: 0.650 ± 0.071; difference 0.1, 0: +0.050 ± 0.071
grep -qF "| x | seen-clean | hib | eta | r1 AUROC | 0.700 ± 0.141 | 0.650 ± 0.071 ratio (1), norm (1) | +0.050 ± 0.071 | 1 / 1 / 0 |" "$T/hand" ||
    fail "finding by hand: $(cat "$T/hand")"
grep -qF "| x | seen-clean | hib | eta | ap AURC | 0.200 | 0.300 norm | -0.100 | 1 / 0 / 0 |" "$T/hand" || fail "finding's AURC by hand: $(cat "$T/hand")"
[ -s "$T/c/reject.png" ] || fail "no figure: $(tail -n 5 "$T/err")"
[ "$(head -c 4 "$T/c/reject.png" | tail -c 3)" = PNG ] || fail "reject.png is not a PNG"
# the same steps for the same images: pairs 31 x 256, P x K 61 x 128, episodes 2 x 3850
grep -q "training 31 steps of 256 images" "$T/c/runs/hib/run.log" || fail "hib's steps: $(head -n 3 "$T/c/runs/hib/run.log")"
grep -q "training 61 steps of 128 images" "$T/c/runs/fstat/run.log" || fail "fstat's steps"
grep -q "training 2 steps of 3850 images" "$T/c/runs/spe/run.log" || fail "spe's steps"

# a second call redoes nothing
before=$(ls -l --time-style=+%s.%N "$T/c/runs/hib/results.tsv" "$T/c/runs/hib/model.ckpt")
REPEATS=5 BUILD=$build sh "$root/pipelines/compare.sh" -s 7700 -j 2 "$T/c" > "$T/table2" 2> "$T/err" ||
    fail "the second compare.sh exited $?"
[ "$before" = "$(ls -l --time-style=+%s.%N "$T/c/runs/hib/results.tsv" "$T/c/runs/hib/model.ckpt")" ] || fail "the second call redid a run"
cmp -s "$T/table" "$T/table2" || fail "the second call's table differs"

# the field's losses as methods (METHODS): the same data, a row each; dul-cls's variance is judged
# against the free baselines
METHODS="ms dul-cls" REPEATS=5 BUILD=$build sh "$root/pipelines/compare.sh" -s 7700 -j 2 "$T/c" > "$T/table3" 2> "$T/err" ||
    fail "compare.sh with METHODS='ms dul-cls' exited $?: $(tail -n 20 "$T/err")"
grep -q "^| seen-clean | ms | [0-9]" "$T/table3" && grep -q "^| seen-clean | dul-cls | [0-9]" "$T/table3" ||
    fail "METHODS='ms dul-cls': no rows of ms and dul-cls: $(head -n 12 "$T/table3")"
grep -q "^| mnist | seen-clean | dul-cls | var | r1 AUROC |" "$T/table3" || fail "no finding for dul-cls's variance: $(tail -n 8 "$T/table3")"
grep -q "^| seen-clean | hib |" "$T/table3" && fail "METHODS='ms dul-cls' tabled hib too"

# data sets: an OUT holds one; Fashion-MNIST composites on request
DATASET=fashion BUILD=$build sh "$root/pipelines/hib-data.sh" 2 "$d" 2> "$T/err" && fail "hib-data.sh mixed fashion into mnist data"
grep -q "holds mnist data, not fashion" "$T/err" || fail "no clear message: $(cat "$T/err")"
if [ -s /usr/share/datasets/fashion-mnist/train-labels-idx1-ubyte.gz ]; then
    mkdigits -N 2 -s test-seen -n 700 --per-class 10 --mnist /usr/share/datasets/fashion-mnist --dataset-name fashion-mnist \
        > "$T/f.hs" || fail "mkdigits on Fashion-MNIST"
    tshow "$T/f.hs" | head -n 2 | grep -q '"dataset": "fashion-mnist"' || fail "the Fashion-MNIST composites are not labelled"
    cmp -s "$T/f.hs" "$d/test.hs" && fail "Fashion-MNIST gave the MNIST images"
else
    echo "note: dataset-fashion-mnist not installed: the Fashion-MNIST composites were not checked" >&2
fi
pass
