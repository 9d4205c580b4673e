#!/bin/sh
# compare-figure.sh OUT CONFIGS DATASET: the error-versus-reject curves of pipelines/compare.sh as
# OUT/reject.png (gnuplot), one panel per set (seen/unseen, clean/corrupt): for each method with
# an uncertainty, the KNN error of the answers kept after rejecting the most uncertain ones
# (solid; ktau --reject-tsv) and the oracle's (dotted: the wrong answers rejected first); for a
# method without one, its error, which rejecting at random leaves where it is (thin, flat).
# Only plotting happens here; the numbers come from knn and ktau. Prints the PNG's path.
set -eu
. "$(dirname "$0")/common.sh"
out=$1 configs=$2 dataset=$3
command -v gnuplot >/dev/null || { say "compare-figure: gnuplot is missing (apt-get install gnuplot-nox)"; exit 1; }
term='set terminal pngcairo size 1400,1000 font ",11"'
gnuplot -e 'set terminal pngcairo' -e 'exit' 2>/dev/null || term='set terminal png size 1400,1000'
g=$out/reject.gp
# one curve per method: its first seed's run
awk '!seen[$2]++' "$configs" > "$out/reject.runs"
{
    echo "$term"
    echo "set output '$out/reject.png.tmp'"
    echo "set multiplot layout 2,2 title 'Error versus reject: 5-NN answers, most uncertain rejected first ($dataset, $(basename "$out"))'"
    echo "set xlabel 'rejected (%)'; set ylabel 'KNN error of the kept answers'; set key outside right top font ',8'; set grid"
    for set in seen-clean seen-corrupt unseen-clean unseen-corrupt; do
        echo "set title '$set'"
        plot="" c=0
        while read -r name method _; do
            c=$((c + 1))
            run=$out/runs/$name
            if [ -s "$run/reject-$set.tsv" ]; then
                plot="$plot${plot:+, }'$run/reject-$set.tsv' using (100*\$1):2 with lines lw 2 lc $c title '$method', '$run/reject-$set.tsv' using (100*\$1):3 with lines dt 3 lw 1.5 lc $c title '$method oracle'"
            elif [ -s "$run/knn-$set.json" ]; then
                acc=$(json_get accuracy < "$run/knn-$set.json")
                [ -n "$acc" ] && plot="$plot${plot:+, }[0:100] 1-$acc with lines lw 1 lc $c title '$method (no uncertainty)'"
            fi
        done < "$out/reject.runs"
        [ -n "$plot" ] && echo "plot $plot"
    done
    echo "unset multiplot"
} > "$g"
gnuplot "$g"
mv "$out/reject.png.tmp" "$out/reject.png"
echo "$out/reject.png"
