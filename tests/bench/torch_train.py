"""torch_train.py: hedge's HIB network and pair losses in PyTorch (Debian python3-torch 1.13), the
peer of `train` in tests/bench/torch.sh (a benchmark, not part of `make test`; stdlib, numpy and
torch only).

    python3 torch_train.py BATCHES.npz HEAD STEPS THREADS      HEAD: point, mog1 or mog2

BATCHES.npz: a `pairbatch` stream through tonpz (image1, image2 uint8 [B x 128, 28, 56], match
uint8 [B x 128]), cycled batch by batch. Prints "images_per_s X": 256 images (128 pairs) per step,
over STEPS steps after 5 warm-up steps (the data already in memory; each step converts its bytes to
floats, as train's forward does).

The same computation as hedge (lib/network/model.h, lib/training/loss_contrastive.c, lib/training/loss_vib.c), in float32:
  input u8 (256, 1, 28, 56) / 255: the 128 first images then the 128 second ones
  conv 5x5, 6 filters, pad 2 -> ReLU -> maxpool 2; conv 5x5, 16 filters, pad 2 -> ReLU -> maxpool 2
  fc 120 -> ReLU; head fc to D = 2 (point) or C x 2D (C Gaussians: D means, then D raw variances,
  var = softplus(raw) + 1e-6); Xavier uniform weights, zero biases; Adam, lr 1e-3
  point  softcon (HIB Eq. 3): p = sigmoid(-a d + b), d = sqrt(||z1 - z2||^2 + 1e-12),
         a = softplus(a_raw); NLL of match / non-match; mean over the 128 pairs
  mog    VIB (HIB Eq. 8): K = 8 samples per image (K / C per component), z = mu + sqrt(var) eps;
         NLL = -log((1/K^2) sum_kl sigmoid(+-s_kl)) as a log-sum-exp of log-sigmoids; plus
         beta = 1e-4 times the KL bound (1/C) sum_c KL(N(mu_c, var_c) || N(0, I)) of both images;
         mean over the pairs
Threads: torch.set_num_threads(THREADS) (its OpenMP pool: oneDNN's convolutions and the
elementwise kernels), torch.set_num_interop_threads(1); the fc layers' sgemm is OpenBLAS's, on
the threads its environment gives it (torch.sh: OPENBLAS_NUM_THREADS=THREADS).
"""

import math
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

D, K, BETA, WARMUP = 2, 8, 1e-4, 5


class Net(torch.nn.Module):
    def __init__(self, height, width, outputs):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(1, 6, 5, padding=2)
        self.conv2 = torch.nn.Conv2d(6, 16, 5, padding=2)
        self.fc1 = torch.nn.Linear(16 * (height // 4) * (width // 4), 120)
        self.head = torch.nn.Linear(120, outputs)
        for m in (self.conv1, self.conv2, self.fc1, self.head):
            torch.nn.init.xavier_uniform_(m.weight)
            torch.nn.init.zeros_(m.bias)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = F.relu(self.fc1(x.flatten(1)))
        return self.head(x)


def softcon(out, sign, a_raw, b):
    n = len(sign)
    d = torch.sqrt(((out[:n] - out[n:]) ** 2).sum(1) + 1e-12)
    s = -F.softplus(a_raw) * d + b
    return F.softplus(-sign * s).mean()  # -log sigmoid(s) for a match, -log sigmoid(-s) otherwise


def vib(out, sign, a_raw, b, C):
    n, D = len(sign), out.shape[1] // (2 * C)  # D = 2 here, any D for torch_mlp.py
    o = out.view(2 * n, C, 2 * D)
    mu, var = o[..., :D], F.softplus(o[..., D:]) + 1e-6
    comp = torch.arange(K) // (K // C)
    z = mu[:, comp] + var[:, comp].sqrt() * torch.randn(2 * n, K, D)  # (2n, K, D)
    d = torch.sqrt(((z[:n, :, None] - z[n:, None]) ** 2).sum(-1) + 1e-12)  # (n, K, K)
    s = -F.softplus(a_raw) * d + b
    nll = math.log(K * K) - torch.logsumexp(F.logsigmoid(sign[:, None, None] * s).flatten(1), 1)
    kl = 0.5 * (var + mu ** 2 - 1 - var.log()).sum(-1).mean(-1)  # (2n,) the bound, per image
    return (nll.sum() + BETA * kl.sum()) / n


def main(argv):
    if len(argv) != 5 or argv[2] not in ("point", "mog1", "mog2"):
        sys.stderr.write("usage: torch_train.py BATCHES.npz point|mog1|mog2 STEPS THREADS\n")
        return 2
    steps, threads = int(argv[3]), int(argv[4])
    torch.set_num_threads(threads)
    torch.set_num_interop_threads(1)
    torch.manual_seed(714)
    z = np.load(argv[1])
    im1, im2, match = z["image1"], z["image2"], z["match"]
    nb = len(match) // 128
    batches = [(np.concatenate([im1[i * 128:(i + 1) * 128], im2[i * 128:(i + 1) * 128]])[:, None],
                torch.from_numpy(match[i * 128:(i + 1) * 128].astype(np.float32) * 2 - 1)) for i in range(nb)]
    H, W = im1.shape[1:]
    C = {"point": 1, "mog1": 1, "mog2": 2}[argv[2]]
    net = Net(H, W, D if argv[2] == "point" else C * 2 * D)
    return rate(net, batches, lambda images: torch.from_numpy(images).float().div_(255), argv[2], C, steps,
                "torch_train.py")


def rate(net, batches, to_input, head, C, steps, prog):
    """Trains net with the head's pair loss (point: softcon, else VIB with C components) on the
    batches (input, sign), to_input(input) the network's input (2 len(sign) items), cycled; prints
    the images per second over `steps` steps after WARMUP; returns the exit status."""
    a_raw = torch.nn.Parameter(torch.tensor(math.log(math.e - 1)))  # a = softplus(a_raw) = 1
    b = torch.nn.Parameter(torch.tensor(0.0))
    opt = torch.optim.Adam(list(net.parameters()) + [a_raw, b], lr=1e-3)

    def step(i):
        x, sign = batches[i % len(batches)]
        out = net(to_input(x))
        loss = softcon(out, sign, a_raw, b) if head == "point" else vib(out, sign, a_raw, b, C)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss

    for i in range(WARMUP):
        step(i)
    t0 = time.perf_counter()
    for i in range(steps):
        loss = step(WARMUP + i)
    t1 = time.perf_counter()
    if not math.isfinite(float(loss)):
        sys.stderr.write("%s: the loss is %g\n" % (prog, float(loss)))
        return 1
    print("images_per_s %.0f" % (steps * 2 * len(batches[0][1]) / (t1 - t0)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
