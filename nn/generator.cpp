#include "tinygpt/nn/sampling.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace tinygpt::nn {

Generator::Generator(const GPT& model)
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

const std::vector<float>& Generator::feed(int32_t token) {
  const GPTConfig& c = model_.config();
  if (token < 0 || token >= c.vocab_size)
    throw std::out_of_range(fmt::format("Generator: token id {} is out of range for vocab_size {}", token, c.vocab_size));
  if (!slides()) {
    if (length_ == c.block_size) {  // positions end here: the last half again from position 0
      const auto keep = static_cast<size_t>(std::max<int64_t>(1, c.block_size / 2));
      tokens_.erase(tokens_.begin(), tokens_.end() - static_cast<std::ptrdiff_t>(keep - 1));
      length_ = 0;
      for (const int32_t t : tokens_) advance(t);  // no logits: only the last position's are asked for
    }
    tokens_.push_back(token);
  }
  advance(token);
  model_.logits_row(x_.data(), scratch_, logits_.data());
  return logits_;
}

}  // namespace tinygpt::nn
