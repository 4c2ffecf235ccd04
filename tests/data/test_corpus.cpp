#include <catch2/catch.hpp>

#include <algorithm>
#include <set>
#include <span>

#include "tinygpt/autograd/threads.h"
#include "tinygpt/data/batches.h"
#include "tinygpt/data/corpus.h"
#include "tinygpt/data/text_files.h"
#include "first_difference.h"
#include "temp_files.h"
#include "threads.h"

using namespace tinygpt;
using namespace tinygpt::data;
using tinygpt::testing::TempDir;

TEST_CASE("corpus: char tokens, default 10% validation split, several files", "[corpus]") {
  TempDir dir;
  const std::string a = dir.write("a.txt", std::string(60, 'a') + "\n"), b = dir.write("b.txt", "bcd\x08\n" + std::string(35, 'e'));
  Corpus c = load_corpus({.files = {a, b}});
  REQUIRE(c.tokenizer->vocab_size() == 7);  // \b \n a b c d e
  REQUIRE(c.train.size() + c.val.size() == 61 + 5 + 35);
  REQUIRE(c.val.size() == 10);
  REQUIRE(c.train[0] == c.tokenizer->encode("a")[0]);
  Corpus v = load_corpus({.files = {a}, .val_files = {b}, .tokenizer = TokenizerKind::chars});
  REQUIRE(v.train.size() == 61);
  REQUIRE(v.val.size() == 40);
  REQUIRE(v.tokenizer->vocab_size() == 7);  // the validation file's characters are in the vocabulary
}

TEST_CASE("corpus: blocks cut anywhere still give the whole file's tokens", "[corpus]") {
  TempDir dir;
  std::string text;
  for (int i = 0; i < 300; ++i) text += "나는 오늘 학교에 갔다 " + std::to_string(i) + (i % 7 ? " " : "\n");
  const std::string path = dir.write("k.txt", text);
  std::string joined;
  for (BlockCut cut : {BlockCut::anywhere, BlockCut::chunk_safe, BlockCut::whole_file}) {
    joined.clear();
    int64_t expected_offset = 0;
    for_each_block(path, cut, [&](std::string_view block, int64_t offset, int64_t) {
      REQUIRE(offset == expected_offset);
      expected_offset += static_cast<int64_t>(block.size());
      joined += block;
    }, 64);
    REQUIRE(joined == text);
  }
}

TEST_CASE("corpus: bpe tokens match encoding the whole text", "[corpus]") {
  TempDir dir;
  std::string text;
  for (int i = 0; i < 200; ++i) text += "the quick brown fox " + std::to_string(i % 13) + "\n";
  const std::string path = dir.write("t.txt", text);
  Corpus c = load_corpus({.files = {path}, .val_fraction = 0.0, .tokenizer = TokenizerKind::bpe, .vocab_size = 280});
  const auto whole = c.tokenizer->encode(text);
  REQUIRE(c.train.size() == static_cast<int64_t>(whole.size()));
  for (int64_t i = 0; i < c.train.size(); ++i) REQUIRE(c.train[i] == whole[i]);
}

