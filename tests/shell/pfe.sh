#!/bin/sh
# pipelines/pfe.sh end to end on small data (100 steps, 20 test images per class): the backbone,
# its frozen features through embed | tonpz | fromnpz -k features (the training set twice, flagged
# corrupt where a digit is occluded), PFE's and HIB's heads on them and HIB end to end train and
# are evaluated; the four tables have a row per model with numbers where the model has the score
# and "-" with the reason where it has not; PFE's mean is the backbone's embedding normalised (its
# L2 AP is the backbone's cosine AP); a second call redoes nothing; --report; the refusals.
set -u
. "$(dirname "$0")/../lib.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(dirname "$BIN")
d=$T/p/data/N2
mkdir -p "$d"
echo mnist > "$d/dataset"
echo "shape=rect train=per-use" > "$d/occlusion"
mkdigits -N 2 -s train -n 3000 -S 3 > "$d/train.hs" || fail "mkdigits train"
mkdigits -N 2 -s test-seen -n 1400 --per-class 20 -S 3 > "$d/test.hs" || fail "mkdigits test"
mkdigits -N 2 -s test-unseen -n 600 --per-class 20 -S 3 > "$d/unseen.hs" || fail "mkdigits unseen"
for s in test unseen; do
    occlude -p 0 -S 3 < "$d/$s.hs" > "$d/$s-clean.hs" && occlude -p 1 -S 3 < "$d/$s.hs" > "$d/$s-corrupt.hs" || fail "occlude"
done

run() { HEAD_STEPS=100 PFEBN_STEPS=100 BUILD=$build sh "$root/pipelines/pfe.sh" "$@"; }
run -s 100 -j 2 "$T/p" > "$T/table" 2> "$T/err" || fail "pfe.sh exited $?: $(tail -n 30 "$T/err")"
num='-*[0-9][.][0-9][0-9][0-9]'
for split in Seen Unseen; do
    for t in "verification AP" "5-NN accuracy; the variance on the mixed set"; do
        grep -qx "### $split test classes: $t" "$T/table" || fail "no table '$split: $t': $(cat "$T/table")"
    done
done
for m in "backbone (triplet, point)" "pfe (frozen backbone + PFE head)" "hibhead (frozen backbone + HIB head)" "hib (HIB MoG-1, end to end)" \
    "pfebn (PFE's module as its authors built it, on the layer before)"; do
    [ "$(grep -c "^| $m |" "$T/table")" = 4 ] || fail "not 4 rows for $m: $(cat "$T/table")"
done
# AP: clean, corrupt, mixed x (L2, cos, MLS, p); KNN: clean, corrupt, mixed x (L2, cos, MLS), then
# AUROC corrupt, tau corrupt, tau KNN, AURC (oracle)
ap4="$num | $num | $num | $num"
grep -q "^| hib (HIB MoG-1, end to end) | $ap4 | $ap4 | $ap4 |$" "$T/table" || fail "hib's AP row: $(grep '^| hib' "$T/table")"
grep -q "^| backbone (triplet, point) | $num | $num | - | - | $num | $num | - | - | $num | $num | - | - |$" "$T/table" ||
    fail "backbone's AP row: $(grep '^| backbone' "$T/table")"
grep -q "^| pfe (frozen backbone + PFE head) | $num | $num | $num | - | $num | $num | $num | - | $num | $num | $num | - |$" "$T/table" ||
    fail "pfe's AP row: $(grep '^| pfe' "$T/table")"
grep -q "^| pfebn (PFE's module as its authors built it, on the layer before) | $num | $num | $num | - | $num | $num | $num | - | $num | $num | $num | - |$" "$T/table" ||
    fail "pfebn's AP row: $(grep '^| pfebn' "$T/table")"
k3="$num | $num | $num"
grep -q "^| hibhead (frozen backbone + HIB head) | $k3 | $k3 | $k3 | $num | $num | $num | $num ($num) |$" "$T/table" ||
    fail "hibhead's KNN row: $(grep '^| hibhead' "$T/table")"
