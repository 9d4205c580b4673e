#!/bin/sh
# disentangle: the per-value AUC of the best dimension on a hand-derived case, embeddings built so
# that one dimension encodes one attribute (2-digit `digits` fields, L-shapes class centres, a
# mixture, -a FIELD), the attribute summaries (main and distinct dimensions, sharing), and bad
# input. Fixtures: tests/unit/test_evalfix.c (table, cols) and /usr/bin/python3 with msgpack and
# numpy for the larger ones.
. "$(dirname "$0")/../lib.sh"
FIX=$BIN/../tests/test_evalfix
[ -x "$FIX" ] || fail "$FIX is not built"
PY=/usr/bin/python3
$PY -c 'import msgpack, numpy' 2>/dev/null || fail "$PY has no msgpack or numpy"

# --- by hand: 6 items, mu = (x, i + 1), digit1 in groups [0 1 1 2 1 0], digit2 [0 0 0 1 1 1].
# x = 0.3 0.1 0.3 0.7 0.5 0.1 has midranks 3.5 1.5 3.5 6 5 1.5 (tests/unit/test_disentangle.c).
# digit1 = 0, items {0.3, 0.1} against {0.1, 0.3, 0.7, 0.5}: U = 1.5 + 0.5 = 2 of 8, AUC 0.25;
#   on dim 1 (ranks 1 and 6): U = 7 - 3 = 4 of 8, 0.5. Best: dim 0, separation 0.75.
# digit1 = 1, items {0.1, 0.3, 0.5}: U = 4 of 9 on dim 0; on dim 1 ranks 2 3 5: U = 10 - 6 = 4
#   again. Equal separations 5/9: the lowest dimension, 0.
# digit1 = 2, item 0.7: AUC 1 on dim 0 (rank 4 of 6 on dim 1: 3 of 5, 0.6). Best dim 0, 1.
#   mean (0.75 + 5/9 + 1) / 3 = 0.768519; main dim 0 for all three values.
# digit2 = 1, items 3..5 (x 0.7 0.5 0.1 against 0.3 0.1 0.3: U = 3 + 3 + 0.5 = 6.5 of 9 on
#   dim 0; ranks 4 5 6 on dim 1: AUC 1): best dim 1, AUC 1; digit2 = 0 the mirror: dim_auc 0 on
#   dim 1, separation 1.
# Overall, the paper's pool: digit1's three values and digit2 once: (0.75 + 5/9 + 1 + 1) / 4 =
#   0.826389.
cat >"$T/hand.txt" <<'EOF'
0.3 1 0 0
0.1 2 1 0
0.3 3 1 0
0.7 4 2 1
0.5 5 1 1
0.1 6 0 1
EOF
"$FIX" table embeddings mu:float32:1x2 digits:uint8:2 <"$T/hand.txt" >"$T/hand" || fail "hand fixture"
"$BIN/disentangle" --json "$T/hand.json" "$T/hand" >"$T/hand.out" || fail "disentangle exited $?"
"$FIX" cols attribute value n_pos best_dim auc dim_auc <"$T/hand.out" >"$T/c" || fail "cols"
cat >"$T/want" <<'EOF'
kind disentangle
0 0 2 0 0.75 0.25 0.5
0 1 3 0 0.555555582 0.444444448 0.444444448
0 2 1 0 1 1 0.600000024
1 0 3 1 1 0.277777791 0
1 1 3 1 1 0.722222209 1
EOF
cmp -s "$T/want" "$T/c" || fail "hand records: $(cat "$T/c")"
grep -q '"mean": 0.8263888889, "mean_values": 4, ' "$T/hand.json" || fail "hand json mean: $(cat "$T/hand.json")"
grep -q '{"name": "digit1", "values": 3, "auc": 0.7685185185, "main_dim": 0, "main_count": 3, "distinct_dims": 1}' \
    "$T/hand.json" || fail "hand json digit1: $(cat "$T/hand.json")"
