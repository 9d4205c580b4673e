#!/bin/sh
# tta-eta.sh OUT: how the mixtures' uncertainty develops with training, on the snapshots a
# time-to-accuracy run left in OUT (tests/bench/tta.sh OUT). Every snapshot of every mixture
# model (OUT/mog*/model.step*.ckpt) is evaluated on the corrupt test twins with Kendall's tau
# (pipelines/hib-eval.sh into OUT/eta/MODEL/eval-STEP; its two largest streams are dropped),
# then the visible ink of each image is set against its eta (tests/bench/eta-ink.py, Debian's
# python3 with python3-numpy and python3-msgpack). Writes
#   OUT/eta-steps.tsv  model step ap knn tau_ap tau_knn rho_eta rho_var eta_least_ink
# (rho: Spearman's rank correlation of the visible ink with eta and with the components' mean
# variance; eta_least_ink: the median eta of the tenth of the images with the least ink left).
# Calling it again continues: evaluated snapshots are kept. Environment: SEED (714).
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
HEDGE_ROOT=$root
. "$root/pipelines/common.sh"
out=${1:?usage: tta-eta.sh OUT}
out=$(cd "$out" && pwd)
[ -s "$out/data/test-corrupt.hs" ] || { say "tta-eta: no $out/data/test-corrupt.hs: run tests/bench/tta.sh $out first"; exit 1; }
tsv=$out/eta-steps.tsv
printf 'model\tstep\tap\tknn\ttau_ap\ttau_knn\trho_eta\trho_var\teta_least_ink\n' > "$tsv.tmp"
n=0
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
        nums=$(awk -F'\t' '{ v[$3] = $4 } END { printf "%s\t%s\t%s\t%s", v["ap"], v["knn"], v["tau_ap"], v["tau_knn"] }' "$e/results.tsv")
        ink=$(/usr/bin/python3 "$root/tests/bench/eta-ink.py" --tsv "$out/data" "$e" | cut -f3-)
        printf '%s\t%s\t%s\t%s\n' "$m" "$s" "$nums" "$ink" >> "$tsv.tmp"
        n=$((n + 1))
    done
done
[ "$n" -gt 0 ] || { rm -f "$tsv.tmp"; say "tta-eta: no snapshots of a mixture in $out (mog*/model.step*.ckpt)"; exit 1; }
{ head -n 1 "$tsv.tmp"; tail -n +2 "$tsv.tmp" | sort -t "$(printf '\t')" -k1,1 -k2,2n; } > "$tsv"
rm -f "$tsv.tmp"
say "tta-eta: $tsv ($n snapshots)"
