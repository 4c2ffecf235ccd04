// Tokenizer speed on a text file (default: ../shared/data/tinyshakespeare.txt):
// character encode MB/s, BPE training time to vocab 512 and 1024, BPE encode MB/s; and what a
// training step's batch costs read from token shards (pread) against the same tokens in memory.
//   bench_data [FILE]
#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include <filesystem>

#include "tinygpt/data/batches.h"
#include "tinygpt/data/bpe_tokenizer.h"
#include "tinygpt/data/char_tokenizer.h"
#include "tinygpt/data/shards.h"
#include "tinygpt/data/text_files.h"

using namespace tinygpt::data;

namespace {
template <class F>
double best_seconds(int repeats, const F& f) {
  double best = 1e30;
  for (int r = 0; r < repeats; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}
}  // namespace

int main(int argc, char** argv) {
  const std::string path = argc > 1 ? argv[1] : "../shared/data/tinyshakespeare.txt";
  const std::string text = read_text_file(path);
  const double mb = static_cast<double>(text.size()) / 1e6;
  fmt::print("# {} ({:.2f} MB); best of 3 runs each, one thread\n", path, mb);

  const CharTokenizer chars = CharTokenizer::from_text(text);
  std::vector<int32_t> ids;
  const double char_s = best_seconds(3, [&] { ids.clear(), chars.encode(text, ids, path); });
  fmt::print("char encode:            {:8.1f} MB/s  ({} tokens, vocab {})\n", mb / char_s, ids.size(), chars.vocab_size());

  for (int64_t vocab : {512, 1024}) {
    std::vector<Merge> merges;
    const double train_s = best_seconds(3, [&] {
      BpeTrainer trainer(Split::gpt2);
      trainer.add(text);
      merges = trainer.train(vocab);
    });
    const BpeTokenizer bpe(merges, Split::gpt2);
    const double encode_s = best_seconds(3, [&] { ids.clear(), bpe.encode(text, ids, path); });
    fmt::print("bpe vocab {:4}: train {:6.3f} s, encode {:6.1f} MB/s  ({} tokens, {:.2f} bytes/token)\n", vocab, train_s,
               mb / encode_s, ids.size(), static_cast<double>(text.size()) / ids.size());
  }

  // One batch of random windows (baby's and small's B x (T + 1)), from memory and from a shard.
  ids.clear(), chars.encode(text, ids, path);
  const auto dir = std::filesystem::temp_directory_path() / "tinygpt_bench_data_shards";
  std::filesystem::create_directories(dir);
  const std::string shard = (dir / "bench_train_000000.bin").string();
  {
    const auto header = shard_header(static_cast<int64_t>(ids.size()), 2);
    const std::vector<char> payload = shard_payload(ids, 2);
    std::FILE* f = std::fopen(shard.c_str(), "wb");
    std::fwrite(header.data(), sizeof header, 1, f);
    std::fwrite(payload.data(), 1, payload.size(), f);
    std::fclose(f);
  }
  TokenArray memory(chars.vocab_size());
  memory.append(ids);
  const auto shards = open_shards(dir.string(), "train", chars.vocab_size());
  const TokenArray disk = TokenArray::of_shards(shards, 0, shards->size());
  for (const auto& [B, T] : {std::pair{12, 64}, std::pair{16, 256}}) {
    std::vector<int32_t> x, y;
    auto per_batch = [&](const TokenArray& tokens) {
      BatchSampler sampler(tokens, B, T, 1);
      return best_seconds(3, [&] {
               for (int i = 0; i < 2000; ++i) sampler.next(x, y);
             }) / 2000 * 1e6;
    };
    fmt::print("batch B={} T={}: {:.1f} us from memory, {:.1f} us from a shard\n", B, T, per_batch(memory), per_batch(disk));
  }
  std::filesystem::remove_all(dir);
}
