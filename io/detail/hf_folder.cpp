#include "hf_folder.h"

#include <fmt/format.h>

#include <stdexcept>

namespace tinygpt::io {

void require_vocab_holds(const data::Tokenizer& tokenizer, int64_t vocab_size, const std::string& dir) {
  if (tokenizer.vocab_size() > vocab_size)
    throw std::invalid_argument(fmt::format("'{}': the tokenizer has {} tokens, but config.json's vocab_size is only {}",
                                            dir, tokenizer.vocab_size(), vocab_size));
}

}  // namespace tinygpt::io
