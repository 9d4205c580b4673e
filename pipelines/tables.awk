# tables.awk: every table of the experiments, markdown on stdout (the *-tables.sh scripts and
# tables.sh run it: `awk -f tables.awk -v table=NAME ...`), from three sections on stdin:
#   the runs' numbers: seedstat's lines (run, set, metric, mean, note, sd: results_and_configs in
#     pipelines/common.sh) or a run's own results.tsv lines (run, set, metric, value, note);
#   "#configs", then the configuration's lines (space-separated: the run's name, its settings);
#   "#paper", then the paper's numbers (row, condition, metric, value: paper_numbers, from
#     pipelines/paper/NAME.tsv).
# A cell is ours as "mean ± sd" (sd with two or more seeds), rounded to three places (SPE: in %, to
# one), "–" for a number we do not have, "-" for one the model cannot have (the reasons are listed
# under the table), and "ours / paper" where the paper has one.
# table (and the variables each takes):
#   hib-runs, hib-appb        one row per run (hib.sh; appb: the configuration's runs in its order)
#   table1 table2 table4 table5 demo   the HIB paper's tables beside its numbers (a column per run)
#   spe                       the SPE paper's Table 2 (spe.sh), per condition, model and reading
#   hetriplet fstat cesoftmax a row per run and the paper's reference rows (metric.sh: steps, recipe)
#   compare                   every method on the same data (compare.sh: images, recipe, dataset, body)
#   pfe                       PFE's protocol on a frozen backbone (pfe.sh: steps, hsteps, dim, recipe, dataset)
BEGIN { FS = "\t" }
$0 == "#configs" { sec = 1; FS = " "; next }
$0 == "#paper" { sec = 2; FS = "\t"; next }
sec == 0 {
    nres++; rr[nres] = $1; rs[nres] = $2; rm[nres] = $3; rv[nres] = $4; rsd[nres] = $6
    v[$1, $2, $3] = $4; sd[$1, $2, $3] = $6; has[$1] = 1
    if ($4 == "-") { # a number the model cannot have: its reason, once, with the metrics it stands for
        r = $1 ": " $5
        if (!(r in what)) { reasons[++nr] = r; what[r] = "" }
        if (!((r, $3) in had)) { had[r, $3] = 1; what[r] = what[r] (what[r] == "" ? "" : ", ") $3 }
    }
    next
}
sec == 1 { n++; line[n] = $0; name[n] = $1; c2[n] = $2; c3[n] = $3; c4[n] = $4; next }
sec == 2 { if (!($1 in prow)) { prow[$1] = 1; prows[++np] = $1 } P[$1, $2, $3] = $4; next }

# ours, to three places, "± sd" with two or more seeds; "–": no such number; "-": none possible
function cell(run, s, m,   k) {
    k = run SUBSEP s SUBSEP m
    if (!(k in v)) return "–"
    if (v[k] == "-") return "-"
    return sprintf("%.3f", v[k]) (sd[k] == "" ? "" : sprintf(" ± %.3f", sd[k]))
}
function num(run, s, m,   k) { k = run SUBSEP s SUBSEP m; return (k in v && v[k] != "-") }
function print_reasons(   i, rp) {
    for (i = 1; i <= nr; i++) { split(reasons[i], rp, ": "); print "- " rp[1] " (" what[reasons[i]] "): " substr(reasons[i], length(rp[1]) + 3) }
}

END {
    if (table == "hib-runs" || table == "hib-appb") hib_runs()
    else if (table ~ /^(table[0-9]|demo)$/) hib()
    else if (table == "spe") spe()
    else if (table == "hetriplet" || table == "fstat" || table == "cesoftmax") metric()
    else if (table == "compare") compare()
    else if (table == "pfe") pfe()
    else { print "tables.awk: unknown table '" table "'" > "/dev/stderr"; exit 2 }
}

