# Sourced by the pipelines: where the programs are, and small helpers that only compose them.
# No numerics here: every number is computed by a hedge program.
HEDGE_ROOT=${HEDGE_ROOT:-$(cd "$(dirname "$0")/.." && pwd)}
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD="$HEDGE_ROOT/$BUILD" ;; esac
PATH="$BUILD/bin:$PATH"
export PATH HEDGE_ROOT BUILD
# Threads on purpose: a pipeline runs several programs; each BLAS user gets one thread unless
# a script says otherwise (train gets the cores its job slot owns).
export OPENBLAS_NUM_THREADS=1

say() { printf '%s\n' "$*" >&2; }

# recipe_args NAME: the train options of a training recipe (README, "Recipes"). The recipe is
# the pipelines' choice; train's own defaults stay the paper's.
#   paper  Adam, learning rate 1e-3, constant; 128 pairs per batch (the HIB paper)
#   fast   Adam, 3e-3 peak, 1,000 warm-up steps, cosine decay to 3e-5 at the last step (chosen
#          on the validation split for a two-core budget: README, "Recipes")
recipe_args() {
    case $1 in
    paper) echo "" ;;
    fast) echo "--lr 3e-3 --warmup 1000 --decay cosine --lr-end 0.01" ;;
    *) say "unknown recipe '$1' (paper or fast)"; return 1 ;;
    esac
}

# json_get KEY < json-line: the value of a top-level number field (text extraction only)
json_get() { sed -n "s/.*\"$1\": *\([^,}]*\).*/\1/p" | head -n 1; }

# atomically produce FILE with a command writing to stdout, unless FILE exists
make_file() { # make_file FILE cmd...
    f=$1; shift
    [ -s "$f" ] && return 0
    "$@" > "$f.tmp.$$" || { rm -f "$f.tmp.$$"; say "pipeline: failed to make $f"; return 1; }
    mv "$f.tmp.$$" "$f"
}

# check_runs PREFIX OUT CONFIGS JOBLOG: after a pipeline's tables, every run of CONFIGS (first
# word of each line: the run's name) must have OUT/runs/NAME/results.tsv. If some have not, say
# so on stderr (how many, each failed run with the last lines of its run.log, what finished, how
# to retry) and return 1.
check_runs() {
    cr_p=$1 cr_out=$2 cr_conf=$3 cr_job=$4 cr_fin="" cr_fail=""
    while read -r cr_name _; do
        if [ -s "$cr_out/runs/$cr_name/results.tsv" ]; then cr_fin="$cr_fin $cr_name"; else cr_fail="$cr_fail $cr_name"; fi
    done < "$cr_conf"
    [ -z "$cr_fail" ] && return 0
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
