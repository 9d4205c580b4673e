"""hedge.evaluate: the whole evaluation battery of lib/engine/hedge.h on numpy arrays, in this process.

This module only translates: arrays into hedge_set, keywords into hedge_options, the result into
a dict named as evaluate.sh's JSON (or, with pml=True, as pytorch-metric-learning's
AccuracyCalculator). Every number is computed by the engine, the one that bin/evaluate runs.
"""

import ctypes
import math
import os
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from . import _lib

ArrayLike = Any  # numpy.typing.ArrayLike (numpy >= 1.20); Any keeps older numpy importable

# pytorch-metric-learning's AccuracyCalculator names -> the engine's (evaluate.sh's JSON)
PML_NAMES = {"precision_at_1": "p1", "r_precision": "rprec", "mean_average_precision_at_r": "map_r",
             "mean_average_precision": "map", "mean_reciprocal_rank": "mrr", "NMI": "nmi", "AMI": "ami"}
# the retrieval metrics that have class averages (avg_of_avgs) and per-class values
CLASS_METRICS = ("p1", "rprec", "map_r", "map", "mrr")
AVG = "_avg_of_avgs"


def _array(name, a):
    """np.asarray(a), or ValueError naming the argument (a ragged list, objects numpy cannot hold)"""
    try:
        return np.asarray(a)
    except (ValueError, TypeError) as e:
        raise ValueError("%s: not an array (%s)" % (name, e)) from None


def _floats(name, a, shape=None):
    """a as float32, C-contiguous: the same memory when it already is, else one converted copy."""
    a = _array(name, a)
    if a.dtype.kind != "f":
        raise ValueError("%s: %s array, expected floats (float32 is taken as it is, other floats "
                         "converted once)" % (name, a.dtype))
    if shape is not None and a.shape != shape:
        raise ValueError("%s: shape %s, expected %s" % (name, list(a.shape), list(shape)))
    return np.ascontiguousarray(a, dtype=np.float32)


def _ints(name, a, n, dtype, what):
    a = _array(name, a)
    if a.dtype.kind not in "iu":
        raise ValueError("%s: %s array, expected integers (%s)" % (name, a.dtype, what))
    if a.shape != (n,):
        raise ValueError("%s: shape %s, expected [%d] (one per item of %s)"
                         % (name, list(a.shape), n, "mu" if not name.startswith("gallery") else "gallery"))
    info = np.iinfo(dtype)
    # compared as Python integers: numpy compares uint64 with an int64 bound in float64, where
    # 2^63 equals 2^63 - 1
    if a.size and a.dtype != dtype and (int(a.min()) < info.min or int(a.max()) > info.max):
        raise ValueError("%s: values from %d to %d, beyond %s" % (name, a.min(), a.max(), np.dtype(dtype).name))
    return np.ascontiguousarray(a, dtype=dtype)


def _set(prefix, mu, labels, var, eta, ids, keep):
    """A hedge_set over the arrays (kept alive in keep). prefix: "" for the queries, "gallery_"."""
    m = "gallery" if prefix else "mu"
    mu = _array(m, mu)
    if mu.ndim not in (2, 3):
        raise ValueError("%s: shape %s, expected [n, D] or [n, C, D]" % (m, list(mu.shape)))
    mu = _floats(m, mu)
    if mu.shape[0] == 0:
        raise ValueError("%s: no items (shape %s)" % (m, list(mu.shape)))
    if mu.shape[-1] == 0 or (mu.ndim == 3 and mu.shape[1] == 0):
        raise ValueError("%s: shape %s: no dimensions" % (m, list(mu.shape)))
    n = mu.shape[0]
    if labels is None:
        raise ValueError("%slabels: missing, expected the class of each item of %s" % (prefix, m))
    labels = _ints(prefix + "labels", labels, n, np.int32, "the class of each item")
    s = _lib.Set()
    s.n = n
    s.C, s.D = (1, mu.shape[1]) if mu.ndim == 2 else mu.shape[1:]
    s.mu = mu.ctypes.data_as(ctypes.POINTER(ctypes.c_float))
    s.labels = labels.ctypes.data_as(ctypes.POINTER(ctypes.c_int32))
    keep += [mu, labels]
    if var is not None:
        var = _floats(prefix + "var", var, mu.shape)
        s.var = var.ctypes.data_as(ctypes.POINTER(ctypes.c_float))
        keep.append(var)
    if eta is not None:
        eta = _floats(prefix + "eta", eta, (n,))
        s.eta = eta.ctypes.data_as(ctypes.POINTER(ctypes.c_float))
        keep.append(eta)
    if ids is not None:
        ids = _ints(prefix + "ids", ids, n, np.int64, "an id per item")
        s.ids = ids.ctypes.data_as(ctypes.POINTER(ctypes.c_int64))
        keep.append(ids)
    return s, mu, labels


