// Every combination, as a practitioner runs it: architecture {gpt2, llama} x tokenizer {char, bpe,
// GPT-2's files, SentencePiece} x data {text files, prepared shards, llm.c's shards (no tokenizer
// file, no tokenizer named in their headers)} x precision {fp32, bf16}. Each cell trains, is stopped
// by SIGINT, resumes (and is saved at steps the spike guard skips), evaluates, samples (with and without a prompt), describes itself, exports in
// every format its shape allows and imports back to the same loss (an export whose format has no
// place for the tokenizer is refused before anything is written, and then written with
// --weights-only and imported with --tokenizer-from), and the import is fine-tuned and resumed.
// One test case per architecture and tokenizer; the MPI x --eval-task cell is
// tests/distributed/task_cell.sh.
#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <signal.h>

#include <cmath>
#include <filesystem>
#include <sstream>
#include <string>

#include "cli_run.h"
#include "gpt2_dir.h"
#include "process.h"
#include "sentencepiece_model.h"
#include "temp_files.h"
#include "tinygpt/data/json.h"

using namespace tinygpt::testing;
namespace json = tinygpt::data::json;
namespace fs = std::filesystem;

namespace {

Result ok(const std::string& args) {
  const Result r = run(args);
  INFO("tinygpt " << args << "\n" << r.output);
  REQUIRE(r.exit_code == 0);
  return r;
}

double number(const std::string& json_text, const char* key) {
  return json::parse(json_text, "output").find(key)->number;
}

// The first iteration after `after` whose row in a CSV log says the step was skipped; 0 if none.
int64_t first_skipped(const std::string& log, int64_t after) {
  std::stringstream lines(read_file(log));
  std::string line;
  std::getline(lines, line);  // the header
  while (std::getline(lines, line)) {
    std::stringstream row(line);
    std::vector<std::string> fields;
    for (std::string field; std::getline(row, field, ',');) fields.push_back(field);
    if (std::stoll(fields.at(0)) > after && fields.at(16) == "1") return std::stoll(fields.at(0));  // "skipped"
  }
  return 0;
}

// Where the tokenizer comes from: flags for a new run or prepare, and what holds it for shards
// that do not say (llm.c's), once `prepared` (a folder prepare wrote) exists.
struct TokenizerCase {
  std::string name, flags;
  std::string source;  // empty: the prepared folder's tokenizer.h5, copied before it is removed
};

// llm.c's shards: the same tokens, headers that name no tokenizer, no tokenizer.h5 beside them.
void make_llmc_shards(const std::string& dir) {
  fs::remove(dir + "/tokenizer.h5");
  for (const auto& entry : fs::directory_iterator(dir)) {
    std::string bytes = read_file(entry.path().string());
    std::fill(bytes.begin() + 12, bytes.begin() + 56, '\0');  // header words 3..13
    std::ofstream(entry.path(), std::ios::binary) << bytes;
  }
}

struct Matrix {
  TempDir dir;
  std::string a, b;  // two documents

  Matrix() {
    a = dir.write("a.txt", sentencepiece_text());
    std::string other;
    for (int i = 0; i < 40; ++i) other += "The end of a tale, line " + std::to_string(i) + ", and a fox.\n";
    b = dir.write("b.txt", other);
  }

