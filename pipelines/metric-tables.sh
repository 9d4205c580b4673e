#!/bin/sh
# metric-tables.sh PAPER OUT CONFIGS STEPS RECIPE: the table of pipelines/hetriplet.sh or
# fstat.sh (markdown on stdout) from the results.tsv of the runs named in CONFIGS, with the
# paper's numbers on their own data sets (pipelines/paper/PAPER.tsv) as reference rows, in the same
# columns (pipelines/tables.awk lays it out). "–": no run or no such number (a model without an
# uncertainty has no cleaning by uncertainty and no correlation); a reference row leaves the cells
# it has no number for empty.
set -eu
. "$(dirname "$0")/common.sh"
paper=$1 out=$2 configs=$3 steps=$4 recipe=$5
pf=$(paper_file "$paper") || exit 1
need_programs seedstat || exit 1
{ results_and_configs "$out" "$configs"; paper_numbers "$pf" "$paper"; } |
    tables_awk "$paper" -v steps="$steps" -v recipe="$recipe"
