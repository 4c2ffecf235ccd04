// llama2.c's files: what export_llama2c writes is run.c's layout (read back by an independent
// reader into the plain model), import reads it back bit for bit, and files that do not fit are
// refused with the reason.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "random_ids.h"
#include "reference/llama2c_file.h"
#include "temp_files.h"
#include "tinygpt/autograd/graph.h"
#include "tinygpt/io/llama2c.h"

using namespace tinygpt;
using namespace tinygpt::testing;

namespace {

nn::GPTConfig small_llama(bool tied) {
  nn::GPTConfig c = nn::llama_style({.vocab_size = 23, .block_size = 12, .n_layer = 2, .n_head = 4, .n_embd = 16}, 4);
  c.n_kv_head = 2, c.tie_embeddings = tied;
  return c;
}

std::shared_ptr<nn::GPT> spread_model(const nn::GPTConfig& c) {
  auto model = std::make_shared<nn::GPT>(c, 3);
  NoGradGuard no_grad;
  uint64_t seed = 50;
  for (Tensor& p : model->parameters()) p.copy_from_(p + Tensor::randn(p.shape(), ++seed, 0.3f));
  return model;
}

}  // namespace

TEST_CASE("llama2c: run.c's layout, read independently, computes the model's logits", "[llama2c]") {
  TempDir dir;
  for (bool tied : {true, false}) {
    INFO("tied " << tied);
    const auto model = spread_model(small_llama(tied));
    const std::string path = dir.file(tied ? "tied.bin" : "untied.bin");
    io::export_llama2c(*model, path);
    const PlainModel plain = read_llama2c_file(path);
    REQUIRE(plain.c.hidden() == model->config().hidden());
    const std::vector<int32_t> ids = random_ids(12, 23, 5);
    NoGradGuard no_grad;
    const std::vector<float> got = model->forward(ids, 1, 12).logits.to_vector();
    const Matrix want = plain.logits(ids);
    for (int64_t t = 0; t < 12; ++t)
      for (int64_t v = 0; v < 23; ++v) REQUIRE(got[t * 23 + v] == Approx(want[t][v]).margin(1e-4).epsilon(1e-4));
    // And back: the same parameters, bit for bit.
    const auto back = io::import_llama2c(path);
    REQUIRE(back->config().tie_embeddings == tied);
    const auto a = model->named_parameters(), b = back->named_parameters();
    REQUIRE(a.size() == b.size());
    for (size_t i = 0; i < a.size(); ++i) {
      INFO(a[i].first);
      REQUIRE(a[i].first == b[i].first);
      REQUIRE(a[i].second.to_vector() == b[i].second.to_vector());
    }
  }
}

TEST_CASE("llama2c: models run.c would compute differently are not exported", "[llama2c][errors]") {
  TempDir dir;
  auto refused = [&](nn::GPTConfig c, const char* reason) {
    const nn::GPT model(c);
    REQUIRE_THROWS_WITH(io::export_llama2c(model, dir.file("x.bin")), Catch::Contains(reason));
    REQUIRE_FALSE(std::filesystem::exists(dir.file("x.bin")));
  };
  nn::GPTConfig gpt2{.vocab_size = 11, .block_size = 8, .n_layer = 1, .n_head = 2, .n_embd = 8};
  refused(gpt2, "norm layernorm with eps 1e-05 (run.c: rmsnorm, 1e-5)");
  nn::GPTConfig theta = small_llama(true);
  theta.rope_theta = 500;
  refused(theta, "position rope with theta 500 (run.c: rope with theta 10000)");
  nn::GPTConfig biased = small_llama(true);
  biased.bias = true;
  refused(biased, "biases (run.c has none)");
}

TEST_CASE("llama2c: files that are not run.c's model are refused with the reason", "[llama2c][errors]") {
  TempDir dir;
  const auto model = spread_model(small_llama(true));
  const std::string good = dir.file("good.bin");
  io::export_llama2c(*model, good);
  const std::string bytes = read_file(good);
  auto refused = [&](const std::string& name, const std::string& content, const std::string& reason) {
    INFO(name);
    REQUIRE_THROWS_WITH(io::import_llama2c(dir.write(name, content)), Catch::Contains(name) && Catch::Contains(reason));
  };
  refused("short.bin", bytes.substr(0, 20), "is shorter than llama2.c's header");
  refused("cut.bin", bytes.substr(0, bytes.size() - 4), "holds " + std::to_string(bytes.size() - 4) + " bytes, but");
  refused("longer.bin", bytes + "xxxx", "but a llama2.c model of dim 16, hidden_dim 44");
  std::string zero_heads = bytes;
  std::memset(zero_heads.data() + 12, 0, 4);
  refused("heads.bin", zero_heads, "is not a llama2.c model: its header says dim 16, hidden_dim 44, n_layers 2, n_heads 0");
  std::string odd_kv = bytes;
  const int32_t three = 3;
  std::memcpy(odd_kv.data() + 16, &three, 4);
  refused("kv.bin", odd_kv, "n_kv_head 3 does not divide n_head 4");
  std::string huge = bytes;
  const int32_t big = 1 << 30;
  std::memcpy(huge.data(), &big, 4);
  refused("huge.bin", huge, "holds a model tinygpt cannot build");
  std::string nan = bytes;
  const float not_a_number = NAN;
  std::memcpy(nan.data() + 28 + 4 * (23 * 16 + 2 * 16 + 5), &not_a_number, 4);  // wq of layer 0, element 5
  refused("nan.bin", nan, "tensor wq of layer 0 holds nan at element 5");
  for (const int32_t version : {1, 2}) {  // export.py's newer layouts: magic "ak42", the version, 256-byte header
    std::string versioned(256, '\0');
    const int32_t head[2] = {0x616b3432, version};
    std::memcpy(versioned.data(), head, sizeof head);
    refused(fmt::format("v{}.bin", version), versioned + bytes.substr(28),
            fmt::format("is llama2.c's version-{} layout (export.py --version {}", version, version));
  }
}
