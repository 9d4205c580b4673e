#!/bin/sh
# evaluate.sh [-g GALLERY] [--exclude-id] [--corrupt FILE] [--match-a A --match-b B]
#             [--distance euclidean|cosine] [-k K1,K2,...] [-n PAIRS] [-S SEED] [-t THREADS]
#             [--shards N [-j JOBS] [--sshlogin S]... [--sshloginfile F] [--transfer] [--retries R]]
#             [--text] [--json FILE] [-o DIR] INPUT
# The whole evaluation battery of one set of embeddings, as one table on stdout (markdown; --text
# aligned columns) and, with --json, one JSON object in FILE. INPUT, GALLERY and FILE are hedge
# `embeddings` streams or numpy archives (.npz/.npy, read by fromnpz: mu [n, D] or [n, C, D],
# optional var, eta, class or labels).
#   ap                 verification AP over PAIRS sampled pairs of INPUT (pairscore | apcurve):
#                      p(match) of the embeddings' meta match_a, match_b when they have them;
#                      otherwise pairs ranked by the distance of their means (AP needs only the
#                      ranking; pairscore with a = 1, b = 0: float32 scores, so pairs beyond a
#                      distance of about 87 tie, with a note) and no ECE
#   ece                apcurve --ece 15 of that match probability (only with match_a/match_b)
#   knn                knn -k 5 accuracy (leave-one-out, or the queries INPUT against GALLERY)
#   R@k, p1, rprec, map_r, map, mrr   retrieve (-k, default 1,2,4,8); mrr: the mean of 1 / the
#                      rank of the first positive over the whole ranking
#   p1, rprec, map_r, mrr (class avg)   the same averaged within each query class, then over
#                      the classes (pytorch-metric-learning's avg_of_avgs; JSON: p1_avg_of_avgs, ...)
#   nmi, ami           cluster (k-means, k = the number of classes) of INPUT
#   tau, auroc, aurc, eaurc      with an uncertainty (eta, else var): ktau -b 20
#                      -m accuracy:correct on knn's output; the error-versus-reject curve in
#                      DIR/reject-SET.tsv (with -o)
# A number that cannot be had is "-" with its reason under the table.
#   -g GALLERY      search GALLERY instead of INPUT itself (knn, retrieve; --exclude-id: never
#                   the gallery item with the query's id, for twin sets)
#   --corrupt FILE  a second set (e.g. the corrupted twins of INPUT) evaluated the same way: a
#                   second column
#   --match-a A --match-b B   the match probability's a > 0 and b for .npz input (fromnpz)
#   --distance cosine  knn and retrieve rank by the cosine similarity of the means (normalised
#                   first, as pytorch-metric-learning; default euclidean); ap and nmi/ami stay
#                   Euclidean (a note says so)
#   -n PAIRS        sampled pairs (default 10000); -S SEED (default 714)
#   -t THREADS      threads of knn, retrieve and cluster (default: THREADS, else 1)
#   -o DIR          keep every intermediate file in DIR (default: a temporary folder, removed)
#   --shards N      knn and retrieve (the n x gallery part) in N query ranges (--queries FROM:TO,
#                   multiples of 32 records) run by GNU parallel, JOBS at a time on each machine
#                   (-j, default 2), each with -t THREADS; their outputs merged exactly (knn
#                   --merge, retrieve --summary): the same numbers as without --shards. pairscore,
#                   cluster and ktau run here. With --sshlogin / --sshloginfile the shards run on
#                   those machines (the pipelines' grid options, docs/grids.md): they see
#                   DIR and the hedge tree at the same paths (give -o DIR on a shared disk),
#                   or, with --transfer, get the programs and the sets copied and send each
#                   shard's output back; --retries R (default 2) tries a
#                   failed shard again, on another machine
# Exit 1 with one line on stderr when an input cannot be read or an evaluator fails.
set -u
. "$(dirname "$0")/common.sh"
me=evaluate
help() { sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; }
usage() { help >&2; exit 2; }
[ "${1:-}" = -h ] || [ "${1:-}" = --help ] && { help; exit 0; }
# die MESSAGE: one line, exit 1; with -o DIR it names the work folder the run leaves (its logs)
die() {
    if [ -n "${keep:-}" ] && [ -n "${W:-}" ]; then say "$me: $* (this run's files: $W)"; else say "$me: $*"; fi
    exit 1
}

