#pragma once
// Running the tinygpt executable from the CLI tests: a command line through the shell, its exit
// code and output; a small training command on a text written into a TempDir.
#include <sys/wait.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>

#include <catch2/catch.hpp>

#include "temp_files.h"

namespace tinygpt::testing {

struct Result {
  int exit_code;
  std::string output;  // stdout and stderr together
};

// A shell command line, its exit code and output.
inline Result shell(const std::string& command) {
  FILE* pipe = popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::string output;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, pipe)) output.append(buf, n);
  const int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, output};
}

// tinygpt with `args` through the shell; from the folder `from` when given (relative paths are
// then relative to it).
inline Result run(const std::string& args, const std::string& from = "") {
  return shell((from.empty() ? "" : "cd '" + from + "' && ") + std::string(TINYGPT_BINARY) + " " + args + " 2>&1");
}

// Waits until a training log has rows (training runs); false after 30 s.
inline bool wait_for_rows(const std::string& log) {
  for (int i = 0; i < 600; ++i) {
    std::ifstream in(log);
    std::string header, row;
    if (std::getline(in, header) && std::getline(in, row)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}


inline std::string small_run(const TempDir& dir, const std::string& heads = "2") {
  std::string text;
  for (int i = 0; i < 30; ++i) text += "To be, or not to be, that is the question.\n나는 오늘 학교에 갔다.\n";
  return "--data " + dir.write("corpus.txt", text) + " --layers 1 --heads " + heads +
         " --embd 16 --block 16 --batch 4 --eval-every 10 --eval-iters 2 --threads 1";
}

}  // namespace tinygpt::testing
