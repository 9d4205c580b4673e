#!/bin/sh
# pfe-peer.sh OUT: hedge's pfebn runs (PFE's module as its authors built it, pipelines/pfe-run.sh)
# against their PyTorch port (tests/bench/pfe_peer.py: the peer), on the same frozen features, at
# the same step count, for every seed whose pfebn run OUT holds (a benchmark, not part of `make
# test`: it needs Debian's python3-torch).
#
#   sh pipelines/pfe.sh --full --seeds 3 OUT          # backbones, pfebn among the heads
#   sh tests/bench/pfe-peer.sh OUT > OUT/peer.md       # the peer beside them
#
# For each OUT/runs/pfebn[.sS]: the peer trains on tonpz of its backbone's feat-h-train.hs, with
# the seed S and PFEBN_STEPS steps (12,000, pfe-run.sh's), one thread; its variances of the test
# twins (feat-h-{seen,unseen}-{clean,corrupt}.hs) become OUT/runs/pfetorch[.sS]/emb-*.hs
# (fromnpz -k embeddings), evaluated by pipelines/pfe-eval.sh as every run of pfe.sh is
# (results.tsv). Then, on stdout, the paired numbers of PFE's claims per seed, hedge beside the
# peer: MLS's AP gain over the cosine of the same mean (ap_mls - ap_cos) on each set, and the
# variance's AUROC at telling the corrupt mixed queries from the clean ones; the mean ± sd over
# the seeds; whether hedge's sign is the peer's in every seed and hedge's mean lies within the
# peer's seed spread (the peer's mean ± 2 sd, or ± 0.001 where the sd is smaller).
# PYTHON: the interpreter with torch and numpy (/usr/bin/python3, Debian's). Re-running keeps what exists. Exit status 1 when no pfebn run is finished.
set -eu
out=${1:?usage: pfe-peer.sh OUT}
root=$(cd "$(dirname "$0")/../.." && pwd)
PATH=$root/build/bin:$PATH
export PATH
steps=${PFEBN_STEPS:-12000}
sets="seen-clean seen-corrupt seen-mixed unseen-clean unseen-corrupt unseen-mixed"
found=0
for pb in "$out"/runs/pfebn "$out"/runs/pfebn.s*; do
    [ -s "$pb/results.tsv" ] || continue
    found=1
    sfx=${pb##*/pfebn} seed=714
    [ -n "$sfx" ] && seed=${sfx#.s}
    bb=$(cat "$pb/backbone") run=$out/runs/pfetorch$sfx
    mkdir -p "$run"
    if [ ! -s "$run/results.tsv" ]; then
        for s in train seen-clean seen-corrupt unseen-clean unseen-corrupt; do
            [ -s "$run/feat-h-$s.npz" ] || tonpz "$bb/feat-h-$s.hs" > "$run/feat-h-$s.npz"
        done
        if [ ! -s "$run/emb-unseen-corrupt.npz" ]; then
            echo "pfe-peer: pfetorch$sfx: the PyTorch port, $steps steps, seed $seed, on $bb's features" >&2
            OMP_NUM_THREADS=1 "${PYTHON:-/usr/bin/python3}" "$root/tests/bench/pfe_peer.py" "$run/feat-h-train.npz" "$run" "$seed" "$steps" \
                "$run"/feat-h-seen-clean.npz "$run"/feat-h-seen-corrupt.npz "$run"/feat-h-unseen-clean.npz \
                "$run"/feat-h-unseen-corrupt.npz
        fi
        for s in seen-clean seen-corrupt unseen-clean unseen-corrupt; do
            [ -s "$run/emb-$s.hs" ] || fromnpz -k embeddings --mu mu --var var "$run/emb-$s.npz" > "$run/emb-$s.hs"
        done
        SEED=714 sh "$root/pipelines/pfe-eval.sh" "pfetorch$sfx" pfetorch "$run" > "$run/results.tsv.tmp"
        mv "$run/results.tsv.tmp" "$run/results.tsv"
    fi
    for r in "$pb" "$run"; do
        awk -F'\t' -v seed="$seed" -v who="${r##*/}" '{ sub(/\..*/, "", who); print who "\t" seed "\t" $2 "\t" $3 "\t" $4 }' "$r/results.tsv"
    done
done > "${TMPDIR:-/tmp}/pfe-peer.$$"
[ "$found" = 1 ] || { echo "pfe-peer: no finished pfebn run in $out/runs (pipelines/pfe.sh makes them)" >&2; rm -f "${TMPDIR:-/tmp}/pfe-peer.$$"; exit 1; }
awk -F'\t' -v sets="$sets" '
$5 != "-" { v[$1, $2, $3, $4] = $5; seed[$2] = 1 }
function stat(a, n,   i, m, q) { m = 0; for (i = 1; i <= n; i++) m += a[i]; m /= n; q = 0
    for (i = 1; i <= n; i++) q += (a[i] - m) ^ 2; S = n > 1 ? sqrt(q / (n - 1)) : 0; return m }
END {
    ns = 0; for (s in seed) sd[++ns] = s
    for (i = 1; i <= ns; i++) for (j = i + 1; j <= ns; j++) if (sd[j] < sd[i]) { t = sd[i]; sd[i] = sd[j]; sd[j] = t }
    print "| number | set | hedge pfebn, per seed | mean ± sd | PyTorch peer, per seed | mean ± sd | same sign every seed | hedge within the peer'"'"'s spread |"
    print "|---|---|---|---|---|---|---|---|"
    nk = split(sets, K, " ")
    for (k = 1; k <= nk + 2; k++) {
        if (k <= nk) { set = K[k]; what = "ap_mls - ap_cos" } else { set = k == nk + 1 ? "seen-mixed" : "unseen-mixed"; what = "auroc_corrupt" }
        n = 0; ok = 1; hs = ""; ps = ""
        for (i = 1; i <= ns; i++) {
            s = sd[i]
            if (what == "auroc_corrupt") {
                if (!(("pfebn", s, set, "auroc_corrupt") in v) || !(("pfetorch", s, set, "auroc_corrupt") in v)) continue
                h = v["pfebn", s, set, "auroc_corrupt"]; p = v["pfetorch", s, set, "auroc_corrupt"]; c = 0.5
            } else {
                if (!(("pfebn", s, set, "ap_mls") in v) || !(("pfetorch", s, set, "ap_mls") in v)) continue
                h = v["pfebn", s, set, "ap_mls"] - v["pfebn", s, set, "ap_cos"]
                p = v["pfetorch", s, set, "ap_mls"] - v["pfetorch", s, set, "ap_cos"]; c = 0
            }
            n++; H[n] = h; P[n] = p
            if ((h > c) != (p > c)) ok = 0
            hs = hs sprintf(" %+.4f", h); ps = ps sprintf(" %+.4f", p)
        }
        if (!n) continue
        hm = stat(H, n); hsd = S; pm = stat(P, n); psd = S
        w = 2 * psd; if (w < 0.001) w = 0.001
        printf "| %s | %s |%s | %+.4f ± %.4f |%s | %+.4f ± %.4f | %s | %s |\n", what, set, hs, hm, hsd, ps, pm, psd,
            ok ? "yes" : "no", (hm >= pm - w && hm <= pm + w) ? "yes" : "no"
    }
}' "${TMPDIR:-/tmp}/pfe-peer.$$"
rm -f "${TMPDIR:-/tmp}/pfe-peer.$$"
