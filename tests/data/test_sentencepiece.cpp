// SentencePiece tokenizers: the ids and text of the SentencePiece library itself, token bytes that
// rebuild the text, model bytes that are not a model (or whose character map the library would
// read out of bounds) refused with the reason, and texts cut into blocks by the documented rule.
#include <catch2/catch.hpp>
#include <sentencepiece_processor.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>

#include "sentencepiece_model.h"
#include "temp_files.h"
#include "tinygpt/data/corpus.h"
#include "tinygpt/data/detail/word_memory.h"
#include "tinygpt/data/sentencepiece_tokenizer.h"
#include "tinygpt/io/sentencepiece_model.h"

using namespace tinygpt;
using namespace tinygpt::testing;

TEST_CASE("sentencepiece: the library's own ids and text, for BPE and unigram models", "[sentencepiece]") {
  TempDir dir;
  for (const char* type : {"bpe", "unigram"}) {
    INFO(type);
    const std::string model = write_sentencepiece_model(dir, type, 400, type);
    const auto t = io::read_sentencepiece_file(model);
    sentencepiece::SentencePieceProcessor sp;
    REQUIRE(sp.Load(model).ok());
    REQUIRE(t->vocab_size() == sp.GetPieceSize());
    REQUIRE(t->kind() == TokenizerKind::sentencepiece);
    REQUIRE(t->bos_id() == sp.bos_id());
    for (const std::string text : {"Once upon a time, Tom ran home.", "  two  spaces\nand a line", "나는 사과 🙂 zebra!",
                                   "unseen: ẞ ꙮ \x01 tab\t", ""}) {
      INFO(text);
      std::vector<int> want;
      REQUIRE(sp.Encode(text, &want).ok());
      const std::vector<int32_t> got = t->encode(text);
      REQUIRE(std::vector<int>(got.begin(), got.end()) == want);
      std::string decoded;
      REQUIRE(sp.Decode(want, &decoded).ok());
      REQUIRE(t->decode(got) == decoded);
      // The pieces' bytes, joined, are the decoded text: the first piece's without the space the
      // dummy prefix stands for.
      std::string joined;
      for (size_t i = 0; i < got.size(); ++i) joined += i == 0 ? t->first_token_bytes(got[i]) : t->token_bytes(got[i]);
      REQUIRE(joined == decoded);
      if (!got.empty() && sp.IdToPiece(got[0]).rfind("\xE2\x96\x81", 0) == 0)  // "▁Once": the space is dropped
        REQUIRE(t->token_bytes(got[0]) == " " + t->first_token_bytes(got[0]));
    }
  }
  const auto t = io::read_sentencepiece_file(dir.file("bpe.model"));
  REQUIRE(t->token_bytes(t->bos_id()).empty());  // control pieces stand for no text
  // BOS stands between documents; the model's bytes are its identity.
  REQUIRE(t->document_token() == t->bos_id());
  REQUIRE(t->identity() == io::read_sentencepiece_file(dir.file("bpe.model"))->identity());
  REQUIRE_FALSE(t->identity() == io::read_sentencepiece_file(dir.file("unigram.model"))->identity());
  REQUIRE(t->identity().kind == TokenizerKind::sentencepiece);
  REQUIRE_THROWS_WITH(t->decode(std::vector<int32_t>{400}), Catch::Contains("400"));
  REQUIRE_THROWS_WITH(t->encode("bad \xC3("), Catch::Contains("not valid UTF-8 at byte offset 4"));
}

TEST_CASE("sentencepiece: model bytes that are not a model are refused with the reason", "[sentencepiece][errors]") {
  TempDir dir;
  REQUIRE_THROWS_WITH(io::read_sentencepiece_file(dir.write("junk.model", "not a model at all")),
                      Catch::Contains("tokenizer model '" + dir.file("junk.model") + "' is not a SentencePiece model"));
  REQUIRE_THROWS_WITH(io::read_sentencepiece_file(dir.write("empty.model", "")),
                      Catch::Contains("empty.model"));
  REQUIRE_THROWS_WITH(io::read_sentencepiece_file(dir.file("missing.model")),
                      Catch::Contains("tokenizer model '" + dir.file("missing.model") + "'") &&
                          Catch::Contains("no such file"));
  // A real model cut short, and one with its bytes flipped: refused, never a crash of this process.
  const std::string good = read_file(write_sentencepiece_model(dir));
  REQUIRE_THROWS_AS(io::load_sentencepiece(good.substr(0, good.size() / 2), "half"), std::invalid_argument);
  for (size_t at : {size_t{10}, good.size() / 3, good.size() - 20}) {
    std::string flipped = good;
    flipped[at] = static_cast<char>(flipped[at] ^ 0x5A);
    try {
      const auto t = io::load_sentencepiece(flipped, "flipped");
      (void)t->encode("Once upon a time");  // loaded: it works like any model
    } catch (const std::invalid_argument& e) {
      REQUIRE_THAT(e.what(), Catch::Contains("flipped"));
    }
  }
}

