#!/bin/sh
# cesoftmax.sh EXPERIMENT [--quick | --full] [-j JOBS] [-t THREADS] [-s STEPS] [--recipe R] OUT
# The Cross-Example Softmax paper (Veit et al. 2020) on N-digit MNIST: a query tower over the
# digit strings and the image network, five losses, text-to-image Recall@k and global PR-AUC
# with distractors, zero-shot on unseen numbers (pipelines/cesoftmax-run.sh for one run).
# Everything else: pipelines/metric.sh (EXPERIMENT table or demo; --quick, --full presets).
. "$(dirname "$0")/common.sh" # (-h, --help: this comment)
exec sh "$(dirname "$0")/metric.sh" cesoftmax "$@"
