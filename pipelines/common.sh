# Sourced by the pipelines: where the programs are, and small helpers that only compose them.
# No numerics here: every number is computed by a hedge program.

# pipeline_help SCRIPT: the opening comment of SCRIPT (after its #! line), what `hedge help NAME`
# prints. Every pipeline answers -h and --help as its first word with it, on stdout, exit 0,
# before it makes or writes anything (grid_options takes them among the options too).
pipeline_help() { sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p;}' "$1"; }
case ${1:-} in -h | --help) pipeline_help "$0" || exit 1; exit 0 ;; esac
HEDGE_ROOT=${HEDGE_ROOT:-$(cd "$(dirname "$0")/.." && pwd)}
# the programs are in BUILD/bin: a source tree's build/ (BUILD relative to HEDGE_ROOT), or, in a
# tree installed by `make install` (HEDGE_ROOT = PREFIX/lib/hedge), HEDGE_ROOT/bin itself
if [ -z "${BUILD:-}" ] && [ ! -d "$HEDGE_ROOT/build/bin" ] && [ -x "$HEDGE_ROOT/bin/tshow" ]; then
    BUILD=$HEDGE_ROOT
fi
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD="$HEDGE_ROOT/$BUILD" ;; esac
PATH="$BUILD/bin:$PATH"
export PATH HEDGE_ROOT BUILD
# The MNIST: mkdigits reads HEDGE_MNIST, else the data/mnist of the source tree it was built in
# (make's DATA; `make data` fetches it there). An installed tree (BUILD = HEDGE_ROOT) must not
# depend on that tree: its data lives in the user's XDG data folder,
# ${XDG_DATA_HOME:-$HOME/.local/share}/hedge/mnist, where `hedge fetch-mnist` puts it (bin/hedge.sh
# sets the same for the programs it runs). mnist_dir is where the MNIST goes: HEDGE_MNIST, else
# the source tree's data/mnist.
if [ "$BUILD" = "$HEDGE_ROOT" ] && [ -z "${HEDGE_MNIST:-}" ]; then
    case ${XDG_DATA_HOME:-} in
    /*) HEDGE_MNIST=$XDG_DATA_HOME/hedge/mnist ;;
    *) HEDGE_MNIST=${HOME:-}/.local/share/hedge/mnist ;;
    esac
    export HEDGE_MNIST
fi
mnist_dir=${HEDGE_MNIST:-$HEDGE_ROOT/data/mnist}
# Threads on purpose: a pipeline runs several programs; each BLAS user gets one thread unless
# a script says otherwise (train gets the cores its job slot owns).
export OPENBLAS_NUM_THREADS=1

say() { printf '%s\n' "$*" >&2; }

# need_programs PROG...: each PROG is a program on PATH, else says which is missing and fails (a
# pipeline run from a tree that is not built, or with HEDGE_ROOT or BUILD pointing elsewhere,
# would otherwise print empty tables)
need_programs() {
    for np_p; do
        command -v "$np_p" > /dev/null 2>&1 ||
            { say "${0##*/}: no program '$np_p' in $BUILD/bin (HEDGE_ROOT $HEDGE_ROOT): build hedge first (make)"; return 1; }
    done
}

# recipe_args NAME: the train options of a training recipe (docs/hib.md, "Recipes"). The recipe is
# the pipelines' choice; train's own defaults stay the paper's.
#   paper  Adam, learning rate 1e-3, constant; 128 pairs per batch (the HIB paper)
#   fast   Adam, 3e-3 peak, 1,000 warm-up steps, cosine decay to 3e-5 at the last step (chosen
#          on the validation split for a two-core budget: docs/hib.md, "Recipes")
recipe_args() {
    case $1 in
    paper) echo "" ;;
    fast) echo "--recipe fast --warmup 1000" ;; # train --recipe fast, but 1,000 warm-up steps at any length
    *) say "unknown recipe '$1' (paper or fast)"; return 1 ;;
    esac
}

# The occlusion (docs/data.md), from the environment or the pipelines' options (grid_options):
#   OCCLUDE_SHAPE    rect (default: width and height each U{0..28}, the SPE paper's appendix E,
#                    "identical to the scheme used in Oh et al.") or square (side U{0..28}, the
#                    HIB paper's appendix A as written; every table before issue 20)
#   TRAIN_OCCLUSION  per-use (default: each training image occluded afresh, p = 0.2 per digit, at
#                    every use: batcher | occlude | train, HIB appendix A's "independent binary
#                    random flags B for every digit") or fixed (the training composites occluded
#                    once into the data folder's train.hs and reused every epoch)
# The test twins (clean, corrupt, noisy) are occluded with the same shape. A data folder records
# both in DATA/occlusion and refuses to serve another (occlusion_check), so a folder made with
# squares is never reused for rectangles.
OCCLUDE_SHAPE=${OCCLUDE_SHAPE:-rect}
TRAIN_OCCLUSION=${TRAIN_OCCLUSION:-per-use}
export OCCLUDE_SHAPE TRAIN_OCCLUSION

