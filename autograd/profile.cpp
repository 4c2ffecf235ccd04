#include "detail/profile.h"

#include <cstring>

namespace tinygpt {

namespace {
thread_local OpSeconds* g_sink = nullptr;  // per thread, like the no-grad flag
thread_local int g_depth = 0;
thread_local const char* g_op = nullptr;  // the outermost op being computed, for error messages
}  // namespace

Profiler::Profiler(OpSeconds& sink) : previous_(g_sink) { g_sink = &sink; }
Profiler::~Profiler() { g_sink = previous_; }

const char* op_family(const char* op) {
  static const std::pair<const char*, const char*> families[] = {
      {"matmul", "matmul"},         {"linear", "matmul"},              {"causal_attention", "attention"}, {"layer_norm", "layernorm"},
      {"gelu", "gelu"},             {"cross_entropy", "cross-entropy"}, {"embedding", "embedding"},
      {"rms_norm", "rmsnorm"},      {"rope", "rope"},                   {"swiglu", "swiglu"}};
  for (const auto& [name, family] : families)
    if (std::strcmp(op, name) == 0) return family;
  return "other";
}

OpTimer::OpTimer(const char* op) : op_(op), outer_op_(g_op), outermost_(g_sink != nullptr && g_depth++ == 0) {
  if (!g_op) g_op = op;
  if (outermost_) start_ = std::chrono::steady_clock::now();
}

const char* current_op() { return g_op; }

OpTimer::~OpTimer() {
  g_op = outer_op_;
  if (!g_sink) return;
  --g_depth;
  if (outermost_) (*g_sink)[op_family(op_)] += std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

}  // namespace tinygpt
