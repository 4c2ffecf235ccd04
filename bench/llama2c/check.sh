#!/usr/bin/env bash
# llama2.c's own run.c on what `tinygpt export --format llama2c` writes: the largest difference of
# its logits from tinygpt's at every position of a text, and run.c's greedy text beside tinygpt's.
# Usage: bench/llama2c/check.sh CKPT LLAMA2C_DIR WORKDIR "some text"
#   CKPT: a Llama-shaped checkpoint with a SentencePiece tokenizer (train --arch llama
#   --tokenizer sentencepiece ...); LLAMA2C_DIR: a checkout of karpathy/llama2.c (for run.c).
set -euo pipefail
cd "$(dirname "$0")/../.."
ckpt=$(realpath "$1") llama2c=$(realpath "$2") work=$3 text=$4
mkdir -p "$work"
work=$(realpath "$work")
tinygpt=$PWD/build/cli/tinygpt
$tinygpt export --ckpt "$ckpt" --format llama2c --out "$work/model.bin" --force
gcc -O2 -I "$llama2c" -o "$work/run_logits" bench/llama2c/run_logits.c -lm
ids="1 $(./build/bench/llama2c_logits --ids "$ckpt" "$text")"  # BOS first, as run.c's generate
echo "text: $text"
echo "ids: $ids"
worst=0
set -- $ids
for n in $(seq 1 $#); do
  prefix=$(echo $ids | cut -d' ' -f1-"$n")
  "$work/run_logits" "$work/model.bin" $prefix > "$work/run.txt"
  ./build/bench/llama2c_logits "$ckpt" $prefix > "$work/ours.txt"
  worst=$(paste "$work/run.txt" "$work/ours.txt" | awk -v w="$worst" '{d = $1 - $2; if (d < 0) d = -d; if (d > w) w = d} END {print w}')
done
echo "largest |run.c - tinygpt| over every position's logits: $worst"
echo "run.c, greedy, 30 tokens:"
(cd "$work" && gcc -O2 -o run "$llama2c/run.c" -lm && ./run model.bin -z tokenizer.bin -t 0 -n 30 -i "$text" | head -3)
