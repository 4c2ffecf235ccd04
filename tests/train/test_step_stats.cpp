// The step's statistics in the CSV log, the JSON-lines metrics and the progress line: checked
// against the gradients and weights themselves, across thread counts, and across a resume.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "temp_files.h"
#include "tinygpt/autograd/threads.h"
#include "tinygpt/data/json.h"
#include "tinygpt/io/run_log.h"
#include "tinygpt/io/run_metrics.h"
#include "tinygpt/optim/grad_clip.h"
#include "tinygpt/train/checkpoint.h"
#include "tinygpt/train/spike_guard.h"
#include "tinygpt/train/step_stats.h"
#include "tinygpt/train/trainer.h"
#include "train_helpers.h"

using namespace tinygpt;
using namespace tinygpt::train;
using tinygpt::testing::Quiet;
using tinygpt::testing::TempDir;

namespace {

TrainOptions small_run(const TempDir& dir, const std::string& out) {
  std::string text;
  for (int i = 0; i < 40; ++i) text += "the cat sat on the mat. the dog ate the log.\n";
  TrainOptions o;
  o.data = {dir.write("tiny.txt", text)};
  o.out = dir.file(out);
  o.layers = 2, o.heads = 2, o.embd = 16, o.block = 16, o.batch = 4;
  o.iters = 8, o.warmup = 2, o.eval_every = 4, o.eval_iters = 2, o.ckpt_every = 100;
  o.lr = 1e-2, o.min_lr = 1e-3, o.seed = 7, o.grad_clip = 0.3;
  return o;
}

// The columns that do not depend on timing: iter, losses, lr, tokens, grad_norm .. update_head.
std::vector<std::string> exact_columns(const std::string& csv) {
  std::ifstream in(csv);
  std::vector<std::string> rows;
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    std::vector<std::string> f;
    std::stringstream fields(line);
    for (std::string x; std::getline(fields, x, ',');) f.push_back(x);
    f.resize(17);
    f.erase(f.begin() + 15), f.erase(f.begin() + 4, f.begin() + 6);  // peak_share; tokens_per_s, seconds
    std::string kept;
    for (const std::string& x : f) kept += x + ",";
    rows.push_back(kept);
  }
  return rows;
}

double l2(const std::vector<std::vector<float>>& a, const std::vector<std::vector<float>>* minus = nullptr) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i)
    for (size_t k = 0; k < a[i].size(); ++k) {
      const double d = a[i][k] - (minus ? (*minus)[i][k] : 0.0f);
      s += d * d;
    }
  return std::sqrt(s);
}

}  // namespace

TEST_CASE("step stats: gradient norm, clipping and update ratio are the step's own", "[train][stats]") {
  TempDir dir;
  TrainOptions o = small_run(dir, "run.h5");
  Trainer t(o);
  for (int step = 0; step < 3; ++step) {
    const auto before = testing::weights(t.model());
    t.train_step(1e-2f);
    const auto after = testing::weights(t.model());
    const io::StepColumns& s = t.last_step();
    // The gradient is left as backward made it (the clipping scales the update only).
    REQUIRE(s.grad_norm == static_cast<float>(optim::global_grad_norm(t.model().parameters())));
    REQUIRE(s.grad_norm > 0.3);  // so the clipping acted
    REQUIRE(s.clip_scale == Approx(0.3 / (s.grad_norm + 1e-6)).epsilon(1e-6));
    REQUIRE(s.update_ratio == Approx(l2(after, &before) / l2(before)).epsilon(1e-5));
    for (size_t g = 0; g < 4; ++g) REQUIRE(std::isfinite(s.group_ratio[g]));
    REQUIRE(std::isnan(s.group_ratio[4]));  // tied output: no head of its own
  }
  REQUIRE(update_group("transformer.h.3.attn.c_attn.weight") == 1);
  REQUIRE(update_group("transformer.h.0.mlp.c_proj.bias") == 2);
  REQUIRE(update_group("transformer.ln_f.weight") == 3);
  REQUIRE(update_group("lm_head.weight") == 4);
  REQUIRE(update_group("transformer.wpe.weight") == 0);
  REQUIRE_THROWS_WITH(update_group("conv.weight"), Catch::Contains("no group for the parameter 'conv.weight'"));
}

