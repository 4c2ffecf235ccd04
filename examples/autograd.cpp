// Differentiates y = x^3 + 2x at x = 2 (y = 12, dy/dx = 3x^2 + 2 = 14) with tinygpt::autograd alone:
// it needs fmt and oneTBB, not HDF5, CLI11 or MPI.
#include <tinygpt/autograd/ops.h>

#include <cstdio>

int main() {
  using namespace tinygpt;
  Tensor x = Tensor::from_vector({1}, {2.0f}).set_requires_grad(true);
  Tensor y = pow(x, 3.0f) + x * 2.0f;
  y.backward();
  std::printf("y = %g, dy/dx = %g\n", y.item(), x.grad().item());  // 12 and 14
  return y.item() == 12.0f && x.grad().item() == 14.0f ? 0 : 1;
}
