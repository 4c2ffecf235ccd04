// Runs a practitioner can trust and steer, end to end through the tinygpt executable: no file
// replaced without --force, one writer per run, exit codes that say whether a run finished, text
// found by content on resume, settings a resume may change, and the flags and reports around them.
#include <catch2/catch.hpp>

#include <signal.h>

#include <cmath>
#include <filesystem>
#include <sstream>
#include <string>

#include "cli_run.h"
#include "gpt2_dir.h"
#include "process.h"
#include "temp_files.h"
#include "tinygpt/data/json.h"
#include "tinygpt/data/utf8.h"

using namespace tinygpt::testing;
namespace json = tinygpt::data::json;
namespace fs = std::filesystem;

namespace {

// `info --json` of a checkpoint, parsed.
json::Value info(const std::string& ckpt) {
  const Result r = run("info --json --ckpt " + ckpt);
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  return json::parse(r.output, "info --json");
}

const json::Value& at(const json::Value& v, const char* key) {
  const json::Value* found = v.find(key);
  INFO(key);
  REQUIRE(found != nullptr);
  return *found;
}

}  // namespace

TEST_CASE("cli: import, export, attention and plot replace an existing output only with --force", "[cli][force]") {
  TempDir dir;
  const std::string run_h5 = dir.file("run.h5"), victim = dir.file("victim.h5");
  REQUIRE(run("train " + small_run(dir) + " --iters 4 --out " + run_h5).exit_code == 0);
  fs::copy_file(run_h5, victim);
  const std::string before = read_file(victim);
  REQUIRE(write_gpt2_dir(dir.file("gpt2"), 1, 16, 2, 16, 5));
  Result refused = run("import --from " + dir.file("gpt2") + " --out " + victim);
  INFO(refused.output);
  REQUIRE(refused.exit_code == 1);
  REQUIRE(refused.output == "tinygpt: error: '" + victim + "' is a checkpoint at iteration 4 of 4: continue it with "
                                "--resume " + victim + ", give --force to replace it, or choose another --out\n");
  REQUIRE(read_file(victim) == before);
  REQUIRE(run("import --from " + dir.file("gpt2") + " --out " + victim + " --force").exit_code == 0);
  REQUIRE(at(info(victim), "training").type == json::Value::Type::null);
  Result weights_only = run("import --from " + dir.file("gpt2") + " --out " + victim);
  REQUIRE_THAT(weights_only.output, Catch::Contains("is a checkpoint of weights only (1 layers, 16 embd)"));
  // export into a folder that holds files: refused, then replaced with --force.
  REQUIRE(run("export --ckpt " + victim + " --out " + dir.file("hf")).exit_code == 0);
  Result again = run("export --ckpt " + victim + " --out " + dir.file("hf"));
  REQUIRE(again.exit_code == 1);
  REQUIRE_THAT(again.output, Catch::Contains("is not empty: give --force to replace its config.json"));
  REQUIRE(run("export --ckpt " + victim + " --out " + dir.file("hf") + " --force").exit_code == 0);
  REQUIRE(run("import --from " + dir.file("hf") + " --out " + dir.file("back.h5")).exit_code == 0);
  REQUIRE(read_file(dir.file("back.h5")) == read_file(victim));
  // plot over a picture it did not make in this command.
  const std::string svg = dir.file("loss.svg");
  REQUIRE(run("plot --log " + dir.file("run.csv") + " --out " + svg).exit_code == 0);
  const std::string picture = read_file(svg);
  Result plot = run("plot --log " + dir.file("run.csv") + " --out " + svg);
  REQUIRE(plot.exit_code == 1);
  REQUIRE_THAT(plot.output, Catch::Contains("loss.svg' is an SVG picture: give --force to replace it"));
  REQUIRE(run("plot --log " + dir.file("run.csv") + " --out " + svg + " --force").exit_code == 0);
}

TEST_CASE("cli: one writer per run, SIGTERM exits 143, a stale lock file blocks nothing", "[cli][lock]") {
  TempDir dir;
  const std::string ckpt = dir.file("run.h5");
  // --ckpt-every past the run's end: the checkpoint stays the file the links below name.
  REQUIRE(run("train " + small_run(dir) + " --iters 2 --out " + ckpt).exit_code == 0);
  fs::create_symlink(ckpt, dir.file("link.h5"));
  fs::create_hard_link(ckpt, dir.file("hard.h5"));
  fs::remove(dir.file("run.csv"));  // so that rows in it mean the run below is training
  Process a(words("train --resume " + ckpt + " --iters 100000 --ckpt-every 1000000"), dir.file("a.out"));
  REQUIRE(wait_for_rows(dir.file("run.csv")));
  const std::string holder = "is being written by another tinygpt run (process " + std::to_string(a.pid()) +
                             "; lock '" + ckpt + ".tinygpt-lock')";
  for (const std::string& second : {"train --resume " + ckpt, "train --resume " + ckpt + " --iters 5",
                                    "train " + small_run(dir) + " --iters 3 --force --out " + ckpt,
                                    "train --resume " + dir.file("link.h5"), "train --resume " + dir.file("link.h5") +
                                    " --out " + ckpt}) {
    Result b = run(second);
    INFO(second << "\n" << b.output);
    REQUIRE(b.exit_code == 1);
    REQUIRE_THAT(b.output, Catch::StartsWith("tinygpt: error: '") && Catch::Contains(holder));
  }
  // A hard link is the same file under another name: its inode is locked.
  for (const std::string& second : {"train --resume " + dir.file("hard.h5"),
                                    "train " + small_run(dir) + " --iters 3 --force --out " + dir.file("hard.h5")}) {
    Result b = run(second);
    INFO(second << "\n" << b.output);
    REQUIRE(b.exit_code == 1);
    REQUIRE_THAT(b.output, Catch::Contains("is being written by another tinygpt run under another name (the same "
                                           "file, device") && Catch::Contains("a hard link"));
  }
  REQUIRE(kill(a.pid(), SIGTERM) == 0);
  const Run stopped = a.wait(std::chrono::seconds(60));
  INFO(stopped.output);
  REQUIRE(stopped.exit_code == 143);  // 128 + SIGTERM, after the checkpoint
  REQUIRE_THAT(stopped.output, Catch::Contains("stopped by signal 15"));
  REQUIRE_FALSE(fs::exists(ckpt + ".tinygpt-lock"));
  // Saving through a symbolic link writes the file it leads to and keeps the link.
  const int64_t stopped_at = static_cast<int64_t>(at(at(info(ckpt), "training"), "iteration").number);
  REQUIRE(run("train --resume " + dir.file("link.h5") + " --iters " + std::to_string(stopped_at + 1)).exit_code == 0);
  REQUIRE(fs::is_symlink(dir.file("link.h5")));
  REQUIRE(at(at(info(ckpt), "training"), "iteration").number == stopped_at + 1);
  // A lock file left by a process killed with -9 holds no lock: the next run goes ahead.
  dir.write("run.h5.tinygpt-lock", "tinygpt run lock, process 999999\n");
  const int64_t iteration = static_cast<int64_t>(at(at(info(ckpt), "training"), "iteration").number);
  Result resumed = run("train --resume " + ckpt + " --iters " + std::to_string(iteration + 2));
  INFO(resumed.output);
  REQUIRE(resumed.exit_code == 0);
  REQUIRE_FALSE(fs::exists(ckpt + ".tinygpt-lock"));
}

