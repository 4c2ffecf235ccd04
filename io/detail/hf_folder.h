#pragma once
// What Hugging Face's GPT-2 and Llama folders share on import.
#include <cstdint>
#include <string>

#include "../../data/tokenizer.h"

namespace tinygpt::io {

// Throws std::invalid_argument, naming the folder, when `tokenizer` has more tokens than
// config.json's vocab_size: its ids would index rows the model lacks.
void require_vocab_holds(const data::Tokenizer& tokenizer, int64_t vocab_size, const std::string& dir);

}  // namespace tinygpt::io
