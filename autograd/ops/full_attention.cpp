// Attention over every key (an encoder's), composed from the ops it is made of, in the order an
// explanation gives them: scores q kᵀ, scaled by 1/sqrt(d_k), padded keys masked, softmax over
// the keys into weights, weights times v. Each step differentiates through its own op.
#include <fmt/format.h>

#include <cmath>
#include <stdexcept>

#include "../ops.h"

namespace tinygpt {

namespace {

void check_shapes(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask) {
  auto fail = [&](const char* why) {
    throw std::invalid_argument(fmt::format("attention: {} (query {}, key {}, value {}{})", why, to_string(q.shape()),
                                            to_string(k.shape()), to_string(v.shape()),
                                            mask.defined() ? ", mask " + to_string(mask.shape()) : ""));
  };
  if (q.dim() != 4 || k.dim() != 4 || v.dim() != 4) fail("query, key and value must be [B, heads, T, d]");
  if (k.size(0) != q.size(0) || v.size(0) != q.size(0) || k.size(1) != q.size(1) || v.size(1) != q.size(1))
    fail("batch and head counts differ");
  if (k.size(3) != q.size(3)) fail("query and key differ in d_k");
  if (v.size(2) != k.size(2)) fail("key and value differ in length");
  if (!mask.defined()) return;
  if (mask.dim() != 2 || mask.size(0) != q.size(0) || mask.size(1) != k.size(2)) fail("the mask must be [B, Tk]");
  const Tensor m = mask.contiguous();
  for (int64_t b = 0; b < m.size(0); ++b) {
    bool any_key = false;
    for (int64_t j = 0; j < m.size(1) && !any_key; ++j) any_key = m.data()[b * m.size(1) + j] == 0.0f;
    if (!any_key) fail(fmt::format("every key of batch row {} is masked", b).c_str());
  }
}

}  // namespace

AttentionResult attention(const Tensor& query, const Tensor& key, const Tensor& value, const Tensor& key_padding_mask) {
  check_shapes(query, key, value, key_padding_mask);
  const float scale = 1.0f / std::sqrt(static_cast<float>(query.size(3)));
  Tensor scores = matmul(query, key.transpose(2, 3)) * scale;  // [B, nh, Tq, Tk]
  if (key_padding_mask.defined())
    scores = masked_fill(scores, key_padding_mask.reshape({key.size(0), 1, 1, key.size(2)}), -INFINITY);
  const Tensor weights = softmax(scores);  // each query's row sums to 1 over the keys it may see
  return {matmul(weights, value), weights.detach()};  // [B, nh, Tq, d_v]
}

}  // namespace tinygpt