def _user_sources(q, uncertainty, keep):
    """uncertainty: the user's own per-query uncertainty (larger = less sure), an array [n] (the
    source "user") or a dict of up to two {name: array}, learned sources of the uncertainty section"""
    if uncertainty is None:
        return
    if not isinstance(uncertainty, dict):
        uncertainty = {"user": uncertainty}
    if not 1 <= len(uncertainty) <= _lib.MAX_USER:
        raise ValueError("uncertainty: %d arrays, expected 1 to %d (an array, or a dict of names to arrays)"
                         % (len(uncertainty), _lib.MAX_USER))
    q.nuser = len(uncertainty)
    for i, (name, a) in enumerate(uncertainty.items()):
        if not isinstance(name, str) or not 1 <= len(name.encode()) <= 31:
            raise ValueError("uncertainty: the name %r, expected a str of 1 to 31 bytes" % (name,))
        a = _floats("uncertainty[%r]" % name, a, (q.n,))
        b = name.encode()
        keep += [a, b]
        q.user_name[i] = b
        q.user[i] = a.ctypes.data_as(ctypes.POINTER(ctypes.c_float))


def _names(lib, pml):
    """{public name: [engine ids]} of every metric the result may hold."""
    ids = {name: i for i, name in enumerate(lib.names)}
    recall = [i for i, name in enumerate(lib.names) if name.startswith("recall_")]
    out = {}
    if pml:
        for p, h in PML_NAMES.items():
            out[p] = [ids[h]]
        for name, i in ids.items():
            if name not in PML_NAMES.values() and not name.endswith(AVG) and i not in recall:
                out[name] = [i]
    else:
        for name, i in ids.items():
            if i not in recall:
                out[name] = [i]
    out["recall"] = recall
    return out


class Shard:
    """The answers of one shard of the queries, from hedge.evaluate(..., shard=(i, n)): the n x
    gallery work (kNN, retrieval) of its queries, to be put together by hedge.evaluate(...,
    shards=[...]) with the same arrays and options. Opaque bytes (lib/engine/hedge.h's
    hedge_shard): the `evaluate` stream bin/evaluate --queries writes for one set, with the
    format's version in its header and the sets' hashes, the options and the queries' range in
    its meta, so that shards of other data or options, damaged ones, gaps and overlaps are refused
    by the engine, naming what differs. It pickles; bytes(shard) are its bytes, shard.write(path)
    makes the file bin/evaluate --merge reads, hedge.Shard.read(path) takes one back (also one
    that bin/evaluate --queries wrote for these sets: it numbers a set's items 0, 1, ... when the
    file has no ids, so give ids=np.arange(n) to make or merge shards that agree with its).

    queries: (from, to), the queries it answers; total: the queries of the whole set."""

    def __init__(self, data: bytes, queries: Tuple[int, int], total: int):
        self.data, self.queries, self.total = bytes(data), (int(queries[0]), int(queries[1])), int(total)

    def __bytes__(self) -> bytes:
        return self.data

    def __repr__(self) -> str:
        return "hedge.Shard(queries %d:%d of %d)" % (self.queries + (self.total,))

    def write(self, path: Union[str, "os.PathLike[str]"]) -> None:
        """the shard as a file (an `evaluate` stream: bin/evaluate --merge INPUT PART... reads it)"""
        with open(path, "wb") as f:
            f.write(self.data)

    @classmethod
    def read(cls, path: Union[str, "os.PathLike[str]"]) -> "Shard":
        """a shard from its file (Shard.write's, or bin/evaluate --queries FROM:TO's for one set)"""
        with open(path, "rb") as f:
            data = f.read()
        r, err = (ctypes.c_int64 * 3)(), ctypes.create_string_buffer(512)
        rc = _lib.load().hedge_shard_range(data, len(data), ctypes.byref(r), err, len(err))
        if rc < 0:
            raise ValueError("%s: %s" % (path, err.value.decode(errors="replace")))
        return cls(data, (r[0], r[1]), r[2])


def _shard(lib, q, g, o, shard):
    """The shard i of n (queries n_items i // n .. n_items (i + 1) // n) as a Shard."""
    try:
        i, n = shard
        ok = all(isinstance(x, (int, np.integer)) and not isinstance(x, bool) for x in (i, n)) and 0 <= i < n
    except (TypeError, ValueError):
        ok = False
    if not ok:
        raise ValueError("shard: %r, expected (i, n): shard i (from 0) of n, 0 <= i < n" % (shard,))
    err = ctypes.create_string_buffer(512)
    q0, q1 = q.n * int(i) // int(n), q.n * (int(i) + 1) // int(n)
    data, size = ctypes.c_void_p(), ctypes.c_size_t()
    gp = ctypes.byref(g) if g is not None else None
    _raise(_lib.call(lib.hedge_shard, o, ctypes.byref(q), gp, ctypes.byref(o), q0, q1, ctypes.byref(data),
                     ctypes.byref(size), err, len(err)), err, "hedge_shard")
    try:
        return Shard(ctypes.string_at(data, size.value), (q0, q1), q.n)
    finally:
        lib.hedge_free(data)