grep -q '{"name": "digit2", "values": 2, "auc": 1, "main_dim": 1, "main_count": 2, "distinct_dims": 1}' \
    "$T/hand.json" || fail "hand json digit2: $(cat "$T/hand.json")"
grep -q '"shared": \[\]}$' "$T/hand.json" || fail "hand json shared: $(cat "$T/hand.json")"
[ "$(wc -l <"$T/hand.json")" -eq 1 ] || fail "json is not one line"
# the header: names, per-attribute means, main dimensions, the overall mean
tshow -H "$T/hand.out" >"$T/hand.h" || fail "tshow"
$PY - "$T/hand.h" <<'EOF' || fail "hand header: $(cut -c1-600 "$T/hand.h")"
import json, sys
m = json.load(open(sys.argv[1]))["meta"]
assert m["attributes"] == "digit1,digit2", m["attributes"]
assert m["attribute_source"] == "digits"
def tens(k):
    t = m[k]
    return t["values"] if "values" in t else t
print(m["attribute_auc"], m["attribute_main_dim"], m["auc_mean"], file=sys.stderr)
assert abs(m["auc_mean"] - 0.826388888888) < 1e-9
assert m["auc_mean_values"] == 4 and m["items"] == 6 and m["shared_main_dims"] == 0
EOF
"$BIN/disentangle" --table "$T/hand" >"$T/tab" || fail "--table"
grep -Eq '^digit1 +3 +0\.768519 +0:3$' "$T/tab" || fail "table digit1: $(cat "$T/tab")"
grep -Eq '^digit2 +2 +1\.000000 +1:2$' "$T/tab" || fail "table digit2: $(cat "$T/tab")"
grep -qx 'mean 0.826389 over 4 values' "$T/tab" || fail "table mean: $(cat "$T/tab")"
grep -q '^shared: none' "$T/tab" || fail "table shared: $(cat "$T/tab")"
# the records do not depend on the record order
tac "$T/hand.txt" | "$FIX" table embeddings mu:float32:1x2 digits:uint8:2 | "$BIN/disentangle" |
    "$FIX" cols attribute value n_pos best_dim auc dim_auc | cmp -s - "$T/want" || fail "record order changed the result"

# --- fixtures where one dimension encodes one attribute (python: msgpack + numpy)
cat >"$T/mk.py" <<'EOF'
import struct, sys
import msgpack, numpy as np
def t(arr, dtype):
    a = np.asarray(arr, dtype=dtype)  # (np.ascontiguousarray would make a scalar 1-d)
    return {"dtype": np.dtype(dtype).name, "shape": list(a.shape), "data": a.astype(np.dtype(dtype).newbyteorder("<")).tobytes()}
def write(path, fields, rows, meta, kind="embeddings", end=None):
    h = {"format": "hedge-stream", "version": 1, "kind": kind, "batched": False,
         "fields": [{"name": n, "dtype": np.dtype(d).name, "shape": list(s)} for n, d, s in fields],
         "meta": meta, "provenance": {"program": "mk.py", "args": sys.argv[1:], "input": []}}
    with open(path, "wb") as f:
        f.write(msgpack.packb(h, use_bin_type=True))
        for r in rows:
            f.write(msgpack.packb({n: t(r[n], d) for n, d, s in fields}, use_bin_type=True))
        f.write(msgpack.packb({"end": len(rows) if end is None else end}, use_bin_type=True))
