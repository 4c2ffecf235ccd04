#include "tinygpt/nn/sampling.h"

#include <fmt/format.h>

#include <stdexcept>

namespace tinygpt::nn {

Generator::Generator(const GPT& model)
    : model_(model), scratch_(model.config()), x_(model.config().n_embd), logits_(model.config().vocab_size) {
  const GPTConfig& c = model.config();
  caches_.reserve(c.n_layer);
  for (int64_t l = 0; l < c.n_layer; ++l) caches_.emplace_back(c.block_size, c.kv_heads() * c.head_size());
}

bool Generator::slides() const { return model_.config().position == PositionKind::rope; }

const std::vector<float>& Generator::feed(int32_t token) {
  const GPTConfig& c = model_.config();
  if (length_ >= c.block_size && !slides())
    throw std::logic_error(fmt::format("Generator: the cache is full ({} positions; learned positions end there: "
                                       "reset and feed the text again)",
                                       c.block_size));
  if (token < 0 || token >= c.vocab_size)
    throw std::out_of_range(fmt::format("Generator: token id {} is out of range for vocab_size {}", token, c.vocab_size));
  model_.embed_row(token, length_, x_.data());  // GPT::forward, one position: the same modules
  for (size_t l = 0; l < caches_.size(); ++l) model_.h[l]->forward_row(x_.data(), length_, caches_[l], scratch_);
  model_.logits_row(x_.data(), scratch_, logits_.data());
  ++length_;
  return logits_;
}

}  // namespace tinygpt::nn
