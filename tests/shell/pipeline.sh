#!/bin/sh
# Failures are loud: a pipeline whose runs do not all finish names each failed run with the end
# of its log and exits non-zero, and `make demo` (pipelines/demo.sh) never says "finished" then;
# while it runs, the demo shows where its runs stand (tests/shell/trainstat.sh tests the lines).
# The programs come from a build folder of links to the real ones in which `train` fails for
# point models only, so one run of the demo dies and the two others finish.
# The occlusion (issue 20): rectangles drawn at every use by default, recorded by the data folder,
# the runs, the tables and the checkpoints' lineage; a folder of another occlusion (or one made
# before it was recorded, squares) refused; squares occluded once one option away.
set -u
. "$(dirname "$0")/../lib.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$T/fake/bin"
for p in "$BIN"/*; do ln -s "$p" "$T/fake/bin/$(basename "$p")"; done
rm "$T/fake/bin/train"
cat > "$T/fake/bin/train" <<EOF
#!/bin/sh
case "\$*" in
*point*) sleep "\${FAIL_AFTER:-0}"; echo "train: simulated failure of a point run" >&2; exit 1 ;;
esac
exec "$BIN/train" "\$@"
EOF
chmod +x "$T/fake/bin/train"

# hib.sh: the table of what finished on stdout, the failed run named with its log, exit 1
BUILD=$T/fake sh "$root/pipelines/hib.sh" demo -s 30 -j 2 "$T/hib" > "$T/table" 2> "$T/err"
rc=$?
[ "$rc" = 1 ] || fail "hib.sh with a failing run exited $rc, expected 1"
grep -q "failed run N2-D2-point-b1e-4" "$T/err" || fail "the failed run is not named: $(tail -n 20 "$T/err")"
grep -q "simulated failure of a point run" "$T/err" || fail "the end of the failed run's log is not shown"
grep -q "finished: N2-D2-mog1-b1e-4 N2-D2-mog2-b1e-4" "$T/err" || fail "what finished is not said: $(tail -n 20 "$T/err")"
grep -q "N=2 D=2 MoG-1" "$T/table" || fail "the finished runs' table is missing: $(cat "$T/table")"
grep -q "N=2 D=2 point" "$T/table" && fail "the table has a column for the failed run"
grep -q "^Runs finished: 2 of 3 (" "$T/table" || fail "the table does not say that a run is missing: $(tail -n 3 "$T/table")"

# a second call retries the failed run and keeps the finished ones
before=$(ls -l --time-style=+%s.%N "$T/hib/runs/N2-D2-mog1-b1e-4/results.tsv")
BUILD=$T/fake sh "$root/pipelines/hib.sh" demo -s 30 -j 2 "$T/hib" > /dev/null 2> "$T/err2"
[ $? = 1 ] || fail "the retry of a run that fails again did not exit 1"
[ "$before" = "$(ls -l --time-style=+%s.%N "$T/hib/runs/N2-D2-mog1-b1e-4/results.tsv")" ] ||
    fail "the retry redid a finished run"
grep -q "simulated failure" "$T/hib/runs/N2-D2-point-b1e-4/run.log" || fail "the failed run was not retried"

# demo.sh: exit 1, the failure on stderr, and never "finished"
STEPS=30 PROGRESS_EVERY=1 FAIL_AFTER=3 BUILD=$T/fake sh "$root/pipelines/demo.sh" "$T/hib" > "$T/demo.out" 2> "$T/demo.err"
rc=$?
# while it trains, where its runs stand (grid_progress: plain lines, stderr not a terminal; the
# failing run takes 3 s, so that the demo lasts several seconds even on an idle machine)
grep -q "^demo: runs done [0-3] of 3" "$T/demo.err" || fail "demo.sh showed no progress: $(head -n 5 "$T/demo.err")"
[ "$rc" = 1 ] || fail "demo.sh with a failing run exited $rc, expected 1"
grep -v "^Runs finished: 2 of 3 (" "$T/demo.out" | grep -q "finished" && fail "demo.sh said finished: $(cat "$T/demo.out")"
grep -q "demo: FAILED" "$T/demo.err" || fail "demo.sh did not say it failed: $(cat "$T/demo.err")"
grep -q "failed run N2-D2-point-b1e-4" "$T/demo.err" || fail "demo.sh did not name the failed run"

# and with every run finishing, exit 0 (the real programs)
rm -rf "$T/hib/runs/N2-D2-point-b1e-4"
BUILD=$(dirname "$BIN") sh "$root/pipelines/hib.sh" demo -s 30 -j 2 "$T/hib" > "$T/table" 2> "$T/err" ||
    fail "hib.sh with every run finishing exited $?: $(tail -n 20 "$T/err")"
grep -q "N=2 D=2 point" "$T/table" || fail "the retried run is not in the table"
grep -q "τ (AP, η), corrupt | – / – | " "$T/table" || fail "a point model's tau is not undefined: $(cat "$T/table")"

# the occlusion (issue 20): by default rectangles, drawn afresh at every use between batcher and
# train; the data folder and every run record it, the table says it, the checkpoint's lineage
# shows it; a folder made with another occlusion is refused, the old one is one option away
[ "$(cat "$T/hib/data/N2/occlusion")" = "shape=rect train=per-use" ] || fail "the data folder does not record its occlusion"
for r in point mog1 mog2; do
    [ "$(cat "$T/hib/runs/N2-D2-$r-b1e-4/occlusion" 2>/dev/null)" = "shape=rect train=per-use" ] ||
        fail "run $r does not record its occlusion"
done
grep -q "^Occlusion (shape=rect train=per-use): rectangles" "$T/table" || fail "the table does not say its occlusion: $(tail -n 3 "$T/table")"
tshow -q "$T/hib/runs/N2-D2-mog1-b1e-4/model.ckpt" | head -n 1 | grep -q -- "-> batcher .* -> occlude -p 0.2 --shape rect .* -> train" ||
    fail "the training did not read batcher | occlude: $(tshow -q "$T/hib/runs/N2-D2-mog1-b1e-4/model.ckpt" | head -n 1)"
tshow -H "$T/hib/data/N2/train.hs" | grep -q '"occluded"' && fail "per-use: train.hs is occluded already"
tshow -H "$T/hib/data/N2/test-corrupt.hs" | grep -q '"occlusion_shape": "rect"' || fail "the corrupt twins are not rectangles"
BUILD=$(dirname "$BIN") sh "$root/pipelines/hib.sh" demo -s 30 --shape square "$T/hib" > /dev/null 2> "$T/err" &&
    fail "hib.sh --shape square reused a folder of rectangles"
grep -q "holds data made with occlusion 'shape=rect train=per-use'" "$T/err" || fail "no word on the occlusion mismatch: $(tail -n 3 "$T/err")"
BUILD=$(dirname "$BIN") sh "$root/pipelines/hib.sh" demo -s 30 --train-occlusion always "$T/hib" > /dev/null 2> "$T/err"
[ $? = 2 ] && grep -q "unknown training occlusion 'always'" "$T/err" || fail "--train-occlusion always was not refused as misuse"
# a folder made before the occlusion was recorded holds squares occluded once: refused for the
# default, served to --shape square --train-occlusion fixed
mkdir -p "$T/legacy/data/N2"
cp "$T/hib/data/N2/test-corrupt.hs" "$T/legacy/data/N2/test-corrupt.hs"
BUILD=$(dirname "$BIN") sh "$root/pipelines/hib-data.sh" 2 "$T/legacy/data/N2" 2> "$T/err" && fail "hib-data.sh reused an unrecorded (square) folder for rectangles"
grep -q "occlusion 'shape=square train=fixed'" "$T/err" || fail "no word on the legacy folder: $(cat "$T/err")"
rm -rf "$T/legacy"
# the old occlusion, one option away: squares occluded once into train.hs, batcher | train
OCCLUDE_SHAPE=square TRAIN_OCCLUSION=fixed BUILD=$(dirname "$BIN") sh "$root/pipelines/hib-run.sh" "$T/fixed" N2-D2-point 2 2 point 10 \
    2> "$T/err" || fail "hib-run.sh with square, fixed occlusion: $(tail -n 5 "$T/err")"
tshow -H "$T/fixed/data/N2/train.hs" | grep -q '"occlusion_shape": "square"' || fail "fixed: train.hs not occluded with squares"
tshow -q "$T/fixed/runs/N2-D2-point/model.ckpt" | head -n 1 | grep -q -- "-> batcher [^>]* -> train" ||
    fail "fixed: the training did not read batcher alone: $(tshow -q "$T/fixed/runs/N2-D2-point/model.ckpt" | head -n 1)"
[ "$(cat "$T/fixed/runs/N2-D2-point/occlusion")" = "shape=square train=fixed" ] || fail "fixed: the run does not record it"
rm -rf "$T/fixed"

# spe.sh, in the same OUT (it shares hib.sh's data): loud on failed runs (point and PN, both
# point models, fail), then whole
REPEATS=3 BUILD=$T/fake sh "$root/pipelines/spe.sh" demo -s 3 -j 2 "$T/hib" > "$T/spe" 2> "$T/spe.err"
rc=$?
[ "$rc" = 1 ] || fail "spe.sh with a failing run exited $rc, expected 1: $(tail -n 5 "$T/spe.err")"
grep -q "failed run N2-D2-point" "$T/spe.err" || fail "spe.sh did not name the failed run: $(tail -n 20 "$T/spe.err")"
grep -q "failed run N2-D2-pn" "$T/spe.err" || fail "spe.sh did not name the failed PN run"
grep -q "finished: N2-D2-hib N2-D2-spe" "$T/spe.err" || fail "spe.sh did not say what finished: $(tail -n 30 "$T/spe.err")"
grep -q "^| SPE | few-shot (the paper's) | [0-9.]* / 93.0 | [0-9.]* / 90.0 |" "$T/spe" || fail "no SPE row in spe.sh's table: $(cat "$T/spe")"
grep -q "^| point" "$T/spe" && fail "spe.sh's table has a row for the failed run"
grep -q "^| PN" "$T/spe" && fail "spe.sh's table has a row for the failed PN run"
before=$(ls -l --time-style=+%s.%N "$T/hib/runs/N2-D2-spe/results.tsv")
REPEATS=3 BUILD=$(dirname "$BIN") sh "$root/pipelines/spe.sh" demo -s 3 -j 2 "$T/hib" > "$T/spe" 2> "$T/spe.err" ||
    fail "spe.sh with every run finishing exited $?: $(tail -n 20 "$T/spe.err")"
[ "$before" = "$(ls -l --time-style=+%s.%N "$T/hib/runs/N2-D2-spe/results.tsv")" ] || fail "spe.sh redid a finished run"
# a finished run called again with another number of test episodes is scored on those, not kept
REPEATS=4 BUILD=$(dirname "$BIN") sh "$root/pipelines/spe-run.sh" "$T/hib" N2-D2-pn 2 2 pn 3 2> "$T/rep.err" ||
    fail "spe-run.sh with REPEATS=4: $(tail -n 5 "$T/rep.err")"
grep -q '"episodes": 4,' "$T/hib/runs/N2-D2-pn/fs-seen-xc.json" || fail "REPEATS=4 kept the 3-episode score: $(cat "$T/hib/runs/N2-D2-pn/fs-seen-xc.json")"
grep -q "was scored on 3 episodes, not 4: scored again" "$T/rep.err" || fail "spe-run did not say it scored again: $(cat "$T/rep.err")"
for row in "point (soft" "HIB (MoG-1" "PN" "SPE"; do
    [ "$(grep -c "^| $row" "$T/spe")" = 6 ] || fail "spe.sh: not two rows '$row' (two readings) in each of the three tables"
done
# point and HIB read first as KNN (the paper's columns are Oh et al.'s KNN), against the paper's
# KNN numbers; every model has a KNN line for each split and condition
grep -q "^| HIB (MoG-1, VIB) | KNN, k = 5 (the paper's) | [0-9.]* / 87.9 | [0-9.]* / 87.3 |" "$T/spe" ||
    fail "no KNN row for HIB against the paper's 87.9 / 87.3: $(cat "$T/spe")"
grep -q "^| PN | KNN, k = 5 | [0-9.]* | [0-9.]* |$" "$T/spe" || fail "no second (KNN) row for PN: $(cat "$T/spe")"
for m in point hib pn spe; do
    [ "$(awk -F'\t' '$3 == "knn" && $4 >= 0 && $4 <= 1' "$T/hib/runs/N2-D2-$m/results.tsv" | cut -f2 | sort | tr '\n' ' ')" = \
        "seen-cc seen-cx seen-xc unseen-cc unseen-cx unseen-xc " ] || fail "N2-D2-$m: not one KNN accuracy per split and condition: $(cat "$T/hib/runs/N2-D2-$m/results.tsv")"
done
grep -q "spe_naive" "$T/hib/runs/N2-D2-spe/fs-unseen-xc.json" || fail "SPE was not scored by its sampler"

# the metric-learning pipelines (hetriplet.sh, fstat.sh, cesoftmax.sh), same OUT and data: a
# fake train that fails the hetriplet and cenm runs, then the real one; the tables' rows
rm "$T/fake/bin/train"
printf '#!/bin/sh\ncase "$*" in\n*hetriplet* | *cenm*) echo "train: simulated failure" >&2; exit 1 ;;\nesac\nexec "%s/train" "$@"\n' \
    "$BIN" > "$T/fake/bin/train"
chmod +x "$T/fake/bin/train"
for paper in hetriplet cesoftmax; do
    BUILD=$T/fake sh "$root/pipelines/$paper.sh" demo -s 20 "$T/hib" > "$T/$paper" 2> "$T/$paper.err"
    rc=$?
    [ "$rc" = 1 ] || fail "$paper.sh with a failing run exited $rc, expected 1"
    grep -q "failed run N2-D[0-9]*-hetriplet\|failed run N2-D[0-9]*-cenm" "$T/$paper.err" ||
        fail "$paper.sh did not name the failed run: $(tail -n 20 "$T/$paper.err")"
    BUILD=$(dirname "$BIN") sh "$root/pipelines/$paper.sh" demo -s 20 "$T/hib" > "$T/$paper" 2> "$T/$paper.err" ||
        fail "$paper.sh with every run finishing exited $?: $(tail -n 20 "$T/$paper.err")"
done
BUILD=$(dirname "$BIN") sh "$root/pipelines/fstat.sh" demo -s 20 "$T/hib" > "$T/fstat" 2> "$T/fstat.err" ||
    fail "fstat.sh exited $?: $(tail -n 20 "$T/fstat.err")"
num='-\{0,1\}[0-9.]*'
grep -q "^| 2 | 8 | hetriplet | $num | $num | $num | $num | $num | $num | $num |" "$T/hetriplet" ||
    fail "no whole hetriplet row (cleaning by uncertainty, tau, r): $(cat "$T/hetriplet")"
grep -q "^| 2 | 8 | triplet | $num | $num | $num | $num | – | – | – |" "$T/hetriplet" ||
    fail "the triplet row is not whole, or has uncertainty numbers: $(cat "$T/hetriplet")"
grep -q "^| 2 | 8 | fstat | $num | $num | $num | $num | $num | $num | $num | $num | $num | – | $num |" "$T/fstat" ||
    fail "no whole fstat row: $(cat "$T/fstat")"
for L in sampled_softmax snm cesoftmax cenm cemargin; do
    grep -q "^| 2 | 16 | $L | $num | $num | $num |" "$T/cesoftmax" || fail "no $L row: $(cat "$T/cesoftmax")"
done
pass
