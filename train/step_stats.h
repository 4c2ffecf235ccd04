#pragma once
// What one optimizer step did, for the run's logs (io::StepColumns): the gradient's norm before
// clipping, the clipping, and the update-to-weight ratios, overall and per group of parameters.
#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "../io/run_log.h"
#include "../optim/adamw.h"

namespace tinygpt::train {

// The io::kUpdateGroups index of a GPT parameter, by its name: embeddings (wte, wpe), attention
// (attn.*), mlp (mlp.*), norms (ln_1, ln_2, ln_f), head (an untied lm_head).
size_t update_group(const std::string& parameter_name);

// The step's columns from its gradient norm and clip scale and the optimizer's last_update()
// (empty: the step was not applied, and every ratio is 0); `groups` holds update_group of each of
// the optimizer's parameters. tokens and peak_share are the caller's.
io::StepColumns step_columns(double grad_norm, double clip_scale, std::span<const optim::AdamW::UpdateSquares> sums,
                             const std::vector<size_t>& groups);

}  // namespace tinygpt::train
