#pragma once
// C[m, n] (=|+=) alpha * A[m, k] · B[k, n] for the small products inside one attention head.
// Serial, so it can run inside a parallel loop over heads. A is read in place through any strides;
// B from pack_b's column panels: contiguous whatever B's own strides (a row stride of T = 256
// floats would map a tile's rows of B to a few L1 sets), and zero past column n, so that every tile
// computes whole vectors. Register tiles of up to MR rows x NR columns.
// In bf16 (precision.h) both operands are rounded to bfloat16 and the products summed in float:
// B as it is packed, A a block of rows at a time on the stack.
#include <cstdint>

#include "gemm.h"

namespace tinygpt {

// How a packed B holds its values: floats (fp32); floats rounded to bfloat16 (the portable bf16
// path: float kernels); bfloat16 pairs along k (the native one: vdpbf16ps, bf16_pairs.h).
enum class SmallForm { floats, rounded, pairs };
// The form for products in `precision` on this machine.
SmallForm small_form(Precision precision);

// B packed: floats B(p, j) = data[(j / NR) * panel + p * NR + j % NR]; pairs: 32-bit words
// {B(p, j), B(p + 1, j)} at [(j / NR) * panel + (p / 2) * NR + j % NR] for even p.
struct SmallB {
  const float* data;
  int64_t panel;
  SmallForm form = SmallForm::floats;
  SmallB from_row(int64_t p) const;  // B without its first p rows (p even for pairs)
};
// B[k, n] packed whole into out, which holds packed_b_size(k, n) floats (pack.h); the rounded form
// copies a bfloat16-exact B (MatrixView::bf16_exact) as it is.
SmallB packed(MatrixView B, int64_t k, int64_t n, float* out, SmallForm form = SmallForm::floats);

struct SmallGemmArgs {
  int64_t m, n, k;
  const float* a;
  int64_t a_row, a_col;  // A(i, p) = a[i * a_row + p * a_col]
  SmallB b;
  float* c;
  int64_t c_row;         // C(i, j) = c[i * c_row + j]
  float alpha = 1.0f;
  bool accumulate = false;
  bool a_rounded = false;  // A is already bfloat16-exact: the rounded form reads it in place
  // Non-zero: A is a float or rounded SmallB of its rows (a_row NR, a_col 1), whose panels of NR
  // columns of k lie this far apart: A(i, p) = a[(p / NR) * a_panel + i * NR + p % NR].
  int64_t a_panel = 0;
  // C stored rounded to bfloat16 (after any accumulate): an output read only by products, on the
  // float kernels (precision.h's Readers). Floats and rounded forms only.
  bool round_c = false;
};
// A = rows i0.. of the matrix packed in b (not pairs), for SmallGemmArgs' a, a_row, a_col and a_panel.
struct SmallA {
  const float* a;
  int64_t a_row, a_col, a_panel;
};
SmallA packed_rows(SmallB b, int64_t i0);

// In B's form: rounded and pairs round A as well (rounded not where a_rounded).
void small_gemm(const SmallGemmArgs& g);

// The pairs form's halves (small_gemm_bf16.cpp): call only where bf16_native().
SmallB packed_pairs(MatrixView B, int64_t k, int64_t n, float* out);
void small_gemm_pairs(const SmallGemmArgs& g);

// How deep a block of A the bf16 forms round at a time (MR rows of it, on the stack): a deeper
// product adds its blocks' sums into C one after another.
constexpr int64_t kSmallDepth = 256;

}  // namespace tinygpt
