"""hedge._lib: ctypes over libhedge.so, the evaluation engine (lib/engine/hedge.h: a shard is opaque
bytes, hedge_shard and hedge_merge). The structures below mirror that header field for field; HEDGE_ABI is the header's, and load() refuses a library whose
hedge_options_init sets another.

The library is looked for, in this order: beside this file (what pip and make install put there),
$HEDGE_LIB (a path to a libhedge.so), the hedge tree's build/lib (python/hedge/../../build/lib:
PYTHONPATH=python in a clone after `make lib`), then the system's library path (libhedge.so in
PREFIX/lib, e.g. /usr/local/lib, after `make install` and ldconfig).

ctypes.CDLL releases the GIL for the length of every foreign call: hedge_evaluate runs while
other Python threads run, and two threads may evaluate at once (the engine keeps no global state).
call() runs one in a helper thread when it is called from the main thread, so that Ctrl-C stops
it (the engine's stop flag: it returns between blocks of its work, every block it made freed).
"""

import ctypes
import ctypes.util
import os
import threading

import numpy as np

HEDGE_ABI = 5
HEDGE_EINVAL, HEDGE_ENOMEM, HEDGE_ESTOPPED = -1, -2, -3
DISTANCES = {"euclidean": 0, "cosine": 1, "mls": 2, "w2": 3, "csd": 4, "kl": 5, "bhattacharyya": 6,
             "elk": 2, "bhatt": 6}
MAX_KS = 16
MAX_USER = 2          # HEDGE_MAXUSER: the set's own uncertainties
NSOURCES, NTARGETS, NMEASURES = 8, 4, 6
NFAR = 4              # HEDGE_NFAR: the FARs of the verification section
CURVE, TAUBINS, ECEBINS, ROC = 50, 20, 15, 33   # HEDGE_CURVE, _TAUBINS, _ECEBINS, _ROC: the pictures


class Set(ctypes.Structure):
    """hedge_set: one set of embeddings; the arrays are borrowed (C-contiguous)."""
    _fields_ = [("n", ctypes.c_int64),
                ("C", ctypes.c_int), ("D", ctypes.c_int),
                ("mu", ctypes.POINTER(ctypes.c_float)),       # [n, C, D]
                ("var", ctypes.POINTER(ctypes.c_float)),      # [n, C, D] or NULL
                ("eta", ctypes.POINTER(ctypes.c_float)),      # [n] or NULL
                ("labels", ctypes.POINTER(ctypes.c_int32)),   # [n]
                ("ids", ctypes.POINTER(ctypes.c_int64)),      # [n] or NULL
                ("nuser", ctypes.c_int),
                ("user_name", ctypes.c_char_p * 2),
                ("user", ctypes.POINTER(ctypes.c_float) * 2)]  # [n] each


class Options(ctypes.Structure):
    """hedge_options; defaults from hedge_options_init."""
    _fields_ = [("abi", ctypes.c_int),
                ("distance", ctypes.c_int),
                ("knn_k", ctypes.c_int),
                ("ks", ctypes.c_int * MAX_KS), ("nk", ctypes.c_int),
                ("pairs", ctypes.c_int64),
                ("seed", ctypes.c_uint64),
                ("has_match", ctypes.c_int),
                ("match_a", ctypes.c_double), ("match_b", ctypes.c_double),
                ("exclude_id", ctypes.c_int),
                ("at_k", ctypes.c_int),
                ("avg_of_avgs", ctypes.c_int),
                ("per_class", ctypes.c_int),
                ("include", ctypes.c_uint64),
                ("q0", ctypes.c_int64), ("q1", ctypes.c_int64),
                ("threads", ctypes.c_int),
                ("bootstrap", ctypes.c_int),
                ("risk", ctypes.c_double), ("risk_delta", ctypes.c_double),
                ("stop", ctypes.POINTER(ctypes.c_int))]


class Risk(ctypes.Structure):
    """struct hedge_risk: a source's selective retrieval with a guarantee (lib/measures/riskctl.h)."""
    _fields_ = [("found", ctypes.c_int), ("ncal", ctypes.c_int64), ("ntest", ctypes.c_int64),
                ("threshold", ctypes.c_double), ("coverage", ctypes.c_double), ("risk", ctypes.c_double),
                ("risk_at", ctypes.c_double * 3), ("why", ctypes.c_char * 160)]