grep -q "^| backbone (triplet, point) | $num | $num | - | $num | $num | - | $num | $num | - | - | - | - | - |$" "$T/table" ||
    fail "backbone's KNN row: $(grep '^| backbone' "$T/table")"
grep -q "^- backbone (ap_mls, knn_mls, auroc_corrupt, tau_corrupt, tau_knn, aurc, aurc_oracle): no variance (point embeddings)$" "$T/table" ||
    fail "backbone's reason: $(tail -n 8 "$T/table")"
grep -q "^- pfe (ap_p): no match probability (the pfe model learns none)$" "$T/table" || fail "pfe's reason"
# the results file: every run, every number, with its seed
r=$T/p/results-pfe.tsv
head -n 1 "$r" | grep -qx "$(printf 'run\tconfig\tseed\tset\tmetric\tvalue\tnote')" || fail "results header: $(head -n 1 "$r")"
[ "$(awk -F'\t' 'NR > 1 && $5 !~ /^[ud]:/ { n[$1]++ } END { print n["backbone"], n["pfe"], n["hibhead"], n["hib"], n["pfebn"] }' "$r")" = "52 52 52 52 52" ] ||
    fail "not 52 numbers per run: $(awk -F'\t' '$5 !~ /^[ud]:/' "$r" | cut -f1 | sort | uniq -c)"
# the uncertainty battery on each of the six sets: the free baselines for every run, the learned
# variance beside the best of them for those with one (pfe's means are normalised: no norm)
for m in backbone pfe hibhead hib pfebn; do
    [ "$(awk -F'\t' -v m=$m '$1 == m && $5 == "u:ratio:r1:auroc" && $6 ~ /^[0-9.]+$/' "$r" | wc -l)" = 6 ] ||
        fail "$m: not 6 sets with ratio's r1 AUROC: $(grep "^$m	" "$r" | grep -c 'u:ratio')"
done
for m in pfe hibhead hib pfebn; do
    [ "$(awk -F'\t' -v m=$m '$1 == m && $5 == "d:var:r1:auroc" && $7 ~ /^(top1_dist|ratio|vote_entropy|norm)$/' "$r" | wc -l)" = 6 ] ||
        fail "$m: not 6 sets with var's difference from the best free baseline"
done
grep -q "^backbone	.*	d:" "$r" && fail "the backbone has a learned source"
grep -q "^pfe	.*	u:norm:r1:auroc	" "$r" && fail "pfe's normalised means have a norm source"
sh "$root/pipelines/finding.sh" "pfe=$T/p" > "$T/finding" || fail "finding.sh on pfe.sh's runs"
grep -q "^| pfe | seen-mixed | pfe | var | r1 AUROC | " "$T/finding" || fail "finding: no pfe row: $(head -n 5 "$T/finding")"
# PFE's mean is the backbone's embedding, L2-normalised: its L2 AP is the backbone's cosine AP
for m in pfe pfebn; do
    awk -F'\t' -v m=$m '$1 == "backbone" && $5 == "ap_cos" { c[$4] = $6 } $1 == m && $5 == "ap_l2" { l[$4] = $6 }
        END { for (s in c) { n++; if ((c[s] - l[s]) ^ 2 > 1e-10) exit 1 } exit n != 6 }' "$r" ||
        fail "$m's L2 AP is not the backbone's cosine AP: $(grep -P 'ap_(cos|l2)\t' "$r")"
done
# the frozen features: a features stream of the training set twice (two draws), flagged corrupt
# where a digit was occluded (about 36 % at p = 0.2 per digit), made by fromnpz from tonpz's archive
f=$T/p/runs/backbone/feat-train.hs
tshow -H "$f" | grep -q '"kind": "features"' || fail "feat-train.hs is not a features stream"
tshow -H "$f" | grep -q '"program": "fromnpz", "args": \["-k", "features", "--features", "mu", "--skip", "hidden", "-"\]' || fail "feat-train.hs: not fromnpz's"
totsv -f corrupt "$f" | awk 'NR > 1 { n++; c += $1 } END { exit !(n == 6000 && c > 0.3 * n && c < 0.42 * n) }' ||
    fail "feat-train.hs: not 6,000 items about 36 % corrupt"
