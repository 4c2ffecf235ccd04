// SentencePiece tokenizers through the executable: a Llama-shaped run on a SentencePiece model, a
// checkpoint that needs no other file, and prepare's shards with BOS before each document.
#include <catch2/catch.hpp>

#include <sentencepiece_processor.h>

#include <cmath>
#include <cstring>
#include <filesystem>

#include "cli_run.h"
#include "reference/llama2c_file.h"
#include "sentencepiece_model.h"
#include "temp_files.h"
#include "tinygpt/data/json.h"

using namespace tinygpt::testing;
namespace fs = std::filesystem;

TEST_CASE("cli: --tokenizer sentencepiece trains, and the checkpoint carries the model", "[cli][sentencepiece]") {
  TempDir dir;
  const std::string model = write_sentencepiece_model(dir);
  const std::string text = dir.write("stories.txt", sentencepiece_text());
  const std::string ckpt = dir.file("sp.h5");
  const std::string common = " --layers 1 --heads 4 --embd 32 --block 32 --batch 4 --eval-every 5 --eval-iters 2"
                             " --threads 1 --arch llama --kv-heads 2";
  Result trained = run("train --data " + text + " --tokenizer sentencepiece --tokenizer-model " + model +
                       " --iters 5 --out " + ckpt + common);
  INFO(trained.output);
  REQUIRE(trained.exit_code == 0);
  REQUIRE_THAT(trained.output, Catch::Contains("sentencepiece tokenizer, 400 tokens"));
  fs::remove(model);  // the checkpoint holds the model's bytes
  REQUIRE_THAT(run("info --ckpt " + ckpt).output, Catch::Contains("tokenizer    sentencepiece, 400 tokens"));
  const Result sample = run("sample --ckpt " + ckpt + " --tokens 12 --prompt Once");
  INFO(sample.output);
  REQUIRE(sample.exit_code == 0);
  REQUIRE(run("eval --ckpt " + ckpt + " --data " + text).exit_code == 0);
  REQUIRE(run("train --resume " + ckpt + " --iters 7").exit_code == 0);
  // The flags go together.
  const Result alone = run("train --data " + text + " --tokenizer sentencepiece --out " + dir.file("x.h5"));
  REQUIRE(alone.exit_code == 1);
  REQUIRE_THAT(alone.output, Catch::Contains("--tokenizer sentencepiece needs --tokenizer-model"));
  const Result junk = run("train --data " + text + " --tokenizer sentencepiece --tokenizer-model " +
                          dir.write("junk.model", "junk") + " --out " + dir.file("y.h5"));
  REQUIRE(junk.exit_code == 1);
  REQUIRE_THAT(junk.output, Catch::Contains("junk.model' is not a SentencePiece model"));
}

TEST_CASE("cli: prepare with a SentencePiece model: BOS between documents, training from the shards",
          "[cli][sentencepiece][shards]") {
  TempDir dir;
  const std::string model = write_sentencepiece_model(dir);
  const std::string a = dir.write("a.txt", sentencepiece_text()), b = dir.write("b.txt", "Tom ran home.\n");
  Result prepared = run("prepare --tokenizer sentencepiece --tokenizer-model " + model + " --data " + a + " " + b +
                        " --val-fraction 0 --out " + dir.file("shards"));
  INFO(prepared.output);
  REQUIRE(prepared.exit_code == 0);
  const std::string shard = read_file(dir.file("shards/tinygpt_train_000000.bin"));
  auto token = [&](size_t i) {
    return static_cast<int>(static_cast<unsigned char>(shard[1024 + 2 * i]) |
                            static_cast<unsigned char>(shard[1024 + 2 * i + 1]) << 8);
  };
  // a.txt's ids, <s>, b.txt's ids: the SentencePiece library's own, each file encoded whole.
  sentencepiece::SentencePieceProcessor sp;
  REQUIRE(sp.Load(model).ok());
  std::vector<int> expected = sp.EncodeAsIds(sentencepiece_text()), second = sp.EncodeAsIds("Tom ran home.\n");
  expected.push_back(sp.bos_id());
  expected.insert(expected.end(), second.begin(), second.end());
  const size_t n = (shard.size() - 1024) / 2;
  REQUIRE(n == expected.size());
  for (size_t i = 0; i < n; ++i) REQUIRE(token(i) == expected[i]);
  Result trained = run("train --data " + dir.file("shards") + " --iters 3 --layers 1 --heads 2 --embd 16 --block 16"
                       " --batch 2 --eval-every 3 --eval-iters 1 --threads 1 --out " + dir.file("run.h5"));
  INFO(trained.output);
  REQUIRE(trained.exit_code == 0);
  REQUIRE_THAT(trained.output, Catch::Contains("sentencepiece tokenizer, 400 tokens"));
}

