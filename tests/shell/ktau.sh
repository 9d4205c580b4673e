#!/bin/sh
# ktau: binning, per-bin accuracy and AP, tau against hand-derived values, AURC, E-AURC, AUROC and
# the reject curve (--reject-tsv) against brute force and hand values, the generic -u / -m mode, the
# whole chain from the synthetic fixture, and bad input. Fixtures: tests/unit/test_evalfix.c.
. "$(dirname "$0")/../lib.sh"
FIX=$BIN/../tests/test_evalfix
[ -x "$FIX" ] || fail "$FIX is not built"
knn_table() { "$FIX" table knn eta:float32 correct:uint8; }

# --- accuracy by hand: 40 items with eta = 0..39, written in a scrambled order (7i mod 40);
# wrong: 15, 25 and 30..34. Four bins of 10 by eta: accuracy 1, .9, .9, .5. Kendall pairs of
# (bin, accuracy): (0,1) (0,2) (0,3) (1,3) (2,3) discordant, (1,2) tied in accuracy:
# tau-b = -5 / sqrt(6 * 5), reported inverted: 0.912871
awk 'BEGIN { for (i = 0; i < 40; i++) { e = (7 * i) % 40; print e, !(e == 15 || e == 25 || (e >= 30 && e <= 34)) } }' |
    knn_table >"$T/acc" || fail "fixture"
"$BIN/ktau" -b 4 -o "$T/acc.tsv" "$T/acc" >"$T/txt" || fail "ktau exited $?"
grep -qx 'tau 0.912871' "$T/txt" || fail "tau: $(cat "$T/txt")"
grep -qx 'n 40' "$T/txt" || fail "n"
head -n 1 "$T/txt" | grep -q '^bin .* n .* mean_eta .* accuracy$' || fail "table header: $(head -n 1 "$T/txt")"
grep -Eq '^1 +10 +14.500000 +0.900000$' "$T/txt" || fail "bin 1: $(cat "$T/txt")"
grep -Eq '^3 +10 +34.500000 +0.500000$' "$T/txt" || fail "bin 3"
printf 'bin\tn\tmean_eta\taccuracy\n0\t10\t4.5\t1\n1\t10\t14.5\t0.9\n2\t10\t24.5\t0.9\n3\t10\t34.5\t0.5\n' |
    cmp -s - "$T/acc.tsv" || fail "tsv: $(cat "$T/acc.tsv")"
"$BIN/ktau" -b 4 --json - "$T/acc" >"$T/json" || fail "--json"
grep -q '^{"program": "ktau", "tau": 0.912870929' "$T/json" || fail "json: $(cat "$T/json")"
grep -q '{"bin": 3, "n": 10, "mean_u": 34.5, "perf": 0.5}' "$T/json" || fail "json bins: $(cat "$T/json")"
[ "$(wc -l <"$T/json")" -eq 1 ] || fail "json is not one line"
grep -q '}], "n": 40}$' "$T/json" || fail "json: the total n must come last"

# --- does eta know when it is wrong (the same 40 items, loss = 1 - correct)
# AUROC by hand: the wrong etas 15, 25, 30..34 against the 33 right ones: 15 lie below 15, 24 below
# 25, 28 below each of 30..34: (15 + 24 + 5 x 28) / (7 x 33) = 179/231 = 0.774892.
# AURC by brute force (no ties: eta ascending is the order): (1/40) sum_k (errors among eta < k) / k;
# the oracle puts the 33 right items first: (1/40) sum_{k=34..40} (k - 33) / k.
"$BIN/ktau" -b 4 --reject-tsv "$T/rej.tsv" "$T/acc" >"$T/txt" || fail "ktau --reject-tsv exited $?"
awk 'function w(e) { return e == 15 || e == 25 || (e >= 30 && e <= 34) }
    BEGIN { for (k = 1; k <= 40; k++) { c += w(k - 1); a += c / k; if (k > 33) o += (k - 33) / k }
        printf "aurc %.6f\naurc_oracle %.6f\neaurc %.6f\nauroc %.6f\n", a / 40, o / 40, (a - o) / 40, 179 / 231 }' >"$T/want"
