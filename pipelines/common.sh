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
