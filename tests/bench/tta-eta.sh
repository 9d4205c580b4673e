#!/bin/sh
# tta-eta.sh OUT: how the mixtures' uncertainty develops with training, on the snapshots a
# time-to-accuracy run left in OUT (tests/bench/tta.sh OUT). Every snapshot of every mixture
# model (OUT/mog*/model.step*.ckpt) is evaluated on the corrupt test twins with Kendall's tau
# (pipelines/hib-eval.sh into OUT/eta/MODEL/eval-STEP; its two largest streams are dropped),
# then the visible ink of each image is set against its eta (tests/bench/eta-ink.py, Debian's
# python3 with python3-numpy and python3-msgpack). Writes
#   OUT/eta-steps.tsv  model step ap knn tau_ap tau_knn rho_eta rho_var eta_least_ink
# (rho: Spearman's rank correlation of the visible ink with eta and with the components' mean
# variance; eta_least_ink: the median eta of the tenth of the images with the least ink left)
# and, with gnuplot, OUT/eta-steps.png: tau of AP and of KNN accuracy and rho(ink, eta) against
# the step, the paper's tau (Table 2, N=2, D=2, corrupt) as dashed lines.
# Calling it again continues: evaluated snapshots are kept. Environment: SEED (714).
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
HEDGE_ROOT=$root
. "$root/pipelines/common.sh"
out=${1:?usage: tta-eta.sh OUT}
out=$(cd "$out" && pwd)
[ -s "$out/data/test-corrupt.hs" ] || { say "tta-eta: no $out/data/test-corrupt.hs: run tests/bench/tta.sh $out first"; exit 1; }
tsv=$out/eta-steps.tsv
# the numbers of each snapshot, one line each, and its evaluation folder as a positional
# argument: eta-ink.py then reads the test images once for all of them
: > "$tsv.rows"
set --
for run in "$out"/mog*; do
    [ -d "$run" ] || continue
    m=$(basename "$run")
    for ck in "$run"/model.step*.ckpt; do
        [ -e "$ck" ] || continue
        s=$(basename "$ck" .ckpt)
        s=$(echo "${s#model.step}" | sed 's/^0*//')
        e=$out/eta/$m/eval-$s
        if [ ! -s "$e/results.tsv" ]; then
            say "tta-eta: evaluating $m at step $s"
            mkdir -p "$e"
            SEED=${SEED:-714} sh "$root/pipelines/hib-eval.sh" "$m $s" "$ck" "$out/data" "$e" corrupt > "$e/results.tsv.tmp"
            mv "$e/results.tsv.tmp" "$e/results.tsv"
            rm -f "$e/emb-corrupt.hs" "$e/pairs-corrupt.hs"
        fi
        awk -F'\t' -v m="$m" -v s="$s" '{ v[$3] = $4 }
            END { printf "%s\t%s\t%s\t%s\t%s\t%s\n", m, s, v["ap"], v["knn"], v["tau_ap"], v["tau_knn"] }' "$e/results.tsv" >> "$tsv.rows"
        set -- "$@" "$e"
    done
done
n=$#
[ "$n" -gt 0 ] || { rm -f "$tsv.rows"; say "tta-eta: no snapshots of a mixture in $out (mog*/model.step*.ckpt)"; exit 1; }
# one line per folder, in the order given
/usr/bin/python3 "$root/tests/bench/eta-ink.py" --tsv "$out/data" "$@" > "$tsv.ink"
[ "$(wc -l < "$tsv.ink")" = "$n" ] || { say "tta-eta: eta-ink.py gave $(wc -l < "$tsv.ink") lines for $n snapshots"; exit 1; }
{
    printf 'model\tstep\tap\tknn\ttau_ap\ttau_knn\trho_eta\trho_var\teta_least_ink\n'
    cut -f3- "$tsv.ink" | paste "$tsv.rows" - | sort -t "$(printf '\t')" -k1,1 -k2,2n
} > "$tsv.tmp"
mv "$tsv.tmp" "$tsv"
rm -f "$tsv.rows" "$tsv.ink"

command -v gnuplot > /dev/null || { say "tta-eta: $tsv ($n snapshots; no gnuplot: no figure)"; exit 0; }
paper=$root/pipelines/paper/hib.tsv
plots=""
for col in 5:tau_ap 6:tau_knn 7:rho; do
    c=${col%%:*} k=${col#*:}
    p="" i=1
    for m in $(tail -n +2 "$tsv" | cut -f1 | uniq); do
        awk -F'\t' -v m="$m" -v c="$c" '$1 == m { print $2, $c }' "$tsv" > "$out/eta-plot-$m-$k.dat"
        p="$p '$out/eta-plot-$m-$k.dat' using (\$1 / 1000):2 with linespoints lc $i pt 7 ps 0.6 title '$m',"
        v=$(awk -F'\t' -v m="$m" -v k="$k" '$1 == "table2" && $2 == "N2-D2-" m "-b1e-4" && $3 == "corrupt" && $4 == k { print $5 }' "$paper")
        [ -n "$v" ] && p="$p $v with lines lc $i dt 2 title '$m paper (500k steps)',"
        i=$((i + 1))
    done
    case $k in
    tau_ap) title="Kendall's tau, AP per eta bin" ;;
    tau_knn) title="Kendall's tau, KNN accuracy per eta bin" ;;
    rho) title="Spearman's rho, visible ink against eta" ;;
    esac
    plots="$plots
set title \"$title (corrupt test images)\"
plot ${p%,}"
done
gnuplot <<GP
set terminal pngcairo size 1500,450 font ",10"
set output '$out/eta-steps.png'
set multiplot layout 1,3 title 'Uncertainty along training: N=2, D=2, the mixtures'
set xlabel 'training step (thousands)'
set xrange [0:*]
set yrange [-1:1]
set key bottom left
set grid
$plots
unset multiplot
GP
say "tta-eta: $tsv and $out/eta-steps.png ($n snapshots)"
