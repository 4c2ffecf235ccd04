#!/usr/bin/env bash
# Two builds of tinygpt side by side on this machine: training steps of the baby, small and GPT-2
# 124M shapes (`tinygpt bench`, 1 and 2 threads), 124M sampling and evaluation (`bench_gpt2`), the two builds
# alternating PAIRS times a row (default 3). Prints each row's tokens/s for both, and the median
# of the pairs' ratios (new / base). Nothing else may run meanwhile: the figures are timings.
#
#   bench/compare_builds.sh BASE_BUILD NEW_BUILD [configs...]   configs: baby small gpt2 sampling eval (default all)
set -euo pipefail
base=$(realpath "$1") new=$(realpath "$2")
shift 2
configs=("${@:-baby small gpt2 sampling eval}")
read -r -a configs <<<"${configs[*]}"
pairs=${PAIRS:-3}
declare -A flags=(
  [baby]="--layers 4 --heads 4 --embd 128 --block 64 --batch 12 --vocab-size 65 --iters 60"
  [small]="--layers 6 --heads 6 --embd 384 --block 256 --batch 16 --vocab-size 65 --iters 5"
  [gpt2]="--layers 12 --heads 12 --embd 768 --block 64 --batch 4 --vocab-size 50257 --iters 3"
)
field() { python3 -c "import json,sys; print(json.load(sys.stdin)['$1'])"; }
echo "# $(nproc) cores, $("$new/cli/tinygpt" bench --iters 1 --json | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["cpu"], "| vector path: base", "'"$("$base/cli/tinygpt" bench --iters 1 --json | field vector_path)"'", "new", d["vector_path"])')"
# One measurement: tokens/s of a build ($1) for a config ($2) at $3 threads. sampling and eval:
# bench_gpt2's key/value-cache sampling and block-1024 forward pass of the 124M shape.
measure() {
  case $2 in
    sampling) "$1/bench/bench_gpt2" --tokens 64 --int8-group 0 2>/dev/null |
                sed -nE "s/^threads $3: read bandwidth.*\): ([0-9.]+) tokens\/s = .*/\1/p" ;;
    eval) "$1/bench/bench_gpt2" --tokens 8 --int8-group 0 2>/dev/null |
            sed -nE "s/^threads $3: eval forward at block [0-9]+: ([0-9.]+) tokens\/s.*/\1/p" ;;
    # shellcheck disable=SC2086
    *) "$1/cli/tinygpt" bench ${flags[$2]} --threads "$3" --json | field tokens_per_s ;;
  esac
}
printf '%-9s %7s %28s %28s %8s\n' config threads "base tokens/s (each pair)" "new tokens/s" "new/base"
for config in "${configs[@]}"; do
  for threads in 1 2; do
    b=() n=() ratios=()
    for ((p = 0; p < pairs; p++)); do
      x=$(measure "$base" "$config" "$threads") y=$(measure "$new" "$config" "$threads")
      b+=("$x") n+=("$y") ratios+=("$(python3 -c "print($y / $x)")")
    done
    median=$(printf '%s\n' "${ratios[@]}" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
    printf '%-9s %7s %28s %28s %8.3f\n' "$config" "$threads" "$(IFS=/; echo "${b[*]}")" "$(IFS=/; echo "${n[*]}")" "$median"
  done
done