gallery="" exclude="" corrupt="" ma="" mb="" ks=1,2,4,8 pairs=10000 seed=714
threads=${THREADS:-1} text=0 json="" keep="" distance=euclidean shards="" gridopts=""
while [ $# -gt 1 ]; do
    case $1 in
    -g) gallery=$2; shift ;;
    --exclude-id) exclude=--exclude-id ;;
    --corrupt) corrupt=$2; shift ;;
    --match-a) ma=$2; shift ;;
    --match-b) mb=$2; shift ;;
    --distance) distance=$2; shift ;;
    --shards) shards=$2; shift ;;
    -j | --sshlogin | --sshloginfile | --retries) gridopts="$gridopts $1 $(grid_quote "$2")"; shift ;;
    --transfer) gridopts="$gridopts --transfer" ;;
    -k) ks=$2; shift ;;
    -n) pairs=$2; shift ;;
    -S) seed=$2; shift ;;
    -t) threads=$2; shift ;;
    --text) text=1 ;;
    --json) json=$2; shift ;;
    -o) keep=$2; shift ;;
    *) usage ;;
    esac
    shift
done
[ $# = 1 ] || usage
case $1 in -*) usage ;; esac
input=$1
case $threads in '' | *[!0-9]* | 0) say "$me: -t: not a number of threads: '$threads'"; usage ;; esac
[ -n "$ma" ] && [ -z "$mb" ] && { say "$me: --match-a needs --match-b"; usage; }
[ -z "$ma" ] && [ -n "$mb" ] && { say "$me: --match-b needs --match-a"; usage; }
[ -n "$exclude" ] && [ -z "$gallery" ] && { say "$me: --exclude-id needs -g GALLERY"; usage; }
case $distance in euclidean | cosine) ;; *) say "$me: --distance: '$distance' is neither euclidean nor cosine"; usage ;; esac
case $shards in '') [ -z "$gridopts" ] || { say "$me: -j, --sshlogin, --transfer, --retries run shards: give --shards N"; usage; } ;;
    *[!0-9]* | 0) say "$me: --shards: not a number of shards: '$shards'"; usage ;; esac

# The work folder $W is private to this run: a temporary folder, or with -o DIR/.evaluate.work,
# whose files replace DIR's only at the end, once every number is had (the same disk: a rename
# moves a file in whole; the shards' machines see it at the same path). DIR is locked for the whole
# run (flock, util-linux): a second run into it is refused at once, rather than after hours of work
# or by mixing its files with the first's. The lock makes the folder's fixed name safe, and the
# kept files name it in their lineage, so the same run gives the same bytes. A run that fails or is
# stopped leaves DIR's files as they were, and its own in DIR/.evaluate.work until the next run.
W=""
finished=0
if [ -n "$keep" ]; then
    mkdir -p "$keep" || die "cannot make $keep"
    command -v flock > /dev/null 2>&1 || die "-o DIR needs flock (util-linux) to keep other runs out of DIR"
    exec 9>> "$keep/.evaluate.lock" || die "cannot write in $keep"
    flock -n 9 || die "$keep is in use by another evaluate.sh (-o DIR): wait for it, or give another DIR"
    W=$keep/.evaluate.work
    rm -rf "$W" && mkdir "$W" || die "cannot make a work folder in $keep"
    trap '[ "$finished" = 1 ] && rm -rf "$W"' EXIT
else
    W=$(mktemp -d "${TMPDIR:-/tmp}/evaluate.XXXXXX") || die "cannot make a temporary folder"
    trap 'rm -rf "$W"' EXIT
fi
trap 'exit 1' INT TERM
if [ -n "$shards" ]; then
    # the grid options as the pipelines take them (common.sh): jobs, remote, transfer, and out,
    # the whole path of $W (the shards' commands name their files by it)
    ev_threads=$threads ev_out=$(cd "$W" && pwd) || die "cannot enter $W"
    eval "grid_options 1 1 $gridopts \"\$ev_out\""
    threads=$ev_threads
fi

