#include <catch2/catch.hpp>

#include "tinygpt/data/bpe_tokenizer.h"
#include "tinygpt/data/char_tokenizer.h"
#include "tinygpt/data/tokenizer_record.h"
#include "tinygpt/data/utf8.h"

using namespace tinygpt::data;

namespace {
const std::vector<std::string> kTexts = {
    "hello world", "나는 오늘 학교에 갔다", "mixed: Ελληνικά, русский, 日本語, עברית and ASCII",
    "emoji 😀👍🏽 and flags 🇰🇷", "", "x", "tabs\tand\nnewlines\r\n and \x08 backspace"};
std::string all_texts() {
  std::string all;
  for (auto& t : kTexts) all += t + "\n";
  return all;
}
}  // namespace

TEST_CASE("char tokenizer: sorted code points, exact round trips", "[char]") {
  const CharTokenizer tok = CharTokenizer::from_text(all_texts());
  const auto& v = tok.code_points();
  REQUIRE(std::is_sorted(v.begin(), v.end()));
  REQUIRE(std::adjacent_find(v.begin(), v.end()) == v.end());
  for (const auto& t : kTexts) REQUIRE(tok.decode(tok.encode(t)) == t);
  const CharTokenizer abc = CharTokenizer::from_text("cabbage");
  REQUIRE(abc.code_points() == std::vector<int32_t>{'a', 'b', 'c', 'e', 'g'});
  REQUIRE(abc.encode("bag") == std::vector<int32_t>{1, 0, 4});
  REQUIRE(abc.token_bytes(2) == "c");
}

TEST_CASE("char tokenizer: unknown characters and ids are clear errors", "[char][errors]") {
  const CharTokenizer tok = CharTokenizer::from_text("ab\ncd");
  REQUIRE_THROWS_WITH(tok.encode("ab\ncz", "the prompt"),
                      Catch::Contains("'z' (U+007A) at line 2, column 2 of the prompt is not in the character vocabulary"));
  REQUIRE_THROWS_WITH(tok.encode("a한"), Catch::Contains("'한' (U+D55C) at line 1, column 2"));
  REQUIRE_THROWS_WITH(tok.decode(std::vector<int32_t>{0, 9}), Catch::Contains("token id 9 is out of range for vocab_size 5"));
  REQUIRE_THROWS_WITH(tok.encode("a\xFF"), Catch::Contains("not valid UTF-8 at byte offset 1"));
  REQUIRE_THROWS_WITH(CharTokenizer(std::vector<int32_t>{5, 3}), Catch::Contains("out of order"));
}

TEST_CASE("bpe: a hand-checkable corpus gives known merges", "[bpe]") {
  // "aaabdaaabac": (a,a) occurs 4 times (overlaps count) -> 256; then (a,b) and (256,a) both
  // occur twice: the tie goes to the smaller pair (a,b) -> 257; then (256,257) -> 258.
  BpeTrainer trainer(Split::none);
  trainer.add("aaabdaaabac");
  REQUIRE(trainer.train(259) == std::vector<Merge>{{'a', 'a'}, {'a', 'b'}, {256, 257}});
  const BpeTokenizer tok(trainer.train(259), Split::none);
  REQUIRE(tok.encode("aaabdaaabac") == std::vector<int32_t>{258, 'd', 258, 'a', 'c'});
  REQUIRE(tok.encode("aaaa") == std::vector<int32_t>{256, 256});  // leftmost first
  REQUIRE(tok.token_bytes(258) == "aaab");
  REQUIRE_THROWS_WITH(trainer.train(260), Catch::Contains("larger than the corpus allows") &&
                                             Catch::Contains("at most 259 tokens"));
  REQUIRE_THROWS_WITH(trainer.train(255), Catch::Contains("vocab size 255 is below 256"));
}

TEST_CASE("bpe: merges never cross chunk boundaries with the gpt2 split", "[bpe]") {
  // " a" pairs (space, a) are frequent, but "a a a" in chunks is "a", " a", " a": only (' ', 'a') merges.
  const BpeTokenizer tok = BpeTokenizer::train("a a a a a a", 257, Split::gpt2);
  REQUIRE(tok.merges() == std::vector<Merge>{{' ', 'a'}});
  const BpeTokenizer none = BpeTokenizer::train("a a a a a a", 258, Split::none);
  REQUIRE(none.merges().size() == 2);
}