TEST_CASE("cli: the run's lock never touches a file tinygpt did not write", "[cli][lock]") {
  TempDir dir;
  // A project's own lock files beside a run named after it are not the run's.
  for (const char* name : {"Cargo", "yarn", "flake"}) {
    const std::string theirs = dir.write(std::string(name) + ".lock", std::string("# ") + name + " lock file\n");
    REQUIRE(run("train " + small_run(dir) + " --iters 2 --out " + dir.file(name)).exit_code == 0);
    REQUIRE(read_file(theirs) == std::string("# ") + name + " lock file\n");
    Result failed = run("train --resume " + dir.file("absent.h5"));
    REQUIRE(failed.exit_code == 1);
  }
  // An empty file under the lock's name that is also another file (a hard link) is not the run's.
  const std::string important = dir.write("important.empty", "");
  std::filesystem::create_hard_link(important, dir.file("linked.h5.tinygpt-lock"));
  const Result linked = run("train " + small_run(dir) + " --iters 2 --out " + dir.file("linked.h5"));
  REQUIRE(linked.exit_code == 1);
  REQUIRE_THAT(linked.output, Catch::Contains("linked.h5.tinygpt-lock' exists and is not a tinygpt lock file"));
  REQUIRE(read_file(important).empty());
  // A file under the lock's own name that tinygpt did not write is refused and left as it is.
  const std::string foreign = dir.write("run.h5.tinygpt-lock", "someone else's notes\n");
  Result refused = run("train " + small_run(dir) + " --iters 2 --out " + dir.file("run.h5"));
  INFO(refused.output);
  REQUIRE(refused.exit_code == 1);
  REQUIRE_THAT(refused.output, Catch::Contains("run.h5.tinygpt-lock' exists and is not a tinygpt lock file"));
  REQUIRE(read_file(foreign) == "someone else's notes\n");
  REQUIRE_FALSE(fs::exists(dir.file("run.h5")));
  Result prepared = run("prepare --data " + dir.file("corpus.txt") + " --out " + dir.file("Cargo-data"));
  REQUIRE(run("prepare --data " + dir.file("corpus.txt") + " --out " + dir.file("Cargo")).exit_code == 1);
  INFO(prepared.output);
  REQUIRE(prepared.exit_code == 0);
  REQUIRE(read_file(dir.file("Cargo.lock")) == "# Cargo lock file\n");
}

TEST_CASE("cli: a new run does not replace another run's log or plot without --force", "[cli][force]") {
  TempDir dir;
  REQUIRE(run("train " + small_run(dir) + " --iters 10 --out " + dir.file("run.h5")).exit_code == 0);
  fs::rename(dir.file("run.h5"), dir.file("kept.h5"));
  const std::string log = read_file(dir.file("run.csv"));
  Result refused = run("train " + small_run(dir) + " --iters 3 --out " + dir.file("run.h5"));
  INFO(refused.output);
  REQUIRE(refused.exit_code == 1);
  REQUIRE(refused.output == "tinygpt: error: '" + dir.file("run.csv") + "' is the log of a run (10 rows, to iteration "
                                "10): give --force to replace it, or choose another --out\n");
  REQUIRE(read_file(dir.file("run.csv")) == log);
  REQUIRE_FALSE(fs::exists(dir.file("run.h5")));
  fs::remove(dir.file("run.csv"));
  const std::string metrics = read_file(dir.file("run.jsonl"));
  Result jsonl = run("train " + small_run(dir) + " --iters 3 --out " + dir.file("run.h5"));
  REQUIRE(jsonl.output == "tinygpt: error: '" + dir.file("run.jsonl") + "' is the metrics of a run (to iteration "
                              "10): give --force to replace it, or choose another --out\n");
  REQUIRE(read_file(dir.file("run.jsonl")) == metrics);
  fs::remove(dir.file("run.jsonl"));
  Result plot = run("train " + small_run(dir) + " --iters 3 --out " + dir.file("run.h5"));
  REQUIRE_THAT(plot.output, Catch::Contains("run.svg' is an SVG picture: give --force"));
  Result forced = run("train " + small_run(dir) + " --iters 3 --force --out " + dir.file("run.h5"));
  INFO(forced.output);
  REQUIRE(forced.exit_code == 0);
  REQUIRE(at(at(info(dir.file("run.h5")), "training"), "iters").number == 3);
}

TEST_CASE("cli: --min-lr defaults to --lr / 10, so the README's fine-tuning line runs as written", "[cli][flags]") {
  TempDir dir;
  REQUIRE(run("train " + small_run(dir) + " --iters 2 --out " + dir.file("base.h5")).exit_code == 0);
  Result ft = run("train --init-from " + dir.file("base.h5") + " --data " + dir.file("corpus.txt") + " --out " +
                  dir.file("mine.h5") + " --block 8 --iters 3 --lr 3e-5");
  INFO(ft.output);
  REQUIRE(ft.exit_code == 0);
  const json::Value settings = at(at(info(dir.file("mine.h5")), "training"), "settings");
  REQUIRE(at(settings, "lr").number == 3e-5);
  REQUIRE(at(settings, "min-lr").number == Approx(3e-6).epsilon(1e-12));
  REQUIRE(run("train " + small_run(dir) + " --lr 1e-3 --min-lr 2e-3 --out " + dir.file("x.h5")).output ==
          "tinygpt: error: --min-lr must be at most --lr 0.001 (got 0.002)\n");
}

