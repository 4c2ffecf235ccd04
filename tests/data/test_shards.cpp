// llm.c's token shards: written and read back across shard boundaries, and every kind of bad shard
// refused with the file's name before anything reads out of bounds.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "temp_files.h"
#include "tinygpt/data/shards.h"
#include "tinygpt/data/token_array.h"

using namespace tinygpt::data;
using tinygpt::testing::TempDir;

namespace {

// A shard file as llm.c writes it: the header, then the tokens; `claimed` overrides the count.
std::string write_shard(const TempDir& dir, const std::string& name, const std::vector<int32_t>& ids, int width,
                        std::optional<int32_t> claimed = std::nullopt) {
  std::array<int32_t, 256> header = shard_header(static_cast<int64_t>(ids.size()), width);
  if (claimed) header[2] = *claimed;
  const std::vector<char> payload = shard_payload(ids, width);
  std::string bytes(reinterpret_cast<const char*>(header.data()), sizeof header);
  bytes.append(payload.begin(), payload.end());
  return dir.write(name, bytes);
}

std::vector<int32_t> read_all(const ShardSet& s, int64_t start, int64_t n) {
  std::vector<int32_t> out(static_cast<size_t>(n));
  s.read(start, n, out.data());
  return out;
}

}  // namespace

TEST_CASE("shards: llm.c's header and tokens, read across shard boundaries, uint16 and uint32", "[shards]") {
  TempDir dir;
  REQUIRE(shard_header(5, 2)[0] == 20240520);
  REQUIRE(shard_header(5, 2)[1] == 1);
  REQUIRE(shard_header(5, 4)[0] == 20240801);
  REQUIRE(shard_header(5, 4)[1] == 7);
  REQUIRE(shard_header(5, 2)[2] == 5);
  REQUIRE(shard_token_bytes(65536) == 2);
  REQUIRE(shard_token_bytes(65537) == 4);
  std::vector<int32_t> a, b;
  for (int i = 0; i < 3000; ++i) a.push_back(i % 50000);  // more than one read chunk
  for (int i = 0; i < 7; ++i) b.push_back(60000 + i);
  const std::vector<std::string> files = {write_shard(dir, "x_train_000000.bin", a, 2),
                                          write_shard(dir, "x_train_000001.bin", b, 2)};
  dir.write("x_val_000000.bin", "");
  dir.write("notes.txt", "not a shard");
  REQUIRE(shard_files(dir.file(""), "train") == files);
  const auto set = std::make_shared<const ShardSet>(files, 65536);
  REQUIRE(set->size() == 3007);
  REQUIRE(read_all(*set, 0, 3) == std::vector<int32_t>{0, 1, 2});
  REQUIRE(read_all(*set, 2998, 5) == std::vector<int32_t>{2998 % 50000, 2999, 60000, 60001, 60002});
  const TokenArray view = TokenArray::of_shards(set, 2990, 3007).slice(5, 17);  // a view of a view
  REQUIRE(view.size() == 12);
  REQUIRE(view[4] == 2999);
  REQUIRE(view[11] == 60006);
  REQUIRE(view.bytes() == 0);  // nothing in memory
  REQUIRE_THROWS(set->read(3000, 8, std::vector<int32_t>(8).data()));
  // uint32 tokens for vocabularies over 65,536.
  const std::string wide = write_shard(dir, "w_train_000000.bin", {70000, 3, 131071}, 4);
  REQUIRE(read_all(ShardSet({wide}, 200000), 0, 3) == std::vector<int32_t>{70000, 3, 131071});
}

TEST_CASE("shards: bad shards are refused with the file's name", "[shards][errors]") {
  TempDir dir;
  const std::vector<int32_t> ids = {1, 2, 3, 4};
  const std::string good = write_shard(dir, "g_train_000000.bin", ids, 2);
  auto refused = [](const std::vector<std::string>& files, int64_t vocab, const std::string& message) {
    INFO(message);
    REQUIRE_THROWS_WITH(ShardSet(files, vocab), Catch::Contains(message));
  };
  refused({dir.write("short.bin", "tiny")}, 10, "short.bin': is 4 bytes, shorter than the 1024-byte header");
  std::string bad_magic = std::string(reinterpret_cast<const char*>(shard_header(0, 2).data()), 1024);
  bad_magic[0] = 'X';
  refused({dir.write("magic.bin", bad_magic)}, 10, "magic.bin': magic ");
  refused({write_shard(dir, "count.bin", ids, 2, 9)}, 10, "count.bin': holds 4 tokens by its size (1032 bytes) but its "
                                                          "header says 9");
  refused({write_shard(dir, "negative.bin", ids, 2, -3)}, 10, "its header says -3");
  std::string odd = std::string(reinterpret_cast<const char*>(shard_header(1, 2).data()), 1024) + "abc";
  refused({dir.write("odd.bin", odd)}, 10, "odd.bin': holds 1 tokens by its size");
  refused({good, write_shard(dir, "wide.bin", ids, 4)}, 10, "wide.bin': holds 4-byte tokens, the shards before it 2-byte");
  refused({dir.file("missing.bin")}, 10, "missing.bin': no such file");
  refused({dir.file("")}, 10, "is a directory");
  // A token id past the vocabulary is an error where it is read, naming the file and the token.
  const ShardSet small({good}, 3);
  REQUIRE_THROWS_WITH(small.read(0, 4, std::vector<int32_t>(4).data()),
                      Catch::Contains("g_train_000000.bin': token 2 is id 3, outside the vocabulary of 3"));
  // A shard cut shorter while it is in use (replaced during a run).
  const ShardSet in_use({good}, 10);
  std::filesystem::resize_file(good, 1024 + 4);
  REQUIRE_THROWS_WITH(in_use.read(0, 4, std::vector<int32_t>(4).data()),
                      Catch::Contains("ends before the tokens its header counts"));
}
