"""battery_peer.py: the peer of hedge's evaluate in tests/bench/battery.sh: the same retrieval
numbers with faiss and the clustering ones with faiss k-means and scikit-learn, the way a
pytorch-metric-learning user gets them (a benchmark, not part of `make test`; numpy, faiss,
sklearn).

    OPENBLAS_NUM_THREADS=1 python3 battery_peer.py X.npz THREADS OUT.json

X.npz holds mu float32 [n, D] and labels [n]. Leave-one-out: faiss IndexFlatL2 over all n items,
each item's K + 1 nearest with K = the largest class less one (the item itself dropped: the
first neighbour equal to it, else the last), searched in blocks of 10,000 queries so that memory
stays bounded (PML searches all at once); from them P@1, R-precision, MAP@R and Recall@1, 2, 4, 8
as pytorch-metric-learning defines them (queries without a positive left out); k-means with as
many clusters as classes (faiss Kmeans, niter 20, PML's), then sklearn's NMI and AMI. Prints
"seconds S cpu C" for everything after loading X, and writes the numbers to OUT.json.
"""

import json
import sys
import time

import faiss
import numpy as np
from sklearn.metrics import adjusted_mutual_info_score, normalized_mutual_info_score


def main(argv):
    if len(argv) != 4:
        sys.stderr.write("usage: battery_peer.py X.npz THREADS OUT.json\n")
        return 2
    z = np.load(argv[1])
    x = np.ascontiguousarray(z["mu"], dtype=np.float32).reshape(len(z["mu"]), -1)
    y = np.asarray(z["labels"]).astype(np.int64)
    faiss.omp_set_num_threads(int(argv[2]))
    t0, c0 = time.perf_counter(), time.process_time()
    n = len(x)
    _, inverse, counts = np.unique(y, return_inverse=True, return_counts=True)
    R = counts[inverse] - 1
    K = int(counts.max()) - 1
    index = faiss.IndexFlatL2(x.shape[1])
    index.add(x)
    ks = [1, 2, 4, 8]
    sums = {"p1": 0.0, "rprec": 0.0, "map_r": 0.0}
    rec = np.zeros(len(ks))
    m = 0
    for a in range(0, n, 10000):
        b = min(n, a + 10000)
        _, nb = index.search(x[a:b], K + 1)
        q = np.arange(a, b)
        own = nb == q[:, None]
        drop = np.where(own.any(1), own.argmax(1), K)
        keep = np.ones_like(nb, dtype=bool)
        keep[np.arange(b - a), drop] = False
        nb = nb[keep].reshape(b - a, K)
        hit = y[nb] == y[q][:, None]
        r = R[a:b]
        ok = r > 0
        hit, r = hit[ok], r[ok]
        m += len(r)
        sums["p1"] += hit[:, 0].sum()
        within = np.arange(K)[None, :] < r[:, None]
        sums["rprec"] += ((hit & within).sum(1) / r).sum()
        cum = np.cumsum(hit & within, 1)
        sums["map_r"] += ((cum * (hit & within) / np.arange(1, K + 1)).sum(1) / r).sum()
        for i, k in enumerate(ks):
            rec[i] += hit[:, :k].any(1).sum()
    out = {k: v / m for k, v in sums.items()}
    out["recall"] = list(rec / m)
    km = faiss.Kmeans(x.shape[1], len(counts), niter=20, seed=714)
    km.train(x)
    _, assign = km.index.search(x, 1)
    out["nmi"] = normalized_mutual_info_score(y, assign[:, 0])
    out["ami"] = adjusted_mutual_info_score(y, assign[:, 0])
    t1, c1 = time.perf_counter(), time.process_time()
    print("seconds %.4f cpu %.4f" % (t1 - t0, c1 - c0))
    with open(argv[3], "w") as f:
        json.dump(out, f)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