TEST_CASE("cli: resume finds its text from any folder, follows moved text by its bytes, refuses changed text",
          "[cli][resume][data]") {
  TempDir dir;
  fs::create_directories(dir.file("a")), fs::create_directories(dir.file("b"));
  std::string text;
  for (int i = 0; i < 40; ++i) text += "To be, or not to be, that is the question.\n";
  dir.write("a/corpus.txt", text);
  const std::string model = " --layers 1 --heads 2 --embd 16 --block 16 --batch 4 --eval-every 10 --eval-iters 2 "
                            "--threads 1";
  REQUIRE(run("train --data corpus.txt --out run.h5 --iters 4" + model, dir.file("a")).exit_code == 0);
  const std::string ckpt = dir.file("a/run.h5");
  const json::Value files = at(at(info(ckpt), "training"), "data_files");
  REQUIRE(files.array->size() == 1);
  REQUIRE(at(files.array->at(0), "path").text == dir.file("a/corpus.txt"));  // absolute
  REQUIRE(at(files.array->at(0), "bytes").number == static_cast<double>(text.size()));
  REQUIRE(at(files.array->at(0), "sha256").text.size() == 64);
  // From another folder, by the path stored in the checkpoint.
  Result elsewhere = run("train --resume ../a/run.h5 --iters 6", dir.file("b"));
  INFO(elsewhere.output);
  REQUIRE(elsewhere.exit_code == 0);
  // Moved: refused until --data says where, then accepted because the bytes are the same.
  fs::rename(dir.file("a/corpus.txt"), dir.file("moved.txt"));
  Result lost = run("train --resume " + ckpt + " --iters 8");
  REQUIRE(lost.exit_code == 1);
  REQUIRE_THAT(lost.output, Catch::Contains("the run's text '" + dir.file("a/corpus.txt") +
                                            "' is not there any more: if it moved, give its new place with --data"));
  Result found = run("train --resume " + ckpt + " --iters 8 --data " + dir.file("moved.txt"));
  INFO(found.output);
  REQUIRE(found.exit_code == 0);
  const std::string moved = "iteration 6: train file 1 moved: '" + dir.file("a/corpus.txt") + "' -> '" +
                            dir.file("moved.txt") + "'";
  REQUIRE_THAT(found.output, Catch::Contains("tinygpt: changed at " + moved));
  // Edited in place with the same characters (so the same token count): refused, then --force.
  std::string edited = text;
  std::swap(edited[0], edited[1]);
  dir.write("moved.txt", edited);
  Result changed = run("train --resume " + ckpt + " --iters 10");
  INFO(changed.output);
  REQUIRE(changed.exit_code == 1);
  REQUIRE_THAT(changed.output, Catch::Contains("the text changed since the checkpoint: train file 1 was '" +
                                               dir.file("moved.txt") + "' (" + std::to_string(text.size()) +
                                               " bytes, SHA-256 ") &&
                                   Catch::Contains("give --force to continue on the new text"));
  Result forced = run("train --resume " + ckpt + " --iters 10 --force");
  INFO(forced.output);
  REQUIRE(forced.exit_code == 0);
  std::vector<std::string> changes;  // --iters three times, the move, the change
  const json::Value described = info(ckpt);
  for (const json::Value& line : *at(at(described, "training"), "changes").array) changes.push_back(line.text);
  REQUIRE(changes.size() == 5);
  REQUIRE(changes[0] == "iteration 4: --iters 4 -> 6");
  REQUIRE(changes[2] == moved);
  REQUIRE_THAT(changes[4], Catch::StartsWith("iteration 8: the text changed (--force): train file 1 was '"));
  REQUIRE_THAT(run("info --ckpt " + ckpt).output, Catch::Contains("changed      " + moved));
}

TEST_CASE("cli: a resume may change the intervals and the schedule from now on, and each change is stored",
          "[cli][resume]") {
  TempDir dir;
  const std::string ckpt = dir.file("run.h5");
  REQUIRE(run("train " + small_run(dir) + " --iters 6 --warmup 2 --out " + ckpt).exit_code == 0);
  Result resumed = run("train --resume " + ckpt + " --iters 10 --eval-every 2 --eval-iters 1 --ckpt-every 5 "
                       "--log-every 1 --lr 5e-4 --warmup 0 --lr-decay-iters 10 --sample-every 4");
  INFO(resumed.output);
  REQUIRE(resumed.exit_code == 0);
  for (const char* change : {"changed at iteration 6: --iters 6 -> 10", "changed at iteration 6: --lr 0.001 -> 0.0005",
                             "changed at iteration 6: --min-lr 0.0001 -> 5e-05", "changed at iteration 6: --warmup 2 -> 0",
                             "changed at iteration 6: --lr-decay-iters 0 -> 10", "--eval-every 10 -> 2",
                             "--eval-iters 2 -> 1", "--ckpt-every 500 -> 5", "--log-every 10 -> 1",
                             "--sample-every 0 -> 4", "sample at iteration 8:"})
    REQUIRE_THAT(resumed.output, Catch::Contains(change));
  const json::Value training = at(info(ckpt), "training");
  REQUIRE(at(training, "changes").array->size() == 10);
  REQUIRE(at(at(training, "settings"), "eval-every").number == 2);
  // Rows 1-6 keep the first schedule; rows 7-10 follow the new one: cosine from 5e-4 to 5e-5 over 10.
  const std::string log = read_file(dir.file("run.csv"));
  for (int it = 6; it < 10; ++it) {
    const size_t row = log.find("\n" + std::to_string(it + 1) + ",");
    REQUIRE(row != std::string::npos);
    const std::string fields = log.substr(row + 1, log.find('\n', row + 1) - row - 1);
    const double lr = std::stod(fields.substr(fields.find(',', fields.find(',', fields.find(',') + 1) + 1) + 1));
    const double expected = 5e-5 + 0.5 * (1 + std::cos(3.14159265358979323846 * it / 10.0)) * (5e-4 - 5e-5);
    INFO(fields);
    REQUIRE(lr == Approx(expected).epsilon(1e-6));
  }
  // What would change the steps already taken, or the optimizer's moments, stays refused.
  for (const char* flag : {"--layers 2", "--beta2 0.95", "--batch 8", "--seed 3", "--weight-decay 0"}) {
    Result refused = run("train --resume " + ckpt + " --iters 12 " + flag);
    INFO(flag << "\n" << refused.output);
    REQUIRE(refused.exit_code == 1);
    REQUIRE_THAT(refused.output, Catch::Contains(std::string(flag).substr(0, std::string(flag).find(' ')) +
                                                 " cannot change on --resume"));
  }
}

TEST_CASE("cli: --beta1/--beta2, --keep-best and --sample-every, which change no number",
          "[cli][flags]") {
  TempDir dir;
  const std::string args = "train " + small_run(dir) + " --iters 30 --beta2 0.95 ";  // estimates at 10, 20, 30
  Result with = run(args + "--keep-best --sample-every 10 --out " + dir.file("with.h5"));
  INFO(with.output);
  REQUIRE(with.exit_code == 0);
  REQUIRE_THAT(with.output, Catch::Contains("tinygpt: sample at iteration 10:\n") &&
                                Catch::Contains("tinygpt: sample at iteration 20:\n") &&
                                Catch::Contains("best val loss ") && Catch::Contains("with.best.h5"));
  REQUIRE(run(args + "--out " + dir.file("without.h5")).exit_code == 0);
  const json::Value a = at(info(dir.file("with.h5")), "training"), b = at(info(dir.file("without.h5")), "training");
  REQUIRE(at(a, "train_loss").text == at(b, "train_loss").text);  // every digit
  REQUIRE(at(a, "val_loss").text == at(b, "val_loss").text);
  REQUIRE(at(at(a, "settings"), "beta2").number == 0.95);
  REQUIRE(at(at(a, "settings"), "keep-best").boolean);
  // The best checkpoint is the one at the lowest of the run's validation estimates.
  const json::Value best = at(info(dir.file("with.best.h5")), "training");
  double lowest = 1e9;
  int64_t lowest_at = 0;
  std::istringstream rows(read_file(dir.file("with.csv")));
  std::string row;
  std::getline(rows, row);
  while (std::getline(rows, row)) {
    const size_t a1 = row.find(','), a2 = row.find(',', a1 + 1), a3 = row.find(',', a2 + 1);
    if (a3 == a2 + 1) continue;  // no estimate on this row
    const double val = std::stod(row.substr(a2 + 1, a3 - a2 - 1));
    if (val < lowest) lowest = val, lowest_at = std::stoll(row.substr(0, a1));
  }
  REQUIRE(at(best, "iteration").number == static_cast<double>(lowest_at));
  REQUIRE(at(best, "best_val_loss").number == Approx(lowest).epsilon(1e-7));
  REQUIRE(at(at(info(dir.file("with.h5")), "training"), "best_val_loss").number == Approx(lowest).epsilon(1e-7));
}

