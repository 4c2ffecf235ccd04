#include <catch2/catch.hpp>

#include <algorithm>
#include <vector>

#include "tinygpt/cli/benchmark.h"

using namespace tinygpt;
using namespace tinygpt::train;

TEST_CASE("bench: several precisions run their steps in turn, one result each, the steps paired", "[bench]") {
  cli::BenchOptions o;
  o.config = {.vocab_size = 11, .block_size = 8, .n_layer = 1, .n_head = 2, .n_embd = 16};
  o.batch = 2;
  o.steps = 3;
  o.warmup = 1;
  o.threads = 1;
  o.precisions = {Precision::bf16, Precision::fp32};
  const std::vector<cli::BenchResult> runs = cli::run_benchmark(o);
  REQUIRE(runs.size() == 2);
  CHECK(runs[0].precision == Precision::bf16);
  CHECK(runs[1].precision == Precision::fp32);
  for (const cli::BenchResult& r : runs) {
    REQUIRE(r.step_ms.size() == 3);
    CHECK(std::all_of(r.step_ms.begin(), r.step_ms.end(), [](double ms) { return ms > 0; }));
    std::vector<double> sorted = r.step_ms;
    std::sort(sorted.begin(), sorted.end());
    CHECK(r.ms_per_step == sorted[1]);
    CHECK(r.family_ms.at("matmul") > 0);
    CHECK(r.tokens_per_s == Approx(2 * 8 / (r.ms_per_step * 1e-3)));
  }
  CHECK(cli::step_speedup(runs[1], runs[0]) > 0);

  o.precisions.clear();
  REQUIRE_THROWS_WITH(cli::run_benchmark(o), Catch::Contains("no precision"));
}

TEST_CASE("bench: counts out of range are refused before a model is built", "[bench]") {
  cli::BenchOptions o;
  o.config = {.vocab_size = 11, .block_size = 8, .n_layer = 1, .n_head = 2, .n_embd = 16};
  o.steps = 0;
  REQUIRE_THROWS_WITH(cli::run_benchmark(o), "bench: steps must be at least 1 (got 0)");
  o.steps = 1;
  o.batch = 0;
  REQUIRE_THROWS_WITH(cli::run_benchmark(o), "bench: batch must be at least 1 (got 0)");
  o.batch = 1;
  o.warmup = -1;
  REQUIRE_THROWS_WITH(cli::run_benchmark(o), "bench: warmup must be at least 0 (got -1)");
  o.warmup = 0;
  o.threads = 2000;
  REQUIRE_THROWS_WITH(cli::run_benchmark(o), "bench: threads must be at most 1024 (got 2000)");
}

TEST_CASE("bench: step_speedup is the median of the paired steps' ratios, not the ratio of medians", "[bench]") {
  cli::BenchResult base, other;
  base.step_ms = {2, 4, 6};
  other.step_ms = {1, 1, 3};  // ratios 2, 4, 2; the medians' ratio would be 4
  CHECK(cli::step_speedup(base, other) == 2.0);
  base.step_ms = {2, 4, 6, 3};
  other.step_ms = {1, 1, 3, 1};  // ratios 2, 4, 2, 3: an even count's median is the middle two's mean
  CHECK(cli::step_speedup(base, other) == 2.5);
  base.step_ms = {2, 4, 6};
  other.step_ms = {1, 1};
  REQUIRE_THROWS_WITH(cli::step_speedup(base, other), Catch::Contains("3 and 2 timed steps do not pair up"));
  base.step_ms.clear();
  other.step_ms.clear();
  REQUIRE_THROWS_WITH(cli::step_speedup(base, other), Catch::Contains("0 and 0 timed steps"));
}
