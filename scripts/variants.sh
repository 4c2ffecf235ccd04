#!/usr/bin/env bash
# The same numbers from every build: builds tinygpt for several instruction sets and tunings, runs
# the same short work in each (training GPT-2 and Llama shapes in fp32 and bf16, eval, sampling,
# int8 sampling, attention --steps, explain), and compares what each wrote and printed, byte for
# byte, with the first variant's. Exits 1 when any variant differs.
#
#   scripts/variants.sh            # every variant this CPU can run (those it cannot are named, skipped)
#   scripts/variants.sh --quick    # native, generic (x86-64; its AVX2+FMA copies and its plain ones) and
#                                  # x86-64-v3 tuned for znver3: CI's form
#   scripts/variants.sh --quick --reuse-native build   # the native variant from an existing Release build
#   ... --walkthroughs             # also each variant's run of both walkthroughs (scripts/walkthrough.sh --check)
#   ... --only native,generic      # just these variants
#
# Each variant has its own build tree, build-variants/<name> (kept: a second run rebuilds only what
# changed). Checkpoints record their training time, so they are compared by `info --json` with the
# time left out: its digests cover every weight and optimizer moment.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

quick=0 native_build="" walkthroughs=0 only=
while (($#)); do
  case $1 in
    --quick) quick=1 ;;
    --walkthroughs) walkthroughs=1 ;;
    --only) only=",$2,"; shift ;;
    --reuse-native) native_build=$(realpath "$2"); shift ;;
    *) echo "usage: $0 [--quick] [--reuse-native BUILD_DIR]" >&2; exit 2 ;;
  esac
  shift
done

# name|CMake flags. native: -march=native (the README's build); generic: plain x86-64, whose kernels
# choose AVX2+FMA copies at run time where the CPU has them; generic-plain: the same build made to
# run its plain copies (TINYGPT_AVX2_FMA=off), as a CPU without FMA does; the rest as a user may build.
all=(
  "native|-DTINYGPT_NATIVE=ON"
  "generic|-DTINYGPT_NATIVE=OFF"
  "generic-plain|-DTINYGPT_NATIVE=OFF"
  "x86-64-v2|-DTINYGPT_NATIVE=OFF -DCMAKE_CXX_FLAGS=-march=x86-64-v2"
  "x86-64-v3|-DTINYGPT_NATIVE=OFF -DCMAKE_CXX_FLAGS=-march=x86-64-v3"
  "x86-64-v3-znver3|-DTINYGPT_NATIVE=OFF -DCMAKE_CXX_FLAGS=-march=x86-64-v3 -mtune=znver3"
  "znver3|-DTINYGPT_NATIVE=OFF -DCMAKE_CXX_FLAGS=-march=znver3"
  "x86-64-v4|-DTINYGPT_NATIVE=OFF -DCMAKE_CXX_FLAGS=-march=x86-64-v4"
  "znver4|-DTINYGPT_NATIVE=OFF -DCMAKE_CXX_FLAGS=-march=znver4"
  "icelake-server|-DTINYGPT_NATIVE=OFF -DCMAKE_CXX_FLAGS=-march=icelake-server"
  "sapphirerapids|-DTINYGPT_NATIVE=OFF -DCMAKE_CXX_FLAGS=-march=sapphirerapids"
)
if ((quick)); then variants=("${all[0]}" "${all[1]}" "${all[2]}" "${all[5]}"); else variants=("${all[@]}"); fi

# The vector extensions a -march lets the compiler use, against the CPU's flags: a build for
# instructions this CPU lacks cannot run here.
cpu_flags=" $(grep -m1 '^flags' /proc/cpuinfo | cut -d: -f2) "
missing_instructions() {  # $1: compiler flags; prints what the CPU lacks
  local macros
  macros=$(echo | g++ $1 -dM -E -x c++ - 2>/dev/null)
  local -A needs=([__AVX__]=avx [__AVX2__]=avx2 [__FMA__]=fma [__AVX512F__]=avx512f [__AVX512BW__]=avx512bw
                  [__AVX512VL__]=avx512vl [__AVX512BF16__]=avx512_bf16 [__AVX512FP16__]=avx512_fp16
                  [__AMX_TILE__]=amx_tile [__AVX512VNNI__]=avx512_vnni)
  local macro lacks=()
  for macro in "${!needs[@]}"; do
    grep -q "#define $macro 1" <<<"$macros" && [[ $cpu_flags != *" ${needs[$macro]} "* ]] && lacks+=("${needs[$macro]}")
  done
  echo "${lacks[*]}"
}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The text: the repository's own docs, so that a bare clone has it.
cat README.md docs/architecture.md > "$work/corpus.txt"

