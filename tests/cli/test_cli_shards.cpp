// Token shards end to end: tinygpt prepare writes llm.c's format and a tokenizer; train and eval
// read the shards in place, with the same numbers as from the text; llm.c's GPT-2 shards train with
// the tokenizer of an imported GPT-2.
#include <catch2/catch.hpp>

#include <cstring>
#include <fmt/format.h>

#include <filesystem>
#include <map>
#include <string>

#include "cli_run.h"
#include "gpt2_dir.h"
#include "sentencepiece_model.h"
#include "temp_files.h"
#include "tinygpt/data/json.h"

using namespace tinygpt::testing;
namespace json = tinygpt::data::json;
namespace fs = std::filesystem;

namespace {

json::Value json_of(const Result& r) {
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  return json::parse(r.output, "output");
}

std::string field(const json::Value& v, const char* key) {
  const json::Value* f = v.find(key);
  REQUIRE(f != nullptr);
  return f->text;
}

size_t data_files(const std::string& dir) {
  size_t n = 0;
  for (const auto& entry : fs::directory_iterator(dir)) n += entry.path().extension() == ".bin";
  return n;
}

const std::string kModel = " --layers 1 --heads 2 --embd 16 --block 16 --batch 4 --eval-every 10 --eval-iters 2 --threads 1";

}  // namespace