TEST_CASE("cli: --snapshot-every keeps copies a resume continues, changes no number, never replaces another's",
          "[cli][flags]") {
  TempDir dir;
  const std::string args = "train " + small_run(dir) + " --iters 20 ";
  REQUIRE(run(args + "--snapshot-every 10 --out " + dir.file("snap.h5")).exit_code == 0);
  REQUIRE(run(args + "--out " + dir.file("plain.h5")).exit_code == 0);
  REQUIRE(at(at(info(dir.file("snap.step10.h5")), "training"), "iteration").number == 10);
  REQUIRE(at(at(info(dir.file("snap.step20.h5")), "training"), "train_loss").text ==
          at(at(info(dir.file("plain.h5")), "training"), "train_loss").text);
  // A snapshot is a checkpoint: it resumes to the same end as the run itself.
  REQUIRE(run("train --resume " + dir.file("snap.step10.h5") + " --out " + dir.file("again.h5")).exit_code == 0);
  REQUIRE(at(at(info(dir.file("again.h5")), "training"), "train_loss").text ==
          at(at(info(dir.file("plain.h5")), "training"), "train_loss").text);
  // A new run whose snapshots would land on another run's refuses before training, naming the file.
  for (const char* ext : {".h5", ".csv", ".jsonl", ".svg"})
    std::filesystem::rename(dir.file(std::string("snap") + ext), dir.file(std::string("moved") + ext));
  const Result refused = run(args + "--snapshot-every 5 --out " + dir.file("snap.h5"));
  REQUIRE(refused.exit_code == 1);
  REQUIRE_THAT(refused.output, Catch::Contains("/snap.step") && Catch::Contains(".h5' is a checkpoint at iteration") &&
                                   Catch::Contains("--force"));
  // explain refuses to replace a file that is not its page.
  const Result page = run("explain --ckpt " + dir.file("moved.h5") + " --text hello --out " + dir.file("moved.csv"));
  REQUIRE(page.exit_code == 1);
  REQUIRE_THAT(page.output, Catch::Contains("moved.csv' is the log of a run (20 rows, to iteration 20), not a tinygpt "
                                            "explain page: not replacing it, --force or not"));
}

TEST_CASE("cli: flags: unknown ones get the nearest, --version, choices in --help, one spelling", "[cli][flags]") {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"train --iter 5", "unknown flag --iter (did you mean --iters?); see tinygpt train --help"},
      {"bench --vocab 65", "unknown flag --vocab (did you mean --vocab-size?); see tinygpt bench --help"},
      {"bench --steps 3", "unknown flag --steps (did you mean --iters?); see tinygpt bench --help"},
      {"info --ckpt x.h5 --verbose", "unknown flag --verbose; see tinygpt info --help"},
      {"eval --data x.txt", "--ckpt is required (see tinygpt eval --help)"},
      {"train stray", "unexpected value 'stray': every value follows its flag (see tinygpt train --help)"},
      {"sample --ckpt x.h5 --temprature 1", "unknown flag --temprature (did you mean --temperature?); see tinygpt "
                                            "sample --help"},
      // A flag after a valueless --data is not taken for a file.
      {"train --data --iters 3", "--data takes files, and got the flag '--iters' (a file whose name starts with -- is "
                                 "given as ./--iters)"},
      {"train --data a.txt --val-data --iters 3", "--val-data takes files, and got the flag '--iters' (a file whose "
                                                  "name starts with -- is given as ./--iters)"},
      {"eval --ckpt x.h5 --data --json", "--data takes files, and got the flag '--json' (a file whose name starts "
                                         "with -- is given as ./--json)"},
      {"prepare --data --out x", "--data takes files, and got the flag '--out' (a file whose name starts with -- is "
                                 "given as ./--out)"},
  };
  for (const auto& [args, message] : cases) {
    const Result r = run(args);
    INFO(args);
    REQUIRE(r.exit_code == 1);
    REQUIRE(r.output == "tinygpt: error: " + message + "\n");
  }
  const Result version = run("--version");
  REQUIRE(version.exit_code == 0);
  REQUIRE_THAT(version.output, Catch::Matches("tinygpt [0-9]+\\.[0-9]+(\\.[0-9]+)?\n"));
  const Result help = run("train --help");
  REQUIRE_THAT(help.output, Catch::Contains("--tokenizer char|bpe") && Catch::Contains("--precision fp32|bf16") &&
                                Catch::Contains("--force") && Catch::Contains("--keep-best") &&
                                Catch::Contains("--lr-decay-iters") && Catch::Contains("--beta2"));
  REQUIRE_THAT(run("bench --help").output, Catch::Contains("--vocab-size") && Catch::Contains("--iters"));
}

TEST_CASE("cli: --arch llama and each piece's flag through train, info, eval, sample, attention, and the shape stays",
          "[cli][llama]") {
  TempDir dir;
  const std::string ckpt = dir.file("llama.h5");
  Result trained = run("train " + small_run(dir, "4") + " --iters 6 --arch llama --kv-heads 2 --rope-theta 500 --out " +
                       ckpt);
  INFO(trained.output);
  REQUIRE(trained.exit_code == 0);
  const json::Value model = at(info(ckpt), "model");
  REQUIRE(at(model, "norm").text == "rmsnorm");
  REQUIRE(at(model, "position").text == "rope");
  REQUIRE(at(model, "mlp").text == "swiglu");
  REQUIRE(at(model, "ffn_hidden").number == 64);  // 2/3 of 4 x 16, rounded up to a multiple of 32
  REQUIRE(at(model, "n_kv_head").number == 2);
  REQUIRE(at(model, "rope_theta").number == 500);
  REQUIRE(at(model, "bias").type == json::Value::Type::boolean);
  REQUIRE_FALSE(at(model, "bias").boolean);
  const Result text = run("info --ckpt " + ckpt);
  REQUIRE_THAT(text.output, Catch::Contains("architecture rmsnorm (eps 1e-05), rope positions (theta 500), swiglu "
                                            "feed-forward of 64, 2 key/value heads of 4, no biases, output tied to wte") &&
                                Catch::Contains("--arch llama --norm rmsnorm") && Catch::Contains("--no-bias"));
  REQUIRE(run("eval --ckpt " + ckpt + " --data " + dir.file("corpus.txt")).exit_code == 0);
  REQUIRE(run("sample --ckpt " + ckpt + " --tokens 20 --prompt To").exit_code == 0);
  const Result steps = run("attention --ckpt " + ckpt + " --text 'To be' --steps --head 3");
  REQUIRE_THAT(steps.output, Catch::Contains("Q = RoPE(ln_1(x) W_q, position)") &&
                                 Catch::Contains("key/value head 1 of 2, which query heads 2..3 share"));
  REQUIRE(run("train --resume " + ckpt + " --iters 8").exit_code == 0);
  // Fine-tuning starts from its weights and shape; bf16 and grouped heads train together.
  const Result tuned = run("train --init-from " + ckpt + " --data " + dir.file("corpus.txt") + " --iters 2 --out " +
                           dir.file("tuned.h5") + " --precision bf16");
  INFO(tuned.output);
  REQUIRE(tuned.exit_code == 0);
  REQUIRE(at(at(info(dir.file("tuned.h5")), "model"), "n_kv_head").number == 2);
  // A piece on its own overrides the arch; each piece alone on GPT-2 works.
  const std::string mixed = dir.file("mixed.h5");
  REQUIRE(run("train " + small_run(dir) + " --iters 2 --arch llama --mlp gelu --bias --no-tie --out " + mixed).exit_code == 0);
  const json::Value m = at(info(mixed), "model");
  REQUIRE(at(m, "mlp").text == "gelu");
  REQUIRE(at(m, "ffn_hidden").number == 64);
  REQUIRE(at(m, "bias").boolean);
  REQUIRE_FALSE(at(m, "tie_embeddings").boolean);
  // The shape is the checkpoint's: refused on resume and with --init-from; explain opens it up.
  const Result resumed = run("train --resume " + ckpt + " --norm layernorm");
  REQUIRE_THAT(resumed.output, Catch::Contains("--norm cannot change on --resume"));
  const Result init = run("train --init-from " + ckpt + " --data " + dir.file("corpus.txt") + " --kv-heads 4 --out " +
                          dir.file("ft.h5"));
  REQUIRE_THAT(init.output, Catch::Contains("--kv-heads cannot be given with --init-from"));
  const Result page = run("explain --ckpt " + ckpt + " --text To --out " + dir.file("p.html"));
  INFO(page.output);
  REQUIRE(page.exit_code == 0);
  REQUIRE_THAT(read_file(dir.file("p.html")), Catch::Contains("\"position\": \"rope\""));
  const Result bad = run("train " + small_run(dir, "4") + " --iters 2 --kv-heads 3 --out " + dir.file("bad.h5"));
  REQUIRE(bad.exit_code == 1);
  REQUIRE_THAT(bad.output, Catch::Contains("n_kv_head 3 does not divide n_head 4"));
  REQUIRE_THAT(run("train --help").output, Catch::Contains("--arch gpt2|llama") && Catch::Contains("--no-bias") &&
                                               Catch::Contains("--position learned|rope"));
  REQUIRE(run("bench --arch llama --kv-heads 2 --iters 1 --layers 1 --embd 32").exit_code == 0);
}

