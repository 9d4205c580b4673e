#!/usr/bin/python3
"""progfuzz: a structure-aware fuzzer for the programs, not only for the parsers.

The libFuzzer targets (fuzz_stream, ...) feed bytes to the readers; most mutants die there, as
they should. This one keeps every mutant a well-formed stream (header and records agree, the
trailer counts right) and changes what a program trusts once the reader has said yes: a field's
dtype or item shape (shape [0], a dimension dropped or added), a field dropped, renamed or
doubled, meta values (0, -1, 2^63 - 1, NaN, Inf, a string for a number, an empty tensor), the
kind, the record count, NaN / Inf / extreme values in the data, huge dimensions. Each mutant goes
to every program that reads its kind (built with ASan + UBSan: make fuzz builds build-san/), and
a run is a finding when

  crash      ASan or UBSan reports, or a signal kills it (leaks are not looked for: a program
             that dies on bad input leaves its allocations behind by design)
  exit       it exits with a status other than 0, 1, 2
  timeout    it runs longer than --timeout seconds
  silent     it fails (1 or 2) with nothing on stderr
  partial    it fails but leaves a whole stream (with its trailer) on stdout
  noisy      it exits 0 with a message on stderr where the unmutated seed gives none

(the first three are hard findings: they fail `make fuzz`; the others are reported).

  progfuzz.py fuzz --bin build-san/bin --work DIR [--seconds S] [--seed N] [--save tests/fuzz/programs]
  progfuzz.py replay --bin build-replay/bin tests/fuzz/programs

fuzz: makes the seed streams with the programs themselves at tiny size (DIR/seeds), then mutates
and runs, for S seconds, deterministically from N (the same seed and programs: the same mutants
in the same order). Each new finding (one per program, category and first report line) is
written as a reproducer directory DIR/findings/NAME: `case.json` (argv, stdin, the finding) and
its input files; a hard one also into the --save directory (soft ones need a judgement: a
documented warning is a message with exit 0 too). Exit 1 when there is a hard finding.
replay: runs every reproducer under the directories given and exits 1 if any still gives a
finding (hard or soft: a saved finding is one that was fixed, and must stay fixed), or exits
otherwise than its case.json's "expect_exit" says, when it says (a wrong rejection, fixed).
Needs /usr/bin/python3 with python3-msgpack and python3-numpy (pipelines/setup-deps.sh).
"""
import argparse
import hashlib
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time

import msgpack
import numpy as np

DTYPES = ["uint8", "int32", "int64", "float32", "float64"]
SAN_ENV = {
    # sanitizer reports exit 99 (ASan) and 98 (UBSan): never taken for hedge's 1. No leak checks:
    # a program that dies on bad input leaves its allocations behind by design (as run.sh)
    "ASAN_OPTIONS": "exitcode=99:allocator_may_return_null=1:max_allocation_size_mb=512:detect_leaks=0",
    "UBSAN_OPTIONS": "exitcode=98:halt_on_error=1:print_stacktrace=1",
    "LSAN_OPTIONS": "exitcode=99",
    "OPENBLAS_NUM_THREADS": "1",
}
SAN_MARKS = ("ERROR: AddressSanitizer", "runtime error:", "ERROR: LeakSanitizer", "ERROR: UndefinedBehaviorSanitizer")
HARD = ("crash", "exit", "timeout")

# ---------------------------------------------------------------- streams as python objects


def load(path):
    """(header, [record dict name -> ndarray], trailer) of a stream file"""
    objs = list(msgpack.Unpacker(open(path, "rb"), raw=False, strict_map_key=False))
    recs = []
    for o in objs[1:-1]:
        recs.append({k: np.frombuffer(t["data"], dtype=np.dtype(t["dtype"]).newbyteorder("<"))
                     .reshape(t["shape"]).copy() for k, t in o.items()})
    return objs[0], recs


def dump(path, header, recs):
    with open(path, "wb") as f:
        f.write(msgpack.packb(header, use_bin_type=True))
        for r in recs:
            f.write(msgpack.packb({k: {"dtype": a.dtype.name, "shape": list(a.shape),
                                       "data": a.astype(a.dtype.newbyteorder("<")).tobytes()}
                                   for k, a in r.items()}, use_bin_type=True))
        f.write(msgpack.packb({"end": len(recs)}))