# ---- hib.sh: one row per run with results, in the configuration's order (appb: soft contrastive
# first, then the hard-margin contrastive loss by margin) or of the names (runs)
function hib_runs(   i, r, order, seen, k) {
    print "| run | AP clean | AP corrupt | KNN clean | KNN corrupt | τ(AP) corrupt | τ(KNN) corrupt |"
    print "|---|---|---|---|---|---|---|"
    k = 0
    for (i = 1; i <= n; i++) if ((name[i] in has) && !(name[i] in seen)) { seen[name[i]] = 1; order[++k] = name[i] }
    for (i = 1; i <= k; i++) {
        r = order[i]
        printf "| %s | %s | %s | %s | %s | %s | %s |\n", r, cell(r, "clean", "ap"), cell(r, "corrupt", "ap"),
            cell(r, "clean", "knn"), cell(r, "corrupt", "knn"), cell(r, "corrupt", "tau_ap"), cell(r, "corrupt", "tau_knn")
    }
}

# ---- hib.sh: the HIB paper's tables, a column per configuration (N, D, model, beta), a row per
# metric and condition; the paper's number beside ours
function hib_label(m) { return m == "point" ? "point" : m == "mog1" ? "MoG-1" : m == "mog2" ? "MoG-2" : m == "mog4" ? "MoG-4" : m }
# a run's name, N2-D2-mog1-b1e-4 (.sSEED stripped by seedstat), as its column: N, D, model, beta
function hib_col(run,   p, b) {
    split(run, p, "-"); b = substr(run, index(run, "-b") + 2)
    if (b == "0.0001") b = "1e-4"
    return substr(p[1], 2) SUBSEP substr(p[2], 2) SUBSEP p[3] SUBSEP b
}
function hib(   metrics, i, j, t, c, col, seen, cols, ncol, sk, val, sds, hasc, paper, head, sep, h, nm, ms, names,
                ncond, conds, side, k, ci, cond, cl, mk, row, vv, s, pv, cellv) {
    if (table == "table1") metrics = "ap knn"
    else if (table == "table2") metrics = "tau_ap tau_knn"
    else metrics = "ap knn tau_ap tau_knn"
    for (t in P) { split(t, c, SUBSEP); paper[hib_col(c[1]) SUBSEP c[2] SUBSEP c[3]] = P[t] }
    ncol = 0
    for (i = 1; i <= nres; i++) {
        col = hib_col(rr[i]); split(col, c, SUBSEP)
        if (table == "table2" && c[3] == "point") continue # Table 2 is the tau of the mixtures
        if (!(col in seen)) { seen[col] = 1; cols[++ncol] = col }
        val[col SUBSEP rs[i] SUBSEP rm[i]] = rv[i]; sds[col SUBSEP rs[i] SUBSEP rm[i]] = rsd[i]; hasc[rm[i] SUBSEP rs[i]] = 1
    }
    if (ncol == 0) { print "(no results yet in this output folder)"; return }
    # sort columns: N, D, beta, model (insertion sort on a text key)
    for (i = 1; i <= ncol; i++) { split(cols[i], c, SUBSEP); sk[i] = c[1] c[2] (c[4] == "0" ? "0" : "1") (c[3] == "point" ? "0" : substr(c[3], 4)) }
    for (i = 2; i <= ncol; i++) for (j = i; j > 1 && sk[j] < sk[j-1]; j--) {
        t = sk[j]; sk[j] = sk[j-1]; sk[j-1] = t; t = cols[j]; cols[j] = cols[j-1]; cols[j-1] = t }
    head = "| measured / paper |"; sep = "|---|"
    for (i = 1; i <= ncol; i++) {
        split(cols[i], c, SUBSEP)
        h = "N=" c[1] " D=" c[2] " " hib_label(c[3]); if (table == "table5") h = h " β=" c[4]
        head = head " " h " |"; sep = sep "---|"
    }
    print head; print sep
    nm = split(metrics, ms, " ")
    names["ap"] = "verification AP"; names["knn"] = "KNN accuracy"; names["tau_ap"] = "τ (AP, η)"; names["tau_knn"] = "τ (KNN, η)"
    # the one-sided corrupt protocols (issue 20 item 3) get rows only where some run has them
    ncond = split("clean corrupt clean-corrupt corrupt-clean", conds, " ")
    side["ap", "clean-corrupt"] = "clean-corrupt pairs"; side["ap", "corrupt-clean"] = "corrupt-clean pairs"
    side["knn", "clean-corrupt"] = "clean queries, corrupt gallery"; side["knn", "corrupt-clean"] = "corrupt queries, clean gallery"
    for (k = 1; k <= nm; k++) for (ci = 1; ci <= ncond; ci++) {
        cond = conds[ci]
        if (ci > 2 && !((ms[k] SUBSEP cond) in hasc)) continue
        cl = cond; mk = ms[k]; sub(/^tau_/, "", mk)
        if ((mk SUBSEP cond) in side) cl = side[mk, cond]
        row = "| " names[ms[k]] ", " cl " |"
        for (i = 1; i <= ncol; i++) {
            vv = val[cols[i] SUBSEP cond SUBSEP ms[k]]; s = sds[cols[i] SUBSEP cond SUBSEP ms[k]]
            pv = paper[cols[i] SUBSEP cond SUBSEP ms[k]]
            cellv = (vv == "" ? "–" : vv == "null" ? "n/a" : sprintf("%.3f", vv) (s == "" ? "" : sprintf(" ± %.3f", s))) " / " (pv == "" ? "–" : sprintf("%.3f", pv))
            row = row " " cellv " |"
        }
        print row
    }
    if (("ap" SUBSEP "clean-corrupt") in hasc || ("knn" SUBSEP "clean-corrupt") in hasc) {
        print ""
        print "Corrupt rows: the test twins with every digit occluded. AP over 10,000 random pairs of corrupt images (clean-corrupt pairs: the first image clean, the second corrupt; corrupt-clean the other way); KNN: 5-NN leave-one-out among the corrupt images, or each clean image's 5 nearest among the corrupt ones other than its own twin (clean queries, corrupt gallery), or the reverse. The paper's corrupt numbers stand beside the corrupt rows; its text does not say which form it used (results/demo/protocols.md compares them)."
    }
}

