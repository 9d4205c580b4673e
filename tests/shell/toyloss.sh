#!/bin/sh
# toyloss: adding a loss with two settings touches one new file and one line (issue 45): a copy
# of the tree gains lib/training/loss_toy.c (a loss, w mean_i sum_d |mu_id|^p over a P x K
# batch, with its settings --toy-weight and --toy-power in its own table) and the line
# "X(toy)" in lib/training/loss.c's registry, nothing else. The copy's train then lists the two
# settings (--settings, --help), takes them for the toy loss and refuses them for another, keeps
# them in the checkpoint and a resumed run reads them back, and the loss it logs is w times the
# loss of w = 1 at the first step (the same weights: the setting reaches the loss; the log has 6 digits).
. "$(dirname "$0")/../lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=$(cd "$ROOT" && cd "$BUILD" && pwd)
bname=$(basename "$B")
mkdir -p "$T/tree/$bname"
(cd "$ROOT" && git ls-files --cached --others --exclude-standard -z 2>/dev/null | xargs -0 tar cf - 2>/dev/null) |
    (cd "$T/tree" && tar xf -) || fail "copying the tree"
[ -f "$T/tree/lib/training/loss.c" ] || fail "no lib/training/loss.c in the copy (not a git checkout?)"
cp -a "$T/tree" "$T/orig"
# the objects already built, so that only the two changed files compile (the same flags and data
# folder as the build under test: its config then says nothing changed)
for f in obj config; do [ -e "$B/$f" ] && cp -a "$B/$f" "$T/tree/$bname/"; done

cat > "$T/tree/lib/training/loss_toy.c" <<'EOF'
/* toy: w mean_i sum_d |mu_id|^p, a loss with two settings for tests/shell/toyloss.sh */
#include <math.h>

#include "loss.h"
#include "util.h"

enum { TOY_WEIGHT, TOY_POWER, TOY_NSET };
static const char *const toy_powers[] = {"one", "two", NULL}; /* p = 1, 2 */
static const setting toy_settings[TOY_NSET] = {
    [TOY_WEIGHT] = {"toy-weight", "W", "toy_weight", SETTING_REAL, 0, 100, 1, NULL, "w, the loss's weight"},
    [TOY_POWER] = {"toy-power", "P", "toy_power", SETTING_CHOICE, 0, 0, 1, toy_powers, "p: one or two"},
};
static const char *const toy_param_names[] = {NULL};
static void toy_init(const loss_config *cfg, float *params) { (void)cfg, (void)params; }
static double toy_fb(const loss_config *cfg, const loss_input *in, const float *params, float *dparams, float *dmu,
                     float *dvar, rng *r, loss_stats *st)
{
    double w = cfg->own[TOY_WEIGHT], sum = 0;
    int two = cfg->own[TOY_POWER] == 1, m = in->n * in->C * in->D;
    for (int i = 0; i < m; i++) {
        double x = in->mu[i];
        sum += two ? x * x : fabs(x);
        if (dmu)
            dmu[i] = (float)(w / in->n * (two ? 2 * x : (x > 0) - (x < 0)));
    }
    if (st)
        *st = (loss_stats){.nll = w * sum / in->n, .a = NAN, .b = NAN, .acc = NAN, .se2 = NAN};
    return w * sum / in->n;
}
const loss_kind loss_toy = {
    .name = "toy", .help = "a toy: w mean sum |mu|^p (tests/shell/toyloss.sh)", .batches = LOSS_GROUPS,
    .max_C = 1, .param_names = toy_param_names, .init_params = toy_init, .forward_backward = toy_fb,
    .settings = toy_settings, .nsettings = TOY_NSET,
};
EOF
# the one line: the registry's last entry gains a continuation and the toy follows it
awk '/^    X\([a-z_]+\)$/ { print $0 " \\"; print "    X(toy)"; next } { print }' "$T/orig/lib/training/loss.c" \
    > "$T/tree/lib/training/loss.c"
