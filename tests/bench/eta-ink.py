#!/usr/bin/python3
# eta-ink.py [--tsv] DATA RUN...: how each run's uncertainty on the corrupt test images follows how much
# of each image the occlusion left visible. DATA is a hib.sh data folder (OUT/data/N2), each RUN
# a run folder of the same N (OUT/runs/NAME) with eta-corrupt.hs and knn-corrupt.hs.
# Visible ink of an image: the pixel sum of its corrupt twin over that of its clean twin (same
# id). Prints per run Spearman's rank correlation of ink with eta and with the mean variance of
# the components (mixtures), then per ink quantile band (0-10-25-50-75-100 %) the median eta and
# the KNN accuracy. --tsv: one line per run instead, `run images rho_eta rho_var eta_least_ink`
# (the last: the median eta of the tenth of the images with the least ink left; "-" where
# undefined). Needs python3-numpy and python3-msgpack (both installed by make).
import sys
import msgpack
import numpy as np

def read(path):
    with open(path, "rb") as f:
        u = msgpack.Unpacker(f, raw=False, max_buffer_size=1 << 30)
        next(u)
        out = []
        for o in u:
            if "end" in o:
                break
            out.append({k: np.frombuffer(t["data"], dtype=np.dtype(t["dtype"]).newbyteorder("<")).reshape(t["shape"])
                        for k, t in o.items()})
    return out

def spearman(a, b):
    ra = np.argsort(np.argsort(a, kind="stable"), kind="stable")
    rb = np.argsort(np.argsort(b, kind="stable"), kind="stable")
    return np.corrcoef(ra, rb)[0, 1]

args = sys.argv[1:]
tsv = bool(args) and args[0] == "--tsv"
if tsv:
    args = args[1:]
if len(args) < 2:
    sys.exit("usage: eta-ink.py [--tsv] DATA RUN...")
data = args[0]
clean = {int(r["id"]): float(r["image"].sum()) for r in read(data + "/test-clean.hs")}
ink = {int(r["id"]): float(r["image"].sum()) / max(clean[int(r["id"])], 1.0) for r in read(data + "/test-corrupt.hs")}
for run in args[1:]:
    recs = read(run + "/eta-corrupt.hs")
    eta = {int(r["id"]): float(r["eta"]) for r in recs}
    var = {int(r["id"]): float(r["var"].mean()) for r in recs if "var" in r}
    correct = {int(r["id"]): float(r["correct"]) for r in read(run + "/knn-corrupt.hs")}
    ids = sorted(set(eta) & set(correct))
    e = np.array([eta[i] for i in ids])
    k = np.array([correct[i] for i in ids])
    f = np.array([ink[i] for i in ids])
    rv = "%.3f" % spearman(np.array([var[i] for i in ids]), f) if var else "-"
    re = "%.3f" % spearman(e, f) if e.std() > 0 else "- (eta constant)"
    q = np.quantile(f, [0, .1, .25, .5, .75, 1])
    if tsv:
        print("%s\t%d\t%s\t%s\t%.5f" % (run.rstrip("/").split("/")[-1], len(ids), re.split()[0], rv, np.median(e[f < q[1]])))
        continue
    print("%s: %d images, Spearman(ink, eta) %s, Spearman(ink, mean variance) %s" % (run.rstrip("/").split("/")[-1], len(ids), re, rv))
    for i, (a, b) in enumerate(zip(q[:-1], q[1:])):
        m = (f >= a) & ((f < b) if i < 4 else (f <= b))
        print("  ink %.2f-%.2f  %5d images  median eta %.5f  KNN accuracy %.3f" % (a, b, m.sum(), np.median(e[m]), k[m].mean()))
