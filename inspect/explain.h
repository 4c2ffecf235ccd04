#pragma once
// `tinygpt explain`: one self-contained HTML page in which a learner watches their own model
// compute a text: its tokens, their embeddings, every head's attention step by step (Q, K, V;
// Q·Kᵀ; ÷√d_k; the causal mask; softmax; ·V), the rest of each block, the next-token
// probabilities, and with snapshots of a run, how attention forms while it trains.
#include <cstdint>
#include <string>
#include <vector>

#include "../data/tokenizer.h"
#include "../io/run_log.h"
#include "../nn/gpt.h"

namespace tinygpt::inspect {

// A checkpoint shown in the page: its file name and the iteration of its run (-1: none recorded).
struct ExplainModel {
  std::string name;
  int64_t iteration = -1;
  nn::GPT* model = nullptr;
};

struct ExplainInput {
  std::string text;                      // cut to the block size or kMostTokens, with a note
  const data::Tokenizer* tokenizer = nullptr;
  ExplainModel main;                     // taken apart in full
  std::vector<ExplainModel> snapshots;   // the slider's checkpoints: attention maps and probabilities
  std::vector<io::LogRow> loss;          // the run's CSV log (may be empty)
  std::string language = "en";           // the page's first language: en or ko
  // The layers shown in full (the stepper, the rest of the block); empty: as many as keep the page
  // near kPageBudget, spread from the first layer to the last. Every layer keeps its attention maps.
  std::vector<int64_t> layers;
};

// A page a browser opens in a second or two whatever the model: at most kMostTokens tokens (a
// T x T map of 128 is 16k cells), full detail for the layers that fit in about kPageBudget bytes.
constexpr int64_t kMostTokens = 128, kPageBudget = 20'000'000;

// Most next-token candidates kept per position when the vocabulary is larger than kFullVocab: the
// page then renormalizes over them and says so.
constexpr int64_t kFullVocab = 4096, kTopCandidates = 256;

// Largest model whose weights a page carries so that it computes a typed text itself: 8 MB of
// float32 in the page, about 1 s per 128-token text (docs/performance.md).
constexpr int64_t kMostTypedParameters = 2'000'000;

struct ExplainPage {
  std::string html;
  std::vector<std::string> notes;  // what was cut or left out, also shown in the page
};

// The layers a page takes apart in full: `asked` (sorted, checked against the model), or when it is
// empty as many as fit kPageBudget beside what every page holds for a T-token text, `snapshots`
// more models (their maps and logits) and `vocabulary_bytes` of the tokenizer's tokens
// (vocabulary_page_bytes), spread evenly from the first layer to the last.
std::vector<int64_t> explain_layers(const nn::GPTConfig& config, int64_t T, int64_t snapshots,
                                    std::vector<int64_t> asked, int64_t vocabulary_bytes = 0);

// Bytes the tokenizer's first vocab_size tokens take in a page (labels and bytes, as the hover and
// a typed text need them): a page whose tokens alone pass half of kPageBudget is refused.
int64_t vocabulary_page_bytes(const data::Tokenizer& tokenizer, int64_t vocab_size);

// Runs every model on the text (no gradient, eval mode) and writes the page. Every number in it is
// what the C++ model computed, stored as float32 bits (base64), so that hovering a cell shows the
// exact value; the page's own arithmetic (softmax with a temperature, top-k) is checked against it.
// A page whose model has at most kMostTypedParameters parameters and a character or BPE tokenizer
// also carries the weights and the tokenizer: a learner types a text of their own and the page
// computes it, and its self-check runs that forward pass on the given text and compares every
// number with the C++ one.
// Throws when a snapshot's configuration differs from the main model's, or a layer asked for is not
// the model's.
ExplainPage explain_page(const ExplainInput& input);

}  // namespace tinygpt::inspect