# run NAME WHAT cmd...: runs cmd with its stderr in $W/NAME.log; on failure, one line naming
# the evaluator and WHAT with the program's own last message
run() {
    r_name=$1 r_what=$2
    shift 2
    "$@" 2> "$W/$r_name.log" && return 0
    r_msg=$(grep "^$1: " "$W/$r_name.log" | tail -n 1)
    [ -n "$r_msg" ] || r_msg=$(grep -v '^ ' "$W/$r_name.log" | tail -n 1)
    die "$1 failed on $r_what: ${r_msg:-exit status $?}"
}

# stream SET FILE: $W/SET.hs, FILE as an embeddings stream (an .npz/.npy through fromnpz)
stream() {
    [ -e "$2" ] || die "$2: no such file"
    case $2 in
    *.npz | *.npy)
        if [ -n "$ma" ]; then
            run "fromnpz-$1" "$2" fromnpz --match-a "$ma" --match-b "$mb" "$2" > "$W/$1.hs"
        else
            run "fromnpz-$1" "$2" fromnpz "$2" > "$W/$1.hs"
        fi ;;
    *)
        run "tshow-$1" "$2" tshow -H "$2" > "$W/$1.head"
        grep -q '^{"format": "hedge-stream", "version": [0-9]*, "kind": "\(embeddings\|eta\)"' "$W/$1.head" ||
            die "$2: not an embeddings stream or .npz (found a stream of $(sed -n 's/^{[^}]*"kind": *\("[^"]*"\).*/kind \1/p' "$W/$1.head" | head -n 1))"
        if [ -n "$ma" ]; then
            tonpz "$2" 2> "$W/tonpz-$1.log" | fromnpz --match-a "$ma" --match-b "$mb" - > "$W/$1.hs" 2> "$W/fromnpz-$1.log" ||
                die "fromnpz failed on $2: $(tail -n 1 "$W/fromnpz-$1.log")"
        else
            ln -sf "$(cd "$(dirname "$2")" && pwd)/$(basename "$2")" "$W/$1.hs"
        fi ;;
    esac
    run "tshow-$1" "$2" tshow -H "$W/$1.hs" > "$W/$1.head"
    header "$1" '"name": "class"' ||
        die "$2: no class labels (a stream needs a 'class' field; an .npz an array class, labels or label)"
    eval "file_$1=\$2"
}

# header SET PATTERN: true when the stream's header (its own part, not the lineage) matches
header() { sed 's/"provenance".*//' "$W/$1.head" | grep -q "$2"; }

# json_array KEY < json-line: the [...] value of a field (text extraction only)
json_array() { sed -n "s/.*\"$1\": *\(\[[^]]*\]\).*/\1/p" | head -n 1; }
# json_str KEY < json-line: a string field's value
json_str() { sed -n "s/.*\"$1\": *\"\([^\"]*\)\".*/\1/p" | head -n 1; }

notes=""
note() { case "$notes" in *"- $1"*) ;; *) notes="$notes- $1
" ;; esac; }

