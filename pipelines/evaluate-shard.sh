#!/bin/sh
# evaluate-shard.sh DIR I/N EVALUATE-OPTIONS... INPUT
# One shard of pipelines/evaluate.sh --shards N: `evaluate --shard I/N EVALUATE-OPTIONS... INPUT`
# (the n x gallery work of the queries of shard I of N, as a stream of their answers) into
# DIR/part.hs, whole or absent. Run by GNU parallel, here or on another machine
# (pipelines/common.sh, grid_parallel); evaluate.sh puts the shards together (evaluate --merge).
# Exit 1 with evaluate's last message on stderr.
set -u
. "$(dirname "$0")/common.sh"
[ $# -ge 3 ] || { say "usage: evaluate-shard.sh DIR I/N EVALUATE-OPTIONS... INPUT"; exit 2; }
dir=$1 shard=$2
shift 2
mkdir -p "$dir" || exit 1
evaluate --shard "$shard" "$@" > "$dir/part.hs.tmp" 2> "$dir/part.log" && mv "$dir/part.hs.tmp" "$dir/part.hs" && exit 0
rm -f "$dir/part.hs.tmp"
# evaluate's own last message (a usage error ends with "Try 'evaluate --help'")
msg=$(grep '^evaluate: ' "$dir/part.log" | tail -n 1)
say "evaluate-shard: --shard $shard failed: ${msg:-$(grep -v '^ ' "$dir/part.log" | tail -n 1)}"
exit 1
