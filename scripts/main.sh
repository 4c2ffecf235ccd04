#!/usr/bin/env bash
# README command (1): install what is missing, build in Release, then the main job: train a small
# GPT on the fortunes package's text (a few minutes on 2 cores), evaluate it on text it held out,
# and sample from it. Run it again: the build is incremental and the demo run starts afresh.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh fortunes
export CMAKE_GENERATOR=${CMAKE_GENERATOR:-Ninja}  # new build trees only; an existing one keeps its own
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=ON >/dev/null  # one configuration for both commands
cmake --build build -j"$(nproc)" --target tinygpt
mkdir -p runs
rm -f runs/fortunes.h5 runs/fortunes.csv runs/fortunes.jsonl runs/fortunes.svg  # the demo starts afresh each time
./build/cli/tinygpt train --out runs/fortunes.h5 --iters 2000 --eval-every 250 --log-every 100
# zippy is the last fortunes file, so it lies wholly in the held-out validation split.
./build/cli/tinygpt eval --ckpt runs/fortunes.h5 --data /usr/share/games/fortunes/zippy
./build/cli/tinygpt sample --ckpt runs/fortunes.h5 --prompt "The " --tokens 300 --seed 1
