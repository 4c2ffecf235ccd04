#include "gemm.h"

namespace tinygpt {

void gemm_reference(int64_t M, int64_t N, int64_t K, MatrixView A, MatrixView B, float* C, int64_t ldc,
                    bool accumulate, const float* bias) {
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double s = 0.0;
      for (int64_t k = 0; k < K; ++k)
        s += static_cast<double>(A.data[i * A.row_stride + k * A.col_stride]) * B.data[k * B.row_stride + j * B.col_stride];
      float& c = C[i * ldc + j];
      c = static_cast<float>(accumulate ? c + s : bias ? s + bias[j] : s);
    }
}

}  // namespace tinygpt