# occlusion_valid: 0 when OCCLUDE_SHAPE and TRAIN_OCCLUSION hold known values, else says why
occlusion_valid() {
    case $OCCLUDE_SHAPE in rect | square) ;; *) say "${0##*/}: unknown occlusion shape '$OCCLUDE_SHAPE' (rect or square)"; return 1 ;; esac
    case $TRAIN_OCCLUSION in per-use | fixed) ;; *) say "${0##*/}: unknown training occlusion '$TRAIN_OCCLUSION' (per-use or fixed)"; return 1 ;; esac
}

# occlusion_id: the occlusion as the data folders record it, e.g. "shape=rect train=per-use"
occlusion_id() { echo "shape=$OCCLUDE_SHAPE train=$TRAIN_OCCLUSION"; }

# occlusion_check DATA: DATA (a hib-data.sh folder) holds data of this occlusion, or holds nothing
# yet (then it is recorded). A folder made before the occlusion was recorded (a train.hs without
# DATA/occlusion) holds squares occluded once: "shape=square train=fixed". Else says and fails.
occlusion_check() {
    oc_want=$(occlusion_id)
    if [ -s "$1/occlusion" ]; then
        oc_have=$(cat "$1/occlusion")
    elif [ -s "$1/train.hs" ] || [ -s "$1/test-corrupt.hs" ]; then
        oc_have="shape=square train=fixed"
    else
        mkdir -p "$1" && echo "$oc_want" > "$1/occlusion.tmp.$$" && mv "$1/occlusion.tmp.$$" "$1/occlusion"
        return
    fi
    [ "$oc_have" = "$oc_want" ] && { [ -s "$1/occlusion" ] || echo "$oc_want" > "$1/occlusion"; return 0; }
    oc_hs=${oc_have#shape=} oc_ht=${oc_have##*train=}
    say "pipeline: $1 holds data made with occlusion '$oc_have', this run asks for '$oc_want': give another OUT, or ask for that occlusion (--shape ${oc_hs%% *} --train-occlusion $oc_ht)"
    return 1
}

# occlusion_note: one sentence for the tables, saying which occlusion made them
occlusion_note() {
    case $OCCLUDE_SHAPE in
    rect) on_s="rectangles, width and height each uniform on 0..28 (the SPE paper's appendix E)" ;;
    *) on_s="squares, side uniform on 0..28 (the HIB paper's appendix A)" ;;
    esac
    case $TRAIN_OCCLUSION in
    per-use) on_t="training images occluded afresh at every use (each digit with p = 0.2: batcher | occlude | train)" ;;
    *) on_t="training images occluded once (each digit with p = 0.2) and reused every epoch" ;;
    esac
    echo "Occlusion ($(occlusion_id)): $on_s; $on_t; corrupt test twins: every digit occluded."
}

# train_batches DATA SEED BATCHER-OPTIONS...: the training batches of DATA/train.hs on stdout,
# occluded afresh at every use when TRAIN_OCCLUSION is per-use (the same batches and patches for
# the same SEED, so train --resume, which skips the batches it trained on, continues exactly)
train_batches() {
    tb_data=$1 tb_seed=$2
    shift 2
    if [ "$TRAIN_OCCLUSION" = per-use ]; then
        batcher "$@" -S "$tb_seed" < "$tb_data/train.hs" | occlude -p 0.2 --shape "$OCCLUDE_SHAPE" -S "$tb_seed"
    else
        batcher "$@" -S "$tb_seed" < "$tb_data/train.hs"
    fi
}

# run_occlusion RUN: records the occlusion a run trains with in RUN/occlusion; a run folder that
# recorded another one is refused (its checkpoint would continue under other patches)
run_occlusion() {
    ro_want=$(occlusion_id)
    if [ -s "$1/occlusion" ] && [ "$(cat "$1/occlusion")" != "$ro_want" ]; then
        say "pipeline: run $1 was trained with occlusion '$(cat "$1/occlusion")', not '$ro_want': give another OUT"
        return 1
    fi
    echo "$ro_want" > "$1/occlusion"
}