TEST_CASE("bpe: exact round trips on every script, and encode(decode(ids)) == ids", "[bpe]") {
  for (Split split : {Split::gpt2, Split::none}) {
    const BpeTokenizer tok = BpeTokenizer::train(all_texts() + all_texts() + all_texts(), 300, split);
    for (const auto& t : kTexts) {
      INFO(t);
      const auto ids = tok.encode(t);
      REQUIRE(tok.decode(ids) == t);
      REQUIRE(tok.encode(tok.decode(ids)) == ids);
    }
  }
}

TEST_CASE("bpe: training is deterministic and a cut character decodes to U+FFFD", "[bpe]") {
  const std::string text = all_texts() + "나는 나는 나는 학교 학교";
  REQUIRE(BpeTokenizer::train(text, 270).merges() == BpeTokenizer::train(text, 270).merges());
  const BpeTokenizer bytes_only({}, Split::gpt2);
  const auto ids = bytes_only.encode("한");  // three byte tokens
  REQUIRE(ids.size() == 3);
  REQUIRE(bytes_only.decode(std::vector<int32_t>(ids.begin(), ids.begin() + 2)) == "\xEF\xBF\xBD");
  REQUIRE(bytes_only.decode(ids) == "한");
  REQUIRE_THROWS_WITH(bytes_only.decode(std::vector<int32_t>{256}), Catch::Contains("token id 256 is out of range"));
  REQUIRE_THROWS_WITH(BpeTokenizer({{1, 300}}, Split::gpt2), Catch::Contains("merge 0 joins (1, 300)"));
}

TEST_CASE("bpe: merges from a file that would blow up the tokens' text are refused", "[bpe][errors]") {
  std::vector<Merge> doubling = {{97, 97}};  // "aa", then each merge joins the last token with itself
  for (int32_t k = 1; k < 40; ++k) doubling.push_back({255 + k, 255 + k});
  REQUIRE_THROWS_WITH(BpeTokenizer(doubling, Split::none), Catch::Contains("the tokens' text exceeds 256 MiB"));
  REQUIRE_THROWS_WITH(BpeTokenizer({{97, 300}}, Split::none), Catch::Contains("merge 0 joins (97, 300)"));
  doubling.resize(20);  // 2^20 bytes in its longest token: allowed
  REQUIRE(BpeTokenizer(doubling, Split::none).token_bytes(275).size() == size_t{1} << 20);
}

