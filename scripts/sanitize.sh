#!/usr/bin/env bash
# CI's sanitizer job: an AddressSanitizer + UndefinedBehaviorSanitizer build that stops at the first
# report, running the tests of everything that reads files and flags (data, optim, io, inspect,
# train, the CLI, and every eighth case of the hostile files). The autograd kernels', nn's and MPI's
# own tests run in the Release build only (scripts/test.sh; the GPT's forward and backward run under
# the sanitizers in train_tests and io_tests): with them the job's 12 minutes on 2 cores would
# grow several times over.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh libopenblas-dev libxml2-utils procps
export CMAKE_GENERATOR=${CMAKE_GENERATOR:-Ninja}  # new build trees only; an existing one keeps its own
# The libraries too compile in unity batches here: instrumented code takes several times longer.
cmake -S . -B build-sanitize -DCMAKE_BUILD_TYPE=Sanitize -DCMAKE_CXX_FLAGS_SANITIZE="-O0 -g1" \
  -DTINYGPT_SANITIZE=ON -DBUILD_TESTING=ON -DTINYGPT_REQUIRE_MPI=ON >/dev/null
targets=(tinygpt data_tests optim_tests io_tests inspect_tests train_tests cli_tests hostile_tests bench_matmul bench_model bench_gpt2 bench_cnn write_sentencepiece_model write_gpt2_dir)
cmake --build build-sanitize -j"$(nproc)" --target "${targets[@]}"
asan=detect_leaks=1:abort_on_error=1:detect_stack_use_after_return=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export LSAN_OPTIONS=suppressions=$PWD/tests/sanitize/lsan.supp
# Left out: the executables not built above (they register as "<target>_NOT_BUILT" tests), the
# examples (their code is tested by nn_tests, optim_tests and io_tests), the command-line walk
# through a GPT-2 directory (its readers run here in io_tests' import and tokenizer cases; the
# walk trains a 50257-token model, 40 s at -O0 under ASan), and bench --json (it times a 1024^3
# product for the GEMM peak: 50 s at -O0, and it reads nothing), the walkthroughs' commands (each
# of them runs here in cli_tests; the walkthroughs add BPE training on whole corpora), and the
# command-line walks through --steps and --precision (their readers and parsers run here in
# inspect_tests and in the other cli cases), and the matrix's cells with GPT-2's 50257-token tokenizer
# (2 minutes each at -O0 under ASan; the same commands run in the other cells, GPT-2's readers in
# io_tests), and the memory line against peak RSS (ASan's shadow memory and quarantine multiply a
# process's RSS; the estimate is of an ordinary build, and the Release job checks it), and the
# second Ctrl-C (its steps are long on purpose: three minutes at -O0 under ASan; it reads nothing).
# The hostile cases are sampled: every 8th.
ASAN_OPTIONS=$asan TINYGPT_HOSTILE_SAMPLE=8 ctest --test-dir build-sanitize --output-on-failure -j"$(nproc)" \
  -E "NOT_BUILT|^mpi: |^examples: |^cli: a GPT-2 directory|^cli: bench |^bench: several precisions|^docs: |^cli: attention --steps|^cli: --precision bf16|^matrix: .* x GPT-2.s files|^cli: the memory line.s estimate|^cli: a second Ctrl-C"