def _shard_bytes(shards):
    """the shards' bytes as the arrays hedge_merge takes (and their pointers, to keep alive)"""
    if not isinstance(shards, (list, tuple)) or not shards or not all(isinstance(s, Shard) for s in shards):
        raise ValueError("shards: expected a list of hedge.Shard (from hedge.evaluate(..., shard=(i, n))), got %r"
                         % (shards if not isinstance(shards, (list, tuple)) else [type(s).__name__ for s in shards],))
    # pointers into the bytes objects themselves (immutable; the engine only reads them): no copy
    data = [ctypes.c_char_p(s.data) for s in shards]
    ptrs = (ctypes.c_void_p * len(data))(*[ctypes.cast(d, ctypes.c_void_p) for d in data])
    sizes = (ctypes.c_size_t * len(data))(*[len(s.data) for s in shards])
    return ptrs, sizes, data


def evaluate(mu: ArrayLike, labels: ArrayLike, *, var: Optional[ArrayLike] = None, eta: Optional[ArrayLike] = None,
             gallery: Union[None, ArrayLike, Sequence[ArrayLike]] = None,
             gallery_labels: Union[None, ArrayLike, Sequence[ArrayLike]] = None,
             gallery_var: Union[None, ArrayLike, Sequence[ArrayLike]] = None,
             gallery_eta: Union[None, ArrayLike, Sequence[ArrayLike]] = None,
             ids: Optional[ArrayLike] = None, gallery_ids: Union[None, ArrayLike, Sequence[ArrayLike]] = None,
             exclude_id: bool = False, distance: str = "euclidean", k: Union[None, int, str] = None,
             knn_k: int = 5, recall_at: Sequence[int] = (1, 2, 4, 8), pairs: int = 10000, seed: int = 714,
             match: Optional[Tuple[float, float]] = None, threads: int = 1, pml: bool = False,
             include: Sequence[str] = (), exclude: Sequence[str] = (), avg_of_avgs: bool = False,
             return_per_class: bool = False, shard: Optional[Tuple[int, int]] = None,
             shards: Optional[Sequence["Shard"]] = None, bootstrap: int = 1000,
             uncertainty: Union[None, ArrayLike, Dict[str, ArrayLike]] = None, risk: float = 0.05,
             risk_delta: float = 0.1, report: Union[None, str, "os.PathLike[str]"] = None
             ) -> Union[Dict[str, Any], List[Dict[str, Any]], "Shard"]:
    """The evaluation battery of one set of embeddings (leave-one-out) or of queries against a
    gallery, computed by libhedge in this process, the GIL released while it runs.

    The arrays come first (mu, labels), every option after them by its name (keyword-only).
    mu: float [n, D] or [n, C, D] (C mixture components); labels: int [n], or names (str [n]: one
    class per name; with return_per_class=True, result["classes"] lists the names); var: as mu, or None;
    eta: float [n], the uncertainty (default: the mean of var). The gallery_* arrays: the same for
    the searched set (gallery=None: each item against the others). A float32 (int32 labels, int64
    ids) C-contiguous array is used in place, without a copy; another float or integer array is
    converted once (a copy). Anything else raises ValueError naming the array: a wrong dtype or
    shape, labels of another length, no items, and what the engine refuses (NaN, infinities).

    distance: "euclidean", "cosine" (of the normalised means), "mls" (PFE's mutual likelihood
    score, needs var; "elk" too), "w2" (the 2-Wasserstein distance of the Gaussians, needs var), or
    "csd", "kl", "bhattacharyya" (PCME++'s closed-form sampled distance, the symmetric KL, and
    Bhattacharyya's distance of the Gaussians, need var; docs/metric.md). knn_k: the kNN vote's k; recall_at: the k of Recall@k; pairs, seed: the
    verification pairs of ap and ece; match=(a, b): p(match) = sigmoid(-a d + b) for ap and ece;
    exclude_id: never the gallery item with the query's id (ids, gallery_ids); threads: the
    engine's threads.

    Returns a dict named as evaluate.sh's JSON: ap, ece, knn, knn_k, recall_at, recall (a list),
    p1, rprec, map_r, map, mrr and their class averages (*_avg_of_avgs), nmi, ami, tau, auroc,
    aurc, eaurc, no_positive; NaN where a number cannot be had, its reason in result["why"];
    result["notes"]: the notes of evaluate.sh's table.

    pytorch-metric-learning's AccuracyCalculator: pml=True names the metrics as it does
    (precision_at_1, r_precision, mean_average_precision_at_r, mean_average_precision,
    mean_reciprocal_rank, NMI, AMI; the others keep hedge's names); include and exclude take
    those names (the metrics not asked are not computed); k (PML's k: an int or "max_bin_count")
    truncates mAP and MRR at the k nearest as PML does (mAP sums the precisions of the hits among
    them and still divides by R; MRR is 0 with no hit among them); k=None ranks the whole gallery
    (PML's k=None). avg_of_avgs: the retrieval metrics are their class averages;
    return_per_class: they are lists, one value per class of the queries (result["classes"],
    ascending). R-precision and MAP@R are over R whatever k (PML's are right for k >= R only);
    NMI and AMI are of hedge's k-means (k = the queries' classes, seeded), PML's of faiss's.
    k="max_bin_count" is PML's determine_k: the largest count of a query class in the searched
    set, less one when it holds the queries (leave-one-out, or exclude_id: PML's
    ref_includes_query). Where hedge and PML (2.x, the version these rules follow) differ:
    return_per_class lists every class of the queries (PML only those with a positive); mAP
    truncated at k divides by R, the query's positives in the searched set (PML 2.x; 1.x divided
    by the positives found within k); the per-query values are float32 before they are averaged
    in double (PML averages float32 or float64 tensors as given).

    The uncertainty section (lib/engine/hedge.h, docs/metric.md): does each source of uncertainty
    know when a query's answer is wrong, and more than the free signals every model has?
    result["uncertainty"][source][target][measure], sources top1_dist, ratio, vote_entropy, norm
    (free), var, eta and the user's (uncertainty=array, named "user", or {name: array}, two at
    most; larger = less sure), targets r1, knn, ap, map_r, measures auroc, aurc, eaurc, augrc,
    tau, pearson_bins (NaN: result["uncertainty_why"] says why); result["ci"]: 95 % intervals
    from a bootstrap over the queries (bootstrap replicates from seed; 0: none), for each metric
    that is a mean over queries (result["ci"]["map_r"] = [lo, hi]) and each of the section's
    numbers (result["ci"]["var"]["r1"]["auroc"]); result["verdict"][learned source][target]
    [measure] = {"baseline", "difference", "ci"}: its difference from the best free baseline
    with a paired interval; result["risk"][source]: the threshold certified (Learn then Test) to
    keep R@1's error at most risk with confidence 1 - risk_delta, its coverage and error on the
    other half. The section is left out when include or exclude are given.

    report="page.html" also writes the evaluation as one self-contained HTML page, as evaluate
    --report does (lib/engine/evalhtml.c): the table, then the risk-coverage curves of every
    source on each target, tau's bins, the reliability diagram and the verification ROC in
    inline SVG (no network); written whole or not at all. hedge.report(result, path) writes it
    later from the dict returned.

    Several galleries (bin/evaluate -g A -g B): gallery=[A, B, ...], a list or tuple of arrays
    (not a nested list of numbers: that is one gallery's array), with gallery_labels (and
    gallery_var, gallery_eta, gallery_ids when given) lists of the same length, returns a list of
    dicts, the i-th the dict of gallery=A_i with the same queries and options.

    Shards (for queries too many for one machine, as bin/evaluate --shard and --merge):
    shard=(i, n) returns a hedge.Shard instead of a dict: the n x gallery work (kNN, retrieval)
    of the queries len(mu) i // n .. len(mu) (i + 1) // n only; shards=[...] (every query once,
    any order) gives the dict of the whole set from them, computing the rest here: the same
    numbers as without shards, to the bit. Both calls take the same arrays and options; a shard
    is opaque bytes (the stream bin/evaluate --queries writes): shards of other data or options,
    damaged ones, gaps and overlaps are refused by the engine, naming the shard ("shard I", its
    place in the list) and what differs.
    """
    if isinstance(gallery, (list, tuple)) and gallery and all(hasattr(g, "__array__") for g in gallery):
        return _galleries(locals())
    if avg_of_avgs and return_per_class:
        raise ValueError("avg_of_avgs and return_per_class are mutually exclusive")
    if not isinstance(distance, str) or distance not in _lib.DISTANCES:
        raise ValueError("distance: %r, expected one of %s" % (distance, ", ".join(_lib.DISTANCES)))
    if gallery is None and gallery_labels is not None:
        raise ValueError("gallery_labels: given without a gallery")
    if gallery is None and any(a is not None for a in (gallery_var, gallery_eta, gallery_ids)):
        raise ValueError("gallery_var, gallery_eta, gallery_ids: given without a gallery")
    if exclude_id and (gallery is None or ids is None or gallery_ids is None):
        raise ValueError("exclude_id: needs a gallery, ids and gallery_ids")
    for name, given in (("include", include), ("exclude", exclude)):
        if not isinstance(given, (list, tuple, set, frozenset)):
            raise ValueError("%s: %r, expected a list or tuple of metric names" % (name, given))

    keep = []
    labels, gallery_labels, label_names = _named_classes(labels, gallery_labels)
    q, qmu, qlabels = _set("", mu, labels, var, eta, ids, keep)
    _user_sources(q, uncertainty, keep)
    g = None
    if gallery is not None:
        g, gmu, glabels = _set("gallery_", gallery, gallery_labels, gallery_var, gallery_eta, gallery_ids, keep)
        if (g.C, g.D) != (q.C, q.D):
            raise ValueError("gallery: %d components of %d dimensions, expected %d of %d (mu's)"
                             % (g.C, g.D, q.C, q.D))

    lib = _lib.load()
    o = _lib.Options()
    lib.hedge_options_init(ctypes.byref(o))
    o.distance = _lib.DISTANCES[distance]
    o.knn_k = _integer("knn_k", knn_k, 1, C_INT_MAX)
    try:
        ks = list(recall_at)
    except TypeError:
        ks = None
    if ks is None or not 1 <= len(ks) <= _lib.MAX_KS \
            or any(isinstance(x, bool) or not isinstance(x, (int, np.integer)) or not 1 <= x <= C_INT_MAX for x in ks) \
            or any(b <= a for a, b in zip(ks, ks[1:])):
        raise ValueError("recall_at: %r, expected 1 to %d increasing integers k, 1 <= k < 2^31, like (1, 2, 4, 8)"
                         % (recall_at, _lib.MAX_KS))
    o.nk = len(ks)
    for i, x in enumerate(ks):
        o.ks[i] = int(x)
    o.pairs = _integer("pairs", pairs, 1, INT64_MAX)
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or not 0 <= seed < 2**64:
        raise ValueError("seed: %r, expected an integer from 0 to 2^64 - 1" % (seed,))
    o.seed = int(seed)
    if match is not None:
        try:
            a, b = (float(v) for v in match)
        except (TypeError, ValueError):
            raise ValueError("match: %r, expected (a, b): p(match) = sigmoid(-a d + b)" % (match,)) from None
        o.has_match, o.match_a, o.match_b = 1, a, b
    o.exclude_id = int(bool(exclude_id))
    o.threads = _integer("threads", threads, 1, C_INT_MAX)
    o.bootstrap = _integer("bootstrap", bootstrap, 0, 1000000)
    for name, v in (("risk", risk), ("risk_delta", risk_delta)):
        if isinstance(v, bool) or not isinstance(v, (int, float, np.floating, np.integer)) or not 0 < v < 1:
            raise ValueError("%s: %r, expected a number in (0, 1)" % (name, v))
    o.risk, o.risk_delta = float(risk), float(risk_delta)
    o.avg_of_avgs = 1
    o.per_class = int(bool(return_per_class))
    if k is None:
        o.at_k = 0
    elif k == "max_bin_count":
        # PML (determine_k): the most items of a query's class in the searched set, less the query
        # itself when it is there: leave-one-out, or a gallery that holds the queries (exclude_id,
        # PML's ref_includes_query)
        ref = glabels if g is not None else qlabels
        classes, counts = np.unique(ref, return_counts=True)
        counts = counts[np.isin(classes, qlabels)]
        o.at_k = int(counts.max()) - (g is None or bool(exclude_id)) if counts.size else 0
        if o.at_k < 1:
            raise ValueError("k: max_bin_count is 0: no query has an item of its class to find")
    else:
        # a K beyond every rank (the gallery has fewer than 2^31 items) counts what the largest
        # C int does: the whole ranking by the truncated formulas
        o.at_k = min(_integer("k", k, 1, None), C_INT_MAX)

    names = _names(lib, pml)
    asked = _select(names, include, exclude)
    bits = 0
    for name in asked:
        for i in names[name]:
            bits |= 1 << i
    if include or exclude:
        o.include = bits

    if shard is not None and shards is not None:
        raise ValueError("shard, shards: give one (shard makes a shard, shards puts them together)")
    if report is not None and not isinstance(report, (str, os.PathLike)):
        raise ValueError("report: %r, expected a file's path (str)" % (report,))
    if shard is not None and report is not None:
        raise ValueError("report: a shard has no page (give report= with shards=, or without shards)")
    if shard is not None:
        return _shard(lib, q, g, o, shard)
    r = _lib.Result()
    err = ctypes.create_string_buffer(512)
    gp = ctypes.byref(g) if g is not None else None
    if shards is not None:
        ptrs, sizes, data = _shard_bytes(shards)
        rc = _lib.call(lib.hedge_merge, o, ctypes.byref(q), gp, ctypes.byref(o), ptrs, sizes, len(data),
                       ctypes.byref(r), err, len(err))
    else:
        rc = _lib.call(lib.hedge_evaluate, o, ctypes.byref(q), gp, ctypes.byref(o), ctypes.byref(r), err, len(err))
    _raise(rc, err, "hedge_evaluate")
    try:
        out = Result(_result(lib, r, o, names, asked, ks, pml, avg_of_avgs, return_per_class))
        if label_names is not None and "classes" in out:
            out["classes"] = [label_names[c] for c in out["classes"]]
        # what hedge.report needs to draw the page later: the engine's result and options as bytes
        # (their pointers cleared: the arrays they point to are freed below; bytes pickle)
        rc_ = _lib.Result.from_buffer_copy(r)
        for f in ("classes", "per_class", "knn_correct", "knn_eta"):
            setattr(rc_, f, None)
        rc_.nclasses = 0
        oc = _lib.Options.from_buffer_copy(o)
        oc.stop = None
        out._engine = (bytes(rc_), bytes(oc))
        if report is not None:
            _page(out, report, "hedge.evaluate")
        return out
    finally:
        lib.hedge_result_free(ctypes.byref(r))


