#!/usr/bin/env bash
# README command (2): install what is missing, build, run every test. Exits non-zero if any fails.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh libopenblas-dev libxml2-utils procps nodejs fortunes debian-faq-ko chromium fonts-nanum
scripts/fetch-reference.sh
export CMAKE_GENERATOR=${CMAKE_GENERATOR:-Ninja}  # new build trees only; an existing one keeps its own
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=ON -DTINYGPT_REQUIRE_MPI=ON >/dev/null
cmake --build build -j"$(nproc)"
ctest --test-dir build --output-on-failure -j"$(nproc)"
