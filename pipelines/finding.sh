#!/bin/sh
# finding.sh [--summary] [LABEL=]OUT...: does a learned uncertainty know more than the free signals?
# Reads the runs of pipelines/compare.sh and pfe.sh (any pipeline whose runs' results.tsv carry
# common.sh's uncertainty_lines, u:SOURCE:TARGET:MEASURE and d:SOURCE:TARGET:MEASURE with :lo and
# :hi) in each OUT/runs/*/results.tsv, or an OUT that is the grid's results file (OUT/results-*.tsv,
# results/finding/*.tsv), and prints (markdown) for each data set (LABEL, else
# OUT's name), test set, method, learned source and (loss, measure): the learned source's number
# and the best free baseline's (mean ± sd over the training seeds), their difference (learned
# minus best free, mean ± sd), and in how many seeds the paired 95 % bootstrap interval of that
# difference says better, undecided (the interval holds 0) or worse. Better is a larger AUROC
# and a smaller AURC or AUGRC. The best free baseline is chosen per run (evaluate's verdict: the
# best of top1_dist, ratio, vote_entropy and norm on that number), so the column names each
# with the seeds it was best in. --summary: one row per data set, method and source instead,
# counting the (set, loss) cells by their seeds' verdicts.
set -eu
case ${1:-} in -h | --help) sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p;}' "$0"; exit 0 ;; esac
summary=0
[ "${1:-}" = --summary ] && { summary=1; shift; }
[ $# -ge 1 ] || { echo "usage: finding.sh [--summary] [LABEL=]OUT..." >&2; exit 2; }
for a in "$@"; do # each OUT checked before any line is printed
    dir=${a#*=}
    if [ -f "$dir" ]; then
        head -n 1 "$dir" | grep -q "^run	config	seed	set	metric	value	note" ||
            { echo "finding.sh: $dir: not a results file (its header: $(head -n 1 "$dir" | head -c 80))" >&2; exit 1; }
    elif [ ! -d "$dir/runs" ]; then
        echo "finding.sh: $dir: no runs folder (an OUT of pipelines/compare.sh?) and no results file" >&2; exit 1
    fi
done
for a in "$@"; do
    label=${a%%=*} dir=${a#*=}
    [ "$label" = "$a" ] && label=$(basename "$a")
    if [ -f "$dir" ]; then # a results file of the pipeline (write_results: run config seed set metric value note)
        awk -F'\t' -v OFS='\t' -v l="$label" 'NR > 1 { print l, $1, $4, $5, $6, $7 }' "$dir"
        continue
    fi
    for f in "$dir"/runs/*/results.tsv; do
        [ -s "$f" ] && awk -F'\t' -v OFS='\t' -v l="$label" '{ print l, $0 }' "$f"
    done
done | awk -F'\t' -v summary="$summary" '
function cfg(r) { sub(/\.s[0-9]+$/, "", r); return r }
function mean(s, n) { return s / n }
function sdv(s, q, n,   v) { v = n > 1 ? (q - s * s / n) / (n - 1) : 0; return v > 0 ? sqrt(v) : 0 } # (rounding can make v a hair below 0)
function pm(s, q, n, f,   g) { g = f; sub(/\+/, "", g); return sprintf(f, s / n) (n > 1 ? sprintf(" ± " g, sdv(s, q, n)) : "") }
{
    lab = $1; run = $2; set = $3; metric = $4; val = $5; note = $6
    c = cfg(run)
    if (metric ~ /^d:/) {
        n = split(metric, p, ":")
        key = p[2] ":" p[3] ":" p[4]
        k = lab SUBSEP set SUBSEP c SUBSEP key SUBSEP run
        if (n == 4) { d[k] = val; base[k] = note }
        else if (p[5] == "lo") lo[k] = val
        else if (p[5] == "hi") hi[k] = val
        if (!((lab, set, c, key) in row)) { row[lab, set, c, key] = 1; rows[++nrows] = lab SUBSEP set SUBSEP c SUBSEP key }
        if (!((lab, set, c, key, run) in had)) { had[lab, set, c, key, run] = 1; runs[lab, set, c, key] = runs[lab, set, c, key] " " run }
    } else if (metric ~ /^u:/) {
        split(metric, p, ":")
        u[lab, set, c, p[2] ":" p[3] ":" p[4], run] = val
    }
}
END {
    sets = "seen-clean seen-corrupt unseen-clean unseen-corrupt"
    if (!summary) {
        print "| data | set | method | source | loss, measure | learned | best free baseline | learned - best free | seeds: better / undecided / worse |"
        print "|---|---|---|---|---|---|---|---|---|"
    }
    for (i = 1; i <= nrows; i++) {
        split(rows[i], r, SUBSEP)
        lab = r[1]; set = r[2]; c = r[3]; key = r[4]
        split(key, p, ":")
        src = p[1]; tgt = p[2]; ms = p[3]
        low = ms != "auroc"
        nr = split(substr(runs[lab, set, c, key], 2), rr, " ")
        n = 0; su = qu = sb = qb = sd_ = qd = 0; better = und = worse = 0; delete bn; names = ""
        for (j = 1; j <= nr; j++) {
            k = lab SUBSEP set SUBSEP c SUBSEP key SUBSEP rr[j]
            if (!(k in d) || !(k in lo) || !(k in hi)) continue
            uv = u[lab, set, c, key, rr[j]] + 0; dv = d[k] + 0; bv = uv - dv
            n++; su += uv; qu += uv * uv; sb += bv; qb += bv * bv; sd_ += dv; qd += dv * dv
            if (low ? hi[k] + 0 < 0 : lo[k] + 0 > 0) better++
            else if (low ? lo[k] + 0 > 0 : hi[k] + 0 < 0) worse++
            else und++
            if (!(base[k] in bn)) names = names (names == "" ? "" : ", ") base[k]
            bn[base[k]]++
        }
        if (n == 0) continue
        if (summary) {
            sk = lab SUBSEP c SUBSEP src
            if (!(sk in cells)) order[++no] = sk
            cells[sk]++
            if (better == n) allb[sk]++
            else if (worse == n) allw[sk]++
            else mixed[sk]++
            if (better == n) bl[sk] = bl[sk] (bl[sk] == "" ? "" : ", ") set " " tgt " " ms
            continue
        }
        nm = ""
        split(names, bs, ", ")
        for (b = 1; b in bs; b++) nm = nm (nm == "" ? "" : ", ") bs[b] (n > 1 ? " (" bn[bs[b]] ")" : "")
        printf "| %s | %s | %s | %s | %s %s | %s | %s %s | %s | %d / %d / %d |\n", lab, set, c, src, tgt, toupper(ms),
            pm(su, qu, n, "%.3f"), pm(sb, qb, n, "%.3f"), nm, pm(sd_, qd, n, "%+.3f"), better, und, worse
    }
    if (summary) {
        print "| data | method | source | (set, loss) cells | better in every seed | worse in every seed | neither | where better |"
        print "|---|---|---|---|---|---|---|---|"
        for (i = 1; i <= no; i++) {
            split(order[i], r, SUBSEP)
            printf "| %s | %s | %s | %d | %d | %d | %d | %s |\n", r[1], r[2], r[3], cells[order[i]], allb[order[i]] + 0,
                allw[order[i]] + 0, mixed[order[i]] + 0, bl[order[i]] == "" ? "-" : bl[order[i]]
        }
    }
}'
