#include "step_stats.h"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <stdexcept>

namespace tinygpt::train {

size_t update_group(const std::string& name) {
  auto has = [&](const char* part) { return name.find(part) != std::string::npos; };
  if (has(".attn.")) return 1;
  if (has(".mlp.")) return 2;
  if (has(".ln_")) return 3;
  if (name.starts_with("lm_head.")) return 4;
  if (has(".wte.") || has(".wpe.")) return 0;
  throw std::invalid_argument(fmt::format("step statistics: no group for the parameter '{}'", name));
}

io::StepColumns step_columns(double grad_norm, double clip_scale, std::span<const optim::AdamW::UpdateSquares> sums,
                             const std::vector<size_t>& groups) {
  std::array<optim::AdamW::UpdateSquares, io::kUpdateGroups.size()> by_group{};
  optim::AdamW::UpdateSquares all;
  for (size_t i = 0; i < sums.size(); ++i) {
    by_group.at(groups.at(i)).update += sums[i].update, by_group[groups[i]].weight += sums[i].weight;
    all.update += sums[i].update, all.weight += sums[i].weight;
  }
  auto ratio = [](const optim::AdamW::UpdateSquares& s) {
    return s.weight > 0 ? std::sqrt(s.update / s.weight) : NAN;  // all-zero weights: no ratio
  };
  if (sums.empty()) {  // not applied: nothing changed
    for (size_t i = 0; i < groups.size(); ++i) by_group.at(groups[i]).weight = all.weight = 1;
  }
  io::StepColumns out{.grad_norm = grad_norm, .clip_scale = clip_scale, .update_ratio = ratio(all)};
  std::array<bool, io::kUpdateGroups.size()> present{};
  for (size_t g : groups) present.at(g) = true;
  for (size_t g = 0; g < by_group.size(); ++g) out.group_ratio[g] = present[g] ? ratio(by_group[g]) : NAN;
  return out;
}

}  // namespace tinygpt::train