class Result(dict):
    """hedge.evaluate's dict, which also keeps what hedge.report draws (the curves, the bins)."""
    _engine = None


def report(result: Dict[str, Any], path: Union[str, "os.PathLike[str]"], title: str = "hedge.evaluate") -> None:
    """Write the evaluation hedge.evaluate returned as one self-contained HTML page at path, as
    evaluate --report does (lib/engine/evalhtml.c: the table, then the risk-coverage curves of
    every source on each target, tau's bins, the reliability diagram and the verification ROC in
    inline SVG, no network); written whole or not at all. result: the dict hedge.evaluate
    returned (a dict made again, from JSON say, has no curves: ValueError)."""
    _page(result, path, title)


def _page(result, path, title):
    engine = getattr(result, "_engine", None)
    if engine is None:
        raise ValueError("result: %s, expected the dict hedge.evaluate returned (a dict made again, e.g. from "
                         "JSON, has no curves: evaluate again with report=PATH)" % type(result).__name__)
    if not isinstance(path, (str, os.PathLike)):
        raise ValueError("path: %r, expected a file's path (str)" % (path,))
    lib = _lib.load()
    r, o = _lib.Result.from_buffer_copy(engine[0]), _lib.Options.from_buffer_copy(engine[1])
    err = ctypes.create_string_buffer(512)
    names_c = (ctypes.c_char_p * 1)(b"input")
    rc = lib.hedge_report(os.fsencode(path), ctypes.byref(r), 1, names_c, ctypes.byref(o),
                          str(title).encode(), err, len(err))
    _raise(rc, err, "hedge_report")


