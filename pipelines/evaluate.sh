#!/bin/sh
# evaluate.sh [-g GALLERY] [--exclude-id] [--corrupt FILE] [--match-a A --match-b B]
#             [--distance euclidean|cosine|mls] [-k K1,K2,...] [-n PAIRS] [-S SEED] [-t THREADS]
#             [--mu NAME] [--var NAME] [--eta NAME] [--labels NAME] [--id NAME]
#             [--shards N [-j JOBS] [--sshlogin S]... [--sshloginfile F] [--transfer] [--retries R]]
#             [--text] [--json FILE] [-o DIR] INPUT
# The whole evaluation battery of one set of embeddings, as one table on stdout (markdown; --text
# aligned columns) and, with --json, one JSON object in FILE. INPUT, GALLERY and FILE are hedge
# `embeddings` streams or numpy archives (.npz/.npy, read by fromnpz: mu [n, D] or [n, C, D] of any
# numeric dtype, optional var, eta, class or labels: integers or names, such as identities, matched
# by name between INPUT and GALLERY as hedge.evaluate does; --mu NAME ... --id NAME: the arrays of
# those roles under other names, as fromnpz takes them). Without -o DIR it is bin/evaluate (man hedge-evaluate: the
# same numbers in one process, the sets read once; --shards: its shards, then --merge); -o DIR
# alone runs the programs named below and keeps their files (with --shards, the shards' answers).
#   ap                 verification AP over PAIRS sampled pairs of INPUT (pairscore | apcurve):
#                      p(match) of the embeddings' meta match_a, match_b when they have them;
#                      otherwise pairs ranked by the distance of their means (AP needs only the
#                      ranking; pairscore with a = 1, b = 0: float32 scores, so pairs beyond a
#                      distance of about 87 tie, with a note) and no ECE
#   ece                apcurve --ece 15 of that match probability (only with match_a/match_b; an
#                      old stream in which embed wrote a = 1, b = 0 for a loss that learns none:
#                      without -o read as having none, with -o DIR pairscore refuses it, saying so)
#   knn                knn -k 5 accuracy (leave-one-out, or the queries INPUT against GALLERY;
#                      fewer neighbours on a small set: below)
#   R@k, p1, rprec, map_r, map, mrr   retrieve (-k, default 1,2,4,8); mrr: the mean of 1 / the
#                      rank of the first positive over the whole ranking
#   p1, rprec, map_r, mrr (class avg)   the same averaged within each query class, then over
#                      the classes (pytorch-metric-learning's avg_of_avgs; JSON: p1_avg_of_avgs, ...)
#   nmi, ami           cluster (k-means, k = the number of classes) of INPUT
#   tau, auroc, aurc, eaurc      with an uncertainty (eta, else var): ktau -b 20
#                      -m accuracy:correct on knn's output; the error-versus-reject curve in
#                      DIR/reject-SET.tsv (with -o)
#   -g GALLERY      search GALLERY instead of INPUT itself (knn, retrieve; --exclude-id: never
#                   the gallery item with the query's id, for twin sets)
#   --corrupt FILE  a second set (e.g. the corrupted twins of INPUT) evaluated the same way: a
#                   second column
#   --match-a A --match-b B   the match probability's a > 0 and b for .npz input (fromnpz)
#   --mu NAME, --var NAME, --eta NAME, --labels NAME (or --class), --id NAME   the array of each
#                   role in the .npz inputs (fromnpz's options; default mu, var, eta, class or
#                   labels or label, id)
#   --distance cosine  knn and retrieve rank by the cosine similarity of the means (normalised
#                   first, as pytorch-metric-learning; default euclidean); ap and nmi/ami stay
#                   Euclidean (a note says so)
#   --distance mls  knn, retrieve and ap by PFE's mutual likelihood score of the Gaussians
#                   (mean and var, C = 1: lib/numerics/mls.h; PFE's and DUL's evaluation); no ECE (MLS
#                   is no probability); nmi/ami stay Euclidean
#   -n PAIRS        sampled pairs (default 10000); -S SEED (default 714)
#   -t THREADS      threads of knn, retrieve and cluster (default: THREADS, else 1)
#   -o DIR          keep every intermediate file in DIR (default: a temporary folder, removed).
#                   The run works in DIR/.evaluate.work and moves its files into DIR at the end,
#                   so a failed run leaves DIR as it was (its own files stay in .evaluate.work
#                   until the next run); DIR is locked while a run works in it (flock on
#                   DIR/.evaluate.lock): a second run into it stops at once with one line
#   --shards N      the n x gallery part (kNN, retrieval) in N query ranges, `evaluate --shard
#                   I/N` run by GNU parallel, JOBS at a time on each machine (-j, default 2),
#                   each with -t THREADS, each a stream of its queries' answers (DIR/runs/
#                   part-I/part.hs); `evaluate --merge` computes the rest here from them and the
#                   sets: the same numbers as without --shards, to the bit. With --sshlogin /
#                   --sshloginfile the shards run on those machines (the pipelines' grid
#                   options, docs/grids.md): they see DIR and the hedge tree at the same paths
#                   (give -o DIR on a shared disk), or, with --transfer, get the programs and
#                   the sets copied and send each shard's answers back; --retries R (default 2)
#                   tries a failed shard again, on another machine
# A number that cannot be had is "-" (JSON: null) with its reason under the table. What each
# needs, decided from the sets' sizes and classes before a program runs (as pytorch-metric-
# learning, which returns what it can and NaN for the rest):
#   ap, ece      a matching pair and a non-matching one among the set's items: a class with two
#                items, and two classes
#   knn          k = 5, or the neighbours a query has when fewer: n - 1 leave-one-out, with -g the
#                gallery's items (one fewer with --exclude-id when a query's id is among them);
#                one k for every column, the row's (JSON: knn_k); no neighbour: "-"
#   R@k          each k of -k up to those neighbours; a larger k: "-"
#   retrieval    (R@k, p1, rprec, map_r, map, mrr and the class averages) a query with a positive:
#                another item of its class, with -g an item of its class in the gallery (not the
#                one --exclude-id leaves out); none: "-"; the queries without one are left out
#   nmi, ami     always (k = the number of classes, at most n); one class is one cluster: 1, by
#                sklearn's convention (a note says so)
#   tau, auroc, aurc, eaurc   knn's output, an uncertainty and at least 20 queries (20 bins)
# Exit 0 with the whole table (and FILE, and DIR's files); else exit 1 with one line on stderr
# (an input that cannot be read, an evaluator that fails, a DIR in use) and nothing on stdout.
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

