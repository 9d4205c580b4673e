#!/bin/sh
# tables.sh TABLE OUT [CONFIGS]: prints a markdown table of the measured numbers of the runs of one
# experiment of hib.sh beside the paper's (pipelines/paper/hib.tsv). TABLE: table1 table2 table4
# table5 demo, appb (appendix B: one row per run) or runs (every run in OUT, one row each).
# The runs are those the experiment configured, CONFIGS or OUT/configs-TABLE.txt (hib.sh writes
# it; Tables 1 and 2 are the same runs), read by results_and_configs as the other pipelines' tables do, so
# experiments sharing one OUT stay out of each other's tables. Run names are
# N<N>-D<D>-<model>-b<beta> (hib-run.sh), NAME.sSEED for another training seed: a cell is the mean
# over the configuration's seeds, "mean ± sd" with two or more (seedstat computes them; awk here
# only lays text out). A number missing from results.tsv (tau of a point model, whose eta is
# constant) is printed as "–". pipelines/tables.awk lays the tables out.
set -eu
. "$(dirname "$0")/common.sh"
table=$1 out=$2 configs=${3:-}
pf=$(paper_file hib) || exit 1
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
case $table in
runs) all_runs | tables_awk hib-runs ;;
appb) results_and_configs "$out" "$configs" | tables_awk hib-appb ;;
*)  # the paper's numbers of the table (Table 1's runs are Table 2's too, and the demo is Table 1)
    ptab=$table
    [ "$table" = demo ] && ptab=table1
    {
        results_and_configs "$out" "$configs"
        paper_numbers "$pf" "$ptab"
        [ "$ptab" != table1 ] || paper_numbers "$pf" table2
    } | tables_awk "$table" ;;
esac
