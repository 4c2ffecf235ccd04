// The tinygpt executable end to end: train -> eval --json -> sample -> info, Ctrl-C and resume,
// and the exit codes and messages of bad input.
#include <catch2/catch.hpp>

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fcntl.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <vector>
#include <thread>

#include "cli_run.h"
#include "gpt2_dir.h"
#include "process.h"
#include "temp_files.h"

using tinygpt::testing::Process;
using tinygpt::testing::Result;
using tinygpt::testing::TempDir;
using tinygpt::testing::read_file;
using tinygpt::testing::run;
using tinygpt::testing::small_run;
using tinygpt::testing::wait_for_rows;
using tinygpt::testing::words;
namespace testing = tinygpt::testing;


TEST_CASE("cli: train, eval --json, sample, info", "[cli]") {
  TempDir dir;
  const std::string ckpt = dir.file("run.h5");
  Result train = run("train " + small_run(dir) + " --iters 20 --out " + ckpt);
  INFO(train.output);
  REQUIRE(train.exit_code == 0);
  REQUIRE(train.output.find("done: 20 iterations") != std::string::npos);
  // 20 iterations inside the default 100 of warm-up: said, with the peak the run reaches (1e-3 * 20 / 101).
  REQUIRE_THAT(train.output, Catch::Contains("warning: --iters 20 ends inside the 100 warm-up iterations: the learning "
                                             "rate climbs to 0.000198 and never reaches --lr 0.001"));
  REQUIRE_THAT(run("train " + small_run(dir) + " --iters 20 --warmup 10 --out " + dir.file("w.h5")).output,
               !Catch::Contains("warning"));
  Result eval = run("eval --ckpt " + ckpt + " --data " + dir.file("corpus.txt") + " --json");
  INFO(eval.output);
  REQUIRE(eval.exit_code == 0);
  REQUIRE(eval.output.rfind("{\"loss\": ", 0) == 0);
  REQUIRE(eval.output.find("\"perplexity\": ") != std::string::npos);
  REQUIRE(eval.output.find("\"tokens\": 1709, ") != std::string::npos);  // every character but the first
  Result sample = run("sample --ckpt " + ckpt + " --prompt 나는 --tokens 30 --seed 3");
  INFO(sample.output);
  REQUIRE(sample.exit_code == 0);
  REQUIRE(sample.output.rfind("나는", 0) == 0);
  // The same text again; the line of figures after it (stderr) tells the speed, which varies.
  const auto text = [](const std::string& output) { return output.substr(0, output.rfind("tinygpt: 1 sample: prompt 2 tokens")); };
  REQUIRE(text(sample.output).size() > 30);
  REQUIRE(text(run("sample --ckpt " + ckpt + " --prompt 나는 --tokens 30 --seed 3").output) == text(sample.output));
  Result info = run("info --ckpt " + ckpt);
  INFO(info.output);
  REQUIRE(info.exit_code == 0);
  REQUIRE(info.output.find("1 layers, 2 heads, 16 embd, block 16") != std::string::npos);
  REQUIRE(info.output.find("iteration    20 of 20") != std::string::npos);
  REQUIRE(std::ifstream(dir.file("run.csv")).good());
}

