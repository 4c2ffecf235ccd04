#!/usr/bin/env bash
# Runs the commands of a walkthrough (docs/walkthrough.md, docs/walkthrough.ko.md): every ```sh block,
# in order, in a new directory, with `tinygpt` the binary given. So the docs cannot go stale.
#
#   scripts/walkthrough.sh DOC TINYGPT --short          # the test: training cut to 30 iterations
#   scripts/walkthrough.sh DOC TINYGPT --pictures DIR   # as written; the SVGs it draws are copied to DIR
#
# The commands write only into the directory they run in (a temporary one, removed afterwards).
set -euo pipefail
doc=$(realpath "$1") binary=$(realpath "$2") mode=${3:---short} pictures=${4:+$(realpath -m "$4")}
[[ $mode == --short || ($mode == --pictures && -n $pictures) ]] || { echo "usage: $0 DOC TINYGPT --short | --pictures DIR" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/bin"
ln -s "$binary" "$work/bin/tinygpt"
# Every ```sh block of the document, in order.
awk '/^```sh$/ {inside = 1; next} /^```/ {inside = 0} inside' "$doc" >"$work/commands.sh"
[[ -s $work/commands.sh ]] || { echo "$doc has no \`\`\`sh blocks" >&2; exit 1; }
if [[ $mode == --short ]]; then
  sed -i -E 's/--iters [0-9]+/--iters 30/g; s/--eval-every [0-9]+/--eval-every 15/g' "$work/commands.sh"
fi
cd "$work"
PATH="$work/bin:$PATH" bash -euo pipefail -x commands.sh
if [[ $mode == --pictures ]]; then
  mkdir -p "$pictures"
  cp -- *.svg "$pictures"/
fi
