#!/bin/sh
# pfe-tables.sh OUT CONFIGS STEPS HEAD_STEPS DIM RECIPE DATASET: the tables of pipelines/pfe.sh
# (markdown on stdout) from the results.tsv of the runs named in CONFIGS: per split of the test
# classes (seen, unseen) one table of verification AP (clean, corrupt and mixed pairs; by L2,
# cosine, MLS and the model's own match probability) and one of 5-NN accuracy with the variance's
# ranking of the mixed set, a row per model; then the reasons behind every "-". A cell is the
# mean over the seeds that finished, "± sd" with two or more; no run: "–" (pipelines/tables.awk
# lays it out).
set -eu
. "$(dirname "$0")/common.sh"
out=$1 configs=$2 steps=$3 hsteps=$4 dim=$5 recipe=$6 dataset=$7
need_programs seedstat || exit 1
results_and_configs "$out" "$configs" | tables_awk pfe -v steps="$steps" -v hsteps="$hsteps" -v dim="$dim" \
    -v recipe="$recipe" -v dataset="$dataset"
