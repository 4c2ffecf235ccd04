#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "tinygpt/data/bpe_tokenizer.h"
#include "tinygpt/data/char_tokenizer.h"
#include "temp_files.h"
#include "tinygpt/inspect/inspect.h"
#include "tinygpt/inspect/plot.h"

using namespace tinygpt;
using tinygpt::testing::TempDir;

namespace {
size_t count(const std::string& haystack, const std::string& needle) {
  size_t n = 0;
  for (size_t at = haystack.find(needle); at != std::string::npos; at = haystack.find(needle, at + 1)) ++n;
  return n;
}

// Parses the SVG with xmllint (Debian's libxml2-utils, installed by scripts/test.sh).
bool valid_xml(const TempDir& dir, const std::string& svg) {
  const std::string path = dir.write("check.svg", svg);
  return std::system(("xmllint --noout " + path).c_str()) == 0;
}

struct Model {
  data::CharTokenizer tokenizer{std::vector<int32_t>{'\n', ' ', 'a', 'b', 'c', 0xD55C}};  // … 한
  nn::GPT model{nn::GPTConfig{.vocab_size = 6, .block_size = 8, .n_layer = 2, .n_head = 2, .n_embd = 8}, 3};
};
}  // namespace

TEST_CASE("inspect: token views show text and pieces of characters", "[inspect]") {
  const data::CharTokenizer chars(std::vector<int32_t>{'\n', ' ', 'a', 0xD55C});
  const auto views = inspect::token_views(chars, chars.encode("a 한\n"));
  REQUIRE(views.size() == 4);
  REQUIRE(views[1].label == "␣");
  REQUIRE(views[2].label == "한");
  REQUIRE(views[3].label == "\\n");
  const data::BpeTokenizer bytes({}, data::Split::gpt2);
  const auto pieces = inspect::token_views(bytes, bytes.encode("한"));
  REQUIRE(pieces.size() == 3);
  REQUIRE(pieces[0].partial);
  REQUIRE(pieces[0].label == "<ED>");
  const std::string table = inspect::token_table(pieces);
  REQUIRE(table.find("bytes of a character split across tokens") != std::string::npos);
}

TEST_CASE("inspect: the attention table of a 3-token text is causal and rows sum to one", "[inspect]") {
  Model m;
  const inspect::AttentionMaps maps = inspect::attention_maps(m.model, m.tokenizer, "ab한");
  REQUIRE(maps.tokens.size() == 3);
  const std::string table = inspect::attention_table(maps, 1, 1);
  std::istringstream lines(table);
  std::string line;
  std::getline(lines, line);  // title
  std::getline(lines, line);  // key labels
  REQUIRE(line.find("한") != std::string::npos);
  for (int i = 0; i < 3; ++i) {
    REQUIRE(std::getline(lines, line));
    std::istringstream row(line);
    std::string label;
    row >> label;
    REQUIRE(label == maps.tokens[i].label);
    double sum = 0;
    int numbers = 0;
    for (double w; row >> w;) sum += w, ++numbers;
    REQUIRE(numbers == i + 1);  // the future is blank
    REQUIRE(sum == Approx(1.0).margin(0.011));  // two decimals each
  }
  REQUIRE(maps.at(1, 1, 0, 0) == 1.0f);
  REQUIRE(maps.at(1, 1, 0, 2) == 0.0f);
}

TEST_CASE("inspect: the attention SVG has a cell per query x key and the token labels", "[inspect]") {
  TempDir dir;
  Model m;
  const inspect::AttentionMaps maps = inspect::attention_maps(m.model, m.tokenizer, "a b한c");
  const int64_t T = 5;
  const std::string one_layer = inspect::attention_svg(maps, 1);
  REQUIRE(count(one_layer, "class=\"cell\"") == 2 * T * T);  // 2 heads
  REQUIRE(count(one_layer, ">한</text>") == 2 * 2);           // a row and a column label per head
  REQUIRE(count(one_layer, "layer 1, head 1") == 1);
  REQUIRE(valid_xml(dir, one_layer));
  const std::string all = inspect::attention_svg(maps, std::nullopt);
  REQUIRE(count(all, "class=\"cell\"") == 2 * 2 * T * T);    // every layer x head
  REQUIRE(valid_xml(dir, all));
}

TEST_CASE("inspect: bad arguments give clear errors", "[inspect][errors]") {
  Model m;
  const inspect::AttentionMaps maps = inspect::attention_maps(m.model, m.tokenizer, "abc");
  REQUIRE_THROWS_WITH(inspect::attention_table(maps, 2, 0), Catch::Contains("--layer 2 is out of range: the model has 2 layers"));
  REQUIRE_THROWS_WITH(inspect::attention_table(maps, 0, 2), Catch::Contains("--head 2 is out of range: the model has 2 heads"));
  REQUIRE_THROWS_WITH(inspect::attention_svg(maps, 5), Catch::Contains("--layer 5 is out of range"));
  REQUIRE_THROWS_WITH(inspect::attention_maps(m.model, m.tokenizer, "abcabcabc"),
                      Catch::Contains("9 tokens long; the model sees at most block_size 8"));
  REQUIRE_THROWS_WITH(inspect::attention_maps(m.model, m.tokenizer, "abz"), Catch::Contains("'z' (U+007A) at line 1, column 3 of the text"));
}

