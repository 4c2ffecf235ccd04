#pragma once
// Outputs stored for bf16 products (for_products.h's Readers::products) and the mark on their storage
// that the products trust. For the ops; not part of the public interface.
#include <cstdint>

#include "../for_products.h"
#include "../tensor.h"

namespace tinygpt::detail {

// Whether an output for `readers` is stored rounded: products, under bf16, on the float kernels.
bool stores_rounded(Readers readers);
// x[0..n) rounded to bfloat16 in place.
void round_in_place(float* x, int64_t n);
// t's storage holds bfloat16 values throughout, until an in-place change.
void mark_bf16_exact(const Tensor& t);
bool bf16_exact(const Tensor& t);

}  // namespace tinygpt::detail
