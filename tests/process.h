#pragma once
// Runs the tinygpt executable as a test would from a shell, with a time limit, and reports how it
// ended: exit code or signal, whether it had to be killed, its output, and its peak memory.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace tinygpt::testing {

struct Run {
  int exit_code = -1;    // -1 when it did not exit by itself
  int signal = 0;        // the signal that ended it, if one did
  bool timed_out = false;
  std::string output;    // stdout and stderr together
  long peak_rss_mb = 0;  // of the process and the children it waited for
};

class Process {
 public:
  // Starts TINYGPT_BINARY with `args`; its output goes to `output_file`.
  Process(const std::vector<std::string>& args, const std::string& output_file) : output_file_(output_file) {
    std::vector<std::string> all = {TINYGPT_BINARY};
    all.insert(all.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : all) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t redirect;
    posix_spawn_file_actions_init(&redirect);
    posix_spawn_file_actions_addopen(&redirect, 1, output_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&redirect, 1, 2);
    posix_spawn_file_actions_addopen(&redirect, 0, "/dev/null", O_RDONLY, 0);
    if (posix_spawn(&pid_, argv[0], &redirect, nullptr, argv.data(), environ) != 0) pid_ = -1;
    posix_spawn_file_actions_destroy(&redirect);
  }
  pid_t pid() const { return pid_; }

  // Waits up to `limit`, then kills it.
  Run wait(std::chrono::milliseconds limit) {
    Run r;
    int status = 0;
    rusage usage{};
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (wait4(pid_, &status, WNOHANG, &usage) == 0) {
      if (std::chrono::steady_clock::now() > deadline) {
        r.timed_out = true;
        kill(pid_, SIGKILL);
        wait4(pid_, &status, 0, &usage);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
    r.peak_rss_mb = usage.ru_maxrss / 1024;
    std::ifstream in(output_file_);
    r.output.assign(std::istreambuf_iterator<char>(in), {});
    return r;
  }

 private:
  std::string output_file_;
  pid_t pid_ = -1;
};

// Runs tinygpt with the words of `args` (split at spaces) and waits for it.
inline Run run_tinygpt(const std::vector<std::string>& args, const std::string& output_file,
                       std::chrono::milliseconds limit = std::chrono::seconds(120)) {
  return Process(args, output_file).wait(limit);
}

inline std::vector<std::string> words(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

}  // namespace tinygpt::testing
