#!/usr/bin/env bash
# A rank that dies, or hangs, ends the whole MPI run with an error instead of a hang, and the last
# checkpoint stays intact.   usage: rank_failure.sh TINYGPT MPIEXEC
set -uo pipefail
tinygpt=$1 mpiexec=$2
dir=$(mktemp -d)
trap 'pkill -KILL -f "$dir/run" 2>/dev/null; rm -rf "$dir"' EXIT
for i in $(seq 300); do echo "Shall I compare thee to a summer's day? Thou art more lovely and more temperate."; done > "$dir/text.txt"
fail() { echo "FAILED: $*"; cat "$dir/log" 2>/dev/null; exit 1; }

# Starts a long two-rank run in the background; waits for its first checkpoint.
start_run() {
  rm -f "$dir/run.h5" "$dir/run.csv" "$dir/run.jsonl" "$dir/run.svg" "$dir/log"
  "$mpiexec" -np 2 --oversubscribe --allow-run-as-root --mca btl_vader_single_copy_mechanism none "$tinygpt" train --data "$dir/text.txt" --out "$dir/run.h5" \
    --layers 1 --heads 2 --embd 16 --block 16 --batch 4 --iters 1000000 --eval-every 20 --eval-iters 1 \
    --ckpt-every 20 --threads 1 --mpi-timeout 5 > "$dir/log" 2>&1 &
  launcher=$!
  for i in $(seq 600); do [ -f "$dir/run.h5" ] && return; sleep 0.1; done
  fail "no checkpoint after 60 s"
}

rank_pid() {  # the process of rank $1 of the run
  for p in $(pgrep -f "$dir/run.h5"); do
    tr '\0' '\n' < "/proc/$p/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$1" && echo "$p"
  done | head -1
}

# Waits at most 60 s for the launcher; the run must have failed.
expect_failure() {
  for i in $(seq 600); do kill -0 "$launcher" 2>/dev/null || break; sleep 0.1; done
  kill -0 "$launcher" 2>/dev/null && fail "$1: the run still runs 60 s later (a hang)"
  wait "$launcher" && fail "$1: the run exited with status 0"
  "$tinygpt" info --ckpt "$dir/run.h5" > "$dir/info" 2>&1 || { cat "$dir/info"; fail "$1: the last checkpoint is damaged"; }
  echo "ok: $1"
}

start_run
victim=$(rank_pid 1)
[ -n "$victim" ] || fail "rank 1 not found"
kill -KILL "$victim"
expect_failure "rank 1 killed"

start_run
victim=$(rank_pid 1)
[ -n "$victim" ] || fail "rank 1 not found"
kill -STOP "$victim"  # alive but silent: only our timeout can notice
expect_failure "rank 1 stopped"
grep -q "waited 5 s for the other ranks" "$dir/log" || fail "no timeout message from rank 0"
grep -o "tinygpt: error.*" "$dir/log"
