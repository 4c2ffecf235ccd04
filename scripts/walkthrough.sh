#!/usr/bin/env bash
# Runs the commands of a walkthrough (docs/walkthrough.md, docs/walkthrough.ko.md): every ```sh block,
# in order, in a new directory, with `tinygpt` the binary given. So the docs cannot go stale.
#
#   scripts/walkthrough.sh DOC TINYGPT --check          # the test: as written, and every ```text block
#                                                       # after a ```sh block must be what it printed
#   scripts/walkthrough.sh DOC TINYGPT --pictures DIR   # as written; the SVGs it draws are copied to DIR
#   scripts/walkthrough.sh DOC TINYGPT --update         # rewrites DOC's ```text lines that are not
#                                                       # what it printed (after a change of arithmetic)
#
# --check: the lines of each ```text block that follows a ```sh block (up to the next ```sh block)
# must be lines the block's commands printed (stdout and stderr), in the same order; a line that is
# only "…" stands for lines left out. Training and every kernel give the same bits for any thread
# count and vector path, so the figures hold on every machine.
# The commands write only into the directory they run in (a temporary one, removed afterwards).
set -euo pipefail
doc=$(realpath "$1") binary=$(realpath "$2") mode=${3:---check} pictures=${4:+$(realpath -m "$4")}
[[ $mode == --check || $mode == --update || ($mode == --pictures && -n $pictures) ]] ||
  { echo "usage: $0 DOC TINYGPT --check | --update | --pictures DIR" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/bin"
ln -s "$binary" "$work/bin/tinygpt"
# Each ```sh block to commands.N.sh, each ```text block after it to expected.N.M.txt (and the
# DOC line number of each of its lines to expected.N.M.at).
awk -v dir="$work" '
  /^```sh$/   { n++; m = 0; inside = "sh"; next }
  /^```text$/ { if (n) { m++; inside = "text"; printf "" > (dir "/expected." n "." m ".txt"); printf "" > (dir "/expected." n "." m ".at") } next }
  /^```/      { inside = ""; next }
  inside == "sh"   { print > (dir "/commands." n ".sh") }
  inside == "text" { print > (dir "/expected." n "." m ".txt"); print NR > (dir "/expected." n "." m ".at") }
' "$doc"
[[ -e $work/commands.1.sh ]] || { echo "$doc has no \`\`\`sh blocks" >&2; exit 1; }
cd "$work"
for ((n = 1; ; n++)); do
  [[ -e commands.$n.sh ]] || break
  # Progress lines end in a carriage return on a terminal: one line each here.
  PATH="$work/bin:$PATH" bash -euo pipefail -x "commands.$n.sh" > >(tee "printed.$n.raw") 2>&1
  wait
  tr '\r' '\n' < "printed.$n.raw" > "printed.$n.txt"
done
if [[ $mode == --check ]]; then
  failed=0
  for expected in expected.*.txt; do
    n=${expected#expected.} n=${n%%.*}
    # Each line in turn must be found at or after where the previous one was found.
    # A line not found is shown with the printed lines that start as it does.
    awk -v printed="printed.$n.txt" -v doc="$doc" -v block="$(head -1 "commands.$n.sh")" '
        BEGIN { while ((getline line < printed) > 0) out[++lines] = line; at = 1 }
        $0 == "…" { next }
        { start = at
          while (at <= lines && out[at] != $0) at++
          if (at <= lines) { at++; next }
          printf "%s: after `%s`, this line is not what it printed (or not in this order):\n  %s\n", doc, block, $0
          for (k = start; k <= lines; k++) if ($1 != "" && index(out[k], $1) == 1) printf "  printed: %s\n", out[k]
          exit 1 }' "$expected" || failed=1
  done
  if ((failed)); then
    echo "$doc: its figures are not what its commands print: copy them from the output above" >&2
    exit 1
  fi
  echo "$doc: every figure is what its commands print"
fi
if [[ $mode == --update ]]; then
  # In order, each quoted line is found in what its block printed, at or after the previous one; a
  # line not found becomes the next printed line of the same shape (its words, numbers aside).
  python3 - "$doc" "$work" <<'PY'
import glob, re, sys
doc, work = sys.argv[1], sys.argv[2]
lines = open(doc, encoding="utf-8").read().split("\n")
shape = lambda line: re.sub(r"[-+−]?\d[\d.,e+-]*%?", "#", line).split()
changed, failed = 0, False
for expected in sorted(glob.glob(f"{work}/expected.*.txt")):
    n = expected.split(".")[-3]
    printed = open(f"{work}/printed.{n}.txt", encoding="utf-8").read().split("\n")
    at = [int(x) for x in open(expected[:-4] + ".at").read().split()]
    quoted = open(expected, encoding="utf-8").read().split("\n")[:len(at)]
    position = 0
    for line, number in zip(quoted, at):
        if line == "…":
            continue
        found = next((k for k in range(position, len(printed)) if printed[k] == line), None)
        if found is None:
            found = next((k for k in range(position, len(printed)) if shape(printed[k]) == shape(line)), None)
            if found is None:  # other words (a sample's text): left for a person to choose
                print(f"{doc}:{number}: no printed line has the shape of: {line}", file=sys.stderr)
                failed = True
                continue
            lines[number - 1] = printed[found]
            changed += 1
        position = found + 1
open(doc, "w", encoding="utf-8").write("\n".join(lines))
print(f"{doc}: {changed} quoted lines rewritten from what the commands printed")
sys.exit(1 if failed else 0)
PY
fi
if [[ $mode == --pictures ]]; then
  mkdir -p "$pictures"
  cp -- *.svg "$pictures"/
fi