grep '^aurc\|^eaurc\|^auroc' "$T/txt" | cmp -s - "$T/want" || fail "aurc/auroc: $(cat "$T/txt") expected $(cat "$T/want")"
sed -n '/^aurc /,$p' "$T/txt" | sed -n '5,6p' | tr '\n' ' ' | grep -qx 'n 40 tau 0.912871 ' || fail "text: n and tau must stay last"
# the curve: rejected r % keeps k = 40 - floor(0.4 r) items (eta 0 .. k-1): risk = errors / k; oracle
# max(0, k - 33) / k
awk 'function w(e) { return e == 15 || e == 25 || (e >= 30 && e <= 34) }
    BEGIN { print "rejected\trisk\toracle_risk"
        for (r = 0; r < 100; r++) { k = 40 - int(r * 40 / 100); c = 0; for (e = 0; e < k; e++) c += w(e)
            printf "%.9g\t%.9g\t%.9g\n", r / 100, c / k, (k > 33 ? k - 33 : 0) / k } }' | cmp -s - "$T/rej.tsv" ||
    fail "reject curve: $(head -n 5 "$T/rej.tsv")"
[ "$(wc -l <"$T/rej.tsv")" -eq 101 ] || fail "reject curve: not 100 points"
"$BIN/ktau" -b 4 --json - "$T/acc" >"$T/json" || fail "--json"
a=$(json_get aurc <"$T/json") o=$(json_get aurc_oracle <"$T/json") e=$(json_get eaurc <"$T/json") r=$(json_get auroc <"$T/json")
awk -v a="$a" -v o="$o" -v e="$e" -v r="$r" 'function w(e) { return e == 15 || e == 25 || (e >= 30 && e <= 34) }
    function near(x, y) { return x != "" && (x - y) * (x - y) < 1e-18 }
    BEGIN { for (k = 1; k <= 40; k++) { c += w(k - 1); s += c / k; if (k > 33) t += (k - 33) / k }
        exit !(near(a, s / 40) && near(o, t / 40) && near(e, (s - t) / 40) && near(r, 179 / 231)) }' ||
    fail "json aurc $a oracle $o eaurc $e auroc $r"
grep -q '"note"' "$T/json" && fail "json: a note when everything is defined: $(cat "$T/json")"
# ties in eta: the exact mean over the orders of each tie, no seed, whatever the record order.
# eta 1 2 2, correct 1 0 1: orders (right, wrong, right) and (right, right, wrong) give risks
# (0, 1/2, 1/3) and (0, 0, 1/3): AURC (5/6 + 1/3) / 6 = 7/36; oracle (0 + 0 + 1/3) / 3 = 1/9;
# E-AURC 1/12; AUROC: the wrong 2 beats the right 1 and ties the right 2: 3/4
printf 'aurc 0.194444\naurc_oracle 0.111111\neaurc 0.083333\nauroc 0.750000\n' >"$T/want"
for order in '1 1\n2 0\n2 1\n' '2 1\n2 0\n1 1\n' '2 0\n1 1\n2 1\n'; do
    for s in 1 2 3; do
        printf "$order" | knn_table | "$BIN/ktau" -b 3 -S $s 2>/dev/null | grep '^aurc\|^eaurc\|^auroc' |
            cmp -s - "$T/want" || fail "ties: records $order seed $s"
    done
done
# a continuous performance in [0, 1] (retrieve's per-query AP): eta 1 2 3 4, ap 1 .5 .75 0, loss
# 0 .5 .25 1: risks 0 .25 .25 .4375, AURC .234375; oracle 0 .125 .25 .4375, .203125; E-AURC .03125;
# no AUROC (ap is not binary)
printf '1 1\n2 0.5\n3 0.75\n4 0\n' | "$FIX" table retrieval eta:float32 ap:float32 >"$T/ret"
"$BIN/ktau" -b 2 --json - "$T/ret" >"$T/json" || fail "ktau on retrieval"
grep -q '"aurc": 0.234375, "aurc_oracle": 0.203125, "eaurc": 0.03125, "auroc": null, ' "$T/json" ||
    fail "continuous performance: $(cat "$T/json")"
grep -q '"note": "auroc is undefined: ap is not binary: record 1 has 0.5"' "$T/json" || fail "non-binary note: $(cat "$T/json")"
"$BIN/ktau" -b 2 "$T/ret" | grep -qx 'auroc undefined (ap is not binary: record 1 has 0.5)' || fail "non-binary text"
# --- -m error:FIELD: the loss is FIELD itself, the performance 1 - FIELD. The same 40 items with a
# flag `corrupt` = 1 exactly where `correct` = 0 (eta 15, 25, 30..34) give the numbers above: the
# bins' 1 - corrupt is their accuracy (1, .9, .9, .5), tau 0.912871, and the AUROC is P(eta of a
# flagged item > eta of an unflagged one) = 179/231 = 0.774892, the AURC the brute force above
awk 'BEGIN { for (i = 0; i < 40; i++) { e = (7 * i) % 40; w = e == 15 || e == 25 || (e >= 30 && e <= 34); print e, !w, w } }' |
    "$FIX" table knn eta:float32 correct:uint8 corrupt:uint8 >"$T/flag" || fail "flag fixture"
