#!/usr/bin/env bash
# Two builds of tinygpt side by side on this machine: training steps of the baby, small and GPT-2
# 124M shapes (`tinygpt bench`, 1 and 2 threads), 124M sampling and evaluation (`bench_gpt2`), the two builds
# alternating PAIRS times a row (default 3). Prints each row's tokens/s for both, and the median
# of the pairs' ratios (new / base). Nothing else may run meanwhile: the figures are timings.
#
#   bench/compare_builds.sh BASE_BUILD NEW_BUILD [configs...]   configs: baby small gpt2 sampling (default all)
set -euo pipefail
base=$(realpath "$1") new=$(realpath "$2")
shift 2
configs=("${@:-baby small gpt2 sampling}")
read -r -a configs <<<"${configs[*]}"
pairs=${PAIRS:-3}
declare -A flags=(
  [baby]="--layers 4 --heads 4 --embd 128 --block 64 --batch 12 --vocab-size 65 --iters 60"
  [small]="--layers 6 --heads 6 --embd 384 --block 256 --batch 16 --vocab-size 65 --iters 5"
  [gpt2]="--layers 12 --heads 12 --embd 768 --block 64 --batch 4 --vocab-size 50257 --iters 3"
)
field() { python3 -c "import json,sys; print(json.load(sys.stdin)['$1'])"; }
echo "# $(nproc) cores, $("$new/cli/tinygpt" bench --iters 1 --json | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["cpu"], "| vector path: base", "'"$("$base/cli/tinygpt" bench --iters 1 --json | field vector_path)"'", "new", d["vector_path"])')"
# tokens/s of a build ($1) for a training config ($2) at $3 threads.
measure() {
  # shellcheck disable=SC2086
  "$1/cli/tinygpt" bench ${flags[$2]} --threads "$3" --json | field tokens_per_s
}
# bench_gpt2's four figures for a build ($1): key/value-cache sampling and the block-1024 forward
# pass of the 124M shape, 1 and 2 threads, as "sample1 sample2 eval1 eval2".
measure_gpt2() {
  local out
  out=$("$1/bench/bench_gpt2" --tokens 64 --int8-group 0 2>/dev/null)
  for t in 1 2; do sed -nE "s/^threads $t: read bandwidth.*\): ([0-9.]+) tokens\/s = .*/\1/p" <<<"$out"; done
  for t in 1 2; do sed -nE "s/^threads $t: eval forward at block [0-9]+: ([0-9.]+) tokens\/s.*/\1/p" <<<"$out"; done
}
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
row() {  # config threads, then the pairs' base and new figures alternating
  local config=$1 threads=$2 b=() n=() ratios=()
  shift 2
  while (($#)); do b+=("$1") n+=("$2") ratios+=("$(python3 -c "print($2 / $1)")"); shift 2; done
  printf '%-9s %7s %28s %28s %8.3f\n' "$config" "$threads" "$(IFS=/; echo "${b[*]}")" "$(IFS=/; echo "${n[*]}")" "$(median "${ratios[@]}")"
}
printf '%-9s %7s %28s %28s %8s\n' config threads "base tokens/s (each pair)" "new tokens/s" "new/base"
for config in "${configs[@]}"; do
  if [[ $config == sampling ]]; then  # 124M sampling and eval
    declare -a figures=()
    for ((p = 0; p < pairs; p++)); do
      read -r -d '' -a x < <(measure_gpt2 "$base" && printf '\0') || true
      read -r -d '' -a y < <(measure_gpt2 "$new" && printf '\0') || true
      for i in 0 1 2 3; do figures[i]+="${x[i]} ${y[i]} "; done
    done
    # shellcheck disable=SC2086
    row sampling 1 ${figures[0]}; row sampling 2 ${figures[1]}; row eval 1 ${figures[2]}; row eval 2 ${figures[3]}
    continue
  fi
  for threads in 1 2; do
    args=()
    for ((p = 0; p < pairs; p++)); do args+=("$(measure "$base" "$config" "$threads")" "$(measure "$new" "$config" "$threads")"); done
    row "$config" "$threads" "${args[@]}"
  done
done
