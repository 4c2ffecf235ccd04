#include "tinygpt/data/corpus.h"

#include <fmt/format.h>

#include <stdexcept>

#include "tinygpt/data/bpe_tokenizer.h"
#include "tinygpt/data/char_tokenizer.h"
#include "tinygpt/data/text_files.h"
#include "tinygpt/data/utf8.h"

namespace tinygpt::data {

namespace {
BlockCut cut_for(const Tokenizer& t) {
  if (const auto* bpe = dynamic_cast<const BpeTokenizer*>(&t))
    return bpe->split() == Split::gpt2 ? BlockCut::chunk_safe : BlockCut::whole_file;
  return BlockCut::anywhere;
}

std::shared_ptr<const Tokenizer> build_tokenizer(const CorpusOptions& o) {
  if (o.tokenizer == "char") {  // the validation text's characters belong in the vocabulary too
    CharVocabulary vocab;
    std::vector<std::string> all = o.files;
    all.insert(all.end(), o.val_files.begin(), o.val_files.end());
    for (const auto& f : all)
      for_each_block(f, BlockCut::anywhere, [&](std::string_view text, int64_t, int64_t) { vocab.add(text); });
    return std::make_shared<CharTokenizer>(vocab.code_points());
  }
  if (o.tokenizer == "bpe") {
    const Split split = split_from_name(o.split);
    BpeTrainer trainer(split);
    for (const auto& f : o.files)
      for_each_block(f, split == Split::gpt2 ? BlockCut::chunk_safe : BlockCut::whole_file,
                     [&](std::string_view text, int64_t, int64_t) { trainer.add(text); });
    return std::make_shared<BpeTokenizer>(trainer.train(o.vocab_size), split);
  }
  throw std::invalid_argument(fmt::format("unknown tokenizer '{}' (expected char or bpe)", o.tokenizer));
}
}  // namespace

TokenArray tokenize_files(const Tokenizer& tokenizer, const std::vector<std::string>& files) {
  TokenArray tokens(tokenizer.vocab_size());
  std::vector<int32_t> ids;
  for (const auto& f : files)
    for_each_block(f, cut_for(tokenizer), [&](std::string_view text, int64_t, int64_t line_offset) {
      ids.clear();
      try {
        tokenizer.encode(text, ids, f);
      } catch (const UnknownCharacter& e) {  // place it in the file, not in the block
        const TextPosition at = position_of(text, e.offset);
        throw std::invalid_argument(fmt::format("'{}': {} at line {}, column {} is not in the character vocabulary",
                                                f, describe_code_point(e.code_point), at.line + line_offset,
                                                at.column));
      }
      tokens.append(ids);
    });
  return tokens;
}

Corpus load_corpus(const CorpusOptions& o) {
  if (o.files.empty()) throw std::invalid_argument("no training files given");
  return load_corpus(o, build_tokenizer(o));
}

Corpus load_corpus(const CorpusOptions& o, std::shared_ptr<const Tokenizer> tokenizer) {
  Corpus corpus;
  corpus.tokenizer = std::move(tokenizer);
  TokenArray all = tokenize_files(*corpus.tokenizer, o.files);
  if (!o.val_files.empty()) {
    corpus.train = std::move(all);
    corpus.val = tokenize_files(*corpus.tokenizer, o.val_files);
    return corpus;
  }
  if (!(o.val_fraction >= 0.0 && o.val_fraction < 1.0))
    throw std::invalid_argument(fmt::format("validation fraction {} is not in [0, 1)", o.val_fraction));
  const int64_t n_val = static_cast<int64_t>(static_cast<double>(all.size()) * o.val_fraction);
  corpus.train = all.slice(0, all.size() - n_val);
  corpus.val = all.slice(all.size() - n_val, all.size());
  return corpus;
}

}  // namespace tinygpt::data
