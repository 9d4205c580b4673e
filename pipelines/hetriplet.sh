#!/bin/sh
# hetriplet.sh EXPERIMENT [--quick | --full] [-j JOBS] [-t THREADS] [-s STEPS] [--recipe R] OUT
# The heteroscedastic triplet loss paper (Taha et al. 2019) on N-digit MNIST: triplet vs
# heteroscedastic triplet, retrieval on noisy sets, gallery cleaning, uncertainty vs AP.
# Everything else: pipelines/metric.sh (EXPERIMENT table or demo; --quick, --full presets).
. "$(dirname "$0")/common.sh" # (-h, --help: this comment)
exec sh "$(dirname "$0")/metric.sh" hetriplet "$@"
