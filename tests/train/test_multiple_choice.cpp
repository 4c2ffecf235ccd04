// Multiple-choice scoring (train/multiple_choice.h) against the same rule computed independently:
// each ending's row built here from the two encodings, cut to the block here, and scored by the
// plain-loop model in double (reference/plain_model.h); and the task file's errors.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "reference/plain_model.h"
#include "temp_files.h"
#include "tinygpt/autograd/graph.h"
#include "tinygpt/autograd/threads.h"
#include "tinygpt/data/char_tokenizer.h"
#include "tinygpt/train/multiple_choice.h"
#include "threads.h"

using namespace tinygpt;
using testing::Matrix;
using testing::PlainModel;
using testing::TempDir;

namespace {

const char* kTask =
    R"({"ctx": "the cat sat on", "endings": ["the mat", "a hat", "the cat sat"], "label": 0, "source": "ignored"})" "\n"
    R"({"ctx": "to be or not", "endings": ["to be", "be to"], "label": 1})" "\n"
    "\n"
    R"({"ctx": "a long context that runs well past the block of sixteen", "endings": ["tokens", "at all", "never", "x"], "label": 3})" "\n"
    R"({"ctx": "", "endings": ["two words", "one"], "label": 0})" "\n";

// The rule, from scratch: [summed loss, tokens] per ending.
std::vector<std::pair<double, int64_t>> reference_scores(const PlainModel& plain, const data::Tokenizer& tok,
                                                         const train::ChoiceExample& e) {
  std::vector<std::pair<double, int64_t>> scores;
  for (const std::string& ending : e.endings) {
    std::vector<int32_t> row = tok.encode(e.context), tail = tok.encode(" " + ending);
    std::vector<int> mask(row.size(), 0);
    row.insert(row.end(), tail.begin(), tail.end());
    mask.resize(row.size(), 1);
    const size_t block = static_cast<size_t>(plain.c.block_size);
    if (row.size() > block) {
      row.erase(row.begin(), row.end() - block);
      mask.erase(mask.begin(), mask.end() - block);
    }
    const Matrix logits = plain.logits(row);
    double sum = 0;
    int64_t n = 0;
    for (size_t t = 0; t + 1 < row.size(); ++t) {
      if (!mask[t + 1]) continue;
      const double most = *std::max_element(logits[t].begin(), logits[t].end());
      double z = 0;
      for (double v : logits[t]) z += std::exp(v - most);
      sum += most + std::log(z) - logits[t][row[t + 1]];
      ++n;
    }
    scores.emplace_back(sum, n);
  }
  return scores;
}

}  // namespace