mode, path = sys.argv[1], sys.argv[2]
rng = np.random.default_rng(714)
rows = []
if mode in ("binary", "mog", "onehot", "linear", "undef"):
    # 2-digit style: digits uint8 [2], a full factorial design (every pair of values equally often)
    vals = {"binary": [3, 8], "mog": [3, 8], "onehot": range(10), "linear": range(10), "undef": range(10)}[mode]
    reps = {"binary": 100, "mog": 100, "onehot": 2, "linear": 40, "undef": 20}[mode]
    pairs = [(a, b) for a in vals for b in vals for _ in range(reps)]
    if mode == "undef":
        pairs = [(a, 5) for a, b in pairs]
    order = rng.permutation(len(pairs))
    C = 2 if mode == "mog" else 1
    for k, i in enumerate(order):
        d1, d2 = pairs[i]
        if mode in ("binary", "mog", "undef"):
            # dim 1 encodes digit1 (3 -> 0, 8 -> 1), dim 3 digit2 upside down; 0 and 2 are noise
            x = [rng.normal(), (d1 == 8) + 0.1 * rng.normal(), rng.normal(), -(d2 == 8) + 0.1 * rng.normal()]
        elif mode == "onehot":
            x = [float(d1 == v) for v in range(10)] + [float(d2 == v) for v in range(10)] + [rng.normal()]
        else:
            # linear: dim 0 = digit1, dim 1 noise, dim 2 = digit2 (no noise: ties within a digit)
            x = [d1, rng.normal(), d2]
        x = np.array(x)
        if C == 2:
            r = rng.normal(scale=100, size=x.size)    # the components differ; their average is x
            mu = np.stack([x + r, x - r])
        else:
            mu = x[None, :]
        rows.append({"mu": mu, "digits": [d1, d2], "class": 10 * d1 + d2, "id": k})
    D = rows[0]["mu"].shape[1]
    write(path, [("mu", "float32", (C, D)), ("digits", "uint8", (2,)), ("class", "int32", ()), ("id", "int64", ())],
          rows, {"digits": 2, "C": C, "D": D})
elif mode in ("shapes", "shapes-oneorient"):
    # mkshapes' fields and meta: class c has orientation centre oc[c], hue centre hc[c]
    oc = [90.0, 180.0, 90.0, 180.0] if mode == "shapes" else [90.0] * 4
    hc = [90.0, 90.0, 180.0, 180.0]
    for k in range(400):
        c = int(rng.integers(4))
        o = (oc[c] + 30 * rng.normal()) % 360
        hu = (hc[c] + 30 * rng.normal()) % 360
        # dim 0 noise, dim 1 the hue class, dim 2 the orientation class (a little noise each)
        mu = [[rng.normal(), hc[c] / 90 + 0.05 * rng.normal(), -oc[c] / 90 + 0.05 * rng.normal()]]
        rows.append({"mu": mu, "class": c, "id": k, "orientation": o, "hue": hu})
    write(path, [("mu", "float32", (1, 3)), ("class", "int32", ()), ("id", "int64", ()),
                 ("orientation", "float32", ()), ("hue", "float32", ())], rows,
          {"dataset": "lshapes", "classes": t([0, 1, 2, 3], "int32"), "orientation_centres": t(oc, "float32"),
           "hue_centres": t(hc, "float32"), "angle_unit": "degrees", "C": 1, "D": 3})
elif mode == "labels":
    # generic integer fields: lab int32 [] encoded by dim 2, pair int32 [2] by dims 0 and 1, f float32
    for k in range(300):
        lab, p0, p1 = int(rng.integers(2)) * 7 - 3, int(rng.integers(2)), int(rng.integers(2))
        mu = [[p0 + 0.1 * rng.normal(), p1 + 0.1 * rng.normal(), lab + 0.1 * rng.normal()]]
        rows.append({"mu": mu, "lab": lab, "pair": [p0, p1], "f": 0.5, "id": k})
    write(path, [("mu", "float32", (1, 3)), ("lab", "int32", ()), ("pair", "int32", (2,)), ("f", "float32", ()),
                 ("id", "int64", ())], rows, {"C": 1, "D": 3})