TEST_CASE("sentencepiece: character maps the library would read out of bounds are refused before it reads them",
          "[sentencepiece][errors]") {
  TempDir dir;
  const std::string good = read_file(write_sentencepiece_model(dir));  // nmt_nfkc: a character map
  REQUIRE_NOTHROW(data::SentencePieceTokenizer(good, "good"));
  auto trie_bytes = [](const std::string& map) {
    uint32_t n = 0;
    std::memcpy(&n, map.data(), 4);
    return n;
  };
  auto refused = [&](const char* name, auto change, const std::string& reason) {
    INFO(name);
    const std::string model = with_charsmap(good, change);
    REQUIRE_THROWS_WITH(data::SentencePieceTokenizer(model, name),
                        Catch::Contains(name) && Catch::Contains("normalizer's character map") && Catch::Contains(reason));
    // Through io (the child's trial, then this process): the same one line.
    REQUIRE_THROWS_WITH(io::load_sentencepiece(model, name), Catch::Contains(reason));
  };
  refused("cut", [&](std::string map) { return map.substr(0, 4 + trie_bytes(map) / 2); }, "says its trie is");
  refused("longer trie", [&](std::string map) {
    const uint32_t n = static_cast<uint32_t>(map.size() - 2);  // below the blob's size, as the library checks
    std::memcpy(map.data(), &n, 4);
    return map;
  }, "says its trie is");
  refused("no NUL", [&](std::string map) {
    std::replace(map.begin() + 4 + trie_bytes(map), map.end(), '\0', 'x');
    return map;
  }, "does not end (NUL)");
  refused("short strings", [&](std::string map) { return map.substr(0, 4 + trie_bytes(map) + 8); },
          "has a replacement at byte");
  refused("far root", [&](std::string map) {
    const uint32_t root = 0xFFFFu << 10;  // the root's children far past the end
    std::memcpy(map.data() + 4, &root, 4);
    return map;
  }, "past its");
  // Random damage to the trie: refused or still a map every text can be normalized with.
  std::mt19937 random(5);
  for (int i = 0; i < 40; ++i) {
    const std::string map_bytes = with_charsmap(good, [&](std::string map) {
      const size_t at = 4 + random() % trie_bytes(map);
      map[at] = static_cast<char>(map[at] ^ (1 << (random() % 8)));
      return map;
    });
    try {
      const data::SentencePieceTokenizer t(map_bytes, "damaged");
      (void)t.encode("Once upon a time ÅÅ ﬁ ① ｶ 나는 \t\x01 ...");
    } catch (const std::invalid_argument& e) {
      REQUIRE_THAT(e.what(), Catch::Contains("damaged"));
    }
  }
}

