#!/bin/sh
# train with the losses of a weight vector per class of the training stream (its meta classes),
# learned beside the network: CosFace and ArcFace (lib/training/loss_margin.c), ProxyNCA and
# Proxy-Anchor (lib/training/loss_proxy.c); they learn (5-NN accuracy on the test classes above
# the untrained network's), the same seed gives the same bytes, a resumed run
# is the uninterrupted one, the class weights and their class count are in the checkpoint, a
# resumed run on a stream of other classes is refused, and so are a mixture head and --scale
# for another loss.
set -u
. "$(dirname "$0")/../lib.sh"
cd "$T"
mkdigits -N 2 -s train -n 20000 | occlude -p 0.2 > train.hs || fail "mkdigits train"
mkdigits -N 2 -s test-seen | occlude -p 0 > test.hs || fail "mkdigits test"
mkdigits -N 2 -s test-unseen -n 2000 > other.hs || fail "mkdigits unseen"
pk() { batcher -m pk -P 16 -K 4 "$@" < "$T/train.hs"; }
acc() { embed -m "$1" < test.hs | knn | knn --summary | json_get accuracy; }
pk | train -o u.ckpt --head point --loss arcface -D 8 -n 1 -t 1 --lr 1e-12 2>/dev/null || fail "untrained"
u=$(acc u.ckpt)
for l in cosface arcface proxynca proxy-anchor; do
    pk | train -o $l.ckpt --head point --loss $l -D 8 -n 300 -t 1 --lr 3e-3 --log $l.log 2>/dev/null || fail "train $l"
    a=$(acc $l.ckpt)
    echo "$l: 5-NN accuracy $a (untrained $u, chance 1/70), last batch accuracy $(tail -n 1 $l.log | cut -f11)"
    check_lt 0.3 "$a" "$l: 5-NN accuracy $a is not far above chance"
    check_lt "$u" "$a" "$l: 5-NN accuracy $a is not above the untrained network's $u"
    n=$(tshow -H $l.ckpt | jq -r .meta.loss_classes)
    [ "$n" = "$(tshow -H train.hs | jq -r .meta.classes.count)" ] || fail "$l: loss_classes $n"
    tshow -H $l.ckpt | jq -e --arg f "param.$l.w" '.fields[] | select(.name == $f) | .shape == ['"$n"', 8]' > /dev/null ||
        fail "$l: no param.$l.w of ($n, 8)"
done
[ "$(tshow -H arcface.ckpt | jq -c '[.meta.margin, .meta.scale]')" = '[0.5,64]' ] || fail "arcface's margin and scale"
[ "$(tshow -H cosface.ckpt | jq -c '[.meta.margin, .meta.scale]')" = '[0.35,64]' ] || fail "cosface's margin and scale"
[ "$(tshow -H proxy-anchor.ckpt | jq -c '[.meta.pa_alpha, .meta.pa_delta]')" = '[32,0.1]' ] || fail "proxy-anchor's settings"
[ "$(tshow -H proxynca.ckpt | jq -c '.meta.proxy_scale')" = 1 ] || fail "proxynca's scale"

# DUL_cls: ArcFace on samples of a mixture head's Gaussian, plus the KL; it learns, and its
# embeddings carry the learned variance
pk | train -o dul.ckpt --head mog -C 1 --loss dul-cls -D 8 -n 300 -t 1 --lr 3e-3 --log dul.log 2>/dev/null || fail "train dul-cls"
a=$(acc dul.ckpt)
echo "dul-cls: 5-NN accuracy $a (untrained $u), last KL $(tail -n 1 dul.log | cut -f4), mean variance $(tail -n 1 dul.log | cut -f7)"
check_lt "$u" "$a" "dul-cls: 5-NN accuracy $a is not above the untrained network's $u"
[ "$(tshow -H dul.ckpt | jq -c '[.meta.head, .meta.margin, .meta.scale, .meta.dul_lambda]')" = '["mog",0.5,64,0.01]' ] ||
    fail "dul-cls's settings: $(tshow -H dul.ckpt | jq -c .meta)"
embed -m dul.ckpt < test.hs | tshow -H | jq -e '[.fields[].name] | index("var") != null' > /dev/null ||
    fail "dul-cls's embeddings have no variance"