TEST_CASE("step stats: the log's statistics are the same for 1 and 2 threads", "[train][stats]") {
  TempDir dir;
  Quiet q;
  std::vector<std::vector<std::string>> logs;
  for (int threads : {1, 2}) {
    TrainOptions o = small_run(dir, fmt::format("t{}.h5", threads));
    o.threads = threads;
    Trainer(o).run(q.progress);
    logs.push_back(exact_columns(dir.file(fmt::format("t{}.csv", threads))));
  }
  REQUIRE(logs[0].size() == 8);
  REQUIRE(logs[0] == logs[1]);
}

TEST_CASE("step stats: the JSON-lines metrics parse and match the CSV, and a resume keeps both exact",
          "[train][stats][resume]") {
  TempDir dir;
  Quiet q;
  const TrainOptions straight = small_run(dir, "straight.h5");
  Trainer(straight).run(q.progress);

  const std::vector<io::LogRow> rows = io::read_log(dir.file("straight.csv"));
  const std::vector<io::MetricsLine> lines = io::read_metrics_lines(dir.file("straight.jsonl"));
  REQUIRE(lines.size() == 8 + 2);  // a step object per iteration, an eval object at 4 and 8
  size_t r = 0;
  for (const io::MetricsLine& line : lines) {
    const data::json::Value v = data::json::parse(line.text, "metrics");
    const io::LogRow& row = rows.at(static_cast<size_t>(line.iter - 1));
    auto number = [&](const char* key) { return std::stod(v.find(key)->text); };
    if (v.find("type")->text == "eval") {
      REQUIRE(row.val_loss);
      REQUIRE(number("val_loss") == *row.val_loss);
      continue;
    }
    REQUIRE(line.iter == rows.at(r++).iter);
    const io::StepColumns& s = row.step.value();
    REQUIRE(number("train_loss") == row.train_loss);
    REQUIRE(number("lr") == row.lr);
    REQUIRE(number("tokens") == static_cast<double>(s.tokens));
    REQUIRE(s.tokens == line.iter * 4 * 16);
    REQUIRE(number("grad_norm") == s.grad_norm);
    REQUIRE(number("clip_scale") == s.clip_scale);
    REQUIRE(number("update_ratio") == s.update_ratio);
    const data::json::Value* groups = v.find("update_ratio_by_group");
    for (size_t g = 0; g < io::kUpdateGroups.size(); ++g) {
      const data::json::Value* ratio = groups->find(io::kUpdateGroups[g]);
      if (std::isnan(s.group_ratio[g])) REQUIRE(ratio->type == data::json::Value::Type::null);
      else REQUIRE(std::stod(ratio->text) == s.group_ratio[g]);
    }
    REQUIRE(number("peak_share") > 0);
  }
  REQUIRE(r == 8);

  // Paused at 4, run on to 8 and cut back to the checkpoint at 4: the resume drops the rows and
  // objects after it, and ends with the straight run's statistics.
  const TrainOptions paused = small_run(dir, "paused.h5");
  Trainer(paused).run(q.progress, nullptr, 4);
  std::filesystem::copy_file(paused.out, dir.file("at4.h5"));
  Trainer(paused.out, Resume{}).run(q.progress);
  REQUIRE(io::read_metrics_lines(dir.file("paused.jsonl")).size() == 10);
  std::filesystem::copy_file(dir.file("at4.h5"), paused.out, std::filesystem::copy_options::overwrite_existing);
  Trainer(paused.out, Resume{}).run(q.progress);
  REQUIRE(exact_columns(dir.file("paused.csv")) == exact_columns(dir.file("straight.csv")));
  const auto resumed = io::read_metrics_lines(dir.file("paused.jsonl"));
  REQUIRE(resumed.size() == 10);
  for (size_t i = 0; i < resumed.size(); ++i) REQUIRE(resumed[i].iter == lines[i].iter);
}

