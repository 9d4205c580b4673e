#!/usr/bin/python3
"""shardfuzz: evaluate --merge against damaged shards, judged by the numbers it prints.

progfuzz.py keeps its mutants well-formed and asks only that a program survive them. A shard
that is well-formed but wrong in its values (an AP of 5, a P@1 flag of 255, a NaN uncertainty, a
rank of -1) is worse than a crash: a table built from it looks like any other. Each mutant here
changes one value of one record of one shard of a run (a value drawn from the extremes: NaN, inf,
1e30, -1, 2, 255, the type's limits, or a neighbouring valid value), and the verdict is

Every mutant is tried twice: as it is (damaged: the shard's answers_hash no longer fits, and
--merge must refuse it) and without its answers_hash (forged, or a shard of an older hedge: the
values must then pass the checks of range and consistency). A value is impossible when no
evaluation of these sets can give it, by rules kept here apart from lib/engine/hedge.c's: kNN's vote a
class of the gallery; the uncertainty, R (npos) and the flags exactly what the set and the first
positive's rank give; AP, R-precision, MAP@R in [0, 1], NaN without a positive; that rank within
the gallery; the free baselines a distance, a ratio in [0, 1] and an entropy of k votes. The verdicts:

  ok        evaluate --merge refuses it (exit 1) with one line naming the problem, or accepts it
            (exit 0) and prints exactly the intact shards' JSON (the value replaced by itself),
            or, forged, accepts a possible value (a plausible forgery cannot be told)
  wrong     exit 0 with other numbers from a damaged shard or from an impossible value
  refused   a forged possible value refused
  crash     a signal, a sanitizer report, another exit status, or nothing on stderr with exit 1
  timeout   it ran longer than --timeout seconds (a loop on an unchecked value)

  shardfuzz.py --bin build/bin --work DIR [--mutants N] [--seed S] [--timeout T]

Exit 1 when any mutant is not ok (each one printed with its field, record, position and value).
Deterministic: the same seed and programs, the same mutants. Needs /usr/bin/python3 with numpy
and msgpack (pipelines/setup-deps.sh installs both for make test).
"""
import argparse
import json
import os
import random
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from progfuzz import dump, load  # streams as Python objects, well-formed on the way back

SAN_MARKS = ("ERROR: AddressSanitizer", "runtime error:", "ERROR: LeakSanitizer")
ENV = dict(os.environ, OPENBLAS_NUM_THREADS="1",
           ASAN_OPTIONS="exitcode=99:detect_leaks=0", UBSAN_OPTIONS="exitcode=98:halt_on_error=1")


def values(rng, a, pos):
    """a hostile or a nearby value for element pos of a"""
    old = a.flat[pos]
    if a.dtype.kind == "f":
        return rng.choice([np.nan, np.inf, -np.inf, 1e30, -1.0, 5.0, 2.0, -0.0, 0.0, 1.0, 0.5,
                           float(old) + 1e-6, float(old) * 0.5])
    info = np.iinfo(a.dtype)
    return rng.choice([info.min, info.max, 0, 1, 2, 255 % (info.max + 1), -1 if info.min < 0 else 3,
                       int(old) + 1, int(old) - 1 if int(old) > info.min else int(old) + 2])


def possible_row(c, q, row):
    """whether one query's answers (field -> its value) could come from these sets"""
    R, r1, fs = c["npos"][q], int(row["r1"]), [row[f] for f in ("ap", "rprec", "map_r")]
    if int(row["pred"]) not in c["classes"] or row["eta"].tobytes() != c["eta"][q].tobytes():
        return False
    if int(row["npos"]) != R or not (np.isnan(row["ap_at_k"]) and np.isnan(row["rr_at_k"])):
        return False
    # the free baselines (euclidean, k = 5): a distance, a ratio of two, an entropy of 5 votes
    t, ra, v = float(row["top1_dist"]), float(row["ratio"]), float(row["vote_entropy"])
    if not (np.isfinite(t) and t >= 0 and 0 <= ra <= 1 and 0 <= v <= np.log(5) + 1e-6):
        return False
    if R == 0:
        return all(np.isnan(f) for f in fs) and int(row["p1"]) == 0 and r1 == 0 and not row["recall"].any()
    return (all(0 <= f <= 1 for f in fs) and 1 <= r1 <= c["seen"][q] and int(row["p1"]) == (r1 == 1)
            and [int(x) for x in row["recall"]] == [int(r1 <= k) for k in c["ks"]])