diff -r "$T/orig" "$T/tree" -x "$bname" > "$T/diff"
files=$(grep -c '^diff \|^Only in' "$T/diff")
added=$(grep -c '^> ' "$T/diff")
removed=$(grep -c '^< ' "$T/diff")
# (a changed line shows as one removed and one added: the old last entry gains its backslash)
[ "$files" = 2 ] && [ "$added" = 2 ] && [ "$removed" = 1 ] ||
    fail "the toy loss touched $files files, +$added -$removed lines: $(cat "$T/diff")"

make -C "$T/tree" BUILD="$bname" DATA="$DATA" "$bname/bin/train" > "$T/make.log" 2>&1 ||
    fail "building the copy's train: $(tail -n 20 "$T/make.log")"
TR=$T/tree/$bname/bin/train
compiled=$(grep -c ' -c -o ' "$T/make.log" || true)

"$TR" --loss toy --settings > "$T/toy.tsv" || fail "train --loss toy --settings"
grep -q "^toy	--toy-weight	W	toy_weight	real	0..100	1	" "$T/toy.tsv" || fail "toy-weight: $(cat "$T/toy.tsv")"
grep -q "^toy	--toy-power	P	toy_power	choice	one | two	two	" "$T/toy.tsv" || fail "toy-power: $(cat "$T/toy.tsv")"
"$TR" --help 2>&1 | grep -q -- " --toy-weight --toy-power" || fail "--help: $("$TR" --help 2>&1)"

mkdigits -N 1 -s train -n 400 -S 1 2>/dev/null | batcher -m pk -P 4 -K 4 -S 2 2>/dev/null | head -c 300000 > "$T/pk.hs"
cd "$T" || fail cd
"$TR" -o t1.ckpt --loss toy --head point -D 3 -n 1 -t 1 --log t1.log < pk.hs 2>/dev/null || fail "toy w = 1"
"$TR" -o t2.ckpt --loss toy --head point -D 3 -n 1 -t 1 --toy-weight 2.5 --toy-power one --log t2.log < pk.hs \
    2>/dev/null || fail "toy w = 2.5, p = 1"
"$TR" -o t3.ckpt --loss toy --head point -D 3 -n 1 -t 1 --toy-power one --log t3.log < pk.hs 2>/dev/null ||
    fail "toy p = 1"
l2=$(awk -F '\t' 'NR == 2 { print $2 }' t2.log) l3=$(awk -F '\t' 'NR == 2 { print $2 }' t3.log)
awk -v a="$l2" -v b="$l3" 'BEGIN { exit !(b > 0 && a / b > 2.5 - 1e-4 && a / b < 2.5 + 1e-4) }' ||
    fail "the first step's loss with w = 2.5 is $l2, with w = 1 $l3: not 2.5 times"
[ "$(tshow -H t2.ckpt 2>/dev/null | jq -c '[.meta.toy_weight, .meta.toy_power]')" = '[2.5,"one"]' ] ||
    fail "the checkpoint's toy settings: $(tshow -H t2.ckpt 2>/dev/null | jq -c .meta)"
"$TR" --resume t2.ckpt -n 5 -t 1 < pk.hs 2>/dev/null || fail "resume"
[ "$(tshow -H t2.ckpt 2>/dev/null | jq -c '[.meta.toy_weight, .meta.toy_power, .meta.step]')" = '[2.5,"one",5]' ] ||
    fail "the resumed checkpoint's toy settings: $(tshow -H t2.ckpt 2>/dev/null | jq -c .meta)"
expect_exit 2 "--toy-weight with triplet" "$TR" -o x.ckpt --loss triplet --head point --toy-weight 2 < /dev/null
grep -q "is an option of the toy loss" "$T/expect.err" || fail "$(cat "$T/expect.err")"
expect_exit 2 "--toy-power three" "$TR" -o x.ckpt --loss toy --head point --toy-power three < /dev/null
echo "toyloss: 1 new file and 1 line (+$added -$removed); $compiled files compiled; settings listed, taken, stored, resumed, refused elsewhere"
pass
