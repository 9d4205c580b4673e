#!/bin/sh
# pfe-diff.sh RESULTS: paired differences over the training seeds of a pipelines/pfe.sh results
# file (OUT/results-pfe.tsv, results/pfe/results*.tsv): for each comparison A - B of two numbers
# of the same seed and set, the difference per seed, then its mean, sample sd and n over the seeds
# (seedstat), as TSV: comparison set mean sd n per-seed differences. The comparisons
# (docs/pfe.md, "Which of PFE's claims hold"):
#   pfe ap_mls - pfe ap_cos           MLS against the cosine of PFE's mean (the backbone's, normalised)
#   pfe knn_mls - pfe knn_cos         the same for 5-NN
#   pfe ap_mls - backbone ap_l2       MLS against the backbone's own L2 distance
#   backbone ap_cos - backbone ap_l2  what normalising the backbone costs
#   hibhead ap_mls - hibhead ap_cos, hib ap_mls - hib ap_cos, hibhead ap_p - hibhead ap_cos,
#   hib ap_p - hib ap_cos             the same question for HIB's Gaussians
#   pfebn ap_mls - pfebn ap_cos, pfebn knn_mls - pfebn knn_cos, pfebn ap_mls - backbone ap_l2: the same for PFE's module as its
#                                     authors built it (on the layer before the embedding)
# A difference whose sd is small beside its mean, and of one sign in every seed, is not noise.
set -eu
[ $# = 1 ] && [ -r "$1" ] || { echo "usage: pfe-diff.sh RESULTS.tsv" >&2; exit 2; }
command -v seedstat > /dev/null || PATH=$(cd "$(dirname "$0")/../.." && pwd)/build/bin:$PATH
awk -F'\t' -v OFS='\t' '
NR > 1 && $6 != "-" { v[$2, $3, $4, $5] = $6; seed[$3] = 1; set[$4] = 1 }
END {
    nc = split("pfe:ap_mls:pfe:ap_cos pfe:knn_mls:pfe:knn_cos pfe:ap_mls:backbone:ap_l2 backbone:ap_cos:backbone:ap_l2 hibhead:ap_mls:hibhead:ap_cos hib:ap_mls:hib:ap_cos hibhead:ap_p:hibhead:ap_cos hib:ap_p:hib:ap_cos pfebn:ap_mls:pfebn:ap_cos pfebn:knn_mls:pfebn:knn_cos pfebn:ap_mls:backbone:ap_l2", C, " ")
    ns = split("seen-clean seen-corrupt seen-mixed unseen-clean unseen-corrupt unseen-mixed", S, " ")
    for (c = 1; c <= nc; c++) {
        split(C[c], p, ":")
        name = p[1] " " p[2] " - " p[3] " " p[4]
        for (i = 1; i <= ns; i++)
            for (s in seed)
                if ((p[1], s, S[i], p[2]) in v && (p[3], s, S[i], p[4]) in v)
                    print name ".s" s, S[i], "diff", sprintf("%.10f", v[p[1], s, S[i], p[2]] - v[p[3], s, S[i], p[4]])
    }
}' "$1" | sort -t "$(printf '\t')" -k1,1 -s > "${TMPDIR:-/tmp}/pfe-diff.$$"
# per seed, in seed order, beside seedstat's mean, sd and n of each comparison and set
awk -F'\t' '{ c = $1; sub(/\.s[0-9]+$/, "", c); k = c SUBSEP $2; d[k] = d[k] sprintf(" %+.4f", $4) } END { for (k in d) { split(k, a, SUBSEP); print a[1] "\t" a[2] "\t" d[k] } }' \
    "${TMPDIR:-/tmp}/pfe-diff.$$" > "${TMPDIR:-/tmp}/pfe-diff.$$.seeds"
printf 'comparison\tset\tmean\tsd\tn\tper seed\n'
seedstat "${TMPDIR:-/tmp}/pfe-diff.$$" | tail -n +2 | awk -F'\t' -v OFS='\t' 'NR == FNR { s[$1, $2] = $3; next }
    { printf "%s\t%s\t%+.4f\t%.4f\t%s\t%s\n", $1, $2, $4, $6, $7, s[$1, $2] }' "${TMPDIR:-/tmp}/pfe-diff.$$.seeds" -
rm -f "${TMPDIR:-/tmp}/pfe-diff.$$" "${TMPDIR:-/tmp}/pfe-diff.$$.seeds"