# shard_runs SET: knn and retrieve of $W/SET.hs in $shards query ranges (pipelines/evaluate-shard.sh
# through grid_parallel, here or on the --sshlogin machines), merged into $W/knn-SET.hs and
# $W/retrieve-SET.json exactly as one run would write them
shard_runs() {
    sr_n=$(tshow -q "$W/$1.hs" 2> /dev/null | json_get records)
    case $sr_n in '' | *[!0-9]*) die "cannot count the records of $f" ;; esac
    sr_size=$(( (sr_n + shards - 1) / shards ))
    sr_size=$(( (sr_size + 31) / 32 * 32 )) # whole blocks of retrieve's 32 queries
    mkdir -p "$W/data" "$W/runs" || die "cannot make $W/data"
    # the sets where the shards read them: copies to send (--transfer), else links
    for sr_set in "$1" ${gallery:+gallery}; do
        rm -f "$W/data/$sr_set.hs"
        if [ "$transfer" = 1 ]; then
            cp -L "$W/$sr_set.hs" "$W/data/$sr_set.hs" || die "cannot copy $W/$sr_set.hs"
        else
            # relative: $W's files move into DIR at the end (-o)
            ln -s "../$sr_set.hs" "$W/data/$sr_set.hs" || die "cannot link $W/$sr_set.hs"
        fi
    done
    sr_conf=$W/shards-$1.txt sr_i=0 sr_from=0
    : > "$sr_conf"
    while [ "$sr_from" -lt "$sr_n" ]; do
        sr_to=$((sr_from + sr_size))
        [ "$sr_to" -gt "$sr_n" ] && sr_to=$sr_n
        sr_name=$(printf '%s-%04d' "$1" "$sr_i")
        rm -rf "$W/runs/$sr_name"
        mkdir -p "$W/runs/$sr_name"
        echo "$sr_name $sr_from:$sr_to" >> "$sr_conf"
        sr_i=$((sr_i + 1)) sr_from=$sr_to
    done
    rm -f "$W/joblog-$1"
    sr_gal=""
    [ -n "$gallery" ] && sr_gal="$out/data/gallery.hs $exclude"
    grid_parallel "$W/joblog-$1" "$sr_conf" \
        "sh $HEDGE_ROOT/pipelines/evaluate-shard.sh $out/runs/{1} {2} $ks $distance $threads $out/data/$1.hs $sr_gal > $out/runs/{1}/run.log 2>&1"
    sr_knn="" sr_ret=""
    while read -r sr_name sr_range; do
        sr_d=$W/runs/$sr_name
        [ -s "$sr_d/knn.hs" ] && [ -s "$sr_d/retrieval.hs" ] ||
            die "shard $sr_name (queries $sr_range of $f) failed: $(tail -n 1 "$sr_d/run.log" 2> /dev/null || echo "no log: see $W/joblog-$1")"
        sr_knn="$sr_knn $sr_d/knn.hs" sr_ret="$sr_ret $sr_d/retrieval.hs"
    done < "$sr_conf"
    run "knn-merge-$1" "$f" knn --merge $sr_knn > "$W/knn-$1.hs"
    run "retrieve-summary-$1" "$f" retrieve --summary $sr_ret > "$W/retrieve-$1.json"
}

