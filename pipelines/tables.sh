#!/bin/sh
# tables.sh TABLE OUT [CONFIGS]: prints a markdown table of the measured numbers of the runs of one
# experiment of hib.sh beside the paper's (pipelines/paper-hib.tsv). TABLE: table1 table2 table4
# table5 demo, appb (appendix B: one row per run) or runs (every run in OUT, one row each).
# The runs are those the experiment configured, CONFIGS or OUT/configs-TABLE.txt (hib.sh writes
# it; Tables 1 and 2 are the same runs), read by results_and_configs as the other pipelines' tables do, so
# experiments sharing one OUT stay out of each other's tables. Run names are
# N<N>-D<D>-<model>-b<beta> (hib-run.sh), NAME.sSEED for another training seed: a cell is the mean
# over the configuration's seeds, "mean ± sd" with two or more (seedstat computes them; awk here
# only lays text out). A number missing from results.tsv (tau of a point model, whose eta is
# constant) is printed as "–".
set -eu
. "$(dirname "$0")/common.sh"
table=$1 out=$2 configs=${3:-}
paper="$HEDGE_ROOT/pipelines/paper-hib.tsv"
[ -r "$paper" ] || { say "tables.sh: cannot read the paper's numbers, $paper (HEDGE_ROOT is $HEDGE_ROOT)"; exit 1; }
need_programs seedstat || exit 1
if [ -z "$configs" ]; then
    configs=$out/configs-$table.txt
    case $table in
    table1) [ -s "$configs" ] || configs=$out/configs-table2.txt ;;
    table2) [ -s "$configs" ] || configs=$out/configs-table1.txt ;;
    esac
fi
# runs: every run's results, then "#configs" and the run names, as results_and_configs gives them
all_runs() {
    cat "$out"/runs/*/results.tsv 2>/dev/null || true
    echo "#configs"
    ls "$out/runs" 2>/dev/null
}
if [ "$table" != runs ] && [ ! -s "$configs" ]; then
    echo "(no results yet in this output folder)"
    exit 0
fi
if [ "$table" = runs ] || [ "$table" = appb ]; then
    # one row per run with results, in the order of the configuration (appb: soft contrastive
    # first, then the hard-margin contrastive loss by margin) or of the names (runs)
    echo "| run | AP clean | AP corrupt | KNN clean | KNN corrupt | τ(AP) corrupt | τ(KNN) corrupt |"
    echo "|---|---|---|---|---|---|---|"
    { if [ "$table" = runs ]; then all_runs; else results_and_configs "$out" "$configs"; fi; } | awk -F'\t' '
        $0 == "#configs" { cf = 1; next }
        !cf { has[$1] = 1; v[$1 SUBSEP $2 SUBSEP $3] = sprintf("%.3f", $4) ($6 == "" ? "" : sprintf(" ± %.3f", $6)); next }
        { split($0, c, " "); if ((c[1] in has) && !(c[1] in seen)) { seen[c[1]] = 1; order[++n] = c[1] } }
        function g(r, c, m) { k = r SUBSEP c SUBSEP m; return (k in v) ? v[k] : "–" }
        END { for (i = 1; i <= n; i++) { r = order[i]
            printf "| %s | %s | %s | %s | %s | %s | %s |\n", r, g(r, "clean", "ap"), g(r, "corrupt", "ap"),
                g(r, "clean", "knn"), g(r, "corrupt", "knn"), g(r, "corrupt", "tau_ap"), g(r, "corrupt", "tau_knn") } }'
    exit 0
fi
results_and_configs "$out" "$configs" | awk -F'\t' -v table="$table" -v paperfile="$paper" '
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
$0 == "#configs" { cf = 1 }
cf { next } # the runs are those of the configuration; its lines themselves are not needed
{
    # name: N2-D2-mog1-b1e-4
    split($1, p, "-"); N = substr(p[1], 2); D = substr(p[2], 2); m = p[3]; b = substr($1, index($1, "-b") + 2)
    if (b == "0.0001") b = "1e-4"
    if (table == "table2" && m == "point") next # Table 2 is the tau of the mixtures
    col = N SUBSEP D SUBSEP m SUBSEP b
    if (!(col in seen)) { seen[col] = 1; cols[++ncol] = col }
    val[col SUBSEP $2 SUBSEP $3] = $4; sd[col SUBSEP $2 SUBSEP $3] = $6; hasc[$3 SUBSEP $2] = 1
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
    # the one-sided corrupt protocols (issue 20 item 3) get rows only where some run has them
    ncond = split("clean corrupt clean-corrupt corrupt-clean", conds, " ")
    side["ap", "clean-corrupt"] = "clean-corrupt pairs"; side["ap", "corrupt-clean"] = "corrupt-clean pairs"
    side["knn", "clean-corrupt"] = "clean queries, corrupt gallery"; side["knn", "corrupt-clean"] = "corrupt queries, clean gallery"
    for (k = 1; k <= nm; k++) for (ci = 1; ci <= ncond; ci++) {
        cond = conds[ci]
        if (ci > 2 && !((ms[k] SUBSEP cond) in hasc)) continue
        cl = cond; mk = ms[k]; sub(/^tau_/, "", mk)
        if ((mk SUBSEP cond) in side) cl = side[mk, cond]
        row = "| " name[ms[k]] ", " cl " |"
        for (i = 1; i <= ncol; i++) {
            v = val[cols[i] SUBSEP cond SUBSEP ms[k]]; s = sd[cols[i] SUBSEP cond SUBSEP ms[k]]
            pv = paper[cols[i] SUBSEP cond SUBSEP ms[k]]
            cell = (v == "" ? "–" : v == "null" ? "n/a" : sprintf("%.3f", v) (s == "" ? "" : sprintf(" ± %.3f", s))) " / " (pv == "" ? "–" : sprintf("%.3f", pv))
            row = row " " cell " |"
        }
        print row
    }
    if (("ap" SUBSEP "clean-corrupt") in hasc || ("knn" SUBSEP "clean-corrupt") in hasc) {
        print ""
        print "Corrupt rows: the test twins with every digit occluded. AP over 10,000 random pairs of corrupt images (clean-corrupt pairs: the first image clean, the second corrupt; corrupt-clean the other way); KNN: 5-NN leave-one-out among the corrupt images, or each clean image'"'"'s 5 nearest among the corrupt ones other than its own twin (clean queries, corrupt gallery), or the reverse. The paper'"'"'s corrupt numbers stand beside the corrupt rows; its text does not say which form it used (results/demo/protocols.md compares them)."
    }
}'
