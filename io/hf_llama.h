#pragma once
// Hugging Face's Llama layout (LlamaForCausalLM), in and out: a directory with config.json
// (LlamaConfig), model.safetensors and tokenizer.model (SentencePiece). Names:
//   model.embed_tokens.weight, model.layers.{i}.input_layernorm.weight,
//   model.layers.{i}.self_attn.{q,k,v,o}_proj.weight, model.layers.{i}.post_attention_layernorm.weight,
//   model.layers.{i}.mlp.{gate,up,down}_proj.weight, model.norm.weight, lm_head.weight (untied).
// Hugging Face's RoPE turns the pairs (i, i + hs/2) of a head, where ours (llama2.c's, Meta's) turns
// (2i, 2i + 1); its conversion script permutes the rows of q_proj and k_proj so that both compute
// the same model: row 2i + j of a head here is row j hs/2 + i there. Import and export apply it.
#include <memory>
#include <string>

#include "../data/sentencepiece_tokenizer.h"
#include "hf_gpt2.h"
#include "../nn/gpt.h"

namespace tinygpt::io {

struct HfLlama {
  std::shared_ptr<nn::GPT> model;
  std::shared_ptr<const data::Tokenizer> tokenizer;
};

// Whether `dir` holds a Llama model: its config.json says model_type "llama".
bool is_hf_llama_dir(const std::string& dir);

// Reads and checks everything: config fields tinygpt cannot honour (another activation, biases,
// RoPE scaling, a head_dim other than hidden_size / heads), every tensor's name, dtype, shape and
// finiteness. Errors name the file and the field or tensor. `tokenizer`: for a folder without
// tokenizer.model (an export of weights alone), the tokenizer its ids are.
HfLlama import_hf_llama(const std::string& dir, std::shared_ptr<const data::Tokenizer> tokenizer = nullptr);

// Writes config.json, model.safetensors (float32) and the SentencePiece tokenizer's tokenizer.model
// (none when omitted; another kind of tokenizer is refused when required) into `dir` (created; an
// existing one must be empty unless `force`). Throws for a model Hugging Face's Llama computes
// differently (LayerNorm, learned positions, GELU, biases).
void export_hf_llama(const nn::GPT& model, const data::Tokenizer& tokenizer, const std::string& dir, bool force,
                     ExportTokenizer with = ExportTokenizer::required);

}  // namespace tinygpt::io