# evaluate SET: every evaluator on $W/SET.hs; the numbers in $W/SET.val as `key value` lines
evaluate() {
    s=$1 gargs="--distance $distance"
    eval "f=\$file_$s"
    [ -n "$gallery" ] && gargs="$gargs -g $W/gallery.hs $exclude"
    [ "$distance" = cosine ] &&
        note "distance ($s): knn and retrieval rank by cosine similarity (normalised means); ap, nmi and ami by the Euclidean distance of the means"
    v=$W/$s.val
    : > "$v"
    # verification AP on sampled pairs
    if header "$s" '"match_a"'; then
        run "pairscore-$s" "$f" pairscore -n "$pairs" -S "$seed" "$W/$s.hs" > "$W/pairs-$s.hs"
        run "apcurve-$s" "$f" apcurve --json - --ece 15 -o "$W/pr-$s.tsv" "$W/pairs-$s.hs" > "$W/ap-$s.json"
        echo "ece $(json_get ece < "$W/ap-$s.json")" >> "$v"
    else
        # no match probability: a = 1, b = 0 ranks the pairs by the distance of their means
        tonpz "$W/$s.hs" 2> "$W/tonpz-$s.log" | fromnpz --match-a 1 --match-b 0 - > "$W/$s-rank.hs" 2> "$W/fromnpz-rank-$s.log" ||
            die "fromnpz failed on $f: $(tail -n 1 "$W/fromnpz-rank-$s.log")"
        run "pairscore-$s" "$f" pairscore --means -n "$pairs" -S "$seed" "$W/$s-rank.hs" > "$W/pairs-$s.hs"
        run "apcurve-$s" "$f" apcurve --json - -o "$W/pr-$s.tsv" "$W/pairs-$s.hs" > "$W/ap-$s.json"
        echo "ece -" >> "$v"
        note "ap ($s): the embeddings have no match_a/match_b, so pairs are ranked by the distance of their means; ece: no match probability (give --match-a A --match-b B)"
        # the score sigmoid(-d) is float32: beyond d = 87 or so it is subnormal, then 0 (ties)
        run "tshow-pairs-$s" "$f" tshow -q "$W/pairs-$s.hs" > "$W/pairs-$s.q"
        [ "$(sed -n 's/.*"p": {[^}]*"min": \([^,}]*\).*/\1/p' "$W/pairs-$s.q")" = 0 ] &&
            note "ap ($s): some pairs are so far apart (beyond a distance of about 87) that their score sigmoid(-d) is 0 in float32: they tie, one block for AP (scale the embeddings down, or give --match-a)"
    fi
    echo "ap $(json_get ap < "$W/ap-$s.json")" >> "$v"
    # KNN accuracy and retrieval: $W/knn-$s.hs and $W/retrieve-$s.json, here or in shards
    if [ -n "$shards" ]; then
        shard_runs "$s"
    else
        run "knn-$s" "$f" knn -k 5 $gargs -t "$threads" "$W/$s.hs" > "$W/knn-$s.hs"
        run "retrieve-$s" "$f" retrieve -k "$ks" $gargs -t "$threads" --json "$W/retrieve-$s.json" "$W/$s.hs" > "$W/retrieval-$s.hs"
    fi
    run "knn-summary-$s" "$f" knn --summary "$W/knn-$s.hs" > "$W/knn-$s.json"
    echo "knn $(json_get accuracy < "$W/knn-$s.json")" >> "$v"
    n=$(json_get n < "$W/knn-$s.json")
    echo "recall_at $(json_array recall_at < "$W/retrieve-$s.json")" >> "$v"
    echo "recall $(json_array recall < "$W/retrieve-$s.json")" >> "$v"
    for m in p1 rprec map_r map mrr p1_avg_of_avgs rprec_avg_of_avgs map_r_avg_of_avgs mrr_avg_of_avgs; do
        echo "$m $(json_get $m < "$W/retrieve-$s.json")" >> "$v"
    done
    np=$(json_get no_positive < "$W/retrieve-$s.json")
    [ "$np" = 0 ] || note "retrieval ($s): $np queries without a positive in the gallery are left out of its means"
    # clustering
    run "cluster-$s" "$f" cluster -S "$seed" -t "$threads" --json "$W/cluster-$s.json" "$W/$s.hs" > /dev/null
    for m in nmi ami; do echo "$m $(json_get $m < "$W/cluster-$s.json")" >> "$v"; done
    # uncertainty: knn's output carries eta (the input's eta, else its mean var)
    run "tshow-knn-$s" "$f" tshow -H "$W/knn-$s.hs" > "$W/knn-$s.head"
    if ! sed 's/"provenance".*//' "$W/knn-$s.head" | grep -q '"name": "eta"'; then
        for m in tau auroc aurc eaurc; do echo "$m -" >> "$v"; done
        note "tau, auroc, aurc, eaurc ($s): the embeddings have no uncertainty (no eta, no var)"
        return 0
    fi
    case $n in ? | 1[0-9])
        for m in tau auroc aurc eaurc; do echo "$m -" >> "$v"; done
        note "tau, auroc, aurc, eaurc ($s): $n queries cannot fill 20 bins"
        return 0 ;;
    esac
    run "ktau-$s" "$f" ktau --json - -b 20 -S "$seed" -m accuracy:correct -o "$W/bins-$s.tsv" \
        --reject-tsv "$W/reject-$s.tsv" "$W/knn-$s.hs" > "$W/ktau-$s.json"
    for m in tau auroc aurc eaurc; do
        x=$(json_get $m < "$W/ktau-$s.json")
        if [ "$x" = null ]; then
            echo "$m -" >> "$v"
            if [ $m = tau ]; then
                note "tau ($s): undefined: the uncertainty, or the accuracy of the 20 bins, is the same everywhere"
            else
                note "$m ($s): undefined ($(json_str note < "$W/ktau-$s.json"))"
            fi
        else
            echo "$m $x" >> "$v"
        fi
    done
}

stream input "$input"
[ -n "$gallery" ] && stream gallery "$gallery"
[ -n "$corrupt" ] && stream corrupt "$corrupt"
sets=input
[ -n "$corrupt" ] && sets="input corrupt"
for s in $sets; do evaluate "$s"; done

# val SET KEY: a value of SET
val() { sed -n "s/^$2 //p" "$W/$1.val" | head -n 1; }