TEST_CASE("cli: prepare writes llm.c shards, and train and eval read them as they would the text", "[cli][shards]") {
  TempDir dir;
  std::string text;
  for (int i = 0; i < 60; ++i) text += "To be, or not to be, that is the question. Whether 'tis nobler.\n";
  const std::string corpus = dir.write("corpus.txt", text), shards = dir.file("sh");
  Result prepared = run("prepare --data " + corpus + " --out " + shards + " --shard-tokens 1000");
  INFO(prepared.output);
  REQUIRE(prepared.exit_code == 0);
  const int64_t n_val = static_cast<int64_t>(0.1 * static_cast<double>(text.size()));
  REQUIRE_THAT(prepared.output, Catch::Contains(fmt::format("{} validation tokens in 1", n_val)));
  const std::string first = read_file(shards + "/tinygpt_train_000000.bin");
  REQUIRE(first.size() == 1024 + 2 * 1000);
  REQUIRE(first.substr(0, 12) == std::string("\x88\xd8\x34\x01\x01\x00\x00\x00\xe8\x03\x00\x00", 12));  // 20240520, 1, 1000
  // The shard the hold-out cuts is cut short in place: its header counts what is left, and nothing follows.
  const std::string cut = read_file(shards + "/tinygpt_train_000003.bin");
  const int64_t left = static_cast<int64_t>(text.size()) - n_val - 3000;
  REQUIRE(static_cast<int64_t>(cut.size()) == 1024 + 2 * left);
  int32_t counted = 0;
  std::memcpy(&counted, cut.data() + 8, sizeof counted);
  REQUIRE(counted == left);
  REQUIRE(fs::exists(shards + "/tokenizer.h5"));
  // The same run from the shards and from the text: every number the same.
  REQUIRE(run("train --data " + shards + " --iters 20 --out " + dir.file("a.h5") + kModel).exit_code == 0);
  REQUIRE(run("train --data " + corpus + " --iters 20 --out " + dir.file("b.h5") + kModel).exit_code == 0);
  const json::Value a = *json_of(run("info --json --ckpt " + dir.file("a.h5"))).find("training"),
                    b = *json_of(run("info --json --ckpt " + dir.file("b.h5"))).find("training");
  REQUIRE(field(a, "train_loss") == field(b, "train_loss"));
  REQUIRE(field(a, "val_loss") == field(b, "val_loss"));
  REQUIRE(a.find("data_files")->array->size() == 5);  // four train shards and one val
  // Half held out: whole train shards give way to val shards, and the numbers stay the text's.
  Result half = run("prepare --data " + corpus + " --out " + dir.file("half") + " --shard-tokens 500 --val-fraction 0.5");
  INFO(half.output);
  REQUIRE(half.exit_code == 0);
  // One line per shard the folder holds once the hold-out is done, and totals that agree with them.
  int64_t listed[2] = {0, 0};
  size_t lines = 0;
  for (size_t at = 0; (at = half.output.find(" shard ", at)) != std::string::npos; ++at) {
    const size_t start = half.output.rfind('\n', at) + 1, colon = half.output.find(": ", at);
    const std::string path = half.output.substr(at + 7, colon - at - 7);
    REQUIRE(fs::exists(path));
    listed[half.output.compare(start, 3, "val") == 0] += std::stoll(half.output.substr(colon + 2));
    ++lines;
  }
  REQUIRE(lines == data_files(dir.file("half")));
  REQUIRE_THAT(half.output, Catch::Contains(fmt::format("{} training tokens in 4 shards, {} validation tokens in 4 shards",
                                                        listed[0], listed[1])));
  REQUIRE(listed[0] + listed[1] == static_cast<int64_t>(text.size()));
  REQUIRE(run("train --data " + dir.file("half") + " --iters 20 --out " + dir.file("h1.h5") + kModel).exit_code == 0);
  // The folder has val shards: nothing to hold out, so --val-fraction is refused, not ignored.
  REQUIRE_THAT(run("train --data " + dir.file("half") + " --iters 20 --val-fraction 0.5 --out " + dir.file("h3.h5") + kModel)
                   .output,
               Catch::Contains("--val-fraction cannot apply: every --data folder has val shards"));
  REQUIRE(run("train --data " + corpus + " --iters 20 --val-fraction 0.5 --out " + dir.file("h2.h5") + kModel).exit_code ==
          0);
  REQUIRE(field(*json_of(run("info --json --ckpt " + dir.file("h1.h5"))).find("training"), "val_loss") ==
          field(*json_of(run("info --json --ckpt " + dir.file("h2.h5"))).find("training"), "val_loss"));
  // eval --data DIR scores the val shards: the text's last tokens.
  const std::string val_text = dir.write("val.txt", text.substr(text.size() - static_cast<size_t>(n_val)));
  const json::Value from_shards = json_of(run("eval --json --ckpt " + dir.file("a.h5") + " --data " + shards)),
                    from_text = json_of(run("eval --json --ckpt " + dir.file("a.h5") + " --data " + val_text));
  REQUIRE(field(from_shards, "loss") == field(from_text, "loss"));
  REQUIRE(field(from_shards, "tokens") == field(from_text, "tokens"));
  // Resume finds the shards; moved, they are found again by --data, the same bytes.
  fs::rename(shards, dir.file("moved"));
  REQUIRE_THAT(run("train --resume " + dir.file("a.h5") + " --iters 24").output, Catch::Contains("is not there any more"));
  Result resumed = run("train --resume " + dir.file("a.h5") + " --iters 24 --data " + dir.file("moved"));
  INFO(resumed.output);
  REQUIRE(resumed.exit_code == 0);
  REQUIRE_THAT(resumed.output, Catch::Contains("files moved, the same bytes"));
  // A folder that already holds shards is not replaced without --force.
  Result again = run("prepare --data " + corpus + " --out " + dir.file("moved"));
  REQUIRE(again.exit_code == 1);
  REQUIRE_THAT(again.output, Catch::Contains("already holds shards or a tokenizer.h5 (a folder of token shards (4 train "
                                             "and 1 val)): give --force"));
  // Its own input, never: --tokenizer-from the folder it writes.
  REQUIRE_THAT(run("prepare --data " + corpus + " --tokenizer-from " + dir.file("moved") + " --out " + dir.file("moved") +
                   " --force").output,
               Catch::Contains("which this command reads: a command never replaces its own input"));
  // Flags that would be ignored are refused.
  REQUIRE_THAT(run("prepare --data " + corpus + " --vocab-size 300 --out " + dir.file("v")).output,
               Catch::Contains("--vocab-size is the size of the BPE vocabulary"));
  REQUIRE_THAT(run("prepare --data " + corpus + " --val-data " + corpus + " --val-fraction 0.2 --out " + dir.file("v")).output,
               Catch::Contains("--val-fraction holds out training tokens"));
  REQUIRE_THAT(run("prepare --data " + dir.file("moved") + " --out " + dir.file("v")).output,
               Catch::Contains("prepare tokenizes text files"));
  REQUIRE_FALSE(fs::exists(dir.file("v")));
  // One writer per folder: a second prepare waits for none.
  Result held = shell("flock " + dir.file("moved") + ".tinygpt-lock -c '" + TINYGPT_BINARY + " prepare --data " + corpus +
                      " --out " + dir.file("moved") + " --force 2>&1'");
  REQUIRE(held.exit_code == 1);
  REQUIRE_THAT(held.output, Catch::Contains("moved' is being written by another tinygpt run"));
  REQUIRE(run("prepare --data " + corpus + " --out " + dir.file("moved") + " --force").exit_code == 0);
  // The folder tokenized anew by another tokenizer: the run that read it is told so, not that its text changed.
  REQUIRE(run("prepare --data " + corpus + " --tokenizer bpe --vocab-size 260 --out " + dir.file("moved") + " --force")
              .exit_code == 0);
  const Result retokenized = run("train --resume " + dir.file("a.h5") + " --iters 26");
  REQUIRE(retokenized.exit_code == 1);
  REQUIRE_THAT(retokenized.output, Catch::Contains("moved' were made by a bpe tokenizer of 260 tokens") &&
                                       Catch::Contains("but the checkpoint '" + dir.file("a.h5") + "' has a char tokenizer"));
  REQUIRE_THAT(run("eval --ckpt " + dir.file("a.h5") + " --data " + dir.file("moved")).output,
               Catch::Contains("were made by a bpe tokenizer of 260 tokens"));
  // Whatever holds a tokenizer tokenizes: the folder's tokenizer.h5, the folder itself.
  REQUIRE(json_of(run("tokens --json --ckpt " + dir.file("moved/tokenizer.h5") + " --text 'To be'")).find("ids")->array->size() <= 5);
  REQUIRE(run("tokens --ckpt " + dir.file("moved") + " --text 'To be'").exit_code == 0);
  REQUIRE(run("prepare --data " + corpus + " --out " + dir.file("moved") + " --force").exit_code == 0);
  // Folders without shards, or shards without a tokenizer.
  fs::create_directory(dir.file("empty"));
  REQUIRE_THAT(run("train --data " + dir.file("empty") + " --out " + dir.file("e.h5") + kModel).output,
               Catch::Contains("holds no training shards"));
  fs::remove(dir.file("moved/tokenizer.h5"));
  REQUIRE_THAT(run("train --data " + dir.file("moved") + " --out " + dir.file("t.h5") + kModel).output,
               Catch::Contains("holds token shards but no tokenizer.h5: give --tokenizer-from"));
}

