#!/bin/sh
# spe-tables.sh OUT CONFIGS: the SPE paper's Table 2 (appendix D.2) beside ours, from the
# results.tsv of the runs of CONFIGS (spe-run.sh), per condition (clean/corrupt support x
# clean/corrupt query), model and split, in %. Every model in two readings: few-shot accuracy over
# the random test episodes (nearest prototype; SPE's sampler) and KNN accuracy (k = 5, corrupt
# images on one side only). The paper's own reading comes first with its number: few-shot for PN
# and SPE, KNN for point and HIB (the caption takes them from Oh et al., whose Table 1 they copy:
# docs/spe.md); the other reading has no paper number. A cell is "ours / paper" or "ours", ours
# the mean over the configuration's training seeds ("mean ± sd" with two or more), the paper's from
# pipelines/paper/spe.tsv; "–" where we have no number. Only columns with at least one run are
# printed (pipelines/tables.awk lays it out).
set -eu
. "$(dirname "$0")/common.sh"
out=$1 configs=$2
pf=$(paper_file spe) || exit 1
need_programs seedstat || exit 1
{ results_and_configs "$out" "$configs"; paper_numbers "$pf" table2; } | tables_awk spe
