#!/bin/sh
# compare-tables.sh OUT CONFIGS IMAGES RECIPE DATASET: the table of pipelines/compare.sh (markdown
# on stdout) from the results.tsv of the runs named in CONFIGS: one row per (set, method), a
# "best" row per set naming the best method of each column (AURC: the smallest; the others: the
# largest), and the reasons behind every "-". No run: "–".
set -eu
. "$(dirname "$0")/common.sh"
out=$1 configs=$2 images=$3 recipe=$4 dataset=$5
need_programs seedstat || exit 1
results_and_configs "$out" "$configs" | awk -F'\t' -v images="$images" -v recipe="$recipe" -v dataset="$dataset" -v body="${BODY_SPEC:-}" '
$0 == "#configs" { FS = " "; cf = 1; next }
!cf {
    v[$1, $2, $3] = $4; sd[$1, $2, $3] = $6
    if ($4 == "-") {
        r = $1 ": " $5
        if (!(r in what)) { reasons[++nr] = r; what[r] = "" }
        if (!((r, $3) in had)) { had[r, $3] = 1; what[r] = what[r] (what[r] == "" ? "" : ", ") $3 }
    }
    next
}
{ n++; name[n] = $1; method[n] = $2; D = $3 }
function cell(i, s, m,   k) {
    k = name[i] SUBSEP s SUBSEP m
    if (!(k in v)) return "–"
    if (v[k] == "-") return "-"
    return sprintf("%.3f", v[k]) (sd[k] == "" ? "" : sprintf(" ± %.3f", sd[k]))
}
function num(i, s, m,   k) { k = name[i] SUBSEP s SUBSEP m; return (k in v && v[k] != "-") }
function best(s, m, low,   i, b, bv) {
    b = ""
    for (i = 1; i <= n; i++) {
        if (!num(i, s, m)) continue
        if (b == "" || (low ? v[name[i], s, m] + 0 < bv : v[name[i], s, m] + 0 > bv)) { b = method[i]; bv = v[name[i], s, m] + 0 }
    }
    return b == "" ? "" : b
}
END {
    ds = dataset == "fashion" ? "Fashion-MNIST (2-item composites)" : "MNIST (2-digit)"
    printf "## Every method on the same data: %s, D = %s, %s training images each (recipe %s%s)\n\n", ds, D, images, recipe, body == "" ? "" : ", body " body " on the pixels"
    print "AP: verification AP of 10,000 random test pairs (the match probability where the method has one, else the distance of the means); KNN: 5-NN accuracy; R@1, MAP@R, PR-AUC: leave-one-out retrieval, global precision-recall over every pair; 5-shot: accuracy over every class of the set, 15 queries per class. Uncertainty (hib: self-mismatch eta; spe, hetriplet: mean variance), judged on the KNN answers: tau: Kendall tau over 20 bins (> 0: accuracy falls as uncertainty rises); AUROC: of the uncertainty at telling wrong answers from right ones (0.5: blind); AURC: area under the error-versus-reject curve (lower is better), the oracle'"'"'s in brackets; ECE: expected calibration error of the match probability, 15 bins. -: the method has no such output (reasons below)."
    print ""
    print "| set | method | AP | KNN | R@1 | MAP@R | 5-shot | PR-AUC | tau | AUROC | AURC (oracle) | ECE |"
    print "|---|---|---|---|---|---|---|---|---|---|---|---|"
    ns = split("seen-clean seen-corrupt unseen-clean unseen-corrupt", sets, " ")
    nm = split("ap knn r1 map_r fewshot pr_auc tau auroc aurc ece", ms, " ")
    for (si = 1; si <= ns; si++) {
        s = sets[si]
        for (i = 1; i <= n; i++) {
            a = cell(i, s, "aurc")
            if (num(i, s, "aurc_oracle")) a = a " (" cell(i, s, "aurc_oracle") ")"
            printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", s, method[i],
                cell(i, s, "ap"), cell(i, s, "knn"), cell(i, s, "r1"), cell(i, s, "map_r"), cell(i, s, "fewshot"),
                cell(i, s, "pr_auc"), cell(i, s, "tau"), cell(i, s, "auroc"), a, cell(i, s, "ece")
        }
        line = "| " s " | **best** |"
        for (mi = 1; mi <= nm; mi++) line = line " " best(s, ms[mi], ms[mi] == "aurc" || ms[mi] == "ece") " |"
        print line
    }
    print ""
    for (i = 1; i <= nr; i++) { split(reasons[i], rp, ": "); print "- " rp[1] " (" what[reasons[i]] "): " substr(reasons[i], length(rp[1]) + 3) }
}'