class Verify(ctypes.Structure):
    """struct hedge_verify: TAR at FAR over ap's pairs, their ROC AUC, open-set DIR at FAR (lib/measures/verify.h)."""
    _fields_ = [("genuine", ctypes.c_int64), ("impostor", ctypes.c_int64),
                ("mated", ctypes.c_int64), ("nonmated", ctypes.c_int64),
                ("far", ctypes.c_double * NFAR),
                ("tar", ctypes.c_double * NFAR), ("far_reached", ctypes.c_double * NFAR),
                ("fnmr", ctypes.c_double * NFAR), ("dir", ctypes.c_double * NFAR),
                ("roc_auc", ctypes.c_double),
                ("tar_why", (ctypes.c_char * 160) * NFAR), ("dir_why", (ctypes.c_char * 160) * NFAR),
                ("roc_why", ctypes.c_char * 160),
                ("roc_far", ctypes.c_double * ROC), ("roc_tar", ctypes.c_double * ROC)]


class Result(ctypes.Structure):
    """hedge_result; hedge_result_free releases what the engine allocated in it."""
    _fields_ = [("nmetrics", ctypes.c_int),
                ("value", ctypes.c_double * 64),
                ("why", (ctypes.c_char * 160) * 64),
                ("notes", (ctypes.c_char * 200) * 8),
                ("nnotes", ctypes.c_int),
                ("nclasses", ctypes.c_int64),
                ("classes", ctypes.POINTER(ctypes.c_int32)),     # [nclasses]
                ("per_class", ctypes.POINTER(ctypes.c_double)),  # [nclasses, nmetrics]
                ("knn_correct", ctypes.POINTER(ctypes.c_float)),
                ("knn_eta", ctypes.POINTER(ctypes.c_float)),
                ("nq", ctypes.c_int64),
                ("ci", (ctypes.c_double * 2) * 64),
                ("ci_why", ctypes.c_char * 120),
                ("replicates", ctypes.c_int),
                ("nsources", ctypes.c_int),
                ("source", (ctypes.c_char * 32) * NSOURCES),
                ("learned", ctypes.c_int * NSOURCES),
                ("unc", ((ctypes.c_double * NMEASURES) * NTARGETS) * NSOURCES),
                ("unc_ci", (((ctypes.c_double * 2) * NMEASURES) * NTARGETS) * NSOURCES),
                ("unc_why", (((ctypes.c_char * 120) * NMEASURES) * NTARGETS) * NSOURCES),
                ("best", (ctypes.c_int * NMEASURES) * NTARGETS),
                ("diff", ((ctypes.c_double * NMEASURES) * NTARGETS) * NSOURCES),
                ("diff_ci", (((ctypes.c_double * 2) * NMEASURES) * NTARGETS) * NSOURCES),
                ("riskctl", Risk * NSOURCES),
                ("verify", Verify),
                ("curve", ((ctypes.c_double * CURVE) * NTARGETS) * NSOURCES),
                ("oracle_curve", (ctypes.c_double * CURVE) * NTARGETS),
                ("tau_bins", ((ctypes.c_double * TAUBINS) * NTARGETS) * NSOURCES),
                ("ece_n", ctypes.c_int64 * ECEBINS),
                ("ece_p", ctypes.c_double * ECEBINS), ("ece_y", ctypes.c_double * ECEBINS)]


def call(fn, o, *args):
    """fn(*args) (an engine function whose options are o) -> its return code, interruptible: from
    the main thread the call runs in a helper thread while this one waits, so that a KeyboardInterrupt
    (Ctrl-C) sets o.stop's flag, waits for the engine to stop (between two blocks of its work) and
    is raised here; from another thread (signals reach only the main one) it runs directly."""
    if threading.current_thread() is not threading.main_thread():
        return fn(*args)
    flag = ctypes.c_int(0)
    o.stop = ctypes.pointer(flag)
    out = []
    t = threading.Thread(target=lambda: out.append(fn(*args)), name="hedge", daemon=True)
    t.start()
    try:
        while t.is_alive():
            t.join(0.05)
    except KeyboardInterrupt:
        flag.value = 1
        while t.is_alive():  # the engine stops at the end of its current block
            try:
                t.join()
            except KeyboardInterrupt:
                pass
        raise
    finally:
        o.stop = None
    return out[0]


def _candidates():
    here = os.path.dirname(os.path.abspath(__file__))
    out = [os.path.join(here, "libhedge.so")]
    if os.environ.get("HEDGE_LIB"):
        out.append(os.environ["HEDGE_LIB"])
    out.append(os.path.join(os.path.dirname(os.path.dirname(here)), "build", "lib", "libhedge.so"))
    return out


_lock = threading.Lock()
_lib = None


