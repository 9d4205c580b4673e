#!/bin/sh
# battery.sh: the whole evaluation battery (bin/evaluate, lib/engine/hedge.h's one call) against a faiss +
# scikit-learn script computing the retrieval and clustering numbers the way a
# pytorch-metric-learning user gets them (tests/bench/battery_peer.py), in one run (a benchmark,
# not part of `make test`).
#
#   BUILD=build sh tests/bench/battery.sh [N ...]       (default: 100000 300000)
#
# Data: N x 128 float32, 100 classes (numpy, seed 36): class centres N(0, 1), items at 0.35 times
# their centre plus N(0, 1) noise, leave-one-out; one .npz that both read.
#   hedge    evaluate -t 2 --json (the whole program: reading the .npz, the pairs' AP, kNN,
#            Recall@1/2/4/8, P@1, R-precision, MAP@R, mAP and MRR over the whole ranking, the class
#            averages, k-means NMI/AMI: more than the peer)
#   peer     faiss IndexFlatL2 with k = the largest class (less the item itself), in blocks of
#            10,000 queries, 2 OpenMP threads; P@1, R-precision, MAP@R, Recall@k from them; faiss
#            Kmeans (niter 20) and sklearn's NMI, AMI; timed inside Python after loading
# Threads as tests/bench/faiss.sh sets them: OMP_NUM_THREADS=2, OPENBLAS_NUM_THREADS=1,
# OMP_WAIT_POLICY=PASSIVE, OPENBLAS_CORETYPE the kernel hedge runs (`probe core`). Peak memory:
# /usr/bin/time -v's maximum resident set of each whole process. The ratios are the peer's over
# hedge's. The retrieval numbers must agree to 1e-6 (hedge ranks by float32 distances, faiss too;
# a near-tie could swap); NMI and AMI are printed, not compared: the two k-means differ (hedge's
# best of 3 k-means++ starts, lib/measures/cluster.h, against faiss's one random start).
set -eu
BUILD=${BUILD:-build}
BIN=$(cd "$BUILD/bin" && pwd)
PY=${PY:-/usr/bin/python3}
sizes=${*:-100000 300000}
. tests/bench/lib.sh
bench_peer battery faiss python3-faiss
bench_peer battery sklearn python3-sklearn
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
bench_probe "$T"
core=$(bench_core "$T")
# field NAME FILE: a value of /usr/bin/time -v's report
field() { sed -n "s/^[[:space:]]*$1: *//p" "$2"; }
for n in $sizes; do
    $PY - "$n" "$T/x.npz" <<'PYEOF'
import sys, numpy as np
n = int(sys.argv[1]); rng = np.random.default_rng(36)
c = rng.normal(size=(100, 128)).astype(np.float32)
y = rng.integers(0, 100, size=n).astype(np.int32)
np.savez(sys.argv[2], mu=(c[y] * 0.35 + rng.normal(size=(n, 128)).astype(np.float32)).astype(np.float32), labels=y)
PYEOF
    OPENBLAS_NUM_THREADS=1 /usr/bin/time -v -o "$T/h.time" "$BIN/evaluate" -t 2 --json "$T/h.json" "$T/x.npz" > /dev/null
    # the uncertainty section and the intervals (1000 bootstrap replicates, the default) against the
    # battery without them (--bootstrap 0: the section's point values stay): goal <= 1.10 x the CPU
    OPENBLAS_NUM_THREADS=1 /usr/bin/time -v -o "$T/b0.time" "$BIN/evaluate" -t 2 --bootstrap 0 "$T/x.npz" > /dev/null
    $PY - "$n" "$T/h.time" "$T/b0.time" <<'PYEOF'
import sys
n, with_b, without = sys.argv[1:]
def cpu(f):
    t = {l.split(": ")[0].strip(): l.split(": ")[-1].strip() for l in open(f) if ": " in l}
    return float(t["User time (seconds)"]) + float(t["System time (seconds)"])
a, b = cpu(with_b), cpu(without)
print("battery_%s  the bootstrap's intervals (1000 replicates): cpu %.1f s with, %.1f s without: %.2f x (goal <= 1.10)"
      % (n, a, b, a / b))
PYEOF
    OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=2 OMP_WAIT_POLICY=PASSIVE OPENBLAS_CORETYPE=$core \
        /usr/bin/time -v -o "$T/p.time" $PY tests/bench/battery_peer.py "$T/x.npz" 2 "$T/p.json" > "$T/p.out"
    # the same call from Python (hedge.evaluate, threads=2), the process started on OpenBLAS's
    # fallback kernel (OPENBLAS_CORETYPE=Prescott, as on a CPU OpenBLAS 0.3.21 does not know): the
    # engine switches it to the programs' kernel, so the numbers and the CPU must be the CLI's
    OPENBLAS_NUM_THREADS=1 OPENBLAS_CORETYPE=Prescott PYTHONPATH="$(pwd)/python" HEDGE_LIB="$BIN/../lib/libhedge.so" \
        /usr/bin/time -v -o "$T/y.time" $PY - "$T/x.npz" "$T/y.json" <<'PYEOF'