TEST_CASE("cli: --eval-task scores a benchmark at every evaluation into the logs, and a bad one stops nothing it "
          "started", "[cli][task]") {
  TempDir dir;
  const std::string task = dir.write("task.jsonl", R"({"ctx": "To be, or not to", "endings": [" be, that is", "question be"], "label": 0})" "\n"
                                                   R"({"ctx": "that is the", "endings": ["question.", "be,", "not"], "label": 0})" "\n");
  const std::string ckpt = dir.file("run.h5");
  const Result trained = run("train " + small_run(dir) + " --iters 20 --eval-task " + task + " --out " + ckpt);
  INFO(trained.output);
  REQUIRE(trained.exit_code == 0);
  REQUIRE_THAT(trained.output, Catch::Contains("task.jsonl at iteration 20: acc "));
  REQUIRE_THAT(trained.output, Catch::Contains(", eval task 0.0"));  // the memory line counts the task
  REQUIRE(run("train --resume " + ckpt + " --iters 30").exit_code == 0);  // the task is the run's: scored again
  std::ifstream csv(dir.file("run.csv"));
  std::string line;
  std::vector<std::string> scored;
  while (std::getline(csv, line))
    if (line.back() != ',') scored.push_back(line.substr(0, line.find(',')));
  REQUIRE(scored == std::vector<std::string>{"iter", "10", "20", "30"});  // the header ends with task_acc_norm
  std::ifstream jsonl(dir.file("run.jsonl"));
  int evals = 0;
  while (std::getline(jsonl, line)) evals += line.find("\"task_examples\": 2, \"task_acc\": ") != std::string::npos;
  REQUIRE(evals == 3);
  // The task file moved: the resume names the flag that gives its new place, and takes it.
  std::filesystem::rename(task, dir.file("moved.jsonl"));
  const Result lost = run("train --resume " + ckpt + " --iters 40");
  REQUIRE(lost.exit_code != 0);
  REQUIRE_THAT(lost.output, Catch::Contains("task.jsonl': no such file") && Catch::Contains("--eval-task FILE names another"));
  const Result moved = run("train --resume " + ckpt + " --iters 40 --eval-task " + dir.file("moved.jsonl"));
  INFO(moved.output);
  REQUIRE(moved.exit_code == 0);
  REQUIRE_THAT(moved.output, Catch::Contains("moved.jsonl at iteration 40: acc "));
  // A bad task file: refused before the run writes anything.
  const std::string bad = dir.write("bad.jsonl", R"({"ctx": "To be", "endings": ["or"], "label": 0})" "\n");
  const Result refused = run("train " + small_run(dir) + " --iters 20 --eval-task " + bad + " --out " + dir.file("other.h5"));
  REQUIRE(refused.exit_code != 0);
  REQUIRE_THAT(refused.output, Catch::Contains("bad.jsonl' line 1: field \"endings\" has 1 ending"));
  REQUIRE_FALSE(std::filesystem::exists(dir.file("other.h5")));
  REQUIRE_FALSE(std::filesystem::exists(dir.file("other.csv")));
}

TEST_CASE("cli: attention and explain take --threads, and show the same numbers for any count", "[cli][inspect]") {
  TempDir dir;
  const std::string ckpt = dir.file("run.h5");
  REQUIRE(run("train " + small_run(dir) + " --iters 4 --out " + ckpt).exit_code == 0);
  std::vector<std::string> steps, pages;
  for (const char* threads : {"1", "2"}) {
    const Result r = run("attention --ckpt " + ckpt + " --text 'To be, or not' --steps --json --threads " + threads);
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    steps.push_back(r.output);
    const std::string page = dir.file(std::string("page") + threads + ".html");
    REQUIRE(run("explain --ckpt " + ckpt + " --text 'To be, or not' --out " + page + " --threads " + threads).exit_code == 0);
    pages.push_back(read_file(page));
  }
  REQUIRE(steps[0] == steps[1]);
  REQUIRE(pages[0].size() > 1000);
  REQUIRE(pages[0] == pages[1]);
}

TEST_CASE("cli: Ctrl-C writes a checkpoint, exits 130, and the run resumes", "[cli]") {
  TempDir dir;
  const std::string ckpt = dir.file("long.h5"), log = dir.file("long.csv"), out = dir.file("train.out");
  // Start `tinygpt train` with its output in a file, as a person would in a terminal.
  Process train(words("train " + small_run(dir) + " --iters 100000 --out " + ckpt), out);
  REQUIRE(wait_for_rows(log));
  REQUIRE(kill(train.pid(), SIGINT) == 0);
  const testing::Run stopped_run = train.wait(std::chrono::seconds(60));
  const std::string& output = stopped_run.output;
  INFO(output);
  REQUIRE(stopped_run.exit_code == 130);  // 128 + SIGINT: not done, so `train && export` stops here
  REQUIRE(output.find("stopped by signal 2") != std::string::npos);
  REQUIRE(output.find("tinygpt train --resume " + ckpt) != std::string::npos);
  Result info = run("info --ckpt " + ckpt);
  REQUIRE(info.exit_code == 0);
  const size_t at = info.output.find("iteration    ");
  REQUIRE(at != std::string::npos);
  const int64_t stopped = std::stoll(info.output.substr(at + 13));
  REQUIRE(stopped >= 1);
  // Resume with a new total: five more iterations.
  Result resumed = run("train --resume " + ckpt + " --iters " + std::to_string(stopped + 5));
  INFO(resumed.output);
  REQUIRE(resumed.exit_code == 0);
  REQUIRE(resumed.output.find("resuming at iteration " + std::to_string(stopped)) != std::string::npos);
  REQUIRE(resumed.output.find("done: " + std::to_string(stopped + 5) + " iterations") != std::string::npos);
}

