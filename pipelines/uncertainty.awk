# uncertainty.awk: the tables of pipelines/uncertainty.sh from its results file (-F'\t'; the
# header `run config seed set metric value note`, write_results): the methods' battery, each
# cell the mean ± sd over the seeds of a configuration, and the ranking of every learned
# uncertainty by its R@1 AUROC minus the best free baseline's (the run's own best: evaluate's
# verdict), with in how many seeds the paired 95 % interval says better / undecided / worse.
function pm(s, q, n, f,   g, v) {
    if (n == 0) return "–"
    g = f; sub(/\+/, "", g); v = (q - s * s / n) / (n - 1 > 0 ? n - 1 : 1)
    return sprintf(f, s / n) (n > 1 ? sprintf(" ± " g, sqrt(v > 0 ? v : 0)) : "")
}
function add(k, v) { S[k] += v; Q[k] += v * v; N[k]++ }
NR == 1 { next }
{
    c = $2; m = $5; v = $6
    if (!(c in seen)) { seen[c] = 1; order[++nc] = c }
    if (v != "-" && m !~ /^[ud]:/) add(c SUBSEP m, v + 0)
    if (m ~ /^u:/) { split(m, p, ":"); src[c SUBSEP p[2]] = 1 }
    if (m ~ /^d:[^:]+:r1:auroc(:lo|:hi)?$/) {
        split(m, p, ":"); r = $1; s = p[2]
        if (!((c, s) in hasd)) { hasd[c, s] = 1; dl[++nd] = c SUBSEP s }
        if (p[5] == "lo") lo[c, s, r] = v
        else if (p[5] == "hi") hi[c, s, r] = v
        else { add(c SUBSEP s SUBSEP "d", v + 0); dr[c, s, r] = 1; runs[c, s] = runs[c, s] " " r; base[c, s] = base[c, s] "," $7 }
    }
    if (m ~ /^u:[^:]+:r1:auroc$/ && v != "-") { split(m, p, ":"); add(c SUBSEP p[2] SUBSEP "u", v + 0) }
}
END {
    print "| method | seeds | 5-NN acc | R@1 | MAP@R | mAP | AP | NMI | train s | evaluate s |"
    print "|---|---|---|---|---|---|---|---|---|---|"
    for (i = 1; i <= nc; i++) {
        c = order[i]
        printf "| %s | %d |", c, N[c SUBSEP "train_s"]
        split("knn r1 map_r map ap nmi", ms, " ")
        for (j = 1; j <= 6; j++) printf " %s |", pm(S[c SUBSEP ms[j]], Q[c SUBSEP ms[j]], N[c SUBSEP ms[j]], "%.3f")
        printf " %s | %s |\n", pm(S[c SUBSEP "train_s"], Q[c SUBSEP "train_s"], N[c SUBSEP "train_s"], "%.0f"),
            pm(S[c SUBSEP "eval_s"], Q[c SUBSEP "eval_s"], N[c SUBSEP "eval_s"], "%.0f")
    }
    print ""
    print "### Ranking: what each learned uncertainty adds over the best free baseline (R@1 AUROC)"
    print ""
    if (nd == 0) { print "No run has a learned uncertainty (or none finished)."; exit }
    for (i = 1; i <= nd; i++) { k = dl[i]; mean[i] = S[k SUBSEP "d"] / N[k SUBSEP "d"]; idx[i] = i }
    for (i = 2; i <= nd; i++) for (j = i; j > 1 && mean[idx[j]] > mean[idx[j - 1]]; j--) { t = idx[j]; idx[j] = idx[j - 1]; idx[j - 1] = t }
    print "| rank | method | source | learned R@1 AUROC | learned - best free | seeds: better / undecided / worse | best free baseline (seeds) |"
    print "|---|---|---|---|---|---|---|"
    for (i = 1; i <= nd; i++) {
        k = dl[idx[i]]; split(k, cs, SUBSEP); c = cs[1]; s = cs[2]
        b = u = w = 0
        nr = split(substr(runs[c, s], 2), rr, " ")
        for (j = 1; j <= nr; j++) {
            l = lo[c, s, rr[j]] + 0; h = hi[c, s, rr[j]] + 0
            if (l > 0) b++; else if (h < 0) w++; else u++
        }
        delete bc; names = ""
        nb = split(substr(base[c, s], 2), bs, ",")
        for (j = 1; j <= nb; j++) { if (!(bs[j] in bc)) names = names (names == "" ? "" : ", ") bs[j]; bc[bs[j]]++ }
        nn = split(names, bl, ", "); names = ""
        for (j = 1; j <= nn; j++) names = names (j > 1 ? ", " : "") bl[j] " (" bc[bl[j]] ")"
        printf "| %d | %s | %s | %s | %s | %d / %d / %d | %s |\n", i, c, s,
            pm(S[k SUBSEP "u"], Q[k SUBSEP "u"], N[k SUBSEP "u"], "%.3f"), pm(S[k SUBSEP "d"], Q[k SUBSEP "d"], N[k SUBSEP "d"], "%+.3f"),
            b, u, w, names
    }
    for (i = 1; i <= nc; i++) {
        c = order[i]; has = 0
        for (j = 1; j <= nd; j++) { split(dl[j], cs, SUBSEP); if (cs[1] == c) has = 1 }
        if (!has) none = none (none == "" ? "" : ", ") c
    }
    if (none != "") { print ""; print "No learned uncertainty of their own (the free baselines alone): " none "." }
}
