#!/bin/sh
# figures.sh OUT: the HIB figures, as PNG through gnuplot, for the 2-D runs in OUT/runs:
#   OUT/figures/embed-NAME-COND.png   2-D embeddings of test images (first 2,000), colour = class,
#                                     3-sigma ellipses for single Gaussians, class centroids
#                                     as squares (Fig. 3 and 4)
#   OUT/figures/mog-NAME-COND.png     mixture components of each image joined (Fig. 7)
#   OUT/figures/bins-N<N>-D<D>.png    per-bin KNN accuracy and AP against uncertainty (Fig. 5)
#   OUT/figures/pr-N<N>-D<D>.png      precision-recall curves
# Only plotting happens here; the numbers come from embed, centroids, ktau and apcurve.
set -eu
. "$(dirname "$0")/common.sh"
out=$1
fig=$out/figures
mkdir -p "$fig"
command -v gnuplot >/dev/null || { say "figures: gnuplot is missing (apt-get install gnuplot-nox)"; exit 1; }
term='set terminal pngcairo size 900,800 font ",11"'
gnuplot -e 'set terminal pngcairo' -e 'exit' 2>/dev/null || term='set terminal png size 900,800'
made=""
for run in "$out"/runs/*; do
    [ -d "$run" ] && [ -s "$run/emb-clean.hs" ] || continue
    name=$(basename "$run")
    case $name in *-D2-*) ;; *) continue ;; esac
    model=$(echo "$name" | cut -d- -f3)
    centroids "$run/emb-clean.hs" | tail -n +2 > "$run/centroids-clean.tsv"
    for cond in clean corrupt; do
        totsv -n 2000 -f mu,class "$run/emb-$cond.hs" > "$run/mu-$cond.tsv"
        what="2000 points; colour = class; squares = clean class centroids"
        case $model in
        mog1)
            what="2000 points, 300 3-sigma ellipses; colour = class; squares = clean class centroids"
            totsv -n 300 -f mu,var,class "$run/emb-$cond.hs" > "$run/muvar-$cond.tsv"
            plot="'$run/muvar-$cond.tsv' using 1:2:(6*sqrt(\$3)):(6*sqrt(\$4)):5 with ellipses lc palette fs transparent solid 0.08 notitle, \
                  '$run/mu-$cond.tsv' using 1:2:3 with points pt 7 ps 0.3 lc palette notitle" ;;
        mog*)
            what="2000 images, their ${model#mog} component means joined; colour = class; squares = clean centroids"
            totsv -n 2000 -f mu,class "$run/emb-$cond.hs" > "$run/mog-$cond.tsv"
            plot="'$run/mog-$cond.tsv' using 1:2:(\$3-\$1):(\$4-\$2):(column(2*${model#mog}+1)) with vectors nohead lc palette lw 0.5 notitle, \
                  '$run/mog-$cond.tsv' using 1:2:(column(2*${model#mog}+1)) with points pt 7 ps 0.3 lc palette notitle, \
                  '$run/mog-$cond.tsv' using 3:4:(column(2*${model#mog}+1)) with points pt 7 ps 0.3 lc palette notitle" ;;
        *)
            plot="'$run/mu-$cond.tsv' using 1:2:3 with points pt 7 ps 0.3 lc palette notitle" ;;
        esac
        gnuplot <<GP
$term
set output '$fig/embed-$name-$cond.png'
set title "$name, $cond test images" . "\n" . "($what)"
set size ratio -1
unset colorbox
set palette rgbformulae 33,13,10
plot $plot, '$run/centroids-clean.tsv' using 3:4 with points pt 5 ps 1.2 lc rgb "black" notitle
GP
        made="$made $fig/embed-$name-$cond.png"
    done
done
# per-bin performance against uncertainty and PR curves, one figure per (N, D)
for nd in $(ls "$out/runs" 2>/dev/null | cut -d- -f1,2 | sort -u); do
    bins="" pr=""
    for run in "$out"/runs/"$nd"-*; do
        name=$(basename "$run")
        [ -s "$run/pr-clean.tsv" ] || continue
        for cond in clean corrupt; do
            pr="$pr '$run/pr-$cond.tsv' using 1:2 with lines title '$name $cond',"
            case $name in *point*) continue ;; esac
            [ -s "$run/bins-knn-$cond.tsv" ] || continue
            bins="$bins '$run/bins-knn-$cond.tsv' using 1:4 with linespoints axes x1y1 title 'KNN acc $name $cond',"
            bins="$bins '$run/bins-ap-$cond.tsv' using 1:4 with linespoints dt 2 title 'AP $name $cond',"
        done
    done
    if [ -n "$bins" ]; then
        gnuplot <<GP
$term
set output '$fig/bins-$nd.png'
set title "$nd: performance per uncertainty bin (bin 0 = least uncertain)"
set xlabel "uncertainty bin (by eta)"; set ylabel "KNN accuracy / verification AP"
set key outside bottom center maxrows 4
plot ${bins%,}
GP
        made="$made $fig/bins-$nd.png"
    fi
    if [ -n "$pr" ]; then
        gnuplot <<GP
$term
set output '$fig/pr-$nd.png'
set title "$nd: precision-recall of verification (10,000 test pairs)"
set xlabel "recall"; set ylabel "precision"; set yrange [0.4:1.01]
set key bottom left
plot ${pr%,}
GP
        made="$made $fig/pr-$nd.png"
    fi
done
for f in $made; do echo "$f"; done