"$BIN/ktau" -b 4 -m error:corrupt -o "$T/flag.tsv" "$T/flag" >"$T/ftxt" || fail "ktau -m error:corrupt exited $?"
grep -qx 'tau 0.912871' "$T/ftxt" || fail "error:corrupt tau: $(cat "$T/ftxt")"
awk 'function w(e) { return e == 15 || e == 25 || (e >= 30 && e <= 34) }
    BEGIN { for (k = 1; k <= 40; k++) { c += w(k - 1); a += c / k; if (k > 33) o += (k - 33) / k }
        printf "aurc %.6f\naurc_oracle %.6f\neaurc %.6f\nauroc %.6f\n", a / 40, o / 40, (a - o) / 40, 179 / 231 }' >"$T/fwant"
grep '^aurc\|^eaurc\|^auroc' "$T/ftxt" | cmp -s - "$T/fwant" || fail "error:corrupt aurc/auroc: $(cat "$T/ftxt") expected $(cat "$T/fwant")"
head -n 1 "$T/ftxt" | grep -q '^bin .* n .* mean_eta .* 1-corrupt$' || fail "error:corrupt table header: $(head -n 1 "$T/ftxt")"
printf 'bin\tn\tmean_eta\t1-corrupt\n0\t10\t4.5\t1\n1\t10\t14.5\t0.9\n2\t10\t24.5\t0.9\n3\t10\t34.5\t0.5\n' |
    cmp -s - "$T/flag.tsv" || fail "error:corrupt tsv: $(cat "$T/flag.tsv")"
"$BIN/ktau" -b 4 -m error:corrupt --json - "$T/flag" | grep -q '"performance": "error:corrupt"' || fail "error:corrupt json"
# the direction: flags on the 7 most certain items instead (eta 0..6) rank below every other item:
# AUROC 0 (accuracy:FIELD on the same column would read them as the right ones: 1)
awk 'BEGIN { for (e = 0; e < 40; e++) print e, 1, e < 7 }' | "$FIX" table knn eta:float32 correct:uint8 corrupt:uint8 >"$T/flag0"
"$BIN/ktau" -b 4 -m error:corrupt "$T/flag0" | grep -qx 'auroc 0.000000' || fail "error:corrupt on the certain items: $("$BIN/ktau" -b 4 -m error:corrupt "$T/flag0")"
"$BIN/ktau" -b 4 -m accuracy:corrupt "$T/flag0" | grep -qx 'auroc 1.000000' || fail "accuracy:corrupt on the certain items"
# the reasons name the field's own values: an error of 0.5 is not binary; no flag at all
printf '1 0\n2 0.5\n3 1\n4 0\n' | "$FIX" table knn eta:float32 err:float32 >"$T/ferr"
"$BIN/ktau" -b 2 -m error:err "$T/ferr" | grep -qx 'auroc undefined (err is not binary: record 1 has 0.5)' ||
    fail "error:err non-binary: $("$BIN/ktau" -b 2 -m error:err "$T/ferr")"
awk 'BEGIN { for (e = 0; e < 8; e++) print e, 1, 0 }' | "$FIX" table knn eta:float32 correct:uint8 corrupt:uint8 >"$T/fnone"
"$BIN/ktau" -b 2 -m error:corrupt "$T/fnone" | grep -qx 'auroc undefined (every item is right (corrupt = 0 for all))' ||
    fail "error:corrupt, no flag: $("$BIN/ktau" -b 2 -m error:corrupt "$T/fnone")"
expect_fail 2 "-m: expected error:FIELD, got 'error:'" "$BIN/ktau" -m error: "$T/flag"
expect_fail 1 "no field 'flag'" "$BIN/ktau" -m error:flag "$T/flag"

# --- 47 items in 20 bins: bins 0..6 hold 3, bins 7..19 hold 2
awk 'BEGIN { for (i = 0; i < 47; i++) print i / 100, 1 }' | knn_table >"$T/47"
"$BIN/ktau" --json - "$T/47" >"$T/json" || fail "ktau 47"
grep -q '{"bin": 6, "n": 3, ' "$T/json" && grep -q '{"bin": 7, "n": 2, ' "$T/json" &&
    grep -q '{"bin": 19, "n": 2, ' "$T/json" || fail "47 in 20 bins: $(cat "$T/json")"
