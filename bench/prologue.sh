# Sourced by the benchmark scripts (arguments TEXT WORKDIR): from the repository root, sets text,
# work (made) and tinygpt, and prints the machine line every figure goes with.
cd "$(dirname "$0")/.."
text=$(realpath "$1") work=$2
mkdir -p "$work"
work=$(realpath "$work")
tinygpt=$PWD/build/cli/tinygpt
echo "# $(nproc) cores, $($tinygpt bench --iters 1 --json | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["cpu"], "vector path", d["vector_path"])')"
