#!/usr/bin/env bash
# Installs, from the Debian archive, whichever of tinygpt's build and run dependencies are missing.
# Usage: scripts/install-deps.sh [extra-package ...]
set -euo pipefail
packages=(g++ cmake make ninja-build pkg-config libfmt-dev catch2 libhdf5-dev libtbb-dev libcli11-dev libopenmpi-dev openmpi-bin libsentencepiece-dev "$@")
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "installing: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
