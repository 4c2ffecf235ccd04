#include "staged_folder.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string_view>

namespace tinygpt::io {

namespace {

namespace fs = std::filesystem;

// The prefix of every staging folder of `target`: ".<name>.staging-".
std::string staging_prefix(const fs::path& target) { return "." + target.filename().string() + ".staging-"; }

// The file that marks a staging folder as tinygpt's own (what a later run may remove).
constexpr const char* kMarker = ".tinygpt-staging";
constexpr std::string_view kMarkerText = "a folder tinygpt is writing; removed when it is done\n";

void mark(const fs::path& folder) {
  const int fd = ::open((folder / kMarker).c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) return;  // unmarked, it is never removed by another run: only left behind
  if (::write(fd, kMarkerText.data(), kMarkerText.size()) < 0) ::unlink((folder / kMarker).c_str());
  ::close(fd);
}

bool is_marked(const fs::path& folder) {
  std::error_code ec;
  const fs::file_status marker = fs::symlink_status(folder / kMarker, ec);
  return !ec && fs::is_regular_file(marker) && fs::file_size(folder / kMarker, ec) == kMarkerText.size();
}

// Staging folders of `target` whose process is gone (killed before it could remove them): only
// real folders that hold tinygpt's marker, so that nothing else of that name is ever removed.
void remove_abandoned(const fs::path& target) {
  const std::string prefix = staging_prefix(target);
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(target.parent_path(), ec)) {
    const std::string name = entry.path().filename().string();
    if (!name.starts_with(prefix) || entry.is_symlink(ec) || !entry.is_directory(ec) || !is_marked(entry.path()))
      continue;
    // Exactly the names StagedFolder makes: "<prefix><pid>-<6 hex digits>".
    char* end = nullptr;
    const long pid = std::strtol(name.c_str() + prefix.size(), &end, 10);
    const std::string_view rest(end);
    const bool made_here = end != name.c_str() + prefix.size() && rest.size() == 7 && rest[0] == '-' &&
                           rest.find_first_not_of("0123456789abcdef", 1) == std::string_view::npos;
    if (made_here && pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) fs::remove_all(entry.path(), ec);
  }
}

// Whether `folder` is the working folder or holds it: swapping it would leave the shell that ran
// tinygpt in a folder that is then removed.
bool holds_working_folder(const fs::path& folder) {
  std::error_code ec;
  const fs::path cwd = fs::canonical(fs::current_path(ec), ec);
  if (ec) return false;
  const auto [end, _] = std::mismatch(folder.begin(), folder.end(), cwd.begin(), cwd.end());
  return end == folder.end();
}

// A number for a new name: the clock's low bits and the attempt.
unsigned unique_number(int attempt) {
  const auto ticks = std::chrono::steady_clock::now().time_since_epoch().count();
  return (static_cast<unsigned>(ticks) + static_cast<unsigned>(attempt) * 7919u) & 0xffffffu;
}

void sync_folder(const fs::path& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) ::fsync(fd), ::close(fd);
}

}  // namespace

StagedFolder::StagedFolder(std::string dir, std::function<bool(const std::string&)> ours)
    : dir_(std::move(dir)), ours_(std::move(ours)) {
  if (dir_.empty()) throw std::invalid_argument("an empty output folder: name the folder to write");
  std::error_code ec;
  fs::path target = fs::weakly_canonical(fs::absolute(dir_), ec);
  if (ec) fail("find it", ec.value());
  if (!target.has_filename()) target = target.parent_path();  // "out/"
  target_ = target.string();
  struct stat st {};
  const bool exists = ::stat(target_.c_str(), &st) == 0;
  if (exists && !S_ISDIR(st.st_mode)) throw std::invalid_argument(fmt::format("'{}' exists and is not a folder", dir_));
  if (exists && holds_working_folder(target))
    throw std::invalid_argument(fmt::format(
        "'{}' is the working folder or holds it: its new contents replace the whole folder, which would leave your "
        "shell in a removed one; write to another folder",
        dir_));
  if (exists)
    for (const auto& entry : fs::directory_iterator(target, ec))
      if (entry.is_directory(ec) && !entry.is_symlink(ec) && !ours_(entry.path().filename().string()))
        throw std::invalid_argument(fmt::format("'{}' holds the folder '{}', which a hard link cannot carry into the "
                                                "new contents: move it, or choose another folder",
                                                dir_, entry.path().filename().string()));
  remove_abandoned(target);
  const mode_t mask = ::umask(0);  // the new folder gets the old one's mode, or the usual one
  ::umask(mask);
  for (int attempt = 0;; ++attempt) {
    staging_ = (target.parent_path() / fmt::format("{}{}-{:06x}", staging_prefix(target), ::getpid(),
                                                   unique_number(attempt))).string();
    if (::mkdir(staging_.c_str(), exists ? (st.st_mode & 07777) : (0777 & ~mask)) == 0) break;
    if (errno != EEXIST || attempt == 100) {
      const int error = errno;
      staging_.clear();
      fail(fmt::format("make a folder beside it in '{}'", target.parent_path().string()), error);
    }
  }
  if (exists) ::chmod(staging_.c_str(), st.st_mode & 07777);  // mkdir applied the umask
  mark(staging_);
}

StagedFolder::~StagedFolder() {
  std::error_code ec;
  if (!staging_.empty()) fs::remove_all(staging_, ec);
}

std::string StagedFolder::file(const std::string& name) const { return (fs::path(staging_) / name).string(); }

void StagedFolder::fail(const std::string& doing, int error) const {
  throw std::runtime_error(fmt::format("cannot write the folder '{}' ({}): {}", dir_, doing, std::strerror(error)));
}

void StagedFolder::commit() {
  ::unlink(file(kMarker).c_str());
  struct stat st {};
  if (::stat(target_.c_str(), &st) != 0) {  // a new folder: the staging folder becomes it
    if (::rename(staging_.c_str(), target_.c_str()) != 0) fail("move the new contents in", errno);
    staging_.clear();
    sync_folder(fs::path(target_).parent_path());
    return;
  }
  std::error_code listing, probe;
  for (const auto& entry : fs::directory_iterator(target_, listing)) {
    const std::string name = entry.path().filename().string();
    if (ours_(name) || fs::exists(fs::symlink_status(file(name), probe))) continue;
    if (::link(entry.path().c_str(), file(name).c_str()) != 0)
      fail(fmt::format("keep '{}' by a hard link", name), errno);
  }
  if (listing) fail("list it", listing.value());
  sync_folder(staging_);
  if (::renameat2(AT_FDCWD, staging_.c_str(), AT_FDCWD, target_.c_str(), RENAME_EXCHANGE) != 0) {
    if (errno != EINVAL && errno != ENOSYS) fail("swap the new contents in", errno);
    // A file system without the exchange: two renames, the old folder out of the way first.
    const std::string old = staging_ + ".old";
    if (::rename(target_.c_str(), old.c_str()) != 0) fail("move the old contents aside", errno);
    if (::rename(staging_.c_str(), target_.c_str()) != 0) {
      const int error = errno;
      ::rename(old.c_str(), target_.c_str());
      fail("move the new contents in", error);
    }
    staging_ = old;
  }
  sync_folder(fs::path(target_).parent_path());
  mark(staging_);  // staging_ now names the old contents, which the destructor removes

}

}  // namespace tinygpt::io
