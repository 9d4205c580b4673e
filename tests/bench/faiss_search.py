"""faiss_search.py: one exact leave-one-out search with faiss IndexFlatL2, the peer of hedge's knn
and retrieve in tests/bench/faiss.sh (a benchmark, not part of `make test`; stdlib + numpy + faiss).

    OPENBLAS_NUM_THREADS=1 python3 faiss_search.py X.npz K THREADS [NEIGHBORS.npy]

X.npz holds mu float32 [n, D] (as tests/bench/faiss.sh writes it). Every item searches the index of
all n items for its K nearest (itself among them: the caller asks for one more than it needs and
drops it). Threads: faiss.omp_set_num_threads(THREADS) for faiss's OpenMP loops; the sgemm inside
IndexFlatL2 (n >= 20 queries take faiss's BLAS path) runs on as many threads as OpenBLAS is given,
which the caller sets through OPENBLAS_NUM_THREADS before this starts. Prints one line,
"seconds S cpu C": the wall time of index.add and index.search together (not the imports or the
loading of X) and the CPU time of all the process's threads over it; with
NEIGHBORS.npy also writes the labels I, int64 [n, K], nearest first.
"""

import sys
import time

import faiss
import numpy as np


def main(argv):
    if len(argv) not in (4, 5):
        sys.stderr.write("usage: faiss_search.py X.npz K THREADS [NEIGHBORS.npy]\n")
        return 2
    x = np.ascontiguousarray(np.load(argv[1])["mu"], dtype=np.float32)
    x = x.reshape(len(x), -1)
    k, threads = int(argv[2]), int(argv[3])
    faiss.omp_set_num_threads(threads)
    t0, c0 = time.perf_counter(), time.process_time()
    index = faiss.IndexFlatL2(x.shape[1])
    index.add(x)
    _, labels = index.search(x, k)
    t1, c1 = time.perf_counter(), time.process_time()
    print("seconds %.4f cpu %.4f" % (t1 - t0, c1 - c0))
    if len(argv) == 5:
        np.save(argv[4], labels)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
