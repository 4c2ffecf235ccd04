#pragma once
// Hugging Face's GPT-2 layout, in and out: a directory with config.json (GPT2Config), model.safetensors
// (Conv1D weights stored [in, out]; names with or without "transformer."; lm_head tied to wte) and
// the tokenizer files (vocab.json + merges.txt, or OpenAI's encoder.json + vocab.bpe).
#include <memory>
#include <string>

#include "tinygpt/data/bpe_tokenizer.h"
#include "tinygpt/nn/gpt.h"

namespace tinygpt::io {

struct HfGpt2 {
  std::shared_ptr<nn::GPT> model;
  std::shared_ptr<const data::BpeTokenizer> tokenizer;
  std::string tokenizer_files;  // which pair was read: "vocab.json + merges.txt" or "encoder.json + vocab.bpe"
};

// Reads and checks everything: config fields we cannot honour (another activation, epsilon, inner
// size, attention scaling), every tensor's name, dtype, shape and finiteness (F32, F16, BF16),
// lm_head equal to wte; the causal-mask buffers (attn.bias, attn.masked_bias) are skipped. Errors
// name the file and the field or tensor.
HfGpt2 import_hf_gpt2(const std::string& dir);

// Writes config.json, model.safetensors (float32) and, for a GPT-2-compatible byte-level BPE,
// vocab.json + merges.txt into `dir` (created; an existing one must be empty unless `force`, which
// replaces those four files and leaves the rest). Returns a line to tell the user when the
// tokenizer could not be written (a character tokenizer has no Hugging Face equivalent), else "".
std::string export_hf_gpt2(const nn::GPT& model, const data::Tokenizer& tokenizer, const std::string& dir,
                           bool force = false);

}  // namespace tinygpt::io
