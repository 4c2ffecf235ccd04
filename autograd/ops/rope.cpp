// Rotary position embedding (RoPE), llama2.c's pairing: in each rotated head of size hs, the pair
// (x[2i], x[2i+1]), i = 0 .. hs/2 - 1, of the token at position pos turns by the angle
//   a = pos * theta^(-2i / hs):   (x0, x1) -> (x0 cos a - x1 sin a,  x0 sin a + x1 cos a)
// so that the product of a query at position m with a key at position n depends on m - n only.
// Backward turns the gradient back by -a. The angles are computed in double (elementary.h's
// functions: the same table on every machine), then rounded.
#include <fmt/format.h>

#include <cmath>
#include <stdexcept>

#include "../graph.h"
#include "../inference.h"
#include "../ops.h"
#include "../kernels/parallel.h"
#include "../detail/profile.h"
#include "../elementary.h"

namespace tinygpt {

namespace {

// cos and sin of each pair's angle at one position: cs[2i], cs[2i + 1].
void angles_at(int64_t pos, int64_t hs, float theta, float* cs) {
  for (int64_t i = 0; i < hs / 2; ++i) {
    const double angle =
        static_cast<double>(pos) * pow_double(static_cast<double>(theta), -2.0 * static_cast<double>(i) / hs);
    const CosSin turn = cos_sin_double(angle);
    cs[2 * i] = static_cast<float>(turn.cos);
    cs[2 * i + 1] = static_cast<float>(turn.sin);
  }
}

// One position's row: the first `heads` heads turned by the angles cs (direction +1 forward, -1
// back), the rest of the row as it is; written to y, or added to it. y may be x when writing.
void turn_row(const float* x, int64_t D, int64_t heads, int64_t hs, const float* cs, float direction, float* y,
              bool add) {
  for (int64_t h = 0; h < heads; ++h)
    for (int64_t i = 0; i < hs / 2; ++i) {
      const float c = cs[2 * i], s = direction * cs[2 * i + 1];
      const float x0 = x[h * hs + 2 * i], x1 = x[h * hs + 2 * i + 1];
      // Fused as written: left to contraction, the vector and scalar copies of this loop (the
      // compiler picks one at run time) fuse different products and differ in the last bit.
      const float y0 = std::fma(x0, c, -(x1 * s)), y1 = std::fma(x0, s, x1 * c);
      y[h * hs + 2 * i] = add ? y[h * hs + 2 * i] + y0 : y0;
      y[h * hs + 2 * i + 1] = add ? y[h * hs + 2 * i + 1] + y1 : y1;
    }
  for (int64_t j = heads * hs; j < D; ++j) y[j] = add ? y[j] + x[j] : x[j];
}

}  // namespace

void rope_row(float* x, int64_t heads, int64_t hs, int64_t pos, float theta, float* angles) {
  angles_at(pos, hs, theta, angles);
  turn_row(x, heads * hs, heads, hs, angles, 1.0f, x, false);
}

Tensor rope_angles(int64_t positions, int64_t head_size, float theta) {
  if (positions < 0 || head_size <= 0 || head_size % 2 != 0 || !(theta > 0.0f) || !std::isfinite(theta))
    throw std::invalid_argument(fmt::format("rope_angles: {} positions of heads of size {} (even) with theta {}",
                                            positions, head_size, theta));
  Tensor angles = Tensor::empty({positions, head_size});
  for (int64_t pos = 0; pos < positions; ++pos) angles_at(pos, head_size, theta, angles.data() + pos * head_size);
  return angles;
}

Tensor rope(const Tensor& input, int64_t head_size, int64_t rotated_heads, const Tensor& angles, int64_t start) {
  OpTimer timer("rope");
  const int64_t D = input.dim() >= 2 ? input.shape().back() : 0, T = input.dim() >= 2 ? input.size(input.dim() - 2) : 0;
  if (input.dim() < 2 || D == 0 || head_size <= 0 || head_size % 2 != 0 || rotated_heads < 0 ||
      rotated_heads * head_size > D || start < 0 || angles.dim() != 2 || angles.size(1) != head_size ||
      !angles.is_contiguous() || start + T > angles.size(0))
    throw std::invalid_argument(fmt::format("rope: input {} (need [..., T, D]) cannot rotate {} heads of size {} (even) "
                                            "from position {} with angles {}",
                                            to_string(input.shape()), rotated_heads, head_size, start,
                                            to_string(angles.shape())));
  const Tensor x = input.contiguous();
  const int64_t rows = x.numel() / D, hs = head_size, heads = rotated_heads;
  const float* cs = angles.data() + start * hs;  // [T, hs]: cos, sin of each pair at positions start..
  Tensor out = Tensor::empty(x.shape());
  parallel_for(rows, grain_for(2 * D), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r)
      turn_row(x.data() + r * D, D, heads, hs, cs + (r % T) * hs, 1.0f, out.data() + r * D, false);
  });
  return attach(out, "rope", {x}, [x, angles, cs, rows, T, D, heads, hs](const Tensor&, const Tensor& g) {
    bool fresh = false;
    float* sink = grad_sink(x, fresh);
    if (!sink) return;
    parallel_for(rows, grain_for(2 * D), [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) turn_row(g.data() + r * D, D, heads, hs, cs + (r % T) * hs, -1.0f, sink + r * D, !fresh);
    });
  });
}

Tensor rope(const Tensor& x, int64_t head_size, int64_t rotated_heads, float theta, int64_t start) {
  const int64_t T = x.dim() >= 2 ? x.size(x.dim() - 2) : 0;
  if (head_size <= 0 || head_size % 2 != 0 || start < 0 || !(theta > 0.0f))
    throw std::invalid_argument(fmt::format("rope: input {} (need [..., T, D]) cannot rotate {} heads of size {} (even) "
                                            "with theta {} from position {}",
                                            to_string(x.shape()), rotated_heads, head_size, theta, start));
  return rope(x, head_size, rotated_heads, rope_angles(start + T, head_size, theta), start);
}

}  // namespace tinygpt