grep -q '"tau": null' "$T/json" || fail "constant accuracy must give tau null"
"$BIN/ktau" "$T/47" | grep -qx 'tau nan' || fail "constant accuracy must give tau nan"
# every item right: AURC 0 = its oracle, no AUROC
"$BIN/ktau" --json - "$T/47" >"$T/json" 2>/dev/null || fail "ktau 47"
grep -q '"aurc": 0, "aurc_oracle": 0, "eaurc": 0, "auroc": null' "$T/json" &&
    grep -q '"note": "auroc is undefined: every item is right (correct = 1 for all)"' "$T/json" || fail "all right: $(cat "$T/json")"

# --- ties in the uncertainty are ordered by a seeded random permutation, never by record order.
# 4000 items, eta 0.1 or 0.2 at random, correctness at random: the same records once with the
# correct ones first, once with them last. Stream order gave tau +0.32 and -0.39; now tau is about
# 0 for both (mean over 8 seeds; one run's sd is about 0.08 here) and the two agree.
ties() { awk -v first="$1" 'BEGIN { srand(1); n = 4000
    for (i = 0; i < n; i++) { e[i] = rand() < 0.5 ? 0.1 : 0.2; c[i] = rand() < 0.5 }
    for (p = 0; p < 2; p++) for (i = 0; i < n; i++) if (c[i] == (p == 0 ? first : 1 - first)) print e[i], c[i] }' | knn_table; }
ties 1 >"$T/tie-first" && ties 0 >"$T/tie-last" || fail "tie fixtures"
first=$("$BIN/ktau" "$T/tie-first" | tail -n 1) last=$("$BIN/ktau" "$T/tie-last" | tail -n 1)
awk -v a="${first#tau }" -v b="${last#tau }" 'BEGIN { exit !(a * a < 0.09 && b * b < 0.09) }' ||
    fail "ties, default seed: $first with the correct items first, $last with them last"
for f in tie-first tie-last; do
    for s in 1 2 3 4 5 6 7 8; do "$BIN/ktau" -S $s "$T/$f" | tail -n 1; done |
        awk '$1 == "tau" { s += $2; n++ } END { if (n == 8) print s / n }' >"$T/$f.mean"
done
first=$(cat "$T/tie-first.mean") last=$(cat "$T/tie-last.mean")
awk -v a="$first" -v b="$last" 'BEGIN { d = a - b; exit !(a != "" && b != "" && a * a < 0.04 && b * b < 0.04 && d * d < 0.01) }' ||
    fail "ties: mean tau $first with the correct items first, $last with them last: both should be near 0"
# the seed decides the order of ties: the same seed the same bytes, another seed other bins
"$BIN/ktau" -S 5 "$T/tie-first" >"$T/s5" && "$BIN/ktau" -S 5 "$T/tie-first" | cmp -s - "$T/s5" || fail "-S 5 twice differs"
"$BIN/ktau" -S 6 "$T/tie-first" | cmp -s - "$T/s5" && fail "-S 6 changed nothing"
"$BIN/ktau" --json - "$T/tie-first" | grep -q '"seed": 714, ' || fail "json: no seed"
# untied uncertainties do not depend on the seed (the hand-derived table above)
"$BIN/ktau" -b 4 -S 99 "$T/acc" | grep -qx 'tau 0.912871' || fail "-S changed a table without ties"

