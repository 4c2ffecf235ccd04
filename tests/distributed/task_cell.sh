#!/usr/bin/env bash
# The matrix's MPI x --eval-task cell: two ranks train with a multiple-choice task scored at every
# evaluation (each rank its share), are stopped by SIGTERM inside a long evaluation and resumed,
# and the task scores in the log are what one process's `eval --task` gives for the checkpoint.
#   usage: task_cell.sh TINYGPT MPIEXEC
source "$(dirname "$0")/two_ranks.sh"

for i in $(seq 60); do echo "The end of a tale, line $i, and a fox ran home."; done > "$dir/text.txt"
for i in $(seq 31); do  # an odd count: the ranks' shares differ
  printf '{"ctx": "The end of a tale, line %d", "endings": [", and a fox.", " a fox ran home.", "tale"], "label": %d}\n' \
    "$i" $((i % 3))
done > "$dir/task.jsonl"
shape=(--layers 1 --heads 2 --embd 16 --block 16 --batch 4 --eval-every 2 --threads 1 --eval-task "$dir/task.jsonl")

# 10^6 validation batches at iteration 2: SIGTERM lands inside that evaluation.
"${mpi[@]}" "$tinygpt" train --data "$dir/text.txt" "${shape[@]}" --iters 6 --eval-iters 1000000 \
  --out "$dir/run.h5" > "$dir/log" 2>&1 &
launcher=$!
for i in $(seq 600); do [ -s "$dir/run.csv" ] && [ "$(wc -l < "$dir/run.csv")" -ge 2 ] && break; sleep 0.1; done
sleep 1
# SIGTERM to every rank, as a scheduler sends it to every task.
for p in $(pgrep -f "$dir/run.h5"); do
  tr '\0' '\n' < "/proc/$p/environ" 2>/dev/null | grep -q "^OMPI_COMM_WORLD_RANK=" && kill -TERM "$p"
done
start=$(date +%s)
wait "$launcher"
code=$?
[ $(( $(date +%s) - start )) -le 10 ] || fail "the ranks took more than 10 s to stop after SIGTERM"
[ "$code" -ne 0 ] || fail "a run stopped by SIGTERM exited 0"
grep -q "a signal cut short the evaluation at iteration 2" "$dir/log" || fail "no line about the cut evaluation"

# The resume does that evaluation first, then goes on to the end.
"${mpi[@]}" "$tinygpt" train --resume "$dir/run.h5" --eval-iters 1 >> "$dir/log" 2>&1 || fail "the resume failed"
grep -q "the evaluation at iteration 2, which a signal cut short, is done" "$dir/log" || fail "no pending evaluation"

# Every evaluation row has task scores; the last equals one process's eval --task of the checkpoint.
rows=$(awk -F, 'NR > 1 && $3 != "" && $18 != "" { n++ } END { print n + 0 }' "$dir/run.csv")
[ "$rows" -eq 3 ] || fail "expected task scores at iterations 2, 4 and 6, found $rows rows: $(cat "$dir/run.csv")"
logged=$(tail -1 "$dir/run.csv" | awk -F, '{ printf "%.6f %.6f", $18, $19 }')
one=$("$tinygpt" eval --ckpt "$dir/run.h5" --task "$dir/task.jsonl" --batch 4 --json) || fail "eval --task failed"
scored=$(echo "$one" | sed -E 's/.*"acc": ([0-9.]+), "acc_norm": ([0-9.]+).*/\1 \2/')
[ "$logged" = "$scored" ] || fail "two ranks logged acc, acc_norm $logged; one process scores $scored"
echo "task cell: two ranks' scores $logged equal one process's"
