// tinygpt against an independent NumPy implementation (tests/reference/gpt_reference.py, float64)
// on a fixed tiny model and batch: logits, loss and the gradient of every parameter.
#include <catch2/catch.hpp>

#include <fstream>
#include <map>
#include <sstream>

#include "gradcheck.h"
#include "tinygpt/nn/gpt.h"

using namespace tinygpt;
using namespace tinygpt::nn;

namespace {
struct Fixture {
  std::vector<int64_t> config;
  std::vector<int32_t> ids, targets;
  std::map<std::string, std::vector<float>> params, grads;
  std::vector<float> logits;
  double loss = 0;
};

Fixture load_fixture() {
  std::ifstream in(TINYGPT_SOURCE_DIR "/tests/reference/gpt_tiny.txt");
  REQUIRE(in.good());
  Fixture f;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream s(line);
    std::string kind, name;
    s >> kind;
    if (kind == "config") for (int64_t v; s >> v;) f.config.push_back(v);
    else if (kind == "ids") for (int32_t v; s >> v;) f.ids.push_back(v);
    else if (kind == "targets") for (int32_t v; s >> v;) f.targets.push_back(v);
    else if (kind == "loss") s >> f.loss;
    else if (kind == "logits") for (double v; s >> v;) f.logits.push_back(static_cast<float>(v));
    else if (kind == "param" || kind == "grad") {
      s >> name;
      auto& dst = kind == "param" ? f.params[name] : f.grads[name];
      for (double v; s >> v;) dst.push_back(static_cast<float>(v));
    }
  }
  return f;
}

// Within 1e-5 relative to the tensor's scale (its largest magnitude): float32 against float64.
void require_match(const std::vector<float>& got, const std::vector<float>& want, const std::string& what) {
  REQUIRE(got.size() == want.size());
  float scale = 0;
  for (float w : want) scale = std::max(scale, std::abs(w));
  for (size_t i = 0; i < got.size(); ++i) {
    INFO(what << " element " << i << ": got " << got[i] << " want " << want[i]);
    REQUIRE(std::abs(got[i] - want[i]) <= 1e-5 * scale);
  }
}
}  // namespace

TEST_CASE("gpt: logits, loss and every gradient match the NumPy reference", "[gpt][reference]") {
  const Fixture f = load_fixture();
  REQUIRE(f.config.size() == 7);
  GPTConfig c{.vocab_size = f.config[0], .block_size = f.config[1], .n_layer = f.config[2], .n_head = f.config[3],
              .n_embd = f.config[4]};
  const int64_t B = f.config[5], T = f.config[6];
  GPT model(c);
  for (auto& [name, p] : model.named_parameters()) {
    INFO(name);
    REQUIRE(f.params.count(name) == 1);
    p.copy_from_(Tensor::from_vector(p.shape(), f.params.at(name)));
  }
  GPTOutput out = model.forward(f.ids, B, T, f.targets);
  require_match(out.logits.to_vector(), f.logits, "logits");
  REQUIRE(out.loss.item() == Approx(f.loss).epsilon(1e-5));
  out.loss.backward();
  for (auto& [name, p] : model.named_parameters()) require_match(p.grad().to_vector(), f.grads.at(name), name);
}