def run(args, timeout):
    try:
        p = subprocess.run(args, capture_output=True, timeout=timeout, env=ENV)
    except subprocess.TimeoutExpired:
        return "timeout", None, ""
    err = p.stderr.decode(errors="replace")
    return p.returncode, p.stdout, err


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--mutants", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=20)
    a = ap.parse_args()
    ev = os.path.join(a.bin, "evaluate")
    os.makedirs(a.work, exist_ok=True)
    g = np.random.default_rng(a.seed)
    n, D = 240, 6
    labels = g.integers(0, 8, n).astype(np.int32)
    mu = (g.standard_normal((n, D)) + labels[:, None] * 0.7).astype(np.float32)
    var = g.uniform(0.1, 2, (n, D)).astype(np.float32)
    runs = []
    # leave-one-out with an uncertainty (the mean var), and a gallery that holds the queries' ids
    np.savez(os.path.join(a.work, "set.npz"), mu=mu, var=var, labels=labels)
    runs.append(("loo", ["set.npz"], ["--bootstrap", "0"]))
    np.savez(os.path.join(a.work, "gal.npz"), mu=mu[::2], labels=labels[::2], id=np.arange(0, n, 2))
    np.savez(os.path.join(a.work, "q.npz"), mu=mu, var=var, labels=labels, id=np.arange(n))
    runs.append(("gallery", ["q.npz"], ["-g", os.path.join(a.work, "gal.npz"), "--exclude-id", "--bootstrap", "0"]))
    # what each query's answers must be, from the sets alone (kNN's vote and the ranks aside)
    ctx = {}
    ks = [1, 2, 4, 8]
    for name in ("loo", "gallery"):
        gl, own = (labels, np.arange(n)) if name == "loo" else (labels[::2], np.arange(0, n, 2))
        eta = var.mean(axis=1, dtype=np.float64).astype(np.float32)
        npos, seen = [], []
        for qi in range(n):
            excl = qi in set(own.tolist()) if name == "gallery" else True
            npos.append(int((gl == labels[qi]).sum()) - (1 if excl else 0))
            seen.append(len(gl) - (1 if excl else 0))
        ctx[name] = dict(classes=set(gl.tolist()), eta=eta, npos=npos, seen=seen, ks=ks)
    cases = []
    for name, inp, opts in runs:
        shards = []
        for i in range(3):
            out = os.path.join(a.work, "%s-%d.hs" % (name, i))
            rc, so, err = run([ev, "--shard", "%d/3" % i] + opts + [os.path.join(a.work, x) for x in inp], 60)
            if rc != 0:
                sys.exit("shardfuzz: evaluate --shard failed: %s" % err)
            open(out, "wb").write(so)
            shards.append(out)
        ref = os.path.join(a.work, "%s-ref.json" % name)
        argv = [ev, "--merge"] + opts + ["--json", ref] + [os.path.join(a.work, x) for x in inp]
        rc, _, err = run(argv + shards, 60)
        if rc != 0:
            sys.exit("shardfuzz: evaluate --merge of the intact shards failed: %s" % err)
        cases.append((name, argv, shards, json.load(open(ref)), ctx[name]))
    rng = random.Random(a.seed)
    bad = []
    tried = 0
    # the per-query answers, not the header (progfuzz mutates structure and meta)
    for m in range(a.mutants):
        name, argv, shards, ref, ctx = rng.choice(cases)
        si = rng.randrange(len(shards))
        header, recs = load(shards[si])
        r = rng.randrange(len(recs))
        field = rng.choice(sorted(recs[r]))
        arr = recs[r][field]
        pos = rng.randrange(arr.size)
        v = values(rng, arr, pos)
        old = arr.flat[pos].copy()
        with np.errstate(all="ignore"):
            arr.flat[pos] = v
        same = arr.flat[pos].tobytes() == old.tobytes()
        b = np.unravel_index(pos, arr.shape)[0]
        q = header["meta"]["queries_from"] + r * 4096 + b
        possible = same or possible_row(ctx, q, {f: recs[r][f][b, 0] for f in recs[r]})
        for forged in (0, 1):
            if forged:
                header["meta"].pop("answers_hash", None)
            mut = os.path.join(a.work, "mutant.hs")
            dump(mut, header, recs)
            out = os.path.join(a.work, "mutant.json")
            if os.path.exists(out):
                os.remove(out)
            args = list(argv)
            args[args.index("--json") + 1] = out
            rc, _, err = run(args + [mut if k == si else s for k, s in enumerate(shards)], a.timeout)
            tried += 1
            what = "%s shard %d record %d %s[%d] = %r%s" % (name, si, r, field, pos, v, " (forged)" if forged else "")
            verdict = "ok"
            if rc == "timeout":
                verdict = "timeout"
            elif any(x in err for x in SAN_MARKS) or rc not in (0, 1) or (rc == 1 and not err.strip()):
                verdict = "crash (exit %s): %s" % (rc, err.strip()[-300:])
            elif rc == 0:
                got = json.load(open(out))
                if json.dumps(got, sort_keys=True) != json.dumps(ref, sort_keys=True) and not (forged and possible):
                    verdict = "wrong: exit 0 with other numbers (%s)" % ", ".join(
                        k for k in ref["input"] if got["input"].get(k) != ref["input"].get(k))
            elif len(err.strip().splitlines()) != 1 or not err.startswith("evaluate: "):
                verdict = "message: %r" % err.strip()[:300]
            elif forged and possible and not same:
                verdict = "refused a possible value: %s" % err.strip()
            if verdict != "ok":
                bad.append("%s: %s" % (what, verdict))
    for b in bad:
        print(b)
    print("shardfuzz: %d mutants, %d runs, %d not ok" % (a.mutants, tried, len(bad)))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