gallery="" exclude="" corrupt="" ma="" mb="" ks=1,2,4,8 pairs=10000 seed=714 roles=""
threads=${THREADS:-1} text=0 json="" keep="" distance=euclidean shards="" gridopts=""
while [ $# -gt 1 ]; do
    case $1 in
    -g) gallery=$2; shift ;;
    --exclude-id) exclude=--exclude-id ;;
    --corrupt) corrupt=$2; shift ;;
    --match-a) ma=$2; shift ;;
    --match-b) mb=$2; shift ;;
    --distance) distance=$2; shift ;;
    # the arrays' names, passed to evaluate and fromnpz as given (quoted for the set -- below)
    --mu | --var | --eta | --labels | --class | --id) roles="$roles $1 $(grid_quote "$2")"; shift ;;
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
    -h | --help) help; exit 0 ;;
    *) usage ;;
    esac
    shift
done
[ $# = 1 ] || usage
case $1 in -h | --help) help; exit 0 ;; -*) usage ;; esac
input=$1
case $threads in '' | *[!0-9]* | 0) say "$me: -t: not a number of threads: '$threads'"; usage ;; esac
[ -n "$ma" ] && [ -z "$mb" ] && { say "$me: --match-a needs --match-b"; usage; }
[ -z "$ma" ] && [ -n "$mb" ] && { say "$me: --match-b needs --match-a"; usage; }
[ -n "$exclude" ] && [ -z "$gallery" ] && { say "$me: --exclude-id needs -g GALLERY"; usage; }
case $distance in euclidean | cosine | mls) ;; *) say "$me: --distance: '$distance' is not euclidean, cosine or mls"; usage ;; esac
# -k: K1,K2,... increasing, each >= 1 (retrieve's rule; the rules below compare them with counts)
case $ks in '' | ,* | *, | *,,* | *[!0-9,]*) say "$me: -k: expected K1,K2,... like 1,2,4,8, got '$ks'"; usage ;; esac
ks_given=$ks
ks=$(echo "$ks" | tr , '\n' | awk '(NR > 1 && $1 + 0 <= p) || $1 + 0 < 1 { bad = 1 } { p = $1 + 0; printf "%s%d", (NR > 1 ? "," : ""), p }
    END { exit bad }') || { say "$me: -k: the k must be 1 or more and increase, as in 1,2,4,8: '$ks_given'"; usage; }
case $shards in '') [ -z "$gridopts" ] || { say "$me: -j, --sshlogin, --transfer, --retries run shards: give --shards N"; usage; } ;;
    *[!0-9]* | 0) say "$me: --shards: not a number of shards: '$shards'"; usage ;; esac