# The grids: every experiment pipeline (hib.sh, spe.sh, metric.sh, compare.sh) runs its
# configurations with GNU parallel, here or on other machines through ssh
# (docs/grids.md).
#
# grid_options QUICK_STEPS FULL_STEPS "$@": parses the pipeline's options after its positional
# words, [--quick | --full] [-j JOBS] [-t THREADS] [-s STEPS] [--recipe fast|paper]
# [--data mnist|fashion] [--body SPEC] [--shape rect|square] [--train-occlusion per-use|fixed] [--seeds K|S1,S2,...]
# [--only PATTERN] [--restore RESULTS]... [--report] [--sshlogin S]... [--sshloginfile F]
# [--transfer] [--retries N] OUT, and sets:
#   steps    QUICK_STEPS (the default, and --quick), FULL_STEPS (--full) or -s STEPS
#   preset   quick, full or "" (the last of --quick and --full given), for per-pipeline presets
#   jobs (2: jobs at a time on each machine), threads (1), recipe (fast)
#   dataset  mnist (the default) or fashion, also exported as DATASET (pipelines/hib-data.sh)
#   body     --body's spec (train --body: conv, the default, or mlp:W1,W2,... / linear on the
#            images' pixels), added to TRAIN_ARGS (exported) so that every run trains it; ""
#            without --body. Give such a grid its own OUT: run names do not say the body.
#   OCCLUDE_SHAPE, TRAIN_OCCLUSION  from --shape and --train-occlusion (exported; see above)
#   seeds    the training seeds (--seeds; see "Seeds" below), only  --only's pattern or ""
#   restore  --restore's results files (absolute), one per line, or "" (see "Restoring runs")
#   report   1 with --report: nothing is made or trained, the tables are printed from the runs
#            OUT holds (a grid still running, or stopped), with runs_note's count; else 0
#   out      OUT, made absolute when jobs run on other machines (they need the whole path)
#   remote   GNU parallel's options for remote execution, as shell words for eval: the
#            --sshlogin and --sshloginfile given (quoted) and --retries (N, default 2 with any
#            ssh login: a job that fails, a dead machine's included, is tried again on
#            another); empty when none
#   grid_logins  the --sshlogin / --sshloginfile words alone; transfer  1 with --transfer, else 0
# An unknown option, a bad value or a missing OUT calls the caller's `usage`; -h or --help among
# them prints the pipeline's help (pipeline_help) and exits 0.
grid_options() {
    go_quick=$1 go_full=$2
    shift 2
    for go_a; do case $go_a in -h | --help) pipeline_help "$0" || exit 1; exit 0 ;; esac; done
    steps=$go_quick preset="" jobs=2 threads=1 recipe=fast dataset=mnist body=""
    remote="" grid_logins="" transfer=0 go_retries="" go_seeds=1 only="" restore="" report=0
    while [ $# -gt 1 ]; do
        case $1 in
        --quick) steps=$go_quick preset=quick ;;
        --full) steps=$go_full preset=full ;;
        -j) jobs=$2; shift ;;
        -t) threads=$2; shift ;;
        -s) steps=$2; shift ;;
        --recipe) recipe=$2; shift ;;
        --data) dataset=$2; shift ;;
        --body) body=$2; shift ;;
        --shape) OCCLUDE_SHAPE=$2; shift ;;
        --train-occlusion) TRAIN_OCCLUSION=$2; shift ;;
        --seeds) go_seeds=$2; shift ;;
        --only) only=$2; shift ;;
        --restore)
            go_r=$2
            [ -r "$go_r" ] || { say "${0##*/}: --restore: cannot read '$go_r'"; usage; }
            [ "$(head -n 1 "$go_r")" = "$(printf 'run\tconfig\tseed\tset\tmetric\tvalue\tnote')" ] ||
                { say "${0##*/}: --restore: '$go_r' is not a pipeline's results file (its first line is not 'run config seed set metric value note', tab-separated)"; usage; }
            case $go_r in /*) ;; *) go_r=$PWD/$go_r ;; esac
            restore="$restore$go_r
"; shift ;;
        --report) report=1 ;;
        --sshlogin) grid_logins="$grid_logins --sshlogin $(grid_quote "$2")"; shift ;;
        --sshloginfile)
            go_f=$2
            # parallel runs elsewhere (OUT, with --transfer): a relative file name must not move
            case $go_f in /*) ;; *) [ -e "$go_f" ] && go_f=$PWD/$go_f ;; esac
            grid_logins="$grid_logins --sshloginfile $(grid_quote "$go_f")"; shift ;;
        --transfer) transfer=1 ;;
        --retries) go_retries=$2; shift ;;
        *) usage ;;
        esac
        shift
    done
    [ $# = 1 ] || usage
    case $1 in '' | -*) usage ;; esac
    out=$1
    go_me=${0##*/}
    [ "$report" = 0 ] || [ -d "$out" ] || { say "$go_me: --report: no output folder '$out' (no grid has run there)"; exit 1; }
    for go_v in "-s $steps" "-t $threads" "--retries ${go_retries:-1}"; do
        case ${go_v#* } in '' | *[!0-9]*) say "$go_me: ${go_v%% *}: not a number: '${go_v#* }'"; usage ;; esac
    done
    case $jobs in '' | *[!0-9%+-]*) say "$go_me: -j: not a number of jobs: '$jobs'"; usage ;; esac
    case $recipe in fast | paper) ;; *) say "$go_me: unknown recipe '$recipe' (fast or paper)"; usage ;; esac
    case $dataset in mnist | fashion) ;; *) say "$go_me: unknown data set '$dataset' (mnist or fashion)"; usage ;; esac
    DATASET=$dataset
    export DATASET
    case $body in
    '' ) ;;
    conv | linear | mlp:[1-9]*) TRAIN_ARGS="${TRAIN_ARGS:-} --body $body"; export TRAIN_ARGS ;;
    *) say "$go_me: --body: '$body' is not conv, linear or mlp:W1,W2,..."; usage ;;
    esac
    occlusion_valid || usage
    seeds=$(seed_list "$go_seeds") || usage
    if [ -n "$grid_logins" ]; then
        go_retries=${go_retries:-2}
        while :; do case $out in ./*) out=${out#./} ;; *) break ;; esac; done
        case $out in /*) ;; *) out=$PWD/$out ;; esac
        if [ "$transfer" = 1 ]; then
            sh "$HEDGE_ROOT/pipelines/setup-deps.sh" transfer || exit 1
        else
            sh "$HEDGE_ROOT/pipelines/setup-deps.sh" ssh || exit 1
        fi
    elif [ "$transfer" = 1 ]; then
        say "$go_me: --transfer sends jobs to other machines: give them with --sshlogin or --sshloginfile"
        usage
    fi
    remote=$grid_logins
    [ -n "$go_retries" ] && remote="$remote --retries $go_retries"
    return 0
}

# Seeds (issue 20): one run per configuration and training seed. --seeds K trains every
# configuration with K seeds, SEED (714 unless the environment says) and the K - 1 after it;
# --seeds S1,S2,... with those. Only the training depends on the seed (the order of the batches,
# the occlusion drawn at every use, the initial weights); the data, its test twins and the test
# pairs and episodes are those of SEED in every run, so the runs differ by their training alone.
# The run of SEED keeps the configuration's name (an OUT of one seed grows into one of K: its runs
# are kept), any other seed's run is NAME.sSEED. The tables print the mean over a configuration's
# seeds and, with two or more, "± SD", the sample standard deviation (seedstat); OUT/results-*.tsv
# has every run's numbers, one per line, with the seed.

# seed_list K|S1,S2,...: the training seeds, one per line; says why and fails on a bad value
seed_list() {
    sl_base=${SEED:-714}
    case $1 in
    '' | *[!0-9,]* | ,* | *, | *,,*) say "${0##*/}: --seeds: expected a count K or seeds S1,S2,..., got '$1'"; return 1 ;;
    *,*) echo "$1" | tr ',' '\n' ;;
    *)
        [ "$1" -ge 1 ] || { say "${0##*/}: --seeds: at least one seed, got '$1'"; return 1; }
        sl_i=0
        while [ "$sl_i" -lt "$1" ]; do echo $((sl_base + sl_i)); sl_i=$((sl_i + 1)); done ;;
    esac
}