TEST_CASE("cli: eval reports bits per byte and the text's bytes beside nats per token", "[cli][eval]") {
  TempDir dir;
  const std::string ckpt = dir.file("run.h5");
  REQUIRE(run("train " + small_run(dir) + " --iters 4 --out " + ckpt).exit_code == 0);
  Result r = run("eval --json --ckpt " + ckpt + " --data " + dir.file("corpus.txt"));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const json::Value v = json::parse(r.output, "eval --json");
  const double loss = at(v, "loss").number, tokens = at(v, "tokens").number, bytes = at(v, "bytes").number;
  // The text's bytes: the file's size; the Hangul characters take 3 bytes each, so there are more
  // bytes than tokens.
  REQUIRE(bytes == static_cast<double>(fs::file_size(dir.file("corpus.txt"))));
  REQUIRE(at(v, "bytes_of").text == "text");
  REQUIRE(bytes > tokens);
  REQUIRE(at(v, "bits_per_byte").number == Approx(loss * tokens / (bytes * std::log(2.0))).epsilon(1e-5));
  Result table = run("eval --ckpt " + ckpt + " --data " + dir.file("corpus.txt"));
  REQUIRE_THAT(table.output, Catch::Contains("  bits/byte ") && Catch::Contains("  bytes "));
}

namespace {
// Each row's first three fields (iter, train_loss, val_loss) of a run's CSV log.
std::vector<std::string> loss_columns(const std::string& log) {
  std::vector<std::string> rows;
  std::istringstream in(read_file(log));
  for (std::string line; std::getline(in, line);) {
    size_t comma = 0;
    for (int k = 0; k < 3 && comma != std::string::npos; ++k) comma = line.find(',', comma + 1);
    rows.push_back(line.substr(0, comma));
  }
  return rows;
}

// Starts `args`, waits until its log has a row and then `delay`, sends SIGTERM, and returns how
// long the run took to end after it, with its result.
std::pair<double, Run> stop_during(const std::string& args, const std::string& log, const TempDir& dir,
                                   std::chrono::milliseconds delay) {
  Process p(words(args), dir.file("stopped.out"));
  REQUIRE(wait_for_rows(log));
  std::this_thread::sleep_for(delay);
  const auto t0 = std::chrono::steady_clock::now();
  REQUIRE(kill(p.pid(), SIGTERM) == 0);
  Run r = p.wait(std::chrono::seconds(120));
  return {std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), r};
}
}  // namespace

TEST_CASE("cli: a signal during an evaluation ends the run within a second, and the resume evaluates first",
          "[cli][signals]") {
  TempDir dir;
  const std::string common = small_run(dir) + " --iters 4 --eval-every 2";
  REQUIRE(run("train " + common + " --out " + dir.file("whole.h5")).exit_code == 0);
  // 10^6 validation batches: an evaluation that takes minutes.
  const std::string ckpt = dir.file("run.h5");
  const auto [seconds, stopped] = stop_during("train " + common + " --eval-iters 1000000 --out " + ckpt,
                                              dir.file("run.csv"), dir, std::chrono::milliseconds(500));
  INFO(stopped.output);
  REQUIRE(stopped.exit_code == 143);
  REQUIRE(seconds < 5);  // a loaded machine's margin over "within a second"
  REQUIRE_THAT(stopped.output, Catch::Contains("a signal cut short the evaluation at iteration 2: train --resume does "
                                               "it first"));
  REQUIRE(at(at(info(ckpt), "training"), "iteration").number == 2);
  REQUIRE(at(at(info(ckpt), "training"), "eval_pending").boolean);
  REQUIRE(loss_columns(dir.file("run.csv")).back().substr(0, 2) == "2,");
  REQUIRE(loss_columns(dir.file("run.csv")).back().back() == ',');  // no validation loss yet
  // The resume evaluates iteration 2 first and fills its row: the log then equals the whole run's.
  const Result resumed = run("train --resume " + ckpt + " --eval-iters 2");
  INFO(resumed.output);
  REQUIRE(resumed.exit_code == 0);
  REQUIRE_THAT(resumed.output, Catch::Contains("the evaluation at iteration 2, which a signal cut short, is done"));
  REQUIRE(loss_columns(dir.file("run.csv")) == loss_columns(dir.file("whole.csv")));
  REQUIRE_FALSE(at(at(info(ckpt), "training"), "eval_pending").boolean);
  // At the last iteration the resume's evaluation is saved: the file says so, and a later resume
  // has nothing to do.
  const std::string last = dir.file("last.h5");
  const auto [last_seconds, last_stopped] = stop_during("train " + small_run(dir) + " --iters 2 --eval-every 2 "
                                                        "--eval-iters 1000000 --keep-best --out " + last,
                                                        dir.file("last.csv"), dir, std::chrono::milliseconds(500));
  INFO(last_stopped.output);
  REQUIRE(last_stopped.exit_code == 143);
  REQUIRE(run("train --resume " + last + " --eval-iters 2").exit_code == 0);
  const json::Value finished = at(info(last), "training");
  REQUIRE_FALSE(at(finished, "eval_pending").boolean);
  REQUIRE(at(finished, "val_loss").type == json::Value::Type::number);
  REQUIRE_FALSE(at(at(info(dir.file("last.best.h5")), "training"), "eval_pending").boolean);
  const std::string metrics = read_file(dir.file("last.jsonl"));
  REQUIRE(run("train --resume " + last).exit_code == 0);
  REQUIRE(read_file(dir.file("last.jsonl")) == metrics);  // no evaluation again
  // A long multiple-choice task: the same within a second, between its passes.
  std::string task;
  for (int i = 0; i < 60000; ++i)
    task += R"({"ctx": "To be, or not to be, that is the question. To be", "endings": [", or not", " question"], "label": 0})" "\n";
  dir.write("task.jsonl", task);
  fs::remove(dir.file("run.csv"));  // rows in it then mean the run below is training
  const auto [task_seconds, task_stopped] =
      stop_during("train " + common + " --eval-task " + dir.file("task.jsonl") + " --force --out " + ckpt,
                  dir.file("run.csv"), dir, std::chrono::milliseconds(500));
  INFO(task_stopped.output);
  REQUIRE(task_stopped.exit_code == 143);
  REQUIRE(task_seconds < 5);
  REQUIRE_THAT(task_stopped.output, Catch::Contains("a signal cut short the evaluation at iteration 2"));
}

