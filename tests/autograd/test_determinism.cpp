// Every kernel splits work over outputs and sums in a fixed order, so the bits of a result must not
// depend on the number of threads. Each check runs forward + backward with 1 and with 2 threads
// (two that run at once, on any machine: threads.h).
#include <catch2/catch.hpp>

#include "tinygpt/autograd/threads.h"
#include "first_difference.h"
#include "gradcheck.h"
#include "threads.h"

using namespace tinygpt;
using tinygpt::testing::first_difference;
using tinygpt::testing::with_threads;

namespace {
struct Bits {
  std::vector<float> out;
  std::vector<std::vector<float>> grads;
  bool operator==(const Bits&) const = default;
};

Bits run(int threads, const std::function<Tensor(const std::vector<Tensor>&)>& f, std::vector<Tensor> inputs) {
  Bits bits;
  with_threads(threads, [&] {
    for (Tensor& x : inputs) x.zero_grad(), x.set_requires_grad(true);
    Tensor out = f(inputs);
    out.backward(Tensor::uniform(out.shape(), 5, -1, 1));
    bits.out = out.to_vector();
    for (Tensor& x : inputs) bits.grads.push_back(x.grad().to_vector());
  });
  return bits;
}

void require_thread_independent(const std::function<Tensor(const std::vector<Tensor>&)>& f,
                                const std::vector<Tensor>& inputs) {
  Bits one = run(1, f, inputs), two = run(2, f, inputs), again = run(2, f, inputs);
  REQUIRE(one == two);
  REQUIRE(two == again);
}
}  // namespace

TEST_CASE("determinism: matmul bits do not depend on threads", "[determinism]") {
  require_thread_independent([](const std::vector<Tensor>& in) { return matmul(in[0], in[1].transpose(0, 1)); },
                             {Tensor::uniform({300, 200}, 1, -1, 1), Tensor::uniform({500, 200}, 2, -1, 1)});
}

TEST_CASE("determinism: attention bits do not depend on threads", "[determinism]") {
  require_thread_independent([](const std::vector<Tensor>& in) { return causal_attention(in[0], in[1], in[2]).y; },
                             {Tensor::uniform({4, 4, 64, 32}, 1, -1, 1), Tensor::uniform({4, 4, 64, 32}, 2, -1, 1),
                              Tensor::uniform({4, 4, 64, 32}, 3, -1, 1)});
}

TEST_CASE("determinism: tiled attention bits do not depend on threads", "[determinism]") {
  require_thread_independent(
      [](const std::vector<Tensor>& in) { return causal_attention(in[0], in[1], in[2], AttentionMemory::tiled).y; },
      {Tensor::uniform({2, 4, 80, 16}, 1, -1, 1), Tensor::uniform({2, 4, 80, 16}, 2, -1, 1),
       Tensor::uniform({2, 4, 80, 16}, 3, -1, 1)});
}

TEST_CASE("determinism: layer_norm bits do not depend on threads", "[determinism]") {
  require_thread_independent([](const std::vector<Tensor>& in) { return layer_norm(in[0], in[1], in[2]); },
                             {Tensor::uniform({768, 128}, 1, -2, 2), Tensor::uniform({128}, 2, 0.5, 1.5),
                              Tensor::uniform({128}, 3, -1, 1)});
}

TEST_CASE("determinism: cross_entropy bits do not depend on threads", "[determinism]") {
  std::vector<int32_t> targets(768);
  for (size_t i = 0; i < targets.size(); ++i) targets[i] = static_cast<int32_t>((i * 7919) % 65);
  require_thread_independent([&](const std::vector<Tensor>& in) { return cross_entropy(in[0], targets); },
                             {Tensor::uniform({768, 65}, 1, -3, 3)});
}

TEST_CASE("determinism: reductions and broadcasting do not depend on threads", "[determinism]") {
  require_thread_independent([](const std::vector<Tensor>& in) { return sum(in[0] * in[1], {0}); },
                             {Tensor::uniform({3000, 130}, 1, -1, 1), Tensor::uniform({130}, 2, -1, 1)});
}

TEST_CASE("determinism: long contiguous rows are split into pieces with the same values", "[determinism]") {
  // [3, 50000] coalesces into one row of 150000 floats: for_each_row splits it into pieces.
  const Tensor a = Tensor::uniform({3, 50000}, 1, -1, 1), b = Tensor::uniform({3, 50000}, 2, -1, 1);
  auto f = [](const std::vector<Tensor>& in) { return (in[0] + in[1]) * in[0]; };
  require_thread_independent(f, {a, b});
  std::vector<float> y;
  with_threads(2, [&] { y = f({a, b}).to_vector(); });
  const std::vector<float> av = a.to_vector(), bv = b.to_vector();
  std::vector<float> expected(y.size());
  for (size_t i = 0; i < y.size(); ++i) expected[i] = (av[i] + bv[i]) * av[i];
  REQUIRE(first_difference(y, expected) == "");
}

TEST_CASE("determinism: a negative thread count is refused, 0 restores all cores", "[determinism][errors]") {
  REQUIRE_THROWS_WITH(set_num_threads(-3), Catch::Contains("set_num_threads: -3 threads"));
  set_num_threads(2);
  REQUIRE(num_threads() == 2);
  REQUIRE_THROWS(set_num_threads(-1));
  REQUIRE(num_threads() == 2);  // a refused count changes nothing
  set_num_threads(0);
}