elif mode in ("nan", "inf", "nodigits", "empty", "images", "badclass"):
    n = 0 if mode == "empty" else 5
    for k in range(n):
        mu = [[float(k), 1.0]]
        if k == 3 and mode in ("nan", "inf"):
            mu = [[float("nan") if mode == "nan" else float("inf"), 1.0]]
        rows.append({"mu": mu, "digits": [k % 2, 1], "class": 9 if mode == "badclass" and k == 2 else k % 4, "id": k})
    fields = [("mu", "float32", (1, 2)), ("class", "int32", ()), ("id", "int64", ())]
    meta = {"C": 1, "D": 2}
    if mode not in ("nodigits", "badclass"):
        fields.append(("digits", "uint8", (2,)))
    if mode == "badclass":
        meta.update({"orientation_centres": t([90, 180, 90, 180], "float32"), "hue_centres": t([90, 90, 180, 180], "float32")})
    write(path, fields, rows, meta, kind="images" if mode == "images" else "embeddings")
elif mode == "big":
    n, D = int(sys.argv[3]), int(sys.argv[4])
    digits = rng.integers(10, size=(n, 2)).astype(np.uint8)
    mu = rng.normal(size=(n, 1, D)).astype(np.float32)
    mu[:, 0, 0] += digits[:, 0]
    h = {"format": "hedge-stream", "version": 1, "kind": "embeddings", "batched": False,
         "fields": [{"name": "mu", "dtype": "float32", "shape": [1, D]}, {"name": "digits", "dtype": "uint8", "shape": [2]}],
         "meta": {"C": 1, "D": D}, "provenance": {"program": "mk.py", "args": [], "input": []}}
    with open(path, "wb") as f:
        f.write(msgpack.packb(h, use_bin_type=True))
        for i in range(n):
            f.write(msgpack.packb({"mu": {"dtype": "float32", "shape": [1, D], "data": mu[i].tobytes()},
                                   "digits": {"dtype": "uint8", "shape": [2], "data": digits[i].tobytes()}}, use_bin_type=True))
        f.write(msgpack.packb({"end": n}, use_bin_type=True))
else:
    sys.exit("mk.py: unknown mode " + mode)
EOF
mk() { $PY "$T/mk.py" "$@" || fail "fixture $1"; }
# records of attribute A as "value best_dim auc" lines
recs() { "$FIX" cols attribute value best_dim auc <"$1" | awk -v a="$2" 'NR > 1 && $1 == a { print $2, $3, $4 }'; }
# the largest |dim_auc[d] - 0.5| over the records, for dimension d
dev() { "$FIX" cols dim_auc <"$1" | awk -v d="$2" 'NR > 1 { x = $(d + 1) - 0.5; if (x < 0) x = -x; if (x > m) m = x } END { print m + 0 }'; }

# --- two-valued digits (3 and 8): dim 1 encodes digit1, dim 3 digit2 upside down, 0 and 2 noise
mk binary "$T/bin"
"$BIN/disentangle" --json "$T/bin.json" "$T/bin" >"$T/bin.out" || fail "binary: exit $?"
[ "$(recs "$T/bin.out" 0)" = "$(printf '3 1 1\n8 1 1')" ] || fail "binary digit1: $(recs "$T/bin.out" 0)"
[ "$(recs "$T/bin.out" 1)" = "$(printf '3 3 1\n8 3 1')" ] || fail "binary digit2: $(recs "$T/bin.out" 1)"
# the direction does not matter: digit2 = 8 lies low on dim 3 (dim_auc 0), its separation is 1
"$FIX" cols value dim_auc <"$T/bin.out" | sed -n 5p | awk '{ exit !($1 == 8 && $5 == 0) }' ||
    fail "binary: dim_auc of digit2 = 8 on dim 3: $("$FIX" cols value dim_auc <"$T/bin.out" | sed -n 5p)"
