// GRU and LSTM against torch.nn's (tests/reference/torch_ops.txt): outputs, final states and the
// gradients of the input, the initial state and every parameter; libtorch's names and shapes.
#include <catch2/catch.hpp>

#include <string>

#include "tinygpt/nn/recurrent.h"
#include "torch_fixture.h"

using namespace tinygpt;
using namespace tinygpt::nn;
using tinygpt::testing::filled;
using tinygpt::testing::require_close;
using tinygpt::testing::upstream;

namespace {
// torch_ops.py's parameters: the k-th (in named_parameters order) sin((0.3 + 0.07 k) i + 0.1 k) / 2.
void fill_parameters(Module& m) {
  int k = 0;
  for (const auto& [name, p] : m.named_parameters()) {
    p.copy_from_(filled(p.shape(), 0.3 + 0.07 * k, 0.1 * k) / 2.0f);
    ++k;
  }
}

void require_torch_recurrent(const std::string& name, Recurrent& m, Tensor x, Tensor h0) {
  INFO(name);
  const auto& want = tinygpt::testing::torch_values();
  fill_parameters(m);
  x.set_requires_grad(true);
  if (h0.defined()) h0.set_requires_grad(true);
  const RecurrentResult r = m.forward(x, h0);
  require_close(r.output.to_vector(), want.at(name + ".out"), 2e-5);
  require_close(r.h_n.to_vector(), want.at(name + ".state0"), 2e-5);
  Tensor loss = sum(r.output * upstream(r.output.shape())) + sum(r.h_n * upstream(r.h_n.shape()));
  if (r.c_n.defined()) {
    require_close(r.c_n.to_vector(), want.at(name + ".state1"), 2e-5);
    loss = loss + sum(r.c_n * upstream(r.c_n.shape()));
  }
  loss.backward();
  require_close(x.grad().to_vector(), want.at(name + ".grad_x"), 2e-5);
  if (h0.defined()) require_close(h0.grad().to_vector(), want.at(name + ".grad_h0"), 2e-5);
  for (const auto& [pname, p] : m.named_parameters()) {
    INFO(pname);
    require_close(p.grad().to_vector(), want.at(name + ".grad." + pname), 2e-5);
  }
}
}  // namespace

TEST_CASE("recurrent: a two-layer bidirectional batch-first LSTM equals torch's", "[nn][recurrent]") {
  LSTM lstm(3, 4, {.num_layers = 2, .batch_first = true, .bidirectional = true});
  REQUIRE(lstm.named_parameters().size() == 16);
  REQUIRE(lstm.named_parameters()[4].first == "weight_ih_l0_reverse");
  REQUIRE(lstm.named_parameters()[8].second.shape() == Shape{16, 8});  // weight_ih_l1: [4 H, D H]
  require_torch_recurrent("lstm", lstm, filled({2, 5, 3}, 0.43, 0.2), Tensor());
  const RecurrentResult r = lstm.forward(Tensor::zeros({2, 5, 3}));
  REQUIRE(r.output.shape() == Shape{2, 5, 8});
  REQUIRE(r.h_n.shape() == Shape{4, 2, 4});
  REQUIRE(r.c_n.shape() == Shape{4, 2, 4});
}

TEST_CASE("recurrent: a GRU with an initial state equals torch's", "[nn][recurrent]") {
  GRU gru(3, 4);
  require_torch_recurrent("gru", gru, filled({5, 2, 3}, 0.57, 0.6), filled({1, 2, 4}, 0.91, 0.3));
  REQUIRE_FALSE(gru.forward(Tensor::zeros({5, 2, 3})).c_n.defined());
}

TEST_CASE("recurrent: initialization bounds and errors naming the shapes", "[nn][recurrent][errors]") {
  GRU gru(3, 16, {.bias = false, .seed = 4});
  REQUIRE(gru.named_parameters().size() == 2);
  for (const auto& [name, p] : gru.named_parameters())
    for (float v : p.to_vector()) REQUIRE(std::abs(v) <= 0.25f);  // 1/sqrt(16)
  REQUIRE_THROWS_WITH(gru.forward(Tensor::zeros({5, 2, 4})), Catch::Contains("GRU: input [5, 2, 4] is not [T, N, 3]"));
  REQUIRE_THROWS_WITH(gru.forward(Tensor::zeros({5, 2, 3}), Tensor::zeros({2, 2, 16})),
                      Catch::Contains("GRU: initial state [2, 2, 16] is not [1, 2, 16]"));
  REQUIRE_THROWS_WITH(LSTM(0, 4), Catch::Contains("LSTM: input size 0"));
}