TEST_CASE("cli: GPT-2-tokenized shards without a tokenizer file train with --tokenizer-from", "[cli][shards][gpt2]") {
  TempDir dir;
  REQUIRE(write_gpt2_dir(dir.file("gpt2"), 1, 16, 2, 16, 5));
  const std::string gpt2 = dir.file("gpt2.h5");
  REQUIRE(run("import --from " + dir.file("gpt2") + " --out " + gpt2).exit_code == 0);
  std::string doc;
  for (int i = 0; i < 40; ++i) doc += "Once upon a time there was a tiny model.\n";
  const std::string a = dir.write("a.txt", doc), b = dir.write("b.txt", doc + "The end.\n");
  Result prepared = run("prepare --tokenizer-from " + gpt2 + " --data " + a + " " + b + " --out " + dir.file("g"));
  INFO(prepared.output);
  REQUIRE(prepared.exit_code == 0);
  fs::remove(dir.file("g/tokenizer.h5"));  // as llm.c's scripts leave them
  // <|endoftext|> (50256) between the two documents, as in training from the two files.
  const std::string shard = read_file(dir.file("g/tinygpt_train_000000.bin"));
  REQUIRE(shard.substr(1024, 2) != std::string("\x50\xc4", 2));
  size_t separators = 0;
  for (size_t at = 1024; at + 1 < shard.size(); at += 2) separators += shard.substr(at, 2) == std::string("\x50\xc4", 2);
  REQUIRE(separators == 1);
  Result trained = run("train --data " + dir.file("g") + " --tokenizer-from " + gpt2 + " --out " + dir.file("m.h5") +
                       " --layers 1 --heads 2 --embd 16 --block 16 --batch 2 --iters 3 --eval-every 3 --eval-iters 1 "
                       "--threads 1");
  INFO(trained.output);
  REQUIRE(trained.exit_code == 0);
  REQUIRE_THAT(trained.output, Catch::Contains("bpe tokenizer, 50257 tokens"));
  Result tuned = run("train --data " + dir.file("g") + " --init-from " + gpt2 + " --out " + dir.file("ft.h5") +
                     " --batch 2 --iters 2 --eval-every 2 --eval-iters 1 --threads 1");
  INFO(tuned.output);
  REQUIRE(tuned.exit_code == 0);
}