# --- ties go with the items, not with their places (issue 19, defect 2): equal uncertainties are
# ordered by the tie key of each item's identity (lib/measures/argsort.h: h = mix(seed ^ TIES), h = mix(h ^ id),
# splitmix64's finaliser), so every permutation of the records gives the same bytes. Issue 19's
# example: kind knn, ids 0..11, eta six 0s then six 1s, correct 1 1 1 1 0 0 1 1 0 0 0 0; the record
# order gave tau 0.7071 as written and 0.2357 reversed. With -S 714 the keys order the ids (derived
# by an independent splitmix64 in Python) 4 5 2 0 3 1 | 10 7 9 6 8 11, correct 0 0 1 1 1 1 | 0 1 0 1
# 0 0: bins of 3 have accuracy 1/3, 1, 1/3, 1/3. Pairs of (bin, accuracy): (0,1) concordant, (1,2)
# (1,3) discordant, (0,2) (0,3) (2,3) tied in accuracy: tau-b = (1 - 2) / sqrt(6 x 3), inverted
# 1 / sqrt(18) = 0.2357022604
printf '0 0 1\n1 0 1\n2 0 1\n3 0 1\n4 0 0\n5 0 0\n6 1 1\n7 1 1\n8 1 0\n9 1 0\n10 1 0\n11 1 0\n' >"$T/ex.txt"
shuffle() { awk -v s="$1" 'BEGIN { srand(s) } { print rand(), $0 }' | sort -k1,1g | cut -d' ' -f2-; }
"$FIX" table knn id:int64 eta:float32 correct:uint8 <"$T/ex.txt" >"$T/ex"
"$BIN/ktau" --json - -b 4 "$T/ex" >"$T/ex.json" || fail "ktau on the tie example: exit $?"
grep -q '^{"program": "ktau", "tau": 0.2357022604, ' "$T/ex.json" || fail "tie example: $(cat "$T/ex.json")"
grep -q '"bins": \[{"bin": 0, "n": 3, "mean_u": 0, "perf": 0.3333333333}, {"bin": 1, "n": 3, "mean_u": 0, "perf": 1}, {"bin": 2, "n": 3, "mean_u": 1, "perf": 0.3333333333}, {"bin": 3, "n": 3, "mean_u": 1, "perf": 0.3333333333}\]' \
    "$T/ex.json" || fail "tie example bins: $(cat "$T/ex.json")"
for perm in rev 1 2 3 4 5; do
    if [ $perm = rev ]; then sort -rn "$T/ex.txt"; else shuffle $perm <"$T/ex.txt"; fi |
        "$FIX" table knn id:int64 eta:float32 correct:uint8 | "$BIN/ktau" --json - -b 4 2>"$T/err" |
        cmp -s - "$T/ex.json" || fail "tie example, permutation $perm: another output"
    [ -s "$T/err" ] && fail "tie example, permutation $perm: a warning: $(cat "$T/err")"
done
# the seed still draws the order: another seed, another tie order (ids 0 2 4 3 1 5 with -S 1:
# accuracy 2/3, 2/3, 0, 1/3 ... the point is only that it differs and is itself order-free)
"$BIN/ktau" --json - -b 4 -S 1 "$T/ex" >"$T/ex1.json" && ! cmp -s "$T/ex1.json" "$T/ex.json" || fail "-S 1 changed nothing"
sort -rn "$T/ex.txt" | "$FIX" table knn id:int64 eta:float32 correct:uint8 | "$BIN/ktau" --json - -b 4 -S 1 |
    cmp -s - "$T/ex1.json" || fail "tie example, -S 1 reversed: another output"
# the same id twice (two runs concatenated) with equal eta: broken by the performance, order-free
awk '{ print; print $1, $2, 1 - $3 }' "$T/ex.txt" >"$T/dup.txt"
"$FIX" table knn id:int64 eta:float32 correct:uint8 <"$T/dup.txt" | "$BIN/ktau" --json - -b 4 >"$T/dup.json" || fail "dup ids"
for perm in 1 2 3; do
    shuffle $perm <"$T/dup.txt" | "$FIX" table knn id:int64 eta:float32 correct:uint8 | "$BIN/ktau" --json - -b 4 |
        cmp -s - "$T/dup.json" || fail "duplicate ids, permutation $perm: another output"
done
# 400 items, eta one of three values, id 1000 + i: the text table (accuracy) and the TSV (the mean
# of a continuous ap), 4 permutations each
awk 'BEGIN { srand(3); for (i = 0; i < 400; i++) print 1000 + i, int(rand() * 3) / 10, rand() < 0.6, rand() }' >"$T/big.txt"
big_table() { "$FIX" table knn id:int64 eta:float32 correct:uint8 ap:float32; }
big_table <"$T/big.txt" >"$T/big"
"$BIN/ktau" -b 7 "$T/big" >"$T/big.out" && "$BIN/ktau" -b 7 -m accuracy:ap -o "$T/big.tsv" "$T/big" >/dev/null || fail "big"
for perm in 11 12 13 14; do
    shuffle $perm <"$T/big.txt" | big_table >"$T/bigp"
    "$BIN/ktau" -b 7 "$T/bigp" | cmp -s - "$T/big.out" || fail "400 tied items, permutation $perm: another table"
    "$BIN/ktau" -b 7 -m accuracy:ap -o "$T/bigp.tsv" "$T/bigp" >/dev/null && cmp -s "$T/bigp.tsv" "$T/big.tsv" ||
        fail "400 tied items, permutation $perm: another TSV"
