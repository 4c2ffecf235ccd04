#include "recurrent.h"

#include <fmt/format.h>

#include <cmath>
#include <stdexcept>
#include <string>

#include "init.h"

namespace tinygpt::nn {

Recurrent::Recurrent(Kind kind, int64_t input_size, int64_t hidden_size, RecurrentOptions o)
    : kind_(kind), input_(input_size), hidden_(hidden_size), options_(o) {
  const char* name = kind == Kind::gru ? "GRU" : "LSTM";
  if (input_size < 1 || hidden_size < 1 || o.num_layers < 1)
    throw std::invalid_argument(fmt::format("{}: input size {}, hidden size {}, {} layers (each at least 1)", name,
                                            input_size, hidden_size, o.num_layers));
  const int64_t gates = (kind == Kind::gru ? 3 : 4) * hidden_size, D = o.bidirectional ? 2 : 1;
  for (int64_t l = 0; l < o.num_layers; ++l)
    for (int64_t d = 0; d < D; ++d) {
      const std::string suffix = fmt::format("_l{}{}", l, d == 1 ? "_reverse" : "");
      const int64_t in = l == 0 ? input_size : D * hidden_size;
      Direction dir;
      dir.w_ih = register_parameter("weight_ih" + suffix, Tensor::empty({gates, in}));
      dir.w_hh = register_parameter("weight_hh" + suffix, Tensor::empty({gates, hidden_size}));
      if (o.bias) {
        dir.b_ih = register_parameter("bias_ih" + suffix, Tensor::empty({gates}));
        dir.b_hh = register_parameter("bias_hh" + suffix, Tensor::empty({gates}));
      }
      directions_.push_back(dir);
    }
  if (o.seed) keep_own_seed(*o.seed);
  reset_parameters(place_seed());
}

void Recurrent::reset_parameters(uint64_t seed) {
  const float bound = 1.0f / std::sqrt(static_cast<float>(hidden_));
  for (const auto& [name, p] : named_parameters()) init::uniform_(p, child_seed(seed, name), -bound, bound);
}

std::vector<Tensor> Recurrent::run(const Direction& d, const std::vector<Tensor>& xs, bool reverse, Tensor& h,
                                   Tensor& c) const {
  const auto T = static_cast<int64_t>(xs.size());
  std::vector<Tensor> hs(xs.size());
  for (int64_t step = 0; step < T; ++step) {
    const int64_t t = reverse ? T - 1 - step : step;
    const Tensor from_x = linear(xs[t], d.w_ih, d.b_ih), from_h = linear(h, d.w_hh, d.b_hh);  // [N, gates]
    if (kind_ == Kind::lstm) {
      const std::vector<Tensor> g = split(from_x + from_h, hidden_, 1);  // i, f, g, o
      c = sigmoid(g[1]) * c + sigmoid(g[0]) * tanh(g[2]);
      h = sigmoid(g[3]) * tanh(c);
    } else {
      const std::vector<Tensor> gx = split(from_x, hidden_, 1), gh = split(from_h, hidden_, 1);  // r, z, n
      const Tensor r = sigmoid(gx[0] + gh[0]), z = sigmoid(gx[1] + gh[1]);
      const Tensor n = tanh(gx[2] + r * gh[2]);
      h = (1.0f - z) * n + z * h;
    }
    hs[t] = h;
  }
  return hs;
}

RecurrentResult Recurrent::forward(const Tensor& input, const Tensor& h0, const Tensor& c0) const {
  const char* name = kind_ == Kind::gru ? "GRU" : "LSTM";
  if (input.dim() != 3 || input.size(2) != input_)
    throw std::invalid_argument(fmt::format("{}: input {} is not [{}, {}]", name, to_string(input.shape()),
                                            options_.batch_first ? "N, T" : "T, N", input_));
  const Tensor x = options_.batch_first ? input.transpose(0, 1) : input;  // [T, N, in]
  const int64_t T = x.size(0), N = x.size(1), D = options_.bidirectional ? 2 : 1, L = options_.num_layers;
  const Shape state{L * D, N, hidden_};
  for (const Tensor* s : {&h0, &c0})
    if (s->defined() && s->shape() != state)
      throw std::invalid_argument(fmt::format("{}: initial state {} is not {}", name, to_string(s->shape()),
                                              to_string(state)));
  if (c0.defined() && kind_ == Kind::gru) throw std::invalid_argument("GRU: a GRU has no cell state c0");
  std::vector<Tensor> layer_in = unbind(x, 0), h_n, c_n;
  for (int64_t l = 0; l < L; ++l) {
    std::vector<std::vector<Tensor>> outs;
    for (int64_t d = 0; d < D; ++d) {
      const int64_t k = l * D + d;
      Tensor h = h0.defined() ? select(h0, 0, k) : Tensor::zeros({N, hidden_});
      Tensor c = c0.defined() ? select(c0, 0, k) : Tensor::zeros({N, hidden_});
      outs.push_back(run(directions_[static_cast<size_t>(k)], layer_in, d == 1, h, c));
      h_n.push_back(h);
      c_n.push_back(c);
    }
    for (int64_t t = 0; t < T; ++t)
      layer_in[static_cast<size_t>(t)] = D == 1 ? outs[0][t] : concat({outs[0][t], outs[1][t]}, 1);  // [N, D H]
  }
  Tensor output = stack(layer_in, 0);  // [T, N, D H]
  if (options_.batch_first) output = output.transpose(0, 1);
  RecurrentResult r{output, stack(h_n, 0), Tensor()};
  if (kind_ == Kind::lstm) r.c_n = stack(c_n, 0);
  return r;
}

}  // namespace tinygpt::nn