TEST_CASE("corpus: tokenizing on several threads gives the one-thread ids, blocks delivered in file order",
          "[corpus][parallel]") {
  TempDir dir;
  std::string a, b;  // 2.6 MB and 0.3 MB: several 1 MB blocks, then a file of one block
  // Paragraphs end in blank lines and runs of spaces: a block may only end where GPT-2's pattern
  // cuts the same way whatever follows.
  for (int i = 0; a.size() < 2'600'000; ++i)
    a += "Line " + std::to_string(i) + ": the quick brown fox, 나는 jumps." + (i % 3 ? "\n" : i % 2 ? "\n\n" : "  \n");
  for (int i = 0; b.size() < 300'000; ++i) b += "another " + std::to_string(i * 7) + " text, with 'quotes'\n";
  const std::vector<std::string> files = {dir.write("a.txt", a), dir.write("b.txt", b)};
  const Corpus c = load_corpus({.files = files, .val_fraction = 0.0, .tokenizer = TokenizerKind::bpe, .vocab_size = 300});
  std::vector<int32_t> whole = c.tokenizer->encode(a);
  const std::vector<int32_t> second = c.tokenizer->encode(b);
  whole.insert(whole.end(), second.begin(), second.end());
  for (int threads : {1, 2, 3}) tinygpt::testing::with_threads(threads, [&] {
    std::vector<int32_t> ids;
    std::vector<size_t> order;
    tokenize_in_order(*c.tokenizer, files, [&](size_t file, std::span<const int32_t> piece, size_t) {
      order.push_back(file);
      ids.insert(ids.end(), piece.begin(), piece.end());
    });
    INFO(threads << " threads");
    REQUIRE(tinygpt::testing::first_difference(ids, whole) == "");
    REQUIRE(std::is_sorted(order.begin(), order.end()));
    REQUIRE(order.size() >= 4);  // a's blocks, then b's
  });
}

TEST_CASE("corpus: bad input names the file and the place", "[corpus][errors]") {
  TempDir dir;
  REQUIRE_THROWS_WITH(load_corpus({.files = {dir.file("missing.txt")}}),
                      Catch::Contains("missing.txt': no such file"));
  REQUIRE_THROWS_WITH(load_corpus({.files = {dir.write("empty.txt", "")}}), Catch::Contains("empty.txt' is empty"));
  REQUIRE_THROWS_WITH(load_corpus({.files = {dir.write("bad.txt", "good\ntext\xC3(")}}),
                      Catch::Contains("bad.txt' is not valid UTF-8 at byte offset 9"));
  REQUIRE_THROWS_WITH(load_corpus({.files = {dir.write("x.txt", "abc")}, .tokenizer = TokenizerKind::sentencepiece}),
                      Catch::Contains("a SentencePiece tokenizer is read from its model file"));
  REQUIRE_THROWS_WITH(load_corpus({.files = {dir.write("y.txt", "abcabc")}, .tokenizer = TokenizerKind::bpe, .vocab_size = 100}),
                      Catch::Contains("below 256"));
  REQUIRE_THROWS_WITH(load_corpus({.files = {dir.write("z.txt", "abcabc")}, .tokenizer = TokenizerKind::bpe, .vocab_size = 1000}),
                      Catch::Contains("larger than the corpus allows"));
  // A character the vocabulary lacks, placed by line and column in the file.
  Corpus c = load_corpus({.files = {dir.write("train.txt", "abc\nabc\n")}});
  REQUIRE_THROWS_WITH(tokenize_files(*c.tokenizer, {dir.write("eval.txt", "abc\nab\nabX")}),
                      Catch::Contains("eval.txt': 'X' (U+0058) at line 3, column 3 is not in the character vocabulary"));
}

TEST_CASE("corpus: on any thread count the first error in file order is the one reported", "[corpus][errors]") {
  TempDir dir;
  Corpus c = load_corpus({.files = {dir.write("train.txt", "abc\n")}});
  // An unknown character in a late block of the first file, invalid UTF-8 early in the second: the
  // second file's error may be found first, but the first file's is reported.
  std::string first(3'500'000, 'a');
  for (size_t i = 79; i < first.size(); i += 80) first[i] = '\n';
  first[3'400'005] = 'X';
  const std::vector<std::string> files = {dir.write("first.txt", first), dir.write("second.txt", "ab\xC3(")};
  for (int threads : {1, 2, 4}) tinygpt::testing::with_threads(threads, [&] {
    INFO(threads << " threads");
    int64_t delivered = 0;
    REQUIRE_THROWS_WITH(tokenize_in_order(*c.tokenizer, files,
                                          [&](size_t, std::span<const int32_t> ids, size_t) {
                                            delivered += static_cast<int64_t>(ids.size());
                                          }),
                        Catch::Contains("first.txt': 'X' (U+0058) at line 42501, column 6"));
    REQUIRE(delivered < 3'400'005);  // the blocks before the error, and none after it
    REQUIRE(delivered >= 3'000'000);  // three blocks of about 1 MB, cut at lines
  });
}

TEST_CASE("batches: windows are shifted by one and the sampler state restores exactly", "[batches]") {
  TokenArray tokens(100);
  std::vector<int32_t> ids(500);
  for (int i = 0; i < 500; ++i) ids[i] = i % 97;
  tokens.append(ids);
  BatchSampler a(tokens, 4, 8, 42);
  std::vector<int32_t> in, out, in2, out2;
  a.next(in, out);
  REQUIRE(in.size() == 32);
  for (int b = 0; b < 4; ++b)
    for (int t = 0; t + 1 < 8; ++t) REQUIRE(out[b * 8 + t] == in[b * 8 + t + 1]);
  const Rng::State saved = a.state();
  a.next(in, out);
  BatchSampler b(tokens, 4, 8, 7);
  b.set_state(saved);
  b.next(in2, out2);
  REQUIRE(in == in2);
  REQUIRE(out == out2);
  BatchSampler c(tokens, 4, 8, 42), d(tokens, 4, 8, 42);
  for (int i = 0; i < 5; ++i) {
    c.next(in, out);
    d.next(in2, out2);
    REQUIRE(in == in2);
  }
  TokenArray few(100);
  few.append(std::vector<int32_t>(8, 1));
  REQUIRE_THROWS_WITH(BatchSampler(few, 2, 8, 1), Catch::Contains("has 8 tokens; block size 8 needs at least 9"));
  // The all-zero generator state would make below() loop forever: refused, the state kept.
  REQUIRE_THROWS_WITH(b.set_state(Rng::State{}), Catch::Contains("all-zero state"));
  REQUIRE(b.state() != Rng::State{});
}

TEST_CASE("batches: evaluation windows cover every target exactly once", "[batches]") {
  for (int64_t n : {2, 9, 10, 11, 64, 65, 100}) {
    std::vector<int> covered(n, 0);
    for (const EvalWindow& w : evaluation_windows(n, 8)) {
      REQUIRE(w.length >= 1);
      REQUIRE(w.length <= 8);
      for (int64_t t = 0; t < w.length; ++t) ++covered[w.start + t + 1];
    }
    REQUIRE(covered[0] == 0);
    for (int64_t i = 1; i < n; ++i) REQUIRE(covered[i] == 1);
  }
  REQUIRE(evaluation_windows(1, 8).empty());
  REQUIRE(evaluation_windows(17, 8).size() == 2);
  REQUIRE(evaluation_windows(18, 8).back().length == 1);
}