def version():
    """libhedge's version, as the programs' --version prints it: hedge.__version__"""
    return _lib.load().hedge_version().decode()


def blas_kernel():
    """The OpenBLAS kernel the engine runs (lib/engine/hedge.h's hedge_blas_kernel): the one hedge's
    programs use on this CPU, which the first call of the engine sets for the whole process (numpy
    shares that OpenBLAS on Debian), so that hedge.evaluate gives the programs' numbers and their
    speed; HEDGE_BLAS_KEEP=1 in the environment (before the first call) keeps OpenBLAS's own."""
    return _lib.load().hedge_blas_kernel().decode()


def _galleries(args):
    """evaluate's call with gallery=[...]: the dict of each gallery (the same queries, options)"""
    gal = args["gallery"]
    per = {}
    for name in ("gallery_labels", "gallery_var", "gallery_eta", "gallery_ids"):
        v = args[name]
        if v is not None and (not isinstance(v, (list, tuple)) or len(v) != len(gal)):
            raise ValueError("%s: with %d galleries (a list), expected a list of %d, one per gallery, got %s"
                             % (name, len(gal), len(gal), "%d" % len(v) if isinstance(v, (list, tuple))
                                else type(v).__name__))
        per[name] = [None] * len(gal) if v is None else list(v)
    if args["shard"] is not None or args["shards"] is not None:
        raise ValueError("shard, shards: one gallery at a time (gallery is a list of %d)" % len(gal))
    kw = {k: v for k, v in args.items() if k != "gallery" and k not in per}
    out = []
    for i, g in enumerate(gal):
        try:
            out.append(evaluate(gallery=g, **{k: per[k][i] for k in per}, **kw))
        except ValueError as e:
            raise ValueError("gallery %d of %d: %s" % (i, len(gal), e)) from None
    return out