TEST_CASE("cli: bad input exits non-zero with a clear message", "[cli][errors]") {
  TempDir dir;
  const std::string ckpt = dir.file("e.h5");
  REQUIRE(run("train " + small_run(dir) + " --iters 3 --out " + ckpt).exit_code == 0);
  Result exists = run("train " + small_run(dir) + " --iters 3 --out " + ckpt);
  REQUIRE(exists.exit_code != 0);
  REQUIRE(exists.output.find("e.h5' is a checkpoint at iteration 3 of 3: continue it with --resume") != std::string::npos);
  Result shape = run("train --resume " + ckpt + " --layers 2");
  REQUIRE(shape.exit_code != 0);
  REQUIRE(shape.output.find("--layers cannot change on --resume") != std::string::npos);
  REQUIRE(run("train --resume " + ckpt + " --out " + dir.file("corpus.txt")).output.find(
              "corpus.txt' exists and is not an HDF5 file") != std::string::npos);
  Result missing = run("eval --ckpt " + dir.file("nope.h5") + " --data " + dir.file("corpus.txt"));
  REQUIRE(missing.exit_code != 0);
  REQUIRE(missing.output.find("nope.h5': no such file") != std::string::npos);
  Result unknown = run("eval --ckpt " + ckpt + " --data " + dir.write("greek.txt", "To be\nαβγ"));
  REQUIRE(unknown.exit_code != 0);
  REQUIRE(unknown.output.find("greek.txt': 'α' (U+03B1) at line 2, column 1") != std::string::npos);
  Result prompt = run("sample --ckpt " + ckpt + " --prompt 'Zebra'");
  REQUIRE(prompt.exit_code != 0);
  REQUIRE(prompt.output.rfind("tinygpt: error: 'Z' (U+005A) at line 1, column 1 of the prompt", 0) == 0);
  // The sampling and evaluation flags that cannot work, refused before any output.
  const std::vector<std::pair<std::string, std::string>> refused = {
      {"sample --ckpt " + ckpt + " --top-p 0", "--top-p 0 must be above 0"},
      {"sample --ckpt " + ckpt + " --top-p 1.5", "--top-p must be at most 1"},
      {"sample --ckpt " + ckpt + " --stop ''", "--stop: an empty text would stop before the first token"},
      {"sample --ckpt " + ckpt + " --interactive --prompt To", "--interactive reads its prompts from stdin"},
      {"sample --ckpt " + ckpt + " --weights int4", "--weights"},
      {"eval --ckpt " + ckpt, "give one of them"},
      {"eval --ckpt " + ckpt + " --data " + dir.file("corpus.txt") + " --task " + dir.file("corpus.txt"), "give one of them"},
      {"bench --weights int8 --iters 1", "tinygpt bench times training steps"}};
  for (const auto& [args, message] : refused) {
    const Result r = run(args);
    INFO(args << "\n" << r.output);
    REQUIRE(r.exit_code != 0);
    REQUIRE_THAT(r.output, Catch::StartsWith("tinygpt: error: ") && Catch::Contains(message));
  }
  Result heads = run("train " + small_run(dir, "3") + " --out " + dir.file("h.h5"));
  REQUIRE(heads.exit_code != 0);
  REQUIRE(heads.output.find("--embd 16 is not divisible by --heads 3") != std::string::npos);
  REQUIRE(run("train --bogus").exit_code != 0);
  Result nothing = run("");
  REQUIRE(nothing.exit_code == 1);
  REQUIRE(nothing.output.rfind("tinygpt: error: no command given (commands: prepare, train, eval", 0) == 0);
  Result unknown_command = run("frobnicate");
  REQUIRE(unknown_command.exit_code == 1);
  REQUIRE(unknown_command.output.rfind("tinygpt: error: unknown command 'frobnicate' (commands: prepare, train, eval", 0) == 0);
  Result folder = run("info --ckpt " + dir.file(""));
  REQUIRE(folder.output.find("': is a directory, not a file") != std::string::npos);
}