TEST_CASE("plot: one point per evaluation, valid SVG, and clear errors for bad logs", "[inspect]") {
  TempDir dir;
  std::string csv = "iter,train_loss,val_loss,lr,tokens_per_s,seconds\n";
  int evals = 0;
  for (int i = 1; i <= 40; ++i) {
    const bool eval = i % 10 == 0;
    evals += eval;
    csv += std::to_string(i) + "," + std::to_string(4.0 - i * 0.05) + "," + (eval ? std::to_string(4.1 - i * 0.05) : "") +
           ",0.001,12000,0.1\n";
  }
  const std::string log = dir.write("run.csv", csv);
  const auto rows = io::read_log(log);
  REQUIRE(rows.size() == 40);
  const std::string svg = inspect::loss_plot_svg(rows, "run");
  REQUIRE(count(svg, "class=\"val\"") == static_cast<size_t>(evals));
  REQUIRE(count(svg, "class=\"train\"") == 1);
  REQUIRE(svg.find(">iteration</text>") != std::string::npos);
  REQUIRE(svg.find(">tokens/s</text>") != std::string::npos);
  REQUIRE(valid_xml(dir, svg));
  REQUIRE_THROWS_WITH(io::read_log(dir.write("bad.csv", "iter,loss\n1,2\n")), Catch::Contains("bad.csv' has no column 'train_loss'"));
  REQUIRE_THROWS_WITH(io::read_log(dir.write("junk.csv", csv + "41,x,,0.1,1,1\n")), Catch::Contains("junk.csv', line 42"));
  REQUIRE_THROWS_WITH(io::read_log(dir.file("none.csv")), Catch::Contains("log '" + dir.file("none.csv") + "': no such file"));
  REQUIRE(io::read_log(dir.write("cut.csv", csv + "41,3.9")).size() == 40);  // a last row cut short by a crash
  REQUIRE_THROWS_WITH(io::read_log(dir.write("partial.csv", csv + "41abc,3.9,,0.1,1,1\n")), Catch::Contains("line 42"));
  REQUIRE_THROWS_WITH(io::read_log(dir.write("nan.csv", csv + "41,nan,,0.1,1,1\n")), Catch::Contains("line 42"));
  // Rows shorter than a header that puts the columns last are refused, never read past their end.
  const std::string wide = "a,b,c,d,e,f,g,iter,train_loss,val_loss,lr,tokens_per_s,seconds\n";
  REQUIRE_THROWS_WITH(io::read_log(dir.write("short.csv", wide + "1,2,3,4,5,6\n")), Catch::Contains("short.csv', line 2"));
  REQUIRE(io::read_log(dir.write("wide.csv", wide + "0,0,0,0,0,0,0,1,2.5,,0.1,1,1\n")).at(0).train_loss == 2.5);
  // A log whose every step was skipped (no finite loss, no evaluation) draws empty loss axes, saying so.
  io::StepColumns skipped_step;
  skipped_step.grad_norm = NAN, skipped_step.skipped = true;
  const std::vector<io::LogRow> skipped = {{1, NAN, std::nullopt, 0.1, 1, 1, skipped_step},
                                           {2, INFINITY, std::nullopt, 0.1, 1, 2, skipped_step}};
  std::string skipped_csv = std::string(io::kLogHeader) + "\n";
  for (const io::LogRow& r : skipped) skipped_csv += io::format_log_row(r) + "\n";
  REQUIRE(io::read_log(dir.write("skipped.csv", skipped_csv)).size() == 2);
  inspect::write_loss_plot({dir.file("skipped.csv")}, dir.file("skipped.svg"));
  REQUIRE(tinygpt::testing::read_file(dir.file("skipped.svg")).find("no finite loss in the log") != std::string::npos);
  REQUIRE(valid_xml(dir, tinygpt::testing::read_file(dir.file("skipped.svg"))));
  // Losses at the ends of the doubles: finite axes and points, no nan in the picture.
  const std::vector<io::LogRow> extreme = {{1, 1e308, -1e308, 0.1, 1, 1}, {2, 1.7e308, std::nullopt, 0.1, 1, 2}};
  const std::string far = inspect::loss_plot_svg(extreme, "far");
  REQUIRE(far.find("nan") == std::string::npos);
  REQUIRE(far.find("inf") == std::string::npos);
  REQUIRE(valid_xml(dir, far));
  // Losses too close together for doubles to step through still give a finite picture.
  const std::vector<io::LogRow> flat = {{1, 1e20, std::nullopt, 0.1, 1, 1}, {2, 1e20, std::nullopt, 0.1, 1, 1}};
  REQUIRE(valid_xml(dir, inspect::loss_plot_svg(flat, "flat")));
  // Two runs in one plot: each has its curves and its names in the legend.
  const std::string other = dir.write("bf16.csv", csv);
  inspect::write_loss_plot({log, other}, dir.file("both.svg"));
  std::ifstream in(dir.file("both.svg"));
  const std::string both((std::istreambuf_iterator<char>(in)), {});
  REQUIRE(count(both, "class=\"val\"") == 2 * static_cast<size_t>(evals));
  REQUIRE(count(both, "class=\"train\"") == 2);
  REQUIRE(both.find(">run validation</text>") != std::string::npos);
  REQUIRE(both.find(">bf16 train</text>") != std::string::npos);
  REQUIRE(valid_xml(dir, both));
}
