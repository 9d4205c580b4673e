#!/bin/sh
# hib-eval.sh NAME CKPT DATA OUT COND...: evaluates one checkpoint as the paper does and prints
# its numbers on stdout as TSV lines `NAME COND METRIC VALUE` (METRIC: ap, knn, tau_ap, tau_knn;
# no line for a number that is undefined, such as tau when eta is constant).
#   COND: clean, corrupt (DATA/test-COND.hs, the seen-class test twins of hib-data.sh), or any
#   other twin DATA/COND.hs (val-clean, val-corrupt, unseen-clean, ...).
#   Q-G, when no file is named so but Q and G are conditions (corrupt-clean, clean-corrupt): the
#   twins across conditions, the one-sided protocols of issue 20: ap on pairs whose first image is
#   from Q and second from G (pairscore -g), knn of Q's queries against G's gallery with each
#   query's own twin excluded (knn -g --exclude-id), tau binned as for one condition. Q and G get
#   their own files as conditions (emb-Q.hs, eta-Q.hs, ...) but print no lines of their own.
# Writes into OUT, per COND: emb-COND.hs (embeddings), pairs-COND.hs (10,000 scored test pairs),
# eta-COND.hs, knn-COND.hs (5-NN between distributions), ap-COND.json, knn-COND.json,
# tau-ap-COND.json, tau-knn-COND.json, bins-ap-COND.tsv, bins-knn-COND.tsv, pr-COND.tsv.
# Files that exist are kept (a second call continues). Environment: SEED (714), TAU=0 skips
# Kendall's tau (the time-to-accuracy curve needs only AP and KNN accuracy).
# A model whose loss learns no match probability (PN, SPE, ...: its embeddings have no match_a,
# formats/stream.md) has no eta-COND.hs: its pairs are ranked by the distance of their means
# (pairscore --score l2), knn reads its embeddings (the mean var as eta, if any), and tau_ap,
# which needs the pairs' eta, has no line.
set -eu
. "$(dirname "$0")/common.sh"
name=$1 ckpt=$2 data=$3 out=$4
shift 4
seed=${SEED:-714}
mkdir -p "$out"
# result CONDITION METRIC VALUE: a number, or nothing when undefined (null)
result() {
    case $3 in
    null) ;;
    "" | *[!0-9.eE+-]*) say "hib-eval: $name: $1 $2 is not a number: '$3'"; exit 1 ;;
    *) printf '%s\t%s\t%s\t%s\n' "$name" "$1" "$2" "$3" ;;
    esac
}
# images COND: the test images of one condition, or nothing
images() {
    if [ -s "$data/test-$1.hs" ]; then echo "$data/test-$1.hs"; elif [ -s "$data/$1.hs" ]; then echo "$data/$1.hs"; fi
}
# embed_cond COND: its embeddings and, with a match probability, their eta
embed_cond() {
    make_file "$out/emb-$1.hs" embed -m "$ckpt" < "$(images "$1")"
    tshow -H "$out/emb-$1.hs" | sed 's/"provenance".*//' | grep -q '"match_a"' && prob=1 || prob=0
    [ "$prob" = 0 ] || make_file "$out/eta-$1.hs" pairscore --self -S "$seed" < "$out/emb-$1.hs"
}
# knnin COND: the stream knn reads: the eta stream, or without a match probability the embeddings
knnin() { if [ "$prob" = 1 ]; then echo "$out/eta-$1.hs"; else echo "$out/emb-$1.hs"; fi; }
# score: pairscore's option: the match probability, or the distance of the means
score() { [ "$prob" = 1 ] || echo "--score l2"; }
for cond; do
    q= g=
    if [ -z "$(images "$cond")" ]; then # Q-G: split at the first hyphen whose two sides are conditions
        rest=$cond
        while case $rest in *-*) true ;; *) false ;; esac; do
            rest=${rest#*-}
            q=${cond%-"$rest"}
            [ -n "$(images "$q")" ] && [ -n "$(images "$rest")" ] && { g=$rest; break; }
        done
        [ -n "$g" ] || { say "hib-eval: no test images for '$cond' in $data"; exit 1; }
    fi
    if [ -z "$g" ]; then
        embed_cond "$cond"
        make_file "$out/pairs-$cond.hs" pairscore $(score) -S "$seed" < "$out/emb-$cond.hs"
        # KNN between distributions: sqrt(E||z1 - z2||^2) (for points the plain distance); README
        make_file "$out/knn-$cond.hs" knn -k 5 -d expected < "$(knnin "$cond")"
    else
        embed_cond "$q"
        embed_cond "$g"
        make_file "$out/pairs-$cond.hs" pairscore $(score) -S "$seed" -g "$out/emb-$g.hs" < "$out/emb-$q.hs"
        make_file "$out/knn-$cond.hs" knn -k 5 -d expected -g "$(knnin "$g")" --exclude-id < "$(knnin "$q")"
    fi
    make_file "$out/ap-$cond.json" apcurve --json - -o "$out/pr-$cond.tsv" < "$out/pairs-$cond.hs"
    make_file "$out/knn-$cond.json" knn --summary < "$out/knn-$cond.hs"
    result "$cond" ap "$(json_get ap < "$out/ap-$cond.json")"
    result "$cond" knn "$(json_get accuracy < "$out/knn-$cond.json")"
    [ "${TAU:-1}" = 0 ] && continue
    if [ "$prob" = 1 ]; then
        make_file "$out/tau-ap-$cond.json" ktau --json - -S "$seed" -o "$out/bins-ap-$cond.tsv" < "$out/pairs-$cond.hs"
        result "$cond" tau_ap "$(json_get tau < "$out/tau-ap-$cond.json")"
    fi
    tshow -H "$out/knn-$cond.hs" | jq -e '[.fields[].name] | index("eta")' > /dev/null || continue # (no uncertainty)
    make_file "$out/tau-knn-$cond.json" ktau --json - -S "$seed" -o "$out/bins-knn-$cond.tsv" < "$out/knn-$cond.hs"
    result "$cond" tau_knn "$(json_get tau < "$out/tau-knn-$cond.json")"
done