TEST_CASE("cli: numbers in flags are exact, finite and in range, with one message style", "[cli][errors]") {
  TempDir dir;
  const std::string ckpt = dir.file("n.h5");
  REQUIRE(run("train " + small_run(dir) + " --iters 2 --out " + ckpt).exit_code == 0);
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"train --batch 0", "--batch must be at least 1 (got 0)"},
      {"train --layers 99999999999999999999", "--layers must be a whole number in [1, 1024] (got 99999999999999999999)"},
      {"train --embd 4611686018427387904", "--embd must be at most 65536 (got 4611686018427387904)"},
      {"train --batch 100000000", "--batch must be at most 65536 (got 100000000)"},
      {"train --grad-accum 1e9", "--grad-accum must be a whole number (got '1e9')"},
      {"train --eval-iters 1000000000", "--eval-iters must be at most 1000000 (got 1000000000)"},
      {"train --iters 2.5", "--iters must be a whole number (got '2.5')"},
      {"train --lr inf", "--lr must be a finite number (got inf)"},
      {"train --lr 0", "--lr must be more than 0 (got 0)"},
      {"train --weight-decay nan", "--weight-decay must be a finite number (got nan)"},
      {"train --dropout 1", "--dropout must be less than 1 (got 1)"},
      {"train --lr 1e999", "--lr must be a finite number (got 1e999)"},
      {"train --threads 4294967296", "--threads must be at most 1024 (got 4294967296)"},
      {"eval --ckpt " + ckpt + " --data " + dir.file("corpus.txt") + " --threads -1", "--threads must be at least 0 (got -1)"},
      {"sample --ckpt " + ckpt + " --temperature nan", "--temperature must be a finite number (got nan)"},
      {"sample --ckpt " + ckpt + " --seed -1", "--seed must be a whole number in [0, 18446744073709551615] (got -1)"},
      {"bench --heads abc", "--heads must be a whole number (got 'abc')"},
      {"train --data " + dir.file("corpus.txt") + " --out " + dir.file("big.h5") + " --block 65536 --batch 65536",
       "this run needs about"},
  };
  for (const auto& [args, message] : cases) {
    const Result r = run(args);
    INFO(args << "\n" << r.output);
    REQUIRE(r.exit_code == 1);
    REQUIRE(r.output.rfind("tinygpt: error: " + message, 0) == 0);
    REQUIRE(std::count(r.output.begin(), r.output.end(), '\n') == 1);
  }
  REQUIRE_FALSE(std::filesystem::exists(dir.file("big.h5")));
}

TEST_CASE("cli: --resume writes to the checkpoint it continues, never to a path stored inside it", "[cli][resume]") {
  TempDir dir;
  const std::string run_h5 = dir.file("run.h5"), backup = dir.file("backup.h5");
  REQUIRE(run("train " + small_run(dir) + " --iters 10 --ckpt-every 5 --out " + run_h5).exit_code == 0);
  std::filesystem::copy_file(run_h5, backup);
  REQUIRE(run("train --resume " + run_h5 + " --iters 15").exit_code == 0);
  const std::string live = read_file(run_h5), live_log = read_file(dir.file("run.csv"));
  // The backup stores run.h5 as its output; resuming it continues in backup.h5.
  Result resumed = run("train --resume " + backup + " --iters 12");
  INFO(resumed.output);
  REQUIRE(resumed.exit_code == 0);
  REQUIRE(resumed.output.find("checkpoint " + backup) != std::string::npos);
  REQUIRE(read_file(run_h5) == live);
  REQUIRE(read_file(dir.file("run.csv")) == live_log);
  REQUIRE(run("info --ckpt " + backup).output.find("iteration    12 of 12") != std::string::npos);
  REQUIRE(std::filesystem::exists(dir.file("backup.csv")));
  // --out sends it elsewhere, with the rows of the log it came from up to the checkpoint.
  Result elsewhere = run("train --resume " + run_h5 + " --iters 17 --out " + dir.file("more.h5"));
  REQUIRE(elsewhere.exit_code == 0);
  REQUIRE(read_file(run_h5) == live);
  REQUIRE(read_file(dir.file("more.csv")).rfind(live_log, 0) == 0);
  REQUIRE(run("info --ckpt " + dir.file("more.h5")).output.find("iteration    17 of 17") != std::string::npos);
}