done
# fewshot: the same query id in several episodes is several items (episode and id)
awk 'BEGIN { srand(4); for (i = 0; i < 120; i++) print int(i / 30), i % 30, int(rand() * 2) / 4, rand() < 0.5 }' >"$T/fs.txt"
"$FIX" table fewshot episode:int32 id:int64 eta:float32 correct:uint8 <"$T/fs.txt" | "$BIN/ktau" --json - -b 6 >"$T/fs.json" ||
    fail "fewshot ties"
for perm in 1 2 3; do
    shuffle $perm <"$T/fs.txt" | "$FIX" table fewshot episode:int32 id:int64 eta:float32 correct:uint8 |
        "$BIN/ktau" --json - -b 6 | cmp -s - "$T/fs.json" || fail "fewshot ties, permutation $perm: another output"
done
# pairs, binned by the mean eta of the two images (ties whenever two pairs share their etas): id1, id2
awk 'BEGIN { srand(5); for (p = 0; p < 200; p++) { i = int(rand() * 20); j = int(rand() * 20)
    e1 = (i % 3) / 10; e2 = (j % 3) / 10; print i, j, rand(), rand() < 0.4, e1, e2, (e1 + e2) / 2 } }' >"$T/pairs.txt"
pairs_table() { "$FIX" table pairscores id1:int64 id2:int64 p:float32 match:uint8 eta1:float32 eta2:float32 eta:float32; }
pairs_table <"$T/pairs.txt" | "$BIN/ktau" --json - -b 5 >"$T/pairs.json" 2>/dev/null || fail "pair ties"
for perm in rev 1 2 3; do
    if [ $perm = rev ]; then awk '{ l[NR] = $0 } END { for (i = NR; i; i--) print l[i] }' "$T/pairs.txt"; else shuffle $perm <"$T/pairs.txt"; fi |
        pairs_table | "$BIN/ktau" --json - -b 5 2>/dev/null | cmp -s - "$T/pairs.json" || fail "pair ties, permutation $perm: another output"
done
# no identity field: the record number stands in, and a warning says that the order matters
cut -d' ' -f2- "$T/ex.txt" | knn_table | "$BIN/ktau" -b 4 2>"$T/err" >/dev/null || fail "no id: exit $?"
grep -q 'no identity field (id): items with equal eta are ordered by record number' "$T/err" || fail "no id: no warning: $(cat "$T/err")"
"$BIN/ktau" -b 4 "$T/acc" 2>"$T/err" >/dev/null && [ ! -s "$T/err" ] || fail "no id, no ties: a warning $(cat "$T/err")"

# --- constant uncertainty (a point model: eta = 1 - sigmoid(b) for every image): bins and tau
# are undefined, whatever the record order: no number anywhere, exit 0
for first in 1 0; do
    awk -v first=$first 'BEGIN { srand(2); for (i = 0; i < 200; i++) c[i] = rand() < 0.5
        for (p = 0; p < 2; p++) for (i = 0; i < 200; i++) if (c[i] == (p == 0 ? first : 1 - first)) print 0.26894142, c[i] }' |
        knn_table >"$T/const" || fail "constant fixture"
    "$BIN/ktau" --json - -o "$T/const.tsv" --reject-tsv "$T/const-rej.tsv" "$T/const" >"$T/json" 2>"$T/err" ||
        fail "constant eta: exit $?"
    grep -q '"aurc": null, "aurc_oracle": null, "eaurc": null, "auroc": null, ' "$T/json" ||
        fail "constant eta: aurc and auroc must be null: $(cat "$T/json")"
    [ "$(grep -o '"note"' "$T/json" | wc -l)" -eq 1 ] || fail "constant eta: one note"
    printf 'rejected\trisk\toracle_risk\n' | cmp -s - "$T/const-rej.tsv" || fail "constant eta: reject tsv"
    grep -q '^{"program": "ktau", "tau": null, "note": "the uncertainty is constant' "$T/json" ||
        fail "constant eta: json $(cat "$T/json")"
    grep -q '"bins": \[\], "n": 200}$' "$T/json" || fail "constant eta: json bins $(cat "$T/json")"
    [ "$(json_get tau <"$T/json")" = null ] || fail "constant eta: the pipelines' tau extraction"
    grep -q 'for every item' "$T/err" || fail "constant eta: no warning"
    printf 'bin\tn\tmean_eta\taccuracy\n' | cmp -s - "$T/const.tsv" || fail "constant eta: tsv $(cat "$T/const.tsv")"
    "$BIN/ktau" "$T/const" 2>/dev/null >"$T/txt" || fail "constant eta, text: exit $?"
    grep -qx 'tau undefined (constant uncertainty)' "$T/txt" || fail "constant eta: text $(cat "$T/txt")"
    grep -qx 'aurc undefined (constant uncertainty)' "$T/txt" && grep -qx 'auroc undefined (constant uncertainty)' "$T/txt" ||
        fail "constant eta: text aurc $(cat "$T/txt")"
    grep -q '^[0-9]' "$T/txt" && fail "constant eta: bin lines in $(cat "$T/txt")"
    grep -qx 'n 200' "$T/txt" || fail "constant eta: n"