expect_exit 2 "dul-cls on a point head" sh -c 'train -o x.ckpt --head point --loss dul-cls < /dev/null'
# losspred: ArcFace on the means, the iso head's variance ranking each item's own loss
pk | train -o lp.ckpt --loss losspred -D 8 -n 300 -t 1 --lr 3e-3 --log lp.log 2>/dev/null || fail "train losspred"
a=$(acc lp.ckpt)
echo "losspred: 5-NN accuracy $a (untrained $u), last ranking loss $(tail -n 1 lp.log | cut -f4) (from $(sed -n 2p lp.log | cut -f4))"
check_lt "$u" "$a" "losspred: 5-NN accuracy $a is not above the untrained network's $u"
[ "$(tshow -H lp.ckpt | jq -c '[.meta.head, .meta.margin, .meta.scale, .meta.lp_lambda, .meta.lp_margin]')" = '["iso",0.5,64,1,1]' ] ||
    fail "losspred's settings: $(tshow -H lp.ckpt | jq -c .meta)"
check_lt "$(tail -n 1 lp.log | cut -f4)" "$(sed -n 2p lp.log | cut -f4)" "losspred: the ranking loss did not fall"
# scf: ArcFace on the means, the iso head's kappa = 1 / var learning the KL to its class centre
pk | train -o scf.ckpt --loss scf -D 8 -n 300 -t 1 --lr 3e-3 --log scf.log 2>/dev/null || fail "train scf"
a=$(acc scf.ckpt)
echo "scf: 5-NN accuracy $a (untrained $u), KL term $(sed -n 2p scf.log | cut -f4) -> $(tail -n 1 scf.log | cut -f4), mean variance $(tail -n 1 scf.log | cut -f7)"
check_lt "$u" "$a" "scf: 5-NN accuracy $a is not above the untrained network's $u"
check_lt "$(tail -n 1 scf.log | cut -f4)" "$(sed -n 2p scf.log | cut -f4)" "scf: the KL term did not fall"
[ "$(tshow -H scf.ckpt | jq -c '[.meta.head, .meta.scf_lambda]')" = '["iso",1]' ] || fail "scf's settings: $(tshow -H scf.ckpt | jq -c .meta)"
# dul-rgs: ArcFace on the means, each item's Gaussian regressing its class centre
pk | train -o rgs.ckpt --head mog -C 1 --loss dul-rgs -D 8 -n 300 -t 1 --lr 3e-3 --log rgs.log 2>/dev/null || fail "train dul-rgs"
a=$(acc rgs.ckpt)
echo "dul-rgs: 5-NN accuracy $a (untrained $u), regression NLL $(sed -n 2p rgs.log | cut -f4) -> $(tail -n 1 rgs.log | cut -f4)"
check_lt "$u" "$a" "dul-rgs: 5-NN accuracy $a is not above the untrained network's $u"
check_lt "$(tail -n 1 rgs.log | cut -f4)" "$(sed -n 2p rgs.log | cut -f4)" "dul-rgs: the regression's NLL did not fall"
# vmf-fl: the softmax of kappa x cos over the class weights, kappa = 1 / var the item's own; the
# concentration is learned as a confidence: the right items' kappa above the wrong ones'
pk | train -o vf.ckpt --loss vmf-fl -D 8 -n 300 -t 1 --lr 3e-3 --log vf.log 2>/dev/null || fail "train vmf-fl"
a=$(acc vf.ckpt)
echo "vmf-fl: 5-NN accuracy $a (untrained $u), loss $(sed -n 2p vf.log | cut -f2) -> $(tail -n 1 vf.log | cut -f2), mean variance $(tail -n 1 vf.log | cut -f7)"
check_lt "$u" "$a" "vmf-fl: 5-NN accuracy $a is not above the untrained network's $u"
check_lt "$(tail -n 1 vf.log | cut -f2)" "$(sed -n 2p vf.log | cut -f2)" "vmf-fl: the loss did not fall"
[ "$(tshow -H vf.ckpt | jq -c '.meta.head')" = '"iso"' ] || fail "vmf-fl's head: $(tshow -H vf.ckpt | jq -c .meta)"

# same seed, same bytes; 20 + 20 steps equal 40 straight, with settings of their own
check_repeat_resume pk --head point --loss arcface -D 4 -S 3 -t 1 --margin 0.3 --scale 16
cp "$T/resumed.ckpt" r.ckpt
[ "$(tshow -H r.ckpt | jq -c '[.meta.margin, .meta.scale]')" = '[0.3,16]' ] || fail "settings after resume"

expect_fail 1 "batch stream has" sh -c 'batcher -m pk -P 8 -K 2 < other.hs | train --resume r.ckpt -n 60 -t 1'
expect_exit 2 "arcface on a mixture head" sh -c 'train -o x.ckpt --head mog --loss arcface < /dev/null'
expect_exit 2 "--scale with triplet" sh -c 'train -o x.ckpt --head point --loss triplet --scale 3 < /dev/null'
expect_exit 2 "--margin 2 with cosface" sh -c 'train -o x.ckpt --head point --loss cosface --margin 2 < /dev/null'
pass
