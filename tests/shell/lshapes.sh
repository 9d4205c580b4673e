#!/bin/sh
# train and embed on the SPE paper's L-shapes (mkshapes: uint8 [3, 64, 64], RGB planes): the
# network takes its input geometry from the stream and the checkpoint records it; the same
# bytes for any thread count and exact resume on that geometry; proto (PN) and spe (SPE) learn
# the four classes (query accuracy of the last training episodes, then 4-way 5-shot on fresh
# test images, both well above chance 0.25); embed and train --resume refuse images of another
# size than the model's; bad geometries in streams and checkpoints are refused.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$(dirname "$0")/../lib.sh"
cd "$T"
mkshapes -n 2000 > train.hs || fail "mkshapes train"
mkshapes -s test -n 1000 > test.hs || fail "mkshapes test"
mkdigits -N 2 -s test-seen -n 500 > digits.hs || fail "mkdigits"
eps() { batcher -m episodes -s 5 -q 5 -S 5 "$@" < "$T/train.hs"; }

# the checkpoint records the input: 3 channels of 64 x 64, no digits; conv1 takes 3 channels
eps | train -o a.ckpt --head mog -C 1 -D 2 --loss spe -n 20 -S 3 -t 1 2>/dev/null || fail "train spe -t 1"
tshow -H a.ckpt | /usr/bin/python3 -c '
import json, sys
h = json.load(sys.stdin)
m, f = h["meta"], {x["name"]: x["shape"] for x in h["fields"]}
assert (m["channels"], m["height"], m["width"]) == (3, 64, 64), m
assert "digits" not in m, m
assert f["param.conv1.w"] == [6, 3, 5, 5] and f["param.fc1.w"] == [120, 16 * 16 * 16], f
' || fail "the checkpoint does not record the 3 x 64 x 64 input"

# two threads give the same parameters and optimizer state; 10 + 10 steps equal 20
eps | train -o t2.ckpt --head mog -C 1 -D 2 --loss spe -n 20 -S 3 -t 2 2>/dev/null || fail "train spe -t 2"
totsv a.ckpt > a.tsv && totsv t2.ckpt > t2.tsv || fail "totsv"
cmp -s a.tsv t2.tsv || fail "2 threads gave other parameters than 1 thread on 3 x 64 x 64 images"
eps | train -o r.ckpt --head mog -C 1 -D 2 --loss spe -n 10 -S 3 -t 1 2>/dev/null || fail "train spe r"
eps | train --resume r.ckpt -n 20 -t 2 2>/dev/null || fail "resume spe"
totsv r.ckpt > r.tsv || fail "totsv r"
cmp -s a.tsv r.tsv || fail "a resumed run on 3 x 64 x 64 images differs from the uninterrupted one"
# pair batches of colour images feed the network too
batcher -m pairs -b 16 -n 3 < train.hs | train -o pairs.ckpt --head mog -D 2 -n 3 -t 1 2>/dev/null ||
    fail "train on pair batches of L-shapes"

# learning: 300 episodes of the 4 classes x (5 + 5); chance is 0.25
eps | train -o pn.ckpt --head point -D 2 --loss proto -n 300 -t 2 --lr 3e-3 --log pn.log 2>/dev/null || fail "train proto"
eps | train -o spe.ckpt --head mog -C 1 -D 2 --loss spe -n 300 -t 2 --lr 3e-3 --log spe.log 2>/dev/null || fail "train spe"
for m in pn spe; do
    # the mean query accuracy of the last three logged steps (200, 250, 300)
    acc=$(tail -n 3 $m.log | awk -F'\t' '{ s += $11 } END { print s / NR }')
    check_lt 0.5 "$acc" "$m: query accuracy $acc of the last training episodes is not well above chance (0.25)"
    embed -m $m.ckpt < test.hs > e-$m.hs || fail "embed $m"
    tshow -H e-$m.hs | grep -q '"name": "orientation"' || fail "embed did not pass the L-shapes' fields through"
    fewshot -s e-$m.hs -k 5 -q 5 -R 200 --json fs-$m.json e-$m.hs > /dev/null || fail "fewshot $m"
    acc=$(sed 's/.*"pn": {"accuracy": \([^,]*\).*/\1/' fs-$m.json)
    echo "$m: training query accuracy (last 3 logged) $(tail -n 3 $m.log | cut -f11 | tr '\n' ' ')" \
        "4-way 5-shot test accuracy $acc"
    check_lt 0.6 "$acc" "$m: 4-way 5-shot accuracy $acc on test L-shapes is not well above chance (0.25)"
done

# images of another size than the model's: embed and train --resume refuse them, naming both
batcher -m episodes -c 4 -n 2 < digits.hs | train -o d.ckpt --head point -D 2 --loss proto -n 2 -t 1 2>/dev/null ||
    fail "train on digits"
tshow -H d.ckpt | grep -q '"digits": 2' || fail "a digits model's checkpoint does not say digits"
tshow -H d.ckpt | grep -q '"channels"' && fail "a one-channel checkpoint records channels (absent = 1)"
expect_fail 1 "embed: images are 3x64x64 but the model d.ckpt was trained on 1x28x56" sh -c 'embed -m d.ckpt < test.hs'
expect_fail 1 "embed: images are 1x28x56 but the model pn.ckpt was trained on 3x64x64" sh -c 'embed -m pn.ckpt < digits.hs'
expect_fail 1 "train: d.ckpt: the model was trained on 1x28x56 images, the batches hold 3x64x64 images" \
    sh -c 'batcher -m episodes -n 2 < train.hs | train --resume d.ckpt -o x.ckpt -t 1'