# The work, in one fixed folder (checkpoints record absolute paths): every output kept in $1.
run_work() {
  local tinygpt=$1 out=$2 run=$work/run
  rm -rf "$run" && mkdir -p "$run" "$out" && cd "$run"
  cp "$work/corpus.txt" .
  local small=(--layers 2 --heads 2 --embd 64 --block 64 --batch 8 --iters 60 --eval-every 30 --eval-iters 4
               --log-every 30 --seed 7 --threads 2)
  "$tinygpt" train --data corpus.txt --out gpt.h5 "${small[@]}" > /dev/null
  "$tinygpt" train --data corpus.txt --out llama.h5 --arch llama --kv-heads 1 --tokenizer bpe --vocab-size 300 \
    "${small[@]}" > /dev/null
  "$tinygpt" train --data corpus.txt --out bf16.h5 --precision bf16 "${small[@]}" > /dev/null
  for ck in gpt llama bf16; do
    # Everything but the training time, which differs from one run to the next.
    "$tinygpt" info --ckpt $ck.h5 --json | sed -E 's/"seconds": [0-9.e+-]+/"seconds": -/' > "$out/info.$ck.json"
    "$tinygpt" eval --ckpt $ck.h5 --data corpus.txt --json > "$out/eval.$ck.json"
    "$tinygpt" sample --ckpt $ck.h5 --prompt "The " --tokens 80 --seed 3 > "$out/sample.$ck.txt" 2> /dev/null
  done
  "$tinygpt" sample --ckpt gpt.h5 --prompt "The " --tokens 80 --seed 3 --weights int8 > "$out/sample.int8.txt" 2> /dev/null
  "$tinygpt" attention --ckpt gpt.h5 --text "The model reads" --steps --json > "$out/steps.gpt.json"
  "$tinygpt" attention --ckpt llama.h5 --text "The model reads" --steps --json > "$out/steps.llama.json"
  "$tinygpt" explain --ckpt gpt.h5 --text "The model reads" --out "$out/explain.gpt.html" > /dev/null
  cd "$root"
}

failed=0 reference=""
for variant in "${variants[@]}"; do
  name=${variant%%|*} flags=${variant#*|}
  [[ -z $only || $only == *",$name,"* ]] || continue
  cxx_flags=""
  [[ $flags == *CMAKE_CXX_FLAGS=* ]] && cxx_flags=${flags#*CMAKE_CXX_FLAGS=}
  [[ $name == native ]] && cxx_flags=-march=native
  if ! echo | g++ $cxx_flags -E -x c++ - > /dev/null 2>&1; then
    echo "$name: skipped: this compiler ($(g++ -dumpfullversion)) does not know $cxx_flags"
    continue
  fi
  lacks=$(missing_instructions "$cxx_flags")
  if [[ -n $lacks ]]; then
    echo "$name: skipped: this CPU lacks $lacks"
    continue
  fi
  export TINYGPT_AVX2_FMA=on
  if [[ $name == native && -n $native_build ]]; then
    build=$native_build
  elif [[ $name == generic-plain ]]; then
    build=build-variants/generic TINYGPT_AVX2_FMA=off
    [[ -x $build/cli/tinygpt ]] || { echo "$name: skipped: no generic build"; continue; }
  else
    build=build-variants/$name
    # CMAKE_CXX_FLAGS holds a space: passed as one argument.
    args=(-DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF -DTINYGPT_NATIVE=$([[ $flags == *NATIVE=ON* ]] && echo ON || echo OFF))
    [[ -n $cxx_flags && $name != native ]] && args+=("-DCMAKE_CXX_FLAGS=$cxx_flags")
    cmake -S . -B "$build" -G "${CMAKE_GENERATOR:-Ninja}" "${args[@]}" > /dev/null
    echo "$name: building ($cxx_flags)"
    cmake --build "$build" -j"$(nproc)" --target tinygpt > "$work/build.log" 2>&1 ||
      { cat "$work/build.log"; echo "$name: the build failed"; exit 1; }
  fi
  out=$work/results/$name tinygpt=$(realpath "$build")/cli/tinygpt
  run_work "$tinygpt" "$out"
  path=$("$tinygpt" bench --iters 1 --json 2>/dev/null | sed -E 's/.*"vector_path": "([^"]*)".*/\1/')
  if ((walkthroughs)); then
    for doc in docs/walkthrough.md docs/walkthrough.ko.md; do
      bash scripts/walkthrough.sh "$doc" "$tinygpt" --check > "$work/walkthrough.log" 2>&1 ||
        { tail -20 "$work/walkthrough.log"; echo "$name: $doc: its figures differ"; failed=1; }
    done
    echo "$name: walkthroughs checked"
  fi
  if [[ -z $reference ]]; then
    reference=$name
    echo "$name: reference ($(ls "$out" | wc -l) outputs; vector path $path)"
    continue
  fi
  differ=()
  for f in "$work/results/$reference"/*; do
    cmp -s "$f" "$out/$(basename "$f")" || differ+=("$(basename "$f")")
  done
  if ((${#differ[@]})); then
    echo "$name: DIFFERS from $reference in ${differ[*]} (vector path $path)"
    failed=1
  else
    echo "$name: identical to $reference, all $(ls "$out" | wc -l) outputs (vector path $path)"
  fi
done
if ((failed)); then
  echo "variants: some builds compute other numbers" >&2
  exit 1
fi
echo "variants: every build that ran computes the same bytes"