def item_shape(header, rec, name):
    a = rec[name]
    return a.shape[1:] if header.get("batched") else a.shape


class TooBig(Exception):
    """a mutant would need more than 16 MB of data: drawn again"""


def set_field(header, recs, name, dtype=None, shape=None, fn=None):
    """changes a field's dtype and/or item shape in the header and every record (data cast or
    resized to fit), or its values with fn(array) -> array"""
    for f in header["fields"]:
        if f["name"] == name:
            if dtype:
                f["dtype"] = dtype
            if shape is not None:
                f["shape"] = list(shape)
    for r in recs:
        a = r[name]
        if dtype:
            with np.errstate(all="ignore"):
                a = a.astype(dtype)
        if shape is not None:
            lead = a.shape[:1] if header.get("batched") else ()
            new = tuple(lead) + tuple(shape)
            if int(np.prod(new, dtype=object)) * a.dtype.itemsize > 1 << 24:
                raise TooBig(new)
            a = np.resize(a, new) if a.size and np.prod(new) else np.zeros(new, a.dtype)
        if fn:
            a = fn(a.copy())
        r[name] = np.ascontiguousarray(a)


# ---------------------------------------------------------------- mutations


def extreme(rng, dtype):
    if dtype.startswith("float"):
        return rng.choice([np.nan, np.inf, -np.inf, 1e30, -1e30, 0.0, -0.0, 1e-40])
    info = np.iinfo(dtype)
    return rng.choice([info.min, info.max, 0, 1, -1 if info.min < 0 else 2, 255 % (info.max + 1)])