  // One cell, every command; `cell` names its files.
  void run_cell(const std::string& arch, const TokenizerCase& t, const std::string& data, const std::string& precision) {
    const std::string cell = dir.file(fmt::format("{}-{}-{}-{}", arch, t.name, data, precision));
    INFO("cell " << cell);
    fs::create_directory(cell);
    std::string data_flags = "--data " + a + " " + b + " " + t.flags, eval_data = b;
    std::string tokenizer_source = t.source;
    if (data != "text") {
      ok("prepare --data " + a + " " + b + " " + t.flags + " --shard-tokens 2000 --out " + cell + "/sh");
      if (tokenizer_source.empty()) fs::copy_file(cell + "/sh/tokenizer.h5", tokenizer_source = cell + "/tok.h5");
      data_flags = "--data " + cell + "/sh", eval_data = cell + "/sh";
      if (data == "llmc") {
        make_llmc_shards(cell + "/sh");
        const Result bare = run("train " + data_flags + " --out " + cell + "/x.h5");
        REQUIRE_THAT(bare.output, Catch::Contains("no tokenizer.h5: give --tokenizer-from"));
        data_flags += " --tokenizer-from " + tokenizer_source;
      }
    }
    const std::string ckpt = cell + "/run.h5";
    const std::string model = " --arch " + arch + (arch == "llama" ? " --kv-heads 1" : "") +
                              " --layers 1 --heads 2 --embd 16 --block 16 --batch 2 --eval-every 50 --eval-iters 1"
                              " --warmup 5 --threads 1 --precision " + precision;
    // Train, stopped by SIGINT, resumed.
    Process training(words("train " + data_flags + model + " --iters 1000000 --ckpt-every 1000000 --out " + ckpt),
                     cell + "/train.out");
    REQUIRE(wait_for_rows(cell + "/run.csv"));
    REQUIRE(kill(training.pid(), SIGINT) == 0);
    const Run stopped = training.wait(std::chrono::seconds(120));
    INFO(stopped.output);
    REQUIRE(stopped.exit_code == 130);
    const json::Value info = json::parse(ok("info --json --ckpt " + ckpt).output, "info");
    const int64_t at = static_cast<int64_t>(info.find("training")->find("iteration")->number);
    REQUIRE(info.find("tokenizer")->find("kind")->text == (t.name == "gpt2" ? "bpe" : t.name));
    ok("train --resume " + ckpt + " --iters " + std::to_string(at + 2));
    // Steps the spike guard skips (a loss or gradient norm past 1.0001x the median: about every
    // other step), a checkpoint and a snapshot saved at each: a skipped step's file works in every
    // command.
    ok("train --resume " + ckpt + " --iters " + std::to_string(at + 32) +
       " --spike-loss 1.0001 --spike-grad 1.0001 --spike-patience 40 --ckpt-every 1 --snapshot-every 1");
    const int64_t skipped = first_skipped(cell + "/run.csv", at + 2);
    REQUIRE(skipped > 0);
    const std::string snapshot = cell + "/run.step" + std::to_string(skipped) + ".h5";
    ok("info --ckpt " + snapshot);
    ok("sample --ckpt " + snapshot + " --tokens 3");
    ok("eval --ckpt " + snapshot + " --data " + eval_data);
    ok("train --resume " + snapshot + " --out " + cell + "/after-skip.h5 --iters " + std::to_string(skipped + 1));
    // Evaluate, sample, look inside.
    const std::string eval = ok("eval --json --ckpt " + ckpt + " --data " + eval_data).output;
    REQUIRE(number(eval, "tokens") > 0);
    ok("sample --ckpt " + ckpt + " --tokens 5 --seed 2");
    ok("sample --ckpt " + ckpt + " --prompt 'Once upon' --tokens 5 --seed 2");
    check_sampling_and_tasks(ckpt, eval_data, eval);
    ok("tokens --ckpt " + ckpt + " --text 'a fox' --json");
    ok("info --ckpt " + ckpt);
    // Export in each format the shape allows, import back, and evaluate to the same loss.
    std::vector<std::string> formats = {"hf"};
    if (arch == "llama") formats.push_back("llama2c");
    for (const std::string& format : formats) {
      INFO("format " << format);
      const std::string out = cell + (format == "hf" ? "/hf" : "/model.bin");
      const Result exported = run("export --ckpt " + ckpt + " --format " + format + " --out " + out);
      INFO(exported.output);
      const bool tokenizer_fits = format == "hf" ? (arch == "gpt2" ? t.name == "gpt2" || t.name == "bpe" : t.name == "sentencepiece")
                                                 : t.name == "sentencepiece";
      std::string import = "import --from " + out + " --out " + cell + "/back-" + format + ".h5";
      if (exported.exit_code != 0) {
        REQUIRE_FALSE(tokenizer_fits);
        REQUIRE_THAT(exported.output, Catch::Contains("--weights-only"));
        REQUIRE_FALSE(fs::exists(out));  // refused before anything was written
        ok("export --ckpt " + ckpt + " --format " + format + " --weights-only --out " + out);
        import += " --tokenizer-from " + ckpt;
      } else {
        REQUIRE((tokenizer_fits || t.name == "bpe"));
        if (format == "llama2c") import += " --tokenizer-model " + t.source;
      }
      ok(import);
      REQUIRE(ok("eval --json --ckpt " + cell + "/back-" + format + ".h5 --data " + eval_data).output == eval);
    }
    // Fine-tune the imported model on the same data (its tokenizer is the checkpoint's), and resume that run.
    const std::string tuned = cell + "/tuned.h5";
    ok("train --init-from " + cell + "/back-hf.h5 --data " + (data == "text" ? a + " " + b : cell + "/sh") +
       " --iters 2 --eval-every 2 --eval-iters 1 --batch 2 --threads 1 --out " + tuned);
    ok("train --resume " + tuned + " --iters 3");
    ok("sample --ckpt " + tuned + " --tokens 3");
  }

