#!/bin/sh
# metric-tables.sh PAPER OUT CONFIGS STEPS RECIPE: the table of pipelines/hetriplet.sh or
# fstat.sh (markdown on stdout) from the results.tsv of the runs named in CONFIGS, with the
# paper's numbers on their own data sets as reference rows. "–": no run or no such number (a
# model without an uncertainty has no cleaning by uncertainty and no correlation).
set -eu
. "$(dirname "$0")/common.sh"
paper=$1 out=$2 configs=$3 steps=$4 recipe=$5
need_programs seedstat || exit 1
results_and_configs "$out" "$configs" | awk -F'\t' -v paper="$paper" -v steps="$steps" -v recipe="$recipe" '
function f(name, set, m,   k) { k = name SUBSEP set SUBSEP m; return (k in v) ? sprintf("%.3f", v[k]) (sd[k] == "" ? "" : sprintf(" ± %.3f", sd[k])) : "–" }
$0 == "#configs" { FS = " "; cf = 1; next }
!cf { v[$1, $2, $3] = $4; sd[$1, $2, $3] = $6; next }
{ n++; name[n] = $1; N[n] = $2; D[n] = $3; model[n] = $4 }
END {
    if (paper == "hetriplet") {
        print "## Heteroscedastic triplet loss (Taha et al. 2019) on N-digit MNIST: retrieval with noisy images"
        print ""
        print "Ours: " steps " steps of 16 classes x 8 images, recipe " recipe "; leave-one-out retrieval on the test sets, \"noisy\": each digit occluded with p = 0.5. Cleaning: 20 % of the gallery dropped, the most uncertain (hetriplet) or at random (mean of 5 draws); tau: Kendall tau-b between uncertainty bin (20) and per-query AP, sign inverted (> 0: AP falls as uncertainty rises); r: Pearson correlation of uncertainty and per-query AP. The paper: Clothing1M (Table 2 and Figure 6), its own data, not ours."
        print ""
        print "| N | D | model | seen noisy mAP | R@1 | MAP@R | cleaned 20 % at random | by uncertainty | tau | r | unseen noisy mAP | cleaned at random | by uncertainty | seen clean mAP |"
        print "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
        for (i = 1; i <= n; i++) {
            s = "seen-noisy"; u = "unseen-noisy"
            printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", N[i], D[i], model[i],
                f(name[i], s, "map"), f(name[i], s, "r1"), f(name[i], s, "map_r"), f(name[i], s, "clean_random_map"),
                f(name[i], s, "clean_uncertain_map"), f(name[i], s, "tau_ap"), f(name[i], s, "eta_ap_pearson"),
                f(name[i], u, "map"), f(name[i], u, "clean_random_map"), f(name[i], u, "clean_uncertain_map"),
                f(name[i], "seen-clean", "map")
        }
        print "| paper | | Tri-ResNet (Clothing1M) | 0.617 | | | 0.623 | | | | | | | |"
        print "| paper | | + Hetero (Clothing1M) | 0.623 | | | | 0.646 | | -0.50 | | | | |"
    } else if (paper == "cesoftmax") {
        print "## Cross-Example Softmax (Veit et al. 2020) on N-digit MNIST: text-to-image retrieval and global calibration"
        print ""
        print "Ours: a query tower over the digit strings (an embedding per digit value and position, an MLP) and the image network, cosine scores with a learned scale; " steps " steps of 64 classes x 2 images, recipe " recipe ". Queries: the digit strings of the test classes; relevant: the test images of that class. PR-AUC: global precision-recall over all (query, image) pairs (calibration: one threshold for every query). seen: the seen classes against the seen test images, clean or corrupt (every digit occluded); + distractors: every corrupt unseen-class test image added to the corrupt gallery; unseen: the unseen numbers (never seen by either tower) against their images (zero-shot). Each query has about 140 relevant images, so Recall@1 saturates; PR-AUC and mAP tell the losses apart. The paper: Conceptual Captions (Table 1, fractions; one relevant image per caption; its PR-AUC column under ours seen clean, its test-set R@1 under corrupt R@1, its +3.3M-distractor R@1 and R@100 under ours), its own data, not ours."
        print ""
        print "| N | D | loss | seen clean PR-AUC | mAP | corrupt PR-AUC | R@1 | mAP | + distractors PR-AUC | R@1 | R@100 | mAP | unseen clean PR-AUC | mAP | unseen corrupt PR-AUC | mAP |"
        print "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
        for (i = 1; i <= n; i++) {
            printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", N[i], D[i], model[i],
                f(name[i], "seen", "global_pr_auc"), f(name[i], "seen", "map"),
                f(name[i], "seenx", "global_pr_auc"), f(name[i], "seenx", "r1"), f(name[i], "seenx", "map"),
                f(name[i], "distractx", "global_pr_auc"), f(name[i], "distractx", "r1"), f(name[i], "distractx", "r100"),
                f(name[i], "distractx", "map"), f(name[i], "unseen", "global_pr_auc"), f(name[i], "unseen", "map"),
                f(name[i], "unseenx", "global_pr_auc"), f(name[i], "unseenx", "map")
        }
        print "| paper | | Sampled Softmax (CC3M) | 0.146 | | | 0.259 | | | 0.014 | 0.204 | | | | | |"
        print "| paper | | SNM (CC3M) | 0.148 | | | 0.261 | | | 0.013 | 0.206 | | | | | |"
        print "| paper | | CE-Softmax (CC3M) | 0.201 | | | 0.270 | | | 0.016 | 0.215 | | | | | |"
        print "| paper | | CE Negative Mining (CC3M) | 0.201 | | | 0.269 | | | 0.016 | 0.216 | | | | | |"
        print "| paper | | L-Softmax (margin; CC3M) | 0.140 | | | 0.262 | | | 0.014 | 0.207 | | | | | |"
    } else {
        print "## F-statistic loss (Ridgeway & Mozer 2018) on N-digit MNIST: Recall@k and disentanglement"
        print ""
        print "Ours: " steps " steps of 16 classes x 8 images, recipe " recipe "; Recall@k leave-one-out on the clean test sets (unseen: classes never trained on, as the paper tests on held-out identities); disentanglement: for each digit position and value, the AUC of the best single embedding dimension at telling that value from the others, averaged over values (1 = a dimension per value, 0.5 = none), on the clean seen test set. The paper: CUHK03 and Market-1501 Recall@1 (its section 2), sprites for disentanglement (Figure 3, d = 2: F-statistic AUCs nearer 1 than triplet), its own data, not ours."
        print ""
        print "| N | D | model | unseen R@1 | R@2 | R@4 | R@8 | MAP@R | seen R@1 | MAP@R | AUC digit 1 | digit 2 | digit 3 | mean |"
        print "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
        for (i = 1; i <= n; i++) {
            u = "unseen-clean"; s = "seen-clean"
            printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", N[i], D[i], model[i],
                f(name[i], u, "r1"), f(name[i], u, "r2"), f(name[i], u, "r4"), f(name[i], u, "r8"), f(name[i], u, "map_r"),
                f(name[i], s, "r1"), f(name[i], s, "map_r"), f(name[i], s, "auc_digit1"), f(name[i], s, "auc_digit2"),
                f(name[i], s, "auc_digit3"), f(name[i], s, "auc_mean")
        }
        print "| paper | 500 | triplet (Market-1501) | 0.659 | | | | | | | | | | |"
        print "| paper | 500 | F-statistic (Market-1501) | 0.658 | | | | | | | | | | |"
        print "| paper | 500 | F-statistic (CUHK03; histogram 0.863) | 0.905 | | | | | | | | | | |"
    }
}'
