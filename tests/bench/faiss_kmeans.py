"""faiss_kmeans.py: one faiss k-means as pytorch-metric-learning runs it, the peer of hedge's
`cluster` in tests/bench/kmeans.sh (a benchmark, not part of `make test`; stdlib + numpy + faiss).

    OPENBLAS_NUM_THREADS=1 python3 faiss_kmeans.py X.npz SEED THREADS

X.npz holds mu float32 [n, D] and class int32 [n] (as kmeans.sh writes it). As PML's
AccuracyCalculator: faiss.Kmeans(D, k, niter=20, seed=SEED) with k = the number of classes,
train on X, then each item's cluster from kmeans.index.search(X, 1). Threads:
faiss.omp_set_num_threads(THREADS); the sgemm inside IndexFlatL2 runs on as many threads as
OpenBLAS is given, which the caller sets through OPENBLAS_NUM_THREADS before this starts.
Prints one line, "nmi X objective Y seconds S cpu C":
  nmi        sklearn's normalized_mutual_info_score (arithmetic mean), written out below as
             hedge's lib/measures/cluster.h defines it (sklearn is not a Debian dependency here)
  objective  the sum over all n items of the squared distance (float64) to the centroid each
             is assigned, as hedge's `cluster` reports inertia
  seconds    wall time of train and search (not the imports or the loading of X), cpu the CPU
             time of all the process's threads over it
"""

import sys
import time

import faiss
import numpy as np


def nmi(u, v):
    """NMI of labelings u and v (arithmetic mean of the entropies, natural logarithms)."""
    n = len(u)
    _, ui = np.unique(u, return_inverse=True)
    _, vi = np.unique(v, return_inverse=True)
    t = np.zeros((ui.max() + 1, vi.max() + 1))
    np.add.at(t, (ui, vi), 1)
    a, b = t.sum(1), t.sum(0)
    if len(a) == 1 and len(b) == 1:
        return 1.0
    nz = t > 0
    mi = max(0.0, float((t[nz] / n * np.log(n * t[nz] / np.outer(a, b)[nz])).sum()))
    if mi == 0:
        return 0.0
    h = lambda p: float(-(p / n * np.log(p / n)).sum())
    return mi / ((h(a) + h(b)) / 2)


def main(argv):
    if len(argv) != 4:
        sys.stderr.write("usage: faiss_kmeans.py X.npz SEED THREADS\n")
        return 2
    z = np.load(argv[1])
    x = np.ascontiguousarray(z["mu"], dtype=np.float32).reshape(len(z["mu"]), -1)
    cls = z["class"]
    seed, threads = int(argv[2]), int(argv[3])
    k = len(np.unique(cls))
    faiss.omp_set_num_threads(threads)
    t0, c0 = time.perf_counter(), time.process_time()
    km = faiss.Kmeans(x.shape[1], k, niter=20, verbose=False, seed=seed)
    km.train(x)
    _, assign = km.index.search(x, 1)
    t1, c1 = time.perf_counter(), time.process_time()
    assign = assign.ravel()
    diff = x.astype(np.float64) - km.centroids[assign].astype(np.float64)
    print("nmi %.10f objective %.10g seconds %.4f cpu %.4f" % (nmi(cls, assign), (diff * diff).sum(), t1 - t0, c1 - c0))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