def _named_classes(labels, gallery_labels):
    """Labels that are names (strings or bytes, as numpy or a list holds them: identities such
    as "n000123") become the classes 0, 1, ... in the sorted order of the names of both sets, the
    same for every call on the same arrays (so shards agree), in the shape they came in (_set
    checks it); returns the two label arrays and the names (None when the labels are numbers,
    left to _set's checks)."""
    arrays = [None if x is None else np.asarray(x) for x in (labels, gallery_labels)]
    given = [a for a in arrays if a is not None]
    named = [a.dtype.kind in "USO" for a in given]
    if not any(named):
        return labels, gallery_labels, None
    if not all(named):
        raise ValueError("labels, gallery_labels: %s: expected both names (strings) or both integers"
                         % " and ".join(str(a.dtype) for a in given))
    for name, a in zip(("labels", "gallery_labels"), given):
        bad = [x for x in a.ravel() if not isinstance(x, (str, bytes))] if a.dtype.kind == "O" else []
        if bad:
            raise ValueError("%s: object array holding %r (%s): expected names (str) or integers"
                             % (name, bad[0], type(bad[0]).__name__))
    try:
        names, codes = np.unique(np.concatenate([a.ravel().astype(object) for a in given]), return_inverse=True)
    except TypeError as e:  # str beside bytes
        raise ValueError("labels: names of mixed types (%s): expected all str or all bytes" % e) from None
    if len(names) > 2**31 - 1:
        raise ValueError("labels: %d names, expected at most 2^31 - 1" % len(names))
    codes = codes.astype(np.int32)
    n = given[0].size
    out = [codes[:n].reshape(given[0].shape)] + [codes[n:].reshape(a.shape) for a in given[1:]]
    return out[0], out[1] if len(out) == 2 else None, names.tolist()


