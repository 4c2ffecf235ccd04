#!/usr/bin/env bash
# GPT-2 124M training steps (T 64, B 4, vocabulary 50257: train_gpt2.c's own shape) with tinygpt
# bench beside llm.c's CPU trainer train_gpt2, built by llm.c's Makefile, 1 and 2 threads. llm.c
# reads random weights (N(0, 0.02), LayerNorm 1, biases 0, written here in its gpt2_124M.bin
# layout) and random tokens in its shard layout; its step time is the "took" of steps 1 to STEPS
# (default 3; step 0 is its warm-up), tinygpt's the median of as many steps after its warm-up. The two
# alternate PAIRS times (default 3); each row gives both medians and the median of each pair's ratio.
# Nothing else may run meanwhile: the figures are timings.
#
#   bench/compare_llmc.sh LLMC_DIR [--vector native|avx2]
#
# LLMC_DIR: a checkout of github.com/karpathy/llm.c (its sources copied to a scratch folder; never written).
# --vector avx2 times tinygpt's AVX2 build and llm.c built for x86-64-v3 (bench/vector_build.sh).
# Needs Debian's python3-numpy (/usr/bin/python3) and a C compiler with OpenMP (make's cc, or CC=clang).
set -euo pipefail
llmc=$(realpath "${1:?usage: $0 LLMC_DIR [--vector native|avx2]}")
shift
cd "$(dirname "$0")/.."
source bench/vector_build.sh "$@"
PAIRS=${PAIRS:-3} STEPS=${STEPS:-3}
[[ -f $llmc/train_gpt2.c ]] || { echo "$llmc has no train_gpt2.c: not an llm.c checkout" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r "$llmc/Makefile" "$llmc/train_gpt2.c" "$llmc/llmc" "$work"  # not its data or checkpoints
rm -f "$work/train_gpt2"
make -C "$work" train_gpt2 CFLAGS_COND="$llmc_march" > "$work/make.log" 2>&1 ||
  { tail -20 "$work/make.log"; echo "llm.c's train_gpt2 did not build" >&2; exit 1; }
grep -q "OpenMP found" "$work/make.log" || echo "# warning: llm.c built without OpenMP: its 2-thread row is one thread"
/usr/bin/python3 - "$work" <<'EOF'
import numpy as np, sys, os
work = sys.argv[1]
L, H, C, V, Vp, maxT = 12, 12, 768, 50257, 50304, 1024
rng = np.random.default_rng(1)
def normal(*shape): return rng.normal(0, 0.02, shape).astype(np.float32)
ones, zeros = (lambda *s: np.ones(s, np.float32)), (lambda *s: np.zeros(s, np.float32))
# llm.c's parameter order (train_gpt2.c, fill_in_parameter_sizes)
params = [normal(Vp, C), normal(maxT, C), ones(L, C), zeros(L, C), normal(L, 3 * C, C), zeros(L, 3 * C),
          normal(L, C, C), zeros(L, C), ones(L, C), zeros(L, C), normal(L, 4 * C, C), zeros(L, 4 * C),
          normal(L, C, 4 * C), zeros(L, C), ones(C), zeros(C)]
header = np.zeros(256, np.int32)
header[:8] = [20240326, 3, maxT, V, L, H, C, Vp]
with open(os.path.join(work, "gpt2_124M.bin"), "wb") as f:
    f.write(header.tobytes())
    for p in params: f.write(p.tobytes())
os.makedirs(os.path.join(work, "dev/data/tinyshakespeare"), exist_ok=True)
for name, n in (("train", 200_000), ("val", 20_000)):
    shard = np.zeros(256, np.int32)
    shard[:3] = [20240520, 1, n]
    with open(os.path.join(work, f"dev/data/tinyshakespeare/tiny_shakespeare_{name}.bin"), "wb") as f:
        f.write(shard.tobytes())
        f.write(rng.integers(0, V, n).astype(np.uint16).tobytes())
EOF
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
# ms of llm.c's training steps 1..STEPS at $1 threads (it is stopped once they are printed).
llmc_ms() {
  local log=$work/llmc.log pid times
  (cd "$work" && OMP_NUM_THREADS=$1 exec stdbuf -oL ./train_gpt2 > "$log" 2>&1) &
  pid=$!
  while kill -0 "$pid" 2>/dev/null && ! grep -q "^step $STEPS: train loss" "$log"; do sleep 0.2; done
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  times=$(sed -nE 's/^step ([0-9]+): train loss .*\(took ([0-9.]+) ms\)/\1 \2/p' "$log" |
    awk -v last="$STEPS" '$1 >= 1 && $1 <= last { print $2 }')
  [[ -n $times ]] || { tail -5 "$log"; echo "llm.c's train_gpt2 printed no steps" >&2; exit 1; }
  # shellcheck disable=SC2086
  median $times
}
tinygpt_ms() {
  "$tinygpt_build/cli/tinygpt" bench --layers 12 --heads 12 --embd 768 --block 64 --batch 4 --vocab-size 50257 \
    --iters "$STEPS" --threads "$1" --json | python3 -c "import json,sys; print(json.load(sys.stdin)['ms_per_step'])"
}
echo "# $(nproc) cores, $("$tinygpt_build/cli/tinygpt" bench --iters 1 --json | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["cpu"], "| tinygpt vector path", d["vector_path"])'), --vector $vector," \
     "llm.c $(git -C "$llmc" rev-parse --short HEAD 2>/dev/null || echo '(not a git checkout)') built with $(grep -m1 -oE -- '-Ofast.* train_gpt2\.c' "$work/make.log" | sed 's/ train_gpt2\.c$//' || true)"
printf '%-8s %24s %24s %16s\n' threads "tinygpt ms/step (pairs)" "llm.c ms/step (pairs)" "llm.c / tinygpt"
for threads in 1 2; do
  ours=() theirs=() ratios=()
  for ((p = 0; p < PAIRS; p++)); do
    ours+=("$(tinygpt_ms "$threads")")
    theirs+=("$(llmc_ms "$threads")")
    ratios+=("$(python3 -c "print(${theirs[-1]} / ${ours[-1]})")")
  done
  printf '%-8s %24s %24s %16.2f\n' "$threads" "$(printf '%.0f' "$(median "${ours[@]}")") ($(printf '%.0f/' "${ours[@]}" | sed 's,/$,,'))" \
    "$(printf '%.0f' "$(median "${theirs[@]}")") ($(printf '%.0f/' "${theirs[@]}" | sed 's,/$,,'))" "$(median "${ratios[@]}")"
done
