#!/bin/sh
# spe-tables.sh OUT CONFIGS: the SPE paper's Table 2 (appendix D.2) beside ours, from the
# results.tsv of the runs of CONFIGS (spe-run.sh), per condition (clean/corrupt support x
# clean/corrupt query), model and split, in %. Every model in two readings: few-shot accuracy over
# the random test episodes (nearest prototype; SPE's sampler) and KNN accuracy (k = 5, corrupt
# images on one side only). The paper's own reading comes first with its number: few-shot for PN
# and SPE, KNN for point and HIB (the caption takes them from Oh et al., whose Table 1 they copy:
# docs/spe.md); the other reading has no paper number. A cell is "ours / paper" or "ours", ours
# the mean over the configuration's training seeds ("mean ± sd" with two or more); "–" where we
# have no number. Only columns with at least one run are printed.
set -eu
. "$(dirname "$0")/common.sh"
out=$1 configs=$2
need_programs seedstat || exit 1
results_and_configs "$out" "$configs" | awk -F'\t' '
BEGIN {
    # the paper (appendix D.2, Table 2), in %: seen N2D2 N2D3 N3D2 N3D3, unseen the same
    P["point","cc"] = "88.2 95.0 65.8 87.3 85.5 84.8 59.0 85.5"
    P["hib","cc"] = "87.9 95.2 65.0 87.3 87.3 91.0 64.4 88.2"
    P["pn","cc"] = "91.1 95.0 65.8 90.6 82.0 89.5 64.3 89.1"
    P["spe","cc"] = "93.0 94.2 80.2 89.0 90.0 89.3 80.2 88.2"
    P["point","xc"] = "76.2 92.2 49.5 77.6 76.5 73.3 42.6 73.2"
    P["hib","xc"] = "81.6 94.3 54.0 81.2 80.8 86.7 53.9 81.2"
    P["pn","xc"] = "72.7 93.3 44.6 82.7 70.9 86.3 42.9 79.6"
    P["spe","xc"] = "92.4 93.8 76.7 87.8 88.8 86.3 75.4 86.3"
    P["point","cx"] = "43.5 51.6 29.3 44.7 46.3 44.8 26.2 42.0"
    P["hib","cx"] = "49.9 57.8 31.8 49.9 53.5 57.0 32.1 50.2"
    P["pn","cx"] = "53.1 61.1 33.8 56.4 51.1 57.9 33.0 54.8"
    P["spe","cx"] = "53.7 58.2 40.2 48.1 56.3 56.5 39.3 46.6"
    ncol = 0
    for (s = 0; s < 2; s++) for (n = 2; n <= 3; n++) for (d = 2; d <= 3; d++) {
        ncol++; sp[ncol] = s ? "unseen" : "seen"; cn[ncol] = n; cd[ncol] = d
    }
    label["point"] = "point (soft contrastive; the paper: contrastive)"
    label["hib"] = "HIB (MoG-1, VIB)"; label["pn"] = "PN"; label["spe"] = "SPE"
    # each model in the reading of the paper first, then in the other
    first["point"] = first["hib"] = "knn"; first["pn"] = first["spe"] = "acc"
    rname["knn"] = "KNN, k = 5"; rname["acc"] = "few-shot"
    title["cc"] = "clean support, clean query"; title["xc"] = "corrupt support, clean query"
    title["cx"] = "clean support, corrupt query"
}
$0 == "#configs" { cf = 1 }
!cf && ($3 == "acc" || $3 == "knn") {
    # NAME = N<n>-D<d>-<model>; $2 = split-cond
    split($1, a, "-"); n = substr(a[1], 2); d = substr(a[2], 2); m = a[3]
    split($2, b, "-")
    v[m, $3, b[1], n, d, b[2]] = sprintf("%.1f", 100 * $4) ($6 == "" ? "" : sprintf(" ± %.1f", 100 * $6))
    have[b[1], n, d] = 1; hm[m] = 1
}
END {
    nm = split("point hib pn spe", models, " ")
    split("cc xc cx", conds, " ")
    for (k = 1; k <= 3; k++) {
        c = conds[k]
        printf "\n### %s (accuracy %%, ours / paper)\n\n| model | reading |", title[c]
        for (j = 1; j <= ncol; j++) if (have[sp[j], cn[j], cd[j]]) printf " %s N=%d D=%d |", sp[j], cn[j], cd[j]
        printf "\n|---|---|"
        for (j = 1; j <= ncol; j++) if (have[sp[j], cn[j], cd[j]]) printf "---|"
        printf "\n"
        for (i = 1; i <= nm; i++) {
            m = models[i]
            if (!hm[m]) continue
            for (r = 1; r <= 2; r++) {
                rd = (r == 1) ? first[m] : (first[m] == "knn" ? "acc" : "knn")
                printf "| %s | %s%s |", label[m], rname[rd], r == 1 ? " (the paper\047s)" : ""
                for (j = 1; j <= ncol; j++) {
                    if (!have[sp[j], cn[j], cd[j]]) continue
                    x = v[m, rd, sp[j], cn[j], cd[j], c]
                    split(P[m, c], pp, " ")
                    if (r == 1) printf " %s / %s |", x == "" ? "–" : x, pp[j]
                    else printf " %s |", x == "" ? "–" : x
                }
                printf "\n"
            }
        }
    }
}'
