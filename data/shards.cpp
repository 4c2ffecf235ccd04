#include "shards.h"

#include <fmt/format.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "input_file.h"

namespace tinygpt::data {

namespace {

[[noreturn]] void shard_error(const std::string& path, const std::string& problem) {
  throw std::runtime_error(fmt::format("shard '{}': {}", path, problem));
}

// A little-endian unsigned integer of `width` (2 or 4) bytes.
uint32_t little_endian(const unsigned char* p, int width) {
  uint32_t v = 0;
  for (int b = 0; b < width; ++b) v |= uint32_t{p[b]} << (8 * b);
  return v;
}

int32_t little_endian_int32(const unsigned char* p) { return static_cast<int32_t>(little_endian(p, 4)); }

}  // namespace

// An open shard, shared by the reads that use it: the pool may drop it while a read still holds it.
struct ShardSet::OpenShard {
  int fd = -1;
  // Opens the shard again, refusing another file now at its path (device and inode differ).
  OpenShard(const std::string& path, const Shard& shard) : fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC)) {
    if (fd < 0) shard_error(path, fmt::format("cannot be opened again: {}", std::strerror(errno)));
    struct stat st {};
    if (::fstat(fd, &st) != 0 || st.st_dev != shard.device || st.st_ino != shard.inode) {
      ::close(fd);
      shard_error(path, "was replaced while in use: another file is at its path now");
    }
  }
  ~OpenShard() { ::close(fd); }
  OpenShard(const OpenShard&) = delete;
  OpenShard& operator=(const OpenShard&) = delete;
};

std::shared_ptr<const ShardSet::OpenShard> ShardSet::open(size_t index) const {
  const std::lock_guard<std::mutex> lock(pool_mutex_);
  ++pool_clock_;
  for (PoolEntry& e : pool_)
    if (e.shard == index) {
      e.last_use = pool_clock_;
      return e.file;
    }
  auto file = std::make_shared<const OpenShard>(paths_[index], shards_[index]);
  if (pool_.size() < kOpenShards) {
    pool_.push_back({index, file, pool_clock_});
  } else {  // the least recently used gives its place
    auto oldest = std::min_element(pool_.begin(), pool_.end(),
                                   [](const PoolEntry& a, const PoolEntry& b) { return a.last_use < b.last_use; });
    *oldest = {index, file, pool_clock_};
  }
  return file;
}

namespace {
constexpr int32_t kKinds = 3;  // header[4] = 1 + TokenizerKind: 1 char, 2 bpe, 3 sentencepiece
constexpr int32_t kMaxVocab = int32_t{1} << 24;
}  // namespace

std::array<int32_t, 256> shard_header(int64_t count, int token_bytes, const TokenizerIdentity* tokenizer) {
  if (count < 0 || count > INT32_MAX)
    throw std::invalid_argument(fmt::format("a shard holds at most {} tokens (got {})", INT32_MAX, count));
  std::array<int32_t, 256> header{};
  header[0] = token_bytes == 2 ? kShardMagic16 : kShardMagic32;
  header[1] = token_bytes == 2 ? kShardVersion16 : kShardVersion32;
  header[2] = static_cast<int32_t>(count);
  if (!tokenizer) return header;
  if (tokenizer->vocab_size < 1 || tokenizer->vocab_size > kMaxVocab)
    throw std::invalid_argument(fmt::format("shard header: cannot name {}", tokenizer->describe()));
  header[3] = kShardTokenizerMark;
  header[4] = static_cast<int32_t>(tokenizer->kind) + 1;
  header[5] = static_cast<int32_t>(tokenizer->vocab_size);
  std::memcpy(&header[6], tokenizer->digest.data(), tokenizer->digest.size());
  return header;
}

std::optional<TokenizerIdentity> shard_tokenizer(const std::array<int32_t, 256>& header) {
  if (header[3] != kShardTokenizerMark) return std::nullopt;
  if (header[4] < 1 || header[4] > kKinds)
    throw std::invalid_argument(fmt::format("its header names a tokenizer of unknown kind {}", header[4]));
  if (header[5] < 1 || header[5] > kMaxVocab)
    throw std::invalid_argument(fmt::format("its header names a tokenizer of {} tokens, outside [1, {}]", header[5],
                                            kMaxVocab));
  TokenizerIdentity t{static_cast<TokenizerKind>(header[4] - 1), header[5], {}};
  std::memcpy(t.digest.data(), &header[6], t.digest.size());
  return t;
}

int shard_token_bytes(int64_t vocab_size) { return vocab_size <= 65536 ? 2 : 4; }

std::vector<char> shard_payload(std::span<const int32_t> ids, int token_bytes) {
  std::vector<char> out(ids.size() * static_cast<size_t>(token_bytes));
  for (size_t i = 0; i < ids.size(); ++i) {
    const auto v = static_cast<uint32_t>(ids[i]);
    for (int b = 0; b < token_bytes; ++b) out[i * token_bytes + b] = static_cast<char>(v >> (8 * b));
  }
  return out;
}

