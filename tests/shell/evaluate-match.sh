#!/bin/sh
# No calibration number without a match probability (issue 44 item 9): embed wrote match_a = 1,
# match_b = 0 for every loss that learns none (triplet, proto, fstat, mls, ...) and evaluate
# printed an ECE of that placeholder. Now: a triplet model's checkpoint and embeddings carry no
# match_a/match_b; evaluate gives ece "-" and the reason, pairscore refuses to score p; a softcon
# model's (which learns a and b) carry them and get an ECE; an old embeddings stream with the
# placeholder (meta loss triplet) is read as having none; an old checkpoint with the placeholder
# keys still loads and embeds without one; and an explicit --match-a/--match-b still gives an ECE
# (fromnpz's or evaluate's), as does a hand-made stream with match_a/match_b and no loss.
set -u
. "$(dirname "$0")/../lib.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)
PY=/usr/bin/python3
cd "$T"
mkdigits -N 1 -s train -n 1000 2> /dev/null > train.hs || fail "mkdigits train"
mkdigits -N 1 -s test-seen -n 300 2> /dev/null > test.hs || fail "mkdigits test"
batcher -m pk -P 5 -K 4 -n 10 < train.hs | train -o tri.ckpt --loss triplet -D 4 -n 10 -t 1 2> /dev/null ||
    fail "train triplet"
batcher -m pairs -b 32 -n 10 < train.hs | train -o sc.ckpt --head point --loss softcon -D 4 -n 10 -t 1 2> /dev/null ||
    fail "train softcon"
own() { tshow -H "$1" | sed 's/"provenance".*//'; } # the header without its lineage
own tri.ckpt | grep -q '"match_a"' && fail "a triplet checkpoint carries match_a: $(own tri.ckpt)"
own sc.ckpt | grep -q '"match_a": [0-9.e-]*, "match_b"' || fail "a softcon checkpoint lacks match_a, match_b"
embed -m tri.ckpt < test.hs > tri.hs && embed -m sc.ckpt < test.hs > sc.hs || fail "embed"
own tri.hs | grep -q '"match_a"\|"match_b"' && fail "triplet embeddings carry a match probability: $(own tri.hs)"
own tri.hs | grep -q '"loss": "triplet"' || fail "triplet embeddings do not name their loss"
own sc.hs | grep -q '"match_a": [0-9.e-]*, "match_b"' || fail "softcon embeddings lack match_a, match_b"

# evaluate: no ece for the triplet model, its reason; an ece for softcon's learned one
row() { grep "^| $2 |" "$1" | sed "s/^| $2 | //; s/ |\$//"; }
evaluate --json tri.json tri.hs > tri.md 2> err || fail "evaluate tri.hs: $(cat err)"
[ "$(row tri.md ece)" = - ] || fail "evaluate printed an ece for a triplet model: $(row tri.md ece)"
grep -q '"ece": null' tri.json || fail "tri.json: ece is not null: $(cat tri.json)"
grep -qx -- "- ap (input): the embeddings have no match_a/match_b, so pairs are ranked by the distance of their means; ece: no match probability (give --match-a A --match-b B)" tri.md ||
    fail "no reason for the missing ece: $(cat tri.md)"
evaluate sc.hs > sc.md 2> err || fail "evaluate sc.hs: $(cat err)"
check_lt 0 "$(row sc.md ece)" "softcon's learned match probability has no ece: $(cat sc.md)"
# the same ece as pairscore | apcurve --ece 15 (the engine's numbers are the programs')
e=$(pairscore sc.hs | apcurve --ece 15 | sed -n 's/^ece //p')
awk -v a="$(row sc.md ece)" -v b="$e" 'BEGIN { d = a - b; exit !(d < 1e-6 && d > -1e-6) }' ||
    fail "evaluate's ece $(row sc.md ece), pairscore | apcurve's $e"
# an explicit match probability still gives one, for any embeddings
evaluate --match-a 1 --match-b 0 tri.hs > trig.md 2> /dev/null || fail "evaluate --match-a 1 --match-b 0 tri.hs"
check_lt 0 "$(row trig.md ece)" "--match-a/-b gave no ece: $(cat trig.md)"
# pairscore: no p without one, saying why; --score l2 ranks such pairs
expect_fail 1 "pairscore: tri.hs: no match_a / match_b (the learned a and b of the match probability): --score l2 or cosine ranks pairs without one" \
    pairscore tri.hs
pairscore --score l2 tri.hs > /dev/null || fail "pairscore --score l2 on a triplet model's embeddings"

# an old stream: embed before the fix wrote the placeholder (meta loss triplet, match_a 1,
# match_b 0); it reads as having no match probability. A hand-made stream with the same keys and
# no loss keeps them (they are someone's a and b)
PYTHONPATH="$root/python" $PY - <<'EOF' || fail "making the old stream"
import msgpack
objs = list(msgpack.Unpacker(open("tri.hs", "rb"), raw=False))
objs[0]["meta"]["match_a"], objs[0]["meta"]["match_b"] = 1.0, 0.0
with open("old.hs", "wb") as f:
    for o in objs:
        f.write(msgpack.packb(o, use_bin_type=True))
del objs[0]["meta"]["loss"]
with open("noloss.hs", "wb") as f:
    for o in objs:
        f.write(msgpack.packb(o, use_bin_type=True))
EOF
evaluate old.hs > old.md 2> err || fail "evaluate old.hs: $(cat err)"
[ "$(row old.md ece)" = - ] || fail "evaluate took the old placeholder for a match probability: ece $(row old.md ece)"
grep -qx -- "- ap, ece (input): no match probability: its loss triplet learns none (its match_a 1, match_b 0 are the placeholder embed wrote before): pairs are ranked by the distance of their means, and there is no ece (give --match-a A --match-b B)" old.md ||
    fail "old.hs: no reason: $(cat old.md)"
expect_fail 1 "pairscore: old.hs: no match probability: its loss triplet learns none (its match_a 1, match_b 0 are the placeholder embed wrote before)" \
    pairscore old.hs
# the placeholder ranks pairs as the distance does: the same ap as without it
[ "$(row old.md ap)" = "$(row tri.md ap)" ] || fail "old.hs: ap $(row old.md ap), tri.hs $(row tri.md ap)"
evaluate noloss.hs > noloss.md 2> /dev/null || fail "evaluate noloss.hs"
check_lt 0 "$(row noloss.md ece)" "a hand-made match_a/match_b without a loss gave no ece"
[ "$(row noloss.md ece)" = "$(row trig.md ece)" ] || fail "noloss.hs: ece $(row noloss.md ece), --match-a 1 --match-b 0 gave $(row trig.md ece)"

# an old checkpoint (its meta with the placeholder keys) loads and embeds without one
PYTHONPATH="$root/python" $PY - <<'EOF' || fail "making the old checkpoint"
import msgpack
objs = list(msgpack.Unpacker(open("tri.ckpt", "rb"), raw=False))
objs[0]["meta"]["match_a"], objs[0]["meta"]["match_b"] = 1.0, 0.0
with open("old.ckpt", "wb") as f:
    for o in objs:
        f.write(msgpack.packb(o, use_bin_type=True))
EOF
embed -m old.ckpt < test.hs > oldc.hs 2> err || fail "embed -m old.ckpt: $(cat err)"
own oldc.hs | grep -q '"match_a"' && fail "an old checkpoint's placeholder reached the embeddings"
totsv -f mu tri.hs | cmp -s - "$(totsv -f mu oldc.hs > oldc.tsv && echo oldc.tsv)" || fail "old.ckpt embeds otherwise"
pass