TEST_CASE("tokenizer identity: equal for the same definition, different for any change, known digest", "[identity]") {
  const CharTokenizer abc = CharTokenizer::from_text("cabbage"), again({'a', 'b', 'c', 'e', 'g'});
  REQUIRE(abc.identity() == again.identity());
  REQUIRE(abc.identity().kind == TokenizerKind::chars);
  for (TokenizerKind kind : {TokenizerKind::chars, TokenizerKind::bpe, TokenizerKind::sentencepiece})
    REQUIRE(parse_tokenizer_kind(name(kind)) == kind);
  REQUIRE(std::string(name(TokenizerKind::chars)) == "char");  // the name files and flags use
  REQUIRE_FALSE(parse_tokenizer_kind("words").has_value());
  REQUIRE(abc.identity().vocab_size == 5);
  // SHA-256 of "tinygpt tokenizer\nchar\n5\n97\n98\n99\n101\n103\n" (sha256sum gives the same).
  REQUIRE(abc.identity().hex() == "e19a1cc14ea21d79ca7946ebfe9f269c57eb5fa9d9d78f84463fd83b1728e49b");
  REQUIRE_FALSE(abc.identity() == CharTokenizer({'a', 'b', 'c', 'e', 'h'}).identity());
  REQUIRE(abc.identity().describe().starts_with("a char tokenizer of 5 tokens (digest "));
  // BPE: merges, split, byte order and special tokens each change it; special tokens in another order do not.
  const std::vector<Merge> merges = {{'a', 'b'}, {256, 'c'}};
  const BpeTokenizer bpe(merges, Split::gpt2);
  REQUIRE(bpe.identity() == BpeTokenizer(merges, Split::gpt2).identity());
  REQUIRE_FALSE(bpe.identity() == BpeTokenizer({{'a', 'b'}, {256, 'd'}}, Split::gpt2).identity());
  REQUIRE_FALSE(bpe.identity() == BpeTokenizer(merges, Split::none).identity());
  std::vector<int32_t> swapped(256);
  for (int b = 0; b < 256; ++b) swapped[b] = b;
  REQUIRE(BpeTokenizer(merges, Split::gpt2, swapped).identity() == bpe.identity());  // the identity order is no order
  std::swap(swapped['x'], swapped['y']);
  REQUIRE_FALSE(BpeTokenizer(merges, Split::gpt2, swapped).identity() == bpe.identity());
  const BpeTokenizer with_eot(merges, Split::gpt2, {}, {{"<|endoftext|>", 258}, {"<|pad|>", 259}});
  REQUIRE(with_eot.identity() ==
          BpeTokenizer(merges, Split::gpt2, {}, {{"<|pad|>", 259}, {"<|endoftext|>", 258}}).identity());
  REQUIRE_FALSE(with_eot.identity() ==
                BpeTokenizer(merges, Split::gpt2, {}, {{"<|endoftext|>", 259}, {"<|pad|>", 258}}).identity());
  REQUIRE_FALSE(with_eot.identity() == bpe.identity());
  // SHA-256 of "tinygpt tokenizer\nbpe\n259\nsplit gpt2\nmerges 2\n97 98\n256 99\nbytes 0 1 … 255\nspecials 1\n
  // 258 13 <|endoftext|>\n" (Python's hashlib gives the same).
  REQUIRE(BpeTokenizer(merges, Split::gpt2, {}, {{"<|endoftext|>", 258}}).identity().hex() ==
          "c5139e12ea9fb3af5f43d08ad61b3d7c71ce5fbbf7c01745490095a408122a3a");
}

TEST_CASE("tokenizer: the document token is <|endoftext|> where a BPE has it, none for others", "[identity]") {
  REQUIRE_FALSE(CharTokenizer::from_text("abc").document_token());
  REQUIRE_FALSE(BpeTokenizer({{'a', 'b'}}, Split::gpt2).document_token());
  const BpeTokenizer with_eot({{'a', 'b'}}, Split::gpt2, {}, {{"<|pad|>", 257}, {"<|endoftext|>", 258}});
  REQUIRE(with_eot.document_token() == 258);
}

TEST_CASE("tokenizer record: each kind's record makes the same tokenizer again", "[identity]") {
  std::vector<int32_t> gpt2_order(256);
  for (int b = 0; b < 256; ++b) gpt2_order[static_cast<size_t>(b)] = 255 - b;
  const std::vector<std::shared_ptr<const Tokenizer>> tokenizers = {
      std::make_shared<CharTokenizer>(CharTokenizer::from_text(all_texts())),
      std::make_shared<BpeTokenizer>(BpeTokenizer::train(all_texts(), 266, Split::none)),
      std::make_shared<BpeTokenizer>(std::vector<Merge>{{'a', 'b'}, {256, 'c'}}, Split::gpt2, gpt2_order,
                                     std::vector<SpecialToken>{{"<|endoftext|>", 300}, {"<|pad|>", 258}})};
  for (const auto& t : tokenizers) {
    const TokenizerRecord r = t->record();
    REQUIRE(r.kind == t->kind());
    const std::shared_ptr<const Tokenizer> again = make_tokenizer(r);
    REQUIRE(again->identity() == t->identity());
    for (const std::string& text : kTexts) REQUIRE(again->encode(text) == t->encode(text));
  }
  const TokenizerRecord bpe = tokenizers.back()->record();
  REQUIRE(bpe.byte_ids == gpt2_order);
  REQUIRE(bpe.specials.size() == 2);
  REQUIRE(bpe.code_points.empty());
  REQUIRE(bpe.model_proto.empty());
  // Fields that do not make a tokenizer are refused by the kind's own checks.
  TokenizerRecord bad = bpe;
  bad.merges.push_back({'a', 9999});
  REQUIRE_THROWS_AS(make_tokenizer(bad), std::invalid_argument);
  REQUIRE_THROWS_WITH(make_tokenizer({.kind = TokenizerKind::sentencepiece}), Catch::Contains("io::load_sentencepiece"));
}
