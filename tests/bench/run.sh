#!/bin/sh
# `make bench`: every benchmark, one after the other (the machine should be otherwise idle; the
# peer comparisons interleave their runs and print ratios, which bear some load).
set -eu
BUILD=${BUILD:-build}
export BUILD
echo "== data half: mkdigits | occlude | batcher against cat"
sh tests/bench/data.sh
echo "== network: forward and forward+backward against the sgemm probe"
sh tests/bench/nn.sh
echo "== programs: train per head, embed"
sh tests/bench/train.sh
# the peers (faiss, PyTorch): Debian packages installed here when missing (as root), never by
# `make test`; a peer that cannot be installed is skipped with one line
sh pipelines/setup-deps.sh bench ||
    echo "bench: python3-faiss, python3-torch or python3-sklearn could not be installed: the comparisons that need them are skipped"
echo "== peers: knn and retrieve against faiss IndexFlatL2"
sh tests/bench/faiss.sh
echo "== peers: the whole battery (evaluate) against faiss + scikit-learn"
sh tests/bench/battery.sh
echo "== peers: cluster's k-means against faiss Kmeans"
sh tests/bench/kmeans.sh
echo "== peers: train against PyTorch (the HIB network; the mlp body on pixels and on issue 35's features)"
sh tests/bench/torch.sh
