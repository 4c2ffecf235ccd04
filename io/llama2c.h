#pragma once
// llama2.c's files, in and out. The model file is run.c's (the legacy version-0 layout): seven
// int32 (dim, hidden_dim, n_layers, n_heads, n_kv_heads, vocab_size, seq_len; a negative vocab_size
// means an output layer of its own), then float32 tensors, each for all layers before the next:
//   token embedding [V, C]; rms_att [L, C]; wq [L, C, C]; wk [L, KV, C]; wv [L, KV, C]; wo [L, C, C];
//   rms_ffn [L, C]; w1 [L, H, C]; w2 [L, C, H]; w3 [L, H, C]; rms_final [C];
//   RoPE's cos and sin [seq_len, hs / 2] each (run.c skips them); wcls [V, C] when not shared.
// run.c fixes RMSNorm's eps at 1e-5 and RoPE's theta at 10000, with llama2.c's pairing (ours).
// Our fused weights map as c_attn = [wq; wk; wv] and c_fc = [w1 (the gate); w3 (the up projection)].
// The tokenizer file: uint32 longest token length, then per id a float32 score, a uint32 length and
// the piece's bytes ("▁" as a space, BOS as "\n<s>\n", EOS as "\n</s>\n").
#include <memory>
#include <string>

#include "../data/sentencepiece_tokenizer.h"
#include "../nn/gpt.h"

namespace tinygpt::io {

// Throws, naming what does not fit, when run.c would compute another model than `model`: it must be
// RMSNorm with eps 1e-5, RoPE with theta 10000, SwiGLU, without biases.
void check_llama2c_exportable(const nn::GPT& model);
// Writes run.c's model file (atomically; `path` replaces only a llama2.c file, and only with force).
void export_llama2c(const nn::GPT& model, const std::string& path);
// Writes llama2.c's tokenizer.bin for a SentencePiece tokenizer.
void export_llama2c_tokenizer(const data::SentencePieceTokenizer& tokenizer, const std::string& path);

// Reads run.c's model file, checking the header's sizes, the file's length against them and every
// weight's finiteness; errors name the file and the tensor. block_size is the header's seq_len.
std::shared_ptr<nn::GPT> import_llama2c(const std::string& path);

// What a file is to llama2.c, judged by its whole length: a model whose size is the one its header
// implies, a tokenizer whose records run exactly to its end, or neither (a text file never passes
// for either).
enum class Llama2cFile { neither, model, tokenizer };
Llama2cFile llama2c_file_kind(const std::string& path);

}  // namespace tinygpt::io