# the noise dimensions stay near 1/2 (400 items, 200 per value: sd of an AUC about 0.03)
check_lt "$(dev "$T/bin.out" 0)" 0.1 "binary: noise dim 0 deviates $(dev "$T/bin.out" 0) from 1/2"
check_lt "$(dev "$T/bin.out" 2)" 0.1 "binary: noise dim 2 deviates $(dev "$T/bin.out" 2) from 1/2"
grep -q '"mean": 1, "mean_values": 2, ' "$T/bin.json" || fail "binary json: $(cat "$T/bin.json")"
grep -q '"main_dim": 1, "main_count": 2, "distinct_dims": 1}' "$T/bin.json" &&
    grep -q '"main_dim": 3, "main_count": 2, "distinct_dims": 1}' "$T/bin.json" || fail "binary main dims: $(cat "$T/bin.json")"

# --- a mixture: the components lie far apart (sd 100), their average encodes the digits as above
mk mog "$T/mog"
"$BIN/disentangle" "$T/mog" >"$T/mog.out" || fail "mog: exit $?"
[ "$(recs "$T/mog.out" 0)" = "$(printf '3 1 1\n8 1 1')" ] && [ "$(recs "$T/mog.out" 1)" = "$(printf '3 3 1\n8 3 1')" ] ||
    fail "mog: the average of the component means was not used: $(recs "$T/mog.out" 0) / $(recs "$T/mog.out" 1)"

# --- ten values on one dimension each (linear: dim 0 = digit1, dim 2 = digit2, dim 1 noise),
# 40 items per digit pair. Value v against the rest on its digit's dimension: AUC v/9, so the
# separation is max(v, 9 - v)/9 and the mean (2 (9 + 8 + 7 + 6 + 5) / 9) / 10 = 7/9 = 0.777778:
# one dimension per attribute cannot separate the middle values from both sides. The other
# digit's dimension gives exactly 1/2 (factorial design); noise at most about 0.55 (v = 4, 5:
# 5/9 = 0.556 is 3.7 sd above 1/2).
mk linear "$T/lin"
"$BIN/disentangle" --table --json "$T/lin.json" "$T/lin" >"$T/lin.tab" || fail "linear: exit $?"
grep -Eq '^digit1 +10 +0\.777778 +0:10$' "$T/lin.tab" && grep -Eq '^digit2 +10 +0\.777778 +2:10$' "$T/lin.tab" ||
    fail "linear table: $(cat "$T/lin.tab")"
grep -qx 'mean 0.777778 over 20 values' "$T/lin.tab" || fail "linear mean: $(cat "$T/lin.tab")"
"$BIN/disentangle" "$T/lin" >"$T/lin.out" || fail "linear stream"
recs "$T/lin.out" 0 | awk '{ w = ($1 > 9 - $1 ? $1 : 9 - $1) / 9; d = $3 - w; if ($2 != 0 || d * d > 1e-12) bad = 1 } END { exit bad || NR != 10 }' ||
    fail "linear digit1 values: $(recs "$T/lin.out" 0)"
"$FIX" cols attribute dim_auc <"$T/lin.out" | awk 'NR > 1 && $1 == 0 && $4 != 0.5 { bad = 1 } END { exit bad }' ||
    fail "linear: digit1 on digit2's dimension is not exactly 1/2"

# --- one-hot: dims 0-9 digit1, 10-19 digit2, 20 noise: every value AUC 1 on a dimension of its own
mk onehot "$T/hot"
"$BIN/disentangle" --table "$T/hot" >"$T/hot.tab" || fail "onehot: exit $?"
grep -Eq '^digit1 +10 +1\.000000 +0:1 1:1 2:1 3:1 4:1 5:1 6:1 7:1 8:1 9:1$' "$T/hot.tab" &&
    grep -Eq '^digit2 +10 +1\.000000 +10:1 11:1 12:1 13:1 14:1 15:1 16:1 17:1 18:1 19:1$' "$T/hot.tab" ||
    fail "onehot table: $(cat "$T/hot.tab")"
grep -q '^shared: none' "$T/hot.tab" || fail "onehot shared"

