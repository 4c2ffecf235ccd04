#pragma once
// Hugging Face's GPT-2 layout, in and out: a directory with config.json (GPT2Config), model.safetensors
// (Conv1D weights stored [in, out]; names with or without "transformer."; lm_head tied to wte) and
// the tokenizer files (vocab.json + merges.txt, or OpenAI's encoder.json + vocab.bpe).
#include <memory>
#include <string>

#include "../data/bpe_tokenizer.h"
#include "../nn/gpt.h"

namespace tinygpt::io {

struct HfGpt2 {
  std::shared_ptr<nn::GPT> model;
  std::shared_ptr<const data::Tokenizer> tokenizer;
  std::string tokenizer_files;  // where it came from: "vocab.json + merges.txt", "encoder.json + vocab.bpe", "given"
};

// Reads and checks everything: config fields we cannot honour (another activation, epsilon, inner
// size, attention scaling), every tensor's name, dtype, shape and finiteness (F32, F16, BF16),
// lm_head equal to wte; the causal-mask buffers (attn.bias, attn.masked_bias) are skipped. Errors
// name the file and the field or tensor. `tokenizer`: for a folder without tokenizer files (an
// export of weights alone), the tokenizer its ids are (refused when the folder has its own).
HfGpt2 import_hf_gpt2(const std::string& dir, std::shared_ptr<const data::Tokenizer> tokenizer = nullptr);

// Whether an export writes the model's tokenizer beside its weights (required: refused, before
// anything is written, when the format has no place for that tokenizer), or the weights alone.
enum class ExportTokenizer { required, omitted };

// Writes config.json, model.safetensors (float32) and the tokenizer as GPT-2's vocab.json +
// merges.txt (a byte-level BPE with GPT-2's split; none is written when omitted) into `dir`
// (created; an existing one must be empty unless `force`, which replaces those four files and
// leaves the rest).
void export_hf_gpt2(const nn::GPT& model, const data::Tokenizer& tokenizer, const std::string& dir, bool force = false,
                    ExportTokenizer with = ExportTokenizer::required);
// Why `tokenizer` cannot be written as GPT-2's files, or "" when it can.
std::string gpt2_files_problem(const data::Tokenizer& tokenizer);

}  // namespace tinygpt::io