# seed_configs CONFIGS: CONFIGS (lines "NAME WORDS...") rewritten for $seeds and $only: the lines
# whose NAME matches $only (grep -E; all without --only), once per seed, all the configurations of
# the first seed before those of the next (a grid that grows by a seed keeps its first jobs)
seed_configs() {
    sc_base=${SEED:-714}
    if [ -n "$only" ]; then
        awk -v re="$only" '$1 ~ re' "$1" > "$1.only"
        [ -s "$1.only" ] || { rm -f "$1.only"; say "${0##*/}: --only '$only' matches none of the configurations in $1"; return 1; }
        mv "$1.only" "$1"
    fi
    for sc_s in $seeds; do
        if [ "$sc_s" = "$sc_base" ]; then cat "$1"; else awk -v s="$sc_s" '{ $1 = $1 ".s" s; print }' "$1"; fi
    done > "$1.seeds"
    mv "$1.seeds" "$1"
}

# train_seed NAME: the training seed of the run NAME: SEED (714), or S for a run named NAME.sS
train_seed() {
    case $1 in
    *.s[0-9]*) ts_s=${1##*.s}; case $ts_s in *[!0-9]*) echo "${SEED:-714}" ;; *) echo "$ts_s" ;; esac ;;
    *) echo "${SEED:-714}" ;;
    esac
}

# Restoring runs: a machine that stopped takes OUT with it, checkpoints and all; what survives is
# the results file a pipeline wrote (OUT/results-EXPERIMENT.tsv, committed as results/*/results.tsv
# with the command that made it). --restore RESULTS gives a new OUT those runs back: each run of
# CONFIGS that RESULTS holds and OUT does not gets OUT/runs/NAME/results.tsv from it and a marker
# OUT/runs/NAME/restored (naming RESULTS), so that its runner keeps it as finished (run_restored)
# and the tables count it; the others train as usual. --restore again names another file: a run
# is taken from the first file that holds it (a grid whose runs are committed in several results
# files, e.g. Table 5's beta 1e-4 run in Table 1's). A restored run has no checkpoint: nothing
# can be evaluated again on it. RESULTS must come from the same pipeline and options (steps,
# recipe, occlusion, data): hedge cannot check that, the command beside the file says it.

# restore_runs RESULTS OUT CONFIGS: the runs of CONFIGS found in RESULTS (files, one per line; a
# run from the first that holds it) written into OUT/runs
restore_runs() {
    mkdir -p "$2/runs"
    while read -r rr_name _; do
        rr_run=$2/runs/$rr_name rr_tmp=$2/runs/.restore.tmp.$$
        [ -s "$rr_run/results.tsv" ] && continue
        printf '%s\n' "$1" | while IFS= read -r rr_file; do
            [ -n "$rr_file" ] || continue
            awk -F'\t' -v OFS='\t' -v n="$rr_name" 'NR > 1 && $1 == n {
                if ($7 == "") print $1, $4, $5, $6; else print $1, $4, $5, $6, $7 }' "$rr_file" > "$rr_tmp"
            if [ -s "$rr_tmp" ]; then
                mkdir -p "$rr_run"
                echo "$rr_file" > "$rr_run/restored"
                occlusion_id > "$rr_run/occlusion"
                mv "$rr_tmp" "$rr_run/results.tsv"
                say "${0##*/}: $rr_name restored from $rr_file"
                break
            fi
        done
        rm -f "$rr_tmp"
    done < "$3"
}

# run_restored RUN: 0 when RUN was restored by --restore (its runner then has nothing to do)
run_restored() { [ -e "$1/restored" ] && [ -s "$1/results.tsv" ]; }