# --- L-shapes: orientation and hue from the class centres, dim 2 orientation, dim 1 hue, dim 0 noise
mkshapes -s test -n 2 | tshow -H >"$T/real.h" || fail "mkshapes"
grep -q '"orientation_centres"' "$T/real.h" && grep -q '"hue_centres"' "$T/real.h" ||
    fail "mkshapes no longer writes the class centres this test builds on"
mk shapes "$T/sh"
"$BIN/disentangle" --json "$T/sh.json" "$T/sh" >"$T/sh.out" || fail "shapes: exit $?"
[ "$(recs "$T/sh.out" 0)" = "$(printf '90 2 1\n180 2 1')" ] || fail "shapes orientation: $(recs "$T/sh.out" 0)"
[ "$(recs "$T/sh.out" 1)" = "$(printf '90 1 1\n180 1 1')" ] || fail "shapes hue: $(recs "$T/sh.out" 1)"
check_lt "$(dev "$T/sh.out" 0)" 0.1 "shapes: noise dim 0 deviates $(dev "$T/sh.out" 0) from 1/2"
# two classes per value: n_pos counts both
"$FIX" cols attribute n_pos <"$T/sh.out" | awk 'NR > 1 { s[$1] += $2 } END { exit !(s[0] == 400 && s[1] == 400) }' ||
    fail "shapes n_pos"
grep -q '"source": "lshapes", ' "$T/sh.json" && grep -q '{"name": "orientation", "values": 2, "auc": 1, "main_dim": 2' "$T/sh.json" &&
    grep -q '{"name": "hue", "values": 2, "auc": 1, "main_dim": 1' "$T/sh.json" || fail "shapes json: $(cat "$T/sh.json")"
tshow -H "$T/sh.out" | grep -q '"attributes": "orientation,hue"' || fail "shapes attribute names"
# every class with the same orientation centre: orientation is undefined, hue still measured
mk shapes-oneorient "$T/sh1"
"$BIN/disentangle" --json "$T/sh1.json" --table "$T/sh1" >"$T/sh1.tab" 2>"$T/err" || fail "one orientation: exit $?"
grep -Eq '^orientation +1 +undefined' "$T/sh1.tab" && grep -Eq '^hue +2 +1\.000000 +1:2$' "$T/sh1.tab" ||
    fail "one orientation table: $(cat "$T/sh1.tab")"
grep -q 'orientation has one value (90)' "$T/err" || fail "one orientation: no warning: $(cat "$T/err")"
grep -q '"auc": null, "main_dim": null' "$T/sh1.json" && grep -q '"note": "orientation has one value' "$T/sh1.json" &&
    grep -q '"mean": 1, "mean_values": 1, ' "$T/sh1.json" || fail "one orientation json: $(cat "$T/sh1.json")"

# --- a digit that never changes: undefined with a note, the other measured
mk undef "$T/und"
"$BIN/disentangle" "$T/und" >"$T/und.out" 2>"$T/err" || fail "undefined digit2: exit $?"
grep -q 'digit2 has one value (5) in all 2000 items' "$T/err" || fail "undefined: warning $(cat "$T/err")"
recs "$T/und.out" 1 | grep -qx '5 -1 nan' || fail "undefined digit2 record: $(recs "$T/und.out" 1)"
[ "$(recs "$T/und.out" 0 | wc -l)" -eq 10 ] || fail "undefined: digit1 lost its records"
tshow -H "$T/und.out" | grep -q '"attribute_note": "digit2 has one value' || fail "undefined: no note in the header"