TEST_CASE("cli: text files and their shards give the same tokens and numbers for every tokenizer, documents "
          "separated by the document token", "[cli][shards][documents]") {
  TempDir dir;
  const std::string a = dir.write("a.txt", sentencepiece_text());
  std::string other;
  for (int i = 0; i < 300; ++i)  // 13 KB: cut into blocks
    other += "Another story, number " + std::to_string(i) + ", about an owl.\n";
  const std::string b = dir.write("b.txt", other);
  REQUIRE(write_gpt2_dir(dir.file("gpt2"), 1, 16, 2, 16, 5));
  const std::string sp = write_sentencepiece_model(dir, "sp", 400),
                    unigram = write_sentencepiece_model(dir, "unigram", 400, "unigram");
  struct Case {
    std::string name, flags;
    int64_t document;  // the document token, -1 for none
  };
  for (const Case& c : {Case{"char", "--tokenizer char", -1}, Case{"bpe", "--tokenizer bpe --vocab-size 300", -1},
                        Case{"gpt2", "--tokenizer-from " + dir.file("gpt2"), 50256},
                        Case{"sp", "--tokenizer sentencepiece --tokenizer-model " + sp, 1},
                        Case{"unigram", "--tokenizer sentencepiece --tokenizer-model " + unigram, 1}}) {
    INFO(c.name);
    const std::string shards = dir.file(c.name), from_text = dir.file(c.name + "-text.h5"),
                      from_shards = dir.file(c.name + "-shards.h5");
    Result prepared = run("prepare --data " + a + " " + b + " " + c.flags + " --out " + shards);
    INFO(prepared.output);
    REQUIRE(prepared.exit_code == 0);
    // The shards' tokens, train then val, are a.txt's, the document token, b.txt's.
    auto ids_of = [&](const std::string& file) {
      const json::Value v = json_of(run("tokens --json --ckpt " + shards + " --file " + file));
      std::vector<int64_t> ids;
      for (const json::Value& id : *v.find("ids")->array) ids.push_back(static_cast<int64_t>(id.number));
      return ids;
    };
    std::vector<int64_t> expected = ids_of(a), second = ids_of(b);
    if (c.document >= 0) expected.push_back(c.document);
    expected.insert(expected.end(), second.begin(), second.end());
    std::vector<int64_t> stored;
    for (const char* split : {"train", "val"})
      for (const auto& entry : fs::directory_iterator(shards)) {
        const std::string name = entry.path().filename().string();
        if (name.find(std::string("_") + split + "_") == std::string::npos) continue;
        const std::string bytes = read_file(entry.path().string());
        for (size_t at = 1024; at + 1 < bytes.size(); at += 2)
          stored.push_back(static_cast<uint8_t>(bytes[at]) | static_cast<uint8_t>(bytes[at + 1]) << 8);
      }
    REQUIRE(stored == expected);
    // Training from the text and from its shards: the same numbers.
    const std::string model = " --layers 1 --heads 2 --embd 16 --block 16 --batch 2 --iters 6 --eval-every 3 "
                              "--eval-iters 2 --threads 1";
    REQUIRE(run("train --data " + a + " " + b + " " + c.flags + model + " --out " + from_text).exit_code == 0);
    REQUIRE(run("train --data " + shards + model + " --out " + from_shards).exit_code == 0);
    const json::Value x = *json_of(run("info --json --ckpt " + from_text)).find("training"),
                      y = *json_of(run("info --json --ckpt " + from_shards)).find("training");
    REQUIRE(field(x, "train_loss") == field(y, "train_loss"));
    REQUIRE(field(x, "val_loss") == field(y, "val_loss"));
  }
}

