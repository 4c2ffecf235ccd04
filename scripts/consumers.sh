#!/usr/bin/env bash
# CI, after scripts/test.sh has built build/: tinygpt as other projects use it. Installed to a
# temporary prefix and found with find_package (the MLP example built with -Wall -Wextra -Werror;
# the autograd example with the autograd component alone, HDF5 and MPI hidden from CMake); built
# from source through add_subdirectory; packed as a Debian package that installs and runs.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh dpkg-dev  # dpkg-shlibdeps names the package's library dependencies
export CMAKE_GENERATOR=${CMAKE_GENERATOR:-Ninja}  # new build trees only; an existing one keeps its own
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAILED: $*"; exit 1; }

cmake --install build --prefix "$work/prefix" >/dev/null
[ "$(ls "$work/prefix/include")" = tinygpt ] || fail "the include root holds more than tinygpt/"
# The public boundary: every installed header compiles on its own, none is an implementation
# header, and tinygpt.h includes each of them (by its path from tinygpt/, as headers include each
# other relative to themselves).
headers=$(cd "$work/prefix/include" && find tinygpt -name '*.h' ! -path tinygpt/tinygpt.h | sort)
[ -n "$headers" ] || fail "no headers installed"
for h in $headers; do
  case $h in */detail/*|*/kernels/*) fail "$h is an implementation header, yet installed" ;; esac
  grep -q "^#include \"${h#tinygpt/}\"" "$work/prefix/include/tinygpt/tinygpt.h" || fail "tinygpt.h does not include $h"
  echo "#include <$h>" | g++ -std=c++20 -fsyntax-only -x c++ -I"$work/prefix/include" - ||
    fail "$h does not compile on its own"
done
cmake -S examples/consumer -B "$work/consumer" -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/consumer" -j"$(nproc)"
"$work/consumer/mlp" 2000 "$work/mlp.h5"
"$work/consumer/classifier" 60 "$work"
cmake -S examples/consumer -B "$work/autograd" -DCMAKE_PREFIX_PATH="$work/prefix" -DAUTOGRAD_ONLY=ON \
  -DCMAKE_DISABLE_FIND_PACKAGE_HDF5=ON -DCMAKE_DISABLE_FIND_PACKAGE_MPI=ON >/dev/null
cmake --build "$work/autograd"
"$work/autograd/autograd_only"
# Saving a module needs nn, optim and io: HDF5, never MPI.
cmake -S examples/consumer -B "$work/save" -DCMAKE_PREFIX_PATH="$work/prefix" -DSAVE_ONLY=ON \
  -DCMAKE_DISABLE_FIND_PACKAGE_MPI=ON >/dev/null
cmake --build "$work/save" -j"$(nproc)"
"$work/save/mlp_io" 2000 "$work/mlp_io.h5"

# From source, without optimization and in unity batches to keep this build short (only the library
# it links is built).
cmake -S examples/subproject -B "$work/sub" -DCMAKE_UNITY_BUILD=ON >/dev/null
cmake --build "$work/sub" -j"$(nproc)"
for target in tinygpt/cli/tinygpt tinygpt/bench/bench_matmul tinygpt/tests; do
  [ ! -e "$work/sub/$target" ] || fail "add_subdirectory built $target as part of the consumer's all"
done
"$work/sub/derivative"

# The Debian package installs the CLI, libraries, headers and CMake package, and the CLI runs.
(cd build && cpack -G DEB >/dev/null)
dpkg -i build/tinygpt_*_amd64.deb >/dev/null
trap 'dpkg -r tinygpt >/dev/null; rm -rf "$work"' EXIT
tinygpt --help | grep -q "tinygpt: train a small GPT" || fail "the installed tinygpt does not run"
[ -f /usr/lib/cmake/tinygpt/tinygptConfig.cmake ] && [ -f /usr/include/tinygpt/tinygpt.h ] \
  || fail "the package lacks the CMake package or the headers"
echo "consumers: find_package, a component alone, add_subdirectory and the Debian package all work"