# Unsharded and without -o DIR: bin/evaluate computes all of it in one process (lib/engine/hedge.h: the
# sets read once, one pass over the distances for knn and retrieval), the same table and JSON
# (tests/shell/evaluate-engine.sh). --shards: bin/evaluate's shards (below); -o DIR without
# --shards runs the programs and keeps every one's intermediate files.
if [ -z "$shards" ] && [ -z "$keep" ]; then
    for f in "$input" ${gallery:+"$gallery"} ${corrupt:+"$corrupt"}; do
        [ -e "$f" ] || die "$f: no such file"
    done
    set -- --distance "$distance" -k "$ks" -n "$pairs" -S "$seed" -t "$threads"
    [ "$text" = 1 ] && set -- "$@" --text
    [ -n "$json" ] && set -- "$@" --json "$json"
    [ -n "$gallery" ] && set -- "$@" -g "$gallery" $exclude
    [ -n "$corrupt" ] && set -- "$@" --corrupt "$corrupt"
    [ -n "$ma" ] && set -- "$@" --match-a "$ma" --match-b "$mb"
    eval "set -- \"\$@\" $roles"
    exec evaluate "$@" -- "$input"
fi

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
# The programs this run starts hold neither the lock nor DIR past it: each runs without the
# lock's descriptor (9>&-: a program that outlived a run killed with -9 held DIR until it ended),
# and through $kid, which has the kernel kill it when this shell dies first (setpriv
# --pdeathsig, util-linux, where it has it; a command of a pipeline is this shell's child too)
kid=""
command -v setpriv > /dev/null 2>&1 && setpriv --pdeathsig KILL true 2> /dev/null && kid="setpriv --pdeathsig KILL"
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
    $kid "$@" 2> "$W/$r_name.log" 9>&- && return 0
    r_msg=$(grep "^$1: " "$W/$r_name.log" | tail -n 1)
    [ -n "$r_msg" ] || r_msg=$(grep -v '^ ' "$W/$r_name.log" | tail -n 1)
    die "$1 failed on $r_what: ${r_msg:-exit status $?}"
}

# -o DIR: every file of the run replaces DIR's, each by a rename (whole, never half-written); the
# shards' folders (data/, runs/) as wholes; then the table on stdout
finish() {
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
}

