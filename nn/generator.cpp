#include "sampling.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "../autograd/graph.h"

namespace tinygpt::nn {

namespace {

// The model in eval mode for a scope, then in the mode it was in.
class EvalScope {
 public:
  explicit EvalScope(GPT& model) : model_(model), training_(model.training()) { model.eval(); }
  ~EvalScope() { model_.train(training_); }
  EvalScope(const EvalScope&) = delete;
  EvalScope& operator=(const EvalScope&) = delete;

 private:
  GPT& model_;
  bool training_;
};

}  // namespace

Generator::Generator(GPT& model)
    : model_(model), scratch_(model.config()), x_(model.config().n_embd), logits_(model.config().vocab_size) {
  const GPTConfig& c = model.config();
  caches_.reserve(c.n_layer);
  for (int64_t l = 0; l < c.n_layer; ++l) caches_.emplace_back(c.block_size, c.kv_heads() * c.head_size());
  if (!slides()) tokens_.reserve(c.block_size + 1);
}

bool Generator::slides() const { return model_.config().position == PositionKind::rope; }

void Generator::advance(int32_t token) {
  model_.embed_row(token, length_, x_.data());  // GPT::forward, one position: the same modules
  for (size_t l = 0; l < caches_.size(); ++l) model_.h[l]->forward_row(x_.data(), length_, caches_[l], scratch_);
  ++length_;
}

void Generator::encode_again() {
  length_ = static_cast<int64_t>(tokens_.size());
  if (tokens_.empty()) return;
  const GPTConfig& c = model_.config();
  const int64_t C = c.n_head * c.head_size(), KV = c.kv_heads() * c.head_size();
  const EvalScope eval(model_);
  NoGradGuard no_grad;
  model_.forward(tokens_, 1, length_, {}, [&](int64_t layer, Tap tap, const Tensor& value) {
    if (tap != Tap::qkv) return;
    const Tensor rows = value.contiguous();  // [1, n, C + 2 KV]: queries, keys, values
    KVCache& cache = caches_[static_cast<size_t>(layer)];
    for (int64_t p = 0; p < length_; ++p) {
      const float* row = rows.data() + p * (C + 2 * KV);
      std::copy_n(row + C, KV, cache.key(cache.slot(p)));
      std::copy_n(row + C + KV, KV, cache.value(cache.slot(p)));
    }
  });
}

const std::vector<float>& Generator::feed(int32_t token) {
  const GPTConfig& c = model_.config();
  if (token < 0 || token >= c.vocab_size)
    throw std::out_of_range(fmt::format("Generator: token id {} is out of range for vocab_size {}", token, c.vocab_size));
  if (!slides()) {
    if (length_ == c.block_size) {  // positions end here: the last half again from position 0
      const auto keep = static_cast<size_t>(std::max<int64_t>(1, c.block_size / 2));
      tokens_.erase(tokens_.begin(), tokens_.end() - static_cast<std::ptrdiff_t>(keep - 1));
      encode_again();
    }
    tokens_.push_back(token);
  }
  advance(token);
  model_.logits_row(x_.data(), scratch_, logits_.data());
  return logits_;
}

}  // namespace tinygpt::nn
