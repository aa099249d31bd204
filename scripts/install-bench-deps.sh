#!/usr/bin/env bash
# install-bench-deps.sh: what bench/run.sh and the profiling in
# docs/performance.md need, on Debian 12, beyond scripts/install-deps.sh.
# Not part of the test command.
#
#   python3-torch, python3-numpy  the PyTorch side (Debian's /usr/bin/python3)
#   zlib1g-dev                    engine_bench reads the gzipped IDX files
#   linux-perf, valgrind          profiles (perf record -e cpu-clock; callgrind
#                                 where perf has no counters)
#   dataset-fashion-mnist         the data, /usr/share/datasets/fashion-mnist
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y --no-install-recommends \
  python3-torch python3-numpy zlib1g-dev linux-perf valgrind dataset-fashion-mnist