# --shards N: bin/evaluate --shard I/N in N jobs (pipelines/evaluate-shard.sh through
# grid_parallel, here or on the --sshlogin machines), each the n x gallery work (kNN, retrieval)
# of its queries as a stream of their answers (runs/part-I/part.hs); evaluate --merge reads them
# with the sets and computes the rest: the numbers of one run, to the bit (lib/engine/evalpart.h)
if [ -n "$shards" ]; then
    mkdir -p "$W/data" "$W/runs" || die "cannot make $W/data"
    sh_args=""
    for sh_role in input corrupt gallery; do
        eval "sh_f=\$$sh_role"
        [ -n "$sh_f" ] || continue
        [ -e "$sh_f" ] || die "$sh_f: no such file"
        case $sh_f in *.npz) sh_x=npz ;; *.npy) sh_x=npy ;; *) sh_x=hs ;; esac
        # the sets where the shards read them: copies to send (--transfer), else links
        if [ "$transfer" = 1 ]; then
            cp -L "$sh_f" "$W/data/$sh_role.$sh_x" || die "cannot copy $sh_f"
        else
            ln -s "$(cd "$(dirname "$sh_f")" && pwd)/$(basename "$sh_f")" "$W/data/$sh_role.$sh_x" || die "cannot link $sh_f"
        fi
        case $sh_role in
        corrupt) sh_args="$sh_args --corrupt $out/data/corrupt.$sh_x" ;;
        gallery) sh_args="$sh_args -g $out/data/gallery.$sh_x $exclude" ;;
        input) sh_in=$out/data/input.$sh_x ;;
        esac
    done
    set -- --distance "$distance" -k "$ks" -n "$pairs" -S "$seed" -t "$threads"
    [ -n "$ma" ] && set -- "$@" --match-a "$ma" --match-b "$mb"
    sh_conf=$W/shards.txt
    : > "$sh_conf"
    i=0
    while [ "$i" -lt "$shards" ]; do
        sh_name=$(printf 'part-%04d' "$i")
        mkdir -p "$W/runs/$sh_name" || die "cannot make $W/runs/$sh_name"
        echo "$sh_name $i/$shards" >> "$sh_conf"
        i=$((i + 1))
    done
    # (without the lock's descriptor: a job or connection that outlived this run would hold DIR)
    grid_parallel "$W/joblog" "$sh_conf" \
        "sh $HEDGE_ROOT/pipelines/evaluate-shard.sh $out/runs/{1} {2} $* $roles $sh_args $sh_in > $out/runs/{1}/run.log 2>&1" 9>&-
    sh_parts=""
    while read -r sh_name sh_range; do
        [ -s "$W/runs/$sh_name/part.hs" ] ||
            die "shard $sh_name (--shard $sh_range of $input) failed: $(tail -n 1 "$W/runs/$sh_name/run.log" 2> /dev/null || echo "no log: see $W/joblog")"
        sh_parts="$sh_parts $W/runs/$sh_name/part.hs"
    done < "$sh_conf"
    [ "$text" = 1 ] && set -- "$@" --text
    [ -n "$json" ] && set -- "$@" --json "$json"
    [ -n "$keep" ] && set -- "$@" -o "$keep"
    [ -n "$gallery" ] && set -- "$@" -g "$gallery" $exclude
    [ -n "$corrupt" ] && set -- "$@" --corrupt "$corrupt"
    eval "set -- \"\$@\" $roles"
    run merge "the shards of $input" evaluate --merge "$@" -- "$input" $sh_parts > "$W/table.out"
    finish
fi


# repack_failed FILE TONPZ-LOG FROMNPZ-LOG: `tonpz | fromnpz` failed on FILE: one line, the first
# program's message (tonpz's, when it refused the stream; fromnpz then read nothing)
repack_failed() {
    rp_msg=$(grep '^tonpz: ' "$2" | tail -n 1)
    [ -n "$rp_msg" ] && die "tonpz failed on $1: $rp_msg"
    die "fromnpz failed on $1: $(tail -n 1 "$3")"
}

# stream SET FILE: $W/SET.hs, FILE as an embeddings stream (an .npz/.npy through fromnpz)
stream() {
    [ -e "$2" ] || die "$2: no such file"
    case $2 in
    *.npz | *.npy)
        if [ -n "$ma" ]; then
            eval "run \"fromnpz-\$1\" \"\$2\" fromnpz --match-a \"\$ma\" --match-b \"\$mb\" $roles -- \"\$2\"" > "$W/$1.hs"
        else
            eval "run \"fromnpz-\$1\" \"\$2\" fromnpz $roles -- \"\$2\"" > "$W/$1.hs"
        fi ;;
    *)
        run "tshow-$1" "$2" tshow -H "$2" > "$W/$1.head"
        grep -q '^{"format": "hedge-stream", "version": [0-9]*, "kind": "\(embeddings\|eta\)"' "$W/$1.head" ||
            die "$2: not an embeddings stream or .npz (found a stream of $(sed -n 's/^{[^}]*"kind": *\("[^"]*"\).*/kind \1/p' "$W/$1.head" | head -n 1))"
        if [ -n "$ma" ]; then
            $kid tonpz "$2" 2> "$W/tonpz-$1.log" 9>&- | $kid fromnpz --match-a "$ma" --match-b "$mb" - > "$W/$1.hs" 2> "$W/fromnpz-$1.log" 9>&- ||
                repack_failed "$2" "$W/tonpz-$1.log" "$W/fromnpz-$1.log"
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

# knn's k where every query has that many neighbours (the rules: the usage above)
knn_want=5

# lim SET KEY: a value of $W/SET.lim (limits)
lim() { sed -n "s/^$2 //p" "$W/$1.lim" | head -n 1; }

