// SentencePiece tokenizers: the ids and text of the SentencePiece library itself, token bytes that
// rebuild the text, and model bytes that are not a model refused with the reason.
#include <catch2/catch.hpp>
#include <sentencepiece_processor.h>

#include <fstream>
#include <iterator>

#include "sentencepiece_model.h"
#include "temp_files.h"
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
    REQUIRE(std::string(t->kind()) == "sentencepiece");
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
      // The pieces' bytes, joined, are the decoded text (with the dummy-prefix space kept).
      std::string joined;
      for (int32_t id : got) joined += t->token_bytes(id);
      if (!decoded.empty()) REQUIRE(joined.substr(joined[0] == ' ' && decoded[0] != ' ' ? 1 : 0) == decoded);
    }
  }
  const auto t = io::read_sentencepiece_file(dir.file("bpe.model"));
  REQUIRE(t->token_bytes(t->bos_id()).empty());  // control pieces stand for no text
  // BOS stands between documents; the model's bytes are its identity.
  REQUIRE(t->document_token() == t->bos_id());
  REQUIRE(t->identity() == io::read_sentencepiece_file(dir.file("bpe.model"))->identity());
  REQUIRE_FALSE(t->identity() == io::read_sentencepiece_file(dir.file("unigram.model"))->identity());
  REQUIRE(t->identity().kind == "sentencepiece");
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
