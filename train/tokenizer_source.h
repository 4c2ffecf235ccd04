#pragma once
// Anything that holds a tokenizer, for every flag that takes one (--tokenizer-from, tokens --ckpt):
// a checkpoint or tokenizer file (its /tokenizer alone is read), a folder of shards with its
// tokenizer.h5, a Hugging Face folder (GPT-2's vocab.json + merges.txt or encoder.json + vocab.bpe,
// or Llama's tokenizer.model), or a SentencePiece model file.
#include <memory>
#include <string>

#include "../data/tokenizer.h"

namespace tinygpt::train {

// The tokenizer `path` holds; an error names the path and what was looked for when it holds none.
std::shared_ptr<const data::Tokenizer> read_tokenizer_of(const std::string& path);

}  // namespace tinygpt::train