# the table: rows `metric<TAB>value...`
{
    printf 'metric'; for s in $sets; do printf '\t%s' "$s"; done; echo
    printf 'ap'; for s in $sets; do printf '\t%s' "$(val $s ap)"; done; echo
    printf 'ece'; for s in $sets; do printf '\t%s' "$(val $s ece)"; done; echo
    printf 'knn (k = 5)'; for s in $sets; do printf '\t%s' "$(val $s knn)"; done; echo
    i=1
    for k in $(val input recall_at | tr -d '[] ' | tr ',' ' '); do
        printf 'R@%s' "$k"
        for s in $sets; do printf '\t%s' "$(val $s recall | tr -d '[] ' | cut -d, -f$i)"; done; echo
        i=$((i + 1))
    done
    for m in p1 rprec map_r map mrr p1_avg_of_avgs rprec_avg_of_avgs map_r_avg_of_avgs mrr_avg_of_avgs nmi ami tau auroc aurc eaurc; do
        case $m in *_avg_of_avgs) printf '%s (class avg)' "${m%_avg_of_avgs}" ;; *) printf '%s' "$m" ;; esac
        for s in $sets; do printf '\t%s' "$(val $s $m)"; done; echo
    done
} > "$W/table.tsv"
{
    if [ "$text" = 1 ]; then
        # aligned columns, two spaces apart, as column -t would (not on every machine: bsdextrautils)
        awk -F'\t' '{ for (i = 1; i <= NF; i++) { c[NR, i] = $i; if (length($i) > w[i]) w[i] = length($i) }
                if (NF > nf) nf = NF }
            END { for (r = 1; r <= NR; r++) { line = ""
                    for (i = 1; i <= nf; i++) line = line (i > 1 ? "  " : "") (i < nf ? sprintf("%-" w[i] "s", c[r, i]) : c[r, i])
                    print line } }' "$W/table.tsv"
    else
        sed -n 1p "$W/table.tsv" | sed 's/\t/ | /g; s/^/| /; s/$/ |/'
        sed -n 1p "$W/table.tsv" | sed 's/[^\t]*/---/g; s/\t/ | /g; s/^/| /; s/$/ |/'
        sed 1d "$W/table.tsv" | sed 's/\t/ | /g; s/^/| /; s/$/ |/'
    fi
    if [ -n "$notes" ]; then
        echo
        printf '%s' "$notes"
    fi
    if [ -n "$keep" ]; then
        for s in $sets; do
            if [ -s "$W/reject-$s.tsv" ]; then echo "- error-versus-reject curve ($s): $keep/reject-$s.tsv"; fi
        done
    fi
} > "$W/table.out" || die "cannot write $W/table.out"

if [ -n "$json" ]; then
    {
        printf '{"program": "evaluate", "distance": "%s"' "$distance"
        for s in $sets; do
            printf ', "%s": {' "$s"
            sep=""
            for m in ap ece knn recall_at recall p1 rprec map_r map mrr p1_avg_of_avgs rprec_avg_of_avgs \
                map_r_avg_of_avgs mrr_avg_of_avgs nmi ami tau auroc aurc eaurc; do
                x=$(val $s $m)
                [ "$x" = - ] && x=null
                printf '%s"%s": %s' "$sep" "$m" "$x"
                sep=", "
            done
            if [ -n "$keep" ] && [ -s "$W/reject-$s.tsv" ]; then
                printf ', "reject_tsv": "%s"' "$keep/reject-$s.tsv"
            fi
            printf '}'
        done
        printf ', "notes": ['
        sep=""
        printf '%s' "$notes" | while IFS= read -r l; do
            printf '%s"%s"' "$sep" "$(printf '%s' "${l#- }" | sed 's/\\/\\\\/g; s/"/\\"/g')"
            sep=", "
        done
        printf ']}\n'
    } > "$json.tmp.$$" && mv "$json.tmp.$$" "$json" || die "cannot write $json"
fi

# -o DIR: every file of the run replaces DIR's, each by a rename (whole, never half-written); the
# shards' folders (data/, runs/) as wholes
if [ -n "$keep" ]; then
    for f in "$W"/*; do
        b=${f##*/}
        if [ -d "$f" ] && [ ! -L "$f" ]; then
            rm -rf "${keep:?}/$b" && mv "$f" "$keep/$b"
        else
            mv -f "$f" "$keep/$b"
        fi || die "cannot move $f into $keep"
    done
    finished=1
    cat "$keep/table.out"
else
    cat "$W/table.out"
fi || die "cannot write the table on stdout"
exit 0