# grid_file OUT STEM EXT: a file a grid writes in OUT, OUT/STEM.EXT (its configurations
# configs-NAME.txt, its results results-NAME.tsv), or with --report OUT/STEM.report.EXT: a report,
# maybe asked with other options (--only, --seeds), must not change the configurations that a
# grid still running in OUT reads again at its end, nor the results file a grid wrote
grid_file() {
    if [ "$report" = 1 ]; then echo "$1/$2.report.$3"; else echo "$1/$2.$3"; fi
}

# grid_data PREFIX CONFIGS: the data of every N of CONFIGS (its second word; compare.sh's lines
# have none: N = 2) in OUT/data/N<N>, made once (hib-data.sh), which the runs then share; nothing
# with --report
grid_data() {
    [ "$report" = 1 ] && return 0
    for gd_n in $(awk '{ print ($2 ~ /^[0-9]+$/) ? $2 : 2 }' "$2" | sort -u); do
        say "$1: making the $gd_n-digit $DATASET data in $out/data/N$gd_n"
        sh "$HEDGE_ROOT/pipelines/hib-data.sh" "$gd_n" "$out/data/N$gd_n" || return 1
    done
}

# grid_quote WORD: WORD quoted for the shell ('...')
grid_quote() { printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")"; }

# The environment the runners read, sent to every remote job (GNU parallel's --env; a variable
# that is not set is not sent). PATH, HEDGE_ROOT and BUILD only to a shared directory: under
# --transfer they are the job's work folder on the remote.
GRID_ENV="OPENBLAS_NUM_THREADS THREADS TRAIN_ARGS RECIPE DATASET MKDIGITS_ARGS SEED QUERIES REPEATS BATCH HOLDOUT OCCLUDE_SHAPE TRAIN_OCCLUSION"