TEST_CASE("step stats: logs without the step columns still read, and resume into the new columns",
          "[train][stats][io]") {
  TempDir dir;
  const std::string old = dir.write("old.csv",
                                    "iter,train_loss,val_loss,lr,tokens_per_s,seconds\n"
                                    "1,3.5,,1.000000e-03,100.0,0.010\n2,3.4,3.45,1.000000e-03,100.0,0.020\n");
  const auto lines = io::read_log_lines(old);
  REQUIRE(lines.size() == 2);
  REQUIRE_FALSE(lines[0].row.step);
  const std::string again = io::format_log_row(lines[1].row);
  REQUIRE(again == "2,3.4,3.45,1.000000e-03,100.0,0.020,,,,,,,,,,,,,");  // no step columns, no task
  const std::string rewritten = dir.write("new.csv", std::string(io::kLogHeader) + "\n" + again + "\n");
  REQUIRE_FALSE(io::read_log_lines(rewritten)[0].row.step);
  REQUIRE_THROWS_WITH(
      io::read_log(dir.write("bad.csv", std::string(io::kLogHeader) + "\n1,3.5,,0.001,1,1,64,x,1,0.1,,,,,,0.1,0\n")),
      Catch::Contains("line 2"));
  REQUIRE_THROWS_WITH(io::read_metrics_lines(dir.write("bad.jsonl", std::string(io::kMetricsHeader) + "\n{\"x\": 1}\n")),
                      Catch::Contains("line 2") && Catch::Contains("\"iter\""));
  REQUIRE_THROWS_WITH(io::read_metrics_lines(dir.write("notes.jsonl", "{}\n")),
                      Catch::Contains("is not a tinygpt metrics file"));
  // A step's numbers are what the CSV would hold: a token count (never cast from 1e300 or null), finite
  // speeds and times; a skipped step's loss may be null, an applied one's may not.
  const std::string header = std::string(io::kMetricsHeader) + "\n";
  const auto step = [](const std::string& tokens, const std::string& loss, const std::string& skipped) {
    return R"({"type": "step", "iter": 1, "train_loss": )" + loss + R"(, "lr": 1e-3, "tokens": )" + tokens +
           R"(, "tokens_per_s": 10, "seconds": 1, "grad_norm": 1, "clip_scale": 1, "update_ratio": null, )"
           R"("peak_share": 0.1, "skipped": )" + skipped + "}\n";
  };
  REQUIRE(io::read_metrics(dir.write("ok.jsonl", header + step("64", "null", "true"))).at(0).step->skipped);
  REQUIRE_THROWS_WITH(io::read_metrics(dir.write("huge.jsonl", header + step("1e300", "3.5", "false"))),
                      Catch::Contains("line 2") && Catch::Contains("\"tokens\" is not a count"));
  REQUIRE_THROWS_WITH(io::read_metrics(dir.write("none.jsonl", header + step("null", "3.5", "false"))),
                      Catch::Contains("\"tokens\" is not a count"));
  REQUIRE_THROWS_WITH(io::read_metrics(dir.write("lost.jsonl", header + step("64", "null", "false"))),
                      Catch::Contains("a number that must be finite is not"));
}

TEST_CASE("spike guard: judges against the median of recent applied steps, and stops after its patience",
          "[train][spike]") {
  SpikeGuard guard({.loss_factor = 1.5, .grad_factor = 10, .window = 6, .patience = 3});
  REQUIRE(guard.judge(NAN, 1.0) == std::optional<std::string>("the training loss became nan"));  // always judged
  REQUIRE(guard.judge(9.0, 1.0) == std::nullopt);  // too little history to compare with: applied
  for (double loss : {3.0, 3.1, 2.9, 3.0}) REQUIRE(guard.judge(loss, 1.0) == std::nullopt);
  REQUIRE(guard.state().in_a_row == 0);
  REQUIRE(guard.state().skipped == 1);
  // The median of {9, 3, 3.1, 2.9, 3} is 3: 4.4 passes (1.47x). Of six, the upper middle one,
  // 3.1: 4.7 does not pass (1.52x).
  REQUIRE(guard.judge(4.4, 1.0) == std::nullopt);
  const auto why = guard.judge(4.7, 1.0);
  REQUIRE(why);
  REQUIRE_THAT(*why, Catch::Contains("the loss 4.7 is 1.516x the median 3.1 of the last 6 steps (--spike-loss 1.5)"));
  REQUIRE_THAT(*guard.judge(3.0, 10.5), Catch::Contains("the gradient norm 10.5 is 10.5x the median 1"));
  REQUIRE_FALSE(guard.exhausted());
  REQUIRE(guard.judge(3.0, INFINITY) == std::optional<std::string>("the gradient norm became inf"));
  REQUIRE(guard.exhausted());
  REQUIRE(guard.state().history.size() == 6);  // the window is full; skipped steps never join it
  REQUIRE(guard.state().history.back().loss == 4.4);
  REQUIRE(guard.judge(3.0, 1.0) == std::nullopt);  // an applied step: 9 leaves the window
  REQUIRE(guard.state().in_a_row == 0);
  REQUIRE(guard.state().history.front().loss == 3.0);

  // Its state goes into a checkpoint as lines and comes back bit for bit.
  const SpikeGuard::State back = parse_guard_lines(guard_lines(guard.state()));
  REQUIRE(back.in_a_row == 0);
  REQUIRE(back.skipped == 4);
  REQUIRE(back.history.size() == guard.state().history.size());
  for (size_t i = 0; i < back.history.size(); ++i) {
    REQUIRE(back.history[i].loss == guard.state().history[i].loss);
    REQUIRE(back.history[i].grad_norm == guard.state().history[i].grad_norm);
  }
  REQUIRE_THROWS_WITH(parse_guard_lines({"skipped 1 0"}), Catch::Contains("line 1"));
  REQUIRE_THROWS_WITH(parse_guard_lines({"skipped 0 0", "0x1p+1 nan"}), Catch::Contains("line 2"));
  REQUIRE_THROWS_WITH(parse_guard_lines({"skipped 0 0", "0x1p+1"}), Catch::Contains("line 2"));
  SpikeGuard narrow({.window = 2});
  REQUIRE_THROWS_WITH(narrow.set_state(back), Catch::Contains("does not fit a window of 2"));
}

