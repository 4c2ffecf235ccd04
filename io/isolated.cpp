#include "detail/isolated.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <new>
#include <stdexcept>
#include <thread>

namespace tinygpt::io {

namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kLimitAddressSpace = false;
#else
constexpr bool kLimitAddressSpace = true;
#endif

constexpr int kExitThrew = 3, kExitOutOfMemory = 4;

int64_t mapped_bytes() {
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  long pages = 0;
  if (f) {
    if (std::fscanf(f, "%ld", &pages) != 1) pages = 0;
    std::fclose(f);
  }
  return static_cast<int64_t>(pages) * sysconf(_SC_PAGESIZE);
}

// The child: runs the work, sends an exception's text up the pipe, and ends without running
// atexit handlers or flushing stdio (those buffers are the parent's).
[[noreturn]] void child(const std::function<std::string()>& work, int64_t memory_limit, int message_fd,
                        int result_fd) {
  const int null = open("/dev/null", O_WRONLY);  // whatever the work or a sanitizer prints stays here
  if (null >= 0) dup2(null, STDOUT_FILENO), dup2(null, STDERR_FILENO), close(null);
  if (kLimitAddressSpace && memory_limit > 0) {
    const rlimit limit{static_cast<rlim_t>(memory_limit), static_cast<rlim_t>(memory_limit)};
    setrlimit(RLIMIT_AS, &limit);
  }
  int code = 0;
  try {
    const std::string result = work();
    for (size_t done = 0; done < result.size();) {
      const ssize_t n = write(result_fd, result.data() + done, result.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) throw std::runtime_error(fmt::format("cannot hand back its result: {}", std::strerror(errno)));
      done += static_cast<size_t>(n);
    }
  } catch (const std::bad_alloc&) {
    code = kExitOutOfMemory;
  } catch (const std::exception& e) {
    code = kExitThrew;
    const size_t n = std::min(std::strlen(e.what()), size_t{4000});  // one atomic pipe write
    if (write(message_fd, e.what(), n) < 0) code = kExitThrew;
  } catch (...) {
    code = kExitThrew;
  }
  _exit(code);
}

ChildEnd wait_for(pid_t pid, std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  auto pause = std::chrono::microseconds(200);
  int status = 0;
  for (;;) {
    const pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (done < 0 && errno != EINTR) throw std::runtime_error(fmt::format("waitpid: {}", std::strerror(errno)));
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      return {ChildEnd::How::timed_out};
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(20'000));
  }
  if (WIFSIGNALED(status)) return {ChildEnd::How::crashed, WTERMSIG(status)};
  switch (WEXITSTATUS(status)) {
    case 0: return {ChildEnd::How::returned};
    case kExitOutOfMemory: return {ChildEnd::How::out_of_memory};
    default: return {ChildEnd::How::threw};
  }
}

}  // namespace

std::string ChildEnd::describe() const {
  switch (how) {
    case How::returned: return "finished";
    case How::threw: return message;
    case How::crashed: {
      const char* name = sigabbrev_np(signal);
      return fmt::format("crashed (signal {}{})", signal, name ? fmt::format(", SIG{}", name) : "");
    }
    case How::timed_out: return "did not finish in time";
    case How::out_of_memory: return "ran out of its memory budget";
  }
  return "?";
}

ChildEnd run_in_child(const std::function<void()>& work, std::chrono::milliseconds limit, int64_t memory_budget) {
  return run_in_child_for(
      [&] {
        work();
        return std::string();
      },
      limit, memory_budget, 0);
}

ChildEnd run_in_child_for(const std::function<std::string()>& work, std::chrono::milliseconds limit,
                          int64_t memory_budget, size_t max_result) {
  const int64_t memory_limit = mapped_bytes() + memory_budget;
  int message[2];
  if (pipe2(message, O_CLOEXEC) != 0) throw std::runtime_error(fmt::format("pipe: {}", std::strerror(errno)));
  const int result = memfd_create("tinygpt child result", MFD_CLOEXEC);
  if (result < 0) {
    close(message[0]), close(message[1]);
    throw std::runtime_error(fmt::format("memfd_create: {}", std::strerror(errno)));
  }
  std::fflush(nullptr);  // nothing buffered is written twice
  const pid_t pid = fork();
  if (pid < 0) {
    close(message[0]), close(message[1]), close(result);
    throw std::runtime_error(fmt::format("cannot start a child process: {}", std::strerror(errno)));
  }
  if (pid == 0) child(work, memory_limit, message[1], result);
  close(message[1]);
  ChildEnd end = wait_for(pid, limit);
  if (end.how == ChildEnd::How::threw) {
    char text[4096];
    const ssize_t n = read(message[0], text, sizeof text);
    end.message = n > 0 ? std::string(text, static_cast<size_t>(n)) : "failed";
  }
  close(message[0]);
  if (end.how == ChildEnd::How::returned) {
    struct stat st {};
    if (fstat(result, &st) != 0 || st.st_size < 0 || static_cast<uint64_t>(st.st_size) > max_result) {
      end = {ChildEnd::How::threw};
      end.message = fmt::format("its result is larger than the {} bytes allowed", max_result);
    } else {
      end.result.resize(static_cast<size_t>(st.st_size));
      if (pread(result, end.result.data(), end.result.size(), 0) != static_cast<ssize_t>(end.result.size())) {
        end = {ChildEnd::How::threw};
        end.message = fmt::format("its result could not be read back: {}", std::strerror(errno));
      }
    }
  }
  close(result);
  return end;
}

}  // namespace tinygpt::io