def _raise(rc, err, what):
    """the engine's failure as Python's: MemoryError (an allocation failed, the size named),
    KeyboardInterrupt (stopped), ValueError (bad input, the argument named)"""
    if rc >= 0:
        return
    msg = err.value.decode(errors="replace") or "%s failed" % what
    if rc == _lib.HEDGE_ENOMEM:
        raise MemoryError("hedge: " + msg)
    if rc == _lib.HEDGE_ESTOPPED:
        raise KeyboardInterrupt("hedge: " + msg)
    raise ValueError(_argument_names(msg))


def _argument_names(msg):
    """The engine's message with the array or option named as evaluate's argument: "queries: mu:
    ..." is "mu: ...", "gallery: mu: ..." "gallery: ...", "gallery: var: ..." "gallery_var: ...",
    "options: at_k 0: ..." "k: at_k 0: ..."."""
    for prefix, names in (("queries: ", {"mu": "mu", "var": "var", "eta": "eta", "labels": "labels", "ids": "ids"}),
                          ("gallery: ", {"mu": "gallery", "var": "gallery_var", "eta": "gallery_eta",
                                         "labels": "gallery_labels", "ids": "gallery_ids"})):
        if msg.startswith(prefix):
            array, sep, rest = msg[len(prefix):].partition(": ")
            if sep and array in names:
                return names[array] + ": " + rest
            return ("mu: " + msg[len(prefix):] if prefix == "queries: " else msg)
    if msg.startswith("options: "):
        option, sep, rest = msg[len("options: "):].partition(" ")
        name = {"at_k": "k", "ks": "recall_at", "nk": "recall_at", "match_a": "match", "match_b": "match",
                "per_class": "return_per_class"}.get(option.rstrip(":"), option.rstrip(":"))
        return "%s: %s%s" % (name, option + sep if name != option.rstrip(":") else "", rest)
    return msg


# what the C fields hold: ctypes would cut a larger Python integer to its low bits, silently
C_INT_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1


def _integer(name, x, lo, hi):
    """x as an int in lo .. hi (hi None: no bound), or ValueError naming the option"""
    if isinstance(x, bool) or not isinstance(x, (int, np.integer)) or x < lo or (hi is not None and x > hi):
        raise ValueError("%s: %r, expected an integer %s" % (name, x, ">= %d" % lo if hi is None else
                                                                    "from %d to %d" % (lo, hi)))
    return int(x)


def _select(names, include, exclude):
    for what, given in (("include", include), ("exclude", exclude)):
        bad = [x for x in given if x not in names]
        if bad:
            raise ValueError("%s: %s: not a metric; the metrics: %s" % (what, ", ".join(map(str, bad)), ", ".join(names)))
    return [x for x in (include or names) if x not in exclude]


