# Sourced by the two-rank scripts (usage: SCRIPT TINYGPT MPIEXEC): $tinygpt, a scratch folder $dir
# removed at exit with any run still in it, fail MESSAGE (shows $dir/log), and ${mpi[@]}, the
# launcher of two ranks.
set -uo pipefail
tinygpt=$1 mpiexec=$2
dir=$(mktemp -d)
trap 'pkill -KILL -f "$dir/run" 2>/dev/null; rm -rf "$dir"' EXIT
fail() { echo "FAILED: $*"; cat "$dir/log" 2>/dev/null; exit 1; }
mpi=("$mpiexec" -np 2 --oversubscribe --allow-run-as-root --mca btl_vader_single_copy_mechanism none)