TEST_CASE("cli: several shard folders, mixed by --data-weights, resume exactly, and a folder as --val-data",
          "[cli][shards][weights]") {
  TempDir dir;
  std::string one, two;
  for (int i = 0; i < 80; ++i) one += "To be, or not to be, that is the question.\n";
  for (int i = 0; i < 80; ++i) two += "Whether 'tis nobler in the mind to suffer.\n";
  const std::string a = dir.write("a.txt", one), b = dir.write("b.txt", two);
  REQUIRE(run("prepare --data " + a + " " + b + " --out " + dir.file("both")).exit_code == 0);  // one vocabulary
  for (const char* name : {"A", "B"})
    REQUIRE(run("prepare --data " + (name == std::string("A") ? a : b) + " --tokenizer-from " + dir.file("both") +
                " --out " + dir.file(name))
                .exit_code == 0);
  const std::string folders = dir.file("A") + " " + dir.file("B");
  const std::string model = " --layers 1 --heads 2 --embd 16 --block 16 --batch 4 --eval-every 5 --eval-iters 2 "
                            "--lr-decay-iters 10 --warmup 2 --threads 1";
  auto training = [&](const std::string& ckpt) { return *json_of(run("info --json --ckpt " + ckpt)).find("training"); };
  REQUIRE(run("train --data " + folders + " --data-weights 0.8,0.2 --iters 10" + model + " --out " + dir.file("w.h5"))
              .exit_code == 0);
  REQUIRE(run("train --data " + folders + " --data-weights 0.8,0.2 --iters 5" + model + " --out " + dir.file("r.h5"))
              .exit_code == 0);
  REQUIRE(run("train --resume " + dir.file("r.h5") + " --iters 10").exit_code == 0);
  const json::Value straight = training(dir.file("w.h5")), resumed = training(dir.file("r.h5"));
  REQUIRE(field(straight, "train_loss") == field(resumed, "train_loss"));
  REQUIRE(field(straight, "val_loss") == field(resumed, "val_loss"));
  REQUIRE(straight.find("settings")->find("data-weights")->text == "0.8,0.2");
  // End to end (no weights) is another run; weights stay as stored on resume.
  REQUIRE(run("train --data " + folders + " --iters 10" + model + " --out " + dir.file("e.h5")).exit_code == 0);
  REQUIRE(field(training(dir.file("e.h5")), "train_loss") != field(straight, "train_loss"));
  // A mix validated on a text, or on a folder, of its own.
  for (const std::string& val : {a, dir.file("A")}) {
    const Result mixed = run("train --data " + folders + " --data-weights 0.8,0.2 --val-data " + val + " --iters 2" + model +
                             " --force --out " + dir.file("m.h5"));
    INFO(mixed.output);
    REQUIRE(mixed.exit_code == 0);
  }
  REQUIRE_THAT(run("train --resume " + dir.file("r.h5") + " --iters 12 --data-weights 0.5,0.5").output,
               Catch::Contains("--data-weights cannot change on --resume"));
  REQUIRE_THAT(run("train --data " + folders + " --data-weights 1" + model + " --out " + dir.file("x.h5")).output,
               Catch::Contains("--data-weights has 1 weights for 2 --data folders"));
  REQUIRE_THAT(run("train --data " + a + " --data-weights 1" + model + " --out " + dir.file("x.h5")).output,
               Catch::Contains("--data-weights mixes folders of token shards"));
  REQUIRE_THAT(run("train --data " + dir.file("A") + " " + a + model + " --out " + dir.file("x.h5")).output,
               Catch::Contains("--data takes text files or folders of token shards, not both"));
  REQUIRE_FALSE(fs::exists(dir.file("x.h5")));
  // A folder as validation text: its val split, scored in place.
  REQUIRE(run("train --data " + dir.file("A") + " --val-data " + dir.file("B") + " --iters 2" + model + " --out " +
              dir.file("v.h5"))
              .exit_code == 0);
  const int64_t b_val = static_cast<int64_t>(0.1 * static_cast<double>(two.size()));
  REQUIRE(training(dir.file("v.h5")).find("data_files")->array->size() == 3);  // A's train and val, B's val
  REQUIRE_THAT(run("info --ckpt " + dir.file("v.h5")).output, Catch::Contains("_val_000000.bin"));
  REQUIRE(json_of(run("eval --json --ckpt " + dir.file("v.h5") + " --data " + dir.file("B"))).find("tokens")->number ==
          static_cast<double>(b_val - 1));
}

