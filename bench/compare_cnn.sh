#!/usr/bin/env bash
# bench_cnn against bench/cnn_torch.py (Debian's python3-torch) on this machine. For each thread
# count, PyTorch's OPENBLAS_CORETYPE (unset: OpenBLAS's own choice, Haswell, SkylakeX, Zen) is
# picked by timing its step with each, best of two; then the two programs run in turn, A B A B
# (PAIRS pairs, default 3), each line as the program prints it, and the ratio of each pair's
# ms/step (PyTorch's over tinygpt's: above 1, tinygpt is faster).
#   bench/compare_cnn.sh
set -euo pipefail
cd "$(dirname "$0")/.."
PAIRS=${PAIRS:-3}
echo "# $(nproc) cores, $(./build/cli/tinygpt bench --iters 1 --json | /usr/bin/python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["cpu"], "vector path", d["vector_path"])')"
ms() { sed -E 's/.*: ([0-9.]+) ms\/step.*/\1/'; }
for threads in 1 2; do
  best="" best_ms=""
  for core in "" Haswell SkylakeX Zen; do
    for _ in 1 2; do
      t=$(env -u OPENBLAS_CORETYPE ${core:+OPENBLAS_CORETYPE=$core} /usr/bin/python3 bench/cnn_torch.py "$threads" | ms)
      if [ -z "$best_ms" ] || awk "BEGIN { exit !($t < $best_ms) }"; then best=$core best_ms=$t; fi
    done
  done
  echo "# PyTorch with $threads thread(s): OPENBLAS_CORETYPE=${best:-(unset)} (fastest, ${best_ms} ms)"
  for _ in $(seq "$PAIRS"); do
    a=$(./build/bench/bench_cnn --threads "$threads")
    b=$(env -u OPENBLAS_CORETYPE ${best:+OPENBLAS_CORETYPE=$best} /usr/bin/python3 bench/cnn_torch.py "$threads")
    echo "$a"
    echo "$b"
    echo "  ratio $(awk "BEGIN { printf \"%.2f\", $(echo "$b" | ms) / $(echo "$a" | ms) }")"
  done
done