TEST_CASE("cli: a write the system refuses names its reason, and the last checkpoint stays", "[cli][errors]") {
  TempDir dir;
  const std::string ckpt = dir.file("run.h5");
  REQUIRE(run("train " + small_run(dir) + " --iters 4 --out " + ckpt).exit_code == 0);
  const std::string before = read_file(ckpt);
  REQUIRE(before.size() > 60 * 1024);
  // Files may grow to 40 KB (as a full disk, the write fails; SIGXFSZ ignored, so write() says why).
  const std::string limited = "bash -c 'ulimit -f 40; trap \"\" XFSZ; exec " + std::string(TINYGPT_BINARY) +
                              " train --resume " + ckpt + " --iters 6' 2>&1";
  const Result r = shell(limited);
  INFO(r.output);
  REQUIRE(r.exit_code == 1);
  REQUIRE_THAT(r.output, Catch::EndsWith("tinygpt: error: cannot write checkpoint '" + ckpt + "': File too large\n"));
  REQUIRE(read_file(ckpt) == before);
  for (const auto& entry : fs::directory_iterator(dir.file("")))  // no temporary file left behind
    REQUIRE(entry.path().filename().string().find(".tmp-") == std::string::npos);
  REQUIRE_FALSE(fs::exists(ckpt + ".tinygpt-lock"));
}

TEST_CASE("cli: the memory line's estimate is within 20% of the run's measured peak, on two shapes",
          "[cli][memory]") {
  TempDir dir;
  std::string text;
  for (int i = 0; text.size() < 60000; ++i)
    text += "Line " + std::to_string(i * 7919 % 1000) + ": the quick brown fox jumps over the lazy dog.\n";
  const std::string data = dir.write("text.txt", text);
  for (const char* shape : {"--layers 4 --heads 4 --embd 128 --block 64 --batch 48",
                            "--layers 2 --heads 4 --embd 192 --block 256 --batch 16 --sample-every 3"}) {
    INFO(shape);
    std::vector<std::string> args = {"train", "--data", data, "--iters", "3", "--eval-every", "3", "--eval-iters", "1",
                                     "--threads", "2", "--force", "--out", dir.file("m.h5")};
    std::istringstream words(shape);
    for (std::string w; words >> w;) args.push_back(w);
    const Run r = Process(args, dir.file("out.txt")).wait(std::chrono::minutes(2));
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    const size_t at = r.output.find("tinygpt: memory: about ");
    REQUIRE(at != std::string::npos);
    const double estimate_mb = std::stod(r.output.substr(at + 23));
    const double measured_mb = static_cast<double>(r.peak_rss_mb) * 1.048576;  // MiB to MB
    REQUIRE(estimate_mb > 0.8 * measured_mb);
    REQUIRE(estimate_mb < 1.2 * measured_mb);
    const size_t fit = r.output.find("micro-batches up to ", at);
    REQUIRE(fit != std::string::npos);
    REQUIRE(std::stoll(r.output.substr(fit + 20)) > 48);
  }
}

TEST_CASE("cli: train --config repeats a run bit for bit from info --config's file, and flags win over it",
          "[cli][config]") {
  TempDir dir;
  const std::string args = small_run(dir) + " --iters 12 --arch llama --kv-heads 1 --lr 0.003 --seed 5 --no-bias";
  REQUIRE(run("train " + args + " --out " + dir.file("a.h5")).exit_code == 0);
  const Result wrote = run("info --ckpt " + dir.file("a.h5") + " --config " + dir.file("a.json"));
  INFO(wrote.output);
  REQUIRE(wrote.exit_code == 0);
  const std::string settings = read_file(dir.file("a.json"));
  REQUIRE(settings.starts_with("{\n  \"tinygpt\": \"train settings\",\n"));
  REQUIRE(settings.find("\"kv-heads\": 1") != std::string::npos);
  REQUIRE(settings.find("\"out\"") == std::string::npos);  // where a run writes is the command line's
  const json::Value parsed = json::parse(settings, "a.json");  // plain JSON
  REQUIRE(parsed.find("lr")->text == "0.003");

  const Result again = run("train --config " + dir.file("a.json") + " --out " + dir.file("b.h5"));
  INFO(again.output);
  REQUIRE(again.exit_code == 0);
  auto weights_of = [&](const char* ckpt) {  // the exported weights, byte for byte
    const std::string out = dir.file(std::string(ckpt) + ".hf");
    const Result exported = run("export --ckpt " + dir.file(ckpt) + " --format hf --weights-only --out " + out);
    INFO(exported.output);
    REQUIRE(exported.exit_code == 0);
    return read_file(out + "/model.safetensors");
  };
  REQUIRE(weights_of("a.h5") == weights_of("b.h5"));

  // A flag on the command line wins over the file.
  REQUIRE(run("train --config " + dir.file("a.json") + " --iters 5 --out " + dir.file("c.h5")).exit_code == 0);
  REQUIRE(at(at(info(dir.file("c.h5")), "training"), "iteration").number == 5);

  // Files named relative to where the run started are stored, and written, as absolute paths.
  REQUIRE(run("train " + small_run(dir) + " --iters 2 --tokenizer-from a.h5 --out d.h5", dir.file("")).exit_code == 0);
  REQUIRE(run("info --ckpt d.h5 --config d.json", dir.file("")).exit_code == 0);
  REQUIRE(read_file(dir.file("d.json")).find("\"tokenizer-from\": \"" + dir.file("a.h5") + "\"") != std::string::npos);
}

