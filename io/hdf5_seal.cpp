#include "hdf5_seal.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string_view>

#include "../data/input_file.h"
#include "../autograd/machine.h"
#include "../data/sha256.h"

namespace tinygpt::io::hdf5 {

namespace {

constexpr std::string_view kSealMagic = "tinygpt checkpoint seal 1\n";
constexpr std::string_view kHdf5Signature = "\x89HDF\r\n\x1a\n";

std::string seal_text(const std::string& hex, int64_t bytes) {
  return fmt::format("{}sha256 {}\nbytes {}\n", kSealMagic, hex, bytes);
}

std::string digest_after_user_block(const char* bytes, size_t size) {
  data::Sha256 sha;
  if (size > static_cast<size_t>(kUserBlockBytes)) sha.update(bytes + kUserBlockBytes, size - kUserBlockBytes);
  return sha.hex_digest();
}

// The same for an open file, read a megabyte at a time from offset 512; `end` gets the offset after
// its last byte. A read error throws "<doing> '<path>': <the OS's reason>".
std::string digest_after_user_block(int fd, const std::string& path, const char* doing, int64_t& end) {
  data::Sha256 sha;
  std::vector<char> buffer(size_t{1} << 20);
  end = kUserBlockBytes;
  for (;;) {
    const ssize_t n = ::pread(fd, buffer.data(), buffer.size(), end);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw std::runtime_error(fmt::format("{} '{}': {}", doing, path, std::strerror(errno)));
    if (n == 0) return sha.hex_digest();
    sha.update(buffer.data(), static_cast<size_t>(n));
    end += n;
  }
}

// HDF5's signature opens the file, or follows a user block of 512, 1024, 2048, ... bytes.
bool has_hdf5_signature(std::string_view bytes) {
  for (size_t at = 0; at + kHdf5Signature.size() <= bytes.size(); at = at == 0 ? kUserBlockBytes : 2 * at)
    if (bytes.substr(at, kHdf5Signature.size()) == kHdf5Signature) return true;
  return false;
}

// A 512-byte user block (tinygpt's size) that is neither a seal nor zeros (a seal stripped by hand):
// a seal that took damage. Other tools' user blocks are larger.
bool user_block_is_spoiled(std::string_view bytes) {
  const size_t n = static_cast<size_t>(kUserBlockBytes);
  return bytes.size() >= n + kHdf5Signature.size() && bytes.substr(n, kHdf5Signature.size()) == kHdf5Signature &&
         bytes.substr(0, n).find_first_not_of('\0') != std::string_view::npos;
}

[[noreturn]] void damaged(const std::string& path, const std::string& why) {
  throw std::runtime_error(fmt::format("checkpoint '{}' is damaged: {}", path, why));
}

// The seal's digest and length; false when the file starts without one.
bool parse_seal(std::string_view file, const std::string& path, std::string& hex, int64_t& bytes) {
  const std::string_view head = file.substr(0, static_cast<size_t>(kUserBlockBytes));
  if (head.substr(0, kSealMagic.size()) != kSealMagic) return false;
  if (head.size() < static_cast<size_t>(kUserBlockBytes)) damaged(path, "truncated inside its seal");
  const std::string_view body = head.substr(kSealMagic.size());
  const size_t digest_at = std::string_view("sha256 ").size();
  if (body.substr(0, digest_at) != "sha256 " || body.size() < digest_at + 64 + 1 || body[digest_at + 64] != '\n')
    damaged(path, "its seal is unreadable");
  hex = std::string(body.substr(digest_at, 64));
  const std::string_view rest = body.substr(digest_at + 65);
  if (rest.substr(0, 6) != "bytes ") damaged(path, "its seal is unreadable");
  bytes = 0;
  size_t i = 6;
  for (; i < rest.size() && i < 6 + 18 && rest[i] >= '0' && rest[i] <= '9'; ++i) bytes = bytes * 10 + (rest[i] - '0');
  if (i == 6 || i >= rest.size() || rest[i] != '\n') damaged(path, "its seal is unreadable");
  const std::string text = seal_text(hex, bytes);
  if (head.substr(0, text.size()) != text || head.find_first_not_of('\0', text.size()) != std::string_view::npos)
    damaged(path, "its seal is unreadable");  // the rest of the user block is zeros
  return true;
}

}  // namespace

void seal_image(char* bytes, size_t size) {
  if (size < static_cast<size_t>(kUserBlockBytes)) throw std::logic_error("seal_image: no user block");
  data::Sha256 sha;
  sha.update(bytes + kUserBlockBytes, size - kUserBlockBytes);
  std::string block = seal_text(sha.hex_digest(), static_cast<int64_t>(size));
  block.resize(static_cast<size_t>(kUserBlockBytes), '\0');
  std::copy(block.begin(), block.end(), bytes);
}

void seal_checkpoint(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error(fmt::format("cannot seal '{}': {}", path, std::strerror(errno)));
  int64_t offset = 0;
  std::string hex;
  try {
    hex = digest_after_user_block(fd, path, "cannot seal", offset);
  } catch (...) {
    ::close(fd);
    throw;
  }
  std::string block = seal_text(hex, offset);
  block.resize(static_cast<size_t>(kUserBlockBytes), '\0');
  const bool written = ::pwrite(fd, block.data(), block.size(), 0) == static_cast<ssize_t>(block.size());
  const int error = errno;
  ::close(fd);
  if (!written) throw std::runtime_error(fmt::format("cannot seal '{}': {}", path, std::strerror(error)));
}

CheckpointImage read_checkpoint_image(const std::string& path) {
  data::InputFile file(path, "checkpoint");
  CheckpointImage image;
  image.bytes = file.read_all(machine_memory_bytes());
  const std::string_view bytes = image.bytes.view();
  std::string hex;
  int64_t length = 0;
  if (!parse_seal(bytes, path, hex, length)) {
    if (user_block_is_spoiled(bytes)) damaged(path, "its seal is unreadable");
    if (!has_hdf5_signature(bytes))
      throw std::runtime_error(fmt::format("checkpoint '{}': not an HDF5 file{}", path,
                                           bytes.empty() ? " (it is empty)" : ""));
    return image;
  }
  if (length != static_cast<int64_t>(bytes.size()))
    damaged(path, fmt::format("it has {} bytes, its seal says {}", bytes.size(), length));
  if (digest_after_user_block(bytes.data(), bytes.size()) != hex) damaged(path, "checksum mismatch");
  image.sealed = true;
  return image;
}

File open_checkpoint_image(CheckpointImage image, const std::string& path) {
  try {
    return File(std::move(image.bytes));
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(fmt::format("checkpoint '{}': {}", path, e.what()));
  }
}

OpenedCheckpoint open_checkpoint_streamed(const std::string& path) {
  data::InputFile in(path, "checkpoint");
  std::string head(static_cast<size_t>(std::min<int64_t>(kUserBlockBytes, in.size())), '\0');
  if (in.read(head.data(), head.size()) != head.size()) in.fail("the file shrank while it was read");
  std::string hex;
  int64_t length = 0;
  if (!parse_seal(head, path, hex, length)) {  // no seal: read whole, as read_checkpoint_image checks it
    CheckpointImage image = read_checkpoint_image(path);
    try {
      return {std::make_unique<File>(std::move(image.bytes)), false};
    } catch (const std::runtime_error& e) {
      throw std::runtime_error(fmt::format("checkpoint '{}': {}", path, e.what()));
    }
  }
  int64_t read = 0;
  const std::string digest = digest_after_user_block(in.descriptor(), path, "checkpoint", read);
  if (read != length) damaged(path, fmt::format("it has {} bytes, its seal says {}", read, length));
  if (digest != hex) damaged(path, "checksum mismatch");
  try {
    return {std::make_unique<File>(in), true};
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(fmt::format("checkpoint '{}': {}", path, e.what()));
  }
}

}  // namespace tinygpt::io::hdf5
