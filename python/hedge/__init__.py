"""hedge: the evaluation battery of hedge (lib/engine/hedge.h, libhedge.so) on numpy arrays, and hedge's
tensor streams.

    import numpy as np, hedge
    r = np.random.default_rng(1); y = np.arange(600) % 6
    m = hedge.evaluate(r.normal(size=(600, 8)) + 2 * y[:, None], y)   # leave-one-out
    print(m["knn"], m["map_r"], m["recall"], m["nmi"])
    hedge.evaluate(mu, y, pml=True, k="max_bin_count")   # pytorch-metric-learning's names
    parts = [hedge.evaluate(mu, y, shard=(i, 4)) for i in range(4)]   # anywhere (they pickle)
    hedge.evaluate(mu, y, shards=parts)                  # = hedge.evaluate(mu, y), to the bit

hedge.evaluate (hedge/_evaluate.py) calls the engine through ctypes (hedge/_lib.py: where the
library is looked for); hedge.stream reads and writes streams (msgpack needed, imported on first
use). Install: pip install ./python from the top of the hedge tree (builds libhedge.so with
`make lib`), or make install.
"""

from . import stream
from ._evaluate import PML_NAMES, Shard, blas_kernel, evaluate, report, version

__all__ = ["evaluate", "report", "stream", "PML_NAMES", "Shard", "blas_kernel", "version"]


def __getattr__(name):
    """hedge.__version__: libhedge's version (the engine's, loaded on first use)"""
    if name == "__version__":
        return version()
    raise AttributeError("module 'hedge' has no attribute %r" % name)