expect_fail 1 "train: pn.ckpt: the model was trained on 3x64x64 images, the batches hold 1x28x56 images" \
    sh -c 'batcher -m episodes -c 4 -n 2 < digits.hs | train --resume pn.ckpt -o x.ckpt -t 1'

# crafted: images the network cannot take, and checkpoints whose geometry is bad or hostile
/usr/bin/python3 - <<'EOF' || fail "python3 could not craft the test streams"
import copy, msgpack
def load(path):
    return list(msgpack.Unpacker(open(path, "rb"), raw=False, strict_map_key=False))
def save(path, objs):
    with open(path, "wb") as f:
        for o in objs:
            f.write(msgpack.packb(o, use_bin_type=True))
def episodes(path, shape):
    n = 1
    for s in shape:
        n *= s
    h = {"format": "hedge-stream", "version": 1, "kind": "episodes", "batched": True,
         "fields": [{"name": "image", "dtype": "uint8", "shape": shape},
                    {"name": "class", "dtype": "int32", "shape": []},
                    {"name": "query", "dtype": "uint8", "shape": []}],
         "meta": {"ways": 2, "shots": 1, "queries": 1}, "provenance": {"program": "craft", "args": [], "input": []}}
    r = {"image": {"dtype": "uint8", "shape": [4] + shape, "data": bytes(4 * n)},
         "class": {"dtype": "int32", "shape": [4], "data": bytes([0, 0, 0, 0, 1, 0, 0, 0] * 2)},
         "query": {"dtype": "uint8", "shape": [4], "data": bytes([0, 0, 1, 1])}}
    save(path, [h, r, {"end": 1}])
episodes("odd.hs", [3, 30, 32])
episodes("five.hs", [5, 8, 8])
episodes("big.hs", [1, 256, 256])
episodes("flat.hs", [64])
h, rec, end = load("pn.ckpt")
def variant(path, fh):
    H = copy.deepcopy(h)
    fh(H["meta"])
    save(path, [H, rec, end])
variant("c5.ckpt", lambda m: m.__setitem__("channels", 5))
variant("huge.ckpt", lambda m: (m.__setitem__("height", 4096), m.__setitem__("width", 4096)))
variant("h30.ckpt", lambda m: m.__setitem__("height", 30))
variant("nowidth.ckpt", lambda m: m.pop("width"))
variant("c1.ckpt", lambda m: m.pop("channels"))
variant("digits.ckpt", lambda m: m.__setitem__("digits", 2))
d, drec, dend = load("d.ckpt")
D = copy.deepcopy(d)
D["meta"].pop("height"), D["meta"].pop("width")
save("d-nosize.ckpt", [D, drec, dend])
EOF
expect_fail 1 "input images are 3x30x32: height 30 is not a positive multiple of 4" sh -c 'train -o x.ckpt --head point --loss proto -n 1 < odd.hs'
expect_fail 1 "5 channels, the network takes 1 to 4" sh -c 'train -o x.ckpt --head point --loss proto -n 1 < five.hs'
expect_fail 1 "pixels, more than 16384" sh -c 'train -o x.ckpt --head point --loss proto -n 1 < big.hs'
expect_fail 1 "field 'image' is uint8 [64], expected uint8 images, [H, W] or [C, H, W]" sh -c 'train -o x.ckpt --head point --loss proto -n 1 < flat.hs'
expect_fail 1 "c5.ckpt: checkpoint header 'channels' is 5, outside [1, 4]" sh -c 'embed -m c5.ckpt < test.hs'
expect_fail 1 "pixels, more than 16384" sh -c 'embed -m huge.ckpt < test.hs'
expect_fail 1 "height 30 is not a positive multiple of 4" sh -c 'embed -m h30.ckpt < test.hs'
expect_fail 1 "checkpoint header has no 'width'" sh -c 'embed -m nowidth.ckpt < test.hs'
expect_fail 1 "param.conv1.w" sh -c 'embed -m c1.ckpt < test.hs'
expect_fail 1 "does not match 2 digits" sh -c 'embed -m digits.ckpt < test.hs'
embed -m d-nosize.ckpt < digits.hs > /dev/null || fail "a digits checkpoint without height and width is refused"
[ ! -e x.ckpt ] || fail "a refused train left x.ckpt behind"
# pipelines/shapes.sh end to end, briefly: the summary table and Figure 3's two sweeps
tab=$(printf '\t')
BUILD=$(dirname "$BIN") REPEATS=20 sh "$root/pipelines/shapes.sh" -s 30 -t 1 "$T/pipe" > "$T/pipe.md" 2> "$T/pipe.err" ||
    fail "shapes.sh: $(tail -n 5 "$T/pipe.err")"
grep -q '^| Bayes-optimal accuracy of the generator | 0.870842 | about 0.87 |$' "$T/pipe.md" || fail "shapes.sh: no Bayes row: $(cat "$T/pipe.md")"
grep -q '^| few-shot accuracy, .* | 0\.[0-9]* ± 0\.[0-9]* | about 0.86 |$' "$T/pipe.md" || fail "shapes.sh: no accuracy row"
[ "$(grep -c "^90$tab" "$T/pipe/fig3-hue.tsv")" = 4 ] || fail "shapes.sh: fig3-hue.tsv lacks the 4 classes at hue noise 90"
[ "$(grep -c "^0.2$tab" "$T/pipe/fig3-legs.tsv")" = 4 ] || fail "shapes.sh: fig3-legs.tsv lacks the 4 classes at legs 0.2"
pass