TEST_CASE("cli: bits per byte counts the text's bytes, also through a tokenizer that loses characters",
          "[cli][sentencepiece][eval]") {
  TempDir dir;
  // No byte fallback: characters the model never saw become <unk> (" ⁇ " when spelled), and its
  // normalizer folds runs of spaces into one.
  const std::string model = write_sentencepiece_model(dir, "lossy", 400, "bpe", "--byte_fallback=false");
  std::string text;
  while (text.size() < 30000) text += "나는 오늘 학교에서 친구를 만났다.   ẞ ꙮ 뷁\n";
  const std::string file = dir.write("ko.txt", text);
  sentencepiece::SentencePieceProcessor sp;
  REQUIRE(sp.Load(model).ok());
  REQUIRE(sp.DecodeIds(sp.EncodeAsIds(text)).size() < text.size());  // the tokens do not spell the text
  const std::string ckpt = dir.file("run.h5");
  Result trained = run("train --data " + file + " --tokenizer sentencepiece --tokenizer-model " + model +
                       " --iters 2 --layers 1 --heads 2 --embd 16 --block 16 --batch 2 --eval-iters 1 --threads 1"
                       " --out " + ckpt);
  INFO(trained.output);
  REQUIRE(trained.exit_code == 0);
  const Result r = run("eval --json --ckpt " + ckpt + " --data " + file);
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const auto v = tinygpt::data::json::parse(r.output, "eval --json");
  const auto number = [&](const char* key) { return v.find(key)->number; };
  REQUIRE(number("bytes") == static_cast<double>(text.size()));
  REQUIRE(v.find("bytes_of")->text == "text");
  REQUIRE(number("bits_per_byte") ==
          Approx(number("loss") * number("tokens") / (static_cast<double>(text.size()) * std::log(2.0))).epsilon(1e-5));
  // The same text as shards: no text is read, so the bytes are the ones the tokens spell, and fewer.
  REQUIRE(run("prepare --tokenizer sentencepiece --tokenizer-model " + model + " --data " + file +
              " --val-fraction 0.5 --out " + dir.file("shards")).exit_code == 0);
  const Result shards = run("eval --json --ckpt " + ckpt + " --data " + dir.file("shards") + " --split train");
  INFO(shards.output);
  REQUIRE(shards.exit_code == 0);
  const auto w = tinygpt::data::json::parse(shards.output, "eval --json");
  REQUIRE(w.find("bytes_of")->text == "tokens");
  REQUIRE(w.find("bytes")->number > 0);
  REQUIRE_THAT(run("eval --ckpt " + ckpt + " --data " + dir.file("shards")).output,
               Catch::Contains("(spelled by the shards' tokens)"));
}