totsv -f corrupt "$T/p/runs/pfe/emb-seen-corrupt.hs" | sed 1d | sort -u | tr '\n' ' ' | grep -qx '1 ' || fail "the corrupt twins' flag"
grep -q "training PFE's uncertainty module on $T/p/runs/backbone's features, 100 steps" "$T/p/runs/pfe/run.log" || fail "pfe's log"
# pfebn reads the backbone's 120 features before the embedding beside its frozen 16-d mean
# (embed --hidden | tonpz | fromnpz --features hidden --mu mu), the authors' module and recipe
fh=$T/p/runs/backbone/feat-h-train.hs
[ "$(tshow -m mean_dims "$fh")" = 16 ] && [ "$(tshow -m features "$fh")" = 136 ] ||
    fail "feat-h-train.hs: not 120 + 16 features: $(tshow -H "$fh")"
grep -q "training PFE's module as its authors built it on $T/p/runs/backbone's layer before the embedding, 100 steps of 30 x 4" \
    "$T/p/runs/pfebn/run.log" || fail "pfebn's log: $(cat "$T/p/runs/pfebn/run.log")"
embed -m "$T/p/runs/pfebn/model.ckpt" < "$T/p/runs/backbone/feat-h-seen-clean.hs" | tshow -m model | grep -qx pfe-bn ||
    fail "pfebn's model is not a pfe-bn head"

# a second call redoes nothing; --report prints the same tables
before=$(ls -l --time-style=+%s.%N "$T/p/runs/pfe/results.tsv" "$T/p/runs/backbone/model.ckpt" "$f")
run -s 100 -j 2 "$T/p" > "$T/table2" 2> "$T/err" || fail "the second pfe.sh exited $?"
[ "$before" = "$(ls -l --time-style=+%s.%N "$T/p/runs/pfe/results.tsv" "$T/p/runs/backbone/model.ckpt" "$f")" ] ||
    fail "the second call redid a run"
cmp -s "$T/table" "$T/table2" || fail "the second call's table differs"
run -s 100 --report "$T/p" > "$T/table3" 2> "$T/err" || fail "--report exited $?"
cmp -s "$T/table" "$T/table3" || fail "--report's table differs"

# refusals: a head without its backbone names it; options the protocol fixes
mkdir -p "$T/q/data" && ln -s "$d" "$T/q/data/N2"
run -s 100 --only '^pfe$' "$T/q" > /dev/null 2> "$T/err" && fail "pfe trained without a backbone"
grep -q "pfe-run: pfe: no $T/q/runs/backbone/feat-train.hs: the backbone run of this seed has not made its features" "$T/q/runs/pfe/run.log" ||
    fail "pfe without a backbone: $(cat "$T/q/runs/pfe/run.log")"
grep -q "pfe: FAILED: 1 of 1 runs did not finish" "$T/err" || fail "the failed head is not named: $(tail -n 5 "$T/err")"
run --body mlp:64 "$T/q" 2> "$T/err" && fail "--body accepted"
grep -q "pfe.sh: --body: the protocol fixes its bodies" "$T/err" || fail "--body: $(head -n 2 "$T/err")"
run --train-occlusion fixed "$T/q" 2> "$T/err" && fail "--train-occlusion fixed accepted"
grep -q "pfe.sh: --train-occlusion fixed: the protocol occludes the clean training set itself" "$T/err" || fail "fixed: $(head -n 2 "$T/err")"
DIM=x run "$T/q" 2> "$T/err" && fail "DIM=x accepted"
grep -q "pfe.sh: DIM: not a positive number: 'x'" "$T/err" || fail "DIM=x: $(head -n 2 "$T/err")"
pass
