"""torch_mlp.py: hedge's mlp body (lib/network/body_mlp.c) with the point and MoG heads and the pair
losses in PyTorch (Debian python3-torch 1.13), the peer of `train --body mlp:...` in
tests/bench/torch.sh (a benchmark, not part of `make test`; stdlib, numpy and torch only).

    python3 torch_mlp.py BATCHES.npz HEAD STEPS THREADS WIDTHS [PAIRS [D]]
        HEAD: point, mog1 or mog2; WIDTHS: e.g. 512,256; PAIRS per batch (128), D (2)

BATCHES.npz: a `pairbatch` stream through tonpz, of images (image1, image2 uint8 [B x 128, H, W]:
each image's H W pixels / 255 are its feature vector, as hedge's mlp body reads images) or of
feature vectors (features1, features2 float32 [B x PAIRS, F]), with match uint8 [B x PAIRS],
cycled batch by batch. Prints "images_per_s X": 2 PAIRS items per step, over STEPS steps after 5
warm-up steps (the data already in memory; each step converts image bytes to floats, as train's
forward does).

The same computation as hedge, float32: fc W1 ReLU, fc W2 ReLU, ..., head fc to D (point) or
C x 2D (mog); Xavier uniform weights, zero biases; Adam, lr 1e-3; softcon or VIB exactly as
torch_train.py (imported from it).
"""

import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_train import rate  # noqa: E402


class MLP(torch.nn.Module):
    def __init__(self, features, widths, outputs):
        super().__init__()
        sizes = [features] + widths
        self.layers = torch.nn.ModuleList(torch.nn.Linear(a, b) for a, b in zip(sizes, sizes[1:]))
        self.head = torch.nn.Linear(sizes[-1], outputs)
        for m in list(self.layers) + [self.head]:
            torch.nn.init.xavier_uniform_(m.weight)
            torch.nn.init.zeros_(m.bias)

    def forward(self, x):
        for layer in self.layers:
            x = torch.relu(layer(x))
        return self.head(x)


def main(argv):
    if len(argv) not in (6, 7, 8) or argv[2] not in ("point", "mog1", "mog2"):
        sys.stderr.write("usage: torch_mlp.py BATCHES.npz point|mog1|mog2 STEPS THREADS WIDTHS [PAIRS [D]]\n")
        return 2
    steps, threads = int(argv[3]), int(argv[4])
    P = int(argv[6]) if len(argv) > 6 else 128
    D = int(argv[7]) if len(argv) > 7 else 2
    widths = [int(w) for w in argv[5].split(",")]
    torch.set_num_threads(threads)
    torch.set_num_interop_threads(1)
    torch.manual_seed(714)
    z = np.load(argv[1])
    images = "image1" in z.files
    f1, f2, match = (z["image1"], z["image2"], z["match"]) if images else (z["features1"], z["features2"], z["match"])
    f1, f2 = f1.reshape(len(f1), -1), f2.reshape(len(f2), -1)
    nb = len(match) // P
    batches = [(torch.from_numpy(np.concatenate([f1[i * P:(i + 1) * P], f2[i * P:(i + 1) * P]])),
                torch.from_numpy(match[i * P:(i + 1) * P].astype(np.float32) * 2 - 1)) for i in range(nb)]
    C = {"point": 1, "mog1": 1, "mog2": 2}[argv[2]]
    net = MLP(f1.shape[1], widths, D if argv[2] == "point" else C * 2 * D)
    return rate(net, batches, (lambda x: x.float().div_(255)) if images else (lambda x: x), argv[2], C, steps,
                "torch_mlp.py")


if __name__ == "__main__":
    sys.exit(main(sys.argv))