TEST_CASE("cli: a folder of 10,000 shards trains, saves, resumes and evaluates", "[cli][shards][slow]") {
  TempDir dir;
  std::string text;
  for (int i = 0; i < 40; ++i) text += "To be, or not to be, that is the question.\n";
  const std::string shards = dir.file("many");
  Result prepared = run("prepare --data " + dir.write("t.txt", text) + " --out " + shards + " --shard-tokens 200");
  INFO(prepared.output);
  REQUIRE(prepared.exit_code == 0);
  // The first shard copied 9,999 times under new names: a folder of 10,000 small files (and one
  // descriptor per file kept open would pass the usual limit of 1,024).
  const std::string first = shards + "/tinygpt_train_000000.bin";
  for (const auto& entry : fs::directory_iterator(shards))
    if (entry.path().filename().string().find("_train_") != std::string::npos && entry.path() != first) fs::remove(entry);
  for (int k = 1; k < 10'000; ++k) fs::copy_file(first, fmt::format("{}/tinygpt_train_{:06d}.bin", shards, k));
  const std::string ckpt = dir.file("m.h5");
  Result trained = run("train --data " + shards + " --iters 4 --eval-every 2 --out " + ckpt + kModel);
  INFO(trained.output);
  REQUIRE(trained.exit_code == 0);
  Result resumed = run("train --resume " + ckpt + " --iters 6");
  INFO(resumed.output);
  REQUIRE(resumed.exit_code == 0);
  REQUIRE_THAT(resumed.output, Catch::Contains("iter 6"));
  // Moved whole, the folder's 10,000 and more files are said in one line, not one line each.
  fs::rename(shards, dir.file("moved"));
  Result moved = run("train --resume " + ckpt + " --iters 7 --data " + dir.file("moved"));
  INFO(moved.output);
  REQUIRE(moved.exit_code == 0);
  REQUIRE_THAT(moved.output, Catch::Contains("files moved, the same bytes: '" + shards + "/"));
  REQUIRE(moved.output.size() < 4000);
  fs::rename(dir.file("moved"), shards);
  Result scored = run("eval --ckpt " + ckpt + " --data " + shards + " --split train");
  INFO(scored.output);
  REQUIRE(scored.exit_code == 0);
  REQUIRE_THAT(scored.output, Catch::Contains("loss "));
}

TEST_CASE("cli: prepare --force builds the new shards beside the folder: a failure leaves the old ones",
          "[cli][shards]") {
  TempDir dir;
  std::string text;
  for (int i = 0; i < 40; ++i) text += "To be, or not to be, that is the question.\n";
  const std::string corpus = dir.write("t.txt", text), shards = dir.file("sh");
  REQUIRE(run("prepare --data " + corpus + " --out " + shards + " --shard-tokens 500").exit_code == 0);
  dir.write("sh/notes.txt", "mine");  // not prepare's: carried into the new folder
  auto contents = [&] {
    std::map<std::string, std::string> files;
    for (const auto& entry : fs::directory_iterator(shards)) files[entry.path().filename().string()] = read_file(entry.path().string());
    return files;
  };
  const auto before = contents();
  // Inputs that fail only once tokenizing has begun: the folder is as it was, nothing beside it.
  const std::string bad = dir.write("bad.txt", "fine text\n\xC3(");
  Result failed = run("prepare --data " + corpus + " " + bad + " --out " + shards + " --force --shard-tokens 100");
  INFO(failed.output);
  REQUIRE(failed.exit_code == 1);
  REQUIRE_THAT(failed.output, Catch::Contains("not valid UTF-8"));
  REQUIRE(contents() == before);
  for (const auto& entry : fs::directory_iterator(dir.file("")))
    REQUIRE(entry.path().filename().string().find(".staging-") == std::string::npos);
  // Succeeding: the new shards only, and the file that was not prepare's.
  Result replaced = run("prepare --data " + corpus + " --out " + shards + " --force --shard-tokens 100");
  INFO(replaced.output);
  REQUIRE(replaced.exit_code == 0);
  const auto after = contents();
  REQUIRE(after.at("notes.txt") == "mine");
  REQUIRE(after.count("tinygpt_train_000005.bin") == 1);
  REQUIRE(after.size() > before.size());
  // A staging folder a killed prepare left (its process gone, its marker in it) is removed by the
  // next one; a folder of that name without the marker is someone else's, and stays.
  const std::string stale = dir.file(".sh.staging-999999999-abcdef"), other = dir.file(".sh.staging-999999998-mine");
  fs::create_directories(stale);
  dir.write(".sh.staging-999999999-abcdef/tinygpt_train_000000.bin", "partial");
  dir.write(".sh.staging-999999999-abcdef/.tinygpt-staging", "a folder tinygpt is writing; removed when it is done\n");
  fs::create_directories(other);
  dir.write(".sh.staging-999999998-mine/notes.txt", "mine");
  REQUIRE(run("prepare --data " + corpus + " --out " + shards + " --force").exit_code == 0);
  REQUIRE_FALSE(fs::exists(stale));
  REQUIRE(read_file(dir.file(".sh.staging-999999998-mine/notes.txt")) == "mine");
  REQUIRE_FALSE(fs::exists(dir.file("sh/.tinygpt-staging")));  // the marker never reaches the folder
  // The working folder, or one that holds it, is never swapped away.
  const auto now = contents();
  for (const std::string& out : {std::string("."), dir.file("")}) {
    Result here = run("prepare --data " + corpus + " --out " + out + " --force", shards);
    INFO(here.output);
    REQUIRE(here.exit_code == 1);
    REQUIRE_THAT(here.output, Catch::Contains("is the working folder or holds it"));
    REQUIRE(now == contents());
  }
}