# --- -a FIELD: a scalar and a vector integer field
mk labels "$T/lab"
"$BIN/disentangle" -a lab "$T/lab" >"$T/lab.out" || fail "-a lab"
[ "$(recs "$T/lab.out" 0)" = "$(printf -- '-3 2 1\n4 2 1')" ] || fail "-a lab: $(recs "$T/lab.out" 0)"
tshow -H "$T/lab.out" | grep -q '"attributes": "lab"' || fail "-a lab: name"
"$BIN/disentangle" -a pair --json "$T/pair.json" "$T/lab" >/dev/null || fail "-a pair"
grep -q '{"name": "pair\[0\]", "values": 2, "auc": 1, "main_dim": 0,' "$T/pair.json" &&
    grep -q '{"name": "pair\[1\]", "values": 2, "auc": 1, "main_dim": 1,' "$T/pair.json" || fail "-a pair: $(cat "$T/pair.json")"
# the default (digits) on the same fixture as -a digits: the same numbers, other names
"$BIN/disentangle" -a digits "$T/bin" | "$FIX" cols attribute value n_pos best_dim auc dim_auc >"$T/a1" &&
    "$FIX" cols attribute value n_pos best_dim auc dim_auc <"$T/bin.out" | cmp -s - "$T/a1" || fail "-a digits differs from the default"

# --- bad input: exit 1, a message, nothing on stdout
for m in nan inf nodigits empty images badclass; do mk $m "$T/$m"; done
expect_fail 1 'disentangle: ' "$BIN/disentangle" "$T/nan"
grep -q 'record 3: mean nan is not finite' "$T/err" || fail "nan: $(cat "$T/err")"
expect_fail 1 'record 3: mean inf is not finite' "$BIN/disentangle" "$T/inf"
expect_fail 1 'the input has no digits field (nor the class centres of L-shapes); give -a FIELD' "$BIN/disentangle" "$T/nodigits"
expect_fail 1 'no records' "$BIN/disentangle" "$T/empty"
expect_fail 1 "expected a stream of kind 'embeddings'" "$BIN/disentangle" "$T/images"
expect_fail 1 'record 2: class 9 has no orientation centre' "$BIN/disentangle" "$T/badclass"
expect_fail 1 "has no field 'nope'" "$BIN/disentangle" -a nope "$T/lab"
expect_fail 1 "field 'f' is float32: -a needs an integer field" "$BIN/disentangle" -a f "$T/lab"
expect_fail 1 "field 'id' is int64" "$BIN/disentangle" -a id "$T/lab"
head -c $(($(wc -c <"$T/bin") - 20)) "$T/bin" >"$T/trunc"
expect_fail 1 'truncated' "$BIN/disentangle" "$T/trunc"
expect_fail 1 'empty input' "$BIN/disentangle" /dev/null
# a failed run leaves no summary behind
expect_fail 1 'not finite' "$BIN/disentangle" --json "$T/nan.json" "$T/nan"
[ -e "$T/nan.json" ] && fail "a failed run left its --json file"
ls "$T"/nan.json.tmp* >/dev/null 2>&1 && fail "a failed run left a temp file"
# --json and stdout all or nothing, with the stream and with the table
check_out_file "$BIN/disentangle" --json @FILE@ "$T/hand"
check_out_file "$BIN/disentangle" --table --json @FILE@ "$T/hand"
expect_fail 1 'cannot write /dev/full' "$BIN/disentangle" --json /dev/full "$T/hand"

# --- misuse: exit 2, the usage hint, nothing on stdout
expect_fail 2 "Try 'disentangle --help' for help." "$BIN/disentangle" --bogus "$T/hand"
expect_fail 2 "for help" "$BIN/disentangle" "$T/hand" "$T/hand"
expect_fail 2 "for help" "$BIN/disentangle" -a
expect_fail 2 "for help" "$BIN/disentangle" -a "" "$T/hand"
expect_fail 2 "for help" "$BIN/disentangle" --json
"$BIN/disentangle" -h | grep -q '^usage: disentangle' || fail "-h"
grep -q 'max(AUC, 1 - AUC)' "$(dirname "$0")/../../man/disentangle.1.scd" || fail "the man page does not state the definition"
echo "disentangle: ok"
