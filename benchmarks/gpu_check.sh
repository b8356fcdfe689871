#!/usr/bin/env bash
# The GPU figures of docs/performance.md in one run, under 5 minutes, on a CUDA machine:
# the leave-one-out graph at n = 10^6, d = 128, k = 10 with neighbors="torch" and
# neighbors="faiss-gpu" (exact both: the two graphs must be identical), then the
# million-label run of bench_million.py on faiss-gpu. Prints the docs rows.
# Where there is no CUDA GPU it prints "SKIP: <reason>" and exits 0.
#
# Usage: benchmarks/gpu_check.sh            (PYTHON=... to choose the interpreter)
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"

if ! command -v nvidia-smi >/dev/null 2>&1; then
  echo "SKIP: no nvidia-smi on PATH: no NVIDIA driver, so no CUDA GPU on this machine."
  exit 0
fi
if ! nvidia-smi -L 2>/dev/null | grep -q "^GPU"; then
  echo "SKIP: nvidia-smi lists no GPU (driver present, no device visible; check CUDA_VISIBLE_DEVICES)."
  exit 0
fi
reason=$("$PYTHON" benchmarks/_gpu_check.py --probe) || { echo "SKIP: $reason"; exit 0; }

nvidia-smi -L
# The two graphs (about 2 minutes at most), then the million-label run on what is left.
timeout 150 "$PYTHON" benchmarks/_gpu_check.py --n 1000000 --d 128
timeout 140 "$PYTHON" benchmarks/bench_million.py --n 1000000 --q 1000000 --queries 100000 --neighbors faiss-gpu \
  || echo "| million-label run: did not finish within its 140 s share of the 5 minutes |"
