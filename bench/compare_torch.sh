#!/usr/bin/env bash
# tinygpt bench against bench/torch_reference.py, alternating A B A B (3 pairs per row), on the
# configs of docs/performance.md. Prints medians and the ratio per config and thread count.
#   bench/compare_torch.sh [configs...]     configs: tiny baby small gpt2   (default: all)
# Needs: a built ./build/train/tinygpt and Debian's python3-torch. Run with nothing else running.
set -euo pipefail
cd "$(dirname "$0")/.."
declare -A FLAGS=(
  [tiny]="--layers 2 --heads 2 --embd 64 --block 32 --batch 8 --vocab 65 --steps 40"
  [baby]="--layers 4 --heads 4 --embd 128 --block 64 --batch 12 --vocab 65 --steps 20"
  [small]="--layers 6 --heads 6 --embd 384 --block 256 --batch 16 --vocab 65 --steps 5"
  [gpt2]="--layers 12 --heads 12 --embd 768 --block 64 --batch 4 --vocab 50257 --steps 3"
)
# Debian's torch calls libblas.so.3: put OpenBLAS (not the reference BLAS) first.
TORCH_ENV="LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu/openblas-pthread"
if grep -q avx512f /proc/cpuinfo; then TORCH_ENV="$TORCH_ENV OPENBLAS_CORETYPE=SkylakeX"; fi
field() { python3 -c "import json,sys; print(json.loads(sys.stdin.read())['$1'])"; }
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
echo "# $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
printf '%-6s %7s %14s %14s %7s %12s %12s %8s\n' config threads tinygpt_tok/s torch_tok/s ratio tinygpt_MB torch_MB peak%
for config in "${@:-tiny baby small gpt2}"; do
  for config_name in $config; do
    for threads in 1 2; do
      ours=() theirs=() our_rss=() their_rss=() share=()
      for pair in 1 2 3; do
        o=$(./build/train/tinygpt bench ${FLAGS[$config_name]} --threads "$threads" --json)
        # torch.set_num_threads sets OpenMP's threads; OpenBLAS's own pool must be told too.
        t=$(env $TORCH_ENV OPENBLAS_NUM_THREADS="$threads" OMP_NUM_THREADS="$threads" \
              /usr/bin/python3 bench/torch_reference.py ${FLAGS[$config_name]} --threads "$threads")
        ours+=("$(echo "$o" | field tokens_per_s)"); our_rss+=("$(echo "$o" | field peak_rss_mb)")
        share+=("$(echo "$o" | field share_of_peak)")
        theirs+=("$(echo "$t" | field tokens_per_s)"); their_rss+=("$(echo "$t" | field peak_rss_mb)")
      done
      a=$(median "${ours[@]}"); b=$(median "${theirs[@]}")
      printf '%-6s %7s %14.0f %14.0f %7.2f %12.0f %12.0f %7.0f%%\n' "$config_name" "$threads" "$a" "$b" \
        "$(echo "$a / $b" | bc -l)" "$(median "${our_rss[@]}")" "$(median "${their_rss[@]}")" \
        "$(echo "100 * $(median "${share[@]}")" | bc -l)"
    done
  done
done