TEST_CASE("spike guard: a run made to diverge skips its spikes, then stops and keeps its last good checkpoint",
          "[train][spike]") {
  TempDir dir;
  Quiet q;
  TrainOptions o = small_run(dir, "diverge.h5");
  o.iters = 40, o.ckpt_every = 3, o.warmup = 0, o.lr = 10, o.grad_clip = 0;
  Trainer t(o);
  REQUIRE_THROWS_WITH(t.run(q.progress), Catch::Contains("5 steps in a row were not applied") &&
                                             Catch::Contains("--spike-loss 1.5") &&
                                             Catch::Contains("without saving over '" + o.out + "'"));
  const auto rows = io::read_log(dir.file("diverge.csv"));
  REQUIRE(rows.back().step->skipped);
  const Checkpoint kept = read_checkpoint(o.out);  // saved on schedule; the failing step saved nothing
  REQUIRE(kept.train->iteration % 3 == 0);
  REQUIRE(kept.train->iteration <= rows.back().iter);
  REQUIRE(kept.train->guard.in_a_row < 5);
  REQUIRE(kept.train->guard.skipped >= kept.train->guard.in_a_row);
  // The same run before any checkpoint: the message names none to resume.
  o.out = dir.file("early.h5"), o.ckpt_every = 1000;
  Trainer early(o);
  REQUIRE_THROWS_WITH(early.run(q.progress), Catch::Contains("5 steps in a row were not applied") &&
                                                 Catch::Contains("before its first checkpoint (--ckpt-every 1000): "
                                                                 "start it again") &&
                                                 !Catch::Contains("--resume"));
  REQUIRE_FALSE(std::filesystem::exists(o.out));
}

TEST_CASE("spike guard: its decisions resume bitwise", "[train][spike][resume]") {
  TempDir dir;
  Quiet q;
  auto options = [&](const std::string& out) {
    TrainOptions o = small_run(dir, out);
    o.iters = 40, o.warmup = 0, o.lr = 10, o.grad_clip = 0, o.spike_patience = 100;
    return o;
  };
  Trainer straight(options("straight.h5"));
  straight.run(q.progress);
  REQUIRE(straight.state().iteration == 40);
  const auto rows = io::read_log(dir.file("straight.csv"));
  int64_t skipped = 0;
  for (const auto& r : rows) skipped += r.step->skipped;
  REQUIRE(skipped > 0);   // the guard acted,
  REQUIRE(skipped < 40);  // and not on every step
  Trainer(options("paused.h5")).run(q.progress, nullptr, 11);
  Trainer resumed(dir.file("paused.h5"), Resume{});
  resumed.run(q.progress);
  REQUIRE(exact_columns(dir.file("paused.csv")) == exact_columns(dir.file("straight.csv")));
  REQUIRE(testing::weights(resumed.model()) == testing::weights(straight.model()));
}

TEST_CASE("spike guard: its flags are checked", "[train][spike][errors]") {
  TempDir dir;
  TrainOptions o = small_run(dir, "x.h5");
  o.spike_loss = 0.9;
  REQUIRE_THROWS_WITH(Trainer(o), Catch::Contains("--spike-loss must be 0 (off) or more than 1 (got 0.9)"));
  o = small_run(dir, "x.h5");
  o.spike_window = 2;
  REQUIRE_THROWS_WITH(Trainer(o), Catch::Contains("--spike-window must be at least 5"));
}
