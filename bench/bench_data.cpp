// Tokenizer speed on a text file (default: ../shared/data/tinyshakespeare.txt):
// character encode MB/s, BPE training time to vocab 512 and 1024, BPE encode MB/s.
//   bench_data [FILE]
#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include "tinygpt/data/bpe_tokenizer.h"
#include "tinygpt/data/char_tokenizer.h"
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
}
