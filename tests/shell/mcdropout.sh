#!/bin/sh
# mcdropout: MC dropout (train --dropout P, embed --mc T; issue 47 item 4) on a features model.
# A run with dropout gives the same parameters at 1 and 2 threads, twice, and resumed
# (check_repeat_resume); the checkpoint stores dropout, a run without it stores none and keeps the
# bytes of a model trained without the option; embed --mc gives the same records at any -b and -t,
# other ones with another -S, a Gaussian per item (model mog, mc_samples, var > 0) whose mean is
# near the forward without dropout's; evaluate judges its variance as a learned source. Refusals,
# one line each: --mc of a model without dropout, -S without --mc, --mc 1, --dropout on the conv
# and linear bodies, --dropout 0.95. The data: 8 classes of 24-d vectors made by numpy.
set -u
. "$(dirname "$0")/../lib.sh"
PY=/usr/bin/python3
cd "$T" || fail "cd $T"
$PY - <<'PYEOF' || fail "python3 could not write feat.npz"
import numpy as np
r = np.random.default_rng(5)
n, F, k = 600, 24, 8
y = np.arange(n) % k
x = r.normal(size=(k, F))[y] + r.normal(size=(n, F)) * (0.5 + r.random(n))[:, None]
np.savez("feat.npz", features=x.astype(np.float32), labels=y)
PYEOF
fromnpz -k features feat.npz > feat.hs 2> err || fail "fromnpz: $(cat err)"
feed() { batcher -m pk -P 8 -K 8 -S 3 "$T/feat.hs"; }
check_repeat_resume feed --body mlp:32,16 --head point --loss triplet --dropout 0.2 -D 6 -S 5 -t 2
feed | train -o d.ckpt --body mlp:32,16 --head point --loss triplet --dropout 0.2 -D 6 -n 150 -S 5 -t 1 2> err || fail "train --dropout: $(cat err)"
[ "$(tshow -m dropout d.ckpt)" = 0.200000003 ] || fail "the checkpoint's dropout: $(tshow -m dropout d.ckpt 2>&1)"
feed | train -o p.ckpt --body mlp:32,16 --head point --loss triplet -D 6 -n 150 -S 5 -t 1 2> err || fail "train: $(cat err)"
feed | train -o p0.ckpt --body mlp:32,16 --head point --loss triplet --dropout 0 -D 6 -n 150 -S 5 -t 1 2> err || fail "train --dropout 0"
tshow -m dropout p.ckpt > /dev/null 2>&1 && fail "a run without dropout stored a dropout"
totsv p.ckpt > p.tsv && totsv p0.ckpt > p0.tsv && cmp -s p.tsv p0.tsv || fail "--dropout 0 changed the training"
totsv d.ckpt > d.tsv && cmp -s d.tsv p.tsv && fail "--dropout 0.2 trained the same parameters as none"
# embed --mc
embed -m d.ckpt --mc 12 < feat.hs > a.hs 2> err || fail "embed --mc: $(cat err)"
embed -m d.ckpt --mc 12 -b 7 -t 2 < feat.hs > b.hs || fail "embed --mc -b 7 -t 2"
totsv a.hs > a.tsv && totsv b.hs > b.tsv && cmp -s a.tsv b.tsv || fail "embed --mc: other records at -b 7 -t 2"
embed -m d.ckpt --mc 12 -S 9 < feat.hs | totsv > c.tsv && cmp -s a.tsv c.tsv && fail "embed --mc -S 9: the same records as -S 714"
tshow -H a.hs | jq -e '.meta.model == "mog" and .meta.mc_samples == 12 and ([.fields[].name] | index("var") != null)' > /dev/null ||
    fail "embed --mc's header: $(tshow -H a.hs | jq -c .meta)"
embed -m d.ckpt < feat.hs > plain.hs || fail "embed"
tonpz a.hs > a.npz && tonpz plain.hs > plain.npz || fail "tonpz"
$PY - <<'PYEOF' || fail "the MC moments"
import numpy as np
a, p = np.load("a.npz"), np.load("plain.npz")
v = a["var"]
assert v.shape == a["mu"].shape and (v >= 1e-6).all() and v.mean() > 1e-3, ("var", v.min(), v.mean())
# inverted dropout: the mean of the passes is near the forward without dropout (not equal: ReLUs)
rel = np.abs(a["mu"] - p["mu"]).mean() / np.abs(p["mu"]).mean()
assert rel < 0.25, ("mean off the forward without dropout by", rel)
print("mcdropout: mean variance %.4g, the MC mean within %.3f (relative) of the forward without dropout" % (v.mean(), rel))
PYEOF
evaluate --bootstrap 50 --json ev.json a.hs > /dev/null 2> err || fail "evaluate: $(cat err)"
jq -e '.input.uncertainty.var.r1.auroc != null and .input.verdict.var.r1.auroc.baseline != null' ev.json > /dev/null ||
    fail "evaluate did not judge the MC variance: $(jq -c '.input.uncertainty | keys' ev.json)"
# refusals
expect_exit 2 "embed --mc of a model without dropout" sh -c 'embed -m p.ckpt --mc 5 < feat.hs'
grep -q "trained without dropout" "$T/expect.err" || fail "no reason: $(cat "$T/expect.err")"
expect_exit 2 "embed -S without --mc" sh -c 'embed -m d.ckpt -S 3 < feat.hs'
expect_exit 2 "embed --mc 1" sh -c 'embed -m d.ckpt --mc 1 < feat.hs'
expect_exit 2 "train --dropout 0.95" sh -c 'train -o x.ckpt --dropout 0.95 < feat.hs'
batcher -m pairs -b 8 -n 4 -S 1 feat.hs > pairs.hs || fail "batcher pairs"
expect_exit 1 "--dropout on the linear body" sh -c 'train -o x.ckpt --body linear --dropout 0.3 -n 2 < pairs.hs'
grep -q "only the mlp body has dropout" "$T/expect.err" || fail "linear: $(cat "$T/expect.err")"
mkdigits -N 2 -n 64 --per-class 1 -s train 2> /dev/null | batcher -m pairs -b 8 -n 4 > img.hs || fail "mkdigits | batcher"
expect_exit 1 "--dropout on the conv body" sh -c 'train -o x.ckpt --dropout 0.3 -n 2 < img.hs'
grep -q "only the mlp body has dropout" "$T/expect.err" || fail "conv: $(cat "$T/expect.err")"
[ -e x.ckpt ] && fail "a refused run left a checkpoint"
pass
