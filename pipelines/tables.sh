#!/bin/sh
# tables.sh TABLE OUT: prints a markdown table of the measured numbers in OUT/runs/*/results.tsv
# beside the paper's (pipelines/paper-hib.tsv). TABLE: table1 table2 table4 table5 demo, appb
# (appendix B) or runs (every run, one row each).
# Run names are N<N>-D<D>-<model>-b<beta> (hib-run.sh). awk here only lays text out. A number
# missing from results.tsv (tau of a point model, whose eta is constant) is printed as "–".
set -eu
. "$(dirname "$0")/common.sh"
table=$1 out=$2
paper="$HEDGE_ROOT/pipelines/paper-hib.tsv"
if [ "$table" = runs ] || [ "$table" = appb ]; then
    # runs: every run, one row each (ad-hoc runs); appb: appendix B, N = 2, D = 2 point
    # embeddings, soft contrastive (N2-D2-point-b1e-4) first, then the hard-margin contrastive
    # loss by margin (N2-D2-hardM<M>-b1e-4)
    echo "| run | AP clean | AP corrupt | KNN clean | KNN corrupt | τ(AP) corrupt | τ(KNN) corrupt |"
    echo "|---|---|---|---|---|---|---|"
    cat "$out"/runs/*/results.tsv 2>/dev/null | awk -F'\t' -v table="$table" '
        table == "appb" && $1 != "N2-D2-point-b1e-4" && $1 !~ /^N2-D2-hardM[0-9.]+-b1e-4$/ { next }
        table == "appb" && $1 == "N2-D2-point-b1e-4" && !($1 in seen) { seen[$1] = 1; order[0] = $1 }
        !($1 in seen) { seen[$1] = 1; order[++n] = $1 }
        { v[$1 SUBSEP $2 SUBSEP $3] = sprintf("%.3f", $4) }
        function g(r, c, m) { k = r SUBSEP c SUBSEP m; return (k in v) ? v[k] : "–" }
        END { for (i = (0 in order) ? 0 : 1; i <= n; i++) { r = order[i]
            printf "| %s | %s | %s | %s | %s | %s | %s |\n", r, g(r, "clean", "ap"), g(r, "corrupt", "ap"),
                g(r, "clean", "knn"), g(r, "corrupt", "knn"), g(r, "corrupt", "tau_ap"), g(r, "corrupt", "tau_knn") } }'
    exit 0
fi
cat "$out"/runs/*/results.tsv 2>/dev/null | awk -F'\t' -v table="$table" -v paperfile="$paper" '
function label(m) { return m == "point" ? "point" : m == "mog1" ? "MoG-1" : m == "mog2" ? "MoG-2" : m == "mog4" ? "MoG-4" : m }
BEGIN {
    ptab = table == "demo" ? "table1" : table
    while ((getline line < paperfile) > 0) {
        if (line ~ /^#/ || line ~ /^table\t/) continue
        split(line, f, "\t")
        b = (f[5] == "0") ? "0" : "1e-4"
        key = f[2] SUBSEP f[3] SUBSEP f[4] SUBSEP b SUBSEP f[6] SUBSEP f[7]
        if (f[1] == ptab || (ptab == "table1" && f[1] == "table2")) paper[key] = f[8]
    }
    if (table == "table1") metrics = "ap knn"
    else if (table == "table2") metrics = "tau_ap tau_knn"
    else metrics = "ap knn tau_ap tau_knn"
}
{
    # name: N2-D2-mog1-b1e-4
    split($1, p, "-"); N = substr(p[1], 2); D = substr(p[2], 2); m = p[3]; b = substr($1, index($1, "-b") + 2)
    if (b == "0.0001") b = "1e-4"
    if (m != "point" && m !~ /^mog[0-9]+$/) next # the hard-margin runs of appendix B share OUT
    if (table == "table1" || table == "table2" || table == "demo") { if (b != "1e-4") next }
    if (table == "table4" && !(N == 3 && D == 4)) next
    if (table == "table5" && (m != "mog1" || !(N == D && (N == 2 || N == 3)))) next # its two settings
    if (table == "table2" && m == "point") next
    col = N SUBSEP D SUBSEP m SUBSEP b
    if (!(col in seen)) { seen[col] = 1; cols[++ncol] = col }
    val[col SUBSEP $2 SUBSEP $3] = $4
}
END {
    if (ncol == 0) { print "(no results yet in this output folder)"; exit }
    # sort columns: N, D, beta, model (insertion sort on a text key)
    for (i = 1; i <= ncol; i++) { split(cols[i], c, SUBSEP); sk[i] = c[1] c[2] (c[4] == "0" ? "0" : "1") (c[3] == "point" ? "0" : substr(c[3], 4)) }
    for (i = 2; i <= ncol; i++) for (j = i; j > 1 && sk[j] < sk[j-1]; j--) {
        t = sk[j]; sk[j] = sk[j-1]; sk[j-1] = t; t = cols[j]; cols[j] = cols[j-1]; cols[j-1] = t }
    head = "| measured / paper |"; sep = "|---|"
    for (i = 1; i <= ncol; i++) {
        split(cols[i], c, SUBSEP)
        h = "N=" c[1] " D=" c[2] " " label(c[3]); if (table == "table5") h = h " β=" c[4]
        head = head " " h " |"; sep = sep "---|"
    }
    print head; print sep
    nm = split(metrics, ms, " ")
    name["ap"] = "verification AP"; name["knn"] = "KNN accuracy"; name["tau_ap"] = "τ (AP, η)"; name["tau_knn"] = "τ (KNN, η)"
    for (k = 1; k <= nm; k++) for (ci = 1; ci <= 2; ci++) {
        cond = ci == 1 ? "clean" : "corrupt"
        row = "| " name[ms[k]] ", " cond " |"
        for (i = 1; i <= ncol; i++) {
            v = val[cols[i] SUBSEP cond SUBSEP ms[k]]
            pv = paper[cols[i] SUBSEP cond SUBSEP ms[k]]
            cell = (v == "" ? "–" : v == "null" ? "n/a" : sprintf("%.3f", v)) " / " (pv == "" ? "–" : sprintf("%.3f", pv))
            row = row " " cell " |"
        }
        print row
    }
}'
