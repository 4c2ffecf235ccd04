// conv2d, conv1d, max_pool2d and avg_pool2d against torch.nn.functional's values and gradients
// (tests/reference/torch_ops.txt, written by torch_ops.py), against finite differences, and
// the same bits for any thread count.
#include <catch2/catch.hpp>

#include <functional>
#include <string>
#include <vector>

#include "tinygpt/autograd/threads.h"
#include "torch_fixture.h"
#include "threads.h"

using namespace tinygpt;
using tinygpt::testing::check_gradients;
using tinygpt::testing::filled;
using tinygpt::testing::upstream;

namespace {

// The op on leaves made from `inputs`, compared with torch's case `name`.
void require_torch(const std::string& name, const std::function<Tensor(const std::vector<Tensor>&)>& op,
                   const std::vector<Tensor>& inputs) {
  std::vector<Tensor> leaves;
  for (const Tensor& t : inputs) leaves.push_back(t.clone().set_requires_grad(true));
  tinygpt::testing::require_torch_case(name, op(leaves), leaves);
}

}  // namespace

TEST_CASE("conv: conv2d and conv1d equal torch's, groups, stride, padding and dilation included", "[conv]") {
  require_torch(
      "conv2d",
      [](const std::vector<Tensor>& in) {
        return conv2d(in[0], in[1], in[2], {.window = {.stride = {2, 1}, .padding = {1, 1}, .dilation = {1, 2}}, .groups = 2});
      },
      {filled({2, 4, 7, 6}, 0.37, 0.1), filled({6, 2, 3, 2}, 0.53, 0.7), filled({6}, 1.1, 0.3)});
  require_torch(
      "conv1d", [](const std::vector<Tensor>& in) { return conv1d(in[0], in[1], Tensor(), {.stride = 2, .padding = 1}); },
      {filled({2, 3, 9}, 0.29, 0.5), filled({4, 3, 3}, 0.61, 0.2)});
}

TEST_CASE("conv: max_pool2d and avg_pool2d equal torch's, padding included", "[conv]") {
  const Tensor x = filled({1, 2, 5, 6}, 0.83, 0.4);
  require_torch(
      "max_pool2d", [](const std::vector<Tensor>& in) { return max_pool2d(in[0], {.kernel = {2, 3}, .padding = {1, 1}}); },
      {x});
  require_torch(
      "avg_pool2d",
      [](const std::vector<Tensor>& in) {
        return avg_pool2d(in[0], {.kernel = {3, 3}, .stride = {2, 2}, .padding = {1, 1}});
      },
      {x});
}

TEST_CASE("conv: gradients against finite differences", "[conv][grad]") {
  const Tensor x = Tensor::uniform({2, 4, 5, 5}, 1, -1, 1), w = Tensor::uniform({4, 2, 3, 3}, 2, -1, 1),
               b = Tensor::uniform({4}, 3, -1, 1);
  check_gradients(
      [](const std::vector<Tensor>& in) {
        return conv2d(in[0], in[1], in[2], {.window = {.stride = {2, 2}, .padding = {1, 0}}, .groups = 2});
      },
      {x, w, b});
  check_gradients([](const std::vector<Tensor>& in) { return conv2d(in[0], in[1], Tensor(), {.window = {.dilation = {2, 1}}}); },
                  {x, Tensor::uniform({3, 4, 2, 2}, 4, -1, 1)});
  check_gradients([](const std::vector<Tensor>& in) { return avg_pool2d(in[0], {.kernel = {2, 2}, .stride = {1, 2}}); }, {x});
}

TEST_CASE("conv: the same bits for any thread count", "[conv][determinism]") {
  auto run = [](int threads) {
    std::vector<std::vector<float>> bits;
    tinygpt::testing::with_threads(threads, [&] {
      Tensor x = Tensor::uniform({3, 8, 12, 12}, 5, -1, 1).set_requires_grad(true);
      Tensor w = Tensor::uniform({16, 8, 3, 3}, 6, -1, 1).set_requires_grad(true);
      Tensor b = Tensor::uniform({16}, 7, -1, 1).set_requires_grad(true);
      const Tensor y = max_pool2d(relu(conv2d(x, w, b, {.window = {.padding = {1, 1}}})));
      sum(y * upstream(y.shape())).backward();
      bits = {y.to_vector(), x.grad().to_vector(), w.grad().to_vector(), b.grad().to_vector()};
    });
    return bits;
  };
  REQUIRE(run(1) == run(2));
}

TEST_CASE("conv: shapes that do not fit are errors naming the op and the shapes", "[conv][errors]") {
  const Tensor x = Tensor::zeros({1, 4, 5, 5});
  REQUIRE_THROWS_WITH(conv2d(Tensor::zeros({4, 5, 5}), Tensor::zeros({2, 4, 3, 3}), Tensor()),
                      Catch::Contains("conv2d: input [4, 5, 5] is not [N, C, H, W]"));
  REQUIRE_THROWS_WITH(conv2d(x, Tensor::zeros({2, 3, 3, 3}), Tensor()),
                      Catch::Contains("conv2d: weight [2, 3, 3, 3] and 1 groups do not fit input [1, 4, 5, 5]"));
  REQUIRE_THROWS_WITH(conv2d(x, Tensor::zeros({3, 2, 3, 3}), Tensor(), {.groups = 2}), Catch::Contains("2 groups"));
  REQUIRE_THROWS_WITH(conv2d(x, Tensor::zeros({2, 4, 7, 7}), Tensor()), Catch::Contains("does not fit input"));
  REQUIRE_THROWS_WITH(conv2d(x, Tensor::zeros({2, 4, 3, 3}), Tensor::zeros({3})), Catch::Contains("bias [3] for 2"));
  REQUIRE_THROWS_WITH(conv2d(x, Tensor::zeros({2, 4, 3, 3}), Tensor(), {.window = {.stride = {0, 1}}}),
                      Catch::Contains("strides and dilations are at least 1"));
  REQUIRE_THROWS_WITH(max_pool2d(x, {.kernel = {2, 2}, .padding = {2, 0}}), Catch::Contains("more than half"));
  REQUIRE_THROWS_WITH(conv1d(x, Tensor::zeros({2, 4, 3}), Tensor()), Catch::Contains("conv1d: input [1, 4, 5, 5]"));
}