TEST_CASE("cli: no command replaces a file of another kind", "[cli][errors]") {
  TempDir dir;
  const std::string ckpt = dir.file("run.h5");
  REQUIRE(run("train " + small_run(dir) + " --iters 2 --out " + ckpt).exit_code == 0);
  const std::string before = read_file(ckpt);
  // Its own input: refused, --force or not; a file of another kind: refused, named.
  for (const char* force : {"", " --force"}) {
    Result svg = run("attention --ckpt " + ckpt + " --text 'To be' --out " + ckpt + force);
    REQUIRE(svg.exit_code == 1);
    REQUIRE_THAT(svg.output, Catch::Contains("run.h5' is '" + ckpt + "', which this command reads: a command never "
                                             "replaces its own input"));
    Result plot = run("plot --log " + dir.file("run.csv") + " --out " + dir.file("corpus.txt") + force);
    REQUIRE_THAT(plot.output, Catch::Contains("corpus.txt' is a text file, not an SVG file: not replacing it, --force "
                                              "or not"));
  }
  REQUIRE(read_file(ckpt) == before);
  REQUIRE(run("attention --ckpt " + ckpt + " --text 'To be' --out " + dir.file("a.svg")).exit_code == 0);
  Result again = run("attention --ckpt " + ckpt + " --text 'To be' --out " + dir.file("a.svg"));
  REQUIRE(again.exit_code == 1);
  REQUIRE(again.output.find("a.svg' is an SVG picture: give --force to replace it") != std::string::npos);
  REQUIRE(run("attention --ckpt " + ckpt + " --text 'To be' --force --out " + dir.file("a.svg")).exit_code == 0);
  // A run whose log or plot would land on something else is refused before it trains.
  std::filesystem::create_directory(dir.file("dirlog.csv"));
  Result log = run("train " + small_run(dir) + " --iters 2 --out " + dir.file("dirlog.h5"));
  REQUIRE(log.exit_code == 1);
  REQUIRE(log.output.find("dirlog.csv': is a directory, not a file") != std::string::npos);
  REQUIRE_FALSE(std::filesystem::exists(dir.file("dirlog.h5")));
  Result own_log = run("train " + small_run(dir) + " --iters 2 --out " + dir.file("run2.csv"));
  REQUIRE(own_log.output.find("would be its own log, metrics, plot or best checkpoint") != std::string::npos);
  REQUIRE_FALSE(std::filesystem::exists(dir.file("run2.csv")));
  dir.write("notes.csv", "my own notes\n");
  Result notes = run("train " + small_run(dir) + " --iters 2 --out " + dir.file("notes.h5"));
  REQUIRE(notes.output.find("notes.csv' is a text file, not a tinygpt log") != std::string::npos);
  REQUIRE(read_file(dir.file("notes.csv")) == "my own notes\n");
}

TEST_CASE("cli: attention --steps as tables, JSON and SVG, and --trace", "[cli][steps]") {
  TempDir dir;
  const std::string ckpt = dir.file("run.h5");
  REQUIRE(run("train " + small_run(dir) + " --iters 2 --out " + ckpt).exit_code == 0);
  const std::string args = "attention --ckpt " + ckpt + " --text 'To be' --layer 0 --head 1 ";
  Result steps = run(args + "--steps --dims 3 --out " + dir.file("steps.svg"));
  INFO(steps.output);
  REQUIRE(steps.exit_code == 0);
  for (const char* part : {"d_k = 8", "show 3 of 8 columns", "1. scores = Q·Kᵀ", "3. masked", "4. weights", "| 1.000",
                           "5. output = weights·V", "wrote " })
    REQUIRE(steps.output.find(part) != std::string::npos);
  REQUIRE(std::system(("xmllint --noout " + dir.file("steps.svg")).c_str()) == 0);
  Result json = run(args + "--steps --json");
  INFO(json.output);
  REQUIRE(json.exit_code == 0);
  REQUIRE(json.output.rfind("{\"ids\": [", 0) == 0);
  size_t at = 0;
  for (const char* key : {"\"tokens\": [\"T\", \"o\", \" \", \"b\", \"e\"]", "\"layer\": 0", "\"head\": 1",
                          "\"d_k\": 8", "\"q\": [[", "\"k\": [[", "\"v\": [[", "\"scores\": [[", "\"scaled\": [[",
                          "\"weights\": [[1, 0, 0, 0, 0], [", "\"output\": [["}) {
    INFO(key);
    at = json.output.find(key, at);
    REQUIRE(at != std::string::npos);
  }
  Result trace = run(args + "--trace --position 1");
  INFO(trace.output);
  REQUIRE(trace.exit_code == 0);
  REQUIRE(trace.output.find("token 1 'o' (it sees \"To\")") != std::string::npos);
  REQUIRE(trace.output.find("block 0 + mlp(ln_2(x))") != std::string::npos);
  REQUIRE(trace.output.find("the 5 most likely") != std::string::npos);
  REQUIRE(run(args + "--dims 3").output.find("--dims requires --steps") != std::string::npos);
  REQUIRE(run(args + "--steps --json --trace").exit_code != 0);
  Result far = run(args + "--trace --position 5");
  REQUIRE(far.exit_code == 1);
  REQUIRE(far.output.find("--position 5 is out of range: the text has 5 tokens (0..4)") != std::string::npos);
  REQUIRE(run("attention --ckpt " + ckpt + " --text 'To be' --steps --head 2").output.find("--head 2 is out of range: the model has 2 heads") !=
          std::string::npos);
}