bool is_shard_name(const std::string& name, const std::string& split) {
  return name.ends_with(".bin") && name.find("_" + split + "_") != std::string::npos;
}

std::vector<std::string> shard_files(const std::string& dir, const std::string& split) {
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec))
    if (is_shard_name(entry.path().filename().string(), split)) files.push_back(entry.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

std::shared_ptr<const ShardSet> open_shards(const std::string& dir, const std::string& split, int64_t vocab_size) {
  const std::vector<std::string> files = shard_files(dir, split);
  return files.empty() ? nullptr : std::make_shared<const ShardSet>(files, vocab_size);
}

ShardSet::ShardSet(const std::vector<std::string>& paths, int64_t vocab_size) : paths_(paths), vocab_size_(vocab_size) {
  for (const std::string& path : paths) {
    InputFile file(path, "shard");
    unsigned char header[kShardHeaderBytes];
    if (file.size() < kShardHeaderBytes || file.read(header, sizeof header) != sizeof header)
      shard_error(path, fmt::format("is {} bytes, shorter than the {}-byte header", file.size(), kShardHeaderBytes));
    std::array<int32_t, 256> words;
    for (size_t w = 0; w < words.size(); ++w) words[w] = little_endian_int32(header + 4 * w);
    const int32_t magic = words[0], version = words[1], count = words[2];
    const int width = magic == kShardMagic16 && version == kShardVersion16   ? 2
                      : magic == kShardMagic32 && version == kShardVersion32 ? 4
                                                                             : 0;
    if (width == 0)
      shard_error(path, fmt::format("magic {} version {} is not llm.c's ({} version {} for uint16 tokens, {} version "
                                    "{} for uint32)",
                                    magic, version, kShardMagic16, kShardVersion16, kShardMagic32, kShardVersion32));
    if (token_bytes_ != 0 && width != token_bytes_)
      shard_error(path, fmt::format("holds {}-byte tokens, the shards before it {}-byte ones: one split takes one width",
                                    width, token_bytes_));
    token_bytes_ = width;
    const int64_t by_size = (file.size() - kShardHeaderBytes) / width;
    if (count < 0 || (file.size() - kShardHeaderBytes) % width != 0 || by_size != count)
      shard_error(path, fmt::format("holds {} tokens by its size ({} bytes) but its header says {}", by_size,
                                    file.size(), count));
    std::optional<TokenizerIdentity> tokenizer;
    try {
      tokenizer = shard_tokenizer(words);
    } catch (const std::invalid_argument& e) {
      shard_error(path, e.what());
    }
    if (!shards_.empty() && tokenizer != tokenizer_)
      shard_error(path, fmt::format("was made by {}, shard '{}' before it by {}: one split takes one tokenizer",
                                    tokenizer ? tokenizer->describe() : "a tokenizer it does not name", paths.front(),
                                    tokenizer_ ? tokenizer_->describe() : "a tokenizer it does not name"));
    tokenizer_ = tokenizer;
    struct stat st {};
    if (::fstat(file.descriptor(), &st) != 0) shard_error(path, std::strerror(errno));
    shards_.push_back({st.st_dev, st.st_ino, total_, count});
    total_ += count;
  }
}

ShardSet::~ShardSet() = default;

void ShardSet::read(int64_t start, int64_t n, int32_t* out) const {
  if (start < 0 || n < 0 || start + n > total_)
    throw std::out_of_range(fmt::format("shards: tokens [{}, {}) are outside the {} there are", start, start + n, total_));
  auto shard = std::upper_bound(shards_.begin(), shards_.end(), start,
                                [](int64_t at, const Shard& s) { return at < s.first; }) - 1;
  constexpr int64_t kChunk = 1024;  // tokens read at a time, on the stack: no allocation per batch
  unsigned char bytes[kChunk * 4];
  while (n > 0) {
    const int64_t offset = start - shard->first, take = std::min({n, shard->count - offset, kChunk});
    const std::string& path = paths_[static_cast<size_t>(shard - shards_.begin())];
    const std::shared_ptr<const OpenShard> file = open(static_cast<size_t>(shard - shards_.begin()));
    const auto want = static_cast<size_t>(take * token_bytes_);
    size_t done = 0;
    while (done < want) {
      const ssize_t got = ::pread(file->fd, bytes + done, want - done,
                                  kShardHeaderBytes + offset * token_bytes_ + static_cast<int64_t>(done));
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) shard_error(path, std::strerror(errno));
      if (got == 0) shard_error(path, "ends before the tokens its header counts (replaced or cut while in use?)");
      done += static_cast<size_t>(got);
    }
    for (int64_t i = 0; i < take; ++i) {
      const uint32_t id = little_endian(bytes + i * token_bytes_, token_bytes_);
      if (id >= static_cast<uint64_t>(vocab_size_))
        shard_error(path, fmt::format("token {} is id {}, outside the vocabulary of {}", offset + i, id, vocab_size_));
      out[i] = static_cast<int32_t>(id);
    }
    out += take, start += take, n -= take;
    if (start >= shard->first + shard->count) ++shard;
  }
}

}  // namespace tinygpt::data