done
# the AP form too
awk 'BEGIN { for (i = 0; i < 40; i++) print i / 40, i % 3 == 0, 0.5 }' |
    "$FIX" table pairscores p:float32 match:uint8 eta:float32 | "$BIN/ktau" --json - 2>/dev/null |
    grep -q '"tau": null, "note": ' || fail "constant eta on pairscores"

# --- AP per bin on pairscores: low-eta bin ranks both matches first (AP 1); the high-eta bin
# ranks them last, AP = (1/3 + 2/4) / 2 = 5/12 = 0.416667; tau 1
cat >"$T/ps.txt" <<'EOF'
0.9 1 0.1
0.8 1 0.2
0.7 0 0.3
0.6 0 0.4
0.9 0 0.5
0.8 0 0.6
0.7 1 0.7
0.6 1 0.8
EOF
"$FIX" table pairscores p:float32 match:uint8 eta:float32 <"$T/ps.txt" >"$T/ps"
"$BIN/ktau" -b 2 "$T/ps" >"$T/txt" || fail "ktau pairscores"
grep -qx 'aurc undefined (-m ap gives a performance per bin, not per item: use -m accuracy:FIELD)' "$T/txt" ||
    fail "AP: aurc must be undefined: $(cat "$T/txt")"
"$BIN/ktau" -b 2 --json - --reject-tsv "$T/rej.tsv" "$T/ps" >"$T/json" || fail "ktau pairscores --json -"
grep -q '"tau": 1, "note": "aurc, aurc_oracle, eaurc and auroc are undefined: -m ap gives a performance per bin, not per item: use -m accuracy:FIELD", "aurc": null, "aurc_oracle": null, "eaurc": null, "auroc": null, ' "$T/json" ||
    fail "AP json: $(cat "$T/json")"
printf 'rejected\trisk\toracle_risk\n' | cmp -s - "$T/rej.tsv" || fail "AP: reject tsv $(cat "$T/rej.tsv")"
grep -Eq '^0 +4 +0.250000 +1.000000$' "$T/txt" && grep -Eq '^1 +4 +0.650000 +0.416667$' "$T/txt" &&
    grep -qx 'tau 1.000000' "$T/txt" || fail "AP bins: $(cat "$T/txt")"
# 4 bins: two have no positive (AP undefined): nan, a warning, left out of tau
"$BIN/ktau" -b 4 "$T/ps" >"$T/txt" 2>"$T/err" || fail "ktau -b 4"
[ "$(grep -c '^[0-9].* nan$' "$T/txt")" -eq 2 ] && grep -q 'no defined performance' "$T/err" || fail "undefined AP bins"

# --- generic fields
awk 'BEGIN { for (i = 0; i < 30; i++) print i, i < 20, 1 - i / 30, i % 2 }' |
    "$FIX" table rows u:float64 ok:uint8 s:float64 y:uint8 >"$T/g"
expect_fail 1 'give -u and -m' "$BIN/ktau" "$T/g"
"$BIN/ktau" -b 3 -u u -m accuracy:ok "$T/g" | grep -qx 'tau 0.816497' || fail "generic accuracy"
"$BIN/ktau" -b 3 -u u -m ap:s:y --json - "$T/g" | grep -q '"performance": "ap:s:y"' || fail "generic ap"
expect_fail 1 "no field 'nope'" "$BIN/ktau" -u nope -m accuracy:ok "$T/g"
# a performance outside [0, 1] is no loss: all four undefined, and the reject curve only its header
"$BIN/ktau" -b 3 -u s -m accuracy:u --json - --reject-tsv "$T/rej.tsv" "$T/g" >"$T/json" 2>/dev/null || fail "ktau -m accuracy:u"
grep -q '"note": "aurc, aurc_oracle, eaurc and auroc are undefined: u is not a performance in \[0, 1\]: record 2 has 2", "aurc": null, "aurc_oracle": null, "eaurc": null, "auroc": null' "$T/json" ||
    fail "out of [0, 1]: $(cat "$T/json")"