def mutate(rng, header, recs):
    """one structural change; returns its description"""
    fields = [f["name"] for f in header["fields"]]
    meta = header.setdefault("meta", {})
    op = rng.choice(["dtype", "shape", "shape", "zero", "drop", "rename", "dup", "meta", "meta", "meta_drop",
                     "kind", "count", "values", "values", "huge", "batched"])
    if op in ("dtype", "shape", "zero", "drop", "rename", "dup", "values", "huge") and not fields:
        op = "meta"
    if op == "dtype":
        n = rng.choice(fields)
        old = next(f["dtype"] for f in header["fields"] if f["name"] == n)
        d = rng.choice([x for x in DTYPES if x != old])
        set_field(header, recs, n, dtype=d)
        return "field %s dtype %s -> %s" % (n, old, d)
    if op in ("shape", "zero", "huge"):
        n = rng.choice(fields)
        old = next(f["shape"] for f in header["fields"] if f["name"] == n)
        if op == "zero":
            new = [0] if not old or rng.random() < 0.5 else old[:-1] + [0]
        elif op == "huge":
            new = [0, 1 << 31] if rng.random() < 0.5 else [1 << 40, 0]
        else:
            choices = [[], [1], [3], old[:-1], old + [1], [2] + old, [x + 1 for x in old], [x * 2 for x in old]]
            new = rng.choice([c for c in choices if c != old] or [[1]])
        set_field(header, recs, n, shape=new)
        return "field %s shape %s -> %s" % (n, old, new)
    if op == "drop":
        n = rng.choice(fields)
        header["fields"] = [f for f in header["fields"] if f["name"] != n]
        for r in recs:
            del r[n]
        return "field %s dropped" % n
    if op in ("rename", "dup"):
        n = rng.choice(fields)
        known = ["class", "id", "mu", "var", "eta", "image", "match", "p", "correct", "query", "class1",
                 "class2", "image1", "image2", "digits", "ap", "p1", "predicted", "occluded", "recall", "npos"]
        new = rng.choice([k for k in known if k not in fields] or ["x"])
        f = dict(next(f for f in header["fields"] if f["name"] == n), name=new)
        if op == "rename":
            header["fields"] = [f if g["name"] == n else g for g in header["fields"]]
            for r in recs:
                r[new] = r.pop(n)
        else:
            header["fields"].append(f)
            for r in recs:
                r[new] = r[n].copy()
        return "field %s %s as %s" % (n, "renamed" if op == "rename" else "copied", new)
    if op in ("meta", "meta_drop"):
        keys = list(meta) or ["x"]
        k = rng.choice(keys)
        if op == "meta_drop":
            meta.pop(k, None)
            return "meta %s dropped" % k
        old = meta.get(k)
        if isinstance(old, dict) and "dtype" in old and rng.random() < 0.6:  # a tensor
            a = np.frombuffer(old["data"], dtype=np.dtype(old["dtype"]).newbyteorder("<"))
            choice = rng.choice(["empty", "values", "dtype", "2d"])
            if choice == "empty":
                a = a[:0]
            elif choice == "values" and a.size:
                a = a.copy()
                a[rng.randrange(a.size)] = extreme(rng, a.dtype.name)
            elif choice == "dtype":
                with np.errstate(all="ignore"):
                    a = a.astype(rng.choice(DTYPES))
            else:
                a = a.reshape(1, -1)
            meta[k] = {"dtype": a.dtype.name, "shape": list(a.shape),
                       "data": a.astype(a.dtype.newbyteorder("<")).tobytes()}
            return "meta %s tensor: %s" % (k, choice)
        v = rng.choice([0, -1, 1, 2, 1 << 31, (1 << 63) - 1, -(1 << 63), 0.5, float("nan"), float("inf"),
                        -1e300, "", "x", "0", True, None, [], {}, 10 ** 6])
        meta[k] = v
        return "meta %s = %r" % (k, v)
    if op == "kind":
        kinds = ["images", "pairbatch", "groupbatch", "episodes", "embeddings", "eta", "pairscores", "knn",
                 "retrieval", "evaluate", "fewshot", "disentangle", "checkpoint"]
        k = rng.choice([x for x in kinds if x != header["kind"]])
        old = header["kind"]
        header["kind"] = k
        return "kind %s -> %s" % (old, k)
    if op == "count":
        c = rng.choice(["none", "one", "many", "reverse"])
        if c == "none":
            recs[:] = []
        elif c == "one":
            recs[:] = recs[:1]
        elif c == "many":
            recs[:] = (recs * (1 + 64 // max(1, len(recs))))[:80]
        else:
            recs.reverse()
        return "records: %s" % c
    if op == "values":
        n = rng.choice(fields)
        dt = next(f["dtype"] for f in header["fields"] if f["name"] == n)
        v = extreme(rng, dt)
        every = rng.random() < 0.3

        def fn(a, v=v, every=every):
            if a.size:
                if every:
                    a.flat[:] = v
                else:
                    a.flat[rng.randrange(a.size)] = v
            return a
        set_field(header, recs, n, fn=fn)
        return "field %s values %s%r" % (n, "all " if every else "one ", v)
    if op == "batched":
        b = bool(header.get("batched"))
        header["batched"] = not b
        for r in recs:
            for k in list(r):
                r[k] = np.ascontiguousarray(r[k][0] if b and r[k].shape and r[k].shape[0] else
                                            (np.zeros(r[k].shape[1:], r[k].dtype) if b else r[k][None]))
        return "batched %s -> %s" % (b, not b)
    raise AssertionError(op)


# ---------------------------------------------------------------- seeds and targets


def make_seeds(bin_dir, d):
    """small real streams of every kind, made by the programs; returns {name: path}"""
    os.makedirs(d, exist_ok=True)
    B = lambda p: os.path.join(bin_dir, p)
    s = lambda n: os.path.join(d, n)
    steps = [
        ("images", [B("mkdigits"), "-N", "1", "-s", "test-seen", "-n", "8", "--per-class", "2"], None),
        ("occluded", [B("occlude"), "-p", "0.5", s("images")], None),
        ("images2", [B("mkdigits"), "-N", "2", "-s", "test-seen", "-n", "4", "--per-class", "1"], None),
        ("train", [B("mkdigits"), "-N", "1", "-s", "train", "-n", "20", "--per-class", "2"], None),
        ("shapes", [B("mkshapes"), "-n", "4"], None),
        ("pairbatch", [B("batcher"), "-b", "2", "-n", "2", s("train")], None),
        ("groupbatch", [B("batcher"), "-m", "pk", "-P", "2", "-K", "2", "-n", "1", s("train")], None),
        ("episodes", [B("batcher"), "-m", "episodes", "-c", "2", "-s", "1", "-q", "1", "-n", "1", s("train")], None),
        (None, [B("train"), "-n", "2", "-D", "2", "--head", "point", "--save-every", "1", "-t", "1", "-o",
                s("point.ckpt")], s("pairbatch")),
        (None, [B("train"), "-n", "2", "-D", "2", "--head", "mog", "-C", "2", "-K", "2", "--save-every", "1",
                "-t", "1", "-o", s("mog.ckpt")], s("pairbatch")),
        ("train2", [B("mkdigits"), "-N", "2", "-s", "train", "-n", "20", "--per-class", "2"], None),
        ("groupbatch2", [B("batcher"), "-m", "pk", "-P", "4", "-K", "2", "-n", "2", s("train2")], None),
        (None, [B("train"), "-n", "2", "-D", "2", "--loss", "cesoftmax", "--save-every", "1", "-t", "1", "-o",
                s("query.ckpt")], s("groupbatch2")),
        ("emb-point", [B("embed"), "-m", s("point.ckpt")], s("occluded")),
        ("emb-mog", [B("embed"), "-m", s("mog.ckpt")], s("occluded")),
        ("pairscores", [B("pairscore"), "-n", "6", s("emb-mog")], None),
        ("eta", [B("pairscore"), "--self", s("emb-mog")], None),
        ("knn", [B("knn"), "-k", "2", s("eta")], None),
        ("retrieval", [B("retrieve"), "-k", "1,2", s("eta")], None),
        ("evalpart", [B("evaluate"), "-k", "1,2", "--shard", "0/1", s("emb-mog")], None),
        ("fewshot", [B("fewshot"), "-s", s("emb-mog"), "-R", "2", "-n", "2", "-k", "1", "-q", "1", s("emb-mog")], None),
        ("disentangle", [B("disentangle"), s("emb-point")], None),
    ]
    for name, argv, stdin in steps:
        out = open(s(name), "wb") if name else subprocess.DEVNULL
        r = subprocess.run(argv, stdin=open(stdin, "rb") if stdin else subprocess.DEVNULL, stdout=out,
                           stderr=subprocess.PIPE, env=dict(os.environ, **SAN_ENV), timeout=600)
        if r.returncode != 0:
            sys.exit("progfuzz: making the seed %s failed: %s\n%s" % (name or argv[-1], " ".join(argv),
                                                                     r.stderr.decode(errors="replace")[-2000:]))
    return {n: s(n) for n in os.listdir(d)}


# (seed streams mutated, argv; @IN@ is the mutant, @OUT@ an output file, @name@ the seed `name`,
#  a leading "<" in the last element: stdin from that file)
TARGETS = [
    (["images", "occluded", "images2", "shapes"], ["tshow", "@IN@"]),
    (["images", "occluded", "images2", "shapes"], ["totsv", "@IN@"]),
    (["images", "images2", "shapes"], ["occlude", "-p", "0.5", "@IN@"]),
    (["images", "occluded", "images2", "shapes", "train"], ["batcher", "-b", "2", "-n", "2", "@IN@"]),
    (["images", "occluded", "train"], ["batcher", "-m", "pk", "-P", "2", "-K", "2", "-n", "2", "@IN@"]),
    (["images", "occluded", "train"], ["batcher", "-m", "episodes", "-c", "2", "-s", "1", "-q", "1", "-n", "2", "@IN@"]),
    (["images", "occluded"], ["embed", "-m", "@point.ckpt@", "<@IN@"]),
    (["images", "occluded"], ["embed", "-m", "@mog.ckpt@", "<@IN@"]),
    (["pairbatch"], ["train", "-n", "2", "-D", "2", "--head", "point", "-t", "1", "-o", "@OUT@", "<@IN@"]),
    (["pairbatch"], ["train", "-n", "2", "-D", "2", "--head", "mog", "-C", "2", "-K", "2", "-t", "1", "-o", "@OUT@", "<@IN@"]),
    (["groupbatch"], ["train", "-n", "1", "-D", "2", "--loss", "triplet", "-t", "1", "-o", "@OUT@", "<@IN@"]),
    (["groupbatch"], ["train", "-n", "1", "-D", "2", "--loss", "fstat", "-t", "1", "-o", "@OUT@", "<@IN@"]),
    (["episodes"], ["train", "-n", "1", "-D", "2", "--loss", "proto", "-t", "1", "-o", "@OUT@", "<@IN@"]),
    (["episodes"], ["train", "-n", "1", "-D", "2", "--loss", "spe", "-t", "1", "-o", "@OUT@", "<@IN@"]),
    (["point.ckpt", "mog.ckpt"], ["embed", "-m", "@IN@", "<@occluded@"]),
    (["point.ckpt", "mog.ckpt"], ["train", "--resume", "@IN@", "-n", "3", "-o", "@OUT@", "<@pairbatch@"]),
    (["query.ckpt"], ["qembed", "-m", "@IN@", "12", "07"]),
    (["query.ckpt"], ["embed", "-m", "@IN@", "<@images2@"]),
    (["groupbatch2"], ["train", "-n", "1", "-D", "2", "--loss", "cesoftmax", "-t", "1", "-o", "@OUT@", "<@IN@"]),
    (["emb-point", "emb-mog", "eta"], ["pairscore", "-n", "4", "@IN@"]),
    (["emb-point", "emb-mog", "eta"], ["pairscore", "--self", "@IN@"]),
    (["emb-mog", "eta"], ["pairscore", "--self", "--means", "@IN@"]),
    (["emb-point", "emb-mog", "eta"], ["knn", "-k", "2", "@IN@"]),
    (["emb-point", "emb-mog", "eta"], ["knn", "-k", "1", "-d", "expected", "-g", "@emb-mog@", "@IN@"]),
    (["emb-point", "emb-mog", "eta"], ["retrieve", "-k", "1,2", "--global", "@IN@"]),
    (["emb-point", "emb-mog", "eta"], ["retrieve", "-g", "@emb-mog@", "--clean", "20", "@IN@"]),
    (["emb-point", "emb-mog", "eta"], ["centroids", "--var", "@IN@"]),
    (["emb-point", "emb-mog", "eta"], ["centroids", "--order", "@IN@"]),
    (["emb-point", "emb-mog", "eta"], ["disentangle", "@IN@"]),
    (["emb-point", "emb-mog", "eta"], ["fewshot", "-s", "@IN@", "-R", "2", "-n", "2", "-k", "1", "-q", "1", "@emb-mog@"]),
    (["emb-point", "emb-mog", "eta"], ["fewshot", "-s", "@emb-mog@", "-R", "2", "-n", "2", "-k", "1", "-q", "1", "@IN@"]),
    (["images2", "train2"], ["qembed", "-m", "@query.ckpt@", "--classes", "@IN@"]),
    (["pairscores"], ["apcurve", "--ece", "4", "@IN@"]),
    (["pairscores", "knn", "retrieval", "fewshot"], ["ktau", "-b", "2", "@IN@"]),
    (["knn", "retrieval", "fewshot"], ["ktau", "-b", "2", "--json", "-", "@IN@"]),
    (["knn"], ["knn", "--summary", "@IN@"]),
    (["retrieval"], ["retrieve", "--summary", "@IN@"]),
    (["emb-point", "emb-mog", "eta"], ["evaluate", "-k", "1,2", "-n", "50", "@IN@"]),
    (["emb-point", "emb-mog", "eta"], ["evaluate", "-k", "1,2", "-n", "50", "--distance", "mls", "-g", "@emb-mog@", "@IN@"]),
    (["evalpart"], ["evaluate", "-k", "1,2", "-n", "50", "--merge", "@emb-mog@", "@IN@"]),
    (["fewshot"], ["fewshot", "--summary", "@IN@"]),
    (["disentangle", "knn", "retrieval", "pairscores"], ["totsv", "@IN@"]),
]


# ---------------------------------------------------------------- running


def run_case(bin_dir, case_dir, case, timeout):
    """runs a reproducer; returns (category or None, first report line, stderr)"""
    argv, stdin = [], None
    out = os.path.join(case_dir, "out.tmp")
    for i, a in enumerate(case["argv"]):
        a = a.replace("@OUT@", out)
        if a.startswith("<"):
            stdin = os.path.join(case_dir, a[1:])
            continue
        if i == 0:
            a = os.path.join(bin_dir, a)
        elif a.startswith("@") and a.endswith("@"):
            a = os.path.join(case_dir, a[1:-1])
        argv.append(a)
    try:
        r = subprocess.run(argv, stdin=open(stdin, "rb") if stdin else subprocess.DEVNULL, capture_output=True,
                           env=dict(os.environ, **SAN_ENV), timeout=timeout, cwd=case_dir)
    except subprocess.TimeoutExpired:
        return "timeout", "more than %g s" % timeout, ""
    finally:
        for f in os.listdir(case_dir):
            if f.startswith("out.tmp"):
                os.unlink(os.path.join(case_dir, f))
    err = r.stderr.decode(errors="replace")
    lines = [l for l in err.splitlines() if l.strip()]
    for l in lines:
        if any(m in l for m in SAN_MARKS):
            # the first frame in hedge's code says where
            frame = next((x.strip() for x in lines if re.search(r" in \S+ (\S*/)?(lib|bin)/\w+\.c:\d+", x)), "")
            return "crash", (l.strip() + " | " + frame)[:300], err
    if r.returncode < 0:
        return "crash", "killed by signal %d" % -r.returncode, err
    if r.returncode not in (0, 1, 2):
        return "exit", "exit status %d" % r.returncode, err
    if r.returncode in (1, 2) and not lines:
        return "silent", "exit %d with nothing on stderr" % r.returncode, err
    if r.returncode != 0 and whole_stream(r.stdout):
        return "partial", "exit %d after a whole stream on stdout" % r.returncode, err
    if r.returncode == 0 and lines and not case.get("noisy_ok"):
        return "noisy", "exit 0 with: " + lines[0][:200], err
    if "expect_exit" in case and r.returncode != case["expect_exit"]:
        return "wrong-exit", "exit %d, expected %d: %s" % (r.returncode, case["expect_exit"],
                                                         lines[0][:200] if lines else ""), err
    return None, "exit %d" % r.returncode, err


def whole_stream(b):
    if not b:
        return False
    try:
        objs = list(msgpack.Unpacker(__import__("io").BytesIO(b), raw=False, strict_map_key=False))
        return len(objs) >= 2 and isinstance(objs[-1], dict) and list(objs[-1]) == ["end"]
    except Exception:
        return False


def fuzz(a):
    rng = random.Random(a.seed)
    work = os.path.abspath(a.work)
    seeds = make_seeds(os.path.abspath(a.bin), os.path.join(work, "seeds"))
    loaded = {n: load(p) for n, p in seeds.items()}
    cases = os.path.join(work, "cases")
    finds = os.path.join(work, "findings")
    os.makedirs(finds, exist_ok=True)
    # the unmutated seeds: which runs are quiet (a message on stderr then is news)
    base = {}
    for ti, (kinds, argv) in enumerate(TARGETS):
        d = tempfile.mkdtemp(dir=work)
        case = prepare(d, seeds, kinds[0], None, argv)
        cat, line, err = run_case(a.bin, d, case, a.timeout * 3)
        base[ti] = bool(err.strip())
        if cat and cat != "noisy":
            print("progfuzz: the unmutated seed already fails: %s: %s" % (" ".join(argv), line), file=sys.stderr)
        shutil.rmtree(d)
    seen, runs, hard, soft, tally = set(), 0, 0, 0, {}
    t0 = time.time()
    while time.time() - t0 < a.seconds:
        ti = rng.randrange(len(TARGETS))
        kinds, argv = TARGETS[ti]
        k = rng.choice(kinds)
        try:
            h, recs = load_copy(loaded[k])
            what = [mutate(rng, h, recs) for _ in range(1 + (rng.random() < 0.35) + (rng.random() < 0.1))]
        except (TooBig, KeyError, IndexError, ValueError):  # a mutant the changes cannot build (a field an
            # earlier change took away, more than numpy's 32 dimensions): skipped
            continue
        d = os.path.join(cases, "current")
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        case = prepare(d, seeds, k, (h, recs), argv)
        case.update(seed_stream=k, mutations=what, noisy_ok=base[ti])
        cat, line, err = run_case(a.bin, d, case, a.timeout)
        runs += 1
        tally[argv[0], cat or line] = tally.get((argv[0], cat or line), 0) + 1
        if a.verbose:
            print("progfuzz: %s: %s: %s" % (" ".join(argv), "; ".join(what), cat or line), file=sys.stderr)
        if not cat:
            continue
        key = (argv[0], cat, strip_numbers(line))
        if key in seen:
            continue
        seen.add(key)
        hard += cat in HARD
        soft += cat not in HARD
        case.update(finding=cat, report=line)
        name = "%s-%s-%s" % (argv[0], cat, hashlib.sha1(repr(key).encode()).hexdigest()[:8])
        json.dump(case, open(os.path.join(d, "case.json"), "w"), indent=1)
        open(os.path.join(d, "stderr.txt"), "w").write(err[-20000:])
        for dst in [os.path.join(finds, name)] + ([os.path.join(a.save, name)] if a.save and cat in HARD else []):
            shutil.rmtree(dst, ignore_errors=True)
            shutil.copytree(d, dst)
        print("progfuzz: %s %s: %s\n    %s\n    %s" % (cat.upper(), " ".join(argv), "; ".join(what), line,
                                                      os.path.join(finds, name)), file=sys.stderr)
    progs = sorted({p for p, _ in tally})
    for p in progs:
        print("progfuzz:   %-12s %s" % (p, ", ".join("%s %d" % (c, n) for (q, c), n in sorted(tally.items()) if q == p)),
              file=sys.stderr)
    print("progfuzz: %d runs in %.0f s (seed %d): %d hard findings, %d soft (%s)" %
          (runs, time.time() - t0, a.seed, hard, soft, finds), file=sys.stderr)
    return 1 if hard else 0


def strip_numbers(s):
    return re.sub(r"0x[0-9a-f]+|\d+", "N", s)


def load_copy(hr):
    h, recs = hr
    return json_copy(h), [{k: v.copy() for k, v in r.items()} for r in recs]


def json_copy(o):
    return msgpack.unpackb(msgpack.packb(o, use_bin_type=True), raw=False, strict_map_key=False)


def prepare(d, seeds, k, mutant, argv):
    """the case's files in d: the mutant (or the seed) and the seeds argv names; returns the case"""
    files = []
    inname = "in-" + k
    if mutant:
        dump(os.path.join(d, inname), *mutant)
    else:
        shutil.copy(seeds[k], os.path.join(d, inname))
    out = []
    for x in argv:
        lt = x.startswith("<")
        y = x[1:] if lt else x
        if y == "@IN@":
            y = "@" + inname + "@"
        elif y.startswith("@") and y.endswith("@") and y != "@OUT@":
            shutil.copy(seeds[y[1:-1]], os.path.join(d, y[1:-1]))
            files.append(y[1:-1])
        out.append(("<" + y[1:-1]) if lt else y)
    return {"argv": out, "files": [inname] + files}


def replay(a):
    bad = n = 0
    for top in a.dirs:
        for root, dirs, fs in sorted(os.walk(top)):
            if "case.json" not in fs:
                continue
            case = json.load(open(os.path.join(root, "case.json")))
            with tempfile.TemporaryDirectory() as d:
                for f in case["files"]:
                    shutil.copy(os.path.join(root, f), d)
                cat, line, err = run_case(a.bin, d, case, a.timeout)
            n += 1
            if cat:
                bad += 1
                print("progfuzz replay: %s still fails (%s): %s" % (root, cat, line), file=sys.stderr)
    print("progfuzz replay: %d cases, %d failing" % (n, bad), file=sys.stderr)
    return 1 if bad else 0


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    f = sub.add_parser("fuzz")
    f.add_argument("--bin", required=True)
    f.add_argument("--work", required=True)
    f.add_argument("--seconds", type=float, default=120)
    f.add_argument("--seed", type=int, default=1)
    f.add_argument("--timeout", type=float, default=30)
    f.add_argument("--save")
    f.add_argument("--verbose", action="store_true")
    r = sub.add_parser("replay")
    r.add_argument("--bin", required=True)
    r.add_argument("--timeout", type=float, default=60)
    r.add_argument("dirs", nargs="+")
    a = p.parse_args()
    a.bin = os.path.abspath(a.bin)
    sys.exit(fuzz(a) if a.cmd == "fuzz" else replay(a))


if __name__ == "__main__":
    main()