# limits SET: what SET allows, from the class (and id) of every item of SET and of the gallery,
# into $W/SET.lim as `key value` lines: n (SET's items, the queries), classes (SET's distinct
# classes), paired (1: a class of SET has two items), nbrs (the neighbours every query has), pos
# (the queries with a positive), where (where the neighbours are, for the notes)
limits() {
    for l_set in "$1" ${gallery:+gallery}; do
        [ -s "$W/ids-$l_set.tsv" ] && continue
        # the id as knn and retrieve take it: the field, else the record's index
        if header "$l_set" '"name": "id"'; then l_f=id,class; else l_f=class; fi
        eval "l_file=\$file_$l_set"
        run "totsv-$l_set" "$l_file" totsv -f $l_f "$W/$l_set.hs" > "$W/ids-$l_set.tsv"
    done
    l_excl=0
    [ -n "$exclude" ] && l_excl=1
    awk -F'\t' -v gal="${gallery:+1}" -v excl="$l_excl" '
        FNR == 1 { f++; next }
        { id = NF > 1 ? $1 : FNR - 2; c = $NF }
        f == 1 { n++; qc[c]++; qid[n] = id; qcl[n] = c; next }
        { ng++; gc[c]++; gcl[id] = c }
        END {
            for (c in qc) { classes++; if (qc[c] > 1) paired = 1 }
            own = 0
            for (i = 1; i <= n; i++) {
                c = qcl[i]
                if (!gal) p = qc[c] - 1
                else {
                    p = gc[c]
                    if (excl && (qid[i] in gcl)) { own = 1; if (gcl[qid[i]] == c) p-- }
                }
                if (p > 0) pos++
            }
            nbrs = gal ? ng - own : n - 1
            if (nbrs < 0) nbrs = 0
            printf "n %d\nclasses %d\npaired %d\nnbrs %d\npos %d\n", n, classes, paired, nbrs, pos
            if (!gal) printf "where %d item%s, leave-one-out\n", n, n == 1 ? "" : "s"
            else printf "where a gallery of %d item%s%s\n", ng, ng == 1 ? "" : "s", own ? ", less the query'"'"'s own id" : ""
        }' "$W/ids-$1.tsv" ${gallery:+"$W/ids-gallery.tsv"} > "$W/$1.lim" || die "cannot count the classes of $f"
    [ "$(lim "$1" n)" -gt 0 ] || die "$f: no items (nothing to evaluate)"
}

# neighbours N: "1 neighbour", "N neighbours"
neighbours() { if [ "$1" = 1 ]; then echo "1 neighbour"; else echo "$1 neighbours"; fi; }

