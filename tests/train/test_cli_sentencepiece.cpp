// SentencePiece tokenizers through the executable: a Llama-shaped run on a SentencePiece model, a
// checkpoint that needs no other file, and prepare's shards with BOS before each document.
#include <catch2/catch.hpp>

#include <filesystem>

#include "cli_run.h"
#include "sentencepiece_model.h"
#include "temp_files.h"

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

TEST_CASE("cli: prepare with a SentencePiece model: BOS before each document, training from the shards",
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
  REQUIRE(token(0) == 1);  // <s>, then a.txt's ids
  const size_t n = (shard.size() - 1024) / 2;
  size_t bos = 0;
  for (size_t i = 0; i < n; ++i) bos += token(i) == 1;
  REQUIRE(bos == 2);  // one per document
  Result trained = run("train --data " + dir.file("shards") + " --iters 3 --layers 1 --heads 2 --embd 16 --block 16"
                       " --batch 2 --eval-every 3 --eval-iters 1 --threads 1 --out " + dir.file("run.h5"));
  INFO(trained.output);
  REQUIRE(trained.exit_code == 0);
  REQUIRE_THAT(trained.output, Catch::Contains("sentencepiece tokenizer, 400 tokens"));
}