TEST_CASE("cli: a settings file with more flags trains as its command line with them", "[cli][config]") {
  TempDir dir;
  const std::string base = small_run(dir) + " --iters 3";
  auto weights = [&](const std::string& ckpt) { return at(at(info(ckpt), "digests"), "weights").text; };
  int n = 0;
  // lr re-derives --min-lr; --arch gpt2 takes gpt2's pieces, not the file's llama ones; --heads
  // and --embd re-derive the key/value heads and the feed-forward width.
  for (const auto& [original, more] : std::vector<std::pair<std::string, std::string>>{
           {"", " --lr 0.01"}, {"", " --lr 5e-5"}, {" --arch llama", " --arch gpt2"}, {" --arch llama", " --heads 4 --embd 32"},
           {" --lr 0.003 --min-lr 0.001", " --lr 0.01"}, {" --arch llama --norm layernorm", " --arch gpt2"},
           // Given with the value they would be derived to: still given.
           {" --min-lr 0.0001", " --lr 0.003"}, {" --norm layernorm --tie", " --arch llama"}}) {
    INFO(original << " + " << more);
    const std::string first = dir.file("first" + std::to_string(n) + ".h5"), json = dir.file(std::to_string(n) + ".json");
    const std::string replay = dir.file("replay" + std::to_string(n) + ".h5"), plain = dir.file("plain" + std::to_string(n) + ".h5");
    ++n;
    REQUIRE(run("train " + base + original + " --out " + first).exit_code == 0);
    REQUIRE(run("info --ckpt " + first + " --config " + json).exit_code == 0);
    const Result replayed = run("train --config " + json + more + " --out " + replay);
    INFO(replayed.output);
    REQUIRE(replayed.exit_code == 0);
    REQUIRE(run("train " + base + original + more + " --out " + plain).exit_code == 0);
    REQUIRE(weights(replay) == weights(plain));
    const json::Value a = at(at(info(replay), "training"), "settings"), b = at(at(info(plain), "training"), "settings");
    for (const char* key : {"lr", "min-lr", "arch", "norm", "position", "mlp", "bias", "kv-heads", "ffn-hidden"})
      REQUIRE(at(a, key).text == at(b, key).text);
  }
  // A fine-tuning run's file starts from the same checkpoint: the replay is the fine-tune, with
  // more flags as its command line with them (and a shape flag refused as there).
  const std::string tune = "train --init-from " + dir.file("first2.h5") + " --data " + dir.file("corpus.txt") +
                           " --iters 2 --eval-iters 1 --block 8";
  REQUIRE(run(tune + " --out " + dir.file("ft.h5")).exit_code == 0);
  REQUIRE_THAT(run("info --ckpt " + dir.file("ft.h5")).output, Catch::Contains("started from " + dir.file("first2.h5")));
  REQUIRE(run("info --ckpt " + dir.file("ft.h5") + " --config " + dir.file("ft.json")).exit_code == 0);
  const std::string ft_json = read_file(dir.file("ft.json"));
  REQUIRE(ft_json.find("\"init-from\": \"" + dir.file("first2.h5") + "\"") != std::string::npos);
  REQUIRE(ft_json.find("kv-heads") == std::string::npos);  // the checkpoint's
  REQUIRE(run("train --config " + dir.file("ft.json") + " --out " + dir.file("ft2.h5")).exit_code == 0);
  REQUIRE(weights(dir.file("ft2.h5")) == weights(dir.file("ft.h5")));
  REQUIRE(run("train --config " + dir.file("ft.json") + " --lr 0.002 --out " + dir.file("ft3.h5")).exit_code == 0);
  REQUIRE(run(tune + " --lr 0.002 --out " + dir.file("ft4.h5")).exit_code == 0);
  REQUIRE(weights(dir.file("ft3.h5")) == weights(dir.file("ft4.h5")));
  REQUIRE(weights(dir.file("ft3.h5")) != weights(dir.file("ft.h5")));
  REQUIRE_THAT(run("train --config " + dir.file("ft.json") + " --heads 4 --out " + dir.file("ft5.h5")).output,
               Catch::Contains("--heads cannot be given with --init-from"));
}

TEST_CASE("cli: a run changed on --resume, or of another rank count, is not repeated by a settings file",
          "[cli][config]") {
  TempDir dir;
  const std::string ckpt = dir.file("run.h5");
  REQUIRE(run("train " + small_run(dir) + " --iters 3 --out " + ckpt).exit_code == 0);
  REQUIRE(run("train --resume " + ckpt + " --iters 5 --lr 5e-4").exit_code == 0);
  const Result refused = run("info --ckpt " + ckpt + " --config " + dir.file("run.json"));
  INFO(refused.output);
  REQUIRE(refused.exit_code == 1);
  REQUIRE_THAT(refused.output, Catch::Contains("the run changed on --resume (") &&
                                   Catch::Contains("iteration 3: --iters 3 -> 5") &&
                                   Catch::Contains("iteration 3: --lr 0.001 -> 0.0005") &&
                                   Catch::Contains("cannot repeat this run"));
  REQUIRE_FALSE(fs::exists(dir.file("run.json")));
  // Moved text changes no number: its run is repeated.
  fs::create_directory(dir.file("moved"));
  fs::copy_file(dir.file("corpus.txt"), dir.file("moved/corpus.txt"));
  REQUIRE(run("train " + small_run(dir) + " --iters 2 --out " + dir.file("m.h5")).exit_code == 0);
  REQUIRE(run("train --resume " + dir.file("m.h5") + " --data " + dir.file("moved/corpus.txt")).exit_code == 0);
  REQUIRE(run("info --ckpt " + dir.file("m.h5") + " --config " + dir.file("m.json")).exit_code == 0);
  // A file of a two-rank run asks for two ranks.
  const std::string two = dir.write("two.json", "{\"tinygpt\": \"train settings\", \"ranks\": 2, \"iters\": 2}");
  const Result one = run("train --config " + two + " " + small_run(dir) + " --out " + dir.file("two.h5"));
  REQUIRE(one.exit_code == 1);
  REQUIRE_THAT(one.output, Catch::Contains("is of a run of 2 ranks, this one has 1") &&
                               Catch::Contains("start it with mpirun -np 2"));
  REQUIRE_FALSE(fs::exists(dir.file("two.h5")));
}

