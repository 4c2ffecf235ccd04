#pragma once
// docs/architectures.md's model written out as plain loops in double, from parameters by their checkpoint names: the
// independent yardstick for the GPT's forward with every Llama piece (tests/nn/test_llama.cpp) and
// for llama2.c's and Hugging Face's Llama files (tests/train/test_llama2c.cpp, test_hf_llama.cpp).
#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "tinygpt/nn/gpt.h"

namespace tinygpt::testing {

using nn::GPTConfig;
using nn::MlpKind;
using nn::NormKind;
using nn::PositionKind;

using Matrix = std::vector<std::vector<double>>;  // [rows][cols]

// The model for one sequence, in double, from the parameters by name.
struct PlainModel {
  GPTConfig c;
  std::map<std::string, std::vector<float>> p;
  // RoPE's pairs: (2i, 2i+1) as tinygpt and llama2.c, or (i, i + hs/2) as Hugging Face's
  // rotate_half, which its Llama files' q_proj and k_proj rows are permuted for.
  bool rotate_half = false;

  double at(const std::string& name, int64_t i) const { return p.at(name)[static_cast<size_t>(i)]; }
  bool has(const std::string& name) const { return p.count(name) > 0; }

  Matrix norm(const Matrix& x, const std::string& prefix) const {
    Matrix y = x;
    const auto C = static_cast<int64_t>(x[0].size());
    for (size_t t = 0; t < x.size(); ++t) {
      double mean = 0, square = 0;
      for (double v : x[t]) mean += v / C;
      if (c.norm == NormKind::rmsnorm) mean = 0;
      for (double v : x[t]) square += (v - mean) * (v - mean) / C;
      for (int64_t j = 0; j < C; ++j)
        y[t][j] = (x[t][j] - mean) / std::sqrt(square + c.norm_eps) * at(prefix + ".weight", j) +
                  (has(prefix + ".bias") ? at(prefix + ".bias", j) : 0.0);
    }
    return y;
  }
  Matrix linear(const Matrix& x, const std::string& prefix, int64_t out) const {
    const auto in = static_cast<int64_t>(x[0].size());
    Matrix y(x.size(), std::vector<double>(out));
    for (size_t t = 0; t < x.size(); ++t)
      for (int64_t o = 0; o < out; ++o) {
        double s = has(prefix + ".bias") ? at(prefix + ".bias", o) : 0.0;
        for (int64_t i = 0; i < in; ++i) s += at(prefix + ".weight", o * in + i) * x[t][i];
        y[t][o] = s;
      }
    return y;
  }
  // Pairs (2i, 2i+1) of a head starting at column `from` turned by pos theta^(-2i/hs).
  void rope(std::vector<double>& row, int64_t from, int64_t pos) const {
    const int64_t hs = c.head_size();
    for (int64_t i = 0; i < hs / 2; ++i) {
      const double a = double(pos) * std::pow(double(c.rope_theta), -2.0 * double(i) / double(hs));
      const int64_t first = rotate_half ? from + i : from + 2 * i, second = rotate_half ? first + hs / 2 : first + 1;
      const double x0 = row[first], x1 = row[second];
      row[first] = x0 * std::cos(a) - x1 * std::sin(a);
      row[second] = x0 * std::sin(a) + x1 * std::cos(a);
    }
  }
  Matrix attention(const Matrix& x, const std::string& prefix) const {
    const int64_t T = static_cast<int64_t>(x.size()), nh = c.n_head, g = c.kv_heads(), hs = c.head_size();
    Matrix qkv = linear(x, prefix + ".c_attn", (nh + 2 * g) * hs);
    if (c.position == PositionKind::rope)
      for (int64_t t = 0; t < T; ++t)
        for (int64_t h = 0; h < nh + g; ++h) rope(qkv[t], h * hs, t);
    Matrix y(T, std::vector<double>(nh * hs, 0.0));
    for (int64_t h = 0; h < nh; ++h) {
      const int64_t kv = h / (nh / g), k0 = nh * hs + kv * hs, v0 = (nh + g) * hs + kv * hs;
      for (int64_t i = 0; i < T; ++i) {
        std::vector<double> w(static_cast<size_t>(i + 1));
        double most = -1e300, sum = 0;
        for (int64_t j = 0; j <= i; ++j) {
          double s = 0;
          for (int64_t d = 0; d < hs; ++d) s += qkv[i][h * hs + d] * qkv[j][k0 + d];
          w[j] = s / std::sqrt(double(hs));
          most = std::max(most, w[j]);
        }
        for (double& v : w) sum += (v = std::exp(v - most));
        for (int64_t j = 0; j <= i; ++j)
          for (int64_t d = 0; d < hs; ++d) y[i][h * hs + d] += w[j] / sum * qkv[j][v0 + d];
      }
    }
    return linear(y, prefix + ".c_proj", c.n_embd);
  }
  Matrix mlp(const Matrix& x, const std::string& prefix) const {
    const int64_t H = c.hidden();
    const bool swiglu = c.mlp == MlpKind::swiglu;
    const Matrix h = linear(x, prefix + ".c_fc", swiglu ? 2 * H : H);
    Matrix act(x.size(), std::vector<double>(H));
    for (size_t t = 0; t < x.size(); ++t)
      for (int64_t j = 0; j < H; ++j) {
        const double v = h[t][j];
        act[t][j] = swiglu ? v / (1 + std::exp(-v)) * h[t][H + j]
                           : 0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
      }
    return linear(act, prefix + ".c_proj", c.n_embd);
  }
  Matrix logits(const std::vector<int32_t>& ids) const {
    const int64_t C = c.n_embd;
    Matrix x(ids.size(), std::vector<double>(C));
    for (size_t t = 0; t < ids.size(); ++t)
      for (int64_t j = 0; j < C; ++j)
        x[t][j] = at("transformer.wte.weight", ids[t] * C + j) +
                  (has("transformer.wpe.weight") ? at("transformer.wpe.weight", int64_t(t) * C + j) : 0.0);
    auto add = [](Matrix& a, const Matrix& b) {
      for (size_t t = 0; t < a.size(); ++t)
        for (size_t j = 0; j < a[t].size(); ++j) a[t][j] += b[t][j];
    };
    for (int64_t l = 0; l < c.n_layer; ++l) {
      const std::string b = "transformer.h." + std::to_string(l);
      add(x, attention(norm(x, b + ".ln_1"), b + ".attn"));
      add(x, mlp(norm(x, b + ".ln_2"), b + ".mlp"));
    }
    const Matrix f = norm(x, "transformer.ln_f");
    Matrix out(ids.size(), std::vector<double>(c.vocab_size));
    const std::string head = c.tie_embeddings ? "transformer.wte.weight" : "lm_head.weight";
    for (size_t t = 0; t < ids.size(); ++t)
      for (int64_t v = 0; v < c.vocab_size; ++v)
        for (int64_t j = 0; j < C; ++j) out[t][v] += at(head, v * C + j) * f[t][j];
    return out;
  }
};


// The evaluation rule (docs/checkpoint-format.md): windows of block_size tokens, the last possibly shorter, every target
// counted once; the mean natural-log cross-entropy.
inline double plain_eval_loss(const PlainModel& model, const std::vector<int32_t>& tokens) {
  const auto T = static_cast<size_t>(model.c.block_size);
  double sum = 0;
  size_t targets = 0;
  for (size_t start = 0; start + 1 < tokens.size(); start += T) {
    const size_t n = std::min(T, tokens.size() - 1 - start);
    const Matrix logits = model.logits(std::vector<int32_t>(tokens.begin() + start, tokens.begin() + start + n));
    for (size_t t = 0; t < n; ++t) {
      const double most = *std::max_element(logits[t].begin(), logits[t].end());
      double z = 0;
      for (double v : logits[t]) z += std::exp(v - most);
      sum += most + std::log(z) - logits[t][static_cast<size_t>(tokens[start + t + 1])];
      ++targets;
    }
  }
  return sum / static_cast<double>(targets);
}

}  // namespace tinygpt::testing