TEST_CASE("cli: --precision bf16 trains, is kept in the checkpoint, and resumes in bf16", "[cli][bf16]") {
  TempDir dir;
  const std::string ckpt = dir.file("run.h5");
  Result train = run("train " + small_run(dir) + " --iters 4 --precision bf16 --out " + ckpt);
  INFO(train.output);
  REQUIRE(train.exit_code == 0);
  REQUIRE(train.output.find("; bf16 products (") != std::string::npos);
  REQUIRE(run("info --ckpt " + ckpt).output.find(", bf16 products") != std::string::npos);
  Result resumed = run("train --resume " + ckpt + " --iters 6");
  REQUIRE(resumed.exit_code == 0);
  REQUIRE(resumed.output.find("; bf16 products (") != std::string::npos);
  REQUIRE(run("train --resume " + ckpt + " --iters 8 --precision fp32").output.find(
              "--precision cannot change on --resume") != std::string::npos);
  Result bad = run("train " + small_run(dir) + " --iters 4 --precision fp16 --out " + dir.file("bad.h5"));
  REQUIRE(bad.exit_code == 1);
  REQUIRE(bad.output.find("--precision must be fp32 or bf16 (got 'fp16')") != std::string::npos);
}

TEST_CASE("cli: a second Ctrl-C ends the run at once, and the last checkpoint stays", "[cli][slow]") {
  TempDir dir;
  const std::string ckpt = dir.file("two.h5");
  // A checkpoint at every iteration, each step long enough (about a second on one thread) that
  // both signals arrive while one is in flight: the first waits for it, the second does not.
  small_run(dir);  // writes corpus.txt
  Process train(words("train --data " + dir.file("corpus.txt") + " --layers 4 --heads 4 --embd 256 --block 256 "
                      "--batch 16 --val-fraction 0 --threads 1 --iters 100000 --ckpt-every 1 --out " + ckpt),
                dir.file("out.txt"));
  // A step takes about a second; a loaded machine may take far longer to the first checkpoint.
  for (int i = 0; i < 6000 && !std::filesystem::exists(ckpt); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  INFO(read_file(dir.file("out.txt")));
  REQUIRE(std::filesystem::exists(ckpt));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  REQUIRE(kill(train.pid(), SIGINT) == 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  REQUIRE(kill(train.pid(), SIGINT) == 0);
  const testing::Run r = train.wait(std::chrono::seconds(10));
  INFO(r.output);
  REQUIRE_FALSE(r.timed_out);
  REQUIRE(r.signal == SIGINT);
  REQUIRE(r.output.find("second signal: stopping now, without saving") != std::string::npos);
  REQUIRE(run("info --ckpt " + ckpt).exit_code == 0);
}

TEST_CASE("cli: a GPT-2 directory imports, evaluates, tokenizes, samples, fine-tunes and exports", "[cli][gpt2]") {
  TempDir dir;
  REQUIRE(testing::write_gpt2_dir(dir.file("gpt2"), 2, 16, 2, 32, 5));  // scripts/fetch-reference.sh fetches GPT-2's files
  const std::string ckpt = dir.file("gpt2.h5");
  Result imported = run("import --from " + dir.file("gpt2") + " --out " + ckpt);
  INFO(imported.output);
  REQUIRE(imported.exit_code == 0);
  REQUIRE_THAT(imported.output, Catch::Contains("2 layers, 2 heads, n_embd 16, block 32, vocab 50257"));
  Result info = run("info --ckpt " + ckpt);
  REQUIRE_THAT(info.output, Catch::Contains("tokenizer    bpe, 50257 tokens (50000 merges, split gpt2, GPT-2's byte "
                                            "order; special <|endoftext|> = 50256)") &&
                                Catch::Contains("training     none (weights only"));
  Result tokens = run("tokens --ckpt " + ckpt + " --json --text 'Hello world<|endoftext|> 나'");
  REQUIRE(tokens.exit_code == 0);
  // GPT-2's ids (gpt-3-encoder gives 31619, 224, 246 for " 나"): the token " \xEB" and two bytes of
  // the character, each shown with U+FFFD for the piece of a character.
  REQUIRE(tokens.output == "{\"ids\": [15496, 995, 50256, 31619, 224, 246], \"tokens\": [\"Hello\", \" world\", "
                           "\"<|endoftext|>\", \" \xEF\xBF\xBD\", \"\xEF\xBF\xBD\", \"\xEF\xBF\xBD\"]}\n");
  std::string text;
  for (int i = 0; i < 40; ++i) text += "To be, or not to be: that is the question.\n";
  const std::string data = dir.write("new.txt", text);
  Result file_tokens = run("tokens --ckpt " + ckpt + " --json --file " + data);
  REQUIRE(file_tokens.output.starts_with("{\"ids\": [2514, 307, 11, 393, 407, 284, 307, 25"));
  Result before = run("eval --ckpt " + ckpt + " --data " + data + " --json");
  REQUIRE(before.exit_code == 0);
  Result sample = run("sample --ckpt " + ckpt + " --prompt Hello --tokens 12 --seed 2");
  REQUIRE(sample.exit_code == 0);
  // Fine-tuning: the model's context cropped to 16, its loss on the new text lower.
  Result ft = run("train --init-from " + ckpt + " --data " + data + " --out " + dir.file("ft.h5") +
                  " --block 16 --batch 4 --iters 40 --eval-every 20 --eval-iters 2 --warmup 2 --lr 0.01");
  INFO(ft.output);
  REQUIRE(ft.exit_code == 0);
  REQUIRE_THAT(ft.output, Catch::Contains("fine-tuning " + ckpt));
  Result after = run("eval --ckpt " + dir.file("ft.h5") + " --data " + data + " --json");
  auto loss = [](const std::string& json) { return std::stod(json.substr(json.find(':') + 1)); };
  REQUIRE(loss(after.output) < loss(before.output) - 1.0);
  // export -> import is the same file, byte for byte.
  REQUIRE(run("export --ckpt " + ckpt + " --out " + dir.file("out")).exit_code == 0);
  REQUIRE(run("import --from " + dir.file("out") + " --out " + dir.file("again.h5")).exit_code == 0);
  REQUIRE(read_file(dir.file("again.h5")) == read_file(ckpt));
  // Flags that contradict the model, and directories that are not GPT-2's, are errors.
  for (const std::string flag : {"--layers 3", "--heads 4", "--embd 32", "--vocab-size 300", "--tokenizer char"}) {
    Result bad = run("train --init-from " + ckpt + " --data " + data + " --out " + dir.file("x.h5") + " " + flag);
    REQUIRE(bad.exit_code == 1);
    REQUIRE_THAT(bad.output, Catch::Contains(flag.substr(0, flag.find(' ')) + " cannot be given with --init-from"));
  }
  Result grow = run("train --init-from " + ckpt + " --data " + data + " --out " + dir.file("x.h5") + " --block 64");
  REQUIRE_THAT(grow.output, Catch::Contains("--block 64 is longer than the context"));
  std::ofstream(dir.file("gpt2/config.json")) << "{\"vocab_size\": 50257, \"n_positions\": 32, \"n_embd\": 16, "
                                                 "\"n_layer\": 2, \"n_head\": 2, \"activation_function\": \"relu\"}";
  Result relu = run("import --from " + dir.file("gpt2") + " --out " + dir.file("relu.h5"));
  REQUIRE(relu.exit_code == 1);
  REQUIRE(relu.output == "tinygpt: error: config '" + dir.file("gpt2/config.json") +
                             "': field \"activation_function\" is \"relu\"; tinygpt's GPT-2 needs gelu_new or "
                             "gelu_pytorch_tanh\n");
  REQUIRE_FALSE(std::filesystem::exists(dir.file("relu.h5")));
  Result missing = run("import --from " + dir.file("nothing_here") + " --out " + dir.file("m.h5"));
  REQUIRE(missing.output == "tinygpt: error: import: cannot read --from '" + dir.file("nothing_here") +
                                "': No such file or directory\n");
  Result full = run("export --ckpt " + ckpt + " --out " + dir.file("out"));
  REQUIRE(full.exit_code == 1);
  REQUIRE_THAT(full.output, Catch::Contains("is not empty"));
  // GPT-2's pieces without its tied output layer or biases: neither of Hugging Face's layouts, said as such.
  REQUIRE(run("train --data " + data + " --layers 1 --heads 2 --embd 16 --block 8 --iters 1 --no-tie --no-bias --out " +
              dir.file("untied.h5")).exit_code == 0);
  Result untied = run("export --ckpt " + dir.file("untied.h5") + " --out " + dir.file("untied"));
  REQUIRE(untied.exit_code == 1);
  REQUIRE_THAT(untied.output, Catch::Contains("this model has an output layer of its own (--no-tie), no biases "
                                              "(--no-bias), so no Hugging Face layout holds it"));
  REQUIRE_FALSE(std::filesystem::exists(dir.file("untied")));
}

TEST_CASE("cli: bench --json names the machine, the vector path, the FMA peak and the precision beside its figures", "[cli][bench][slow]") {
  Result r = run("bench --layers 1 --heads 1 --embd 16 --block 8 --batch 2 --iters 1 --threads 1 --json");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  REQUIRE_THAT(r.output, Catch::StartsWith("{\"cpu\": \"") && Catch::Contains("\"tokens_per_s\": "));
  const bool path = r.output.find("\"vector_path\": \"avx512\"") != std::string::npos ||
                    r.output.find("\"vector_path\": \"avx2\"") != std::string::npos ||
                    r.output.find("\"vector_path\": \"generic\"") != std::string::npos ||
                    r.output.find("\"vector_path\": \"generic, avx2+fma kernels\"") != std::string::npos;
  REQUIRE(path);
  const size_t at = r.output.find("\"fma_peak_gflops_per_core\": ");
  REQUIRE(at != std::string::npos);
  REQUIRE(std::stod(r.output.substr(at + 28)) > 0.5);  // a measured rate, not a placeholder
  REQUIRE(r.output.find("\"precision\": \"fp32\"") != std::string::npos);
  Result bf16 = run("bench --layers 1 --heads 1 --embd 16 --block 8 --batch 2 --iters 1 --threads 1 --precision bf16 --json");
  INFO(bf16.output);
  REQUIRE(bf16.exit_code == 0);
  REQUIRE(bf16.output.find("\"precision\": \"bf16\", \"bf16_kernels\": \"rounded\"") != std::string::npos);  // the default
  Result both = run("bench --layers 1 --heads 1 --embd 16 --block 8 --batch 2 --iters 2 --threads 1 --precision both --json");
  INFO(both.output);
  REQUIRE(both.exit_code == 0);
  REQUIRE_THAT(both.output, Catch::Contains("\"runs\": [{\"tokens_per_s\": ") &&
                                Catch::Contains("\"precision\": \"fp32\"}, {\"tokens_per_s\": ") &&
                                Catch::Contains("\"precision\": \"bf16\"}], \"bf16_speedup\": "));
  REQUIRE(std::stod(both.output.substr(both.output.find("\"bf16_speedup\": ") + 16)) > 0);
}

TEST_CASE("cli: bench --precision both prints each precision's figures side by side and bf16's speed-up", "[cli][bench]") {
  Result r = run("bench --layers 1 --heads 1 --embd 16 --block 8 --batch 2 --iters 2 --threads 1 --precision both");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  REQUIRE_THAT(r.output, Catch::Contains("fp32 and bf16 products") && Catch::Contains("throughput fp32 ") &&
                             Catch::Contains("throughput bf16 ") && Catch::Contains("x the speed of fp32") &&
                             Catch::Contains("fp32 ms/step   bf16 ms/step"));
  Result bad = run("bench --precision fp16");
  REQUIRE(bad.exit_code != 0);
  REQUIRE_THAT(bad.output, Catch::Contains("--precision") && Catch::Contains("fp16"));
}