# ---- spe.sh: the SPE paper's Table 2 (appendix D.2), in %: per condition, a row per model and
# reading (the paper's first, with its number), a column per split, N and D with a run
function spe(   ncol, s, nn, d, sp, cn, cd, label, first, rname, title, vv, have, hm, i, a, b, m, nm, models, conds,
                k, c, j, r, rd, x) {
    ncol = 0
    for (s = 0; s < 2; s++) for (nn = 2; nn <= 3; nn++) for (d = 2; d <= 3; d++) {
        ncol++; sp[ncol] = s ? "unseen" : "seen"; cn[ncol] = nn; cd[ncol] = d
    }
    label["point"] = "point (soft contrastive; the paper: contrastive)"
    label["hib"] = "HIB (MoG-1, VIB)"; label["pn"] = "PN"; label["spe"] = "SPE"
    # each model in the reading of the paper first, then in the other
    first["point"] = first["hib"] = "knn"; first["pn"] = first["spe"] = "acc"
    rname["knn"] = "KNN, k = 5"; rname["acc"] = "few-shot"
    title["cc"] = "clean support, clean query"; title["xc"] = "corrupt support, clean query"
    title["cx"] = "clean support, corrupt query"
    for (i = 1; i <= nres; i++) {
        if (rm[i] != "acc" && rm[i] != "knn") continue
        # NAME = N<n>-D<d>-<model>; the set = split-condition
        split(rr[i], a, "-"); nn = substr(a[1], 2); d = substr(a[2], 2); m = a[3]
        split(rs[i], b, "-")
        vv[m, rm[i], b[1], nn, d, b[2]] = sprintf("%.1f", 100 * rv[i]) (rsd[i] == "" ? "" : sprintf(" ± %.1f", 100 * rsd[i]))
        have[b[1], nn, d] = 1; hm[m] = 1
    }
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
                printf "| %s | %s%s |", label[m], rname[rd], r == 1 ? " (the paper's)" : ""
                for (j = 1; j <= ncol; j++) {
                    if (!have[sp[j], cn[j], cd[j]]) continue
                    x = vv[m, rd, sp[j], cn[j], cd[j], c]
                    if (r == 1) printf " %s / %s |", x == "" ? "–" : x, P["N" cn[j] "-D" cd[j] "-" m, sp[j] "-" c, rd]
                    else printf " %s |", x == "" ? "–" : x
                }
                printf "\n"
            }
        }
    }
}