# grid_parallel JOBLOG CONFIGS COMMAND: runs COMMAND for every line of CONFIGS (words {1}, {2},
# ...) with GNU parallel, $jobs at a time (per machine), the job log in JOBLOG, resuming: jobs
# that finished before are skipped (--resume-failed; JOBLOG.configs keeps the CONFIGS it
# numbers). Never fails: the pipelines read which runs finished from their results (check_runs).
# With --report ($report 1) it restores what --restore names and runs nothing. With $remote the
# jobs go where grid_options said:
#  - a shared directory (the default): the remote machines see OUT and the hedge tree at the
#    same paths (NFS, or the same machine); the same absolute commands run there, with the
#    environment above, PATH, HEDGE_ROOT and BUILD.
#  - --transfer: nothing is shared. Each remote works in ~/.hedge-grid/OUT (OUT's whole path
#    under it, relative to the home folder where ssh logins start), emptied first: it gets the
#    hedge scripts (pipelines/), the built programs (bin/) and OUT/data once (--basefile), and
#    each job its run folder OUT/runs/NAME (--transferfile: a run interrupted before resumes
#    there), which comes back when the job ends, finished or failed (--return). COMMAND names
#    OUT and the hedge tree by their paths here ($out, $HEDGE_ROOT): on a remote both become
#    the work folder. Jobs of the local machine (the sshlogin ':') run as without --transfer.
#    At the end each machine's work folder is removed (GNU parallel's --cleanup removes files
#    only, not the folders hedge sends).
# Machines that cannot be reached when the grid starts are left out (--filter-hosts; it runs
# GNU parallel on each remote, one of the packages they need anyway).
grid_parallel() {
    gp_log=$1 gp_conf=$2 gp_cmd=$3
    [ -z "$restore" ] || restore_runs "$restore" "$out" "$gp_conf"
    [ "$report" = 1 ] && return 0
    case $gp_log in /*) ;; *) gp_log=$PWD/$gp_log ;; esac
    case $gp_conf in /*) ;; *) gp_conf=$PWD/$gp_conf ;; esac
    # parallel resumes by job number: a job log of other configurations (more seeds, --only) is
    # moved aside, and every job runs again (finished runs return at once: the runners keep them)
    if [ -s "$gp_log" ] && ! cmp -s "$gp_conf" "$gp_log.configs"; then
        mv "$gp_log" "$gp_log.old"
    fi
    # so is a log that has a job as finished (exit 0) whose run has no results: its folder was
    # removed to run it again, which --resume-failed alone would never do
    if [ -s "$gp_log" ] && awk -F'\t' -v out="$out" 'NR == FNR { name[FNR] = $1; next }
            FNR > 1 && $7 == 0 && ($1 in name) { f = out "/runs/" name[$1] "/results.tsv"
                if ((getline line < f) <= 0) { gone = 1; exit } close(f) }
            END { exit !gone }' FS=' ' "$gp_conf" FS='\t' "$gp_log"; then
        mv "$gp_log" "$gp_log.old"
    fi
    cp "$gp_conf" "$gp_log.configs"
    gp_env=""
    if [ -n "$grid_logins" ]; then
        gp_vars=$GRID_ENV
        [ "$transfer" = 1 ] || gp_vars="PATH HEDGE_ROOT BUILD $gp_vars"
        for gp_v in $gp_vars; do gp_env="$gp_env --env $gp_v"; done
    fi
    if [ -z "$grid_logins" ]; then
        eval "parallel --will-cite --joblog \"\$gp_log\" --resume-failed -j \"\$jobs\" --colsep ' ' --halt never \
            $remote \"\$gp_cmd\" :::: \"\$gp_conf\"" || true
        return 0
    fi
    if [ "$transfer" != 1 ]; then
        eval "parallel --will-cite --joblog \"\$gp_log\" --resume-failed -j \"\$jobs\" --colsep ' ' --halt never \
            --filter-hosts $remote $gp_env \"\$gp_cmd\" :::: \"\$gp_conf\"" || true
        return 0
    fi
    gp_out=$(cd "$out" && pwd -P) gp_root=$(cd "$HEDGE_ROOT" && pwd -P) gp_build=$(cd "$BUILD" && pwd -P)
    gp_wd=.hedge-grid$gp_out
    # the work folders, emptied before (a grid stopped before its end leaves one) and after;
    # parallel starts in OUT, where the local machine's jobs make (and this removes) OUT/$gp_wd
    gp_sweep="parallel --will-cite --nonall $grid_logins $(grid_quote "rm -rf $(grid_quote "$gp_wd"); rmdir -p $(grid_quote "$(dirname "$gp_wd")") 2>/dev/null; true")"
    (cd "$gp_out" && eval "$gp_sweep" > /dev/null 2>&1) || true
    # every run's folder exists here, empty when it never started, so that it can be sent
    while read -r gp_name _; do mkdir -p "$gp_out/runs/$gp_name"; done < "$gp_conf"
    # on a remote, OUT and the hedge tree are the work folder; here, where they are
    gp_cmd="case \$PARALLEL_SSHLOGIN in :) hedge_out=$(grid_quote "$out") ;; *) hedge_out=\$(pwd -P) HEDGE_ROOT=\$(pwd -P) BUILD=\$(pwd -P); export HEDGE_ROOT BUILD ;; esac; $(grid_paths "$gp_cmd")"
    gp_files="--basefile $(grid_quote "$gp_root/./pipelines") --basefile $(grid_quote "$gp_build/./bin")"
    [ -d "$gp_out/data" ] && gp_files="$gp_files --basefile $(grid_quote "$gp_out/./data")"
    gp_files="$gp_files --transferfile $(grid_quote "$gp_out/./runs/{1}") --return $(grid_quote "$gp_out/./runs/{1}")"
    (cd "$gp_out" && eval "parallel --will-cite --joblog \"\$gp_log\" --resume-failed -j \"\$jobs\" --colsep ' ' --halt never \
        --filter-hosts --workdir \"\$gp_wd\" $gp_files $remote $gp_env \"\$gp_cmd\" :::: \"\$gp_conf\"") || true
    (cd "$gp_out" && eval "$gp_sweep" > /dev/null 2>&1) || true
    return 0
}

# grid_progress PREFIX OUT CONFIGS STEPS PID: while process PID runs, shows on stderr where the
# runs of CONFIGS (OUT/runs/NAME; CONFIGS is read once it exists: the grid writes it first) stand,
# trained to STEPS: each run's step, steps per second and time left, then the runs done and the
# training time left for all (trainstat computes them from the runs' logs), each line starting
# "PREFIX: ". On a terminal the lines are rewritten in place every 2 s, and cleared when it ends;
# otherwise they are printed as they are every PROGRESS_EVERY seconds (default 300). Run it in
# the background (&) and end it with kill; it also ends by itself when PID has gone. Only for a
# caller that owns the terminal: any other line on it would be overwritten (demo.sh sends the
# grid's own messages to its log).
grid_progress() {
    gw_p=$1 gw_out=$2 gw_conf=$3 gw_steps=$4 gw_pid=$5 gw_shown=0 gw_sleep=""
    if [ -t 2 ]; then gw_tty=1 gw_wait=2; else gw_tty=0 gw_wait=${PROGRESS_EVERY:-300}; fi
    trap '[ -z "$gw_sleep" ] || kill "$gw_sleep" 2> /dev/null
        [ "$gw_shown" = 0 ] || printf "\033[%dA\r\033[J" "$gw_shown" >&2
        exit 0' TERM
    while kill -0 "$gw_pid" 2> /dev/null; do
        sleep "$gw_wait" &
        gw_sleep=$!
        wait "$gw_sleep"
        gw_sleep=""
        [ -s "$gw_conf" ] || continue
        set --
        while read -r gw_name _; do set -- "$@" "$gw_out/runs/$gw_name"; done < "$gw_conf"
        gw_text=$(trainstat -n "$gw_steps" "$@" 2>&1 | sed "s/^/$gw_p: /")
        if [ "$gw_tty" = 1 ]; then
            [ "$gw_shown" = 0 ] || printf '\033[%dA\r\033[J' "$gw_shown" >&2
            printf '%s\n' "$gw_text" >&2
            gw_shown=$(printf '%s\n' "$gw_text" | wc -l)
        else
            printf '%s\n' "$gw_text" >&2
        fi
    done
}

# grid_paths COMMAND: COMMAND with each literal $out written "$hedge_out" and each literal
# $HEDGE_ROOT "$HEDGE_ROOT" (the longer first where both match), for --transfer
grid_paths() {
    GP_S=$1 GP_A=$out GP_B=$HEDGE_ROOT awk 'BEGIN {
        s = ENVIRON["GP_S"]; a = ENVIRON["GP_A"]; b = ENVIRON["GP_B"]
        la = length(a); lb = length(b); n = length(s); r = ""; i = 1
        while (i <= n) {
            ma = la && substr(s, i, la) == a; mb = lb && substr(s, i, lb) == b
            if (ma && (!mb || la >= lb)) { r = r "\"$hedge_out\""; i += la }
            else if (mb) { r = r "\"$HEDGE_ROOT\""; i += lb }
            else { r = r substr(s, i, 1); i++ }
        }
        printf "%s", r
    }'
}

# json_get KEY: the value of the first KEY, at any depth, in document order, as JSON text (jq:
# a JSON object nests the same key in its sections, e.g. evaluate's "ap" metric and its "ap" target)
json_get() { jq -c --arg k "$1" 'first(.. | objects | select(has($k)) | .[$k])' | head -n 1; }

# uncertainty_lines NAME SET JSON: result lines (`NAME SET METRIC VALUE [NOTE]`) of the uncertainty
# section of evaluate's JSON (its set "input"): u:SOURCE:TARGET:MEASURE, the number or "-" with its
# reason, for every source the set can judge; d:SOURCE:TARGET:MEASURE with :lo and :hi, a learned
# source minus the best free baseline and its paired 95 % interval (note: that baseline's name);
# AUROC for the binary losses r1 and knn, AURC for every loss, AUGRC for r1 (pipelines/finding.sh)
uncertainty_lines() {
    jq -r --arg n "$1" --arg s "$2" '.input as $r
    | [["r1","auroc"],["knn","auroc"],["r1","aurc"],["knn","aurc"],["ap","aurc"],["map_r","aurc"],["r1","augrc"]] as $tm
    | ($r.uncertainty | keys_unsorted[]) as $src
    | select([$r.uncertainty[$src][][]] | any(. != null))
    | $tm[] as [$t, $m]
    | ($r.uncertainty[$src][$t][$m]) as $v
    | ([$n, $s, "u:\($src):\($t):\($m)",
        (if $v == null then "-" else $v end),
        (if $v == null then ($r.uncertainty_why[$src][$t][$m] // "undefined") else empty end)] | @tsv),
      (($r.verdict[$src][$t][$m] // empty) as $d
        | ([$n, $s, "d:\($src):\($t):\($m)", $d.difference, $d.baseline] | @tsv),
          ([$n, $s, "d:\($src):\($t):\($m):lo", $d.ci[0]] | @tsv),
          ([$n, $s, "d:\($src):\($t):\($m):hi", $d.ci[1]] | @tsv))' "$3"
}

# atomically produce FILE with a command writing to stdout, unless FILE exists
make_file() { # make_file FILE cmd...
    f=$1; shift
    [ -s "$f" ] && return 0
    "$@" > "$f.tmp.$$" || { rm -f "$f.tmp.$$"; say "pipeline: failed to make $f"; return 1; }
    mv "$f.tmp.$$" "$f"
}

# test_set DATA SET: the test images of SET (seen-COND or unseen-COND, COND clean, corrupt,
# noisy, ...) in a data folder of hib-data.sh: DATA/test-COND.hs or DATA/unseen-COND.hs
test_set() {
    case $2 in
    seen-*) echo "$1/test-${2#seen-}.hs" ;;
    unseen-*) echo "$1/unseen-${2#unseen-}.hs" ;;
    *) say "test_set: '$2' is neither seen-* nor unseen-*"; return 1 ;;
    esac
}

# results_and_configs OUT CONFIGS: on stdout, the results of the runs of CONFIGS that have them,
# one line per configuration, set and metric over its seeds (seedstat's lines without its header:
# CONFIG SET METRIC MEAN NOTE SD N, SD empty for one seed), then a line "#configs", then CONFIGS with each configuration once
# (the runs of other seeds, NAME.sSEED, folded into NAME): the input of the tables' awk programs
results_and_configs() {
    rc_files=""
    while read -r rc_name _; do
        [ -s "$1/runs/$rc_name/results.tsv" ] && rc_files="$rc_files $1/runs/$rc_name/results.tsv"
    done < "$2"
    cat $rc_files /dev/null | seedstat | tail -n +2
    echo "#configs"
    awk '{ sub(/\.s[0-9]+$/, "", $1) } !seen[$1]++' "$2"
}

# paper_file NAME: the path of pipelines/paper/NAME.tsv, the paper's numbers (one header for every
# such file: table row condition metric value source; pipelines/paper/README.md), or says it
# cannot be read and fails
paper_file() {
    pf_file=$HEDGE_ROOT/pipelines/paper/$1.tsv
    [ -r "$pf_file" ] || { say "cannot read the paper's numbers, $pf_file (HEDGE_ROOT is $HEDGE_ROOT)"; return 1; }
    echo "$pf_file"
}

# paper_numbers FILE [TABLE]: the paper's numbers of FILE (paper_file), those of TABLE or all,
# after a line "#paper", as lines `row condition metric value` (tab-separated): the last section
# of a table's input (tables_awk)
paper_numbers() {
    echo "#paper"
    awk -F'\t' -v OFS='\t' -v t="${2:-}" '/^#/ || $1 == "table" { next } t == "" || $1 == t { print $2, $3, $4, $5 }' "$1"
}

# tables_awk TABLE [-v VAR=VALUE ...]: the table TABLE (markdown on stdout) from its input on stdin:
# the runs' numbers, "#configs" and the configuration, "#paper" and the paper's (pipelines/tables.awk,
# the one program of every table)
tables_awk() {
    ta_table=$1
    shift
    awk -F'\t' -f "$HEDGE_ROOT/pipelines/tables.awk" -v table="$ta_table" "$@"
}

# write_results OUT CONFIGS FILE: FILE (atomically) holds every number of the runs of CONFIGS, a
# header line `run config seed set metric value note`, then one line per run and number (value
# "-" with a note: a number the run cannot have). For pandas: pd.read_csv(FILE, sep="\t").
write_results() {
    wr_base=${SEED:-714}
    {
        printf 'run\tconfig\tseed\tset\tmetric\tvalue\tnote\n'
        while read -r wr_name _; do
            [ -s "$1/runs/$wr_name/results.tsv" ] || continue
            awk -F'\t' -v OFS='\t' -v base="$wr_base" '{
                c = $1; s = base
                if (match(c, /\.s[0-9]+$/)) { s = substr(c, RSTART + 2); c = substr(c, 1, RSTART - 1) }
                print $1, c, s, $2, $3, $4, $5 }' "$1/runs/$wr_name/results.tsv"
        done < "$2"
    } > "$3.tmp.$$" && mv "$3.tmp.$$" "$3"
}

# seeds_note CONFIGS: one sentence saying how many seeds each configuration of CONFIGS has
seeds_note() {
    awk -v base="${SEED:-714}" '{ c = $1; s = base
            if (match(c, /\.s[0-9]+$/)) { s = substr(c, RSTART + 2); c = substr(c, 1, RSTART - 1) }
            if (!(c in n)) order[++k] = c; n[c]++; list[c] = list[c] (list[c] == "" ? "" : ", ") s }
        END { for (i = 1; i <= k; i++) { key = n[order[i]] " (" list[order[i]] ")"; if (!(key in cnt)) ko[++m] = key; cnt[key]++ }
            printf "Training seeds: "
            for (j = 1; j <= m; j++) printf "%s%s for %d configuration%s", (j > 1 ? "; " : ""), ko[j], cnt[ko[j]], (cnt[ko[j]] > 1 ? "s" : "")
            print "; a cell \"mean ± sd\" is over the seeds of its configuration (sample standard deviation), a plain number is one run." }' "$1"
}

# runs_note OUT CONFIGS: when some run of CONFIGS has no OUT/runs/NAME/results.tsv, one sentence
# for the tables saying how many finished and when (a grid still running, stopped or failed:
# its tables leave out a configuration without a finished run, or show "–" for it, and give
# means over the seeds that finished)
runs_note() {
    rn_fin=0 rn_all=0
    while read -r rn_name _; do
        rn_all=$((rn_all + 1))
        [ -s "$1/runs/$rn_name/results.tsv" ] && rn_fin=$((rn_fin + 1))
    done < "$2"
    [ "$rn_fin" = "$rn_all" ] && return 0
    echo "Runs finished: $rn_fin of $rn_all ($(date -u '+%Y-%m-%d %H:%M') UTC); a configuration without a finished run is left out of the table or shows –, a mean is over the seeds that finished."
}

# check_runs PREFIX OUT CONFIGS JOBLOG: after a pipeline's tables, every run of CONFIGS (first
# word of each line: the run's name) must have OUT/runs/NAME/results.tsv. If some have not, say
# so on stderr (how many, each failed run with the last lines of its run.log, what finished, how
# to retry) and return 1. With --report (nothing was run) it says how many finished, returns 0.
check_runs() {
    cr_p=$1 cr_out=$2 cr_conf=$3 cr_job=$4 cr_fin="" cr_fail=""
    while read -r cr_name _; do
        if [ -s "$cr_out/runs/$cr_name/results.tsv" ]; then cr_fin="$cr_fin $cr_name"; else cr_fail="$cr_fail $cr_name"; fi
    done < "$cr_conf"
    [ -z "$cr_fail" ] && return 0
    if [ "$report" = 1 ]; then
        say "$cr_p: --report: $(echo $cr_fin | wc -w) of $(wc -l < "$cr_conf") runs finished; not yet:$cr_fail"
        return 0
    fi
    say "$cr_p: FAILED: $(echo $cr_fail | wc -w) of $(wc -l < "$cr_conf") runs did not finish (the tables above have only the others)"
    for cr_name in $cr_fail; do
        cr_log=$cr_out/runs/$cr_name/run.log
        if [ -s "$cr_log" ]; then
            say "$cr_p: failed run $cr_name; the last lines of $cr_log:"
            tail -n 8 "$cr_log" | sed 's/^/    /' >&2
        else
            say "$cr_p: failed run $cr_name: it never started (no $cr_log; see $cr_job)"
        fi
    done
    say "$cr_p: finished:${cr_fin:- none}"
    say "$cr_p: run the same command again to retry the failed runs (finished runs are kept)"
    return 1
}
