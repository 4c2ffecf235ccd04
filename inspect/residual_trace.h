#pragma once
// The residual stream of one token through every block to the next-token prediction
// (`tinygpt attention --trace`).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "../data/tokenizer.h"
#include "../nn/gpt.h"
#include "inspect.h"

namespace tinygpt::inspect {

// A token's vector in the residual stream, followed through the model: its norm after the
// embedding, after each block's attention and MLP additions, and after ln_f; then the model's
// most likely next tokens.
struct ResidualTrace {
  struct Stage {
    std::string name;    // "embedding", "block 0 + attention", ..., "ln_f"
    double norm;         // |x| of the token's vector after this stage
    double added_norm;   // |what this stage added| (0 for the embedding and ln_f)
  };
  struct Candidate {
    TokenView token;
    double probability;
  };
  std::vector<TokenView> tokens;
  int64_t position = 0;  // the token followed
  std::vector<Stage> stages;
  std::vector<Candidate> next;  // most likely first
};
// position: the token to follow, the last when not given.
ResidualTrace residual_trace(nn::GPT& model, const data::Tokenizer& tokenizer, const std::string& text,
                             std::optional<int64_t> position = std::nullopt, int64_t top = 5);
std::string residual_trace_text(const ResidualTrace& trace);

}  // namespace tinygpt::inspect