TEST_CASE("cli: a stories260K-shaped model: its exported llama2.c file scores the same loss in an independent "
          "implementation, and it imports back from llama2.c's and Hugging Face's files",
          "[cli][sentencepiece][llama2c][slow]") {
  TempDir dir;
  const std::string model = write_sentencepiece_model(dir, "tok512", 512);
  const std::string text = dir.write("stories.txt", sentencepiece_text());
  const std::string ckpt = dir.file("stories260K.h5");
  // llama2.c's stories260K: dim 64, 5 layers, 8 heads, 4 key/value heads, hidden 172, vocab 512, seq 512.
  Result trained = run("train --data " + text + " --tokenizer sentencepiece --tokenizer-model " + model +
                       " --arch llama --layers 5 --heads 8 --kv-heads 4 --embd 64 --ffn-hidden 172 --block 512"
                       " --batch 2 --iters 6 --eval-every 6 --eval-iters 1 --lr 3e-3 --threads 2 --out " + ckpt);
  INFO(trained.output);
  REQUIRE(trained.exit_code == 0);
  const Result exported = run("export --ckpt " + ckpt + " --format llama2c --out " + dir.file("model.bin"));
  INFO(exported.output);
  REQUIRE(exported.exit_code == 0);
  REQUIRE(fs::exists(dir.file("tokenizer.bin")));
  // The loss of a held-out text: tinygpt's eval against the evaluation rule in double on the file's tensors,
  // with the SentencePiece library's own ids.
  std::string held_out;
  for (int i = 0; i < 12; ++i) held_out += "The fox named Tom ate " + std::to_string(i * 13) + " apples and slept.\n";
  const std::string eval_text = dir.write("held_out.txt", held_out);
  const Result scored = run("eval --json --ckpt " + ckpt + " --data " + eval_text);
  INFO(scored.output);
  REQUIRE(scored.exit_code == 0);
  const double ours = tinygpt::data::json::parse(scored.output, "eval").find("loss")->number;
  sentencepiece::SentencePieceProcessor sp;
  REQUIRE(sp.Load(model).ok());
  std::vector<int> ids;
  REQUIRE(sp.Encode(held_out, &ids).ok());
  const double reference = plain_eval_loss(read_llama2c_file(dir.file("model.bin")), std::vector<int32_t>(ids.begin(), ids.end()));
  REQUIRE(ours == Approx(reference).epsilon(1e-5));
  // llama2.c's tokenizer.bin: the longest piece, then (score, length, bytes) per id.
  const std::string bin = read_file(dir.file("tokenizer.bin"));
  size_t at = 4;
  for (int id = 0; id < sp.GetPieceSize(); ++id) {
    float score = 0;
    uint32_t length = 0;
    std::memcpy(&score, bin.data() + at, 4);
    std::memcpy(&length, bin.data() + at + 4, 4);
    std::string piece = bin.substr(at + 8, length);
    at += 8 + length;
    std::string want = id == sp.bos_id() ? "\n<s>\n" : id == sp.eos_id() ? "\n</s>\n" : sp.IdToPiece(id);
    for (size_t p; (p = want.find("\xE2\x96\x81")) != std::string::npos;) want.replace(p, 3, " ");
    INFO("id " << id);
    REQUIRE(piece == want);
    REQUIRE(score == sp.GetScore(id));
  }
  REQUIRE(at == bin.size());
  // Imported back with its SentencePiece model: the same loss to the last digit.
  const Result imported = run("import --from " + dir.file("model.bin") + " --tokenizer-model " + model + " --out " +
                              dir.file("back.h5"));
  INFO(imported.output);
  REQUIRE(imported.exit_code == 0);
  REQUIRE(run("eval --json --ckpt " + dir.file("back.h5") + " --data " + eval_text).output == scored.output);
  // Through Hugging Face's Llama layout and back: the same loss to the last digit.
  const Result hf = run("export --ckpt " + ckpt + " --out " + dir.file("hf"));
  INFO(hf.output);
  REQUIRE_THAT(hf.output, Catch::Contains("(LlamaForCausalLM) and model.safetensors and tokenizer.model"));
  REQUIRE(run("import --from " + dir.file("hf") + " --out " + dir.file("hf.h5")).exit_code == 0);
  REQUIRE(run("eval --json --ckpt " + dir.file("hf.h5") + " --data " + eval_text).output == scored.output);
  const Result no_model = run("import --from " + dir.file("model.bin") + " --out " + dir.file("x.h5"));
  REQUIRE_THAT(no_model.output, Catch::Contains("give --tokenizer-model"));
  const Result again = run("export --ckpt " + dir.file("back.h5") + " --format llama2c --out " + dir.file("model.bin"));
  REQUIRE_THAT(again.output, Catch::Contains("model.bin' is a llama2.c model file: give --force to replace it"));
  // Never its own input, never a file of another kind, --force or not.
  const Result own = run("export --ckpt " + dir.file("back.h5") + " --format llama2c --force --out " + dir.file("back.h5"));
  REQUIRE_THAT(own.output, Catch::Contains("which this command reads: a command never replaces its own input"));
  const Result over_text = run("export --ckpt " + dir.file("back.h5") + " --format llama2c --force --out " + eval_text);
  REQUIRE_THAT(over_text.output, Catch::Contains("is a text file, not a llama2.c model or tokenizer file: not replacing it"));
  REQUIRE(fs::exists(dir.file("back.h5")));
}
