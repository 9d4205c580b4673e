#!/bin/sh
# evaluate-shard.sh DIR FROM:TO K KS DISTANCE THREADS INPUT [GALLERY [--exclude-id]]
# One shard of pipelines/evaluate.sh --shards: knn -k K and retrieve -k KS with INPUT's records
# FROM .. TO-1 as queries (leave-one-out against the whole INPUT, or against GALLERY), into
# DIR/knn.hs and DIR/retrieval.hs, each whole or absent; K or KS "-" leaves that program out (a
# set too small for it: evaluate.sh's rules). Run by GNU parallel, here or on another
# machine (pipelines/common.sh, grid_parallel); evaluate.sh merges the shards (knn --merge,
# retrieve --summary). Exit 1 with the failing program's last message on stderr.
set -u
. "$(dirname "$0")/common.sh"
[ $# -ge 7 ] || { say "usage: evaluate-shard.sh DIR FROM:TO K KS DISTANCE THREADS INPUT [GALLERY [--exclude-id]]"; exit 2; }
dir=$1 range=$2 k=$3 ks=$4 distance=$5 threads=$6 input=$7
shift 7
gargs=""
[ $# -ge 1 ] && gargs="-g $1"
[ $# -ge 2 ] && gargs="$gargs $2"
mkdir -p "$dir" || exit 1
# shard NAME cmd...: cmd's stdout into DIR/NAME.hs (through a temporary file), stderr in DIR/NAME.log
shard() {
    s_name=$1
    shift
    "$@" > "$dir/$s_name.hs.tmp" 2> "$dir/$s_name.log" && mv "$dir/$s_name.hs.tmp" "$dir/$s_name.hs" && return 0
    rm -f "$dir/$s_name.hs.tmp"
    say "evaluate-shard: $s_name --queries $range failed: $(grep -v '^ ' "$dir/$s_name.log" | tail -n 1)"
    exit 1
}
[ "$k" = - ] || shard knn knn -k "$k" --distance "$distance" $gargs -t "$threads" --queries "$range" "$input"
[ "$ks" = - ] || shard retrieval retrieve -k "$ks" --distance "$distance" $gargs -t "$threads" --queries "$range" "$input"
