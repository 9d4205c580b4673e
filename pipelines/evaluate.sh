#!/bin/sh
# evaluate.sh [evaluate's options] [--shards N [-j JOBS] [--sshlogin S]... [--sshloginfile F]
#             [--transfer] [--retries R]] INPUT
# The evaluation battery of one set of embeddings: bin/evaluate with its own options (man
# hedge-evaluate: -g, --corrupt, --distance, -k, -t, --json, --report, -o DIR, ...); without --shards
# it is `evaluate` itself. --shards N: the n x gallery part (kNN, retrieval) in N query ranges,
# `evaluate --shard I/N` by GNU parallel, JOBS at a time on each machine (-j, default 2), each with
# evaluate's -t; `evaluate --merge` computes the rest here from their answers: the numbers of one
# run, to the bit. --sshlogin / --sshloginfile run the shards on those machines (docs/grids.md):
# they see DIR and the hedge tree at the same paths (-o DIR on a shared disk), or with --transfer
# get the programs and the sets copied and send the answers back; --retries R (default 2). With
# --shards, -o DIR also keeps the shards (DIR/runs/part-I/part.hs) and the sets' links (DIR/data);
# the run works in DIR/.evaluate.work and moves its files into DIR at the end (a failed run leaves
# DIR as it was), DIR locked meanwhile (flock DIR/.evaluate.lock): a second run stops at once.
# Exit 0 with the table; else exit 1 with one line on stderr and nothing on stdout.
set -u
. "$(dirname "$0")/common.sh"
me=evaluate
help() { sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; }
case ${1:-} in -h | --help) help; exit 0 ;; esac
die() { say "$me: $*${keep:+${W:+ (this run's files: $W)}}"; exit 1; }
shards="" gridopts="" keep="" gallery="" corrupt="" outs="" common="" # the rest: to the shards and the merge
while [ $# -gt 1 ]; do
    case $1 in
    --shards) shards=$2; shift ;;
    -j | --sshlogin | --sshloginfile | --retries) gridopts="$gridopts $1 $(grid_quote "$2")"; shift ;;
    --transfer) gridopts="$gridopts --transfer" ;;
    -o) keep=$2; shift ;;
    -g) gallery=$2; shift ;;
    --corrupt) corrupt=$2; shift ;;
    --json | --report) outs="$outs $1 $(grid_quote "$2")"; shift ;;
    --text) outs="$outs --text" ;;
    --exclude-id) common="$common --exclude-id" ;;
    -h | --help) help; exit 0 ;; -*) common="$common $1 $(grid_quote "$2")"; shift ;;
    *) break ;;
    esac
    shift
done
if [ -z "$shards" ]; then
    [ -z "$gridopts" ] || { say "$me: -j, --sshlogin, --transfer, --retries run shards: give --shards N"; exit 2; }
    eval "exec evaluate $common $outs ${keep:+-o \"\$keep\"} ${gallery:+-g \"\$gallery\"} ${corrupt:+--corrupt \"\$corrupt\"} \"\$@\""
fi
case $shards in *[!0-9]* | 0) say "$me: --shards: not a number of shards: '$shards'"; exit 2 ;; esac
[ $# = 1 ] || { say "$me: --shards: expected one INPUT after the options"; exit 2; } && input=$1

# $W: this run's own (DIR/.evaluate.work, whose files replace DIR's at the end, or a temporary
# folder); the jobs run without the lock's descriptor (9>&-): one that outlives a run holds no DIR
W="" finished=0
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
ev_out=$(cd "$W" && pwd) || die "cannot enter $W"
eval "grid_options 1 1 $gridopts \"\$ev_out\""
mkdir -p "$W/data" "$W/runs" || die "cannot make $W/data"
# the sets where the shards read them: copies to send (--transfer), else links
sh_args=""
for sh_role in input corrupt gallery; do
    eval "sh_f=\$$sh_role"
    [ -n "$sh_f" ] || continue
    [ -e "$sh_f" ] || die "$sh_f: no such file"
    case $sh_f in *.npz) sh_x=npz ;; *.npy) sh_x=npy ;; *) sh_x=hs ;; esac
    if [ "$transfer" = 1 ]; then cp -L "$sh_f" "$W/data/$sh_role.$sh_x"
    else ln -s "$(cd "$(dirname "$sh_f")" && pwd)/$(basename "$sh_f")" "$W/data/$sh_role.$sh_x"; fi || die "cannot link $sh_f"
    case $sh_role in input) sh_in=$out/data/input.$sh_x ;; corrupt) sh_args="$sh_args --corrupt $out/data/corrupt.$sh_x" ;;
        gallery) sh_args="$sh_args -g $out/data/gallery.$sh_x" ;; esac
done
: > "$W/shards.txt"
i=0
while [ "$i" -lt "$shards" ]; do
    sh_name=$(printf 'part-%04d' "$i")
    mkdir -p "$W/runs/$sh_name" && echo "$sh_name $i/$shards" >> "$W/shards.txt" || die "cannot make $W/runs/$sh_name"
    i=$((i + 1))
done
grid_parallel "$W/joblog" "$W/shards.txt" \
    "sh $HEDGE_ROOT/pipelines/evaluate-shard.sh $out/runs/{1} {2} $common $sh_args $sh_in > $out/runs/{1}/run.log 2>&1" 9>&-
parts=""
while read -r sh_name sh_range; do
    [ -s "$W/runs/$sh_name/part.hs" ] ||
        die "shard $sh_name (--shard $sh_range of $input) failed: $(tail -n 1 "$W/runs/$sh_name/run.log" 2> /dev/null || echo "no log: see $W/joblog")"
    parts="$parts $(grid_quote "$W/runs/$sh_name/part.hs")"
done < "$W/shards.txt"
eval "evaluate --merge $common $outs ${keep:+-o \"\$keep\"} ${gallery:+-g \"\$gallery\"} ${corrupt:+--corrupt \"\$corrupt\"} -- \"\$input\" $parts" \
    > "$W/table.out" 2> "$W/merge.log" 9>&- ||
    die "evaluate --merge failed on the shards of $input: $(grep '^evaluate: ' "$W/merge.log" | tail -n 1)"
[ -n "$keep" ] && for f in "$W"/*; do # every file of the run replaces DIR's, each by a rename (whole)
    b=${f##*/}
    if [ -d "$f" ] && [ ! -L "$f" ]; then rm -rf "${keep:?}/$b" && mv "$f" "$keep/$b"; else mv -f "$f" "$keep/$b"; fi ||
        die "cannot move $f into $keep"
done && finished=1
cat "${keep:-$W}/table.out" || die "cannot write the table on stdout"
