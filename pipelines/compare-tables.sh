#!/bin/sh
# compare-tables.sh OUT CONFIGS IMAGES RECIPE DATASET: the table of pipelines/compare.sh (markdown
# on stdout) from the results.tsv of the runs named in CONFIGS: one row per (set, method), a
# "best" row per set naming the best method of each column (AURC: the smallest; the others: the
# largest), and the reasons behind every "-". No run: "–" (pipelines/tables.awk lays it out).
set -eu
. "$(dirname "$0")/common.sh"
out=$1 configs=$2 images=$3 recipe=$4 dataset=$5
need_programs seedstat || exit 1
results_and_configs "$out" "$configs" |
    tables_awk compare -v images="$images" -v recipe="$recipe" -v dataset="$dataset" -v body="${BODY_SPEC:-}"
