#pragma once
// Where a training step's time goes, by op family (matmul, attention, layernorm, gelu,
// cross-entropy, embedding, other), forward and backward together: what `tinygpt bench` prints.
// Recording is off (one branch per op) unless a Profiler is alive on the calling thread; an op
// that calls other ops counts once, as itself.
//
//   OpSeconds families;
//   { Profiler profiler(families); loss = model.forward(x, y); loss.backward(); }
//   for (const auto& [family, seconds] : families) fmt::print("{} {:.3f}\n", family, seconds);
#include <map>
#include <string>

namespace tinygpt {

using OpSeconds = std::map<std::string, double>;  // family -> seconds (forward and backward)

class Profiler {
 public:
  explicit Profiler(OpSeconds& sink);  // records into sink on this thread until destroyed
  ~Profiler();
  Profiler(const Profiler&) = delete;
  Profiler& operator=(const Profiler&) = delete;

 private:
  OpSeconds* previous_;
};

}  // namespace tinygpt
