// GFLOP/s of tinygpt's gemm beside OpenBLAS's sgemm on the products a Linear layer makes:
//   forward   Y  = X · Wᵀ     [M, K] x [N, K]ᵀ -> [M, N]
//   backward  dX = dY · W     [M, N] x [N, K]  -> [M, K]
//   backward  dW = dYᵀ · X    [M, N]ᵀ x [M, K] -> [N, K]
// Each figure is the best of several rounds (default 5) that alternate ours and OpenBLAS's.
#include <fmt/format.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "tinygpt/autograd/kernels/gemm.h"
#include "tinygpt/autograd/machine.h"
#include "tinygpt/autograd/kernels/simd.h"
#include "tinygpt/autograd/memory.h"
#include "tinygpt/autograd/threads.h"
#include "tinygpt/autograd/tensor.h"
#include "tinygpt/train/options.h"

#ifdef TINYGPT_HAVE_OPENBLAS
#include <cblas.h>
#endif

using namespace tinygpt;

namespace {

struct Product {
  const char* name;
  int64_t M, N, K;                     // C[M, N] = A[M, K] · B[K, N]
  bool a_transposed, b_transposed;     // as stored in memory
};

// Seconds per call, averaged over calls repeated until 0.1 s have passed.
template <class F>
double seconds_per_call(const F& call) {
  call();  // warm caches and thread pools
  int n = 0;
  auto t0 = std::chrono::steady_clock::now();
  double elapsed = 0;
  do {
    call();
    ++n;
    elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  } while (elapsed < 0.1);
  return elapsed / n;
}

}  // namespace

int main(int argc, char** argv) try {
  // As in training (the Trainer holds one): gemm's packing buffers come back from the pool instead
  // of fresh pages each call, as OpenBLAS keeps its own buffer between calls.
  memory::Reuse reuse;
  const int rounds = argc > 1 ? static_cast<int>(io::parse_number<int64_t>("rounds", argv[1], {1, 1000})) : 5;
  // A third, measured|native|rounded, forces the bf16 kernels (precision.h: Bf16Kernels).
  if (argc > 3) set_bf16_kernels(parse_bf16_kernels(argv[3]));
  // A second argument, e.g. "4096x384x1152", times just that shape instead of the default ones.
  std::vector<std::array<int64_t, 3>> shapes = {{768, 128, 384}, {768, 512, 128}, {768, 128, 65}, {1024, 1024, 1024}};
  if (argc > 2) {
    const std::string text = argv[2];
    const size_t x1 = text.find('x'), x2 = x1 == std::string::npos ? x1 : text.find('x', x1 + 1);
    if (x2 == std::string::npos) throw std::invalid_argument(fmt::format("shape '{}' is not MxKxN", text));
    const io::Range sizes{1, 16384};  // each operand at most 1 GB
    shapes = {{io::parse_number<int64_t>("M", text.substr(0, x1), sizes),
               io::parse_number<int64_t>("K", text.substr(x1 + 1, x2 - x1 - 1), sizes),
               io::parse_number<int64_t>("N", text.substr(x2 + 1), sizes)}};
  }
  fmt::print("# gemm GFLOP/s, CPU: {}, hardware threads: {}, vector path: {}\n", cpu_model(),
             std::thread::hardware_concurrency(), vector_path());
  fmt::print("# one core's FMA peak: {:.1f} GFLOP/s (12 independent chains in registers)\n", fma_peak_gflops());
  bool generic_core = false;
#ifdef TINYGPT_HAVE_OPENBLAS
  fmt::print("# OpenBLAS config: {}\n", openblas_get_config());
  // OpenBLAS 0.3.21 runs its generic Prescott (SSE3) kernels on CPUs it does not know: a ratio
  // against those says nothing about tinygpt, so say so on every line that shows one.
  const std::string core = openblas_get_corename();
  generic_core = core == "Prescott" || core == "Core2" || core == "generic";
  fmt::print("# OpenBLAS core: {}{}\n", core,
             generic_core ? " (GENERIC kernels: not a fair yardstick; set OPENBLAS_CORETYPE to this CPU's family, "
                            "chosen by measuring)"
                          : "");
#endif
  fmt::print("# bf16 products (operands rounded to bfloat16, sums in float): {}\n", bf16_kernels_note());
  fmt::print("{:<16} {:<9} {:>7} {:>12} {:>12} {:>7} {:>12} {:>9}\n", "M x K x N", "product", "threads", "tinygpt",
             "OpenBLAS", "ratio", "tinygpt bf16", "bf16/fp32");
  for (auto& s : shapes) {
    const int64_t M = s[0], K = s[1], N = s[2];
    const Product products[] = {{"Y=XWt", M, N, K, false, true}, {"dX=dYW", M, K, N, false, false},
                                {"dW=dYtX", N, K, M, true, false}};
    for (const Product& p : products) {
      Tensor a = Tensor::uniform({p.M * p.K}, 1, -1, 1), b = Tensor::uniform({p.K * p.N}, 2, -1, 1);
      Tensor c = Tensor::zeros({p.M * p.N});
      const int64_t lda = p.a_transposed ? p.M : p.K, ldb = p.b_transposed ? p.K : p.N;
      MatrixView av = p.a_transposed ? MatrixView{a.data(), 1, lda} : MatrixView{a.data(), lda, 1};
      MatrixView bv = p.b_transposed ? MatrixView{b.data(), 1, ldb} : MatrixView{b.data(), ldb, 1};
      const double flops = 2.0 * p.M * p.N * p.K;
      for (int threads : {1, 2}) {
        set_num_threads(threads);
        double ours = 1e30, theirs = 0, ours_bf16 = 1e30;
        for (int r = 0; r < rounds; ++r) {  // alternate ours and theirs; keep the best of each
          ours = std::min(ours, seconds_per_call([&] { gemm(p.M, p.N, p.K, av, bv, c.data(), p.N, false); }));
          ours_bf16 = std::min(ours_bf16, seconds_per_call([&] {
            gemm(p.M, p.N, p.K, av, bv, c.data(), p.N, false, nullptr, Precision::bf16);
          }));
#ifdef TINYGPT_HAVE_OPENBLAS
          openblas_set_num_threads(threads);
          const double t = seconds_per_call([&] {
            cblas_sgemm(CblasRowMajor, p.a_transposed ? CblasTrans : CblasNoTrans,
                        p.b_transposed ? CblasTrans : CblasNoTrans, p.M, p.N, p.K, 1.0f, a.data(), lda, b.data(), ldb,
                        0.0f, c.data(), p.N);
          });
          theirs = theirs > 0 ? std::min(theirs, t) : t;
#endif
        }
        const double g_ours = flops / ours / 1e9, g_theirs = theirs > 0 ? flops / theirs / 1e9 : 0;
        const double g_bf16 = flops / ours_bf16 / 1e9;
        fmt::print("{:<16} {:<9} {:>7} {:>12.1f} {:>12.1f} {:>7.2f} {:>12.1f} {:>9.2f}{}\n", fmt::format("{}x{}x{}", M, K, N),
                   p.name, threads, g_ours, g_theirs, g_theirs > 0 ? g_ours / g_theirs : 0.0, g_bf16, g_bf16 / g_ours,
                   generic_core ? "  (against generic OpenBLAS kernels)" : "");
        std::fflush(stdout);
      }
    }
  }
  set_num_threads(0);
} catch (const std::exception& e) {
  fmt::print(stderr, "bench_matmul: {}\nusage: bench_matmul [ROUNDS [MxKxN [measured|native|rounded]]]\n", e.what());
  return 2;
}
