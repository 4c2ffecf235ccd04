#!/usr/bin/env bash
# The figures of docs/performance.md's "Reading a checkpoint's weights": the peak RSS of explain,
# sample and eval against the bytes of the model's weights, on a checkpoint of the 85M shape (12
# layers, 768 wide, a character vocabulary) whose file holds the AdamW moments too (1.0 GB).
# Usage: bench/read_weights_memory.sh TEXT WORKDIR   (TEXT: any text, e.g. Tiny Shakespeare)
set -euo pipefail
source "$(dirname "$0")/prologue.sh"
head -c 200000 "$text" > "$work/text.txt"
head -c 3000 "$text" > "$work/eval.txt"
[[ -f $work/m85.h5 ]] || $tinygpt train --data "$work/text.txt" --out "$work/m85.h5" --iters 1 --layers 12 --heads 12 \
  --embd 768 --block 64 --batch 1 --eval-iters 1 > /dev/null
params=$($tinygpt info --ckpt "$work/m85.h5" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["model"]["parameters"])')
weights_mb=$(python3 -c "print(round($params * 4 / 1e6, 1))")
echo "checkpoint $(( $(stat -c %s "$work/m85.h5") / 1000000 )) MB, weights $weights_mb MB ($params parameters)"
peak() { /usr/bin/time -f "%M" "$@" 2>&1 >/dev/null | tail -1; }
kb=$(peak $tinygpt explain --ckpt "$work/m85.h5" --text "First Citizen: before we proceed any further" --out "$work/page.html" --force)
page_mb=$(python3 -c "print(round($(stat -c %s "$work/page.html") / 1e6, 1))")
echo "explain: peak $((kb / 1000)) MB, page $page_mb MB, (peak - page) / weights = $(python3 -c "print(round(($kb / 1000 - $page_mb) / $weights_mb, 2))")"
kb=$(peak $tinygpt sample --ckpt "$work/m85.h5" --tokens 20 --prompt "First")
echo "sample: peak $((kb / 1000)) MB = $(python3 -c "print(round($kb / 1000 / $weights_mb, 2))") x weights"
kb=$(peak $tinygpt eval --ckpt "$work/m85.h5" --data "$work/eval.txt")
echo "eval: peak $((kb / 1000)) MB = $(python3 -c "print(round($kb / 1000 / $weights_mb, 2))") x weights"