TEST_CASE("multiple choice: equals the rule computed in double from scratch, for any batch and threads",
          "[eval][choice]") {
  TempDir dir;
  const std::vector<train::ChoiceExample> examples = train::read_choice_task(dir.write("task.jsonl", kTask));
  REQUIRE(examples.size() == 4);
  REQUIRE(examples[2].line == 4);  // the blank line is skipped, and counted
  const auto tok = data::CharTokenizer::from_text("abcdefghijklmnopqrstuvwxyz ");
  nn::GPTConfig c{.vocab_size = tok.vocab_size(), .block_size = 16, .n_layer = 2, .n_head = 2, .n_embd = 16};
  nn::GPT model(c, 5);
  {
    NoGradGuard no_grad;  // a less uniform model than the initialization
    uint64_t seed = 9;
    for (Tensor& p : model.parameters()) p.copy_from_(p + Tensor::randn(p.shape(), ++seed, 0.3f));
  }
  PlainModel plain{c, {}};
  for (const auto& [name, p] : model.named_parameters()) plain.p[name] = p.to_vector();
  const train::ChoiceRows rows = train::choice_rows(examples, tok, c.block_size, "task");
  REQUIRE(rows.tokens[8].size() == 16);  // the long context's rows: their last 16 tokens
  {  // A row holds a block, never the whole context: 400 endings of a 200 kB context take 400 blocks.
    train::ChoiceExample huge{.context = std::string(200'000, 'a'), .endings = {}, .label = 0, .line = 1};
    for (int k = 0; k < 400; ++k) huge.endings.push_back(std::string(1 + k % 3, 'b'));
    const train::ChoiceRows cut = train::choice_rows(std::vector<train::ChoiceExample>{huge}, tok, c.block_size, "task");
    REQUIRE(cut.tokens.size() == 400);
    for (size_t r = 0; r < cut.tokens.size(); ++r) {
      REQUIRE(cut.tokens[r].size() == 16);
      REQUIRE(cut.tokens[r].capacity() <= 16);
      REQUIRE(cut.scored_from[r] == static_cast<int64_t>(16 - (1 + 1 + r % 3)));  // " " + the ending
    }
  }
  std::vector<std::vector<train::ChoiceResult>> runs;
  for (const auto& [batch, threads] : std::vector<std::pair<int64_t, int>>{{16, 1}, {16, 2}, {1, 2}, {3, 1}})
    tinygpt::testing::with_threads(threads, [&] { runs.push_back(train::score_choices(model, rows, batch)); });
  int64_t correct = 0, correct_norm = 0;
  for (size_t i = 0; i < examples.size(); ++i) {
    INFO("example " << i);
    const auto want = reference_scores(plain, tok, examples[i]);
    size_t pick = 0, pick_norm = 0;
    for (size_t k = 0; k < want.size(); ++k) {
      for (const auto& run : runs) {
        REQUIRE(run[i].endings[k].tokens == want[k].second);
        REQUIRE(run[i].endings[k].loss == Approx(want[k].first).epsilon(1e-5));
      }
      if (want[k].first < want[pick].first) pick = k;
      if (want[k].first / want[k].second < want[pick_norm].first / want[pick_norm].second) pick_norm = k;
    }
    for (const auto& run : runs) {
      REQUIRE(run[i].pick == static_cast<int64_t>(pick));
      REQUIRE(run[i].pick_norm == static_cast<int64_t>(pick_norm));
    }
    correct += static_cast<int64_t>(pick) == examples[i].label;
    correct_norm += static_cast<int64_t>(pick_norm) == examples[i].label;
  }
  for (size_t k = 0; k < runs[0].size(); ++k)  // threads change no bit
    for (size_t e = 0; e < runs[0][k].endings.size(); ++e) REQUIRE(runs[0][k].endings[e].loss == runs[1][k].endings[e].loss);
  const train::ChoiceScores s = train::tally(examples, runs[0]);
  REQUIRE(s.examples == 4);
  REQUIRE(s.correct == correct);
  REQUIRE(s.correct_norm == correct_norm);
  REQUIRE(s.acc() == Approx(correct / 4.0));
}

TEST_CASE("multiple choice: a bad task file is refused naming its line and field", "[eval][choice]") {
  TempDir dir;
  const auto refused = [&](const std::string& line, const std::string& why) {
    INFO(line);
    REQUIRE_THROWS_WITH(train::read_choice_task(dir.write("t.jsonl", R"({"ctx": "a", "endings": ["b", "c"], "label": 0})" "\n" + line + "\n")),
                        Catch::Contains("'" + dir.file("t.jsonl") + "' line 2") && Catch::Contains(why));
  };
  refused(R"({"endings": ["b", "c"], "label": 0})", "no field \"ctx\"");
  refused(R"({"ctx": 3, "endings": ["b", "c"], "label": 0})", "field \"ctx\" is a number, not a string");
  refused(R"({"ctx": "a", "endings": ["b"], "label": 0})", "has 1 ending; a choice needs at least 2");
  refused(R"({"ctx": "a", "endings": ["b", null], "label": 0})", "field \"endings\"[1] is null");
  refused(R"({"ctx": "a", "endings": ["b", "c"], "label": 2})", "\"label\" is 2, not an index of the 2 endings");
  refused(R"({"ctx": "a", "endings": ["b", "c"], "label": 0.5})", "\"label\" is 0.5");
  refused(R"({"ctx": "a", "endings": ["b", "c"], "label": 0)", "not valid JSON");
  refused(R"(["a"])", "not an object");
  REQUIRE_THROWS_WITH(train::read_choice_task(dir.write("empty.jsonl", "\n\n")), Catch::Contains("holds no example"));
  REQUIRE_THROWS_WITH(train::read_choice_task(dir.file("none.jsonl")), Catch::Contains("none.jsonl"));
  // An ending with nothing before it to predict it from, and a text the tokenizer cannot encode.
  const auto tok = data::CharTokenizer::from_text("abc ");
  const std::vector<train::ChoiceExample> empty = {{.context = "", .endings = {"", "a"}, .label = 0, .line = 7}};
  REQUIRE_THROWS_WITH(train::choice_rows(empty, tok, 8, "task"), Catch::Contains("task line 7: ending 0 leaves no token"));
  const std::vector<train::ChoiceExample> foreign = {{.context = "a", .endings = {"b", "z"}, .label = 0, .line = 3}};
  REQUIRE_THROWS_WITH(train::choice_rows(foreign, tok, 8, "task"), Catch::Contains("task line 3 field \"endings\"[1]"));
}
