#pragma once
// `tinygpt explain`: one self-contained HTML page in which a learner watches their own model
// compute a text: its tokens, their embeddings, every head's attention step by step (Q, K, V;
// Q·Kᵀ; ÷√d_k; the causal mask; softmax; ·V), the rest of each block, the next-token
// probabilities, and with snapshots of a run, how attention forms while it trains.
#include <cstdint>
#include <string>
#include <vector>

#include "tinygpt/data/tokenizer.h"
#include "tinygpt/io/run_log.h"
#include "tinygpt/nn/gpt.h"

namespace tinygpt::inspect {

// A checkpoint shown in the page: its file name and the iteration of its run (-1: none recorded).
struct ExplainModel {
  std::string name;
  int64_t iteration = -1;
  nn::GPT* model = nullptr;
};

struct ExplainInput {
  std::string text;                      // cut to the model's block_size tokens, with a note
  const data::Tokenizer* tokenizer = nullptr;
  ExplainModel main;                     // taken apart in full
  std::vector<ExplainModel> snapshots;   // the slider's checkpoints: attention maps and probabilities
  std::vector<io::LogRow> loss;          // the run's CSV log (may be empty)
  std::string language = "en";           // the page's first language: en or ko
};

// Most next-token candidates kept per position when the vocabulary is larger than kFullVocab: the
// page then renormalizes over them and says so.
constexpr int64_t kFullVocab = 4096, kTopCandidates = 256;

struct ExplainPage {
  std::string html;
  std::vector<std::string> notes;  // what was cut or left out, also shown in the page
};

// Runs every model on the text (no gradient, eval mode) and writes the page. Every number in it is
// what the C++ model computed, stored as float32 bits (base64), so that hovering a cell shows the
// exact value; the page's own arithmetic (softmax with a temperature, top-k) is checked against it.
// Throws when a snapshot's configuration differs from the main model's.
ExplainPage explain_page(const ExplainInput& input);

}  // namespace tinygpt::inspect
