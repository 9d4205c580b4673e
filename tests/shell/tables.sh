#!/bin/sh
# pipelines/tables.sh lays out runs' results.tsv beside the paper's numbers
# (pipelines/paper/hib.tsv): the columns each table takes and their order, rounding to three
# places, "–" for a number a run does not have (tau of a point model), the paper's values, and
# appendix B's rows (soft contrastive first, then the hard margins), on made-up runs; a table
# takes the runs its experiment configured (OUT/configs-TABLE.txt, as hib.sh writes it), never
# another experiment's runs in the same OUT.
set -u
. "$(dirname "$0")/../lib.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)
tables() { sh "$root/pipelines/tables.sh" "$@"; }
O=$T/out
r() { mkdir -p "$O/runs/$1"; printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" >> "$O/runs/$1/results.tsv"; }

tables table1 "$T/none" > "$T/t0" || fail "tables.sh on a folder without runs"
grep -qx "(no results yet in this output folder)" "$T/t0" || fail "no runs: $(cat "$T/t0")"

# made up: three Table 1 runs (written out of order), a beta = 0 run, two hard-margin runs
r N3-D2-mog1-b1e-4 clean ap 0.5
r N3-D2-mog1-b1e-4 clean tau_ap 0.25
r N2-D2-mog1-b1e-4 clean ap 0.98949
r N2-D2-mog1-b1e-4 corrupt knn 0.7
r N2-D2-mog1-b1e-4 clean tau_ap 0.1234
r N2-D2-mog1-b1e-4 corrupt tau_knn -0.4716
r N2-D2-point-b1e-4 clean ap 0.98761
r N2-D2-point-b1e-4 corrupt ap 0.75
r N2-D2-point-b1e-4 clean knn 0.9
r N2-D2-point-b1e-4 corrupt knn 0.25
r N2-D2-mog1-b0 clean ap 0.9
r N2-D2-hardM8-b1e-4 clean ap 0.8
r N2-D2-hardM0.5-b1e-4 corrupt knn 0.1
r N2-D1-point-b1e-4 clean ap 0.6   # appendix D's, in no table below
# the configurations, as hib.sh writes them (NAME N D MODEL BETA LOSS MARGIN); runs without
# results (not finished) are left out of the tables
for N in 2 3; do for D in 2 3; do for m in point mog1 mog2; do
    echo "N$N-D$D-$m-b1e-4 $N $D $m 1e-4 - 1"; done; done; done > "$O/configs-table1.txt"
for nd in "2 2" "3 3"; do set -- $nd
    for b in 0 1e-4; do echo "N$1-D$2-mog1-b$b $1 $2 mog1 $b - 1"; done; done > "$O/configs-table5.txt"
{ echo "N2-D2-point-b1e-4 2 2 point 1e-4 - 1"
    for M in 0.5 1 2 4 8; do echo "N2-D2-hardM$M-b1e-4 2 2 point 1e-4 contrastive $M"; done; } > "$O/configs-appb.txt"
for m in point mog1 mog2; do echo "N2-D2-$m-b1e-4 2 2 $m 1e-4 - 1"; done > "$O/configs-demo.txt"
tables table4 "$O" > "$T/t4" || fail "table4 without its configuration"
grep -qx "(no results yet in this output folder)" "$T/t4" || fail "table4 without runs: $(cat "$T/t4")"

tables table1 "$O" > "$T/t1" || fail "table1"
cat > "$T/want1" <<'EOF'
| measured / paper | N=2 D=2 point | N=2 D=2 MoG-1 | N=3 D=2 MoG-1 |
|---|---|---|---|
| verification AP, clean | 0.988 / 0.987 | 0.989 / 0.989 | 0.500 / 0.981 |
| verification AP, corrupt | 0.750 / 0.880 | – / 0.907 | – / 0.899 |
| KNN accuracy, clean | 0.900 / 0.871 | – / 0.879 | – / 0.591 |
| KNN accuracy, corrupt | 0.250 / 0.583 | 0.700 / 0.760 | – / 0.350 |
EOF
diff "$T/want1" "$T/t1" > "$T/d" || fail "table1 differs: $(cat "$T/d")"

# Table 2: no point column; the paper's tau of MoG-1 at N = 2, D = 2
tables table2 "$O" > "$T/t2" || fail "table2"
head -n 1 "$T/t2" | grep -qx "| measured / paper | N=2 D=2 MoG-1 | N=3 D=2 MoG-1 |" ||
    fail "table2 columns: $(head -n 1 "$T/t2")"
grep -qx "| τ (AP, η), clean | 0.123 / 0.740 | 0.250 / 0.630 |" "$T/t2" || fail "table2 tau row: $(cat "$T/t2")"
grep -qx "| τ (KNN, η), corrupt | -0.472 / 0.470 | – / 0.490 |" "$T/t2" || fail "table2 negative tau: $(cat "$T/t2")"

# demo: N = 2, D = 2; a point model's tau is "– / –"
tables demo "$O" > "$T/td" || fail "demo"
grep -q "^| τ (AP, η), clean | – / – | 0.123 / 0.740 |" "$T/td" || fail "demo tau of point: $(cat "$T/td")"
head -n 1 "$T/td" | grep -qx "| measured / paper | N=2 D=2 point | N=2 D=2 MoG-1 |" || fail "demo columns: $(head -n 1 "$T/td")"

# the one-sided corrupt protocols (issue 20 item 3): rows only when a run has them, after the
# corrupt row, labelled by their sides, the paper "–" there, and the note saying what each is
grep -q "clean queries\|clean-corrupt" "$T/td" && fail "demo without cross conditions has their rows: $(cat "$T/td")"
r N2-D2-mog1-b1e-4 clean-corrupt knn 0.76
r N2-D2-mog1-b1e-4 corrupt-clean ap 0.95
tables demo "$O" > "$T/tx" || fail "demo with cross conditions"
grep -A1 -x "| KNN accuracy, corrupt | 0.250 / 0.583 | 0.700 / 0.760 |" "$T/tx" | tail -n 1 |
    grep -qx "| KNN accuracy, clean queries, corrupt gallery | – / – | 0.760 / – |" || fail "cross KNN row: $(cat "$T/tx")"
grep -qx "| verification AP, corrupt-clean pairs | – / – | 0.950 / – |" "$T/tx" || fail "cross AP row: $(cat "$T/tx")"
grep -q "clean-corrupt pairs |" "$T/tx" && fail "a cross row no run has: $(cat "$T/tx")"
grep -q "^Corrupt rows: .*clean queries, corrupt gallery" "$T/tx" || fail "no note on the protocols: $(cat "$T/tx")"

# Table 5: MoG-1 at N = D = 2 and 3 only, beta 0 before 1e-4, beta in the header, the paper's
# Table 5 values
tables table5 "$O" > "$T/t5" || fail "table5"
head -n 1 "$T/t5" | grep -qx "| measured / paper | N=2 D=2 MoG-1 β=0 | N=2 D=2 MoG-1 β=1e-4 |" ||
    fail "table5 columns: $(head -n 1 "$T/t5")"
grep -qx "| verification AP, clean | 0.900 / 0.986 | 0.989 / 0.988 |" "$T/t5" || fail "table5 AP: $(cat "$T/t5")"

# appendix B: soft contrastive (the point run) first, then the margins; no other run
tables appb "$O" > "$T/tb" || fail "appb"
cat > "$T/wantb" <<'EOF'
| run | AP clean | AP corrupt | KNN clean | KNN corrupt | τ(AP) corrupt | τ(KNN) corrupt |
|---|---|---|---|---|---|---|
| N2-D2-point-b1e-4 | 0.988 | 0.750 | 0.900 | 0.250 | – | – |
| N2-D2-hardM0.5-b1e-4 | – | – | – | 0.100 | – | – |
| N2-D2-hardM8-b1e-4 | 0.800 | – | – | – | – | – |
EOF
diff "$T/wantb" "$T/tb" > "$T/d" || fail "appb differs: $(cat "$T/d")"
# runs: every run, one row each
tables runs "$O" > "$T/tr" || fail "runs"
[ "$(grep -c '^| N' "$T/tr")" = 7 ] || fail "runs: $(cat "$T/tr")"

# the papers' numbers live in pipelines/paper/*.tsv only, each file with the one header and six
# columns a line; the table program and its scripts hold none (a number of three places, or a
# percentage of one, that is no format)
hdr=$(printf 'table\trow\tcondition\tmetric\tvalue\tsource')
np=0
for f in "$root"/pipelines/paper/*.tsv; do
    np=$((np + 1))
    [ "$(grep -v '^#' "$f" | head -n 1)" = "$hdr" ] || fail "$f: not the header of pipelines/paper/README.md"
    awk -F'\t' '!/^#/ && NF != 6 { exit 1 }' "$f" || fail "$f: a line without six columns"
    [ "$(grep -vc '^#' "$f")" -gt 1 ] || fail "$f: no numbers"
done
[ "$np" -ge 5 ] || fail "only $np files in pipelines/paper/"
lit=$(grep -nE '(^|[^0-9.%])(0\.[0-9]{3}|[1-9][0-9]\.[0-9])([^0-9]|$)' "$root"/pipelines/tables.awk "$root"/pipelines/*tables.sh |
    grep -v '10,000' || true)
[ -z "$lit" ] || fail "a paper's number outside pipelines/paper/: $lit"
pass
