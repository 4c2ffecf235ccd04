// The tinygpt executable end to end: train -> eval --json -> sample -> info, Ctrl-C and resume,
// and the exit codes and messages of bad input.
#include <catch2/catch.hpp>

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fcntl.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <vector>
#include <thread>

#include "temp_files.h"

using tinygpt::testing::TempDir;

extern char** environ;

namespace {

struct Result {
  int exit_code;
  std::string output;  // stdout and stderr together
};

Result run(const std::string& args) {
  const std::string command = std::string(TINYGPT_BINARY) + " " + args + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::string output;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, pipe)) output.append(buf, n);
  const int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, output};
}

std::string small_run(const TempDir& dir, const std::string& heads = "2") {
  std::string text;
  for (int i = 0; i < 30; ++i) text += "To be, or not to be, that is the question.\n나는 오늘 학교에 갔다.\n";
  return "--data " + dir.write("corpus.txt", text) + " --layers 1 --heads " + heads +
         " --embd 16 --block 16 --batch 4 --eval-every 10 --eval-iters 2 --threads 1";
}

}  // namespace

TEST_CASE("cli: train, eval --json, sample, info", "[cli]") {
  TempDir dir;
  const std::string ckpt = dir.file("run.h5");
  Result train = run("train " + small_run(dir) + " --iters 20 --out " + ckpt);
  INFO(train.output);
  REQUIRE(train.exit_code == 0);
  REQUIRE(train.output.find("done: 20 iterations") != std::string::npos);
  Result eval = run("eval --ckpt " + ckpt + " --data " + dir.file("corpus.txt") + " --json");
  INFO(eval.output);
  REQUIRE(eval.exit_code == 0);
  REQUIRE(eval.output.rfind("{\"loss\": ", 0) == 0);
  REQUIRE(eval.output.find("\"perplexity\": ") != std::string::npos);
  REQUIRE(eval.output.find("\"tokens\": 1709}") != std::string::npos);  // every character but the first
  Result sample = run("sample --ckpt " + ckpt + " --prompt 나는 --tokens 30 --seed 3");
  INFO(sample.output);
  REQUIRE(sample.exit_code == 0);
  REQUIRE(sample.output.rfind("나는", 0) == 0);
  REQUIRE(run("sample --ckpt " + ckpt + " --prompt 나는 --tokens 30 --seed 3").output == sample.output);
  Result info = run("info --ckpt " + ckpt);
  INFO(info.output);
  REQUIRE(info.exit_code == 0);
  REQUIRE(info.output.find("1 layers, 2 heads, 16 embd, block 16") != std::string::npos);
  REQUIRE(info.output.find("iteration    20 of 20") != std::string::npos);
  REQUIRE(std::ifstream(dir.file("run.csv")).good());
}

TEST_CASE("cli: Ctrl-C writes a checkpoint, exits 0, and the run resumes", "[cli]") {
  TempDir dir;
  const std::string ckpt = dir.file("long.h5"), log = dir.file("long.csv"), out = dir.file("train.out");
  // Start `tinygpt train` with its output in a file, as a person would in a terminal.
  std::vector<std::string> args = {TINYGPT_BINARY, "train"};
  std::istringstream flags(small_run(dir) + " --iters 100000 --out " + ckpt);
  for (std::string word; flags >> word;) args.push_back(word);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t redirect;
  posix_spawn_file_actions_init(&redirect);
  posix_spawn_file_actions_addopen(&redirect, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&redirect, 1, 2);
  pid_t pid = 0;
  REQUIRE(posix_spawn(&pid, argv[0], &redirect, nullptr, argv.data(), environ) == 0);
  posix_spawn_file_actions_destroy(&redirect);
  // Wait until training runs (the log has rows), then press Ctrl-C.
  for (int i = 0; i < 600; ++i) {
    std::ifstream in(log);
    std::string header, row;
    if (std::getline(in, header) && std::getline(in, row)) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  REQUIRE(kill(pid, SIGINT) == 0);
  int status = 0;
  waitpid(pid, &status, 0);
  std::ifstream in(out);
  const std::string output((std::istreambuf_iterator<char>(in)), {});
  INFO(output);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  REQUIRE(output.find("stopped by signal 2") != std::string::npos);
  REQUIRE(output.find("tinygpt train --resume " + ckpt) != std::string::npos);
  Result info = run("info --ckpt " + ckpt);
  REQUIRE(info.exit_code == 0);
  const size_t at = info.output.find("iteration    ");
  REQUIRE(at != std::string::npos);
  const int64_t stopped = std::stoll(info.output.substr(at + 13));
  REQUIRE(stopped >= 1);
  // Resume with a new total: five more iterations.
  Result resumed = run("train --resume " + ckpt + " --iters " + std::to_string(stopped + 5));
  INFO(resumed.output);
  REQUIRE(resumed.exit_code == 0);
  REQUIRE(resumed.output.find("resuming at iteration " + std::to_string(stopped)) != std::string::npos);
  REQUIRE(resumed.output.find("done: " + std::to_string(stopped + 5) + " iterations") != std::string::npos);
}

TEST_CASE("cli: bad input exits non-zero with a clear message", "[cli][errors]") {
  TempDir dir;
  const std::string ckpt = dir.file("e.h5");
  REQUIRE(run("train " + small_run(dir) + " --iters 3 --out " + ckpt).exit_code == 0);
  Result exists = run("train " + small_run(dir) + " --iters 3 --out " + ckpt);
  REQUIRE(exists.exit_code != 0);
  REQUIRE(exists.output.find("already exists") != std::string::npos);
  Result shape = run("train --resume " + ckpt + " --layers 2");
  REQUIRE(shape.exit_code != 0);
  REQUIRE(shape.output.find("--layers cannot change on --resume") != std::string::npos);
  Result missing = run("eval --ckpt " + dir.file("nope.h5") + " --data " + dir.file("corpus.txt"));
  REQUIRE(missing.exit_code != 0);
  REQUIRE(missing.output.find("nope.h5': no such file") != std::string::npos);
  Result unknown = run("eval --ckpt " + ckpt + " --data " + dir.write("greek.txt", "To be\nαβγ"));
  REQUIRE(unknown.exit_code != 0);
  REQUIRE(unknown.output.find("greek.txt': 'α' (U+03B1) at line 2, column 1") != std::string::npos);
  Result prompt = run("sample --ckpt " + ckpt + " --prompt 'Zebra'");
  REQUIRE(prompt.exit_code != 0);
  REQUIRE(prompt.output.rfind("tinygpt: error: 'Z' (U+005A) at line 1, column 1 of the prompt", 0) == 0);
  Result heads = run("train " + small_run(dir, "3") + " --out " + dir.file("h.h5"));
  REQUIRE(heads.exit_code != 0);
  REQUIRE(heads.output.find("--embd 16 is not divisible by --heads 3") != std::string::npos);
  REQUIRE(run("train --bogus").exit_code != 0);
  REQUIRE(run("").exit_code != 0);
}