namespace {
// The ids of a text under docs/data-format.md's rule, written out apart from TextBlocks: the file is
// read 8 KB at a time; once 8 KB waits, a block ends before the last space between two ASCII letters
// or digits among the bytes read (none: reads of twice the size), and the block after a cut is
// encoded without that space.
std::vector<int> encode_by_the_block_rule(const sentencepiece::SentencePieceProcessor& sp, const std::string& text) {
  auto alnum = [](char c) { return (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z'); };
  std::vector<int> ids;
  size_t begin = 0, read = 0, step = size_t{1} << 13;
  while (begin < text.size()) {
    if (read < text.size() && read - begin < step) {
      read = std::min(read + step, text.size());
      continue;
    }
    size_t end = text.size();
    if (read < text.size()) {
      end = 0;
      for (size_t p = read - 2; p > begin && end == 0; --p)
        if (text[p] == ' ' && alnum(text[p - 1]) && alnum(text[p + 1])) end = p;
      if (end == 0) {
        step *= 2;
        continue;
      }
    }
    std::vector<int> block;
    REQUIRE(sp.Encode(std::string_view(text).substr(begin + (begin > 0), end - begin - (begin > 0)), &block).ok());
    ids.insert(ids.end(), block.begin(), block.end());
    begin = end;
  }
  return ids;
}
}  // namespace

TEST_CASE("sentencepiece: a text is cut before spaces where the model allows, into the whole's ids or the rule's",
          "[sentencepiece][corpus][slow]") {
  TempDir dir;
  std::string text;
  for (int i = 0; text.size() < (size_t{5} << 19); ++i)  // 2.5 MB: hundreds of 8 KB blocks
    text += sentencepiece_text().substr(static_cast<size_t>(i % 50)) + "  Two  spaces, ended line \n\n";
  const std::string file = dir.write("long.txt", text);
  enum class Expect { whole_text, block_rule };
  struct Case {
    const char* name;
    std::string type, extra;
    bool cuts;
    Expect ids;
  };
  for (const Case& c : {Case{"llama", "bpe", "--normalization_rule_name=identity --allow_whitespace_only_pieces=true "
                                             "--remove_extra_whitespaces=false --split_digits=true", true, Expect::whole_text},
                        Case{"nfkc", "bpe", "", true, Expect::whole_text},
                        Case{"char", "char", "--hard_vocab_limit=false", true, Expect::whole_text},
                        Case{"word", "word", "--hard_vocab_limit=false", true, Expect::whole_text},
                        Case{"suffix", "bpe", "--treat_whitespace_as_suffix=true", false, Expect::whole_text},
                        // a whole long text's float path sums round coarser than a block's
                        Case{"unigram", "unigram", "", true, Expect::block_rule}}) {
    INFO(c.name);
    const auto t = io::read_sentencepiece_file(write_sentencepiece_model(dir, c.name, 400, c.type, c.extra));
    REQUIRE(t->cuts_at_spaces() == c.cuts);
    sentencepiece::SentencePieceProcessor sp;
    REQUIRE(sp.Load(dir.file(std::string(c.name) + ".model")).ok());
    std::vector<int> expected;
    if (c.ids == Expect::whole_text)
      REQUIRE(sp.Encode(text, &expected).ok());
    else
      expected = encode_by_the_block_rule(sp, text);
    const data::TokenArray cut = data::tokenize_files(*t, {file});
    REQUIRE(cut.size() == static_cast<int64_t>(expected.size()));
    std::vector<int32_t> ids(expected.size());
    cut.copy_to(0, cut.size(), ids.data());
    REQUIRE(std::equal(ids.begin(), ids.end(), expected.begin()));
  }
}

TEST_CASE("sentencepiece: words remembered give the whole text's ids, whatever the memory's bounds",
          "[sentencepiece][corpus]") {
  TempDir dir;
  // Words that repeat and words that do not, cut and uncut spaces: runs of spaces, spaces beside
  // punctuation, newlines and tabs, non-ASCII letters, digits, words longer than the longest
  // remembered, and texts that start or end with a space.
  const std::vector<std::string> parts = {"the", "fox", "Tom", "42", "a1", "ran", ",", ".", "!", "\"", "나는", "é",
                                          "ẞ", "🙂", "x_y", "antidisestablishmentarianism", "\t", "\n", "\n\n"};
  std::mt19937 rng(5);
  std::vector<std::string> texts = {"", " ", "a", " a", "a ", "a b", "a  b", " a b ", "Tom, ran. home 1 2 3"};
  for (int t = 0; t < 40; ++t) {
    std::string text;
    for (int w = 0, n = static_cast<int>(rng() % 300); w < n; ++w) {
      text += parts[rng() % parts.size()];
      if (rng() % 7 == 0) text += std::to_string(rng() % 1000);  // words seen once
      text += std::string(rng() % 5 == 0 ? 2 : rng() % 4 == 0 ? 0 : 1, ' ');
    }
    texts.push_back(text);
  }
  const std::string llama = "--normalization_rule_name=identity --allow_whitespace_only_pieces=true "
                            "--remove_extra_whitespaces=false --split_digits=true";
  // Without byte fallback unknown words give the unknown piece, and the library makes a run of
  // them one, across words (and across blocks: the file below).
  const std::string sparse = "--hard_vocab_limit=false ", no_bytes = "--byte_fallback=false ";
  const std::vector<std::pair<std::string, std::string>> models = {
      {"bpe", ""}, {"bpe", sparse + no_bytes}, {"char", sparse}, {"word", sparse}, {"word", sparse + no_bytes}};
  std::string unknown_words;
  while (unknown_words.size() < (size_t{1} << 17)) unknown_words += "qzxv jjkw 77 x_y\n";
  const std::string unknown_file = dir.write("unknown.txt", unknown_words);
  for (const auto& [type, extra] : models) {
    for (const std::string& normalizer : {std::string("--normalization_rule_name=nmt_nfkc"), llama}) {
      INFO(type << ", " << extra << normalizer);
      const std::string name = type + std::to_string(extra.size() + normalizer.size());
      const auto t = io::read_sentencepiece_file(write_sentencepiece_model(dir, name, 400, type, extra + normalizer));
      REQUIRE(t->cuts_change_nothing());
      const data::TokenArray cut = data::tokenize_files(*t, {unknown_file});  // 16 blocks
      std::vector<int32_t> cut_ids(static_cast<size_t>(cut.size()));
      cut.copy_to(0, cut.size(), cut_ids.data());
      REQUIRE(cut_ids == t->encode(unknown_words));
      // The default bounds, and bounds so small that memory starts afresh every few words.
      for (const data::detail::WordMemoryBounds bounds : {data::detail::WordMemoryBounds{},
                                                           data::detail::WordMemoryBounds{8, 5, 12}}) {
        data::detail::WordMemory memory(bounds);
        for (const std::string& text : texts) {
          INFO(text);
          std::vector<int32_t> remembered;
          memory.encode(*t, text, remembered, "text");
          REQUIRE(remembered == t->encode(text));
        }
      }
    }
  }
  // A unigram model's best path is its block's, not its words': it keeps encoding blocks whole.
  REQUIRE_FALSE(io::read_sentencepiece_file(write_sentencepiece_model(dir, "uni", 400, "unigram"))->cuts_change_nothing());
  REQUIRE_FALSE(io::read_sentencepiece_file(write_sentencepiece_model(dir, "suffix", 400, "bpe",
                                                                      "--treat_whitespace_as_suffix=true"))
                    ->cuts_change_nothing());
}
