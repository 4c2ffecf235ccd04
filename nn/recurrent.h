#pragma once
// Recurrent layers, libtorch's GRU and LSTM: the same parameters (weight_ih_l{k}, weight_hh_l{k},
// bias_ih_l{k}, bias_hh_l{k}, with _reverse for the backward direction), gate orders (GRU: r, z,
// n; LSTM: i, f, g, o), shapes and initialization (every parameter U(-1/sqrt(H), 1/sqrt(H))).
// Written with the differentiable ops, one step after another, so backward runs through time.
//   LSTM:  i, f, o = sigmoid(.), g = tanh(.) of x W_ihᵀ + b_ih + h W_hhᵀ + b_hh;
//          c' = f c + i g;  h' = o tanh(c')
//   GRU:   r, z = sigmoid(x W_ihᵀ + b_ih + h W_hhᵀ + b_hh) (their rows);
//          n = tanh(x W_inᵀ + b_in + r (h W_hnᵀ + b_hn));  h' = (1 - z) n + z h
#include <cstdint>
#include <optional>
#include <vector>

#include "../autograd/ops.h"
#include "module.h"

namespace tinygpt::nn {

struct RecurrentOptions {
  int64_t num_layers = 1;
  bool bias = true;
  bool batch_first = false;  // input and output [N, T, features] instead of [T, N, features]
  bool bidirectional = false;
  std::optional<uint64_t> seed;
};

// What a recurrent layer returns: output [T, N, D H] (or [N, T, D H] batch-first), the last
// hidden state h_n [L D, N, H] and, for an LSTM, the last cell state c_n (same shape).
struct RecurrentResult {
  Tensor output, h_n, c_n;
};

class Recurrent : public Module {
 public:
  enum class Kind { gru, lstm };
  // x [T, N, input_size] (or batch-first); h0 (and c0) [L D, N, H], zeros when not given.
  RecurrentResult forward(const Tensor& x, const Tensor& h0 = {}, const Tensor& c0 = {}) const;
  void reset_parameters(uint64_t seed) override;
  int64_t hidden_size() const { return hidden_; }

 protected:
  Recurrent(Kind kind, int64_t input_size, int64_t hidden_size, RecurrentOptions options);

 private:
  struct Direction {
    Tensor w_ih, w_hh, b_ih, b_hh;
  };
  // One layer in one direction over xs [T, N, in] -> the hidden states [T, N, H] in time order.
  std::vector<Tensor> run(const Direction& d, const std::vector<Tensor>& xs, bool reverse, Tensor& h, Tensor& c) const;

  Kind kind_;
  int64_t input_, hidden_;
  RecurrentOptions options_;
  std::vector<Direction> directions_;  // layer-major: l0, l0_reverse, l1, ...
};

class GRU : public Recurrent {
 public:
  GRU(int64_t input_size, int64_t hidden_size, RecurrentOptions options = {})
      : Recurrent(Kind::gru, input_size, hidden_size, options) {}
};

class LSTM : public Recurrent {
 public:
  LSTM(int64_t input_size, int64_t hidden_size, RecurrentOptions options = {})
      : Recurrent(Kind::lstm, input_size, hidden_size, options) {}
};

}  // namespace tinygpt::nn
