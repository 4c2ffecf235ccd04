#!/usr/bin/env bash
# tinygpt bench against bench/torch_reference.py with PyTorch in its fastest setup on this machine.
# For each thread count, OpenBLAS's build (OpenMP or pthreads; Debian's torch calls libblas.so.3,
# so LD_LIBRARY_PATH chooses) and OPENBLAS_CORETYPE (OpenBLAS's own choice, Haswell, SkylakeX where
# the CPU has AVX-512, Zen on AMD) are picked by timing PyTorch's step on the small config with each.
# Then tinygpt and PyTorch alternate, A B A B (PAIRS pairs, default 3), and each row gives both
# medians with their min-max spread, the ratio as the median of each pair's ratio (a pair's two runs
# share the machine's state: on these shared hosts either program alone swings by up to 15% from one
# minute to the next) with that ratio's spread, and peak memory.
#   bench/compare_torch.sh [configs...]     configs: tiny baby small gpt2   (default: all)
#   PRECISION=bf16 CORETYPES=own bench/compare_torch.sh small gpt2
#   ARCH="--arch llama --kv-heads 2" bench/compare_torch.sh baby small     # Llama-shaped, both sides
#   bench/compare_torch.sh --vector avx2 baby small   # tinygpt's AVX2 build, PyTorch on Haswell kernels
# With PRECISION=bf16, tinygpt runs with --precision both (its fp32 and bf16 steps in turn) and is
# compared in bf16; PyTorch's setup is also chosen among its fp32 step and its step under
# torch.autocast(bfloat16), whichever is faster; the last column gives tinygpt's fp32 tokens/s and
# bf16's speed-up over it (each run's median over its pairs of steps, then the median over runs).
# --vector avx2 (bench/vector_build.sh) times the AVX2 build (built or brought up to date first)
# against PyTorch on OpenBLAS's Haswell kernels only: the AVX2 machine's comparison, or its
# stand-in on an AVX-512 CPU. Needs a built ./build/cli/tinygpt, Debian's python3-torch,
# libopenblas0-openmp and libopenblas0-pthread. OPENBLAS_CORETYPE is set per command here, never for tinygpt, tests or CI.
set -euo pipefail
cd "$(dirname "$0")/.."
vector_args=()
if [[ ${1:-} == --vector ]]; then vector_args=("$1" "${2:-}"); shift 2; fi
source bench/vector_build.sh "${vector_args[@]}"
tinygpt=$tinygpt_build/cli/tinygpt
declare -A FLAGS=(
  [tiny]="--layers 2 --heads 2 --embd 64 --block 32 --batch 8 --vocab-size 65 --iters 150"
  [baby]="--layers 4 --heads 4 --embd 128 --block 64 --batch 12 --vocab-size 65 --iters 60"
  [small]="--layers 6 --heads 6 --embd 384 --block 256 --batch 16 --vocab-size 65 --iters 5"
  [gpt2]="--layers 12 --heads 12 --embd 768 --block 64 --batch 4 --vocab-size 50257 --iters 3"
)
PAIRS=${PAIRS:-3}
ARCH=${ARCH:-}  # flags both programs take: --arch llama --kv-heads N
PRECISION=${PRECISION:-fp32}
torch_precisions=(fp32)
[[ $PRECISION == bf16 ]] && torch_precisions+=(bf16)
LIB=/usr/lib/x86_64-linux-gnu
field() { python3 -c "import json,sys; print(json.loads(sys.stdin.read())['$1'])"; }
run_field() {  # run_field <precision> <key>: a figure of one precision's run in a --precision both object
  python3 -c "import json,sys; print(next(r['$2'] for r in json.loads(sys.stdin.read())['runs'] if r['precision'] == '$1'))"
}
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
spread() {  # spread <decimals> <values...>: min-max
  local d=$1; shift
  printf '%s\n' "$@" | sort -g | awk -v d="$d" 'NR==1 {lo=$1} {hi=$1} END {printf "%.*f-%.*f", d, lo, d, hi}'
}
torch_run() {  # torch_run <build> <coretype or ""> <threads> <flags...>
  local build=$1 core=$2 threads=$3; shift 3
  env -u OPENBLAS_CORETYPE LD_LIBRARY_PATH="$LIB/openblas-$build" ${core:+OPENBLAS_CORETYPE=$core} \
    OPENBLAS_NUM_THREADS="$threads" OMP_NUM_THREADS="$threads" \
    /usr/bin/python3 bench/torch_reference.py "$@" --threads "$threads"
}
cores=("")
cores+=(Haswell)
grep -q avx512f /proc/cpuinfo && cores+=(SkylakeX)
grep -q AuthenticAMD /proc/cpuinfo && cores+=(Zen)
((${#openblas_cores[@]})) && cores=("${openblas_cores[@]}")
# CORETYPES="own SkylakeX" tries only those ("own": OpenBLAS's own choice), to shorten the search.
if [[ -n ${CORETYPES:-} ]]; then
  cores=()
  for c in $CORETYPES; do [[ $c == own ]] && cores+=("") || cores+=("$c"); done
fi
first=$(env -u OPENBLAS_CORETYPE "$tinygpt" bench --iters 1 --json)
echo "# $(nproc) cores, $(echo "$first" | field cpu), tinygpt vector path $(echo "$first" | field vector_path) (--vector $vector)," \
     "one core's FMA peak $(echo "$first" | field fma_peak_gflops_per_core) GFLOP/s, commit $(git rev-parse --short HEAD)"
declare -A BEST
for threads in 1 2; do
  best=0
  for build in openmp pthread; do
    for core in "${cores[@]}"; do
      for tp in "${torch_precisions[@]}"; do
        r=$(torch_run "$build" "$core" "$threads" ${FLAGS[small]} --iters 3 --precision "$tp")
        tps=$(echo "$r" | field tokens_per_s)
        echo "#   PyTorch $tp, $threads thread(s), openblas-$build, OPENBLAS_CORETYPE=${core:-(unset)}:" \
             "$(echo "$r" | field blas_core) kernels, small config $(printf '%.0f' "$tps") tokens/s"
        if (( $(echo "$tps > $best" | bc -l) )); then best=$tps; BEST[$threads]="$build $tp $core"; fi
      done
    done
  done
  read -r b p c <<< "${BEST[$threads]}"
  echo "# PyTorch with $threads thread(s): $p, openblas-$b, OPENBLAS_CORETYPE=${c:-(unset)} (fastest above)"
done
printf '%-6s %7s %22s %22s %17s %11s %11s %6s %s\n' config threads "tinygpt $PRECISION tok/s (range)" \
  "torch tok/s (range)" "ratio (range)" tinygpt_MB torch_MB peak% "$([[ $PRECISION == bf16 ]] && echo "tinygpt fp32 tok/s, bf16/fp32")"
for config_name in ${@:-tiny baby small gpt2}; do
  for threads in 1 2; do
    read -r build tp core <<< "${BEST[$threads]}"
    ours=() theirs=() ratios=() our_rss=() their_rss=() share=() fp32=() over_fp32=()
    for ((pair = 0; pair < PAIRS; ++pair)); do
      o=$(env -u OPENBLAS_CORETYPE "$tinygpt" bench ${FLAGS[$config_name]} $ARCH --threads "$threads" \
            --precision "$([[ $PRECISION == bf16 ]] && echo both || echo fp32)" --json)
      t=$(torch_run "$build" "$core" "$threads" ${FLAGS[$config_name]} $ARCH --precision "$tp")
      if [[ $PRECISION == bf16 ]]; then
        ours+=("$(echo "$o" | run_field bf16 tokens_per_s)"); share+=("$(echo "$o" | run_field bf16 share_of_peak)")
        fp32+=("$(echo "$o" | run_field fp32 tokens_per_s)"); over_fp32+=("$(echo "$o" | field bf16_speedup)")
      else
        ours+=("$(echo "$o" | field tokens_per_s)"); share+=("$(echo "$o" | field share_of_peak)")
      fi
      our_rss+=("$(echo "$o" | field peak_rss_mb)")
      theirs+=("$(echo "$t" | field tokens_per_s)"); their_rss+=("$(echo "$t" | field peak_rss_mb)")
      ratios+=("$(echo "${ours[-1]} / ${theirs[-1]}" | bc -l)")
    done
    a=$(median "${ours[@]}"); b=$(median "${theirs[@]}")
    extra=""
    if [[ $PRECISION == bf16 ]]; then
      f=$(median "${fp32[@]}")
      extra="$(printf '%.0f (%s), %.2f (%s)' "$f" "$(spread 0 "${fp32[@]}")" "$(median "${over_fp32[@]}")" \
                 "$(spread 2 "${over_fp32[@]}")")"
    fi
    printf '%-6s %7s %22s %22s %17s %11.0f %11.0f %5.0f%% %s\n' "$config_name" "$threads" \
      "$(printf '%.0f' "$a") ($(spread 0 "${ours[@]}"))" "$(printf '%.0f' "$b") ($(spread 0 "${theirs[@]}"))" \
      "$(printf '%.2f' "$(median "${ratios[@]}")") ($(spread 2 "${ratios[@]}"))" "$(median "${our_rss[@]}")" "$(median "${their_rss[@]}")" \
      "$(echo "100 * $(median "${share[@]}")" | bc -l)" "$extra"
  done
done
