#include "tokenizer_record.h"

#include <fmt/format.h>

#include <stdexcept>

#include "char_tokenizer.h"

namespace tinygpt::data {

std::shared_ptr<const Tokenizer> make_tokenizer(TokenizerRecord r) {
  switch (r.kind) {
    case TokenizerKind::chars: return std::make_shared<CharTokenizer>(std::move(r.code_points));
    case TokenizerKind::bpe:
      return std::make_shared<BpeTokenizer>(std::move(r.merges), r.split, std::move(r.byte_ids), std::move(r.specials));
    case TokenizerKind::sentencepiece: break;
  }
  throw std::invalid_argument(fmt::format("a {} tokenizer is loaded by io::load_sentencepiece", name(r.kind)));
}

}  // namespace tinygpt::data