printf 'rejected\trisk\toracle_risk\n' | cmp -s - "$T/rej.tsv" || fail "out of [0, 1]: reject tsv $(cat "$T/rej.tsv")"

# --- the chain: fixture -> eta -> knn -> ktau, and fixture -> pairs -> ktau: performance falls
"$FIX" emb -n 2000 >"$T/e"
"$BIN/pairscore" --self "$T/e" | "$BIN/knn" | "$BIN/ktau" --json - >"$T/json" || fail "knn chain"
awk '{ match($0, /"tau": [-0-9.]+/); t = substr($0, RSTART + 7, RLENGTH - 7); exit !(t > 0.3) }' "$T/json" ||
    fail "knn chain tau: $(cat "$T/json")"
"$BIN/pairscore" -n 4000 "$T/e" | "$BIN/ktau" --json - >"$T/json" || fail "pairs chain"
awk '{ match($0, /"tau": [-0-9.]+/); t = substr($0, RSTART + 7, RLENGTH - 7); exit !(t > 0.3) }' "$T/json" ||
    fail "pairs chain tau: $(cat "$T/json")"

# --- bad input
awk 'BEGIN { for (i = 0; i < 12; i++) print i, 1 }' | knn_table >"$T/12"
expect_fail 1 'ktau: 12 items cannot fill 20 bins' "$BIN/ktau" "$T/12"
knn_table </dev/null >"$T/empty"
expect_fail 1 'no records' "$BIN/ktau" "$T/empty"
head -c $(($(wc -c <"$T/acc") - 12)) "$T/acc" >"$T/trunc"
expect_fail 1 'truncated' "$BIN/ktau" "$T/trunc"
expect_fail 1 "no field 'correct'" "$BIN/ktau" -m accuracy:correct "$T/ps"
awk 'BEGIN { for (i = 0; i < 30; i++) print i % 2 }' | "$FIX" table knn correct:uint8 >"$T/noeta"
expect_fail 1 "no field 'eta'" "$BIN/ktau" "$T/noeta"
# --- the TSV and stdout, all or nothing: the TSV is opened before any work, committed last
check_out_file "$BIN/ktau" -b 4 -o @FILE@ "$T/acc"
check_out_file "$BIN/ktau" -b 4 --json - -o @FILE@ "$T/acc"
expect_fail 1 'cannot write /dev/full' "$BIN/ktau" -b 4 -o /dev/full "$T/acc"
check_out_file "$BIN/ktau" -b 4 --reject-tsv @FILE@ "$T/acc"
check_out_file "$BIN/ktau" -b 4 --json - -o "$T/both.tsv" --reject-tsv @FILE@ "$T/acc"
expect_fail 1 'cannot write /dev/full' "$BIN/ktau" -b 4 --reject-tsv /dev/full "$T/acc"
# one of the two files unwritable: neither is committed
rm -f "$T/both.tsv"
expect_fail 1 'cannot write /dev/full' "$BIN/ktau" -b 4 -o "$T/both.tsv" --reject-tsv /dev/full "$T/acc"
[ -e "$T/both.tsv" ] && fail "-o committed although --reject-tsv failed"
ls "$T"/both.tsv.tmp* >/dev/null 2>&1 && fail "a temp file was left behind"
# --- misuse
expect_fail 2 "for help" "$BIN/ktau" -S -1 "$T/acc"
expect_fail 2 "for help" "$BIN/ktau" -b 0 "$T/acc"
expect_fail 2 "for help" "$BIN/ktau" -m precision:p "$T/acc"
expect_fail 2 "for help" "$BIN/ktau" -m ap:p "$T/acc"
expect_fail 2 "for help" "$BIN/ktau" -m accuracy: "$T/acc"
expect_fail 2 "for help" "$BIN/ktau" --bogus "$T/acc"
expect_fail 2 "for help" "$BIN/ktau" "$T/acc" --reject-tsv
expect_fail 2 "for help" "$BIN/ktau" "$T/acc" "$T/acc"
"$BIN/ktau" -h | grep -q '^usage: ktau' || fail "-h"
echo "ktau: ok"
