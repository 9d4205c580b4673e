#!/bin/sh
# hib-eval.sh's cross conditions (issue 20, item 3): Q-G such as corrupt-clean and clean-corrupt,
# AP on pairs whose first image is from Q and second from G (pairscore -g) and KNN of Q's queries
# against G's gallery with each query's twin excluded (knn -g --exclude-id); computed only when
# named, so the lines of the plain conditions are the same with or without them.
set -u
. "$(dirname "$0")/../lib.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)
ev() { BUILD=$(dirname "$BIN") sh "$root/pipelines/hib-eval.sh" "$@"; }
cd "$T" || fail "cd"
mkdir data
mkdigits -N 2 -s test-seen -n 700 2> /dev/null > data/test.hs || fail "mkdigits test"
occlude -p 0 < data/test.hs > data/test-clean.hs || fail "occlude -p 0"
occlude -p 1 < data/test.hs > data/test-corrupt.hs || fail "occlude -p 1"
mkdigits -N 2 -s train -n 2000 2> /dev/null | batcher -m pairs -b 32 -n 40 |
    train --head mog -D 2 -n 40 -t 1 -o m.ckpt 2> train.err || fail "train: $(cat train.err)"

ev m m.ckpt data plain corrupt > plain.tsv 2> plain.err || fail "hib-eval corrupt: $(cat plain.err)"
[ -e plain/pairs-corrupt-clean.hs ] && fail "a cross condition was computed without being asked"
ev m m.ckpt data cross corrupt corrupt-clean clean-corrupt > cross.tsv 2> cross.err ||
    fail "hib-eval with cross conditions exited $?: $(cat cross.err)"
# the plain condition's lines are unchanged; each cross condition has its ap and knn lines
grep -P '^m\tcorrupt\t' cross.tsv | cmp -s - plain.tsv || fail "the corrupt lines changed: $(cat cross.tsv)"
for c in corrupt-clean clean-corrupt; do
    for m in ap knn tau_ap tau_knn; do
        grep -qP "^m\t$c\t$m\t[0-9.eE+-]+\$" cross.tsv || fail "no $m line for $c: $(cat cross.tsv)"
    done
done
[ -e cross/pairs-clean.hs ] && fail "the gallery condition clean was evaluated on its own"
grep -qP '^m\tclean\t' cross.tsv && fail "lines for clean, which was not asked for"
# the pairs: first image corrupt, second clean, never twins among the matching ones
"$BIN/../tests/test_evalfix" cols match id1 id2 < cross/pairs-corrupt-clean.hs > pc || fail "cols"
awk 'NR > 1 && $1 == 1 && $2 == $3 { exit 1 } END { exit NR != 10001 }' pc || fail "cross pairs paired twins (or not 10,000)"
# the knn: corrupt queries, clean gallery, no query's own id among its neighbours; its accuracy line
# is the mean of the `correct` column
"$BIN/../tests/test_evalfix" cols id correct neighbors < cross/knn-corrupt-clean.hs > kc || fail "knn cols"
awk 'NR > 1 { for (k = 3; k <= NF; k++) if ($k == $1) exit 1; s += $2; n++ } END { printf "%.6f\n", s / n }' kc > acc ||
    fail "a query's twin among its neighbours"
want=$(grep -P '^m\tcorrupt-clean\tknn\t' cross.tsv | cut -f 4)
awk -v a="$(cat acc)" -v b="$want" 'BEGIN { exit !(b != "" && (a - b) ^ 2 < 1e-12) }' ||
    fail "knn accuracy line '$want', correct column $(cat acc)"
[ -e cross/emb-corrupt-clean.hs ] && fail "a cross condition was embedded"
# a name that is no condition and no pair of them: one line, exit 1
ev m m.ckpt data cross corrupt-nothing > /dev/null 2> bad.err && fail "corrupt-nothing succeeded"
grep -q "no test images for 'corrupt-nothing'" bad.err || fail "corrupt-nothing: $(cat bad.err)"
echo "hib-eval: ok"
