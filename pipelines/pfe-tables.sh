#!/bin/sh
# pfe-tables.sh OUT CONFIGS STEPS HEAD_STEPS DIM RECIPE DATASET: the tables of pipelines/pfe.sh
# (markdown on stdout) from the results.tsv of the runs named in CONFIGS: per split of the test
# classes (seen, unseen) one table of verification AP (clean, corrupt and mixed pairs; by L2,
# cosine, MLS and the model's own match probability) and one of 5-NN accuracy with the variance's
# ranking of the mixed set, a row per model; then the reasons behind every "-". A cell is the
# mean over the seeds that finished, "± sd" with two or more; no run: "–".
set -eu
. "$(dirname "$0")/common.sh"
out=$1 configs=$2 steps=$3 hsteps=$4 dim=$5 recipe=$6 dataset=$7
need_programs seedstat || exit 1
results_and_configs "$out" "$configs" | awk -F'\t' -v steps="$steps" -v hsteps="$hsteps" -v dim="$dim" -v recipe="$recipe" -v dataset="$dataset" '
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
{ n++; name[n] = $1; model[n] = $2 }
function cell(i, s, m,   k) {
    k = name[i] SUBSEP s SUBSEP m
    if (!(k in v)) return "–"
    if (v[k] == "-") return "-"
    return sprintf("%.3f", v[k]) (sd[k] == "" ? "" : sprintf(" ± %.3f", sd[k]))
}
function label(m) {
    if (m == "backbone") return "backbone (triplet, point)"
    if (m == "pfe") return "pfe (frozen backbone + PFE head)"
    if (m == "hibhead") return "hibhead (frozen backbone + HIB head)"
    if (m == "hib") return "hib (HIB MoG-1, end to end)"
    return m
}
END {
    ds = dataset == "fashion" ? "Fashion-MNIST (2-item composites)" : "MNIST (2-digit)"
    printf "## PFE'"'"'s protocol on a frozen backbone: %s, D = %s, %s steps of 128 images (heads: %s steps of 128 features), recipe %s\n\n", ds, dim, steps, hsteps, recipe
    print "backbone: hedge'"'"'s point model (conv body, triplet loss, semi-hard), frozen; pfe: PFE'"'"'s uncertainty module (mlp:64) on its features, the mean its L2-normalised embedding, trained by the mutual likelihood score; hibhead: HIB'"'"'s MoG-1 head (mlp:64, VIB) on the same features; hib: HIB MoG-1 trained end to end on the backbone'"'"'s images and steps. Test twins: clean, corrupt (every digit occluded), and mixed (the two stacked)."
    print ""
    print "AP: verification AP of 10,000 random pairs: clean pairs, corrupt pairs (both occluded), mixed pairs (one clean, one corrupt, never twins), scored by minus the L2 distance of the means, their cosine, the mutual likelihood score (MLS) and the model'"'"'s own match probability p. KNN: 5-NN accuracy by the same rankings, leave-one-out within the clean and within the corrupt twins; mixed: clean and corrupt queries against the clean twins, the query'"'"'s own image left out. The variance on the mixed queries (u = the mean variance, on the 5-NN answers by L2): AUROC corrupt, P(u of a corrupt query > u of a clean one); tau corrupt, Kendall tau of the clean share over 20 bins of u (> 0: the corrupt share rises with u); tau KNN, of the 5-NN accuracy (> 0: accuracy falls as u rises); AURC, the area under the error-versus-reject curve (lower is better), the oracle'"'"'s in brackets."
    ns = split("seen unseen", splits, " ")
    for (si = 1; si <= ns; si++) {
        sp = splits[si]
        print ""
        printf "### %s test classes: verification AP\n\n", sp == "seen" ? "Seen" : "Unseen"
        print "| model | clean L2 | clean cos | clean MLS | clean p | corrupt L2 | corrupt cos | corrupt MLS | corrupt p | mixed L2 | mixed cos | mixed MLS | mixed p |"
        print "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
        for (i = 1; i <= n; i++) {
            line = "| " label(model[i]) " |"
            for (c = 1; c <= 3; c++) {
                cond = c == 1 ? "clean" : c == 2 ? "corrupt" : "mixed"
                line = line " " cell(i, sp "-" cond, "ap_l2") " | " cell(i, sp "-" cond, "ap_cos") " | " cell(i, sp "-" cond, "ap_mls") " | " cell(i, sp "-" cond, "ap_p") " |"
            }
            print line
        }
        print ""
        printf "### %s test classes: 5-NN accuracy; the variance on the mixed set\n\n", sp == "seen" ? "Seen" : "Unseen"
        print "| model | KNN clean L2 | clean cos | clean MLS | KNN corrupt L2 | corrupt cos | corrupt MLS | KNN mixed L2 | mixed cos | mixed MLS | AUROC corrupt | tau corrupt | tau KNN | AURC (oracle) |"
        print "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
        for (i = 1; i <= n; i++) {
            line = "| " label(model[i]) " |"
            for (c = 1; c <= 3; c++) {
                cond = c == 1 ? "clean" : c == 2 ? "corrupt" : "mixed"
                line = line " " cell(i, sp "-" cond, "knn_l2") " | " cell(i, sp "-" cond, "knn_cos") " | " cell(i, sp "-" cond, "knn_mls") " |"
            }
            s = sp "-mixed"
            a = cell(i, s, "aurc")
            if ((name[i] SUBSEP s SUBSEP "aurc_oracle") in v && v[name[i], s, "aurc_oracle"] != "-") a = a " (" cell(i, s, "aurc_oracle") ")"
            print line " " cell(i, s, "auroc_corrupt") " | " cell(i, s, "tau_corrupt") " | " cell(i, s, "tau_knn") " | " a " |"
        }
    }
    print ""
    for (i = 1; i <= nr; i++) { split(reasons[i], rp, ": "); print "- " rp[1] " (" what[reasons[i]] "): " substr(reasons[i], length(rp[1]) + 3) }
}'
