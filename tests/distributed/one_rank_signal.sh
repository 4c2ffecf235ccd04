#!/usr/bin/env bash
# A signal that reaches one rank only (rank 1, as when a user kills one process): every rank stops
# at the same iteration with the checkpoint saved, and rank 0 says that another rank got the signal
# and how to continue.
#   usage: one_rank_signal.sh TINYGPT MPIEXEC
source "$(dirname "$0")/two_ranks.sh"

for i in $(seq 200); do echo "The end of a tale, line $i, and a fox ran home to its den."; done > "$dir/text.txt"
"${mpi[@]}" "$tinygpt" train --data "$dir/text.txt" --layers 1 --heads 2 --embd 16 --block 16 --batch 4 \
  --threads 1 --iters 1000000 --eval-every 100000 --ckpt-every 100000 --out "$dir/run.h5" > "$dir/log" 2>&1 &
launcher=$!
for i in $(seq 600); do [ -s "$dir/run.csv" ] && [ "$(wc -l < "$dir/run.csv")" -ge 3 ] && break; sleep 0.1; done
for p in $(pgrep -f "$dir/run.h5"); do
  tr '\0' '\n' < "/proc/$p/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=1" && kill -INT "$p"
done
wait "$launcher"
code=$?
[ "$code" -ne 0 ] || fail "a run stopped by a signal exited 0"
grep -Eq "tinygpt: stopped by a signal to another rank at iteration [0-9]+ of 1000000; checkpoint saved to $dir/run.h5" \
  "$dir/log" || fail "rank 0 did not say that another rank got the signal"
grep -q "continue with: mpirun -np 2 tinygpt train --resume $dir/run.h5" "$dir/log" || fail "no line on how to continue"
[ -f "$dir/run.h5" ] || fail "no checkpoint"
echo "one rank's signal: every rank stopped, and rank 0 said so"