# ---- metric.sh: a row per run (N, D, model from the configuration, then a cell per column
# "set:metric" of cols), then the paper's rows: its leading cells as pipelines/paper/NAME.tsv has
# them, and the cells it has a number for (the others empty)
function metric_rows(cols,   nc, c, i, j, sm, row) {
    nc = split(cols, c, " ")
    for (i = 1; i <= n; i++) {
        row = "| " c2[i] " | " c3[i] " | " c4[i] " |"
        for (j = 1; j <= nc; j++) { split(c[j], sm, ":"); row = row " " cell(name[i], sm[1], sm[2]) " |" }
        print row
    }
    for (i = 1; i <= np; i++) {
        row = "| " prows[i] " |"
        for (j = 1; j <= nc; j++) {
            split(c[j], sm, ":")
            row = row (((prows[i], sm[1], sm[2]) in P) ? " " P[prows[i], sm[1], sm[2]] " |" : " |")
        }
        print row
    }
}
function metric() {
    if (table == "hetriplet") {
        print "## Heteroscedastic triplet loss (Taha et al. 2019) on N-digit MNIST: retrieval with noisy images"
        print ""
        print "Ours: " steps " steps of 16 classes x 8 images, recipe " recipe "; leave-one-out retrieval on the test sets, \"noisy\": each digit occluded with p = 0.5. Cleaning: 20 % of the gallery dropped, the most uncertain (hetriplet) or at random (mean of 5 draws); tau: Kendall tau-b between uncertainty bin (20) and per-query AP, sign inverted (> 0: AP falls as uncertainty rises); r: Pearson correlation of uncertainty and per-query AP. The paper: Clothing1M (Table 2 and Figure 6), its own data, not ours."
        print ""
        print "| N | D | model | seen noisy mAP | R@1 | MAP@R | cleaned 20 % at random | by uncertainty | tau | r | unseen noisy mAP | cleaned at random | by uncertainty | seen clean mAP |"
        print "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
        metric_rows("seen-noisy:map seen-noisy:r1 seen-noisy:map_r seen-noisy:clean_random_map seen-noisy:clean_uncertain_map seen-noisy:tau_ap seen-noisy:eta_ap_pearson unseen-noisy:map unseen-noisy:clean_random_map unseen-noisy:clean_uncertain_map seen-clean:map")
    } else if (table == "cesoftmax") {
        print "## Cross-Example Softmax (Veit et al. 2020) on N-digit MNIST: text-to-image retrieval and global calibration"
        print ""
        print "Ours: a query tower over the digit strings (an embedding per digit value and position, an MLP) and the image network, cosine scores with a learned scale; " steps " steps of 64 classes x 2 images, recipe " recipe ". Queries: the digit strings of the test classes; relevant: the test images of that class. PR-AUC: global precision-recall over all (query, image) pairs (calibration: one threshold for every query). seen: the seen classes against the seen test images, clean or corrupt (every digit occluded); + distractors: every corrupt unseen-class test image added to the corrupt gallery; unseen: the unseen numbers (never seen by either tower) against their images (zero-shot). Each query has about 140 relevant images, so Recall@1 saturates; PR-AUC and mAP tell the losses apart. The paper: Conceptual Captions (Table 1, fractions; one relevant image per caption; its PR-AUC column under ours seen clean, its test-set R@1 under corrupt R@1, its +3.3M-distractor R@1 and R@100 under ours), its own data, not ours."
        print ""
        print "| N | D | loss | seen clean PR-AUC | mAP | corrupt PR-AUC | R@1 | mAP | + distractors PR-AUC | R@1 | R@100 | mAP | unseen clean PR-AUC | mAP | unseen corrupt PR-AUC | mAP |"
        print "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
        metric_rows("seen:global_pr_auc seen:map seenx:global_pr_auc seenx:r1 seenx:map distractx:global_pr_auc distractx:r1 distractx:r100 distractx:map unseen:global_pr_auc unseen:map unseenx:global_pr_auc unseenx:map")
    } else {
        print "## F-statistic loss (Ridgeway & Mozer 2018) on N-digit MNIST: Recall@k and disentanglement"
        print ""
        print "Ours: " steps " steps of 16 classes x 8 images, recipe " recipe "; Recall@k leave-one-out on the clean test sets (unseen: classes never trained on, as the paper tests on held-out identities); disentanglement: for each digit position and value, the AUC of the best single embedding dimension at telling that value from the others, averaged over values (1 = a dimension per value, 0.5 = none), on the clean seen test set. The paper: CUHK03 and Market-1501 Recall@1 (its section 2), sprites for disentanglement (Figure 3, d = 2: F-statistic AUCs nearer 1 than triplet), its own data, not ours."
        print ""
        print "| N | D | model | unseen R@1 | R@2 | R@4 | R@8 | MAP@R | seen R@1 | MAP@R | AUC digit 1 | digit 2 | digit 3 | mean |"
        print "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
        metric_rows("unseen-clean:r1 unseen-clean:r2 unseen-clean:r4 unseen-clean:r8 unseen-clean:map_r seen-clean:r1 seen-clean:map_r seen-clean:auc_digit1 seen-clean:auc_digit2 seen-clean:auc_digit3 seen-clean:auc_mean")
    }
}

