#!/bin/sh
# fstat.sh EXPERIMENT [--quick | --full] [-j JOBS] [-t THREADS] [-s STEPS] [--recipe R] OUT
# The F-statistic loss paper (Ridgeway & Mozer 2018) on N-digit MNIST: triplet (all triplets)
# vs F-statistic loss, Recall@1..8 on held-out classes and disentanglement.
# Everything else: pipelines/metric.sh (EXPERIMENT table or demo; --quick, --full presets).
. "$(dirname "$0")/common.sh" # (-h, --help: this comment)
exec sh "$(dirname "$0")/metric.sh" fstat "$@"
