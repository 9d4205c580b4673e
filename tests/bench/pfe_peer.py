"""pfe_peer.py: the PyTorch peer of hedge's pfebn run (pipelines/pfe-run.sh, docs/pfe.md "The
authors' module"): PFE's uncertainty module and recipe as the authors' TensorFlow code has them
(seasonSH/Probabilistic-Face-Embeddings: models/uncertainty_module.py, utils/tflib.py,
network.py, config/sphere64_msarcface.py), ported to PyTorch, trained on the same frozen features.

    python3 pfe_peer.py TRAIN.npz OUT_DIR SEED STEPS TEST1.npz [TEST2.npz ...]

TRAIN.npz and TESTk.npz: `tonpz` of the features streams hedge's pfebn reads (feat-h-*.hs):
`features` (n, F + D), the backbone's F features before the embedding, then its D-dim embedding
(mean_dims = D in the meta of the stream's header, which tonpz keeps as `header`), with `class` (and `id`, `corrupt`). For each TESTk it writes OUT_DIR/
emb-NAME.npz (NAME: TESTk's name without feat-h- and .npz) with mu (n, 1, D), the embedding
L2-normalised, and var (n, 1, D), for `fromnpz -k embeddings`; and OUT_DIR/train.log, the loss
every 100 steps, and last the CPU seconds of the training loop.

The module: fc F -> D without bias, batch norm (eps 1e-3, decay 0.995, a scale and shift), ReLU;
fc D -> D without bias, batch norm without scale or shift; one scale and one shift shared by all
D outputs, from 1e-4 and -7; log sigma^2 = log(1e-6 + exp(that)). Weights Xavier uniform (slim's
default). The loss: the mean over the ordered genuine pairs (i != j, same class) of the batch of
sum_d (mu_i - mu_j)^2 / (1e-10 + s_i + s_j) + log(s_i + s_j). SGD, momentum 0.9, rate 1e-3 down
tenfold at 2/3 of STEPS, weight decay 5e-4 on the two fc weights (slim's l2_regularizer: wd w in
the gradient), batches of 64 classes x 4 items (their 256 of 64), classes drawn without
replacement and items without replacement within a class (with it when a class has fewer than
4). One thread (torch.set_num_threads(1)), as hedge's run.
"""
import json
import os
import sys
import time

import numpy as np
import torch
import torch.nn as nn


def load(path):
    z = np.load(path)
    x = z["features"].astype(np.float32)
    meta = json.loads(str(z["header"])).get("meta", {}) if "header" in z.files else {}
    return x, z, meta.get("mean_dims")


class Module(nn.Module):
    def __init__(self, F, D):
        super().__init__()
        self.fc1 = nn.Linear(F, D, bias=False)
        self.bn1 = nn.BatchNorm1d(D, eps=1e-3, momentum=0.005)
        self.fc2 = nn.Linear(D, D, bias=False)
        self.bn2 = nn.BatchNorm1d(D, eps=1e-3, momentum=0.005, affine=False)
        self.gamma = nn.Parameter(torch.tensor(1e-4))
        self.beta = nn.Parameter(torch.tensor(-7.0))
        nn.init.xavier_uniform_(self.fc1.weight)
        nn.init.xavier_uniform_(self.fc2.weight)

    def forward(self, h):
        s = self.gamma * self.bn2(self.fc2(torch.relu(self.bn1(self.fc1(h))))) + self.beta
        return torch.log(1e-6 + torch.exp(s))


def neg_mls_loss(mu, log_sigma_sq, labels):
    s = torch.exp(log_sigma_sq)
    fuse = s[:, None, :] + s[None, :, :]
    d = ((mu[:, None, :] - mu[None, :, :]) ** 2 / (1e-10 + fuse) + torch.log(fuse)).sum(2)
    same = labels[:, None] == labels[None, :]
    same.fill_diagonal_(False)
    return d[same].mean()


def main():
    if len(sys.argv) < 6:
        sys.exit("usage: pfe_peer.py TRAIN.npz OUT_DIR SEED STEPS TEST.npz...")
    train, out, seed, steps = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    torch.set_num_threads(1)
    torch.manual_seed(seed)
    rs = np.random.RandomState(seed)
    x, z, D = load(train)
    if D is None:
        sys.exit("pfe_peer: %s: no mean_dims in its header's meta (tonpz of fromnpz --features H --mu MU)" % train)
    F = x.shape[1] - D
    h = torch.from_numpy(x[:, :F].copy())
    m = x[:, F:]
    mu = torch.from_numpy(m / np.maximum(np.linalg.norm(m, axis=1, keepdims=True), 1e-30))
    cls = z["class"]
    by = {}
    for i, c in enumerate(cls):
        by.setdefault(int(c), []).append(i)
    classes = np.array(sorted(by))
    by = {c: np.array(v) for c, v in by.items()}
    net = Module(F, D)
    decay = [net.fc1.weight, net.fc2.weight]
    rest = [p for p in net.parameters() if all(p is not q for q in decay)]
    opt = torch.optim.SGD([{"params": decay, "weight_decay": 5e-4}, {"params": rest, "weight_decay": 0.0}],
                          lr=1e-3, momentum=0.9)
    at = steps * 2 // 3
    net.train()
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "train.log"), "w") as log:
        log.write("step\tloss\tmean_var\n")
        t0 = time.process_time()
        for step in range(steps):
            if step == at:
                for g in opt.param_groups:
                    g["lr"] = 1e-4
            pick = rs.choice(classes, 64, replace=len(classes) < 64)
            idx = np.concatenate([rs.choice(by[c], 4, replace=len(by[c]) < 4) for c in pick])
            t = torch.from_numpy(idx)
            ls = net(h[t])
            loss = neg_mls_loss(mu[t], ls, torch.from_numpy(cls[idx].astype(np.int64)))
            opt.zero_grad()
            loss.backward()
            opt.step()
            if (step + 1) % 100 == 0:
                log.write("%d\t%.6g\t%.6g\n" % (step + 1, loss.item(), torch.exp(ls).mean().item()))
                log.flush()
        log.write("# %d steps in %.2f s of CPU\n" % (steps, time.process_time() - t0))
    net.eval()
    with torch.no_grad():
        for path in sys.argv[5:]:
            xt, zt, Dt = load(path)
            if Dt != D or xt.shape[1] != F + D:
                sys.exit("pfe_peer: %s: %d features with mean_dims %s, expected %d + %d" % (path, xt.shape[1], Dt, F, D))
            mt = xt[:, F:]
            mut = mt / np.maximum(np.linalg.norm(mt, axis=1, keepdims=True), 1e-30)
            var = torch.exp(net(torch.from_numpy(xt[:, :F].copy()))).numpy()
            name = os.path.basename(path)
            name = name[len("feat-h-"):] if name.startswith("feat-h-") else name
            name = name[:-4] if name.endswith(".npz") else name
            keep = {k: zt[k] for k in ("class", "id", "corrupt") if k in zt.files}
            np.savez(os.path.join(out, "emb-%s.npz" % name), mu=mut[:, None, :].astype(np.float32),
                     var=var[:, None, :].astype(np.float32), **keep)


if __name__ == "__main__":
    main()