# ---- compare.sh: a row per (set, method), a "best" row per set naming the best method of each
# column (AURC, ECE: the smallest; the others: the largest), the reasons behind every "-"
function best(s, m, low,   i, b, bv) {
    b = ""
    for (i = 1; i <= n; i++) {
        if (!num(name[i], s, m)) continue
        if (b == "" || (low ? v[name[i], s, m] + 0 < bv : v[name[i], s, m] + 0 > bv)) { b = c2[i]; bv = v[name[i], s, m] + 0 }
    }
    return b
}
function compare(   ds, ns, sets, nm, ms, si, s, i, a, row, mi) {
    ds = dataset == "fashion" ? "Fashion-MNIST (2-item composites)" : "MNIST (2-digit)"
    printf "## Every method on the same data: %s, D = %s, %s training images each (recipe %s%s)\n\n", ds, c3[n], images, recipe, body == "" ? "" : ", body " body " on the pixels"
    print "AP: verification AP of 10,000 random test pairs (the match probability where the method has one, else the distance of the means); KNN: 5-NN accuracy; R@1, MAP@R, PR-AUC: leave-one-out retrieval, global precision-recall over every pair; 5-shot: accuracy over every class of the set, 15 queries per class. Uncertainty (hib: self-mismatch eta; spe, hetriplet: mean variance), judged on the KNN answers: tau: Kendall tau over 20 bins (> 0: accuracy falls as uncertainty rises); AUROC: of the uncertainty at telling wrong answers from right ones (0.5: blind); AURC: area under the error-versus-reject curve (lower is better), the oracle's in brackets; ECE: expected calibration error of the match probability, 15 bins. -: the method has no such output (reasons below)."
    print ""
    print "| set | method | AP | KNN | R@1 | MAP@R | 5-shot | PR-AUC | tau | AUROC | AURC (oracle) | ECE |"
    print "|---|---|---|---|---|---|---|---|---|---|---|---|"
    ns = split("seen-clean seen-corrupt unseen-clean unseen-corrupt", sets, " ")
    nm = split("ap knn r1 map_r fewshot pr_auc tau auroc aurc ece", ms, " ")
    for (si = 1; si <= ns; si++) {
        s = sets[si]
        for (i = 1; i <= n; i++) {
            a = cell(name[i], s, "aurc")
            if (num(name[i], s, "aurc_oracle")) a = a " (" cell(name[i], s, "aurc_oracle") ")"
            printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", s, c2[i],
                cell(name[i], s, "ap"), cell(name[i], s, "knn"), cell(name[i], s, "r1"), cell(name[i], s, "map_r"),
                cell(name[i], s, "fewshot"), cell(name[i], s, "pr_auc"), cell(name[i], s, "tau"), cell(name[i], s, "auroc"),
                a, cell(name[i], s, "ece")
        }
        row = "| " s " | **best** |"
        for (mi = 1; mi <= nm; mi++) row = row " " best(s, ms[mi], ms[mi] == "aurc" || ms[mi] == "ece") " |"
        print row
    }
    print ""
    print_reasons()
}