  // The sampling flags, stdin prompts, int8 weights and a multiple-choice task on one cell's checkpoint.
  void check_sampling_and_tasks(const std::string& ckpt, const std::string& eval_data, const std::string& eval) {
    const std::string flags = " --tokens 8 --top-p 0.9 --top-k 20 --temperature 1.2 --stop ', ' --seed 2";
    const Result many = ok("sample --ckpt " + ckpt + " --prompt 'Once upon'" + flags + " --num-samples 2");
    REQUIRE_THAT(many.output, Catch::Contains("--- sample 2 of 2 (seed 3) ---") && Catch::Contains("2 samples: prompt "));
    // Each stdin line is sampled as --prompt samples it (stdout only: the figures on stderr vary).
    const std::string quiet = " 2>/dev/null";
    const std::string one = shell(std::string(TINYGPT_BINARY) + " sample --ckpt " + ckpt + " --prompt 'Once upon'" + flags + quiet).output;
    const std::string prompts = dir.write("prompts.txt", "Once upon\nOnce upon\n");
    REQUIRE(shell(std::string(TINYGPT_BINARY) + " sample --interactive --ckpt " + ckpt + flags + " < " + prompts + quiet).output ==
            one + one);
    // int8 weights: the same text lengths and a loss near the float one.
    ok("sample --ckpt " + ckpt + " --weights int8" + flags);
    const double int8_loss = number(ok("eval --json --weights int8 --ckpt " + ckpt + " --data " + eval_data).output, "loss");
    REQUIRE(std::abs(int8_loss - number(eval, "loss")) < 0.05);
    // A multiple-choice task in the characters every tokenizer here knows, in fp32 and int8: each
    // example once with every label, so that exactly one of its copies is right whatever the model
    // prefers (the endings' losses never tie): acc and acc_norm are 2 of 5.
    std::string lines;
    for (const auto& [ctx, endings] : std::vector<std::pair<std::string, std::vector<std::string>>>{
             {"The end of a tale, line", {"3, and a fox.", "a fox and a tale."}}, {"and a", {"fox.", "tale", "line"}}})
      for (size_t label = 0; label < endings.size(); ++label)
        lines += fmt::format(R"({{"ctx": "{}", "endings": ["{}"], "label": {}}})" "\n", ctx,
                             fmt::join(endings, "\", \""), label);
    const std::string task = dir.write("task.jsonl", lines);
    for (const char* weights : {"fp32", "int8"}) {
      const std::string scores = ok("eval --json --ckpt " + ckpt + " --weights " + weights + " --task " + task).output;
      REQUIRE(number(scores, "examples") == 5);
      REQUIRE(number(scores, "acc") == Approx(0.4));
      REQUIRE(number(scores, "acc_norm") == Approx(0.4));
    }
  }

  void run_all(const std::string& arch, const TokenizerCase& t) {
    for (const char* data : {"text", "shards", "llmc"})
      for (const char* precision : {"fp32", "bf16"}) run_cell(arch, t, data, precision);
  }

  TokenizerCase tokenizer(const std::string& name) {
    if (name == "char") return {"char", "--tokenizer char", ""};
    if (name == "bpe") return {"bpe", "--tokenizer bpe --vocab-size 300", ""};
    if (name == "gpt2") {
      REQUIRE(write_gpt2_dir(dir.file("gpt2"), 1, 16, 2, 16, 5));
      return {"gpt2", "--tokenizer-from " + dir.file("gpt2"), dir.file("gpt2")};
    }
    const std::string model = write_sentencepiece_model(dir, "sp", 400);
    return {"sentencepiece", "--tokenizer sentencepiece --tokenizer-model " + model, model};
  }
};

}  // namespace

// One test case a row of the matrix, so that ctest runs them side by side.
#define MATRIX_ROW(arch, kind, shown)                                                                 \
  TEST_CASE("matrix: " arch " x " shown ": text, shards, llm.c shards, in fp32 and bf16", "[cli][matrix][slow]") { \
    Matrix m;                                                                                             \
    m.run_all(arch, m.tokenizer(kind));                                                                   \
  }

MATRIX_ROW("gpt2", "char", "char")
MATRIX_ROW("gpt2", "bpe", "bpe")
MATRIX_ROW("gpt2", "gpt2", "GPT-2's files")
MATRIX_ROW("gpt2", "sentencepiece", "sentencepiece")
MATRIX_ROW("llama", "char", "char")
MATRIX_ROW("llama", "bpe", "bpe")
MATRIX_ROW("llama", "gpt2", "GPT-2's files")
MATRIX_ROW("llama", "sentencepiece", "sentencepiece")