# evaluate SET: every evaluator on $W/SET.hs; the numbers in $W/SET.val as `key value` lines
evaluate() {
    s=$1 gargs="--distance $distance"
    eval "f=\$file_$s"
    [ -n "$gallery" ] && gargs="$gargs -g $W/gallery.hs $exclude"
    [ "$distance" = cosine ] &&
        note "distance ($s): knn and retrieval rank by cosine similarity (normalised means); ap, nmi and ami by the Euclidean distance of the means"
    [ "$distance" = mls ] &&
        note "distance ($s): knn, retrieval and ap by the mutual likelihood score of the Gaussians (PFE); nmi and ami by the Euclidean distance of the means"
    v=$W/$s.val
    : > "$v"
    n=$(lim $s n) nbrs=$(lim $s nbrs) pos=$(lim $s pos) where=$(lim $s where)
    # verification AP on sampled pairs: a matching pair and a non-matching one
    if [ "$(lim $s paired)" = 0 ]; then
        printf 'ece -\nap -\n' >> "$v"
        note "ap, ece ($s): no class has two items: no matching pair to draw"
    elif [ "$(lim $s classes)" = 1 ]; then
        printf 'ece -\nap -\n' >> "$v"
        note "ap, ece ($s): one class only: no non-matching pair to draw"
    elif [ "$distance" = mls ]; then
        run "pairscore-$s" "$f" pairscore --score mls -n "$pairs" -S "$seed" "$W/$s.hs" > "$W/pairs-$s.hs"
        run "apcurve-$s" "$f" apcurve --json - -o "$W/pr-$s.tsv" "$W/pairs-$s.hs" > "$W/ap-$s.json"
        echo "ece -" >> "$v"
        note "ece ($s): MLS is no probability"
        echo "ap $(json_get ap < "$W/ap-$s.json")" >> "$v"
    elif header "$s" '"match_a"'; then
        run "pairscore-$s" "$f" pairscore -n "$pairs" -S "$seed" "$W/$s.hs" > "$W/pairs-$s.hs"
        run "apcurve-$s" "$f" apcurve --json - --ece 15 -o "$W/pr-$s.tsv" "$W/pairs-$s.hs" > "$W/ap-$s.json"
        echo "ece $(json_get ece < "$W/ap-$s.json")" >> "$v"
        echo "ap $(json_get ap < "$W/ap-$s.json")" >> "$v"
    else
        # no match probability: a = 1, b = 0 ranks the pairs by the distance of their means
        $kid tonpz "$W/$s.hs" 2> "$W/tonpz-$s.log" 9>&- | $kid fromnpz --match-a 1 --match-b 0 - > "$W/$s-rank.hs" 2> "$W/fromnpz-rank-$s.log" 9>&- ||
            repack_failed "$f" "$W/tonpz-$s.log" "$W/fromnpz-rank-$s.log"
        run "pairscore-$s" "$f" pairscore --means -n "$pairs" -S "$seed" "$W/$s-rank.hs" > "$W/pairs-$s.hs"
        run "apcurve-$s" "$f" apcurve --json - -o "$W/pr-$s.tsv" "$W/pairs-$s.hs" > "$W/ap-$s.json"
        echo "ece -" >> "$v"
        note "ap ($s): the embeddings have no match_a/match_b, so pairs are ranked by the distance of their means; ece: no match probability (give --match-a A --match-b B)"
        # the score sigmoid(-d) is float32: beyond d = 87 or so it is subnormal, then 0 (ties)
        run "tshow-pairs-$s" "$f" tshow -q "$W/pairs-$s.hs" > "$W/pairs-$s.q"
        [ "$(sed -n 's/.*"p": {[^}]*"min": \([^,}]*\).*/\1/p' "$W/pairs-$s.q")" = 0 ] &&
            note "ap ($s): some pairs are so far apart (beyond a distance of about 87) that their score sigmoid(-d) is 0 in float32: they tie, one block for AP (scale the embeddings down, or give --match-a)"
        echo "ap $(json_get ap < "$W/ap-$s.json")" >> "$v"
    fi
    # knn's k and retrieve's ks as far as the neighbours go; retrieve only with a positive
    sk=$knn_k
    [ "$nbrs" -ge 1 ] || { sk=- && note "knn ($s): no neighbour: $where"; }
    sks="" beyond=""
    for k in $(echo "$ks" | tr , ' '); do
        if [ "$k" -le "$nbrs" ]; then sks="$sks${sks:+,}$k"; else beyond="$beyond${beyond:+, }R@$k"; fi
    done
    sr=${sks:-1} # retrieve needs a k: then its R@1 is not shown
    if [ "$pos" = 0 ]; then
        sr=-
        if [ -n "$gallery" ]; then pw="an item of its class in the gallery"; else pw="another item of its class"; fi
        note "R@k, p1, rprec, map_r, map, mrr and their class averages ($s): no query has a positive ($pw)"
    elif [ -n "$beyond" ]; then
        note "$beyond ($s): more than the $(neighbours "$nbrs") a query has ($where)"
    fi
    # KNN accuracy and retrieval: $W/knn-$s.hs and $W/retrieve-$s.json
    [ "$sk" = - ] || run "knn-$s" "$f" knn -k "$sk" $gargs -t "$threads" "$W/$s.hs" > "$W/knn-$s.hs"
    [ "$sr" = - ] ||
        run "retrieve-$s" "$f" retrieve -k "$sr" $gargs -t "$threads" --json "$W/retrieve-$s.json" "$W/$s.hs" > "$W/retrieval-$s.hs"
    if [ "$sk" = - ]; then
        echo "knn -" >> "$v"
    else
        run "knn-summary-$s" "$f" knn --summary "$W/knn-$s.hs" > "$W/knn-$s.json"
        echo "knn $(json_get accuracy < "$W/knn-$s.json")" >> "$v"
    fi
    # R@k of each k asked (JSON: recall, null where "-"), then the rest
    r_all=""
    [ "$sr" = - ] || r_all=$(json_array recall < "$W/retrieve-$s.json" | tr -d '[] ')
    i=1 rj=""
    for k in $(echo "$ks" | tr , ' '); do
        x=-
        [ "$sr" != - ] && [ "$k" -le "$nbrs" ] && x=$(echo "$r_all" | cut -d, -f$i)
        echo "r@$k $x" >> "$v"
        [ "$x" = - ] && x=null
        rj="$rj${rj:+, }$x" i=$((i + 1))
    done
    echo "recall_at [$(echo "$ks" | sed 's/,/, /g')]" >> "$v"
    echo "recall [$rj]" >> "$v"
    for m in p1 rprec map_r map mrr p1_avg_of_avgs rprec_avg_of_avgs map_r_avg_of_avgs mrr_avg_of_avgs; do
        if [ "$sr" = - ]; then echo "$m -"; else echo "$m $(json_get $m < "$W/retrieve-$s.json")"; fi >> "$v"
    done
    if [ "$sr" != - ]; then
        np=$(json_get no_positive < "$W/retrieve-$s.json")
        [ "$np" = 0 ] || note "retrieval ($s): $np queries without a positive in the gallery are left out of its means"
    fi
    # clustering
    run "cluster-$s" "$f" cluster -S "$seed" -t "$threads" --json "$W/cluster-$s.json" "$W/$s.hs" > /dev/null
    for m in nmi ami; do echo "$m $(json_get $m < "$W/cluster-$s.json")" >> "$v"; done
    [ "$(lim $s classes)" = 1 ] && note "nmi, ami ($s): one class, one cluster: 1 by convention (sklearn), nothing measured"
    # uncertainty: knn's output carries eta (the input's eta, else its mean var)
    if [ "$sk" = - ]; then
        for m in tau auroc aurc eaurc; do echo "$m -" >> "$v"; done
        note "tau, auroc, aurc, eaurc ($s): they rank knn's errors, and knn has no neighbour"
        return 0
    fi
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
# knn's one k for every column: knn_want, or the neighbours of the set that has fewest
knn_k=$knn_want knn_few="" knn_any=0
for s in $sets; do
    eval "f=\$file_$s"
    limits "$s"
    nb=$(lim $s nbrs)
    [ "$nb" -ge 1 ] && knn_any=1
    if [ "$nb" -ge 1 ] && [ "$nb" -lt "$knn_k" ]; then knn_k=$nb knn_few=$s; fi
done
knn_kj=null # JSON: null when no set has a neighbour
[ "$knn_any" = 1 ] && knn_kj=$knn_k
[ -n "$knn_few" ] && note "knn: k = $knn_k, not $knn_want: a query of $knn_few has $(neighbours "$knn_k") ($(lim $knn_few where))"
for s in $sets; do evaluate "$s"; done

# val SET KEY: a value of SET
val() { sed -n "s/^$2 //p" "$W/$1.val" | head -n 1; }

# the table: rows `metric<TAB>value...`
{
    printf 'metric'; for s in $sets; do printf '\t%s' "$s"; done; echo
    printf 'ap'; for s in $sets; do printf '\t%s' "$(val $s ap)"; done; echo
    printf 'ece'; for s in $sets; do printf '\t%s' "$(val $s ece)"; done; echo
    printf 'knn (k = %s)' "$knn_k"; for s in $sets; do printf '\t%s' "$(val $s knn)"; done; echo
    for k in $(echo "$ks" | tr , ' '); do
        printf 'R@%s' "$k"; for s in $sets; do printf '\t%s' "$(val $s "r@$k")"; done; echo
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
        printf '{"program": "evaluate", "distance": "%s", "knn_k": %s' "$distance" "$knn_kj"
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
    } > "$W/.json" || die "cannot write $W/.json"
    # FILE is replaced whole, by a rename beside it; but a name of what is already open
    # (/dev/stderr, a link to it) or not a regular file (a FIFO) is written where it stands:
    # a rename would replace the device's name or the link, a new file would empty a log
    case $json in /dev/* | /proc/*) j_direct=1 ;; *) j_direct=0 ;; esac
    [ -L "$json" ] && case $(readlink "$json") in /dev/* | /proc/*) j_direct=1 ;; esac
    [ -e "$json" ] && [ ! -f "$json" ] && j_direct=1
    if [ "$j_direct" = 1 ]; then
        cat "$W/.json" >> "$json"
    else
        cp "$W/.json" "$json.tmp.$$" && mv "$json.tmp.$$" "$json"
    fi || { rm -f "$json.tmp.$$"; die "cannot write $json"; }
fi

finish