# ---- pfe.sh: per split of the test classes, a table of verification AP and one of 5-NN accuracy
# with the variance's ranking of the mixed set, a row per model; the reasons behind every "-"
function pfe_label(m) {
    if (m == "backbone") return "backbone (triplet, point)"
    if (m == "pfe") return "pfe (frozen backbone + PFE head)"
    if (m == "hibhead") return "hibhead (frozen backbone + HIB head)"
    if (m == "pfebn") return "pfebn (PFE's module as its authors built it, on the layer before)"
    if (m == "pfetorch") return "pfetorch (the PyTorch port of the authors' module: the peer)"
    if (m == "hib") return "hib (HIB MoG-1, end to end)"
    return m
}
# the cells of run i's metrics ms (space-separated) on the clean, corrupt and mixed sets of split sp
function pfe_cells(i, sp, ms,   nm, m, c, k, out) {
    nm = split(ms, m, " ")
    split("clean corrupt mixed", c, " ")
    out = ""
    for (k = 1; k <= 3 * nm; k++) out = out " " cell(name[i], sp "-" c[int((k - 1) / nm) + 1], m[(k - 1) % nm + 1]) " |"
    return out
}
function pfe(   ds, ns, splits, si, sp, i, row, s, a) {
    ds = dataset == "fashion" ? "Fashion-MNIST (2-item composites)" : "MNIST (2-digit)"
    printf "## PFE's protocol on a frozen backbone: %s, D = %s, %s steps of 128 images (heads: %s steps of 128 features), recipe %s\n\n", ds, dim, steps, hsteps, recipe
    print "backbone: hedge's point model (conv body, triplet loss, semi-hard), frozen; pfe: PFE's uncertainty module (mlp:64) on its features, the mean its L2-normalised embedding, trained by the mutual likelihood score; hibhead: HIB's MoG-1 head (mlp:64, VIB) on the same features; hib: HIB MoG-1 trained end to end on the backbone's images and steps; pfebn: PFE's module as its authors built it (batch-normalised, SGD, 12,000 steps of 256) on the backbone's 120 features before the embedding; pfetorch, where it ran: the same in PyTorch (tests/bench/pfe-peer.sh). Test twins: clean, corrupt (every digit occluded), and mixed (the two stacked)."
    print ""
    print "AP: verification AP of 10,000 random pairs: clean pairs, corrupt pairs (both occluded), mixed pairs (one clean, one corrupt, never twins), scored by minus the L2 distance of the means, their cosine, the mutual likelihood score (MLS) and the model's own match probability p. KNN: 5-NN accuracy by the same rankings, leave-one-out within the clean and within the corrupt twins; mixed: clean and corrupt queries against the clean twins, the query's own image left out. The variance on the mixed queries (u = the mean variance, on the 5-NN answers by L2): AUROC corrupt, P(u of a corrupt query > u of a clean one); tau corrupt, Kendall tau of the clean share over 20 bins of u (> 0: the corrupt share rises with u); tau KNN, of the 5-NN accuracy (> 0: accuracy falls as u rises); AURC, the area under the error-versus-reject curve (lower is better), the oracle's in brackets."
    ns = split("seen unseen", splits, " ")
    for (si = 1; si <= ns; si++) {
        sp = splits[si]
        print ""
        printf "### %s test classes: verification AP\n\n", sp == "seen" ? "Seen" : "Unseen"
        print "| model | clean L2 | clean cos | clean MLS | clean p | corrupt L2 | corrupt cos | corrupt MLS | corrupt p | mixed L2 | mixed cos | mixed MLS | mixed p |"
        print "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
        for (i = 1; i <= n; i++) {
            print "| " pfe_label(c2[i]) " |" pfe_cells(i, sp, "ap_l2 ap_cos ap_mls ap_p")
        }
        print ""
        printf "### %s test classes: 5-NN accuracy; the variance on the mixed set\n\n", sp == "seen" ? "Seen" : "Unseen"
        print "| model | KNN clean L2 | clean cos | clean MLS | KNN corrupt L2 | corrupt cos | corrupt MLS | KNN mixed L2 | mixed cos | mixed MLS | AUROC corrupt | tau corrupt | tau KNN | AURC (oracle) |"
        print "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
        for (i = 1; i <= n; i++) {
            row = "| " pfe_label(c2[i]) " |" pfe_cells(i, sp, "knn_l2 knn_cos knn_mls")
            s = sp "-mixed"
            a = cell(name[i], s, "aurc")
            if ((name[i] SUBSEP s SUBSEP "aurc_oracle") in v && v[name[i], s, "aurc_oracle"] != "-") a = a " (" cell(name[i], s, "aurc_oracle") ")"
            print row " " cell(name[i], s, "auroc_corrupt") " | " cell(name[i], s, "tau_corrupt") " | " cell(name[i], s, "tau_knn") " | " a " |"
        }
    }
    print ""
    print_reasons()
}