def _uncertainty(lib, r, o, out, ci):
    """the uncertainty section of the result (lib/engine/hedge.h): out["uncertainty"][source][target]
    [measure] (NaN: out["uncertainty_why"] has the reason), ci[source][target][measure] = [lo,
    hi], out["verdict"][learned source][target][measure] = {"baseline", "difference", "ci"}; and
    out["ci"], out["bootstrap"] (the replicates, 0: none)"""
    unc, uwhy, verdict = {}, {}, {}
    for s in range(r.nsources):
        src = r.source[s].value.decode()
        for t, tgt in enumerate(lib.targets):
            for m, mea in enumerate(lib.measures):
                v = r.unc[s][t][m]
                unc.setdefault(src, {}).setdefault(tgt, {})[mea] = v
                if math.isnan(v):
                    uwhy.setdefault(src, {}).setdefault(tgt, {})[mea] = r.unc_why[s][t][m].value.decode(errors="replace")
                elif not math.isnan(r.unc_ci[s][t][m][0]):
                    ci.setdefault(src, {}).setdefault(tgt, {})[mea] = [r.unc_ci[s][t][m][0], r.unc_ci[s][t][m][1]]
                b = r.best[t][m]
                if r.learned[s] and b >= 0 and not math.isnan(r.diff[s][t][m]):
                    lo, hi = r.diff_ci[s][t][m][0], r.diff_ci[s][t][m][1]
                    verdict.setdefault(src, {}).setdefault(tgt, {})[mea] = {
                        "baseline": r.source[b].value.decode(), "difference": r.diff[s][t][m],
                        "ci": None if math.isnan(lo) else [lo, hi]}
    if o.include:  # only the metrics asked for
        return
    if r.nsources:
        out["uncertainty"] = unc
        out["uncertainty_why"] = uwhy
        out["verdict"] = verdict
        risk = {"alpha": o.risk, "delta": o.risk_delta}
        for s in range(r.nsources):
            k = r.riskctl[s]
            risk[r.source[s].value.decode()] = dict(
                found=bool(k.found), threshold=k.threshold, coverage=k.coverage, risk=k.risk, calibration=k.ncal,
                test=k.ntest, risk_at_coverage=list(k.risk_at), **({"why": k.why.decode()} if k.why else {}))
        out["risk"] = risk
    out["ci"] = ci
    out["bootstrap"] = int(r.replicates)
    if r.ci_why:
        out["ci_why"] = r.ci_why.decode(errors="replace")


def _far_label(f):
    return "1e-%d" % round(-math.log10(f))


def _verification(r, o, out):
    """the verification section (lib/engine/hedge.h's struct hedge_verify) as evaluate's JSON has it:
    out["verification"] = {"genuine", "impostor", "mated", "non_mated", "far", "tar_at_far",
    "far_reached", "fnmr_at_fmr", "roc_auc", "dir_at_far", "why"}, why naming each NaN by its row
    ("TAR@FAR 1e-4", "ROC AUC", "DIR@FAR 1e-2")"""
    if o.include:  # only the metrics asked for
        return
    v = r.verify
    far = list(v.far)
    why = {}
    for name, vals, reasons in (("TAR@FAR", v.tar, v.tar_why), ("DIR@FAR", v.dir, v.dir_why)):
        if name == "DIR@FAR" and math.isnan(v.roc_auc):
            why["ROC AUC"] = v.roc_why.decode(errors="replace")
        for f, x, w in zip(far, vals, reasons):
            if math.isnan(x):
                why["%s %s" % (name, _far_label(f))] = w.value.decode(errors="replace")
    out["verification"] = {"genuine": int(v.genuine), "impostor": int(v.impostor), "mated": int(v.mated),
                           "non_mated": int(v.nonmated), "far": far, "tar_at_far": list(v.tar),
                           "far_reached": list(v.far_reached), "fnmr_at_fmr": list(v.fnmr), "roc_auc": v.roc_auc,
                           "dir_at_far": list(v.dir), "why": why}


def _result(lib, r, o, names, asked, ks, pml, avg_of_avgs, return_per_class):
    value = np.ctypeslib.as_array(r.value)[:r.nmetrics].copy()
    ids = {name: i for i, name in enumerate(lib.names)}
    out, why = {}, {}
    per = None
    if return_per_class and r.nclasses > 0 and r.per_class:
        per = np.ctypeslib.as_array(r.per_class, shape=(r.nclasses, r.nmetrics)).copy()
        out["classes"] = np.ctypeslib.as_array(r.classes, shape=(r.nclasses,)).tolist()
    ci = {}
    def interval(i):
        lo, hi = r.ci[i][0], r.ci[i][1]
        return None if math.isnan(lo) else [lo, hi]
    for name in asked:
        if name == "recall":
            out["recall_at"] = [int(x) for x in ks]
            out["recall"] = [float(value[i]) for i in names[name]][:len(ks)]
            if any(interval(i) for i in names[name][:len(ks)]):
                ci["recall"] = [interval(i) for i in names[name][:len(ks)]]
            for j, i in enumerate(names[name][:len(ks)]):
                if math.isnan(value[i]) and r.why[i].value:
                    why["recall@%d" % ks[j]] = r.why[i].value.decode(errors="replace")
            continue
        i = names[name][0]
        engine = lib.names[i]
        if engine in CLASS_METRICS and avg_of_avgs:
            i = ids[engine + AVG]
        if engine in ("knn_k", "no_positive"):
            out[name] = None if math.isnan(value[i]) else int(value[i])
        elif engine in CLASS_METRICS and per is not None:
            out[name] = per[:, ids[engine]].tolist()
        else:
            out[name] = float(value[i])
        if interval(i) and per is None:
            ci[name] = interval(i)
        if math.isnan(value[i]) and r.why[i].value:
            why[name] = r.why[i].value.decode(errors="replace")
    _uncertainty(lib, r, o, out, ci)
    _verification(r, o, out)
    out["why"] = why
    out["notes"] = [r.notes[j].value.decode(errors="replace") for j in range(r.nnotes)]
    return out
