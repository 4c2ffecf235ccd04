#pragma once
// Token shards in llm.c's format, read in place: a corpus of any size trains without being loaded.
// A shard is a header of 256 little-endian int32 (magic, version, token count, then zeros) and the
// tokens after it: magic 20240520 and version 1 for uint16 tokens, magic 20240801 and version 7 for
// uint32 tokens (vocabularies over 65,536). tinygpt's shards also name the tokenizer that made them,
// in header words that llm.c leaves 0 (and its readers ignore): [3] the mark 0x6b6f7467 ("gtok"),
// [4] the kind (1 char, 2 bpe, 3 sentencepiece), [5] the vocabulary size, [6..13] the 32 bytes of
// the tokenizer's digest (tokenizer.h's TokenizerIdentity).
#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "tokenizer.h"

namespace tinygpt::data {

inline constexpr int32_t kShardMagic16 = 20240520, kShardVersion16 = 1;
inline constexpr int32_t kShardMagic32 = 20240801, kShardVersion32 = 7;
inline constexpr int32_t kShardTokenizerMark = 0x6b6f7467;
inline constexpr int64_t kShardHeaderBytes = 256 * 4;

// The header of a shard of `count` tokens, each `token_bytes` (2 or 4) wide, made by `tokenizer`
// (null: unnamed, as llm.c's).
std::array<int32_t, 256> shard_header(int64_t count, int token_bytes, const TokenizerIdentity* tokenizer = nullptr);
// The tokenizer a header names; none when it has no mark. Throws std::invalid_argument for a mark
// with an unknown kind or a vocabulary size out of range.
std::optional<TokenizerIdentity> shard_tokenizer(const std::array<int32_t, 256>& header);
// The width of tokens a vocabulary of this size needs in a shard: 2 up to 65,536 tokens, else 4.
int shard_token_bytes(int64_t vocab_size);
// `ids` as they are stored after the header (little-endian, `token_bytes` each).
std::vector<char> shard_payload(std::span<const int32_t> ids, int token_bytes);

// The shards of one split in a folder: files named <name>_<split>_<number>.bin (llm.c's naming,
// e.g. fineweb_train_000001.bin), sorted by name. An empty list when there are none.
std::vector<std::string> shard_files(const std::string& dir, const std::string& split);
// Whether a file name is one shard_files lists for `split`.
bool is_shard_name(const std::string& name, const std::string& split);

class ShardSet;
// The shards of `split` in `dir`, opened and checked (ShardSet), or null when it has none.
std::shared_ptr<const ShardSet> open_shards(const std::string& dir, const std::string& split, int64_t vocab_size);

// A split's shards, checked, then read with pread: memory stays flat whatever their size, and at
// most kOpenShards descriptors are held (the most recently read shards'), so a folder may hold any
// number of shards.
class ShardSet {
 public:
  // Checks each file before use: a regular file, a header with a known magic and version, a token
  // count that agrees with the file's size, the same token width and the same tokenizer (or none)
  // in every shard. Errors name the file ("shard 'x.bin': holds 10 tokens by its size but its
  // header says 20").
  ShardSet(const std::vector<std::string>& paths, int64_t vocab_size);
  ~ShardSet();
  ShardSet(const ShardSet&) = delete;
  ShardSet& operator=(const ShardSet&) = delete;

  int64_t size() const { return total_; }  // tokens in all shards
  int token_bytes() const { return token_bytes_; }
  // The tokenizer the shards name (all the same, or an error at construction); none for shards
  // that name none (llm.c's).
  const std::optional<TokenizerIdentity>& tokenizer() const { return tokenizer_; }
  const std::vector<std::string>& paths() const { return paths_; }
  // out[0..n) = tokens [start, start + n) of the shards taken end to end. A token id at or above
  // the vocabulary, or a shard that became shorter (replaced during a run), is an error naming the
  // file and the place.
  void read(int64_t start, int64_t n, int32_t* out) const;

 private:
  struct Shard {
    uint64_t device, inode;  // the file checked, which an opening again must find at the path
    int64_t first, count;    // its tokens' place in the whole
  };
  struct OpenShard;
  struct PoolEntry {
    size_t shard;
    std::shared_ptr<const OpenShard> file;
    uint64_t last_use;
  };
  static constexpr size_t kOpenShards = 64;  // a batch's windows fall in a few shards; far below ulimit -n
  std::shared_ptr<const OpenShard> open(size_t index) const;
  std::vector<std::string> paths_;
  std::vector<Shard> shards_;
  int64_t total_ = 0, vocab_size_;
  int token_bytes_ = 0;
  std::optional<TokenizerIdentity> tokenizer_;
  mutable std::mutex pool_mutex_;
  mutable std::vector<PoolEntry> pool_;
  mutable uint64_t pool_clock_ = 0;
};

}  // namespace tinygpt::data
