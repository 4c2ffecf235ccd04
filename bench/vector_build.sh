# shellcheck shell=bash disable=SC2034  # sets variables for the scripts that source it
# Sourced by the comparison scripts, from the repository root: `--vector native|avx2` picks which
# tinygpt build is timed and what the other side is built or set up for.
#   native: ./build (the README's build, -march=native); PyTorch's OpenBLAS core type chosen by timing;
#           llm.c with its Makefile's -march=native.
#   avx2:   build-variants/x86-64-v3 (the AVX2+FMA build most users' CPUs run; made or brought up to
#           date here, the tree scripts/variants.sh uses); PyTorch on OpenBLAS's Haswell kernels;
#           llm.c with -march=x86-64-v3 in place of -march=native. On an AVX-512 CPU this is the
#           stand-in for an AVX2 machine; on an AVX2 CPU it differs from native in tuning only.
# Sets tinygpt_build (a directory), openblas_cores (OPENBLAS_CORETYPE values to try, "" = OpenBLAS's
# own choice; empty array = the caller's default search) and llmc_march.
vector=native
case "${1:-}" in
  --vector) vector=${2:?--vector needs native or avx2} ;;
  "") ;;
  *) echo "unknown option $1 (expected --vector native|avx2)" >&2; exit 2 ;;
esac
case $vector in
  native)
    tinygpt_build=$PWD/build openblas_cores=() llmc_march=-march=native ;;
  avx2)
    tinygpt_build=$PWD/build-variants/x86-64-v3 openblas_cores=(Haswell) llmc_march=-march=x86-64-v3
    cmake -S . -B "$tinygpt_build" -G "${CMAKE_GENERATOR:-Ninja}" -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF \
      -DTINYGPT_NATIVE=OFF -DCMAKE_CXX_FLAGS=-march=x86-64-v3 > /dev/null
    cmake --build "$tinygpt_build" -j"$(nproc)" --target tinygpt > "$tinygpt_build/vector_build.log" 2>&1 ||
      { tail -20 "$tinygpt_build/vector_build.log"; echo "the AVX2 build failed" >&2; exit 1; } ;;
  *) echo "--vector: $vector is not native or avx2" >&2; exit 2 ;;
esac
[[ -x $tinygpt_build/cli/tinygpt ]] || { echo "no tinygpt in $tinygpt_build: build it first" >&2; exit 1; }