TEST_CASE("cli: a settings file's mistakes are one clear error, and nothing is written", "[cli][config][errors]") {
  TempDir dir;
  const std::string data = dir.write("t.txt", std::string(2000, 'a') + "bc\n");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"{\"lyers\": 4}", "\"lyers\" is not a setting of tinygpt train (did you mean \"layers\"?)"},
      {"{\"layers\": \"four\"}", "\"layers\" must be a whole number (got a string)"},
      {"{\"layers\": 2.5}", "\"layers\" must be a whole number (got 2.5)"},
      {"{\"lr\": 20}", "\"lr\" must be at most 10 (got 20)"},
      {"{\"norm\": \"batchnorm\"}", "\"norm\" must be layernorm or rmsnorm (got 'batchnorm')"},
      {"{\"keep-best\": 1}", "\"keep-best\" must be true or false (got a number)"},
      {"[1, 2]", "must hold one JSON object of settings"},
      {"{\"layers\": 2,}", "settings file '"}};
  for (const auto& [text, message] : cases) {
    const std::string file = dir.write("bad.json", text);
    const Result r = run("train --config " + file + " --data " + data + " --iters 2 --out " + dir.file("x.h5"));
    INFO(text << "\n" << r.output);
    REQUIRE(r.exit_code == 1);
    REQUIRE_THAT(r.output, Catch::Contains(message));
    REQUIRE_FALSE(std::filesystem::exists(dir.file("x.h5")));
  }
  REQUIRE_THAT(run("train --config " + dir.file("none.json") + " --data " + data).output,
               Catch::Contains("none.json': no such file"));
  // A settings file never says where a run writes: "out" is refused unless --out says it.
  const std::string elsewhere = dir.write("out.json", "{\"out\": \"" + dir.file("elsewhere.h5") + "\", \"iters\": 2}");
  const Result out_in_file = run("train --config " + elsewhere + " --data " + data + " --layers 1 --heads 1 --embd 8 "
                                 "--block 8 --batch 2", dir.file(""));
  INFO(out_in_file.output);
  REQUIRE(out_in_file.exit_code == 1);
  REQUIRE_THAT(out_in_file.output, Catch::Contains("\"out\" names where the run writes, which only the command line says"));
  REQUIRE_FALSE(std::filesystem::exists(dir.file("elsewhere.h5")));
  REQUIRE_FALSE(std::filesystem::exists(dir.file("run.h5")));
  // An empty "data" is no data, not the default corpus.
  const Result no_data = run("train --config " + dir.write("nodata.json", "{\"data\": []}") + " --iters 2 --out " +
                             dir.file("x.h5"));
  REQUIRE(no_data.exit_code == 1);
  REQUIRE_THAT(no_data.output, Catch::Contains("\"data\" is empty: name the files or folders to train on"));
  REQUIRE_FALSE(std::filesystem::exists(dir.file("x.h5")));
  REQUIRE_THAT(run("train --config " + dir.write("ok.json", "{}") + " --resume " + dir.file("x.h5")).output,
               Catch::Contains("--config starts a new run from a settings file; --resume takes its settings"));
  // info --config never replaces a file that is not a settings file.
  REQUIRE(run("train --data " + data + " --layers 1 --heads 1 --embd 8 --block 8 --batch 2 --iters 2 --out " +
              dir.file("r.h5")).exit_code == 0);
  const std::string notes = dir.write("notes.json", "{\"mine\": true}\n");
  const Result refused = run("info --ckpt " + dir.file("r.h5") + " --config " + notes);
  REQUIRE(refused.exit_code == 1);
  REQUIRE_THAT(refused.output, Catch::Contains("notes.json"));
  REQUIRE_THAT(refused.output, Catch::Contains("--config") && !Catch::Contains("--out"));  // info's own flag
  REQUIRE(read_file(notes) == "{\"mine\": true}\n");
}

TEST_CASE("cli: plot reads a run's .jsonl as its CSV, and draws the gradient norm, clipped steps marked",
          "[cli][plot]") {
  TempDir dir;
  REQUIRE(run("train " + small_run(dir) + " --iters 20 --grad-clip 0.5 --out " + dir.file("run.h5")).exit_code == 0);
  REQUIRE(run("plot --log " + dir.file("run.csv") + " --out " + dir.file("csv.svg")).exit_code == 0);
  REQUIRE(run("plot --log " + dir.file("run.jsonl") + " --out " + dir.file("jsonl.svg")).exit_code == 0);
  auto drawn = [&](const std::string& svg) {  // everything after the title, which names the file
    const std::string text = read_file(dir.file(svg));
    return text.substr(text.find("</text>"));
  };
  REQUIRE(drawn("csv.svg") == drawn("jsonl.svg"));
  const std::string svg = read_file(dir.file("csv.svg"));
  REQUIRE(svg.find("class=\"grad\"") != std::string::npos);
  REQUIRE(svg.find("log10 gradient norm") != std::string::npos);
  REQUIRE(svg.find("class=\"clipped\"") != std::string::npos);  // a 0.5 clip acts on a fresh model
  REQUIRE(svg.find("class=\"skipped\"") == std::string::npos);
  // Several runs, CSV and JSONL mixed, in one picture.
  REQUIRE(run("plot --log " + dir.file("run.csv") + " --log " + dir.file("run.jsonl") + " --out " + dir.file("two.svg"))
              .exit_code == 0);
  REQUIRE_THAT(run("plot --log " + dir.write("x.jsonl", "{}\n") + " --out " + dir.file("x.svg")).output,
               Catch::Contains("is not a tinygpt metrics file"));
}

TEST_CASE("cli: an endless stdin line is refused, and a log name that is not UTF-8 still makes a well-formed SVG",
          "[cli][errors]") {
  TempDir dir;
  REQUIRE(run("train " + small_run(dir) + " --iters 2 --out " + dir.file("run.h5")).exit_code == 0);
  // 2 MB without a newline, then a prompt: the first is reported and skipped, the second sampled.
  dir.write("lines.txt", std::string(size_t{2} << 20, 'a') + "\nTo be\n");
  const Result sampled = shell(std::string(TINYGPT_BINARY) + " sample --interactive --tokens 4 --ckpt " +
                               dir.file("run.h5") + " < " + dir.file("lines.txt") + " 2>&1");
  REQUIRE(sampled.exit_code == 1);
  REQUIRE_THAT(sampled.output, Catch::Contains("tinygpt: error: stdin line 1 is longer than 1048576 bytes") &&
                                   Catch::Contains("some lines of stdin could not be sampled"));
  REQUIRE(sampled.output.size() < 4096);  // the long line itself is never echoed
  const Result endless = shell("head -c 3000000 /dev/zero | tr '\\0' b | " + std::string(TINYGPT_BINARY) +
                               " sample --interactive --tokens 4 --ckpt " + dir.file("run.h5") + " 2>&1");
  REQUIRE(endless.exit_code == 1);
  REQUIRE_THAT(endless.output, Catch::Contains("stdin line 1 is longer than"));
  // A character the vocabulary lacks skips its line, named by its stdin line, and the next is sampled.
  dir.write("three.txt", "To be\nab\xE2\x82\xAC\nnot\n");
  const Result unknown = shell(std::string(TINYGPT_BINARY) + " sample --interactive --tokens 2 --ckpt " +
                               dir.file("run.h5") + " < " + dir.file("three.txt") + " 2>&1");
  INFO(unknown.output);
  REQUIRE(unknown.exit_code == 1);
  REQUIRE_THAT(unknown.output, Catch::Contains("tinygpt: error: stdin line 2: '\xE2\x82\xAC' (U+20AC) at byte 3 is not "
                                               "in the character vocabulary"));
  size_t samples = 0;
  for (size_t at = unknown.output.find("tinygpt: 1 sample"); at != std::string::npos;
       at = unknown.output.find("tinygpt: 1 sample", at + 1))
    ++samples;
  REQUIRE(samples == 2);
  // Two logs, one named with bytes that are not UTF-8: the legend shows U+FFFD, the file stays XML.
  const std::string odd = dir.file("run\xff\xfe.csv");
  std::filesystem::copy_file(dir.file("run.csv"), odd);
  const Result plotted = run("plot --log " + dir.file("run.csv") + " " + odd + " --out " + dir.file("two.svg"));
  INFO(plotted.output);
  REQUIRE(plotted.exit_code == 0);
  const std::string svg = read_file(dir.file("two.svg"));
  REQUIRE(tinygpt::data::find_invalid_utf8(svg) == std::string::npos);
  REQUIRE(svg.find("run\xEF\xBF\xBD") != std::string::npos);
}