import json, sys
import numpy as np
import hedge
a = np.load(sys.argv[1])
d = hedge.evaluate(a["mu"], a["labels"], threads=2)
d["kernel"] = hedge.blas_kernel()
json.dump(d, open(sys.argv[2], "w"))
PYEOF
    $PY - "$n" "$T/h.json" "$T/y.json" "$T/h.time" "$T/y.time" <<'PYEOF'
import json, sys
n, hj, yj, ht, yt = sys.argv[1:]
h = json.load(open(hj))["input"]; y = json.load(open(yj))
def cpu(f):
    t = {l.split(": ")[0].strip(): l.split(": ")[-1].strip() for l in open(f) if ": " in l}
    return float(t["User time (seconds)"]) + float(t["System time (seconds)"])
g10 = lambda v: None if v is None or v != v else float("%.10g" % v)
differ = [k for k, v in h.items() if k != "recall_at" and
          ([g10(x) for x in v] != [g10(x) for x in y[k]] if isinstance(v, list) else g10(v) != g10(y[k]))]
print("battery_%s  hedge.evaluate in Python (started on Prescott, ran %s): cpu %.1f s, %.2f x the CLI's (goal <= 1.10)"
      "  numbers %s" % (n, y["kernel"], cpu(yt), cpu(yt) / cpu(ht),
                        "the CLI's to the last digit" if not differ else "DIFFER: " + ", ".join(differ)))
if differ:
    sys.exit(1)
PYEOF
    $PY - "$n" "$T/h.json" "$T/p.json" "$T/h.time" "$T/p.time" "$T/p.out" <<'PYEOF'
import json, re, sys
n, hj, pj, ht, pt, po = sys.argv[1:]
h = json.load(open(hj))["input"]; p = json.load(open(pj))
def tv(f, key):
    for line in open(f):
        if line.strip().startswith(key):
            return line.split(": ")[-1].strip()
def secs(s):
    v = 0.0
    for part in s.split(":"):
        v = 60 * v + float(part)
    return v
hw = secs(tv(ht, "Elapsed")); hc = float(tv(ht, "User time")) + float(tv(ht, "System time"))
hm = int(tv(ht, "Maximum resident")) / 1024; pm = int(tv(pt, "Maximum resident")) / 1024
pw, pc = map(float, re.match(r"seconds (\S+) cpu (\S+)", open(po).read()).groups())
bad = [k for k in ("p1", "rprec", "map_r") if abs(h[k] - p[k]) > 1e-6]
bad += ["recall@%d" % k for k, a, b in zip((1, 2, 4, 8), h["recall"], p["recall"]) if abs(a - b) > 1e-6]
print("battery_%s  hedge %.1f s (cpu %.1f, %.0f MiB)  peer %.1f s (cpu %.1f, %.0f MiB)  ratio %.2f x (cpu %.2f x, memory %.2f x)"
      % (n, hw, hc, hm, pw, pc, pm, pw / hw, pc / hc, pm / hm))
print("battery_%s  map_r %.9f / %.9f  p1 %.6f / %.6f  nmi %.4f / %.4f  ami %.4f / %.4f  (hedge / peer)"
      % (n, h["map_r"], p["map_r"], h["p1"], p["p1"], h["nmi"], p["nmi"], h["ami"], p["ami"]))
if bad:
    # a mean over n queries moves by 1/n when one query's near-tie (float32 distances, rounded
    # otherwise by faiss, which does not centre) falls the other way: say by how many queries
    hv = dict(zip(("p1", "rprec", "map_r"), (h[k] for k in ("p1", "rprec", "map_r"))))
    pv = dict(zip(("p1", "rprec", "map_r"), (p[k] for k in ("p1", "rprec", "map_r"))))
    for k, a, b in zip((1, 2, 4, 8), h["recall"], p["recall"]):
        hv["recall@%d" % k], pv["recall@%d" % k] = a, b
    print("battery_%s: the numbers differ beyond 1e-6: %s" % (n, ", ".join(
        "%s %.9f / %.9f (%.1f of %s queries)" % (k, hv[k], pv[k], (hv[k] - pv[k]) * int(n), n) for k in bad)))
    sys.exit(1)
PYEOF
done
