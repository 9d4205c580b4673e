#!/bin/sh
# shapes.sh [--quick | --full] [-s STEPS] [-t THREADS] OUT
# The SPE paper's synthetic colour-orientation L-shapes (section 4.1, appendix A.2): a 2-D SPE
# trained on episodes of the four classes (2 support images per class form the prototypes, 8
# samples per query with the intersection sampler, as appendix A.2), then
#   1. few-shot accuracy on held-out shapes (2 support images per class, the naive sampler with
#      200 samples), beside the Bayes-optimal accuracy of the generator (mkshapes --bayes;
#      the paper: about 86 % against 87 %);
#   2. Figure 3: the embedding variance per dimension of the four class centroids (every image
#      at its class's centre, full legs) as per-pixel hue noise grows (left) and as the legs
#      shorten (right): the paper's finding is that hue noise raises the variance along one
#      dimension only (colour), short legs along both.
#   --quick: 1,000 training episodes, 200 test episodes; --full: 5,000 and 1,000 (50,000 training
#   images, each seen 4 times: longer runs overfit, training accuracy above the Bayes rate). -s sets the
#   episodes, -t the training threads (default 2). The recipe: Adam 1e-3 with warm-up over 5 % and
#   cosine decay (the paper: 1e-4 with early stopping). TRAIN_ARGS adds train options, REPEATS
#   sets the test episodes.
# Writes OUT/: train.hs, test.hs, model.ckpt, train.log, emb-test.hs, fewshot.json,
# fig3-hue.tsv, fig3-legs.tsv (class, n, centroid, var per dimension, by level), and with gnuplot
# embed.png (the test embeddings: means and 1-sd ellipses, colour = class; cf. Figure 2c) and
# fig3.png (the variance per dimension against hue noise and leg length; cf. Figure 3); prints a
# markdown summary. Re-running continues (finished files are kept).
set -eu
. "$(dirname "$0")/common.sh"
usage() { sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
[ $# -ge 1 ] || usage
steps=1000 repeats=200 threads=2
while [ $# -gt 1 ]; do
    case $1 in
    --quick) steps=1000 repeats=200 ;;
    --full) steps=5000 repeats=1000 ;;
    -s) steps=$2; shift ;;
    -t) threads=$2; shift ;;
    *) usage ;;
    esac
    shift
done
out=$1 seed=${SEED:-714}
repeats=${REPEATS:-$repeats}
mkdir -p "$out"
make_file "$out/train.hs" mkshapes -s train -n 50000 -S "$seed"
make_file "$out/test.hs" mkshapes -s test -n 4000 -S "$seed"
if [ ! -e "$out/trained" ]; then
    resume=""
    [ -s "$out/model.ckpt" ] && resume="--resume $out/model.ckpt"
    say "shapes: training a 2-D SPE for $steps episodes"
    batcher -m episodes -s 2 -q 8 -S "$seed" < "$out/train.hs" |
        train -o "$out/model.ckpt" $resume --head mog -C 1 -D 2 --loss spe -K 8 -n "$steps" -S "$seed" \
            -t "$threads" --log "$out/train.log" --recipe fast --lr 1e-3 \
            ${TRAIN_ARGS:-}
    touch "$out/trained"
fi
make_file "$out/emb-test.hs" embed -m "$out/model.ckpt" < "$out/test.hs"
if [ ! -s "$out/fewshot.json" ]; then
    fewshot -s "$out/emb-test.hs" -k 2 -q 15 -R "$repeats" -S "$seed" --score spe-naive --json "$out/fewshot.json.tmp" \
        "$out/emb-test.hs" > /dev/null
    mv "$out/fewshot.json.tmp" "$out/fewshot.json"
fi
# Figure 3: 400 images per level, every image at its class's centre (--sd 0), full legs
fig() { # fig FILE OPTION LEVELS...
    f=$1 opt=$2; shift 2
    [ -s "$f" ] && return 0
    printf '# level\tclass\tn\tcentroid[0]\tcentroid[1]\tvar[0]\tvar[1]\n' > "$f.tmp"
    for x; do
        mkshapes -s test -n 400 -S "$seed" --sd 0 --legs 1,1 $opt "$x" | embed -m "$out/model.ckpt" |
            centroids --var | sed -e 1d -e "s/^/$x	/" >> "$f.tmp"
    done
    mv "$f.tmp" "$f"
}
fig "$out/fig3-hue.tsv" --hue-noise 0 18 36 54 72 90
fig "$out/fig3-legs.tsv" --short-legs 1 0.8 0.6 0.4 0.2
if command -v gnuplot > /dev/null; then
    term='set terminal pngcairo size 900,800 font ",11"'
    gnuplot -e 'set terminal pngcairo' -e 'exit' 2>/dev/null || term='set terminal png size 900,800'
    totsv -n 600 -f mu,var,class "$out/emb-test.hs" > "$out/embed.tsv"
    gnuplot <<GP
$term
set output '$out/embed.png'
set title "2-D SPE of 600 test L-shapes: means and 1-sd ellipses; colour = class" . "\n" . "(classes 0, 2: orientation 90; 1, 3: 180; 0, 1: hue 90; 2, 3: hue 180)"
set size ratio -1
set palette defined (0 "red", 1 "orange", 2 "blue", 3 "purple")
set cbrange [0:3]
set cbtics 1
plot '$out/embed.tsv' using 1:2:(2*sqrt(\$3)):(2*sqrt(\$4)):5 with ellipses lc palette fs transparent solid 0.1 notitle, \
     '' using 1:2:5 with points pt 7 ps 0.4 lc palette notitle
GP
    gnuplot <<GP
$term
set output '$out/fig3.png'
set multiplot layout 2,1 title "Mean embedding variance at the four class centres (400 images per level)"
set key top left
set logscale y
set xlabel "per-pixel hue noise, sd (degrees)"
set ylabel "variance"
plot '$out/fig3-hue.tsv' using 1:6 with points pt 7 lc rgb "grey50" title "dimension 0 (orientation)", \
     '' using 1:7 with points pt 9 lc rgb "black" title "dimension 1 (colour)"
set xlabel "leg length (fraction of full)"
set xrange [1.05:0.15]
plot '$out/fig3-legs.tsv' using 1:6 with points pt 7 lc rgb "grey50" title "dimension 0 (orientation)", \
     '' using 1:7 with points pt 9 lc rgb "black" title "dimension 1 (colour)"
unset multiplot
GP
fi
bayes=$(mkshapes --bayes)
acc=$(jq -r '"\(.spe_naive.accuracy) ± \(.spe_naive.ci95)"' "$out/fewshot.json")
pn=$(jq -r .pn.accuracy "$out/fewshot.json")
echo "## SPE on the colour-orientation L-shapes (2-D, $steps training episodes)"
echo
echo "| | ours | paper |"
echo "|---|---|---|"
echo "| few-shot accuracy, 4 classes, 2 support images each (SPE, naive sampler) | $acc | about 0.86 |"
echo "| the same by the nearest prototype of the means (PN scoring) | $pn | |"
echo "| Bayes-optimal accuracy of the generator | $bayes | about 0.87 |"
echo
echo "Figure 3: mean embedding variance per dimension at the class centres (level, class, n, centroid[0..1], var[0..1])."
echo
echo "Hue noise (sd, degrees):"
echo '```'
grep -v '#' "$out/fig3-hue.tsv"
echo '```'
echo "Leg length (fraction of full):"
echo '```'
grep -v '#' "$out/fig3-legs.tsv"
echo '```'
