#!/bin/sh
# pfe-eval.sh NAME MODEL RUN: evaluates one run of pipelines/pfe.sh from its embeddings of the
# flagged test twins, RUN/emb-{seen,unseen}-{clean,corrupt}.hs (every item carries `corrupt`: 0
# for the clean twins, 1 for the corrupt ones, every digit occluded), and prints its numbers as
# TSV lines `NAME SET METRIC VALUE` on stdout, or `NAME SET METRIC - REASON` for a number the
# model cannot have. MODEL (backbone, pfe, pfebn, pfetorch, hibhead, hib) says which scores it has.
# SET: SPLIT-clean, SPLIT-corrupt, SPLIT-mixed for SPLIT seen and unseen (the test classes seen in
# training and the unseen ones). The mixed set is PFE's mixed-quality case: the clean and the
# corrupt twins stacked (tonpz | fromnpz: RUN/emb-SPLIT-mixed.hs).
#   ap_l2, ap_cos, ap_mls, ap_p   verification AP of 10,000 random pairs (pairscore | apcurve):
#            clean pairs, corrupt pairs (both images occluded), and mixed pairs (the first image
#            clean, the second corrupt, never twins: pairscore -g), scored by minus the Euclidean
#            distance of the means (--score l2), their cosine (--score cosine), the mutual
#            likelihood score of the Gaussians (--score mls: models with a variance) and the
#            model's own match probability (the default score, Monte Carlo K = 8: HIB's models)
#   knn_l2, knn_cos, knn_mls      5-NN accuracy by the same three rankings (knn -d mean,
#            --distance cosine, --distance mls): leave-one-out within the clean and within the
#            corrupt twins; mixed: the mixed set's queries against the clean twins as the
#            gallery, each query's own clean image left out (knn -g --exclude-id): probes of mixed
#            quality against a gallery of good images, as PFE's IJB protocols
#   on the mixed set, for models with a variance, its uncertainty u = the mean variance of each
#   query (knn's eta) on the 5-NN answers by the distance of the means (ktau -b 20):
#   auroc_corrupt, tau_corrupt    does u tell the corrupt queries from the clean ones (ktau -m
#            error:corrupt): the AUROC, P(u of a corrupt query > u of a clean one), and Kendall's
#            tau of the clean share against u's 20 bins (> 0: the corrupt share rises with u)
#   tau_knn, aurc, aurc_oracle    does u know when the answer is wrong (ktau -m accuracy:correct):
#            tau of the 5-NN accuracy over 20 bins of u (> 0: accuracy falls as u rises), the area
#            under the error-versus-reject curve and the oracle's (RUN/reject-SPLIT-mixed.tsv)
#   u:..., d:...  every set through evaluate's uncertainty section (RUN/eval-SET.json; the mixed
#            queries against the clean twins as knn's): common.sh's uncertainty_lines, read by
#            pipelines/finding.sh (BOOTSTRAP replicates, 1000)
# Files that exist are kept (a second call continues). Environment: SEED (714: the pairs and the
# order of equal uncertainties, the same for every run).
set -eu
. "$(dirname "$0")/common.sh"
name=$1 model=$2 run=$3
seed=${SEED:-714}
case $model in
backbone) var=0 prob=0 ;;
pfe | pfebn | pfetorch) var=1 prob=0 ;;
hibhead | hib) var=1 prob=1 ;;
*) say "pfe-eval: unknown model '$model' (backbone, pfe, pfebn, pfetorch, hibhead, hib)"; exit 2 ;;
esac
# res SET METRIC VALUE: a number (null or empty: an error), or none SET METRIC REASON
res() {
    case $3 in
    "" | null | *[!0-9.eE+-]*) say "pfe-eval: $name: $1 $2 is not a number: '$3'"; exit 1 ;;
    *) printf '%s\t%s\t%s\t%s\n' "$name" "$1" "$2" "$3" ;;
    esac
}
none() { printf '%s\t%s\t%s\t-\t%s\n' "$name" "$1" "$2" "$3"; }
# resj SET METRIC KEY FILE: the number KEY of the JSON in FILE; null (ktau: undefined, e.g. every
# query right) is "-" with the file's note
resj() {
    rj=$(json_get "$3" < "$4")
    if [ "$rj" = null ]; then
        none "$1" "$2" "undefined: $(jq -r '[.. | objects | .note? | strings] | last // empty' "$4") ($(basename "$4"))"
    else
        res "$1" "$2" "$rj"
    fi
}
novar="no variance (point embeddings)"
for split in seen unseen; do
    clean=$run/emb-$split-clean.hs corrupt=$run/emb-$split-corrupt.hs mixed=$run/emb-$split-mixed.hs
    for f in "$clean" "$corrupt"; do
        [ -s "$f" ] || { say "pfe-eval: $name: no $f"; exit 1; }
    done
    make_file "$mixed" sh -c 'tonpz "$1" "$2" | fromnpz -' sh "$clean" "$corrupt"
    for cond in clean corrupt mixed; do
        set=$split-$cond
        # verification AP, by each score the model has
        for sc in l2 cos mls p; do
            if [ $sc = mls ] && [ "$var" = 0 ]; then none "$set" ap_mls "$novar"; continue; fi
            if [ $sc = p ] && [ "$prob" = 0 ]; then
                none "$set" ap_p "no match probability (the $model model learns none)"; continue
            fi
            opt="--score $sc"
            [ $sc = cos ] && opt="--score cosine"
            [ $sc = p ] && opt=""
            pairs=$run/pairs-$set-$sc.hs
            case $cond in
            mixed) make_file "$pairs" pairscore $opt -S "$seed" -g "$corrupt" "$clean" ;;
            *) make_file "$pairs" pairscore $opt -S "$seed" "$run/emb-$set.hs" ;;
            esac
            make_file "$run/ap-$set-$sc.json" apcurve --json - "$pairs"
            res "$set" "ap_$sc" "$(json_get ap < "$run/ap-$set-$sc.json")"
        done
        # 5-NN accuracy by each ranking
        for dist in l2 cos mls; do
            if [ $dist = mls ] && [ "$var" = 0 ]; then none "$set" knn_mls "$novar"; continue; fi
            opt=""
            [ $dist = cos ] && opt="--distance cosine"
            [ $dist = mls ] && opt="--distance mls"
            knn=$run/knn-$set-$dist.hs
            case $cond in
            mixed) make_file "$knn" knn -k 5 $opt -g "$clean" --exclude-id "$mixed" ;;
            *) make_file "$knn" knn -k 5 $opt "$run/emb-$set.hs" ;;
            esac
            make_file "$run/knn-$set-$dist.json" knn --summary "$knn"
            res "$set" "knn_$dist" "$(json_get accuracy < "$run/knn-$set-$dist.json")"
        done
    done
    # the uncertainty battery (evaluate) on each set as its kNN is judged above (the mixed queries
    # against the clean twins, each one's own left out): every source, free and learned, against
    # each per-query loss, a learned one beside the best free baseline (pipelines/finding.sh)
    for cond in clean corrupt mixed; do
        set=$split-$cond
        j=$run/eval-$set.json
        case $cond in
        mixed) make_file "$j" evaluate -S "$seed" --bootstrap "${BOOTSTRAP:-1000}" -g "$clean" --exclude-id --json - "$mixed" ;;
        *) make_file "$j" evaluate -S "$seed" --bootstrap "${BOOTSTRAP:-1000}" --json - "$run/emb-$set.hs" ;;
        esac
        uncertainty_lines "$name" "$set" "$j"
    done
    # the variance on the mixed set: corrupt or clean, right or wrong
    set=$split-mixed
    if [ "$var" = 0 ]; then
        for m in auroc_corrupt tau_corrupt tau_knn aurc aurc_oracle; do none "$set" $m "$novar"; done
        continue
    fi
    make_file "$run/unc-$set-corrupt.json" ktau -b 20 -u eta -m error:corrupt -S "$seed" --json - \
        -o "$run/bins-$set-corrupt.tsv" "$run/knn-$set-l2.hs"
    make_file "$run/unc-$set-knn.json" ktau -b 20 -u eta -m accuracy:correct -S "$seed" --json - \
        -o "$run/bins-$set-knn.tsv" --reject-tsv "$run/reject-$set.tsv" "$run/knn-$set-l2.hs"
    resj "$set" auroc_corrupt auroc "$run/unc-$set-corrupt.json"
    resj "$set" tau_corrupt tau "$run/unc-$set-corrupt.json"
    resj "$set" tau_knn tau "$run/unc-$set-knn.json"
    resj "$set" aurc aurc "$run/unc-$set-knn.json"
    resj "$set" aurc_oracle aurc_oracle "$run/unc-$set-knn.json"
done