def load():
    """The library, loaded once, its functions typed; ImportError when there is none or it is of
    another ABI."""
    global _lib
    with _lock:
        if _lib is None:
            _lib = _load()
    return _lib


def _load():
    tried = _candidates()
    path = next((p for p in tried if os.path.isfile(p)), None)
    if path is None:
        path = ctypes.util.find_library("hedge")
        tried.append("the system's library path")
    if path is None:
        raise ImportError("hedge: no libhedge.so (looked in %s): install the package with "
                          "`pip install ./python` or `make install`, or build it with `make lib` and "
                          "set HEDGE_LIB=build/lib/libhedge.so" % ", ".join(tried))
    try:
        lib = ctypes.CDLL(path)
    except OSError as e:
        raise ImportError("hedge: cannot load %s: %s" % (path, e)) from None
    try:
        _type(lib)
    except AttributeError as e:
        raise ImportError("hedge: %s is not the engine's library (%s): rebuild it (make lib) and "
                          "reinstall (pip install ./python)" % (path, e)) from None
    o = Options()
    lib.hedge_options_init(ctypes.byref(o))
    if o.abi != HEDGE_ABI:
        raise ImportError("hedge: %s is of ABI %d, this package of ABI %d: rebuild both from one tree "
                          "(make lib, pip install ./python)" % (path, o.abi, HEDGE_ABI))
    n = lib.hedge_nmetrics()
    if not 0 < n <= 64:
        raise ImportError("hedge: %s says %d metrics (expected 1 to 64)" % (path, n))
    lib.path = path
    lib.names = [lib.hedge_metric_name(i).decode() for i in range(n)]
    lib.targets = [lib.hedge_target_name(i).decode() for i in range(NTARGETS)]
    lib.measures = [lib.hedge_measure_name(i).decode() for i in range(NMEASURES)]
    return lib


def _type(lib):
    """The argument and result types of every function hedge.h declares."""
    lib.hedge_options_init.argtypes = [ctypes.POINTER(Options)]
    lib.hedge_options_init.restype = None
    lib.hedge_nmetrics.argtypes = []
    lib.hedge_nmetrics.restype = ctypes.c_int
    lib.hedge_metric_name.argtypes = [ctypes.c_int]
    lib.hedge_metric_name.restype = ctypes.c_char_p
    lib.hedge_evaluate.argtypes = [ctypes.POINTER(Set), ctypes.POINTER(Set), ctypes.POINTER(Options),
                                   ctypes.POINTER(Result), ctypes.c_char_p, ctypes.c_size_t]
    lib.hedge_evaluate.restype = ctypes.c_int
    lib.hedge_result_free.argtypes = [ctypes.POINTER(Result)]
    lib.hedge_result_free.restype = None
    lib.hedge_blas_kernel.argtypes = []
    lib.hedge_blas_kernel.restype = ctypes.c_char_p
    lib.hedge_version.argtypes = []
    lib.hedge_version.restype = ctypes.c_char_p
    lib.hedge_report.argtypes = [ctypes.c_char_p, ctypes.POINTER(Result), ctypes.c_int, ctypes.POINTER(ctypes.c_char_p),
                                 ctypes.POINTER(Options), ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t]
    lib.hedge_report.restype = ctypes.c_int
    lib.hedge_target_name.argtypes = [ctypes.c_int]
    lib.hedge_target_name.restype = ctypes.c_char_p
    lib.hedge_measure_name.argtypes = [ctypes.c_int]
    lib.hedge_measure_name.restype = ctypes.c_char_p
    # shards as bytes (lib/engine/hedge.h: hedge_shard, hedge_merge)
    lib.hedge_shard.argtypes = [ctypes.POINTER(Set), ctypes.POINTER(Set), ctypes.POINTER(Options), ctypes.c_int64,
                                ctypes.c_int64, ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_size_t),
                                ctypes.c_char_p, ctypes.c_size_t]
    lib.hedge_shard.restype = ctypes.c_int
    lib.hedge_merge.argtypes = [ctypes.POINTER(Set), ctypes.POINTER(Set), ctypes.POINTER(Options),
                                ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_size_t), ctypes.c_int,
                                ctypes.POINTER(Result), ctypes.c_char_p, ctypes.c_size_t]
    lib.hedge_merge.restype = ctypes.c_int
    lib.hedge_shard_range.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.POINTER(ctypes.c_int64 * 3),
                                      ctypes.c_char_p, ctypes.c_size_t]
    lib.hedge_shard_range.restype = ctypes.c_int
    lib.hedge_free.argtypes = [ctypes.c_void_p]
    lib.hedge_free.restype = None
